/* SPDX-License-Identifier: MIT */
/*
** plugin/reload.h: hot reload's plugin-side half. The one pointer to the
** registry being served (swapped whole; readers keep the one they took), the
** comparison that decides whether clients are told, keeping a plugin's
** previous tools when its replacement is refused, and the watch thread that
** turns inotify events and SIGHUP into "rescan now".
*/
#ifndef TH_RELOAD_H
#define TH_RELOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "plugin/registry.h"

/* ---- the serving registry: one pointer, swapped whole ------------------ */

typedef struct th_regslot th_regslot;

/* A slot holding REG (a reference is taken). NULL when out of memory. */
th_regslot *th_regslot_new(th_registry *reg);
/* Drop the slot's reference. */
void th_regslot_free(th_regslot *slot);
/* The registry served now, with a new reference for the caller: it stays
 * valid (tools, plugin code) until the caller's unref, whatever is swapped
 * in meanwhile. */
th_registry *th_regslot_get(th_regslot *slot);
/* Serve REG from now on (a reference is taken); the previous registry's
 * slot reference is dropped, so it dies with its last reader. */
void th_regslot_swap(th_regslot *slot, th_registry *reg);

/* ---- building the next registry ---------------------------------------- */

/* Do A and B list the same tools, as a client sees them (names, titles,
 * descriptions, schemas, annotations), in whatever order? */
bool th_registry_same_tools(const th_registry *a, const th_registry *b);

/*
** A replacement of plugin ORIGIN was refused: add OLD's tools, resources and
** templates from ORIGIN to NEW as they are (borrowed: OLD stays alive while
** NEW does, and its plugin code with it), each logged with a warning.
** Returns how many were kept.
*/
size_t th_reload_keep_plugin(th_registry *newreg, th_registry *old, const char *origin);

/* Did OLD have tools, resources or templates from plugin ORIGIN? */
bool th_reload_had_plugin(const th_registry *old, const char *origin);

/* Do A and B list the same resources and resource templates, as a client
 * sees them, in whatever order? */
bool th_registry_same_resources(const th_registry *a, const th_registry *b);

/* ---- watching ---------------------------------------------------------- */

/* Rescan: build a new registry and swap it in. WHY names the cause, for
 * the log ("SIGHUP", "inotify: NAME.so"). Runs on the watch thread. */
typedef void (*th_rescan_fn)(void *ctx, const char *why);

typedef struct th_watch th_watch;

typedef struct th_watch_opts {
    const char *const *dirs; /* plugin directories (copied) */
    size_t ndirs;
    bool inotify;            /* --watch: follow DIRS with inotify */
    int hup_fd;              /* readable on SIGHUP (base/signals.h), or -1 */
    long long settle_ms;     /* quiet time after the last change, before a rescan */
    th_rescan_fn rescan;
    void *ctx;
} th_watch_opts;

/*
** Start the watch thread. A change to a NAME.so file in a directory is
** acted on once the file has stopped changing: written and closed
** (IN_CLOSE_WRITE), renamed in (IN_MOVED_TO) or removed, then SETTLE_MS
** without another event; a file still open for writing holds the rescan
** back. A SIGHUP rescans at once. NULL with ERR set on failure (naming the
** directory inotify refused).
*/
th_watch *th_watch_start(const th_watch_opts *opts, th_err *err);
/* Stop and join the thread (a rescan in progress finishes first). */
void th_watch_stop(th_watch *w);

#endif
