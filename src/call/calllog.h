/* SPDX-License-Identifier: MIT */
/*
** call/calllog.h: the one log line every tool call ends with (tool, id,
** duration, outcome), the same in both isolation modes and every transport.
*/
#ifndef TH_CALLLOG_H
#define TH_CALLLOG_H

#include <json-c/json.h>

/* How a call ended, as its log line names it. */
typedef enum th_call_outcome {
    TH_OUTCOME_OK = 0,
    TH_OUTCOME_ERROR,     /* an isError result, or no result at all */
    TH_OUTCOME_CRASH,     /* the worker running it died */
    TH_OUTCOME_TIMEOUT,   /* answered at its deadline */
    TH_OUTCOME_CANCELLED, /* the client cancelled it: nothing was sent */
    TH_OUTCOME_BUSY,      /* never ran: no thread became free in time */
    TH_OUTCOME_LIMITED,   /* never ran: a rate or concurrency limit refused it */
} th_call_outcome;

/* "ok", "error", ... */
const char *th_call_outcome_name(th_call_outcome o);

/*
** Log, at info, "call TOOL id=ID duration_ms=D outcome=O" with those as
** fields (ID: the request's id, borrowed; may be NULL). STARTED_MS is when
** the request was read (th_now_ms).
*/
void th_call_log_line(const char *tool, json_object *id, long long started_ms, th_call_outcome o);

#endif
