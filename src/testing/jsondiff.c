/* SPDX-License-Identifier: MIT */
/*
** testing/jsondiff.c: reading a test's result by path and saying where two
** JSON values first differ ("structuredContent.total: expected 3, got 2"),
** so that a failed check reads as what the plugin got wrong.
*/
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toolhost/testing.h"

/* Values longer than this are cut in a message: the path says where. */
#define SHOWN 160

static const char *shown(json_object *v, char *buf, size_t size)
{
    if (!v)
        return "nothing";
    const char *t = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
    snprintf(buf, size, "%.*s%s", SHOWN, t, strlen(t) > SHOWN ? "..." : "");
    return buf;
}

static bool differ(const char *path, json_object *want, json_object *got, char *msg, size_t size)
{
    char w[SHOWN + 8], g[SHOWN + 8];
    if (msg && size)
        snprintf(msg, size, "%s: expected %s, got %s", *path ? path : "(the value)", shown(want, w, sizeof w),
                 shown(got, g, sizeof g));
    return false;
}

static void join(char *out, size_t size, const char *prefix, const char *key)
{
    snprintf(out, size, "%s%s%s", prefix, *prefix ? "." : "", key);
}

static bool numbers(json_object *v)
{
    return json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double);
}

bool th_test_json_diff(const char *prefix, json_object *want, json_object *got, char *msg, size_t size)
{
    char path[512];
    const char *at = prefix ? prefix : "";
    if (!want || !got)
        return want == got || differ(at, want, got, msg, size);
    if (numbers(want) && numbers(got))
        return json_object_get_double(want) == json_object_get_double(got) || differ(at, want, got, msg, size);
    if (json_object_get_type(want) != json_object_get_type(got))
        return differ(at, want, got, msg, size);
    if (json_object_is_type(want, json_type_object)) {
        json_object_object_foreach(want, key, wv)
        {
            json_object *gv = NULL;
            join(path, sizeof path, at, key);
            if (!json_object_object_get_ex(got, key, &gv))
                return differ(path, wv, NULL, msg, size);
            if (!th_test_json_diff(path, wv, gv, msg, size))
                return false;
        }
        json_object_object_foreach(got, gkey, gval)
        {
            if (!json_object_object_get_ex(want, gkey, NULL)) {
                join(path, sizeof path, at, gkey);
                return differ(path, NULL, gval, msg, size);
            }
        }
        return true;
    }
    if (json_object_is_type(want, json_type_array)) {
        size_t nw = json_object_array_length(want), ng = json_object_array_length(got);
        for (size_t i = 0; i < nw || i < ng; i++) {
            char idx[24];
            snprintf(idx, sizeof idx, "%zu", i);
            join(path, sizeof path, at, idx);
            if (!th_test_json_diff(path, i < nw ? json_object_array_get_idx(want, i) : NULL,
                                   i < ng ? json_object_array_get_idx(got, i) : NULL, msg, size))
                return false;
        }
        return true;
    }
    return json_object_equal(want, got) || differ(at, want, got, msg, size);
}

/* One step of a path: a member of an object, an index of an array. */
static json_object *step(json_object *v, const char *key, size_t len)
{
    char k[256];
    if (len >= sizeof k)
        return NULL;
    memcpy(k, key, len);
    k[len] = '\0';
    if (json_object_is_type(v, json_type_object)) {
        json_object *m = NULL;
        return json_object_object_get_ex(v, k, &m) ? m : NULL;
    }
    if (!json_object_is_type(v, json_type_array) || len == 0 || strspn(k, "0123456789") != len)
        return NULL;
    size_t i = (size_t)strtoull(k, NULL, 10);
    return i < json_object_array_length(v) ? json_object_array_get_idx(v, i) : NULL;
}

json_object *th_test_at(const th_test_result *r, const char *path)
{
    json_object *v = r->result;
    for (const char *p = path; v && p && *p;) {
        size_t len = strcspn(p, ".");
        v = step(v, p, len);
        p += len + (p[len] == '.');
    }
    return v;
}

const char *th_test_text(const th_test_result *r, size_t i)
{
    char path[48];
    snprintf(path, sizeof path, "content.%zu", i);
    json_object *block = th_test_at(r, path), *type, *text;
    if (!block || !json_object_object_get_ex(block, "type", &type) ||
        strcmp(json_object_get_string(type), "text") != 0 || !json_object_object_get_ex(block, "text", &text))
        return NULL;
    return json_object_get_string(text);
}

bool th_test_expect(const th_test_result *r, const char *path, const char *want_json, char *msg, size_t size)
{
    json_object *want = json_tokener_parse(want_json);
    if (!want && strcmp(want_json, "null") != 0) {
        if (msg && size)
            snprintf(msg, size, "%s: the expected value is not JSON: %s", path, want_json);
        return false;
    }
    json_object *got = th_test_at(r, path);
    bool same;
    if (!got && r->status != TH_TEST_RESULT && msg && size) {
        snprintf(msg, size, "%s: expected %s, got no result (%s)", path, want_json,
                 r->error_text ? r->error_text : "no answer");
        same = false;
    } else {
        same = th_test_json_diff(path, want, got, msg, size);
    }
    json_object_put(want);
    return same;
}
