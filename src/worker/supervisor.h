/* SPDX-License-Identifier: MIT */
/*
** worker/supervisor.h: the host side of --isolation=process. Every scanned
** tool is registered with a proxy handler; a plugin's worker process is
** started on the first call of one of its tools, calls cross the socket,
** and a worker that dies fails the calls it was running, is restarted with
** backoff, and is quarantined when it keeps crashing.
*/
#ifndef TH_SUPERVISOR_H
#define TH_SUPERVISOR_H

#include <stddef.h>

#include "plugin/loader.h"
#include "plugin/registry.h"
#include "worker/scanner.h"

typedef struct th_supervisor_opts {
    th_load_opts load;
    unsigned long long memory_limit; /* RLIMIT_AS of a worker; 0: none */
    unsigned long long max_files;    /* RLIMIT_NOFILE of a worker; 0: inherited */
    size_t max_result_bytes;         /* a worker's results are held to it too */
    size_t threads;                  /* a worker's call threads */
    long long cancel_grace_ms;       /* after CANCEL, before SIGKILL */
    long long start_timeout_ms;      /* a worker's load, before READY */
    th_sandbox_opts sandbox;         /* each worker's sandbox */
    long long busy_poll_us;          /* a waiting call polls its worker's
                                      * answer this long before it sleeps */
} th_supervisor_opts;

typedef struct th_supervisor th_supervisor;

/* A supervisor for the plugins PATHS[0..N) (copied). NULL when out of memory. */
th_supervisor *th_supervisor_new(char *const *paths, size_t n, const th_supervisor_opts *opts);

/*
** Register the tools SCANNED reports (N entries, as PATHS) in REG, each with
** the proxy handler; the registry rules decide as for in-process tools, with
** the same messages. Counts plugins and tools in STATS.
*/
void th_supervisor_register(th_supervisor *sup, th_registry *reg, const th_scanned *scanned, th_load_stats *stats);
/* The same, the plugins taken in ORDER (N indexes into PATHS; NULL: as
 * listed): a reload registers the plugins that served before first. */
void th_supervisor_register_in(th_supervisor *sup, th_registry *reg, const th_scanned *scanned,
                               th_load_stats *stats, const size_t *order);

/*
** Hot reload: every plugin of SUP (just registered) whose file is the one
** a slot of PREV (the supervisor of the registry served so far) was made
** for, unchanged (inode, size, mtime), takes that slot's running worker and
** crash history over, so its next call neither waits for a start nor loses
** the worker's warm state. A worker serving fewer tools than SUP registered
** for the file stays with PREV (SUP starts its own). PREV's calls under way
** finish on the worker they hold. Returns how many workers moved.
*/
size_t th_supervisor_adopt(th_supervisor *sup, th_supervisor *prev);

/* Kill every worker (calls running in them fail). Before th_mcp_free. */
void th_supervisor_stop(th_supervisor *sup);

/* Stop, wait for the supervisor's threads, free. After the registry. */
void th_supervisor_free(th_supervisor *sup);

#endif
