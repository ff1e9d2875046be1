/* SPDX-License-Identifier: MIT */
/*
** plugin/lazy.h: --lazy-load for --isolation=none: a plugin's tools are
** registered from its scan (or the registry cache) without opening it, and
** the plugin is dlopen()ed in the host on the first call of one of them.
*/
#ifndef TH_LAZY_H
#define TH_LAZY_H

#include <stddef.h>

#include <json-c/json.h>

#include "plugin/loader.h"

typedef struct th_lazy_set th_lazy_set;

/*
** A set for the plugin list PATHS[0..N) (copied: the whole list decides
** which file owns which tool name when one is opened later) and load
** options OPTS (copied). NULL when out of memory. Each registered tool
** holds a reference; th_lazy_set_unref drops the caller's.
*/
th_lazy_set *th_lazy_set_new(char *const *paths, size_t n, const th_load_opts *opts);
void th_lazy_set_unref(th_lazy_set *set);

/*
** Register in REG the tools TOOLS (a scan's descriptor array) of the
** accepted plugin PATHS[WHICH], each with a handler that opens the plugin
** on its first call (once for all its tools, under a lock) and then calls
** the tool the plugin registered. A file that changed since (size, mtime,
** inode) is opened all the same, but a tool whose name or schemas no
** longer match what was listed fails its calls with a message saying so.
** Counts into STATS like a load; the registry's rules apply as in
** th_supervisor_register (a refused own tool refuses the plugin).
*/
void th_lazy_register(th_lazy_set *set, th_registry *reg, size_t which, json_object *tools, th_load_stats *stats);

/* PATHS[WHICH] is opened only if its bytes have the SHA-256 DIGEST (the
 * bytes its listed tools were scanned from; NULL or "": not checked). */
void th_lazy_expect(th_lazy_set *set, size_t which, const char *digest);

#endif
