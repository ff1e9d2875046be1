/*
** loader.h: turns a directory of NAME.so files into registered tools. Each
** plugin is dlopen()ed, its register_NAME_tool() called, and what it returns
** checked and registered; every refusal is logged with the file, the tool and
** the rule, and loading goes on with the next file.
*/
#ifndef TH_LOADER_H
#define TH_LOADER_H

#include <stdbool.h>
#include <stddef.h>

#include "registry.h"

typedef struct th_load_opts {
    bool follow_symlinks; /* load NAME.so that is a symbolic link */
} th_load_opts;

/* Counters a load adds to (zero-initialise before the first load). */
typedef struct th_load_stats {
    size_t tools_loaded;
    size_t tools_refused;
    size_t plugins_loaded;
    size_t plugins_refused;
    size_t dirs_refused;
} th_load_stats;

/*
** Load every NAME.so in DIR (not recursive), in strcmp order of the file
** names; other files are ignored. Returns TH_OK when the directory could be
** read (even if plugins were refused), TH_ERR_IO when it could not.
*/
th_rc th_loader_load_dir(th_registry *reg, const char *dir, const th_load_opts *opts,
                         th_load_stats *stats);

/* Load one plugin file. Returns TH_OK when its tool was registered. */
th_rc th_loader_load_file(th_registry *reg, const char *path, const th_load_opts *opts,
                          th_load_stats *stats);

/* The total number of refusals in STATS (plugins, tools, directories). */
size_t th_load_stats_refusals(const th_load_stats *stats);

#endif
