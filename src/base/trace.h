/* SPDX-License-Identifier: MIT */
/*
** base/trace.h: spans of the MCP requests a host serves, recorded without
** I/O or allocation into a bounded ring that an exporter (transport/otlp.c)
** drains on a thread of its own; a full ring drops the span and counts it.
*/
#ifndef TH_BASE_TRACE_H
#define TH_BASE_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Set once at start-up, before any thread runs (th_trace_open): a host
 * without --otlp-endpoint pays one branch per request. */
extern bool th_trace_enabled;

/* One server span, fixed-size, held by its request and copied into the
 * ring when it ends: nothing is formatted until the exporter does it.
 * Pointers are to static strings; the rest are copies cut to their room
 * (at a UTF-8 character's start). */
typedef struct th_span {
    uint8_t trace_id[16], span_id[8], parent_id[8];
    bool has_parent;
    bool int_id;                /* jsonrpc.request.id is INT_ID_VALUE, not REQUEST_ID */
    long long start_ns, end_ns; /* th_now_ns (monotonic): the exporter dates them */
    const char *method;         /* mcp.method.name */
    const char *target_key;     /* gen_ai.tool.name, gen_ai.prompt.name, mcp.resource.uri or NULL */
    const char *operation;      /* gen_ai.operation.name, or NULL */
    const char *version;        /* mcp.protocol.version, NULL unknown */
    const char *transport;      /* network.transport: "pipe", "tcp" or "unix" */
    int64_t int_id_value;
    char request_id[72];        /* jsonrpc.request.id, "" none */
    char target[160];
    char session_id[72];        /* mcp.session.id, "" none */
    char error_type[24];        /* error.type, "" none: the status is then unset */
    char status[128];           /* the status message of an error */
} th_span;

/* Turn tracing on with a ring of at least CAPACITY spans. Before any
 * thread runs. */
bool th_trace_open(size_t capacity);

/* Start SP, a span of METHOD (a static name) that began at NOW_NS
 * (th_now_ns), in a new trace. False when the ring is full: the span is
 * counted dropped, and the caller records nothing. */
bool th_span_begin(th_span *sp, const char *method, long long now_ns);
/* Continue the trace of a W3C traceparent; a malformed one is ignored. */
void th_span_set_parent(th_span *sp, const char *traceparent);
void th_span_set_target(th_span *sp, const char *key, const char *target);
void th_span_set_text(char *field, size_t size, const char *text);
/* The request failed: ERROR_TYPE (a JSON-RPC code, "tool_error", ...). */
void th_span_fail(th_span *sp, const char *error_type, const char *message);
/* End SP at NOW_NS and copy it into the ring for export, or count it
 * dropped. NULL is fine. */
void th_span_end(th_span *sp, long long now_ns);
#define TH_SPAN_SET(sp, field, text) th_span_set_text((sp)->field, sizeof (sp)->field, (text))

/* ---- the exporter's side --------------------------------------------- */
/* Copy up to MAX ended spans to OUT; wait up to WAIT_MS (or until MAX have
 * ended, or th_trace_close) when fewer have. Returns how many. */
size_t th_trace_drain(th_span *out, size_t max, long long wait_ms);
/* Wake the exporter for its last drain; spans ended after this drop. */
void th_trace_close(void);
bool th_trace_closed(void);

#endif
