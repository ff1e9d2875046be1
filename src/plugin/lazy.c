/* SPDX-License-Identifier: MIT */
/*
** plugin/lazy.c: --lazy-load (in-process isolation): tools registered from
** their scan without opening the plugin, which is dlopen()ed by the first
** call of one of its tools. Start-up then costs what the scan or the
** registry cache costs, not a dlopen per installed plugin.
*/
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "plugin/lazy.h"

/* One plugin file: opened once, by the first call that needs it. */
typedef struct lazy_plugin {
    th_lazy_set *set;
    size_t which;                /* its index in set->paths */
    pthread_mutex_t lock;        /* the opening */
    bool tried;                  /* under lock: opened, or failed for good */
    th_registry *reg;            /* its tools as it registered them; NULL until opened */
    char why[512];               /* under lock: why it could not be opened */
    char digest[72];             /* what its tools were listed from; "": unchecked */
} lazy_plugin;

struct th_lazy_set {
    atomic_size_t refs;          /* the caller's and each tool's */
    char **paths;                /* the whole list: tool names belong to files */
    size_t n;
    th_load_opts opts;
    lazy_plugin *plugins;        /* one per path, opened on demand */
};

/* One listed tool: where it lives, and what was listed for it. */
typedef struct lazy_tool {
    lazy_plugin *p;
    char *name;
    char *input_schema, *output_schema; /* as listed (NULL: none) */
    _Atomic(const th_entry *) entry;    /* the plugin's own, once checked */
} lazy_tool;

th_lazy_set *th_lazy_set_new(char *const *paths, size_t n, const th_load_opts *opts)
{
    th_lazy_set *set = calloc(1, sizeof *set);
    if (!set)
        return NULL;
    atomic_init(&set->refs, 1);
    set->opts = *opts;
    set->opts.scanned = true; /* the scan logged its refusals already */
    set->paths = calloc(n ? n : 1, sizeof *set->paths);
    set->plugins = calloc(n ? n : 1, sizeof *set->plugins);
    if (!set->paths || !set->plugins)
        goto fail;
    for (size_t i = 0; i < n; i++) {
        if (!(set->paths[i] = strdup(paths[i])))
            goto fail;
        set->n = i + 1;
        set->plugins[i].set = set;
        set->plugins[i].which = i;
        pthread_mutex_init(&set->plugins[i].lock, NULL);
    }
    return set;
fail:
    atomic_store(&set->refs, 1);
    th_lazy_set_unref(set);
    return NULL;
}

void th_lazy_set_unref(th_lazy_set *set)
{
    if (!set || atomic_fetch_sub(&set->refs, 1) != 1)
        return;
    for (size_t i = 0; i < set->n; i++) {
        th_registry_unref(set->plugins[i].reg); /* closes the plugin */
        pthread_mutex_destroy(&set->plugins[i].lock);
        free(set->paths[i]);
    }
    free(set->paths);
    free(set->plugins);
    free(set);
}

/* Does the schema TEXT as listed (NULL: none) equal the plugin's LOADED? */
static bool same_schema(const char *text, json_object *loaded)
{
    if (!text || !loaded)
        return !text && !loaded;
    json_object *listed = json_tokener_parse(text);
    bool same = listed && json_object_equal(listed, loaded);
    json_object_put(listed);
    return same;
}

/*
** Open T's plugin if no call has yet, and find T among what it registered.
** NULL with WHY set when the plugin could not be opened or no longer
** registers T as it was listed (the file changed since the scan).
*/
static const th_entry *resolve(lazy_tool *t, char *why, size_t size)
{
    const th_entry *e = atomic_load_explicit(&t->entry, memory_order_acquire);
    if (e)
        return e;
    lazy_plugin *p = t->p;
    th_lazy_set *set = p->set;
    const char *path = set->paths[p->which];
    pthread_mutex_lock(&p->lock);
    if (!p->tried) {
        p->tried = true;
        th_load_stats stats = {0};
        th_registry *reg = th_registry_new();
        if (reg)
            th_registry_set_private(reg);
        th_load_opts opts = set->opts;
        opts.expect_digest = p->digest[0] ? p->digest : NULL;
        th_rc rc = reg ? th_loader_load_listed(reg, set->paths, set->n, p->which, &opts, &stats) : TH_ERR_NOMEM;
        if (rc == TH_OK && th_registry_count(reg) > 0) {
            th_registry_start(reg);
            p->reg = reg;
            th_log(TH_LOG_DEBUG, "plugin %s opened by its first call", path);
        } else {
            th_registry_unref(reg);
            snprintf(p->why, sizeof p->why, "plugin %s could not be opened at its first call (%s; see the log)",
                     path, th_rc_name(rc == TH_OK ? TH_ERR_VALUE : rc));
        }
    }
    if (p->reg) {
        e = th_registry_get(p->reg, t->name);
        if (!e || !same_schema(t->input_schema, e->input_schema) || !same_schema(t->output_schema, e->output_schema)) {
            snprintf(why, size, "plugin %s changed since its tools were listed: tool '%s' %s; restart toolhost to "
                     "list it again", path, t->name, e ? "has other schemas now" : "is no longer registered");
            e = NULL;
        } else {
            atomic_store_explicit(&t->entry, e, memory_order_release);
        }
    } else {
        snprintf(why, size, "%s", p->why);
    }
    pthread_mutex_unlock(&p->lock);
    return e;
}

static th_rc lazy_handler(th_call *call, json_object *args, void *user_data)
{
    lazy_tool *t = user_data;
    char why[768];
    const th_entry *e = resolve(t, why, sizeof why);
    if (!e) {
        th_log(TH_LOG_ERROR, "tool '%s': %s", t->name, why);
        return th_call_error(call, "%s", why) == TH_OK ? TH_OK : TH_ERR_NOMEM;
    }
    return th_entry_invoke(e, call, args);
}

static void lazy_tool_free(void *user_data)
{
    lazy_tool *t = user_data;
    if (!t)
        return;
    th_lazy_set *set = t->p->set;
    free(t->name);
    free(t->input_schema);
    free(t->output_schema);
    free(t);
    th_lazy_set_unref(set);
}

static const char *str_of(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ? json_object_get_string(v)
                                                                                             : NULL;
}

static char *dup_or_null(const char *s, bool *ok)
{
    char *d = s ? strdup(s) : NULL;
    if (s && !d)
        *ok = false;
    return d;
}

static lazy_tool *new_tool(th_lazy_set *set, size_t which, json_object *d)
{
    lazy_tool *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    bool ok = true;
    t->p = &set->plugins[which];
    t->name = dup_or_null(str_of(d, "name"), &ok);
    t->input_schema = dup_or_null(str_of(d, "input_schema"), &ok);
    t->output_schema = dup_or_null(str_of(d, "output_schema"), &ok);
    atomic_fetch_add(&set->refs, 1);
    if (!ok || !t->name) {
        lazy_tool_free(t);
        return NULL;
    }
    return t;
}

static uint32_t timeout_of(json_object *d)
{
    json_object *v;
    if (!json_object_object_get_ex(d, "timeout_ms", &v) || !json_object_is_type(v, json_type_int))
        return 0;
    int64_t ms = json_object_get_int64(v);
    return ms > 0 && ms <= UINT32_MAX ? (uint32_t)ms : 0;
}

/* The scan's task support (the tasks extension); out of range is left
 * for the registry to refuse. */
static uint32_t task_support_of(json_object *d)
{
    json_object *v;
    if (!json_object_object_get_ex(d, "task_support", &v) || !json_object_is_type(v, json_type_int))
        return 0;
    int64_t n = json_object_get_int64(v);
    return n > 0 && n <= UINT32_MAX ? (uint32_t)n : UINT32_MAX;
}

void th_lazy_expect(th_lazy_set *set, size_t which, const char *digest)
{
    if (which < set->n)
        snprintf(set->plugins[which].digest, sizeof set->plugins[which].digest, "%s", digest ? digest : "");
}

void th_lazy_register(th_lazy_set *set, th_registry *reg, size_t which, json_object *tools, th_load_stats *stats)
{
    if (which >= set->n)
        return;
    const char *path = set->paths[which];
    th_staged staged = th_loader_stage(reg);
    bool own_refused = false;
    for (size_t k = 0; k < json_object_array_length(tools); k++) {
        json_object *d = json_object_array_get_idx(tools, k);
        const char *name = str_of(d, "name");
        lazy_tool *t = name ? new_tool(set, which, d) : NULL;
        th_err err;
        th_rc rc;
        th_err_clear(&err);
        if (!t) {
            rc = th_err_set(&err, TH_ERR_NOMEM, "out of memory");
        } else {
            th_tool tool = {
                TH_TOOL_INIT,
                .name = name,
                .title = str_of(d, "title"),
                .description = str_of(d, "description"),
                .input_schema = t->input_schema,
                .output_schema = t->output_schema,
                .annotations = str_of(d, "annotations"),
                .timeout_ms = timeout_of(d),
                .task_support = task_support_of(d),
                .icons = str_of(d, "icons"),
                .handler = lazy_handler,
                .user_data = t,
                .destroy = lazy_tool_free,
            };
            rc = th_registry_add(reg, &tool, path, &err);
            if (rc != TH_OK)
                lazy_tool_free(t);
        }
        if (rc != TH_OK)
            own_refused |= th_loader_tool_refused(path, name, rc, &err, stats);
    }
    if (own_refused || th_registry_count(reg) == staged.tools) {
        th_loader_discard(reg, &staged, path, stats);
        stats->plugins_refused++;
        return;
    }
    stats->tools_loaded += th_registry_count(reg) - staged.tools;
    stats->plugins_loaded++;
}
