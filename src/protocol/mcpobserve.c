/* SPDX-License-Identifier: MIT */
/*
** protocol/mcpobserve.c: one request as --metrics and --otlp-endpoint see
** it: begun when it is read, carried to the thread that answers it, ended
** by its response (th_mcpi_send_msg) or, for tools/call, by its call's end.
*/
#include "config.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "plugin/policy.h"
#include "protocol/mcpint.h"
#include "protocol/mcpobserve.h"

struct th_reqobs {
    const char *method;
    long long start_ns; /* th_now_ns, read once for the metrics and the span */
    th_span *span;      /* &SPAN_HERE, or NULL: untraced, or dropped */
    th_span span_here;  /* allocated only with --otlp-endpoint */
};

_Thread_local th_reqobs *th_reqobs_current;

/* The params member that names a method's target, its attribute, and the
 * gen_ai.operation.name of the method, if any. */
static const struct {
    const char *method, *member, *key, *operation;
} targets[] = {
    {"tools/call", "name", "gen_ai.tool.name", "execute_tool"},
    {"prompts/get", "name", "gen_ai.prompt.name", NULL},
    {"resources/read", "uri", "mcp.resource.uri", NULL},
    {"resources/subscribe", "uri", "mcp.resource.uri", NULL},
    {"resources/unsubscribe", "uri", "mcp.resource.uri", NULL},
};

static const char *param_string(json_object *params, const char *name)
{
    json_object *v;
    return params && json_object_object_get_ex(params, name, &v) ? th_mcpi_plain_string(v) : NULL;
}

static void set_target(th_span *sp, const th_rpc_msg *msg)
{
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
        if (strcmp(targets[i].method, msg->method) != 0)
            continue;
        /* A plain tools/call was parsed without its params (jsonrpc.h). */
        const char *t = msg->call_lite ? (msg->call_has_name ? msg->call_name : NULL)
                                       : param_string(msg->params, targets[i].member);
        th_span_set_target(sp, targets[i].key, t);
        sp->operation = targets[i].operation;
        return;
    }
}

/* SP's attributes from R's message: nothing is formatted here but a
 * string id's copy (the exporter writes the rest). */
static void describe(th_span *sp, const request *r)
{
    json_object *meta = NULL;
    if (r->msg->call_lite)
        meta = r->msg->call_meta;
    else if (r->msg->params)
        json_object_object_get_ex(r->msg->params, "_meta", &meta);
    th_span_set_parent(sp, param_string(meta, "traceparent"));
    set_target(sp, r->msg);
    if (json_object_is_type(r->msg->id, json_type_int)) {
        sp->int_id = true;
        sp->int_id_value = json_object_get_int64(r->msg->id);
    } else if (r->msg->id) {
        TH_SPAN_SET(sp, request_id, json_object_get_string(r->msg->id));
    }
    if (r->s->trace_transport)
        sp->transport = r->s->trace_transport;
}

void th_reqobs_begin(const request *r, const char *method)
{
    if (!th_metrics_enabled && !th_trace_enabled)
        return;
    /* Without a span the request needs only what precedes it. */
    th_reqobs *o = malloc(th_trace_enabled ? sizeof *o : offsetof(th_reqobs, span_here));
    if (!o)
        return;
    o->method = method;
    o->start_ns = th_now_ns();
    o->span = NULL;
    if (th_trace_enabled && th_span_begin(&o->span_here, method, o->start_ns)) {
        o->span = &o->span_here;
        describe(o->span, r);
    }
    th_reqobs_current = o;
}

void th_reqobs_era(const request *r, int version)
{
    th_span *sp = th_reqobs_current ? th_reqobs_current->span : NULL;
    if (!sp)
        return;
    if (version >= 0 && version < N_VERSIONS)
        sp->version = th_mcpi_versions[version];
    /* A 2026-07-28 request belongs to no session, whatever carried it. */
    if (!r->modern && r->s->trace_session)
        TH_SPAN_SET(sp, session_id, r->s->trace_session);
}

long long th_reqobs_start_ns(void)
{
    const th_reqobs *o = th_reqobs_current;
    return o ? o->start_ns : th_now_ns();
}

th_reqobs *th_reqobs_take(void)
{
    th_reqobs *o = th_reqobs_current;
    th_reqobs_current = NULL;
    return o;
}

void th_reqobs_resume(th_reqobs *o)
{
    if (o)
        th_reqobs_current = o;
}

static void finish(th_reqobs *o, int code, const char *message, bool is_error)
{
    long long now = th_now_ns(); /* the histogram's and the span's end */
    if (th_metrics_enabled)
        th_metrics_request_end(o->method, code, now - o->start_ns);
    if (o->span && code) {
        char type[16];
        snprintf(type, sizeof type, "%d", code);
        th_span_fail(o->span, type, message);
    } else if (is_error) {
        th_span_fail(o->span, "tool_error", "the result has isError: true");
    }
    th_span_end(o->span, now);
    free(o);
}

void th_reqobs_answered(json_object *msg)
{
    json_object *err, *v;
    if (!th_reqobs_current || !json_object_is_type(msg, json_type_object) ||
        !json_object_object_get_ex(msg, "id", NULL))
        return;
    if (json_object_object_get_ex(msg, "error", &err)) {
        int code = json_object_object_get_ex(err, "code", &v) ? json_object_get_int(v) : 0;
        finish(th_reqobs_take(), code ? code : TH_RPC_INTERNAL_ERROR, param_string(err, "message"), false);
    } else if (json_object_object_get_ex(msg, "result", &v)) {
        json_object *e;
        bool is_error = json_object_object_get_ex(v, "isError", &e) && json_object_get_boolean(e);
        finish(th_reqobs_take(), 0, NULL, is_error);
    }
}

void th_reqobs_end_current(void)
{
    th_reqobs *o = th_reqobs_take();
    if (!o)
        return;
    th_span_fail(o->span, "cancelled", "no response was sent");
    th_span_end(o->span, o->span ? th_now_ns() : 0);
    free(o);
}

void th_reqobs_call_end(th_reqobs *o, th_metrics_outcome outcome, long long now_ns)
{
    if (!o)
        return;
    const char *type = th_metrics_error_type(outcome);
    if (type)
        th_span_fail(o->span, type, th_metrics_outcome_name(outcome));
    th_span_end(o->span, now_ns);
    free(o);
}
