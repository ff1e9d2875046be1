/* SPDX-License-Identifier: MIT */
/*
** base/fastjson.c: JSON text to a json-c tree without json-c's tokener
** for the plain subset (fastjson.h), which was a third of a tool call's
** instructions (a byte-at-a-time state machine, a locale switch per parse).
** Anything outside the subset is declined, never guessed at.
*/
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/fastjson.h"

/* Deeper input is declined: json-c's tokener (128 levels) takes it. */
#define FAST_MAX_DEPTH 32
/* Integers of more digits may pass int64 (json-c clamps them, and
 * jsonrpc.c keeps them exact): declined. */
#define FAST_MAX_DIGITS 18

typedef struct reader {
    const char *p, *end;
    char *scratch; /* strings with escapes, decoded */
    size_t cap;
    bool fail;     /* outside the subset, or out of memory */
} reader;

/* What a byte does inside a string: 0 an ordinary byte, 1 the closing
 * quote, 2 an escape, 3 outside the subset (control or non-ASCII). */
static const unsigned char string_class[256] = {
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
    0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
};

/*
** Member names requests use, kept as constants: json-c then stores the
** pointer instead of a copy of the name (one allocation less per member).
*/
#define KEY(s) {s, sizeof s - 1}
static const struct {
    const char *s;
    size_t n;
} known_keys[] = {
    KEY("jsonrpc"), KEY("id"), KEY("method"), KEY("params"), KEY("name"), KEY("arguments"), KEY("_meta"),
    KEY("progressToken"), KEY("text"), KEY("cursor"), KEY("protocolVersion"), KEY("capabilities"),
    KEY("clientInfo"), KEY("version"), KEY("requestId"), KEY("reason"), KEY("level"), KEY("uri"), KEY("type"),
    /* A modern request's _meta (2026-07-28). */
    KEY("io.modelcontextprotocol/protocolVersion"), KEY("io.modelcontextprotocol/clientCapabilities"),
    KEY("io.modelcontextprotocol/clientInfo"), KEY("io.modelcontextprotocol/logLevel"),
};
#undef KEY

static const char *known_key(const char *k, size_t n)
{
    for (size_t i = 0; i < sizeof known_keys / sizeof known_keys[0]; i++)
        if (known_keys[i].n == n && known_keys[i].s[0] == k[0] && memcmp(known_keys[i].s, k, n) == 0)
            return known_keys[i].s;
    return NULL;
}

static void skip_ws_slow(reader *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
        r->p++;
}

/* Compact JSON has no white space: one comparison, inline, says so for
 * any byte past the space. */
static inline void skip_ws(reader *r)
{
    if (r->p < r->end && (unsigned char)*r->p <= ' ')
        skip_ws_slow(r);
}

static bool reserve(reader *r, size_t n)
{
    if (n <= r->cap)
        return true;
    size_t cap = r->cap ? r->cap : 256;
    while (cap < n)
        cap *= 2;
    char *s = realloc(r->scratch, cap);
    if (!s)
        return false;
    r->scratch = s;
    r->cap = cap;
    return true;
}

/* The escapes the subset decodes: the character after the backslash, then
 * what it stands for. \u is not among them. */
static const char simple_escapes[] = "\"\"\\\\//b\bf\fn\nr\rt\t";

/*
** The string at r->p (its opening quote): its bytes in *S and *N, pointing
** into the text when it has no escape, else into the scratch buffer (valid
** until the next string).
*/
static bool string(reader *r, const char **s, size_t *n)
{
    const char *start = ++r->p;
    bool escaped = false;
    for (;;) {
        /* In locals: through R the compiler reloads and stores the
         * pointer at every byte (a char may alias it). */
        const char *p = r->p, *end = r->end;
        /* Eight bytes at a time: the usual bit tricks mark bytes past 0x7F,
         * below 0x20, '"' and '\\'. A mark can be false only above a true
         * one (a borrow runs upward), so the lowest mark is the first such
         * byte, and the scan jumps straight to it. The last few bytes go
         * one at a time. */
        for (;;) {
            if (end - p >= 8) {
                uint64_t w, q, bs, m;
                memcpy(&w, p, 8);
                q = w ^ 0x2222222222222222ULL;
                bs = w ^ 0x5c5c5c5c5c5c5c5cULL;
                m = (w | ((w - 0x2020202020202020ULL) & ~w) | ((q - 0x0101010101010101ULL) & ~q) |
                     ((bs - 0x0101010101010101ULL) & ~bs)) & 0x8080808080808080ULL;
                if (!m) {
                    p += 8;
                    continue;
                }
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
                p += (unsigned)__builtin_ctzll(m) >> 3; /* p[0] is the lowest byte */
                break;
#endif
                /* Big-endian: the borrow runs toward p[0]; bytes decide. */
            }
            while (p < end && string_class[(unsigned char)*p] == 0)
                p++;
            break;
        }
        r->p = p;
        if (r->p == r->end)
            return false;
        unsigned char k = string_class[(unsigned char)*r->p];
        if (k == 1)
            break;
        if (k == 3)
            return false; /* control characters are errors; UTF-8 is checked by the general path */
        escaped = true;
        if (r->end - r->p < 2)
            return false;
        r->p += 2; /* the backslash and the byte it escapes */
    }
    size_t raw = (size_t)(r->p - start);
    r->p++; /* the closing quote */
    if (!escaped) {
        *s = start;
        *n = raw;
        return true;
    }
    if (!reserve(r, raw + 1))
        return false;
    size_t o = 0;
    for (size_t i = 0; i < raw; i++) {
        char c = start[i];
        if (c == '\\') {
            const char *e = strchr(simple_escapes, start[++i]);
            /* Only the even positions name escapes; \u and unknown ones
             * are declined. */
            if (!e || start[i] == '\0' || (e - simple_escapes) % 2)
                return false;
            c = e[1];
        }
        r->scratch[o++] = c;
    }
    r->scratch[o] = '\0';
    *s = r->scratch;
    *n = o;
    return true;
}

static json_object *number(reader *r)
{
    bool neg = *r->p == '-';
    if (neg)
        r->p++;
    const char *d = r->p;
    uint64_t v = 0; /* wraps harmlessly past FAST_MAX_DIGITS, then declined */
    while (r->p < r->end && *r->p >= '0' && *r->p <= '9')
        v = v * 10 + (uint64_t)(*r->p++ - '0');
    size_t digits = (size_t)(r->p - d);
    /* "-0", leading zeros, fractions and exponents go the general way. */
    if (digits == 0 || digits > FAST_MAX_DIGITS || (d[0] == '0' && (digits > 1 || neg)) ||
        (r->p < r->end && (*r->p == '.' || *r->p == 'e' || *r->p == 'E'))) {
        r->fail = true;
        return NULL;
    }
    json_object *o = json_object_new_int64(neg ? -(int64_t)v : (int64_t)v);
    if (!o)
        r->fail = true;
    return o;
}

static bool literal(reader *r, const char *lit, size_t n)
{
    if ((size_t)(r->end - r->p) < n || memcmp(r->p, lit, n) != 0)
        return false;
    r->p += n;
    return true;
}

static json_object *value(reader *r, int depth);

/* Whether O surely has no member KEY: a walk of a small object (a large
 * one is left to json-c's lookup, which is quicker there). */
static bool is_new(json_object *o, const char *key)
{
    if (lh_table_length(json_object_get_object(o)) > 8)
        return false;
    for (struct lh_entry *e = lh_table_head(json_object_get_object(o)); e; e = lh_entry_next(e))
        if (strcmp(lh_entry_k(e), key) == 0)
            return false;
    return true;
}

static json_object *object(reader *r, int depth)
{
    json_object *o = json_object_new_object();
    if (!o) {
        r->fail = true;
        return NULL;
    }
    r->p++;
    skip_ws(r);
    if (r->p < r->end && *r->p == '}') {
        r->p++;
        return o;
    }
    for (;;) {
        const char *key;
        size_t klen;
        if (r->p == r->end || *r->p != '"' || !string(r, &key, &klen))
            break;
        /* KEY lives in the text or in scratch, which the value's strings
         * reuse: copied out with its NUL first, unless it is a known one.
         * A repeated key's last value wins, as with json-c. */
        skip_ws(r);
        if (r->p == r->end || *r->p != ':')
            break;
        r->p++;
        const char *constant = known_key(key, klen);
        char small[64], *k = constant ? NULL : klen < sizeof small ? small : malloc(klen + 1);
        if (!constant && !k)
            break;
        if (k) {
            memcpy(k, key, klen);
            k[klen] = '\0';
        }
        skip_ws(r);
        json_object *v = value(r, depth + 1);
        /* A key the object does not have yet (nearly always) is added
         * without json-c looking it up first. */
        const char *name = constant ? constant : k;
        unsigned flags = (constant ? JSON_C_OBJECT_ADD_CONSTANT_KEY : 0) | (is_new(o, name) ? JSON_C_OBJECT_ADD_KEY_IS_NEW : 0);
        bool added = !r->fail && json_object_object_add_ex(o, name, v, flags) == 0;
        if (k && k != small)
            free(k);
        if (!added) {
            json_object_put(v);
            break;
        }
        skip_ws(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            skip_ws(r);
            continue;
        }
        if (r->p < r->end && *r->p == '}') {
            r->p++;
            return o;
        }
        break;
    }
    r->fail = true;
    json_object_put(o);
    return NULL;
}

static json_object *array(reader *r, int depth)
{
    json_object *a = json_object_new_array();
    if (!a) {
        r->fail = true;
        return NULL;
    }
    r->p++;
    skip_ws(r);
    if (r->p < r->end && *r->p == ']') {
        r->p++;
        return a;
    }
    for (;;) {
        json_object *v = value(r, depth + 1);
        if (r->fail || json_object_array_add(a, v) != 0) {
            json_object_put(v);
            break;
        }
        skip_ws(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            skip_ws(r);
            continue;
        }
        if (r->p < r->end && *r->p == ']') {
            r->p++;
            return a;
        }
        break;
    }
    r->fail = true;
    json_object_put(a);
    return NULL;
}

/* The value at r->p; NULL is JSON null unless r->fail is set. */
static json_object *value(reader *r, int depth)
{
    if (r->p == r->end || depth > FAST_MAX_DEPTH) {
        r->fail = true;
        return NULL;
    }
    const char *s;
    size_t n;
    json_object *o;
    switch (*r->p) {
    case '{':
        return object(r, depth);
    case '[':
        return array(r, depth);
    case '"':
        if (!string(r, &s, &n) || !(o = json_object_new_string_len(s, (int)n)))
            break;
        return o;
    case 't':
        if (!literal(r, "true", 4) || !(o = json_object_new_boolean(1)))
            break;
        return o;
    case 'f':
        if (!literal(r, "false", 5) || !(o = json_object_new_boolean(0)))
            break;
        return o;
    case 'n':
        if (!literal(r, "null", 4))
            break;
        return NULL;
    default:
        if (*r->p == '-' || (*r->p >= '0' && *r->p <= '9'))
            return number(r);
        break;
    }
    r->fail = true;
    return NULL;
}

json_object *th_fastjson_parse(const char *text, size_t len)
{
    if (len > INT32_MAX) /* json-c's string lengths are ints */
        return NULL;
    reader r = {.p = text, .end = text + len};
    skip_ws(&r);
    if (r.p == r.end || (*r.p != '{' && *r.p != '['))
        return NULL;
    json_object *o = value(&r, 1);
    skip_ws(&r);
    free(r.scratch);
    if (!r.fail && r.p == r.end)
        return o;
    json_object_put(o);
    return NULL;
}

/* FIELDS' outputs, empty: nothing read, nothing held. */
static void fields_init(th_fastjson_field *fields, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!fields[i].name_len)
            fields[i].name_len = strlen(fields[i].name);
        fields[i].present = fields[i].in_sub = false;
        fields[i].value = NULL;
        fields[i].text = fields[i].span = NULL;
        fields[i].len = fields[i].span_len = 0;
        fields[i].order = 0;
    }
}

/* What FIELDS hold freed, and their outputs empty again. */
static void fields_reset(th_fastjson_field *fields, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        json_object_put(fields[i].value);
        if (fields[i].in_sub)
            fields_reset(fields[i].sub, fields[i].nsub);
        fields[i].present = fields[i].in_sub = false;
        fields[i].value = NULL;
        fields[i].text = fields[i].span = NULL;
        fields[i].len = fields[i].span_len = 0;
        fields[i].order = 0;
    }
}

/* Whether field F's name is the KLEN bytes at KEY: lengths first, then the
 * bytes inline, since names are a few bytes and a call to memcmp costs
 * more. */
static inline bool name_is(const th_fastjson_field *f, const char *key, size_t klen)
{
    if (f->name_len != klen)
        return false;
    const char *a = f->name, *b = key;
    size_t n = klen;
    /* Words while they last (both hold KLEN bytes), then bytes. */
    for (uint64_t x, y; n >= 8; a += 8, b += 8, n -= 8) {
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        if (x != y)
            return false;
    }
    if (n >= 4) {
        uint32_t x, y;
        memcpy(&x, a, 4);
        memcpy(&y, b, 4);
        if (x != y)
            return false;
        a += 4;
        b += 4;
        n -= 4;
    }
    while (n--)
        if (*a++ != *b++)
            return false;
    return true;
}

/*
** The object at r->p read member by member into FIELDS (N, their outputs
** empty), its values at DEPTH. False, with r->p anywhere and what was read
** still in FIELDS, when it is not such an object.
*/
static bool object_fields(reader *r, th_fastjson_field *fields, size_t n, int depth)
{
    if (depth > FAST_MAX_DEPTH || r->p == r->end || *r->p != '{')
        return false;
    r->p++;
    skip_ws(r);
    if (r->p < r->end && *r->p == '}') {
        r->p++;
        return true;
    }
    for (size_t order = 0;; order++) {
        if (r->p == r->end || *r->p != '"')
            return false;
        /* The member's name is a field's exactly when the field's name
         * follows the quote, then a quote: a name with an escape is no
         * field's (names have no byte that needs one), and none other can
         * match. So no scan of the name as a string. */
        const char *key = r->p + 1;
        size_t avail = (size_t)(r->end - key);
        th_fastjson_field *f = NULL;
        for (size_t i = 0; i < n && !f; i++)
            if (fields[i].name_len < avail && key[fields[i].name_len] == '"' &&
                name_is(&fields[i], key, fields[i].name_len))
                f = &fields[i];
        if (!f || f->present)
            return false;
        r->p = key + f->name_len + 1;
        f->present = true;
        f->order = order;
        skip_ws(r);
        if (r->p == r->end || *r->p != ':')
            return false;
        r->p++;
        skip_ws(r);
        if (f->as_text) {
            if (r->p == r->end || *r->p != '"' || !string(r, &f->text, &f->len) || f->text == r->scratch)
                return false;
        } else {
            const char *at = r->p;
            /* An object the sub-fields cannot hold is read whole after all:
             * only the caller's way of reading it depends on its members. */
            if (f->sub && r->p < r->end && *r->p == '{') {
                fields_init(f->sub, f->nsub);
                f->in_sub = object_fields(r, f->sub, f->nsub, depth + 1);
                if (!f->in_sub) {
                    fields_reset(f->sub, f->nsub);
                    r->p = at;
                    r->fail = false;
                }
            }
            if (!f->in_sub) {
                f->value = value(r, depth);
                if (r->fail)
                    return false;
                f->span = at;
                f->span_len = (size_t)(r->p - at);
            }
        }
        skip_ws(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            skip_ws(r);
        } else if (r->p < r->end && *r->p == '}') {
            r->p++;
            return true;
        } else {
            return false;
        }
    }
}

bool th_fastjson_fields(const char *text, size_t len, th_fastjson_field *fields, size_t n)
{
    fields_init(fields, n);
    if (len > INT32_MAX)
        return false;
    reader r = {.p = text, .end = text + len};
    skip_ws(&r);
    bool ok = object_fields(&r, fields, n, 2);
    skip_ws(&r);
    free(r.scratch);
    if (ok && r.p == r.end)
        return true;
    fields_reset(fields, n);
    return false;
}
