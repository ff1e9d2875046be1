/*
** mcp.c: the MCP protocol for both eras. A request with modern per-request
** _meta (2026-07-28) is served statelessly; anything else follows the legacy
** initialize handshake of its session. Methods are a table; tools/call runs on
** the worker pool, with cancellation, progress and logging wired to th_call.
*/
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "callctx.h"
#include "crashnote.h"
#include "jsonrpc.h"
#include "log.h"
#include "mcp.h"
#include "util.h"
#include "workpool.h"

/* Every revision, oldest first; the index orders features by revision. */
static const char *const versions[] = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25",
                                       TH_MCP_MODERN_VERSION};
enum { V_2024_11_05, V_2025_03_26, V_2025_06_18, V_2025_11_25, V_MODERN, N_VERSIONS };
#define LATEST_LEGACY V_2025_11_25

#define META_VERSION "io.modelcontextprotocol/protocolVersion"
#define META_CAPS "io.modelcontextprotocol/clientCapabilities"
#define META_CLIENT "io.modelcontextprotocol/clientInfo"
#define META_LOGLEVEL "io.modelcontextprotocol/logLevel"
#define META_SERVER "io.modelcontextprotocol/serverInfo"

#define CURSOR_PREFIX "th1:"
#define INFLIGHT_BUCKETS 4096
/* Calls one session may have in flight; past it a tools/call is refused
 * (TH_RPC_SERVER_BUSY) instead of taking unbounded memory. */
#define MAX_INFLIGHT 4096

struct th_mcp {
    th_registry *reg;
    th_mcp_config cfg;
    th_pool *pool;
};

typedef struct job job;

struct th_mcp_session {
    th_mcp *mcp;
    th_mcp_send_fn send;
    void *send_ctx;
    atomic_int refs;          /* the transport's, plus one per job */

    pthread_mutex_t lock;     /* everything below */
    pthread_cond_t idle;      /* inflight dropped to zero */
    bool initialized;         /* legacy initialize received */
    int legacy_version;       /* index into versions[] */
    th_log_level legacy_log_level;
    job *inflight[INFLIGHT_BUCKETS];
    size_t ninflight;
    job *finished;            /* answered calls for the reader to free */
    bool closing;             /* th_mcp_session_free began: free your own */

    pthread_rwlock_t send_lock; /* senders read, closing writes; guards closed */
    bool closed;
};

/* The per-request context a method handler gets. */
typedef struct request {
    th_mcp_session *s;
    th_rpc_msg *msg;
    bool modern;
    int version;           /* index into versions[] */
    json_object *meta;     /* params._meta or NULL */
    th_log_level log_level;
    bool log_to_client;
} request;

struct job {
    th_mcp_session *s;
    th_registry *reg;
    const th_entry *entry;
    json_object *msg;       /* the whole request, kept alive */
    json_object *id;        /* borrowed from msg */
    json_object *args;      /* borrowed from msg, or an owned empty object */
    bool args_owned;
    bool modern;
    int version;            /* index into versions[] */
    th_call *call;
    bool cancelled;         /* under s->lock */
    char key[160];
    job *next;              /* bucket chain */
};

void th_mcp_config_default(th_mcp_config *cfg)
{
    cfg->server_name = "toolhost";
    cfg->server_version = PACKAGE_VERSION;
    cfg->instructions = NULL;
    cfg->page_size = 100;
    cfg->list_ttl_ms = 60000;
    cfg->max_threads = 64;
}

static const char default_instructions[] =
    "toolhost serves tools loaded from shared-object plugins. Call tools/list to see them; "
    "a tool that fails returns isError with a message saying what to correct.";

th_mcp *th_mcp_new(th_registry *reg, const th_mcp_config *cfg)
{
    th_mcp *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->cfg = *cfg;
    if (!m->cfg.instructions)
        m->cfg.instructions = default_instructions;
    m->pool = th_pool_new(cfg->max_threads);
    if (!m->pool) {
        free(m);
        return NULL;
    }
    m->reg = th_registry_ref(reg);
    return m;
}

bool th_mcp_free(th_mcp *m, long long deadline_ms)
{
    if (!m)
        return true;
    if (!th_pool_shutdown(m->pool, deadline_ms)) {
        th_log(TH_LOG_WARNING, "tool calls still running at exit; not waiting for them");
        return false;
    }
    th_registry_unref(m->reg);
    free(m);
    return true;
}

/*
** json-c asserts on a NULL container. Under memory pressure every
** constructor here may return NULL, so building goes through these: a
** NULL container drops the value, and the reply paths answer -32603 when
** the result itself could not be made.
*/
static void put(json_object *obj, const char *key, json_object *val)
{
    if (obj)
        json_object_object_add(obj, key, val);
    else
        json_object_put(val);
}

static void push(json_object *arr, json_object *val)
{
    if (arr)
        json_object_array_add(arr, val);
    else
        json_object_put(val);
}

/* ---- sending ---------------------------------------------------------- */

static void session_unref(th_mcp_session *s)
{
    if (atomic_fetch_sub(&s->refs, 1) != 1)
        return;
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->idle);
    pthread_rwlock_destroy(&s->send_lock);
    free(s);
}

static void send_msg(th_mcp_session *s, json_object *msg)
{
    if (!msg) {
        th_log(TH_LOG_ERROR, "out of memory building a response; it was not sent");
        return;
    }
    /* Sends run concurrently (the transport keeps messages whole); the lock
     * only keeps th_mcp_session_free from closing under a send. */
    pthread_rwlock_rdlock(&s->send_lock);
    if (!s->closed)
        s->send(s->send_ctx, msg);
    else
        json_object_put(msg);
    pthread_rwlock_unlock(&s->send_lock);
}

static void send_error(th_mcp_session *s, json_object *id, int code, const char *message, json_object *data)
{
    send_msg(s, th_rpc_error(id, code, message, data));
}

static void send_errorf(th_mcp_session *s, json_object *id, int code, const char *fmt, ...) TH_PRINTF(4, 5);
static void send_errorf(th_mcp_session *s, json_object *id, int code, const char *fmt, ...)
{
    char m[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    th_utf8_clip(m); /* names from the client may have been cut mid-character */
    send_error(s, id, code, m, NULL);
}

static json_object *server_info(const th_mcp *m)
{
    json_object *o = json_object_new_object();
    put(o, "name", json_object_new_string(m->cfg.server_name));
    put(o, "version", json_object_new_string(m->cfg.server_version));
    return o;
}

/* Modern results carry resultType and the server's identity. */
static void finish_result(const request *r, json_object *result)
{
    if (r->modern) {
        put(result, "resultType", json_object_new_string("complete"));
        json_object *meta = json_object_new_object();
        put(meta, META_SERVER, server_info(r->s->mcp));
        put(result, "_meta", meta);
    }
}

static void reply(const request *r, json_object *result)
{
    if (!result) {
        send_error(r->s, r->msg->id, TH_RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
        return;
    }
    finish_result(r, result);
    send_msg(r->s, th_rpc_result(r->msg->id, result));
}

static json_object *capabilities(void)
{
    json_object *caps = json_object_new_object();
    json_object *tools = json_object_new_object();
    put(tools, "listChanged", json_object_new_boolean(0));
    put(caps, "tools", tools);
    put(caps, "logging", json_object_new_object());
    return caps;
}

/* O's text when it is a string without an embedded NUL (which C string
 * comparisons would silently cut at), else NULL. */
static const char *plain_string(json_object *o)
{
    if (!json_object_is_type(o, json_type_string))
        return NULL;
    const char *p = json_object_get_string(o);
    return strlen(p) == (size_t)json_object_get_string_len(o) ? p : NULL;
}

static int version_index(const char *v)
{
    for (int i = 0; i < N_VERSIONS; i++)
        if (strcmp(versions[i], v) == 0)
            return i;
    return -1;
}

/* ---- methods ---------------------------------------------------------- */

static void m_initialize(request *r)
{
    json_object *pv;
    if (!r->msg->params || !json_object_object_get_ex(r->msg->params, "protocolVersion", &pv) ||
        !plain_string(pv)) {
        send_error(r->s, r->msg->id, TH_RPC_INVALID_PARAMS,
                   "Invalid params: initialize needs a string \"protocolVersion\"", NULL);
        return;
    }
    int v = version_index(json_object_get_string(pv));
    /* The requested revision if it is a legacy one we speak, else the latest
     * legacy one: 2026-07-28 has no handshake. */
    if (v < 0 || v > LATEST_LEGACY)
        v = LATEST_LEGACY;

    pthread_mutex_lock(&r->s->lock);
    bool again = r->s->initialized;
    if (!again) {
        r->s->initialized = true;
        r->s->legacy_version = v;
    }
    pthread_mutex_unlock(&r->s->lock);
    if (again) {
        send_error(r->s, r->msg->id, TH_RPC_INVALID_REQUEST, "Invalid Request: already initialized", NULL);
        return;
    }
    json_object *res = json_object_new_object();
    put(res, "protocolVersion", json_object_new_string(versions[v]));
    put(res, "capabilities", capabilities());
    put(res, "serverInfo", server_info(r->s->mcp));
    put(res, "instructions", json_object_new_string(r->s->mcp->cfg.instructions));
    reply(r, res);
}

static void m_ping(request *r)
{
    reply(r, json_object_new_object());
}

static void m_set_level(request *r)
{
    json_object *lv;
    int level = -1;
    if (r->msg->params && json_object_object_get_ex(r->msg->params, "level", &lv) && plain_string(lv))
        level = th_log_level_parse(json_object_get_string(lv));
    if (level < 0) {
        send_error(r->s, r->msg->id, TH_RPC_INVALID_PARAMS,
                   "Invalid params: \"level\" must be one of debug, info, notice, warning, error, critical, "
                   "alert, emergency",
                   NULL);
        return;
    }
    pthread_mutex_lock(&r->s->lock);
    r->s->legacy_log_level = (th_log_level)level;
    pthread_mutex_unlock(&r->s->lock);
    reply(r, json_object_new_object());
}

static void m_discover(request *r)
{
    const th_mcp *m = r->s->mcp;
    json_object *res = json_object_new_object();
    json_object *sv = json_object_new_array();
    push(sv, json_object_new_string(TH_MCP_MODERN_VERSION));
    put(res, "supportedVersions", sv);
    put(res, "capabilities", capabilities());
    put(res, "instructions", json_object_new_string(m->cfg.instructions));
    put(res, "ttlMs", json_object_new_int64(m->cfg.list_ttl_ms));
    put(res, "cacheScope", json_object_new_string("public"));
    reply(r, res);
}

/* One tools/list entry, with only the fields revision V defines. */
static json_object *tool_json(const th_entry *e, int v)
{
    json_object *t = json_object_new_object();
    put(t, "name", json_object_new_string(e->name));
    if (e->title && v >= V_2025_06_18)
        put(t, "title", json_object_new_string(e->title));
    put(t, "description", json_object_new_string(e->description));
    put(t, "inputSchema", json_object_get(e->input_schema));
    if (e->output_schema && v >= V_2025_06_18)
        put(t, "outputSchema", json_object_get(e->output_schema));
    if (e->annotations && v >= V_2025_03_26)
        put(t, "annotations", json_object_get(e->annotations));
    return t;
}

/* Parse "th1:<offset>"; false for anything this server did not hand out. */
static bool parse_cursor(const char *c, size_t count, size_t *offset)
{
    size_t plen = strlen(CURSOR_PREFIX);
    if (strncmp(c, CURSOR_PREFIX, plen) != 0 || !c[plen])
        return false;
    size_t off = 0;
    for (const char *p = c + plen; *p; p++) {
        if (*p < '0' || *p > '9' || off > count)
            return false;
        off = off * 10 + (size_t)(*p - '0');
    }
    if (off == 0 || off >= count)
        return false;
    *offset = off;
    return true;
}

static void m_tools_list(request *r)
{
    const th_registry *reg = r->s->mcp->reg;
    size_t count = th_registry_count(reg), offset = 0;
    json_object *cur;
    if (r->msg->params && json_object_object_get_ex(r->msg->params, "cursor", &cur) &&
        !json_object_is_type(cur, json_type_null)) {
        if (!plain_string(cur) || !parse_cursor(json_object_get_string(cur), count, &offset)) {
            send_error(r->s, r->msg->id, TH_RPC_INVALID_PARAMS, "Invalid params: invalid cursor", NULL);
            return;
        }
    }
    size_t page = r->s->mcp->cfg.page_size ? r->s->mcp->cfg.page_size : count;
    size_t end = offset + page < count ? offset + page : count;
    json_object *res = json_object_new_object();
    json_object *tools = json_object_new_array_ext((int)(end - offset));
    for (size_t i = offset; i < end; i++)
        push(tools, tool_json(th_registry_at(reg, i), r->version));
    put(res, "tools", tools);
    if (end < count) {
        char next[64];
        snprintf(next, sizeof next, CURSOR_PREFIX "%zu", end);
        put(res, "nextCursor", json_object_new_string(next));
    }
    if (r->modern) {
        put(res, "ttlMs", json_object_new_int64(r->s->mcp->cfg.list_ttl_ms));
        put(res, "cacheScope", json_object_new_string("public"));
    }
    reply(r, res);
}

/* ---- tools/call -------------------------------------------------------- */

static job **bucket_of(th_mcp_session *s, const char *key)
{
    size_t h = 5381;
    for (const char *p = key; *p; p++)
        h = h * 33 + (unsigned char)*p;
    return &s->inflight[h % INFLIGHT_BUCKETS];
}

static job *find_job(th_mcp_session *s, const char *key)
{
    for (job *j = *bucket_of(s, key); j; j = j->next)
        if (strcmp(j->key, key) == 0)
            return j;
    return NULL;
}

/* Forget J's id: from now on the client may reuse it. Under s->lock. */
static void unlink_job(th_mcp_session *s, job *j)
{
    for (job **pp = bucket_of(s, j->key); *pp; pp = &(*pp)->next) {
        if (*pp == j) {
            *pp = j->next;
            break;
        }
    }
}

/* J's response is out (or dropped): it no longer counts. Under s->lock. */
static void job_done(th_mcp_session *s)
{
    if (--s->ninflight == 0)
        pthread_cond_broadcast(&s->idle);
}

static void job_free(job *j)
{
    th_call_free(j->call);
    if (j->args_owned)
        json_object_put(j->args);
    json_object_put(j->msg);
    th_registry_unref(j->reg);
    session_unref(j->s);
    free(j);
}

static void notify_hook(void *ctx, json_object *notification)
{
    send_msg(ctx, notification);
}

/*
** A tool that declares an output schema promises structuredContent matching
** it (clients validate it and fail the call otherwise). A successful result
** that breaks the promise becomes a tool error naming what is wrong, so the
** fault is reported as the plugin's rather than surfacing in the client.
*/
static json_object *check_output(const th_entry *e, json_object *result)
{
    json_object *is_error, *sc;
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
    json_object_put(result);
    result = json_object_new_object();
    json_object *content = json_object_new_array();
    json_object *text = json_object_new_object();
    put(text, "type", json_object_new_string("text"));
    put(text, "text", json_object_new_string(msg.data));
    push(content, text);
    put(result, "content", content);
    put(result, "isError", json_object_new_boolean(1));
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
                     versions[v]);
        th_utf8_clip(msg);
        put(text, "type", json_object_new_string("text"));
        put(text, "text", json_object_new_string(msg));
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

/* Runs on a pool thread: validate, call, answer (unless cancelled). */
static void run_job(void *p)
{
    job *j = p;
    th_mcp_session *s = j->s;
    const th_entry *e = j->entry;
    json_object *result = NULL;
    char *violations = NULL;

    size_t nbad = th_schema_validate(e->validator, j->args, &violations);
    if (nbad > 0) {
        th_call_error(j->call, "Invalid arguments for tool '%s' (%zu problem%s):\n%s", e->name, nbad,
                      nbad == 1 ? "" : "s", violations ? violations : "");
        free(violations);
        result = th_call_finish(j->call, TH_OK);
    } else {
        int crash_slot = th_crashnote_begin(e->name); /* a fatal signal names the tool */
        th_rc rc = e->typed ? th_typed_invoke(e->typed, j->call, j->args)
                            : e->handler(j->call, j->args, e->user_data);
        th_crashnote_end(crash_slot);
        result = check_output(e, th_call_finish(j->call, rc));
    }

    /* The id is released before the response goes out: a client may reuse
     * it as soon as it reads the response. */
    pthread_mutex_lock(&s->lock);
    bool cancelled = j->cancelled;
    unlink_job(s, j);
    pthread_mutex_unlock(&s->lock);

    if (cancelled) {
        json_object_put(result);
    } else if (result) {
        request r = {.s = s, .modern = j->modern};
        if (!j->modern)
            fit_result(result, j->version);
        finish_result(&r, result);
        send_msg(s, th_rpc_result(j->id, result));
    } else {
        send_error(s, j->id, TH_RPC_INTERNAL_ERROR, "Internal error: out of memory building the result", NULL);
    }
    /* Only now is the call over: a drain that waits for in-flight calls
     * must also wait for their responses to be written. The request was
     * allocated by the reader thread; it is handed back to be freed there,
     * since freeing it here would contend for the reader's malloc arena on
     * every call. */
    pthread_mutex_lock(&s->lock);
    job_done(s);
    bool free_here = s->closing;
    if (!free_here) {
        j->next = s->finished;
        s->finished = j;
    }
    pthread_mutex_unlock(&s->lock);
    if (free_here)
        job_free(j);
}

/* Free the answered calls handed back by pool threads. Reader thread. */
static void free_finished(job *j)
{
    while (j) {
        job *next = j->next;
        job_free(j);
        j = next;
    }
}

static void m_tools_call(request *r)
{
    th_mcp_session *s = r->s;
    json_object *params = r->msg->params, *name, *args = NULL, *token = NULL, *meta;
    if (!params || !json_object_object_get_ex(params, "name", &name) || !json_object_is_type(name, json_type_string)) {
        send_error(s, r->msg->id, TH_RPC_INVALID_PARAMS, "Invalid params: tools/call needs a string \"name\"", NULL);
        return;
    }
    const th_entry *e = plain_string(name) ? th_registry_get(s->mcp->reg, json_object_get_string(name)) : NULL;
    if (!e) {
        send_errorf(s, r->msg->id, TH_RPC_INVALID_PARAMS, "Unknown tool: %.200s", json_object_get_string(name));
        return;
    }
    if (json_object_object_get_ex(params, "arguments", &args) && !json_object_is_type(args, json_type_null) &&
        !json_object_is_type(args, json_type_object)) {
        send_error(s, r->msg->id, TH_RPC_INVALID_PARAMS, "Invalid params: \"arguments\" must be an object", NULL);
        return;
    }
    if (json_object_object_get_ex(params, "_meta", &meta) && json_object_is_type(meta, json_type_object))
        json_object_object_get_ex(meta, "progressToken", &token);
    if (token && !json_object_is_type(token, json_type_string) && !json_object_is_type(token, json_type_int) &&
        !json_object_is_type(token, json_type_double))
        token = NULL;

    job *j = calloc(1, sizeof *j);
    if (!j) {
        send_error(s, r->msg->id, TH_RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
        return;
    }
    if (!th_rpc_id_key(r->msg->id, j->key, sizeof j->key)) {
        free(j);
        send_error(s, r->msg->id, TH_RPC_INVALID_REQUEST, "Invalid Request: \"id\" is too long", NULL);
        return;
    }
    th_call_hooks hooks = {
        .notify = notify_hook,
        .ctx = s,
        .progress_token = token,
        .log_to_client = r->log_to_client,
        .log_level = r->log_level,
    };
    j->call = th_call_new(e->name, &hooks);
    j->args = args && json_object_is_type(args, json_type_object) ? args : json_object_new_object();
    j->args_owned = j->args != args;
    if (!j->call || !j->args) {
        th_call_free(j->call);
        if (j->args_owned)
            json_object_put(j->args);
        free(j);
        send_error(s, r->msg->id, TH_RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
        return;
    }
    j->s = s;
    j->reg = th_registry_ref(s->mcp->reg);
    j->entry = e;
    j->msg = json_object_get(r->msg->msg);
    j->id = r->msg->id;
    j->modern = r->modern;
    j->version = r->version;

    pthread_mutex_lock(&s->lock);
    /* Refuse rather than wait: a reader blocked here could no longer read
     * the cancellations, end of input or stop request that free a slot. */
    if (s->ninflight >= MAX_INFLIGHT) {
        pthread_mutex_unlock(&s->lock);
        th_call_free(j->call);
        j->call = NULL;
        atomic_fetch_add(&s->refs, 1);
        send_errorf(s, r->msg->id, TH_RPC_SERVER_BUSY,
                    "Server busy: %d tool calls are in flight; retry when some have finished", MAX_INFLIGHT);
        job_free(j);
        return;
    }
    if (find_job(s, j->key)) {
        pthread_mutex_unlock(&s->lock);
        th_call_free(j->call);
        j->call = NULL;
        atomic_fetch_add(&s->refs, 1);
        send_error(s, r->msg->id, TH_RPC_INVALID_REQUEST, "Invalid Request: a request with this id is in flight",
                   NULL);
        job_free(j);
        return;
    }
    job **b = bucket_of(s, j->key);
    j->next = *b;
    *b = j;
    s->ninflight++;
    atomic_fetch_add(&s->refs, 1);
    job *finished = s->finished;
    s->finished = NULL;
    pthread_mutex_unlock(&s->lock);
    free_finished(finished);

    if (th_pool_submit(s->mcp->pool, run_job, j) != TH_OK) {
        pthread_mutex_lock(&s->lock);
        unlink_job(s, j);
        job_done(s);
        pthread_mutex_unlock(&s->lock);
        send_error(s, r->msg->id, TH_RPC_INTERNAL_ERROR, "Internal error: the server is shutting down", NULL);
        job_free(j);
    }
}

static void n_cancelled(request *r)
{
    json_object *rid;
    char key[160];
    if (!r->msg->params || !json_object_object_get_ex(r->msg->params, "requestId", &rid) ||
        !th_rpc_id_key(rid, key, sizeof key))
        return;
    pthread_mutex_lock(&r->s->lock);
    job *j = find_job(r->s, key);
    if (j) {
        j->cancelled = true;
        th_call_cancel(j->call);
    }
    pthread_mutex_unlock(&r->s->lock);
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
    {.name = "tools/call", .eras = ERA_BOTH, .fn = m_tools_call},
};

static const method notifications[] = {
    {.name = "notifications/initialized", .eras = ERA_LEGACY, .before_init = true, .fn = n_ignore},
    {.name = "notifications/cancelled", .eras = ERA_BOTH, .before_init = true, .fn = n_cancelled},
};

static const method *find_method(const method *table, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(table[i].name, name) == 0)
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
    if (r->msg->params && json_object_object_get_ex(r->msg->params, "_meta", &meta) &&
        json_object_is_type(meta, json_type_object))
        r->meta = meta;
    if (!r->meta || !json_object_object_get_ex(r->meta, META_VERSION, &v))
        return 1;
    if (!plain_string(v)) {
        send_error(r->s, r->msg->id, TH_RPC_INVALID_PARAMS,
                   "Invalid params: _meta[\"" META_VERSION "\"] must be a string", NULL);
        return -1;
    }
    const char *requested = json_object_get_string(v);
    int idx = version_index(requested);
    if (idx != V_MODERN) {
        /* A legacy revision named per request is served by the session that
         * negotiated it; on its own it would need a handshake. */
        pthread_mutex_lock(&r->s->lock);
        bool legacy_ok = idx >= 0 && r->s->initialized && r->s->legacy_version == idx;
        pthread_mutex_unlock(&r->s->lock);
        if (legacy_ok)
            return 1;
        json_object *data = json_object_new_object();
        json_object *sup = json_object_new_array();
        push(sup, json_object_new_string(TH_MCP_MODERN_VERSION));
        put(data, "supported", sup);
        put(data, "requested", json_object_new_string(requested));
        send_error(r->s, r->msg->id, TH_RPC_UNSUPPORTED_VERSION, "Unsupported protocol version", data);
        return -1;
    }
    if (!json_object_object_get_ex(r->meta, META_CAPS, &v) || !json_object_is_type(v, json_type_object)) {
        send_error(r->s, r->msg->id, TH_RPC_INVALID_PARAMS,
                   "Invalid params: _meta[\"" META_CAPS "\"] is required and must be an object", NULL);
        return -1;
    }
    r->modern = true;
    r->version = V_MODERN;
    r->log_to_client = false;
    if (json_object_object_get_ex(r->meta, META_LOGLEVEL, &lv)) {
        int level = plain_string(lv) ? th_log_level_parse(json_object_get_string(lv)) : -1;
        if (level < 0) {
            send_error(r->s, r->msg->id, TH_RPC_INVALID_PARAMS,
                       "Invalid params: _meta[\"" META_LOGLEVEL "\"] must be a log level name", NULL);
            return -1;
        }
        r->log_to_client = true;
        r->log_level = (th_log_level)level;
    }
    return 0;
}

static void handle_request(th_mcp_session *s, th_rpc_msg *msg)
{
    request r = {.s = s, .msg = msg};
    const method *m = find_method(requests, sizeof requests / sizeof requests[0], msg->method);
    if (!m) {
        send_errorf(s, msg->id, TH_RPC_METHOD_NOT_FOUND, "Method not found: %.200s", msg->method);
        return;
    }
    int era = read_meta(&r);
    if (era < 0)
        return;
    if (era == 0) {
        if (!(m->eras & ERA_MODERN)) {
            send_errorf(s, msg->id, TH_RPC_METHOD_NOT_FOUND, "Method not found: %s is not part of protocol %s",
                        msg->method, TH_MCP_MODERN_VERSION);
            return;
        }
    } else {
        if (!(m->eras & ERA_LEGACY)) {
            send_errorf(s, msg->id, TH_RPC_INVALID_PARAMS,
                        "Invalid params: %s needs _meta[\"" META_VERSION "\"] and _meta[\"" META_CAPS "\"]",
                        msg->method);
            return;
        }
        pthread_mutex_lock(&s->lock);
        bool init = s->initialized;
        r.version = s->legacy_version;
        r.log_level = s->legacy_log_level;
        pthread_mutex_unlock(&s->lock);
        if (!init && !m->before_init) {
            send_errorf(s, msg->id, TH_RPC_INVALID_REQUEST,
                        "Invalid Request: server not initialized; send initialize first, or give "
                        "params._meta[\"%s\"] = \"%s\" on every request",
                        META_VERSION, TH_MCP_MODERN_VERSION);
            return;
        }
        r.log_to_client = true;
    }
    m->fn(&r);
}

void th_mcp_session_handle(th_mcp_session *s, const char *text, size_t len)
{
    th_rpc_msg msg;
    th_rpc_parse(text, len, &msg);
    switch (msg.kind) {
    case TH_RPC_REQUEST:
        handle_request(s, &msg);
        break;
    case TH_RPC_NOTIFICATION: {
        /* Never answered, whatever is wrong with them. */
        const method *m = find_method(notifications, sizeof notifications / sizeof notifications[0], msg.method);
        if (m) {
            request r = {.s = s, .msg = &msg};
            m->fn(&r);
        }
        break;
    }
    case TH_RPC_RESPONSE:
        break; /* this server sends no requests: a stray response */
    case TH_RPC_INVALID:
        if (!msg.silent)
            send_error(s, msg.id, msg.error_code, msg.error_message, NULL);
        break;
    }
    th_rpc_msg_clear(&msg);
}

void th_mcp_batch_begin(th_mcp *mcp)
{
    th_pool_hold(mcp->pool);
}

void th_mcp_batch_end(th_mcp *mcp)
{
    th_pool_release(mcp->pool);
}

void th_mcp_session_reject(th_mcp_session *s, int code, const char *message)
{
    send_error(s, NULL, code, message, NULL);
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
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->idle, NULL);
    pthread_rwlock_init(&s->send_lock, NULL);
    return s;
}

size_t th_mcp_session_inflight(th_mcp_session *s)
{
    pthread_mutex_lock(&s->lock);
    size_t n = s->ninflight;
    pthread_mutex_unlock(&s->lock);
    return n;
}

bool th_mcp_session_drain(th_mcp_session *s, long long deadline_ms)
{
    pthread_mutex_lock(&s->lock);
    while (s->ninflight > 0 && th_cond_wait_until(&s->idle, &s->lock, deadline_ms))
        ;
    bool drained = s->ninflight == 0;
    pthread_mutex_unlock(&s->lock);
    return drained;
}

void th_mcp_session_cancel_all(th_mcp_session *s)
{
    pthread_mutex_lock(&s->lock);
    for (size_t b = 0; b < INFLIGHT_BUCKETS; b++)
        for (job *j = s->inflight[b]; j; j = j->next) {
            j->cancelled = true;
            th_call_cancel(j->call);
        }
    pthread_mutex_unlock(&s->lock);
}

void th_mcp_session_free(th_mcp_session *s)
{
    if (!s)
        return;
    pthread_rwlock_wrlock(&s->send_lock);
    s->closed = true;
    pthread_rwlock_unlock(&s->send_lock);
    pthread_mutex_lock(&s->lock);
    s->closing = true;
    job *finished = s->finished;
    s->finished = NULL;
    pthread_mutex_unlock(&s->lock);
    free_finished(finished);
    session_unref(s);
}
