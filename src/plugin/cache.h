/* SPDX-License-Identifier: MIT */
/*
** plugin/cache.h: the registry cache (like GStreamer's registry.bin): what a
** scan found for each accepted plugin file, keyed by the file's path, size,
** mtime (ns), inode and device, so an unchanged plugin is not scanned again,
** and bound to the SHA-256 of the bytes scanned: whoever loads the plugin
** later checks that digest on what it loads (th_load_opts.expect_digest).
** Only clean acceptances are kept; a refusal is rescanned on every start.
*/
#ifndef TH_CACHE_H
#define TH_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "base/sha256.h"
#include "plugin/loader.h"

typedef struct th_cache th_cache;

/* What identifies one version of a plugin file (stat of its path). */
typedef struct th_cache_key {
    bool valid; /* false: the file could not be stat()ed, or the plugin has
                 * a secret setting: never fresh, never written */
    long long size, mtime_ns, ctime_ns;
    unsigned long long ino, dev;
    unsigned long long settings; /* th_config_digest of its settings: they
                                  * can change what register does */
    char digest[TH_SHA256_DIGEST_LEN + 1]; /* of its bytes; "" until
                                  * th_cache_key_digest */
} th_cache_key;

/*
** The default cache file for plugin directories DIRS:
** $XDG_CACHE_HOME/toolhost/registry-HASH.json, else ~/.cache/toolhost/...,
** HASH a digest of the absolute directory list. malloc'd; NULL when neither
** variable is set (errno ENOENT: then there is no cache), the working
** directory cannot be read for a relative DIR, or out of memory (ENOMEM).
*/
char *th_cache_default_path(const char *const *dirs, size_t ndirs);

/*
** The same for directories in toolboxes: TOOLBOXES[i] (NULL, or an entry
** NULL or TH_DEFAULT_TOOLBOX: none) names DIRS[i]'s toolbox, and the names
** and QUALIFIED enter the digest, so each naming has a cache file of its
** own. Plain directories get th_cache_default_path's file.
*/
char *th_cache_default_path_named(const char *const *dirs, const char *const *toolboxes, size_t ndirs,
                                  bool qualified);

/*
** Open the cache at PATH for a load with OPTS (kept with the entries: a
** change of a load option that changes the outcome empties the cache).
** A missing file is an empty cache; a corrupt one, or one written by
** another toolhost (version, plugin ABI, executable), is ignored with a
** warning naming it and rewritten by th_cache_save. NULL only when out of
** memory.
*/
th_cache *th_cache_open(const char *path, const th_load_opts *opts);
void th_cache_free(th_cache *c);

/* The key of PLUGIN as it is now. */
th_cache_key th_cache_key_of(const char *plugin);

/*
** The key of PLUGIN as it is now, with the settings it would be loaded
** with: a change of a non-secret setting makes the entry stale. A plugin
** with a secret setting gets an invalid key, so it is scanned on every
** start and not written: the file holds neither a secret nor its digest.
*/
th_cache_key th_cache_key_with(const char *plugin, const struct th_config *settings);

/*
** Hash PLUGIN's bytes into KEY->digest, for a plugin about to be scanned
** (a warm start hashes nothing: the load checks the digest). A file that
** is no longer the one KEY describes makes KEY invalid. False then.
*/
bool th_cache_key_digest(th_cache_key *key, const char *plugin);

/*
** The descriptors (a JSON array as the scanner reports them; borrowed, valid
** until th_cache_free) cached for PLUGIN when its entry's key equals KEY,
** else NULL; *DIGEST (borrowed likewise) then gets the SHA-256 they were
** scanned from. A hit keeps the entry for the next save.
*/
json_object *th_cache_lookup(th_cache *c, const char *plugin, const th_cache_key *key, const char **digest);

/* Remember TOOLS (a new reference is taken) for PLUGIN as it was at KEY
 * (taken, digest too, before it was scanned, so a change during the scan
 * is noticed). Nothing is kept without a digest. */
void th_cache_put(th_cache *c, const char *plugin, const th_cache_key *key, json_object *tools);

/* The declared needs (plugin/needs.h) kept with PLUGIN's entry, looked up
 * or put since th_cache_open: set after th_cache_put, read after a hit of
 * th_cache_lookup (borrowed; NULL: none kept). */
void th_cache_put_needs(th_cache *c, const char *plugin, json_object *needs);
json_object *th_cache_needs(th_cache *c, const char *plugin);

/*
** Write the entries looked up or put since th_cache_open (others are
** dropped: plugins no longer listed), if anything changed: a temporary file
** in the same directory (created 0700 if missing), mode 0600, then renamed
** over PATH, so a reader sees the old or the new cache, never half of one.
** TH_OK, or an error with ERR naming the file.
*/
th_rc th_cache_save(th_cache *c, th_err *err);

#endif
