/* SPDX-License-Identifier: MIT */
/*
** call/result.c: the wire checks for what plugins hand back: one iterative walk
** per value (JSON-representable numbers, UTF-8 strings and keys, a depth
** bound, a size estimate), the shapes of MCP content blocks, and freeing
** refused trees without recursion.
*/
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call/result.h"
#include "base/jsontree.h"

/* A path shown in messages is cut here; the start says enough. */
#define PATH_MAX_BYTES 512
#define KEY_SHOWN 40

static const char *word_of(json_object *v)
{
    static const char *const words[] = {
        [json_type_null] = "null",     [json_type_boolean] = "boolean", [json_type_double] = "number",
        [json_type_int] = "number",    [json_type_object] = "object",   [json_type_array] = "array",
        [json_type_string] = "string",
    };
    if (!v)
        return "null";
    json_type t = json_object_get_type(v);
    return (unsigned)t < sizeof words / sizeof words[0] && words[t] ? words[t] : "an unknown type";
}

/* The JSON number grammar (RFC 8259 section 6), whole string. */
static bool is_json_number(const char *s)
{
    if (*s == '-')
        s++;
    if (*s == '0')
        s++;
    else if (*s >= '1' && *s <= '9')
        while (*s >= '0' && *s <= '9')
            s++;
    else
        return false;
    if (*s == '.') {
        if (!(*++s >= '0' && *s <= '9'))
            return false;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-')
            s++;
        if (!(*s >= '0' && *s <= '9'))
            return false;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    return *s == '\0';
}

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

/* Serialised size of a string of LEN bytes: quotes plus escapes (json-c
 * writes control characters as \u00XX, the common ones as two bytes). */
static size_t string_bytes(const char *s, size_t len)
{
    size_t n = len + 2, i = 0;
    while (i < len) {
        /* Eight bytes at a time while none is below 0x20, '"' or '\\'
         * (the usual bit tricks), which is nearly all text; the word that
         * has one, and the tail, a byte at a time. */
        for (uint64_t w, q, bs; i + 8 <= len; i += 8) {
            memcpy(&w, s + i, 8);
            q = w ^ (0x22 * ONES);
            bs = w ^ (0x5c * ONES);
            if ((((w - 0x20 * ONES) & ~w) | ((q - ONES) & ~q) | ((bs - ONES) & ~bs)) & HIGHS)
                break;
        }
        for (size_t stop = len - i > 8 ? i + 8 : len; i < stop; i++) {
            unsigned char c = (unsigned char)s[i];
            if (c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f')
                n += 1;
            else if (c < 0x20)
                n += 5;
        }
    }
    return n;
}

static size_t int_bytes(json_object *v)
{
    int64_t s = json_object_get_int64(v);
    if (s == INT64_MAX)
        return 20; /* may be a uint64 json-c clamps here */
    size_t n = s < 0 ? 2 : 1;
    for (uint64_t u = s < 0 ? 0 - (uint64_t)s : (uint64_t)s; u >= 10; u /= 10)
        n++;
    return n;
}

/* The walk's path: WHERE plus ".key" and "[i]" segments, cut at
 * PATH_MAX_BYTES (a message needs the start of it, not all of it). */
typedef struct path {
    char text[PATH_MAX_BYTES];
    size_t len;
} path;

static void path_cut(path *p, size_t len)
{
    p->len = len < p->len ? len : p->len;
    p->text[p->len] = '\0';
}

/* Append the N bytes at S, cut where the text is full. */
static void path_put(path *p, const char *s, size_t n)
{
    size_t room = sizeof p->text - 1 - p->len;
    if (n > room)
        n = room;
    memcpy(p->text + p->len, s, n);
    p->len += n;
    p->text[p->len] = '\0';
}

/* Append ".KEY" (KEY cut to KEY_SHOWN bytes) or, with KEY NULL, "[INDEX]".
 * Without snprintf: this runs for every member of every result. */
static void path_add(path *p, const char *key, size_t index)
{
    if (key) {
        path_put(p, ".", 1);
        path_put(p, key, strnlen(key, KEY_SHOWN));
        return;
    }
    char digits[24];
    path_put(p, "[", 1);
    path_put(p, digits, th_fmt_u64(digits, index));
    path_put(p, "]", 1);
}

static bool problem(th_buf *why, const path *p, const char *what)
{
    th_buf_printf(why, "%s: %s", p->text, what);
    return false;
}

/* A scalar: its checks and size. */
static bool check_scalar(json_object *v, const path *p, size_t *bytes, th_buf *why)
{
    switch (json_object_get_type(v)) {
    case json_type_null:
        *bytes += 4;
        return true;
    case json_type_boolean:
        *bytes += 5;
        return true;
    case json_type_int:
        *bytes += int_bytes(v);
        return true;
    case json_type_double: {
        double d = json_object_get_double(v);
        if (isnan(d))
            return problem(why, p, "NaN is not a JSON number");
        if (isinf(d))
            return problem(why, p, d > 0 ? "Infinity is not a JSON number" : "-Infinity is not a JSON number");
        /* json-c writes a finite double as a JSON number (whatever the
         * locale), unless it carries its own text, which json-c keeps as
         * user data (json_object_new_double_s). Only then is it serialised
         * here: that costs a buffer per value. */
        if (!json_object_get_userdata(v)) {
            *bytes += 24; /* the longest %.17g */
            return true;
        }
        const char *text = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
        if (!text || !is_json_number(text)) {
            char shown[64];
            snprintf(shown, sizeof shown, "the number text \"%.40s\" is not a JSON number", text ? text : "");
            return problem(why, p, shown);
        }
        *bytes += strlen(text);
        return true;
    }
    case json_type_string: {
        const char *s = json_object_get_string(v);
        size_t len = (size_t)json_object_get_string_len(v);
        if (!th_utf8_valid(s, len))
            return problem(why, p, "string is not valid UTF-8");
        *bytes += string_bytes(s, len);
        return true;
    }
    default:
        return problem(why, p, "value is not JSON");
    }
}

typedef struct frame {
    json_object *v;
    size_t index;              /* arrays: the next element */
    struct json_object_iterator it, end; /* objects */
    size_t plen;               /* the path up to this container */
} frame;

/* The walk; with DEPTH_ONLY set it checks nesting alone (no messages). */
static bool walk(json_object *value, const char *where, size_t *bytes, th_buf *why, bool depth_only)
{
    frame stack[TH_RESULT_MAX_DEPTH];
    size_t depth = 0;
    path p = {.len = 0};
    p.text[0] = '\0';
    path_put(&p, where, strlen(where));
    json_object *v = value;

    /* Each pass handles V (a value just reached), then finds the next. */
    for (;;) {
        if (json_object_is_type(v, json_type_object) || json_object_is_type(v, json_type_array)) {
            if (depth == TH_RESULT_MAX_DEPTH) {
                if (depth_only)
                    return false;
                char what[64];
                snprintf(what, sizeof what, "nested deeper than %d levels", TH_RESULT_MAX_DEPTH);
                return problem(why, &p, what);
            }
            frame *f = &stack[depth++];
            f->v = v;
            f->index = 0;
            f->plen = p.len;
            if (json_object_is_type(v, json_type_object)) {
                f->it = json_object_iter_begin(v);
                f->end = json_object_iter_end(v);
            }
            *bytes += 2;
        } else if (!depth_only && !check_scalar(v, &p, bytes, why)) {
            return false;
        }
        /* The next value: the top container's next member, popping the
         * containers that are done. */
        v = NULL;
        while (depth > 0 && !v) {
            frame *f = &stack[depth - 1];
            path_cut(&p, f->plen);
            if (json_object_is_type(f->v, json_type_array)) {
                if (f->index < json_object_array_length(f->v)) {
                    path_add(&p, NULL, f->index);
                    v = json_object_array_get_idx(f->v, f->index++);
                    *bytes += 1;
                    if (!v) {
                        *bytes += 4; /* a null element */
                        continue;
                    }
                    break;
                }
            } else if (!json_object_iter_equal(&f->it, &f->end)) {
                const char *key = json_object_iter_peek_name(&f->it);
                v = json_object_iter_peek_value(&f->it);
                json_object_iter_next(&f->it);
                path_add(&p, key, 0);
                size_t klen = strlen(key);
                if (!depth_only && !th_utf8_valid(key, klen))
                    return problem(why, &p, "key is not valid UTF-8");
                *bytes += string_bytes(key, klen) + 2;
                if (!v) {
                    *bytes += 4;
                    continue;
                }
                break;
            }
            depth--;
        }
        if (!v)
            return true;
    }
}

bool th_result_check_value(json_object *value, const char *where, size_t *bytes, th_buf *why)
{
    return walk(value, where, bytes, why, false);
}

/* ---- content blocks ----------------------------------------------------- */

/* The string members each block type requires (the MCP result schema). */
static const struct block_shape {
    const char *type;
    const char *required[2];
} block_shapes[] = {
    {.type = "text", .required = {"text", NULL}},
    {.type = "image", .required = {"data", "mimeType"}},
    {.type = "audio", .required = {"data", "mimeType"}},
    {.type = "resource_link", .required = {"uri", "name"}},
    {.type = "resource", .required = {NULL, NULL}}, /* its "resource" object: below */
};

/* WHAT names the holder: a block of type TYPE when it is not NULL. */
static bool need_string(json_object *obj, const char *type, const char *what, const char *key, const char *where,
                        th_buf *why)
{
    json_object *m = NULL;
    if (th_json_get(obj, key, &m) && json_object_is_type(m, json_type_string))
        return true;
    if (type)
        th_buf_printf(why, "%s: a \"%s\" block needs a string \"%s\", got %s", where, type, key,
                      th_json_get(obj, key, NULL) ? word_of(m) : "none");
    else
        th_buf_printf(why, "%s: %s needs a string \"%s\", got %s", where, what, key,
                      th_json_get(obj, key, NULL) ? word_of(m) : "none");
    return false;
}

static bool check_shape(json_object *block, const char *where, th_buf *why)
{
    json_object *t, *r;
    if (!json_object_is_type(block, json_type_object)) {
        th_buf_printf(why, "%s: a content block must be an object, got %s", where, word_of(block));
        return false;
    }
    if (!th_json_get(block, "type", &t) || !json_object_is_type(t, json_type_string)) {
        th_buf_printf(why, "%s: a content block needs a string \"type\"", where);
        return false;
    }
    const char *type = json_object_get_string(t);
    const struct block_shape *shape = NULL;
    for (size_t i = 0; i < sizeof block_shapes / sizeof block_shapes[0] && !shape; i++)
        if (strcmp(type, block_shapes[i].type) == 0)
            shape = &block_shapes[i];
    if (!shape) {
        th_buf_printf(why, "%s: unknown content block type \"%.40s\"", where, type);
        return false;
    }
    for (size_t i = 0; i < 2 && shape->required[i]; i++)
        if (!need_string(block, shape->type, NULL, shape->required[i], where, why))
            return false;
    if (strcmp(shape->type, "resource") != 0)
        return true;
    if (!th_json_get(block, "resource", &r) || !json_object_is_type(r, json_type_object)) {
        th_buf_printf(why, "%s: a \"resource\" block needs an object \"resource\"", where);
        return false;
    }
    if (!need_string(r, NULL, "an embedded resource", "uri", where, why))
        return false;
    json_object *body;
    if ((th_json_get(r, "text", &body) || th_json_get(r, "blob", &body)) &&
        json_object_is_type(body, json_type_string))
        return true;
    th_buf_printf(why, "%s: an embedded resource needs a string \"text\" or \"blob\"", where);
    return false;
}

/* Checked and sized without the walk's path and frames (result.h). */
bool th_result_quick_text_block(json_object *block, size_t *bytes)
{
    if (!json_object_is_type(block, json_type_object) || json_object_object_length(block) != 2)
        return false;
    /* Both members in one walk of the two entries: two lookups by name
     * were a tenth of a text result's cost. */
    json_object *t = NULL, *text = NULL;
    for (struct lh_entry *e = lh_table_head(json_object_get_object(block)); e; e = lh_entry_next(e)) {
        const char *k = lh_entry_k(e);
        if (strcmp(k, "text") == 0)
            text = (json_object *)lh_entry_v(e);
        else if (strcmp(k, "type") == 0)
            t = (json_object *)lh_entry_v(e);
        else
            return false;
    }
    if (!json_object_is_type(t, json_type_string) || !json_object_is_type(text, json_type_string) ||
        json_object_get_string_len(t) != 4 || memcmp(json_object_get_string(t), "text", 4) != 0)
        return false;
    const char *s = json_object_get_string(text);
    size_t len = (size_t)json_object_get_string_len(text);
    if (!th_utf8_valid(s, len))
        return false; /* the walk names the path */
    /* As the walk counts: braces, each key with its quotes, colon and
     * comma, and the values. */
    enum { QUOTED_WORD = 4 + 2 }; /* "type" and "text", quoted: no escapes */
    *bytes += 2 + (QUOTED_WORD + 2) + QUOTED_WORD + (QUOTED_WORD + 2) + string_bytes(s, len);
    return true;
}

bool th_result_check_block(json_object *block, const char *where, size_t *bytes, th_buf *why)
{
    if (th_result_quick_text_block(block, bytes))
        return true;
    return check_shape(block, where, why) && th_result_check_value(block, where, bytes, why);
}

/* ---- freeing ------------------------------------------------------------ */

void th_result_free(json_object *value)
{
    size_t ignored = 0;
    /* Within the bound json-c's own recursion is safe, and leaves alone
     * any part a plugin still holds a reference to. */
    if (walk(value, "", &ignored, NULL, true)) {
        json_object_put(value);
        return;
    }
    json_object **stack = NULL;
    size_t n = 0, cap = 0;
    json_object *v = value;
    while (v) {
        /* Move V's members onto the stack (each keeps a reference), so
         * putting V frees nothing below it. */
        for (;;) {
            json_object *child;
            if (json_object_is_type(v, json_type_array) && json_object_array_length(v) > 0) {
                size_t last = json_object_array_length(v) - 1;
                child = json_object_get(json_object_array_get_idx(v, last));
                json_object_array_del_idx(v, last, 1);
            } else if (json_object_is_type(v, json_type_object) && json_object_object_length(v) > 0) {
                struct json_object_iterator it = json_object_iter_begin(v);
                child = json_object_get(json_object_iter_peek_value(&it));
                json_object_object_del(v, json_object_iter_peek_name(&it));
            } else {
                break;
            }
            if (!child)
                continue;
            if (n == cap) {
                size_t ncap = cap ? cap * 2 : 64;
                json_object **grown = realloc(stack, ncap * sizeof *stack);
                if (!grown) {
                    /* No memory to go on without recursion: let json-c. */
                    json_object_put(child);
                    continue;
                }
                stack = grown;
                cap = ncap;
            }
            stack[n++] = child;
        }
        json_object_put(v);
        v = n > 0 ? stack[--n] : NULL;
    }
    free(stack);
}
