/* SPDX-License-Identifier: MIT */
/*
** testing/host.c: a host inside a test program (toolhost/testing.h). The
** top layer beside main.c: it reads toolhost's own option table and builds
** the registry through host/start.c, so a plugin is scanned, trusted,
** registered or refused exactly as a serving toolhost does it.
*/
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "call/crashnote.h"
#include "host/options.h"
#include "host/start.h"
#include "plugin/qualname.h"
#include "testing/kit.h"
#include "worker/spawn.h"

/* Where `make install` put toolhost; TOOLHOST_TEST_EXE overrides it. */
#ifndef TH_BINDIR
#define TH_BINDIR "/usr/bin"
#endif

struct th_test_host {
    char **argv; /* "toolhost", the caller's options, "--plugin-dir=DIR" */
    int argc;
    th_host_opts opts;
    char dir[64]; /* the private plugin directory */
    char **files; /* the copies in it, to remove at the end */
    size_t nfiles;
    th_linked *linked; /* register functions of the test program */
    size_t nlinked;
    th_naming *naming;
    th_registry *reg;
    th_supervisor *sup;
    int started; /* 0: not yet; 1: every plugin accepted; -1: not */
    pthread_mutex_t lock; /* the log, written from worker relay threads */
    char *log;
    size_t loglen;
};

/* Kept for the warnings and errors only: what a test may want to match. */
static void sink(th_log_level level, const char *line, void *ctx)
{
    th_test_host *h = ctx;
    if (level < TH_LOG_WARNING)
        return;
    size_t n = strlen(line);
    pthread_mutex_lock(&h->lock);
    char *grown = realloc(h->log, h->loglen + n + 2);
    if (grown) {
        memcpy(grown + h->loglen, line, n);
        h->loglen += n;
        if (n == 0 || line[n - 1] != '\n')
            grown[h->loglen++] = '\n';
        grown[h->loglen] = '\0';
        h->log = grown;
    }
    pthread_mutex_unlock(&h->lock);
}

static void note(th_test_host *h, const char *fmt, const char *a, const char *b)
{
    char line[PATH_MAX + 256];
    snprintf(line, sizeof line, fmt, a, b);
    sink(TH_LOG_ERROR, line, h);
}

/* Once per process: workers and scanners are the toolhost executable. */
static bool spawn_ready(th_test_host *h)
{
    static int ready; /* 0: not tried; 1: done; -1: failed */
    if (ready == 0) {
        const char *exe = getenv("TOOLHOST_TEST_EXE");
        if (!exe || !*exe)
            exe = TH_BINDIR "/toolhost";
        ready = access(exe, X_OK) == 0 && th_spawn_init_exe(exe) ? 1 : -1;
        if (ready < 0)
            note(h, "toolhost-testing: cannot run %s: %s (set TOOLHOST_TEST_EXE)", exe, strerror(errno));
    }
    return ready > 0;
}

static bool add_arg(th_test_host *h, const char *arg)
{
    char **grown = realloc(h->argv, (size_t)(h->argc + 2) * sizeof *grown);
    if (!grown)
        return false;
    h->argv = grown;
    if (!(h->argv[h->argc] = strdup(arg)))
        return false;
    h->argv[++h->argc] = NULL;
    return true;
}

th_test_host *th_test_host_new(const char *const *args)
{
    th_test_host *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    pthread_mutex_init(&h->lock, NULL);
    snprintf(h->dir, sizeof h->dir, "/tmp/toolhost-test-XXXXXX");
    char dirarg[sizeof h->dir + 16];
    bool ok = mkdtemp(h->dir) && add_arg(h, "toolhost");
    for (size_t i = 0; ok && args && args[i]; i++)
        ok = add_arg(h, args[i]);
    snprintf(dirarg, sizeof dirarg, "--plugin-dir=%s", h->dir);
    ok = ok && add_arg(h, dirarg);
    if (!ok) {
        fprintf(stderr, "toolhost-testing: cannot set up: %s\n", strerror(errno));
        th_test_host_free(h);
        return NULL;
    }
    if (th_host_parse(h->argc, h->argv, &h->opts) != TH_HOST_RUN) {
        th_test_host_free(h);
        return NULL;
    }
    th_log_set_sink(sink, h);
    return h;
}

void th_test_host_free(th_test_host *h)
{
    if (!h)
        return;
    if (h->sup)
        th_supervisor_stop(h->sup); /* calls still waiting on a worker end now */
    th_registry_unref(h->reg);
    th_naming_unref(h->naming);
    if (h->argv)
        th_log_set_sink(NULL, NULL);
    th_host_opts_clear(&h->opts);
    for (size_t i = 0; i < h->nfiles; i++) {
        unlink(h->files[i]);
        free(h->files[i]);
    }
    free(h->files);
    for (size_t i = 0; i < h->nlinked; i++)
        free((char *)h->linked[i].name);
    free(h->linked);
    if (h->dir[0] == '/')
        rmdir(h->dir);
    for (int i = 0; i < h->argc; i++)
        free(h->argv[i]);
    free(h->argv);
    free(h->log);
    pthread_mutex_destroy(&h->lock);
    free(h);
}

/* Copy FROM to TO, executable, as make install would. */
static bool copy_file(const char *from, const char *to)
{
    int in = open(from, O_RDONLY | O_CLOEXEC), out = -1;
    bool ok = in >= 0 && (out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755)) >= 0;
    char buf[65536];
    ssize_t got = 0;
    while (ok && (got = read(in, buf, sizeof buf)) > 0)
        ok = write(out, buf, (size_t)got) == got;
    ok = ok && got == 0;
    if (in >= 0)
        close(in);
    if (out >= 0 && close(out) != 0)
        ok = false;
    return ok;
}

int th_test_host_load(th_test_host *h, const char *path)
{
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    char to[PATH_MAX];
    if (h->started) {
        note(h, "toolhost-testing: %s: the host has started already: load every plugin first%s", path, "");
        return -1;
    }
    char **grown = realloc(h->files, (h->nfiles + 1) * sizeof *grown);
    if (!grown)
        return -1;
    h->files = grown;
    if ((size_t)snprintf(to, sizeof to, "%s/%s", h->dir, base) >= sizeof to || !copy_file(path, to)) {
        note(h, "toolhost-testing: cannot copy %s: %s", path, strerror(errno));
        return -1;
    }
    if (!(h->files[h->nfiles] = strdup(to)))
        return -1;
    h->nfiles++;
    return 0;
}

int th_test_host_register(th_test_host *h, const char *name, th_register_fn entry)
{
    if (h->started) {
        note(h, "toolhost-testing: register_%s_tool: the host has started already: add every plugin first%s", name,
             "");
        return -1;
    }
    if (h->opts.isolate) {
        note(h,
             "toolhost-testing: register_%s_tool: a function linked into the test cannot run in a worker "
             "(--isolation=process starts toolhost, which opens plugin files only): load %s.so, or give "
             "--isolation=none",
             name, name);
        return -1;
    }
    th_linked *grown = realloc(h->linked, (h->nlinked + 1) * sizeof *grown);
    if (!grown)
        return -1;
    h->linked = grown;
    if (!(h->linked[h->nlinked].name = strdup(name)))
        return -1;
    h->linked[h->nlinked++].entry = entry;
    return 0;
}

/* Toolboxes as the serving host fixes them (host/serve.c): before any
 * plugin code runs. */
static bool fix_toolboxes(th_test_host *h)
{
    th_err err;
    if (!(h->naming = th_naming_new(h->opts.qualified)))
        return false;
    for (size_t i = 0; i < h->opts.ndirs; i++)
        if (th_naming_add(h->naming, h->opts.boxes[i], h->opts.dirs[i], &err) != TH_OK) {
            note(h, "toolhost-testing: --plugin-dir %s: %s", h->opts.dirs[i], err.msg);
            return false;
        }
    return true;
}

/* host/start.c installs the host's stop handlers between plugins: a test
 * program keeps its own, which its framework may rely on. */
static const int kept_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define NKEPT (sizeof kept_signals / sizeof kept_signals[0])

int th_test_host_start(th_test_host *h)
{
    if (h->started)
        return h->started > 0 ? 0 : -1;
    h->started = -1;
    if (!spawn_ready(h) || !fix_toolboxes(h))
        return -1;
    /* In the host a crashing handler takes the process with it, as it
     * takes toolhost: the same line on stderr first, naming the tool. */
    if (!h->opts.isolate && !th_crashnote_init())
        note(h, "toolhost-testing: cannot set the fatal-signal handlers: %s%s", strerror(errno), "");
    struct sigaction saved[NKEPT];
    for (size_t i = 0; i < NKEPT; i++)
        sigaction(kept_signals[i], NULL, &saved[i]);
    th_start_opts so;
    th_start_opts_from(&h->opts, h->naming, NULL, &so);
    so.linked = h->linked;
    so.nlinked = h->nlinked;
    th_load_stats stats;
    th_rc rc = th_host_start(&so, NULL, 0, &h->sup, &stats, &h->reg);
    for (size_t i = 0; i < NKEPT; i++)
        sigaction(kept_signals[i], &saved[i], NULL);
    if (rc == TH_OK && th_load_stats_refusals(&stats) == 0)
        h->started = 1;
    return h->started > 0 ? 0 : -1;
}

const char *th_test_host_error(const th_test_host *h)
{
    return h->log ? h->log : "";
}

size_t th_test_host_tool_count(th_test_host *h)
{
    th_registry *reg = th_test_host_registry(h);
    return reg ? th_registry_count(reg) : 0;
}

th_registry *th_test_host_registry(th_test_host *h)
{
    th_test_host_start(h);
    return h->reg;
}

const th_mcp_config *th_test_host_mcp_config(const th_test_host *h)
{
    return &h->opts.cfg;
}
