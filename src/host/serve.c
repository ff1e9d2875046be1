/* SPDX-License-Identifier: MIT */
/*
** host/serve.c: a serving host from set-up to stop: descriptors and
** signals, the first load, the HTTP transport and its authorization, the
** reload thread, serving stdio or waiting for a stop signal, and the
** ordered teardown.
*/
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/audit.h"
#include "base/health.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/signals.h"
#include "base/util.h"
#include "call/crashnote.h"
#include "host/notify.h"
#include "host/serve.h"
#include "plugin/qualname.h"
#include "plugin/cache.h"
#include "transport/unixsock.h"
#include "worker/ipc.h"
#include "worker/spawn.h"

/*
** What process exit, not the host, ends: in-host plugins' tools (no plugin
** destroy callback runs at exit, so one that crashes cannot turn a clean
** shutdown into a crash), and what th_mcp_free left because calls still
** ran. Kept reachable so a leak checker does not fail the exit for them;
** volatile, as a store never read would be optimised away.
*/
static struct {
    th_registry *served;
    th_mcp *mcp;
} volatile left_at_exit;

static bool serves_stdio(const th_host_opts *o)
{
    return !o->http_on || o->stdio_on;
}

bool th_host_policy_ok(const th_host_opts *o)
{
    if (!o->http_on || o->auth_file || o->jwks_file || o->allow_unauth)
        return true;
    /* Without authorization an HTTP tool host runs code for anyone who
     * reaches the port: only loopback may go without it unless asked. */
    const char *a = o->http.addr;
    if (o->http.use_listen_fd ? o->passed_loopback : !a || strncmp(a, "127.", 4) == 0 || strcmp(a, "::1") == 0)
        return true;
    th_log(TH_LOG_CRITICAL, "--http: %s is not a loopback address: give --auth-token-file or --auth-jwks-file, "
           "or --allow-unauthenticated to serve anyone who can reach it",
           a ? a : "the socket passed by the service manager");
    return false;
}

/* The options a build of the registry needs, at start-up and on reloads. */
static bool start_opts(th_host *h)
{
    th_host_opts *o = h->opts;
    if (o->use_cache && !(h->cache_path = o->cache_file ? strdup(o->cache_file)
                                                      : th_cache_default_path_named(
                                                            o->dirs, (const char *const *)o->boxes, o->ndirs,
                                                            o->qualified))) {
        if (errno == ENOMEM)
            return false;
        /* Started with neither $XDG_CACHE_HOME nor $HOME (env -i, or an
         * MCP client that passes no environment): scan every start, as
         * --no-registry-cache does, rather than refuse to serve. */
        th_log(TH_LOG_INFO, "no registry cache: %s",
               errno == ENOENT ? "neither $XDG_CACHE_HOME nor $HOME is set" : strerror(errno));
    }
    th_start_opts_from(o, h->naming, h->cache_path, &h->start);
    /* A stdio client that leaves while a plugin loads ends the host then,
     * as its end of input would once serving: not after --load-timeout. */
    h->start.scan.client_in = serves_stdio(o) ? h->fds.in : 0;
    return true;
}

static bool fix_toolboxes(th_host *h)
{
    th_host_opts *o = h->opts;
    th_err err;
    if (!(h->naming = th_naming_new(o->qualified))) {
        fprintf(stderr, "toolhost: out of memory\n");
        return false;
    }
    for (size_t i = 0; i < o->ndirs; i++) {
        if (th_naming_add(h->naming, o->boxes[i], o->dirs[i], &err) != TH_OK) {
            fprintf(stderr, "toolhost: --plugin-dir %s: %s\n", o->dirs[i], err.msg);
            return false;
        }
    }
    return true;
}

/* Once, not per worker: what the sandbox cannot hold here. */
static bool sandbox_notice(const th_host_opts *o)
{
    th_err err;
    if (!o->isolate) {
        th_log(TH_LOG_NOTICE, "--isolation=none: plugins run inside the host, unsandboxed, with all of its rights");
        return true;
    }
    if (th_sandbox_check_kernel(&o->sup.sandbox, &err) != TH_OK) {
        th_log(TH_LOG_CRITICAL, "%s; exiting", err.msg);
        return false;
    }
    return true;
}

/* Someone at a terminal sees nothing happen: say what the host expects. */
static void greet_terminal(const th_host *h)
{
    if (serves_stdio(h->opts) && isatty(h->fds.in))
        th_log(TH_LOG_NOTICE, "stdin is a terminal: toolhost speaks MCP (JSON-RPC, one message a line) on stdin "
               "and stdout, for an MCP client to start; see 'toolhost --help', or 'toolhost inspect' to list the "
               "tools; Ctrl-D ends");
}

/* --metrics ADDR listens before the plugins load, so /readyz says 503
 * while they do. */
static bool start_observe(th_host *h)
{
    th_host_opts *o = h->opts;
    char err[256];
    if (!o->metrics_own)
        return true;
    if (!(h->observe = th_observe_start(o->metrics_addr, o->metrics_port, err, sizeof err))) {
        fprintf(stderr, "toolhost: --metrics: %s\n", err);
        return false;
    }
    th_log(TH_LOG_INFO, "metrics on http://%s%s%s:%u/metrics", strchr(o->metrics_addr, ':') ? "[" : "",
           o->metrics_addr[0] ? o->metrics_addr : "127.0.0.1", strchr(o->metrics_addr, ':') ? "]" : "",
           th_observe_port(h->observe));
    return true;
}

/* --audit-log: a file that cannot be opened is fatal at start-up, before
 * a call could go unrecorded. */
static bool open_audit(const th_host_opts *o)
{
    th_err err;
    if (!o->audit_file || th_audit_open(o->audit_file, &err) == TH_OK)
        return true;
    fprintf(stderr, "toolhost: %s\n", err.msg);
    return false;
}

/* The exporter, and with it th_trace_enabled, before any thread that
 * could record a span. */
static bool start_otlp(th_host *h)
{
    char err[1100];
    const char *url = h->opts->otlp_endpoint;
    if (!url)
        return true;
    if (!(h->otlp = th_otlp_start(url, PACKAGE_VERSION, err, sizeof err))) {
        fprintf(stderr, "toolhost: --otlp-endpoint: %s\n", err);
        return false;
    }
    th_log(TH_LOG_INFO, "exporting spans to %s", url);
    return true;
}

bool th_host_setup(th_host *h, th_host_opts *o)
{
    /* Before any thread that could record. */
    th_metrics_enabled = o->metrics_on;
    *h = (th_host){.opts = o, .fds = {.in = -1, .out = -1}, .stop_fd = -1};
    if (!start_otlp(h))
        return false;
    if (!fix_toolboxes(h))
        return false;
    /* Before any plugin code runs: the protocol gets private duplicates of
     * stdin and stdout. Stop signals are handled (not blocked: a mask would
     * be inherited by every thread and child); during loading they end the
     * process. */
    if (!th_stdfds_claim(&h->fds))
        return false;
    if (!th_spawn_init()) {
        fprintf(stderr, "toolhost: cannot find the host's own executable: %s\n", strerror(errno));
        return false;
    }
    if (!th_spawn_pass_env(o->pass_env, o->npass_env)) {
        fprintf(stderr, "toolhost: --pass-env: out of memory\n");
        return false;
    }
    if ((h->stop_fd = th_signals_init()) < 0 || !th_crashnote_init()) {
        fprintf(stderr, "toolhost: cannot set up signal handling: %s\n", strerror(errno));
        return false;
    }
    /* With no plugin code in this process, nothing replaces the SIGPIPE
     * handler just installed: frames to a worker that is gone fail with
     * EPIPE without blocking the signal around each write. */
    if (o->isolate)
        th_ipc_guard_sigpipe(false);
    if (!th_stdfds_remember(&h->fds, h->stop_fd))
        return false;
    if (!start_opts(h)) {
        fprintf(stderr, "toolhost: out of memory\n");
        return false;
    }
    if (!sandbox_notice(o) || !start_observe(h) || !open_audit(o))
        return false;
    greet_terminal(h);
    return true;
}

int th_host_load(th_host *h)
{
    th_load_stats stats;
    th_rc rc = th_host_start(&h->start, NULL, 0, &h->reload.sup, &stats, &h->reg);
    if (rc != TH_OK)
        return rc == TH_ERR_CANCELLED ? 0 : 1;
    size_t refusals = th_load_stats_refusals(&stats);
    if (th_metrics_enabled)
        th_metrics_set_refused(refusals);
    if (h->opts->strict && refusals > 0) {
        th_log(TH_LOG_ERROR, "--strict: %zu refusal%s; exiting", refusals, refusals == 1 ? "" : "s");
        return 1;
    }
    /* Plugin code may have closed our descriptors or changed dispositions. */
    if (!th_stdfds_intact(&h->fds))
        return 1;
    if (!th_signals_serve() || !th_crashnote_init()) {
        th_log(TH_LOG_CRITICAL, "cannot set up signal handling: %s", strerror(errno));
        return 1;
    }
    /* The registry is the protocol's from now on, so a reload that replaces
     * it lets it (and its plugin code, or its supervisor) go with its last
     * call. */
    h->mcp = th_mcp_new(h->reg, &h->opts->cfg);
    th_registry_unref(h->reg);
    h->reg = NULL;
    if (!h->mcp) {
        th_log(TH_LOG_CRITICAL, "out of memory");
        return 1;
    }
    return -1;
}

/* --auth-jwks-file: the audience is --http-resource-url, never one derived
 * from Host (a client picks Host, so it would pick the audience too), and
 * the issuer must be named. The scopes asked for go in the metadata. */
static bool add_jwks(th_auth **auth, const char *path, const th_http_opts *o)
{
    char err[256];
    if (!o->resource_url || !o->auth_issuer) {
        th_log(TH_LOG_CRITICAL, "--auth-jwks-file needs --http-resource-url (the audience) and --auth-issuer");
        return false;
    }
    if (!th_auth_add_jwks(auth, path, o->auth_issuer, o->resource_url, err, sizeof err)) {
        th_log(TH_LOG_CRITICAL, "--auth-jwks-file: %s", err);
        return false;
    }
    bool ok = !o->auth_scope || th_auth_note_scopes(*auth, o->auth_scope);
    for (size_t i = 0; ok && i < o->ntool_scopes; i++)
        ok = th_auth_note_scopes(*auth, strchr(o->tool_scopes[i], '=') + 1);
    for (size_t i = 0; ok && i < o->ncaller_tools; i++) {
        char *scope = strndup(o->caller_tools[i], strcspn(o->caller_tools[i], "="));
        ok = scope && th_auth_note_scopes(*auth, scope);
        free(scope);
    }
    if (!ok)
        th_log(TH_LOG_CRITICAL, "--auth-jwks-file: out of memory");
    return ok;
}

/* --http unix:PATH: create the socket (transport/unixsock.h) and serve on
 * it as on a passed one; remember which file it is, for the unlink at stop. */
static bool bind_unix(th_host *h, th_http_opts *hopts)
{
    char err[2304];
    struct stat st;
    int fd = th_unixsock_listen(h->opts->http_unix, h->opts->socket_mode, err, sizeof err);
    if (fd < 0) {
        th_log(TH_LOG_CRITICAL, "--http: %s", err);
        return false;
    }
    if (stat(h->opts->http_unix, &st) == 0) {
        h->unix_bound = true;
        h->unix_dev = st.st_dev;
        h->unix_ino = st.st_ino;
    }
    hopts->use_listen_fd = true;
    hopts->listen_fd = fd;
    return true;
}

/* At a clean stop the socket goes, unless another server has replaced it. */
static void unlink_unix(th_host *h)
{
    struct stat st;
    if (h->unix_bound && stat(h->opts->http_unix, &st) == 0 && st.st_dev == h->unix_dev &&
        st.st_ino == h->unix_ino && unlink(h->opts->http_unix) != 0)
        th_log(TH_LOG_WARNING, "cannot remove %s: %s", h->opts->http_unix, strerror(errno));
    h->unix_bound = false;
}

/* A scope on a name no tool has protects nothing while the tool stays open,
 * so at start-up it is refused. */
static bool start_http(th_host *h)
{
    th_host_opts *o = h->opts;
    char err[256];
    th_registry *served = th_mcp_registry(h->mcp);
    bool ok = th_host_tool_scopes_ok(served, o->tool_scopes, o->ntool_scopes, TH_LOG_CRITICAL);
    th_registry_unref(served);
    if (!ok)
        return false;
    if (o->auth_file && !(h->auth = th_auth_load(o->auth_file, err, sizeof err))) {
        th_log(TH_LOG_CRITICAL, "--auth-token-file: %s", err);
        return false;
    }
    if (o->jwks_file && !add_jwks(&h->auth, o->jwks_file, &o->http))
        return false;
    if (o->http.ncaller_tools && !h->auth && !o->http_unix) { /* without tokens or uids, no caller has scopes */
        th_log(TH_LOG_CRITICAL, "--auth-tools needs --auth-token-file or --auth-jwks-file (or --http unix:PATH, "
                              "whose peers carry uid:N)");
        return false;
    }
    if (o->grants_claim && !o->jwks_file) { /* only a JWT has claims */
        th_log(TH_LOG_CRITICAL, "--auth-tools-claim needs --auth-jwks-file");
        return false;
    }
    if (o->grants_claim && !th_auth_set_grants_claim(h->auth, o->grants_claim)) {
        th_log(TH_LOG_CRITICAL, "--auth-tools-claim: out of memory");
        return false;
    }
    th_http_opts hopts = o->http;
    if (o->http_unix && !bind_unix(h, &hopts))
        return false;
    hopts.max_body_bytes = o->stdio.max_message_bytes;
    hopts.auth = h->auth;
    hopts.metrics = o->metrics_on && !o->metrics_own;
    hopts.reg = served; /* only tested for NULL: http.c asks th_mcp_registry */
    if (!(h->http = th_http_start(h->mcp, &hopts, err, sizeof err))) {
        th_log(TH_LOG_CRITICAL, "--http: %s", err);
        return false;
    }
    return true;
}

static void announce_http(const th_host *h)
{
    const th_http_opts *o = &h->opts->http;
    const char *path = o->path ? o->path : "/mcp";
    if (h->opts->http_unix) {
        th_log(TH_LOG_INFO, "listening on unix:%s (endpoint %s)", h->opts->http_unix, path);
        return;
    }
    if (o->use_listen_fd) {
        th_log(TH_LOG_INFO, "listening on the socket passed by the service manager (port %u, endpoint %s)",
               th_http_port(h->http), path);
        return;
    }
    const char *addr = o->addr ? o->addr : "127.0.0.1";
    bool v6 = strchr(addr, ':') != NULL;
    th_log(TH_LOG_INFO, "listening on http://%s%s%s:%u%s", v6 ? "[" : "", addr, v6 ? "]" : "",
           th_http_port(h->http), path);
}

/* Serve HTTP only: wait for a stop signal, or (--idle-exit) for IDLE_MS
 * without a client. Idleness is looked at once a second: the limit is
 * meant in seconds, and a wake-up a second costs nothing. */
static void wait_stop(th_host *h, long long idle_ms)
{
    struct pollfd p = {.fd = h->stop_fd, .events = POLLIN};
    for (;;) {
        int n = poll(&p, 1, idle_ms ? 1000 : -1);
        if (n > 0 || (n < 0 && errno != EINTR))
            return;
        if (n == 0 && th_http_idle_ms(h->http) >= idle_ms) {
            th_log(TH_LOG_INFO, "no client for --idle-exit (%lld s): exiting", idle_ms / 1000);
            return;
        }
    }
}

/* The stdio client is one session while it is served. */
static int serve_stdio(th_host *h)
{
    if (th_metrics_enabled)
        th_metrics_sessions_add(1);
    int status = th_stdio_serve(h->mcp, h->fds.in, h->fds.out, h->stop_fd, &h->opts->stdio);
    if (th_metrics_enabled)
        th_metrics_sessions_add(-1);
    return status;
}

int th_host_serve(th_host *h)
{
    th_host_opts *o = h->opts;
    if (o->http_on && !start_http(h))
        return 1;
    /* Rescans (SIGHUP, and inotify with --watch) run on a thread of their
     * own, whichever transports serve. */
    h->reload.start = &h->start;
    h->reload.mcp = h->mcp;
    h->reload.auth = h->auth;
    h->reload.opts = o;
    h->reload.tool_scopes = o->tool_scopes;
    h->reload.ntool_scopes = o->ntool_scopes;
    if (!th_reloader_start(&h->reload, o->watch))
        return 1;
    /* Announced once --watch is armed too: a client that waits for this
     * line and subscribes sees every change made after it (a plugin
     * installed between the two went unnoticed under load). */
    if (h->http)
        announce_http(h);
    th_health_set_ready(true);
    th_notify_ready();
    if (serves_stdio(o))
        return serve_stdio(h);
    wait_stop(h, h->http ? o->idle_exit_ms : 0);
    return 0;
}

/* The protocol's end: calls get the grace period; what still runs after
 * it is left to process exit. */
static void stop_protocol(th_host *h)
{
    th_registry *served = h->mcp ? th_mcp_registry(h->mcp) : NULL;
    if (!th_mcp_free(h->mcp, th_now_ms() + 100)) {
        /* Threads still run plugin code: leave the registry and its handles
         * alone (seen under load in the ASan build: a cancelled call
         * outlived the 100 ms th_mcp_free gives). */
        left_at_exit.mcp = h->mcp;
        served = NULL;
    }
    h->mcp = NULL;
    /* The client sees EOF now, not after the teardown below, which may wait
     * (up to 5 s) for a worker's log pipe that a forked grandchild holds. */
    th_stdfds_close_out(&h->fds);
    if (h->opts->isolate)
        th_registry_unref(served); /* with its supervisor */
    else
        left_at_exit.served = served;
}

void th_host_stop(th_host *h)
{
    if (!h->opts)
        return; /* never set up */
    th_health_set_ready(false);
    th_notify_stopping();
    th_reloader_stop(&h->reload); /* a rescan under way finishes first */
    /* Requests in flight get the grace period, as stdio calls do; open
     * subscriptions are ended now, as they would never finish. */
    if (h->http)
        th_mcp_end_subscriptions(h->mcp);
    th_http_stop(h->http, th_now_ms() + h->opts->stdio.grace_ms);
    h->http = NULL;
    unlink_unix(h);
    th_auth_free(h->auth); /* after the server that reads it */
    h->auth = NULL;
    if (h->mcp) {
        th_supervisor_stop(h->reload.sup); /* calls still waiting on a worker end now */
        stop_protocol(h);
    }
    th_audit_close(); /* after the last call's line */
    th_registry_unref(h->reg); /* loaded but never served */
    h->reg = NULL;
    th_stdfds_close(&h->fds);
    th_naming_unref(h->naming);
    h->naming = NULL;
    free(h->cache_path);
    h->cache_path = NULL;
    th_otlp_stop(h->otlp); /* the spans of every request answered, sent */
    h->otlp = NULL;
    th_observe_stop(h->observe); /* last: /healthz answers until the end */
    h->observe = NULL;
}
