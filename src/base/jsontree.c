/* SPDX-License-Identifier: MIT */
/*
** base/jsontree.c: cheaper member lookups and compact serialisation for
** json-c trees (jsontree.h). Together they were about a sixth of a tool
** call's instructions through json-c's hashing and printbufs.
*/
#include "config.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsontree.h"

/* Objects of more members are searched by json-c's hash. */
#define WALK_MAX 8

#define SERIALIZE_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

/* Whether A and B are equal: most keys are short, and a call to strcmp
 * costs more than comparing them here; past eight bytes (MCP's
 * "io.modelcontextprotocol/..." names share 24) strcmp takes over. */
static inline bool same_key(const char *a, const char *b)
{
    const char *stop = a + 8;
    while (*a && *a == *b) {
        a++;
        b++;
        if (a == stop)
            return strcmp(a, b) == 0;
    }
    return *a == *b;
}

bool th_json_get(json_object *o, const char *key, json_object **out)
{
    if (out)
        *out = NULL;
    lh_table *t = json_object_get_object(o); /* NULL for NULL and non-objects */
    if (!t)
        return false;
    size_t walked = 0;
    for (struct lh_entry *e = lh_table_head(t); e; e = lh_entry_next(e)) {
        if (++walked > WALK_MAX)
            return json_object_object_get_ex(o, key, out);
        if (same_key(lh_entry_k(e), key)) {
            if (out)
                *out = (json_object *)lh_entry_v(e);
            return true;
        }
    }
    return false;
}


/* The NUL th_buf promises is written once, at the end (th_json_append). */
static inline bool put(th_buf *b, const char *s, size_t n)
{
    if (!th_buf_reserve(b, n))
        return false;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    return true;
}

static inline bool put_char(th_buf *b, char c)
{
    if (!th_buf_reserve(b, 1))
        return false;
    b->data[b->len++] = c;
    return true;
}

/*
** How json-c's json_escape_str writes each byte: 0 as it is, 1 as a
** two-character escape (the letter in short_escape), 2 as \u00XX with
** lowercase hex. '/' stays as it is (NOSLASHESCAPE); bytes from 0x7F on,
** UTF-8 included, too.
*/
static const unsigned char escape_class[256] = {
    2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 2, 1, 1, 2, 2,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
};

static const char short_escape[256] = {
    ['\b'] = 'b', ['\t'] = 't', ['\n'] = 'n', ['\f'] = 'f', ['\r'] = 'r', ['"'] = '"', ['\\'] = '\\',
};

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

/* Whether one of the eight bytes of W needs an escape: below 0x20, '"' or
 * '\\' (the usual bit tricks; exact as a yes or no). */
static inline bool word_needs_escape(uint64_t w)
{
    uint64_t below = (w - 0x20 * ONES) & ~w & HIGHS;
    uint64_t q = w ^ (0x22 * ONES), bs = w ^ (0x5c * ONES);
    return (below | ((q - ONES) & ~q & HIGHS) | ((bs - ONES) & ~bs & HIGHS)) != 0;
}

/* The string S of N bytes, quoted and escaped, in one pass: plain bytes
 * go eight at a time; room is made for them all at the start and grown
 * at each escape, so a long string costs no worst-case reservation. */
static bool string(th_buf *b, const char *s, size_t n)
{
    if (n > SIZE_MAX - 2 || !th_buf_reserve(b, n + 2))
        return false;
    char *d = b->data + b->len;
    *d++ = '"';
    size_t i = 0;
    for (;;) {
        for (uint64_t w; i + 8 <= n; i += 8, d += 8) {
            memcpy(&w, s + i, 8);
            if (word_needs_escape(w))
                break;
            memcpy(d, &w, 8);
        }
        while (i < n && escape_class[(unsigned char)s[i]] == 0)
            *d++ = s[i++];
        if (i == n)
            break;
        unsigned char c = (unsigned char)s[i++];
        /* This escape, the rest as plain bytes, the closing quote. */
        b->len = (size_t)(d - b->data);
        if (!th_buf_reserve(b, 6 + (n - i) + 1))
            return false;
        d = b->data + b->len;
        if (escape_class[c] == 1) {
            *d++ = '\\';
            *d++ = short_escape[c];
        } else {
            memcpy(d, "\\u00", 4);
            d[4] = "0123456789abcdef"[c >> 4];
            d[5] = "0123456789abcdef"[c & 0xf];
            d += 6;
        }
    }
    *d++ = '"';
    b->len = (size_t)(d - b->data);
    return true;
}

/* A value json-c writes itself; its text stays on O until O is freed. */
static bool by_json_c(th_buf *b, json_object *o)
{
    size_t n;
    const char *t = json_object_to_json_string_length(o, SERIALIZE_FLAGS, &n);
    return t && put(b, t, n);
}

static bool value(th_buf *b, json_object *o);

static bool w_null(th_buf *b, json_object *o)
{
    (void)o;
    return put(b, "null", 4);
}

static bool w_boolean(th_buf *b, json_object *o)
{
    return json_object_get_boolean(o) ? put(b, "true", 4) : put(b, "false", 5);
}

static bool w_int(th_buf *b, json_object *o)
{
    int64_t v = json_object_get_int64(o);
    if (v == INT64_MAX)
        return by_json_c(b, o); /* a uint64 reads as INT64_MAX */
    char d[24];
    size_t n = 0;
    if (v < 0)
        d[n++] = '-';
    n += th_fmt_u64(d + n, v < 0 ? 0 - (unsigned long long)v : (unsigned long long)v);
    return put(b, d, n);
}

static bool w_string(th_buf *b, json_object *o)
{
    return string(b, json_object_get_string(o), (size_t)json_object_get_string_len(o));
}

static bool w_object(th_buf *b, json_object *o)
{
    if (!put_char(b, '{'))
        return false;
    bool first = true;
    for (struct lh_entry *e = lh_table_head(json_object_get_object(o)); e; e = lh_entry_next(e)) {
        const char *k = lh_entry_k(e);
        if ((!first && !put_char(b, ',')) || !string(b, k, strlen(k)) || !put_char(b, ':') ||
            !value(b, (json_object *)lh_entry_v(e)))
            return false;
        first = false;
    }
    return put_char(b, '}');
}

static bool w_array(th_buf *b, json_object *o)
{
    if (!put_char(b, '['))
        return false;
    size_t n = json_object_array_length(o);
    for (size_t i = 0; i < n; i++)
        if ((i > 0 && !put_char(b, ',')) || !value(b, json_object_array_get_idx(o, i)))
            return false;
    return put_char(b, ']');
}

/* Writers by type; doubles keep json-c's formatting (and its rules for
 * NaN and the like), so they are never written here. */
static bool (*const writers[])(th_buf *, json_object *) = {
    [json_type_null] = w_null,     [json_type_boolean] = w_boolean, [json_type_double] = by_json_c,
    [json_type_int] = w_int,       [json_type_object] = w_object,   [json_type_array] = w_array,
    [json_type_string] = w_string,
};

static bool value(th_buf *b, json_object *o)
{
    if (!o)
        return put(b, "null", 4);
    /* Only a custom serializer sets user data through json-c's API. */
    if (json_object_get_userdata(o))
        return by_json_c(b, o);
    json_type t = json_object_get_type(o);
    if ((size_t)t >= sizeof writers / sizeof writers[0] || !writers[t])
        return by_json_c(b, o);
    return writers[t](b, o);
}

bool th_json_append_string(th_buf *b, const char *s, size_t n)
{
    if (!string(b, s, n) || !th_buf_reserve(b, 0))
        return false;
    b->data[b->len] = '\0';
    return true;
}

bool th_json_append(th_buf *b, json_object *o)
{
    if (!value(b, o) || !th_buf_reserve(b, 0))
        return false;
    b->data[b->len] = '\0';
    return true;
}

json_object *th_json_carrier(th_json_tag *block, const void *tag, json_object_to_json_string_fn *to_json,
                             json_object_delete_fn *del)
{
    /* An int, not an object: json-c's object allocates and frees a hash
     * table a carrier never uses (~700 instructions a call). */
    json_object *o = json_object_new_int(0);
    if (!o)
        return NULL;
    block->tag = tag;
    json_object_set_serializer(o, to_json, block, del);
    return o;
}

void *th_json_carried(json_object *o, const void *tag)
{
    th_json_tag *b = json_object_is_type(o, json_type_int) ? json_object_get_userdata(o) : NULL;
    return b && b->tag == tag ? b : NULL;
}

/* Member names in TEXT (valid JSON): strings followed by a colon. */
static size_t names_in_text(const char *t, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (t[i] != '"')
            continue;
        for (i++; i < len && t[i] != '"'; i++)
            if (t[i] == '\\')
                i++;
        size_t j = i + 1;
        while (j < len && (t[j] == ' ' || t[j] == '\t' || t[j] == '\r' || t[j] == '\n'))
            j++;
        n += j < len && t[j] == ':';
    }
    return n;
}

/* Members in the tree O (json-c kept one per name), or SIZE_MAX when a
 * number in it is not finite. Recursion is bounded by the parse depth. */
static size_t names_in_tree(json_object *o)
{
    size_t n = 0, sub;
    switch (json_object_get_type(o)) {
    case json_type_double:
        return isfinite(json_object_get_double(o)) ? 0 : SIZE_MAX;
    case json_type_array:
        for (size_t i = 0; i < json_object_array_length(o); i++) {
            if ((sub = names_in_tree(json_object_array_get_idx(o, i))) == SIZE_MAX)
                return SIZE_MAX;
            n += sub;
        }
        return n;
    case json_type_object: {
        json_object_object_foreach(o, key, v) {
            (void)key;
            if ((sub = names_in_tree(v)) == SIZE_MAX)
                return SIZE_MAX;
            n += sub + 1;
        }
        return n;
    }
    default:
        return 0;
    }
}

json_object *th_json_parse_strict(const char *text, size_t len, int max_depth, const char **why)
{
    json_tokener *tok = len <= INT_MAX ? json_tokener_new_ex(max_depth) : NULL;
    json_object *o = NULL;
    *why = "not one JSON value (or out of memory)";
    if (!tok)
        return NULL;
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    o = json_tokener_parse_ex(tok, text, (int)len);
    size_t end = json_tokener_get_parse_end(tok);
    if (json_tokener_get_error(tok) == json_tokener_continue && end == len)
        o = json_tokener_parse_ex(tok, "", 1); /* a top-level scalar ends at a delimiter */
    bool parsed = json_tokener_get_error(tok) == json_tokener_success;
    json_tokener_free(tok);
    while (parsed && end < len && (text[end] == ' ' || text[end] == '\t' || text[end] == '\r' || text[end] == '\n'))
        end++;
    if (!parsed || end != len)
        goto refuse;
    /* json-c's own check lets overlong forms and surrogates through. */
    if (!th_utf8_valid(text, len)) {
        *why = "not valid UTF-8";
        goto refuse;
    }
    size_t kept = names_in_tree(o);
    if (kept == SIZE_MAX) {
        *why = "a number is not finite (NaN or Infinity)";
        goto refuse;
    }
    if (kept != names_in_text(text, len)) {
        *why = "a member name appears twice in one object";
        goto refuse;
    }
    *why = NULL;
    return o;
refuse:
    json_object_put(o);
    return NULL;
}
