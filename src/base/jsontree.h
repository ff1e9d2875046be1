/* SPDX-License-Identifier: MIT */
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

/*
** Values that carry a block of the host's through json-c, to be printed
** as text it already holds (a response made as text, a worker's result):
** a json-c int whose printing is TO_JSON and whose release calls DEL on
** BLOCK. BLOCK begins with a th_json_tag, set to TAG here; th_json_carried
** compares it, so a plain int (a plugin's) or a carrier of another kind is
** never taken for one. TAG is the address of something of the caller's.
** NULL when out of memory: BLOCK stays the caller's to free.
*/
typedef struct th_json_tag {
    const void *tag;
} th_json_tag;
json_object *th_json_carrier(th_json_tag *block, const void *tag, json_object_to_json_string_fn *to_json,
                             json_object_delete_fn *del);

/* O's block when O is a carrier made with TAG, else NULL (O may be NULL). */
void *th_json_carried(json_object *o, const void *tag);

/*
** The one JSON value TEXT (LEN bytes) holds, for text that decides who is
** let in (a JOSE header, JWT claims, a key set): json-c's strict tokener
** with UTF-8 checked in full (th_utf8_valid), nothing but white space
** after the value, nesting of at most MAX_DEPTH, and refused besides what
** json-c lets through: a member name twice in one object (RFC 7515 4,
** where json-c would keep the last silently) and NaN or an infinite
** number. NULL with a short reason in *WHY (static text) when not so.
*/
json_object *th_json_parse_strict(const char *text, size_t len, int max_depth, const char **why);

#endif
