/* SPDX-License-Identifier: MIT */
/*
** protocol/callgate.c: what a tools/call passes on its way in and leaves on
** its way out: the rate and concurrency limits (protocol/ratelimit.h), and
** its audit line (base/audit.h). mcpcall.c calls in at those two points.
*/
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/audit.h"
#include "base/canonjson.h"
#include "base/jsontree.h"
#include "base/metrics.h"
#include "base/sha256.h"
#include "call/calllog.h"
#include "protocol/mcp.h"
#include "protocol/mcpint.h"

/* Who a session's calls are made by, as the audit log and the per-principal
 * buckets name them (WHO: th_mcp_session_set_who's, or NULL). */
static const char *named(const char *who)
{
    return who ? who : "anonymous";
}

static const char *who(const th_mcp_session *s)
{
    return named(s->who);
}

/* The audit log's word for a call that ran (or was meant to). */
static const char *audit_outcome(th_call_outcome o)
{
    static const char *const names[] = {
        [TH_OUTCOME_OK] = "ok",           [TH_OUTCOME_ERROR] = "tool_error",    [TH_OUTCOME_CRASH] = "crash",
        [TH_OUTCOME_TIMEOUT] = "timeout", [TH_OUTCOME_CANCELLED] = "cancelled", [TH_OUTCOME_BUSY] = "error",
        [TH_OUTCOME_LIMITED] = "rate_limited",
    };
    return (unsigned)o < sizeof names / sizeof names[0] ? names[o] : "error";
}

static void audit(const char *principal, const char *tool, const char *outcome, int code, long long ms,
                  const char *sha)
{
    th_audit_record rec = {.principal = principal,
                           .tool = tool,
                           .outcome = outcome,
                           .code = code,
                           .duration_ms = ms,
                           .args_sha256 = sha && sha[0] ? sha : NULL};
    th_audit_write(&rec);
}

/* ARGS' canonical hash into SHA ("" when it cannot be made): only with an
 * audit log, where it stands for the values that are never written. */
static void hash_args(json_object *args, char *sha)
{
    sha[0] = '\0';
    if (!th_audit_on())
        return;
    json_object *empty = NULL;
    if (!json_object_is_type(args, json_type_object))
        args = empty = json_object_new_object();
    char *text = args ? th_json_canonical(args) : NULL;
    if (text)
        th_sha256_digest(text, strlen(text), sha);
    free(text);
    json_object_put(empty);
}

static void refuse(request *r, const th_entry *e, th_limit_verdict v, long long retry_ms, const char *sha)
{
    json_object *data = json_object_new_object();
    if (data) {
        json_object_object_add(data, "retryAfterMs", json_object_new_int64(retry_ms));
        json_object_object_add(data, "limit", json_object_new_string(v == TH_LIMIT_RATE_HIT ? "rate" : "concurrency"));
    }
    char m[256];
    snprintf(m, sizeof m, "Too many requests: tool '%.120s' is over its %s limit; retry in %lld ms", e->name,
             v == TH_LIMIT_RATE_HIT ? "rate" : "concurrency", retry_ms);
    th_mcpi_send_error(r->s, r->msg->id, TH_RPC_RATE_LIMITED, m, data);
    th_call_log_line(e->name, r->msg->id, th_now_ms(), TH_OUTCOME_LIMITED);
    if (th_metrics_enabled) {
        th_metrics_call_begin(); /* call_end counts one out of flight */
        th_metrics_call_end(e->name, TH_METRICS_LIMITED, 0);
    }
    audit(who(r->s), e->name, v == TH_LIMIT_RATE_HIT ? "rate_limited" : "concurrency_limited", TH_RPC_RATE_LIMITED, 0,
          sha);
}

bool th_mcpi_gate_admit(request *r, const th_entry *e, json_object *args, th_gate *g)
{
    memset(g, 0, sizeof *g);
    hash_args(args, g->args_sha256);
    long long retry_ms;
    th_limit_verdict v =
        th_ratelimit_admit(r->s->mcp->cfg.limits, e->name, who(r->s), th_now_ns(), &g->hold, &retry_ms);
    if (v == TH_LIMIT_PASS)
        return true;
    refuse(r, e, v, retry_ms, g->args_sha256);
    return false;
}

/* The tool name R asked for, cut to what a log line needs, into BUF. */
static const char *asked_name(const request *r, char *buf, size_t size)
{
    json_object *name = NULL;
    const char *s = r->msg->call_lite ? (r->msg->call_has_name ? r->msg->call_name : "")
                    : r->msg->params && th_json_get(r->msg->params, "name", &name) ? json_object_get_string(name)
                                                                                     : "";
    snprintf(buf, size, "%s", s ? s : "");
    th_utf8_clip(buf); /* a name cut mid-character */
    return buf;
}

void th_mcpi_gate_refused(request *r, const th_entry *e)
{
    if (!th_audit_on())
        return;
    char buf[201];
    audit(who(r->s), e ? e->name : asked_name(r, buf, sizeof buf), "error", TH_RPC_INVALID_PARAMS, 0, NULL);
}

void th_mcpi_gate_drop(th_gate *g)
{
    th_ratelimit_release(&g->hold);
}

void th_mcpi_gate_over(job *j, th_call_outcome o, int code)
{
    th_ratelimit_release(&j->gate.hold);
    if (th_audit_on())
        audit(who(j->s), j->entry ? j->entry->name : "", code ? "error" : audit_outcome(o), code,
              th_now_ms() - j->started_ms, j->gate.args_sha256);
}

void th_mcpi_gate_task_over(const char *principal, const th_entry *e, th_call_outcome o, long long ms,
                            json_object *args)
{
    if (!th_audit_on())
        return;
    char sha[TH_SHA256_DIGEST_LEN + 1];
    hash_args(args, sha);
    audit(named(principal), e->name, audit_outcome(o), 0, ms, sha);
}
