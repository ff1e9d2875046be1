/* SPDX-License-Identifier: MIT */
/*
** protocol/mcpresources.h: the MCP resource methods (resources/list,
** resources/templates/list, resources/read, resources/subscribe and
** unsubscribe) for both eras, the legacy subscriptions they keep per
** session, and the resource events a subscription mechanism can follow.
** mcp.c routes the methods here and sends what comes back.
*/
#ifndef TH_PROTOCOL_MCPRESOURCES_H
#define TH_PROTOCOL_MCPRESOURCES_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "call/callctx.h"
#include "plugin/registry.h"

/* One request of a resource method, as mcp.c has read it. */
typedef struct th_mcpres_req {
    const th_registry *reg;
    const char *method;
    json_object *params;   /* may be NULL */
    bool modern;           /* 2026-07-28: caching hints, SEP-2164 error */
    bool titles;           /* the revision has "title" (2025-06-18 on) */
    size_t page_size;      /* 0: everything on one page */
    long long list_ttl_ms; /* ttlMs of modern lists */
    void *session;         /* the session's identity for subscriptions */
    const th_call_hooks *hooks; /* a read's call context (NULL: none) */
} th_mcpres_req;

/* What to answer: a result (owned), or the error CODE, MESSAGE, DATA (owned, may be NULL). */
typedef struct th_mcpres_answer {
    json_object *result;
    int code;
    char message[512];
    json_object *data;
} th_mcpres_answer;

/* Is METHOD one of the resource methods? LEGACY_ONLY gets whether it exists
 * only before 2026-07-28 (subscribe and unsubscribe). */
bool th_mcpres_is_method(const char *method, bool *legacy_only);

/* Serve Q into *A. */
void th_mcpres_serve(const th_mcpres_req *q, th_mcpres_answer *a);

/* Make *A the error CODE with the formatted message (clipped to fit, as
 * UTF-8) and DATA (taken; may be NULL), dropping any result it held: one
 * wording for every method that answers through a th_mcpres_answer. */
void th_mcpres_fail(th_mcpres_answer *a, int code, json_object *data, const char *fmt, ...) TH_PRINTF(4, 5);

/* Start listening for th_resource_updated() in this process (idempotent). */
void th_mcpres_init(void);

/* SESSION ends: forget its subscriptions. Call before it stops sending. */
void th_mcpres_session_gone(void *session);

/* Did legacy SESSION resources/subscribe to URI (and not unsubscribe)? */
bool th_mcpres_subscribed(const void *session, const char *uri);

/*
** Where a plugin's th_resource_updated(URI) goes: FN(URI, CTX), on the
** thread that raised it (the server's th_mcp_notify, which tells legacy
** subscribers and subscriptions/listen streams alike; list changes come
** from a reload's swap, not from here). FN must not block for long. One
** listener: FN NULL removes the one set with CTX, waiting for an event
** being delivered to it.
*/
void th_mcpres_on_updated(void (*fn)(const char *uri, void *ctx), void *ctx);

#endif
