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
