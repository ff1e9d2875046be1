/* SPDX-License-Identifier: MIT */
/*
** base/trace.h: spans of the MCP requests a host serves, recorded without
** I/O into a bounded queue that an exporter (transport/otlp.c) drains on a
** thread of its own; a full queue drops the span and counts it.
*/
#ifndef TH_BASE_TRACE_H
#define TH_BASE_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Set once at start-up, before any thread runs (th_trace_open): a host
 * without --otlp-endpoint pays one branch per request. */
extern bool th_trace_enabled;

/* One server span, fixed-size: one allocation per request. Strings are cut
 * to their room (at a UTF-8 character's start). */
typedef struct th_span {
    uint8_t trace_id[16], span_id[8], parent_id[8];
    bool has_parent;
    long long start_ns, end_ns; /* since the Unix epoch */
    char method[40];            /* mcp.method.name */
    const char *target_key;     /* gen_ai.tool.name, gen_ai.prompt.name, mcp.resource.uri or NULL */
    char target[160];
    const char *operation;      /* gen_ai.operation.name, or NULL */
    char request_id[72];        /* jsonrpc.request.id */
    char version[16];           /* mcp.protocol.version, "" unknown */
    const char *transport;      /* network.transport: "pipe", "tcp" or "unix" */
    char session_id[72];        /* mcp.session.id, "" none */
    char error_type[24];        /* error.type, "" none: the status is then unset */
    char status[128];           /* the status message of an error */
} th_span;

/* Turn tracing on with a queue of CAPACITY spans. Before any thread runs. */
bool th_trace_open(size_t capacity);

/* A span of METHOD starting now, in a new trace (malloc'd); NULL when the
 * queue is full (the span is counted dropped) or memory is short, and then
 * every call below takes NULL and does nothing. */
th_span *th_span_begin(const char *method);
/* Continue the trace of a W3C traceparent; a malformed one is ignored. */
void th_span_set_parent(th_span *sp, const char *traceparent);
void th_span_set_target(th_span *sp, const char *key, const char *target);
void th_span_set_text(char *field, size_t size, const char *text);
/* The request failed: ERROR_TYPE (a JSON-RPC code, "tool_error", ...). */
void th_span_fail(th_span *sp, const char *error_type, const char *message);
/* End SP now and queue it for export (the exporter frees it), or count it
 * dropped and free it. */
void th_span_end(th_span *sp);
#define TH_SPAN_SET(sp, field, text) th_span_set_text((sp)->field, sizeof (sp)->field, (text))

/* ---- the exporter's side --------------------------------------------- */
/* Move up to MAX queued spans to OUT, the caller's to free; wait up to
 * WAIT_MS (or until MAX are queued, or th_trace_close) when fewer are.
 * Returns how many. */
size_t th_trace_drain(th_span **out, size_t max, long long wait_ms);
/* Wake the exporter for its last drain; spans ended after this drop. */
void th_trace_close(void);
bool th_trace_closed(void);

#endif
