/* SPDX-License-Identifier: MIT */
/*
** protocol/jsonrpc.c: JSON-RPC 2.0 parsing and message building. Every way a line can
** be wrong maps to one error code here, so transports and the MCP layer never
** look at raw JSON structure themselves.
*/
#include "config.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fastjson.h"
#include "base/jsontree.h"
#include "call/rawresult.h"
#include "protocol/jsonrpc.h"
#include "base/util.h"

static void invalid(th_rpc_msg *out, int code, const char *message)
{
    out->kind = TH_RPC_INVALID;
    out->error_code = code;
    snprintf(out->error_message, sizeof out->error_message, "%s", message);
}

/* MCP ids are strings or integers, never null (stricter than JSON-RPC). */
static int id_ok(json_object *id)
{
    return json_object_is_type(id, json_type_string) || json_object_is_type(id, json_type_int) ||
           json_object_is_type(id, json_type_double);
}

/* Is O the string LIT exactly (an embedded NUL would fool strcmp)? */
static bool string_is(json_object *o, const char *lit)
{
    return json_object_is_type(o, json_type_string) && (size_t)json_object_get_string_len(o) == strlen(lit) &&
           memcmp(json_object_get_string(o), lit, strlen(lit)) == 0;
}

/* ---- what json-c would change silently ---------------------------------
** json-c clamps integers outside [-2^63, 2^64-1], accepts NaN and Infinity
** even in strict mode, and decodes a lone surrogate escape to U+FFFD. A
** lexical scan outside json-c finds these; a second walk over the text and
** the tree together then keeps each such value exactly as sent. */

typedef struct scan {
    bool nonfinite;      /* NaN or Infinity outside a string */
    bool big_int;        /* an integer literal json-c would clamp */
    bool lone_surrogate; /* a \uD800-\uDFFF escape without its pair */
} scan;

/* The \uXXXX escape at T (which has N bytes), or -1. */
static long u_escape(const char *t, size_t n)
{
    if (n < 6 || t[0] != '\\' || t[1] != 'u')
        return -1;
    long v = 0;
    for (int i = 2; i < 6; i++) {
        int h = th_hex_digit(t[i]);
        if (h < 0)
            return -1;
        v = v * 16 + h;
    }
    return v;
}

/* Does the string token T[0..N) (quotes included) hold a lone surrogate? */
static bool has_lone_surrogate(const char *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (t[i] != '\\')
            continue;
        long u = u_escape(t + i, n - i);
        if (u < 0) {
            i++; /* a two-character escape such as \\ or \" */
            continue;
        }
        if (u >= 0xD800 && u <= 0xDBFF) {
            long lo = u_escape(t + i + 6, n - i - 6);
            if (lo >= 0xDC00 && lo <= 0xDFFF) {
                i += 11;
                continue;
            }
            return true;
        }
        if (u >= 0xDC00 && u <= 0xDFFF)
            return true;
        i += 5;
    }
    return false;
}

/* End of the string token starting at T[P] == '"' (one past its quote). */
static size_t string_end(const char *t, size_t p, size_t len)
{
    for (p++; p < len; p++) {
        if (t[p] == '\\')
            p++;
        else if (t[p] == '"')
            return p + 1;
    }
    return len;
}

static bool is_number_char(char c)
{
    return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

/* Is the number token T[0..N) an integer literal outside [-2^63, 2^64-1]? */
static bool int_out_of_range(const char *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (t[i] == '.' || t[i] == 'e' || t[i] == 'E')
            return false;
    bool neg = n > 0 && t[0] == '-';
    if (neg) {
        t++;
        n--;
    }
    while (n > 1 && t[0] == '0') {
        t++;
        n--;
    }
    const char *limit = neg ? "9223372036854775808" : "18446744073709551615";
    size_t ln = strlen(limit);
    return n > ln || (n == ln && memcmp(t, limit, n) > 0);
}

static scan prescan(const char *t, size_t len)
{
    scan sc = {0};
    for (size_t p = 0; p < len;) {
        char c = t[p];
        if (c == '"') {
            size_t e = string_end(t, p, len);
            if (!sc.lone_surrogate && memchr(t + p, '\\', e - p) && has_lone_surrogate(t + p, e - p))
                sc.lone_surrogate = true;
            p = e;
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            size_t e = p + 1;
            while (e < len && is_number_char(t[e]))
                e++;
            if (int_out_of_range(t + p, e - p))
                sc.big_int = true;
            p = e;
        } else {
            /* Valid JSON has no N or I outside strings: only NaN and
             * Infinity, which json-c takes, bring them. */
            if (c == 'N' || c == 'I')
                sc.nonfinite = true;
            p++;
        }
    }
    return sc;
}

static size_t skip_ws(const char *t, size_t p, size_t len)
{
    while (p < len && (t[p] == ' ' || t[p] == '\t' || t[p] == '\r' || t[p] == '\n'))
        p++;
    return p;
}

/*
** Where each container of a valid message ends and where the tokens json-c
** would change are, so the walk below jumps over a container in O(log n)
** and skips every subtree without such a token, instead of rescanning
** containers at every level of nesting.
*/
typedef struct layout {
    const char *t;
    size_t len;
    size_t *open, *close, ncont, capcont; /* containers, by opening position */
    size_t *marks, nmarks, capmarks;      /* tokens to keep exactly, in order */
} layout;

static bool grow(size_t **a, size_t **b, size_t n, size_t *cap)
{
    if (n < *cap)
        return true;
    size_t nc = *cap ? *cap * 2 : 64;
    size_t *na = realloc(*a, nc * sizeof *na);
    if (!na)
        return false;
    *a = na;
    if (b) {
        size_t *nb = realloc(*b, nc * sizeof *nb);
        if (!nb)
            return false;
        *b = nb;
    }
    *cap = nc;
    return true;
}

static void layout_free(layout *ly)
{
    free(ly->open);
    free(ly->close);
    free(ly->marks);
}

/* Fill LY for the valid JSON text T; false on out of memory. */
static bool layout_build(layout *ly, const char *t, size_t len)
{
    memset(ly, 0, sizeof *ly);
    ly->t = t;
    ly->len = len;
    size_t stack[TH_RPC_MAX_DEPTH + 2], depth = 0;
    for (size_t p = 0; p < len;) {
        char c = t[p];
        size_t e = p + 1;
        bool mark = false;
        if (c == '"') {
            e = string_end(t, p, len);
            mark = memchr(t + p, '\\', e - p) && has_lone_surrogate(t + p, e - p);
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            while (e < len && is_number_char(t[e]))
                e++;
            mark = int_out_of_range(t + p, e - p);
        } else if (c == '{' || c == '[') {
            if (!grow(&ly->open, &ly->close, ly->ncont, &ly->capcont))
                return false;
            if (depth < sizeof stack / sizeof stack[0])
                stack[depth++] = ly->ncont;
            ly->open[ly->ncont] = p;
            ly->close[ly->ncont++] = len; /* until its end is seen */
        } else if ((c == '}' || c == ']') && depth > 0) {
            ly->close[stack[--depth]] = p;
        }
        if (mark) {
            if (!grow(&ly->marks, NULL, ly->nmarks, &ly->capmarks))
                return false;
            ly->marks[ly->nmarks++] = p;
        }
        p = e;
    }
    return true;
}

/* The index of the first entry of sorted A[0..N) that is >= KEY. */
static size_t lower_bound(const size_t *a, size_t n, size_t key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* One past the end of the (valid) value starting at P. */
static size_t value_end(const layout *ly, size_t p)
{
    const char *t = ly->t;
    if (t[p] == '"')
        return string_end(t, p, ly->len);
    if (t[p] == '{' || t[p] == '[') {
        size_t i = lower_bound(ly->open, ly->ncont, p);
        return i < ly->ncont && ly->open[i] == p ? ly->close[i] + 1 : ly->len;
    }
    while (p < ly->len && t[p] != ',' && t[p] != ']' && t[p] != '}' && t[p] != ' ' && t[p] != '\t' &&
           t[p] != '\r' && t[p] != '\n')
        p++;
    return p;
}

static char *dup_span(const char *t, size_t n)
{
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, t, n);
        s[n] = '\0';
    }
    return s;
}

/* The string token T[0..N) decoded, as json-c decodes it; NULL on failure. */
static json_object *decode_string(const char *t, size_t n)
{
    json_tokener *tok = json_tokener_new();
    if (!tok)
        return NULL;
    json_object *o = json_tokener_parse_ex(tok, t, (int)n);
    json_tokener_free(tok);
    return json_object_is_type(o, json_type_string) ? o : (json_object_put(o), NULL);
}

typedef struct member {
    size_t key, key_end, value;
} member;

/*
** Walk the valid value at P alongside NODE, json-c's tree for it. A lone
** surrogate string keeps its escaped text as its serialisation; a clamped
** integer is returned as its replacement, a double that serialises as the
** literal sent. Returns NULL when NODE stays; false in *OK on out of memory.
*/
static json_object *keep_exact(const layout *ly, size_t p, json_object *node, bool *ok)
{
    const char *t = ly->t;
    size_t len = ly->len, end = value_end(ly, p);
    size_t m = lower_bound(ly->marks, ly->nmarks, p);
    if (m == ly->nmarks || ly->marks[m] >= end)
        return NULL; /* nothing to keep in here */
    if (t[p] == '"') {
        if (json_object_is_type(node, json_type_string)) {
            char *raw = dup_span(t + p, end - p);
            if (!raw)
                *ok = false;
            else
                json_object_set_serializer(node, json_object_userdata_to_json_string, raw, json_object_free_userdata);
        }
        return NULL;
    }
    if (t[p] == '-' || (t[p] >= '0' && t[p] <= '9')) {
        char *raw = dup_span(t + p, end - p);
        json_object *d = raw ? json_object_new_double_s(strtod(raw, NULL), raw) : NULL;
        free(raw);
        if (!d)
            *ok = false;
        return d;
    }
    if (t[p] == '[') {
        if (!json_object_is_type(node, json_type_array))
            return NULL;
        size_t i = 0;
        for (p = skip_ws(t, p + 1, len); p < end && t[p] != ']'; i++) {
            json_object *repl = keep_exact(ly, p, json_object_array_get_idx(node, i), ok);
            if (repl)
                json_object_array_put_idx(node, i, repl);
            p = skip_ws(t, value_end(ly, p), len);
            if (p < end && t[p] == ',')
                p = skip_ws(t, p + 1, len);
        }
        return NULL;
    }
    if (t[p] != '{' || !json_object_is_type(node, json_type_object))
        return NULL;
    /* With duplicate keys json-c keeps the last value: walk members from
     * the last, each key once. */
    member *ms = NULL;
    size_t n = 0, cap = 0;
    for (p = skip_ws(t, p + 1, len); p < end && t[p] == '"';) {
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 16;
            member *g = realloc(ms, nc * sizeof *g);
            if (!g) {
                *ok = false;
                free(ms);
                return NULL;
            }
            ms = g;
            cap = nc;
        }
        ms[n].key = p;
        ms[n].key_end = string_end(t, p, len);
        p = skip_ws(t, ms[n].key_end, len);
        p = skip_ws(t, p + 1, len); /* the colon */
        ms[n].value = p;
        n++;
        p = skip_ws(t, value_end(ly, p), len);
        if (p < end && t[p] == ',')
            p = skip_ws(t, p + 1, len);
    }
    json_object *seen = json_object_new_object();
    if (!seen)
        *ok = false;
    for (size_t i = n; i-- > 0 && seen;) {
        json_object *k = decode_string(t + ms[i].key, ms[i].key_end - ms[i].key);
        const char *key = json_object_get_string(k);
        if (!k)
            *ok = false;
        else if (!json_object_object_get_ex(seen, key, NULL)) {
            json_object_object_add(seen, key, NULL);
            json_object *repl = keep_exact(ly, ms[i].value, json_object_object_get(node, key), ok);
            if (repl)
                json_object_object_add(node, key, repl);
        }
        json_object_put(k);
    }
    json_object_put(seen);
    free(ms);
    return NULL;
}

static void classify(th_rpc_msg *out);

#define SERIALIZE_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

/*
** One tokener per thread, reset for each message: a new one allocates and
** zeroes its 128-level stack, which was a tenth of the cost of a call. The
** key frees it when its thread ends; the thread-local pointer keeps the
** main thread's reachable.
*/
static _Thread_local json_tokener *thread_tok;
static pthread_key_t tok_key;
static pthread_once_t tok_once = PTHREAD_ONCE_INIT;
static bool tok_key_ok;

static void tok_free(void *tok)
{
    json_tokener_free(tok);
    thread_tok = NULL;
}

static void tok_key_make(void)
{
    tok_key_ok = pthread_key_create(&tok_key, tok_free) == 0;
}

static json_tokener *tokener(void)
{
    if (thread_tok) {
        json_tokener_reset(thread_tok);
        return thread_tok;
    }
    pthread_once(&tok_once, tok_key_make);
    /* json-c's default depth (32) refuses valid requests with deeply nested
     * arguments; 128 still bounds the recursion that frees the tree. */
    json_tokener *tok = json_tokener_new_ex(TH_RPC_MAX_DEPTH);
    if (tok && tok_key_ok && pthread_setspecific(tok_key, tok) == 0)
        thread_tok = tok;
    return tok;
}

/* Done with TOK from tokener(): kept for the thread's next message. */
static void tokener_done(json_tokener *tok)
{
    if (tok != thread_tok)
        json_tokener_free(tok);
}

/* No byte above 0x7F: valid UTF-8 without decoding it (most requests),
 * eight bytes at a time. */
static bool ascii(const char *t, size_t len)
{
    uint64_t acc = 0, w;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        memcpy(&w, t + i, 8);
        acc |= w;
    }
    for (; i < len; i++)
        acc |= (unsigned char)t[i];
    return (acc & 0x8080808080808080ULL) == 0;
}

/* The members params was read into (plain_request): name, arguments, _meta. */
enum { P_NAME, P_ARGS, P_META, P_COUNT };

/*
** Params read member by member (PF), as the object json-c would have made:
** the members in the order they came. NULL when out of memory.
*/
static json_object *params_object(th_fastjson_field *pf)
{
    static const char *const keys[P_COUNT] = {"name", "arguments", "_meta"};
    json_object *o = json_object_new_object();
    for (size_t at = 0; o && at < P_COUNT; at++)
        for (size_t i = 0; i < P_COUNT; i++) {
            if (!pf[i].present || pf[i].order != at)
                continue;
            json_object *v = i == P_NAME ? json_object_new_string_len(pf[i].text, (int)pf[i].len) : pf[i].value;
            if ((i == P_NAME && !v) ||
                json_object_object_add_ex(o, keys[i], v, JSON_C_OBJECT_ADD_CONSTANT_KEY | JSON_C_OBJECT_ADD_KEY_IS_NEW) != 0) {
                if (i == P_NAME)
                    json_object_put(v);
                json_object_put(o);
                o = NULL;
                break;
            }
            pf[i].value = NULL; /* the object's now */
        }
    return o;
}

/*
** The plain request or notification nearly every message is, read without
** an object for its envelope (a json-c object costs three allocations and
** a hash per member), nor for the params of a plain tools/call: true when
** TEXT is one, with OUT filled as classify would fill it (or with CALL_LITE
** instead of PARAMS). Anything else, valid or not, is left to the general
** path, which words every error.
*/
static bool plain_request(const char *text, size_t len, th_rpc_msg *out)
{
#define NAMED(s) .name = s, .name_len = sizeof s - 1
    th_fastjson_field pf[P_COUNT] = {[P_NAME] = {NAMED("name"), .as_text = true},
                                     [P_ARGS] = {NAMED("arguments")},
                                     [P_META] = {NAMED("_meta")}};
    th_fastjson_field f[] = {{NAMED("jsonrpc"), .as_text = true},
                             {NAMED("id")},
                             {NAMED("method"), .as_text = true},
                             {NAMED("params"), .sub = pf, .nsub = P_COUNT}};
#undef NAMED
    if (!th_fastjson_fields(text, len, f, sizeof f / sizeof f[0]))
        return false;
    json_object *id = f[1].value, *params = f[3].value;
    /* The subset has no NUL in a string and no fraction in a number. */
    bool lite = f[3].in_sub;
    if (!f[0].present || f[0].len != 3 || memcmp(f[0].text, "2.0", 3) != 0 || !f[2].present ||
        f[2].len >= sizeof out->method_here || (f[1].present && !id_ok(id)) ||
        (f[3].present && !lite && !json_object_is_type(params, json_type_object))) {
        json_object_put(id);
        json_object_put(params);
        for (size_t i = 0; lite && i < P_COUNT; i++)
            json_object_put(pf[i].value);
        return false;
    }
    memcpy(out->method_here, f[2].text, f[2].len);
    out->method_here[f[2].len] = '\0';
    out->method = out->method_here;
    if (lite && f[2].len == 10 && memcmp(f[2].text, "tools/call", 10) == 0 &&
        pf[P_NAME].len < sizeof out->call_name) {
        out->call_lite = true;
        out->call_has_name = pf[P_NAME].present;
        memcpy(out->call_name, pf[P_NAME].text ? pf[P_NAME].text : "", pf[P_NAME].len);
        out->call_name[pf[P_NAME].len] = '\0';
        out->call_has_args = pf[P_ARGS].present;
        out->call_args = pf[P_ARGS].value;
        out->call_args_text = pf[P_ARGS].span;
        out->call_args_len = pf[P_ARGS].span_len;
        out->call_has_meta = pf[P_META].present;
        out->call_meta = pf[P_META].value;
    } else if (lite) {
        /* Any other method reads params as an object. */
        params = params_object(pf);
        for (size_t i = 0; i < P_COUNT; i++)
            json_object_put(pf[i].value);
        if (!params) {
            json_object_put(id);
            return false; /* the general path says it is out of memory */
        }
    }
    out->id = out->own_id = id;
    out->params = out->own_params = params;
    out->kind = f[1].present ? TH_RPC_REQUEST : TH_RPC_NOTIFICATION;
    return true;
}

/* OUT as if all zeros (jsonrpc.h: the texts come last). */
static void msg_empty(th_rpc_msg *out)
{
    memset(out, 0, offsetof(th_rpc_msg, error_message));
    out->error_message[0] = out->method_here[0] = out->call_name[0] = '\0';
}

void th_rpc_parse(const char *text, size_t len, th_rpc_msg *out)
{
    msg_empty(out);
    if (plain_request(text, len, out))
        return;
    /* A plain message (nearly all of them) needs neither json-c's tokener
     * nor the checks for what it would change: fastjson's subset has no
     * NaN, big integer, surrogate escape or byte past ASCII. */
    json_object *fast = th_fastjson_parse(text, len);
    if (fast) {
        out->msg = fast;
        if (json_object_is_type(fast, json_type_array)) {
            if (json_object_array_length(fast) == 0)
                invalid(out, TH_RPC_INVALID_REQUEST, "Invalid Request: an empty batch");
            else
                out->kind = TH_RPC_BATCH;
            return;
        }
        classify(out);
        return;
    }
    json_tokener *tok = tokener();
    if (!tok) {
        invalid(out, TH_RPC_INTERNAL_ERROR, "Internal error: out of memory");
        return;
    }
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *msg = json_tokener_parse_ex(tok, text, (int)len);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    if (jerr == json_tokener_continue && end == len) {
        /* A top-level number or literal ends only at a delimiter: give the
         * tokener one, so "5" is a (non-object) value, not a truncation. */
        msg = json_tokener_parse_ex(tok, "", 1);
        jerr = json_tokener_get_error(tok);
    }
    /* Trailing white space is harmless; anything else is a second value. */
    while (jerr == json_tokener_success && end < len && text[end] && strchr(" \t\r", text[end]))
        end++;
    /* json-c's UTF-8 check lets overlong forms, surrogates and code points
     * past U+10FFFF through; they would be echoed back in ids and names. */
    if (jerr == json_tokener_success && end == len && !ascii(text, len) && !th_utf8_valid(text, len))
        jerr = json_tokener_error_parse_utf8_string;
    /* json-c represents the JSON literal null as NULL: a valid value, which
     * the object check below refuses. */
    scan sc = {0};
    if (jerr == json_tokener_success && end == len)
        sc = prescan(text, len);
    if (jerr != json_tokener_success || end != len || sc.nonfinite) {
        char m[160];
        if (sc.nonfinite)
            snprintf(m, sizeof m, "Parse error: NaN and Infinity are not JSON numbers");
        else if (jerr == json_tokener_success || jerr == json_tokener_continue)
            snprintf(m, sizeof m, "Parse error: %s at offset %zu",
                     jerr == json_tokener_continue ? "unexpected end of input" : "trailing data", end);
        else
            snprintf(m, sizeof m, "Parse error: %s at offset %zu", json_tokener_error_desc(jerr), end);
        json_object_put(msg);
        tokener_done(tok);
        invalid(out, TH_RPC_PARSE_ERROR, m);
        return;
    }
    tokener_done(tok);
    if (sc.big_int || sc.lone_surrogate) {
        layout ly;
        bool ok = layout_build(&ly, text, len);
        json_object *repl = ok ? keep_exact(&ly, skip_ws(text, 0, len), msg, &ok) : NULL;
        layout_free(&ly);
        if (repl) { /* the message is a bare number */
            json_object_put(msg);
            msg = repl;
        }
        if (!ok) {
            json_object_put(msg);
            invalid(out, TH_RPC_INTERNAL_ERROR, "Internal error: out of memory");
            return;
        }
    }
    out->msg = msg;

    if (json_object_is_type(msg, json_type_array)) {
        /* Whether batches are served depends on the session's revision:
         * that is the MCP layer's call. An empty one is never valid. */
        if (json_object_array_length(msg) == 0)
            invalid(out, TH_RPC_INVALID_REQUEST, "Invalid Request: an empty batch");
        else
            out->kind = TH_RPC_BATCH;
        return;
    }
    classify(out);
}

/* has_answer of one message or batch element, read as a tree. */
static bool value_expects_answer(json_object *msg)
{
    json_object *v;
    if (json_object_is_type(msg, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(msg); i++)
            if (value_expects_answer(json_object_array_get_idx(msg, i)))
                return true;
        return json_object_array_length(msg) == 0; /* answered with an error */
    }
    if (!json_object_is_type(msg, json_type_object))
        return true;
    bool method = th_rpc_member(msg, "method", &v), id = th_rpc_member(msg, "id", &v);
    bool response = !method && (th_rpc_member(msg, "result", &v) || th_rpc_member(msg, "error", &v));
    return !(method && !id) && !response;
}

bool th_rpc_expects_answer(const th_rpc_msg *msg)
{
    /* Without a tree: a plain request or notification, or text that did
     * not parse (answered with -32700). */
    if (!msg->msg)
        return msg->kind != TH_RPC_NOTIFICATION;
    return value_expects_answer(msg->msg);
}

void th_rpc_parse_value(json_object *value, th_rpc_msg *out)
{
    msg_empty(out);
    out->msg = json_object_get(value);
    if (json_object_is_type(value, json_type_array)) {
        invalid(out, TH_RPC_INVALID_REQUEST, "Invalid Request: a batch element must be a request object, not a batch");
        return;
    }
    classify(out);
}

/* Classify OUT->msg, one parsed message that is not a batch. */
static void classify(th_rpc_msg *out)
{
    json_object *msg = out->msg;
    if (!json_object_is_type(msg, json_type_object)) {
        invalid(out, TH_RPC_INVALID_REQUEST, "Invalid Request: a message must be a JSON object");
        return;
    }

    json_object *v, *id = NULL, *method = NULL;
    bool has_id = th_json_get(msg, "id", &id);
    bool has_method = th_json_get(msg, "method", &method);
    if (has_id && id_ok(id))
        out->id = id;

    if (!th_json_get(msg, "jsonrpc", &v) || !string_is(v, "2.0")) {
        invalid(out, TH_RPC_INVALID_REQUEST, "Invalid Request: \"jsonrpc\" must be \"2.0\"");
        return;
    }
    if (!has_method) {
        if (th_json_get(msg, "result", NULL) || th_json_get(msg, "error", NULL)) {
            out->kind = TH_RPC_RESPONSE;
            return;
        }
        invalid(out, TH_RPC_INVALID_REQUEST, "Invalid Request: missing \"method\"");
        return;
    }
    if (has_id && !id_ok(id)) {
        invalid(out, TH_RPC_INVALID_REQUEST,
                json_object_is_type(id, json_type_null) ? "Invalid Request: \"id\" must not be null"
                                                         : "Invalid Request: \"id\" must be a string or a number");
        return;
    }
    if (!json_object_is_type(method, json_type_string) ||
        strlen(json_object_get_string(method)) != (size_t)json_object_get_string_len(method)) {
        invalid(out, TH_RPC_INVALID_REQUEST, "Invalid Request: \"method\" must be a string without NUL characters");
        out->silent = !has_id && json_object_is_type(method, json_type_string); /* a notification */
        return;
    }
    out->method = json_object_get_string(method);
    if (th_json_get(msg, "params", &v)) {
        /* JSON-RPC 2.0 allows only a structured value (or no member): a
         * scalar or null makes the Request object itself invalid. An array
         * is valid JSON-RPC that MCP methods do not take. */
        if (!json_object_is_type(v, json_type_object)) {
            if (json_object_is_type(v, json_type_array))
                invalid(out, TH_RPC_INVALID_PARAMS, "Invalid params: \"params\" must be an object, not an array");
            else
                invalid(out, TH_RPC_INVALID_REQUEST,
                        "Invalid Request: \"params\" must be an object (or absent), not a scalar or null");
            out->silent = !has_id;
            return;
        }
        out->params = v;
    }
    out->kind = has_id ? TH_RPC_REQUEST : TH_RPC_NOTIFICATION;
}

void th_rpc_msg_clear(th_rpc_msg *m)
{
    /* Most are NULL by now (a call takes its id and arguments): no call
     * into json-c for those. */
    json_object *held[] = {m->msg, m->own_id, m->own_params, m->call_args, m->call_meta};
    for (size_t i = 0; i < sizeof held / sizeof held[0]; i++)
        if (held[i])
            json_object_put(held[i]);
    msg_empty(m);
}

static json_object *envelope(json_object *id)
{
    json_object *o = json_object_new_object();
    if (!o)
        return NULL;
    json_object_object_add(o, "jsonrpc", json_object_new_string("2.0"));
    json_object_object_add(o, "id", id ? json_object_get(id) : NULL);
    return o;
}

json_object *th_rpc_result(json_object *id, json_object *result)
{
    json_object *o = envelope(id);
    if (!o) {
        json_object_put(result);
        return NULL;
    }
    json_object_object_add(o, "result", result);
    return o;
}

json_object *th_rpc_error(json_object *id, int code, const char *message, json_object *data)
{
    json_object *o = envelope(id);
    json_object *e = json_object_new_object();
    if (!o || !e) {
        json_object_put(o);
        json_object_put(e);
        json_object_put(data);
        return NULL;
    }
    json_object_object_add(e, "code", json_object_new_int(code));
    json_object_object_add(e, "message", json_object_new_string(message));
    if (data)
        json_object_object_add(e, "data", data);
    json_object_object_add(o, "error", e);
    return o;
}

json_object *th_rpc_notification(const char *method, json_object *params)
{
    json_object *o = json_object_new_object();
    if (!o) {
        json_object_put(params);
        return NULL;
    }
    json_object_object_add(o, "jsonrpc", json_object_new_string("2.0"));
    json_object_object_add(o, "method", json_object_new_string(method));
    if (params)
        json_object_object_add(o, "params", params);
    return o;
}

/* A result whose members are spliced in as it is serialised (RESULT's
 * tree and TAIL), or a whole response made as text already (TEXT, LEN
 * bytes, the result from RESULT_AT to the last byte but one; RESULT is
 * NULL until th_rpc_member parses it, and the text is written anyway). */
typedef struct spliced {
    th_json_tag tag; /* &spliced_tag */
    json_object *id, *result;
    const char *tail;
    bool whole; /* TEXT is the message */
    size_t len, result_at;
    char text[];
} spliced;

static const char spliced_tag = 0;

static int spliced_to_json(json_object *o, struct printbuf *pb, int level, int flags)
{
    (void)level;
    (void)flags;
    spliced *sp = json_object_get_userdata(o);
    if (sp->whole)
        return printbuf_memappend(pb, sp->text, (int)sp->len);
    size_t idlen, rlen;
    const char *id = sp->id ? json_object_to_json_string_length(sp->id, SERIALIZE_FLAGS, &idlen) : "null";
    const char *res = json_object_to_json_string_length(sp->result, SERIALIZE_FLAGS, &rlen);
    if (!sp->id)
        idlen = 4;
    if (!id || !res)
        return -1;
    printbuf_strappend(pb, "{\"jsonrpc\":\"2.0\",\"id\":");
    printbuf_memappend(pb, id, (int)idlen);
    printbuf_strappend(pb, ",\"result\":");
    if (!sp->tail || rlen < 2) {
        printbuf_memappend(pb, res, (int)rlen);
    } else {
        /* RESULT's members, then the tail's: "{...}" + ",..." or "{" + "...". */
        printbuf_memappend(pb, res, (int)rlen - 1);
        if (rlen > 2)
            printbuf_strappend(pb, ",");
        printbuf_memappend(pb, sp->tail + 1, (int)strlen(sp->tail + 1));
    }
    return printbuf_strappend(pb, "}");
}

static void spliced_free(json_object *o, void *p)
{
    (void)o;
    spliced *sp = p;
    json_object_put(sp->id);
    json_object_put(sp->result);
    free(sp);
}

json_object *th_rpc_result_spliced(json_object *id, json_object *result, const char *tail)
{
    if (!(json_object_is_type(result, json_type_object) || th_raw_result_is(result)))
        return th_rpc_result(id, result);
    spliced *sp = malloc(sizeof *sp);
    json_object *o = sp ? th_json_carrier(&sp->tag, &spliced_tag, spliced_to_json, spliced_free) : NULL;
    if (!o) {
        free(sp);
        return th_rpc_result(id, result);
    }
    sp->id = id ? json_object_get(id) : NULL;
    sp->result = result;
    sp->tail = tail;
    sp->whole = false;
    return o;
}

static const char response_head[] = "{\"jsonrpc\":\"2.0\",\"id\":", response_mid[] = ",\"result\":";

bool th_rpc_response_text_begin(th_buf *out, json_object *id, size_t *result_at)
{
    /* The common id, an integer as json-c reads it, in one piece with the
     * constant text around it (INT64_MAX may stand for a uint64: json-c
     * writes that one). */
    int64_t v;
    if (json_object_is_type(id, json_type_int) && !json_object_get_userdata(id) &&
        (v = json_object_get_int64(id)) != INT64_MAX) {
        char t[sizeof response_head + 24 + sizeof response_mid];
        size_t n = sizeof response_head - 1;
        memcpy(t, response_head, n);
        if (v < 0)
            t[n++] = '-';
        n += th_fmt_u64(t + n, v < 0 ? 0 - (unsigned long long)v : (unsigned long long)v);
        memcpy(t + n, response_mid, sizeof response_mid - 1);
        n += sizeof response_mid - 1;
        if (!th_buf_append(out, t, n))
            return false;
        *result_at = out->len;
        return true;
    }
    size_t mark = out->len;
    if (th_buf_append(out, response_head, sizeof response_head - 1) && th_json_append(out, id) &&
        th_buf_append(out, response_mid, sizeof response_mid - 1)) {
        *result_at = out->len;
        return true;
    }
    out->len = mark;
    return false;
}

bool th_rpc_response_text_end(th_buf *out, size_t result_at, const char *tail)
{
    size_t rlen = out->len - result_at;
    if (tail && rlen >= 2) {
        /* The result's members, then the tail's: "{...}" + ",..." or "{" + "...". */
        out->len--;
        if ((rlen > 2 && !th_buf_append(out, ",", 1)) || !th_buf_append(out, tail + 1, strlen(tail + 1)))
            return false;
    }
    return th_buf_append(out, "}", 1);
}

json_object *th_rpc_response_text(json_object *id, const char *text, size_t len, size_t result_at)
{
    if (len > INT32_MAX || result_at + 3 > len || text[result_at] != '{' || text[len - 1] != '}')
        return NULL;
    spliced *sp = malloc(sizeof *sp + len + 1);
    json_object *o = sp ? th_json_carrier(&sp->tag, &spliced_tag, spliced_to_json, spliced_free) : NULL;
    if (!o) {
        free(sp);
        return NULL;
    }
    sp->id = id ? json_object_get(id) : NULL;
    sp->result = NULL;
    sp->tail = NULL;
    sp->whole = true;
    sp->len = len;
    sp->result_at = result_at;
    memcpy(sp->text, text, len);
    sp->text[len] = '\0';
    return o;
}

bool th_rpc_member(json_object *msg, const char *key, json_object **out)
{
    spliced *sp = th_json_carried(msg, &spliced_tag);
    if (!sp)
        return json_object_object_get_ex(msg, key, out);
    /* A result kept as text is parsed the first time a caller looks in. */
    if (!sp->result && out && strcmp(key, "result") == 0) {
        json_tokener *tok = json_tokener_new_ex(TH_RPC_MAX_DEPTH);
        sp->result = tok ? json_tokener_parse_ex(tok, sp->text + sp->result_at, (int)(sp->len - 1 - sp->result_at))
                         : NULL;
        json_tokener_free(tok);
    }
    json_object *v = strcmp(key, "id") == 0 ? sp->id : strcmp(key, "result") == 0 ? sp->result : NULL;
    bool found = v != NULL || strcmp(key, "id") == 0 || (strcmp(key, "result") == 0 && !sp->result);
    if (out)
        *out = v;
    return found;
}

const char *th_rpc_serialize(json_object *msg, size_t *len)
{
    return json_object_to_json_string_length(msg, SERIALIZE_FLAGS, len);
}

bool th_rpc_write(json_object *msg, th_buf *out)
{
    spliced *sp = th_json_carried(msg, &spliced_tag);
    if (!sp)
        return th_json_append(out, msg);
    if (sp->whole)
        return th_buf_append(out, sp->text, sp->len);
    /* As spliced_to_json writes it. */
    if (!th_buf_append(out, response_head, sizeof response_head - 1) || !th_json_append(out, sp->id) ||
        !th_buf_append(out, response_mid, sizeof response_mid - 1))
        return false;
    size_t at = out->len, rawlen;
    /* A worker's result (process isolation) is copied in as its bytes. */
    const char *raw = th_raw_result_text(sp->result, &rawlen);
    if (raw ? !th_buf_append(out, raw, rawlen) : !th_json_append(out, sp->result))
        return false;
    size_t rlen = out->len - at;
    if (sp->tail && rlen >= 2) {
        /* RESULT's members, then the tail's: "{...}" + ",..." or "{" + "...". */
        out->len--;
        if ((rlen > 2 && !th_buf_append(out, ",", 1)) || !th_buf_append(out, sp->tail + 1, strlen(sp->tail + 1)))
            return false;
    }
    return th_buf_append(out, "}", 1);
}

/* Appending for the key builders: *OK turns false on allocation failure,
 * so a key is never silently cut short. */
static void add(th_buf *b, bool *ok, const char *s, size_t n)
{
    if (!th_buf_append(b, s, n))
        *ok = false;
}

/* Append the code point CP as UTF-8, or as \uXXXX when it is a lone
 * surrogate, a control character, a quote or a backslash (so a backslash in
 * a key always starts an escape). */
static void put_code_point(th_buf *b, bool *ok, long cp)
{
    char u[8];
    size_t n;
    if (cp < 0x20 || cp == '"' || cp == '\\' || (cp >= 0xD800 && cp <= 0xDFFF)) {
        n = (size_t)snprintf(u, sizeof u, "\\u%04lx", cp);
    } else if (cp < 0x80) {
        u[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | (cp >> 6));
        u[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | (cp >> 12));
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        u[0] = (char)(0xF0 | (cp >> 18));
        u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    add(b, ok, u, n);
}

/* The value of the string token RAW (quotes included, valid JSON) in one
 * canonical form that keeps lone surrogates apart. */
static void string_key(th_buf *b, bool *ok, const char *raw)
{
    static const char simple[] = "\"\"\\\\//b\bf\fn\nr\rt\t";
    size_t n = strlen(raw);
    for (size_t i = 1; i + 1 < n; i++) {
        if (raw[i] != '\\') {
            add(b, ok, raw + i, 1); /* valid JSON: no raw quote or control */
            continue;
        }
        long cp = u_escape(raw + i, n - i);
        if (cp < 0) {
            const char *s = strchr(simple, raw[i + 1]);
            put_code_point(b, ok, s ? (unsigned char)s[1] : (unsigned char)raw[i + 1]);
            i++;
            continue;
        }
        i += 5;
        long lo = cp >= 0xD800 && cp <= 0xDBFF ? u_escape(raw + i + 1, n - i - 1) : -1;
        if (lo >= 0xDC00 && lo <= 0xDFFF) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            i += 6;
        }
        put_code_point(b, ok, cp);
    }
}

/*
** The value of the JSON number TEXT in one canonical form, so ids equal in
** value (8, 8.0, 0.8e1) get one key while every distinct literal, however
** large, keeps its own: sign, significant digits, decimal exponent. False
** when TEXT is not a plain JSON number (the caller then keys the text).
*/
static bool number_key(th_buf *b, bool *ok, const char *text)
{
    const char *p = text, *first = NULL, *last = NULL;
    bool neg = *p == '-', frac = false;
    long long exp = 0;
    if (neg)
        p++;
    /* Significant digits run from the first to the last non-zero one; the
     * exponent counts the places between the last and the decimal point. */
    const char *digits_start = p;
    size_t int_digits = 0;
    for (; (*p >= '0' && *p <= '9') || (*p == '.' && !frac); p++) {
        if (*p == '.') {
            frac = true;
            continue;
        }
        if (!frac)
            int_digits++;
        if (*p != '0') {
            if (!first)
                first = p;
            last = p;
        }
    }
    if (p == digits_start)
        return false;
    if (*p == 'e' || *p == 'E') {
        p++;
        bool eneg = *p == '-';
        if (*p == '-' || *p == '+')
            p++;
        long long e = 0;
        const char *es = p;
        for (; *p >= '0' && *p <= '9'; p++) {
            if (e > 100000000000000LL)
                return false; /* an absurd exponent: key the text itself */
            e = e * 10 + (*p - '0');
        }
        if (p == es)
            return false;
        exp = eneg ? -e : e;
    }
    if (*p)
        return false;
    if (!first) {
        add(b, ok, "0", 1);
        return true;
    }
    /* Position of LAST counted in digits from the start, and the places
     * after it up to the decimal point. */
    size_t pos = 0;
    th_buf d = {0};
    for (const char *q = digits_start; q <= last; q++) {
        if (*q == '.')
            continue;
        pos++;
        if (q >= first)
            add(&d, ok, q, 1);
    }
    exp += (long long)int_digits - (long long)pos;
    if (neg)
        add(b, ok, "-", 1);
    if (d.data)
        add(b, ok, d.data, d.len);
    char e[32] = "e-";
    bool eneg = exp < 0;
    size_t en = 1 + eneg + th_fmt_u64(e + 1 + eneg, eneg ? 0 - (unsigned long long)exp : (unsigned long long)exp);
    add(b, ok, e, en);
    free(d.data);
    return true;
}

/*
** The key of the common ids without serialising them (which costs json-c a
** buffer per id): an int64 as number_key writes it, a string of plain
** printable ASCII as its JSON text, written to OUT (SIZE bytes) with its
** NUL. Its length, or 0 when ID is neither or the key does not fit:
** th_rpc_id_key then takes the general way.
*/
static size_t quick_id_key(json_object *id, char *out, size_t size)
{
    if (json_object_is_type(id, json_type_int)) {
        char key[48];
        int64_t v = json_object_get_int64(id);
        if (v == INT64_MAX || v == INT64_MIN)
            return 0; /* may be clamped, or a uint64 */
        size_t n = 2;
        memcpy(key, "n:", 2);
        if (v == 0) {
            key[n++] = '0';
        } else {
            if (v < 0) {
                key[n++] = '-';
                v = -v;
            }
            /* The digits, their trailing zeros moved to the exponent. */
            size_t digits = th_fmt_u64(key + n, (unsigned long long)v), exp = 0;
            while (key[n + digits - 1 - exp] == '0')
                exp++; /* v > 0: the first digit stops it */
            n += digits - exp;
            key[n++] = 'e';
            n += th_fmt_u64(key + n, exp);
        }
        if (n >= size)
            return 0;
        memcpy(out, key, n);
        out[n] = '\0';
        return n;
    }
    if (!json_object_is_type(id, json_type_string) || json_object_get_userdata(id))
        return 0;
    const char *s = json_object_get_string(id);
    size_t len = (size_t)json_object_get_string_len(id);
    if (len + 5 > size)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (s[i] < 0x20 || s[i] > 0x7e || s[i] == '"' || s[i] == '\\' || s[i] == '/')
            return 0; /* escaped in JSON text */
    memcpy(out, "s:\"", 3);
    memcpy(out + 3, s, len);
    memcpy(out + 3 + len, "\"", 2);
    return len + 4;
}

char *th_rpc_id_key_in(json_object *id, char *here, size_t size)
{
    if (id_ok(id) && quick_id_key(id, here, size))
        return here;
    return th_rpc_id_key(id);
}

char *th_rpc_id_key(json_object *id)
{
    if (!id_ok(id))
        return NULL;
    char quick[80];
    if (quick_id_key(id, quick, sizeof quick))
        return strdup(quick);
    th_buf b = {0};
    bool ok = true;
    size_t len;
    const char *text = json_object_to_json_string_length(id, JSON_C_TO_STRING_PLAIN, &len);
    if (json_object_is_type(id, json_type_string)) {
        /* A string kept as sent (it holds a lone surrogate, which its
         * decoded value lost) is keyed by its escapes; any other by the
         * JSON text of its value, which escapes an embedded NUL. */
        if (json_object_get_userdata(id)) {
            add(&b, &ok, "u:", 2);
            string_key(&b, &ok, text);
        } else {
            add(&b, &ok, "s:", 2);
            add(&b, &ok, text, len);
        }
    } else {
        add(&b, &ok, "n:", 2);
        size_t mark = b.len;
        if (!number_key(&b, &ok, text)) {
            b.len = mark;
            add(&b, &ok, text, len);
        }
    }
    if (!ok || !text) {
        free(b.data);
        return NULL;
    }
    return b.data;
}
