/* SPDX-License-Identifier: MIT */
/*
** host/options.c: every option of the toolhost command, once: its names,
** argument, range or choices, default, target field and help line. The
** parser, --help and --config's keys read this table; tests/test_options
** holds doc/toolhost.1 to it.
*/
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/compat.h"
#include "base/log.h"
#include "host/confargs.h"
#include "host/options.h"
#include "plugin/qualname.h"
#include "protocol/mrtr.h"
#include "protocol/ratelimit.h"
#include "transport/activation.h"
#include "transport/otlp.h"

#ifndef TH_PLUGINDIR
#define TH_PLUGINDIR "/usr/local/lib/toolhost/plugins"
#endif

#define FIELD(f) offsetof(th_host_opts, f)

static th_host_parse_rc opt_plugin_dir(th_host_opts *o, const th_option *opt, const char *arg);
static th_host_parse_rc opt_registry_cache(th_host_opts *o, const th_option *opt, const char *arg);
static th_host_parse_rc opt_http(th_host_opts *o, const th_option *opt, const char *arg);
static th_host_parse_rc opt_metrics(th_host_opts *o, const th_option *opt, const char *arg);
static th_host_parse_rc opt_otlp(th_host_opts *o, const th_option *opt, const char *arg);
static th_host_parse_rc opt_http_path(th_host_opts *o, const th_option *opt, const char *arg);
static th_host_parse_rc opt_socket_mode(th_host_opts *o, const th_option *opt, const char *arg);
static th_host_parse_rc opt_origin(th_host_opts *o, const th_option *opt, const char *arg);
static th_host_parse_rc opt_session_prefix(th_host_opts *o, const th_option *opt, const char *arg);
static th_host_parse_rc opt_tool_scope(th_host_opts *o, const th_option *opt, const char *arg);
static th_host_parse_rc opt_state_key(th_host_opts *o, const th_option *opt, const char *arg);
static th_host_parse_rc opt_caller_tools(th_host_opts *o, const th_option *opt, const char *arg);
static th_host_parse_rc opt_policy(th_host_opts *o, const th_option *opt, const char *arg);
static th_host_parse_rc opt_set(th_host_opts *o, const th_option *opt, const char *arg);
static th_host_parse_rc opt_pass_env(th_host_opts *o, const th_option *opt, const char *arg);
static th_host_parse_rc opt_grant(th_host_opts *o, const th_option *opt, const char *arg);
static th_host_parse_rc opt_log_level(th_host_opts *o, const th_option *opt, const char *arg);
static th_host_parse_rc opt_limit(th_host_opts *o, const th_option *opt, const char *arg);
static th_host_parse_rc opt_log_format(th_host_opts *o, const th_option *opt, const char *arg);
static th_host_parse_rc opt_ignore(th_host_opts *o, const th_option *opt, const char *arg);
static th_host_parse_rc opt_help(th_host_opts *o, const th_option *opt, const char *arg);
static th_host_parse_rc opt_version(th_host_opts *o, const th_option *opt, const char *arg);
static bool config_key(char **arg, const char **why);

static const th_opt_choice isolation_modes[] = {{"process", true}, {"none", false}, {NULL, 0}};
static const th_opt_choice sandbox_modes[] = {
    {"declared", TH_SANDBOX_DECLARED}, {"strict", TH_SANDBOX_STRICT}, {"off", TH_SANDBOX_OFF}, {NULL, 0}};

/* Shorthands for the common rows: a switch, and bounded numbers. */
#define SWITCH(f) .kind = TH_OPT_SET, .type = TH_OT_BOOL, .offset = FIELD(f), .value = true
#define NUMBER(t, f, lo, hi) .kind = TH_OPT_NUMBER, .type = t, .offset = FIELD(f), .min = lo, .max = hi
#define SECONDS(f, lo) .kind = TH_OPT_SECONDS, .type = TH_OT_LL, .offset = FIELD(f), .min = lo
#define TEXT(f) .kind = TH_OPT_TEXT, .type = TH_OT_STR, .offset = FIELD(f)
#define CALL(fn) .kind = TH_OPT_CALL, .parse = fn

static const th_option table[] = {
    {"plugin-dir", 'd', "[BOX=]DIR", CALL(opt_plugin_dir), .section = "Plugins",
     .help = "load every NAME.so in DIR (repeatable;\ndefault " TH_PLUGINDIR ");\na DIR that cannot be read or is "
             "refused\n(see --allow-insecure-plugins) is fatal;\nBOX names its toolbox (letters, digits,\n'-', '_'; "
             "default '" TH_DEFAULT_TOOLBOX "')"},
    {"qualified-names", 0, NULL, SWITCH(qualified),
     .help = "expose tools as BOX__PLUGIN__TOOL (at most\n64 characters), so toolboxes may repeat\ntool names; without "
             "it a name clash\nacross toolboxes is refused"},
    {"strict", 0, NULL, SWITCH(strict),
     .help = "exit with status 1 if any plugin, tool or\ndirectory is refused"},
    {"follow-symlinks", 0, NULL, SWITCH(load.follow_symlinks),
     .help = "load NAME.so files that are symbolic links\nto a file inside their plugin directory"},
    {"allow-insecure-plugins", 0, NULL, SWITCH(load.allow_insecure),
     .help = "load plugin files and directories that are\nwritable by group or others or owned by\nanother user, and "
             "links that leave their\ndirectory (for development; warns each)"},
    {"isolation", 0, "MODE", .kind = TH_OPT_CHOICE, .type = TH_OT_BOOL, .offset = FIELD(isolate),
     .choices = isolation_modes, .def = "process",
     .help = "process (the default): each plugin file's\ntools run in a worker process, started on\nits first call; "
             "none: inside the host\n(faster; a crash ends the host)"},
    {"sandbox", 0, "MODE", .kind = TH_OPT_CHOICE, .type = TH_OT_INT, .offset = FIELD(sup.sandbox.mode),
     .choices = sandbox_modes, .def = "declared",
     .help = "each worker's sandbox (Landlock), default deny:\ndeclared (the default): what its plugin\ndeclared "
             "plus --grant; strict: --grant alone;\noff: none"},
    {"require-sandbox", 0, NULL, SWITCH(sup.sandbox.require),
     .help = "exit with status 1 when this kernel cannot\nenforce a part of the sandbox (else a\nwarning names it)"},
    {"grant", 0, "NAME.KEY=VALUE", CALL(opt_grant), .key = "",
     .help = "let plugin NAME.so's worker do more\n(repeatable): KEY allow-read, allow-write,\nallow-exec (a path), "
             "allow-connect\n(HOST:PORT; Landlock enforces the port),\nmax-memory, cpu-seconds, max-files,\nmax-procs; "
             "also KEY = VALUE in [NAME]\nof --config"},
    {"load-timeout", 0, "SECONDS", NUMBER(TH_OT_LL, scan.load_timeout_ms, 0, 86400), .scale = 1000, .def = "10",
     .help = "a plugin that does not finish loading in time\nis refused (default 10; 0: none)"},
    {"worker-memory-limit", 0, "BYTES", NUMBER(TH_OT_ULL, sup.memory_limit, 0, ULLONG_MAX), .def = "0",
     .help = "address-space limit of each worker\n(RLIMIT_AS; default 0: none)"},
    {"worker-max-files", 0, "N", NUMBER(TH_OT_ULL, sup.max_files, 0, 1u << 20), .def = "0",
     .help = "open-file limit of each worker (RLIMIT_NOFILE;\ndefault 0: inherited)"},
    {"cancel-grace-ms", 0, "N", NUMBER(TH_OT_LL, sup.cancel_grace_ms, 0, 86400000), .def = "5000",
     .help = "a worker whose cancelled call has not returned\nafter N ms is killed (default 5000)"},
    {"pass-env", 0, "NAME[,NAME...]", CALL(opt_pass_env),
     .help = "also pass these environment variables to\nworkers (repeatable); they get only PATH,\nHOME, LANG, LC_*, TZ, "
             "TMPDIR, the\nsanitizers' and the dynamic loader's\nvariables, and their plugin's settings"},
    {"registry-cache", 0, "FILE", CALL(opt_registry_cache), .what = "the file name",
     .help = "remember each accepted plugin's scan in FILE,\nkeyed by path, size, mtime and inode, and\nskip scanning "
             "unchanged plugins (default\n$XDG_CACHE_HOME/toolhost/registry-HASH.json)"},
    {"no-registry-cache", 0, NULL, .kind = TH_OPT_SET, .type = TH_OT_BOOL, .offset = FIELD(use_cache), .value = false,
     .help = "scan every plugin on every start"},
    {"watch", 0, NULL, SWITCH(watch),
     .help = "follow the plugin directories (inotify, or\na stat poll where there is none): a\nNAME.so added, replaced "
             "or removed is loaded,\nswapped in or withdrawn while serving, once\nwritten and closed or renamed in; "
             "clients are\ntold the tool list changed. Install plugins\nwith install(1) or mv, never by rewriting "
             "a\nloaded file. SIGHUP rescans the directories\nonce, with or without --watch"},
    {"set", 0, "NAME.KEY=VALUE", CALL(opt_set),
     .help = "setting KEY of plugin NAME.so, read with\nth_server_config() (repeatable); it wins\nover TOOLHOST_NAME_KEY "
             "in the environment,\nwhich wins over --config"},
    /* Secrets belong in "secret key = value" lines, not among the options. */
    {"set-secret", 0, "NAME.KEY=VALUE", CALL(opt_set), .key = "",
     .help = "the same, never logged or shown by\ninspect (environment values are secret\ntoo; a command line is "
             "visible to ps until\ntoolhost blanks it: prefer the environment)"},
    /* Read before the other options (host/confargs.c); a file naming
     * another file would be a chain nobody can follow. */
    {"config", 0, "FILE", CALL(opt_ignore), .key = "",
     .help = "read settings from FILE: [NAME] sections of\nkey = value or secret key = value lines, and\na [toolhost] "
             "section of options (name =\nvalue) that the command line overrides"},
    {"lock", 0, "FILE", TEXT(lock_file), .min = 1, .what = "the lock file",
     .help = "serve only what FILE pins (toolhost lock\nwrites it): a changed definition, a new tool,\nprompt, "
             "template or plugin, or a plugin\nasking for more needs is refused and logged;\nthe others serve. "
             "Read again on each reload"},
    {"lazy-load", 0, NULL, SWITCH(lazy_load),
     .help = "with --isolation=none: list tools from the\nscan or the registry cache and open each\nplugin at the first "
             "call of one of its tools"},

    {"tools", 0, "[PLUGIN:]GLOB,...", CALL(opt_policy), .section = "Exposure",
     .help = "expose only tools whose name, or PLUGIN/TOOL,\nmatches a GLOB (fnmatch; repeatable); with\nPLUGIN: "
             "for that plugin's tools alone\n(the [PLUGIN] key tools = GLOB,...)"},
    {"exclude-tools", 0, "[PLUGIN:]GLOB,...", CALL(opt_policy),
     .help = "hide tools whose name, or PLUGIN/TOOL, matches\na GLOB (repeatable); a hidden tool is unknown\nto "
             "tools/list and tools/call alike; a glob\nthat matches PLUGIN/* hides the plugin's\nprompts and "
             "resources too (the [PLUGIN]\nkey exclude-tools = GLOB,...)"},
    {"read-only", 0, NULL, CALL(opt_policy),
     .help = "expose only tools annotated readOnlyHint: true"},
    {"read-only-plugin", 0, "PLUGIN", CALL(opt_policy),
     .help = "the same for PLUGIN's tools alone (repeatable;\nthe [PLUGIN] key read-only = true)"},

    {"page-size", 0, "N", NUMBER(TH_OT_SIZE, cfg.page_size, 0, 1000000), .def = "100", .section = "Protocol",
     .help = "tools per tools/list page (default 100; 0: all)"},
    /* The JSON parser takes an int length. */
    {"max-message-bytes", 0, "N", NUMBER(TH_OT_SIZE, stdio.max_message_bytes, 64, INT_MAX - 1), .def = "4194304",
     .help = "refuse longer messages (default 4194304)"},
    {"max-concurrent-calls", 0, "N", NUMBER(TH_OT_SIZE, cfg.max_threads, 1, 4096), .def = "64",
     .help = "tool calls running at once (default 64)"},
    {"max-result-bytes", 0, "N", NUMBER(TH_OT_SIZE, cfg.max_result_bytes, 1024, SIZE_MAX), .def = "16777216",
     .help = "a tool result larger than this (estimated\nJSON size) becomes an error (default 16777216)"},
    {"max-inflight-bytes", 0, "N", NUMBER(TH_OT_SIZE, cfg.max_inflight_bytes, 1, SIZE_MAX), .def = "67108864",
     .help = "request bytes of tool calls in flight; past it\na new call is refused as busy (default 67108864)"},
    {"queue-timeout-ms", 0, "N", NUMBER(TH_OT_LL, cfg.queue_timeout_ms, 0, 86400000), .def = "30000",
     .help = "a call waiting longer for a free thread is\nanswered busy, not run (default 30000; 0: none)"},
    {"call-timeout", 0, "SECONDS", SECONDS(cfg.call_timeout_ms, 0), .def = "60",
     .help = "a running call's deadline, fractions allowed\n(0.5); past it the call is cancelled and\nanswered as timed "
             "out (default 60; 0: none);\nresource reads, prompt gets and completions too"},
    {"list-ttl-ms", 0, "N", NUMBER(TH_OT_LL, cfg.list_ttl_ms, 0, LLONG_MAX), .def = "60000",
     .help = "ttlMs on cacheable results (default 60000)"},
    {"task-ttl", 0, "SECONDS", SECONDS(cfg.task_ttl_ms, 1), .def = "300",
     .help = "how long a task (2026-07-28 tasks extension,\n2025-11-25 tasks) is kept after its creation;\na shorter "
             "2025-11-25 ttl is granted (default 300)"},
    {"max-tasks", 0, "N", NUMBER(TH_OT_SIZE, cfg.max_tasks, 1, 100000), .def = "64",
     .help = "unfinished tasks one client (or 2025-11-25\nsession) may have; past it a task call is\nrefused busy "
             "(default 64)"},
    {"rate-limit", 0, "GLOB=N/s[,burst=B]", CALL(opt_limit),
     .help = "at most N calls a second (/m: a minute, /h: an\nhour) of the tools whose exposed name matches\nGLOB, "
             "all callers together, B at once\n(default N); past it a call is refused\n(-31002, over HTTP 429 "
             "with Retry-After)\nwith data.retryAfterMs (repeatable; the\nfirst matching rule applies)"},
    {"rate-limit-per-principal", 0, "GLOB=N/s[,burst=B]", CALL(opt_limit),
     .help = "the same, a bucket for each principal (over\nHTTP the token's, else \"anonymous\";\nstdio: \"stdio\")"},
    {"concurrency-limit", 0, "GLOB=N", CALL(opt_limit),
     .help = "at most N calls of the tools matching GLOB\nrunning at once; past it refused as\n--rate-limit's "
             "(repeatable)"},
    {"instructions", 0, "TEXT", TEXT(cfg.instructions),
     .help = "the instructions sent to clients (default:\nthe tools' names; '' leaves them out)"},
    /* serverInfo.name is required by the protocol: never empty. */
    {"name", 0, "NAME", TEXT(cfg.server_name), .min = 1, .what = "the server name", .def = "toolhost",
     .help = "serverInfo.name sent to clients (default\ntoolhost)"},
    {"state-key-file", 0, "FILE", CALL(opt_state_key),
     .help = "sign the requestState of 2026-07-28 tools that\nask the client (InputRequiredResult) with the\nkey in "
             "FILE (32+ bytes), so every instance\nbehind a load balancer accepts it (default: a\nrandom key per "
             "process)"},
    {"shutdown-grace-ms", 0, "N", NUMBER(TH_OT_LL, stdio.grace_ms, 0, 86400000), .def = "5000",
     .help = "at end of input, time calls get to finish\nbefore they are cancelled, and queued\noutput to be read "
             "(default 5000)"},
    {"busy-poll", 0, "USEC", NUMBER(TH_OT_LL, stdio.busy_poll_us, 0, 100000), .def = "50",
     .help = "after a message on stdin, poll for the next\none this long before sleeping, so a client\nthat answers at "
             "once is served without a\nwake-up (default 50; 0: never; adaptive:\na quiet client costs one poll, not "
             "one per\nmessage; a call polls its worker's answer\nthe same way)"},

    {"http", 0, "[ADDR:]PORT", CALL(opt_http), .section = "Streamable HTTP",
     .help = "also serve MCP over HTTP on PORT (ADDR: an IPv4\nor [IPv6] literal; default 127.0.0.1); with\n--http "
             "alone stdin is not read (add --stdio);\n--http=systemd: serve on the socket a .socket\nunit passed "
             "(LISTEN_FDS=1; see contrib/systemd);\nunix:PATH: on a Unix socket at PATH, one\ndaemon for many "
             "clients (toolhost connect);\neach peer's uid is its principal, uid:N"},
    {"http-socket-mode", 0, "OCTAL", CALL(opt_socket_mode), .def = "0600",
     .help = "permissions of the --http unix:PATH socket\n(default 0600: this user's clients only)"},
    {"idle-exit", 0, "SECONDS", SECONDS(idle_exit_ms, 1),
     .help = "with --http: exit (status 0) after SECONDS\nwith no client connection and no session"},
    {"stdio", 0, NULL, SWITCH(stdio_on),
     .help = "serve stdin/stdout too (the default without\n--http); end of input then ends the host"},
    {"http-path", 0, "PATH", CALL(opt_http_path), .def = "/mcp", .help = "the endpoint (default /mcp)"},
    {"http-allow-origin", 0, "ORIGIN", CALL(opt_origin),
     .help = "accept requests from this browser Origin\n(repeatable); loopback origins are accepted\nwhen bound to "
             "loopback, others get 403"},
    {"http-max-connections", 0, "N", NUMBER(TH_OT_UINT, http.max_connections, 1, 100000), .def = "64",
     .help = "open connections at once (default 64)"},
    {"http-max-client-connections", 0, "N", NUMBER(TH_OT_UINT, http.max_client_connections, 1, 100000),
     .help = "of them from one client address or Unix\nsocket uid other than the daemon's own or\nroot (default half; behind a proxy, all)"},
    {"http-max-sessions", 0, "N", NUMBER(TH_OT_SIZE, http.max_sessions, 1, 1000000), .def = "1024",
     .help = "legacy sessions at once (default 1024); while\nall are taken an initialize gets 503"},
    {"http-timeout", 0, "SECONDS", SECONDS(http.request_timeout_ms, 1), .def = "300",
     .help = "an idle connection is closed, and a request\nunanswered for this long gets 504 (default 300)"},
    {"http-session-prefix", 0, "PREFIX", CALL(opt_session_prefix),
     .help = "begin every Mcp-Session-Id with PREFIX, so a\nload balancer can route a session to this\ninstance"},
    {"http-retry-ms", 0, "N", NUMBER(TH_OT_LL, http.retry_ms, 0, 86400000), .def = "0",
     .help = "SSE polling in legacy sessions: a request still\nunanswered after N ms, and every event stream\nopen N ms, "
             "is closed with retry: N; the client\nresumes with GET and Last-Event-ID (default 0:\noff, streams run "
             "to the response)"},
    {"auth-token-file", 0, "FILE", TEXT(auth_file),
     .help = "HTTP requests need a bearer token listed in FILE\n(one a line: TOKEN or sha256:HEX, then scopes)"},
    {"auth-scope", 0, "SCOPE", TEXT(http.auth_scope), .help = "and the token must carry SCOPE (else 403)"},
    {"auth-tool-scope", 0, "TOOL=SCOPE", CALL(opt_tool_scope),
     .help = "tools/call of TOOL needs SCOPE too\n(repeatable; tools/list still lists TOOL)"},
    {"auth-tools", 0, "SCOPE=GLOB,...", CALL(opt_caller_tools),
     .help = "a caller whose token carries SCOPE sees the\ntools whose name, or PLUGIN/TOOL, matches a\nGLOB "
             "(repeatable); with any, a caller sees\nonly those of its scopes, and a tool outside\nthem is "
             "unknown to its tools/list and\ntools/call alike"},
    {"auth-tools-claim", 0, "CLAIM", TEXT(grants_claim), .min = 1, .what = "the claim name",
     .help = "a JWT's CLAIM (a string of words, or an array\nof strings, as \"roles\") also names sets of\n"
             "--auth-tools, as its scopes do"},
    {"auth-jwks-file", 0, "FILE", TEXT(jwks_file),
     .help = "also accept JWTs signed by a key in FILE (a JWKS;\nRS256/384/512, ES256/384/512) whose iss "
             "is\n--auth-issuer, aud --http-resource-url (both\nrequired), not expired; scopes from "
             "\"scope\";\nSIGHUP re-reads FILE (key rotation)"},
    {"auth-issuer", 0, "URL", TEXT(http.auth_issuer), .help = "authorization server named in the metadata"},
    {"http-resource-url", 0, "URL", TEXT(http.resource_url),
     .help = "this server's resource URI (default from Host)"},
    {"allow-unauthenticated", 0, NULL, SWITCH(allow_unauth),
     .help = "serve HTTP on a non-loopback address without\n--auth-token-file or --auth-jwks-file"},

    {"log-level", 0, "LEVEL", CALL(opt_log_level), .def = "info", .section = "Diagnostics",
     .help = "debug, info, notice, warning, error, ...\n(default info)\ndebug also traces every protocol message\nin "
             "and out (cut at 512 bytes); info logs\none line per tool call (tool, id,\nduration_ms, outcome)"},
    {"log-format", 0, "FORMAT", CALL(opt_log_format), .def = "text",
     .help = "text (default: TIMESTAMP toolhost: LEVEL:\nmessage key=value...) or json (one object\nper line: ts, "
             "level, component, plugin,\nmsg and the fields)"},
    {"metrics", 0, "[ADDR:]PORT|http", CALL(opt_metrics),
     .help = "count calls, workers and sessions, and serve\nthem in the Prometheus text format at\n/metrics on "
             "their own listener (ADDR: an\nIPv4 or [IPv6] literal; default 127.0.0.1),\nthe way to have them "
             "when serving stdio;\nhttp: on the --http listener, behind its\nauthorization. /healthz and /readyz "
             "are\nanswered on both"},
    {"audit-log", 0, "FILE", TEXT(audit_file), .min = 1, .what = "the audit log",
     .help = "append one JSON line per tools/call to FILE\n(time, principal, tool, outcome, duration,\nthe "
             "arguments' SHA-256, never their values);\nSIGHUP reopens it (logrotate)"},
    {"otlp-endpoint", 0, "URL", CALL(opt_otlp),
     .help = "export a span per MCP request (OpenTelemetry\nMCP conventions) as OTLP/HTTP JSON to URL\n"
             "(http://HOST[:PORT][/PATH]; PATH default\n/v1/traces), batched off the call path; a\n"
             "traceparent in params._meta is the parent;\nwhen the collector falls behind spans are\n"
             "dropped (counted in /metrics)"},
    {"quiet", 'q', NULL, .kind = TH_OPT_SET, .type = TH_OT_INT, .offset = FIELD(log_level), .value = TH_LOG_WARNING,
     .help = "same as --log-level=warning"},
    {"help", 'h', NULL, CALL(opt_help), .key = "", .help = "show this help and exit"},
    {"version", 'V', NULL, CALL(opt_version), .key = "", .help = "show the version and exit"},
};

#define NOPTS (sizeof table / sizeof table[0])

static const char usage_head[] =
    "Usage: toolhost [OPTION]...\n"
    "       toolhost inspect [--json] [--qualified-names] [[BOX=]DIR|FILE.so]...\n"
    "       toolhost call [--plugin-dir=[BOX=]DIR|--plugin=FILE.so]... [--json] TOOL [JSON]\n"
    "       toolhost new-plugin [--typed] [--dir=DIR] NAME\n"
    "       toolhost lock --lock=FILE [--check] [--plugin-dir=[BOX=]DIR]...\n"
    "       toolhost test [--isolation=MODE] [--start-timeout=SECONDS] [OPTION]... FILE\n"
    "       toolhost connect [--start] unix:PATH [DAEMON OPTION]...\n"
    "Serve MCP tools from shared-object plugins over stdio (one JSON-RPC message\n"
    "per line on stdin/stdout; logs on stderr) and/or Streamable HTTP (--http).\n"
    "Speaks MCP 2024-11-05 through 2025-11-25 (initialize handshake) and\n"
    "2026-07-28 (per-request _meta).\n";

static const char usage_tail[] =
    "\n"
    "Subcommands (each has --help):\n"
    "  inspect      report plugins, their tools with final schemas, and every\n"
    "               refusal with its reason (--json for machines; exit 1 if\n"
    "               anything was refused)\n"
    "  call         run one tool call without a client and print the result\n"
    "               (exit 0 ok, 1 isError, 2 usage error or unknown tool)\n"
    "  new-plugin   write a commented plugin skeleton NAME.c and a Makefile\n"
    "  lock         pin the plugins' files and definitions in a lock file for\n"
    "               --lock (--check: list the differences)\n"
    "  test         run a file of declarative call tests against a server in\n"
    "               both isolation modes and report TAP\n"
    "  connect      relay a stdio client to a shared daemon (--http=unix:PATH)\n"
    "\n"
    "Signals: SIGTERM and SIGINT stop the host; SIGHUP rescans the plugin\n"
    "directories, re-reads --auth-jwks-file and the limits of --config, and\n"
    "reopens --audit-log (a stop while plugins load at start-up).\n"
    "\n"
    "Exit status: 0 after end of input, SIGTERM or SIGINT; 1 on a fatal error,\n"
    "a refusal under --strict, or a stop signal while plugins load; 2 on a usage\n"
    "error.\n";

/* The help text's column. */
#define HELP_COLUMN 31

const th_option *th_host_options(size_t *n)
{
    *n = NOPTS;
    return table;
}

const th_option *th_host_option_find(const char *name)
{
    for (size_t i = 0; i < NOPTS; i++)
        if (strcmp(table[i].name, name) == 0)
            return &table[i];
    return NULL;
}

const th_option *th_host_option_by_key(const char *key)
{
    for (size_t i = 0; i < NOPTS; i++)
        if (strcmp(table[i].key ? table[i].key : table[i].name, key) == 0)
            return &table[i];
    return NULL;
}

void th_host_usage(FILE *out)
{
    fputs(usage_head, out);
    for (size_t i = 0; i < NOPTS; i++) {
        const th_option *t = &table[i];
        if (t->section)
            fprintf(out, "\n%s:\n", t->section);
        char left[96];
        int n = snprintf(left, sizeof left, "  %c%c%s--%s%s%s", t->short_name ? '-' : ' ',
                         t->short_name ? t->short_name : ' ', t->short_name ? ", " : "  ", t->name,
                         t->arg ? "=" : "", t->arg ? t->arg : "");
        fprintf(out, "%s%*s", left, n < HELP_COLUMN ? HELP_COLUMN - n : 2, "");
        for (const char *h = t->help; *h;) {
            size_t len = strcspn(h, "\n");
            fprintf(out, "%s%.*s\n", h == t->help ? "" : "                               ", (int)len, h);
            h += len + (h[len] == '\n');
        }
    }
    fputs(usage_tail, out);
}

/* ---- checking and storing one argument ---------------------------------- */

static void store(th_host_opts *o, const th_option *t, unsigned long long v, const char *s)
{
    void *p = (char *)o + t->offset;
    switch (t->type) {
    case TH_OT_BOOL: *(bool *)p = v != 0; break;
    case TH_OT_INT: *(int *)p = (int)v; break;
    case TH_OT_UINT: *(unsigned *)p = (unsigned)v; break;
    case TH_OT_SIZE: *(size_t *)p = (size_t)v; break;
    case TH_OT_LL: *(long long *)p = (long long)v; break;
    case TH_OT_ULL: *(unsigned long long *)p = v; break;
    case TH_OT_STR: *(const char **)p = s; break;
    }
}

/* A non-negative decimal number no larger than MAX. */
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

static th_host_parse_rc set_number(th_host_opts *o, const th_option *t, const char *arg)
{
    unsigned long long v = 0;
    bool ok = parse_size(t->name, arg, t->max, &v);
    if (!ok || v < t->min) {
        if (t->min && t->max >= SIZE_MAX)
            fprintf(stderr, "toolhost: --%s must be at least %llu\n", t->name, t->min);
        else if (t->min)
            fprintf(stderr, "toolhost: --%s must be from %llu to %llu\n", t->name, t->min, t->max);
        return TH_HOST_USAGE;
    }
    store(o, t, v * (t->scale ? t->scale : 1), NULL);
    return TH_HOST_RUN;
}

/* Seconds, fractions allowed, to whole milliseconds. A positive value
 * below 1 ms would silently mean none. */
static th_host_parse_rc set_seconds(th_host_opts *o, const th_option *t, const char *arg)
{
    char *end;
    errno = 0;
    double v = strtod(arg, &end);
    long long ms = !errno && end != arg && !*end && v >= 0 && v <= 86400 ? llround(v * 1000) : -1;
    if (ms < 0 || (v > 0 && ms == 0)) {
        fprintf(stderr, "toolhost: --%s: '%s' is not a number of seconds from 0.001 to 86400 (0: none)\n", t->name,
                arg);
        return TH_HOST_USAGE;
    }
    if (ms < (long long)t->min) {
        fprintf(stderr, "toolhost: --%s must be more than 0\n", t->name);
        return TH_HOST_USAGE;
    }
    store(o, t, (unsigned long long)ms, NULL);
    return TH_HOST_RUN;
}

static th_host_parse_rc set_text(th_host_opts *o, const th_option *t, const char *arg)
{
    if (strlen(arg) < t->min) {
        fprintf(stderr, "toolhost: --%s: %s must not be empty\n", t->name, t->what);
        return TH_HOST_USAGE;
    }
    store(o, t, 0, arg);
    return TH_HOST_RUN;
}

static th_host_parse_rc set_choice(th_host_opts *o, const th_option *t, const char *arg)
{
    for (const th_opt_choice *c = t->choices; c->name; c++)
        if (strcmp(c->name, arg) == 0) {
            store(o, t, (unsigned long long)c->value, NULL);
            return TH_HOST_RUN;
        }
    fprintf(stderr, "toolhost: --%s: '%s' is not", t->name, arg);
    for (const th_opt_choice *c = t->choices; c->name; c++)
        fprintf(stderr, "%s %s", c == t->choices ? "" : c[1].name ? "," : " or", c->name);
    fputc('\n', stderr);
    return TH_HOST_USAGE;
}

static th_host_parse_rc apply(th_host_opts *o, const th_option *t, const char *arg)
{
    switch (t->kind) {
    case TH_OPT_SET: store(o, t, (unsigned long long)t->value, NULL); return TH_HOST_RUN;
    case TH_OPT_NUMBER: return set_number(o, t, arg);
    case TH_OPT_SECONDS: return set_seconds(o, t, arg);
    case TH_OPT_TEXT: return set_text(o, t, arg);
    case TH_OPT_CHOICE: return set_choice(o, t, arg);
    case TH_OPT_CALL: return t->parse(o, t, arg);
    }
    return TH_HOST_USAGE;
}

/* ---- the options that are more than a field ----------------------------- */

static th_host_parse_rc opt_plugin_dir(th_host_opts *o, const th_option *opt, const char *arg)
{
    (void)opt;
    th_err err;
    if (th_naming_split_spec(arg, &o->boxes[o->ndirs], &o->dirs[o->ndirs], &err) != TH_OK) {
        fprintf(stderr, "toolhost: %s\n", err.msg);
        return TH_HOST_USAGE;
    }
    o->ndirs++;
    return TH_HOST_RUN;
}

static th_host_parse_rc opt_registry_cache(th_host_opts *o, const th_option *opt, const char *arg)
{
    if (!*arg) {
        fprintf(stderr, "toolhost: --%s: %s must not be empty\n", opt->name, opt->what);
        return TH_HOST_USAGE;
    }
    o->cache_file = arg;
    o->use_cache = true;
    return TH_HOST_RUN;
}

/* --http's [ADDR:]PORT ("8080", "0.0.0.0:8080", "[::1]:8080"), or systemd. */
/* "[ADDR:]PORT" (ADDR bracketed when IPv6) into ADDR (TH_HOST_ADDR_MAX
 * bytes; "" when absent) and PORT; false after a message naming --NAME. */
static bool parse_addr_port(const char *name, const char *arg, char *addr, unsigned *port)
{
    const char *p = arg, *colon = strrchr(arg, ':');
    unsigned long long v;
    addr[0] = '\0';
    if (colon) {
        const char *a = arg, *end = colon;
        if (*a == '[' && end > a && end[-1] == ']') {
            a++;
            end--;
        }
        if ((size_t)(end - a) >= TH_HOST_ADDR_MAX || end == a) {
            fprintf(stderr, "toolhost: --%s: '%s' is not [ADDR:]PORT\n", name, arg);
            return false;
        }
        memcpy(addr, a, (size_t)(end - a));
        addr[end - a] = '\0';
        p = colon + 1;
    }
    if (!parse_size(name, p, 65535, &v))
        return false;
    *port = (unsigned)v;
    return true;
}

static th_host_parse_rc opt_http(th_host_opts *o, const th_option *opt, const char *arg)
{
    (void)opt;
    o->http_on = true;
    if (strcmp(arg, "systemd") == 0) {
        /* Now, before any thread: it edits the environment. */
        char err[256];
        o->http.use_listen_fd = true;
        if ((o->http.listen_fd = th_activation_listen_fd(&o->passed_loopback, err, sizeof err)) < 0) {
            fprintf(stderr, "toolhost: --http=systemd: %s\n", err);
            return TH_HOST_FATAL;
        }
        return TH_HOST_RUN;
    }
    if (strncmp(arg, "unix:", 5) == 0) {
        if (!arg[5]) {
            fprintf(stderr, "toolhost: --http=unix:PATH: the path is empty\n");
            return TH_HOST_USAGE;
        }
        /* Bound at start-up (host/serve.c), once the mode is known. */
        o->http_unix = arg + 5;
        o->passed_loopback = true; /* no network: the loopback rules apply */
        return TH_HOST_RUN;
    }
    if (!parse_addr_port("http", arg, o->http_addr, &o->http.port))
        return TH_HOST_USAGE;
    if (o->http_addr[0])
        o->http.addr = o->http_addr;
    return TH_HOST_RUN;
}

/* --http-socket-mode: permission bits, in octal as chmod(1) takes them. */
static th_host_parse_rc opt_socket_mode(th_host_opts *o, const th_option *opt, const char *arg)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(arg, &end, 8);
    if (!*arg || *end || errno || v > 0777) {
        fprintf(stderr, "toolhost: --%s: '%s' is not an octal mode from 0 to 0777\n", opt->name, arg);
        return TH_HOST_USAGE;
    }
    o->socket_mode = (unsigned)v;
    return TH_HOST_RUN;
}

/* --metrics: on --http's listener, or on a listener of its own. */
static th_host_parse_rc opt_metrics(th_host_opts *o, const th_option *opt, const char *arg)
{
    (void)opt;
    o->metrics_on = true;
    o->metrics_own = strcmp(arg, "http") != 0;
    if (o->metrics_own && !parse_addr_port("metrics", arg, o->metrics_addr, &o->metrics_port))
        return TH_HOST_USAGE;
    return TH_HOST_RUN;
}

/* --otlp-endpoint: the URL checked now; nothing is connected until a
 * batch is ready (a collector may start after the host). */
static th_host_parse_rc opt_otlp(th_host_opts *o, const th_option *opt, const char *arg)
{
    char err[1100];
    if (!th_otlp_check_url(arg, err, sizeof err)) {
        fprintf(stderr, "toolhost: --%s: %s\n", opt->name, err);
        return TH_HOST_USAGE;
    }
    o->otlp_endpoint = arg;
    return TH_HOST_RUN;
}

static th_host_parse_rc opt_http_path(th_host_opts *o, const th_option *opt, const char *arg)
{
    if (arg[0] != '/') {
        fprintf(stderr, "toolhost: --%s must start with '/'\n", opt->name);
        return TH_HOST_USAGE;
    }
    o->http.path = arg;
    return TH_HOST_RUN;
}

static th_host_parse_rc opt_origin(th_host_opts *o, const th_option *opt, const char *arg)
{
    (void)opt;
    o->origins[o->http.norigins++] = arg;
    return TH_HOST_RUN;
}

/* NAME[,NAME...]: environment variable names, checked here, split by the
 * spawner (worker/spawn.c). */
static th_host_parse_rc opt_pass_env(th_host_opts *o, const th_option *opt, const char *arg)
{
    static const char name_chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_";
    for (const char *s = arg;; s++) {
        size_t len = strspn(s, name_chars);
        if (len == 0 || (*s >= '0' && *s <= '9') || (s[len] && s[len] != ',')) {
            fprintf(stderr, "toolhost: --%s: '%s' is not a list of variable names (A-Z a-z 0-9 _, "
                    "comma-separated)\n", opt->name, arg);
            return TH_HOST_USAGE;
        }
        s += len;
        if (!*s)
            break;
    }
    o->pass_env[o->npass_env++] = arg;
    return TH_HOST_RUN;
}

static th_host_parse_rc opt_session_prefix(th_host_opts *o, const th_option *opt, const char *arg)
{
    static const char allowed[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-";
    if (!*arg || strlen(arg) > TH_HTTP_SESSION_PREFIX_MAX || arg[strspn(arg, allowed)]) {
        fprintf(stderr, "toolhost: --%s: '%s' is not 1 to %d of A-Z a-z 0-9 . _ -\n", opt->name, arg,
                TH_HTTP_SESSION_PREFIX_MAX);
        return TH_HOST_USAGE;
    }
    o->http.session_prefix = arg;
    return TH_HOST_RUN;
}

static th_host_parse_rc opt_tool_scope(th_host_opts *o, const th_option *opt, const char *arg)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg || !eq[1]) {
        fprintf(stderr, "toolhost: --%s: '%s' is not TOOL=SCOPE\n", opt->name, arg);
        return TH_HOST_USAGE;
    }
    if (o->ntool_scopes == TH_HOST_MAX_TOOL_SCOPES) {
        fprintf(stderr, "toolhost: --%s: at most %d\n", opt->name, TH_HOST_MAX_TOOL_SCOPES);
        return TH_HOST_USAGE;
    }
    o->tool_scopes[o->ntool_scopes++] = arg;
    o->http.tool_scopes = o->tool_scopes;
    o->http.ntool_scopes = o->ntool_scopes;
    return TH_HOST_RUN;
}

/* --auth-tools SCOPE=GLOB,...: checked here so that the transport, which
 * compiles one caller's set per request, finds only good rules. Globs take
 * no PLUGIN: part (a caller's set is one list: PLUGIN/TOOL names a plugin's). */
static th_host_parse_rc opt_caller_tools(th_host_opts *o, const th_option *opt, const char *arg)
{
    const char *eq = strchr(arg, '=');
    size_t slen = eq ? (size_t)(eq - arg) : 0;
    if (!eq || !slen || memchr(arg, ' ', slen) || memchr(arg, '"', slen) || strchr(eq, ':')) {
        fprintf(stderr, "toolhost: --%s: '%s' is not SCOPE=GLOB,... (a scope word, then globs without "
                        "PLUGIN:; name PLUGIN/TOOL instead)\n",
                opt->name, arg);
        return TH_HOST_USAGE;
    }
    th_policy *scratch = th_policy_new_closed();
    th_err err = {0};
    th_rc rc = scratch ? th_policy_add(scratch, TH_POLICY_TOOLS, opt->name, eq + 1, &err) : TH_ERR_NOMEM;
    th_policy_unref(scratch);
    if (rc != TH_OK) {
        fprintf(stderr, "toolhost: %s\n", rc == TH_ERR_NOMEM ? "out of memory" : err.msg);
        return rc == TH_ERR_NOMEM ? TH_HOST_FATAL : TH_HOST_USAGE;
    }
    if (o->ncaller_tools == TH_HOST_MAX_TOOL_SCOPES) {
        fprintf(stderr, "toolhost: --%s: at most %d\n", opt->name, TH_HOST_MAX_TOOL_SCOPES);
        return TH_HOST_USAGE;
    }
    o->caller_tools[o->ncaller_tools++] = arg;
    o->http.caller_tools = o->caller_tools;
    o->http.ncaller_tools = o->ncaller_tools;
    return TH_HOST_RUN;
}

/* The exposure options, each a kind of rule of the policy (plugin/policy.h). */
static th_host_parse_rc opt_policy(th_host_opts *o, const th_option *opt, const char *arg)
{
    static const struct {
        const char *name;
        th_policy_kind kind;
    } kinds[] = {{"tools", TH_POLICY_TOOLS},
                 {"exclude-tools", TH_POLICY_EXCLUDE},
                 {"read-only", TH_POLICY_READ_ONLY},
                 {"read-only-plugin", TH_POLICY_READ_ONLY}};
    size_t i = 0;
    while (strcmp(kinds[i].name, opt->name) != 0)
        i++;
    th_err err;
    th_rc rc = th_policy_add(o->policy, kinds[i].kind, opt->name, arg, &err);
    if (rc != TH_OK)
        fprintf(stderr, "toolhost: %s\n", err.msg);
    return rc == TH_OK ? TH_HOST_RUN : rc == TH_ERR_NOMEM ? TH_HOST_FATAL : TH_HOST_USAGE;
}

static th_host_parse_rc opt_state_key(th_host_opts *o, const th_option *opt, const char *arg)
{
    (void)o;
    (void)opt;
    th_err err;
    if (th_mrtr_key_file(arg, &err) != TH_OK) {
        fprintf(stderr, "toolhost: %s\n", err.msg);
        return TH_HOST_USAGE;
    }
    return TH_HOST_RUN;
}

/* --set and --set-secret. */
static th_host_parse_rc opt_set(th_host_opts *o, const th_option *opt, const char *arg)
{
    bool secret = strcmp(opt->name, "set-secret") == 0;
    th_err err;
    if (th_config_set_arg(o->settings, arg, secret, &err) != TH_OK) {
        fprintf(stderr, "toolhost: --%s: %s\n", opt->name, err.msg);
        return TH_HOST_USAGE;
    }
    /* Out of /proc/PID/cmdline (ps) from now on; it was there from exec to
     * here, so prefer the environment or a file. getopt hands out argv's
     * own strings, so this writes over the argument. */
    char *eq = strchr(arg, '=');
    if (secret && eq)
        memset(eq + 1, '*', strlen(eq + 1));
    return TH_HOST_RUN;
}

/* --grant: kept apart from settings, which a plugin reads. */
static th_host_parse_rc opt_grant(th_host_opts *o, const th_option *opt, const char *arg)
{
    th_err err;
    if (th_config_grant_arg(o->settings, arg, &err) != TH_OK) {
        fprintf(stderr, "toolhost: --%s: %s\n", opt->name, err.msg);
        return TH_HOST_USAGE;
    }
    return TH_HOST_RUN;
}

/* --rate-limit, --rate-limit-per-principal, --concurrency-limit: one
 * rule each, checked here (protocol/ratelimit.h). */
static th_host_parse_rc opt_limit(th_host_opts *o, const th_option *opt, const char *arg)
{
    static const struct {
        const char *name;
        th_limit_kind kind;
    } kinds[] = {{"rate-limit", TH_LIMIT_RATE},
                 {"rate-limit-per-principal", TH_LIMIT_RATE_PER_PRINCIPAL},
                 {"concurrency-limit", TH_LIMIT_CONCURRENCY}};
    size_t i = 0;
    while (strcmp(kinds[i].name, opt->name) != 0)
        i++;
    th_err err;
    th_rc rc = TH_ERR_NOMEM;
    if (o->limits || (o->limits = th_ratelimit_new()))
        rc = th_ratelimit_add(o->limits, kinds[i].kind, arg, &err);
    if (rc != TH_OK)
        fprintf(stderr, "toolhost: --%s: %s\n", opt->name, rc == TH_ERR_NOMEM ? "out of memory" : err.msg);
    else if (o->limits_given) /* NULL: a reload's re-read, which keeps its own */
        o->limits_given[o->nlimits_given++] = (struct th_host_limit){opt->name, arg};
    return rc == TH_OK ? TH_HOST_RUN : rc == TH_ERR_NOMEM ? TH_HOST_FATAL : TH_HOST_USAGE;
}

/* The limit option ARG ("--KEY=VALUE", from th_host_config_args) is, or NULL. */
static const th_option *limit_option(const char *arg)
{
    const char *eq = strchr(arg, '=');
    char name[64];
    if (!eq || strncmp(arg, "--", 2) != 0 || (size_t)(eq - arg - 2) >= sizeof name)
        return NULL;
    snprintf(name, sizeof name, "%.*s", (int)(eq - arg - 2), arg + 2);
    const th_option *t = th_host_option_find(name);
    return t && t->parse == opt_limit ? t : NULL;
}

bool th_host_reload_limits(th_host_opts *o)
{
    char **args = NULL, err[1024];
    size_t nargs = 0;
    if (!o->limits) /* no --config: the command line's limits cannot change */
        return true;
    if (!th_host_config_reread(config_key, &args, &nargs, err, sizeof err)) {
        th_log(TH_LOG_ERROR, "reload: %s; the limits in force stay", err);
        return false;
    }
    th_host_opts fresh = {0}; /* opt_limit's: only its limits are read */
    bool ok = (fresh.limits = th_ratelimit_new()) != NULL;
    size_t n = 0;
    /* A bad rule is refused by opt_limit on stderr, like at start-up. */
    for (size_t k = 0; ok && k < nargs; k++) {
        const th_option *t = limit_option(args[k]);
        if (t && (ok = opt_limit(&fresh, t, strchr(args[k], '=') + 1) == TH_HOST_RUN))
            n++;
    }
    for (size_t k = o->nlimits_file; ok && k < o->nlimits_given; k++)
        ok = opt_limit(&fresh, th_host_option_find(o->limits_given[k].option), o->limits_given[k].spec) == TH_HOST_RUN;
    for (size_t k = 0; k < nargs; k++)
        free(args[k]);
    free(args);
    if (!ok) {
        th_ratelimit_free(fresh.limits);
        th_log(TH_LOG_ERROR, "reload: a limit in --config is wrong (above); the limits in force stay");
        return false;
    }
    th_ratelimit_replace(o->limits, fresh.limits);
    th_log(TH_LOG_INFO, "reload: --config re-read: %zu limit%s from it, %zu from the command line", n,
           n == 1 ? "" : "s", o->nlimits_given - o->nlimits_file);
    return true;
}

static th_host_parse_rc opt_log_level(th_host_opts *o, const th_option *opt, const char *arg)
{
    if ((o->log_level = th_log_level_parse(arg)) < 0) {
        fprintf(stderr, "toolhost: --%s: unknown level '%s'\n", opt->name, arg);
        return TH_HOST_USAGE;
    }
    return TH_HOST_RUN;
}

static th_host_parse_rc opt_log_format(th_host_opts *o, const th_option *opt, const char *arg)
{
    if ((o->log_format = th_log_format_parse(arg)) < 0) {
        fprintf(stderr, "toolhost: --%s: '%s' is not text or json\n", opt->name, arg);
        return TH_HOST_USAGE;
    }
    return TH_HOST_RUN;
}

static th_host_parse_rc opt_ignore(th_host_opts *o, const th_option *opt, const char *arg)
{
    (void)o;
    (void)opt;
    (void)arg;
    return TH_HOST_RUN;
}

static th_host_parse_rc opt_help(th_host_opts *o, const th_option *opt, const char *arg)
{
    (void)o;
    (void)opt;
    (void)arg;
    th_host_usage(stdout);
    return TH_HOST_DONE;
}

static th_host_parse_rc opt_version(th_host_opts *o, const th_option *opt, const char *arg)
{
    (void)o;
    (void)opt;
    (void)arg;
    printf("toolhost %s (plugin ABI %d, MCP 2024-11-05..%s)\n", PACKAGE_VERSION, TH_ABI_VERSION,
           TH_MCP_MODERN_VERSION);
    printf("Linux interfaces used: %s\n", th_compat_linux_features());
    printf("License: %s\n", TH_LICENSE);
    return TH_HOST_DONE;
}

/* ---- the whole command line --------------------------------------------- */

/* getopt_long's view of the table: an option without a short name is
 * known by 256 + its index. */
static void getopt_view(struct option *longs, char *shorts)
{
    size_t k = 0;
    for (size_t i = 0; i < NOPTS; i++) {
        longs[i] = (struct option){table[i].name, table[i].arg ? required_argument : no_argument, NULL,
                                   table[i].short_name ? table[i].short_name : 256 + (int)i};
        if (table[i].short_name) {
            shorts[k++] = table[i].short_name;
            if (table[i].arg)
                shorts[k++] = ':';
        }
    }
    longs[NOPTS] = (struct option){NULL, 0, NULL, 0};
    shorts[k] = '\0';
}

static const th_option *by_getopt(int c)
{
    if (c >= 256 && c < 256 + (int)NOPTS)
        return &table[c - 256];
    for (size_t i = 0; c > 0 && i < NOPTS; i++)
        if (table[i].short_name == c)
            return &table[i];
    return NULL;
}

/* The table's defaults, through the same checks as a command line's. */
static bool set_defaults(th_host_opts *o)
{
    *o = (th_host_opts){.use_cache = true, .log_level = -1, .log_format = -1};
    th_mcp_config_default(&o->cfg);
    for (size_t i = 0; i < NOPTS; i++)
        if (table[i].def && apply(o, &table[i], table[i].def) != TH_HOST_RUN)
            return false;
    return true;
}

static th_host_parse_rc read_argv(int argc, char **argv, th_host_opts *o)
{
    struct option longs[NOPTS + 1];
    char shorts[2 * NOPTS + 1];
    getopt_view(longs, shorts);
    /* getopt's state is global: a second parse in one process (the test
     * kit's second host) would otherwise start past its argv's end and
     * silently take the defaults. 0 also resets glibc's inner state. */
    optind = 0;
    int c;
    while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
        const th_option *t = by_getopt(c);
        th_host_parse_rc rc = t ? apply(o, t, optarg) : TH_HOST_USAGE;
        if (rc != TH_HOST_RUN)
            return rc;
    }
    if (optind < argc) {
        fprintf(stderr, "toolhost: unexpected argument '%s'\n", argv[optind]);
        return TH_HOST_USAGE;
    }
    return TH_HOST_RUN;
}

/* What no single option decides. */
static th_host_parse_rc finish(th_host_opts *o)
{
    if (o->lazy_load && o->isolate) {
        /* Workers already start at a plugin's first call. */
        fprintf(stderr, "toolhost: --lazy-load needs --isolation=none\n");
        return TH_HOST_USAGE;
    }
    if (o->sup.sandbox.require && (!o->isolate || o->sup.sandbox.mode == TH_SANDBOX_OFF)) {
        /* In-process plugins share the host's every right. */
        fprintf(stderr, "toolhost: --require-sandbox needs --isolation=process and a --sandbox other than off\n");
        return TH_HOST_USAGE;
    }
    if (o->metrics_on && !o->metrics_own && !o->http_on) {
        /* Counting with nowhere to read the counts would cost for nothing. */
        fprintf(stderr, "toolhost: --metrics=http needs --http; give --metrics an address to serve stdio\n");
        return TH_HOST_USAGE;
    }
    if (o->idle_exit_ms && !o->http_on) {
        /* stdio ends with its client already. */
        fprintf(stderr, "toolhost: --idle-exit needs --http\n");
        return TH_HOST_USAGE;
    }
    /* A directory the user named must be there; the default one may not be. */
    o->load.dirs_required = o->ndirs > 0;
    if (o->ndirs == 0) {
        if (!(o->boxes[0] = strdup(TH_DEFAULT_TOOLBOX))) {
            fprintf(stderr, "toolhost: out of memory\n");
            return TH_HOST_FATAL;
        }
        o->dirs[o->ndirs++] = TH_PLUGINDIR;
    }
    o->http.origins = o->origins;
    /* With --config a reload may bring limits: their set exists to be
     * replaced, empty until then. */
    if (!o->limits && th_host_config_files() && !(o->limits = th_ratelimit_new())) {
        fprintf(stderr, "toolhost: out of memory\n");
        return TH_HOST_FATAL;
    }
    o->cfg.limits = o->limits;
    o->load.config = o->settings;
    o->sup.sandbox.grants = o->settings;
    o->scan.sandbox = o->sup.sandbox;
    if (!o->isolate) /* the plugins then run in the host: scan them as they will run */
        o->scan.sandbox.mode = TH_SANDBOX_OFF;
    if (o->log_level >= 0)
        th_log_set_threshold((th_log_level)o->log_level);
    if (o->log_format >= 0)
        th_log_set_format((th_log_format)o->log_format);
    return TH_HOST_RUN;
}

/* Whether ARG ("--KEY" or "--KEY=VALUE", from th_config_load_file) is a
 * [toolhost] key the table allows, with or without a value as it takes;
 * if so, ARG becomes the option it stands for. */
static bool config_key(char **arg, const char **why)
{
    char key[128];
    const char *eq = strchr(*arg + 2, '=');
    snprintf(key, sizeof key, "%.*s", (int)(eq ? (size_t)(eq - *arg - 2) : strlen(*arg + 2)), *arg + 2);
    const th_option *t = th_host_option_by_key(key);
    if (!t && (t = th_host_option_find(key)) != NULL) {
        /* Options that name files or secrets belong on the command line
         * (or, for secrets, in "secret key = value"). */
        *why = "cannot be given in a configuration file";
        return false;
    }
    if (!t)
        *why = "is not a toolhost option";
    else if (t->arg && !eq)
        *why = "needs a value (name = value)";
    else if (!t->arg && eq)
        *why = "takes no value (give the name alone)";
    else if (strcmp(key, t->name) == 0)
        return true;
    else {
        size_t len = strlen(t->name) + (eq ? strlen(eq) : 0) + 3;
        char *opt = malloc(len);
        if (!opt) {
            *why = "cannot be read: out of memory";
            return false;
        }
        snprintf(opt, len, "--%s%s", t->name, eq ? eq : "");
        free(*arg);
        *arg = opt;
        return true;
    }
    return false;
}

th_host_parse_rc th_host_parse(int argc, char **argv, th_host_opts *o)
{
    if (!set_defaults(o))
        return TH_HOST_FATAL;
    if (!(o->settings = th_config_new()) || !(o->policy = th_policy_new())) {
        fprintf(stderr, "toolhost: out of memory\n");
        return TH_HOST_FATAL;
    }
    /* --config first: its [toolhost] options go before the command line's. */
    int given = argc;
    th_host_parse_rc rc = th_host_config_args(&argc, &argv, o->settings, config_key) == 0 ? TH_HOST_RUN : TH_HOST_USAGE;
    /* The file's options come first in ARGV: a reload tells its limits
     * from the command line's by their count. */
    for (int k = 1; rc == TH_HOST_RUN && k <= argc - given; k++)
        o->nlimits_file += limit_option(argv[k]) != NULL;
    if (rc == TH_HOST_RUN) {
        o->dirs = calloc((size_t)argc, sizeof *o->dirs);
        o->boxes = calloc((size_t)argc + 1, sizeof *o->boxes);
        o->origins = calloc((size_t)argc, sizeof *o->origins);
        o->pass_env = calloc((size_t)argc, sizeof *o->pass_env);
        o->limits_given = calloc((size_t)argc, sizeof *o->limits_given);
        if (!o->dirs || !o->boxes || !o->origins || !o->pass_env || !o->limits_given) {
            fprintf(stderr, "toolhost: out of memory\n");
            return TH_HOST_FATAL;
        }
        rc = read_argv(argc, argv, o);
    }
    if (rc == TH_HOST_RUN)
        rc = finish(o);
    if (rc == TH_HOST_USAGE)
        fprintf(stderr, "Try 'toolhost --help' for more information.\n");
    return rc;
}

void th_host_opts_clear(th_host_opts *o)
{
    for (size_t i = 0; o->boxes && o->boxes[i]; i++)
        free(o->boxes[i]);
    free(o->boxes);
    free(o->dirs);
    free(o->origins);
    free(o->pass_env);
    free(o->limits_given);
    th_config_free(o->settings);
    th_policy_unref(o->policy);
    th_ratelimit_free(o->limits);
    th_host_config_free();
    *o = (th_host_opts){0};
}
