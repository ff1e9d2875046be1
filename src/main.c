/* SPDX-License-Identifier: MIT */
/*
** main.c: the toolhost command: options, protecting stdout, loading the
** plugins, then serving MCP over stdio until end of input or a signal.
*/
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "call/crashnote.h"
#include "cli/cli.h"
#include "host/options.h"
#include "plugin/lazy.h"
#include "plugin/loader.h"
#include "plugin/qualname.h"

#include "base/compat.h"
#include "base/fastjson.h"
#include "base/log.h"
#include "protocol/jsonrpc.h"
#include "protocol/mcp.h"
#include "protocol/mrtr.h"
#include "base/signals.h"
#include "transport/stdio.h"
#include "transport/activation.h"
#include "transport/auth.h"
#include "transport/http.h"
#include "base/util.h"
#include "plugin/reload.h"
#include "worker/ipc.h"
#include "worker/rebuild.h"
#include "worker/resproxy.h"
#include "worker/scanner.h"
#include "worker/spawn.h"
#include "worker/supervisor.h"
#include "worker/worker.h"

extern char **environ;

/* The protocol's descriptors, for close_protocol_in_child. */
static int protocol_fds[2] = {-1, -1};

/* A child that plugin code fork()s without exec keeps every descriptor
 * (O_CLOEXEC acts only on exec): close the protocol's, so the child can
 * neither write to the client's stdout pipe nor hold it open after the host
 * exits. Runs in the child, where only async-signal-safe calls are allowed. */
static void close_protocol_in_child(void)
{
    for (size_t i = 0; i < sizeof protocol_fds / sizeof protocol_fds[0]; i++)
        if (protocol_fds[i] >= 0)
            close(protocol_fds[i]);
}

/* In-host plugins' tools at exit: never destroyed (see the end of main). */
static th_registry *volatile registry_at_exit; /* volatile: a store never read would be optimised away */
static th_registry *volatile served_at_exit_keep; /* the registry served last */
/* What th_mcp_free left to process exit because calls still ran: reachable,
 * so a leak checker does not fail the exit for it (seen under load in the
 * ASan build: a cancelled call outlived the 100 ms th_mcp_free gives). */
static th_mcp *volatile mcp_abandoned;
static th_registry *volatile registry_abandoned;
static th_supervisor *volatile supervisor_abandoned;

/*
** Keep the real stdout for the protocol and point fd 1 at stderr, so that a
** plugin's printf() lands in the log instead of corrupting the stream.
*/
static int claim_stdout(void)
{
    int fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    if (fd < 0)
        return -1;
    fflush(stdout);
    if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/*
** The same for stdin: the protocol reads a close-on-exec duplicate, and fd 0
** becomes /dev/null, so neither a plugin nor a child it starts can read
** (and eat) protocol messages. A closed fd 0 counts as empty input.
*/
static int claim_stdin(void)
{
    /* With fd 0 closed this opens at 0, and the input is empty, as with
     * </dev/null: the host ends at once instead of reading whatever a
     * later open() puts at fd 0. */
    int nul = open("/dev/null", O_RDONLY);
    if (nul < 0)
        return -1;
    int fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
    if (fd < 0 || (nul != STDIN_FILENO && dup2(nul, STDIN_FILENO) < 0)) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        if (nul != STDIN_FILENO)
            close(nul);
        errno = e;
        return -1;
    }
    if (nul != STDIN_FILENO)
        close(nul);
    return fd;
}

/* A descriptor's identity, to notice a plugin closing it (and maybe opening
 * something else at the same number). */
typedef struct fd_id {
    int fd;
    dev_t dev;
    ino_t ino;
} fd_id;

static bool fd_id_take(fd_id *id, int fd)
{
    struct stat st;
    id->fd = fd;
    if (fstat(fd, &st) != 0)
        return false;
    id->dev = st.st_dev;
    id->ino = st.st_ino;
    return true;
}

static bool fd_id_same(const fd_id *id)
{
    struct stat st;
    return fstat(id->fd, &st) == 0 && st.st_dev == id->dev && st.st_ino == id->ino;
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
    if (!ok)
        th_log(TH_LOG_CRITICAL, "--auth-jwks-file: out of memory");
    return ok;
}

/*
** Whether every --auth-tool-scope names a tool REG serves, by the name a
** client calls it (with --qualified-names, BOX__PLUGIN__TOOL). A scope on
** a name no tool has protects nothing while the tool stays open, so at
** start-up (LEVEL critical) it is refused; after a reload removed the tool
** (LEVEL warning) the scope stays, for the tool may come back.
*/
static bool tool_scopes_name_tools(const th_registry *reg, const char *const *scopes, size_t n, th_log_level level)
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

/* Serve HTTP only: wait for a stop signal. */
static void wait_stop(int stop_fd)
{
    struct pollfd p = {.fd = stop_fd, .events = POLLIN};
    while (poll(&p, 1, -1) < 0 && errno == EINTR)
        ;
}

/* Hot reload: what a rescan needs, the generation of in-host loads, and
 * the served registry's supervisor (process mode). */
typedef struct reloader {
    th_rebuild_opts opts;
    th_mcp *mcp;
    unsigned long long generation;
    th_supervisor *sup;
    th_auth *auth; /* its JWKS is re-read on SIGHUP (key rotation), or NULL */
    const char *const *tool_scopes; /* --auth-tool-scope, checked against each new registry */
    size_t ntool_scopes;
} reloader;

/* A registry's release hook: its supervisor goes after its proxy tools. */
static void release_supervisor(void *sup)
{
    th_supervisor_free(sup);
}

/* th_rescan_fn, on the watch thread: build the registry the directories
 * hold now and swap it in (clients are told when the tools differ). */
static void rescan(void *ctx, const char *why)
{
    reloader *r = ctx;
    if (r->auth && strcmp(why, "SIGHUP") == 0) {
        char err[512];
        if (th_auth_reload_jwks(r->auth, err, sizeof err))
            th_log(TH_LOG_INFO, "reload: --auth-jwks-file re-read");
        else
            th_log(TH_LOG_ERROR, "reload: --auth-jwks-file: %s; the keys loaded before stay in use", err);
    }
    th_log(TH_LOG_INFO, "reload: rescanning the plugin directories (%s)", why);
    th_registry *old = th_mcp_registry(r->mcp);
    th_supervisor *sup = r->sup; /* OLD's: unchanged plugins' workers carry over */
    th_registry *reg = th_rebuild(&r->opts, old, ++r->generation, &sup);
    th_registry_unref(old);
    if (reg) {
        r->sup = sup;
        tool_scopes_name_tools(reg, r->tool_scopes, r->ntool_scopes, TH_LOG_WARNING);
        th_mcp_swap_registry(r->mcp, reg);
        th_registry_unref(reg);
    }
}

/* th_worker_parse_fn: a worker reads a call's arguments as the protocol
 * would: plain ones the way th_rpc_parse's own quick path builds them,
 * others inside a notification th_rpc_parse reads whole. */
static json_object *parse_call(const char *text, size_t len)
{
    json_object *args = th_fastjson_parse(text, len);
    if (args)
        return args;
    static const char head[] = "{\"jsonrpc\":\"2.0\",\"method\":\"call\",\"params\":{\"a\":";
    size_t n = sizeof head - 1 + len + 2;
    char *msg = len < SIZE_MAX - sizeof head - 2 ? malloc(n) : NULL;
    if (!msg)
        return NULL;
    memcpy(msg, head, sizeof head - 1);
    memcpy(msg + sizeof head - 1, text, len);
    memcpy(msg + n - 2, "}}", 2);
    th_rpc_msg m;
    th_rpc_parse(msg, n, &m);
    free(msg);
    json_object *a = NULL;
    if (m.kind == TH_RPC_NOTIFICATION && m.params && json_object_object_get_ex(m.params, "a", &a))
        json_object_get(a);
    th_rpc_msg_clear(&m);
    return a;
}

int main(int argc, char **argv)
{
    th_host_opts o;
    int status = 1, proto_in = -1, proto_fd = -1, stop_fd = -1;
    th_registry *reg = NULL;
    th_mcp *mcp = NULL;
    th_supervisor *sup = NULL;
    char **paths = NULL;
    size_t npaths = 0;
    th_scanned *scanned = NULL;
    th_lazy_set *lazy = NULL;
    char *cache_path = NULL;
    th_cache *cache = NULL;
    th_watch *watcher = NULL;
    reloader reload = {0};
    th_registry *served_at_exit = NULL;
    th_http *http = NULL;
    th_auth *auth = NULL;
    th_naming *naming = NULL;
    th_err name_err;

    /* OpenSSL is initialized (without its exit handler) where libcrypto is
     * opened, on first use: base/crypto.c. */

    th_compat_set_argv0(argv[0]); /* where there is no /proc/self/exe */
    /* A worker or scanner child: the same executable in another role,
     * before anything of the host's start-up. */
    if (argc > 1 && strcmp(argv[1], TH_WORKER_ARG) == 0)
        return th_worker_main(argc, argv, parse_call);
    /* The subcommands for plugin authors (src/cli/). */
    if (argc > 1 && strcmp(argv[1], "inspect") == 0)
        return th_cli_inspect(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "call") == 0)
        return th_cli_call(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "new-plugin") == 0)
        return th_cli_new_plugin(argc - 1, argv + 1);

    th_host_parse_rc prc = th_host_parse(argc, argv, &o);
    if (prc != TH_HOST_RUN) {
        th_host_opts_clear(&o);
        return prc;
    }
    const char **dirs = o.dirs;
    size_t ndirs = o.ndirs;
    char **boxes = o.boxes;
    bool strict = o.strict, isolate = o.isolate, use_cache = o.use_cache, lazy_load = o.lazy_load;
    bool watch = o.watch, qualified = o.qualified, http_on = o.http_on, stdio_on = o.stdio_on;
    bool allow_unauth = o.allow_unauth, passed_loopback = o.passed_loopback;
    th_load_opts load_opts = o.load;
    th_mcp_config cfg = o.cfg;
    th_stdio_opts sopts = o.stdio;
    th_scan_opts scan_opts = o.scan;
    th_supervisor_opts sup_opts = o.sup;
    th_http_opts hopts = o.http;
    const char *cache_opt = o.cache_file, *auth_file = o.auth_file, *jwks_file = o.jwks_file;
    const char *const *tool_scopes = o.tool_scopes;
    size_t ntool_scopes = o.ntool_scopes;
    th_config *settings = o.settings;

    /* Toolboxes are fixed before any plugin runs, like the paths. */
    if (!(naming = th_naming_new(qualified))) {
        fprintf(stderr, "toolhost: out of memory\n");
        goto cleanup;
    }
    for (size_t i = 0; i < ndirs; i++) {
        if (th_naming_add(naming, boxes[i], dirs[i], &name_err) != TH_OK) {
            fprintf(stderr, "toolhost: --plugin-dir %s: %s\n", dirs[i], name_err.msg);
            goto cleanup;
        }
    }

    /* Before any plugin code runs: the protocol gets private duplicates of
     * stdin and stdout (fd 0 becomes /dev/null, fd 1 stderr, line-buffered
     * so stray printf lines appear when written, in order with the log).
     * Stop signals are handled (not blocked: a mask would be inherited by
     * every thread and child); during loading they end the process. */
    fd_id proto_ids[3];
    if ((proto_in = claim_stdin()) < 0 || (proto_fd = claim_stdout()) < 0) {
        fprintf(stderr, "toolhost: cannot set up stdin and stdout: %s\n", strerror(errno));
        goto cleanup;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    protocol_fds[0] = proto_in;
    protocol_fds[1] = proto_fd;
    if (pthread_atfork(NULL, NULL, close_protocol_in_child) != 0) {
        fprintf(stderr, "toolhost: cannot set up stdin and stdout: pthread_atfork failed\n");
        goto cleanup;
    }
    if (!th_spawn_init()) {
        fprintf(stderr, "toolhost: cannot find the host's own executable: %s\n", strerror(errno));
        goto cleanup;
    }
    if ((stop_fd = th_signals_init()) < 0 || !th_crashnote_init()) {
        fprintf(stderr, "toolhost: cannot set up signal handling: %s\n", strerror(errno));
        goto cleanup;
    }
    /* With no plugin code in this process, nothing replaces the SIGPIPE
     * handler just installed: frames to a worker that is gone fail with
     * EPIPE without blocking the signal around each write. */
    if (isolate)
        th_ipc_guard_sigpipe(false);
    if (!fd_id_take(&proto_ids[0], proto_in) || !fd_id_take(&proto_ids[1], proto_fd) ||
        !fd_id_take(&proto_ids[2], stop_fd)) {
        fprintf(stderr, "toolhost: cannot set up stdin and stdout: %s\n", strerror(errno));
        goto cleanup;
    }

    reg = th_registry_new();
    if (!reg || th_registry_set_naming(reg, naming) != TH_OK) {
        fprintf(stderr, "toolhost: out of memory\n");
        goto cleanup;
    }
    th_load_stats stats = {0};
    th_rc load_rc = th_loader_list_dirs(dirs, ndirs, &load_opts, &stats, &paths, &npaths);
    /* An unreadable default directory was only a warning; anything else
     * (a named directory, out of memory) left the plugins unloaded. */
    if (load_rc != TH_OK && (load_opts.dirs_required || load_rc != TH_ERR_IO)) {
        th_log(TH_LOG_ERROR, "cannot load the plugin directories (see above); exiting");
        goto cleanup;
    }
    /* The environment's settings, for the plugins found (TOOLHOST_NAME_KEY). */
    th_config_load_env(settings, paths, npaths, environ);
    load_opts.config = settings;
    /* Every plugin is first opened by a scanner process, so a constructor
     * or register function that crashes, exits or hangs costs only that
     * plugin. In process mode no plugin code ever runs in the host. */
    scan_opts.load = load_opts;
    /* Lazily, the trust rule is applied now to cached plugins too: a tool
     * is listed only when its plugin may be opened. */
    scan_opts.host_loads = !isolate && !lazy_load;
    /* An unchanged plugin's scan comes from the registry cache instead. */
    if (use_cache && (cache_path = cache_opt ? strdup(cache_opt) : th_cache_default_path_named(dirs, (const char *const *)boxes, ndirs, qualified)))
        cache = th_cache_open(cache_path, &load_opts);
    /* A stdio client that leaves while a plugin loads ends the host then,
     * as its end of input would once serving: not after --load-timeout. */
    if (!http_on || stdio_on)
        scan_opts.client_in = proto_in;
    scanned = calloc(npaths + 1, sizeof *scanned);
    th_rc scan_rc = scanned ? th_scan_plugins_cached(paths, npaths, &scan_opts, cache, scanned, &stats) : TH_ERR_NOMEM;
    if (scan_rc == TH_ERR_CANCELLED) {
        status = 0;
        goto cleanup;
    }
    if (scan_rc != TH_OK) {
        th_log(TH_LOG_ERROR, "cannot scan the plugins (see above); exiting");
        goto cleanup;
    }
    th_err cache_err;
    if (th_cache_save(cache, &cache_err) != TH_OK)
        th_log(TH_LOG_WARNING, "%s; the next start scans again", cache_err.msg);
    if (isolate) {
        sup_opts.load = load_opts;
        sup_opts.max_result_bytes = cfg.max_result_bytes;
        sup_opts.threads = cfg.max_threads;
        sup_opts.start_timeout_ms = scan_opts.load_timeout_ms ? scan_opts.load_timeout_ms : 86400000;
        sup_opts.busy_poll_us = sopts.busy_poll_us;
        if (!(sup = th_supervisor_new(paths, npaths, &sup_opts))) {
            th_log(TH_LOG_CRITICAL, "out of memory");
            goto cleanup;
        }
        th_supervisor_register(sup, reg, scanned, &stats);
    } else if (lazy_load) {
        /* No plugin code runs at start: each plugin opens at its first call. */
        if (!(lazy = th_lazy_set_new(paths, npaths, &load_opts))) {
            th_log(TH_LOG_CRITICAL, "out of memory");
            goto cleanup;
        }
        load_opts.scanned = true;
        for (size_t i = 0; i < npaths; i++) {
            if (!scanned[i].accepted)
                continue;
            /* A plugin serving resources is opened now: listing them needs
             * nothing, but a lazy read function would need its own proxy. */
            bool has_resources = false;
            for (size_t k = 0; scanned[i].tools && k < json_object_array_length(scanned[i].tools); k++)
                has_resources |= th_resproxy_is_resource(json_object_array_get_idx(scanned[i].tools, k), NULL);
            if (has_resources) {
                th_load_opts one = load_opts; /* only the bytes its tools were listed from */
                one.expect_digest = scanned[i].digest[0] ? scanned[i].digest : NULL;
                th_signals_loading(paths[i]);
                th_loader_load_listed(reg, paths, npaths, i, &one, &stats);
                th_signals_loading(NULL);
                continue;
            }
            th_lazy_expect(lazy, i, scanned[i].digest);
            th_lazy_register(lazy, reg, i, scanned[i].tools, &stats);
            stats.tools_refused += scanned[i].tools_refused; /* by the scan, already logged */
        }
    } else {
        load_opts.scanned = true; /* the scan logged the tools it refused */
        for (size_t i = 0; i < npaths; i++) {
            if (!scanned[i].accepted)
                continue;
            th_signals_loading(paths[i]); /* a stop signal names it from now on */
            th_load_opts one = load_opts; /* only the bytes its tools were listed from */
            one.expect_digest = scanned[i].digest[0] ? scanned[i].digest : NULL;
            th_loader_load_listed(reg, paths, npaths, i, &one, &stats);
            th_signals_loading(NULL);
        }
    }
    th_log(TH_LOG_INFO,
           "loaded %zu tool%s from %zu plugin%s; %zu plugin%s refused, %zu tool%s refused, %zu director%s refused",
           stats.tools_loaded, stats.tools_loaded == 1 ? "" : "s", stats.plugins_loaded,
           stats.plugins_loaded == 1 ? "" : "s", stats.plugins_refused, stats.plugins_refused == 1 ? "" : "s",
           stats.tools_refused, stats.tools_refused == 1 ? "" : "s", stats.dirs_refused,
           stats.dirs_refused == 1 ? "y" : "ies");
    if (strict && th_load_stats_refusals(&stats) > 0) {
        th_log(TH_LOG_ERROR, "--strict: %zu refusal%s; exiting", th_load_stats_refusals(&stats),
               th_load_stats_refusals(&stats) == 1 ? "" : "s");
        goto cleanup;
    }
    th_registry_start(reg);

    /* Plugin code may have closed our descriptors or changed dispositions. */
    for (size_t i = 0; i < sizeof proto_ids / sizeof proto_ids[0]; i++) {
        if (!fd_id_same(&proto_ids[i])) {
            th_log(TH_LOG_CRITICAL, "a plugin closed or replaced descriptor %d, which the host needs; exiting",
                   proto_ids[i].fd);
            goto cleanup;
        }
    }
    if (!th_signals_serve() || !th_crashnote_init()) {
        th_log(TH_LOG_CRITICAL, "cannot set up signal handling: %s", strerror(errno));
        goto cleanup;
    }

    mcp = th_mcp_new(reg, &cfg);
    if (!mcp) {
        th_log(TH_LOG_CRITICAL, "out of memory");
        goto cleanup;
    }
    hopts.reg = reg; /* only tested for NULL: http.c asks th_mcp_registry */
    /* The registry is the mcp's from now on, so a reload that replaces it
     * lets it (and its plugin code) go with its last call; in process mode
     * it owns its supervisor, whose workers go with it. reload.sup is the
     * served registry's, stopped at shutdown. */
    if (!sup || th_registry_on_release(reg, release_supervisor, sup) == TH_OK) {
        reload.sup = sup;
        sup = NULL;
        th_registry_unref(reg);
        reg = NULL;
    }
    if (http_on) {
        char err[256];
        hopts.max_body_bytes = sopts.max_message_bytes;
        /* Without authorization an HTTP tool host runs code for anyone who
         * reaches the port: only loopback may go without it unless asked. */
        const char *a = hopts.addr;
        bool loopback = hopts.use_listen_fd ? passed_loopback
                                            : !a || strncmp(a, "127.", 4) == 0 || strcmp(a, "::1") == 0;
        th_registry *served = th_mcp_registry(mcp);
        bool scopes_ok = tool_scopes_name_tools(served, tool_scopes, ntool_scopes, TH_LOG_CRITICAL);
        th_registry_unref(served);
        if (!scopes_ok) {
            status = 1;
        } else if (auth_file && !(auth = th_auth_load(auth_file, err, sizeof err))) {
            th_log(TH_LOG_CRITICAL, "--auth-token-file: %s", err);
            status = 1;
        } else if (jwks_file && !add_jwks(&auth, jwks_file, &hopts)) {
            status = 1;
        } else if (!auth && !loopback && !allow_unauth) {
            th_log(TH_LOG_CRITICAL, "--http: %s is not a loopback address: give --auth-token-file or --auth-jwks-file, "
                   "or --allow-unauthenticated to serve anyone who can reach it", a);
            status = 1;
        } else if (hopts.auth = auth, !(http = th_http_start(mcp, &hopts, err, sizeof err))) {
            th_log(TH_LOG_CRITICAL, "--http: %s", err);
            status = 1;
        }
    }
    /* Rescans (SIGHUP, and inotify with --watch) run on a thread of their
     * own, whichever transports serve. */
    reload.opts = (th_rebuild_opts){.dirs = (const char *const *)dirs, .ndirs = ndirs, .load = load_opts,
                                    .scan = scan_opts, .isolate = isolate, .sup = sup_opts,
                                    .cache_path = use_cache ? cache_path : NULL, .naming = naming};
    reload.opts.load.scanned = false;
    reload.mcp = mcp;
    reload.auth = auth;
    reload.tool_scopes = tool_scopes;
    reload.ntool_scopes = ntool_scopes;
    if (!http_on || http) {
        th_err werr;
        th_watch_opts wopts = {.dirs = (const char *const *)dirs, .ndirs = ndirs, .inotify = watch,
                               .hup_fd = th_signals_hup_fd(), .settle_ms = 200, .rescan = rescan, .ctx = &reload};
        th_err_clear(&werr);
        if (!(watcher = th_watch_start(&wopts, &werr))) {
            th_log(TH_LOG_CRITICAL, "%s", werr.msg);
            status = 1;
            goto stop;
        }
    }
    /* Announced once --watch is armed too: a client that waits for this
     * line and subscribes sees every change made after it (a plugin
     * installed between the two went unnoticed under load). */
    if (http && hopts.use_listen_fd) {
        th_log(TH_LOG_INFO, "listening on the socket passed by the service manager (port %u, endpoint %s)",
               th_http_port(http), hopts.path ? hopts.path : "/mcp");
    } else if (http) {
        th_log(TH_LOG_INFO, "listening on http://%s%s%s:%u%s", strchr(hopts.addr ? hopts.addr : "", ':') ? "[" : "",
               hopts.addr ? hopts.addr : "127.0.0.1", strchr(hopts.addr ? hopts.addr : "", ':') ? "]" : "",
               th_http_port(http), hopts.path ? hopts.path : "/mcp");
    }
    /* stdio is the default; with --http it runs only when asked for. */
    if (http_on && !http) {
        /* could not listen: status is 1 */
    } else if (!http_on || stdio_on) {
        status = th_stdio_serve(mcp, proto_in, proto_fd, stop_fd, &sopts);
    } else {
        wait_stop(stop_fd);
        status = 0;
    }
stop:
    th_watch_stop(watcher); /* a rescan under way finishes first */
    /* Requests in flight get the grace period, as stdio calls do; open
     * subscriptions are ended now, as they would never finish. */
    if (http)
        th_mcp_end_subscriptions(mcp);
    th_http_stop(http, th_now_ms() + sopts.grace_ms);
    th_auth_free(auth); /* after the server that reads it */
    th_supervisor_stop(sup); /* calls still waiting on a worker end now */
    th_supervisor_stop(reload.sup);
    /* Kept past th_mcp_free: its teardown (workers) waits until after EOF. */
    served_at_exit = mcp ? th_mcp_registry(mcp) : NULL;
    if (!th_mcp_free(mcp, th_now_ms() + 100)) {
        /* Threads still run plugin code: leave the registry and its handles
         * alone and let process exit end them. */
        mcp_abandoned = mcp;
        registry_abandoned = reg;
        supervisor_abandoned = sup;
        reg = NULL;
        sup = NULL;
        served_at_exit = NULL;
    }
    mcp = NULL;
    /* The client sees EOF now, not after the teardown below, which may wait
     * (up to 5 s) for a worker's log pipe that a forked grandchild holds. */
    close(proto_fd);
    proto_fd = -1;
    /* The last response is written: like a worker, the host calls no plugin
     * destroy callbacks at exit, so one that crashes cannot turn a clean
     * shutdown into a crash. Kept reachable for the leak checkers. */
    if (!isolate) {
        registry_at_exit = reg;
        reg = NULL;
        served_at_exit_keep = served_at_exit;
        served_at_exit = NULL;
    }

cleanup:
    th_registry_unref(reg);
    th_registry_unref(served_at_exit); /* with its supervisor (process mode) */
    th_supervisor_free(sup); /* after the registry: its tools point into it */
    th_lazy_set_unref(lazy); /* the tools hold their own references */
    th_scan_free(scanned, npaths);
    free(scanned);
    th_cache_free(cache);
    free(cache_path);
    th_loader_paths_free(paths, npaths);
    if (proto_in >= 0)
        close(proto_in);
    if (proto_fd >= 0)
        close(proto_fd);
    th_naming_unref(naming);
    th_host_opts_clear(&o);
    return status;
}
