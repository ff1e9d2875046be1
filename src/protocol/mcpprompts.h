/* SPDX-License-Identifier: MIT */
/*
** protocol/mcpprompts.h: the MCP prompt methods (prompts/list,
** prompts/get, protocol/mcpprompts.c) and completion/complete
** (protocol/completion.c) for both eras, over plugin/prompts.h. mcp.c routes the methods here, gives a get the call hooks it
** asks the client with, and sends what comes back.
*/
#ifndef TH_PROTOCOL_MCPPROMPTS_H
#define TH_PROTOCOL_MCPPROMPTS_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "call/callctx.h"
#include "plugin/registry.h"

/* One request of a prompt or completion method, as mcp.c has read it. */
typedef struct th_mcpprompt_req {
    const th_registry *reg;
    const char *method;
    json_object *params;        /* may be NULL */
    bool modern;                /* 2026-07-28: caching hints on lists */
    bool titles;                /* the revision has "title" and "icons" (2025-06-18 on) */
    size_t page_size;           /* 0: everything on one page */
    long long list_ttl_ms;      /* ttlMs of modern lists */
    const th_call_hooks *hooks; /* a get's or complete's call context (NULL: none) */
} th_mcpprompt_req;

/* What to answer: a result (owned), or the error CODE, MESSAGE, DATA (owned, may be NULL). */
typedef struct th_mcpprompt_answer {
    json_object *result;
    int code;
    char message[512];
    json_object *data;
} th_mcpprompt_answer;

/* Serve prompts/list, prompts/get or completion/complete into *A. */
void th_mcpprompt_serve(const th_mcpprompt_req *q, th_mcpprompt_answer *a);

/* completion/complete (protocol/completion.c). */
void th_mcpcomplete_serve(const th_mcpprompt_req *q, th_mcpprompt_answer *a);

/* Shared by the two: set A to the error CODE with a formatted message. */
void th_mcpprompt_fail(th_mcpprompt_answer *a, int code, const char *fmt, ...) TH_PRINTF(3, 4);

/* The first text of a call's result, for an error message; NULL if none. */
const char *th_mcpprompt_first_text(json_object *result);

#endif
