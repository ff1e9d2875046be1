/* SPDX-License-Identifier: MIT */
/*
** call/result.h: what a plugin hands back must be valid on the wire. Checks one
** JSON value (or one MCP content block) for what JSON and the MCP result
** schema can carry, bounds its nesting, and estimates its serialised size.
*/
#ifndef TH_RESULT_H
#define TH_RESULT_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "base/util.h"

/* Nesting deeper than this is refused: json-c serialises and frees
 * recursively, and a thread's stack is small. */
#define TH_RESULT_MAX_DEPTH 128

/*
** Walk VALUE once (iteratively, at most TH_RESULT_MAX_DEPTH levels): every
** double finite and written as a JSON number, every string and key UTF-8.
** Adds VALUE's estimated serialised size to *BYTES. On the first problem,
** returns false and appends "WHERE.path: what is wrong" to WHY.
*/
bool th_result_check_value(json_object *value, const char *where, size_t *bytes, th_buf *why);

/* Like th_result_check_value for a content block, which must also have the
 * shape the MCP result schema gives its "type". */
bool th_result_check_block(json_object *block, const char *where, size_t *bytes, th_buf *why);

/* The block most results are, {"type":"text","text":S} and nothing more,
 * checked and sized (added to *BYTES) as th_result_check_block would:
 * true when BLOCK is one and valid. False says nothing (the general check
 * decides, and words what is wrong); *BYTES is then unchanged. */
bool th_result_quick_text_block(json_object *block, size_t *bytes);

/*
** Drop a reference to VALUE, without recursion when it is nested deeper
** than TH_RESULT_MAX_DEPTH, so a refused tree of any depth is freed safely.
** Such a tree is taken apart first: a plugin that kept a reference into it
** finds that part emptied.
*/
void th_result_free(json_object *value);

#endif
