/* SPDX-License-Identifier: MIT */
/*
** protocol/mcp.c: the MCP protocol for both eras. A request with modern per-request
** _meta (2026-07-28) is served statelessly; anything else follows the legacy
** initialize handshake of its session. Methods are a table; tools/call runs on
** the worker pool (or on the transport's thread when it allows that), with
** cancellation, progress and logging wired to th_call.
** JSON-RPC batches are served where the negotiated revision has them.
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
#include "protocol/mcpobserve.h"

/* Every revision, oldest first; the index orders features by revision. */
const char *const th_mcpi_versions[] = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25",
                                       TH_MCP_MODERN_VERSION};


void th_mcp_config_default(th_mcp_config *cfg)
{
    cfg->server_name = "toolhost";
    cfg->server_version = PACKAGE_VERSION;
    cfg->instructions = NULL;
    cfg->page_size = 100;
    cfg->list_ttl_ms = 60000;
    cfg->max_threads = 64;
    cfg->max_result_bytes = (size_t)16 << 20;
    cfg->max_inflight_bytes = (size_t)64 << 20;
    cfg->queue_timeout_ms = 30000;
    cfg->call_timeout_ms = 60000;
    cfg->inline_calls = true;
    cfg->task_ttl_ms = 300000;
    cfg->max_tasks = 64;
    cfg->limits = NULL;
}

static void modern_members(const th_mcp *m, json_object *result);

/* th_mcpi_check_output for a task's result (protocol/tasks.c): a task fails on the
 * host's own grounds (th_call_aborted), so the wording flag is not needed. */
static json_object *check_task_output(const th_entry *e, json_object *result)
{
    bool failed = false;
    return th_mcpi_check_output(e, result, &failed);
}

/* A plugin's th_resource_updated(URI): the one path every notice takes. */
static void resource_updated(const char *uri, void *m)
{
    th_mcp_notify(m, TH_SUB_RESOURCE_UPDATED, uri);
}

th_mcp *th_mcp_new(th_registry *reg, const th_mcp_config *cfg)
{
    th_mcp *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->cfg = *cfg;
    m->pool = th_pool_new(cfg->max_threads);
    if (!m->pool) {
        free(m);
        return NULL;
    }
    th_pool_set_queue_timeout(m->pool, cfg->queue_timeout_ms);
    m->slot = th_regslot_new(reg);
    if (!m->slot) {
        th_pool_shutdown(m->pool, 0);
        free(m);
        return NULL;
    }
    th_tasks_config tcfg = {
        .ttl_ms = cfg->task_ttl_ms > 0 ? cfg->task_ttl_ms : 300000,
        .poll_ms = 500,
        .max_active = cfg->max_tasks > 0 ? cfg->max_tasks : 64,
        .max_stored = 4096,
        .max_result_bytes = cfg->max_result_bytes,
        .run_over = th_mcpi_gate_task_over,
    };
    if (!(m->tasks = th_tasks_new(m->pool, &tcfg, check_task_output))) {
        th_regslot_free(m->slot);
        th_pool_shutdown(m->pool, 0);
        free(m);
        return NULL;
    }
    pthread_mutex_init(&m->sessions_lock, NULL);
    th_mcpres_init(); /* plugins' th_resource_updated() reaches sessions */
    th_mcpres_on_updated(resource_updated, m);
    /* Immutable: serialised once, spliced into every modern call result
     * (NULL when out of memory: results are then built whole). */
    json_object *tail = json_object_new_object();
    if (tail) {
        modern_members(m, tail);
        size_t len;
        m->result_tail = strdup(th_rpc_serialize(tail, &len));
        json_object_put(tail);
    }
    return m;
}

bool th_mcp_free(th_mcp *m, long long deadline_ms)
{
    if (!m)
        return true;
    th_tasks_cancel_all(m->tasks); /* a task's handler stops as a call's would */
    th_mcpres_on_updated(NULL, m); /* waits for a notice being delivered */
    /* A deferred call ends on the thread that reads its worker's answer. */
    while (atomic_load(&m->deferred) > 0 && th_now_ms() < deadline_ms) {
        struct timespec ts = {0, 1000000L};
        nanosleep(&ts, NULL);
    }
    if (atomic_load(&m->deferred) > 0) {
        th_log(TH_LOG_WARNING, "tool calls still running in workers at exit; not waiting for them");
        return false;
    }
    if (!th_pool_shutdown(m->pool, deadline_ms)) {
        th_log(TH_LOG_WARNING, "tool calls still running at exit; not waiting for them");
        return false;
    }
    th_tasks_free(m->tasks);
    th_regslot_free(m->slot);
    pthread_mutex_destroy(&m->sessions_lock);
    free(m->result_tail);
    free(m);
    return true;
}

/*
** json-c asserts on a NULL container. Under memory pressure every
** constructor here may return NULL, so building goes through these: a
** NULL container drops the value, and the th_mcpi_reply paths answer -32603 when
** the result itself could not be made.
*/
void th_mcpi_put(json_object *obj, const char *key, json_object *val)
{
    if (obj)
        json_object_object_add(obj, key, val);
    else
        json_object_put(val);
}

/* Instructions tell a model what the server is for, so by default they
** name the tools (a plugin author's words, through their descriptions in
** tools/list), not the host. --instructions='' leaves the field out, as a
** client author expects of an empty value. */
enum { INSTRUCTION_NAMES = 30 };

/* The names are the caller's: a tool outside its set is not named here either. */
static void put_instructions(json_object *res, const th_mcp *m, const th_registry *reg, const th_policy *caller)
{
    if (m->cfg.instructions) {
        if (m->cfg.instructions[0])
            th_mcpi_put(res, "instructions", json_object_new_string(m->cfg.instructions));
        return;
    }
    size_t all = th_registry_exposed_count(reg), n = 0;
    th_buf b = {0};
    for (size_t i = 0; i < all; i++) {
        const th_entry *e = th_registry_exposed_at(reg, i);
        if (!e || !th_registry_exposes_to(reg, caller, e))
            continue;
        if (n < INSTRUCTION_NAMES)
            th_buf_printf(&b, "%s %s", n ? "," : "Tools:", e->name);
        n++;
    }
    if (!n)
        th_buf_printf(&b, "No tools are loaded.");
    if (n > INSTRUCTION_NAMES)
        th_buf_printf(&b, " and %zu more", n - INSTRUCTION_NAMES);
    if (n)
        th_buf_printf(&b, ". Call tools/list for what each does and takes.");
    if (b.data)
        th_mcpi_put(res, "instructions", json_object_new_string(b.data));
    free(b.data);
}

void th_mcpi_push(json_object *arr, json_object *val)
{
    if (arr)
        json_object_array_add(arr, val);
    else
        json_object_put(val);
}

/* ---- sending ---------------------------------------------------------- */

void th_mcpi_session_unref(th_mcp_session *s)
{
    if (atomic_fetch_sub(&s->refs, 1) != 1)
        return;
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->idle);
    pthread_rwlock_destroy(&s->send_lock);
    if (s->inflight != s->few)
        free(s->inflight);
    th_asks_free(s->asks);
    free(s->principal);
    free(s->who);
    th_policy_unref(s->caller);
    free(s->task_owner);
    free(s->trace_session);
    free(s);
}


/*
** A batch is small on the wire but not in memory: 200 reads of a large
** resource in 17 KB once asked for a 100 MB answer. Past BATCH_MAX_REQUESTS
** elements, or once its answers hold --max-result-bytes (one batch may
** answer what one tool result may), the rest of the batch is answered
** busy, as a client sending too much at once is elsewhere.
*/
#define BATCH_MAX_REQUESTS 128

/* The batch whose responses the calling thread is producing, or NULL: set
 * by the reader while it dispatches a batch's elements and by a pool thread
 * while it sends a batched call's response, so every path that answers a
 * request (th_mcpi_send_error and the like) lands in the batch without knowing. */
_Thread_local rpc_batch *th_mcpi_answering;


static rpc_batch *batch_new(th_mcp_session *s)
{
    rpc_batch *b = calloc(1, sizeof *b);
    if (!b || !(b->replies = json_object_new_array())) {
        free(b);
        return NULL;
    }
    b->s = s;
    b->refs = 1;
    b->max_bytes = s->mcp->cfg.max_result_bytes;
    atomic_fetch_add(&s->refs, 1);
    pthread_mutex_init(&b->lock, NULL);
    return b;
}

void th_mcpi_batch_hold(rpc_batch *b)
{
    pthread_mutex_lock(&b->lock);
    b->refs++;
    pthread_mutex_unlock(&b->lock);
}


/* Drop a reference; the last sends the array (nothing when no response
 * was due: a batch of notifications, or of cancelled calls). */
void th_mcpi_batch_release(rpc_batch *b)
{
    pthread_mutex_lock(&b->lock);
    bool last = --b->refs == 0;
    pthread_mutex_unlock(&b->lock);
    if (!last)
        return;
    rpc_batch *outer = th_mcpi_answering;
    th_mcpi_answering = NULL;
    if (json_object_array_length(b->replies) > 0)
        th_mcpi_send_msg(b->s, b->replies);
    else
        json_object_put(b->replies);
    th_mcpi_answering = outer;
    pthread_mutex_destroy(&b->lock);
    th_mcpi_session_unref(b->s);
    free(b);
}

/* --log-level=debug: each message in and out, cut to a readable length. */
#define TRACE_BYTES 512
static void trace(const char *dir, const char *text, size_t len)
{
    size_t n = !text ? 0 : len == SIZE_MAX ? strlen(text) : len;
    json_object *f = json_object_new_object();
    if (f) {
        json_object_object_add(f, "dir", json_object_new_string(dir));
        json_object_object_add(f, "bytes", json_object_new_int64((int64_t)n));
    }
    th_log_ex(TH_LOG_DEBUG, "protocol", NULL, f, "%s %.*s%s", strcmp(dir, "in") == 0 ? "<-" : "->",
              (int)(n < TRACE_BYTES ? n : TRACE_BYTES), text ? text : "", n > TRACE_BYTES ? "..." : "");
    json_object_put(f);
}

/* Under B->lock: whether B's answers reached their bound. */
static bool batch_full(const rpc_batch *b)
{
    return b->bytes >= b->max_bytes;
}

static void batch_busy(th_mcp_session *s, json_object *id, size_t max_bytes);

static bool batch_is_full(rpc_batch *b)
{
    pthread_mutex_lock(&b->lock);
    bool full = batch_full(b);
    pthread_mutex_unlock(&b->lock);
    return full;
}

/*
** Add MSG (taken) to B's replies as its text, which is all the array's
** serialisation needs and a fraction of the tree's size. A result that
** would take B past its bound is replaced by the busy error.
*/
static void batch_add(rpc_batch *b, json_object *msg)
{
    size_t len = 0;
    const char *text = th_rpc_serialize(msg, &len);
    json_object *id = NULL, *v;
    bool result = th_rpc_member(msg, "result", &v) && th_rpc_member(msg, "id", &id);
    /* Taken here, so answers finishing together cannot all fit. */
    pthread_mutex_lock(&b->lock);
    bool over = result && b->bytes + len > b->max_bytes;
    if (over)
        b->bytes = b->max_bytes > b->bytes ? b->max_bytes : b->bytes; /* full: the rest is busy too */
    else
        b->bytes += len;
    pthread_mutex_unlock(&b->lock);
    if (over) {
        json_object_get(id);
        json_object_put(msg);
        batch_busy(b->s, id, b->max_bytes);
        json_object_put(id);
        return;
    }
    char *copy = text ? strdup(text) : NULL;
    json_object *o = copy ? json_object_new_object() : NULL;
    json_object_put(msg);
    if (!o) {
        free(copy);
        th_log(TH_LOG_ERROR, "out of memory adding a response to a JSON-RPC batch; it was not sent");
        return;
    }
    json_object_set_serializer(o, json_object_userdata_to_json_string, copy, json_object_free_userdata);
    pthread_mutex_lock(&b->lock);
    json_object_array_add(b->replies, o);
    pthread_mutex_unlock(&b->lock);
}

void th_mcpi_send_msg(th_mcp_session *s, json_object *msg)
{
    if (!msg) {
        th_log(TH_LOG_ERROR, "out of memory building a response; it was not sent");
        return;
    }
    if (th_reqobs_current)
        th_reqobs_answered(msg);
    if (th_mcpi_answering && th_mcpi_answering->s == s) {
        batch_add(th_mcpi_answering, msg);
        return;
    }
    if (th_log_enabled(TH_LOG_DEBUG))
        trace("out", json_object_to_json_string_ext(msg, JSON_C_TO_STRING_PLAIN), SIZE_MAX);
    /* Sends run concurrently (the transport keeps messages whole); the lock
     * only keeps th_mcp_session_free from closing under a send. */
    pthread_rwlock_rdlock(&s->send_lock);
    if (!s->closed)
        s->send(s->send_ctx, msg);
    else
        json_object_put(msg);
    pthread_rwlock_unlock(&s->send_lock);
}

/* th_mcpi_send_msg for a message made as text (TEXT, LEN bytes, borrowed), through
 * the transport's send_text when it has one; never part of a batch. */
void th_mcpi_send_text_msg(th_mcp_session *s, const char *text, size_t len)
{
    if (th_log_enabled(TH_LOG_DEBUG))
        trace("out", text, len);
    pthread_rwlock_rdlock(&s->send_lock);
    if (!s->closed)
        s->send_text(s->send_ctx, text, len);
    pthread_rwlock_unlock(&s->send_lock);
}

void th_mcpi_send_error(th_mcp_session *s, json_object *id, int code, const char *message, json_object *data)
{
    th_mcpi_send_msg(s, th_rpc_error(id, code, message, data));
}

void th_mcpi_send_errorf(th_mcp_session *s, json_object *id, int code, const char *fmt, ...)
{
    char m[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    th_utf8_clip(m); /* names from the client may have been cut mid-character */
    th_mcpi_send_error(s, id, code, m, NULL);
}

/* The answer to a batch's request past the batch's bounds (ANSWERING's). */
static void batch_busy(th_mcp_session *s, json_object *id, size_t max_bytes)
{
    th_mcpi_send_errorf(s, id, TH_RPC_SERVER_BUSY,
                        "Server busy: a JSON-RPC batch is served up to %d requests and %zu bytes of answers "
                        "(--max-result-bytes); send this request again outside the batch",
                        BATCH_MAX_REQUESTS, max_bytes);
}

static json_object *server_info(const th_mcp *m)
{
    json_object *o = json_object_new_object();
    th_mcpi_put(o, "name", json_object_new_string(m->cfg.server_name));
    th_mcpi_put(o, "version", json_object_new_string(m->cfg.server_version));
    return o;
}

/* Modern results carry resultType and the server's identity. */
static void modern_members(const th_mcp *m, json_object *result)
{
    json_object *rt; /* an InputRequiredResult, a CreateTaskResult keep their own */
    if (!json_object_object_get_ex(result, "resultType", &rt) || !json_object_is_type(rt, json_type_string) ||
        (strcmp(json_object_get_string(rt), "input_required") != 0 && strcmp(json_object_get_string(rt), "task") != 0))
        th_mcpi_put(result, "resultType", json_object_new_string("complete"));
    json_object *meta = json_object_new_object();
    th_mcpi_put(meta, META_SERVER, server_info(m));
    th_mcpi_put(result, "_meta", meta);
}

void th_mcpi_finish_result(const request *r, json_object *result)
{
    if (r->modern)
        modern_members(r->s->mcp, result);
}

void th_mcpi_reply(const request *r, json_object *result)
{
    if (!result) {
        th_mcpi_send_error(r->s, r->msg->id, TH_RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
        return;
    }
    th_mcpi_finish_result(r, result);
    th_mcpi_send_msg(r->s, th_rpc_result(r->msg->id, result));
}

static json_object *capabilities(bool modern)
{
    json_object *caps = json_object_new_object();
    json_object *tools = json_object_new_object();
    /* Always: SIGHUP rescans even without --watch, so any session may see
     * the list change (legacy sessions get the notification, modern
     * clients ask for it with subscriptions/listen). */
    th_mcpi_put(tools, "listChanged", json_object_new_boolean(1));
    th_mcpi_put(caps, "tools", tools);
    th_mcpi_put(caps, "logging", json_object_new_object());
    /* "subscribe": resources/subscribe before 2026-07-28, from then on
     * subscriptions/listen's resourceSubscriptions. "listChanged": as for
     * tools, a reload may change them. */
    json_object *res = json_object_new_object();
    th_mcpi_put(res, "subscribe", json_object_new_boolean(1));
    th_mcpi_put(res, "listChanged", json_object_new_boolean(1));
    th_mcpi_put(caps, "resources", res);
    /* A reload that changes the prompts tells every session, as for tools. */
    json_object *prompts = json_object_new_object();
    th_mcpi_put(prompts, "listChanged", json_object_new_boolean(1));
    th_mcpi_put(caps, "prompts", prompts);
    th_mcpi_put(caps, "completions", json_object_new_object());
    if (modern) { /* SEP-2663: an extension, not a capabilities.tasks slot */
        json_object *ext = json_object_new_object();
        th_mcpi_put(ext, TH_TASKS_EXTENSION, json_object_new_object());
        th_mcpi_put(ext, TH_SKILLS_EXTENSION, th_mcpskills_capability());
        th_mcpi_put(caps, "extensions", ext);
    }
    return caps;
}

/* O's text when it is a string without an embedded NUL (which C string
 * comparisons would silently cut at), else NULL. */
const char *th_mcpi_plain_string(json_object *o)
{
    if (!json_object_is_type(o, json_type_string))
        return NULL;
    const char *p = json_object_get_string(o);
    return strlen(p) == (size_t)json_object_get_string_len(o) ? p : NULL;
}

/*
** Every revision served, newest first, as the 2026-07-28 versioning page's
** dual-era example lists them ("2026-07-28", "2025-11-25"): a client that
** speaks only a legacy revision learns that initialize will serve it.
*/
static json_object *supported_versions(void)
{
    json_object *sv = json_object_new_array();
    for (int i = N_VERSIONS; i-- > 0;)
        th_mcpi_push(sv, json_object_new_string(th_mcpi_versions[i]));
    return sv;
}

static int version_index(const char *v)
{
    for (int i = 0; i < N_VERSIONS; i++)
        if (strcmp(th_mcpi_versions[i], v) == 0)
            return i;
    return -1;
}

/* ---- methods ---------------------------------------------------------- */


static void m_initialize(request *r)
{
    json_object *pv;
    if (!r->msg->params || !json_object_object_get_ex(r->msg->params, "protocolVersion", &pv) ||
        !th_mcpi_plain_string(pv)) {
        th_mcpi_send_error(r->s, r->msg->id, TH_RPC_INVALID_PARAMS,
                           "Invalid params: initialize needs a string \"protocolVersion\"", NULL);
        return;
    }
    int v = version_index(json_object_get_string(pv));
    /* The requested revision if it is a legacy one we speak, else the latest
     * legacy one: 2026-07-28 has no handshake. */
    if (v < 0 || v > LATEST_LEGACY)
        v = LATEST_LEGACY;

    json_object *caps = NULL;
    json_object_object_get_ex(r->msg->params, "capabilities", &caps);
    pthread_mutex_lock(&r->s->lock);
    bool again = r->s->initialized;
    if (!again) {
        r->s->initialized = true;
        r->s->legacy_version = v;
        r->s->legacy_caps = th_ask_caps_of(caps);
    }
    pthread_mutex_unlock(&r->s->lock);
    if (again) {
        th_mcpi_send_error(r->s, r->msg->id, TH_RPC_INVALID_REQUEST, "Invalid Request: already initialized", NULL);
        return;
    }
    th_reqobs_era(r, v); /* the span names what was negotiated */
    json_object *res = json_object_new_object();
    th_mcpi_put(res, "protocolVersion", json_object_new_string(th_mcpi_versions[v]));
    json_object *server_caps = capabilities(false);
    if (v >= V_2025_11_25)
        th_mcpi_put(server_caps, "tasks", th_mcpi_legacy_tasks_capability());
    th_mcpi_put(res, "capabilities", server_caps);
    th_mcpi_put(res, "serverInfo", server_info(r->s->mcp));
    put_instructions(res, r->s->mcp, r->reg, r->caller);
    th_mcpi_reply(r, res);
}

static void m_ping(request *r)
{
    th_mcpi_reply(r, json_object_new_object());
}

static void m_set_level(request *r)
{
    json_object *lv = NULL;
    int level = -1;
    if (r->msg->params && json_object_object_get_ex(r->msg->params, "level", &lv) && th_mcpi_plain_string(lv))
        level = th_log_level_parse(json_object_get_string(lv));
    if (level < 0) {
        char shown[64], msg[256];
        /* Cut to whole characters: the message must stay UTF-8. */
        snprintf(shown, sizeof shown, "%s", lv ? json_object_to_json_string_ext(lv, JSON_C_TO_STRING_PLAIN) : "none");
        th_utf8_clip(shown);
        snprintf(msg, sizeof msg,
                 "Invalid params: \"level\" must be one of debug, info, notice, warning, error, critical, "
                 "alert, emergency, got %s",
                 shown);
        th_mcpi_send_error(r->s, r->msg->id, TH_RPC_INVALID_PARAMS, msg, NULL);
        return;
    }
    pthread_mutex_lock(&r->s->lock);
    r->s->legacy_log_level = (th_log_level)level;
    pthread_mutex_unlock(&r->s->lock);
    th_mcpi_reply(r, json_object_new_object());
}

static void m_discover(request *r)
{
    const th_mcp *m = r->s->mcp;
    json_object *res = json_object_new_object();
    th_mcpi_put(res, "supportedVersions", supported_versions());
    th_mcpi_put(res, "capabilities", capabilities(true));
    put_instructions(res, m, r->reg, r->caller);
    th_mcpi_put(res, "ttlMs", json_object_new_int64(m->cfg.list_ttl_ms));
    th_mcpi_put(res, "cacheScope", json_object_new_string("public"));
    th_mcpi_reply(r, res);
}

/* One tools/list entry, with only the fields revision V defines. */
static json_object *tool_json(const th_entry *e, int v)
{
    json_object *t = json_object_new_object();
    th_mcpi_put(t, "name", json_object_new_string(e->name));
    if (e->title && v >= V_2025_06_18)
        th_mcpi_put(t, "title", json_object_new_string(e->title));
    th_mcpi_put(t, "description", json_object_new_string(e->description));
    th_mcpi_put(t, "inputSchema", json_object_get(e->input_schema));
    if (e->output_schema && v >= V_2025_06_18)
        th_mcpi_put(t, "outputSchema", json_object_get(e->output_schema));
    if (e->annotations && v >= V_2025_03_26)
        th_mcpi_put(t, "annotations", json_object_get(e->annotations));
    if (e->icons && v >= V_2025_11_25)
        th_mcpi_put(t, "icons", json_object_get(e->icons));
    if (e->task_support && v >= V_2025_11_25) {
        static const char *const support[] = {"forbidden", "optional", "required"};
        json_object *ex = json_object_new_object();
        uint32_t support_of = e->task_support & ~(uint32_t)TH_TASK_AFTER_INPUT;
        th_mcpi_put(ex, "taskSupport", json_object_new_string(support[support_of]));
        th_mcpi_put(t, "execution", ex);
    }
    if (e->qualified) {
        /* A qualified tool's _meta says where its name points (doc/registry-rules.md, 7). */
        json_object *meta = json_object_new_object();
        th_mcpi_put(meta, "source_server", json_object_new_string(e->plugin));
        th_mcpi_put(meta, "toolbox_name", json_object_new_string(e->toolbox));
        th_mcpi_put(meta, "original_name", json_object_new_string(e->original_name));
        th_mcpi_put(t, "_meta", meta);
    }
    return t;
}

/*
** Parse "th1:<offset>@<registry version>" (or "th1:<offset>"); false for
** anything this server did not hand out. *STALE is set when the cursor
** was issued for another registry: a hot reload swapped the tools since,
** and a listing must never mix the old set and the new.
*/
static bool parse_cursor(const char *c, size_t count, unsigned long long version, size_t *offset, bool *stale)
{
    size_t plen = strlen(CURSOR_PREFIX);
    if (strncmp(c, CURSOR_PREFIX, plen) != 0 || !c[plen])
        return false;
    const char *at = strchr(c + plen, '@');
    if (at) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(at + 1, &end, 10);
        if (errno || end == at + 1 || *end || at[1] < '0' || at[1] > '9')
            return false;
        if (v != version) {
            *stale = true;
            return false;
        }
    }
    size_t off = 0;
    for (const char *p = c + plen; *p && p != at; p++) {
        if (*p < '0' || *p > '9' || off > count)
            return false;
        off = off * 10 + (size_t)(*p - '0');
    }
    if (off == 0 || off >= count)
        return false;
    *offset = off;
    return true;
}

/* The tools one caller may list: the registry's exposed ones, less those
 * outside the caller's own set (V then holds the rest; N counts either). */
typedef struct tool_view {
    const th_registry *reg;
    const th_entry **v;
    size_t n;
} tool_view;

static bool view_open(const th_policy *caller, const th_registry *reg, tool_view *w)
{
    *w = (tool_view){.reg = reg, .n = th_registry_exposed_count(reg)};
    if (!caller)
        return true;
    if (!(w->v = malloc((w->n ? w->n : 1) * sizeof *w->v)))
        return false;
    size_t k = 0;
    for (size_t i = 0; i < w->n; i++) {
        const th_entry *e = th_registry_exposed_at(reg, i);
        if (e && th_registry_exposes_to(reg, caller, e))
            w->v[k++] = e;
    }
    w->n = k;
    return true;
}

static const th_entry *view_at(const tool_view *w, size_t i)
{
    return w->v ? w->v[i] : th_registry_exposed_at(w->reg, i);
}

static void own_text_free(json_object *o, void *text)
{
    (void)o;
    free(text);
}

/*
** The result of the tools/list page [OFFSET, END) of COUNT tools as R's
** revision and era show it, serialised once per registry version (the
** registry keeps the text, and drops it when its tools change) and sent as
** that text: an object whose serializer prints it. The key names all else
** the text depends on. A page of a caller's own view (W holds one) is
** serialised for that request alone. NULL when out of memory.
*/
static json_object *tools_list_result(const request *r, const tool_view *w, size_t offset, size_t end,
                                      size_t count)
{
    const th_registry *reg = w->reg;
    const th_mcp_config *cfg = &r->s->mcp->cfg;
    char key[1024];
    snprintf(key, sizeof key, "tools/list version=%llu revision=%d modern=%d from=%zu to=%zu ttl=%lld server=%s %s",
             th_registry_version(reg), r->version, (int)r->modern, offset, end, cfg->list_ttl_ms,
             cfg->server_name ? cfg->server_name : "", cfg->server_version ? cfg->server_version : "");
    /* A caller's own view is not kept: the memo is shared by all callers. */
    const char *text = w->v ? NULL : th_registry_memo_get(reg, key);
    char *own = NULL;
    if (!text) {
        json_object *res = json_object_new_object();
        json_object *tools = json_object_new_array_ext((int)(end - offset));
        for (size_t i = offset; i < end; i++)
            th_mcpi_push(tools, tool_json(view_at(w, i), r->version));
        th_mcpi_put(res, "tools", tools);
        if (end < count) {
            char next[64];
            snprintf(next, sizeof next, CURSOR_PREFIX "%zu@%llu", end, th_registry_version(reg));
            th_mcpi_put(res, "nextCursor", json_object_new_string(next));
        }
        if (r->modern) {
            th_mcpi_put(res, "ttlMs", json_object_new_int64(cfg->list_ttl_ms));
            th_mcpi_put(res, "cacheScope", json_object_new_string("public"));
        }
        th_mcpi_finish_result(r, res);
        size_t len;
        const char *fresh = res ? th_rpc_serialize(res, &len) : NULL;
        if (w->v)
            text = own = fresh ? strdup(fresh) : NULL;
        else
            text = fresh ? th_registry_memo_put(reg, key, fresh) : NULL;
        json_object_put(res);
    }
    json_object *o = text ? json_object_new_object() : NULL;
    if (o) /* the registry owns a kept text; the object frees its own */
        json_object_set_serializer(o, json_object_userdata_to_json_string, (void *)text, own ? own_text_free : NULL);
    else
        free(own);
    return o;
}

static void m_tools_list(request *r)
{
    const th_registry *reg = r->reg;
    tool_view w;
    if (!view_open(r->caller, reg, &w)) {
        th_mcpi_send_error(r->s, r->msg->id, TH_RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
        return;
    }
    size_t count = w.n, offset = 0;
    json_object *cur;
    if (r->msg->params && json_object_object_get_ex(r->msg->params, "cursor", &cur) &&
        !json_object_is_type(cur, json_type_null)) {
        bool stale = false;
        if (!th_mcpi_plain_string(cur) ||
            !parse_cursor(json_object_get_string(cur), count, th_registry_version(reg), &offset, &stale)) {
            th_mcpi_send_error(r->s, r->msg->id, TH_RPC_INVALID_PARAMS,
                       stale ? "Invalid params: the tool list changed since this cursor was issued; list again "
                               "from the start"
                             : "Invalid params: invalid cursor",
                       NULL);
            free(w.v);
            return;
        }
    }
    size_t page = r->s->mcp->cfg.page_size ? r->s->mcp->cfg.page_size : count;
    size_t end = offset + page < count ? offset + page : count;
    json_object *res = tools_list_result(r, &w, offset, end, count);
    free(w.v);
    if (!res) {
        th_mcpi_send_error(r->s, r->msg->id, TH_RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
        return;
    }
    /* Not th_mcpi_reply(): th_mcpi_finish_result's members are in the text already. */
    th_mcpi_send_msg(r->s, th_rpc_result(r->msg->id, res));
}

/* ---- deadlines and cancellation of reads, gets and completions ---------- */

/*
** A resources/read, prompts/get or completion/complete while it runs, as
** its session tracks it (embedded in its res_job or prompt_job): found by
** notifications/cancelled through its id, and answered by --call-timeout
** with a JSON-RPC error (these results have no isError), which cancels its
** call; in process isolation the worker is killed past --cancel-grace-ms
** as for a tool (worker/supervisor.c). Whichever answers first, deadline
** or function, is the one response; the other is dropped.
*/
typedef struct side_op {
    th_mcp_session *s;
    char *key;               /* th_rpc_id_key of the id; NULL: untracked */
    char what[240];          /* "resource 'URI'": how messages name it */
    json_object *id;         /* the job's */
    rpc_batch *batch;        /* the job's, or NULL */
    th_call *call;           /* while its function runs; under s->lock */
    bool cancelled, answered; /* under s->lock */
    bool timed_out;          /* the deadline answered; under s->lock */
    th_pool_timer deadline;
    long long armed_ms, timeout_ms;
    uint32_t own_ms;         /* the descriptor's timeout_ms, 0: none */
    struct side_op *next;    /* in s->ops; under s->lock */
} side_op;

/*
** The timeout_ms of the descriptor that METHOD's PARAMS name in REG: the
** resource or template a read resolves to, the prompt of a get, the
** completion of a reference. 0 when it has none or nothing matches (the
** method itself then answers why).
*/
static uint32_t own_timeout(const th_registry *reg, const char *method, json_object *params)
{
    json_object *v = NULL, *ref = NULL;
    if (!params)
        return 0;
    if (strcmp(method, "resources/read") == 0) {
        if (!json_object_object_get_ex(params, "uri", &v) || !json_object_is_type(v, json_type_string))
            return 0;
        const th_res_entry *e = th_resources_resolve(th_registry_resources(reg), json_object_get_string(v), NULL);
        return e ? e->timeout_ms : 0;
    }
    const th_prompts *ps = th_registry_prompts(reg);
    if (strcmp(method, "prompts/get") == 0) {
        if (!json_object_object_get_ex(params, "name", &v) || !json_object_is_type(v, json_type_string))
            return 0;
        const th_prompt_entry *e = th_prompts_find(ps, json_object_get_string(v));
        return e ? e->timeout_ms : 0;
    }
    if (!json_object_object_get_ex(params, "ref", &ref) || !json_object_is_type(ref, json_type_object))
        return 0;
    bool prompt = json_object_object_get_ex(ref, "name", &v);
    if (!prompt && !json_object_object_get_ex(ref, "uri", &v))
        return 0;
    if (!json_object_is_type(v, json_type_string))
        return 0;
    const th_completion_entry *c =
        th_prompts_find_completion(ps, prompt ? json_object_get_string(v) : NULL, prompt ? NULL : json_object_get_string(v));
    return c ? c->timeout_ms : 0;
}

/* Track O (zeroed but for nothing) for the request ID of S. */
static void op_track(side_op *o, th_mcp_session *s, json_object *id, rpc_batch *batch)
{
    o->s = s;
    o->id = id;
    o->batch = batch;
    if (!(o->key = th_rpc_id_key(id)))
        return; /* out of memory: it just cannot be cancelled */
    pthread_mutex_lock(&s->lock);
    o->next = s->ops;
    s->ops = o;
    pthread_mutex_unlock(&s->lock);
}

/* th_call_hooks.bind: the call O's function runs on, or NULL as it goes. */
static void op_bind(void *ctx, th_call *call)
{
    side_op *o = ctx;
    pthread_mutex_lock(&o->s->lock);
    o->call = call;
    if (call && (o->cancelled || o->timed_out))
        th_call_cancel(call);
    pthread_mutex_unlock(&o->s->lock);
}

static void op_deadline(void *p);

/* O's function is about to run: false when it was cancelled meanwhile
 * (it must not run), else its deadline starts now. Pool thread. */
static bool op_start(side_op *o)
{
    th_mcp_session *s = o->s;
    pthread_mutex_lock(&s->lock);
    bool cancelled = o->cancelled;
    pthread_mutex_unlock(&s->lock);
    if (cancelled)
        return false;
    /* The descriptor's own when shorter than the host's, as for a tool. */
    long long host = s->mcp->cfg.call_timeout_ms, own = o->own_ms;
    o->timeout_ms = own > 0 && (host <= 0 || own < host) ? own : host;
    if (o->timeout_ms <= 0)
        return true;
    o->armed_ms = th_now_ms();
    if (th_pool_timer_start(s->mcp->pool, &o->deadline, o->armed_ms + o->timeout_ms, op_deadline, o) != TH_OK)
        th_log(TH_LOG_WARNING, "%s runs without a deadline", o->what);
    return true;
}

/*
** O passed its deadline: its client is answered now and its call
** cancelled; what the function returns later is discarded (op_finish).
** The time spent starting a worker is not the function's own, as for a
** tool call. On the pool's supervisor thread.
*/
static void op_deadline(void *p)
{
    side_op *o = p;
    th_mcp_session *s = o->s;
    pthread_mutex_lock(&s->lock);
    long long due = o->armed_ms + o->timeout_ms + (o->call ? th_call_startup_ms(o->call) : 0);
    bool later = th_now_ms() < due;
    pthread_mutex_unlock(&s->lock);
    if (later && th_pool_timer_start(s->mcp->pool, &o->deadline, due, op_deadline, o) == TH_OK)
        return;
    pthread_mutex_lock(&s->lock);
    bool answer = !o->answered && !o->cancelled; /* a cancelled request gets no response */
    if (answer)
        o->answered = o->timed_out = true;
    if (o->call)
        th_call_cancel(o->call);
    pthread_mutex_unlock(&s->lock);
    if (!answer)
        return;
    char after[32], msg[320];
    th_mcpi_format_duration(after, sizeof after, o->timeout_ms);
    th_log(TH_LOG_WARNING, "%s timed out after %s; it was cancelled and its late result will be discarded",
           o->what, after);
    snprintf(msg, sizeof msg, "%s timed out after %s", o->what, after);
    th_utf8_clip(msg);
    th_mcpi_answering = o->batch;
    th_mcpi_send_error(s, o->id, TH_RPC_TIMED_OUT, msg, NULL);
    th_mcpi_answering = NULL;
    if (o->batch)
        th_mcpi_batch_release(o->batch);
    pthread_mutex_lock(&s->lock);
    th_mcpi_response_out(s);
    pthread_mutex_unlock(&s->lock);
}

/*
** O's function returned (or never ran): stop its deadline and forget its
** id. True when its answer is still to be sent; false when it was
** cancelled (nothing is sent) or timed out (the deadline sent the one
** response, released the batch and counted the response out: see
** o->timed_out). Pool thread.
*/
static bool op_finish(side_op *o)
{
    th_mcp_session *s = o->s;
    if (!s)
        return true; /* never tracked: a list */
    th_pool_timer_stop(s->mcp->pool, &o->deadline);
    pthread_mutex_lock(&s->lock);
    bool send = !o->answered && !o->cancelled;
    o->answered = true;
    for (side_op **pp = &s->ops; *pp; pp = &(*pp)->next)
        if (*pp == o) {
            *pp = o->next;
            break;
        }
    pthread_mutex_unlock(&s->lock);
    free(o->key);
    o->key = NULL;
    return send;
}

/* notifications/cancelled for KEY, or the session's end (KEY NULL): the
 * request gets no response and its function is asked to stop. Under s->lock. */
static bool op_cancel_locked(th_mcp_session *s, const char *key)
{
    bool found = false;
    for (side_op *o = s->ops; o; o = o->next)
        if (!key || (o->key && strcmp(o->key, key) == 0)) {
            o->cancelled = true;
            if (o->call)
                th_call_cancel(o->call);
            found = true;
        }
    return found;
}

/* ---- resources (protocol/mcpresources.c) ------------------------------- */

/*
** A resource method as it runs: everything copied out of the request, so it
** can run on a pool thread. resources/read and resources/subscribe run
** there, never on the transport's thread, so that a slow read (a plugin's,
** or one that first starts its worker) holds up no other message.
*/
typedef struct res_job {
    th_mcp_session *s;    /* a reference */
    th_registry *reg;     /* a reference: a reload may swap the server's */
    char *method;
    json_object *id, *params; /* owned copies */
    bool modern, log_to_client;
    int version;
    th_log_level log_level;
    rpc_batch *batch;     /* held, or NULL */
    bool counted;         /* in the session's ninflight */
    side_op op;           /* a read's deadline and cancellation */
    th_reqobs *obs;       /* taken to the pool thread that answers */
} res_job;

static void res_job_free(res_job *rj)
{
    if (rj->counted) { /* its response is out: a drain stops waiting */
        pthread_mutex_lock(&rj->s->lock);
        th_mcpi_job_done(rj->s);
        if (!rj->op.timed_out) /* else the deadline's response was */
            th_mcpi_response_out(rj->s);
        pthread_mutex_unlock(&rj->s->lock);
    }
    th_reqobs_resume(rj->obs); /* never ran */
    th_reqobs_end_current(); /* not answered here: cancelled */
    free(rj->method);
    json_object_put(rj->id);
    json_object_put(rj->params);
    th_registry_unref(rj->reg);
    th_mcpi_session_unref(rj->s);
    free(rj);
}

/* The skills extension's methods read the registry as the resource methods
 * do, and answer in their types: one job type runs both. */
static void serve_resource(const th_mcpres_req *q, th_mcpres_answer *a)
{
    if (th_mcpskills_is_method(q->method))
        th_mcpskills_serve(q, a);
    else
        th_mcpres_serve(q, a);
}

static void run_resource(void *p)
{
    res_job *rj = p;
    th_reqobs_resume(rj->obs);
    rj->obs = NULL;
    th_mcp_session *s = rj->s;
    const th_mcp *m = s->mcp;
    th_mcpres_req q = {
        .reg = rj->reg,
        .method = rj->method,
        .params = rj->params,
        .modern = rj->modern,
        .titles = rj->version >= V_2025_06_18,
        .page_size = m->cfg.page_size,
        .list_ttl_ms = m->cfg.list_ttl_ms,
        .session = s,
    };
    /* A read's th_call reaches the client as a tool call's does, and is
     * held to the same result size. */
    json_object *meta, *token = NULL;
    if (rj->params && json_object_object_get_ex(rj->params, "_meta", &meta) &&
        json_object_is_type(meta, json_type_object))
        json_object_object_get_ex(meta, "progressToken", &token);
    th_call_hooks hooks = {
        .notify = th_mcpi_notify_hook,
        .ctx = s,
        .progress_token = token,
        .log_to_client = rj->log_to_client,
        .log_level = rj->log_level,
        .max_result_bytes = m->cfg.max_result_bytes,
    };
    if (rj->op.s) { /* a read: cancellable, and held to the deadline */
        hooks.bind = op_bind;
        hooks.bind_ctx = &rj->op;
    }
    q.hooks = &hooks;
    th_mcpres_answer a = {0};
    if (rj->batch && rj->op.s && batch_is_full(rj->batch)) {
        /* Its answer could only be replaced by the busy error: not read. */
        if (op_finish(&rj->op)) { /* else cancelled: no answer */
            th_mcpi_answering = rj->batch;
            batch_busy(s, rj->id, rj->batch->max_bytes);
            th_mcpi_answering = NULL;
        }
        th_mcpi_batch_release(rj->batch); /* no deadline was armed to release it */
        res_job_free(rj);
        return;
    }
    bool run = !rj->op.s || op_start(&rj->op);
    if (run)
        serve_resource(&q, &a);
    bool send = op_finish(&rj->op) && run;
    th_mcpi_answering = rj->batch;
    if (!send) {
        json_object_put(a.result); /* cancelled, or too late */
        json_object_put(a.data);
    } else if (a.result) {
        if (rj->modern)
            modern_members(m, a.result);
        th_mcpi_send_msg(s, th_rpc_result(rj->id, a.result));
    } else {
        th_mcpi_send_error(s, rj->id, a.code, a.message, a.data);
    }
    th_mcpi_answering = NULL;
    if (rj->batch && !rj->op.timed_out)
        th_mcpi_batch_release(rj->batch);
    res_job_free(rj);
}

static void m_resources(request *r)
{
    res_job *rj = calloc(1, sizeof *rj);
    if (!rj || !(rj->method = strdup(r->msg->method)) || json_object_deep_copy(r->msg->id, &rj->id, NULL) != 0 ||
        (r->msg->params && json_object_deep_copy(r->msg->params, &rj->params, NULL) != 0)) {
        if (rj) {
            free(rj->method);
            json_object_put(rj->id);
            free(rj);
        }
        th_mcpi_send_error(r->s, r->msg->id, TH_RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
        return;
    }
    atomic_fetch_add(&r->s->refs, 1);
    rj->s = r->s;
    rj->reg = th_registry_ref(r->reg);
    rj->modern = r->modern;
    rj->version = r->version;
    rj->log_to_client = r->log_to_client;
    rj->log_level = r->log_level;
    bool pooled = strcmp(rj->method, "resources/read") == 0 || strcmp(rj->method, "resources/subscribe") == 0;
    if (!pooled) { /* lists: quick, and they start nothing */
        rj->batch = th_mcpi_answering;
        rpc_batch *outer = th_mcpi_answering;
        if (rj->batch)
            th_mcpi_batch_hold(rj->batch);
        run_resource(rj);
        th_mcpi_answering = outer;
        return;
    }
    rj->batch = th_mcpi_answering;
    if (rj->batch)
        th_mcpi_batch_hold(rj->batch);
    /* In flight like a tool call, so that a drain at the end of input waits
     * for its response. */
    pthread_mutex_lock(&r->s->lock);
    r->s->ninflight++;
    r->s->nopen++; /* what th_mcp_session_drain waits for */
    pthread_mutex_unlock(&r->s->lock);
    rj->counted = true;
    if (strcmp(rj->method, "resources/read") == 0) {
        json_object *uri = NULL;
        if (rj->params)
            json_object_object_get_ex(rj->params, "uri", &uri);
        snprintf(rj->op.what, sizeof rj->op.what, "resource '%.200s'", uri ? json_object_get_string(uri) : "");
        rj->op.own_ms = own_timeout(rj->reg, rj->method, rj->params);
        op_track(&rj->op, r->s, rj->id, rj->batch);
    }
    rj->obs = th_reqobs_take();
    if (th_pool_submit(r->s->mcp->pool, run_resource, rj) != TH_OK) {
        th_reqobs_resume(rj->obs);
        rj->obs = NULL;
        op_finish(&rj->op);
        th_mcpi_send_error(r->s, r->msg->id, TH_RPC_INTERNAL_ERROR, "Internal error: the server is shutting down",
                           NULL);
        if (rj->batch)
            th_mcpi_batch_release(rj->batch);
        res_job_free(rj);
    }
}

/* ---- prompts and completion (protocol/mcpprompts.c, completion.c) ----- */

/*
** A prompt method as it runs, like a res_job: copied out of the request.
** prompts/get and completion/complete run on the pool (they run plugin
** code, in process isolation in its worker); a get may ask the client
** (th_call_ask) as a tool call does: modern, answered from the retry's
** inputResponses or recorded for an InputRequiredResult; legacy, a
** request to the client.
*/
typedef struct prompt_job {
    th_mcp_session *s;    /* a reference */
    th_registry *reg;     /* a reference */
    char *method, *key;   /* key: the request id's, for legacy asks */
    json_object *id, *params; /* owned copies */
    bool modern, log_to_client;
    int version;
    th_log_level log_level;
    unsigned client_caps, missing_caps;
    th_mrtr *mrtr;        /* a modern prompts/get's round state */
    rpc_batch *batch;     /* held, or NULL */
    bool counted;         /* in the session's ninflight */
    side_op op;           /* a get's or completion's deadline and cancellation */
    th_reqobs *obs;       /* taken to the pool thread that answers */
} prompt_job;

static void prompt_job_free(prompt_job *pj)
{
    if (pj->counted) { /* its response is out: a drain stops waiting */
        pthread_mutex_lock(&pj->s->lock);
        th_mcpi_job_done(pj->s);
        if (!pj->op.timed_out) /* else the deadline's response was */
            th_mcpi_response_out(pj->s);
        pthread_mutex_unlock(&pj->s->lock);
    }
    if (pj->batch && !pj->op.timed_out)
        th_mcpi_batch_release(pj->batch);
    th_reqobs_resume(pj->obs); /* never ran */
    th_reqobs_end_current(); /* not answered here: cancelled */
    free(pj->method);
    free(pj->key);
    json_object_put(pj->id);
    json_object_put(pj->params);
    th_mrtr_free(pj->mrtr);
    th_registry_unref(pj->reg);
    th_mcpi_session_unref(pj->s);
    free(pj);
}

/* th_call_hooks.ask of a get function: as ask_hook is for a tool. */
static th_rc prompt_ask_hook(void *ctx, th_call *call, const char *key, const char *method, json_object *params,
                             json_object **result)
{
    prompt_job *pj = ctx;
    unsigned kind = th_ask_kind_of(method);
    if (!(pj->client_caps & kind) || (pj->modern && !pj->mrtr)) {
        pj->missing_caps |= pj->client_caps & kind ? 0 : kind;
        json_object_put(params);
        return pj->client_caps & kind ? TH_ERR_IO : TH_ERR_CAPABILITY;
    }
    if (pj->modern)
        return th_mrtr_ask(pj->mrtr, key, method, params, result);
    return th_asks_request(pj->s->asks, th_mcpi_notify_hook, pj->s, pj->key, method, params,
                           th_mcpi_validation_cancelled, call, result);
}

static void run_prompt(void *p)
{
    prompt_job *pj = p;
    th_reqobs_resume(pj->obs);
    pj->obs = NULL;
    th_mcp_session *s = pj->s;
    const th_mcp *m = s->mcp;
    json_object *meta, *token = NULL;
    if (pj->params && json_object_object_get_ex(pj->params, "_meta", &meta) &&
        json_object_is_type(meta, json_type_object))
        json_object_object_get_ex(meta, "progressToken", &token);
    th_call_hooks hooks = {
        .notify = th_mcpi_notify_hook,
        .ctx = s,
        .progress_token = token,
        .log_to_client = pj->log_to_client,
        .log_level = pj->log_level,
        .max_result_bytes = m->cfg.max_result_bytes,
        .client_caps = pj->client_caps,
        .ask = prompt_ask_hook,
        .ask_ctx = pj,
        .bind = pj->op.s ? op_bind : NULL,
        .bind_ctx = &pj->op,
    };
    th_mcpprompt_req q = {
        .reg = pj->reg,
        .method = pj->method,
        .params = pj->params,
        .modern = pj->modern,
        .titles = pj->version >= V_2025_06_18,
        .page_size = m->cfg.page_size,
        .list_ttl_ms = m->cfg.list_ttl_ms,
        .hooks = &hooks,
    };
    th_mcpprompt_answer a = {0};
    bool run = !pj->op.s || op_start(&pj->op);
    if (run)
        th_mcpprompt_serve(&q, &a);
    if (!op_finish(&pj->op) || !run) { /* cancelled, or too late */
        json_object_put(a.result);
        json_object_put(a.data);
        prompt_job_free(pj);
        return;
    }
    if (pj->modern && pj->missing_caps) { /* -32021, as for a tool */
        json_object_put(a.result);
        json_object_put(a.data);
        a.result = NULL;
        a.code = TH_RPC_MISSING_CAPABILITY;
        a.data = json_object_new_object();
        json_object *req = json_object_new_object();
        for (unsigned k = 1; k <= TH_ASK_ROOTS; k <<= 1)
            if (pj->missing_caps & k)
                th_mcpi_put(req, th_ask_capability(k), json_object_new_object());
        th_mcpi_put(a.data, "requiredCapabilities", req);
        snprintf(a.message, sizeof a.message,
                 "Missing required client capability: the prompt needs one the request's _meta[\"" META_CAPS
                 "\"] does not declare");
    } else if (pj->modern && th_mrtr_pending(pj->mrtr)) {
        /* The get function stopped for input: what it built is not the answer. */
        json_object_put(a.result);
        json_object_put(a.data);
        a.data = NULL;
        if (!(a.result = th_mrtr_result(pj->mrtr))) {
            a.code = TH_RPC_INTERNAL_ERROR;
            snprintf(a.message, sizeof a.message, "Internal error: out of memory");
        }
    }
    th_mcpi_answering = pj->batch;
    if (a.result) {
        if (pj->modern)
            modern_members(m, a.result);
        th_mcpi_send_msg(s, th_rpc_result(pj->id, a.result));
    } else {
        th_mcpi_send_error(s, pj->id, a.code, a.message, a.data);
    }
    th_mcpi_answering = NULL;
    prompt_job_free(pj);
}

/* How PJ's messages name what it runs: "prompt 'NAME'", "completion of
 * prompt 'NAME'", "completion of resource template 'URI'". */
static void describe_prompt_op(prompt_job *pj)
{
    json_object *v = NULL, *ref = NULL;
    const char *name = "";
    if (strcmp(pj->method, "prompts/get") == 0) {
        if (pj->params && json_object_object_get_ex(pj->params, "name", &v))
            name = json_object_get_string(v);
        snprintf(pj->op.what, sizeof pj->op.what, "prompt '%.200s'", name);
        return;
    }
    if (pj->params)
        json_object_object_get_ex(pj->params, "ref", &ref);
    bool prompt = ref && json_object_object_get_ex(ref, "name", &v);
    if (!prompt && ref)
        json_object_object_get_ex(ref, "uri", &v);
    if (v)
        name = json_object_get_string(v);
    snprintf(pj->op.what, sizeof pj->op.what, "completion of %s '%.200s'", prompt ? "prompt" : "resource template",
             name);
}

static void m_prompts(request *r)
{
    th_mcp_session *s = r->s;
    prompt_job *pj = calloc(1, sizeof *pj);
    if (!pj || !(pj->method = strdup(r->msg->method)) || !(pj->key = th_rpc_id_key(r->msg->id)) ||
        json_object_deep_copy(r->msg->id, &pj->id, NULL) != 0 ||
        (r->msg->params && json_object_deep_copy(r->msg->params, &pj->params, NULL) != 0)) {
        if (pj) {
            free(pj->method);
            free(pj->key);
            json_object_put(pj->id);
            free(pj);
        }
        th_mcpi_send_error(s, r->msg->id, TH_RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
        return;
    }
    bool get = strcmp(pj->method, "prompts/get") == 0;
    if (r->modern && get) {
        /* A retry's answers are checked before anything runs; the state is
         * bound to the prompt (a "prompt:" name no tool can have). */
        json_object *n, *args = NULL;
        char name[300], why[512];
        snprintf(name, sizeof name, "prompt:%.250s",
                 pj->params && json_object_object_get_ex(pj->params, "name", &n) ? json_object_get_string(n) : "");
        if (pj->params && json_object_object_get_ex(pj->params, "arguments", &args) &&
            !json_object_is_type(args, json_type_object))
            args = NULL;
        if (!(pj->mrtr = th_mrtr_begin(name, args, s->principal, pj->params, why, sizeof why))) {
            th_mcpi_send_error(s, r->msg->id, TH_RPC_INVALID_PARAMS, why, NULL);
            free(pj->method);
            free(pj->key);
            json_object_put(pj->id);
            json_object_put(pj->params);
            free(pj);
            return;
        }
    }
    atomic_fetch_add(&s->refs, 1);
    pj->s = s;
    pj->reg = th_registry_ref(r->reg);
    pj->modern = r->modern;
    pj->version = r->version;
    pj->log_to_client = r->log_to_client;
    pj->log_level = r->log_level;
    if (r->modern) {
        json_object *caps = NULL;
        json_object_object_get_ex(r->meta, META_CAPS, &caps);
        pj->client_caps = th_ask_caps_of(caps);
    } else {
        pthread_mutex_lock(&s->lock);
        pj->client_caps = s->legacy_caps;
        pthread_mutex_unlock(&s->lock);
    }
    pj->batch = th_mcpi_answering;
    if (pj->batch)
        th_mcpi_batch_hold(pj->batch);
    if (strcmp(pj->method, "prompts/list") == 0) { /* quick, and it runs no plugin code */
        rpc_batch *outer = th_mcpi_answering;
        run_prompt(pj);
        th_mcpi_answering = outer;
        return;
    }
    /* Open like a tool call, so that a drain at the end of input waits for
     * its response. */
    pthread_mutex_lock(&s->lock);
    s->ninflight++;
    s->nopen++;
    pthread_mutex_unlock(&s->lock);
    pj->counted = true;
    describe_prompt_op(pj);
    pj->op.own_ms = own_timeout(pj->reg, pj->method, pj->params);
    op_track(&pj->op, s, pj->id, pj->batch);
    pj->obs = th_reqobs_take();
    if (th_pool_submit(s->mcp->pool, run_prompt, pj) != TH_OK) {
        th_reqobs_resume(pj->obs);
        pj->obs = NULL;
        op_finish(&pj->op);
        th_mcpi_send_error(s, r->msg->id, TH_RPC_INTERNAL_ERROR, "Internal error: the server is shutting down", NULL);
        prompt_job_free(pj);
    }
}

static void n_cancelled(request *r)
{
    json_object *rid;
    char *key;
    if (!r->msg->params || !json_object_object_get_ex(r->msg->params, "requestId", &rid) ||
        !(key = th_rpc_id_key(rid)))
        return;
    pthread_mutex_lock(&r->s->lock);
    job *j = th_mcpi_find_job(r->s, key);
    if (j) {
        j->cancelled = true;
        th_call_cancel(j->call);
    }
    /* A read, get or completion: no response, and its function stops. */
    bool op = !j && op_cancel_locked(r->s, key);
    /* On stdio a subscription ends this way: nothing more is sent for it. */
    if (!j && !op && r->s->subs)
        th_subs_cancel(r->s->subs, key);
    pthread_mutex_unlock(&r->s->lock);
    free(key);
}

/* A listen stream's resourceSubscriptions: each resource's watch runs (in
 * process isolation it starts the plugin's worker, so that its updates
 * flow), on a pool thread as resources/subscribe's does: a worker dies
 * with the thread that started it. */
typedef struct watch_job {
    th_registry *reg; /* a reference */
    json_object *uris; /* a reference */
} watch_job;

static void watch_job_free(void *p)
{
    watch_job *wj = p;
    th_registry_unref(wj->reg);
    json_object_put(wj->uris);
    free(wj);
}

static void run_watch(void *p)
{
    watch_job *wj = p;
    for (size_t i = 0; i < json_object_array_length(wj->uris); i++) {
        const th_res_entry *e = th_resources_resolve(th_registry_resources(wj->reg),
                                                     json_object_get_string(json_object_array_get_idx(wj->uris, i)),
                                                     NULL);
        if (e && e->watch)
            e->watch(e->user_data);
    }
    watch_job_free(wj);
}

static void watch_uris(th_mcp_session *s, json_object *filter)
{
    json_object *uris;
    if (!filter || !json_object_object_get_ex(filter, "resourceSubscriptions", &uris) ||
        !json_object_is_type(uris, json_type_array) || !json_object_array_length(uris))
        return;
    watch_job *wj = malloc(sizeof *wj);
    if (!wj)
        return;
    wj->reg = th_regslot_get(s->mcp->slot);
    wj->uris = json_object_get(uris);
    if (th_pool_submit_ex(s->mcp->pool, run_watch, watch_job_free, wj) != TH_OK)
        watch_job_free(wj);
}

/* subscriptions/listen (2026-07-28): acknowledged at once, answered only
 * when the server ends it (th_mcp_session_free); events arrive through
 * th_mcp_notify. */
static void m_listen(request *r)
{
    th_mcp_session *s = r->s;
    json_object *filter = NULL;
    char msg[256];
    if (r->msg->params)
        json_object_object_get_ex(r->msg->params, "notifications", &filter);
    pthread_mutex_lock(&s->lock);
    if (!s->subs)
        s->subs = th_subs_new();
    json_object *ack = s->subs ? th_subs_listen(s->subs, r->msg->id, filter, msg, sizeof msg) : NULL;
    if (!s->subs)
        snprintf(msg, sizeof msg, "Internal error: out of memory");
    /* The acknowledgment goes first: events are sent under this lock too
     * (session_notify), so none can overtake it. */
    if (ack)
        th_mcpi_send_msg(s, ack);
    pthread_mutex_unlock(&s->lock);
    if (ack)
        watch_uris(s, filter);
    if (!ack) {
        int code = strncmp(msg, "Invalid params", 14) == 0    ? TH_RPC_INVALID_PARAMS
                   : strncmp(msg, "Invalid Request", 15) == 0 ? TH_RPC_INVALID_REQUEST
                                                              : TH_RPC_INTERNAL_ERROR;
        th_mcpi_send_error(s, r->msg->id, code, msg, NULL);
    }
}

static void n_ignore(request *r)
{
    (void)r;
}

/* ---- dispatch ---------------------------------------------------------- */

enum { ERA_LEGACY = 1, ERA_MODERN = 2, ERA_BOTH = 3 };

typedef struct method {
    const char *name;
    unsigned eras;
    bool before_init; /* legacy: allowed before initialize */
    void (*fn)(request *r);
} method;

static const method requests[] = {
    {.name = "initialize", .eras = ERA_LEGACY, .before_init = true, .fn = m_initialize},
    {.name = "ping", .eras = ERA_LEGACY, .before_init = true, .fn = m_ping},
    {.name = "logging/setLevel", .eras = ERA_LEGACY, .fn = m_set_level},
    {.name = "server/discover", .eras = ERA_MODERN, .fn = m_discover},
    {.name = "tools/list", .eras = ERA_BOTH, .fn = m_tools_list},
    {.name = "tools/call", .eras = ERA_BOTH, .fn = th_mcpi_m_tools_call},
    {.name = "subscriptions/listen", .eras = ERA_MODERN, .fn = m_listen},
    {.name = "resources/list", .eras = ERA_BOTH, .fn = m_resources},
    {.name = "resources/templates/list", .eras = ERA_BOTH, .fn = m_resources},
    {.name = "resources/read", .eras = ERA_BOTH, .fn = m_resources},
    {.name = "resources/subscribe", .eras = ERA_LEGACY, .fn = m_resources},
    {.name = "resources/unsubscribe", .eras = ERA_LEGACY, .fn = m_resources},
    {.name = "tasks/get", .eras = ERA_BOTH, .fn = th_mcpi_m_tasks},
    {.name = "tasks/update", .eras = ERA_MODERN, .fn = th_mcpi_m_tasks},
    {.name = "tasks/cancel", .eras = ERA_BOTH, .fn = th_mcpi_m_tasks},
    {.name = "prompts/list", .eras = ERA_BOTH, .fn = m_prompts},
    {.name = "prompts/get", .eras = ERA_BOTH, .fn = m_prompts},
    {.name = "completion/complete", .eras = ERA_BOTH, .fn = m_prompts},
    /* The skills extension (protocol/mcpskills.c), declared from 2026-07-28 on. */
    {.name = "skills/list", .eras = ERA_MODERN, .fn = m_resources},
    {.name = "skills/get", .eras = ERA_MODERN, .fn = m_resources},
    {.name = "resources/directory/read", .eras = ERA_MODERN, .fn = m_resources},
    {.name = "tasks/result", .eras = ERA_LEGACY, .fn = th_mcpi_m_tasks},
    {.name = "tasks/list", .eras = ERA_LEGACY, .fn = th_mcpi_m_tasks},
};

static const method notifications[] = {
    {.name = "notifications/initialized", .eras = ERA_LEGACY, .before_init = true, .fn = n_ignore},
    {.name = "notifications/cancelled", .eras = ERA_BOTH, .before_init = true, .fn = n_cancelled},
};

static const method *find_method(const method *table, size_t n, const char *name)
{
    /* The first byte first: a call to strcmp for each name cost more than
     * the lookup needs (the names differ early). */
    for (size_t i = 0; i < n; i++)
        if (table[i].name[0] == name[0] && strcmp(table[i].name, name) == 0)
            return &table[i];
    return NULL;
}

/*
** Read the modern per-request fields. Returns 0 when the request is modern
** and well-formed, 1 when it is a legacy request, -1 when an error was sent.
*/
static int read_meta(request *r)
{
    json_object *meta = NULL, *v, *lv;
    if (r->msg->call_lite)
        meta = r->msg->call_meta; /* a plain tools/call's params (jsonrpc.h) */
    else if (r->msg->params)
        th_json_get(r->msg->params, "_meta", &meta);
    if (json_object_is_type(meta, json_type_object))
        r->meta = meta;
    if (!r->meta || !th_json_get(r->meta, META_VERSION, &v))
        return 1;
    if (!th_mcpi_plain_string(v)) {
        th_mcpi_send_error(r->s, r->msg->id, TH_RPC_INVALID_PARAMS,
                           "Invalid params: _meta[\"" META_VERSION "\"] must be a string", NULL);
        return -1;
    }
    const char *requested = json_object_get_string(v);
    int idx = version_index(requested);
    if (idx >= 0 && idx != V_MODERN) {
        /* A legacy revision named per request is a legacy request: an
         * initialize starts the handshake, anything else is served by the
         * session that negotiated that revision (and before initialize is
         * told to send it). It is never "unsupported": -32022 would list
         * it as supported. */
        pthread_mutex_lock(&r->s->lock);
        bool other = r->s->initialized && r->s->legacy_version != idx;
        int negotiated = r->s->legacy_version;
        pthread_mutex_unlock(&r->s->lock);
        if (!other || strcmp(r->msg->method, "initialize") == 0)
            return 1;
        th_mcpi_send_errorf(r->s, r->msg->id, TH_RPC_INVALID_REQUEST,
                            "Invalid Request: _meta[\"" META_VERSION "\"] names %s, but initialize negotiated %s",
                            th_mcpi_versions[idx], th_mcpi_versions[negotiated]);
        return -1;
    }
    if (idx != V_MODERN) {
        json_object *data = json_object_new_object();
        th_mcpi_put(data, "supported", supported_versions());
        th_mcpi_put(data, "requested", json_object_new_string(requested));
        th_mcpi_send_error(r->s, r->msg->id, TH_RPC_UNSUPPORTED_VERSION, "Unsupported protocol version", data);
        return -1;
    }
    if (!th_json_get(r->meta, META_CAPS, &v) || !json_object_is_type(v, json_type_object)) {
        th_mcpi_send_error(r->s, r->msg->id, TH_RPC_INVALID_PARAMS,
                           "Invalid params: _meta[\"" META_CAPS "\"] is required and must be an object", NULL);
        return -1;
    }
    r->modern = true;
    r->version = V_MODERN;
    r->log_to_client = false;
    if (th_json_get(r->meta, META_LOGLEVEL, &lv)) {
        int level = th_mcpi_plain_string(lv) ? th_log_level_parse(json_object_get_string(lv)) : -1;
        if (level < 0) {
            th_mcpi_send_error(r->s, r->msg->id, TH_RPC_INVALID_PARAMS,
                               "Invalid params: _meta[\"" META_LOGLEVEL "\"] must be a log level name", NULL);
            return -1;
        }
        r->log_to_client = true;
        r->log_level = (th_log_level)level;
    }
    return 0;
}

static void serve_request(request *rp, const method *m)
{
    request r = *rp;
    th_mcp_session *s = r.s;
    th_rpc_msg *msg = r.msg;
    int era = read_meta(&r);
    if (era < 0)
        return;
    if (th_mcpi_answering && (era == 0 || m->fn == m_initialize)) {
        th_mcpi_send_errorf(s, msg->id, TH_RPC_INVALID_REQUEST, "Invalid Request: %s",
                            era == 0 ? "a " TH_MCP_MODERN_VERSION " request cannot be part of a JSON-RPC batch"
                             : "initialize must not be part of a JSON-RPC batch");
        return;
    }
    if (era == 0) {
        th_reqobs_era(&r, V_MODERN);
        if (!(m->eras & ERA_MODERN)) {
            th_mcpi_send_errorf(s, msg->id, TH_RPC_METHOD_NOT_FOUND, "Method not found: %s is not part of protocol %s",
                                msg->method, TH_MCP_MODERN_VERSION);
            return;
        }
    } else {
        if (!(m->eras & ERA_LEGACY)) {
            th_mcpi_send_errorf(s, msg->id, TH_RPC_INVALID_PARAMS,
                                "Invalid params: %s needs _meta[\"" META_VERSION "\"] and _meta[\"" META_CAPS "\"]",
                                msg->method);
            return;
        }
        pthread_mutex_lock(&s->lock);
        bool init = s->initialized;
        r.version = s->legacy_version;
        r.log_level = s->legacy_log_level;
        r.legacy_caps = s->legacy_caps;
        pthread_mutex_unlock(&s->lock);
        th_reqobs_era(&r, init ? r.version : -1);
        if (!init && !m->before_init) {
            th_mcpi_send_errorf(s, msg->id, TH_RPC_INVALID_REQUEST,
                                "Invalid Request: server not initialized; send initialize first, or give "
                                "params._meta[\"%s\"] = \"%s\" on every request",
                                META_VERSION, TH_MCP_MODERN_VERSION);
            return;
        }
        r.log_to_client = true;
    }
    /* One registry for the whole request, whatever a reload swaps in. */
    r.reg = th_regslot_get(s->mcp->slot);
    pthread_mutex_lock(&s->lock);
    r.caller = th_policy_ref(s->caller);
    pthread_mutex_unlock(&s->lock);
    m->fn(&r);
    th_policy_unref(r.caller);
    th_registry_unref(r.reg);
}

static void handle_request(th_mcp_session *s, th_rpc_msg *msg)
{
    request r = {.s = s, .msg = msg};
    const method *m = find_method(requests, sizeof requests / sizeof requests[0], msg->method);
    if (!m) {
        th_mcpi_send_errorf(s, msg->id, TH_RPC_METHOD_NOT_FOUND, "Method not found: %.200s", msg->method);
        return;
    }
    th_reqobs_begin(&r, m->name);
    serve_request(&r, m);
    th_reqobs_end_current(); /* answered, or taken along, by now */
}

static void handle_batch(th_mcp_session *s, th_rpc_msg *msg);

static void dispatch(th_mcp_session *s, th_rpc_msg *msg)
{
    switch (msg->kind) {
    case TH_RPC_REQUEST:
        handle_request(s, msg);
        break;
    case TH_RPC_NOTIFICATION: {
        /* Never answered, whatever is wrong with them. */
        const method *m = find_method(notifications, sizeof notifications / sizeof notifications[0], msg->method);
        if (m) {
            request r = {.s = s, .msg = msg};
            m->fn(&r);
        }
        break;
    }
    case TH_RPC_RESPONSE:
        /* The answer to a handler's question (legacy), or a stray. */
        if (!th_asks_deliver(s->asks, msg->msg))
            th_log(TH_LOG_DEBUG, "a response no request of ours waits for was dropped");
        break;
    case TH_RPC_INVALID:
        if (!msg->silent)
            th_mcpi_send_error(s, msg->id, msg->error_code, msg->error_message, NULL);
        break;
    case TH_RPC_BATCH:
        handle_batch(s, msg);
        break;
    }
}

/* Revisions whose base protocol has JSON-RPC batches: 2025-03-26 added them
 * (servers MUST accept them) and 2025-06-18 removed them; 2024-11-05 has no
 * batch messages in its schema. */
static bool has_batches(int v)
{
    return v == V_2025_03_26;
}

/*
** A JSON-RPC batch: served only in a session that negotiated a revision
** with batches. Each element is handled as a message of its own, tool calls
** still running concurrently; their responses go out as one array.
*/
static void handle_batch(th_mcp_session *s, th_rpc_msg *msg)
{
    pthread_mutex_lock(&s->lock);
    bool init = s->initialized;
    int v = s->legacy_version;
    pthread_mutex_unlock(&s->lock);
    if (th_mcpi_answering) {
        /* th_rpc_parse_value never yields a batch; defensive */
        th_mcpi_send_error(s, NULL, TH_RPC_INVALID_REQUEST, "Invalid Request: batches do not nest", NULL);
        return;
    }
    if (!init || !has_batches(v)) {
        th_mcpi_send_errorf(s, NULL, TH_RPC_INVALID_REQUEST,
                            "Invalid Request: JSON-RPC batches are served only after initialize negotiated protocol "
                            "2025-03-26 (the one revision that has them); %s%s",
                            init ? "this session negotiated " : "this session has not initialized",
                            init ? th_mcpi_versions[v] : "");
        return;
    }
    rpc_batch *b = batch_new(s);
    if (!b) {
        th_mcpi_send_error(s, NULL, TH_RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
        return;
    }
    size_t n = json_object_array_length(msg->msg);
    /* Each call of a batch holds its share of the batch's text in flight. */
    s->msg_len = n ? s->msg_len / n : s->msg_len;
    for (size_t i = 0; i < n; i++) {
        th_rpc_msg m;
        th_rpc_parse_value(json_object_array_get_idx(msg->msg, i), &m);
        th_mcpi_answering = b;
        if (m.kind == TH_RPC_REQUEST && (i >= BATCH_MAX_REQUESTS || batch_is_full(b)))
            batch_busy(s, m.id, b->max_bytes);
        else
            dispatch(s, &m);
        th_mcpi_answering = NULL;
        th_rpc_msg_clear(&m);
    }
    th_mcpi_batch_release(b);
}

void th_mcp_session_handle_msg(th_mcp_session *s, th_rpc_msg *m, const char *text, size_t len)
{
    s->msg_len = len;
    if (th_log_enabled(TH_LOG_DEBUG))
        trace("in", text, len);
    dispatch(s, m);
    th_rpc_msg_clear(m);
}

void th_mcp_session_handle(th_mcp_session *s, const char *text, size_t len)
{
    th_rpc_msg msg;
    th_rpc_parse(text, len, &msg);
    th_mcp_session_handle_msg(s, &msg, text, len);
}

void th_mcp_session_more(th_mcp_session *s, bool more)
{
    s->more = more;
    s->says_more = true;
}

void th_mcp_batch_begin(th_mcp *mcp)
{
    th_pool_hold(mcp->pool);
}

void th_mcp_batch_end(th_mcp *mcp)
{
    th_call_flush_held(); /* deferred calls' frames go before the reader waits */
    th_pool_release(mcp->pool);
}

void th_mcp_session_reject(th_mcp_session *s, int code, const char *message)
{
    th_mcpi_send_error(s, NULL, code, message, NULL);
}

void th_mcp_session_set_caller(th_mcp_session *s, th_policy *caller)
{
    th_policy_ref(caller);
    pthread_mutex_lock(&s->lock);
    th_policy *old = s->caller;
    s->caller = caller;
    pthread_mutex_unlock(&s->lock);
    th_policy_unref(old);
}

void th_mcp_session_set_principal(th_mcp_session *s, const char *principal)
{
    free(s->principal);
    s->principal = principal ? strdup(principal) : NULL;
}

void th_mcp_session_set_who(th_mcp_session *s, const char *who)
{
    free(s->who);
    s->who = who ? strdup(who) : NULL;
}

void th_mcp_session_set_transport(th_mcp_session *s, const char *transport, const char *session_id)
{
    s->trace_transport = transport;
    free(s->trace_session);
    s->trace_session = session_id ? strdup(session_id) : NULL;
}

void th_mcp_session_undeliverable(th_mcp_session *s, json_object *req, const char *why)
{
    json_object *id = NULL;
    if (!th_rpc_member(req, "id", &id))
        return;
    th_log(TH_LOG_WARNING, "a tool's request to its client could not be sent: %s", why);
    json_object *e = th_rpc_error(id, TH_RPC_INTERNAL_ERROR, why, NULL);
    if (e)
        th_asks_deliver(s->asks, e);
    json_object_put(e);
}

/* ---- session lifetime -------------------------------------------------- */

th_mcp_session *th_mcp_session_new(th_mcp *mcp, th_mcp_send_fn send, void *ctx)
{
    th_mcp_session *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->mcp = mcp;
    s->send = send;
    s->send_ctx = ctx;
    atomic_init(&s->refs, 1);
    s->legacy_version = LATEST_LEGACY;
    s->legacy_log_level = TH_LOG_DEBUG; /* until setLevel: everything */
    s->inflight = s->few;
    s->nbuckets = FEW_BUCKETS;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->idle, NULL);
    pthread_rwlock_init(&s->send_lock, NULL);
    if (!(s->asks = th_asks_new())) {
        th_mcpi_session_unref(s);
        return NULL;
    }
    pthread_mutex_lock(&mcp->sessions_lock);
    s->next = mcp->sessions;
    if (s->next)
        s->next->prev = s;
    mcp->sessions = s;
    pthread_mutex_unlock(&mcp->sessions_lock);
    return s;
}

void th_mcp_session_send_text(th_mcp_session *s, th_mcp_send_text_fn send_text)
{
    s->send_text = send_text;
}

void th_mcp_session_run_inline(th_mcp_session *s, void (*begin)(void *ctx), void (*end)(void *ctx), void *ctx)
{
    s->inline_begin = begin;
    s->inline_end = end;
    s->inline_ctx = ctx;
}

void th_mcp_session_wait_here(th_mcp_session *s, long long limit_ms)
{
    s->wait_limit_ms = limit_ms > 0 ? limit_ms : 0;
}

size_t th_mcp_session_inflight(th_mcp_session *s)
{
    pthread_mutex_lock(&s->lock);
    size_t n = s->nunanswered;
    pthread_mutex_unlock(&s->lock);
    return n;
}

size_t th_mcp_session_open(th_mcp_session *s)
{
    pthread_mutex_lock(&s->lock);
    size_t n = s->nopen;
    pthread_mutex_unlock(&s->lock);
    return n;
}

bool th_mcp_session_drain(th_mcp_session *s, long long deadline_ms)
{
    pthread_mutex_lock(&s->lock);
    while (s->nopen > 0 && th_cond_wait_until(&s->idle, &s->lock, deadline_ms))
        ;
    bool drained = s->nopen == 0;
    pthread_mutex_unlock(&s->lock);
    return drained;
}

void th_mcp_session_cancel_all(th_mcp_session *s)
{
    pthread_mutex_lock(&s->lock);
    for (size_t b = 0; b < s->nbuckets; b++)
        for (job *j = s->inflight[b]; j; j = j->next) {
            j->cancelled = true;
            th_call_cancel(j->call);
        }
    op_cancel_locked(s, NULL);
    pthread_mutex_unlock(&s->lock);
}

void th_mcp_session_end_subscriptions(th_mcp_session *s)
{
    json_object *closing = json_object_new_array();
    if (!closing)
        return;
    pthread_mutex_lock(&s->lock);
    if (s->subs)
        th_subs_close_all(s->subs, closing);
    /* Under the lock, as events are: nothing follows a closing response. */
    for (size_t i = 0; i < json_object_array_length(closing); i++)
        th_mcpi_send_msg(s, json_object_get(json_object_array_get_idx(closing, i)));
    pthread_mutex_unlock(&s->lock);
    json_object_put(closing);
}

void th_mcp_session_free(th_mcp_session *s)
{
    if (!s)
        return;
    th_mcp *m = s->mcp;
    pthread_mutex_lock(&m->sessions_lock);
    if (s->prev)
        s->prev->next = s->next;
    else
        m->sessions = s->next;
    if (s->next)
        s->next->prev = s->prev;
    pthread_mutex_unlock(&m->sessions_lock);
    /* The connection is gone: its subscriptions end without a word. */
    pthread_mutex_lock(&s->lock);
    th_subs_free(s->subs);
    s->subs = NULL;
    pthread_mutex_unlock(&s->lock);
    th_mcpres_session_gone(s); /* no resource notice reaches it from here */
    if (s->task_owner) /* its tasks and their deferred waits end with it */
        th_tasks_drop_owner(m->tasks, s->task_owner);
    pthread_rwlock_wrlock(&s->send_lock);
    s->closed = true;
    pthread_rwlock_unlock(&s->send_lock);
    th_asks_close(s->asks); /* a handler waiting for its client gets TH_ERR_IO */
    pthread_mutex_lock(&s->lock);
    s->closing = true;
    job *finished = s->finished;
    s->finished = NULL;
    pthread_mutex_unlock(&s->lock);
    th_mcpi_free_finished(finished);
    th_mcpi_session_unref(s);
}

/* ---- hot reload ------------------------------------------------------- */

th_registry *th_mcp_registry(th_mcp *m)
{
    return th_regslot_get(m->slot);
}

/* Tell session S about EVENT: a legacy session that was initialized gets
 * the plain notification (its capabilities said listChanged), and each of
 * its subscriptions that asked gets one carrying its id. Under s->lock, so
 * no acknowledgment is overtaken and no cancelled subscription hears more. */
static void session_notify(th_mcp_session *s, th_sub_event event, const char *uri)
{
    json_object *out = json_object_new_array();
    if (!out)
        return;
    pthread_mutex_lock(&s->lock);
    const char *note = th_subs_method(event);
    /* A legacy session hears of list changes (its capabilities said
     * listChanged) and of the resources it resources/subscribe'd. */
    if (s->initialized && note && (!uri || th_mcpres_subscribed(s, uri))) {
        json_object *params = NULL;
        if (uri && (params = json_object_new_object()))
            th_mcpi_put(params, "uri", json_object_new_string(uri));
        th_mcpi_push(out, th_rpc_notification(note, params));
    }
    if (s->subs)
        th_subs_event(s->subs, event, uri, out);
    for (size_t i = 0; i < json_object_array_length(out); i++)
        th_mcpi_send_msg(s, json_object_get(json_object_array_get_idx(out, i)));
    pthread_mutex_unlock(&s->lock);
    json_object_put(out);
}

void th_mcp_notify(th_mcp *m, th_sub_event event, const char *uri)
{
    /* Outside any request: a notification never joins a batch being
     * answered on this thread. */
    rpc_batch *outer = th_mcpi_answering;
    th_mcpi_answering = NULL;
    pthread_mutex_lock(&m->sessions_lock);
    for (th_mcp_session *s = m->sessions; s; s = s->next)
        session_notify(s, event, uri);
    pthread_mutex_unlock(&m->sessions_lock);
    th_mcpi_answering = outer;
}

void th_mcp_end_subscriptions(th_mcp *m)
{
    pthread_mutex_lock(&m->sessions_lock);
    for (th_mcp_session *s = m->sessions; s; s = s->next)
        th_mcp_session_end_subscriptions(s);
    pthread_mutex_unlock(&m->sessions_lock);
}

void th_mcp_swap_registry(th_mcp *m, th_registry *reg)
{
    th_registry *old = th_regslot_get(m->slot);
    th_regslot_swap(m->slot, reg);
    bool same = th_registry_same_tools(old, reg), same_res = th_registry_same_resources(old, reg);
    bool same_prompts = th_prompts_same(th_registry_prompts(old), th_registry_prompts(reg));
    th_registry_unref(old);
    if (!same)
        th_mcp_notify(m, TH_SUB_TOOLS_LIST_CHANGED, NULL);
    if (!same_res)
        th_mcp_notify(m, TH_SUB_RESOURCES_LIST_CHANGED, NULL);
    if (!same_prompts)
        th_mcp_notify(m, TH_SUB_PROMPTS_LIST_CHANGED, NULL);
}
