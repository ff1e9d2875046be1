/*
** base/jsontree.h: json-c trees on the hot path, cheaper than json-c's own
** calls: a member lookup that walks a small object instead of hashing the
** key, and compact text appended to a reusable buffer instead of a
** printbuf per object.
*/
#ifndef TH_BASE_JSONTREE_H
#define TH_BASE_JSONTREE_H

#include <stdbool.h>

#include <json-c/json.h>

#include "base/util.h"

/*
** json_object_object_get_ex exactly (false and *OUT = NULL for a missing
** member, a NULL or a non-object O; OUT may be NULL), walking the members
** of an object that has a few instead of hashing KEY: a request's objects
** have three or four, and hashing cost more than the comparisons.
*/
bool th_json_get(json_object *o, const char *key, json_object **out);

/*
** Append O's JSON text to B, byte for byte what
** json_object_to_json_string_ext(O, JSON_C_TO_STRING_PLAIN |
** JSON_C_TO_STRING_NOSLASHESCAPE) writes (NULL is null), without the
** printbuf json-c keeps on every object it serialises. Values with a
** serializer of their own (any with user data: raw results, numbers kept
** as sent, spliced responses) and doubles are written by json-c. False
** when memory ran out; B then holds a partial text the caller drops.
*/
bool th_json_append(th_buf *b, json_object *o);

/* Append the N bytes at S as a JSON string, quoted and escaped exactly as
 * th_json_append writes a string object's; false when memory ran out. */
bool th_json_append_string(th_buf *b, const char *s, size_t n);

#endif
