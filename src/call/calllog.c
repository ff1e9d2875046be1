/* SPDX-License-Identifier: MIT */
/*
** call/calllog.c: the per-call log line: one at info for every tools/call
** the host answered (or dropped), with its outcome, so an operator can see
** what ran and how long it took without turning on the protocol trace.
*/
#include "config.h"

#include "base/log.h"
#include "base/util.h"
#include "call/calllog.h"

static const char *const outcome_names[] = {
    [TH_OUTCOME_OK] = "ok",           [TH_OUTCOME_ERROR] = "error",         [TH_OUTCOME_CRASH] = "crash",
    [TH_OUTCOME_TIMEOUT] = "timeout", [TH_OUTCOME_CANCELLED] = "cancelled", [TH_OUTCOME_BUSY] = "busy",
    [TH_OUTCOME_LIMITED] = "limited",
};

const char *th_call_outcome_name(th_call_outcome o)
{
    return (unsigned)o < sizeof outcome_names / sizeof outcome_names[0] ? outcome_names[o] : "unknown";
}

void th_call_log_line(const char *tool, json_object *id, long long started_ms, th_call_outcome o)
{
    if (!th_log_enabled(TH_LOG_INFO))
        return;
    json_object *f = json_object_new_object();
    if (!f)
        return;
    /* Four distinct constant keys: neither looked up nor copied. */
    const unsigned opts = JSON_C_OBJECT_ADD_KEY_IS_NEW | JSON_C_OBJECT_KEY_IS_CONSTANT;
    json_object_object_add_ex(f, "tool", json_object_new_string(tool), opts);
    json_object_object_add_ex(f, "id", id ? json_object_get(id) : NULL, opts);
    long long ms = th_now_ms() - started_ms;
    json_object_object_add_ex(f, "duration_ms", json_object_new_int64(ms < 0 ? 0 : ms), opts);
    json_object_object_add_ex(f, "outcome", json_object_new_string(th_call_outcome_name(o)), opts);
    th_log_ex(TH_LOG_INFO, "call", tool, f, "call %s", tool);
    json_object_put(f);
}
