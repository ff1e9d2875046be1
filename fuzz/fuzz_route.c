/* SPDX-License-Identifier: MIT */
/*
** fuzz/fuzz_route.c: a libFuzzer harness for the supervisor's matching of
** a worker's frames to calls by id (worker/route.c) and for the answer to
** an ASK frame (th_worker_answer_ask), against a model of the calls.
*/

/*
** The input is a script the harness plays as supervisor.c does: calls
** start (waiting or deferred), the worker writes frames (any type, for the
** id of a call in flight, one that ended, 0, one past the last, any u32),
** a waiting call takes and runs its frames, gives up (cancelled), a
** deferred call is taken from the ready list and run, the worker dies and
** a new one starts. The harness keeps its own expectation of which calls
** are in flight, which are ready and what each has queued, and aborts when
** the code disagrees: a verdict, the call a frame went to, the order of a
** call's frames, the lists, the counts. An ASK a call runs is answered
** through th_worker_answer_ask with a model client: asked exactly when the
** payload is a well-formed question (checked here apart from the code),
** with the payload's key, method and params, and answered with the
** client's code and result. What a call then sends the client is one line
** of JSON. ASan/LSan catch a frame lost or freed twice.
**
** Script (each op one byte, then its operands):
**   0 start a waiting call   1 start a deferred call
**   2,3 a frame: type byte, id byte (+4 bytes for any u32), u16 length, payload
**   4 a call runs its next frame (slot byte)   5 a waiting call gives up (slot byte)
**   6 the next ready call is taken   7 a deferred call finds no frame left (slot byte)
**   8 the worker dies (then, once every call is over, a new one starts)
**   9 with no call in flight, the worker has served UINT32_MAX - (byte % 4) calls
*/
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base/log.h"
#include "base/util.h"
#include "call/callctx.h"
#include "call/result.h"
#include "fuzz_json.h"
#include "protocol/jsonrpc.h"
#include "worker/frames.h"
#include "worker/route.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t *cur_data;
static size_t cur_size;

#define DIE(what) fz_die("fuzz_route", what, (const char *)cur_data, cur_size)

#define MAXC 8
#define MAXQ 64 /* frames the model keeps per call; more are not sent */

typedef struct mframe {
    uint8_t type;
    size_t len;
    char *bytes;
} mframe;

typedef struct mcall {
    th_route_call rc; /* the code's */
    th_call *call;    /* the host's call its frames run on */
    bool used, deferred;
    /* The model's: */
    uint32_t id;
    bool in_flight, final_seen, on_ready, running;
    mframe q[MAXQ];
    size_t qhead, qlen;
} mcall;

typedef struct run {
    const uint8_t *d;
    size_t n, at;
    th_route rt;
    mcall c[MAXC];
    uint32_t last_id;
    bool wrapped; /* ids went past UINT32_MAX: any but 0 may have been a call's */
    bool dead;
    uint32_t ended[8]; /* ids of calls that ended, for late frames */
    size_t nended;
    json_object *token;
    /* The ASK being answered: what the model client must be asked. */
    bool ask_expected, asked;
    const char *want_key, *want_method;
    json_object *want_params;
    th_rc ask_rc;
    bool ask_result;
} run;

static run R;

static uint8_t byte(void)
{
    return R.at < R.n ? R.d[R.at++] : 0;
}

/* ---- what a call sends its client ---------------------------------------------- */

static void check_line(const char *text, size_t len, const char *what)
{
    if (!fz_is_line(text, len))
        DIE(what);
}

static void on_notify(void *ctx, json_object *n)
{
    (void)ctx;
    if (!fz_notice_is_line(n))
        DIE("a notification from a worker's frame is not one line of JSON");
}

/* ---- the model client and its expectation of an ASK ------------------------------ */

static bool key_ok(const char *k, size_t n)
{
    if (n == 0 || n > 64)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-", k[i]) || !k[i])
            return false;
    return true;
}

static bool method_ok(const char *m, size_t n)
{
    static const char *const methods[] = {"elicitation/create", "sampling/createMessage", "roots/list"};
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
        if (strlen(methods[i]) == n && memcmp(methods[i], m, n) == 0)
            return true;
    return false;
}

/* The model's reading of an ASK payload: the parsed object (*OUT, to put)
 * when the client must be asked, with R's expectation set. */
static void expect_ask(const char *p, size_t len, json_object **out)
{
    R.ask_expected = false;
    *out = NULL;
    if (len > INT32_MAX || !th_utf8_valid(p, len))
        return;
    json_tokener *tok = json_tokener_new_ex(TH_RESULT_MAX_DEPTH + 8);
    if (!tok)
        abort();
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *o = json_tokener_parse_ex(tok, p, (int)len), *k, *m, *pa = NULL;
    bool whole = json_tokener_get_error(tok) == json_tokener_success && json_tokener_get_parse_end(tok) == len;
    json_tokener_free(tok);
    if (!whole || !o || !json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, "key", &k) ||
        !json_object_is_type(k, json_type_string) || !json_object_object_get_ex(o, "method", &m) ||
        !json_object_is_type(m, json_type_string) ||
        !key_ok(json_object_get_string(k), (size_t)json_object_get_string_len(k)) ||
        !method_ok(json_object_get_string(m), (size_t)json_object_get_string_len(m)) ||
        (json_object_object_get_ex(o, "params", &pa) && pa && !json_object_is_type(pa, json_type_object))) {
        json_object_put(o);
        return;
    }
    R.ask_expected = true;
    R.want_key = json_object_get_string(k);
    R.want_method = json_object_get_string(m);
    R.want_params = pa;
    *out = o;
}

static th_rc model_ask(void *ctx, th_call *call, const char *key, const char *method, json_object *params,
                       json_object **result)
{
    (void)ctx;
    (void)call;
    if (!R.ask_expected)
        DIE("the client was asked a malformed ASK");
    if (R.asked)
        DIE("the client was asked twice for one ASK");
    R.asked = true;
    if (strcmp(key, R.want_key) != 0 || strcmp(method, R.want_method) != 0)
        DIE("the client was asked another key or method than the ASK's");
    json_object *empty = json_object_new_object();
    if (!fz_same_text(params, R.want_params ? R.want_params : empty))
        DIE("the client was asked other params than the ASK's");
    json_object_put(empty);
    json_object_put(params);
    static const th_rc codes[] = {TH_OK, TH_ERR_IO, TH_ERR_CANCELLED, TH_ERR_INPUT_REQUIRED, TH_ERR_CAPABILITY};
    uint8_t b = byte();
    R.ask_rc = codes[b % 5];
    R.ask_result = R.ask_rc == TH_OK;
    if (R.ask_result) {
        *result = json_object_new_object();
        json_object_object_add(*result, "action", json_object_new_string(b & 0x80 ? "accept" : "decline"));
    }
    return R.ask_rc;
}

/* Run an ASK on C as the supervisor does, and check the ANSWER. */
static void run_ask(mcall *c, const char *p, size_t len)
{
    json_object *parsed;
    expect_ask(p, len, &parsed);
    R.asked = false;
    json_object *a = th_worker_answer_ask(c->call, p, len), *v;
    if (!a)
        abort();
    if (R.ask_expected != R.asked)
        DIE("a well-formed ASK was not asked of the client");
    th_rc want = R.asked ? R.ask_rc : TH_ERR_VALUE;
    if (!json_object_object_get_ex(a, "rc", &v) || !json_object_is_type(v, json_type_int) ||
        json_object_get_int(v) != (int)want)
        DIE("the ANSWER's rc is not the client's code (or VALUE for a malformed ASK)");
    bool has = json_object_object_get_ex(a, "result", &v);
    if (has != (R.asked && R.ask_result) || (has && !json_object_is_type(v, json_type_object)))
        DIE("the ANSWER carries a result exactly when the client gave one");
    size_t tl;
    const char *t = json_object_to_json_string_length(a, JSON_C_TO_STRING_PLAIN, &tl);
    check_line(t, tl, "the ANSWER is not one line of JSON");
    json_object_put(a);
    json_object_put(parsed);
    R.ask_expected = false;
}

/* ---- the model of the calls --------------------------------------------------------- */

static void new_call(mcall *c, bool deferred)
{
    th_call_hooks hooks = {
        .notify = on_notify,
        .progress_token = R.token,
        .log_to_client = true,
        .log_level = TH_LOG_DEBUG,
        .max_result_bytes = 1 << 20,
        .ask = model_ask,
        .client_caps = TH_ASK_ELICITATION | TH_ASK_SAMPLING | TH_ASK_ROOTS,
    };
    memset(c, 0, sizeof *c);
    c->call = th_call_new("fz_tool", &hooks);
    if (!c->call)
        abort();
    c->used = true;
    c->deferred = deferred;
    uint32_t id = th_route_add(&R.rt, &c->rc, deferred);
    if (++R.last_id == 0) {
        R.last_id = 1;
        R.wrapped = true;
    }
    if (id != R.last_id)
        DIE("a new call did not get the next id (1 after UINT32_MAX)");
    c->id = id;
    c->in_flight = true;
}

/* C is over: its call finished (the response checked), its memory freed. */
static void end_call(mcall *c)
{
    th_route_clear(&c->rc);
    for (size_t i = 0; i < c->qlen; i++)
        free(c->q[(c->qhead + i) % MAXQ].bytes);
    json_object *r = th_call_finish(c->call, TH_OK);
    th_call_free(c->call);
    size_t len;
    const char *text = th_rpc_serialize(r, &len);
    if (!text)
        abort();
    check_line(text, len, "a call's response is not one line of JSON");
    json_object_put(r);
    R.ended[R.nended++ % 8] = c->id;
    c->used = false;
}

static mcall *pick(uint8_t sel, bool (*ok)(const mcall *c))
{
    for (size_t k = 0; k < MAXC; k++) {
        mcall *c = &R.c[(sel + k) % MAXC];
        if (c->used && ok(c))
            return c;
    }
    return NULL;
}

static mcall *find_in_flight(uint32_t id)
{
    for (size_t k = 0; k < MAXC; k++)
        if (R.c[k].used && R.c[k].in_flight && R.c[k].id == id)
            return &R.c[k];
    return NULL;
}

/* Every list and count of the code's is the model's. */
static void check_state(void)
{
    size_t deferred = 0, linked = 0, ready = 0;
    for (size_t k = 0; k < MAXC; k++) {
        mcall *c = &R.c[k];
        if (!c->used)
            continue;
        if (c->rc.linked != c->in_flight || c->rc.final_seen != c->final_seen || c->rc.id != c->id)
            DIE("a call's state is not the model's");
        if (c->deferred && c->rc.queued != (c->on_ready || c->running))
            DIE("a deferred call's queued flag is not the model's");
        size_t nq = 0;
        const th_qframe *last = NULL;
        for (const th_qframe *q = c->rc.head; q && nq <= MAXQ; q = q->next, nq++)
            last = q;
        if (nq != c->qlen || c->rc.tail != last)
            DIE("a call's queue is not as long as the model's");
        deferred += c->deferred && c->in_flight;
        linked += c->in_flight;
        ready += c->on_ready;
    }
    if (R.rt.ndeferred != deferred || R.rt.last_id != R.last_id || R.rt.wrapped != R.wrapped)
        DIE("the route's counts are not the model's");
    size_t n = 0;
    for (th_route_call *rc = R.rt.calls; rc; rc = rc->next) {
        mcall *c = (mcall *)rc;
        if (++n > MAXC || c < R.c || c >= R.c + MAXC || !c->used || !c->in_flight)
            DIE("a call in the route's list is not in flight in the model");
    }
    if (n != linked)
        DIE("a call in flight in the model is not in the route's list");
    n = 0;
    for (th_route_call *rc = R.rt.ready; rc; rc = rc->ready_next) {
        mcall *c = (mcall *)rc;
        if (++n > MAXC || c < R.c || c >= R.c + MAXC || !c->used || !c->on_ready)
            DIE("a call on the ready list is not ready in the model");
    }
    if (n != ready)
        DIE("a ready call in the model is not on the ready list");
}

/* ---- the ops ---------------------------------------------------------------------- */

static void op_start(bool deferred)
{
    if (R.dead)
        return;
    for (size_t k = 0; k < MAXC; k++)
        if (!R.c[k].used) {
            new_call(&R.c[k], deferred);
            return;
        }
}

static uint32_t pick_id(void)
{
    uint8_t sel = byte();
    switch (sel % 5) {
    case 0:
        return R.c[(sel / 5) % MAXC].id; /* a call's, in flight or not */
    case 1:
        return 0;
    case 2:
        return R.last_id + 1;
    case 3: {
        uint32_t id = 0;
        for (int i = 0; i < 4; i++)
            id |= (uint32_t)byte() << (8 * i);
        return id;
    }
    default:
        return R.nended ? R.ended[(sel / 5) % (R.nended < 8 ? R.nended : 8)] : 1;
    }
}

static void op_frame(void)
{
    static const uint8_t types[] = {TH_IPC_PROGRESS, TH_IPC_LOG, TH_IPC_RESULT, TH_IPC_FAILED, TH_IPC_ASK, TH_IPC_UPDATED};
    uint8_t t = byte();
    uint8_t type = t < 200 ? types[t % 6] : (uint8_t)(t - 200);
    uint32_t id = pick_id();
    size_t len = byte();
    len |= (size_t)byte() << 8;
    if (len > R.n - R.at)
        len = R.n - R.at;
    char *payload = malloc(len + 1);
    if (!payload)
        abort();
    memcpy(payload, R.d + R.at, len);
    payload[len] = '\0';
    R.at += len;
    if (R.dead) { /* nobody reads a dead worker's pipe */
        free(payload);
        return;
    }
    mcall *to = find_in_flight(id);
    if (to && to->qlen == MAXQ) { /* the model's limit, not the code's */
        free(payload);
        return;
    }
    th_route_verdict want;
    th_route_use use = th_route_use_of(type);
    if (type == TH_IPC_UPDATED)
        want = TH_ROUTE_UPDATED;
    else if ((type != TH_IPC_PROGRESS && type != TH_IPC_LOG && type != TH_IPC_ASK && type != TH_IPC_RESULT &&
              type != TH_IPC_FAILED) ||
             id == 0 || (!R.wrapped && id > R.last_id))
        want = TH_ROUTE_STRAY;
    else if (!to)
        want = TH_ROUTE_LATE;
    else
        want = to->deferred ? TH_ROUTE_READY : TH_ROUTE_WAITER;
    th_ipc_frame f = {.type = type, .id = id, .payload = payload, .len = len};
    th_route_call *got;
    th_route_verdict v = th_route_frame(&R.rt, &f, &got);
    if (v == TH_ROUTE_NOMEM) {
        free(payload);
        return;
    }
    if (v != want)
        DIE("a frame got another verdict than the model's");
    if ((want == TH_ROUTE_WAITER || want == TH_ROUTE_READY) != (got != NULL) || (got && got != &to->rc))
        DIE("a frame was queued on another call than the one its id names");
    if (want == TH_ROUTE_UPDATED) {
        th_worker_apply_updated(payload, len);
        free(payload);
        return;
    }
    if (!got) {
        free(payload);
        return;
    }
    to->q[(to->qhead + to->qlen++) % MAXQ] = (mframe){type, len, payload};
    if (use == TH_USE_FINAL) {
        to->in_flight = false;
        to->final_seen = true;
    }
    if (to->deferred && !to->on_ready && !to->running)
        to->on_ready = true;
}

static bool waiting_or_running(const mcall *c)
{
    return !c->deferred || c->running;
}

/* A call takes its next frame and runs it, as exchange and run_deferred do. */
static void op_run(void)
{
    mcall *c = pick(byte(), waiting_or_running);
    if (!c)
        return;
    th_qframe *q = th_route_pop(&c->rc);
    if (!c->qlen) {
        if (q)
            DIE("a call took a frame the model did not queue");
        if (!c->deferred && R.dead) { /* its worker died: answered crashed */
            th_route_remove(&R.rt, &c->rc);
            c->in_flight = false;
            end_call(c);
        }
        return;
    }
    mframe *m = &c->q[c->qhead];
    if (!q || q->type != m->type || q->len != m->len || memcmp(q->payload, m->bytes, m->len) != 0 ||
        q->payload[q->len] != '\0')
        DIE("a call took another frame than the model's next");
    free(m->bytes);
    c->qhead = (c->qhead + 1) % MAXQ;
    c->qlen--;
    switch (th_route_use_of(q->type)) {
    case TH_USE_APPLY:
        th_worker_apply_frame(c->call, "fz_tool", false, q->type, q->payload, q->len);
        break;
    case TH_USE_ASK:
        run_ask(c, q->payload, q->len);
        break;
    case TH_USE_FINAL:
        th_worker_apply_frame(c->call, "fz_tool", false, q->type, q->payload, q->len);
        if (c->qlen)
            DIE("a frame was queued after its call's final one");
        free(q);
        end_call(c);
        return;
    case TH_USE_NONE:
        DIE("a frame of a type no call takes was queued");
    }
    free(q);
}

static bool is_waiting(const mcall *c)
{
    return !c->deferred && c->in_flight;
}

/* A waiting call gives up (cancelled, its deadline): nothing more reaches it. */
static void op_give_up(void)
{
    mcall *c = pick(byte(), is_waiting);
    if (!c)
        return;
    th_route_remove(&R.rt, &c->rc);
    c->in_flight = false;
    end_call(c);
}

static void op_next_ready(void)
{
    th_route_call *rc = th_route_next_ready(&R.rt);
    mcall *c = (mcall *)rc;
    bool any = false;
    for (size_t k = 0; k < MAXC; k++)
        any |= R.c[k].used && R.c[k].on_ready;
    if (!rc) {
        if (any)
            DIE("the ready list was empty while a call was ready");
        return;
    }
    if (c < R.c || c >= R.c + MAXC || !c->used || !c->on_ready)
        DIE("the ready list gave a call that is not ready");
    c->on_ready = false;
    c->running = true;
}

static bool is_running(const mcall *c)
{
    return c->running;
}

/* A deferred call's runner finds no frame left: it stops (the next frame
 * lists it again) or, its worker dead, answers it crashed. */
static void op_idle(void)
{
    mcall *c = pick(byte(), is_running);
    if (!c || c->qlen)
        return;
    if (!R.dead || c->final_seen) {
        c->rc.queued = false;
        c->running = false;
        return;
    }
    end_call(c);
}

static void op_die(void)
{
    if (R.dead)
        return;
    R.dead = true;
    th_route_orphan(&R.rt);
    for (size_t k = 0; k < MAXC; k++) {
        mcall *c = &R.c[k];
        if (!c->used || !c->deferred || !c->in_flight)
            continue;
        c->in_flight = false;
        if (!c->running)
            c->on_ready = true;
    }
}

/* A worker that has served nearly 4 billion calls: its next ids wrap. */
static void op_jump(void)
{
    uint8_t back = byte() % 4;
    if (R.dead || R.rt.calls || R.rt.ready)
        return;
    for (size_t k = 0; k < MAXC; k++)
        if (R.c[k].used)
            return;
    R.rt.last_id = R.last_id = UINT32_MAX - back;
}

/* Once a dead worker's calls are all over, a new worker starts: ids from 1. */
static void maybe_restart(void)
{
    if (!R.dead)
        return;
    for (size_t k = 0; k < MAXC; k++)
        if (R.c[k].used)
            return;
    if (R.rt.calls || R.rt.ready || R.rt.ndeferred)
        DIE("a dead worker's route still holds calls when all are over");
    R.rt = (th_route){0};
    R.last_id = 0;
    R.wrapped = false;
    R.nended = 0;
    R.dead = false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool once;
    if (!once) {
        once = true;
        th_log_set_threshold(TH_LOG_EMERGENCY);
    }
    cur_data = data;
    cur_size = size;
    memset(&R, 0, sizeof R);
    R.d = data;
    R.n = size;
    R.token = json_object_new_int(7);
    unsigned steps = 0;
    while (R.at < R.n && steps++ < 4096) {
        switch (byte() % 10) {
        case 0:
            op_start(false);
            break;
        case 1:
            op_start(true);
            break;
        case 2:
        case 3:
            op_frame();
            break;
        case 4:
            op_run();
            break;
        case 5:
            op_give_up();
            break;
        case 6:
            op_next_ready();
            break;
        case 7:
            op_idle();
            break;
        case 8:
            op_die();
            break;
        default:
            op_jump();
            break;
        }
        check_state();
        maybe_restart();
    }
    /* The host ends: every call left is answered and freed. */
    for (size_t k = 0; k < MAXC; k++)
        if (R.c[k].used) {
            th_route_remove(&R.rt, &R.c[k].rc);
            end_call(&R.c[k]);
        }
    json_object_put(R.token);
    return 0;
}
