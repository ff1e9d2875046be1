/* SPDX-License-Identifier: MIT */
/*
** host/start.c: the one way a registry is built, at start-up and on each
** reload: list and scan the plugin directories, register what was accepted
** (proxies to a new supervisor, lazily, or plugins loaded in the host), and
** on a reload keep the previous version of a plugin whose replacement was
** refused.
*/
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/signals.h"
#include "host/options.h"
#include "host/start.h"
#include "plugin/cache.h"
#include "plugin/lazy.h"
#include "plugin/lockfile.h"
#include "plugin/reload.h"
#include "worker/resproxy.h"

extern char **environ;

/* What one build has found so far; released by found_free. */
typedef struct found {
    char **paths;
    size_t n;
    th_scanned *scanned;
    size_t *order; /* the plugins that served before first */
} found;

/* How a message ends: at start-up a failure ends the host, on a reload the
 * previous tools stay. */
static const char *prefix(const th_registry *old)
{
    return old ? "reload: " : "";
}

static const char *outcome(const th_registry *old)
{
    return old ? "still serving the previous tools" : "exiting";
}

static void supervisor_release(void *sup)
{
    th_supervisor_free(sup);
}

static void found_free(found *f)
{
    free(f->order);
    if (f->scanned)
        th_scan_free(f->scanned, f->n);
    free(f->scanned);
    th_loader_paths_free(f->paths, f->n);
}

/* A grant for a plugin that is not there is a typo that would leave the
 * real one without it: fatal at start, a warning on a reload. */
static bool grants_known(const th_start_opts *o, const found *f, const th_registry *old)
{
    const char *name;
    for (size_t k = 0; (name = th_config_grant_plugin_at(o->settings, k)) != NULL; k++) {
        char have[256];
        size_t i = 0;
        while (i < f->n && !(th_config_plugin_name(f->paths[i], have, sizeof have) && strcmp(have, name) == 0))
            i++;
        if (i < f->n)
            continue;
        const char *key, *value;
        th_config_grant_at(o->settings, name, 0, &key, &value);
        th_log(old ? TH_LOG_WARNING : TH_LOG_ERROR, "%s--grant %s.%s: no plugin %s.so in the plugin directories%s",
               prefix(old), name, key, name, old ? "" : "; exiting");
        if (!old)
            return false;
    }
    return true;
}

/* List the directories and scan every plugin file, or take its scan from
 * the registry cache, opened afresh each time: its entries are keyed by the
 * files as they are now, so a replaced plugin misses and is scanned again. */
static th_rc list_and_scan(const th_start_opts *o, const th_registry *old, found *f, th_load_stats *stats)
{
    th_rc rc = th_loader_list_dirs(o->dirs, o->ndirs, &o->load, stats, &f->paths, &f->n);
    /* An unreadable default directory was only a warning; anything else
     * (a named directory, out of memory) left the plugins unlisted. */
    if (rc != TH_OK && (o->load.dirs_required || rc != TH_ERR_IO)) {
        th_log(TH_LOG_ERROR, "%scannot %s the plugin directories (see above); %s", prefix(old),
               old ? "list" : "load", outcome(old));
        return rc;
    }
    if (!old) /* the environment's settings, for the plugins found */
        th_config_load_env(o->settings, f->paths, f->n, environ);
    if (!grants_known(o, f, old))
        return TH_ERR_VALUE;
    th_cache *cache = o->cache_path ? th_cache_open(o->cache_path, &o->load) : NULL;
    f->scanned = calloc(f->n + 1, sizeof *f->scanned);
    rc = f->scanned ? th_scan_plugins_cached(f->paths, f->n, &o->scan, cache, f->scanned, stats) : TH_ERR_NOMEM;
    th_err err;
    if (rc == TH_OK && th_cache_save(cache, &err) != TH_OK)
        th_log(TH_LOG_WARNING, "%s; the next start scans again", err.msg);
    th_cache_free(cache);
    if (rc != TH_OK && rc != TH_ERR_CANCELLED)
        th_log(TH_LOG_ERROR, "%scannot scan the plugins (see above); %s", prefix(old), outcome(old));
    return rc;
}

/* The plugins that served before register first: a name a reload brings
 * in twice (a NAME.so added in another directory or toolbox) stays with the
 * plugin that had it, and the newcomer is refused naming both, rather than
 * the name moving with the directory order. */
static bool order_plugins(found *f, const th_registry *old)
{
    if (!(f->order = calloc(f->n + 1, sizeof *f->order)))
        return false;
    size_t k = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < f->n; i++)
            if ((old && th_reload_had_plugin(old, f->paths[i])) == (pass == 0))
                f->order[k++] = i;
    return true;
}

/* Process isolation: proxies to a new supervisor that the registry owns. */
static bool register_workers(const th_start_opts *o, th_registry *reg, const found *f, th_supervisor **sup_out,
                             th_load_stats *stats)
{
    th_supervisor *prev = *sup_out, *sup = th_supervisor_new(f->paths, f->n, &o->sup);
    *sup_out = NULL;
    if (!sup)
        return false;
    th_supervisor_register_in(sup, reg, f->scanned, stats, f->order);
    if (th_registry_on_release(reg, supervisor_release, sup) != TH_OK) {
        th_supervisor_free(sup);
        return false;
    }
    th_supervisor_adopt(sup, prev); /* unchanged plugins keep their workers */
    *sup_out = sup;
    return true;
}

/* One accepted plugin loaded in the host, only from the bytes its tools
 * were listed from. At start-up a stop signal names it while it loads. */
static void load_one(const th_start_opts *o, th_registry *reg, const found *f, size_t i, const th_registry *old,
                     th_load_stats *stats)
{
    th_load_opts one = o->load;
    one.scanned = true; /* the scan logged the tools it refused */
    one.expect_digest = f->scanned[i].digest[0] ? f->scanned[i].digest : NULL;
    if (!old)
        th_signals_loading(f->paths[i]);
    th_loader_load_listed(reg, f->paths, f->n, i, &one, stats);
    if (!old)
        th_signals_loading(NULL);
}

static void register_in_host(const th_start_opts *o, th_registry *reg, const found *f, const th_registry *old,
                             unsigned long long generation, th_load_stats *stats)
{
    th_loader_set_generation(generation);
    for (size_t j = 0; j < f->n; j++)
        if (f->scanned[f->order[j]].accepted)
            load_one(o, reg, f, f->order[j], old, stats);
    th_loader_set_generation(0);
}

/* --lazy-load: no plugin code runs now; each plugin opens at its first call. */
static bool register_lazily(const th_start_opts *o, th_registry *reg, const found *f, th_load_stats *stats)
{
    th_lazy_set *lazy = th_lazy_set_new(f->paths, f->n, &o->load);
    if (!lazy)
        return false;
    for (size_t i = 0; i < f->n; i++) {
        const th_scanned *sc = &f->scanned[i];
        if (!sc->accepted)
            continue;
        /* A plugin serving resources is opened now: listing them needs
         * nothing, but a lazy read function would need its own proxy. */
        bool has_resources = false;
        for (size_t k = 0; sc->tools && k < json_object_array_length(sc->tools); k++)
            has_resources |= th_resproxy_is_resource(json_object_array_get_idx(sc->tools, k), NULL);
        if (has_resources) {
            load_one(o, reg, f, i, NULL, stats);
            continue;
        }
        th_lazy_expect(lazy, i, sc->digest);
        th_lazy_register(lazy, reg, i, sc->tools, stats);
        stats->tools_refused += sc->tools_refused; /* by the scan, already logged */
    }
    th_lazy_set_unref(lazy); /* the tools hold their own references */
    return true;
}

/* A plugin still listed that served before but has no tools now was
 * refused: its previous version goes on serving. */
static size_t keep_refused(th_registry *reg, th_registry *old, const found *f)
{
    size_t kept = 0;
    for (size_t i = 0; old && i < f->n; i++)
        if (!th_reload_had_plugin(reg, f->paths[i]) && th_reload_had_plugin(old, f->paths[i]))
            kept += th_reload_keep_plugin(reg, old, f->paths[i]);
    return kept;
}

/* --lock: what drifted from the pinned definitions is not served. When
 * the comparison itself fails nothing is, rather than what is unchecked. */
static void apply_lock(const th_start_opts *o, json_object *pinned, th_registry *reg, const found *f,
                       const th_registry *old, th_load_stats *stats)
{
    th_err err;
    th_drift *d = NULL;
    size_t n = 0;
    json_object *now = NULL;
    th_lock_file *files = calloc(f->n + 1, sizeof *files);
    for (size_t i = 0; files && i < f->n; i++)
        files[i] = (th_lock_file){f->paths[i], f->scanned[i].digest, f->scanned[i].needs};
    th_rc rc = files ? TH_OK : th_err_set(&err, TH_ERR_NOMEM, "out of memory");
    if (rc == TH_OK && !(now = th_lock_build(reg, files, f->n, &err)))
        rc = err.code;
    if (rc == TH_OK && (rc = th_lock_diff(pinned, now, o->lock_path, &d, &n)) != TH_OK)
        th_err_set(&err, rc, "out of memory");
    if (rc == TH_OK) {
        th_lock_enforce(reg, d, n, stats);
    } else {
        th_log(TH_LOG_ERROR, "%scannot compare the plugins with the lock %s: %s; serving none of them", prefix(old),
               o->lock_path, err.msg);
        th_lock_withhold_all(reg, stats);
    }
    th_drift_free(d, n);
    json_object_put(now);
    free(files);
}

#define PLURAL(n, one, many) (n), (n) == 1 ? one : many

static void log_summary(const th_registry *reg, const th_registry *old, size_t kept, const th_load_stats *s)
{
    if (old)
        th_log(TH_LOG_INFO,
               "reload: %zu tool%s from %zu plugin%s (%zu kept from before); %zu plugin%s refused, %zu tool%s "
               "refused",
               PLURAL(th_registry_count(reg), "", "s"), PLURAL(s->plugins_loaded, "", "s"), kept,
               PLURAL(s->plugins_refused, "", "s"), PLURAL(s->tools_refused, "", "s"));
    else
        th_log(TH_LOG_INFO,
               "loaded %zu tool%s from %zu plugin%s; %zu plugin%s refused, %zu tool%s refused, %zu director%s "
               "refused",
               PLURAL(s->tools_loaded, "", "s"), PLURAL(s->plugins_loaded, "", "s"),
               PLURAL(s->plugins_refused, "", "s"), PLURAL(s->tools_refused, "", "s"),
               PLURAL(s->dirs_refused, "y", "ies"));
}

th_rc th_host_start(const th_start_opts *o, th_registry *old, unsigned long long generation, th_supervisor **sup,
                    th_load_stats *stats, th_registry **out)
{
    found f = {0};
    th_registry *reg = NULL;
    json_object *pinned = NULL;
    th_err err;
    *stats = (th_load_stats){0};
    *out = NULL;
    /* Before any plugin is listed: a lock that cannot be read serves
     * nothing new, and a reload keeps serving what it checked before. */
    th_rc rc = o->lock_path ? th_lock_read(o->lock_path, &pinned, &err) : TH_OK;
    if (rc != TH_OK)
        th_log(TH_LOG_ERROR, "%s%s; %s", prefix(old), err.msg, outcome(old));
    if (rc == TH_OK)
        rc = list_and_scan(o, old, &f, stats);
    if (rc != TH_OK) {
        *sup = NULL;
        goto cleanup;
    }
    rc = TH_ERR_NOMEM;
    bool ok = (reg = th_registry_new()) && th_registry_set_naming(reg, o->naming) == TH_OK &&
              th_registry_set_policy(reg, o->policy) == TH_OK && order_plugins(&f, old);
    if (ok && o->isolate)
        ok = register_workers(o, reg, &f, sup, stats);
    else if (ok && o->lazy && !old)
        ok = register_lazily(o, reg, &f, stats);
    else if (ok)
        register_in_host(o, reg, &f, old, generation, stats);
    for (size_t i = 0; ok && !o->isolate && i < o->nlinked; i++)
        th_loader_register_linked(reg, o->linked[i].name, o->linked[i].entry, &o->load, stats);
    if (!ok) {
        th_log(TH_LOG_CRITICAL, "%sout of memory; %s", prefix(old), outcome(old));
        th_registry_unref(reg);
        reg = NULL;
        *sup = NULL;
        goto cleanup;
    }
    size_t kept = keep_refused(reg, old, &f);
    if (pinned)
        apply_lock(o, pinned, reg, &f, old, stats);
    th_registry_start(reg);
    log_summary(reg, old, kept, stats);
    *out = reg;
    rc = TH_OK;

cleanup:
    json_object_put(pinned);
    found_free(&f);
    return rc;
}

void th_start_opts_from(const th_host_opts *o, th_naming *naming, const char *cache_path, th_start_opts *out)
{
    *out = (th_start_opts){.dirs = o->dirs, .ndirs = o->ndirs, .load = o->load, .scan = o->scan,
                           .isolate = o->isolate, .lazy = o->lazy_load, .sup = o->sup,
                           .cache_path = cache_path, .naming = naming, .settings = o->settings,
                           .policy = o->policy, .lock_path = o->lock_file};
    out->scan.load = o->load;
    /* Lazily, the trust rule is applied now to cached plugins too: a tool
     * is listed only when its plugin may be opened. */
    out->scan.host_loads = !o->isolate && !o->lazy_load;
    out->sup.load = o->load;
    out->sup.max_result_bytes = o->cfg.max_result_bytes;
    out->sup.threads = o->cfg.max_threads;
    out->sup.start_timeout_ms = o->scan.load_timeout_ms ? o->scan.load_timeout_ms : 86400000;
    out->sup.busy_poll_us = o->stdio.busy_poll_us;
}
