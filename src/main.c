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

#ifndef TH_PLUGINDIR
#define TH_PLUGINDIR "/usr/local/lib/toolhost/plugins"
#endif

static const char usage_text[] =
    "Usage: toolhost [OPTION]...\n"
    "       toolhost inspect [--json] [--qualified-names] [[BOX=]DIR|FILE.so]...\n"
    "       toolhost call [--plugin-dir=[BOX=]DIR|--plugin=FILE.so]... [--json] TOOL [JSON]\n"
    "       toolhost new-plugin [--typed] [--dir=DIR] NAME\n"
    "Serve MCP tools from shared-object plugins over stdio (one JSON-RPC message\n"
    "per line on stdin/stdout; logs on stderr) and/or Streamable HTTP (--http).\n"
    "Speaks MCP 2024-11-05 through 2025-11-25 (initialize handshake) and\n"
    "2026-07-28 (per-request _meta).\n"
    "\n"
    "Plugins:\n"
    "  -d, --plugin-dir=[BOX=]DIR   load every NAME.so in DIR (repeatable;\n"
    "                               default " TH_PLUGINDIR ");\n"
    "                               a DIR that cannot be read or is refused\n"
    "                               (see --allow-insecure-plugins) is fatal;\n"
    "                               BOX names its toolbox (letters, digits,\n"
    "                               '-', '_'; default '" TH_DEFAULT_TOOLBOX "')\n"
    "      --qualified-names        expose tools as BOX__PLUGIN__TOOL (at most\n"
    "                               64 characters), so toolboxes may repeat\n"
    "                               tool names; without it a name clash\n"
    "                               across toolboxes is refused\n"
    "      --strict                 exit with status 1 if any plugin, tool or\n"
    "                               directory is refused\n"
    "      --follow-symlinks        load NAME.so files that are symbolic links\n"
    "                               to a file inside their plugin directory\n"
    "      --allow-insecure-plugins load plugin files and directories that are\n"
    "                               writable by group or others or owned by\n"
    "                               another user, and links that leave their\n"
    "                               directory (for development; warns each)\n"
    "      --isolation=MODE         process (the default): each plugin file's\n"
    "                               tools run in a worker process, started on\n"
    "                               its first call; none: inside the host\n"
    "                               (faster; a crash ends the host)\n"
    "      --load-timeout=SECONDS   a plugin that does not finish loading in time\n"
    "                               is refused (default 10; 0: none)\n"
    "      --worker-memory-limit=BYTES  address-space limit of each worker\n"
    "                               (RLIMIT_AS; default 0: none)\n"
    "      --worker-max-files=N     open-file limit of each worker (RLIMIT_NOFILE;\n"
    "                               default 0: inherited)\n"
    "      --cancel-grace-ms=N      a worker whose cancelled call has not returned\n"
    "                               after N ms is killed (default 5000)\n"
    "      --registry-cache=FILE    remember each accepted plugin's scan in FILE,\n"
    "                               keyed by path, size, mtime and inode, and\n"
    "                               skip scanning unchanged plugins (default\n"
    "                               $XDG_CACHE_HOME/toolhost/registry-HASH.json)\n"
    "      --no-registry-cache      scan every plugin on every start\n"
    "      --watch                  follow the plugin directories (inotify, or\n"
    "                               a stat poll where there is none): a\n"
    "                               NAME.so added, replaced or removed is loaded,\n"
    "                               swapped in or withdrawn while serving, once\n"
    "                               written and closed or renamed in; clients are\n"
    "                               told the tool list changed. Install plugins\n"
    "                               with install(1) or mv, never by rewriting a\n"
    "                               loaded file. SIGHUP rescans the directories\n"
    "                               once, with or without --watch\n"
    "      --set=NAME.KEY=VALUE     setting KEY of plugin NAME.so, read with\n"
    "                               th_server_config() (repeatable); it wins\n"
    "                               over TOOLHOST_NAME_KEY in the environment,\n"
    "                               which wins over --config\n"
    "      --set-secret=NAME.KEY=VALUE  the same, never logged or shown by\n"
    "                               inspect (environment values are secret\n"
    "                               too; a command line is visible to ps until\n"
    "                               toolhost blanks it: prefer the environment)\n"
    "      --config=FILE            read settings from FILE: [NAME] sections of\n"
    "                               key = value or secret key = value lines, and\n"
    "                               a [toolhost] section of options (name =\n"
    "                               value) that the command line overrides\n"
    "      --lazy-load              with --isolation=none: list tools from the\n"
    "                               scan or the registry cache and open each\n"
    "                               plugin at the first call of one of its tools\n"
    "\n"
    "Protocol:\n"
    "      --page-size=N            tools per tools/list page (default 100; 0: all)\n"
    "      --max-message-bytes=N    refuse longer messages (default 4194304)\n"
    "      --max-concurrent-calls=N tool calls running at once (default 64)\n"
    "      --max-result-bytes=N     a tool result larger than this (estimated\n"
    "                               JSON size) becomes an error (default 16777216)\n"
    "      --max-inflight-bytes=N   request bytes of tool calls in flight; past it\n"
    "                               a new call is refused as busy (default 67108864)\n"
    "      --queue-timeout-ms=N     a call waiting longer for a free thread is\n"
    "                               answered busy, not run (default 30000; 0: none)\n"
    "      --call-timeout=SECONDS   a running call's deadline, fractions allowed\n"
    "                               (0.5); past it the call is cancelled and\n"
    "                               answered as timed out (default 60; 0: none);\n"
    "                               resource reads, prompt gets and completions too\n"
    "      --list-ttl-ms=N          ttlMs on cacheable results (default 60000)\n"
    "      --task-ttl=SECONDS       how long a task (2026-07-28 tasks extension,\n"
    "                               2025-11-25 tasks) is kept after its creation;\n"
    "                               a shorter 2025-11-25 ttl is granted (default 300)\n"
    "      --max-tasks=N            unfinished tasks one client (or 2025-11-25\n"
    "                               session) may have; past it a task call is\n"
    "                               refused busy (default 64)\n"
    "      --instructions=TEXT      the instructions sent to clients (default:\n"
    "                               the tools' names; '' leaves them out)\n"
    "      --name=NAME              serverInfo.name sent to clients (default\n"
    "                               toolhost)\n"
    "      --state-key-file=FILE    sign the requestState of 2026-07-28 tools that\n"
    "                               ask the client (InputRequiredResult) with the\n"
    "                               key in FILE (32+ bytes), so every instance\n"
    "                               behind a load balancer accepts it (default: a\n"
    "                               random key per process)\n"
    "      --shutdown-grace-ms=N    at end of input, time calls get to finish\n"
    "                               before they are cancelled, and queued\n"
    "                               output to be read (default 5000)\n"
    "      --busy-poll=USEC         after a message on stdin, poll for the next\n"
    "                               one this long before sleeping, so a client\n"
    "                               that answers at once is served without a\n"
    "                               wake-up (default 50; 0: never; adaptive:\n"
    "                               a quiet client costs one poll, not one per\n"
    "                               message; a call polls its worker's answer\n"
    "                               the same way)\n"
    "\n"
    "Streamable HTTP:\n"
    "      --http=[ADDR:]PORT       also serve MCP over HTTP on PORT (ADDR: an IPv4\n"
    "                               or [IPv6] literal; default 127.0.0.1); with\n"
    "                               --http alone stdin is not read (add --stdio)\n"
    "      --stdio                  serve stdin/stdout too (the default without\n"
    "                               --http); end of input then ends the host\n"
    "      --http=systemd           serve on the socket a .socket unit passed\n"
    "                               (LISTEN_FDS=1; see contrib/systemd)\n"
    "      --http-path=PATH         the endpoint (default /mcp)\n"
    "      --http-allow-origin=ORIGIN  accept requests from this browser Origin\n"
    "                               (repeatable); loopback origins are accepted\n"
    "                               when bound to loopback, others get 403\n"
    "      --http-max-connections=N open connections at once (default 64)\n"
    "      --http-max-client-connections=N  of them from one client address\n"
    "                               (default half; behind a proxy, all)\n"
    "      --http-max-sessions=N    legacy sessions at once (default 1024); a new\n"
    "                               one ends the session idle longest\n"
    "      --http-timeout=SECONDS   an idle connection is closed, and a request\n"
    "                               unanswered for this long gets 504 (default 300)\n"
    "      --http-session-prefix=P  begin every Mcp-Session-Id with P, so a load\n"
    "                               balancer can route a session to this instance\n"
    "      --http-retry-ms=N        SSE polling in legacy sessions: a request still\n"
    "                               unanswered after N ms, and every event stream\n"
    "                               open N ms, is closed with retry: N; the client\n"
    "                               resumes with GET and Last-Event-ID (default 0:\n"
    "                               off, streams run to the response)\n"
    "      --auth-token-file=FILE   HTTP requests need a bearer token listed in FILE\n"
    "                               (one a line: TOKEN or sha256:HEX, then scopes)\n"
    "      --auth-scope=SCOPE       and the token must carry SCOPE (else 403)\n"
"      --auth-tool-scope=TOOL=SCOPE  tools/call of TOOL needs SCOPE too\n"
    "                               (repeatable; tools/list still lists TOOL)\n"
    "      --auth-jwks-file=FILE    also accept JWTs signed by a key in FILE (a JWKS;\n"
    "                               RS256/384/512, ES256/384/512) whose iss is\n"
    "                               --auth-issuer, aud --http-resource-url (both\n"
    "                               required), not expired; scopes from \"scope\";\n"
    "                               SIGHUP re-reads FILE (key rotation)\n"
    "      --auth-issuer=URL        authorization server named in the metadata\n"
    "      --http-resource-url=URL  this server's resource URI (default from Host)\n"
    "      --allow-unauthenticated  serve HTTP on a non-loopback address without\n"
    "                               --auth-token-file or --auth-jwks-file\n"
    "\n"
    "Diagnostics:\n"
    "      --log-level=LEVEL        debug, info, notice, warning, error, ...\n"
    "                               (default info)\n"
    "                               debug also traces every protocol message\n"
    "                               in and out (cut at 512 bytes); info logs\n"
    "                               one line per tool call (tool, id,\n"
    "                               duration_ms, outcome)\n"
    "      --log-format=FORMAT      text (default: TIMESTAMP toolhost: LEVEL:\n"
    "                               message key=value...) or json (one object\n"
    "                               per line: ts, level, component, plugin,\n"
    "                               msg and the fields)\n"
    "  -q, --quiet                  same as --log-level=warning\n"
    "  -h, --help                   show this help and exit\n"
    "  -V, --version                show the version and exit\n"
    "\n"
    "Subcommands (each has --help):\n"
    "  inspect      report plugins, their tools with final schemas, and every\n"
    "               refusal with its reason (--json for machines; exit 1 if\n"
    "               anything was refused)\n"
    "  call         run one tool call without a client and print the result\n"
    "               (exit 0 ok, 1 isError, 2 usage error or unknown tool)\n"
    "  new-plugin   write a commented plugin skeleton NAME.c and a Makefile\n"
    "\n"
    "Signals: SIGTERM and SIGINT stop the host; SIGHUP rescans the plugin\n"
    "directories and re-reads --auth-jwks-file (a stop while plugins load at\n"
    "start-up).\n"
    "\n"
    "Exit status: 0 after end of input, SIGTERM or SIGINT; 1 on a fatal error,\n"
    "a refusal under --strict, or a stop signal while plugins load; 2 on a usage\n"
    "error.\n";

enum {
    OPT_STRICT = 256,
    OPT_FOLLOW,
    OPT_PAGE,
    OPT_MAXMSG,
    OPT_MAXCALLS,
    OPT_TTL,
    OPT_INSTR,
    OPT_GRACE,
    OPT_BUSY_POLL,
    OPT_LOGLEVEL,
    OPT_MAXRESULT,
    OPT_MAXINFLIGHT,
    OPT_QUEUE_TIMEOUT,
    OPT_ALLOW_INSECURE,
    OPT_CALL_TIMEOUT,
    OPT_ISOLATION,
    OPT_LOAD_TIMEOUT,
    OPT_WORKER_MEMORY,
    OPT_WORKER_FILES,
    OPT_CANCEL_GRACE,
    OPT_REGISTRY_CACHE,
    OPT_NO_REGISTRY_CACHE,
    OPT_NAME,
    OPT_HTTP,
    OPT_STDIO,
    OPT_HTTP_PATH,
    OPT_HTTP_ORIGIN,
    OPT_HTTP_CONNS,
    OPT_HTTP_CLIENT_CONNS,
    OPT_HTTP_SESSIONS,
    OPT_HTTP_TIMEOUT,
    OPT_HTTP_RETRY,
    OPT_AUTH_TOKEN_FILE,
    OPT_AUTH_SCOPE,
    OPT_AUTH_ISSUER,
    OPT_AUTH_TOOL_SCOPE,
    OPT_HTTP_RESOURCE_URL,
    OPT_ALLOW_UNAUTH,
    OPT_STATE_KEY_FILE,
    OPT_QUALIFIED,
    OPT_AUTH_JWKS_FILE,
    OPT_HTTP_SESSION_PREFIX,
    OPT_WATCH,
    OPT_LOG_FORMAT,
    OPT_CONFIG,
    OPT_SET,
    OPT_SET_SECRET,
    OPT_LAZY_LOAD,
    OPT_TASK_TTL,
    OPT_MAX_TASKS,
};

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

static const struct option long_opts[] = {
    {"plugin-dir", required_argument, NULL, 'd'},
    {"strict", no_argument, NULL, OPT_STRICT},
    {"follow-symlinks", no_argument, NULL, OPT_FOLLOW},
    {"allow-insecure-plugins", no_argument, NULL, OPT_ALLOW_INSECURE},
    {"page-size", required_argument, NULL, OPT_PAGE},
    {"max-message-bytes", required_argument, NULL, OPT_MAXMSG},
    {"max-concurrent-calls", required_argument, NULL, OPT_MAXCALLS},
    {"queue-timeout-ms", required_argument, NULL, OPT_QUEUE_TIMEOUT},
    {"call-timeout", required_argument, NULL, OPT_CALL_TIMEOUT},
    {"list-ttl-ms", required_argument, NULL, OPT_TTL},
    {"instructions", required_argument, NULL, OPT_INSTR},
    {"shutdown-grace-ms", required_argument, NULL, OPT_GRACE},
    {"busy-poll", required_argument, NULL, OPT_BUSY_POLL},
    {"log-level", required_argument, NULL, OPT_LOGLEVEL},
    {"max-result-bytes", required_argument, NULL, OPT_MAXRESULT},
    {"max-inflight-bytes", required_argument, NULL, OPT_MAXINFLIGHT},
    {"isolation", required_argument, NULL, OPT_ISOLATION},
    {"load-timeout", required_argument, NULL, OPT_LOAD_TIMEOUT},
    {"worker-memory-limit", required_argument, NULL, OPT_WORKER_MEMORY},
    {"worker-max-files", required_argument, NULL, OPT_WORKER_FILES},
    {"cancel-grace-ms", required_argument, NULL, OPT_CANCEL_GRACE},
    {"registry-cache", required_argument, NULL, OPT_REGISTRY_CACHE},
    {"no-registry-cache", no_argument, NULL, OPT_NO_REGISTRY_CACHE},
    {"name", required_argument, NULL, OPT_NAME},
    {"http", required_argument, NULL, OPT_HTTP},
    {"stdio", no_argument, NULL, OPT_STDIO},
    {"http-path", required_argument, NULL, OPT_HTTP_PATH},
    {"http-allow-origin", required_argument, NULL, OPT_HTTP_ORIGIN},
    {"http-max-connections", required_argument, NULL, OPT_HTTP_CONNS},
    {"http-max-client-connections", required_argument, NULL, OPT_HTTP_CLIENT_CONNS},
    {"http-max-sessions", required_argument, NULL, OPT_HTTP_SESSIONS},
    {"http-timeout", required_argument, NULL, OPT_HTTP_TIMEOUT},
    {"http-retry-ms", required_argument, NULL, OPT_HTTP_RETRY},
    {"auth-token-file", required_argument, NULL, OPT_AUTH_TOKEN_FILE},
    {"auth-scope", required_argument, NULL, OPT_AUTH_SCOPE},
    {"auth-issuer", required_argument, NULL, OPT_AUTH_ISSUER},
    {"auth-tool-scope", required_argument, NULL, OPT_AUTH_TOOL_SCOPE},
    {"http-resource-url", required_argument, NULL, OPT_HTTP_RESOURCE_URL},
    {"allow-unauthenticated", no_argument, NULL, OPT_ALLOW_UNAUTH},
    {"state-key-file", required_argument, NULL, OPT_STATE_KEY_FILE},
    {"qualified-names", no_argument, NULL, OPT_QUALIFIED},
    {"auth-jwks-file", required_argument, NULL, OPT_AUTH_JWKS_FILE},
    {"http-session-prefix", required_argument, NULL, OPT_HTTP_SESSION_PREFIX},
    {"watch", no_argument, NULL, OPT_WATCH},
    {"log-format", required_argument, NULL, OPT_LOG_FORMAT},
    {"config", required_argument, NULL, OPT_CONFIG},
    {"set", required_argument, NULL, OPT_SET},
    {"set-secret", required_argument, NULL, OPT_SET_SECRET},
    {"lazy-load", no_argument, NULL, OPT_LAZY_LOAD},
    {"task-ttl", required_argument, NULL, OPT_TASK_TTL},
    {"max-tasks", required_argument, NULL, OPT_MAX_TASKS},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

/* Parse a non-negative decimal number no larger than MAX. */
static bool parse_size(const char *opt, const char *s, unsigned long long max, unsigned long long *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || *s == '-' || v > max) {
        fprintf(stderr, "toolhost: --%s: '%s' is not a number from 0 to %llu\n", opt, s, max);
        return false;
    }
    *out = v;
    return true;
}

/* Parse --call-timeout: seconds, fractions allowed, to whole milliseconds
 * (0: none). A positive value below 1 ms would silently mean none. */
static bool parse_seconds_ms(const char *opt, const char *s, long long *out_ms)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    long long ms = !errno && end != s && !*end && v >= 0 && v <= 86400 ? llround(v * 1000) : -1;
    if (ms < 0 || (v > 0 && ms == 0)) {
        fprintf(stderr, "toolhost: --%s: '%s' is not a number of seconds from 0.001 to 86400 (0: none)\n", opt, s);
        return false;
    }
    *out_ms = ms;
    return true;
}

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

/* Parse --http's [ADDR:]PORT ("8080", "0.0.0.0:8080", "[::1]:8080") into
 * OPTS; ADDR is copied into ADDR_BUF. */
static bool parse_http(const char *s, char *addr_buf, size_t size, th_http_opts *opts)
{
    const char *port = s, *colon = strrchr(s, ':');
    unsigned long long v;
    if (colon) {
        const char *a = s, *end = colon;
        if (*a == '[' && end > a && end[-1] == ']') {
            a++;
            end--;
        }
        if ((size_t)(end - a) >= size || end == a) {
            fprintf(stderr, "toolhost: --http: '%s' is not [ADDR:]PORT\n", s);
            return false;
        }
        memcpy(addr_buf, a, (size_t)(end - a));
        addr_buf[end - a] = '\0';
        opts->addr = addr_buf;
        port = colon + 1;
    }
    if (!parse_size("http", port, 65535, &v))
        return false;
    opts->port = (unsigned)v;
    return true;
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

/* The toolbox names of --plugin-dir, a NULL-ended array. */
static void free_boxes(char **boxes)
{
    for (size_t i = 0; boxes && boxes[i]; i++)
        free(boxes[i]);
    free(boxes);
}

int main(int argc, char **argv)
{
    const char **dirs = NULL;
    size_t ndirs = 0;
    bool strict = false;
    th_load_opts load_opts = {0};
    th_mcp_config cfg;
    th_stdio_opts sopts = {.max_message_bytes = 4u << 20, .grace_ms = 5000, .busy_poll_us = 50};
    unsigned long long v;
    int status = 1, proto_in = -1, proto_fd = -1, stop_fd = -1, c;
    th_registry *reg = NULL;
    th_mcp *mcp = NULL;
    bool isolate = true;
    th_scan_opts scan_opts = {.load_timeout_ms = 10000};
    th_supervisor_opts sup_opts = {.cancel_grace_ms = 5000};
    th_supervisor *sup = NULL;
    char **paths = NULL;
    size_t npaths = 0;
    th_scanned *scanned = NULL;
    const char *cache_opt = NULL; /* --registry-cache */
    bool use_cache = true;
    bool lazy_load = false; /* --lazy-load */
    th_lazy_set *lazy = NULL;
    char *cache_path = NULL;
    th_cache *cache = NULL;
    bool watch = false;
    th_watch *watcher = NULL;
    reloader reload = {0};
    th_registry *served_at_exit = NULL;
    th_http_opts hopts = {.max_connections = 64, .max_sessions = 1024, .request_timeout_ms = 300000};
    const char **origins = NULL;
    char http_addr[128];
    bool http_on = false, stdio_on = false;
    th_http *http = NULL;
    th_auth *auth = NULL;
    const char *auth_file = NULL, *jwks_file = NULL;
    bool allow_unauth = false;
    bool passed_loopback = false; /* --http=systemd: the passed socket is loopback */
    const char *tool_scopes[64]; /* --auth-tool-scope; point into argv */
    size_t ntool_scopes = 0;
    char **boxes = NULL; /* toolbox of dirs[i], malloc'd */
    bool qualified = false;
    th_naming *naming = NULL;
    th_err name_err;
    th_config *settings = NULL; /* per-plugin settings (plugin/settings.h) */

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

    th_mcp_config_default(&cfg);
    /* --config first: its [toolhost] options go before the command line's. */
    if (!(settings = th_config_new())) {
        fprintf(stderr, "toolhost: out of memory\n");
        return 1;
    }
    if (th_cli_config_args(&argc, &argv, settings, long_opts) != 0) {
        th_config_free(settings);
        fprintf(stderr, "Try 'toolhost --help' for more information.\n");
        return 2;
    }
    dirs = calloc((size_t)argc, sizeof *dirs);
    boxes = calloc((size_t)argc + 1, sizeof *boxes);
    origins = calloc((size_t)argc, sizeof *origins);
    hopts.origins = origins;
    if (!dirs || !origins || !boxes) {
        free(boxes);
        free(origins);
        fprintf(stderr, "toolhost: out of memory\n");
        return 1;
    }

    while ((c = getopt_long(argc, argv, "d:qhV", long_opts, NULL)) != -1) {
        switch (c) {
        case 'd':
            if (th_naming_split_spec(optarg, &boxes[ndirs], &dirs[ndirs], &name_err) != TH_OK) {
                fprintf(stderr, "toolhost: %s\n", name_err.msg);
                goto usage;
            }
            ndirs++;
            break;
        case OPT_QUALIFIED:
            qualified = true;
            break;
        case OPT_STRICT:
            strict = true;
            break;
        case OPT_FOLLOW:
            load_opts.follow_symlinks = true;
            break;
        case OPT_ALLOW_INSECURE:
            load_opts.allow_insecure = true;
            break;
        case OPT_PAGE:
            if (!parse_size("page-size", optarg, 1000000, &v))
                goto usage;
            cfg.page_size = (size_t)v;
            break;
        case OPT_MAXMSG:
            /* The JSON parser takes an int length. */
            if (!parse_size("max-message-bytes", optarg, INT_MAX - 1, &v) || v < 64) {
                fprintf(stderr, "toolhost: --max-message-bytes must be from 64 to %d\n", INT_MAX - 1);
                goto usage;
            }
            sopts.max_message_bytes = (size_t)v;
            break;
        case OPT_MAXCALLS:
            if (!parse_size("max-concurrent-calls", optarg, 4096, &v) || v == 0) {
                fprintf(stderr, "toolhost: --max-concurrent-calls must be from 1 to 4096\n");
                goto usage;
            }
            cfg.max_threads = (size_t)v;
            break;
        case OPT_QUEUE_TIMEOUT:
            if (!parse_size("queue-timeout-ms", optarg, 86400000, &v))
                goto usage;
            cfg.queue_timeout_ms = (long long)v;
            break;
        case OPT_CALL_TIMEOUT:
            if (!parse_seconds_ms("call-timeout", optarg, &cfg.call_timeout_ms))
                goto usage;
            break;
        case OPT_TASK_TTL:
            if (!parse_seconds_ms("task-ttl", optarg, &cfg.task_ttl_ms) || cfg.task_ttl_ms == 0) {
                fprintf(stderr, "toolhost: --task-ttl must be more than 0\n");
                goto usage;
            }
            break;
        case OPT_MAX_TASKS:
            if (!parse_size("max-tasks", optarg, 100000, &v) || v == 0) {
                fprintf(stderr, "toolhost: --max-tasks must be from 1 to 100000\n");
                goto usage;
            }
            cfg.max_tasks = (size_t)v;
            break;
        case OPT_TTL:
            if (!parse_size("list-ttl-ms", optarg, LLONG_MAX, &v))
                goto usage;
            cfg.list_ttl_ms = (long long)v;
            break;
        case OPT_MAXRESULT:
            if (!parse_size("max-result-bytes", optarg, SIZE_MAX, &v) || v < 1024) {
                fprintf(stderr, "toolhost: --max-result-bytes must be at least 1024\n");
                goto usage;
            }
            cfg.max_result_bytes = (size_t)v;
            break;
        case OPT_MAXINFLIGHT:
            if (!parse_size("max-inflight-bytes", optarg, SIZE_MAX, &v) || v == 0) {
                fprintf(stderr, "toolhost: --max-inflight-bytes must be at least 1\n");
                goto usage;
            }
            cfg.max_inflight_bytes = (size_t)v;
            break;
        case OPT_ISOLATION:
            if (strcmp(optarg, "process") == 0) {
                isolate = true;
            } else if (strcmp(optarg, "none") == 0) {
                isolate = false;
            } else {
                fprintf(stderr, "toolhost: --isolation: '%s' is not process or none\n", optarg);
                goto usage;
            }
            break;
        case OPT_LOAD_TIMEOUT:
            if (!parse_size("load-timeout", optarg, 86400, &v))
                goto usage;
            scan_opts.load_timeout_ms = (long long)v * 1000;
            break;
        case OPT_WORKER_MEMORY:
            if (!parse_size("worker-memory-limit", optarg, ULLONG_MAX, &v))
                goto usage;
            sup_opts.memory_limit = v;
            break;
        case OPT_WORKER_FILES:
            if (!parse_size("worker-max-files", optarg, 1u << 20, &v))
                goto usage;
            sup_opts.max_files = v;
            break;
        case OPT_CANCEL_GRACE:
            if (!parse_size("cancel-grace-ms", optarg, 86400000, &v))
                goto usage;
            sup_opts.cancel_grace_ms = (long long)v;
            break;
        case OPT_REGISTRY_CACHE:
            if (!*optarg) {
                fprintf(stderr, "toolhost: --registry-cache: the file name is empty\n");
                goto usage;
            }
            cache_opt = optarg;
            use_cache = true;
            break;
        case OPT_NO_REGISTRY_CACHE:
            use_cache = false;
            break;
        case OPT_HTTP:
            if (strcmp(optarg, "systemd") == 0) {
                /* Now, before any thread: it edits the environment. */
                char aerr[256];
                hopts.use_listen_fd = true;
                if ((hopts.listen_fd = th_activation_listen_fd(&passed_loopback, aerr, sizeof aerr)) < 0) {
                    fprintf(stderr, "toolhost: --http=systemd: %s\n", aerr);
                    goto cleanup; /* status is 1 */
                }
            } else if (!parse_http(optarg, http_addr, sizeof http_addr, &hopts))
                goto usage;
            http_on = true;
            break;
        case OPT_STDIO:
            stdio_on = true;
            break;
        case OPT_HTTP_PATH:
            if (optarg[0] != '/') {
                fprintf(stderr, "toolhost: --http-path must start with '/'\n");
                goto usage;
            }
            hopts.path = optarg;
            break;
        case OPT_HTTP_ORIGIN:
            origins[hopts.norigins++] = optarg;
            break;
        case OPT_HTTP_CONNS:
            if (!parse_size("http-max-connections", optarg, 100000, &v) || v == 0)
                goto usage;
            hopts.max_connections = (unsigned)v;
            break;
        case OPT_HTTP_CLIENT_CONNS:
            if (!parse_size("http-max-client-connections", optarg, 100000, &v) || v == 0)
                goto usage;
            hopts.max_client_connections = (unsigned)v;
            break;
        case OPT_HTTP_SESSIONS:
            if (!parse_size("http-max-sessions", optarg, 1000000, &v) || v == 0)
                goto usage;
            hopts.max_sessions = (size_t)v;
            break;
        case OPT_HTTP_TIMEOUT:
            if (!parse_seconds_ms("http-timeout", optarg, &hopts.request_timeout_ms) ||
                hopts.request_timeout_ms == 0)
                goto usage;
            break;
        case OPT_HTTP_RETRY:
            if (!parse_size("http-retry-ms", optarg, 86400000, &v))
                goto usage;
            hopts.retry_ms = (long long)v;
            break;
        case OPT_AUTH_TOKEN_FILE:
            auth_file = optarg;
            break;
        case OPT_STATE_KEY_FILE: {
            th_err kerr;
            if (th_mrtr_key_file(optarg, &kerr) != TH_OK) {
                fprintf(stderr, "toolhost: %s\n", kerr.msg);
                goto usage;
            }
            break;
        }
        case OPT_AUTH_SCOPE:
            hopts.auth_scope = optarg;
            break;
        case OPT_AUTH_TOOL_SCOPE:
            if (!strchr(optarg, '=') || optarg[0] == '=' || !strchr(optarg, '=')[1]) {
                fprintf(stderr, "toolhost: --auth-tool-scope: '%s' is not TOOL=SCOPE\n", optarg);
                goto usage;
            }
            if (ntool_scopes == sizeof tool_scopes / sizeof *tool_scopes) {
                fprintf(stderr, "toolhost: --auth-tool-scope: at most 64\n");
                goto usage;
            }
            tool_scopes[ntool_scopes++] = optarg;
            hopts.tool_scopes = tool_scopes;
            hopts.ntool_scopes = ntool_scopes;
            break;
        case OPT_AUTH_ISSUER:
            hopts.auth_issuer = optarg;
            break;
        case OPT_HTTP_RESOURCE_URL:
            hopts.resource_url = optarg;
            break;
        case OPT_ALLOW_UNAUTH:
            allow_unauth = true;
            break;
        case OPT_AUTH_JWKS_FILE:
            jwks_file = optarg;
            break;
        case OPT_HTTP_SESSION_PREFIX:
            if (!*optarg || strlen(optarg) > TH_HTTP_SESSION_PREFIX_MAX ||
                optarg[strspn(optarg, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")]) {
                fprintf(stderr, "toolhost: --http-session-prefix: '%s' is not 1 to %d of A-Z a-z 0-9 . _ -\n",
                        optarg, TH_HTTP_SESSION_PREFIX_MAX);
                goto usage;
            }
            hopts.session_prefix = optarg;
            break;
        case OPT_WATCH:
            watch = true;
            break;
        case OPT_LAZY_LOAD:
            lazy_load = true;
            break;
        case OPT_INSTR:
            cfg.instructions = optarg;
            break;
        case OPT_NAME:
            /* serverInfo.name is required by the protocol: never empty. */
            if (!*optarg) {
                fprintf(stderr, "toolhost: --name: the server name must not be empty\n");
                goto usage;
            }
            cfg.server_name = optarg;
            break;
        case OPT_GRACE:
            if (!parse_size("shutdown-grace-ms", optarg, 86400000, &v))
                goto usage;
            sopts.grace_ms = (long long)v;
            break;
        case OPT_BUSY_POLL:
            if (!parse_size("busy-poll", optarg, 100000, &v))
                goto usage;
            sopts.busy_poll_us = (long long)v;
            break;
        case OPT_LOGLEVEL: {
            int level = th_log_level_parse(optarg);
            if (level < 0) {
                fprintf(stderr, "toolhost: --log-level: unknown level '%s'\n", optarg);
                goto usage;
            }
            th_log_set_threshold((th_log_level)level);
            break;
        }
        case 'q':
            th_log_set_threshold(TH_LOG_WARNING);
            break;
        case OPT_CONFIG:
            break; /* read before the other options */
        case OPT_SET:
        case OPT_SET_SECRET: {
            th_err err;
            if (th_config_set_arg(settings, optarg, c == OPT_SET_SECRET, &err) != TH_OK) {
                fprintf(stderr, "toolhost: --%s: %s\n", c == OPT_SET ? "set" : "set-secret", err.msg);
                goto usage;
            }
            /* Out of /proc/PID/cmdline (ps) from now on; it was there from
             * exec to here, so prefer the environment or a file. */
            char *eq = strchr(optarg, '=');
            if (c == OPT_SET_SECRET && eq)
                memset(eq + 1, '*', strlen(eq + 1));
            break;
        }
        case OPT_LOG_FORMAT: {
            int f = th_log_format_parse(optarg);
            if (f < 0) {
                fprintf(stderr, "toolhost: --log-format: '%s' is not text or json\n", optarg);
                goto usage;
            }
            th_log_set_format((th_log_format)f);
            break;
        }
        case 'h':
            fputs(usage_text, stdout);
            free_boxes(boxes);
            free(dirs);
            free(origins);
            th_config_free(settings);
            th_cli_config_free();
            return 0;
        case 'V':
            printf("toolhost %s (plugin ABI %d, MCP 2024-11-05..%s)\n", PACKAGE_VERSION, TH_ABI_VERSION,
                   TH_MCP_MODERN_VERSION);
            printf("Linux interfaces used: %s\n", th_compat_linux_features());
            printf("License: %s\n", TH_LICENSE);
            free_boxes(boxes);
            free(dirs);
            free(origins);
            th_config_free(settings);
            th_cli_config_free();
            return 0;
        default:
            goto usage;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "toolhost: unexpected argument '%s'\n", argv[optind]);
        goto usage;
    }
    if (lazy_load && isolate) {
        /* Workers already start at a plugin's first call. */
        fprintf(stderr, "toolhost: --lazy-load needs --isolation=none\n");
        goto usage;
    }
    /* A directory the user named must be there; the default one may not be. */
    load_opts.dirs_required = ndirs > 0;
    if (ndirs == 0) {
        if (!(boxes[ndirs] = strdup(TH_DEFAULT_TOOLBOX))) {
            fprintf(stderr, "toolhost: out of memory\n");
            goto cleanup;
        }
        dirs[ndirs++] = TH_PLUGINDIR;
    }
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
    free_boxes(boxes);
    free(dirs);
    free(origins);
    th_config_free(settings);
    th_cli_config_free();
    return status;

usage:
    fprintf(stderr, "Try 'toolhost --help' for more information.\n");
    free_boxes(boxes);
    free(dirs);
    free(origins);
    th_config_free(settings);
    th_cli_config_free();
    return 2;
}
