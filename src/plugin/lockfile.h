/* SPDX-License-Identifier: MIT */
/*
** plugin/lockfile.h: pinned definitions. A lock file records, per plugin,
** its file's SHA-256, its declared needs, and a hash of the canonical
** definition of each of its tools, prompts and resource templates. This
** builds one from a registry, reads and writes it, lists how a registry
** drifted from it, and withholds what drifted (doc/operations.md).
*/
#ifndef TH_LOCKFILE_H
#define TH_LOCKFILE_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "base/util.h"
#include "plugin/loader.h"
#include "plugin/registry.h"

/* The version of the format written, and the only one read. */
#define TH_LOCK_VERSION 1

/* A plugin file the lock may speak of: its path as listed, the SHA-256
 * of the bytes its definitions came from (th_sha256_digest's form; NULL
 * or "": the file is hashed now), and what it declared it needs (the
 * scan's JSON array of canonical strings, plugin/needs.h; NULL: none). */
typedef struct th_lock_file {
    const char *path;
    const char *digest;
    json_object *needs;
} th_lock_file;

/*
** The lock document of what REG serves from FILES[0..N): every plugin with
** something registered, keyed "TOOLBOX/NAME" (its toolbox in REG's naming,
** NAME of NAME.so), so a lock made on one machine holds on another. Each
** plugin object also carries its "path", which th_lock_write leaves out.
** NULL with ERR when out of memory or a file cannot be hashed.
*/
json_object *th_lock_build(const th_registry *reg, const th_lock_file *files, size_t n, th_err *err);

/*
** The needs plugin F declared (th_server_need), as a new JSON array of
** their canonical strings, sorted: the one place declared needs enter the
** lock, so that a plugin asking for more than was pinned is refused. A
** string that is not a canonical need is left out.
*/
json_object *th_lock_declared_needs(const th_lock_file *f);

/* Read and check the lock file PATH into *OUT. TH_ERR_IO when it cannot be
 * read, TH_ERR_VALUE (ERR naming the file and the field) when it is not a
 * lock of this version. */
th_rc th_lock_read(const char *path, json_object **out, th_err *err);

/* Write LOCK to PATH (through a new file renamed over it), keys sorted,
 * one field a line, without the plugins' paths. */
th_rc th_lock_write(const char *path, json_object *lock, th_err *err);

/* How what is served differs from the lock. */
typedef enum th_drift_kind {
    TH_DRIFT_CHANGED,      /* a pinned definition changed: refused */
    TH_DRIFT_NEW,          /* a tool, prompt or template not pinned: refused */
    TH_DRIFT_NEW_PLUGIN,   /* a plugin not pinned: refused whole */
    TH_DRIFT_NEEDS,        /* a plugin's needs differ: more than pinned is
                            * refused whole, fewer is a warning */
    TH_DRIFT_REMOVED,      /* pinned but no longer served: a warning */
    TH_DRIFT_GONE_PLUGIN,  /* a pinned plugin no longer served: a warning */
    TH_DRIFT_FILE,         /* the file's SHA-256 changed: a warning */
} th_drift_kind;

typedef struct th_drift {
    th_drift_kind kind;
    bool refused;    /* the host does not serve it */
    char *path;      /* the plugin file; NULL for a plugin no longer served */
    const char *section; /* "tools", "prompts", "resourceTemplates"; NULL: the plugin */
    char *name;      /* the tool's, prompt's or template's name, or NULL */
    char *text;      /* one line naming the plugin, the item, the fields
                      * and the old and new hashes */
} th_drift;

/*
** Compare NOW (th_lock_build) with PINNED (th_lock_read); LOCK_PATH names
** the lock in the texts. *OUT (free with th_drift_free) gets the
** differences in a stable order, *N their number. TH_ERR_NOMEM or TH_OK.
*/
th_rc th_lock_diff(json_object *pinned, json_object *now, const char *lock_path, th_drift **out, size_t *n);
void th_drift_free(th_drift *d, size_t n);

/*
** Log each of D[0..N) (refusals as errors, the rest as warnings) and take
** out of REG, not yet started, what they refuse: a drifted item, or every
** registration of a plugin refused whole. The refusals are counted in
** STATS. Returns the number of refusals.
*/
size_t th_lock_enforce(th_registry *reg, const th_drift *d, size_t n, th_load_stats *stats);

/* Take every plugin's registrations out of REG, counted as refused in
 * STATS: what a lock that could not be compared leaves served. */
void th_lock_withhold_all(th_registry *reg, th_load_stats *stats);

#endif
