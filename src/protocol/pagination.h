/* SPDX-License-Identifier: MIT */
/*
** protocol/pagination.h: the offset cursors of the resource, template and
** prompt lists ("PREFIX<offset>"), read and written in one place. The tool
** list's cursors also name their registry version (protocol/mcp.c).
*/
#ifndef TH_PAGINATION_H
#define TH_PAGINATION_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

/*
** The page PARAMS' optional "cursor" asks for in a list of COUNT items:
** items *OFFSET (0 without a cursor) up to *END, at most PAGE_SIZE of them
** (0: all the rest). False when the cursor is not one th_page_next made
** for PREFIX and this list: the caller answers -32602.
*/
bool th_page_window(json_object *params, const char *prefix, size_t count, size_t page_size, size_t *offset,
                    size_t *end);

/* Add "nextCursor" for the page that ends at END to RES when END < COUNT. */
void th_page_next(json_object *res, const char *prefix, size_t end, size_t count);

#endif
