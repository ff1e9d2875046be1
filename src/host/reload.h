/* SPDX-License-Identifier: MIT */
/*
** host/reload.h: hot reload while serving: on SIGHUP, and with --watch on a
** change in a plugin directory, build the registry anew through the
** start-up path (host/start.h) and swap it in; SIGHUP re-reads the JWKS and
** the limits of --config too.
*/
#ifndef TH_HOST_RELOAD_H
#define TH_HOST_RELOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "base/log.h"
#include "host/options.h"
#include "host/start.h"
#include "plugin/reload.h"
#include "protocol/mcp.h"
#include "transport/auth.h"

typedef struct th_reloader {
    const th_start_opts *start; /* as at start-up (borrowed) */
    th_mcp *mcp;
    th_supervisor *sup;         /* the served registry's (process mode), or NULL */
    th_auth *auth;              /* its JWKS is re-read on SIGHUP, or NULL */
    th_host_opts *opts;         /* its limits are re-read from --config on SIGHUP */
    const char *const *tool_scopes; /* --auth-tool-scope, checked against each new registry */
    size_t ntool_scopes;
    unsigned long long generation; /* of in-host loads */
    th_watch *watch;
} th_reloader;

/*
** Start the thread that rescans on SIGHUP, and with INOTIFY (--watch) on
** changes in the start-up options' directories. False with a message
** logged (critical).
*/
bool th_reloader_start(th_reloader *r, bool inotify);

/* Stop it; a rescan under way finishes first. */
void th_reloader_stop(th_reloader *r);

/*
** Whether every --auth-tool-scope in SCOPES names a tool REG serves, by the
** name a client calls it (with --qualified-names, BOX__PLUGIN__TOOL). Each
** that does not is logged at LEVEL, naming the tool's qualified name when a
** plugin's own tool name was given.
*/
bool th_host_tool_scopes_ok(const th_registry *reg, const char *const *scopes, size_t n, th_log_level level);

#endif
