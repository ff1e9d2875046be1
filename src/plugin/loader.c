/* SPDX-License-Identifier: MIT */
/*
** plugin/loader.c: the plugin loader and the th_server handle plugins register
** through. Every plugin directory is listed, as absolute paths, before any
** plugin code runs: a file NAME.so present in any of them owns the tool name
** NAME, and a constructor's chdir() cannot change what a later path names.
** A plugin's registrations are one transaction, committed when its returned
** descriptor is accepted and taken back when it is refused. The entry symbol
** comes from the file name (NAME.so -> register_NAME_tool); every failure
** names the file, the symbol or tool, and the rule. Directories and files are
** checked against the trust rule (plugin/trust.h) before any code in them runs.
*/
#define _GNU_SOURCE /* pthread_getattr_np: where this thread's stack lies */
#include "config.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/compat.h"
#include "plugin/settings.h"
#include "plugin/loader.h"
#include "plugin/needs.h"
#include "plugin/trust.h"
#include "plugin/resources.h"
#include "plugin/prompts.h"
#include "plugin/skills.h"
#include "base/handle.h"
#include "base/log.h"
#include "base/sha256.h"
#include "base/signals.h"

/*
** Every function plugin.h declares, referenced here so that any program that
** links the loader (toolhost, the tests) also links, and with -export-dynamic
** exports, the whole API the plugins it loads will resolve against.
*/
__attribute__((used)) static const void *const plugin_api[] = {
    (const void *)th_server_add_tool,  (const void *)th_server_errmsg,
    (const void *)th_server_added_only, (const void *)th_server_log,
    (const void *)th_server_config,
    (const void *)th_call_text,        (const void *)th_call_textf,
    (const void *)th_call_image,       (const void *)th_call_audio,
    (const void *)th_call_resource_link, (const void *)th_call_resource_text,
    (const void *)th_call_resource_blob, (const void *)th_call_content,
    (const void *)th_call_structured,  (const void *)th_call_error,
    (const void *)th_call_progress,    (const void *)th_call_log,
    (const void *)th_call_cancelled,   (const void *)th_call_tool_name,
    (const void *)th_base64_encode,    (const void *)th_call_image_bytes,
    (const void *)th_call_audio_bytes,
    (const void *)th_server_add_resource, (const void *)th_server_add_resource_template,
    (const void *)th_resource_updated,
    (const void *)th_server_add_prompt, (const void *)th_server_add_completion,
    (const void *)th_call_prompt_role,
};

/* The plugin files of one load, in load order; absolute paths, owned. */
typedef struct plugin_list {
    char **paths;
    size_t n, cap;
} plugin_list;

static void plugin_list_free(plugin_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->paths[i]);
    free(l->paths);
    memset(l, 0, sizeof *l);
}

/* Append PATH (malloc'd; the list owns it from now on, even on failure). */
static th_rc plugin_list_add(plugin_list *l, char *path)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 32;
        char **p = realloc(l->paths, cap * sizeof *p);
        if (!p) {
            free(path);
            return TH_ERR_NOMEM;
        }
        l->paths = p;
        l->cap = cap;
    }
    l->paths[l->n++] = path;
    return TH_OK;
}

static const char *base_name(const char *path)
{
    const char *base = strrchr(path, '/');
    return base ? base + 1 : path;
}

/* The first file in FILES named NAME.so: the plugin the tool name NAME
 * belongs to. NULL when no such file is present. */
static const char *owner_of(const plugin_list *files, const char *name)
{
    size_t len = strlen(name);
    for (size_t i = 0; i < files->n; i++) {
        const char *b = base_name(files->paths[i]);
        if (strncmp(b, name, len) == 0 && strcmp(b + len, ".so") == 0)
            return files->paths[i];
    }
    return NULL;
}

/* The registration-time handle passed to register_NAME_tool(). */
struct th_server {
    th_registry *reg;
    const char *path;         /* plugin file, for messages */
    const char *name;         /* NAME of NAME.so, the tool name it owns */
    const plugin_list *files; /* every plugin file of this load */
    th_load_stats *stats;
    const th_tool *added_own; /* the descriptor of NAME it added itself */
    th_err err;               /* last th_server_add_tool() outcome */
    bool quiet_refusals;      /* th_load_opts.scanned: the scan logged them */
    const th_config *config;  /* th_load_opts.config */
    th_needs *needs;          /* th_load_opts.needs */
    bool defer_needs;         /* th_load_opts.defer_needs */
    bool deferred;            /* it declared a need it cannot have yet */
};

/* What th_server_added_only() returns; compared by address, never read. */
static const th_tool added_only_marker;

/*
** The server SERVER names as the plugin passed it: register_NAME_tool gets
** a handle that ends when it returns, so a th_server kept for later (a
** global, a thread) is refused and logged once instead of writing into the
** loader's dead stack frame. Leave with server_unuse.
*/
static th_server *server_use(const th_server *server, const char *fn)
{
    if (!th_handle_is(server))
        return (th_server *)server;
    th_server *s = th_handle_enter((th_handle)server, TH_HANDLE_SERVER);
    char name[128];
    if (!s && th_handle_first_misuse((th_handle)server, name, sizeof name))
        th_log(TH_LOG_ERROR,
               "plugin %s: %s() used its th_server after register_%s_tool returned; refused with "
               "TH_ERR_MISUSE (the handle is valid only during that call)",
               name, fn, name);
    return s;
}

static void server_unuse(const th_server *server)
{
    if (th_handle_is(server))
        th_handle_leave((th_handle)server);
}

static th_rc add_tool(th_server *server, const th_tool *tool);

th_rc th_server_add_tool(th_server *handle, const th_tool *tool)
{
    th_server *server = server_use(handle, __func__);
    if (!server)
        return TH_ERR_MISUSE;
    th_rc rc = add_tool(server, tool);
    server_unuse(handle);
    return rc;
}

/* Resources are staged like tools: kept only if the plugin is accepted. */
static th_rc add_resource(th_server *handle, const th_resource *res, bool template_, const char *fn)
{
    th_server *server = server_use(handle, fn);
    if (!server)
        return TH_ERR_MISUSE;
    th_registry *reg = server->reg;
    th_rc rc = th_resources_add(th_registry_resources(reg), res, template_, th_registry_started(reg), server->path,
                                &server->err);
    if (rc == TH_OK) {
        th_err_clear(&server->err);
    } else {
        server->stats->resources_refused++;
        const char *key = NULL;
        if (rc != TH_ERR_TYPE && rc != TH_ERR_ABI)
            key = template_ ? res->uri_template : res->uri;
        th_log(server->quiet_refusals ? TH_LOG_DEBUG : TH_LOG_ERROR, "plugin %s: resource%s '%.200s' refused: %s [%s]",
               server->path, template_ ? " template" : "", key ? key : "?", server->err.msg, th_rc_name(rc));
    }
    server_unuse(handle);
    return rc;
}

th_rc th_server_add_resource(th_server *server, const th_resource *res)
{
    return add_resource(server, res, false, __func__);
}

th_rc th_server_add_resource_template(th_server *server, const th_resource *res)
{
    return add_resource(server, res, true, __func__);
}

/* Prompts and completions are staged like resources. */
static th_rc add_prompt(th_server *handle, bool is_prompt, const th_prompt *p, const th_completion *c, const char *fn)
{
    th_server *server = server_use(handle, fn);
    if (!server)
        return TH_ERR_MISUSE;
    th_registry *reg = server->reg;
    th_prompts *ps = th_registry_prompts(reg);
    bool started = th_registry_started(reg);
    th_rc rc = is_prompt ? th_prompts_add(ps, p, started, server->path, &server->err)
                 : th_prompts_add_completion(ps, c, started, server->path, &server->err);
    if (rc == TH_OK) {
        th_err_clear(&server->err);
    } else {
        server->stats->prompts_refused++;
        const char *key = NULL;
        if (rc != TH_ERR_TYPE && rc != TH_ERR_ABI)
            key = is_prompt ? p->name : (c->prompt ? c->prompt : c->uri_template);
        /* A scanner sees one plugin at a time: a clash with another
         * plugin's prompt is news here, even when the scan logged the rest. */
        const th_prompt_entry *first = is_prompt && key ? th_prompts_find(ps, key) : NULL;
        const th_completion_entry *cfirst =
            !is_prompt && key ? th_prompts_find_completion(ps, c->prompt, c->prompt ? NULL : c->uri_template) : NULL;
        const char *origin = first ? first->origin : cfirst ? cfirst->origin : NULL;
        bool news = origin && strcmp(origin, server->path) != 0;
        th_log(server->quiet_refusals && !news ? TH_LOG_DEBUG : TH_LOG_ERROR, "plugin %s: %s '%.200s' refused: %s [%s]",
               server->path, is_prompt ? "prompt" : "completion", key ? key : "?", server->err.msg, th_rc_name(rc));
    }
    server_unuse(handle);
    return rc;
}

th_rc th_server_add_prompt(th_server *server, const th_prompt *prompt)
{
    return add_prompt(server, true, prompt, NULL, __func__);
}

th_rc th_server_add_completion(th_server *server, const th_completion *completion)
{
    return add_prompt(server, false, NULL, completion, __func__);
}

/* Skills are staged like resources: their files are resources (plugin/skills.c). */
th_rc th_server_add_skill(th_server *handle, const th_skill *skill)
{
    th_server *server = server_use(handle, __func__);
    if (!server)
        return TH_ERR_MISUSE;
    th_registry *reg = server->reg;
    th_rc rc = th_skills_add(th_registry_resources(reg), skill, th_registry_started(reg), server->path, &server->err);
    if (rc == TH_OK) {
        th_err_clear(&server->err);
    } else {
        server->stats->resources_refused++;
        th_log(server->quiet_refusals ? TH_LOG_DEBUG : TH_LOG_ERROR, "plugin %s: skill refused: %s [%s]", server->path,
               server->err.msg, th_rc_name(rc));
    }
    server_unuse(handle);
    return rc;
}

static th_rc add_tool(th_server *server, const th_tool *tool)
{
    th_tool t;
    const char *owner = NULL;
    th_rc rc;
    /* The name can be read only once the ABI check has passed. */
    bool readable = th_tool_normalize(tool, &t, &server->err) == TH_OK;
    if (readable && t.name && strcmp(t.name, server->name) != 0)
        owner = owner_of(server->files, t.name);
    if (owner)
        rc = th_err_set(&server->err, TH_ERR_VALUE, "tool name '%.60s' belongs to plugin file %s", t.name, owner);
    else
        rc = th_registry_add(server->reg, tool, server->path, &server->err);
    if (rc == TH_OK) {
        /* Staged: counted as loaded only when the plugin is accepted. */
        if (readable && strcmp(t.name, server->name) == 0)
            server->added_own = tool;
        th_err_clear(&server->err);
    } else {
        server->stats->tools_refused++;
        /* The scan saw this plugin alone: what clashes with the others, or
         * with the toolbox naming, is news here. */
        bool quiet = server->quiet_refusals && (owner || !th_registry_refusal_contextual(server->reg));
        th_log(quiet ? TH_LOG_DEBUG : TH_LOG_ERROR, "plugin %s: tool '%.60s' refused: %s [%s]",
               server->path, (readable && t.name) ? t.name : "?", server->err.msg, th_rc_name(rc));
    }
    return rc;
}

/* Tagged with the plugin file, as the host's own lines about it are. */
th_rc th_server_log(th_server *handle, th_log_level level, const char *fmt, ...)
{
    if (!handle || !fmt)
        return TH_ERR_MISUSE;
    th_server *server = server_use(handle, __func__);
    if (!server)
        return TH_ERR_MISUSE;
    if ((int)level < (int)TH_LOG_DEBUG || (int)level > (int)TH_LOG_EMERGENCY)
        level = TH_LOG_ERROR;
    char msg[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char line[4200];
    snprintf(line, sizeof line, "plugin %s: %s", server->path, msg);
    if (!server->deferred) /* said again by its second scan, with what it declared */
        th_log_plugin(level, server->name, line);
    server_unuse(handle);
    return TH_OK;
}

th_rc th_server_need(th_server *handle, th_need kind, const char *value)
{
    th_server *server = server_use(handle, __func__);
    if (!server)
        return TH_ERR_MISUSE;
    th_rc rc = th_needs_add(server->needs, kind, value, &server->err);
    if (rc == TH_OK)
        th_err_clear(&server->err);
    if (rc == TH_OK)
        server->deferred = server->defer_needs;
    else
        th_log(TH_LOG_ERROR, "plugin %s: th_server_need: %s [%s]", server->path, server->err.msg, th_rc_name(rc));
    server_unuse(handle);
    return rc;
}

/* The value belongs to the settings store, which outlives every plugin's
 * registration; the header promises less (until register_NAME_tool
 * returns) so the store may change later. Never logged: only whether it
 * was found. */
const char *th_server_config(th_server *handle, const char *key)
{
    if (!handle || !key)
        return NULL;
    th_server *server = server_use(handle, __func__);
    if (!server)
        return NULL;
    bool secret = false;
    const char *v = th_config_get(server->config, server->name, key, &secret);
    char line[4200];
    snprintf(line, sizeof line, "plugin %s: setting '%.64s' %s%s", server->path, key, v ? "read" : "not set",
             v && secret ? " (secret)" : "");
    th_log_plugin(TH_LOG_DEBUG, server->name, line);
    server_unuse(handle);
    return v;
}

/* The message lives in the loader's frame only while the handle is open:
 * a stale handle gets "". */
const char *th_server_errmsg(const th_server *handle)
{
    th_server *server = server_use(handle, __func__);
    const char *msg = server ? server->err.msg : "";
    if (server)
        server_unuse(handle);
    return msg;
}

const th_tool *th_server_added_only(th_server *server)
{
    (void)server;
    return &added_only_marker;
}

size_t th_load_stats_refusals(const th_load_stats *s)
{
    return s->plugins_refused + s->tools_refused + s->dirs_refused + s->resources_refused + s->prompts_refused;
}

/* NAME from ".../NAME.so", or false when the file is not a NAME.so. */
static bool plugin_name(const char *path, char *name, size_t size)
{
    const char *base = base_name(path);
    size_t len = strlen(base);
    if (len <= 3 || strcmp(base + len - 3, ".so") != 0 || len - 3 >= size)
        return false;
    memcpy(name, base, len - 3);
    name[len - 3] = '\0';
    return true;
}

/* Can NAME be spelled inside a C identifier? Otherwise there is no symbol to
 * look up. */
static bool identifier_ok(const char *name)
{
    for (const char *p = name; *p; p++) {
        char c = *p;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
            return false;
    }
    return *name != '\0';
}

/* While th_loader_prejudge runs: where refuse() keeps its message instead
 * of logging it (the load that follows logs it, and counts it). */
static char *verdict_buf;

static th_rc refuse(th_load_stats *stats, const char *path, const char *fmt, const char *a, const char *b)
{
    char msg[2048];
    snprintf(msg, sizeof msg, fmt, a, b);
    if (verdict_buf) {
        snprintf(verdict_buf, sizeof msg, "%s", msg);
        return TH_ERR_VALUE;
    }
    th_log(TH_LOG_ERROR, "plugin %s refused: %s", path, msg);
    stats->plugins_refused++;
    return TH_ERR_VALUE;
}

/* Does a registered tool still use USER_DATA? A plugin that returns a
 * descriptor it also registered itself gets a duplicate refusal, and its
 * user_data must then live on with the registered copy. */
static bool user_data_in_use(const th_registry *reg, const void *user_data)
{
    for (size_t i = 0; user_data && i < th_registry_count(reg); i++)
        if (th_registry_at(reg, i)->user_data == user_data)
            return true;
    return false;
}

/*
** Does P point into this thread's stack? A descriptor there, returned by
** register_NAME_tool(), was in its frame, which ended when it returned:
** reading it would read whatever the host's calls have put there since.
** FRAME is a local of the caller of register_NAME_tool().
*/
static bool on_this_stack(const void *p, const void *frame)
{
    /* Asked once per thread: for the main thread glibc answers by reading
     * /proc/self/maps, which every loaded plugin makes longer, so asking per
     * plugin made loading quadratic (three quarters of a 1,000-plugin start).
     * The main thread's answer is its whole possible extent (RLIMIT_STACK),
     * so it does not go stale as the stack grows. */
    static _Thread_local const char *low;
    static _Thread_local size_t size;
    static _Thread_local bool asked, known;
    if (!asked) {
        asked = true;
        known = th_thread_stack(&low, &size);
    }
    if (known)
        return (const char *)p >= low && (const char *)p < low + size;
    /* The system cannot say (no pthread_getattr_np): the frame that ended
     * lay just below FRAME, a local of the function that called the plugin
     * (stacks grow down wherever the host builds); 64 KiB covers a
     * register function's locals without reaching past this thread's stack. */
    uintptr_t a = (uintptr_t)p, f = (uintptr_t)frame;
    return a < f && f - a <= 65536;
}

th_staged th_loader_stage(th_registry *reg)
{
    th_resources *rs = th_registry_resources(reg);
    th_prompts *ps = th_registry_prompts(reg);
    return (th_staged){.tools = th_registry_count(reg),
                       .resources = th_resources_count(rs),
                       .templates = th_resources_template_count(rs),
                       .prompts = th_prompts_count(ps),
                       .completions = th_prompts_completion_count(ps)};
}

size_t th_loader_staged_extras(th_registry *reg, const th_staged *from)
{
    th_staged now = th_loader_stage(reg);
    return now.resources - from->resources + now.templates - from->templates + now.prompts - from->prompts +
           now.completions - from->completions;
}

void th_loader_discard(th_registry *reg, const th_staged *from, const char *path, th_load_stats *stats)
{
    th_prompts *ps = th_registry_prompts(reg);
    for (size_t i = from->prompts; i < th_prompts_count(ps); i++)
        th_log(TH_LOG_ERROR, "plugin %s: prompt '%s' discarded: its plugin was refused", path,
               th_prompts_at(ps, i)->name);
    stats->prompts_refused +=
        th_prompts_count(ps) - from->prompts + th_prompts_completion_count(ps) - from->completions;
    th_prompts_truncate(ps, from->prompts, from->completions);
    th_resources *rs = th_registry_resources(reg);
    for (size_t i = from->resources; i < th_resources_count(rs); i++)
        th_log(TH_LOG_ERROR, "plugin %s: resource '%s' discarded: its plugin was refused", path,
               th_resources_at(rs, i)->uri);
    for (size_t i = from->templates; i < th_resources_template_count(rs); i++)
        th_log(TH_LOG_ERROR, "plugin %s: resource template '%s' discarded: its plugin was refused", path,
               th_resources_template_at(rs, i)->uri_template);
    stats->resources_refused +=
        th_resources_count(rs) - from->resources + th_resources_template_count(rs) - from->templates;
    th_resources_truncate(rs, from->resources, from->templates);
    for (size_t i = from->tools; i < th_registry_count(reg); i++) {
        th_log(TH_LOG_ERROR, "plugin %s: tool '%s' discarded: its plugin was refused", path,
               th_registry_at(reg, i)->name);
        stats->tools_refused++;
    }
    th_registry_truncate(reg, from->tools);
}

bool th_loader_tool_refused(const char *path, const char *name, th_rc rc, const th_err *err, th_load_stats *stats)
{
    const char *slash = strrchr(path, '/'), *b = slash ? slash + 1 : path;
    size_t own_len = strlen(b) > 3 ? strlen(b) - 3 : 0; /* NAME of NAME.so */
    if (name && strlen(name) == own_len && strncmp(name, b, own_len) == 0) {
        th_log(TH_LOG_ERROR, "plugin %s refused: tool '%s': %s [%s]", path, name, err->msg, th_rc_name(rc));
        return true;
    }
    stats->tools_refused++;
    th_log(TH_LOG_ERROR, "plugin %s: tool '%.60s' refused: %s [%s]", path, name ? name : "?", err->msg,
           th_rc_name(rc));
    return false;
}

/*
** Does ST, the file or directory PATH (KIND says which, for the log), pass
** the trust rule? --allow-insecure-plugins lets one that does not through,
** with a warning. False with WHY set when it is refused.
*/
static bool trusted(const struct stat *st, const char *kind, const char *path, const th_load_opts *opts,
                    char *why, size_t size)
{
    if (th_trust_check(st, geteuid(), path, why, size))
        return true;
    if (!opts || !opts->allow_insecure)
        return false;
    th_log(TH_LOG_WARNING, "%s %s: %s; let through by --allow-insecure-plugins", kind, path, why);
    return true;
}

/*
** PATH is a symbolic link to TARGET (a real path): may it be followed? Its
** target must lie inside PATH's plugin directory, and every directory between
** the two must pass the trust rule too, since whoever can write one of them
** can replace the target. Refuses (logs, counts) and returns TH_ERR_VALUE
** when not.
*/
static th_rc check_link(const char *path, const char *target, const th_load_opts *opts, th_load_stats *stats)
{
    char why[1536];
    th_rc rc = TH_OK;
    char *parent = strdup(path), *dir = NULL, *walk = NULL;
    if (!parent)
        return refuse(stats, path, "out of memory%s%s", "", "");
    *strrchr(parent, '/') = '\0'; /* PATH is absolute: it has a slash */
    if (!(dir = realpath(*parent ? parent : "/", NULL))) {
        rc = refuse(stats, path, "cannot resolve its plugin directory: %s%s", strerror(errno), "");
        goto cleanup;
    }
    size_t len = strcmp(dir, "/") == 0 ? 0 : strlen(dir);
    if (strncmp(target, dir, len) != 0 || target[len] != '/') {
        if (!opts->allow_insecure) {
            rc = refuse(stats, path,
                        "symbolic link to %s, outside its plugin directory %s; not followed (move the file into "
                        "the directory, or use --allow-insecure-plugins)",
                        target, dir);
            goto cleanup;
        }
        th_log(TH_LOG_WARNING, "plugin %s: symbolic link to %s, outside its plugin directory %s; "
               "let through by --allow-insecure-plugins", path, target, dir);
        goto cleanup; /* the directories on the way are not the host's to judge */
    }
    if (!(walk = strdup(target))) {
        rc = refuse(stats, path, "out of memory%s%s", "", "");
        goto cleanup;
    }
    for (char *slash = strchr(walk + len + 1, '/'); slash && rc == TH_OK; slash = strchr(slash + 1, '/')) {
        struct stat st;
        *slash = '\0';
        if (stat(walk, &st) != 0)
            rc = refuse(stats, path, "cannot stat %s: %s", walk, strerror(errno));
        else if (!trusted(&st, "plugin directory", walk, opts, why, sizeof why))
            rc = refuse(stats, path, "symbolic link into %s, which is refused: %s", walk, why);
        *slash = '/';
    }

cleanup:
    free(walk);
    free(dir);
    free(parent);
    return rc;
}

/*
** Open directory DIR (absolute) through th_trust_open_dir, so every
** directory above it is judged as it is walked, and judge DIR itself.
** --allow-insecure-plugins lets a refusal through, with a warning when WARN
** (the listing warns; a later load of one of its files need not again).
** The descriptor, or -1 with WHY and *REFUSED (false: it could not be opened).
*/
static int open_trusted_dir(const char *dir, const th_load_opts *opts, bool warn, bool *refused, char *why,
                            size_t size)
{
    struct stat st;
    bool ok;
    int fd = -1;
    char *real = realpath(dir, NULL);
    *refused = false;
    if (!real) {
        snprintf(why, size, "%s", strerror(errno));
        return -1;
    }
    if ((fd = th_trust_open_dir(real, geteuid(), &ok, why, size)) < 0)
        goto cleanup;
    if (!ok && opts && opts->allow_insecure && warn)
        th_log(TH_LOG_WARNING, "plugin directory %s: %s; let through by --allow-insecure-plugins", dir, why);
    if (fstat(fd, &st) != 0) {
        snprintf(why, size, "cannot stat: %s", strerror(errno));
        close(fd);
        fd = -1;
    } else if ((!ok && !(opts && opts->allow_insecure)) ||
               !(warn ? trusted(&st, "plugin directory", dir, opts, why, size)
                      : th_trust_check(&st, geteuid(), dir, why, size) || (opts && opts->allow_insecure))) {
        *refused = true;
        close(fd);
        fd = -1;
    }

cleanup:
    free(real);
    return fd;
}

/* The directory verdict of the current pass (th_loader_dir_memo). */
typedef struct dir_memo {
    bool on;
    char *dir;          /* the directory as named; NULL: none yet */
    int fd;             /* its descriptor, or -1 when refused */
    bool refused;
    char why[1536];
} dir_memo;
static _Thread_local dir_memo memo = {.fd = -1};

void th_loader_dir_memo(bool on)
{
    if (memo.fd >= 0)
        close(memo.fd);
    free(memo.dir);
    memo = (dir_memo){.on = on, .fd = -1};
}

/* open_trusted_dir for a plugin file's directory, through the pass's memo
 * when there is one: *BORROWED says the descriptor is the memo's. */
static int open_plugin_dir(const char *dir, const th_load_opts *opts, bool *refused, char *why, size_t size,
                           bool *borrowed)
{
    *borrowed = false;
    if (!memo.on)
        return open_trusted_dir(dir, opts, false, refused, why, size);
    if (!memo.dir || strcmp(memo.dir, dir) != 0) {
        char *copy = strdup(dir);
        if (!copy)
            return open_trusted_dir(dir, opts, false, refused, why, size);
        th_loader_dir_memo(true);
        memo.dir = copy;
        memo.fd = open_trusted_dir(dir, opts, false, &memo.refused, memo.why, sizeof memo.why);
    }
    *refused = memo.refused;
    snprintf(why, size, "%s", memo.fd < 0 ? memo.why : "");
    *borrowed = memo.fd >= 0;
    return memo.fd;
}

/*
** The checks on plugin file PATH before any of its code runs: a regular file,
** not a symbolic link unless links are followed (then see check_link), and
** it, its directory and every directory above passing the trust rule. The
** file is opened from its directory's descriptor, itself opened one checked
** component at a time, and judged by fstat: *FD gets that descriptor, and
** the load goes through it (see fd_name), so what was judged is what runs.
** Refuses (logs, counts) and returns TH_ERR_VALUE.
*/
static th_rc check_file(const char *path, const th_load_opts *opts, th_load_stats *stats, int *fd_out)
{
    char why[1536];
    char *target = NULL, *dir = NULL;
    int dfd = -1, fd = -1;
    bool refused, borrowed = false;
    th_rc rc;
    struct stat st;

    *fd_out = -1;
    if (lstat(path, &st) != 0)
        return refuse(stats, path, "cannot stat: %s%s", strerror(errno), "");
    if (S_ISLNK(st.st_mode)) {
        if (!opts || !opts->follow_symlinks)
            return refuse(stats, path, "is a symbolic link; not followed (use --follow-symlinks)%s%s", "", "");
        if (!(target = realpath(path, NULL)) || stat(target, &st) != 0)
            return refuse(stats, path, "dangling symbolic link: %s%s", strerror(errno), "");
        if ((rc = check_link(path, target, opts, stats)) != TH_OK)
            goto cleanup;
    }
    /* Not opened at all unless regular: a device could act on open(). */
    if (!S_ISREG(st.st_mode)) {
        rc = refuse(stats, path, "not a regular file%s%s", "", "");
        goto cleanup;
    }
    const char *file = target ? target : path;
    if (!(dir = strdup(file))) {
        rc = refuse(stats, path, "out of memory%s%s", "", "");
        goto cleanup;
    }
    *strrchr(dir, '/') = '\0'; /* FILE is absolute: it has a slash */
    if ((dfd = open_plugin_dir(*dir ? dir : "/", opts, &refused, why, sizeof why, &borrowed)) < 0) {
        rc = refuse(stats, path, refused ? "its directory is refused: %s%s" : "cannot open its directory: %s%s", why,
                    "");
        goto cleanup;
    }
    /* O_NONBLOCK: should a FIFO take its place meanwhile, open() must not
     * wait for a writer; it is refused as not regular below. */
    fd = openat(dfd, base_name(file), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0 || fstat(fd, &st) != 0) {
        rc = refuse(stats, path, "cannot open: %s%s", strerror(errno), "");
        goto cleanup;
    }
    if (!S_ISREG(st.st_mode)) {
        rc = refuse(stats, path, "not a regular file%s%s", "", "");
        goto cleanup;
    }
    rc = trusted(&st, "plugin", file, opts, why, sizeof why) ? TH_OK : refuse(stats, path, "%s%s", why, "");
    if (rc == TH_OK) {
        *fd_out = fd;
        fd = -1;
    }

cleanup:
    if (fd >= 0)
        close(fd);
    if (dfd >= 0 && !borrowed)
        close(dfd);
    free(dir);
    free(target);
    return rc;
}

/* Everything about PATH that is judged before its code runs; NAME gets
 * NAME of NAME.so, *FD the opened file (see check_file). */
/*
** Verdicts reached before a worker's sandbox (th_loader_prejudge): each
** plugin's opened file, or why it was refused. Taken by the load of the
** same path, once. A worker loads from one thread.
*/
typedef struct verdict {
    char *path;
    int fd;    /* the judged file, or -1 */
    char *why; /* the refusal, when FD is -1 */
} verdict;
static verdict *verdicts;
static size_t nverdicts;

/* PATH's verdict, if one was reached before: TH_OK with *FD, or the
 * refusal logged and counted now. False when there is none. */
static bool take_verdict(const char *path, th_load_stats *stats, int *fd, th_rc *rc)
{
    for (size_t i = 0; i < nverdicts; i++) {
        verdict *v = &verdicts[i];
        if (!v->path || strcmp(v->path, path) != 0)
            continue;
        *fd = v->fd;
        *rc = v->fd >= 0 ? TH_OK : refuse(stats, path, "%s%s", v->why ? v->why : "refused", "");
        free(v->path);
        free(v->why);
        *v = (verdict){.fd = -1};
        return true;
    }
    return false;
}

static th_rc check_plugin(const char *path, char *name, size_t size, const th_load_opts *opts,
                          th_load_stats *stats, int *fd)
{
    th_rc rc;
    *fd = -1;
    if (!plugin_name(path, name, size))
        return refuse(stats, path, "file name must be NAME.so%s%s", "", "");
    if (take_verdict(path, stats, fd, &rc))
        return rc;
    if (!identifier_ok(name))
        return refuse(stats, path, "'%s' cannot be part of the entry point's name register_%s_tool", name, name);
    return check_file(path, opts, stats, fd);
}

void th_loader_prejudge(char *const *paths, size_t n, const th_load_opts *opts)
{
    char why[2048], name[256];
    th_load_stats ignored = {0};
    if (!(verdicts = calloc(n, sizeof *verdicts)))
        return; /* judged at load time, as without a sandbox */
    nverdicts = n;
    verdict_buf = why;
    th_loader_dir_memo(true);
    for (size_t i = 0; i < n; i++) {
        why[0] = '\0';
        int fd;
        check_plugin(paths[i], name, sizeof name, opts, &ignored, &fd);
        verdicts[i] = (verdict){.path = strdup(paths[i]), .fd = fd, .why = fd < 0 ? strdup(why) : NULL};
    }
    th_loader_dir_memo(false);
    verdict_buf = NULL;
}

th_rc th_loader_check_plugin(const char *path, const th_load_opts *opts, th_load_stats *stats)
{
    char name[256];
    int fd;
    th_rc rc = check_plugin(path, name, sizeof name, opts, stats, &fd);
    if (fd >= 0)
        close(fd);
    return rc;
}

/* See th_loader_set_generation; written only by the thread that loads. */
static unsigned long long dl_generation;

void th_loader_set_generation(unsigned long long gen)
{
    dl_generation = gen;
}

#if !defined(__linux__) || defined(TH_PORTABLE_ONLY)
/*
** The name PATH is dlopen()ed by. glibc returns an object already loaded
** under the same name without looking at the file, so a reload would get
** the replaced plugin's old code back. Generation G > 0 spells the same file
** as DIR/ followed by G's binary digits ("./" for 1, "/" for 0, from the
** leading 1) and the base name: a name no other generation used, while an
** unchanged file (same inode) is still recognised and shared by glibc, and
** $ORIGIN still names DIR. NULL when it does not fit.
*/
static const char *dl_name(const char *path, char *buf, size_t size)
{
    const char *slash = strrchr(path, '/');
    if (!dl_generation || !slash)
        return path;
    int bits = 0;
    while (bits < 64 && (dl_generation >> bits) > 1)
        bits++;
    size_t dir = (size_t)(slash - path) + 1, len = dir;
    if (len + 2 * ((size_t)bits + 1) + strlen(slash + 1) + 1 > size)
        return NULL;
    memcpy(buf, path, dir);
    for (int b = bits; b >= 0; b--) {
        if ((dl_generation >> b) & 1)
            buf[len++] = '.';
        buf[len++] = '/';
    }
    strcpy(buf + len, slash + 1);
    return buf;
}
#endif

/*
** The name the plugin opened as FD (the file at PATH) is dlopen()ed by. On
** Linux that is the descriptor itself, /proc/self/fd/N, so the bytes that
** were judged are the bytes mapped even if PATH is replaced meanwhile. The
** price: $ORIGIN in a plugin's run path means /proc/self/fd, so a plugin
** finds a bundled library through an absolute run path or the system's.
** glibc returns an object already loaded under the same name without
** opening anything, and descriptor numbers are reused, so each load spells
** /proc/self/ uniquely ("./" or "/" per bit of a counter, as dl_name does).
** Elsewhere (--disable-linux-extensions) PATH is loaded by dl_name's
** spelling: the ancestors' check leaves the swap to root and this user.
*/
static const char *fd_name(int fd, const char *path, char *buf, size_t size)
{
#if defined(__linux__) && !defined(TH_PORTABLE_ONLY)
    static unsigned long long loads; /* the thread that loads only */
    unsigned long long n = ++loads;
    int bits = 0;
    while (bits < 63 && (n >> bits) > 1)
        bits++;
    size_t len = (size_t)snprintf(buf, size, "/proc/self/");
    if (len + 2 * ((size_t)bits + 1) + 32 > size)
        return NULL;
    for (int b = bits; b >= 0; b--) {
        if ((n >> b) & 1)
            buf[len++] = '.';
        buf[len++] = '/';
    }
    snprintf(buf + len, size - len, "fd/%d", fd);
    (void)path;
    return buf;
#else
    (void)fd;
    return dl_name(path, buf, size);
#endif
}

/* dlerror()'s text, naming PATH where it names DLPATH, the spelling loaded. */
static const char *dl_error(const char *dlpath, const char *path)
{
    static char buf[1024];
    const char *e = dlerror();
    size_t len = strlen(dlpath);
    if (!e)
        return "unknown error";
    if (strncmp(e, dlpath, len) != 0)
        return e;
    snprintf(buf, sizeof buf, "%s%s", path, e + len);
    return buf;
}

bool th_loader_digest_fd(int fd, char *out)
{
    struct stat st;
    out[0] = '\0';
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return false;
    /* Mapped rather than read: a plugin is hashed just before dlopen()
     * maps it, so the pages are read from the disk once. */
    size_t len = (size_t)st.st_size;
    void *m = len ? mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    if (len && m == MAP_FAILED)
        return false;
    th_sha256_digest(m ? m : "", len, out);
    if (m)
        munmap(m, len);
    return true;
}

/* Are FD's bytes those OPTS expects for PATH? Refuses (logs, counts) when not. */
static th_rc check_digest(int fd, const char *path, const th_load_opts *opts, th_load_stats *stats)
{
    char got[TH_SHA256_DIGEST_LEN + 1];
    if (!opts || !opts->expect_digest)
        return TH_OK;
    if (!th_loader_digest_fd(fd, got))
        return refuse(stats, path, "cannot read it to check its content: %s%s", strerror(errno), "");
    if (strcmp(got, opts->expect_digest) == 0)
        return TH_OK;
    char why[300];
    snprintf(why, sizeof why, "%s, not %s", got, opts->expect_digest);
    return refuse(stats, path,
                  "its content (%s) is not what its tools were listed from; not loaded (a rescan, --watch or SIGHUP, "
                  "serves the new version)%s",
                  why, "");
}

/* Open the plugin at PATH (absolute), NAME.so, after every check made
 * before its code runs, and find its entry point: TH_OK with *HANDLE and
 * *ENTRY, or the refusal logged and counted. */
static th_rc open_entry(const char *path, char *name, size_t size, const th_load_opts *opts, th_load_stats *stats,
                        void **handle, th_register_fn *entry)
{
    char symbol[300], spelled[PATH_MAX + 160];
    th_rc rc;

    int fd;
    if ((rc = check_plugin(path, name, size, opts, stats, &fd)) != TH_OK)
        return rc;
    if ((rc = check_digest(fd, path, opts, stats)) != TH_OK) {
        close(fd);
        return rc;
    }

    /* Absolute either way, so dlopen() never searches the library path. */
    const char *dlpath = fd_name(fd, path, spelled, sizeof spelled);
    *handle = dlpath ? dlopen(dlpath, RTLD_NOW | RTLD_LOCAL) : NULL;
    close(fd); /* the mapping, if any, holds the file now */
    if (!dlpath)
        return refuse(stats, path, "path too long to load again%s%s", "", "");
    if (!*handle)
        return refuse(stats, path, "cannot load shared object: %s (check its dependencies with ldd(1))%s",
                      dl_error(dlpath, path), "");

    snprintf(symbol, sizeof symbol, "register_%s_tool", name);
    dlerror();
    *(void **)entry = dlsym(*handle, symbol);
    if (!*entry) {
        const char *why = dlerror();
        refuse(stats, path, "no entry point [%s]: %s", symbol, why ? why : "symbol is NULL");
        dlclose(*handle);
        return TH_ERR_TYPE;
    }
    return TH_OK;
}

/* Call ENTRY, the plugin PATH's register_NAME_tool, and register what it
 * returns under the registry rules, all or nothing. HANDLE (NULL for a
 * function linked into the program) stays open while anything of it is
 * registered. FILES says who owns which tool name. */
static th_rc register_entry(th_registry *reg, const char *path, const char *name, th_register_fn entry,
                            void *handle, const plugin_list *files, const th_load_opts *opts, th_load_stats *stats)
{
    char symbol[300];
    th_rc rc;
    snprintf(symbol, sizeof symbol, "register_%s_tool", name);
    th_staged staged = th_loader_stage(reg);
    size_t base = staged.tools;
    th_server server = {.reg = reg, .path = path, .name = name, .files = files, .stats = stats,
                        .quiet_refusals = opts && opts->scanned, .config = opts ? opts->config : NULL,
                        .needs = opts ? opts->needs : NULL, .defer_needs = opts && opts->defer_needs};
    /* The plugin gets a handle on SERVER, which dies with this frame. */
    th_handle h = th_handle_open(&server, TH_HANDLE_SERVER, name);
    const th_tool *desc = entry(h ? (th_server *)h : &server);
    th_handle_close(h); /* waits for a plugin thread inside th_server_add_tool */
    th_tool t;
    bool readable = false; /* may T's fields (destroy, user_data) be trusted? */
    th_err err;
    th_err_clear(&err);
    /* Resources count as what a plugin serves: one may serve nothing else. */
    size_t added_resources = th_loader_staged_extras(reg, &staged);
    if (desc == &added_only_marker) {
        rc = th_registry_count(reg) > base || added_resources > 0
                 ? TH_OK
                 : th_err_set(&err, TH_ERR_VALUE,
                              "%s() returned th_server_added_only() but added no tool, resource or prompt", symbol);
    } else if (!desc) {
        rc = th_err_set(&err, TH_ERR_TYPE, "%s() returned NULL instead of a tool descriptor", symbol);
    } else if (on_this_stack(desc, &server)) {
        rc = th_err_set(&err, TH_ERR_VALUE,
                        "%s() returned a descriptor on its own stack, which ended when it returned; "
                        "return one in static storage",
                        symbol);
    } else if (desc == server.added_own) {
        rc = TH_OK; /* it added this very descriptor itself: nothing more to register */
    } else if ((rc = th_tool_normalize(desc, &t, &err)) == TH_OK) {
        /* Past the ABI check: only now can any other field be trusted. */
        readable = true;
        if (t.name && strcmp(t.name, name) != 0)
            rc = th_err_set(&err, TH_ERR_VALUE,
                            "tool name '%.60s' does not match the plugin file: %s() must return the tool named '%s'",
                            t.name, symbol, name);
        else
            rc = th_registry_add(reg, &t, path, &err);
    }

    if (rc == TH_OK) {
        stats->tools_loaded += th_registry_count(reg) - base;
        stats->plugins_loaded++;
    } else {
        /* The name the plugin gave, when it could be read: the one its
         * author must look for (the file's is in the path already). */
        th_log(server.deferred ? TH_LOG_DEBUG : TH_LOG_ERROR, "plugin %s refused: tool '%.60s': %s [%s]", path,
               readable && t.name ? t.name : name, err.msg, th_rc_name(rc));
        stats->plugins_refused++;
        /* The plugin never learns that its returned descriptor was refused,
         * so user_data is released here, unless a registered tool, staged
         * or not, shares it: that one's destroy releases it. */
        bool release = readable && t.destroy && !user_data_in_use(reg, t.user_data);
        th_loader_discard(reg, &staged, path, stats);
        if (release)
            t.destroy(t.user_data);
    }

    /* Handles stay open while any of their tools or resources is registered. */
    if (!handle) {
        /* linked into the program: nothing to keep open */
    } else if (th_registry_count(reg) == base && th_loader_staged_extras(reg, &staged) == 0) {
        dlclose(handle);
    } else if (th_registry_adopt_handle(reg, handle) != TH_OK) {
        th_log(TH_LOG_CRITICAL, "out of memory keeping %s open", path);
        return TH_ERR_NOMEM; /* leaking the handle beats unloading live code */
    }
    return rc;
}


/* Load the plugin at PATH (absolute), NAME.so; FILES says who owns which
 * tool name. */
static th_rc load_one(th_registry *reg, const char *path, const plugin_list *files, const th_load_opts *opts,
                      th_load_stats *stats)
{
    char name[256];
    void *handle;
    th_register_fn entry;
    th_rc rc = open_entry(path, name, sizeof name, opts, stats, &handle, &entry);
    return rc == TH_OK ? register_entry(reg, path, name, entry, handle, files, opts, stats) : rc;
}

th_rc th_loader_register_linked(th_registry *reg, const char *name, th_register_fn entry, const th_load_opts *opts,
                                th_load_stats *stats)
{
    /* A path of the plugin file it stands for, so that messages and the
     * tool-name ownership rule read as for NAME.so. */
    char path[300];
    plugin_list files = {0};
    snprintf(path, sizeof path, TH_LINKED_DIR "/%s.so", name);
    if (!identifier_ok(name) || strlen(name) > 200)
        return refuse(stats, path, "'%s' cannot be part of the entry point's name register_%s_tool", name, name);
    if (!entry)
        return refuse(stats, path, "no entry point [register_%s_tool]: %s", name, "the function is NULL");
    char *copy = strdup(path);
    if (!copy || plugin_list_add(&files, copy) != TH_OK)
        return refuse(stats, path, "out of memory%s%s", "", "");
    th_rc rc = register_entry(reg, files.paths[0], name, entry, NULL, &files, opts, stats);
    plugin_list_free(&files);
    return rc;
}

/*
** An absolute spelling of PATH (malloc'd), relative to the working directory
** as it is now, before any plugin constructor can change it. NULL with errno
** set on failure.
*/
static char *absolute_path(const char *path)
{
    if (path[0] == '/')
        return strdup(path);
    char *cwd = getcwd(NULL, 0);
    if (!cwd)
        return NULL;
    size_t len = strlen(cwd) + strlen(path) + 2;
    char *abs = malloc(len);
    if (abs)
        snprintf(abs, len, "%s%s%s", cwd, strcmp(cwd, "/") == 0 ? "" : "/", path);
    free(cwd);
    return abs;
}

th_rc th_loader_load_file(th_registry *reg, const char *path, const th_load_opts *opts, th_load_stats *stats)
{
    plugin_list files = {0};
    char *abs = absolute_path(path);
    if (!abs)
        return refuse(stats, path, "cannot resolve against the working directory: %s%s", strerror(errno), "");
    if (plugin_list_add(&files, abs) != TH_OK)
        return refuse(stats, path, "out of memory%s%s", "", "");
    th_rc rc = load_one(reg, files.paths[0], &files, opts, stats);
    plugin_list_free(&files);
    return rc;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
** Append DIR's NAME.so files to FILES, sorted, as absolute paths. A directory
** that cannot be read or breaks the trust rule is an error when REQUIRED (the
** user named it), else a warning; both are counted as refused directories.
** TH_ERR_IO then. The rule is applied to the opened directory, the one that
** is then listed, and to every directory above it as it is walked.
*/
static th_rc list_dir(const char *dir, bool required, const th_load_opts *opts, plugin_list *files,
                      th_load_stats *stats)
{
    char why[1536];
    char **names = NULL;
    size_t n = 0, cap = 0, listed = 0;
    th_rc rc = TH_OK;
    DIR *d = NULL;
    bool refused = false;
    int fd = -1;
    char *abs = absolute_path(dir);
    snprintf(why, sizeof why, "%s", strerror(errno));
    if (abs && (fd = open_trusted_dir(abs, opts, true, &refused, why, sizeof why)) >= 0) {
        int rfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* the directory judged */
        if (rfd < 0 || !(d = fdopendir(rfd))) {
            snprintf(why, sizeof why, "%s", strerror(errno));
            if (rfd >= 0)
                close(rfd);
        }
        close(fd);
    }
    if (!d) {
        th_log(required ? TH_LOG_ERROR : TH_LOG_WARNING, "plugin directory %s%s: %s", dir,
               refused ? " refused" : ": cannot open", why);
        stats->dirs_refused++;
        rc = TH_ERR_IO;
        goto cleanup;
    }
    struct dirent *de;
    for (errno = 0; (de = readdir(d)) != NULL; errno = 0) {
        size_t len = strlen(de->d_name);
        if (len <= 3 || strcmp(de->d_name + len - 3, ".so") != 0)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 32;
            char **p = realloc(names, cap * sizeof *p);
            if (!p) {
                rc = TH_ERR_NOMEM;
                goto cleanup;
            }
            names = p;
        }
        if (!(names[n] = strdup(de->d_name))) {
            rc = TH_ERR_NOMEM;
            goto cleanup;
        }
        n++;
    }
    if (errno != 0) {
        th_log(required ? TH_LOG_ERROR : TH_LOG_WARNING, "plugin directory %s: cannot read: %s", dir,
               strerror(errno));
        stats->dirs_refused++;
        rc = TH_ERR_IO;
        goto cleanup;
    }
    if (n > 1) /* qsort's base must not be NULL, even for 0 elements */
        qsort(names, n, sizeof *names, cmp_names);
    if (n == 0)
        th_log(TH_LOG_WARNING, "plugin directory %s: no NAME.so files in it", dir);
    for (; listed < n; listed++) {
        size_t len = strlen(abs) + strlen(names[listed]) + 2;
        char *path = malloc(len);
        if (!path || (snprintf(path, len, "%s/%s", abs, names[listed]), plugin_list_add(files, path)) != TH_OK) {
            rc = TH_ERR_NOMEM;
            goto cleanup;
        }
    }

cleanup:
    if (rc == TH_ERR_NOMEM)
        th_log(TH_LOG_CRITICAL, "plugin directory %s: out of memory", dir);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    if (d)
        closedir(d);
    free(abs);
    return rc;
}

th_rc th_loader_load_dirs(th_registry *reg, const char *const *dirs, size_t ndirs, const th_load_opts *opts,
                          th_load_stats *stats)
{
    char **paths;
    size_t n;
    /* Every directory is listed before any plugin runs: ownership of names
     * needs all of them, and nothing a plugin does can change the list. */
    th_rc rc = th_loader_list_dirs(dirs, ndirs, opts, stats, &paths, &n);
    if (rc == TH_ERR_NOMEM || (rc != TH_OK && opts && opts->dirs_required))
        return rc; /* fatal for the caller: no plugin code has run */
    plugin_list files = {.paths = paths, .n = n, .cap = n};
    for (size_t i = 0; i < files.n; i++) {
        th_signals_loading(files.paths[i]); /* a stop signal names it from now on */
        load_one(reg, files.paths[i], &files, opts, stats);
        th_signals_loading(NULL);
    }
    plugin_list_free(&files);
    return rc;
}

th_rc th_loader_list_dirs(const char *const *dirs, size_t ndirs, const th_load_opts *opts, th_load_stats *stats,
                          char ***paths, size_t *n)
{
    plugin_list files = {0};
    bool required = opts && opts->dirs_required;
    th_rc rc = TH_OK;
    *paths = NULL;
    *n = 0;
    for (size_t i = 0; i < ndirs; i++) {
        th_rc r = list_dir(dirs[i], required, opts, &files, stats);
        if (r == TH_ERR_NOMEM) {
            plugin_list_free(&files);
            return r;
        }
        if (r != TH_OK)
            rc = r;
    }
    if (rc != TH_OK && required) {
        plugin_list_free(&files);
        return rc;
    }
    *paths = files.paths;
    *n = files.n;
    return rc;
}

void th_loader_paths_free(char **paths, size_t n)
{
    plugin_list l = {.paths = paths, .n = n, .cap = n};
    plugin_list_free(&l);
}

th_rc th_loader_load_listed(th_registry *reg, char *const *paths, size_t n, size_t which, const th_load_opts *opts,
                            th_load_stats *stats)
{
    if (which >= n)
        return TH_ERR_MISUSE;
    /* Borrowed: load_one only reads the list. */
    plugin_list files = {.paths = (char **)paths, .n = n, .cap = n};
    return load_one(reg, paths[which], &files, opts, stats);
}

th_rc th_loader_load_dir(th_registry *reg, const char *dir, const th_load_opts *opts, th_load_stats *stats)
{
    return th_loader_load_dirs(reg, &dir, 1, opts, stats);
}
