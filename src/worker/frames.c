/* SPDX-License-Identifier: MIT */
/*
** worker/frames.c: a worker's frames for a call, applied to the host's call.
** Owns the parsing of PROGRESS, LOG, RESULT, FAILED, ASK and UPDATED
** payloads, which come from a process the host does not trust.
*/
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base/log.h"
#include "call/callctx.h"
#include "call/rawresult.h"
#include "worker/frames.h"
#include "worker/ipc.h"

static void apply_progress(th_call *call, const char *payload, size_t len)
{
    th_err err;
    json_object *o = th_ipc_parse(payload, len, &err), *v;
    if (!o || !json_object_is_type(o, json_type_object))
        goto done;
    double progress = json_object_object_get_ex(o, "progress", &v) ? json_object_get_double(v) : 0;
    double total = json_object_object_get_ex(o, "total", &v) ? json_object_get_double(v) : -1;
    const char *msg = json_object_object_get_ex(o, "message", &v) && json_object_is_type(v, json_type_string)
                          ? json_object_get_string(v)
                          : NULL;
    th_call_progress(call, progress, total, msg);
done:
    json_object_put(o);
}

static void apply_log(th_call *call, const char *payload, size_t len)
{
    th_err err;
    json_object *o = th_ipc_parse(payload, len, &err), *v;
    int level = TH_LOG_INFO;
    if (!o || !json_object_is_type(o, json_type_object))
        goto done;
    if (json_object_object_get_ex(o, "level", &v))
        level = th_log_level_parse(json_object_get_string(v));
    if (level >= 0 && json_object_object_get_ex(o, "data", &v) && json_object_is_type(v, json_type_string))
        th_call_log(call, (th_log_level)level, "%s", json_object_get_string(v));
done:
    json_object_put(o);
}

void th_worker_apply_result(th_call *call, const char *tool, bool parse, const char *payload, size_t len)
{
    json_object *raw = parse ? NULL : th_raw_result_new(payload, len);
    if (raw) {
        th_call_set_raw(call, raw);
        return;
    }
    th_err err;
    json_object *r = len ? th_ipc_parse(payload, len, &err) : NULL, *content, *v;
    if (!r || !json_object_is_type(r, json_type_object) || !json_object_object_get_ex(r, "content", &content) ||
        !json_object_is_type(content, json_type_array)) {
        th_call_fail(call, "tool '%s' failed: its worker sent no valid result", tool);
        json_object_put(r);
        return;
    }
    for (size_t i = 0; i < json_object_array_length(content); i++)
        if (th_call_content(call, json_object_get(json_object_array_get_idx(content, i))) != TH_OK)
            break;
    if (json_object_object_get_ex(r, "structuredContent", &v))
        th_call_structured(call, json_object_get(v));
    if (json_object_object_get_ex(r, "isError", &v) && json_object_get_boolean(v))
        th_call_mark_error(call);
    json_object_put(r);
}

void th_worker_apply_updated(const char *payload, size_t len)
{
    th_err err;
    json_object *o = th_ipc_parse(payload, len, &err), *u;
    if (o && json_object_object_get_ex(o, "uri", &u) && json_object_is_type(u, json_type_string))
        th_resource_updated(json_object_get_string(u)); /* refuses a URI that is not absolute */
    json_object_put(o);
}

/* Is V a string that a C string holds whole? Not a number (json-c would
 * print 5 as "5", a valid key), nor one with a NUL inside ("a\u0000b"
 * would be asked as "a"). */
static bool c_string(json_object *v)
{
    return json_object_is_type(v, json_type_string) &&
           strlen(json_object_get_string(v)) == (size_t)json_object_get_string_len(v);
}

json_object *th_worker_answer_ask(th_call *call, const char *payload, size_t len)
{
    th_err err;
    json_object *o = th_ipc_parse(payload, len, &err), *key, *method, *params = NULL, *result = NULL;
    th_rc rc = TH_ERR_VALUE;
    if (o && json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, "key", &key) &&
        c_string(key) && json_object_object_get_ex(o, "method", &method) && c_string(method)) {
        json_object_object_get_ex(o, "params", &params); /* th_call_ask refuses one that is no object */
        rc = th_call_ask(call, json_object_get_string(key), json_object_get_string(method),
                         json_object_get(params), &result);
    }
    json_object_put(o);
    json_object *a = json_object_new_object(), *n = json_object_new_int((int)rc);
    if (!a || !n || json_object_object_add(a, "rc", n) != 0) {
        json_object_put(a);
        json_object_put(n);
        json_object_put(result);
        return NULL;
    }
    if (result && json_object_object_add(a, "result", result) != 0) {
        json_object_put(result);
        json_object_put(a);
        return NULL;
    }
    return a;
}

static void apply_ok(th_call *call, const char *tool, bool parse, const char *payload, size_t len)
{
    th_worker_apply_result(call, tool, parse, payload, len);
}

/* A failure's text is reworded by the host: parsed, not passed on raw. */
static void apply_failed(th_call *call, const char *tool, bool parse, const char *payload, size_t len)
{
    (void)parse;
    th_worker_apply_result(call, tool, true, payload, len);
    th_call_mark_failed(call);
}

static void apply_progress_frame(th_call *call, const char *tool, bool parse, const char *payload, size_t len)
{
    (void)tool;
    (void)parse;
    apply_progress(call, payload, len);
}

static void apply_log_frame(th_call *call, const char *tool, bool parse, const char *payload, size_t len)
{
    (void)tool;
    (void)parse;
    apply_log(call, payload, len);
}

/* The frames a call in flight takes, and whether each is its last. */
static const struct {
    int type;
    void (*apply)(th_call *call, const char *tool, bool parse, const char *payload, size_t len);
    bool final;
} frame_kinds[] = {
    {TH_IPC_PROGRESS, apply_progress_frame, false},
    {TH_IPC_LOG, apply_log_frame, false},
    {TH_IPC_RESULT, apply_ok, true},
    {TH_IPC_FAILED, apply_failed, true},
};

bool th_worker_apply_frame(th_call *call, const char *tool, bool parse, int type, const char *payload, size_t len)
{
    for (size_t i = 0; i < sizeof frame_kinds / sizeof frame_kinds[0]; i++)
        if (frame_kinds[i].type == type) {
            frame_kinds[i].apply(call, tool, parse, payload, len);
            return frame_kinds[i].final;
        }
    return false;
}
