/* SPDX-License-Identifier: MIT */
/*
** worker/rebuild.h: building the registry the plugin directories hold now,
** for a hot reload (--watch, SIGHUP): list, scan out of process (with the
** registry cache), then register through workers or in the host, exactly as
** start-up does, into a new registry that is swapped in whole.
*/
#ifndef TH_REBUILD_H
#define TH_REBUILD_H

#include <stdbool.h>
#include <stddef.h>

#include "plugin/loader.h"
#include "plugin/registry.h"
#include "worker/scanner.h"
#include "worker/supervisor.h"

typedef struct th_rebuild_opts {
    const char *const *dirs; /* the plugin directories, as at start-up */
    size_t ndirs;
    th_load_opts load;
    th_scan_opts scan;
    bool isolate;            /* --isolation=process: tools run in workers */
    th_supervisor_opts sup;  /* for the new registry's own supervisor */
    const char *cache_path;  /* the registry cache, or NULL for none */
    th_naming *naming;       /* toolboxes and qualified names, as at start-up */
} th_rebuild_opts;

/*
** A new, started registry of what the directories hold now. OLD (the one
** served) lends the tools of every plugin it served whose file is still
** listed but now refused (a broken replacement keeps serving its previous
** version; a removed file's tools go). GENERATION (> 0, new each time)
** makes in-host loads open replaced files afresh (th_loader_set_generation).
** In process mode the registry owns a new supervisor (*SUP, NULL in the
** host), freed with it. *SUP comes in as OLD's supervisor (or NULL): the
** workers of plugins whose files did not change move to the new one
** (th_supervisor_adopt); a worker of a replaced or removed plugin exits
** once the old registry's last call is done.
** NULL when the directories could not be listed or scanned (logged): then
** the caller keeps serving OLD.
*/
th_registry *th_rebuild(const th_rebuild_opts *opts, th_registry *old, unsigned long long generation,
                        th_supervisor **sup);

#endif
