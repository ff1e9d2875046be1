/* SPDX-License-Identifier: MIT */
/*
** testing/session.c: one request of a test (toolhost/testing.h) as a client
** makes it: a protocol session of its own over the host's registry, the
** handshake (or, from 2026-07-28, the same said in the request's _meta), the
** request, and the messages that come back until its answer:
** log lines, progress, requests to the client (answered from the script),
** cancellation when the test asked for it.
*/
#define _GNU_SOURCE
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "testing/kit.h"

/* The legacy era by default: the one whose client requests (elicitation,
 * sampling, roots) arrive while the call runs, as a handler's th_call_ask
 * sends them. */
#define KIT_VERSION "2025-11-25"
/* The first revision without a handshake; revision names are dates, so
 * later ones compare greater as strings. */
#define KIT_STATELESS_FROM "2026-07-28"
#define KIT_META "io.modelcontextprotocol/"
#define KIT_ID 1
#define KIT_WAIT_MS 60000
/* After a cancellation, how often the kit looks whether the call is done. */
#define KIT_POLL_MS 20

/* The messages the session sent, in order, from any thread. */
typedef struct inbox {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    json_object **v;
    size_t head, n, cap;
} inbox;

/* A response may come as an object that only serialises to the message
 * (made as text once, for the transports): it is read back as JSON. */
static void on_send(void *ctx, json_object *sent)
{
    inbox *q = ctx;
    json_object *msg = json_tokener_parse(json_object_to_json_string_ext(sent, JSON_C_TO_STRING_PLAIN));
    json_object_put(sent);
    if (!msg)
        return;
    pthread_mutex_lock(&q->lock);
    if (q->n == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 16;
        json_object **grown = realloc(q->v, cap * sizeof *grown);
        if (!grown) {
            pthread_mutex_unlock(&q->lock);
            json_object_put(msg);
            return;
        }
        q->v = grown;
        q->cap = cap;
    }
    q->v[q->n++] = msg;
    pthread_cond_broadcast(&q->cond);
    pthread_mutex_unlock(&q->lock);
}

/* The next message, or NULL once UNTIL_MS has passed. */
static json_object *next(inbox *q, long long until_ms)
{
    json_object *m = NULL;
    pthread_mutex_lock(&q->lock);
    while (q->head == q->n && th_cond_wait_until(&q->cond, &q->lock, until_ms))
        ;
    if (q->head < q->n)
        m = q->v[q->head++];
    pthread_mutex_unlock(&q->lock);
    return m;
}

static void send_obj(th_mcp_session *s, json_object *msg)
{
    const char *text = json_object_to_json_string_ext(msg, JSON_C_TO_STRING_PLAIN);
    th_mcp_session_handle(s, text, strlen(text));
    json_object_put(msg);
}

static json_object *rpc(const char *method, json_object *params, json_object *id)
{
    json_object *m = json_object_new_object();
    json_object_object_add(m, "jsonrpc", json_object_new_string("2.0"));
    if (id)
        json_object_object_add(m, "id", id);
    json_object_object_add(m, "method", json_object_new_string(method));
    if (params)
        json_object_object_add(m, "params", params);
    return m;
}

/* Everything one request needs while it runs. */
typedef struct run {
    th_mcp_session *s;
    inbox q;
    const th_test_call_opts *opts;
    bool *used; /* which scripted answers were given */
    bool cancelled;
    th_test_result *out;
} run;

static void cancel(run *r)
{
    if (r->cancelled)
        return;
    r->cancelled = true;
    json_object *p = json_object_new_object();
    json_object_object_add(p, "requestId", json_object_new_int(KIT_ID));
    json_object_object_add(p, "reason", json_object_new_string("cancelled by the test"));
    send_obj(r->s, rpc("notifications/cancelled", p, NULL));
}

/* A request of the session to its client: answered from the script, the
 * first unused answer for its method, else refused. */
static void answer(run *r, json_object *msg, const char *method)
{
    json_object *params = NULL, *reply = json_object_new_object(), *asked = json_object_new_object();
    json_object_object_get_ex(msg, "params", &params);
    json_object_object_add(asked, "method", json_object_new_string(method));
    json_object_object_add(asked, "params", json_object_get(params));
    json_object_array_add(r->out->asked, asked);

    json_object *id = NULL;
    json_object_object_get_ex(msg, "id", &id);
    json_object_object_add(reply, "jsonrpc", json_object_new_string("2.0"));
    json_object_object_add(reply, "id", json_object_get(id));
    const th_test_answer *a = NULL;
    for (size_t i = 0; !a && r->opts && i < r->opts->nanswers; i++)
        if (!r->used[i] && strcmp(r->opts->answers[i].method, method) == 0) {
            r->used[i] = true;
            a = &r->opts->answers[i];
        }
    json_object *result = a && !a->error_message && a->result_json ? json_tokener_parse(a->result_json) : NULL;
    if (result) {
        json_object_object_add(reply, "result", result);
    } else {
        json_object *e = json_object_new_object();
        json_object_object_add(e, "code", json_object_new_int(-32603));
        json_object_object_add(e, "message", json_object_new_string(a && a->error_message ? a->error_message
                                                                    : a ? "scripted result is not JSON"
                                                                        : "no scripted answer for this request"));
        json_object_object_add(reply, "error", e);
    }
    send_obj(r->s, reply);
}

static void take_response(run *r, json_object *msg)
{
    th_test_result *out = r->out;
    json_object *v;
    if (json_object_object_get_ex(msg, "result", &v)) {
        out->status = TH_TEST_RESULT;
        out->result = json_object_get(v);
        out->result_json = strdup(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
        json_object *e;
        out->is_error = json_object_object_get_ex(v, "isError", &e) && json_object_get_boolean(e);
    } else if (json_object_object_get_ex(msg, "error", &v)) {
        out->status = TH_TEST_REFUSED;
        out->error = json_object_get(v);
        json_object *m;
        out->error_text = strdup(json_object_object_get_ex(v, "message", &m) ? json_object_get_string(m) : "");
    }
}

/* One message that came while waiting; true when it is the answer. */
static bool take(run *r, json_object *msg)
{
    json_object *method = NULL, *id = NULL, *params = NULL;
    json_object_object_get_ex(msg, "method", &method);
    json_object_object_get_ex(msg, "params", &params);
    bool has_id = json_object_object_get_ex(msg, "id", &id);
    if (!method)
        return has_id && json_object_get_int(id) == KIT_ID && (take_response(r, msg), true);
    const char *m = json_object_get_string(method);
    if (has_id) {
        answer(r, msg, m);
    } else if (strcmp(m, "notifications/message") == 0) {
        json_object_array_add(r->out->logs, json_object_get(params));
    } else if (strcmp(m, "notifications/progress") == 0) {
        json_object_array_add(r->out->progress, json_object_get(params));
        if (r->opts && r->opts->cancel_on_progress)
            cancel(r);
    }
    return false;
}

/* Wait for the response to ID (a handshake step); false when none came. */
static bool await(run *r, int id, long long until)
{
    json_object *msg;
    while ((msg = next(&r->q, until))) {
        json_object *v;
        bool done = json_object_object_get_ex(msg, "id", &v) && json_object_get_int(v) == id &&
                    !json_object_object_get_ex(msg, "method", NULL);
        json_object_put(msg);
        if (done)
            return true;
    }
    return false;
}

/* What the kit says it can do: answer every kind of client request. */
static json_object *client_caps(void)
{
    json_object *caps = json_object_new_object(), *roots = json_object_new_object();
    json_object_object_add(caps, "elicitation", json_object_new_object());
    json_object_object_add(caps, "sampling", json_object_new_object());
    json_object_object_add(roots, "listChanged", json_object_new_boolean(false));
    json_object_object_add(caps, "roots", roots);
    return caps;
}

static json_object *client_info(void)
{
    json_object *info = json_object_new_object();
    json_object_object_add(info, "name", json_object_new_string("toolhost-testing"));
    json_object_object_add(info, "version", json_object_new_string(PACKAGE_VERSION));
    return info;
}

static const char *version_of(const th_test_call_opts *o)
{
    return o && o->protocol_version ? o->protocol_version : KIT_VERSION;
}

static bool stateless(const th_test_call_opts *o)
{
    return strcmp(version_of(o), KIT_STATELESS_FROM) >= 0;
}

static bool handshake(run *r, long long until)
{
    json_object *p = json_object_new_object();
    json_object_object_add(p, "protocolVersion", json_object_new_string(version_of(r->opts)));
    json_object_object_add(p, "capabilities", client_caps());
    json_object_object_add(p, "clientInfo", client_info());
    send_obj(r->s, rpc("initialize", p, json_object_new_int(100)));
    if (!await(r, 100, until))
        return false;
    send_obj(r->s, rpc("notifications/initialized", NULL, NULL));
    /* Every line the handler logs reaches the test, whatever its level. */
    json_object *lv = json_object_new_object();
    json_object_object_add(lv, "level", json_object_new_string("debug"));
    send_obj(r->s, rpc("logging/setLevel", lv, json_object_new_int(101)));
    return await(r, 101, until);
}

/* The request's _meta: its progress token, and for a stateless revision
 * what a handshake would have said, the log level included. */
static json_object *request_meta(const th_test_call_opts *o)
{
    json_object *meta = json_object_new_object();
    json_object_object_add(meta, "progressToken", json_object_new_string("toolhost-testing"));
    if (stateless(o)) {
        json_object_object_add(meta, KIT_META "protocolVersion", json_object_new_string(version_of(o)));
        json_object_object_add(meta, KIT_META "clientCapabilities", client_caps());
        json_object_object_add(meta, KIT_META "clientInfo", client_info());
        json_object_object_add(meta, KIT_META "logLevel", json_object_new_string("debug"));
    }
    return meta;
}

/* Send the request and take what comes until its answer, the end of a
 * cancelled call, or UNTIL. */
static void exchange(run *r, json_object *req, long long until)
{
    const th_test_call_opts *o = r->opts;
    long long start = th_now_ms();
    long long cancel_at = o && o->cancel_after_ms > 0 ? start + o->cancel_after_ms : 0;
    send_obj(r->s, req);
    for (;;) {
        long long now = th_now_ms();
        if (cancel_at && now >= cancel_at)
            cancel(r);
        if (r->cancelled && th_mcp_session_open(r->s) == 0) {
            r->out->status = TH_TEST_CANCELLED;
            break;
        }
        if (now >= until)
            break;
        long long wake = r->cancelled ? now + KIT_POLL_MS : cancel_at && !r->cancelled ? cancel_at : until;
        json_object *msg = next(&r->q, wake < until ? wake : until);
        bool done = msg && take(r, msg);
        json_object_put(msg);
        if (done)
            break;
    }
    r->out->duration_ms = th_now_ms() - start;
    /* What came in the same instant as the end still counts. */
    json_object *late;
    while ((late = next(&r->q, 0))) {
        take(r, late);
        json_object_put(late);
    }
}

static int fail(th_test_result *out, const char *what, const char *detail)
{
    out->status = TH_TEST_FAILED;
    size_t n = strlen(what) + strlen(detail) + 3;
    if ((out->error_text = malloc(n)))
        snprintf(out->error_text, n, "%s%s%s", what, *detail ? ": " : "", detail);
    return -1;
}

static void result_init(th_test_result *out)
{
    memset(out, 0, sizeof *out);
    out->status = TH_TEST_NO_ANSWER;
    out->logs = json_object_new_array();
    out->progress = json_object_new_array();
    out->asked = json_object_new_array();
}

/* Run METHOD with PARAMS (taken) through a new session of H. */
static int request(th_test_host *h, const char *method, json_object *params, const th_test_call_opts *opts,
                   th_test_result *out)
{
    th_registry *reg = th_test_host_registry(h);
    if (!reg) {
        json_object_put(params);
        return fail(out, "the host did not start", th_test_host_error(h));
    }
    th_mcp_config cfg = *th_test_host_mcp_config(h);
    if (opts && opts->deadline_ms > 0)
        cfg.call_timeout_ms = opts->deadline_ms;
    run r = {.opts = opts, .out = out};
    pthread_mutex_init(&r.q.lock, NULL);
    pthread_cond_init(&r.q.cond, NULL);
    r.used = calloc(opts && opts->nanswers ? opts->nanswers : 1, sizeof *r.used);
    th_mcp *mcp = r.used ? th_mcp_new(reg, &cfg) : NULL;
    r.s = mcp ? th_mcp_session_new(mcp, on_send, &r.q) : NULL;
    long long until = th_now_ms() + (opts && opts->wait_ms > 0 ? opts->wait_ms : KIT_WAIT_MS);
    if (!r.s) {
        json_object_put(params);
        fail(out, "out of memory", "");
    } else if (!stateless(opts) && !handshake(&r, until)) {
        json_object_put(params);
        fail(out, "the session did not answer its handshake", "");
    } else {
        json_object_object_add(params, "_meta", request_meta(opts));
        exchange(&r, rpc(method, params, json_object_new_int(KIT_ID)), until);
    }
    if (r.s) {
        if (out->status == TH_TEST_NO_ANSWER)
            th_mcp_session_cancel_all(r.s);
        th_mcp_session_free(r.s);
    }
    if (mcp)
        th_mcp_free(mcp, th_now_ms() + KIT_WAIT_MS);
    for (size_t i = r.q.head; i < r.q.n; i++)
        json_object_put(r.q.v[i]);
    free(r.q.v);
    free(r.used);
    pthread_cond_destroy(&r.q.cond);
    pthread_mutex_destroy(&r.q.lock);
    return out->status == TH_TEST_RESULT ? 0 : -1;
}

/* PARAMS_JSON as an object, or NULL with OUT failed. */
static json_object *parse_object(const char *text, const char *what, th_test_result *out)
{
    json_object *o = text ? json_tokener_parse(text) : json_object_new_object();
    if (!o || !json_object_is_type(o, json_type_object)) {
        json_object_put(o);
        fail(out, what, "not a JSON object");
        return NULL;
    }
    return o;
}

int th_test_request(th_test_host *h, const char *method, const char *params_json, const th_test_call_opts *opts,
                    th_test_result *out)
{
    result_init(out);
    json_object *params = parse_object(params_json, "the params", out);
    return params ? request(h, method, params, opts, out) : -1;
}

int th_test_call(th_test_host *h, const char *tool, const char *args_json, const th_test_call_opts *opts,
                 th_test_result *out)
{
    result_init(out);
    json_object *args = parse_object(args_json, "the arguments", out);
    if (!args)
        return -1;
    json_object *params = json_object_new_object();
    json_object_object_add(params, "name", json_object_new_string(tool));
    json_object_object_add(params, "arguments", args);
    return request(h, "tools/call", params, opts, out);
}

void th_test_result_clear(th_test_result *r)
{
    if (!r)
        return;
    json_object_put(r->result);
    json_object_put(r->error);
    json_object_put(r->logs);
    json_object_put(r->progress);
    json_object_put(r->asked);
    free(r->result_json);
    free(r->error_text);
    memset(r, 0, sizeof *r);
}
