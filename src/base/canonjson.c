/* SPDX-License-Identifier: MIT */
/*
** base/canonjson.c: the canonical text of a JSON value. Numbers and strings
** are written as json-c and th_json_append write them; only the order of
** members and the white space are fixed here.
*/
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/canonjson.h"
#include "base/jsontree.h"
#include "base/util.h"

static int cmp_key(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool canon(th_buf *b, json_object *o);

static bool canon_object(th_buf *b, json_object *o)
{
    size_t n = (size_t)json_object_object_length(o), k = 0;
    const char **keys = malloc((n + 1) * sizeof *keys);
    if (!keys)
        return false;
    json_object_object_foreach(o, key, val)
    {
        (void)val;
        keys[k++] = key;
    }
    qsort(keys, n, sizeof *keys, cmp_key);
    bool ok = th_buf_append(b, "{", 1);
    for (size_t i = 0; ok && i < n; i++)
        ok = (i == 0 || th_buf_append(b, ",", 1)) && th_json_append_string(b, keys[i], strlen(keys[i])) &&
             th_buf_append(b, ":", 1) && canon(b, json_object_object_get(o, keys[i]));
    free(keys);
    return ok && th_buf_append(b, "}", 1);
}

static bool canon(th_buf *b, json_object *o)
{
    if (json_object_is_type(o, json_type_object))
        return canon_object(b, o);
    if (!json_object_is_type(o, json_type_array))
        return th_json_append(b, o);
    bool ok = th_buf_append(b, "[", 1);
    for (size_t i = 0; ok && i < json_object_array_length(o); i++)
        ok = (i == 0 || th_buf_append(b, ",", 1)) && canon(b, json_object_array_get_idx(o, i));
    return ok && th_buf_append(b, "]", 1);
}

char *th_json_canonical(json_object *o)
{
    th_buf b = {0};
    if (canon(&b, o) && th_buf_append(&b, "", 0) && b.data)
        return b.data;
    free(b.data);
    return NULL;
}
