/* SPDX-License-Identifier: MIT */
/*
** cli/lock.c: `toolhost lock --lock FILE`, which pins what the plugin
** directories serve now (plugin/lockfile.h), and `--check`, which lists
** how they drifted from FILE, for CI. Plugins are opened only by scanner
** processes, as inspect opens them.
*/
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "cli/cli.h"
#include "plugin/loader.h"
#include "plugin/lockfile.h"
#include "plugin/qualname.h"
#include "plugin/settings.h"
#include "worker/scanner.h"
#include "worker/spawn.h"
#include "worker/supervisor.h"

#ifndef TH_PLUGINDIR
#define TH_PLUGINDIR "/usr/local/lib/toolhost/plugins"
#endif

extern char **environ;

static const char lock_usage[] =
    "Usage: toolhost lock --lock=FILE [--check] [--plugin-dir=[BOX=]DIR]...\n"
    "                     [--config=FILE] [--set=NAME.KEY=VALUE]\n"
    "                     [--set-secret=NAME.KEY=VALUE] [--qualified-names]\n"
    "                     [--follow-symlinks] [--allow-insecure-plugins]\n"
    "Pin what toolhost would serve from the plugin directories (default: the\n"
    "plugin directory): write FILE with each plugin's SHA-256 and declared needs,\n"
    "and a hash of each tool's, prompt's and resource template's definition.\n"
    "toolhost --lock=FILE then serves only what FILE pins.\n"
    "--check writes nothing: it lists every difference between FILE and the\n"
    "plugins, one a line on stdout.\n"
    "The options mean what they mean to toolhost; a --config file's [toolhost]\n"
    "section gives plugin-dir, lock, qualified-names, follow-symlinks and\n"
    "allow-insecure-plugins, which the command line adds to or overrides.\n"
    "Exit status: 0 when FILE was written, or matches; 1 when it does not\n"
    "match (--check) or cannot be written; 2 on a usage error.\n";

/* What the command line and the --config file ask. */
typedef struct lock_args {
    const char *lock;
    bool check, qualified;
    char **dirs; /* [BOX=]DIR specs, borrowed */
    size_t ndirs;
    th_load_opts load;
    th_config *settings;
    char **config_opts; /* the --config file's [toolhost] options, owned */
    size_t nconfig;
} lock_args;

enum { L_LOCK = 256, L_CHECK, L_DIR, L_CONFIG, L_SET, L_SET_SECRET, L_QUALIFIED, L_FOLLOW, L_INSECURE };

static const struct option long_opts[] = {
    {"lock", required_argument, NULL, L_LOCK},
    {"check", no_argument, NULL, L_CHECK},
    {"plugin-dir", required_argument, NULL, L_DIR},
    {"config", required_argument, NULL, L_CONFIG},
    {"set", required_argument, NULL, L_SET},
    {"set-secret", required_argument, NULL, L_SET_SECRET},
    {"qualified-names", no_argument, NULL, L_QUALIFIED},
    {"follow-symlinks", no_argument, NULL, L_FOLLOW},
    {"allow-insecure-plugins", no_argument, NULL, L_INSECURE},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* The [toolhost] keys that decide what is served; the file's others
 * (transports, limits) do not enter a lock and are left alone. */
static bool config_key_used(const char *opt)
{
    static const char *const keys[] = {"lock", "plugin-dir", "qualified-names", "follow-symlinks",
                                       "allow-insecure-plugins"};
    size_t len = strcspn(opt + 2, "=");
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (strlen(keys[i]) == len && strncmp(opt + 2, keys[i], len) == 0)
            return true;
    return false;
}

/* One option; false (a message on stderr) for a usage error. */
static bool take(lock_args *a, int c, char *arg)
{
    th_err err;
    switch (c) {
    case L_LOCK:
        a->lock = arg;
        if (*arg)
            return true;
        fputs("toolhost lock: --lock: the lock file must not be empty\n", stderr);
        return false;
    case L_CHECK: a->check = true; return true;
    case L_DIR: a->dirs[a->ndirs++] = arg; return true;
    case L_CONFIG: return true; /* read first (read_config) */
    case L_QUALIFIED: a->qualified = true; return true;
    case L_FOLLOW: a->load.follow_symlinks = true; return true;
    case L_INSECURE: a->load.allow_insecure = true; return true;
    case L_SET:
    case L_SET_SECRET:
        if (th_config_set_arg(a->settings, arg, c == L_SET_SECRET, &err) == TH_OK)
            return true;
        fprintf(stderr, "toolhost lock: --%s: %s\n", c == L_SET ? "set" : "set-secret", err.msg);
        return false;
    default: return false;
    }
}

/* --config first, as the host reads it: its [toolhost] options go before
 * the command line's. */
static bool read_config(lock_args *a, int argc, char **argv)
{
    int c;
    th_err err;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", long_opts, NULL)) != -1)
        if (c == L_CONFIG && th_config_load_file(a->settings, optarg, &a->config_opts, &a->nconfig, &err) != TH_OK) {
            fprintf(stderr, "toolhost lock: %s\n", err.msg);
            return false;
        }
    opterr = 1;
    return true;
}

/* 0 to go on, else the exit status (--help: 0 via *DONE). */
static int parse(lock_args *a, int argc, char **argv, bool *done)
{
    *done = false;
    if (!(a->settings = th_config_new()) || !read_config(a, argc, argv))
        return a->settings ? 2 : 1;
    /* argv[0], the config file's options, then the command line's. */
    size_t n = 1;
    char **all = calloc((size_t)argc + a->nconfig + 1, sizeof *all);
    a->dirs = calloc((size_t)argc + a->nconfig + 1, sizeof *a->dirs);
    if (!all || !a->dirs) {
        free(all);
        return 1;
    }
    all[0] = argv[0];
    for (size_t i = 0; i < a->nconfig; i++)
        if (config_key_used(a->config_opts[i]))
            all[n++] = a->config_opts[i];
    for (int i = 1; i < argc; i++)
        all[n++] = argv[i];
    int c, status = 0;
    optind = 1;
    while (status == 0 && (c = getopt_long((int)n, all, "h", long_opts, NULL)) != -1) {
        if (c == 'h') {
            fputs(lock_usage, stdout);
            *done = true;
            break;
        }
        status = take(a, c, optarg) ? 0 : 2;
    }
    if (status == 0 && !*done && optind < (int)n) {
        fprintf(stderr, "toolhost lock: unexpected argument '%s'\n", all[optind]);
        status = 2;
    }
    if (status == 0 && !*done && !a->lock) {
        fputs("toolhost lock: --lock=FILE is required\n", stderr);
        status = 2;
    }
    free(all);
    if (status == 2)
        fputs("Try 'toolhost lock --help' for more information.\n", stderr);
    return status;
}

static void args_clear(lock_args *a)
{
    for (size_t i = 0; i < a->nconfig; i++)
        free(a->config_opts[i]);
    free(a->config_opts);
    free(a->dirs);
    th_config_free(a->settings);
}

/* What the host would serve: listed and scanned as it does, registered
 * as proxies (no worker starts), in *REG. */
typedef struct served {
    th_naming *naming;
    char **paths;
    size_t n;
    th_scanned *scanned;
    th_registry *reg;
    th_supervisor *sup;
} served;

static bool name_dirs(const lock_args *a, served *s, const char **dirs)
{
    th_err err;
    for (size_t i = 0; i < a->ndirs; i++) {
        char *box = NULL;
        bool ok = th_naming_split_spec(a->dirs[i], &box, &dirs[i], &err) == TH_OK &&
                  th_naming_add(s->naming, box, dirs[i], &err) == TH_OK;
        free(box);
        if (!ok) {
            fprintf(stderr, "toolhost lock: --plugin-dir %s: %s\n", a->dirs[i], err.msg);
            return false;
        }
    }
    return true;
}

static bool build(lock_args *a, served *s, th_load_stats *stats)
{
    const char *one[] = {TH_PLUGINDIR};
    const char **dirs = a->ndirs ? calloc(a->ndirs, sizeof *dirs) : one;
    th_err err;
    bool ok = dirs && (s->naming = th_naming_new(a->qualified)) != NULL;
    if (ok && !a->ndirs)
        ok = th_naming_add(s->naming, TH_DEFAULT_TOOLBOX, one[0], &err) == TH_OK;
    else if (ok)
        ok = name_dirs(a, s, dirs);
    a->load.dirs_required = a->ndirs > 0;
    a->load.config = a->settings;
    th_scan_opts scan = {.load = a->load, .load_timeout_ms = 10000};
    th_supervisor_opts sup = {.load = a->load, .cancel_grace_ms = 5000, .start_timeout_ms = 10000};
    th_rc rc = ok ? th_loader_list_dirs(dirs, a->ndirs ? a->ndirs : 1, &a->load, stats, &s->paths, &s->n) : TH_OK;
    ok = ok && (rc == TH_OK || (!a->load.dirs_required && rc == TH_ERR_IO));
    if (ok) {
        th_config_load_env(a->settings, s->paths, s->n, environ);
        ok = (s->scanned = calloc(s->n + 1, sizeof *s->scanned)) &&
             th_scan_plugins(s->paths, s->n, &scan, s->scanned, stats) == TH_OK && (s->reg = th_registry_new()) &&
             th_registry_set_naming(s->reg, s->naming) == TH_OK && (s->sup = th_supervisor_new(s->paths, s->n, &sup));
    }
    if (ok)
        th_supervisor_register(s->sup, s->reg, s->scanned, stats);
    if (dirs != one)
        free(dirs);
    if (!ok)
        fputs("toolhost lock: cannot list and scan the plugins (see above)\n", stderr);
    return ok;
}

static void served_free(served *s)
{
    th_registry_unref(s->reg);
    th_supervisor_free(s->sup);
    if (s->scanned)
        th_scan_free(s->scanned, s->n);
    free(s->scanned);
    th_loader_paths_free(s->paths, s->n);
    th_naming_unref(s->naming);
}

/* --check: each difference on stdout; 1 when there is any. */
static int check(const char *lock, json_object *now)
{
    json_object *pinned = NULL;
    th_drift *d = NULL;
    size_t n = 0;
    th_err err;
    if (th_lock_read(lock, &pinned, &err) != TH_OK) {
        fprintf(stderr, "toolhost lock: %s\n", err.msg);
        return 2;
    }
    int status = 1;
    if (th_lock_diff(pinned, now, lock, &d, &n) != TH_OK) {
        fputs("toolhost lock: out of memory\n", stderr);
        goto cleanup;
    }
    for (size_t i = 0; i < n; i++)
        printf("%s\n", d[i].text);
    if (n)
        printf("%zu difference%s from the lock %s\n", n, n == 1 ? "" : "s", lock);
    else
        printf("the plugins match the lock %s\n", lock);
    status = n ? 1 : 0;

cleanup:
    th_drift_free(d, n);
    json_object_put(pinned);
    return status;
}

static th_lock_file *files_of(const served *s)
{
    th_lock_file *files = calloc(s->n + 1, sizeof *files);
    for (size_t i = 0; files && i < s->n; i++)
        files[i] = (th_lock_file){s->paths[i], s->scanned[i].digest, s->scanned[i].needs};
    return files;
}

int th_cli_lock(int argc, char **argv)
{
    lock_args a = {0};
    served s = {0};
    th_load_stats stats = {0};
    th_lock_file *files = NULL;
    json_object *now = NULL;
    th_err err;
    bool done;
    int status = parse(&a, argc, argv, &done);
    if (status != 0 || done)
        goto cleanup;
    status = 1;
    if (!th_spawn_init()) {
        fprintf(stderr, "toolhost lock: cannot find the host's own executable: %s\n", strerror(errno));
        goto cleanup;
    }
    th_log_set_threshold(TH_LOG_WARNING); /* refusals, not every registration */
    if (!build(&a, &s, &stats))
        goto cleanup;
    if (!(files = files_of(&s)) || !(now = th_lock_build(s.reg, files, s.n, &err))) {
        fprintf(stderr, "toolhost lock: %s\n", files ? err.msg : "out of memory");
        goto cleanup;
    }
    if (a.check) {
        status = check(a.lock, now);
    } else if (th_lock_write(a.lock, now, &err) != TH_OK) {
        fprintf(stderr, "toolhost lock: %s\n", err.msg);
    } else {
        fprintf(stderr, "toolhost lock: wrote %s: %d plugin%s\n", a.lock,
                json_object_object_length(json_object_object_get(now, "plugins")),
                json_object_object_length(json_object_object_get(now, "plugins")) == 1 ? "" : "s");
        status = 0;
    }

cleanup:
    json_object_put(now);
    free(files);
    served_free(&s);
    args_clear(&a);
    return status;
}
