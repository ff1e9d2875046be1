/* SPDX-License-Identifier: MIT */
/*
** cli/cases.c: reading a `toolhost test` cases file: a JSON array of case
** objects or one object a line, every field checked against the tables
** below so that a typo stops the run with its line instead of passing.
*/
/* asprintf, open_memstream */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cases.h"
#include "schema/jsonschema.h"

/* What a field of a case or of its "expect" may hold. */
enum kind { K_STRING, K_OBJECT, K_BOOL, K_INT, K_SECONDS, K_MS, K_MODES, K_ANY, K_SCHEMA };

static const struct field {
    const char *name;
    enum kind kind;
    const char *what; /* how the error reads */
} case_fields[] = {
    {"name", K_STRING, "a string"},
    {"tool", K_STRING, "a tool's name"},
    {"resource", K_STRING, "a resource's URI"},
    {"prompt", K_STRING, "a prompt's name"},
    {"arguments", K_OBJECT, "an object"},
    {"expect", K_OBJECT, "an object"},
    {"timeout", K_SECONDS, "a number of seconds > 0"},
    {"cancelAfterMs", K_MS, "a whole number of milliseconds >= 0"},
    {"isolation", K_MODES, "an array of \"process\" and \"none\""},
}, expect_fields[] = {
    {"text", K_STRING, "a string"},
    {"textContains", K_STRING, "a string"},
    {"structuredContent", K_ANY, "JSON"},
    {"structuredContentSchema", K_SCHEMA, "a JSON Schema"},
    {"isError", K_BOOL, "true or false"},
    {"error", K_INT, "a JSON-RPC error code"},
};

/* Where the cases of one file are reported from. */
typedef struct where {
    const char *path;
    long line;
    size_t index;
    const char *name;
    char *err;
    size_t errlen;
} where;

static bool fail(const where *w, const char *field, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(w->err, w->errlen, "%s:%ld: case %zu%s%s%s: %s%s%s%s", w->path, w->line, w->index,
             w->name ? " ('" : "", w->name ? w->name : "", w->name ? "')" : "", field ? "field '" : "",
             field ? field : "", field ? "': " : "", msg);
    return false;
}

static bool kind_ok(enum kind k, json_object *v)
{
    double d;
    switch (k) {
    case K_STRING: return json_object_is_type(v, json_type_string);
    case K_OBJECT: return json_object_is_type(v, json_type_object);
    case K_BOOL: return json_object_is_type(v, json_type_boolean);
    case K_INT: return json_object_is_type(v, json_type_int);
    case K_SECONDS:
        d = json_object_get_double(v);
        return (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)) && d > 0 &&
               d < 86400;
    case K_MS: return json_object_is_type(v, json_type_int) && json_object_get_int64(v) >= 0;
    case K_SCHEMA: return json_object_is_type(v, json_type_object) || json_object_is_type(v, json_type_boolean);
    case K_MODES: return json_object_is_type(v, json_type_array) && json_object_array_length(v) > 0;
    case K_ANY: return true;
    }
    return false;
}

/* Every key of OBJ is in TABLE with a value of its kind. */
static bool fields_ok(const where *w, json_object *obj, const struct field *table, size_t n, const char *prefix)
{
    json_object_object_foreach(obj, key, val)
    {
        char path[128];
        snprintf(path, sizeof path, "%s%s", prefix, key);
        size_t i = 0;
        while (i < n && strcmp(table[i].name, key) != 0)
            i++;
        if (i == n)
            return fail(w, path, "unknown field");
        if (!kind_ok(table[i].kind, val))
            return fail(w, path, "must be %s", table[i].what);
    }
    return true;
}

static json_object *get(json_object *o, const char *key)
{
    json_object *v = NULL;
    return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static bool modes_of(const where *w, json_object *a, unsigned *modes)
{
    *modes = a ? 0 : TH_CASE_PROCESS | TH_CASE_NONE;
    for (size_t i = 0; a && i < json_object_array_length(a); i++) {
        const char *m = json_object_get_string(json_object_array_get_idx(a, i));
        if (m && strcmp(m, "process") == 0)
            *modes |= TH_CASE_PROCESS;
        else if (m && strcmp(m, "none") == 0)
            *modes |= TH_CASE_NONE;
        else
            return fail(w, "isolation", "'%s' is not \"process\" or \"none\"", m ? m : "?");
    }
    return true;
}

/* The request of case O: exactly one of tool, resource and prompt. */
static bool request_of(const where *w, json_object *o, th_case *c)
{
    static const char *const targets[][3] = {
        {"tool", "tools/call", "name"}, {"resource", "resources/read", "uri"}, {"prompt", "prompts/get", "name"}};
    size_t found = 0, which = 0;
    for (size_t i = 0; i < 3; i++)
        if (get(o, targets[i][0])) {
            found++;
            which = i;
        }
    if (found != 1)
        return fail(w, NULL, "give exactly one of \"tool\", \"resource\" and \"prompt\"");
    if (which == 1 && get(o, "arguments"))
        return fail(w, "arguments", "a resource read takes none");
    c->method = targets[which][1];
    const char *target = json_object_get_string(get(o, targets[which][0]));
    c->params = json_object_new_object();
    if (!c->params)
        return fail(w, NULL, "out of memory");
    json_object_object_add(c->params, targets[which][2], json_object_new_string(target));
    if (which != 1)
        json_object_object_add(c->params, "arguments",
                               get(o, "arguments") ? json_object_get(get(o, "arguments")) : json_object_new_object());
    if (!c->name && asprintf(&c->name, "%s %s", targets[which][0], target) < 0)
        c->name = NULL;
    return c->name != NULL || fail(w, NULL, "out of memory");
}

/* The expectation of case O, checked for sense. */
static bool expect_of(const where *w, json_object *o, th_case *c)
{
    c->expect = get(o, "expect");
    json_object *cancel = get(o, "cancelAfterMs");
    c->cancel_ms = cancel ? (long long)json_object_get_int64(cancel) : -1;
    if (cancel && c->expect)
        return fail(w, "expect", "a cancelled call has no result to expect (see cancelAfterMs)");
    if (!c->expect)
        return true;
    if (!fields_ok(w, c->expect, expect_fields, sizeof expect_fields / sizeof expect_fields[0], "expect."))
        return false;
    if (get(c->expect, "error") && json_object_object_length(c->expect) > 1)
        return fail(w, "expect.error", "an error response has no result: give nothing else in \"expect\"");
    json_object *schema = get(c->expect, "structuredContentSchema");
    char why[256];
    if (schema && !(c->schema = th_schema_compile(schema, why, sizeof why)))
        return fail(w, "expect.structuredContentSchema", "%s", why);
    return true;
}

static bool load_case(const where *at, json_object *o, th_case *c)
{
    where w = *at;
    if (!json_object_is_type(o, json_type_object))
        return fail(&w, NULL, "a case is a JSON object");
    json_object *name = get(o, "name");
    w.name = name && json_object_is_type(name, json_type_string) ? json_object_get_string(name) : NULL;
    c->line = w.line;
    if (!fields_ok(&w, o, case_fields, sizeof case_fields / sizeof case_fields[0], ""))
        return false;
    if (w.name && !(c->name = strdup(w.name)))
        return fail(&w, NULL, "out of memory");
    json_object *t = get(o, "timeout");
    c->timeout_ms = t ? (long long)ceil(json_object_get_double(t) * 1000.0) : 0;
    return request_of(&w, o, c) && expect_of(&w, o, c) && modes_of(&w, get(o, "isolation"), &c->modes);
}

/* The line of each element of the top-level array TEXT, into LINES (N of
 * them at most): a walk that counts newlines outside strings. */
static void element_lines(const char *text, long *lines, size_t n)
{
    long line = 1;
    int depth = 0;
    bool in_string = false, want = true;
    size_t k = 0;
    for (const char *p = text; *p && k < n; p++) {
        if (*p == '\n')
            line++;
        if (in_string) {
            if (*p == '\\' && p[1])
                p++;
            else if (*p == '"')
                in_string = false;
            continue;
        }
        if (depth == 1 && want && !strchr(" \t\r\n,]", *p)) {
            lines[k++] = line;
            want = false;
        }
        if (*p == '"')
            in_string = true;
        else if (*p == '[' || *p == '{')
            depth++;
        else if (*p == ']' || *p == '}')
            depth--;
        else if (*p == ',' && depth == 1)
            want = true;
    }
}

static char *slurp(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    char *text = NULL;
    size_t len = 0;
    if (!f) {
        snprintf(err, errlen, "%s: cannot open it: %s", path, strerror(errno));
        return NULL;
    }
    FILE *m = open_memstream(&text, &len);
    char buf[65536];
    size_t got;
    while (m && (got = fread(buf, 1, sizeof buf, f)) > 0)
        fwrite(buf, 1, got, m);
    bool bad = ferror(f);
    fclose(f);
    if (!m || fclose(m) != 0 || bad) {
        snprintf(err, errlen, "%s: cannot read it: %s", path, strerror(errno));
        free(text);
        return NULL;
    }
    return text;
}

/* TEXT as one JSON value; on a syntax error, the line it is on. */
static json_object *parse_at(const char *text, size_t len, long first_line, const char *path, char *err,
                             size_t errlen)
{
    json_tokener *tok = json_tokener_new();
    if (!tok) {
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    json_object *o = json_tokener_parse_ex(tok, text, (int)len);
    enum json_tokener_error e = json_tokener_get_error(tok);
    size_t off = json_tokener_get_parse_end(tok);
    size_t rest = off;
    while (rest < len && strchr(" \t\r\n", text[rest]))
        rest++;
    if (o && e == json_tokener_success && rest != len) {
        e = json_tokener_error_parse_unexpected;
        json_object_put(o);
        o = NULL;
    } else if (!o && e == json_tokener_success) {
        e = json_tokener_continue;
    }
    if (!o) {
        long line = first_line;
        for (size_t i = 0; i < off && i < len; i++)
            line += text[i] == '\n';
        snprintf(err, errlen, "%s:%ld: not JSON: %s", path, line,
                 e == json_tokener_continue ? "it ends too early" : json_tokener_error_desc(e));
    }
    json_tokener_free(tok);
    return o;
}

/* One case a line: they are gathered into an array, and LINES says where
 * each came from. */
static json_object *parse_lines(const char *text, const char *path, long **lines, char *err, size_t errlen)
{
    json_object *all = json_object_new_array();
    long line = 0;
    size_t cap = 0;
    for (const char *p = text; all && *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        line++;
        if (strspn(p, " \t\r") < len) {
            json_object *o = parse_at(p, len, line, path, err, errlen);
            size_t n = json_object_array_length(all);
            long *l = n < cap ? *lines : realloc(*lines, (cap = cap * 2 + 16) * sizeof **lines);
            if (!o || !l) {
                json_object_put(o);
                json_object_put(all);
                return NULL;
            }
            *lines = l;
            l[n] = line;
            json_object_array_add(all, o);
        }
        p += len + (nl != NULL);
    }
    return all;
}

bool th_cases_load(const char *path, th_cases *out, char *err, size_t errlen)
{
    *out = (th_cases){0};
    long *lines = NULL;
    char *text = slurp(path, err, errlen);
    if (!text)
        return false;
    const char *first = text + strspn(text, " \t\r\n");
    if (*first == '[')
        out->root = parse_at(text, strlen(text), 1, path, err, errlen);
    else
        out->root = parse_lines(text, path, &lines, err, errlen);
    size_t n = out->root ? json_object_array_length(out->root) : 0;
    bool ok = out->root != NULL;
    if (ok && n == 0) {
        snprintf(err, errlen, "%s: no cases in it", path);
        ok = false;
    }
    if (ok && !lines && (lines = calloc(n, sizeof *lines)) != NULL)
        element_lines(text, lines, n);
    if (ok && (!lines || !(out->v = calloc(n, sizeof *out->v)))) {
        snprintf(err, errlen, "%s: out of memory", path);
        ok = false;
    }
    for (size_t i = 0; ok && i < n; i++, out->n++) {
        where w = {path, lines[i], i + 1, NULL, err, errlen};
        ok = load_case(&w, json_object_array_get_idx(out->root, i), &out->v[i]);
    }
    free(lines);
    free(text);
    if (!ok)
        th_cases_free(out);
    return ok;
}

void th_cases_free(th_cases *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->v[i].name);
        json_object_put(c->v[i].params);
        th_schema_free(c->v[i].schema);
    }
    free(c->v);
    json_object_put(c->root);
    *c = (th_cases){0};
}
