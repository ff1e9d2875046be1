/* SPDX-License-Identifier: MIT */
/*
** plugin/loader.h: turns directories of NAME.so files into registered tools. All
** directories are listed first (NAME.so owns the tool name NAME); then each
** plugin is dlopen()ed, its register_NAME_tool() called, and what it returns
** checked and registered, all of its tools or none; every refusal is logged
** with the file, the tool and the rule, and loading goes on with the next file.
*/
#ifndef TH_LOADER_H
#define TH_LOADER_H

#include <stdbool.h>
#include <stddef.h>

#include "plugin/registry.h"

typedef struct th_load_opts {
    bool follow_symlinks; /* load NAME.so that is a symbolic link, when
                           * its target is inside the plugin directory */
    bool dirs_required;   /* the user named the directories: one that cannot
                           * be read or is refused is fatal (an error,
                           * nothing is loaded) instead of a warning */
    bool allow_insecure;  /* let through, with a warning each, files and
                           * directories the trust rule (plugin/trust.h)
                           * refuses, and links that leave the directory */
    bool scanned;         /* the scanner already loaded these plugins and
                           * logged their tool refusals: count them again,
                           * but log them at debug level only */
    const struct th_config *config; /* per-plugin settings (plugin/settings.h)
                           * for th_server_config(); NULL: none. Borrowed. */
    const char *expect_digest; /* for a load of one plugin: the SHA-256
                           * (th_sha256_digest's form) of the bytes its
                           * listed tools were scanned from. The descriptor
                           * that is then dlopen()ed is hashed and another
                           * content refused before its code runs. NULL:
                           * not checked. Borrowed. */
    struct th_needs *needs; /* where th_server_need() keeps what the plugin
                           * declares (a scanner's or worker's load of one
                           * plugin); NULL: checked, not kept. Borrowed. */
    bool defer_needs;      /* the scanner's first pass, under the strictest
                           * sandbox: a plugin that has declared a need
                           * cannot have it yet, so what it logs after and
                           * its refusal are left to its second scan */
} th_load_opts;

/* Counters a load adds to (zero-initialise before the first load). */
typedef struct th_load_stats {
    size_t tools_loaded;
    size_t tools_refused;
    size_t plugins_loaded;
    size_t plugins_refused;
    size_t dirs_refused;
    size_t resources_refused; /* resources and templates, refused or discarded */
    size_t prompts_refused;   /* prompts and completions, likewise */
} th_load_stats;

/*
** List every NAME.so in DIRS (not recursive; each directory in strcmp order of
** the file names, directories in the given order; other files are ignored),
** then load them in that order. A tool name NAME may be registered only by
** the first NAME.so listed, when one is present. Paths are made absolute
** before any plugin runs. An empty directory gets a warning. A directory or
** plugin file that breaks the trust rule (plugin/trust.h) is refused unless
** opts->allow_insecure. Returns TH_OK when every directory could be read and
** was trusted (even if plugins were refused), TH_ERR_IO when one was not: it
** is counted in dirs_refused and logged, none of its files is loaded, and
** with opts->dirs_required no plugin is loaded at all.
*/
th_rc th_loader_load_dirs(th_registry *reg, const char *const *dirs, size_t ndirs, const th_load_opts *opts,
                          th_load_stats *stats);

/* th_loader_load_dirs with one directory. */
th_rc th_loader_load_dir(th_registry *reg, const char *dir, const th_load_opts *opts,
                         th_load_stats *stats);

/*
** The SHA-256 of the open regular file FD into OUT (th_sha256_digest's
** form). False, OUT "", when it cannot be read.
*/
bool th_loader_digest_fd(int fd, char *out);

/* Load one plugin file. Returns TH_OK when its tool was registered. */
th_rc th_loader_load_file(th_registry *reg, const char *path, const th_load_opts *opts,
                          th_load_stats *stats);

/*
** A plugin whose register function is linked into the program (a test
** program's, testing/) rather than opened from NAME.so: registered as
** th_loader_load_file registers a file, under the same rules with the same
** messages, the plugin named TH_LINKED_DIR "/NAME.so" in them. Checks on
** the file (name, trust, digest) have nothing to apply to; a NAME that
** cannot be part of register_NAME_tool is refused as a file's would be.
*/
#define TH_LINKED_DIR "(linked)"
typedef struct th_linked {
    const char *name;
    th_register_fn entry;
} th_linked;
th_rc th_loader_register_linked(th_registry *reg, const char *name, th_register_fn entry, const th_load_opts *opts,
                                th_load_stats *stats);

/*
** The listing phase of th_loader_load_dirs alone, for loading out of
** process: *PATHS (free with th_loader_paths_free) gets the absolute NAME.so
** paths in load order, *N their number. Same return values; with
** opts->dirs_required and an unreadable directory, nothing is listed.
*/
th_rc th_loader_list_dirs(const char *const *dirs, size_t ndirs, const th_load_opts *opts, th_load_stats *stats,
                          char ***paths, size_t *n);
void th_loader_paths_free(char **paths, size_t n);

/*
** Load PATHS[WHICH] exactly as th_loader_load_dirs would, the whole list
** deciding which plugin owns which tool name. TH_OK when it was accepted.
*/
th_rc th_loader_load_listed(th_registry *reg, char *const *paths, size_t n, size_t which, const th_load_opts *opts,
                            th_load_stats *stats);

/*
** The checks th_loader_load_file makes before any of the plugin's code runs
** (its file name, the symbolic link and trust rules), alone: for a plugin
** whose scan is cached, so that the trust rule still holds on every start.
** TH_OK, or the refusal is logged and counted as for a load.
*/
th_rc th_loader_check_plugin(const char *path, const th_load_opts *opts, th_load_stats *stats);

/*
** Judge the N plugin files PATHS now, as th_loader_load_listed would, and
** keep each verdict (the opened file, or the refusal's text) for the load
** of that path, which then logs and counts a refusal as usual. A worker
** calls it before its sandbox: a user namespace of its own sees every
** owner but itself as the overflow uid, so owners are judged outside it.
*/
void th_loader_prejudge(char *const *paths, size_t n, const th_load_opts *opts);

/*
** Between th_loader_dir_memo(true) and th_loader_dir_memo(false), on the
** calling thread, a plugin directory is walked and judged once and its
** verdict (the opened directory, or the refusal) serves every file in
** it: one pass over a listing, where 10,000 files in one directory would
** otherwise walk the same path from / 10,000 times. A later pass judges
** afresh, so a directory made writable is refused on the next reload.
*/
void th_loader_dir_memo(bool on);

/*
** Hot reload in the host (--isolation=none): loads after this call open
** each plugin under a name unique to GEN (0: its path, as at start-up), so
** a replaced file's new code is loaded rather than the copy already mapped
** under the same name. Called by the one thread that loads.
*/
void th_loader_set_generation(unsigned long long gen);

/*
** A plugin's registrations are one transaction, whoever registers them (the
** loader in the host, the supervisor or --lazy-load from a scan): the
** counts of what REG holds when the plugin starts, to keep or take back.
*/
typedef struct th_staged {
    size_t tools, resources, templates, prompts, completions;
} th_staged;
th_staged th_loader_stage(th_registry *reg);

/* Resources, templates, prompts and completions staged since FROM. */
size_t th_loader_staged_extras(th_registry *reg, const th_staged *from);

/* Log and take back all that was staged since FROM for the plugin at PATH,
 * counting it as refused in STATS (the plugin itself is not counted). */
void th_loader_discard(th_registry *reg, const th_staged *from, const char *path, th_load_stats *stats);

/*
** A scanned tool NAME of the plugin at PATH was refused with RC and ERR:
** logged, and counted in STATS. True when that refuses the whole plugin
** (NAME is the NAME of NAME.so: the tool the file promises), which the
** caller then discards.
*/
bool th_loader_tool_refused(const char *path, const char *name, th_rc rc, const th_err *err, th_load_stats *stats);

/* The total number of refusals in STATS (plugins, tools, directories). */
size_t th_load_stats_refusals(const th_load_stats *stats);

#endif
