/* SPDX-License-Identifier: MIT */
/*
** worker/rebuild.c: one hot-reload rebuild: list and scan the plugin
** directories, register what was accepted into a new registry (proxies to a
** new supervisor, or plugins loaded in the host), and keep the previous
** version of a plugin whose replacement was refused.
*/
#include "config.h"

#include <stdlib.h>

#include "base/log.h"
#include "plugin/cache.h"
#include "plugin/reload.h"
#include "worker/rebuild.h"

static void supervisor_release(void *sup)
{
    th_supervisor_free(sup);
}

th_registry *th_rebuild(const th_rebuild_opts *o, th_registry *old, unsigned long long generation,
                        th_supervisor **sup_out)
{
    th_load_stats stats = {0};
    char **paths = NULL;
    size_t n = 0;
    th_scanned *scanned = NULL;
    th_cache *cache = NULL;
    th_registry *reg = NULL;
    size_t *order = NULL;
    th_supervisor *sup = NULL, *prev = *sup_out;
    *sup_out = NULL;

    th_rc rc = th_loader_list_dirs(o->dirs, o->ndirs, &o->load, &stats, &paths, &n);
    if (rc != TH_OK && (o->load.dirs_required || rc != TH_ERR_IO)) {
        th_log(TH_LOG_ERROR, "reload: cannot list the plugin directories (see above); still serving the "
               "previous tools");
        goto cleanup;
    }
    /* Opened afresh each time: its entries are keyed by the files as they
     * are now, so a replaced plugin misses and is scanned again. */
    if (o->cache_path)
        cache = th_cache_open(o->cache_path, &o->load);
    if (!(scanned = calloc(n + 1, sizeof *scanned)) ||
        th_scan_plugins_cached(paths, n, &o->scan, cache, scanned, &stats) != TH_OK) {
        th_log(TH_LOG_ERROR, "reload: cannot scan the plugins (see above); still serving the previous tools");
        goto cleanup;
    }
    th_err err;
    if (th_cache_save(cache, &err) != TH_OK)
        th_log(TH_LOG_WARNING, "%s; the next start scans again", err.msg);
    if (!(reg = th_registry_new()) || th_registry_set_naming(reg, o->naming) != TH_OK)
        goto nomem;
    /* The plugins that served before register first: a name a reload
     * brings in twice (a NAME.so added in another directory or toolbox)
     * stays with the plugin that had it, and the newcomer is refused naming
     * both, rather than the name moving with the directory order. */
    if (!(order = calloc(n + 1, sizeof *order)))
        goto nomem;
    size_t k = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < n; i++)
            if ((old && th_reload_had_plugin(old, paths[i])) == (pass == 0))
                order[k++] = i;
    if (o->isolate) {
        if (!(sup = th_supervisor_new(paths, n, &o->sup)))
            goto nomem;
        th_supervisor_register_in(sup, reg, scanned, &stats, order);
        if (th_registry_on_release(reg, supervisor_release, sup) != TH_OK)
            goto nomem;
        th_supervisor_adopt(sup, prev); /* unchanged plugins keep their workers */
        *sup_out = sup;
        sup = NULL; /* the registry's now */
    } else {
        th_load_opts load = o->load;
        load.scanned = true; /* the scan logged the tools it refused */
        th_loader_set_generation(generation);
        for (size_t j = 0; j < n; j++) {
            const th_scanned *sc = &scanned[order[j]];
            load.expect_digest = sc->digest[0] ? sc->digest : NULL; /* the bytes its tools came from */
            if (sc->accepted)
                th_loader_load_listed(reg, paths, n, order[j], &load, &stats);
        }
        th_loader_set_generation(0);
    }
    /* A plugin still listed that served before but has no tools now was
     * refused: its previous version goes on serving. */
    size_t kept = 0;
    for (size_t i = 0; old && i < n; i++)
        if (!th_reload_had_plugin(reg, paths[i]) && th_reload_had_plugin(old, paths[i]))
            kept += th_reload_keep_plugin(reg, old, paths[i]);
    th_registry_start(reg);
    th_log(TH_LOG_INFO,
           "reload: %zu tool%s from %zu plugin%s (%zu kept from before); %zu plugin%s refused, %zu tool%s refused",
           th_registry_count(reg), th_registry_count(reg) == 1 ? "" : "s", stats.plugins_loaded,
           stats.plugins_loaded == 1 ? "" : "s", kept, stats.plugins_refused, stats.plugins_refused == 1 ? "" : "s",
           stats.tools_refused, stats.tools_refused == 1 ? "" : "s");
    goto cleanup;

nomem:
    th_log(TH_LOG_CRITICAL, "reload: out of memory; still serving the previous tools");
    th_registry_unref(reg);
    reg = NULL;
    *sup_out = NULL;
cleanup:
    free(order);
    th_supervisor_free(sup);
    if (scanned)
        th_scan_free(scanned, n);
    free(scanned);
    th_cache_free(cache);
    th_loader_paths_free(paths, n);
    return reg;
}
