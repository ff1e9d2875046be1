/* SPDX-License-Identifier: MIT */
/*
** host/options.h: the toolhost command's options as one table (options.c),
** from which getopt_long's array, --help, the [toolhost] keys of --config and
** the check of doc/toolhost.1 all come; and th_host_opts, what they set.
*/
#ifndef TH_HOST_OPTIONS_H
#define TH_HOST_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "plugin/loader.h"
#include "plugin/policy.h"
#include "plugin/settings.h"
#include "protocol/mcp.h"
#include "transport/http.h"
#include "transport/stdio.h"
#include "worker/scanner.h"
#include "worker/supervisor.h"

#define TH_HOST_MAX_TOOL_SCOPES 64

/* Everything the command line and --config decide. */
#define TH_HOST_ADDR_MAX 128

typedef struct th_host_opts {
    /* Plugins */
    const char **dirs;   /* --plugin-dir, pointing into argv (or TH_PLUGINDIR) */
    char **boxes;        /* toolbox of dirs[i], malloc'd; NULL-ended */
    size_t ndirs;
    bool qualified, strict, watch, lazy_load, isolate, use_cache;
    const char *cache_file; /* --registry-cache; NULL: the default path */
    const char **pass_env;  /* --pass-env lists, pointing into argv */
    size_t npass_env;
    const char *lock_file;  /* --lock: the pinned definitions; NULL: none */
    th_load_opts load;
    th_scan_opts scan;
    th_supervisor_opts sup;
    th_config *settings; /* per-plugin settings (plugin/settings.h) */
    th_policy *policy;   /* --tools, --exclude-tools, --read-only: what clients see */
    struct th_ratelimit *limits; /* --rate-limit and the like; NULL: none (nor --config) */
    struct th_host_limit {
        const char *option, *spec; /* "rate-limit", its argument (into argv) */
    } *limits_given;               /* as given, --config's [toolhost] first */
    size_t nlimits_given, nlimits_file; /* of which the first NLIMITS_FILE came from --config */
    /* Protocol */
    th_mcp_config cfg;
    th_stdio_opts stdio;
    /* Streamable HTTP */
    th_http_opts http;
    const char **origins; /* --http-allow-origin, pointing into argv */
    char http_addr[TH_HOST_ADDR_MAX];
    bool http_on, stdio_on, allow_unauth;
    bool passed_loopback; /* --http=systemd: the passed socket is loopback */
    const char *http_unix; /* --http unix:PATH: the socket to create, into argv; NULL: none */
    unsigned socket_mode;  /* --http-socket-mode: its permission bits */
    long long idle_exit_ms; /* --idle-exit: exit after this long with no client; 0: never */
    const char *auth_file, *jwks_file;
    const char *grants_claim; /* --auth-tools-claim */
    const char *tool_scopes[TH_HOST_MAX_TOOL_SCOPES]; /* "TOOL=SCOPE", into argv */
    size_t ntool_scopes;
    const char *caller_tools[TH_HOST_MAX_TOOL_SCOPES]; /* --auth-tools "SCOPE=GLOB,...", into argv */
    size_t ncaller_tools;
    /* Diagnostics, applied once the command line is read */
    bool metrics_on;       /* --metrics: count, and serve /metrics */
    bool metrics_own;      /* on a listener of its own, not --http's */
    char metrics_addr[TH_HOST_ADDR_MAX];
    unsigned metrics_port;
    const char *audit_file; /* --audit-log, or NULL */
    const char *otlp_endpoint; /* --otlp-endpoint URL, into argv; NULL: no spans */
    int log_level;  /* th_log_level, or -1 to leave it */
    int log_format; /* th_log_format, or -1 to leave it */
} th_host_opts;

/* How the parse ended: an exit status, or go on and serve. */
typedef enum th_host_parse_rc {
    TH_HOST_RUN = -1,  /* serve with the options read */
    TH_HOST_DONE = 0,  /* --help or --version was answered */
    TH_HOST_FATAL = 1, /* out of memory, or --http=systemd without its socket */
    TH_HOST_USAGE = 2, /* a message naming the option is on stderr */
} th_host_parse_rc;

/* What an option's argument is, and so how it is checked. */
typedef enum th_opt_kind {
    TH_OPT_SET,     /* a switch: VALUE is stored */
    TH_OPT_NUMBER,  /* a decimal from MIN to MAX, stored times SCALE */
    TH_OPT_SECONDS, /* seconds, fractions allowed, stored as ms; MIN 1: not 0 */
    TH_OPT_TEXT,    /* the argument; MIN 1: not empty */
    TH_OPT_CHOICE,  /* one of CHOICES, whose value is stored */
    TH_OPT_CALL,    /* PARSE checks and stores it */
} th_opt_kind;

/* The C type of the field an option sets. */
typedef enum th_opt_type { TH_OT_BOOL, TH_OT_INT, TH_OT_UINT, TH_OT_SIZE, TH_OT_LL, TH_OT_ULL, TH_OT_STR } th_opt_type;

typedef struct th_opt_choice {
    const char *name;
    long long value;
} th_opt_choice;

typedef struct th_option {
    const char *name;    /* the long name */
    char short_name;     /* or 0 */
    const char *arg;     /* the argument's name in --help and the man page; NULL: none */
    th_opt_kind kind;
    th_opt_type type;    /* of the field at OFFSET in th_host_opts */
    size_t offset;
    unsigned long long min, max, scale; /* SCALE 0: 1 */
    long long value;     /* TH_OPT_SET */
    const th_opt_choice *choices; /* TH_OPT_CHOICE, NULL-ended */
    const char *what;    /* TH_OPT_TEXT: what the argument names, in messages */
    th_host_parse_rc (*parse)(th_host_opts *o, const struct th_option *opt, const char *arg);
    const char *def;     /* the default, applied as if given first; NULL: none */
    const char *key;     /* the --config [toolhost] key: NULL the long name, "" none */
    const char *section; /* --help starts a section with this option */
    const char *help;    /* --help's text; lines after the first are indented */
} th_option;

/* The table, and its length. */
const th_option *th_host_options(size_t *n);

/* The option named NAME (long name), or NULL. */
const th_option *th_host_option_find(const char *name);

/* The option whose --config key is KEY, or NULL (also for a command-line-only one). */
const th_option *th_host_option_by_key(const char *key);

/*
** On SIGHUP: read --config's [toolhost] section again and put the limits
** it gives now (--rate-limit and the like), then the command line's, in
** place of those in force. False, the limits left as they were, after a
** message logged naming what failed. Without --config there is nothing to
** re-read: true.
*/
bool th_host_reload_limits(th_host_opts *o);

/* --help's text, from the table, to OUT. */
void th_host_usage(FILE *out);

/*
** Read the options in ARGV (after --config's expansion, host/confargs.c)
** into O, which is set to the table's defaults first. TH_HOST_RUN when the
** host should serve; otherwise an exit status, any message on stderr.
** Release O with th_host_opts_clear in every case.
*/
th_host_parse_rc th_host_parse(int argc, char **argv, th_host_opts *o);
void th_host_opts_clear(th_host_opts *o);

#endif
