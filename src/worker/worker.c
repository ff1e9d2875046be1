/* SPDX-License-Identifier: MIT */
/*
** worker/worker.c: the child process. Its start-up is one ordered sequence
** (die with the host, no new privileges, receive the configuration, resource
** limits, close inherited descriptors, the sandbox policy hook, then plugin
** code); then it scans plugins or serves one plugin's calls over fds 3 and 4.
*/
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/compat.h"
#include "base/jsontree.h"
#include "base/log.h"
#include "base/signals.h"
#include "call/callctx.h"
#include "call/workpool.h"
#include "plugin/loader.h"
#include "plugin/needs.h"
#include "plugin/settings.h"
#include "worker/ipc.h"
#include "worker/isolate.h"
#include "worker/resproxy.h"
#include "worker/sandbox.h"
#include "worker/promptproxy.h"
#include "worker/spawn.h"
#include "worker/worker.h"

/* What the host sends in HELLO. */
typedef struct config {
    json_object *hello; /* owns the strings below */
    bool scan;
    char **paths;
    size_t npaths;
    size_t from; /* scan: first index; serve: the plugin */
    size_t until; /* scan: the index after the last one */
    th_load_opts load;
    th_isolate_policy iso;
    int log_threshold;
    json_object *sandbox; /* the policy (worker/sandbox.h); NULL: off */
    unsigned long long memory_limit, max_files, max_result_bytes, threads;
} config;

static const int in_fd = TH_WORKER_FD, out_fd = TH_WORKER_OUT_FD;
static th_worker_parse_fn parse_call;
static pthread_mutex_t send_lock = PTHREAD_MUTEX_INITIALIZER;

static void die(const char *what)
{
    fprintf(stderr, "toolhost worker: %s\n", what);
    _exit(127);
}

static unsigned long long get_num(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) ? (unsigned long long)json_object_get_int64(v) : 0;
}

static bool read_config(config *c, th_ipc_reader *r)
{
    th_ipc_frame f;
    th_err err;
    if (th_ipc_recv(r, &f, &err) != 1 || f.type != TH_IPC_HELLO)
        return false;
    c->hello = th_ipc_parse(f.payload, f.len, &err);
    json_object *role, *paths, *v;
    if (!c->hello || !json_object_object_get_ex(c->hello, "role", &role) ||
        !json_object_object_get_ex(c->hello, "paths", &paths) || !json_object_is_type(paths, json_type_array))
        return false;
    c->scan = strcmp(json_object_get_string(role), "scan") == 0;
    c->npaths = json_object_array_length(paths);
    c->paths = calloc(c->npaths + 1, sizeof *c->paths);
    if (!c->paths)
        return false;
    for (size_t i = 0; i < c->npaths; i++)
        c->paths[i] = (char *)json_object_get_string(json_object_array_get_idx(paths, i));
    c->from = (size_t)get_num(c->hello, "from");
    c->until = (size_t)get_num(c->hello, "until");
    if (c->until == 0 || c->until > c->npaths)
        c->until = c->npaths;
    c->load.follow_symlinks = json_object_object_get_ex(c->hello, "follow_symlinks", &v) && json_object_get_boolean(v);
    c->load.allow_insecure = json_object_object_get_ex(c->hello, "allow_insecure", &v) && json_object_get_boolean(v);
    c->load.scanned = !c->scan; /* a worker loads what the scan reported on */
    /* The bytes its tools were listed from; the hello lives as long. */
    if (!c->scan && json_object_object_get_ex(c->hello, "sha256", &v) && json_object_is_type(v, json_type_string))
        c->load.expect_digest = json_object_get_string(v);
    /* Kept for the life of the process: plugins read it while they register. */
    if (!(c->load.config = th_config_from_json(json_object_object_get_ex(c->hello, "settings", &v) ? v : NULL)))
        return false;
    c->log_threshold = (int)get_num(c->hello, "log_threshold");
    c->memory_limit = get_num(c->hello, "memory_limit");
    c->max_files = get_num(c->hello, "max_files");
    c->max_result_bytes = get_num(c->hello, "max_result_bytes");
    c->threads = get_num(c->hello, "threads");
    /* A plugin's grants override the host-wide limits. */
    if (json_object_object_get_ex(c->hello, "sandbox", &c->sandbox) && json_object_is_type(c->sandbox, json_type_object)) {
        c->memory_limit = get_num(c->sandbox, "memory") ? get_num(c->sandbox, "memory") : c->memory_limit;
        c->max_files = get_num(c->sandbox, "max_files") ? get_num(c->sandbox, "max_files") : c->max_files;
    } else {
        c->sandbox = NULL;
    }
    if (!th_isolate_policy_read(c->hello, &c->iso, &err)) {
        fprintf(stderr, "toolhost worker: %s\n", err.msg);
        return false;
    }
    return c->from < c->npaths;
}

static void set_limit(int resource, unsigned long long value, const char *name)
{
    struct rlimit rl = {.rlim_cur = (rlim_t)value, .rlim_max = (rlim_t)value};
    if (value && setrlimit(resource, &rl) != 0)
        fprintf(stderr, "toolhost worker: cannot set %s to %llu: %s\n", name, value, strerror(errno));
}

/* Away from the host and the other workers (worker/isolate.c); the first
 * child of a host says what this kernel cannot enforce. */
static void isolate(const config *c)
{
    char missing[512];
    th_err err;
    if (th_isolate_apply(&c->iso, missing, sizeof missing, &err) != TH_OK)
        die(err.msg);
    if (missing[0] && c->iso.report)
        th_log(TH_LOG_WARNING, "process isolation: not enforced on this system: %s", missing);
}

/*
** The single place a worker's policy is applied: after the limits, before
** any plugin code runs and before any thread, so that constructors run
** inside it and every thread inherits it: first the sandbox (rlimits, a
** network namespace, Landlock) around the plugin files (a scanner opens
** those of its batch; a serving worker one), then away from the host and the
** other workers, whose seccomp filter forbids new namespaces.
*/
static void apply_policy(const config *c)
{
    th_err err;
    /* Owners as the host sees them: inside the sandbox's user namespace
     * root's files belong to the overflow uid. */
    size_t n = c->scan ? c->until - c->from : 1; /* a scanner's batch; the others are other scanners' */
    th_loader_prejudge(c->paths + c->from, n, &c->load);
    if (th_sandbox_apply(c->sandbox, c->paths + c->from, n, &err) != TH_OK)
        die(err.msg);
    isolate(c);
}

json_object *th_worker_describe(const th_registry *reg, size_t base)
{
    json_object *tools = json_object_new_array();
    for (size_t i = base; tools && i < th_registry_count(reg); i++) {
        const th_entry *e = th_registry_at(reg, i);
        json_object *t = json_object_new_object();
        if (!t)
            break;
        json_object_object_add(t, "name", json_object_new_string(e->name));
        if (e->title)
            json_object_object_add(t, "title", json_object_new_string(e->title));
        json_object_object_add(t, "description", json_object_new_string(e->description));
        json_object_object_add(t, "input_schema",
                               json_object_new_string(json_object_to_json_string_ext(e->input_schema, JSON_C_TO_STRING_PLAIN)));
        if (e->output_schema)
            json_object_object_add(t, "output_schema", json_object_new_string(json_object_to_json_string_ext(
                                                           e->output_schema, JSON_C_TO_STRING_PLAIN)));
        if (e->annotations)
            json_object_object_add(t, "annotations", json_object_new_string(json_object_to_json_string_ext(
                                                         e->annotations, JSON_C_TO_STRING_PLAIN)));
        if (e->icons)
            json_object_object_add(t, "icons", json_object_new_string(json_object_to_json_string_ext(
                                                   e->icons, JSON_C_TO_STRING_PLAIN)));
        json_object_object_add(t, "typed", json_object_new_boolean(e->typed != NULL));
        if (e->timeout_ms)
            json_object_object_add(t, "timeout_ms", json_object_new_int64(e->timeout_ms));
        if (e->task_support)
            json_object_object_add(t, "task_support", json_object_new_int64(e->task_support));
        json_object_array_add(tools, t);
    }
    return tools;
}

static struct stat in_id, out_id; /* what fds 3 and 4 were before plugin code ran */

static bool same_fd(int fd, const struct stat *id)
{
    struct stat st;
    return fstat(fd, &st) == 0 && st.st_dev == id->st_dev && st.st_ino == id->st_ino;
}

static bool sock_intact(void)
{
    return same_fd(in_fd, &in_id) && same_fd(out_fd, &out_id);
}

/* What a failed send means: the host is gone, or a plugin took fd 3 or 4. */
static void sent(th_rc rc)
{
    if (rc != TH_OK && sock_intact())
        _exit(0); /* the host is gone */
    if (rc != TH_OK)
        th_child_lose_pipe();
}

static void send_obj(th_ipc_type type, uint32_t id, json_object *o)
{
    pthread_mutex_lock(&send_lock);
    th_rc rc = th_ipc_send_json(out_fd, type, id, o);
    pthread_mutex_unlock(&send_lock);
    sent(rc);
}

/* A call's RESULT frame: TEXT[0..LEN). */
static void send_text(th_ipc_type type, uint32_t id, const char *text, size_t len)
{
    pthread_mutex_lock(&send_lock);
    th_rc rc = th_ipc_send(out_fd, type, id, text, len);
    pthread_mutex_unlock(&send_lock);
    sent(rc);
}

/* Where a call's RESULT is printed: a buffer each thread keeps, but a big
 * one is not kept. */
static _Thread_local th_buf result_text;

static void result_text_done(void)
{
    if (result_text.cap > (1u << 20)) {
        free(result_text.data);
        result_text = (th_buf){0};
    }
}

/* The loader's own lines show at warning and above while loading: the
 * host logs each accepted tool itself, and refusals are errors. A plugin's
 * th_server_log lines still follow the host's --log-level. */
static void quiet_loading(const config *c)
{
    (void)c;
    th_log_raise(TH_LOG_WARNING);
}

/* Static: still reachable when the scanner _exit()s (valgrind's view). */
static th_registry **volatile scan_regs; /* volatile: a store nothing reads is kept */

/* Wait for the host's LOGGED for plugin I: until then no plugin code runs,
 * so everything on the output pipe so far is plugin I's. */
static void await_logged(th_ipc_reader *r, size_t i)
{
    th_ipc_frame f;
    th_err err;
    int got;
    while ((got = th_ipc_recv(r, &f, &err)) == 1)
        if (f.type == TH_IPC_LOGGED && f.id == (uint32_t)i)
            return;
    fflush(NULL);
    _exit(0); /* the host is gone, or gave up on this scanner */
}

/* The scan of every plugin under the strictest sandbox, as opposed to a
 * plugin's second scan under its own, whose policy carries its needs. */
static bool first_pass(const config *c)
{
    json_object *v;
    return c->sandbox && !json_object_object_get_ex(c->sandbox, "needs", NULL) &&
           json_object_object_get_ex(c->sandbox, "mode", &v) && strcmp(json_object_get_string(v), "off") != 0;
}

static int scan(const config *c, th_ipc_reader *r)
{
    /* A registry per plugin: whether two plugins clash depends on how the
     * host names their tools (toolboxes, qualified names), which the host
     * decides when it registers them, and a cached scan must not depend
     * on the other files of the load. */
    scan_regs = calloc(c->npaths + 1, sizeof *scan_regs);
    if (!scan_regs)
        die("out of memory");
    quiet_loading(c);
    for (size_t i = c->from; i < c->until; i++) {
        th_registry *reg = scan_regs[i] = th_registry_new();
        if (!reg)
            die("out of memory");
        th_registry_set_private(reg);
        send_obj(TH_IPC_LOADING, (uint32_t)i, NULL);
        th_load_stats st = {0};
        size_t base = th_registry_count(reg);
        const th_resources *rs = th_registry_resources(reg);
        size_t rbase = th_resources_count(rs), tbase = th_resources_template_count(rs);
        const th_prompts *ps = th_registry_prompts(reg);
        size_t pbase = th_prompts_count(ps), cbase = th_prompts_completion_count(ps);
        th_load_opts load = c->load;
        if (!(load.needs = th_needs_new()))
            die("out of memory");
        load.defer_needs = first_pass(c);
        th_rc rc = th_loader_load_listed(reg, c->paths, c->npaths, i, &load, &st);
        if (!sock_intact())
            th_child_lose_pipe();
        json_object *o = json_object_new_object();
        if (!o)
            die("out of memory");
        json_object_object_add(o, "needs", th_needs_json(load.needs));
        th_needs_free(load.needs);
        json_object_object_add(o, "accepted", json_object_new_boolean(rc == TH_OK && st.plugins_loaded > 0));
        json_object *descs = th_worker_describe(reg, base);
        th_resproxy_describe(reg, rbase, tbase, descs); /* marked with "kind" */
        th_promptproxy_describe(reg, pbase, cbase, descs);
        json_object_object_add(o, "tools", descs);
        json_object_object_add(o, "tools_refused", json_object_new_int64((int64_t)st.tools_refused));
        json_object_object_add(o, "resources_refused", json_object_new_int64((int64_t)st.resources_refused));
        json_object_object_add(o, "prompts_refused", json_object_new_int64((int64_t)st.prompts_refused));
        send_obj(TH_IPC_PLUGIN, (uint32_t)i, o);
        json_object_put(o);
        await_logged(r, i);
    }
    send_obj(TH_IPC_DONE, 0, NULL);
    fflush(NULL);
    /* No destroy callbacks, no unloading: plugin code ran enough here. */
    _exit(0);
}

/* ---- serving ----------------------------------------------------------- */

typedef struct job {
    uint32_t id;
    th_call *call;
    json_object *args;      /* a resource read's vars */
    const th_entry *entry;
    const th_res_entry *res; /* a READ: the resource instead of a tool */
    char *uri;               /* a READ's URI; a COMPLETE's argument name */
    const th_prompt_entry *prompt;   /* a PROMPT: the prompt whose get runs */
    const th_completion_entry *compl; /* a COMPLETE: the completion to run */
    char *value;             /* a COMPLETE's argument value */
    struct job *next;
    pthread_cond_t answered; /* under jobs_lock: an ANSWER arrived */
    json_object *answer;     /* its payload, until worker_ask takes it */
} job;

static pthread_mutex_t jobs_lock = PTHREAD_MUTEX_INITIALIZER;
static job *jobs;
static json_object *always_token; /* progress is always forwarded; the host
                                   * decides whether its client wants it */

/* th_call_hooks.notify: the call's progress and log notifications go to
 * the host as frames, which replays them on its own th_call. */
static void forward(void *ctx, json_object *n)
{
    job *j = ctx;
    json_object *method, *params;
    if (json_object_object_get_ex(n, "method", &method) && json_object_object_get_ex(n, "params", &params)) {
        bool progress = strcmp(json_object_get_string(method), "notifications/progress") == 0;
        send_obj(progress ? TH_IPC_PROGRESS : TH_IPC_LOG, j->id, params);
    }
    json_object_put(n);
}

/* How often a handler waiting for its answer looks at cancellation. */
#define ASK_POLL_MS 50

/* th_call_hooks.ask: the question goes to the host (which knows the client
 * and its era); the handler waits here for the ANSWER frame. */
static th_rc worker_ask(void *ctx, th_call *call, const char *key, const char *method, json_object *params,
                        json_object **result)
{
    job *j = ctx;
    json_object *o = json_object_new_object(), *a, *v;
    if (!o) {
        json_object_put(params);
        return TH_ERR_NOMEM;
    }
    json_object_object_add(o, "key", json_object_new_string(key));
    json_object_object_add(o, "method", json_object_new_string(method));
    json_object_object_add(o, "params", params);
    pthread_mutex_lock(&jobs_lock);
    json_object_put(j->answer); /* a late answer to a question given up on */
    j->answer = NULL;
    pthread_mutex_unlock(&jobs_lock);
    send_obj(TH_IPC_ASK, j->id, o);
    json_object_put(o);
    pthread_mutex_lock(&jobs_lock);
    while (!j->answer && !th_call_cancelled(call))
        th_cond_wait_until(&j->answered, &jobs_lock, th_now_ms() + ASK_POLL_MS);
    a = j->answer;
    j->answer = NULL;
    pthread_mutex_unlock(&jobs_lock);
    if (!a)
        return TH_ERR_CANCELLED;
    th_rc rc = json_object_object_get_ex(a, "rc", &v) ? (th_rc)json_object_get_int(v) : TH_ERR_IO;
    if (rc == TH_OK && json_object_object_get_ex(a, "result", &v) && json_object_is_type(v, json_type_object))
        *result = json_object_get(v);
    else if (rc == TH_OK)
        rc = TH_ERR_IO;
    json_object_put(a);
    return rc;
}

/* An ANSWER frame for call ID: handed to its waiting handler. */
static void deliver_answer(uint32_t id, const char *payload, size_t len)
{
    th_err err;
    json_object *a = th_ipc_parse(payload, len, &err);
    pthread_mutex_lock(&jobs_lock);
    job *j = jobs;
    while (j && j->id != id)
        j = j->next;
    if (j && a) {
        json_object_put(j->answer);
        j->answer = a;
        a = NULL;
        pthread_cond_signal(&j->answered);
    }
    pthread_mutex_unlock(&jobs_lock);
    json_object_put(a);
}

/* One job's memory kept for the next call: the reader runs nearly every
 * call itself, one after another, so a job is taken and given back once
 * per call. Atomic, not per thread: pool threads end when idle, and a
 * static pointer keeps what it holds reachable. */
static _Atomic(job *) spare_job;

static job *job_take(void)
{
    job *j = atomic_exchange(&spare_job, NULL);
    if (!j)
        return calloc(1, sizeof *j);
    memset(j, 0, sizeof *j);
    return j;
}

/* J's own members are released already. */
static void job_release(job *j)
{
    free(atomic_exchange(&spare_job, j));
}

static void run(void *p)
{
    job *j = p;
    const th_entry *e = j->entry;
    th_call *h = th_call_handle(j->call); /* dies in th_call_finish: a kept one is refused */
    bool wrapped = j->res || j->prompt || j->compl;
    th_rc rc = j->res      ? j->res->read(h, j->uri, j->args, j->res->user_data)
               : j->prompt ? j->prompt->get(h, j->args, j->prompt->user_data)
               : j->compl  ? j->compl->complete(h, j->uri, j->value, j->args, j->compl->user_data)
                           : th_entry_invoke(e, h, j->args);
    /* A tool's result of the common shape is printed straight from the
     * call, without the object th_call_finish would make. */
    result_text.len = 0;
    bool printed = !wrapped && th_call_finish_text(j->call, rc, &result_text);
    json_object *result = printed ? NULL : th_call_finish(j->call, rc);
    if (wrapped && th_call_refused(j->call))
        rc = TH_ERR_TOOL; /* refused by the host's rules, not the plugin's choice */
    if (wrapped) { /* the host needs the code: TH_ERR_NOT_FOUND is an answer */
        json_object *wrap = json_object_new_object();
        if (!wrap)
            die("out of memory");
        json_object_object_add(wrap, "rc", json_object_new_int((int)rc));
        json_object_object_add(wrap, "result", result);
        result = wrap;
    }
    pthread_mutex_lock(&jobs_lock);
    for (job **pp = &jobs; *pp; pp = &(*pp)->next)
        if (*pp == j) {
            *pp = j->next;
            break;
        }
    pthread_mutex_unlock(&jobs_lock);
    /* A result this worker wrote for a failure (not the plugin's answer)
     * says so by its frame type, so the host words it as its own. */
    th_ipc_type type = !j->res && th_call_failed(j->call) ? TH_IPC_FAILED : TH_IPC_RESULT;
    if (printed || th_json_append(&result_text, result))
        send_text(type, j->id, result_text.data, result_text.len);
    else
        send_obj(type, j->id, result); /* out of memory for the buffer */
    result_text_done();
    json_object_put(result);
    th_call_free(j->call);
    json_object_put(j->args);
    json_object_put(j->answer);
    pthread_cond_destroy(&j->answered);
    free(j->uri);
    free(j->value);
    job_release(j);
}

/* A CALL frame's fields (see TH_IPC_CALL). */
typedef struct call_req {
    unsigned caps;
    const char *tool;  /* inside the frame */
    json_object *args; /* parsed; taken by new_job */
} call_req;

/*
** A job for call ID, registered for CANCEL: a tool call CR, or (CR NULL) a
** READ, PROMPT or COMPLETE of REQ (its payload, parsed). NULL when there is
** nothing to run (the host has been answered).
*/
static job *new_job(th_registry *reg, const config *c, uint32_t id, call_req *cr, json_object *req, th_ipc_type type)
{
    json_object *args, *vars = NULL;
    const th_entry *e = NULL;
    const th_res_entry *res = NULL;
    const th_prompt_entry *prompt = NULL;
    const th_completion_entry *compl = NULL;
    const char *uri = NULL;
    if (type == TH_IPC_READ && req)
        res = th_resproxy_lookup(reg, req, &uri, &vars);
    else if (type == TH_IPC_PROMPT && req)
        prompt = th_promptproxy_lookup_prompt(reg, req);
    else if (type == TH_IPC_COMPLETE && req)
        compl = th_promptproxy_lookup_completion(reg, req);
    else if (cr && cr->tool && cr->args)
        e = th_registry_get(reg, cr->tool);
    job *j = e || res || prompt || compl ? job_take() : NULL;
    if (!j) {
        if (cr)
            json_object_put(cr->args);
        send_obj(TH_IPC_RESULT, id, NULL); /* an empty result: the host reports it */
        return NULL;
    }
    th_call_hooks hooks = {
        .notify = forward,
        .ctx = j,
        .progress_token = always_token,
        .log_to_client = true,
        .log_level = TH_LOG_DEBUG,
        .max_result_bytes = (size_t)c->max_result_bytes,
        .client_caps = cr ? cr->caps : (unsigned)get_num(req, "caps"),
        .ask = worker_ask,
        .ask_ctx = j,
    };
    pthread_cond_init(&j->answered, NULL);
    j->id = id;
    j->entry = e;
    j->res = res;
    j->prompt = prompt;
    j->compl = compl;
    j->call = th_call_new(res      ? res->name
                          : prompt ? prompt->name
                          : compl  ? (compl->prompt ? compl->prompt : compl->uri_template)
                                   : e->name,
                          &hooks);
    if (res) {
        j->uri = strdup(uri);
        j->args = vars ? json_object_get(vars) : json_object_new_object();
    } else if (compl) {
        json_object *a, *v, *ctx;
        j->uri = strdup(json_object_object_get_ex(req, "argument", &a) ? json_object_get_string(a) : "");
        j->value = strdup(json_object_object_get_ex(req, "value", &v) ? json_object_get_string(v) : "");
        j->args = json_object_object_get_ex(req, "context", &ctx) && json_object_is_type(ctx, json_type_object)
                      ? json_object_get(ctx)
                      : json_object_new_object();
        if (!j->value)
            die("out of memory starting a completion");
    } else if (prompt) {
        j->args = json_object_object_get_ex(req, "arguments", &args) && json_object_is_type(args, json_type_object)
                      ? json_object_get(args)
                      : json_object_new_object();
    } else {
        j->args = cr->args; /* parsed once, handed to the handler as it is */
    }
    if (!j->call || !j->args || ((res || compl) && !j->uri))
        die("out of memory starting a call");
    pthread_mutex_lock(&jobs_lock);
    j->next = jobs;
    jobs = j;
    pthread_mutex_unlock(&jobs_lock);
    return j;
}

static void cancel_call(uint32_t id)
{
    pthread_mutex_lock(&jobs_lock);
    for (job *j = jobs; j; j = j->next)
        if (j->id == id)
            th_call_cancel(j->call);
    pthread_mutex_unlock(&jobs_lock);
}

/* What the reading thread needs; set once before the first reads. */
typedef struct server {
    th_registry *reg;
    th_pool *pool;
    const config *c;
    th_ipc_reader *r;
} server;
static server srv;

/*
** The reader runs a CALL itself, with no thread hand-off, and the watchdog
** hands the reading to a pool thread when that call outlasts a tick (the
** way Go's sysmon hands off a P blocked in a system call): a CANCEL or a
** second call then waits at most about two ticks. The watchdog parks when
** no call has run for a while, so an idle worker does not wake.
*/
#define WATCH_TICK_NS 1000000L
#define WATCH_PARK_TICKS 200

static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t watch_cond = PTHREAD_COND_INITIALIZER;
static bool inline_running;   /* the reader is running a call */
static unsigned long call_seq; /* calls the reader has started */
static unsigned long epoch;    /* bumped when the reading moves on */
static bool watch_parked;

static void reader_loop(void *unused);

static void *watchdog_main(void *unused)
{
    (void)unused;
    unsigned long seen = 0;
    int idle = 0;
    pthread_mutex_lock(&watch_lock);
    for (;;) {
        if (inline_running && call_seq == seen) { /* the same call, a tick later */
            inline_running = false;
            epoch++;
            if (th_pool_submit(srv.pool, reader_loop, NULL) != TH_OK)
                die("cannot hand on the reading");
        }
        idle = inline_running || call_seq != seen ? 0 : idle + 1;
        seen = call_seq;
        if (idle >= WATCH_PARK_TICKS) {
            watch_parked = true;
            while (watch_parked)
                pthread_cond_wait(&watch_cond, &watch_lock);
            idle = 0;
            seen = call_seq - 1; /* the call that woke it gets a full tick */
            continue;
        }
        pthread_mutex_unlock(&watch_lock);
        struct timespec ts = {0, WATCH_TICK_NS};
        nanosleep(&ts, NULL);
        pthread_mutex_lock(&watch_lock);
    }
    return NULL;
}

/* CR from the CALL frame F: the name in place, the arguments parsed (an
 * empty text is no arguments); CR->tool stays NULL for a frame without
 * the NUL after the name. */
static void call_fields(const th_ipc_frame *f, call_req *cr)
{
    uint32_t caps;
    const char *nul = f->len > sizeof caps ? memchr(f->payload + sizeof caps, '\0', f->len - sizeof caps) : NULL;
    if (!nul)
        return;
    memcpy(&caps, f->payload, sizeof caps);
    cr->caps = caps;
    cr->tool = f->payload + sizeof caps;
    size_t off = (size_t)(nul + 1 - f->payload);
    cr->args = off < f->len ? parse_call(nul + 1, f->len - off) : json_object_new_object();
}

/*
** Read frames (one thread at a time does) and run each CALL right here:
** its answer waits for no thread hand-off. Returns when the watchdog has
** handed the reading to another thread meanwhile.
*/
static void reader_loop(void *unused)
{
    (void)unused;
    th_ipc_frame f;
    th_err err;
    while (th_ipc_recv(srv.r, &f, &err) == 1) {
        if (f.type == TH_IPC_CANCEL) {
            cancel_call(f.id);
        } else if (f.type == TH_IPC_ANSWER) {
            deliver_answer(f.id, f.payload, f.len);
        } else if (f.type == TH_IPC_CALL || f.type == TH_IPC_READ || f.type == TH_IPC_PROMPT ||
                   f.type == TH_IPC_COMPLETE) {
            call_req cr = {0}, *crp = NULL;
            json_object *req = NULL;
            if (f.type == TH_IPC_CALL) {
                crp = &cr;
                call_fields(&f, crp);
            } else {
                req = th_ipc_parse(f.payload, f.len, &err);
            }
            job *j = new_job(srv.reg, srv.c, f.id, crp, req, (th_ipc_type)f.type);
            json_object_put(req);
            if (!j)
                continue;
            pthread_mutex_lock(&watch_lock);
            unsigned long mine = epoch;
            inline_running = true;
            call_seq++;
            if (watch_parked) {
                watch_parked = false;
                pthread_cond_signal(&watch_cond);
            }
            pthread_mutex_unlock(&watch_lock);
            run(j);
            pthread_mutex_lock(&watch_lock);
            bool still_reader = epoch == mine;
            if (still_reader) /* else the flag is the new reader's */
                inline_running = false;
            pthread_mutex_unlock(&watch_lock);
            if (!still_reader)
                return;
        }
    }
    /* The host closed its pipe (or died): nothing left to serve. Or a
     * plugin closed it, which the host must hear about. */
    fflush(NULL);
    if (sock_intact())
        _exit(0);
    th_child_lose_pipe();
}

/* th_resource_updated() in a worker: the host fans it out. Any thread. */
static void forward_update(const char *uri, void *ctx)
{
    (void)ctx;
    json_object *o = json_object_new_object();
    if (!o)
        return;
    json_object_object_add(o, "uri", json_object_new_string(uri));
    send_obj(TH_IPC_UPDATED, 0, o);
    json_object_put(o);
}

/* The sandbox was built from the needs the scan reported: a plugin that
 * now declares more would run without them, so it is refused, named. */
static th_rc within_needs(const config *c, const th_needs *declared)
{
    json_object *given = NULL;
    const char *more = th_needs_beyond(declared, c->sandbox && json_object_object_get_ex(c->sandbox, "needs", &given)
                                                     ? given
                                                     : NULL);
    if (!more)
        return TH_OK;
    th_log(TH_LOG_ERROR, "plugin %s refused: it declares the need '%s', which its scan did not", c->paths[c->from],
           more);
    return TH_ERR_VALUE;
}

static int serve(const config *c, th_ipc_reader *r)
{
    th_registry *reg = th_registry_new();
    always_token = json_object_new_int(0);
    if (!reg || !always_token)
        die("out of memory");
    th_registry_set_private(reg);
    quiet_loading(c);
    th_load_stats st = {0};
    th_load_opts load = c->load;
    if (!(load.needs = th_needs_new()))
        die("out of memory");
    th_rc rc = th_loader_load_listed(reg, c->paths, c->npaths, c->from, &load, &st);
    th_log_raise(-1);
    if (rc == TH_OK)
        rc = within_needs(c, load.needs);
    th_needs_free(load.needs);
    json_object *ready = json_object_new_object();
    json_object *names = json_object_new_array();
    for (size_t i = 0; rc == TH_OK && i < th_registry_count(reg); i++)
        json_object_array_add(names, json_object_new_string(th_registry_at(reg, i)->name));
    json_object_object_add(ready, "tools", names);
    send_obj(TH_IPC_READY, 0, ready);
    json_object_put(ready);
    /* After READY, which the host waits for as the first frame: an update a
     * plugin announces while it registers is not seen. */
    th_resources_on_update(forward_update, NULL);
    th_registry_start(reg);
    /* One thread more than the host runs calls at once: the reader always
     * finds a thread, however many calls are running. */
    srv = (server){.reg = reg, .c = c, .r = r};
    srv.pool = th_pool_new((c->threads ? (size_t)c->threads : 64) + 1);
    pthread_t watchdog;
    if (!srv.pool || pthread_create(&watchdog, NULL, watchdog_main, NULL) != 0 ||
        th_pool_submit(srv.pool, reader_loop, NULL) != TH_OK)
        die("out of memory");
    for (;;)
        pause(); /* the thread that reads end of stream ends the process */
    return 0;
}

int th_worker_main(int argc, char **argv, th_worker_parse_fn parse)
{
    parse_call = parse;
    /* 1. Die with the host, and make sure it has not died already. */
    /* Without PR_SET_PDEATHSIG (0), the end of stream on fd 3, read
     * on its own thread, ends the worker when the host ends. */
    if (th_die_with_parent() < 0)
        die("cannot set PR_SET_PDEATHSIG");
    if (argc < 3 || getppid() != (pid_t)strtol(argv[2], NULL, 10))
        _exit(1);
    /* A fatal signal ends the child with that signal, which the host
     * reports: no handler of a sanitizer runtime turns it into exit(1). */
    static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP};
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++)
        signal(fatal[i], SIG_DFL);
    /* 2. Nothing it executes can gain privileges. */
    if (th_no_new_privs() < 0)
        die("cannot set PR_SET_NO_NEW_PRIVS");
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (fstat(in_fd, &in_id) != 0 || fstat(out_fd, &out_id) != 0)
        die("no pipes at fds 3 and 4");
    /* A write to a host that is gone fails with EPIPE, as in the host
     * (base/signals.c): the frames need no SIGPIPE guard, and plugin code
     * sees the same disposition in both isolation modes. */
    if (!th_signals_catch_sigpipe())
        die("cannot install the SIGPIPE handler");
    th_ipc_guard_sigpipe(false);
    /* 3. The configuration: role, plugins, limits. */
    config c = {0};
    th_ipc_reader r = {.fd = in_fd, .max = 64u << 20};
    if (!read_config(&c, &r))
        die("no valid configuration from the host");
    th_log_set_threshold((th_log_level)c.log_threshold);
    /* Always JSON: the host reads the lines back and writes them in its
     * own format (th_log_relay), the plugin's name added. */
    th_log_set_format(TH_LOG_JSON);
    /* 4. Resource limits. */
    set_limit(RLIMIT_AS, c.memory_limit, "RLIMIT_AS (--worker-memory-limit)");
    set_limit(RLIMIT_NOFILE, c.max_files, "RLIMIT_NOFILE (--worker-max-files)");
    /* 5. Nothing of the host's but fds 0-4. */
    th_close_from(TH_WORKER_OUT_FD + 1);
    /* 6. The sandbox policy, before any plugin code. */
    apply_policy(&c);
    /* 7. Plugin code. */
    return c.scan ? scan(&c, &r) : serve(&c, &r);
}
