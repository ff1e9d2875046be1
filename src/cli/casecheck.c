/* SPDX-License-Identifier: MIT */
/*
** cli/casecheck.c: whether a response passes a `toolhost test` case, and
** when not, the first field that differs, with both values.
*/
/* asprintf */
#define _GNU_SOURCE
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cases.h"
#include "schema/jsonschema.h"

static char *json_text(json_object *v)
{
    return strdup(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
}

/* Record that FIELD differed: EXPECTED and GOT (NULL: absent). */
static bool differ(th_case_diff *d, const char *field, json_object *expected, json_object *got)
{
    snprintf(d->field, sizeof d->field, "%s", field);
    d->expected = expected ? json_text(expected) : NULL;
    d->got = got ? json_text(got) : NULL;
    return false;
}

static bool is_number(json_object *v)
{
    return json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double);
}

/* Whether GOT equals WANT, 3 and 3.0 alike; at the first difference, D
 * names its path below PATH. */
static bool same(json_object *want, json_object *got, const char *path, th_case_diff *d)
{
    char sub[256];
    if (is_number(want) && is_number(got))
        return json_object_get_double(want) == json_object_get_double(got) || differ(d, path, want, got);
    if (!got || json_object_get_type(want) != json_object_get_type(got))
        return differ(d, path, want, got);
    if (json_object_is_type(want, json_type_object)) {
        json_object_object_foreach(want, k, w)
        {
            json_object *g = NULL;
            snprintf(sub, sizeof sub, "%s.%s", path, k);
            if (!json_object_object_get_ex(got, k, &g))
                return differ(d, sub, w, NULL);
            if (!same(w, g, sub, d))
                return false;
        }
        json_object_object_foreach(got, k2, g2)
        {
            if (!json_object_object_get_ex(want, k2, NULL)) {
                snprintf(sub, sizeof sub, "%s.%s", path, k2);
                snprintf(d->field, sizeof d->field, "%s", sub);
                d->expected = NULL;
                d->got = json_text(g2);
                return false;
            }
        }
        return true;
    }
    if (json_object_is_type(want, json_type_array)) {
        size_t n = json_object_array_length(want), m = json_object_array_length(got);
        for (size_t i = 0; i < n && i < m; i++) {
            snprintf(sub, sizeof sub, "%s[%zu]", path, i);
            if (!same(json_object_array_get_idx(want, i), json_object_array_get_idx(got, i), sub, d))
                return false;
        }
        if (n == m)
            return true;
        snprintf(sub, sizeof sub, "%s.length", path);
        json_object *a = json_object_new_int64((int64_t)n), *b = json_object_new_int64((int64_t)m);
        differ(d, sub, a, b);
        json_object_put(a);
        json_object_put(b);
        return false;
    }
    return json_object_equal(want, got) || differ(d, path, want, got);
}

/* Where text lives in each kind of result: blocks in an array, and the
 * key of the text in a block (or in its "content" for prompt messages). */
static const struct {
    const char *array, *inner;
} text_places[] = {{"content", NULL}, {"contents", NULL}, {"messages", "content"}};

/* The text of RESULT: its text blocks' text, joined by newlines. */
static json_object *text_of(json_object *result)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    bool first = true;
    for (size_t p = 0; m && p < sizeof text_places / sizeof text_places[0]; p++) {
        json_object *a = NULL;
        if (!json_object_object_get_ex(result, text_places[p].array, &a) || !json_object_is_type(a, json_type_array))
            continue;
        for (size_t i = 0; i < json_object_array_length(a); i++) {
            json_object *b = json_object_array_get_idx(a, i), *t = NULL;
            if (text_places[p].inner)
                json_object_object_get_ex(b, text_places[p].inner, &b);
            if (!json_object_object_get_ex(b, "text", &t) || !json_object_is_type(t, json_type_string))
                continue;
            fprintf(m, "%s%s", first ? "" : "\n", json_object_get_string(t));
            first = false;
        }
    }
    if (!m || fclose(m) != 0) {
        free(buf);
        return NULL;
    }
    json_object *s = json_object_new_string_len(buf, (int)len);
    free(buf);
    return s;
}

static bool check_text(const th_case *c, json_object *result, th_case_diff *d)
{
    json_object *want = NULL, *part = NULL;
    json_object_object_get_ex(c->expect, "text", &want);
    json_object_object_get_ex(c->expect, "textContains", &part);
    if (!want && !part)
        return true;
    json_object *got = text_of(result);
    bool ok = got != NULL;
    if (ok && want && strcmp(json_object_get_string(want), json_object_get_string(got)) != 0)
        ok = differ(d, "text", want, got);
    if (ok && part && !strstr(json_object_get_string(got), json_object_get_string(part)))
        ok = differ(d, "textContains", part, got);
    json_object_put(got);
    return ok;
}

static bool check_schema(const th_case *c, json_object *result, th_case_diff *d)
{
    json_object *sc = NULL;
    if (!c->schema)
        return true;
    if (!json_object_object_get_ex(result, "structuredContent", &sc))
        return differ(d, "structuredContent", json_object_object_get(c->expect, "structuredContentSchema"), NULL);
    char *why = NULL;
    if (th_schema_validate(c->schema, sc, &why) == 0)
        return true;
    /* The validator's messages stand where the expected value would. */
    json_object *msg = json_object_new_string(why ? why : "invalid");
    differ(d, "structuredContentSchema", msg, sc);
    json_object_put(msg);
    free(why);
    return false;
}

bool th_case_check(const th_case *c, json_object *response, th_case_diff *d)
{
    *d = (th_case_diff){0};
    json_object *want = NULL, *result = NULL, *error = NULL, *v = NULL;
    json_object_object_get_ex(response, "result", &result);
    json_object_object_get_ex(response, "error", &error);
    if (c->expect && json_object_object_get_ex(c->expect, "error", &want))
        return (error && json_object_object_get_ex(error, "code", &v) && json_object_equal(v, want)) ||
               differ(d, "error.code", want, error ? v : response);
    if (!result)
        return differ(d, "result", NULL, error ? error : response);
    json_object *is_error = NULL, *no = json_object_new_boolean(0);
    json_object_object_get_ex(result, "isError", &is_error);
    if (!c->expect || !json_object_object_get_ex(c->expect, "isError", &want))
        want = no;
    bool ok = json_object_get_boolean(is_error) == json_object_get_boolean(want) ||
              differ(d, "isError", want, is_error ? is_error : no);
    json_object_put(no);
    if (!ok && json_object_get_boolean(is_error)) {
        json_object *said = text_of(result);
        d->said = said ? json_text(said) : NULL;
        json_object_put(said);
    }
    if (ok && !(c->expect && json_object_object_get_ex(c->expect, "structuredContent", &want)))
        want = NULL;
    if (ok && want)
        ok = same(want, json_object_object_get(result, "structuredContent"), "structuredContent", d);
    return ok && check_text(c, result, d) && check_schema(c, result, d);
}

void th_case_diff_clear(th_case_diff *d)
{
    free(d->expected);
    free(d->got);
    free(d->said);
    *d = (th_case_diff){0};
}
