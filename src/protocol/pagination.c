/* SPDX-License-Identifier: MIT */
/*
** protocol/pagination.c: offset cursors for the resource, template and
** prompt lists (see pagination.h).
*/
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "protocol/pagination.h"

static bool page_offset(json_object *params, const char *prefix, size_t count, size_t *offset)
{
    json_object *cur;
    *offset = 0;
    if (!params || !json_object_object_get_ex(params, "cursor", &cur) || json_object_is_type(cur, json_type_null))
        return true;
    if (!json_object_is_type(cur, json_type_string))
        return false;
    const char *c = json_object_get_string(cur);
    size_t plen = strlen(prefix), off = 0;
    if (strncmp(c, prefix, plen) != 0 || !c[plen])
        return false;
    for (const char *p = c + plen; *p; p++) {
        if (*p < '0' || *p > '9' || off > count)
            return false;
        off = off * 10 + (size_t)(*p - '0');
    }
    if (off == 0 || off >= count)
        return false;
    *offset = off;
    return true;
}

void th_page_next(json_object *res, const char *prefix, size_t end, size_t count)
{
    if (end >= count)
        return;
    char next[64];
    snprintf(next, sizeof next, "%s%zu", prefix, end);
    json_object_object_add(res, "nextCursor", json_object_new_string(next));
}

bool th_page_window(json_object *params, const char *prefix, size_t count, size_t page_size, size_t *offset,
                    size_t *end)
{
    if (!page_offset(params, prefix, count, offset))
        return false;
    size_t left = count - *offset;
    *end = *offset + (page_size && page_size < left ? page_size : left);
    return true;
}
