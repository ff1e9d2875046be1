/* SPDX-License-Identifier: MIT */
/*
** host/start.h: building the registry the plugin directories hold now, one
** path for start-up and for every reload (--watch, SIGHUP): list, scan out
** of process (with the registry cache), then register through workers or in
** the host, into a new registry that is served, or swapped in whole.
*/
#ifndef TH_HOST_START_H
#define TH_HOST_START_H

#include <stdbool.h>
#include <stddef.h>

#include "plugin/loader.h"
#include "plugin/policy.h"
#include "plugin/registry.h"
#include "plugin/settings.h"
#include "worker/scanner.h"
#include "worker/supervisor.h"

typedef struct th_start_opts {
    const char *const *dirs; /* the plugin directories */
    size_t ndirs;
    th_load_opts load;
    th_scan_opts scan;
    bool isolate;            /* --isolation=process: tools run in workers */
    bool lazy;               /* --lazy-load: open each plugin at its first call
                              * (start-up only: a reload loads eagerly) */
    th_supervisor_opts sup;  /* for the new registry's own supervisor */
    const char *cache_path;  /* the registry cache, or NULL for none */
    th_naming *naming;       /* toolboxes and qualified names */
    th_policy *policy;       /* what clients may see (NULL: everything) */
    th_config *settings;     /* start-up adds the environment's settings of
                              * the plugins found (TOOLHOST_NAME_KEY) */
    const char *lock_path;   /* --lock: serve only what it pins, read
                              * afresh by every build; NULL: no lock */
    const th_linked *linked; /* register functions linked into the program,
                              * registered after the files (in the host
                              * only: a worker is another program) */
    size_t nlinked;
} th_start_opts;

struct th_host_opts;

/*
** The build options the command line O gives (host/options.h), with
** NAMING and CACHE_PATH (borrowed, may be NULL): the same for the serving
** host and for a host inside a test program (testing/). The stdio client's
** input (scan.client_in) is left 0 for the caller.
*/
void th_start_opts_from(const struct th_host_opts *o, th_naming *naming, const char *cache_path,
                        th_start_opts *out);

/*
** A new, started registry of what the directories hold now, in *REG.
** OLD is NULL at start-up; on a reload it is the registry served, which
** lends the tools of every plugin it served whose file is still listed but
** now refused (a broken replacement keeps serving its previous version; a
** removed file's tools go), and whose plugins register first, so a name
** brought in twice stays where it was. GENERATION (> 0 on a reload, new
** each time) makes in-host loads open replaced files afresh
** (th_loader_set_generation). In process mode the registry owns a new
** supervisor (*SUP, NULL in the host), freed with it. *SUP comes in as
** OLD's supervisor (or NULL): the workers of plugins whose files did not
** change move to the new one (th_supervisor_adopt); a worker of a replaced
** or removed plugin exits once the old registry's last call is done.
** With a lock (OPTS->lock_path), read before anything is listed, what
** drifted from it is taken out before the registry is started (one check
** for start-up and every reload).
** STATS (zeroed here) counts what was loaded and refused.
** TH_OK; TH_ERR_CANCELLED when the stdio client left during the scan; or
** another code when the lock could not be read or the directories could
** not be listed or scanned (logged,
** saying the host exits or, on a reload, keeps serving OLD).
*/
th_rc th_host_start(const th_start_opts *opts, th_registry *old, unsigned long long generation,
                    th_supervisor **sup, th_load_stats *stats, th_registry **reg);

#endif
