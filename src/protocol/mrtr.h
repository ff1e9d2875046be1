/* SPDX-License-Identifier: MIT */
/*
** protocol/mrtr.h: the multi round-trip requests of 2026-07-28
** (basic/patterns/mrtr.mdx) for one tools/call: the answers a retry brought
** (inputResponses, plus those of earlier rounds from requestState), the
** questions a handler's run recorded, and the HMAC-SHA256 requestState that
** carries them to the next round through the client.
*/
#ifndef TH_MRTR_H
#define TH_MRTR_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "base/util.h"

/* How long a requestState is accepted after it was issued. */
#define TH_MRTR_STATE_TTL_MS (10LL * 60 * 1000)

/*
** Sign requestState with the contents of PATH (at least 32 bytes; trailing
** newlines are part of nothing), so that every instance given the same file
** accepts the others' state. Without a call, a random key is made per
** process on first use. Returns TH_OK, or TH_ERR_IO / TH_ERR_VALUE with ERR
** naming the file and the rule.
*/
th_rc th_mrtr_key_file(const char *path, th_err *err);

/* Issue states valid for MS from now (default TH_MRTR_STATE_TTL_MS); for
 * tests, which cannot wait ten minutes for an expiry. */
void th_mrtr_set_ttl_ms(long long ms);

typedef struct th_mrtr th_mrtr;

/*
** The round state of one modern tools/call of TOOL with ARGS (a reference
** is kept: digested only when a state is checked or issued, so nobody may
** change ARGS meanwhile), from PARAMS (the request's params:
** inputResponses, requestState), made by PRINCIPAL (who the transport
** authenticated, e.g. the Authorization header; NULL: nobody; copied). NULL when they are
** refused: MSG (MSGSIZE bytes) then says why, for a -32602 error:
** inputResponses not an object of objects, requestState not a string, or
** a requestState that fails its integrity check, has expired, or was
** issued for another tool, other arguments or another principal.
*/
th_mrtr *th_mrtr_begin(const char *tool, json_object *args, const char *principal, json_object *params, char *msg,
                       size_t msgsize);

/*
** A handler's question KEY (METHOD, PARAMS taken): TH_OK with the answer
** (a new reference) when the retry brought one, else TH_ERR_INPUT_REQUIRED
** and the question is recorded. TH_ERR_VALUE for a key already asked in
** this run. One thread at a time.
*/
th_rc th_mrtr_ask(th_mrtr *m, const char *key, const char *method, json_object *params, json_object **result);

/* True when the run recorded a question: the call's answer is then
 * th_mrtr_result(), not the handler's result. */
bool th_mrtr_pending(const th_mrtr *m);

/* The InputRequiredResult: resultType, inputRequests, and a requestState
 * carrying the answers used so far. NULL when out of memory. */
json_object *th_mrtr_result(th_mrtr *m);

/* Every answer the request brought, this round's and earlier rounds'
 * (key -> result; borrowed, valid until th_mrtr_free): for a call that
 * goes on as a task (protocol/tasks.c). NULL when out of memory. */
json_object *th_mrtr_answers(th_mrtr *m);

void th_mrtr_free(th_mrtr *m);

#endif
