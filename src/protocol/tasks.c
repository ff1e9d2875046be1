/* SPDX-License-Identifier: MIT */
/*
** protocol/tasks.c: the task store (see tasks.h): each task's state and
** lifetime, the limits, the run of its call on the pool, the JSON of both
** eras' task shapes, and the deferred tasks/result answers of 2025-11-25.
*/
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "base/util.h"
#include "call/ask.h"
#include "call/callctx.h"
#include "call/calllog.h"
#include "call/crashnote.h"
#include "call/rawresult.h"
#include "protocol/jsonrpc.h"
#include "protocol/mrtr.h"
#include "protocol/pagination.h"
#include "protocol/tasks.h"
#include "schema/jsonschema.h"

typedef enum { T_WORKING, T_INPUT_REQUIRED, T_COMPLETED, T_FAILED, T_CANCELLED } status;

/* Wire names, by status. */
static const char *const status_names[] = {"working", "input_required", "completed", "failed", "cancelled"};

#define TERMINAL(st) ((st) >= T_COMPLETED)
#define ID_BYTES 16
#define RELATED_TASK "io.modelcontextprotocol/related-task"
#define LIST_CURSOR "tk1:"
#define LIST_PAGE 100

/*
** What differs between the two eras' tasks, as data. The extension
** (2026-07-28) inlines the outcome in tasks/get and gathers input with
** inputRequests and tasks/update (MRTR); the core tasks of 2025-11-25 ask
** the session live, fail a task whose result has isError (its spec: "this
** includes cases where the tool call result has isError set to true"),
** hand the outcome out only through tasks/result, wrap CreateTaskResult in
** "task", answer tasks/cancel with the Task and refuse it for a finished
** one (-32602).
*/
typedef enum { ERA_EXTENSION, ERA_CORE } task_era;
static const struct shape {
    const char *ttl_key, *poll_key;
    bool live_asks;        /* questions go to the session (peer), not to inputRequests */
    bool error_fails;      /* an isError result makes the task failed */
    bool inline_outcome;   /* tasks/get carries result or error */
    bool status_message;   /* statusMessage says why a task failed or was cancelled */
} shapes[] = {
    [ERA_EXTENSION] = {.ttl_key = "ttlMs", .poll_key = "pollIntervalMs", .inline_outcome = true},
    [ERA_CORE] = {.ttl_key = "ttl", .poll_key = "pollInterval", .live_asks = true, .error_fails = true,
                  .status_message = true},
};

/* A message for a 2025-11-25 requester, sent once the store's lock is
 * let go (th_tasks.outbox); a deferred tasks/result is one from the start
 * (its MSG set when it is answered). Holds PEER while it exists. */
typedef struct pending_out {
    th_tasks_peer peer;
    json_object *id;  /* a deferred tasks/result's request id, owned */
    json_object *msg; /* to send, or NULL: dropped */
    bool wait;        /* a deferred response: WAIT_END after */
    struct pending_out *next;
} pending_out;

typedef struct task task;

struct task {
    th_tasks *ts;
    char id[ID_BYTES * 2 + 1]; /* hex of random bytes: unguessable */
    char *owner;               /* "" for nobody */
    char *who;                 /* the principal the audit log names, or NULL */
    int refs;                  /* the store's, plus one while a run is queued or running; under ts->lock */
    bool stored;               /* still in the store (not expired) */
    bool unstarted;            /* ERA_CORE: created, until th_tasks_start */
    status st;
    task_era era;
    long long ttl_ms;                     /* as granted */
    long long created_wall, updated_wall; /* ms since the epoch, for the wire */
    long long expires;                    /* th_now_ms clock */
    /* Until the task ends: what its call needs (owned). */
    th_registry *reg;
    const th_entry *entry;
    json_object *args;
    unsigned caps;
    json_object *answers;  /* inputResponses received so far, by key */
    json_object *pending;  /* input_required: the questions not yet answered */
    th_call *call;         /* while a run is running, for tasks/cancel */
    unsigned missing_caps; /* the run asked what the client did not declare */
    th_mrtr *mrtr;         /* the running run's questions and answers */
    /* 2025-11-25 (ERA_CORE): the requester, and its waits. */
    bool has_peer;
    th_tasks_peer peer;   /* held while the task exists */
    json_object *token;   /* the call's progressToken, or NULL */
    pending_out *waiters;         /* deferred tasks/result requests */
    /* Once it ended. */
    json_object *result; /* completed (or failed with isError, ERA_CORE) */
    json_object *error;  /* failed */
    task *next;
};

struct th_tasks {
    th_pool *pool;
    th_tasks_config cfg;
    th_tasks_output_fn output;
    pthread_mutex_t lock; /* everything in every task, and the list */
    task *head;
    size_t count;
    pending_out *out_head, *out_tail; /* to send once the lock is let go (flush) */
    th_pool_timer expiry;     /* sweeps while a tasks/result waits */
    bool expiry_armed;
    bool closing;             /* th_tasks_cancel_all: no more timers */
};

static long long wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* "2026-11-23T17:35:19.123Z" */
static json_object *iso_time(long long ms)
{
    time_t s = (time_t)(ms / 1000);
    struct tm tm;
    char buf[40];
    gmtime_r(&s, &tm);
    size_t n = strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, sizeof buf - n, ".%03lldZ", ms % 1000);
    return json_object_new_string(buf);
}

th_tasks *th_tasks_new(th_pool *pool, const th_tasks_config *cfg, th_tasks_output_fn output)
{
    th_tasks *ts = calloc(1, sizeof *ts);
    if (!ts)
        return NULL;
    ts->pool = pool;
    ts->cfg = *cfg;
    ts->output = output;
    pthread_mutex_init(&ts->lock, NULL);
    return ts;
}

/* Let go of what only a live call needs. Under ts->lock. */
static void drop_call_state(task *t, th_registry **reg_out)
{
    *reg_out = t->reg;
    t->reg = NULL;
    t->entry = NULL;
    json_object_put(t->args);
    t->args = NULL;
    json_object_put(t->answers);
    t->answers = NULL;
    json_object_put(t->pending);
    t->pending = NULL;
}

static void task_free(task *t)
{
    th_registry *reg;
    drop_call_state(t, &reg);
    th_registry_unref(reg);
    json_object_put(t->result);
    json_object_put(t->error);
    json_object_put(t->token);
    if (t->has_peer)
        t->peer.release(t->peer.ctx);
    free(t->owner);
    free(t->who);
    free(t);
}

static void out_free(pending_out *o)
{
    json_object_put(o->id);
    json_object_put(o->msg);
    o->peer.release(o->peer.ctx);
    free(o);
}

/* Queue O to be sent by flush. Under ts->lock. */
static void out_queue(th_tasks *ts, pending_out *o)
{
    o->next = NULL;
    if (ts->out_tail)
        ts->out_tail->next = o;
    else
        ts->out_head = o;
    ts->out_tail = o;
}

/* Queue the notification MSG (taken) for T's requester. Under ts->lock. */
static void out_notify(task *t, json_object *msg)
{
    pending_out *o = msg && t->has_peer ? calloc(1, sizeof *o) : NULL;
    if (!o) {
        json_object_put(msg);
        return;
    }
    o->peer = t->peer;
    o->peer.hold(o->peer.ctx);
    o->msg = msg;
    out_queue(t->ts, o);
}

/* Send what the lock held back, in order. Never under ts->lock. */
static void flush(th_tasks *ts)
{
    pthread_mutex_lock(&ts->lock);
    pending_out *o = ts->out_head;
    ts->out_head = ts->out_tail = NULL;
    pthread_mutex_unlock(&ts->lock);
    while (o) {
        pending_out *next = o->next;
        if (o->msg)
            o->peer.send(o->peer.ctx, o->msg);
        o->msg = NULL;
        if (o->wait)
            o->peer.wait_end(o->peer.ctx);
        out_free(o);
        o = next;
    }
}

/* Drop a reference; the last frees T. Called with ts->lock held: returns
 * the task to free after unlocking, or NULL. */
static task *unref_locked(task *t)
{
    return --t->refs == 0 ? t : NULL;
}

static void answer_waiters(task *t, int code, const char *message);
static json_object *status_notification(const task *t);

/* End T with ST (and RESULT or ERROR, taken). Under ts->lock; the registry
 * to release after unlocking goes to *REG. */
static void finish(task *t, status st, json_object *result, json_object *error, th_registry **reg)
{
    t->st = st;
    t->updated_wall = wall_ms();
    t->result = result;
    t->error = error;
    drop_call_state(t, reg);
    if (t->era == ERA_CORE) { /* the news first, then the result it announces */
        out_notify(t, status_notification(t));
        answer_waiters(t, 0, NULL);
    }
}

/* Take T out of the store. Under ts->lock; returns T when it is to be
 * freed after unlocking. A running call is asked to stop. */
static task *unstore(th_tasks *ts, task *t)
{
    for (task **pp = &ts->head; *pp; pp = &(*pp)->next)
        if (*pp == t) {
            *pp = t->next;
            break;
        }
    ts->count--;
    t->stored = false;
    if (t->call)
        th_call_cancel(t->call);
    answer_waiters(t, TH_RPC_INVALID_PARAMS, "Failed to retrieve task: Task has expired");
    if (!TERMINAL(t->st)) /* a run still under way drops its result, and logs it cancelled */
        t->st = T_CANCELLED;
    return unref_locked(t);
}

/* Take out every task past its TTL. Under ts->lock; those to free are
 * chained on *DEAD (through next). */
static void sweep(th_tasks *ts, task **dead)
{
    long long now = th_now_ms();
    for (task *t = ts->head, *next; t; t = next) {
        next = t->next;
        if (now >= t->expires) {
            task *f = unstore(ts, t);
            if (f) {
                f->next = *dead;
                *dead = f;
            }
        }
    }
}

static void free_chain(task *t)
{
    while (t) {
        task *next = t->next;
        task_free(t);
        t = next;
    }
}

static task *find(th_tasks *ts, const char *id, const char *owner)
{
    for (task *t = ts->head; t; t = t->next)
        if (strcmp(t->id, id) == 0)
            return strcmp(t->owner, owner ? owner : "") == 0 ? t : NULL; /* another's is unknown here */
    return NULL;
}

static void put(json_object *o, const char *key, json_object *v)
{
    if (o && v)
        json_object_object_add(o, key, v);
    else
        json_object_put(v);
}

static const char *first_text(json_object *result);

/* Task's statusMessage (ERA_CORE), or NULL: why it failed or ended. */
static const char *status_message(const task *t)
{
    json_object *m;
    if (t->st == T_CANCELLED)
        return "The task was cancelled by request.";
    if (t->st != T_FAILED)
        return NULL;
    if (t->error && json_object_object_get_ex(t->error, "message", &m))
        return json_object_get_string(m);
    const char *text = first_text(t->result);
    return text ? text : "The tool's call failed.";
}

/* The Task members both shapes share, named as T's era names them. Under
 * ts->lock. */
static json_object *task_json(const task *t)
{
    const struct shape *sh = &shapes[t->era];
    json_object *o = json_object_new_object();
    put(o, "taskId", json_object_new_string(t->id));
    put(o, "status", json_object_new_string(status_names[t->st]));
    const char *sm = sh->status_message ? status_message(t) : NULL;
    if (sm)
        put(o, "statusMessage", json_object_new_string(sm));
    put(o, "createdAt", iso_time(t->created_wall));
    put(o, "lastUpdatedAt", iso_time(t->updated_wall));
    put(o, sh->ttl_key, json_object_new_int64(t->ttl_ms));
    put(o, sh->poll_key, json_object_new_int64(t->ts->cfg.poll_ms));
    return o;
}

/* notifications/tasks/status with T as it is now. Under ts->lock. */
static json_object *status_notification(const task *t)
{
    json_object *params = task_json(t);
    return params ? th_rpc_notification("notifications/tasks/status", params) : NULL;
}

/* {"io.modelcontextprotocol/related-task":{"taskId":ID}} added to O's _meta. */
static void relate(json_object *o, const char *id)
{
    json_object *meta = NULL, *rel = json_object_new_object();
    put(rel, "taskId", json_object_new_string(id));
    if (!o || !json_object_object_get_ex(o, "_meta", &meta) || !json_object_is_type(meta, json_type_object)) {
        meta = json_object_new_object();
        put(o, "_meta", meta);
    }
    put(meta, RELATED_TASK, rel);
}

/* tasks/result for a finished T: exactly what the call would have
 * answered (ID borrowed), with the related task in a result's _meta.
 * Under ts->lock. */
static json_object *outcome_response(const task *t, json_object *id)
{
    json_object *v, *copy = NULL;
    if (t->result) {
        if (json_object_deep_copy(t->result, &copy, NULL) != 0)
            return th_rpc_error(id, TH_RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
        relate(copy, t->id);
        return th_rpc_result(id, copy);
    }
    if (t->error) {
        json_object *code = NULL, *data = NULL;
        json_object_object_get_ex(t->error, "code", &code);
        json_object_object_get_ex(t->error, "message", &v);
        if (json_object_object_get_ex(t->error, "data", &data))
            data = json_object_get(data);
        return th_rpc_error(id, code ? json_object_get_int(code) : TH_RPC_INTERNAL_ERROR,
                            v ? json_object_get_string(v) : "Internal error", data);
    }
    /* Cancelled: the call was stopped, so it has no answer of its own. */
    char m[160];
    snprintf(m, sizeof m, "Task %s was cancelled; its call has no result", t->id);
    return th_rpc_error(id, TH_RPC_INTERNAL_ERROR, m, NULL);
}

/* Answer T's deferred tasks/result requests: with its outcome when CODE is
 * 0, else with the error CODE/MESSAGE. Under ts->lock; sent by flush. */
static void answer_waiters(task *t, int code, const char *message)
{
    while (t->waiters) {
        pending_out *w = t->waiters;
        t->waiters = w->next;
        w->msg = code ? th_rpc_error(w->id, code, message, NULL) : outcome_response(t, w->id);
        out_queue(t->ts, w);
    }
}

/* DetailedTask: the Task plus what its status has to show. Under ts->lock. */
static json_object *detailed_json(const task *t)
{
    json_object *o = task_json(t);
    if (t->st == T_COMPLETED && t->result)
        put(o, "result", json_object_get(t->result));
    if (t->st == T_FAILED && t->error)
        put(o, "error", json_object_get(t->error));
    if (t->st == T_INPUT_REQUIRED && t->pending)
        put(o, "inputRequests", json_object_get(t->pending));
    return o;
}

/* ---- running a task's call -------------------------------------------- */

static bool call_cancelled(void *call)
{
    return th_call_cancelled(call);
}

/* th_call_hooks.ask of a task's call: answered from tasks/update's
 * answers, or recorded, and the task parks in input_required. */
static th_rc task_ask(void *ctx, th_call *call, const char *key, const char *method, json_object *params,
                      json_object **result);

/* ERA_CORE: the question goes to the requester's session now, tagged with
 * the task, which is input_required until the answer comes (its status
 * notification tells a client that polls to call tasks/result). */
static th_rc ask_peer(task *t, th_call *call, const char *key, const char *method, json_object *params,
                      json_object **result)
{
    th_tasks *ts = t->ts;
    (void)key;
    relate(params, t->id);
    /* The request names, as the call it serves, a tasks/result waiting for
     * the task when there is one: over HTTP it goes out on that request's
     * stream, as the spec's input_required flow has it. */
    char fallback[ID_BYTES * 2 + 8], *origin = NULL;
    snprintf(fallback, sizeof fallback, "task:%s", t->id);
    pthread_mutex_lock(&ts->lock);
    if (t->waiters)
        origin = th_rpc_id_key(t->waiters->id);
    if (t->st == T_WORKING) {
        t->st = T_INPUT_REQUIRED;
        t->updated_wall = wall_ms();
        out_notify(t, status_notification(t));
    }
    pthread_mutex_unlock(&ts->lock);
    flush(ts);
    th_rc rc = t->peer.ask(t->peer.ctx, call, origin ? origin : fallback, method, params, result);
    free(origin);
    pthread_mutex_lock(&ts->lock);
    if (t->st == T_INPUT_REQUIRED) {
        t->st = T_WORKING;
        t->updated_wall = wall_ms();
        out_notify(t, status_notification(t));
    }
    pthread_mutex_unlock(&ts->lock);
    flush(ts);
    return rc;
}

static th_rc task_ask(void *ctx, th_call *call, const char *key, const char *method, json_object *params,
                      json_object **result)
{
    task *t = ctx; /* the run's own fields: no lock needed */
    unsigned kind = th_ask_kind_of(method);
    if (!(t->caps & kind)) {
        /* The extension fails the task (-32021); a 2025-11-25 handler is
         * told, as in a synchronous legacy call, and decides. */
        if (!shapes[t->era].live_asks)
            t->missing_caps |= kind;
        json_object_put(params);
        return TH_ERR_CAPABILITY;
    }
    if (shapes[t->era].live_asks)
        return ask_peer(t, call, key, method, params, result);
    return th_mrtr_ask(t->mrtr, key, method, params, result);
}

/* th_call_hooks.notify of an ERA_CORE task: progress (with the call's own
 * progressToken) and log messages reach the requester, tagged with the
 * task. A running call holds the peer through its task. */
static void task_notify(void *ctx, json_object *notification)
{
    task *t = ctx;
    json_object *params = NULL;
    if (json_object_object_get_ex(notification, "params", &params) && json_object_is_type(params, json_type_object))
        relate(params, t->id);
    t->peer.send(t->peer.ctx, notification);
}

/* The first text of RESULT, for a failed task's message. */
static const char *first_text(json_object *result)
{
    json_object *content, *b, *text;
    if (!result || !json_object_object_get_ex(result, "content", &content) ||
        !json_object_is_type(content, json_type_array) || json_object_array_length(content) == 0)
        return NULL;
    b = json_object_array_get_idx(content, 0);
    return json_object_object_get_ex(b, "text", &text) && json_object_is_type(text, json_type_string)
               ? json_object_get_string(text)
               : NULL;
}

static json_object *rpc_error(int code, const char *message)
{
    json_object *e = json_object_new_object();
    put(e, "code", json_object_new_int(code));
    put(e, "message", json_object_new_string(message));
    return e;
}

static void schedule(task *t);

/* One run of T's call, on a pool thread: the handler runs again after
 * each round of answers (as a 2026-07-28 retry would), with all of them. */
static void run_task(void *p)
{
    task *t = p;
    th_tasks *ts = t->ts;
    th_registry *reg = NULL;
    task *dead = NULL;
    json_object *args = NULL, *params = json_object_new_object();

    pthread_mutex_lock(&ts->lock);
    bool go = t->st == T_WORKING && t->stored;
    const th_entry *e = t->entry;
    /* The run's own hold on the code it calls: a tasks/cancel ends the
     * task (and lets go of its registry) while the handler still runs. */
    th_registry *run_reg = go ? th_registry_ref(t->reg) : NULL;
    if (go) {
        args = json_object_get(t->args);
        put(params, "inputResponses", json_object_get(t->answers));
    }
    pthread_mutex_unlock(&ts->lock);

    th_call *call = NULL;
    json_object *result = NULL;
    char why[256] = "";
    long long started_ms = th_now_ms();
    const struct shape *sh = &shapes[t->era];
    if (go) {
        t->missing_caps = 0;
        if (!sh->live_asks)
            t->mrtr = th_mrtr_begin(e->name, args, t->owner[0] ? t->owner : NULL, params, why, sizeof why);
        th_call_hooks hooks = {
            .max_result_bytes = ts->cfg.max_result_bytes,
            .client_caps = t->caps,
            .ask = task_ask,
            .ask_ctx = t,
        };
        if (t->has_peer) {
            hooks.notify = task_notify;
            hooks.ctx = t;
            hooks.progress_token = t->token;
            hooks.log_to_client = t->peer.log_to_client;
            hooks.log_level = t->peer.log_level;
        }
        call = t->mrtr || sh->live_asks ? th_call_new(e->original_name, &hooks) : NULL;
    }
    if (call) {
        pthread_mutex_lock(&ts->lock);
        t->call = call;
        bool stop = t->st != T_WORKING || !t->stored; /* cancelled meanwhile */
        pthread_mutex_unlock(&ts->lock);
        if (stop)
            th_call_cancel(call);
        char *violations = NULL;
        th_validate_opts vopts = {.cancelled = call_cancelled, .ctx = call};
        const th_schema *validator = th_entry_validator(e);
        size_t nbad = validator ? th_schema_validate_ex(validator, args, &vopts, &violations) : 0;
        if (!validator) {
            th_call_error(call, "Out of memory compiling the input schema of tool '%s'", e->name);
            result = th_call_finish(call, TH_OK);
        } else if (nbad > 0) {
            th_call_error(call, "Invalid arguments for tool '%s' (%zu problem%s):\n%s", e->name, nbad,
                          nbad == 1 ? "" : "s", violations ? violations : "");
            result = th_call_finish(call, TH_OK);
        } else {
            int crash_slot = th_crashnote_begin(e->name);
            th_call *h = th_call_handle(call);
            th_rc rc = th_entry_invoke(e, h, args);
            th_crashnote_end(crash_slot);
            result = th_call_finish(call, rc);
        }
        free(violations);
        if (result && !t->missing_caps && !th_mrtr_pending(t->mrtr) && !th_call_aborted(call) &&
            (result = th_raw_result_tree(result)) && ts->output)
            result = ts->output(e, result);
        else if (result && sh->error_fails)
            result = th_raw_result_tree(result); /* kept, so looked into */
    }

    pthread_mutex_lock(&ts->lock);
    t->call = NULL;
    if (!go || t->st != T_WORKING) {
        json_object_put(result); /* cancelled (or expired): nothing of it is kept */
    } else if (!call) {
        finish(t, T_FAILED, NULL, rpc_error(TH_RPC_INTERNAL_ERROR, why[0] ? why : "Internal error: out of memory"),
               &reg);
        json_object_put(result);
    } else if (t->missing_caps) {
        char m[256];
        snprintf(m, sizeof m, "Missing required client capability: tool '%s' needs %s", e->name,
                 th_ask_capability(t->missing_caps & -t->missing_caps));
        finish(t, T_FAILED, NULL, rpc_error(TH_RPC_MISSING_CAPABILITY, m), &reg);
        json_object_put(result);
    } else if (th_mrtr_pending(t->mrtr)) {
        json_object *ir = th_mrtr_result(t->mrtr), *reqs = NULL;
        json_object_put(result);
        if (ir && json_object_object_get_ex(ir, "inputRequests", &reqs)) {
            json_object_put(t->pending);
            t->pending = json_object_get(reqs);
            t->st = T_INPUT_REQUIRED;
            t->updated_wall = wall_ms();
        } else {
            finish(t, T_FAILED, NULL, rpc_error(TH_RPC_INTERNAL_ERROR, "Internal error: out of memory"), &reg);
        }
        json_object_put(ir);
    } else if (!result) {
        finish(t, T_FAILED, NULL, rpc_error(TH_RPC_INTERNAL_ERROR, "Internal error: out of memory"), &reg);
    } else if (sh->error_fails && (th_call_aborted(call) || json_object_object_get_ex(result, "isError", NULL))) {
        /* What the synchronous call would have answered (an isError
         * result), kept for tasks/result; the task itself failed. */
        json_object *v = NULL;
        json_object_object_get_ex(result, "isError", &v);
        finish(t, v && json_object_get_boolean(v) ? T_FAILED : T_COMPLETED, result, NULL, &reg);
    } else if (th_call_aborted(call)) {
        const char *text = first_text(result);
        char m[512];
        snprintf(m, sizeof m, "%s", text ? text : "the tool's call failed");
        th_utf8_clip(m);
        finish(t, T_FAILED, NULL, rpc_error(TH_RPC_INTERNAL_ERROR, m), &reg);
        json_object_put(result);
    } else {
        finish(t, T_COMPLETED, result, NULL, &reg);
    }
    th_mrtr_free(t->mrtr);
    t->mrtr = NULL;
    /* Each run ends with the line a call ends with; the task id stands
     * for the request id (which was answered long ago). */
    th_call_outcome outcome = t->st == T_CANCELLED                   ? TH_OUTCOME_CANCELLED
                              : call && th_call_crashed(call)        ? TH_OUTCOME_CRASH
                              : t->st == T_FAILED                    ? TH_OUTCOME_ERROR
                              : t->st == T_COMPLETED && t->result &&
                                        json_object_object_get_ex(t->result, "isError", NULL)
                                  ? TH_OUTCOME_ERROR
                                  : TH_OUTCOME_OK;
    json_object *logid = go ? json_object_new_string(t->id) : NULL;
    char *who = go && t->who ? strdup(t->who) : NULL; /* T may be gone once unlocked */
    sweep(ts, &dead);
    task *f = unref_locked(t);
    pthread_mutex_unlock(&ts->lock);
    if (logid) {
        th_call_log_line(e->name, logid, started_ms, outcome);
        if (ts->cfg.run_over)
            ts->cfg.run_over(who, e, outcome, th_now_ms() - started_ms, args);
    }
    free(who);
    json_object_put(logid);
    th_call_free(call);
    json_object_put(args);
    json_object_put(params);
    th_registry_unref(reg);
    th_registry_unref(run_reg);
    if (f)
        task_free(f);
    free_chain(dead);
    flush(ts);
}

/* Queued past the pool's queue timeout: every thread was taken. */
static void expire_task(void *p)
{
    task *t = p;
    th_tasks *ts = t->ts;
    th_registry *reg = NULL;
    pthread_mutex_lock(&ts->lock);
    if (t->st == T_WORKING)
        finish(t, T_FAILED, NULL,
               rpc_error(TH_RPC_SERVER_BUSY, "Server busy: no tool thread became free for the task; it was not run"),
               &reg);
    task *f = unref_locked(t);
    pthread_mutex_unlock(&ts->lock);
    th_registry_unref(reg);
    if (f)
        task_free(f);
    flush(ts);
}

/* Queue a run of T (status working). Under ts->lock. */
static void schedule(task *t)
{
    t->refs++;
    if (th_pool_submit_ex(t->ts->pool, run_task, expire_task, t) != TH_OK) {
        th_registry *reg = NULL;
        t->refs--;
        finish(t, T_FAILED, NULL, rpc_error(TH_RPC_INTERNAL_ERROR, "Internal error: the server is shutting down"),
               &reg);
        th_registry_unref(reg); /* never the last reference: the task's call holds the server's */
    }
}

/* ---- the store's API ---------------------------------------------------- */

static json_object *create(th_tasks *ts, task_era era, th_registry *reg, const th_entry *e, json_object *args,
                           json_object *answers, const char *owner, const char *who, unsigned caps,
                           long long ttl_ms, json_object *token, const th_tasks_peer *peer, int *code, char *msg,
                           size_t msgsize)
{
    unsigned char raw[ID_BYTES];
    task *dead = NULL, *t = calloc(1, sizeof *t);
    json_object *out = NULL;
    if (!answers)
        answers = json_object_new_object();
    if (!t || !(t->owner = strdup(owner ? owner : "")) || (who && !(t->who = strdup(who))) || !(t->answers = answers) ||
        getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw) {
        *code = TH_RPC_INTERNAL_ERROR;
        snprintf(msg, msgsize, "Internal error: the task could not be created (out of memory or no randomness)");
        json_object_put(args);
        json_object_put(answers);
        if (t) {
            free(t->owner);
            free(t->who);
            free(t);
        }
        return NULL;
    }
    for (size_t i = 0; i < ID_BYTES; i++)
        snprintf(t->id + 2 * i, 3, "%02x", raw[i]);
    t->ts = ts;
    t->refs = 1;
    t->stored = true;
    t->st = T_WORKING;
    t->era = era;
    /* A client may ask for a shorter life than the store's, not a longer
     * one (2025-11-25: "Receivers MAY override the requested ttl"). */
    t->ttl_ms = ttl_ms > 0 && ttl_ms < ts->cfg.ttl_ms ? ttl_ms : ts->cfg.ttl_ms;
    if (peer) {
        t->has_peer = true;
        t->peer = *peer;
        t->peer.hold(t->peer.ctx);
    }
    if (token && json_object_deep_copy(token, &t->token, NULL) != 0)
        t->token = NULL;
    t->created_wall = t->updated_wall = wall_ms();
    t->expires = th_now_ms() + t->ttl_ms;
    t->reg = th_registry_ref(reg);
    t->entry = e;
    t->args = args;
    t->caps = caps;

    pthread_mutex_lock(&ts->lock);
    sweep(ts, &dead);
    size_t active = 0;
    for (task *o = ts->head; o; o = o->next)
        if (!TERMINAL(o->st) && strcmp(o->owner, t->owner) == 0)
            active++;
    if (active >= ts->cfg.max_active) {
        *code = TH_RPC_SERVER_BUSY;
        snprintf(msg, msgsize,
                 "Server busy: this client has %zu unfinished tasks (--max-tasks %zu); wait for or cancel some",
                 active, ts->cfg.max_active);
    } else if (ts->count >= ts->cfg.max_stored) {
        *code = TH_RPC_SERVER_BUSY;
        snprintf(msg, msgsize, "Server busy: %zu tasks are kept (until their TTL of %lld ms ends); retry later",
                 ts->count, ts->cfg.ttl_ms);
    } else {
        t->next = ts->head;
        ts->head = t;
        ts->count++;
        /* In the store before the answer goes out: a tasks/get right after
         * the CreateTaskResult finds it. */
        out = task_json(t);
        if (era == ERA_CORE) { /* CreateTaskResult {task: Task} */
            json_object *wrap = json_object_new_object();
            put(wrap, "task", out);
            out = wrap;
            t->unstarted = true; /* th_tasks_start, once the answer is out */
        } else {
            put(out, "resultType", json_object_new_string("task"));
            schedule(t);
        }
        t = NULL;
    }
    pthread_mutex_unlock(&ts->lock);
    if (t)
        task_free(t);
    free_chain(dead);
    flush(ts);
    if (!out && *code == 0) {
        *code = TH_RPC_INTERNAL_ERROR;
        snprintf(msg, msgsize, "Internal error: out of memory");
    }
    return out;
}

json_object *th_tasks_create(th_tasks *ts, th_registry *reg, const th_entry *e, json_object *args,
                             json_object *answers, const char *owner, const char *who, unsigned caps, int *code,
                             char *msg, size_t msgsize)
{
    return create(ts, ERA_EXTENSION, reg, e, args, answers, owner, who, caps, 0, NULL, NULL, code, msg, msgsize);
}

json_object *th_tasks_create_core(th_tasks *ts, th_registry *reg, const th_entry *e, json_object *args,
                                  const char *owner, const char *who, unsigned caps, long long ttl_ms,
                                  json_object *token, const th_tasks_peer *peer, int *code, char *msg,
                                  size_t msgsize)
{
    return create(ts, ERA_CORE, reg, e, args, NULL, owner, who, caps, ttl_ms, token, peer, code, msg, msgsize);
}

void th_tasks_start(th_tasks *ts, const char *id, const char *owner)
{
    pthread_mutex_lock(&ts->lock);
    task *t = find(ts, id, owner);
    if (t && t->unstarted) {
        t->unstarted = false;
        if (t->st == T_WORKING) /* else cancelled before it began */
            schedule(t);
    }
    pthread_mutex_unlock(&ts->lock);
    flush(ts);
}

/* tasks/update: keep the answers to pending questions; once none is left
 * the call runs again with all of them. Unknown keys are ignored. */
static void update(task *t, json_object *responses)
{
    if (t->st != T_INPUT_REQUIRED || !t->pending)
        return;
    json_object_object_foreach(responses, key, val)
    {
        if (!json_object_object_get_ex(t->pending, key, NULL) || !json_object_is_type(val, json_type_object))
            continue;
        json_object_object_add(t->answers, key, json_object_get(val));
        json_object_object_del(t->pending, key);
    }
    t->updated_wall = wall_ms();
    if (json_object_object_length(t->pending) == 0) {
        json_object_put(t->pending);
        t->pending = NULL;
        t->st = T_WORKING;
        schedule(t);
    }
}

json_object *th_tasks_request(th_tasks *ts, const char *method, json_object *params, const char *owner,
                              int *code, char *msg, size_t msgsize)
{
    enum { GET, UPDATE, CANCEL } which;
    if (strcmp(method, "tasks/get") == 0)
        which = GET;
    else if (strcmp(method, "tasks/update") == 0)
        which = UPDATE;
    else if (strcmp(method, "tasks/cancel") == 0)
        which = CANCEL;
    else {
        *code = TH_RPC_METHOD_NOT_FOUND;
        snprintf(msg, msgsize, "Method not found: %s", method);
        return NULL;
    }
    json_object *idv = NULL, *responses = NULL;
    if (!params || !json_object_object_get_ex(params, "taskId", &idv) || !json_object_is_type(idv, json_type_string)) {
        *code = TH_RPC_INVALID_PARAMS;
        snprintf(msg, msgsize, "Invalid params: %s needs a string \"taskId\"", method);
        return NULL;
    }
    if (which == UPDATE && (!json_object_object_get_ex(params, "inputResponses", &responses) ||
                            !json_object_is_type(responses, json_type_object))) {
        *code = TH_RPC_INVALID_PARAMS;
        snprintf(msg, msgsize, "Invalid params: tasks/update needs an object \"inputResponses\"");
        return NULL;
    }
    const char *id = json_object_get_string(idv);
    task *dead = NULL;
    json_object *out = NULL;
    th_registry *reg = NULL;
    pthread_mutex_lock(&ts->lock);
    sweep(ts, &dead);
    task *t = find(ts, id, owner);
    if (!t) {
        *code = TH_RPC_INVALID_PARAMS;
        snprintf(msg, msgsize, "Invalid params: unknown task '%.64s' (never created, or past its TTL)", id);
    } else if (which == GET) {
        out = detailed_json(t);
    } else {
        if (which == UPDATE) {
            update(t, responses);
        } else if (!TERMINAL(t->st)) {
            /* Cancelled now, whatever the handler still does: its late
             * result is dropped when it returns. */
            if (t->call)
                th_call_cancel(t->call);
            finish(t, T_CANCELLED, NULL, NULL, &reg);
        }
        out = json_object_new_object(); /* an empty ack: the state is for tasks/get */
    }
    pthread_mutex_unlock(&ts->lock);
    th_registry_unref(reg);
    free_chain(dead);
    flush(ts);
    if (t && !out) {
        *code = TH_RPC_INTERNAL_ERROR;
        snprintf(msg, msgsize, "Internal error: out of memory");
    }
    return out;
}

/* ---- 2025-11-25: tasks/get, tasks/result, tasks/list, tasks/cancel ---- */

static void expiry_passed(void *p);

/* The longest the store's expiry timer sleeps while a tasks/result
 * waits: an armed timer cannot be moved earlier under the store's lock
 * (stopping it waits for its callback, which takes that lock), so a wait
 * on a task that expires sooner than the one it was armed for is answered
 * at most this late. */
#define EXPIRY_TICK_MS 1000

/* Keep the expiry timer armed while a tasks/result waits, so a task that
 * passes its TTL answers its waits (-32602) even when nothing else calls
 * the store. One timer for the store, at AT or within EXPIRY_TICK_MS; it
 * re-arms itself while waits remain. Under ts->lock. */
static void arm_expiry(th_tasks *ts, long long at)
{
    if (ts->expiry_armed || ts->closing)
        return;
    long long tick = th_now_ms() + EXPIRY_TICK_MS;
    if (th_pool_timer_start(ts->pool, &ts->expiry, at < tick ? at : tick, expiry_passed, ts) == TH_OK)
        ts->expiry_armed = true;
}

static void expiry_passed(void *p)
{
    th_tasks *ts = p;
    task *dead = NULL;
    pthread_mutex_lock(&ts->lock);
    ts->expiry_armed = false;
    sweep(ts, &dead);
    long long next = 0;
    for (task *t = ts->head; t; t = t->next)
        if (t->waiters && (!next || t->expires < next))
            next = t->expires;
    if (next) /* its own timer: re-arming from the callback is allowed */
        arm_expiry(ts, next);
    pthread_mutex_unlock(&ts->lock);
    free_chain(dead);
    flush(ts);
}

static json_object *core_error(json_object *id, int code, const char *fmt, const char *arg)
{
    char m[256];
    snprintf(m, sizeof m, fmt, arg);
    th_utf8_clip(m);
    return th_rpc_error(id, code, m, NULL);
}

/* tasks/list: OWNER's tasks, oldest first (a task created between two
 * pages lands on a later one instead of shifting the rest), LIST_PAGE at a
 * time (cursors of protocol/pagination.c). Under ts->lock. */
static json_object *list_tasks(th_tasks *ts, json_object *params, const char *owner, json_object *id)
{
    size_t count = 0, offset = 0, end = 0;
    for (task *t = ts->head; t; t = t->next)
        count += strcmp(t->owner, owner) == 0;
    if (!th_page_window(params, LIST_CURSOR, count, LIST_PAGE, &offset, &end))
        return th_rpc_error(id, TH_RPC_INVALID_PARAMS, "Invalid params: invalid cursor for tasks/list", NULL);
    const task **mine = count ? malloc(count * sizeof *mine) : NULL;
    json_object *res = json_object_new_object(), *arr = json_object_new_array();
    if (count && !mine) {
        json_object_put(arr);
        arr = NULL;
    }
    size_t n = count;
    for (task *t = ts->head; mine && t; t = t->next)
        if (strcmp(t->owner, owner) == 0)
            mine[--n] = t; /* the store's list is newest first */
    for (size_t i = offset; arr && i < end; i++)
        json_object_array_add(arr, task_json(mine[i]));
    free(mine);
    put(res, "tasks", arr);
    if (res)
        th_page_next(res, LIST_CURSOR, end, count);
    return res && arr ? th_rpc_result(id, res)
                      : (json_object_put(res), th_rpc_error(id, TH_RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL));
}

json_object *th_tasks_core_request(th_tasks *ts, const char *method, json_object *params, const char *owner,
                                   json_object *id, const th_tasks_peer *peer)
{
    enum { GET, RESULT, LIST, CANCEL } which;
    static const char *const names[] = {"tasks/get", "tasks/result", "tasks/list", "tasks/cancel"};
    for (which = GET; which <= CANCEL; which++)
        if (strcmp(method, names[which]) == 0)
            break;
    if (which > CANCEL)
        return core_error(id, TH_RPC_METHOD_NOT_FOUND, "Method not found: %s", method);
    owner = owner ? owner : "";
    json_object *idv = NULL;
    if (which != LIST &&
        (!params || !json_object_object_get_ex(params, "taskId", &idv) || !json_object_is_type(idv, json_type_string)))
        return core_error(id, TH_RPC_INVALID_PARAMS, "Invalid params: %s needs a string \"taskId\"", method);
    task *dead = NULL;
    th_registry *reg = NULL;
    json_object *res = NULL;
    pthread_mutex_lock(&ts->lock);
    sweep(ts, &dead);
    task *t = which == LIST ? NULL : find(ts, json_object_get_string(idv), owner);
    if (which == LIST) {
        res = list_tasks(ts, params, owner, id);
    } else if (!t || t->era != ERA_CORE) {
        res = core_error(id, TH_RPC_INVALID_PARAMS,
                         "Failed to retrieve task: Task not found ('%.64s': never created, or past its ttl)",
                         json_object_get_string(idv));
    } else if (which == GET) {
        res = th_rpc_result(id, task_json(t));
    } else if (which == CANCEL) {
        if (TERMINAL(t->st)) {
            res = core_error(id, TH_RPC_INVALID_PARAMS, "Cannot cancel task: already in terminal status '%s'",
                             status_names[t->st]);
        } else {
            /* Cancelled before the answer goes out, whatever the handler
             * still does: its late result is dropped when it returns. */
            if (t->call)
                th_call_cancel(t->call);
            finish(t, T_CANCELLED, NULL, NULL, &reg);
            res = th_rpc_result(id, task_json(t));
        }
    } else if (TERMINAL(t->st)) {
        res = outcome_response(t, id);
    } else {
        /* Blocks, as the spec says, but holds no thread: answered by
         * finish, by expiry (unstore) or dropped by th_tasks_drop_owner. */
        pending_out *w = calloc(1, sizeof *w);
        if (!w || json_object_deep_copy(id, &w->id, NULL) != 0) {
            free(w);
            res = th_rpc_error(id, TH_RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
        } else {
            w->peer = *peer;
            w->peer.hold(w->peer.ctx);
            w->peer.wait_begin(w->peer.ctx);
            w->wait = true;
            w->next = t->waiters;
            t->waiters = w;
            arm_expiry(ts, t->expires);
        }
    }
    pthread_mutex_unlock(&ts->lock);
    th_registry_unref(reg);
    free_chain(dead);
    flush(ts);
    return res;
}

void th_tasks_drop_owner(th_tasks *ts, const char *owner)
{
    task *dead = NULL;
    pthread_mutex_lock(&ts->lock);
    for (task *t = ts->head, *next; t; t = next) {
        next = t->next;
        if (strcmp(t->owner, owner) != 0)
            continue;
        while (t->waiters) { /* ended without a word: nobody reads it */
            pending_out *w = t->waiters;
            t->waiters = w->next;
            out_queue(ts, w);
        }
        task *f = unstore(ts, t); /* cancels what still runs */
        if (f) {
            f->next = dead;
            dead = f;
        }
    }
    pthread_mutex_unlock(&ts->lock);
    free_chain(dead);
    flush(ts);
}

void th_tasks_cancel_all(th_tasks *ts)
{
    if (!ts)
        return;
    pthread_mutex_lock(&ts->lock);
    ts->closing = true;
    for (task *t = ts->head; t; t = t->next)
        if (t->call)
            th_call_cancel(t->call);
    pthread_mutex_unlock(&ts->lock);
    th_pool_timer_stop(ts->pool, &ts->expiry);
}

size_t th_tasks_count(th_tasks *ts)
{
    pthread_mutex_lock(&ts->lock);
    size_t n = ts->count;
    pthread_mutex_unlock(&ts->lock);
    return n;
}

void th_tasks_free(th_tasks *ts)
{
    if (!ts)
        return;
    pthread_mutex_lock(&ts->lock);
    for (task *t = ts->head; t; t = t->next)
        answer_waiters(t, TH_RPC_INTERNAL_ERROR, "Internal error: the server is shutting down");
    pthread_mutex_unlock(&ts->lock);
    flush(ts);
    task *t = ts->head;
    while (t) {
        task *next = t->next;
        task_free(t); /* no run is left: the pool has been shut down */
        t = next;
    }
    pthread_mutex_destroy(&ts->lock);
    free(ts);
}
