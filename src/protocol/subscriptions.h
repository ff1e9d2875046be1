/* SPDX-License-Identifier: MIT */
/*
** protocol/subscriptions.h: the 2026-07-28 subscriptions/listen streams of one
** session (basic/patterns/subscriptions.mdx): which event kinds exist (a
** table: tools and resources today; prompts append a row), parsing a filter
** into the acknowledged subset, and the notifications an event produces.
** Not thread-safe: the session's lock guards a th_subs.
*/
#ifndef TH_SUBSCRIPTIONS_H
#define TH_SUBSCRIPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

/* What can happen that a client may be told about. Append new kinds at the
 * end, with their row in subscriptions.c. */
typedef enum th_sub_event {
    TH_SUB_TOOLS_LIST_CHANGED,
    TH_SUB_RESOURCES_LIST_CHANGED,
    TH_SUB_RESOURCE_UPDATED, /* per resource: the URI goes along */
    TH_SUB_PROMPTS_LIST_CHANGED,
    TH_SUB_N_EVENTS
} th_sub_event;

/* The notification method of EVENT ("notifications/tools/list_changed"). */
const char *th_subs_method(th_sub_event event);

typedef struct th_subs th_subs;

th_subs *th_subs_new(void);
void th_subs_free(th_subs *subs);

/*
** Open subscription ID (the subscriptions/listen request's id) with FILTER
** (its params.notifications). Returns the acknowledgment to send before
** anything else on it (notifications the server does not support are left
** out of it, as the spec says), or NULL with MSG (a JSON-RPC -32602 or
** -32600 text) when FILTER is malformed or ID is already open.
*/
json_object *th_subs_listen(th_subs *subs, json_object *id, json_object *filter, char *msg, size_t size);

/* The client cancelled the subscription whose id key (th_rpc_id_key) is
 * KEY: forget it, sending nothing more. False when there is none. */
bool th_subs_cancel(th_subs *subs, const char *key);

/* Open subscriptions. */
size_t th_subs_count(const th_subs *subs);

/* Append to OUT (a JSON array) EVENT's notification for every subscription
 * that asked for it; URI is the resource of per-resource events (else NULL). */
void th_subs_event(th_subs *subs, th_sub_event event, const char *uri, json_object *out);

/* The server ends every subscription (shutdown): append each one's
 * graceful-closure response to OUT and forget them. */
void th_subs_close_all(th_subs *subs, json_object *out);

#endif
