/* SPDX-License-Identifier: MIT */
/*
** protocol/mcpcall.c: tools/call for both eras: the session's table of
** calls in flight, the checks of a result against the tool's output schema,
** deadlines and cancellation, the answer (in a batch, as text, or late from
** a worker), and the adapters that run a call as a task of either era.
*/
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "call/rawresult.h"
#include "call/ask.h"
#include "call/callctx.h"
#include "call/calllog.h"
#include "call/crashnote.h"
#include "protocol/jsonrpc.h"
#include "base/log.h"
#include "base/metrics.h"
#include "protocol/mcpobserve.h"
#include "protocol/mcp.h"
#include "protocol/subscriptions.h"
#include "plugin/reload.h"
#include "protocol/mcpresources.h"
#include "protocol/mcpprompts.h"
#include "protocol/mcpskills.h"
#include "plugin/prompts.h"
#include "base/util.h"
#include "call/workpool.h"
#include "protocol/mcpasks.h"
#include "protocol/mrtr.h"
#include "protocol/tasks.h"
#include "plugin/resources.h"
#include "base/jsontree.h"
#include "base/scratch.h"
#include "protocol/mcpint.h"

/* ---- tools/call -------------------------------------------------------- */

static size_t key_hash(const char *key)
{
    size_t h = 5381;
    for (const char *p = key; *p; p++)
        h = h * 33 + (unsigned char)*p;
    return h;
}

/* A call's bucket by its key's hash (kept in the job: a call looks for
 * its bucket three times). */
static job **bucket_at(th_mcp_session *s, size_t hash)
{
    return &s->inflight[hash % s->nbuckets];
}

/* Before one more call goes in: many in flight get the full table (when
 * it cannot be had, chains grow longer instead). Under s->lock. */
static void buckets_grow(th_mcp_session *s)
{
    if (s->nbuckets != FEW_BUCKETS || s->nunanswered < FEW_BUCKETS * FEW_LOAD)
        return;
    job **all = calloc(INFLIGHT_BUCKETS, sizeof *all);
    if (!all)
        return;
    for (size_t b = 0; b < FEW_BUCKETS; b++)
        for (job *j = s->few[b], *next; j; j = next) {
            next = j->next;
            j->next = all[j->hash % INFLIGHT_BUCKETS];
            all[j->hash % INFLIGHT_BUCKETS] = j;
        }
    s->inflight = all;
    s->nbuckets = INFLIGHT_BUCKETS;
}

static job *find_job_h(th_mcp_session *s, const char *key, size_t hash)
{
    for (job *j = *bucket_at(s, hash); j; j = j->next)
        if (strcmp(j->key, key) == 0)
            return j;
    return NULL;
}

job *th_mcpi_find_job(th_mcp_session *s, const char *key)
{
    return find_job_h(s, key, key_hash(key));
}

/* Forget J's id: from now on the client may reuse it. Under s->lock. */
static void unlink_job(th_mcp_session *s, job *j)
{
    s->nunanswered--;
    for (job **pp = bucket_at(s, j->hash); *pp; pp = &(*pp)->next) {
        if (*pp == j) {
            *pp = j->next;
            break;
        }
    }
}

/* J's handler has returned: it no longer counts. Under s->lock. */
void th_mcpi_job_done(th_mcp_session *s)
{
    s->ninflight--;
}

/* A call's response is written, or dropped: a drain no longer waits for
 * it, even while a timed-out handler still runs. Under s->lock. */
void th_mcpi_response_out(th_mcp_session *s)
{
    if (--s->nopen == 0)
        pthread_cond_broadcast(&s->idle);
}

/* Outcomes are counted under the names the call log gives them. */
_Static_assert((int)TH_METRICS_OK == (int)TH_OUTCOME_OK && (int)TH_METRICS_ERROR == (int)TH_OUTCOME_ERROR &&
                   (int)TH_METRICS_CRASH == (int)TH_OUTCOME_CRASH &&
                   (int)TH_METRICS_TIMEOUT == (int)TH_OUTCOME_TIMEOUT &&
                   (int)TH_METRICS_CANCELLED == (int)TH_OUTCOME_CANCELLED &&
                   (int)TH_METRICS_BUSY == (int)TH_OUTCOME_BUSY &&
                   (int)TH_METRICS_LIMITED == (int)TH_OUTCOME_LIMITED,
               "th_metrics_outcome follows th_call_outcome");

static void job_free(job *j)
{
    if (j->key != j->key_here)
        free(j->key);
    th_call_free(j->call);
    th_mrtr_free(j->mrtr);
    json_object_put(j->args);
    json_object_put(j->id);
    json_object_put(j->token);
    if (j->obs) /* never ran: refused at the door */
        th_reqobs_call_end(j->obs, TH_METRICS_BUSY, th_now_ns());
    th_registry_unref(j->reg);
    th_mcpi_gate_drop(&j->gate); /* a call refused after it passed the limits */
    th_mcpi_session_unref(j->s);
    free(j);
}

void th_mcpi_notify_hook(void *ctx, json_object *notification)
{
    th_mcpi_send_msg(ctx, notification);
}

/*
** A tool that declares an output schema promises structuredContent matching
** it (clients validate it and fail the call otherwise). A successful result
** that breaks the promise becomes a tool error naming what is wrong, so the
** fault is reported as the plugin's rather than surfacing in the client.
*/
json_object *th_mcpi_check_output(const th_entry *e, json_object *result, bool *failed)
{
    json_object *is_error, *sc;
    if (e->output_validator)
        result = th_raw_result_tree(result); /* to look into (a worker's is never raw then) */
    if (!e->output_validator || !result ||
        (json_object_object_get_ex(result, "isError", &is_error) && json_object_get_boolean(is_error)))
        return result;
    char *violations = NULL;
    th_buf msg = {0};
    if (!json_object_object_get_ex(result, "structuredContent", &sc))
        th_buf_printf(&msg, "Tool '%s' declares an outputSchema but returned no structuredContent", e->name);
    else if (th_schema_validate(e->output_validator, sc, &violations) > 0)
        th_buf_printf(&msg, "Tool '%s' returned structuredContent that does not match its outputSchema:\n%s",
                      e->name, violations ? violations : "");
    free(violations);
    if (!msg.data)
        return result;
    th_log(TH_LOG_ERROR, "%s", msg.data);
    *failed = true;
    json_object_put(result);
    result = json_object_new_object();
    json_object *content = json_object_new_array();
    json_object *text = json_object_new_object();
    th_mcpi_put(text, "type", json_object_new_string("text"));
    th_mcpi_put(text, "text", json_object_new_string(msg.data));
    th_mcpi_push(content, text);
    th_mcpi_put(result, "content", content);
    th_mcpi_put(result, "isError", json_object_new_boolean(1));
    free(msg.data);
    return result;
}

/*
** Content block types and the first revision that defines each. An older
** client's schema rejects a result holding a newer block, so such a block
** is replaced by a text block that says what it was (a resource link keeps
** its URI, which is what the model needs).
*/
static const struct {
    const char *type;
    int since;
} block_since[] = {
    {.type = "audio", .since = V_2025_03_26},
    {.type = "resource_link", .since = V_2025_06_18},
};

static json_object *downgrade_block(json_object *b, int v)
{
    json_object *t;
    const char *type =
        json_object_object_get_ex(b, "type", &t) && json_object_is_type(t, json_type_string) ? json_object_get_string(t)
                                                                                               : "";
    for (size_t i = 0; i < sizeof block_since / sizeof block_since[0]; i++) {
        if (strcmp(type, block_since[i].type) != 0 || v >= block_since[i].since)
            continue;
        json_object *f, *text = json_object_new_object();
        char msg[1024];
        if (!strcmp(type, "resource_link"))
            snprintf(msg, sizeof msg, "[resource: %s <%s>]",
                     json_object_object_get_ex(b, "name", &f) ? json_object_get_string(f) : "",
                     json_object_object_get_ex(b, "uri", &f) ? json_object_get_string(f) : "");
        else
            snprintf(msg, sizeof msg, "[%s content (%s) omitted: protocol %s cannot carry it]", type,
                     json_object_object_get_ex(b, "mimeType", &f) ? json_object_get_string(f) : "unknown type",
                     th_mcpi_versions[v]);
        th_utf8_clip(msg);
        th_mcpi_put(text, "type", json_object_new_string("text"));
        th_mcpi_put(text, "text", json_object_new_string(msg));
        return text;
    }
    return NULL;
}

/* Fit RESULT to legacy revision V: newer block types become text, and
 * structuredContent (2025-06-18) is dropped before its revision (its text
 * serialisation is already among the blocks). */
static void fit_result(json_object *result, int v)
{
    json_object *content;
    if (v >= V_2025_06_18)
        return;
    json_object_object_del(result, "structuredContent");
    if (!json_object_object_get_ex(result, "content", &content) || !json_object_is_type(content, json_type_array))
        return;
    for (size_t i = 0; i < json_object_array_length(content); i++) {
        json_object *repl = downgrade_block(json_object_array_get_idx(content, i), v);
        if (repl)
            json_object_array_put_idx(content, i, repl);
    }
}

/* th_validate_opts.cancelled for a call: a cancelled call's argument
 * validation stops instead of running to the end of its budget. */
bool th_mcpi_validation_cancelled(void *call)
{
    return th_call_cancelled(call);
}

/* Send J's RESULT (taken), fitted to its era; NULL means it could not be
 * built, which the client learns as -32603. FAILED: the host failed the
 * call (crash, quarantine, timeout, error code, refused arguments or
 * result): the one place such a text is worded for the client, as the
 * delegation error of doc/registry-rules.md, 7, when the tool's name is
 * qualified. */
static void send_call_result(job *j, json_object *result, bool failed)
{
    th_mcp_session *s = j->s;
    if (result && failed && j->entry->qualified && (result = th_raw_result_tree(result)))
        result = th_qualname_delegation_error(j->entry, result);
    if (!result) {
        th_mcpi_send_error(s, j->id, TH_RPC_INTERNAL_ERROR, "Internal error: out of memory building the result", NULL);
        return;
    }
    request r = {.s = s, .modern = j->modern};
    /* A worker's result as it sent it, unless an older client needs it
     * changed. */
    if (!j->modern && j->version < V_2025_06_18 && !(result = th_raw_result_tree(result))) {
        th_mcpi_send_error(s, j->id, TH_RPC_INTERNAL_ERROR, "Internal error: out of memory building the result", NULL);
        return;
    }
    if (!j->modern)
        fit_result(result, j->version);
    /* The common case costs no tree for the envelope and the modern
     * members; a result that sets those members itself is built whole, so
     * th_mcpi_finish_result's values replace its own as before. */
    const char *tail = j->modern ? s->mcp->result_tail : NULL;
    if ((!j->modern || tail) && !th_json_get(result, "resultType", NULL) &&
        !th_json_get(result, "_meta", NULL)) {
        th_mcpi_send_msg(s, th_rpc_result_spliced(j->id, result, tail));
        return;
    }
    th_mcpi_finish_result(&r, result);
    th_mcpi_send_msg(s, th_rpc_result(j->id, result));
}

static void job_answer(job *j, json_object *result, const char *busy);
static void finish_job(job *j, th_rc rc);
static void deadline_passed(void *p);

/* -32021: the handler asked for capabilities J's client did not declare.
 * data.requiredCapabilities is a ClientCapabilities object. */
static void send_missing_caps(job *j)
{
    json_object *data = json_object_new_object(), *req = json_object_new_object();
    th_buf names = {0};
    for (unsigned k = 1; k <= TH_ASK_ROOTS; k <<= 1)
        if (j->missing_caps & k) {
            th_mcpi_put(req, th_ask_capability(k), json_object_new_object());
            th_buf_printf(&names, "%s%s", names.len ? ", " : "", th_ask_capability(k));
        }
    th_mcpi_put(data, "requiredCapabilities", req);
    char m[512];
    snprintf(m, sizeof m,
             "Missing required client capability: tool '%s' needs %s, which the request's _meta[\"" META_CAPS
             "\"] does not declare",
             j->entry->name, names.data ? names.data : "?");
    free(names.data);
    th_mcpi_send_error(j->s, j->id, TH_RPC_MISSING_CAPABILITY, m, data);
}

/* The deadline of a call of E: the tool's own when it asked for a shorter
 * one than the host's, else the host's; 0: none. */
static long long call_timeout(const th_mcp_config *cfg, const th_entry *e)
{
    long long host = cfg->call_timeout_ms, own = e->timeout_ms;
    if (own > 0 && (host <= 0 || own < host))
        return own;
    return host > 0 ? host : 0;
}

/* Start J's deadline as its handler starts: time spent waiting for a
 * thread is bounded by the queue timeout instead. Pool thread. */
static void arm_deadline(job *j)
{
    j->timeout_ms = call_timeout(&j->s->mcp->cfg, j->entry);
    if (j->timeout_ms <= 0)
        return;
    /* A call run by the reader that read it starts now: the time it was
     * read is as good, and a clock read less. */
    j->armed_ms = j->run_by_reader ? j->started_ms : th_now_ms();
    th_rc rc = th_pool_timer_start(j->s->mcp->pool, &j->deadline, j->armed_ms + j->timeout_ms, deadline_passed, j);
    if (rc != TH_OK)
        th_log(TH_LOG_WARNING, "tool '%s': its call runs without a deadline: %s", j->entry->name, th_rc_name(rc));
}

/* "500 ms", "60 s", "1.5 s": how a deadline reads in a message. */
void th_mcpi_format_duration(char *buf, size_t size, long long ms)
{
    if (ms < 1000)
        snprintf(buf, size, "%lld ms", ms);
    else if (ms % 1000 == 0)
        snprintf(buf, size, "%lld s", ms / 1000);
    else
        snprintf(buf, size, "%g s", (double)ms / 1000.0);
}

/* The result a call that passed its deadline gets. NULL when out of memory. */
static json_object *timeout_result(const char *tool, const char *after)
{
    char msg[160];
    snprintf(msg, sizeof msg, "tool '%s' timed out after %s", tool, after);
    json_object *r = json_object_new_object(), *content = json_object_new_array(), *b = json_object_new_object();
    if (!r || !content || !b) {
        json_object_put(r);
        json_object_put(content);
        json_object_put(b);
        return NULL;
    }
    th_mcpi_put(b, "type", json_object_new_string("text"));
    th_mcpi_put(b, "text", json_object_new_string(msg));
    th_mcpi_push(content, b);
    th_mcpi_put(r, "content", content);
    th_mcpi_put(r, "isError", json_object_new_boolean(1));
    return r;
}

/*
** J's handler ran past its deadline: the client is answered now, the call
** is cancelled so a cooperative handler stops, and whatever it returns is
** discarded by job_answer. The id is free for reuse from now on, but the
** call still counts as in flight (its thread is busy) until the handler
** returns. On the pool's supervisor thread; job_answer waits for this to
** return before J can be freed.
*/
static void deadline_passed(void *p)
{
    job *j = p;
    th_mcp_session *s = j->s;
    /* The time the call waited for a worker process to start is not its
     * own (start-up has its own limit): the deadline moves by that much. */
    long long due = j->armed_ms + j->timeout_ms + th_call_startup_ms(j->call);
    if (th_now_ms() < due && th_pool_timer_start(s->mcp->pool, &j->deadline, due, deadline_passed, j) == TH_OK)
        return;
    pthread_mutex_lock(&s->lock);
    bool answer = !j->answered && !j->cancelled; /* a cancelled call gets no response */
    if (answer) {
        j->answered = true;
        unlink_job(s, j);
    }
    pthread_mutex_unlock(&s->lock);
    th_call_cancel(j->call);
    if (!answer)
        return;
    char after[32];
    th_mcpi_format_duration(after, sizeof after, j->timeout_ms);
    th_log(TH_LOG_WARNING, "tool '%s' timed out after %s; it was cancelled and its late result will be discarded",
           j->entry->name, after);
    json_object *result = timeout_result(j->entry->name, after);
    th_mcpi_answering = j->batch;
    send_call_result(j, result, true);
    th_mcpi_answering = NULL;
    if (j->batch)
        th_mcpi_batch_release(j->batch);
    pthread_mutex_lock(&s->lock);
    th_mcpi_response_out(s);
    pthread_mutex_unlock(&s->lock);
}

/* Cancelled while it waited in the queue: the client has given up on it,
 * so its handler must not run (its side effects would come after the
 * cancel). */
static bool cancelled_in_queue(job *j)
{
    pthread_mutex_lock(&j->s->lock);
    bool cancelled = j->cancelled;
    pthread_mutex_unlock(&j->s->lock);
    return cancelled;
}

static void job_reply(job *j, json_object *result, json_object *msg, const th_buf *text, bool msg_is_error,
                      const char *busy);

/*
** The common call answered without a result tree: its blocks printed
** straight into the response (a tree cost six allocations, a walk to print
** it and one to free it). Only where nothing after the handler changes the
** result: no output schema to check it against, no older revision to fit
** it to, no host failure to word, no input round pending, no batch. False
** when it does not apply: nothing was sent, and the call is finished the
** general way.
*/
static bool answer_as_text(job *j, th_rc rc)
{
    const char *tail = j->modern ? j->s->mcp->result_tail : NULL;
    if (j->entry->output_validator || j->batch || j->failed || th_call_failed(j->call) ||
        (j->modern ? !tail || j->missing_caps || th_mrtr_pending(j->mrtr) : j->version < V_2025_06_18))
        return false;
    th_buf *b = th_scratch();
    size_t at;
    if (!b || !th_rpc_response_text_begin(b, j->id, &at) || !th_call_finish_text(j->call, rc, b))
        return false;
    bool made = th_rpc_response_text_end(b, at, tail);
    /* The transport takes the text as it is, or a message that holds it. */
    json_object *msg = made && !j->s->send_text ? th_rpc_response_text(j->id, b->data, b->len, at) : NULL;
    if (!made || (!msg && !j->s->send_text))
        job_answer(j, NULL, NULL); /* the call is finished: what is left to say is -32603 */
    else
        job_reply(j, NULL, msg, msg ? NULL : b, th_call_is_error(j->call), NULL);
    th_scratch_done(b);
    return true;
}

/*
** What parsed arguments hold beyond their text, roughly: json-c spends
** about 64 bytes on a value and as much on an object member, so 20 calls
** with a 4 MB array each held 2.5 GiB while --max-inflight-bytes counted
** 80 MB of text. Counted in flight with the text, the bound is on memory.
*/
#define TREE_VALUE_BYTES 64
static size_t tree_cost(json_object *o)
{
    size_t n = TREE_VALUE_BYTES;
    if (json_object_is_type(o, json_type_array)) {
        size_t len = json_object_array_length(o);
        for (size_t i = 0; i < len; i++)
            n += tree_cost(json_object_array_get_idx(o, i));
    } else if (json_object_is_type(o, json_type_object)) {
        json_object_object_foreach(o, k, v) {
            (void)k;
            n += TREE_VALUE_BYTES + tree_cost(v);
        }
    }
    return n;
}

/*
** Validated arguments of a call its worker runs: the worker is sent their
** text (th_call_hooks.args_text), so the host need not hold the tree while
** the call runs, nor count it in flight.
*/
static void drop_args(job *j)
{
    if (!j->args_as_text || j->entry->typed || !th_call_is_waiting_handler(j->entry->handler))
        return;
    json_object *empty = json_object_new_object();
    if (!empty)
        return;
    json_object_put(j->args);
    j->args = empty;
    pthread_mutex_lock(&j->s->lock);
    j->s->inflight_bytes -= j->tree;
    j->bytes -= j->tree;
    j->tree = 0;
    pthread_mutex_unlock(&j->s->lock);
}

/* Runs on a pool thread, or on the reader (th_mcp_session_run_inline):
 * validate, call, answer (unless cancelled). */
static void run_job(void *p)
{
    job *j = p;
    /* One the reader runs as it reads it never waited in a queue. */
    if (th_metrics_enabled && !j->run_by_reader)
        th_metrics_queue_wait(th_now_ns() - j->started_ns);
    if (!j->run_by_reader && cancelled_in_queue(j)) {
        job_answer(j, NULL, NULL); /* which sends nothing for a cancelled call */
        return;
    }
    const th_entry *e = j->entry;
    json_object *result = NULL;
    char *violations = NULL;

    arm_deadline(j);
    th_validate_opts vopts = {.cancelled = th_mcpi_validation_cancelled, .ctx = j->call};
    const th_schema *validator = th_entry_validator(e);
    size_t nbad = validator ? th_schema_validate_ex(validator, j->args, &vopts, &violations) : 0;
    if (!validator) {
        th_call_fail(j->call, "Out of memory compiling the input schema of tool '%s'", e->name);
        result = th_call_finish(j->call, TH_OK);
    } else if (nbad > 0) {
        th_call_fail(j->call, "Invalid arguments for tool '%s' (%zu problem%s):\n%s", e->name, nbad,
                      nbad == 1 ? "" : "s", violations ? violations : "");
        free(violations);
        result = th_call_finish(j->call, TH_OK);
    } else {
        drop_args(j);
        int crash_slot = th_crashnote_begin(e->name); /* a fatal signal names the tool */
        th_call *h = th_call_handle(j->call); /* dies in th_call_finish: a kept one is refused */
        th_rc rc = th_entry_invoke(e, h, j->args);
        th_crashnote_end(crash_slot);
        if (!j->run_by_reader)
            th_call_flush_held(); /* a pool thread's batch is this one call */
        if (!th_call_deferred(j->call)) {
            finish_job(j, rc);
            return;
        }
        /* Its worker answers later, on the thread that reads the answer
         * (resume_job); th_mcp_free waits for that. */
        th_mcp *m = j->s->mcp;
        atomic_fetch_add(&m->deferred, 1);
        if (atomic_exchange(&j->defer_state, DEFER_RETURNED) == DEFER_RESUMED) {
            finish_job(j, j->resume_rc);
            atomic_fetch_sub(&m->deferred, 1);
        }
        return;
    }
    j->failed = j->failed || th_call_failed(j->call);
    job_answer(j, result, NULL);
}

/* The handler of J returned RC (or its worker answered, for a deferred
 * call): finish the call, check it, answer. */
static void finish_job(job *j, th_rc rc)
{
    if (answer_as_text(j, rc))
        return;
    json_object *result = th_call_finish(j->call, rc);
    if (j->modern && (j->missing_caps || th_mrtr_pending(j->mrtr))) {
        /* The handler stopped for input (see th_call_ask): what it
         * built is not the answer. */
        json_object_put(result);
        result = NULL;
        if (j->missing_caps) {
            job_answer(j, NULL, NULL);
            return;
        }
        result = th_mrtr_result(j->mrtr);
    } else {
        result = th_mcpi_check_output(j->entry, result, &j->failed);
    }
    j->failed = j->failed || th_call_failed(j->call);
    job_answer(j, result, NULL);
}

/* th_call_hooks.resume: a worker answered J's deferred call, on the thread
 * that read the answer. Finished here unless its proxy has not returned. */
static void resume_job(void *p, th_rc rc)
{
    job *j = p;
    th_mcp *m = j->s->mcp;
    j->resume_rc = rc;
    if (atomic_exchange(&j->defer_state, DEFER_RESUMED) == DEFER_RETURNED) {
        finish_job(j, rc);
        atomic_fetch_sub(&m->deferred, 1);
    }
}

/* Send J's RESULT (taken; NULL: out of memory), or the BUSY error when that
 * is not NULL, unless J was cancelled; hand J back to be freed. Pool
 * thread. */
static bool result_is_error(json_object *result)
{
    json_object *v;
    if (th_raw_result_is(result)) /* a worker's result, kept as its text */
        return th_raw_result_is_error(result);
    return th_json_get(result, "isError", &v) && json_object_get_boolean(v);
}

static void job_answer(job *j, json_object *result, const char *busy)
{
    job_reply(j, result, NULL, NULL, false, busy);
}

/* job_answer, or with MSG (taken) or TEXT (borrowed; RESULT then NULL) the
 * whole response made already, which MSG_IS_ERROR says is an isError
 * result. */
static void job_reply(job *j, json_object *result, json_object *msg, const th_buf *text, bool msg_is_error,
                      const char *busy)
{
    th_mcp_session *s = j->s;
    /* After this a passed deadline no longer answers, and one that did has
     * finished with J. */
    th_pool_timer_stop(s->mcp->pool, &j->deadline);
    /* The id, the call's slot and its bytes are released before the
     * response goes out (the handler has returned): a client may reuse the
     * id, and send its next call, as soon as it reads the response, and a
     * reader that busy-polls reads that call within a microsecond. */
    pthread_mutex_lock(&s->lock);
    bool cancelled = j->cancelled, answered = j->answered;
    j->answered = true;
    if (!answered)
        unlink_job(s, j);
    th_mcpi_job_done(s);
    s->inflight_bytes -= j->bytes;
    pthread_mutex_unlock(&s->lock);

    th_call_outcome outcome = answered    ? TH_OUTCOME_TIMEOUT
                              : cancelled ? TH_OUTCOME_CANCELLED
                              : busy      ? TH_OUTCOME_BUSY
                              : msg || text ? (msg_is_error ? TH_OUTCOME_ERROR : TH_OUTCOME_OK)
                              : !result   ? TH_OUTCOME_ERROR
                              : th_call_crashed(j->call) ? TH_OUTCOME_CRASH
                              : result_is_error(result)  ? TH_OUTCOME_ERROR
                                                         : TH_OUTCOME_OK;
    th_call_log_line(j->entry->name, j->id, j->started_ms, outcome);
    th_mcpi_gate_over(j, outcome, busy ? TH_RPC_SERVER_BUSY : 0);
    /* One clock read ends both the histogram's duration and the span. */
    long long ended_ns = th_metrics_enabled || j->obs ? th_now_ns() : 0;
    if (th_metrics_enabled)
        th_metrics_call_end(j->entry->name, (th_metrics_outcome)outcome, ended_ns - j->started_ns);
    th_reqobs_call_end(j->obs, (th_metrics_outcome)outcome, ended_ns);
    j->obs = NULL;
    th_mcpi_answering = j->batch;
    if (answered) {
        json_object_put(result); /* too late: the timeout was the answer */
        json_object_put(msg);
    } else if (cancelled) {
        json_object_put(result);
        json_object_put(msg);
    } else if (msg) {
        th_mcpi_send_msg(s, msg);
    } else if (text) {
        th_mcpi_send_text_msg(s, text->data, text->len);
    } else if (busy) {
        th_mcpi_send_error(s, j->id, TH_RPC_SERVER_BUSY, busy, NULL);
    } else if (j->modern && j->missing_caps) {
        send_missing_caps(j);
        json_object_put(result);
    } else {
        send_call_result(j, result, j->failed);
    }
    th_mcpi_answering = NULL;
    if (j->batch && !answered)
        th_mcpi_batch_release(j->batch); /* may send the whole batch's array */
    /* Only now is the call over: a drain that waits for in-flight calls
     * must also wait for their responses to be written. The request was
     * allocated by the reader thread; it is handed back to be freed there,
     * since freeing it here would contend for the reader's malloc arena on
     * every call. */
    /* The registry (and with it, after a reload, the old plugin code or
     * worker) is let go as soon as the call is over, not when the reader
     * next frees the job. */
    th_registry *reg = j->reg;
    j->reg = NULL;
    j->entry = NULL;
    pthread_mutex_lock(&s->lock);
    if (!answered)
        th_mcpi_response_out(s); /* else the deadline's answer was, when it was sent */
    bool free_here = s->closing;
    if (!free_here) {
        j->next = s->finished;
        s->finished = j;
    }
    pthread_mutex_unlock(&s->lock);
    th_registry_unref(reg);
    if (free_here)
        job_free(j);
}

/*
** J waited in the pool's queue past --queue-timeout-ms: every thread was
** taken (possibly by calls that will never return), so it is answered busy
** and never run. On the pool's supervisor thread.
*/
static void expire_job(void *p)
{
    job *j = p;
    const th_mcp_config *cfg = &j->s->mcp->cfg;
    char m[320];
    snprintf(m, sizeof m,
             "Server busy: the call waited %lld ms (--queue-timeout-ms) and none of the %zu tool threads "
             "(--max-concurrent-calls) became free; it was not run. Retry later",
             cfg->queue_timeout_ms, cfg->max_threads);
    job_answer(j, NULL, m);
}

/* Free the answered calls handed back by pool threads. Reader thread. */
void th_mcpi_free_finished(job *j)
{
    while (j) {
        job *next = j->next;
        job_free(j);
        j = next;
    }
}

/*
** th_call_hooks.ask: the handler of J asks its client (call/ask.c checked
** the request). Modern: answered from the retry or recorded for the
** InputRequiredResult. Legacy: a request to the client, waited for on the
** handler's thread. A capability the client did not declare is refused;
** in the modern era that makes the whole request -32021.
*/
static th_rc ask_hook(void *ctx, th_call *call, const char *key, const char *method, json_object *params,
                      json_object **result)
{
    job *j = ctx;
    unsigned kind = th_ask_kind_of(method);
    if (!(j->client_caps & kind)) {
        j->missing_caps |= kind;
        json_object_put(params);
        return TH_ERR_CAPABILITY;
    }
    if (j->modern)
        return th_mrtr_ask(j->mrtr, key, method, params, result); /* every modern call has one */
    return th_asks_request(j->s->asks, th_mcpi_notify_hook, j->s, j->key, method, params, th_mcpi_validation_cancelled,
                           call, result);
}

/* Whether a modern request's client declared the tasks extension (in its
 * own _meta: a 2026-07-28 client has no session to declare it in). */
static bool declares_tasks(const request *r)
{
    json_object *caps, *ext;
    return r->modern && json_object_object_get_ex(r->meta, META_CAPS, &caps) &&
           json_object_object_get_ex(caps, "extensions", &ext) && json_object_is_type(ext, json_type_object) &&
           json_object_object_get_ex(ext, TH_TASKS_EXTENSION, NULL);
}

/* -32021 naming the tasks extension as the capability WHY needs. */
static void send_tasks_required(const request *r, const char *why)
{
    json_object *data = json_object_new_object(), *req = json_object_new_object(), *ext = json_object_new_object();
    th_mcpi_put(ext, TH_TASKS_EXTENSION, json_object_new_object());
    th_mcpi_put(req, "extensions", ext);
    th_mcpi_put(data, "requiredCapabilities", req);
    char m[400];
    snprintf(m, sizeof m,
             "Missing required client capability: %s needs the " TH_TASKS_EXTENSION
             " extension in _meta[\"" META_CAPS "\"].extensions",
             why);
    th_utf8_clip(m);
    th_mcpi_send_error(r->s, r->msg->id, TH_RPC_MISSING_CAPABILITY, m, data);
}

/*
** A call of E (task support declared) from a client that may run it as a
** task: the task is created and the CreateTaskResult answers the call.
** Returns false when the call runs synchronously instead.
*/
static bool call_as_task(request *r, const th_entry *e, json_object *args, th_mrtr *mrtr)
{
    json_object *answers = th_mrtr_answers(mrtr), *copy = NULL, *given = NULL;
    if (!answers) {
        th_mcpi_send_error(r->s, r->msg->id, TH_RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
        return true;
    }
    /* A tool that gathers its input first is a task only once answers
     * came: until then its rounds are synchronous. */
    if ((e->task_support & TH_TASK_AFTER_INPUT) && json_object_object_length(answers) == 0)
        return false;
    if (!declares_tasks(r)) {
        if ((e->task_support & ~(uint32_t)TH_TASK_AFTER_INPUT) != TH_TASK_REQUIRED)
            return false;
        char why[160];
        snprintf(why, sizeof why, "tool '%.100s' runs only as a task:", e->name);
        send_tasks_required(r, why);
        return true;
    }
    json_object *caps = NULL;
    json_object_object_get_ex(r->meta, META_CAPS, &caps);
    if (args && json_object_deep_copy(args, &copy, NULL) != 0)
        copy = NULL;
    if (!args)
        copy = json_object_new_object();
    if (answers && json_object_deep_copy(answers, &given, NULL) != 0)
        given = NULL;
    int code = TH_RPC_INTERNAL_ERROR;
    char msg[320] = "Internal error: out of memory";
    json_object *res = NULL;
    if (copy && (given || !answers))
        res = th_tasks_create(r->s->mcp->tasks, r->reg, e, copy, given, r->s->principal, r->s->who,
                              th_ask_caps_of(caps), &code, msg, sizeof msg);
    else {
        json_object_put(copy);
        json_object_put(given);
    }
    if (res)
        th_mcpi_reply(r, res);
    else
        th_mcpi_send_error(r->s, r->msg->id, code, msg, NULL);
    return true;
}

static void legacy_tasks_request(request *r);

/* tasks/get, tasks/update, tasks/cancel (protocol/tasks.c); at
 * 2025-11-25 also tasks/result and tasks/list (legacy_tasks_request). */
void th_mcpi_m_tasks(request *r)
{
    if (!r->modern) {
        legacy_tasks_request(r);
        return;
    }
    if (!declares_tasks(r)) {
        send_tasks_required(r, r->msg->method);
        return;
    }
    int code = 0;
    char msg[320];
    json_object *res =
        th_tasks_request(r->s->mcp->tasks, r->msg->method, r->msg->params, r->s->principal, &code, msg, sizeof msg);
    if (res)
        th_mcpi_reply(r, res);
    else
        th_mcpi_send_error(r->s, r->msg->id, code, msg, NULL);
}

/* ---- tasks of 2025-11-25 (the store: protocol/tasks.c) ----------------- */

/*
** capabilities.tasks of a 2025-11-25 initialize: declared whatever tools
** are loaded now, since capabilities cannot change within a session but a
** reload may bring a tool with task support; each tool's
** execution.taskSupport says which may run as one. tasks/list is declared
** because every task is bound to the session that made it (and to its
** principal): a requester sees only its own.
*/
json_object *th_mcpi_legacy_tasks_capability(void)
{
    json_object *t = json_object_new_object(), *req = json_object_new_object(), *tools = json_object_new_object();
    th_mcpi_put(t, "list", json_object_new_object());
    th_mcpi_put(t, "cancel", json_object_new_object());
    th_mcpi_put(tools, "call", json_object_new_object());
    th_mcpi_put(req, "tools", tools);
    th_mcpi_put(t, "requests", req);
    return t;
}

/* The session as a task's requester (th_tasks_peer). */
static void peer_send(void *ctx, json_object *msg)
{
    th_mcpi_send_msg(ctx, msg);
}

static th_rc peer_ask(void *ctx, th_call *call, const char *key, const char *method, json_object *params,
                      json_object **result)
{
    th_mcp_session *s = ctx;
    return th_asks_request(s->asks, th_mcpi_notify_hook, s, key, method, params, th_mcpi_validation_cancelled, call,
                           result);
}

static void peer_hold(void *ctx)
{
    atomic_fetch_add(&((th_mcp_session *)ctx)->refs, 1);
}

static void peer_release(void *ctx)
{
    th_mcpi_session_unref(ctx);
}

/* A deferred tasks/result counts as a call in flight: a drain waits for it. */
static void peer_wait_begin(void *ctx)
{
    th_mcp_session *s = ctx;
    pthread_mutex_lock(&s->lock);
    s->nopen++;
    pthread_mutex_unlock(&s->lock);
}

static void peer_wait_end(void *ctx)
{
    th_mcp_session *s = ctx;
    pthread_mutex_lock(&s->lock);
    th_mcpi_response_out(s);
    pthread_mutex_unlock(&s->lock);
}

/* Whose tasks this session's are: the session itself (over stdio its one
 * client, over HTTP its Mcp-Session-Id) and the principal it was
 * authenticated as. Made on first use; NULL when out of memory. */
static const char *legacy_tasks_owner(th_mcp_session *s)
{
    static atomic_ullong serial;
    pthread_mutex_lock(&s->lock);
    if (!s->task_owner) {
        char head[48];
        snprintf(head, sizeof head, "\x1flegacy session %llu\x1f", (unsigned long long)atomic_fetch_add(&serial, 1));
        size_t n = strlen(head) + (s->principal ? strlen(s->principal) : 0) + 1;
        if ((s->task_owner = malloc(n)))
            snprintf(s->task_owner, n, "%s%s", head, s->principal ? s->principal : "");
    }
    const char *owner = s->task_owner;
    pthread_mutex_unlock(&s->lock);
    return owner;
}

static th_tasks_peer legacy_peer(const request *r)
{
    return (th_tasks_peer){.ctx = r->s,
                           .send = peer_send,
                           .ask = peer_ask,
                           .hold = peer_hold,
                           .release = peer_release,
                           .wait_begin = peer_wait_begin,
                           .wait_end = peer_wait_end,
                           .log_to_client = r->log_to_client,
                           .log_level = r->log_level};
}

/*
** tools/call at 2025-11-25, by the tool-level negotiation of its tasks
** page: params.task runs the call as a task (CreateTaskResult) when the
** tool allows it; a task for a tool that forbids it, or a plain call of
** one that requires it, is -32601. Returns false when the call runs as a
** plain call.
*/
static bool legacy_call_as_task(request *r, const th_entry *e, json_object *args, json_object *token)
{
    static const char *const support[] = {"forbidden", "optional", "required"};
    uint32_t ts = e->task_support & ~(uint32_t)TH_TASK_AFTER_INPUT;
    json_object *task = NULL, *ttl = NULL;
    bool wants = json_object_object_get_ex(r->msg->params, "task", &task) && !json_object_is_type(task, json_type_null);
    if (!wants && ts != TH_TASK_REQUIRED)
        return false;
    if (!wants || ts == TH_TASK_FORBIDDEN) {
        th_mcpi_send_errorf(r->s, r->msg->id, TH_RPC_METHOD_NOT_FOUND,
                            wants ? "Method not found: tool '%s' cannot run as a task (its execution.taskSupport "
                                    "is \"%s\"); call it without params.task"
                                  : "Method not found: tool '%s' runs only as a task (its execution.taskSupport "
                                    "is \"%s\"); call it with params.task",
                            e->name, support[ts < 3 ? ts : 0]);
        return true;
    }
    if (!json_object_is_type(task, json_type_object) ||
        (json_object_object_get_ex(task, "ttl", &ttl) && !json_object_is_type(ttl, json_type_null) &&
         !json_object_is_type(ttl, json_type_int) && !json_object_is_type(ttl, json_type_double))) {
        th_mcpi_send_error(r->s, r->msg->id, TH_RPC_INVALID_PARAMS,
                           "Invalid params: \"task\" must be an object whose optional \"ttl\" is a number of "
                           "milliseconds",
                           NULL);
        return true;
    }
    long long ttl_ms = ttl && !json_object_is_type(ttl, json_type_null) ? (long long)json_object_get_double(ttl) : 0;
    json_object *copy = NULL;
    if (args && json_object_is_type(args, json_type_object) ? json_object_deep_copy(args, &copy, NULL) != 0
                                                             : !(copy = json_object_new_object()))
        copy = NULL;
    const char *owner = legacy_tasks_owner(r->s);
    pthread_mutex_lock(&r->s->lock);
    unsigned caps = r->s->legacy_caps;
    pthread_mutex_unlock(&r->s->lock);
    int code = TH_RPC_INTERNAL_ERROR;
    char msg[320] = "Internal error: out of memory";
    th_tasks_peer peer = legacy_peer(r);
    json_object *res = NULL;
    if (copy && owner)
        res = th_tasks_create_core(r->s->mcp->tasks, r->reg, e, copy, owner, r->s->who, caps, ttl_ms, token, &peer,
                                   &code, msg, sizeof msg);
    else
        json_object_put(copy);
    if (!res) {
        th_mcpi_send_error(r->s, r->msg->id, code, msg, NULL);
        return true;
    }
    char id[80];
    json_object *tid = NULL;
    json_object_object_get_ex(json_object_object_get(res, "task"), "taskId", &tid);
    snprintf(id, sizeof id, "%s", tid ? json_object_get_string(tid) : "");
    th_mcpi_reply(r, res);
    th_tasks_start(r->s->mcp->tasks, id, owner);
    return true;
}

/* tasks/get, tasks/result, tasks/list, tasks/cancel of a legacy session:
 * only 2025-11-25 has them. */
static void legacy_tasks_request(request *r)
{
    if (r->version < V_2025_11_25) {
        th_mcpi_send_errorf(r->s, r->msg->id, TH_RPC_METHOD_NOT_FOUND,
                            "Method not found: %s is not part of protocol %s (tasks came with 2025-11-25)",
                            r->msg->method, th_mcpi_versions[r->version]);
        return;
    }
    const char *owner = legacy_tasks_owner(r->s);
    if (!owner) {
        th_mcpi_send_error(r->s, r->msg->id, TH_RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
        return;
    }
    th_tasks_peer peer = legacy_peer(r);
    json_object *res = th_tasks_core_request(r->s->mcp->tasks, r->msg->method, r->msg->params, owner, r->msg->id,
                                             &peer);
    if (res)
        th_mcpi_send_msg(r->s, res); /* else answered when the task ends */
}

/* What a tools/call names and carries: the tool, its arguments and _meta. */
typedef struct call_params {
    const th_entry *e;
    json_object *args, *token;
    bool lite; /* a plain call's params come as their members (jsonrpc.h: call_lite) */
} call_params;

/* Read R's name, arguments and progress token into *CP; false once R is
 * answered with why they are not a call. */
static bool read_call(request *r, call_params *cp)
{
    th_mcp_session *s = r->s;
    json_object *params = r->msg->params, *name = NULL, *meta = NULL;
    bool lite = cp->lite = r->msg->call_lite, has_args;
    if (lite ? !r->msg->call_has_name
             : !params || !th_json_get(params, "name", &name) || !json_object_is_type(name, json_type_string)) {
        th_mcpi_send_error(s, r->msg->id, TH_RPC_INVALID_PARAMS, "Invalid params: tools/call needs a string \"name\"",
                           NULL);
        return false;
    }
    /* Unknown tools, in qualified names too, are protocol errors (the
     * MCP spec's -32602), with the texts of doc/registry-rules.md, 7, for why. */
    char why[512];
    cp->e = th_tool_resolve_for(r->reg, r->caller, lite ? r->msg->call_name : th_mcpi_plain_string(name), why,
                                sizeof why);
    if (!cp->e) {
        if (!lite && !th_mcpi_plain_string(name))
            snprintf(why, sizeof why, "Unknown tool: %.200s", json_object_get_string(name));
        th_mcpi_send_error(s, r->msg->id, TH_RPC_INVALID_PARAMS, why, NULL);
        return false;
    }
    if (lite) {
        has_args = r->msg->call_has_args;
        cp->args = r->msg->call_args;
        meta = r->msg->call_meta;
    } else {
        has_args = th_json_get(params, "arguments", &cp->args);
        th_json_get(params, "_meta", &meta);
    }
    json_object *args = cp->args;
    if (has_args && !json_object_is_type(args, json_type_null) && !json_object_is_type(args, json_type_object)) {
        char msg[128];
        snprintf(msg, sizeof msg, "Invalid params: \"arguments\" must be an object, got %s",
                 json_type_to_name(json_object_get_type(args)));
        th_mcpi_send_error(s, r->msg->id, TH_RPC_INVALID_PARAMS, msg, NULL);
        return false;
    }
    json_object *token = NULL;
    if (json_object_is_type(meta, json_type_object))
        th_json_get(meta, "progressToken", &token);
    if (token && !json_object_is_type(token, json_type_string) && !json_object_is_type(token, json_type_int) &&
        !json_object_is_type(token, json_type_double))
        token = NULL;
    cp->token = token;
    return true;
}

/* Is R answered another way than by a call: refused retry answers, or run
 * as a task of either era? Otherwise *MRTR is a modern call's round state. */
static bool answered_otherwise(request *r, const call_params *cp, th_mrtr **mrtr)
{
    *mrtr = NULL;
    if (!r->modern)
        return r->version >= V_2025_11_25 && legacy_call_as_task(r, cp->e, cp->args, cp->token);
    /* A modern call may be a retry carrying answers (inputResponses,
     * requestState): refused before anything runs when they are bad. */
    char why[512];
    json_object *a = cp->args && json_object_is_type(cp->args, json_type_object) ? cp->args : NULL;
    if (!(*mrtr = th_mrtr_begin(cp->e->name, a, r->s->principal, r->msg->params, why, sizeof why))) {
        th_mcpi_send_error(r->s, r->msg->id, TH_RPC_INVALID_PARAMS, why, NULL);
        return true;
    }
    if (cp->e->task_support && call_as_task(r, cp->e, a, *mrtr)) {
        th_mrtr_free(*mrtr);
        return true;
    }
    return false;
}

/* The job of R's call, holding only what the call needs as its own objects
 * (ARGS_ROOM bytes behind it for the arguments' text): the rest of the
 * request is freed when the reader is done with it, and no reference count
 * is shared with the reader thread. NULL once R is answered. */
static job *job_new(request *r, const call_params *cp, th_mrtr *mrtr, size_t args_room)
{
    job *j = malloc(sizeof *j + th_call_size + args_room);
    if (j)
        memset(j, 0, sizeof *j); /* th_call_new_in clears its own part */
    if (!j) {
        th_mrtr_free(mrtr);
        th_mcpi_send_error(r->s, r->msg->id, TH_RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
        return NULL;
    }
    j->mrtr = mrtr;
    if (r->modern) {
        json_object *caps = NULL;
        th_json_get(r->meta, META_CAPS, &caps);
        j->client_caps = th_ask_caps_of(caps);
    } else {
        j->client_caps = r->legacy_caps; /* read with the rest of the session's state */
    }
    /* With --metrics the request's own clock read serves the call too:
     * every read is paid at the call rate. */
    if (th_metrics_enabled) {
        j->started_ns = th_reqobs_start_ns();
        j->started_ms = j->started_ns / 1000000;
    } else {
        j->started_ms = th_now_ms();
    }
    j->key = th_rpc_id_key_in(r->msg->id, j->key_here, sizeof j->key_here);
    if (!j->key) {
        th_mrtr_free(j->mrtr);
        free(j);
        th_mcpi_send_error(r->s, r->msg->id, TH_RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
        return NULL;
    }
    if (cp->token && json_object_deep_copy(cp->token, &j->token, NULL) != 0)
        j->token = NULL;
    if (r->msg->own_id && r->msg->own_id == r->msg->id) {
        /* The reader's message owns the id alone (a plain request): taken,
         * not copied. MSG->id still points to it: every path below that
         * answers with it does so before it frees the job. */
        j->id = r->msg->own_id;
        r->msg->own_id = NULL;
    } else if (json_object_deep_copy(r->msg->id, &j->id, NULL) != 0) {
        j->id = NULL;
    }
    if (cp->args && json_object_is_type(cp->args, json_type_object)) {
        j->args = json_object_get(cp->args);
        if (cp->lite) {
            json_object_put(r->msg->call_args);
            r->msg->call_args = NULL;
        } else {
            json_object_object_del(r->msg->params, "arguments");
        }
    } else {
        j->args = json_object_new_object();
    }
    return j;
}

/* Give J its call context with the session's hooks (HERE: it runs on the
 * transport's waiting thread); false once J is freed and R answered. */
static bool job_open_call(job *j, request *r, const call_params *cp, size_t args_room, bool here)
{
    th_mcp_session *s = r->s;
    th_call_hooks hooks = {
        .notify = th_mcpi_notify_hook,
        .ctx = s,
        .progress_token = j->token,
        .log_to_client = r->log_to_client,
        .log_level = r->log_level,
        .max_result_bytes = s->mcp->cfg.max_result_bytes,
        .client_caps = j->client_caps,
        .ask = ask_hook,
        .ask_ctx = j,
        /* A call the reader runs may end elsewhere (a batch's run side by
         * side): the proxy defers a pipelining client's calls, and one
         * that would wait behind others deferred before it; a lone call's
         * answer is read soonest by the thread waiting for it. */
        .resume = (s->says_more && !th_mcpi_answering && s->inline_begin && s->mcp->cfg.inline_calls) || here
                      ? resume_job
                      : NULL,
        .resume_ctx = j,
        .pipelined = s->more,
        .let_go = here,
    };
    if (args_room) {
        hooks.args_text = memcpy((char *)j->call_room + th_call_size, r->msg->call_args_text, args_room);
        hooks.args_len = args_room;
        j->args_as_text = true;
    }
    /* The handler sees the name it registered, as a worker does. */
    j->call = th_call_new_in(j->call_room, cp->e->original_name, &hooks);
    if (j->call && j->args && j->id && (!cp->token || j->token))
        return true;
    th_call_free(j->call);
    th_mrtr_free(j->mrtr);
    json_object_put(j->args);
    if (j->id && j->id == r->msg->id)
        r->msg->own_id = j->id; /* given back: the error below names it */
    else
        json_object_put(j->id);
    json_object_put(j->token);
    if (j->key != j->key_here)
        free(j->key);
    free(j);
    th_mcpi_send_error(s, r->msg->id, TH_RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
    return false;
}

/* Undo a job's call before it is refused (under no lock): job_free then
 * drops the session reference taken here. */
static void refuse_job(job *j, int code)
{
    th_mcpi_gate_over(j, TH_OUTCOME_BUSY, code);
    th_call_free(j->call);
    j->call = NULL;
    atomic_fetch_add(&j->s->refs, 1);
}

/* Enter J in its session's table of calls in flight; false once R is
 * answered busy (or as a duplicate id) and J freed. */
static bool admit_job(job *j, request *r)
{
    th_mcp_session *s = r->s;
    pthread_mutex_lock(&s->lock);
    /* Refuse rather than wait: a reader blocked here could no longer read
     * the cancellations, end of input or stop request that free a slot. */
    if (s->ninflight >= MAX_INFLIGHT) {
        pthread_mutex_unlock(&s->lock);
        refuse_job(j, TH_RPC_SERVER_BUSY);
        th_mcpi_send_errorf(s, r->msg->id, TH_RPC_SERVER_BUSY,
                            "Server busy: %d tool calls are in flight; retry when some have finished", MAX_INFLIGHT);
        job_free(j);
        return false;
    }
    /* Memory is bounded by what requests in flight hold: their text and
     * their parsed arguments (tree_cost). One call is always admitted. */
    size_t max_bytes = s->mcp->cfg.max_inflight_bytes;
    if (s->ninflight > 0 && (j->bytes > max_bytes || s->inflight_bytes > max_bytes - j->bytes)) {
        size_t held = s->inflight_bytes;
        pthread_mutex_unlock(&s->lock);
        refuse_job(j, TH_RPC_SERVER_BUSY);
        th_mcpi_send_errorf(s, r->msg->id, TH_RPC_SERVER_BUSY,
                            "Server busy: tool calls in flight hold %zu bytes of requests (text and parsed arguments), "
                            "and this one (%zu bytes) "
                            "would pass --max-inflight-bytes (%zu); retry when some have finished",
                            held, j->bytes, max_bytes);
        job_free(j);
        return false;
    }
    j->hash = key_hash(j->key);
    if (find_job_h(s, j->key, j->hash)) {
        pthread_mutex_unlock(&s->lock);
        refuse_job(j, TH_RPC_INVALID_REQUEST);
        th_mcpi_send_error(s, r->msg->id, TH_RPC_INVALID_REQUEST,
                           "Invalid Request: a request with this id is in flight", NULL);
        job_free(j);
        return false;
    }
    buckets_grow(s);
    job **b = bucket_at(s, j->hash);
    j->next = *b;
    *b = j;
    s->ninflight++;
    s->nunanswered++;
    s->nopen++;
    s->inflight_bytes += j->bytes;
    atomic_fetch_add(&s->refs, 1);
    if (th_metrics_enabled)
        th_metrics_call_begin();
    job *finished = s->finished;
    s->finished = NULL;
    pthread_mutex_unlock(&s->lock);
    th_mcpi_free_finished(finished);
    return true;
}

/* Run the admitted J: on the transport's thread where it allows that (HERE:
 * the thread that waits for a worker's answer anyway), else on the pool. */
static void dispatch_job(job *j, request *r, bool here)
{
    th_mcp_session *s = r->s;
    if (j->batch)
        th_mcpi_batch_hold(j->batch);
    /* Where the transport lets calls run on its own thread (it hands its
     * work to another one when a call turns out slow), a quick call costs
     * no thread switch. A batch's calls run side by side, on the pool. */
    if (s->inline_begin && s->mcp->cfg.inline_calls && !j->batch) {
        /* The call may outlive the transport's hold on the session (it
         * hands its reading over, and may close meanwhile). */
        atomic_fetch_add(&s->refs, 1);
        s->inline_begin(s->inline_ctx);
        j->run_by_reader = true;
        bool ran = th_pool_run_here(s->mcp->pool, run_job, j);
        if (!ran)
            j->run_by_reader = false; /* it waits for a thread after all */
        s->inline_end(s->inline_ctx);
        th_mcpi_session_unref(s);
        if (ran)
            return;
    }
    if (here) {
        /* No thread hand-off there and back: the transport's thread sends
         * the frame and reads the worker's answer itself. */
        j->run_by_reader = true;
        bool ran = th_pool_run_here(s->mcp->pool, run_job, j);
        th_call_flush_held(); /* a call deferred after all: its frame goes now */
        if (ran)
            return;
        j->run_by_reader = false; /* it waits for a thread after all */
    }
    if (th_pool_submit_ex(s->mcp->pool, run_job, expire_job, j) != TH_OK) {
        pthread_mutex_lock(&s->lock);
        unlink_job(s, j);
        th_mcpi_job_done(s);
        th_mcpi_response_out(s);
        s->inflight_bytes -= j->bytes;
        pthread_mutex_unlock(&s->lock);
        th_mcpi_send_error(s, r->msg->id, TH_RPC_INTERNAL_ERROR, "Internal error: the server is shutting down", NULL);
        if (th_metrics_enabled)
            th_metrics_call_end(j->entry->name, TH_METRICS_BUSY, th_now_ns() - j->started_ns);
        th_mcpi_gate_over(j, TH_OUTCOME_BUSY, TH_RPC_INTERNAL_ERROR);
        if (j->batch)
            th_mcpi_batch_release(j->batch);
        job_free(j);
    }
}

void th_mcpi_m_tools_call(request *r)
{
    th_mcp_session *s = r->s;
    call_params cp = {0};
    th_mrtr *mrtr;
    th_gate gate;
    if (!read_call(r, &cp)) {
        th_mcpi_gate_refused(r, cp.e);
        return;
    }
    if (!th_mcpi_gate_admit(r, cp.e, cp.args, &gate))
        return;
    if (answered_otherwise(r, &cp, &mrtr)) {
        th_mcpi_gate_drop(&gate); /* a task's run is not held to --concurrency-limit */
        return;
    }
    /* A plain call's arguments' text rides behind the call: a proxied call
     * sends it to its worker as it came, not printed again from the tree. */
    size_t args_room = cp.lite && r->msg->call_args_text && json_object_is_type(cp.args, json_type_object)
                           ? r->msg->call_args_len
                           : 0;
    job *j = job_new(r, &cp, mrtr, args_room);
    if (!j) {
        th_mcpi_gate_drop(&gate);
        return;
    }
    j->gate = gate;
    /* A handler that only waits for a worker runs on the transport's
     * thread that waits for the answer anyway (th_mcp_session_wait_here):
     * it lets go of a cancelled call (see th_call_is_waiting_handler). */
    long long due = call_timeout(&s->mcp->cfg, cp.e);
    bool here = s->wait_limit_ms > 0 && due > 0 && due <= s->wait_limit_ms && !th_mcpi_answering &&
                s->mcp->cfg.inline_calls && th_call_is_waiting_handler(cp.e->handler);
    if (!job_open_call(j, r, &cp, args_room, here)) {
        th_mcpi_gate_drop(&gate); /* J, and its copy, are gone */
        return;
    }
    j->s = s;
    j->reg = th_registry_ref(r->reg); /* the call finishes on the code it started with */
    j->entry = cp.e;
    j->tree = tree_cost(j->args);
    j->bytes = s->msg_len + j->tree;
    j->modern = r->modern;
    j->version = r->version;
    j->batch = th_mcpi_answering;
    if (!admit_job(j, r))
        return;
    j->obs = th_reqobs_take(); /* answered with the call, wherever it runs */
    dispatch_job(j, r, here);
}
