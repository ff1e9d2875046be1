/* SPDX-License-Identifier: MIT */
/*
** worker/spawn.c: posix_spawn of the host's own executable as a worker or
** scanner child, with exactly the descriptors, mask and dispositions the
** child's start-up sequence expects, always from one long-lived thread.
*/
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/compat.h"
#include "base/log.h"
#include "worker/isolate.h"
#include "worker/spawn.h"

extern char **environ;

static char self_exe[PATH_MAX];

/* A process that starts children running plugin code is not dumpable:
 * they run as its user, and its /proc/PID/fd, environ and mem would be
 * theirs to open. */
bool th_spawn_init(void)
{
    if (!th_isolate_host())
        th_log(TH_LOG_WARNING, "process isolation: the host stays dumpable (PR_SET_DUMPABLE: %s): its workers can "
               "open its /proc/PID files", strerror(errno));
    return th_self_exe(self_exe, sizeof self_exe);
}

bool th_spawn_init_exe(const char *exe)
{
    if (exe[0] != '/' || strlen(exe) >= sizeof self_exe) {
        errno = EINVAL;
        return false;
    }
    if (!th_isolate_host())
        th_log(TH_LOG_WARNING, "process isolation: the host stays dumpable (PR_SET_DUMPABLE: %s): its workers can "
               "open its /proc/PID files", strerror(errno));
    snprintf(self_exe, sizeof self_exe, "%s", exe);
    return true;
}

static const struct {
    int sig;
    const char *name;
} signal_names[] = {
    {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},   {SIGTRAP, "SIGTRAP"},
    {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},   {SIGKILL, "SIGKILL"}, {SIGUSR1, "SIGUSR1"},
    {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"}, {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"},
    {SIGSYS, "SIGSYS"},   {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"},
};

const char *th_signal_name(int sig)
{
    for (size_t i = 0; i < sizeof signal_names / sizeof signal_names[0]; i++)
        if (signal_names[i].sig == sig)
            return signal_names[i].name;
    return NULL;
}

/* glibc's SIGRTMIN is a function call; real-time signals are not sent by
 * the kernel for faults, nor handled by the sanitizer runtimes. */
#define LOST_PIPE_SIG (SIGRTMIN + 3)

void th_child_lose_pipe(void)
{
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, LOST_PIPE_SIG);
    signal(LOST_PIPE_SIG, SIG_DFL); /* plugin code may have caught it */
    pthread_sigmask(SIG_UNBLOCK, &one, NULL);
    raise(LOST_PIPE_SIG);
    _exit(125); /* not reached; reported as the exit it is */
}

bool th_child_lost_pipe(int status)
{
    return WIFSIGNALED(status) && WTERMSIG(status) == LOST_PIPE_SIG;
}

int th_child_reap(pid_t pid, long long grace_ms)
{
    int status = 0;
    long long by = th_now_ms() + grace_ms;
    pid_t got;
    while ((got = waitpid(pid, &status, WNOHANG)) == 0 && th_now_ms() < by) {
        struct timespec ts = {0, 5 * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (got == 0) {
        kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
    }
    return status;
}

/*
** The child's environment: only what a process needs to run, never the
** host's secrets (TOOLHOST_* settings travel to their own plugin's worker
** in its hello): the search path, home, locale, time zone and temporary
** directory; the sanitizer runtimes' options, so a checked build checks its
** workers the same way; and the dynamic loader's LD_LIBRARY_PATH and
** LD_PRELOAD, since the worker is the host's own executable and must load
** the libraries the host loaded (an uninstalled build, a preloaded
** runtime). They come from the operator, not from a plugin. HOME hides
** nothing (getpwuid() answers it); the sandbox decides what is readable
** there. Anything else only where the operator names it (--pass-env).
*/
static const struct {
    const char *name;
    bool prefix; /* NAME starts the variable's name */
} kept_env[] = {
    {"PATH", false},  {"HOME", false},  {"LANG", false},  {"LANGUAGE", false},        {"LC_", true},
    {"TZ", false},    {"TMPDIR", false}, {"ASAN_", true}, {"UBSAN_", true},           {"LSAN_", true},
    {"LD_LIBRARY_PATH", false},         {"LD_PRELOAD", false},
};

static char **passed_env; /* --pass-env's names, for the process's life */
static size_t npassed_env;

bool th_spawn_pass_env(const char *const *lists, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (const char *s = lists[i]; *s;) {
            size_t len = strcspn(s, ",");
            char **grown = realloc(passed_env, (npassed_env + 1) * sizeof *grown);
            if (!grown)
                return false;
            passed_env = grown;
            if (len && !(passed_env[npassed_env++] = strndup(s, len)))
                return false;
            s += len + (s[len] == ',');
        }
    }
    return true;
}

/* Whether the variable ENTRY ("NAME=VALUE") goes to children. */
static bool env_kept(const char *entry)
{
    size_t len = strcspn(entry, "=");
    for (size_t i = 0; i < sizeof kept_env / sizeof kept_env[0]; i++) {
        size_t klen = strlen(kept_env[i].name);
        if (kept_env[i].prefix ? len > klen && strncmp(entry, kept_env[i].name, klen) == 0
                               : len == klen && strncmp(entry, kept_env[i].name, len) == 0)
            return true;
    }
    for (size_t i = 0; i < npassed_env; i++)
        if (strlen(passed_env[i]) == len && strncmp(entry, passed_env[i], len) == 0)
            return true;
    return false;
}

/* The child's environment (see kept_env); NULL when out of memory. */
static char **child_environ(void)
{
    size_t n = 0;
    for (char **e = environ; e && *e; e++)
        n++;
    char **env = calloc(n + 1, sizeof *env), **out = env;
    for (char **e = environ; env && e && *e; e++)
        if (env_kept(*e))
            *out++ = *e;
    return env;
}

/*
** A bigger pipe for results: a 64 KiB result then crosses in one write and
** one wake-up, not sixteen. Pages are only taken as bytes wait in it, so
** the size costs nothing while it is empty. Best effort: the default works.
*/
static void widen(int fd)
{
#ifdef F_SETPIPE_SZ
    (void)fcntl(fd, F_SETPIPE_SZ, 1 << 20);
#else
    (void)fd;
#endif
}

static th_rc spawn_here(th_child *child, th_err *err)
{
    /* down: host to child; up: child to host. */
    int down[2] = {-1, -1}, up[2] = {-1, -1}, out[2] = {-1, -1}, in_fd = -1, out_fd = -1;
    th_rc rc = TH_ERR_IO;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    bool fa_ok = false, attr_ok = false;
    char ppid[32];

    if (!self_exe[0])
        return th_err_set(err, TH_ERR_RUNTIME, "the host's executable is unknown (th_spawn_init)");
    if (th_pipe_cloexec(down, false) != 0 || th_pipe_cloexec(up, false) != 0 || th_pipe_cloexec(out, false) != 0) {
        th_err_set(err, TH_ERR_IO, "cannot create the worker's pipes: %s", strerror(errno));
        goto cleanup;
    }
    widen(down[1]);
    widen(up[1]);
    /* dup2 onto the same number would keep close-on-exec: the child's ends
     * must not already be fds 3 and 4. */
    if ((in_fd = fcntl(down[0], F_DUPFD_CLOEXEC, 10)) < 0 || (out_fd = fcntl(up[1], F_DUPFD_CLOEXEC, 10)) < 0) {
        th_err_set(err, TH_ERR_IO, "cannot move the worker's pipes: %s", strerror(errno));
        goto cleanup;
    }
    if (posix_spawn_file_actions_init(&fa) != 0)
        goto nomem;
    fa_ok = true;
    if (posix_spawnattr_init(&attr) != 0)
        goto nomem;
    attr_ok = true;
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    if (posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0) != 0 ||
        posix_spawn_file_actions_adddup2(&fa, out[1], 1) != 0 ||
        posix_spawn_file_actions_adddup2(&fa, out[1], 2) != 0 ||
        posix_spawn_file_actions_adddup2(&fa, in_fd, TH_WORKER_FD) != 0 ||
        posix_spawn_file_actions_adddup2(&fa, out_fd, TH_WORKER_OUT_FD) != 0 ||
        posix_spawnattr_setsigmask(&attr, &none) != 0 || posix_spawnattr_setsigdefault(&attr, &all) != 0 ||
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF) != 0)
        goto nomem;
    /* The child checks that its parent is still this process once it has
     * asked to die with it: a host gone before that leaves no orphan. */
    snprintf(ppid, sizeof ppid, "%ld", (long)getpid());
    char *argv[] = {self_exe, TH_WORKER_ARG, ppid, NULL};
    char **env = child_environ();
    if (!env)
        goto nomem;
    int e = posix_spawn(&child->pid, self_exe, &fa, &attr, argv, env);
    free(env);
    if (e != 0) {
        th_err_set(err, TH_ERR_IO, "cannot start %s: %s", self_exe, strerror(e));
        goto cleanup;
    }
    child->to = down[1];
    child->from = up[0];
    child->out = out[0];
    down[1] = up[0] = out[0] = -1;
    rc = TH_OK;
    goto cleanup;

nomem:
    rc = th_err_set(err, TH_ERR_NOMEM, "out of memory preparing a worker");
cleanup:
    if (fa_ok)
        posix_spawn_file_actions_destroy(&fa);
    if (attr_ok)
        posix_spawnattr_destroy(&attr);
    int fds[] = {down[0], down[1], up[0], up[1], out[0], out[1], in_fd, out_fd};
    for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    return rc;
}

/*
** The spawner. A child's PR_SET_PDEATHSIG fires when the *thread* that
** created it ends, not the process: a worker started from a call thread
** (a pool thread that exits when idle, a reader thread that ends with its
** session) would be killed with it. So every child is started by one
** thread that lives as long as the process ("th-spawn"); callers hand it
** the request and wait. Spawns are rare (start-up, a first call, a
** restart), so one at a time costs nothing.
*/
typedef struct spawn_req {
    th_child *child;
    th_err *err;
    th_rc rc;
    bool done;
    struct spawn_req *next;
} spawn_req;

static pthread_once_t spawner_once = PTHREAD_ONCE_INIT;
static bool spawner_ok;
static pthread_mutex_t spawner_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t spawner_work = PTHREAD_COND_INITIALIZER; /* a request was queued */
static pthread_cond_t spawner_done = PTHREAD_COND_INITIALIZER; /* a request was served */
static spawn_req *spawner_queue; /* under spawner_lock; requests live on their callers' stacks */

static void *spawner_main(void *unused)
{
    (void)unused;
    th_thread_name("th-spawn");
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL); /* the host's signals go to the threads that wait for them */
    pthread_mutex_lock(&spawner_lock);
    for (;;) {
        while (!spawner_queue)
            pthread_cond_wait(&spawner_work, &spawner_lock);
        spawn_req *r = spawner_queue;
        spawner_queue = r->next;
        pthread_mutex_unlock(&spawner_lock);
        r->rc = spawn_here(r->child, r->err);
        pthread_mutex_lock(&spawner_lock);
        r->done = true;
        pthread_cond_broadcast(&spawner_done);
    }
    return NULL; /* not reached: it lives as long as the process */
}

static void spawner_start(void)
{
    pthread_t t;
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0)
        return;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    spawner_ok = pthread_create(&t, &attr, spawner_main, NULL) == 0;
    pthread_attr_destroy(&attr);
}

th_rc th_spawn_child(th_child *child, th_err *err)
{
    if (!self_exe[0])
        return th_err_set(err, TH_ERR_RUNTIME, "the host's executable is unknown (th_spawn_init)");
    pthread_once(&spawner_once, spawner_start);
    if (!spawner_ok)
        return th_err_set(err, TH_ERR_RUNTIME, "cannot start the thread that starts workers (th-spawn)");
    spawn_req r = {.child = child, .err = err, .rc = TH_ERR_RUNTIME};
    pthread_mutex_lock(&spawner_lock);
    spawn_req **tail = &spawner_queue;
    while (*tail)
        tail = &(*tail)->next;
    *tail = &r;
    pthread_cond_signal(&spawner_work);
    while (!r.done)
        pthread_cond_wait(&spawner_done, &spawner_lock);
    pthread_mutex_unlock(&spawner_lock);
    return r.rc;
}

/* Enough for what a plugin says while it registers; more is logged. */
#define HELD_MAX (64u << 10)

void th_outbuf_release(char *held, size_t len, const char *tag)
{
    for (size_t start = 0, i = 0; held && i < len; i++)
        if (held[i] == '\n') {
            th_log_relay(tag, held + start, i - start);
            start = i + 1;
        }
    free(held);
}

/* Held back while it fits; else everything so far is logged, in order. */
static bool hold(th_outbuf *b, const char *tag, const char *line, size_t len)
{
    char *more = b->held_len + len + 1 <= HELD_MAX ? realloc(b->held, b->held_len + len + 1) : NULL;
    if (!more) {
        th_outbuf_release(b->held, b->held_len, tag);
        b->held = NULL;
        b->held_len = 0;
        b->hold = false;
        return false;
    }
    if (b->held_len == 0)
        b->held_since_ms = th_now_ms();
    memcpy(more + b->held_len, line, len);
    more[b->held_len + len] = '\n';
    b->held = more;
    b->held_len += len + 1;
    return true;
}

/* A child's own log lines come back in the host's format; the plugin's
 * output is tagged with it. */
static void emit(th_outbuf *b, const char *tag, const char *line, size_t len)
{
    if (!b->hold || !hold(b, tag, line, len))
        th_log_relay(tag, line, len);
}

long th_outbuf_pump(th_outbuf *b, int fd, const char *tag)
{
    ssize_t n;
    do
        n = read(fd, b->buf + b->len, sizeof b->buf - b->len);
    while (n < 0 && errno == EINTR);
    if (n <= 0) {
        if (b->len > 0)
            emit(b, tag, b->buf, b->len);
        b->len = 0;
        return (long)n;
    }
    b->len += (size_t)n;
    size_t start = 0;
    for (size_t i = 0; i < b->len; i++) {
        if (b->buf[i] == '\n') {
            emit(b, tag, b->buf + start, i - start);
            start = i + 1;
        }
    }
    if (start == 0 && b->len == sizeof b->buf) {
        emit(b, tag, b->buf, b->len);
        start = b->len;
    }
    memmove(b->buf, b->buf + start, b->len - start);
    b->len -= start;
    return (long)n;
}
