/* SPDX-License-Identifier: MIT */
/*
** base/metrics.h: the host's counters, gauges and histograms, recorded with
** relaxed atomics and no lock or I/O on the call path, and rendered in the
** Prometheus text format for whichever transport serves /metrics.
*/
#ifndef TH_BASE_METRICS_H
#define TH_BASE_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"

/* Set once at start-up, before any thread runs: every recording call is
 * behind a test of it, so a host without --metrics pays one branch. */
extern bool th_metrics_enabled;

/* How a tool call ended; the names are the call log's (call/calllog.h). */
typedef enum th_metrics_outcome {
    TH_METRICS_OK = 0,
    TH_METRICS_ERROR,
    TH_METRICS_CRASH,
    TH_METRICS_TIMEOUT,
    TH_METRICS_CANCELLED,
    TH_METRICS_BUSY,
    TH_METRICS_LIMITED,
    TH_METRICS_NOUTCOMES
} th_metrics_outcome;

/* Worker life events, counted per process. */
typedef enum th_metrics_worker_event {
    TH_METRICS_WORKER_START = 0,
    TH_METRICS_WORKER_CRASH,
    TH_METRICS_WORKER_RESTART,
    TH_METRICS_WORKER_QUARANTINE,
    TH_METRICS_NWORKER_EVENTS
} th_metrics_worker_event;

/* OUTCOME's error.type under the conventions (NULL: none), and its name. */
const char *th_metrics_error_type(th_metrics_outcome outcome);
const char *th_metrics_outcome_name(th_metrics_outcome outcome);

/* A call was admitted: it is in flight until th_metrics_call_end. */
void th_metrics_call_begin(void);

/*
** TOOL's call ended with OUTCOME after ELAPSED_NS (from when its request
** was read). The first TH_METRICS_MAX_TOOLS names get series of their own;
** later ones share the series of the name "_other", so a client cannot grow
** the output without bound.
*/
#define TH_METRICS_MAX_TOOLS 512
void th_metrics_call_end(const char *tool, th_metrics_outcome outcome, long long elapsed_ns);

/*
** A request of METHOD other than tools/call (whose calls th_metrics_call_end
** counts by tool) was answered after ELAPSED_NS: with a result when
** ERROR_CODE is 0, else with that JSON-RPC error. METHOD must live as long
** as the process (a name from the dispatch table): it is kept, not copied.
** The first TH_METRICS_MAX_METHODS names and TH_METRICS_MAX_CODES codes
** of each get series of their own; later codes are counted as "_OTHER".
*/
#define TH_METRICS_MAX_METHODS 32
#define TH_METRICS_MAX_CODES 6
void th_metrics_request_end(const char *method, int error_code, long long elapsed_ns);

/* Spans: dropped because the export queue was full; exported in a POST
 * that the collector took (OK) or that failed. */
void th_metrics_span_dropped(void);
void th_metrics_spans_exported(size_t n, bool ok);

/* A call waited WAIT_NS in the thread pool's queue before it ran. */
void th_metrics_queue_wait(long long wait_ns);

void th_metrics_worker(th_metrics_worker_event ev);

/* An audit log line could not be written (base/audit.h). */
void th_metrics_audit_failure(void);

/* Plugins the last load or reload refused. */
void th_metrics_set_refused(size_t n);

/* Sessions open (HTTP legacy sessions, the stdio client): +1 or -1. */
void th_metrics_sessions_add(int delta);

/*
** Append every metric to OUT in the Prometheus text exposition format
** (version 0.0.4), with RSS_BYTES as the process's resident set (the caller
** reads it: this file does no I/O). False when out of memory.
*/
bool th_metrics_render(th_buf *out, long long rss_bytes);

/* Forget every recorded value and tool name (tests). */
void th_metrics_reset(void);

#endif
