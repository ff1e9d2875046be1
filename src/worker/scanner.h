/* SPDX-License-Identifier: MIT */
/*
** worker/scanner.h: opening plugins out of process. A scanner child loads the
** listed plugins one after another and reports each one's descriptors; a
** plugin that crashes, exits or hangs while loading is refused and named,
** and a new scanner goes on with the rest. No plugin code runs in the host.
*/
#ifndef TH_SCANNER_H
#define TH_SCANNER_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "plugin/cache.h"
#include "plugin/loader.h"
#include "worker/sandbox.h"

typedef struct th_scan_opts {
    th_load_opts load;
    long long load_timeout_ms; /* per plugin; 0: none */
    bool host_loads;           /* the host loads every accepted plugin itself
                                * right after (--isolation=none), applying the
                                * trust rule then: a cached plugin need not be
                                * checked twice */
    th_sandbox_opts sandbox;   /* the scanner runs under the strictest policy;
                                * a plugin granted more is scanned again alone
                                * under its own (th_sandbox_hello) */
    json_object *policy;       /* that rescan's policy; NULL: the strictest */
    int client_in;             /* the stdio client's input (0: none): its end,
                                * with no request left unread, stops the scan,
                                * since nobody is left to serve */
} th_scan_opts;

/* What the scan found for one plugin. */
typedef struct th_scanned {
    bool accepted;
    json_object *tools; /* array of descriptors (th_worker_describe); NULL if refused */
    json_object *needs; /* what the plugin declared (th_server_need): a sorted
                         * array of canonical strings ("read:/srv/data",
                         * plugin/needs.h); NULL if refused */
    size_t tools_refused; /* by the scanner's loader, already logged */
    size_t resources_refused; /* likewise, resources and templates */
    size_t prompts_refused;   /* likewise, prompts and completions */
    char *held; /* what a plugin that declared needs said in its first scan,
                 * logged unless a scan under its sandbox replaces it (owned) */
    size_t held_len;
    char digest[TH_SHA256_DIGEST_LEN + 1]; /* the SHA-256 of the file its
                               * tools were scanned from (the cache's
                               * binding); "" when unknown (no cache) */
} th_scanned;

/*
** Scan PATHS[0..N) (from th_loader_list_dirs). OUT gets N entries (free
** with th_scan_free). Refused plugins are counted in STATS
** (plugins_refused, and the tools they took with them). TH_OK,
** TH_ERR_NOMEM / TH_ERR_IO when no scanner could be started at all, or
** TH_ERR_CANCELLED when OPTS->client_in ended meanwhile.
*/
th_rc th_scan_plugins(char *const *paths, size_t n, const th_scan_opts *opts, th_scanned *out,
                      th_load_stats *stats);

/*
** th_scan_plugins with the registry cache CACHE (may be NULL: scan all): a
** plugin whose cache entry is fresh is not scanned, only checked against
** the trust rule (refused, logged and counted if it now fails it); the
** others are scanned, in one scanner child when any, and the clean
** acceptances among them put into CACHE. Tool names are owned by the whole
** list, as in a full scan. Same return values.
*/
th_rc th_scan_plugins_cached(char *const *paths, size_t n, const th_scan_opts *opts, th_cache *cache,
                             th_scanned *out, th_load_stats *stats);

void th_scan_free(th_scanned *s, size_t n);

/* The JSON array of PATHS, for a child's HELLO. */
json_object *th_scan_paths_json(char *const *paths, size_t n);

/* Put the load options a child's loader needs into its HELLO object, so the
 * scanner and every worker judge plugin files by the host's rules. */
void th_scan_hello_load_opts(json_object *hello, const th_load_opts *load);

/* Add load->config's settings to HELLO as "settings": those of plugin file
 * PATH only (a worker), or of every plugin (PATH NULL: the scanner, which
 * opens them all). Secrets travel only over the child's socket like this,
 * never in its arguments or environment. */
void th_scan_hello_settings(json_object *hello, const th_load_opts *load, const char *path);

#endif
