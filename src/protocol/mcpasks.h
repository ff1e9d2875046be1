/* SPDX-License-Identifier: MIT */
/*
** protocol/mcpasks.h: requests a legacy session sends its client on a
** handler's behalf (elicitation/create, sampling/createMessage, roots/list)
** and the responses routed back to the handler waiting for them: the
** session's side of th_call_ask (call/ask.h).
*/
#ifndef TH_PROTOCOL_MCPASKS_H
#define TH_PROTOCOL_MCPASKS_H

#include <stdbool.h>

#include <json-c/json.h>

#include "toolhost/plugin.h"

typedef struct th_asks th_asks;

th_asks *th_asks_new(void);

/* Wake every waiter (TH_ERR_IO) and refuse new requests: the session ends. */
void th_asks_close(th_asks *a);

/* Free A; no thread may be waiting in it (close first, and wait for them). */
void th_asks_free(th_asks *a);

/*
** Send the request METHOD/PARAMS (taken) with a fresh id through
** SEND(CTX, message), and wait for its response. The id names ORIGIN, the
** key of the tools/call it serves, so that a transport can send it on that
** call's stream (th_asks_origin). STOP(STOP_CTX) is polled while waiting
** (cancellation, deadline): true ends the wait with TH_ERR_CANCELLED.
** TH_OK with *RESULT (a new reference), or TH_ERR_IO when the client
** answered with an error (its message logged) or the session closed.
*/
th_rc th_asks_request(th_asks *a, void (*send)(void *ctx, json_object *msg), void *ctx, const char *origin,
                      const char *method, json_object *params, bool (*stop)(void *stop_ctx), void *stop_ctx,
                      json_object **result);

/* A response from the client: true when a waiter took it. MSG borrowed. */
bool th_asks_deliver(th_asks *a, json_object *msg);

/* The key of the tools/call an outgoing request of ours serves (malloc'd),
 * or NULL when MSG is not one. For transports routing it to a stream. */
char *th_asks_origin(json_object *msg);

#endif
