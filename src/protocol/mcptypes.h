/* SPDX-License-Identifier: MIT */
/*
** protocol/mcptypes.h: the types a th_mcp and its sessions are made of: the
** configuration, and how a session sends. protocol/mcp.h is the API over
** them; protocol/mcpint.h, shared by mcp.c and mcpcall.c, lays them out.
*/
#ifndef TH_PROTOCOL_MCPTYPES_H
#define TH_PROTOCOL_MCPTYPES_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

/* What every connection shares, and one connection (protocol/mcp.h). */
typedef struct th_mcp th_mcp;
typedef struct th_mcp_session th_mcp_session;

typedef struct th_mcp_config {
    const char *server_name;    /* serverInfo.name */
    const char *server_version; /* serverInfo.version */
    const char *instructions;   /* NULL: a default text */
    size_t page_size;           /* tools per tools/list page; 0: all */
    long long list_ttl_ms;      /* ttlMs on cacheable modern results */
    size_t max_threads;         /* tool calls running at once */
    size_t max_result_bytes;    /* a larger tool result becomes isError */
    size_t max_inflight_bytes;  /* request text of tools/call in flight */
    long long queue_timeout_ms; /* longest wait for a thread, then busy; 0: none */
    long long call_timeout_ms;  /* a running call's deadline; 0: none */
    bool inline_calls;          /* th_mcp_session_run_inline may be used (default) */
    long long task_ttl_ms;      /* tasks extension: how long a task is kept */
    size_t max_tasks;           /* ... unfinished tasks per client (principal) */
    struct th_ratelimit *limits; /* tools/call limits (protocol/ratelimit.h), borrowed; NULL: none */
} th_mcp_config;

/*
** How a session sends: MSG is a complete JSON-RPC message whose ownership
** passes to the function. Called from the transport's thread and from tool
** threads, concurrently: it must be thread-safe and keep each message whole.
** It is never called after th_mcp_session_free returns.
*/
typedef void (*th_mcp_send_fn)(void *ctx, json_object *msg);

/*
** How a session may send a message it has made as text (a tool call's
** response): TEXT is LEN bytes of one complete message, no newline,
** borrowed for the call. Same threads and rules as th_mcp_send_fn, with
** the session's CTX. A transport that writes text anyway gives one (call
** it before the first message); without it such a message goes to
** th_mcp_send_fn as an object, which costs two allocations more.
*/
typedef void (*th_mcp_send_text_fn)(void *ctx, const char *text, size_t len);

#endif
