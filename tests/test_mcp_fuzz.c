/* SPDX-License-Identifier: MIT */
/*
** test_mcp_fuzz.c: seeded mutations of valid messages of both eras, fed in
** process to sessions serving echo, add and text; all the host sends is
** checked against JSON-RPC 2.0 and the message it answers. Plus regressions.
*/
/* memmem */
#define _GNU_SOURCE
#include "config.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <json-c/json.h>
#include <json-c/linkhash.h>

#include "protocol/jsonrpc.h"
#include "plugin/loader.h"
#include "base/log.h"
#include "protocol/mcp.h"
#include "plugin/registry.h"
#include "base/util.h"
#include "check_main.h"

/* Overridable from the environment to reproduce or to search longer. */
#define DEFAULT_SEED 0x5eed2026u
#define DEFAULT_MESSAGES 24000
#define SESSIONS 6
#define DRAIN_MS 60000

#define META_VERSION "io.modelcontextprotocol/protocolVersion"
#define META_CAPS "io.modelcontextprotocol/clientCapabilities"
#define META_SERVER "io.modelcontextprotocol/serverInfo"
#define MODERN_META                                                                                                    \
    "\"_meta\":{\"" META_VERSION "\":\"2026-07-28\",\"" META_CAPS "\":{},"                                             \
    "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"fuzz\",\"version\":\"1\"}}"
#define RPC "{\"jsonrpc\":\"2.0\","

/* ---- the PRNG (splitmix64: tiny, fast, and the same on every platform) --- */

static uint64_t rng_state;
static uint64_t seed;

static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

static size_t below(size_t n)
{
    return n ? (size_t)(rnd() % n) : 0;
}

static bool chance(unsigned percent)
{
    return below(100) < percent;
}

#define PICK(arr) ((arr)[below(sizeof(arr) / sizeof((arr)[0]))])

static uint64_t env_u64(const char *name, uint64_t dflt)
{
    const char *v = getenv(name);
    return v && *v ? strtoull(v, NULL, 0) : dflt;
}

/* ---- the corpus: valid (and deliberately wrong) messages of both eras ----- */

static const char *const corpus[] = {
    /* legacy */
    RPC "\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
        "\"clientInfo\":{\"name\":\"fuzz\",\"version\":\"1\"}}}",
    RPC "\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2024-11-05\",\"capabilities\":{},"
        "\"clientInfo\":{\"name\":\"fuzz\",\"version\":\"1\"}}}",
    RPC "\"id\":\"i\",\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-03-26\",\"capabilities\":{}}}",
    RPC "\"id\":2,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{}}}",
    RPC "\"id\":3,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"1999-01-01\",\"capabilities\":{}}}",
    RPC "\"id\":3,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2026-07-28\",\"capabilities\":{}}}",
    RPC "\"method\":\"notifications/initialized\"}",
    RPC "\"method\":\"notifications/initialized\",\"params\":{}}",
    RPC "\"id\":4,\"method\":\"ping\"}",
    RPC "\"id\":\"p\",\"method\":\"ping\",\"params\":{}}",
    RPC "\"id\":5,\"method\":\"logging/setLevel\",\"params\":{\"level\":\"debug\"}}",
    RPC "\"id\":5,\"method\":\"logging/setLevel\",\"params\":{\"level\":\"emergency\"}}",
    RPC "\"id\":5,\"method\":\"logging/setLevel\",\"params\":{\"level\":\"loud\"}}",
    RPC "\"id\":6,\"method\":\"tools/list\"}",
    RPC "\"id\":6,\"method\":\"tools/list\",\"params\":{\"cursor\":\"th1:2\"}}",
    RPC "\"id\":6,\"method\":\"tools/list\",\"params\":{\"cursor\":\"th1:99999999999999999999999\"}}",
    RPC "\"id\":6,\"method\":\"tools/list\",\"params\":{\"cursor\":null}}",
    RPC "\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"hello\"}}}",
    RPC "\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{}}}",
    RPC "\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":5}}}",
    RPC "\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":\"add\",\"arguments\":{\"a\":2,\"b\":3.5}}}",
    RPC "\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":\"add\",\"arguments\":{\"a\":\"2\"}}}",
    RPC "\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":\"add\",\"arguments\":"
        "{\"a\":1e308,\"b\":1e308}}}",
    RPC "\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"text\",\"arguments\":"
        "{\"text\":\" Hello W\\u00f6rld \",\"operation\":\"title\",\"trim\":true}}}",
    RPC "\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"text\",\"arguments\":{\"text\":\"a\\nb\","
        "\"operation\":\"line_count\"}}}",
    RPC "\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"text\",\"arguments\":{\"text\":\"x\","
        "\"operation\":\"shout\",\"trim\":\"yes\"}}}",
    RPC "\"id\":10,\"method\":\"tools/call\",\"params\":{\"name\":\"nosuch\",\"arguments\":{}}}",
    RPC "\"id\":10,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":[\"hello\"]}}",
    RPC "\"id\":11,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"p\"},"
        "\"_meta\":{\"progressToken\":\"tok\"}}}",
    RPC "\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":7,\"reason\":\"changed my mind\"}}",
    RPC "\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":\"7\"}}",
    RPC "\"id\":12,\"method\":\"resources/list\"}",
    RPC "\"id\":13,\"result\":{}}",
    RPC "\"id\":13,\"error\":{\"code\":-32601,\"message\":\"no\"}}",
    "[" RPC "\"id\":14,\"method\":\"ping\"}]",
    /* modern */
    RPC "\"id\":20,\"method\":\"server/discover\",\"params\":{" MODERN_META "}}",
    RPC "\"id\":21,\"method\":\"tools/list\",\"params\":{" MODERN_META "}}",
    RPC "\"id\":21,\"method\":\"tools/list\",\"params\":{\"cursor\":\"th1:2\"," MODERN_META "}}",
    RPC "\"id\":21,\"method\":\"tools/list\",\"params\":{\"cursor\":\"nope\"," MODERN_META "}}",
    RPC "\"id\":22,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"modern\"},"
        MODERN_META "}}",
    RPC "\"id\":22,\"method\":\"tools/call\",\"params\":{\"name\":\"add\",\"arguments\":{\"a\":-1,\"b\":0.5},"
        MODERN_META "}}",
    RPC "\"id\":22,\"method\":\"tools/call\",\"params\":{\"name\":\"text\",\"arguments\":{\"text\":\"one two\"},"
        MODERN_META "}}",
    RPC "\"id\":23,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"t\"},"
        "\"_meta\":{\"" META_VERSION "\":\"2026-07-28\",\"" META_CAPS "\":{},\"progressToken\":17,"
        "\"io.modelcontextprotocol/logLevel\":\"debug\"}}}",
    RPC "\"id\":24,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"t\"},"
        "\"_meta\":{\"" META_VERSION "\":\"2026-07-28\",\"" META_CAPS "\":{},\"progressToken\":1.5}}}",
    RPC "\"id\":24,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"t\"},"
        "\"_meta\":{\"" META_VERSION "\":\"2026-07-28\",\"" META_CAPS "\":{},\"progressToken\":{\"a\":[]}}}}",
    RPC "\"id\":25,\"method\":\"tools/list\",\"params\":{\"_meta\":{\"" META_VERSION "\":\"2099-01-01\",\"" META_CAPS
        "\":{}}}}",
    RPC "\"id\":25,\"method\":\"tools/list\",\"params\":{\"_meta\":{\"" META_VERSION "\":\"2025-11-25\",\"" META_CAPS
        "\":{}}}}",
    RPC "\"id\":25,\"method\":\"tools/list\",\"params\":{\"_meta\":{\"" META_VERSION "\":20260728,\"" META_CAPS
        "\":{}}}}",
    RPC "\"id\":26,\"method\":\"tools/list\",\"params\":{\"_meta\":{\"" META_VERSION "\":\"2026-07-28\"}}}",
    RPC "\"id\":26,\"method\":\"tools/list\",\"params\":{\"_meta\":{\"" META_VERSION "\":\"2026-07-28\",\"" META_CAPS
        "\":[]}}}",
    RPC "\"id\":27,\"method\":\"tools/list\",\"params\":{\"_meta\":{\"" META_VERSION "\":\"2026-07-28\",\"" META_CAPS
        "\":{},\"io.modelcontextprotocol/logLevel\":\"loud\"}}}",
    RPC "\"id\":27,\"method\":\"tools/list\",\"params\":{\"_meta\":{\"" META_VERSION "\":\"2026-07-28\",\"" META_CAPS
        "\":{},\"io.modelcontextprotocol/logLevel\":3}}}",
    RPC "\"id\":28,\"method\":\"ping\",\"params\":{" MODERN_META "}}",
    RPC "\"id\":28,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\"," MODERN_META "}}",
    RPC "\"id\":29,\"method\":\"logging/setLevel\",\"params\":{\"level\":\"info\"," MODERN_META "}}",
    RPC "\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":22," MODERN_META "}}",
};

/* Values a mutation puts in place of another. */
static const char *const words[] = {
    "echo", "add", "text", "nosuch", "Echo", "tools/call", "tools/list", "ping", "initialize", "server/discover",
    "logging/setLevel", "notifications/cancelled", "notifications/initialized", "2.0", "1.0", "2024-11-05",
    "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28", "2099-01-01", "debug", "info", "emergency", "loud",
    "th1:1", "th1:2", "th1:3", "th1:0", "th1:", "th1:-1", "th1:18446744073709551617", "upper", "lower", "title",
    "word_count", "char_count", "line_count", "", " ", "\xc3\xa9", "\xf0\x9f\x98\x80", "%s%n%x", "\\", "null",
};
static const char *const keys[] = {
    "jsonrpc", "id", "method", "params", "result", "error", "_meta", "name", "arguments", "cursor", "level",
    "protocolVersion", "capabilities", "clientInfo", "requestId", "reason", "progressToken", "text", "a", "b",
    "operation", "trim", META_VERSION, META_CAPS, "io.modelcontextprotocol/logLevel",
    "io.modelcontextprotocol/clientInfo", "", "__proto__", "\xc3\xa9",
};
/* Numbers as raw JSON text: what json-c reads them as is part of the test. */
static const char *const raw_numbers[] = {
    "0", "-0", "1", "-1", "7", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
    "18446744073709551615", "18446744073709551616", "99999999999999999999999999999", "-99999999999999999999999",
    "1.0", "1.5", "-0.0", "1e3", "1E+2", "1e308", "1e309", "-1e999", "1e-400", "0.1", "4.9e-324", "123456789.123456789",
};

/* ---- random values ------------------------------------------------------ */

/* A member name: mostly one that means something, sometimes a long one. */
static const char *rand_key(void)
{
    static char buf[700];
    static const char *const chars[] = {"k", "_", "/", "~", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80"};
    if (!chance(5))
        return PICK(keys);
    size_t want = below(2) ? 190 + below(30) : below(600), n = 0;
    while (n < want) {
        const char *c = PICK(chars);
        memcpy(buf + n, c, strlen(c));
        n += strlen(c);
    }
    buf[n] = '\0';
    return buf;
}

/* About LEN bytes of text: ASCII letters, or (MIXED) also characters of
 * two to four bytes, so that a length limit can fall inside one. */
static json_object *long_string(size_t len, bool mixed)
{
    static const char *const chars[] = {"a", "Z", " ", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80"};
    char *s = malloc(len + 4);
    ck_assert_ptr_nonnull(s);
    size_t n = 0;
    while (n < len) {
        if (mixed) {
            const char *c = PICK(chars);
            memcpy(s + n, c, strlen(c));
            n += strlen(c);
        } else {
            s[n++] = (char)('a' + below(26));
        }
    }
    json_object *o = json_object_new_string_len(s, (int)n);
    free(s);
    return o;
}

static json_object *raw_number(const char *text)
{
    return json_object_new_double_s(0, text);
}

static json_object *rand_value(int depth)
{
    switch (below(depth > 2 ? 9 : 11)) {
    case 0:
        return NULL;
    case 1:
        return json_object_new_boolean(chance(50));
    case 2:
        return json_object_new_int64((int64_t)below(40) - 5);
    case 3:
        return raw_number(PICK(raw_numbers));
    case 4:
    case 5:
        return json_object_new_string(PICK(words));
    case 6:
        if (chance(3))
            return long_string(chance(10) ? 300000 + below(300000) : 1000 + below(60000), chance(50));
        return json_object_new_string_len("a\0b", 3);
    case 7: {
        /* Bytes for json-c to escape: controls, quotes, a NUL. */
        char s[8];
        for (size_t i = 0; i < sizeof s; i++)
            s[i] = (char)PICK("\x01\x1f\"\\/\n\t\0az");
        return json_object_new_string_len(s, (int)sizeof s);
    }
    case 8:
        return long_string(below(600), chance(50));
    case 9: {
        json_object *a = json_object_new_array();
        for (size_t n = below(4); n > 0; n--)
            json_object_array_add(a, rand_value(depth + 1));
        return a;
    }
    default: {
        json_object *o = json_object_new_object();
        for (size_t n = below(4); n > 0; n--)
            json_object_object_add(o, rand_key(), rand_value(depth + 1));
        return o;
    }
    }
}

/* Ids of every type, from a small pool so that ids collide and repeat. */
static json_object *rand_id(void)
{
    switch (below(12)) {
    case 0:
    case 1:
    case 2:
        return json_object_new_int64((int64_t)below(8));
    case 3:
        return raw_number(PICK(raw_numbers));
    case 4:
    case 5: {
        static const char *const ids[] = {"1", "a", "", "7", "\xc3\xa9", "final", "id with space"};
        return json_object_new_string(PICK(ids));
    }
    case 6:
        return json_object_new_string_len("a\0b", 3);
    case 7:
        return long_string(chance(50) ? 150 + below(20) : 1000, chance(50));
    case 8:
        return NULL;
    case 9:
        return json_object_new_boolean(1);
    case 10:
        return json_object_new_array();
    default:
        return json_object_new_object();
    }
}

/* ---- mutation ----------------------------------------------------------- */

/* A growable byte string. */
typedef struct bytes {
    char *p;
    size_t len, cap;
} bytes;

static void b_reserve(bytes *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap)
        return;
    b->cap = (b->len + extra + 1) * 2;
    b->p = realloc(b->p, b->cap);
    ck_assert_ptr_nonnull(b->p);
}

static void b_splice(bytes *b, size_t at, size_t remove, const char *ins, size_t n)
{
    b_reserve(b, n);
    memmove(b->p + at + n, b->p + at + remove, b->len - at - remove);
    memcpy(b->p + at, ins, n);
    b->len = b->len - remove + n;
    b->p[b->len] = '\0';
}

static void b_set(bytes *b, const char *s, size_t n)
{
    b->len = 0;
    b_splice(b, 0, 0, s, n);
}

/* Replace the first "NEEDLE" (quoted) in B with REPL. */
static void b_substitute(bytes *b, const char *needle, const char *repl, size_t n)
{
    char quoted[32];
    snprintf(quoted, sizeof quoted, "\"%s\"", needle);
    char *at = memmem(b->p, b->len, quoted, strlen(quoted));
    if (at)
        b_splice(b, (size_t)(at - b->p), strlen(quoted), repl, n);
}

/*
** Raw text that json-c cannot build as a value (nesting deeper than its
** serialiser allows is fine to build but slow; duplicate keys it cannot
** build at all) goes into the tree as a placeholder string and is
** substituted after serialisation.
*/
typedef struct raw_sub {
    char name[16];
    bytes text;
} raw_sub;

#define MAX_SUBS 4
typedef struct mutant {
    json_object *root;
    raw_sub subs[MAX_SUBS];
    size_t nsubs;
} mutant;

static raw_sub *new_sub(mutant *m, bool is_key)
{
    if (m->nsubs == MAX_SUBS)
        return NULL;
    raw_sub *r = &m->subs[m->nsubs];
    snprintf(r->name, sizeof r->name, "@@%c%zu@@", is_key ? 'K' : 'R', m->nsubs);
    r->text.len = 0;
    m->nsubs++;
    return r;
}

static void deep_text(bytes *b)
{
    static const size_t depths[] = {2, 30, 100, 126, 127, 128, 129, 200, 5000, 100000};
    size_t d = PICK(depths);
    bool obj = chance(30), close = chance(80);
    b->len = 0;
    for (size_t i = 0; i < d; i++)
        b_splice(b, b->len, 0, obj ? "{\"a\":" : "[", obj ? 5 : 1);
    b_splice(b, b->len, 0, "1", 1);
    for (size_t i = 0; close && i < d; i++)
        b_splice(b, b->len, 0, obj ? "}" : "]", 1);
}

/* One place in the tree: the root (PARENT NULL), a member or an element. */
typedef struct slot {
    json_object *parent;
    char *key; /* owned copy, for members */
    size_t idx;
    json_object *value;
} slot;

#define MAX_SLOTS 256

static void collect(json_object *parent, const char *key, size_t idx, json_object *v, slot *s, size_t *n)
{
    if (*n == MAX_SLOTS)
        return;
    s[*n] = (slot){.parent = parent, .key = key ? strdup(key) : NULL, .idx = idx, .value = v};
    (*n)++;
    if (json_object_is_type(v, json_type_object)) {
        json_object_object_foreach(v, k, child) collect(v, k, 0, child, s, n);
    } else if (json_object_is_type(v, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(v); i++)
            collect(v, NULL, i, json_object_array_get_idx(v, i), s, n);
    }
}

static void slot_set(mutant *m, slot *s, json_object *v)
{
    if (!s->parent) {
        json_object_put(m->root);
        m->root = v;
    } else if (s->key) {
        json_object_object_add(s->parent, s->key, v);
    } else {
        json_object_array_put_idx(s->parent, s->idx, v);
    }
}

static json_object *copy_of(json_object *v)
{
    json_object *c = NULL;
    if (v)
        ck_assert_int_eq(json_object_deep_copy(v, &c, NULL), 0);
    return c;
}

/* One structural mutation somewhere in M's tree. */
static void mutate_tree(mutant *m)
{
    slot s[MAX_SLOTS];
    size_t n = 0;
    collect(NULL, NULL, 0, m->root, s, &n);
    slot *at = &s[below(n)];
    unsigned op = (unsigned)below(100);
    if (op < 35) { /* swap the value's type */
        slot_set(m, at, rand_value(0));
    } else if (op < 45) { /* delete */
        if (at->parent && at->key)
            json_object_object_del(at->parent, at->key);
        else if (at->parent)
            json_object_array_del_idx(at->parent, at->idx, 1);
    } else if (op < 60) { /* add a member or element */
        json_object *v = chance(30) ? copy_of(s[below(n)].value) : rand_value(0);
        if (json_object_is_type(at->value, json_type_object))
            json_object_object_add(at->value, rand_key(), v);
        else if (json_object_is_type(at->value, json_type_array))
            json_object_array_add(at->value, v);
        else
            json_object_put(v);
    } else if (op < 78) { /* a new id */
        if (json_object_is_type(m->root, json_type_object))
            json_object_object_add(m->root, "id", rand_id());
    } else if (op < 88) { /* duplicate a key of some object */
        raw_sub *r;
        if (json_object_is_type(at->value, json_type_object) && json_object_object_length(at->value) > 0 &&
            (r = new_sub(m, true))) {
            size_t want = below((size_t)json_object_object_length(at->value)), i = 0;
            json_object_object_foreach(at->value, k, child)
            {
                if (i++ != want)
                    continue;
                json_object *ks = json_object_new_string(k);
                size_t klen;
                const char *kt = json_object_to_json_string_length(ks, JSON_C_TO_STRING_PLAIN, &klen);
                b_set(&r->text, kt, klen);
                json_object_put(ks);
                json_object_object_add(at->value, r->name, chance(50) ? rand_value(0) : copy_of(child));
                break;
            }
        }
    } else if (op < 94) { /* a copy of another value */
        slot_set(m, at, copy_of(s[below(n)].value));
    } else { /* raw text: deep nesting */
        raw_sub *r = new_sub(m, false);
        if (r) {
            deep_text(&r->text);
            slot_set(m, at, json_object_new_string(r->name));
        }
    }
    for (size_t i = 0; i < n; i++)
        free(s[i].key);
}

/* Invalid UTF-8, framing and structure bytes for byte-level mutations. */
static const char *const byte_runs[] = {
    "\x00", "\x80", "\xc0\x80", "\xc1\xbf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xf8\x88\x80\x80\x80", "\xfe",
    "\xff", "\xe2\x82", "\"", "\\", "\\u", "\\ud800", "{", "[", "}", "]", ",", ":", "\n", "\r", " ", "\t", "null",
    "1e99999", "\"id\":", "/*", "\xef\xbb\xbf",
};

static void mutate_bytes(bytes *b)
{
    size_t at = below(b->len + 1);
    switch (below(7)) {
    case 0: /* flip a bit */
        if (b->len)
            b->p[below(b->len)] ^= (char)(1u << below(8));
        break;
    case 1: /* overwrite a byte */
        if (b->len)
            b->p[below(b->len)] = (char)below(256);
        break;
    case 2: /* truncate */
        b->len = at;
        b->p[b->len] = '\0';
        break;
    case 3: { /* insert a run */
        size_t k = below(sizeof byte_runs / sizeof byte_runs[0]);
        size_t n = k == 0 ? 1 : strlen(byte_runs[k]);
        b_splice(b, at, 0, byte_runs[k], n);
        break;
    }
    case 4: { /* unbalanced nesting */
        size_t d = chance(50) ? 127 + below(4) : 1 + below(3000);
        char *open = malloc(d);
        ck_assert_ptr_nonnull(open);
        memset(open, chance(50) ? '[' : '{', d);
        b_splice(b, at, 0, open, d);
        free(open);
        break;
    }
    case 5: /* delete a range */
        b_splice(b, at, below(b->len - at + 1), "", 0);
        break;
    default: { /* duplicate a range */
        size_t n = below(b->len - at + 1);
        char *copy = malloc(n + 1);
        ck_assert_ptr_nonnull(copy);
        memcpy(copy, b->p + at, n);
        b_splice(b, below(b->len + 1), 0, copy, n);
        free(copy);
        break;
    }
    }
}

/* The next input: a corpus message, mutated most of the time. */
static void next_input(bytes *out)
{
    const char *base = PICK(corpus);
    unsigned mix = (unsigned)below(100);
    if (mix < 15) {
        b_set(out, base, strlen(base));
        return;
    }
    if (mix < 27) {
        b_set(out, base, strlen(base));
        for (size_t k = 1 + below(3); k > 0; k--)
            mutate_bytes(out);
        return;
    }
    mutant m = {.root = json_tokener_parse(base)};
    ck_assert_msg(m.root != NULL, "corpus entry is not JSON: %s", base);
    for (size_t k = 1 + below(3); k > 0; k--)
        mutate_tree(&m);
    size_t len;
    const char *text = json_object_to_json_string_length(
        m.root, chance(80) ? JSON_C_TO_STRING_PLAIN : JSON_C_TO_STRING_SPACED, &len);
    b_set(out, text, len);
    json_object_put(m.root);
    for (size_t i = 0; i < m.nsubs; i++) {
        b_substitute(out, m.subs[i].name, m.subs[i].text.p ? m.subs[i].text.p : "",
                     m.subs[i].text.len);
        free(m.subs[i].text.p);
    }
    if (mix >= 75)
        for (size_t k = 1 + below(2); k > 0; k--)
            mutate_bytes(out);
}

/* ---- what the host sends ------------------------------------------------ */

typedef struct record {
    char *text;
    size_t len;
    bool sync; /* sent on the thread that called th_mcp_session_handle */
    struct record *next;
} record;

typedef struct collector {
    pthread_mutex_t lock;
    pthread_t reader;
    record *head, **tail;
    bool closed;   /* the session was freed */
    size_t late;   /* messages sent after that */
} collector;

static void collect_send(void *ctx, json_object *msg)
{
    collector *c = ctx;
    record *r = calloc(1, sizeof *r);
    ck_assert_ptr_nonnull(r);
    size_t len;
    const char *text = json_object_to_json_string_length(msg, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE,
                                                         &len);
    r->text = malloc(len + 1);
    ck_assert_ptr_nonnull(r->text);
    memcpy(r->text, text, len + 1);
    r->len = len;
    r->sync = pthread_equal(pthread_self(), c->reader);
    json_object_put(msg);
    pthread_mutex_lock(&c->lock);
    if (c->closed) {
        c->late++;
        free(r->text);
        free(r);
    } else {
        *c->tail = r;
        c->tail = &r->next;
    }
    pthread_mutex_unlock(&c->lock);
}

static void collector_init(collector *c)
{
    memset(c, 0, sizeof *c);
    pthread_mutex_init(&c->lock, NULL);
    c->reader = pthread_self();
    c->tail = &c->head;
}

static record *collector_take(collector *c)
{
    pthread_mutex_lock(&c->lock);
    record *r = c->head;
    c->head = NULL;
    c->tail = &c->head;
    pthread_mutex_unlock(&c->lock);
    return r;
}

static void records_free(record *r)
{
    while (r) {
        record *next = r->next;
        free(r->text);
        free(r);
        r = next;
    }
}

/* ---- the oracle --------------------------------------------------------- */

/* The message being checked, for failure reports. */
static struct {
    char where[64]; /* "seed 0x..., message N", or which fixed input */
    const char *text;
    size_t len;
} cur;

static void at_label(const char *what)
{
    snprintf(cur.where, sizeof cur.where, "%s", what);
}

static void at_message(const char *what, uint64_t n)
{
    if (what)
        snprintf(cur.where, sizeof cur.where, "%s %" PRIu64, what, n);
    else
        snprintf(cur.where, sizeof cur.where, "seed 0x%" PRIx64 ", message %" PRIu64, seed, n);
}

static void print_escaped(FILE *f, const char *s, size_t len, size_t max)
{
    for (size_t i = 0; i < len && i < max; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '\\')
            fputc(c, f);
        else
            fprintf(f, "\\x%02x", c);
    }
    if (len > max)
        fprintf(f, "... (%zu bytes)", len);
}

static void violation(const char *out, size_t out_len, const char *fmt, ...) TH_PRINTF(3, 4);
static void violation(const char *out, size_t out_len, const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    fprintf(stderr, "test_mcp_fuzz: %s: %s\n  input: ", cur.where, why);
    print_escaped(stderr, cur.text ? cur.text : "", cur.text ? cur.len : 0, 2000);
    fprintf(stderr, "\n  sent:  ");
    print_escaped(stderr, out ? out : "(nothing)", out ? out_len : 9, 2000);
    fputc('\n', stderr);
    ck_abort_msg("%s: %s (input and output on stderr)", cur.where, why);
}

/*
** Well-formed UTF-8 as RFC 3629 defines it: no overlong forms, surrogates
** or code points past U+10FFFF (json-c's own check lets all three through).
** The second byte's range depends on the first (RFC 3629, section 4).
*/
static bool utf8_ok(const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)text;
    for (size_t i = 0; i < len;) {
        unsigned c = s[i], n, lo = 0x80, hi = 0xBF;
        if (c < 0x80)
            n = 0;
        else if (c >= 0xC2 && c <= 0xDF)
            n = 1;
        else if (c >= 0xE0 && c <= 0xEF)
            n = 2, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        else if (c >= 0xF0 && c <= 0xF4)
            n = 3, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        else
            return false;
        if (len - i <= n)
            return false;
        for (unsigned k = 1; k <= n; k++, lo = 0x80, hi = 0xBF)
            if (s[i + k] < lo || s[i + k] > hi)
                return false;
        i += n + 1;
    }
    return true;
}

/* Parse as the host documents it: strict JSON, valid UTF-8, nesting up to
 * TH_RPC_MAX_DEPTH, one value per message with only white space after it. */
static bool parse_json(const char *text, size_t len, json_object **out)
{
    if (!utf8_ok(text, len))
        return false;
    json_tokener *tok = json_tokener_new_ex(TH_RPC_MAX_DEPTH);
    ck_assert_ptr_nonnull(tok);
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *o = json_tokener_parse_ex(tok, text, (int)len);
    enum json_tokener_error e = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    if (e == json_tokener_continue && end == len) {
        o = json_tokener_parse_ex(tok, "", 1);
        e = json_tokener_get_error(tok);
    }
    while (e == json_tokener_success && end < len && strchr(" \t\r", text[end]))
        end++;
    json_tokener_free(tok);
    if (e != json_tokener_success || end != len) {
        json_object_put(o);
        return false;
    }
    *out = o;
    return true;
}

/* MCP's RequestId: a string or a number. */
static bool id_valid(json_object *id)
{
    return json_object_is_type(id, json_type_string) || json_object_is_type(id, json_type_int) ||
           json_object_is_type(id, json_type_double);
}

/* An id as a table key: its JSON text, which tells "1" from 1 and keeps NULs. */
static char *id_text(json_object *id)
{
    return strdup(id ? json_object_to_json_string_ext(id, JSON_C_TO_STRING_PLAIN) : "null");
}

/* What an input must get, decided from the input alone. */
typedef enum expect_kind {
    X_PARSE_ERROR, /* one -32700 error, id null */
    X_INVALID,     /* one -32600/-32602 error, with the id if it was usable */
    X_SILENT,      /* notifications and stray responses: nothing, ever */
    X_REQUEST,     /* one response with the id (tools/call: maybe later) */
    X_BATCH,       /* a non-empty array: one -32600, or one array of responses */
} expect_kind;

typedef struct expect {
    expect_kind kind;
    json_object *msg;  /* the parsed input (owned) */
    json_object *id;   /* borrowed from msg; NULL when absent or unusable */
    bool tools_call;
    bool modern;       /* _meta names 2026-07-28 */
    json_object *cancel_id; /* notifications/cancelled: the requestId */
} expect;

static void classify(const char *text, size_t len, expect *x)
{
    memset(x, 0, sizeof *x);
    if (!parse_json(text, len, &x->msg)) {
        x->kind = X_PARSE_ERROR;
        return;
    }
    x->kind = X_INVALID;
    json_object *m = x->msg, *v, *id = NULL, *method = NULL, *params = NULL;
    if (json_object_is_type(m, json_type_array) && json_object_array_length(m) > 0) {
        x->kind = X_BATCH;
        return;
    }
    if (!json_object_is_type(m, json_type_object))
        return;
    bool has_id = json_object_object_get_ex(m, "id", &id);
    bool has_method = json_object_object_get_ex(m, "method", &method);
    bool has_params = json_object_object_get_ex(m, "params", &params);
    if (has_id && id_valid(id))
        x->id = id;
    if (!json_object_object_get_ex(m, "jsonrpc", &v) || !json_object_is_type(v, json_type_string) ||
        strcmp(json_object_get_string(v), "2.0") != 0)
        return;
    if (!has_method) {
        if (json_object_object_get_ex(m, "result", NULL) || json_object_object_get_ex(m, "error", NULL))
            x->kind = X_SILENT;
        return;
    }
    if ((has_id && !id_valid(id)) || !json_object_is_type(method, json_type_string))
        return;
    if (has_params && !json_object_is_type(params, json_type_object)) {
        if (!has_id)
            x->kind = X_SILENT;
        return;
    }
    const char *name = json_object_get_string(method);
    if (!has_id) {
        x->kind = X_SILENT;
        if (strcmp(name, "notifications/cancelled") == 0 && params)
            json_object_object_get_ex(params, "requestId", &x->cancel_id);
        return;
    }
    x->kind = X_REQUEST;
    x->tools_call = strcmp(name, "tools/call") == 0;
    json_object *meta;
    x->modern = params && json_object_object_get_ex(params, "_meta", &meta) &&
                json_object_object_get_ex(meta, META_VERSION, &v) && json_object_is_type(v, json_type_string) &&
                strcmp(json_object_get_string(v), TH_MCP_MODERN_VERSION) == 0;
}

/* Per id: how often it was requested and answered. */
typedef struct idstat {
    unsigned requests, responses;
    unsigned pending_modern, pending_legacy; /* tools/call answers to come */
    bool cancelled;
} idstat;

static idstat *stat_of(lh_table *t, json_object *id)
{
    char *k = id_text(id);
    idstat *st;
    if (lh_table_lookup_ex(t, k, (void **)&st)) {
        free(k);
        return st;
    }
    st = calloc(1, sizeof *st);
    ck_assert_ptr_nonnull(st);
    ck_assert_int_eq(lh_table_insert(t, k, st), 0);
    return st;
}

static idstat *stat_find(lh_table *t, json_object *id)
{
    char *k = id_text(id);
    idstat *st = NULL;
    if (!lh_table_lookup_ex(t, k, (void **)&st))
        st = NULL;
    free(k);
    return st;
}

static void stat_entry_free(struct lh_entry *e)
{
    free(lh_entry_k(e));
    free(lh_entry_v(e));
}

static bool error_code_known(int64_t code)
{
    static const int codes[] = {TH_RPC_PARSE_ERROR,      TH_RPC_INVALID_REQUEST,     TH_RPC_METHOD_NOT_FOUND,
                                TH_RPC_INVALID_PARAMS,   TH_RPC_INTERNAL_ERROR,      TH_RPC_SERVER_BUSY,
                                TH_RPC_HEADER_MISMATCH,
                                TH_RPC_MISSING_CAPABILITY, TH_RPC_UNSUPPORTED_VERSION};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        if (code == codes[i])
            return true;
    return false;
}

/* The checks every message the host sends must pass, whatever it answers.
 * Returns the parsed message (owned by the caller). */
static json_object *check_envelope(const record *r)
{
    for (size_t i = 0; i < r->len; i++)
        if ((unsigned char)r->text[i] < 0x20)
            violation(r->text, r->len, "control byte 0x%02x in a sent message (breaks line framing)", r->text[i]);
    json_object *o = NULL, *v;
    if (!utf8_ok(r->text, r->len))
        violation(r->text, r->len, "a sent message is not valid UTF-8");
    if (!parse_json(r->text, r->len, &o))
        violation(r->text, r->len, "a sent message is not valid JSON");
    if (!json_object_is_type(o, json_type_object))
        violation(r->text, r->len, "a sent message is not an object");
    if (!json_object_object_get_ex(o, "jsonrpc", &v) || !json_object_is_type(v, json_type_string) ||
        strcmp(json_object_get_string(v), "2.0") != 0)
        violation(r->text, r->len, "\"jsonrpc\" is not \"2.0\"");
    if (json_object_object_get_ex(o, "method", &v)) {
        const char *m = json_object_get_string(v);
        if (!json_object_is_type(v, json_type_string) ||
            (strcmp(m, "notifications/progress") != 0 && strcmp(m, "notifications/message") != 0))
            violation(r->text, r->len, "a notification this server never sends");
        if (json_object_object_get_ex(o, "id", NULL))
            violation(r->text, r->len, "a request to the client");
        return o;
    }
    json_object *id, *result, *error;
    bool has_result = json_object_object_get_ex(o, "result", &result);
    bool has_error = json_object_object_get_ex(o, "error", &error);
    if (!json_object_object_get_ex(o, "id", &id))
        violation(r->text, r->len, "a response without \"id\"");
    if (id && !id_valid(id))
        violation(r->text, r->len, "a response id that is neither null, a string nor a number");
    if (has_result == has_error)
        violation(r->text, r->len, "a response needs exactly one of result and error");
    if (json_object_object_length(o) != 3)
        violation(r->text, r->len, "a response with members beyond jsonrpc, id and result/error");
    if (has_result && !json_object_is_type(result, json_type_object))
        violation(r->text, r->len, "a result that is not an object");
    if (has_error) {
        json_object *code, *msg;
        if (!json_object_is_type(error, json_type_object) || !json_object_object_get_ex(error, "code", &code) ||
            !json_object_is_type(code, json_type_int) || !error_code_known(json_object_get_int64(code)))
            violation(r->text, r->len, "an error without an integer code from the JSON-RPC/MCP set");
        if (!json_object_object_get_ex(error, "message", &msg) || !json_object_is_type(msg, json_type_string))
            violation(r->text, r->len, "an error without a string message");
        if (!id && json_object_get_int64(code) != TH_RPC_PARSE_ERROR &&
            json_object_get_int64(code) != TH_RPC_INVALID_REQUEST)
            violation(r->text, r->len, "id null on an error that is neither a parse error nor an invalid request");
    } else if (!id) {
        violation(r->text, r->len, "a result with id null");
    }
    return o;
}

static int64_t error_code(json_object *o)
{
    json_object *e, *c;
    if (!json_object_object_get_ex(o, "error", &e) || !json_object_object_get_ex(e, "code", &c))
        return 0;
    return json_object_get_int64(c);
}

/* A result for a modern request says so; a legacy one does not. */
static void check_era(const record *r, json_object *o, bool modern)
{
    json_object *res, *rt, *meta, *si;
    if (!json_object_object_get_ex(o, "result", &res))
        return;
    bool has_rt = json_object_object_get_ex(res, "resultType", &rt);
    if (modern && (!has_rt || strcmp(json_object_get_string(rt), "complete") != 0 ||
                   !json_object_object_get_ex(res, "_meta", &meta) ||
                   !json_object_object_get_ex(meta, META_SERVER, &si) || !json_object_is_type(si, json_type_object)))
        violation(r->text, r->len, "a modern result without resultType \"complete\" and serverInfo");
    if (!modern && has_rt)
        violation(r->text, r->len, "a legacy result with resultType");
}

static void check_tool_result(const record *r, json_object *o)
{
    json_object *res, *content, *is_error;
    if (!json_object_object_get_ex(o, "result", &res))
        return;
    if (!json_object_object_get_ex(res, "content", &content) || !json_object_is_type(content, json_type_array))
        violation(r->text, r->len, "a tools/call result without a content array");
    if (json_object_object_get_ex(res, "isError", &is_error) && !json_object_is_type(is_error, json_type_boolean))
        violation(r->text, r->len, "isError is not a boolean");
}

/* How far the inputs got, printed after the run so that a change that
 * starves the deeper paths (tool calls, cancellation) shows. */
static struct {
    size_t kinds[5];
    size_t results, errors, tool_results, tool_errors, dropped;
} seen;

/* What one session has seen. */
typedef struct run {
    collector col;
    th_mcp_session *s;
    lh_table *ids;
    json_object *want_id; /* keep the answer to this id in got */
    json_object *got;
    bool batch_calls;     /* a batch may have calls in flight (until a drain) */
} run;

static void maybe_keep(run *u, json_object *o)
{
    json_object *id;
    if (u->want_id && !u->got && json_object_object_get_ex(o, "id", &id) && json_object_equal(id, u->want_id))
        u->got = json_object_get(o);
}

/* The answer to a batch (2025-03-26): an array of responses. Their ids are
 * not accounted (each batch is drained before the next input). */
static void check_batch_reply(const record *r)
{
    json_object *a = NULL, *v;
    if (!utf8_ok(r->text, r->len) || !parse_json(r->text, r->len, &a) || !json_object_is_type(a, json_type_array) ||
        json_object_array_length(a) == 0)
        violation(r->text, r->len, "a batch reply is not a non-empty JSON array");
    for (size_t i = 0; i < json_object_array_length(a); i++) {
        json_object *o = json_object_array_get_idx(a, i);
        if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, "jsonrpc", &v) ||
            !json_object_object_get_ex(o, "id", NULL) || json_object_object_get_ex(o, "method", NULL) ||
            json_object_object_get_ex(o, "result", NULL) == json_object_object_get_ex(o, "error", NULL))
            violation(r->text, r->len, "a batch reply element is not a response");
    }
    seen.results++;
    json_object_put(a);
}

/* A message sent from a pool thread: a tools/call answer. */
static void check_async(run *u, const record *r)
{
    if (r->len > 0 && r->text[0] == '[') {
        check_batch_reply(r);
        return;
    }
    json_object *o = check_envelope(r), *id, *res, *rt;
    if (json_object_object_get_ex(o, "method", NULL)) {
        json_object_put(o);
        return;
    }
    json_object_object_get_ex(o, "id", &id);
    idstat *st = id ? stat_find(u->ids, id) : NULL;
    if (!st)
        violation(r->text, r->len, "an answer from a tool thread to an id never requested");
    bool modern;
    if (json_object_object_get_ex(o, "result", &res)) {
        /* Whether it should have resultType is what the pending count of
         * that era says. */
        modern = json_object_object_get_ex(res, "resultType", &rt);
        check_era(r, o, modern);
        check_tool_result(r, o);
    } else if (error_code(o) == TH_RPC_INTERNAL_ERROR) {
        modern = st->pending_legacy == 0;
    } else {
        violation(r->text, r->len, "a tool thread sent an error other than internal error");
        return;
    }
    unsigned *pending = modern ? &st->pending_modern : &st->pending_legacy;
    if (*pending == 0)
        violation(r->text, r->len, "a %s answer from a tool thread to an id with no %s tools/call pending",
             modern ? "modern" : "legacy", modern ? "modern" : "legacy");
    (*pending)--;
    st->responses++;
    if (json_object_object_get_ex(o, "result", &res) && json_object_object_get_ex(res, "isError", &rt) &&
        json_object_get_boolean(rt))
        seen.tool_errors++;
    else
        seen.tool_results++;
    maybe_keep(u, o);
    json_object_put(o);
}

/* Feed one input and check what it got synchronously. */
static void feed(run *u, const char *text, size_t len)
{
    expect x;
    classify(text, len, &x);
    seen.kinds[x.kind]++;
    cur.text = text;
    cur.len = len;
    idstat *st = NULL;
    if (x.kind == X_REQUEST) {
        st = stat_of(u->ids, x.id);
        st->requests++;
    }
    if (x.cancel_id)
        stat_of(u->ids, x.cancel_id)->cancelled = true;
    for (size_t i = 0; x.kind == X_BATCH && i < json_object_array_length(x.msg); i++) {
        /* A cancellation inside a batch cancels like any other. */
        json_object *e = json_object_array_get_idx(x.msg, i), *m, *p, *rid;
        if (json_object_object_get_ex(e, "method", &m) && json_object_is_type(m, json_type_string) &&
            strcmp(json_object_get_string(m), "notifications/cancelled") == 0 &&
            json_object_object_get_ex(e, "params", &p) && json_object_object_get_ex(p, "requestId", &rid) && rid)
            stat_of(u->ids, rid)->cancelled = true;
    }

    /* Exactly LEN bytes on the heap, so that ASan sees any read past them. */
    char *copy = malloc(len ? len : 1);
    ck_assert_ptr_nonnull(copy);
    memcpy(copy, text, len);
    th_mcp_session_handle(u->s, copy, len);
    free(copy);

    size_t nsync = 0;
    record *all = collector_take(&u->col);
    for (record *r = all; r; r = r->next) {
        if (!r->sync)
            continue;
        nsync++;
        if (x.kind == X_BATCH && r->len > 0 && r->text[0] == '[') {
            check_batch_reply(r);
            continue;
        }
        json_object *o = check_envelope(r), *id = NULL;
        if (json_object_object_get_ex(o, "method", NULL))
            violation(r->text, r->len, "a notification sent while handling a message");
        json_object_object_get_ex(o, "id", &id);
        int64_t code = error_code(o);
        switch (x.kind) {
        case X_PARSE_ERROR:
            if (id || code != TH_RPC_PARSE_ERROR)
                violation(r->text, r->len, "unparseable input must get -32700 with id null");
            break;
        case X_INVALID:
            if (code != TH_RPC_INVALID_REQUEST && code != TH_RPC_INVALID_PARAMS)
                violation(r->text, r->len, "an invalid message must get -32600 or -32602");
            if (!json_object_equal(id, x.id))
                violation(r->text, r->len, "an invalid message's error must carry its usable id, else null");
            break;
        case X_SILENT:
            violation(r->text, r->len, "a notification or a response was answered");
            break;
        case X_BATCH:
            if (id || (code != TH_RPC_INVALID_REQUEST && code != TH_RPC_INTERNAL_ERROR))
                violation(r->text, r->len, "a batch must get an array of responses, or one -32600 with id null");
            break;
        case X_REQUEST:
            if (!json_object_equal(id, x.id))
                violation(r->text, r->len, "a response with another id than the request's");
            if (x.tools_call && !code)
                violation(r->text, r->len, "a tools/call result sent from the reader thread");
            /* Sound: a call's answer is counted only once it arrives, which
             * is after the host released its id. Only the duplicate-id
             * refusal: "Server busy ... in flight" is right whenever other
             * calls (cancelled ones, still running, included) hold slots. */
            if (x.tools_call && strstr(json_object_to_json_string(o), "a request with this id is in flight") &&
                st->pending_modern + st->pending_legacy == 0 && !u->batch_calls)
                violation(r->text, r->len, "\"in flight\", but no call with this id is");
            check_era(r, o, x.modern);
            st->responses++;
            break;
        }
        if (code)
            seen.errors++;
        else
            seen.results++;
        maybe_keep(u, o);
        json_object_put(o);
    }

    bool answered_later = x.kind == X_REQUEST && x.tools_call && nsync == 0;
    size_t want = x.kind == X_SILENT || answered_later ? 0 : 1;
    if (x.kind == X_BATCH) {
        /* Nothing (notifications only, or tool calls still running) or one
         * message. Calls it started hold ids the accounting does not know
         * until the next drain. */
        want = nsync > 1 ? 1 : nsync;
        if (nsync == 0)
            u->batch_calls = true;
    }
    if (nsync != want)
        violation(NULL, 0, "%zu messages sent in answer, want %zu", nsync, want);
    if (answered_later) {
        if (x.modern)
            st->pending_modern++;
        else
            st->pending_legacy++;
    }
    /* Tool answers last: this message's own may already be among them. */
    for (record *r = all; r; r = r->next)
        if (!r->sync)
            check_async(u, r);
    records_free(all);
    json_object_put(x.msg);
}

static const char *const plugins_dir = TOP_BUILDDIR "/plugins/.libs";

static th_registry *reg;
static th_mcp *mcp;

static void quiet(th_log_level level, const char *line, void *ctx)
{
    (void)level;
    (void)line;
    (void)ctx;
}

static th_mcp *new_mcp(void)
{
    th_mcp_config cfg;
    th_mcp_config_default(&cfg);
    cfg.page_size = 2; /* so that cursors lead somewhere */
    th_mcp *m = th_mcp_new(reg, &cfg);
    ck_assert_ptr_nonnull(m);
    return m;
}

static void setup(void)
{
    th_log_set_sink(quiet, NULL);
    reg = th_registry_new();
    ck_assert_ptr_nonnull(reg);
    th_load_stats stats = {0};
    ck_assert_int_eq(th_loader_load_dir(reg, plugins_dir, NULL, &stats), TH_OK);
    ck_assert_msg(th_registry_get(reg, "echo") && th_registry_get(reg, "add") && th_registry_get(reg, "text"),
                  "echo, add and text must load from %s", plugins_dir);
    th_registry_start(reg);
    mcp = new_mcp();
}

static void teardown(void)
{
    ck_assert(th_mcp_free(mcp, th_now_ms() + DRAIN_MS));
    th_registry_unref(reg);
    th_log_set_sink(NULL, NULL);
}

static void run_open(run *u)
{
    memset(u, 0, sizeof *u);
    collector_init(&u->col);
    u->s = th_mcp_session_new(mcp, collect_send, &u->col);
    ck_assert_ptr_nonnull(u->s);
    u->ids = lh_kchar_table_new(1024, stat_entry_free);
    ck_assert_ptr_nonnull(u->ids);
}

/* Wait for every call, check what came late, and the per-id accounting. */
static void run_drain(run *u)
{
    cur.text = NULL;
    if (!th_mcp_session_drain(u->s, th_now_ms() + DRAIN_MS))
        violation(NULL, 0, "tool calls still in flight %d s after the last message", DRAIN_MS / 1000);
    ck_assert_uint_eq(th_mcp_session_inflight(u->s), 0);
    u->batch_calls = false;
    record *all = collector_take(&u->col);
    for (record *r = all; r; r = r->next) {
        if (r->sync)
            violation(r->text, r->len, "a message from the reader thread outside th_mcp_session_handle");
        check_async(u, r);
    }
    records_free(all);
    struct lh_entry *e;
    lh_foreach(u->ids, e)
    {
        const idstat *st = lh_entry_v(e);
        const char *k = lh_entry_k(e);
        if (st->responses > st->requests)
            violation(NULL, 0, "after the last message, id %.200s: answered %u times, requested %u times", k,
                      st->responses, st->requests);
        if (!st->cancelled && st->responses != st->requests)
            violation(NULL, 0, "after the last message, id %.200s: requested %u times and never cancelled, "
                      "answered %u times", k, st->requests, st->responses);
        seen.dropped += st->requests - st->responses;
    }
}

/* Free the session; what was sent before that is checked, and nothing may
 * be sent after it. */
static void run_close(run *u)
{
    th_mcp_session_free(u->s);
    pthread_mutex_lock(&u->col.lock);
    u->col.closed = true;
    pthread_mutex_unlock(&u->col.lock);
    record *all = collector_take(&u->col);
    for (record *r = all; r; r = r->next)
        check_async(u, r);
    records_free(all);
    lh_table_free(u->ids);
}

/* Send TEXT (a request) and return its answer, checked like any other. */
static json_object *ask(run *u, const char *text)
{
    json_object *req = json_tokener_parse(text), *id;
    ck_assert(req && json_object_object_get_ex(req, "id", &id));
    u->want_id = id;
    u->got = NULL;
    at_label("well-formed request");
    feed(u, text, strlen(text));
    run_drain(u);
    u->want_id = NULL;
    json_object_put(req);
    ck_assert_msg(u->got != NULL, "no answer to %s (%s)", text, cur.where);
    return u->got;
}

/* The text of the first content block of a successful tools/call answer. */
static void assert_tool_text(json_object *o, const char *want)
{
    json_object *res, *content, *t, *is_error;
    ck_assert_msg(json_object_object_get_ex(o, "result", &res), "no result in %s", json_object_to_json_string(o));
    ck_assert(!json_object_object_get_ex(res, "isError", &is_error) || !json_object_get_boolean(is_error));
    ck_assert(json_object_object_get_ex(res, "content", &content));
    ck_assert(json_object_object_get_ex(json_object_array_get_idx(content, 0), "text", &t));
    ck_assert_str_eq(json_object_get_string(t), want);
}

/* Well-formed calls of echo and add still get the right answers. */
static void assert_still_serving(run *u, bool modern)
{
    static unsigned n;
    char text[512];
    snprintf(text, sizeof text,
             RPC "\"id\":\"ok-%u\",\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":"
                 "{\"text\":\"still here\"}%s%s}}",
             ++n, modern ? "," : "", modern ? MODERN_META : "");
    json_object *o = ask(u, text);
    assert_tool_text(o, "still here");
    json_object_put(o);
    snprintf(text, sizeof text,
             RPC "\"id\":\"ok-%u\",\"method\":\"tools/call\",\"params\":{\"name\":\"add\",\"arguments\":"
                 "{\"a\":2,\"b\":3.5}%s%s}}",
             ++n, modern ? "," : "", modern ? MODERN_META : "");
    o = ask(u, text);
    assert_tool_text(o, "5.5");
    json_object_put(o);
}

START_TEST(mutated_messages_never_break_the_protocol)
{
    seed = env_u64("TH_FUZZ_SEED", DEFAULT_SEED);
    size_t total = (size_t)env_u64("TH_FUZZ_MESSAGES", DEFAULT_MESSAGES);
    rng_state = seed;
    fprintf(stderr, "test_mcp_fuzz: seed 0x%" PRIx64 ", %zu messages (TH_FUZZ_SEED, TH_FUZZ_MESSAGES)\n", seed,
            total);

    bytes in = {0};
    size_t index = 0;
    for (int session = 0; session < SESSIONS; session++) {
        run u;
        run_open(&u);
        size_t batch_left = 0;
        for (size_t i = 0; i < total / SESSIONS; i++) {
            /* Sometimes a batch, as a transport makes of one read. */
            if (batch_left == 0 && chance(10)) {
                batch_left = 1 + below(32);
                th_mcp_batch_begin(mcp);
            }
            next_input(&in);
            at_message(NULL, ++index);
            feed(&u, in.p, in.len);
            if (batch_left > 0 && --batch_left == 0)
                th_mcp_batch_end(mcp);
        }
        if (batch_left > 0)
            th_mcp_batch_end(mcp);
        at_message(NULL, index);
        if (session == SESSIONS - 1) {
            /* The last session goes away with calls perhaps in flight:
             * nothing may be sent for it afterwards. */
            run_close(&u);
            ck_assert(th_mcp_free(mcp, th_now_ms() + DRAIN_MS));
            ck_assert_uint_eq(u.col.late, 0);
            pthread_mutex_destroy(&u.col.lock);
            mcp = new_mcp();
            break;
        }
        run_drain(&u);
        /* The session that took all that still answers (modern works in any
         * state of a session). */
        assert_still_serving(&u, true);
        run_close(&u);
        pthread_mutex_destroy(&u.col.lock);
    }
    free(in.p);
    fprintf(stderr,
            "test_mcp_fuzz: %zu unparseable, %zu invalid, %zu notifications/responses, %zu requests; "
            "answers: %zu results and %zu errors at once, %zu tool results, %zu tool errors, %zu dropped after "
            "a cancel\n",
            seen.kinds[X_PARSE_ERROR], seen.kinds[X_INVALID], seen.kinds[X_SILENT], seen.kinds[X_REQUEST],
            seen.results, seen.errors, seen.tool_results, seen.tool_errors, seen.dropped);
    /* The mix must reach every kind of outcome, or the run proves little. */
    ck_assert(seen.kinds[X_PARSE_ERROR] && seen.kinds[X_INVALID] && seen.kinds[X_SILENT] && seen.kinds[X_REQUEST]);
    ck_assert(seen.results && seen.errors && seen.tool_results && seen.tool_errors);
}
END_TEST

/* After all sessions of the run, a new one serves both eras as on day one. */
START_TEST(a_fresh_session_serves_both_eras)
{
    run u;
    run_open(&u);
    assert_still_serving(&u, true);
    json_object *o = ask(&u, RPC "\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\","
                                 "\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
    json_object *res, *v;
    ck_assert(json_object_object_get_ex(o, "result", &res) && json_object_object_get_ex(res, "protocolVersion", &v));
    ck_assert_str_eq(json_object_get_string(v), "2025-11-25");
    json_object_put(o);
    const char *initialized = RPC "\"method\":\"notifications/initialized\"}";
    feed(&u, initialized, strlen(initialized));
    assert_still_serving(&u, false);
    run_close(&u);
    pthread_mutex_destroy(&u.col.lock);
}
END_TEST

/* Inputs on an edge: each must get what the oracle says, like any other. */
static const char *const edge_inputs[] = {
    "",
    " ",
    "null",
    "5",
    "\"x\"",
    "[]",
    "{}",
    "\xef\xbb\xbf{}",
    RPC "\"id\":null,\"method\":\"ping\"}",
    RPC "\"id\":1.5,\"method\":\"ping\"}",
    RPC "\"id\":[],\"method\":\"ping\"}",
    RPC "\"id\":1,\"method\":5}",
    RPC "\"method\":5,\"params\":\"bar\"}",
    RPC "\"method\":\"tools/call\",\"params\":\"bar\"}",
    RPC "\"id\":1,\"method\":\"tools/call\",\"params\":\"bar\"}",
    RPC "\"id\":1,\"id\":2,\"method\":\"ping\"}",
    RPC "\"id\":\"a\\u0000b\",\"method\":\"ping\"}",
    RPC "\"id\":\"\\ud800\",\"method\":\"ping\"}",
    RPC "\"id\":1,\"method\":\"ping\"}\n" RPC "\"id\":2,\"method\":\"ping\"}",
    RPC "\"id\":1,\"method\":\"ping\"} \t\r",
    RPC "\"id\":1,\"method\":\"ping\",\"params\":{\"_meta\":null}}",
    RPC "\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":null," MODERN_META "}}",
    RPC "\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"a\\u0000b\"},"
        MODERN_META "}}",
    RPC "\"id\":1,\"method\":\"tools/list\",\"params\":{\"cursor\":\"th1:18446744073709551617\"," MODERN_META "}}",
    RPC "\"id\":1,\"method\":\"tools/list\",\"params\":{\"_meta\":{\"" META_VERSION "\":\"2026-07-28\",\"" META_CAPS
        "\":{},\"io.modelcontextprotocol/logLevel\":null}}}",
    RPC "\"id\":9223372036854775807,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":"
        "{\"text\":\"x\"}," MODERN_META "}}",
    RPC "\"id\":-9223372036854775808,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":"
        "{\"text\":\"x\"}," MODERN_META "}}",
    RPC "\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"add\",\"arguments\":{\"a\":1e308,\"b\":1e308}}}",
};

START_TEST(edge_inputs_get_what_the_oracle_says)
{
    run u;
    run_open(&u);
    for (size_t i = 0; i < sizeof edge_inputs / sizeof edge_inputs[0]; i++) {
        at_message("edge input", i);
        feed(&u, edge_inputs[i], strlen(edge_inputs[i]));
    }
    /* Nesting just under, at, and past the limit, inside a request. */
    static const size_t depths[] = {TH_RPC_MAX_DEPTH - 4, TH_RPC_MAX_DEPTH - 3, TH_RPC_MAX_DEPTH - 2,
                                    TH_RPC_MAX_DEPTH, 100000};
    for (size_t i = 0; i < sizeof depths / sizeof depths[0]; i++) {
        bytes b = {0};
        const char *head = RPC "\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":"
                               "{\"text\":\"x\",\"deep\":";
        b_set(&b, head, strlen(head));
        for (size_t d = 0; d < depths[i]; d++)
            b_splice(&b, b.len, 0, "[", 1);
        for (size_t d = 0; d < depths[i]; d++)
            b_splice(&b, b.len, 0, "]", 1);
        const char *tail = "}," MODERN_META "}}";
        b_splice(&b, b.len, 0, tail, strlen(tail));
        at_message("nesting depth", depths[i] + 3);
        feed(&u, b.p, b.len);
        /* Keep ids apart: each call must be over before the next. */
        ck_assert(th_mcp_session_drain(u.s, th_now_ms() + DRAIN_MS));
        free(b.p);
    }
    run_drain(&u);
    run_close(&u);
    pthread_mutex_destroy(&u.col.lock);
}
END_TEST

/* ---- regressions: inputs the fuzzing found ---------------------------- */

/*
** A message naming an unknown method or tool whose name is longer than the
** error message quotes: the cut must not fall inside a UTF-8 character, or
** the error sent is not valid UTF-8 (nor, so, JSON).
*/
START_TEST(error_messages_quote_whole_characters)
{
    static const char *const fmts[] = {
        RPC "\"id\":1,\"method\":\"%s\"}",
        RPC "\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\",\"arguments\":{}}}",
        RPC "\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\",\"arguments\":{}," MODERN_META "}}",
    };
    char name[400], text[1024];
    run u;
    run_open(&u);
    for (size_t i = 0; i < sizeof fmts / sizeof fmts[0]; i++) {
        /* Every offset of a two-, three- and four-byte character around the
         * first 200 bytes. */
        static const char *const chars[] = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80"};
        for (size_t c = 0; c < 3; c++) {
            for (size_t pad = 196; pad <= 200; pad++) {
                memset(name, 'a', pad);
                snprintf(name + pad, sizeof name - pad, "%s%s", chars[c], chars[c]);
                snprintf(text, sizeof text, fmts[i], name);
                at_message("long name, format", i);
                feed(&u, text, strlen(text));
            }
        }
    }
    run_drain(&u);
    run_close(&u);
    pthread_mutex_destroy(&u.col.lock);
}
END_TEST

/*
** Ill-formed UTF-8 that json-c's own check accepts (overlong forms,
** surrogates, code points past U+10FFFF) is a parse error like any other,
** rather than being echoed back in ids, error messages and tool results.
*/
START_TEST(ill_formed_utf8_is_a_parse_error)
{
    static const char *const bad[] = {"\xc0\x80", "\xc1\xbf", "\xe0\x80\xaf", "\xed\xa0\x80", "\xf0\x8f\xbf\xbf",
                                      "\xf4\x90\x80\x80"};
    static const char *const fmts[] = {
        RPC "\"id\":\"%s\",\"method\":\"ping\"}",
        RPC "\"id\":1,\"method\":\"x%s\"}",
        RPC "\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"%s\"},"
            MODERN_META "}}",
        RPC "\"id%s\":1,\"method\":\"tools/list\"}",
    };
    char text[1024];
    run u;
    run_open(&u);
    for (size_t f = 0; f < sizeof fmts / sizeof fmts[0]; f++)
        for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
            snprintf(text, sizeof text, fmts[f], bad[b]);
            at_message("ill-formed UTF-8, format", f);
            feed(&u, text, strlen(text));
        }
    run_drain(&u);
    run_close(&u);
    pthread_mutex_destroy(&u.col.lock);
}
END_TEST

/*
** A message with a string method and no id is a notification, which is
** never answered (JSON-RPC 2.0, section 4.1), even when the host cannot
** use its method: here, one with an embedded NUL.
*/
START_TEST(a_notification_is_never_answered)
{
    static const char *const notes[] = {
        RPC "\"method\":\"a\\u0000b\"}",
        RPC "\"method\":\"notifications/cancelled\\u0000\",\"params\":{\"requestId\":1}}",
        RPC "\"method\":\"notifications/initialized\\u0000x\",\"params\":{}}",
    };
    run u;
    run_open(&u);
    for (size_t i = 0; i < sizeof notes / sizeof notes[0]; i++) {
        at_message("notification", i);
        feed(&u, notes[i], strlen(notes[i]));
    }
    run_drain(&u);
    run_close(&u);
    pthread_mutex_destroy(&u.col.lock);
}
END_TEST

/*
** Make the only pool thread busy for a while with a word count over a few
** megabytes, so that the calls fed next stay in flight until it is done.
** Only a failure to show a bug depends on timing: with the bug fixed, the
** tests below pass however the threads run.
*/
static void one_busy_thread(run *u)
{
    th_mcp_session_free(u->s);
    ck_assert(th_mcp_free(mcp, th_now_ms() + DRAIN_MS));
    th_mcp_config cfg;
    th_mcp_config_default(&cfg);
    cfg.max_threads = 1;
    mcp = th_mcp_new(reg, &cfg);
    ck_assert_ptr_nonnull(mcp);
    u->s = th_mcp_session_new(mcp, collect_send, &u->col);
    ck_assert_ptr_nonnull(u->s);

    bytes b = {0};
    const char *head = RPC "\"id\":\"busy\",\"method\":\"tools/call\",\"params\":{\"name\":\"text\",\"arguments\":"
                           "{\"operation\":\"word_count\",\"text\":\"";
    b_set(&b, head, strlen(head));
    json_object *filler = long_string(4 << 20, false);
    b_splice(&b, b.len, 0, json_object_get_string(filler), (size_t)json_object_get_string_len(filler));
    json_object_put(filler);
    const char *tail = "\"}," MODERN_META "}}";
    b_splice(&b, b.len, 0, tail, strlen(tail));
    at_label("busy call");
    feed(u, b.p, b.len);
    free(b.p);
}

static void feed_text(run *u, const char *what, const char *text)
{
    at_label(what);
    feed(u, text, strlen(text));
}

#define ECHO_CALL(id)                                                                                                  \
    RPC "\"id\":" id ",\"method\":\"tools/call\",\"params\":"                                                        \
        "{\"name\":\"echo\",\"arguments\":{\"text\":\"x\"}," MODERN_META "}}"

/*
** Two calls whose ids differ are two calls, even when one string id is a
** prefix of another up to a NUL, or both integers lie past INT64_MAX: the
** second must not be refused as "in flight".
*/
START_TEST(ids_that_differ_are_different_calls)
{
    run u;
    run_open(&u);
    one_busy_thread(&u);
    feed_text(&u, "string id with a NUL", ECHO_CALL("\"a\\u0000b\""));
    feed_text(&u, "string id before the NUL", ECHO_CALL("\"a\""));
    feed_text(&u, "integer id", ECHO_CALL("9223372036854775807"));
    feed_text(&u, "integer id past INT64_MAX", ECHO_CALL("9223372036854775808"));
    run_drain(&u);
    run_close(&u);
    pthread_mutex_destroy(&u.col.lock);
}
END_TEST

/* A cancellation names one call: it must not cancel another whose id only
 * looks the same up to a NUL or past INT64_MAX. */
START_TEST(a_cancel_stops_only_the_call_it_names)
{
    run u;
    run_open(&u);
    one_busy_thread(&u);
    feed_text(&u, "string id with a NUL", ECHO_CALL("\"c\\u0000d\""));
    feed_text(&u, "integer id", ECHO_CALL("9223372036854775807"));
    feed_text(&u, "cancel of another string id",
              RPC "\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":\"c\"}}");
    feed_text(&u, "cancel of another integer id",
              RPC "\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":9223372036854775808}}");
    run_drain(&u); /* both calls must have been answered */
    run_close(&u);
    pthread_mutex_destroy(&u.col.lock);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("mcp_fuzz");
    TCase *tc = tcase_create("fuzz");
    tcase_add_checked_fixture(tc, setup, teardown);
    /* A hang is a failure too; the bound is generous for valgrind. */
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, edge_inputs_get_what_the_oracle_says);
    tcase_add_test(tc, mutated_messages_never_break_the_protocol);
    tcase_add_test(tc, a_fresh_session_serves_both_eras);
    tcase_add_test(tc, ill_formed_utf8_is_a_parse_error);
    tcase_add_test(tc, error_messages_quote_whole_characters);
    tcase_add_test(tc, a_notification_is_never_answered);
    tcase_add_test(tc, ids_that_differ_are_different_calls);
    tcase_add_test(tc, a_cancel_stops_only_the_call_it_names);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN(suite)
