/* SPDX-License-Identifier: MIT */
/*
** call/rawresult.c: a worker's CallToolResult passed through as its bytes.
** Owns the one-pass scan that decides whether the bytes can go to the client
** as they are (the worker is not trusted: they must not break the response
** or its line), and the json-c object that writes them.
*/
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "call/rawresult.h"
#include "call/result.h"
#include "base/jsontree.h"
#include "base/util.h"

/* ---- the scan --------------------------------------------------------------
** Each function takes the position of a value's first byte and returns the
** position after it, or NULL when the text is not plainly spliceable. */

typedef struct scan {
    const char *end;
    int depth;
} scan;

static const char *value(scan *s, const char *p);

static int hex4(const char *p, const char *end)
{
    if (end - p < 4)
        return -1;
    int v = 0;
    for (int i = 0; i < 4; i++) {
        int d = th_hex_digit(p[i]);
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

/* The length of the well-formed UTF-8 sequence at P (whose first byte is
 * 0x80 or more) before END, or 0 (Unicode's table 3-7: no overlong form,
 * no surrogate, nothing past U+10FFFF). */
static size_t utf8_seq(const unsigned char *p, const unsigned char *end)
{
    unsigned char c = p[0];
    size_t n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (n == 0 || (size_t)(end - p) < n)
        return 0;
    /* The second byte's range depends on the first; the rest are 80..BF. */
    unsigned char lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
    unsigned char hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
    if (p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xBF)
            return 0;
    return n;
}

/* The bytes a string's scan passes over without a second look: printable
 * ASCII but the quote and the backslash (1). Control characters, '"', '\\'
 * and every byte of 0x80 and more (UTF-8, checked by utf8_seq) are 0. */
static const unsigned char plain_byte[256] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 00 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 10 */
    1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 20 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 30 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 40 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, /* 50 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 60 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 70 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 80 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 90 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* A0 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* B0 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* C0 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* D0 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* E0 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* F0 */
};

/* A string at P (its opening quote), its UTF-8 checked on the way: bytes
 * of 0x80 and more occur only in strings (anything else the scan accepts
 * is ASCII), so this is the text's whole UTF-8 check. Surrogate escapes
 * are left to the long way: a lone one is not Unicode, and a client may
 * reject it. */
static const char *string(scan *s, const char *p)
{
    if (p >= s->end || *p != '"')
        return NULL;
    const unsigned char *u = (const unsigned char *)p + 1, *end = (const unsigned char *)s->end;
    while (u < end) {
        while (u < end && plain_byte[*u]) /* nearly all text: one look-up a byte */
            u++;
        if (u >= end)
            break;
        unsigned char c = *u;
        if (c == '"')
            return (const char *)u + 1;
        if (c < 0x20)
            return NULL;
        if (c >= 0x80) {
            size_t n = utf8_seq(u, end);
            if (n == 0)
                return NULL;
            u += n;
            continue;
        }
        if (++u >= end) /* a backslash: one escape */
            return NULL;
        switch (*u) {
        case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
            u++;
            break;
        case 'u': {
            int v = hex4((const char *)u + 1, s->end);
            if (v < 0 || (v >= 0xD800 && v <= 0xDFFF))
                return NULL;
            u += 5;
            break;
        }
        default:
            return NULL;
        }
    }
    return NULL;
}

static const char *digits(scan *s, const char *p)
{
    const char *q = p;
    while (q < s->end && *q >= '0' && *q <= '9')
        q++;
    return q > p ? q : NULL;
}

static const char *number(scan *s, const char *p)
{
    if (p < s->end && *p == '-')
        p++;
    if (p < s->end && *p == '0')
        p++;
    else if (!(p = digits(s, p)))
        return NULL;
    if (p < s->end && *p == '.' && !(p = digits(s, p + 1)))
        return NULL;
    if (p < s->end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < s->end && (*p == '+' || *p == '-'))
            p++;
        if (!(p = digits(s, p)))
            return NULL;
    }
    return p;
}

static const char *literal(scan *s, const char *p, const char *word)
{
    size_t n = strlen(word);
    return (size_t)(s->end - p) >= n && memcmp(p, word, n) == 0 ? p + n : NULL;
}

/* An array or object at P, each member's value scanned by value(). */
static const char *container(scan *s, const char *p)
{
    char close = *p == '[' ? ']' : '}';
    bool object = close == '}';
    if (++s->depth > TH_RESULT_MAX_DEPTH)
        return NULL;
    p++;
    if (p < s->end && *p == close) {
        s->depth--;
        return p + 1;
    }
    for (;;) {
        if (object) {
            if (!(p = string(s, p)) || p >= s->end || *p++ != ':')
                return NULL;
        }
        if (!(p = value(s, p)) || p >= s->end)
            return NULL;
        if (*p == close) {
            s->depth--;
            return p + 1;
        }
        if (*p++ != ',')
            return NULL;
    }
}

static const char *value(scan *s, const char *p)
{
    if (p >= s->end)
        return NULL;
    switch (*p) {
    case '"': return string(s, p);
    case '{':
    case '[': return container(s, p);
    case 't': return literal(s, p, "true");
    case 'f': return literal(s, p, "false");
    case 'n': return literal(s, p, "null");
    default: return number(s, p);
    }
}

/* ---- the result's shape ---------------------------------------------------- */

/* Members a block may need, as bits. */
enum { M_TEXT = 1, M_DATA = 2, M_MIME = 4, M_URI = 8, M_NAME = 16 };

#define KEY(k) k, sizeof(k) - 1

static const struct {
    const char *key;
    size_t len;
    unsigned bit;
} string_members[] = {
    {KEY("\"text\""), M_TEXT}, {KEY("\"data\""), M_DATA}, {KEY("\"mimeType\""), M_MIME},
    {KEY("\"uri\""), M_URI},   {KEY("\"name\""), M_NAME},
};

/* What each block type requires, as call/result.c's block_shapes says;
 * "resource" (an embedded resource with its own rules) is not here. */
static const struct {
    const char *type;
    size_t len;
    unsigned required;
} block_types[] = {
    {KEY("\"text\""), M_TEXT},
    {KEY("\"image\""), M_DATA | M_MIME},
    {KEY("\"audio\""), M_DATA | M_MIME},
    {KEY("\"resource_link\""), M_URI | M_NAME},
};

static bool span_is_n(const char *a, const char *b, const char *lit, size_t n)
{
    return (size_t)(b - a) == n && memcmp(a, lit, n) == 0;
}

/* Whether [A, B) is the string literal LIT, its length known at compile time. */
#define span_is(a, b, lit) span_is_n((a), (b), (lit), sizeof(lit) - 1)

/* One content block at P: an object with a known "type" and the string
 * members that type requires. */
static const char *block(scan *s, const char *p)
{
    if (p >= s->end || *p != '{' || ++s->depth > TH_RESULT_MAX_DEPTH)
        return NULL;
    p++;
    const char *type = NULL, *type_end = NULL;
    unsigned have = 0, seen = 0;
    while (p < s->end && *p != '}') {
        const char *k = p, *v;
        if (!(p = string(s, p)) || p >= s->end || *p++ != ':')
            return NULL;
        const char *k_end = p - 1;
        if (memchr(k, '\\', (size_t)(k_end - k)))
            return NULL;
        if (!(v = p, p = value(s, p)) || p >= s->end)
            return NULL;
        bool is_string = *v == '"';
        if (span_is(k, k_end, "\"type\"")) {
            if (type || !is_string)
                return NULL;
            type = v;
            type_end = p;
        } else {
            /* A member that may be required, twice, is left to the parse:
             * a client keeps the last, which need not be the string seen
             * first (a second "text":5 would reach it unchecked). */
            for (size_t i = 0; i < sizeof string_members / sizeof string_members[0]; i++)
                if (span_is_n(k, k_end, string_members[i].key, string_members[i].len)) {
                    if (seen & string_members[i].bit)
                        return NULL;
                    seen |= string_members[i].bit;
                    if (is_string)
                        have |= string_members[i].bit;
                }
        }
        if (*p == ',' && p + 1 < s->end && p[1] != '}')
            p++;
        else if (*p != '}')
            return NULL;
    }
    if (p >= s->end || !type)
        return NULL;
    s->depth--;
    for (size_t i = 0; i < sizeof block_types / sizeof block_types[0]; i++)
        if (span_is_n(type, type_end, block_types[i].type, block_types[i].len))
            return (have & block_types[i].required) == block_types[i].required ? p + 1 : NULL;
    return NULL;
}

static const char *content(scan *s, const char *p)
{
    if (p >= s->end || *p != '[' || ++s->depth > TH_RESULT_MAX_DEPTH)
        return NULL;
    p++;
    if (p < s->end && *p == ']') {
        s->depth--;
        return p + 1;
    }
    for (;;) {
        if (!(p = block(s, p)) || p >= s->end)
            return NULL;
        if (*p == ']') {
            s->depth--;
            return p + 1;
        }
        if (*p++ != ',')
            return NULL;
    }
}

/* The whole text: {"content":[...],"structuredContent":{...},"isError":B}
 * in any order, content required, nothing else, nothing after; *IS_ERROR
 * says whether B is true. */
static bool spliceable(const char *text, size_t len, bool *is_error)
{
    scan s = {.end = text + len, .depth = 1};
    const char *p = text;
    bool seen[3] = {false, false, false};
    if (len < 2 || *p++ != '{')
        return false;
    while (p < s.end && *p != '}') {
        const char *k = p;
        if (!(p = string(&s, p)) || p >= s.end || *p++ != ':')
            return false;
        const char *k_end = p - 1;
        int which = span_is(k, k_end, "\"content\"")             ? 0
                    : span_is(k, k_end, "\"structuredContent\"") ? 1
                    : span_is(k, k_end, "\"isError\"")           ? 2
                                                                 : -1;
        if (which < 0 || seen[which] || p >= s.end)
            return false;
        seen[which] = true;
        if (which == 0)
            p = content(&s, p);
        else if (which == 1)
            p = *p == '{' ? container(&s, p) : NULL;
        else if ((*is_error = *p == 't'))
            p = literal(&s, p, "true");
        else
            p = literal(&s, p, "false");
        if (!p || p >= s.end)
            return false;
        if (*p == ',' && p + 1 < s.end && p[1] != '}')
            p++;
        else if (*p != '}')
            return false;
    }
    return seen[0] && p + 1 == s.end && *p == '}';
}

/* ---- the object ------------------------------------------------------------ */

static const char raw_tag = 0;

typedef struct raw {
    th_json_tag tag; /* &raw_tag */
    bool is_error;   /* "isError":true */
    size_t len;
    char text[]; /* NUL-terminated */
} raw;

static int raw_to_json(json_object *o, struct printbuf *pb, int level, int flags)
{
    (void)level;
    (void)flags;
    const raw *r = json_object_get_userdata(o);
    return printbuf_memappend(pb, r->text, (int)r->len);
}

static void raw_free(json_object *o, void *p)
{
    (void)o;
    free(p);
}

json_object *th_raw_result_new(const char *text, size_t len)
{
    bool is_error = false;
    if (len > INT32_MAX || !spliceable(text, len, &is_error)) /* spliceable checks UTF-8 too */
        return NULL;
    raw *r = malloc(sizeof *r + len + 1);
    /* Only code that knows (th_raw_result_is) looks inside. */
    json_object *o = r ? th_json_carrier(&r->tag, &raw_tag, raw_to_json, raw_free) : NULL;
    if (!o) {
        free(r);
        return NULL;
    }
    r->len = len;
    r->is_error = is_error;
    memcpy(r->text, text, len);
    r->text[len] = '\0';
    return o;
}

bool th_raw_result_is(json_object *result)
{
    return th_json_carried(result, &raw_tag) != NULL;
}

bool th_raw_result_is_error(json_object *result)
{
    const raw *r = th_raw_result_is(result) ? json_object_get_userdata(result) : NULL;
    return r && r->is_error;
}

const char *th_raw_result_text(json_object *result, size_t *len)
{
    if (!th_raw_result_is(result))
        return NULL;
    const raw *r = json_object_get_userdata(result);
    *len = r->len;
    return r->text;
}

json_object *th_raw_result_tree(json_object *result)
{
    if (!th_raw_result_is(result))
        return result;
    const raw *r = json_object_get_userdata(result);
    /* Scanned, so it parses, as deep as the scan let it nest. */
    json_tokener *tok = json_tokener_new_ex(TH_RESULT_MAX_DEPTH + 8);
    json_object *tree = tok ? json_tokener_parse_ex(tok, r->text, (int)r->len) : NULL;
    json_tokener_free(tok);
    json_object_put(result);
    return tree;
}
