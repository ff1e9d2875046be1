/* SPDX-License-Identifier: MIT */
/*
** host/reload.c: the rescans a running host makes (SIGHUP, --watch): each
** builds a registry through th_host_start with the one served, and swaps it
** in; and the check of --auth-tool-scope against whichever registry serves.
*/
#include "config.h"

#include <string.h>

#include "base/audit.h"
#include "base/metrics.h"
#include "base/signals.h"
#include "host/notify.h"
#include "host/reload.h"
#include "plugin/qualname.h"

bool th_host_tool_scopes_ok(const th_registry *reg, const char *const *scopes, size_t n, th_log_level level)
{
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        size_t len = strcspn(scopes[i], "=");
        char name[TH_QUALNAME_MAX + 1];
        if (len < sizeof name) {
            memcpy(name, scopes[i], len);
            name[len] = '\0';
            if (th_registry_get(reg, name))
                continue;
        }
        /* The exposed name a plugin's own name became, to say what was meant. */
        const char *meant = NULL;
        for (size_t j = 0; !meant && j < th_registry_count(reg); j++) {
            const th_entry *e = th_registry_at(reg, j);
            if (e->original_name && strlen(e->original_name) == len && strncmp(e->original_name, scopes[i], len) == 0)
                meant = e->name;
        }
        th_log(level, "--auth-tool-scope: '%.*s' names no tool served%s%s%s", (int)len, scopes[i],
               meant ? " (tools are called by their qualified names, as '" : "", meant ? meant : "", meant ? "')" : "");
        ok = false;
    }
    return ok;
}

/* Key rotation: a JWKS that no longer loads leaves the keys in use. */
static void reread_jwks(th_auth *auth)
{
    char err[512];
    if (th_auth_reload_jwks(auth, err, sizeof err))
        th_log(TH_LOG_INFO, "reload: --auth-jwks-file re-read");
    else
        th_log(TH_LOG_ERROR, "reload: --auth-jwks-file: %s; the keys loaded before stay in use", err);
}

/* th_rescan_fn, on the watch thread: build the registry the directories
 * hold now and swap it in (clients are told when the tools differ). After
 * a tool's removal its scope stays, for the tool may come back. */
static void rescan(void *ctx, const char *why)
{
    th_reloader *r = ctx;
    /* The service manager's reload (systemctl reload sends SIGHUP) lasts
     * until the new registry serves; --watch's rescans are the host's own. */
    bool hup = strcmp(why, "SIGHUP") == 0;
    if (hup)
        th_notify_reloading();
    if (r->auth && hup)
        reread_jwks(r->auth);
    if (hup)
        th_audit_reopen(); /* logrotate moved it: new lines go to a new file */
    if (hup && r->opts)
        th_host_reload_limits(r->opts); /* a bad file leaves the limits in force */
    th_log(TH_LOG_INFO, "reload: rescanning the plugin directories (%s)", why);
    th_registry *old = th_mcp_registry(r->mcp), *reg = NULL;
    th_supervisor *sup = r->sup; /* OLD's: unchanged plugins' workers carry over */
    th_load_stats stats;
    th_host_start(r->start, old, ++r->generation, &sup, &stats, &reg);
    th_registry_unref(old);
    if (reg) {
        r->sup = sup;
        th_host_tool_scopes_ok(reg, r->tool_scopes, r->ntool_scopes, TH_LOG_WARNING);
        th_mcp_swap_registry(r->mcp, reg);
        th_registry_unref(reg);
        if (th_metrics_enabled)
            th_metrics_set_refused(th_load_stats_refusals(&stats));
    }
    if (hup)
        th_notify_ready(); /* a failed rescan leaves the registry that served */
}

bool th_reloader_start(th_reloader *r, bool inotify)
{
    th_err err;
    th_watch_opts wopts = {.dirs = r->start->dirs, .ndirs = r->start->ndirs, .inotify = inotify,
                           .hup_fd = th_signals_hup_fd(), .settle_ms = 200, .rescan = rescan, .ctx = r};
    th_err_clear(&err);
    if (!(r->watch = th_watch_start(&wopts, &err))) {
        th_log(TH_LOG_CRITICAL, "%s", err.msg);
        return false;
    }
    return true;
}

void th_reloader_stop(th_reloader *r)
{
    th_watch_stop(r->watch);
    r->watch = NULL;
}
