/* SPDX-License-Identifier: MIT */
/*
** call/rawresult.h: a CallToolResult kept as the JSON text a worker process
** sent, checked by one scan instead of parsed, and written to the client as
** those bytes: no tree is built, walked, serialised and freed per call.
*/
#ifndef TH_RAWRESULT_H
#define TH_RAWRESULT_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

/*
** A result object that serialises as TEXT[0..LEN) (copied), or NULL when
** the text is not plainly spliceable. It is, when it is one compact JSON
** object (no white space outside strings, valid UTF-8, no control
** character or lone surrogate in a string, nesting within
** TH_RESULT_MAX_DEPTH) whose members are "content" (required: an array of
** blocks of type text, image, audio or resource_link, each with the string
** members its type requires), "structuredContent" (an object) and
** "isError" (a boolean), each at most once, with keys written plainly
** (and in a block, each member a type may require at most once).
** Anything else (an embedded resource, an escaped key) is NULL, not an
** error: the caller parses it and checks it the long way, which names what
** is wrong. As json-c sees it, the object is an int (it serialises as the
** text): only code that knows (th_raw_result_is) may look inside, through
** th_raw_result_tree.
*/
json_object *th_raw_result_new(const char *text, size_t len);

/* True when RESULT came from th_raw_result_new. */
bool th_raw_result_is(json_object *result);

/* True when RESULT is raw and says "isError": true (json-c cannot see it). */
bool th_raw_result_is_error(json_object *result);

/*
** The text a raw RESULT writes (owned by RESULT, NUL-terminated) and its
** length in *LEN, or NULL when RESULT is not raw: lets a writer copy the
** bytes straight into its buffer, where json-c's serialiser would first
** build a printbuf of its own for the object.
*/
const char *th_raw_result_text(json_object *result, size_t *len);

/*
** RESULT as a tree a caller may read and change: RESULT itself unless it is
** raw, else its text parsed (RESULT's reference is taken either way). NULL
** only when out of memory.
*/
json_object *th_raw_result_tree(json_object *result);

#endif
