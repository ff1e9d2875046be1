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
** The offset PARAMS' optional "cursor" names in a list of COUNT items,
** into *OFFSET (0 without a cursor). False when the cursor is not one
** th_page_next made for PREFIX and this list: the caller answers -32602.
*/
bool th_page_offset(json_object *params, const char *prefix, size_t count, size_t *offset);

/* Add "nextCursor" for the page that ends at END to RES when END < COUNT. */
void th_page_next(json_object *res, const char *prefix, size_t end, size_t count);

#endif
