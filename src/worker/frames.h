/* SPDX-License-Identifier: MIT */
/*
** worker/frames.h: what a worker's frames for a call in flight do to the
** host's call (progress, log, the result), apart from the pipe they came
** on, so that the host's handling of hostile frames is one pure step.
*/
#ifndef TH_WORKER_FRAMES_H
#define TH_WORKER_FRAMES_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "toolhost/plugin.h"

/*
** Apply a frame of TYPE (a th_ipc_type) with PAYLOAD[0..LEN) (the worker's
** bytes, not trusted; NUL-terminated at LEN) to CALL, the host's call that
** TOOL names: PROGRESS and LOG onto the call, RESULT and FAILED as its
** result (PARSE: the host must see the result as objects, see
** th_worker_apply_result). A frame of any other type, or a payload that is
** not what its type says, changes nothing but a result's, which fails the
** call with a message naming TOOL. Returns true for a final frame (RESULT
** or FAILED): nothing more belongs to the call. ASK is not handled here: it
** answers on the worker's pipe.
*/
bool th_worker_apply_frame(th_call *call, const char *tool, bool parse, int type, const char *payload, size_t len);

/*
** The worker's CallToolResult text onto CALL, checked again: a plain one
** is checked by one scan and sent on as its bytes (call/rawresult.h);
** one the host must look into (PARSE: an outputSchema to check, a
** resource read's parts) or that is not plain is parsed and checked
** block by block. One with no content array fails the call.
*/
void th_worker_apply_result(th_call *call, const char *tool, bool parse, const char *payload, size_t len);

/*
** An ASK frame's PAYLOAD[0..LEN) ({"key","method","params"}, from the
** worker, not trusted) asked of CALL's client with th_call_ask; returns the
** ANSWER frame's object {"rc":th_rc[,"result":{...}]} (the caller sends
** and puts it), NULL when out of memory. A payload that is not an object
** with string "key" and "method" (no NUL inside; "params" an object, null or absent)
** asks nothing and is answered TH_ERR_VALUE.
*/
json_object *th_worker_answer_ask(th_call *call, const char *payload, size_t len);

/* An UPDATED frame's {"uri"} fanned out as th_resource_updated; anything
 * else in it is ignored. */
void th_worker_apply_updated(const char *payload, size_t len);

#endif
