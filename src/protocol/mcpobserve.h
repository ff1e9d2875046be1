/* SPDX-License-Identifier: MIT */
/*
** protocol/mcpobserve.h: what --metrics and --otlp-endpoint see of one MCP
** request, from when it is read until its response is sent: its duration
** by method and outcome, and its server span (base/trace.h).
*/
#ifndef TH_PROTOCOL_MCPOBSERVE_H
#define TH_PROTOCOL_MCPOBSERVE_H

#include <stdbool.h>

#include <json-c/json.h>

#include "base/metrics.h"
#include "base/trace.h"

struct request;
typedef struct th_reqobs th_reqobs;

/* The request the calling thread serves, while a response would be its. */
extern _Thread_local th_reqobs *th_reqobs_current;

/* R, a request of METHOD (a name from the dispatch table), was read: it
 * becomes the thread's current request. Nothing when neither is on. */
void th_reqobs_begin(const struct request *r, const char *method);
/* R's era is known: its protocol VERSION (an index into th_mcpi_versions,
 * -1: not negotiated yet) and session, as the span says. */
void th_reqobs_era(const struct request *r, int version);
/* When the calling thread's current request began (th_now_ns), or, when
 * there is none (neither is on), a clock read now. */
long long th_reqobs_start_ns(void);
/* The current request, taken along to the thread that will answer it. */
th_reqobs *th_reqobs_take(void);
/* O (or nothing, when NULL) becomes this thread's current request again. */
void th_reqobs_resume(th_reqobs *o);
/* MSG is going out: when it is the current request's response, that
 * request is over. */
void th_reqobs_answered(json_object *msg);
/* The current request ends without a response (cancelled, or the
 * response was sent by another thread). */
void th_reqobs_end_current(void);
/* O's tools/call ended with OUTCOME at NOW_NS (th_now_ns, the clock read
 * its th_metrics_call_end took): its duration is counted by tool, so only
 * its span ends here. */
void th_reqobs_call_end(th_reqobs *o, th_metrics_outcome outcome, long long now_ns);

#endif
