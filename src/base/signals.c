/* SPDX-License-Identifier: MIT */
/*
** base/signals.c: signal dispositions installed with sigaction and handlers that
** do not care which thread runs them, so neither a plugin's thread mask nor
** its changed dispositions (re-installed after loading) decide whether a
** stop signal runs the shutdown sequence.
*/
/* pipe2 */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "base/compat.h"
#include "base/signals.h"

static const struct {
    int sig;
    const char *name;
} stop_signals[] = {{SIGTERM, "SIGTERM"}, {SIGINT, "SIGINT"}, {SIGHUP, "SIGHUP"}};
#define NSTOP (sizeof stop_signals / sizeof stop_signals[0])

static int stop_pipe[2] = {-1, -1};
/* SIGHUP while serving: a rescan request for the reload thread. */
static int hup_pipe[2] = {-1, -1};
static volatile sig_atomic_t serving;
static const char *volatile loading_path;

void th_signal_safe_put(const char *s)
{
    size_t n = strlen(s);
    while (n > 0) {
        ssize_t k = write(STDERR_FILENO, s, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return;
        s += k;
        n -= (size_t)k;
    }
}

static void on_stop(int sig)
{
    int saved = errno;
    if (!serving) {
        /* Nothing to shut down yet, and the main thread may be stuck in a
         * plugin's register function: end now, saying where. */
        const char *name = "a signal";
        for (size_t i = 0; i < NSTOP; i++)
            if (stop_signals[i].sig == sig)
                name = stop_signals[i].name;
        const char *path = loading_path;
        th_signal_safe_put("toolhost: error: stopped by ");
        th_signal_safe_put(name);
        th_signal_safe_put(path ? " while loading plugin " : " while starting");
        th_signal_safe_put(path ? path : "");
        th_signal_safe_put("\n");
        _exit(1);
    }
    unsigned char b = (unsigned char)sig;
    ssize_t r = write(sig == SIGHUP ? hup_pipe[1] : stop_pipe[1], &b, 1); /* a full pipe holds a stop already */
    (void)r;
    errno = saved;
}

/* The write that raised SIGPIPE fails with EPIPE, which is all the host
 * needs. A handler rather than SIG_IGN because exec resets handled signals
 * to the default: children do not inherit an ignored SIGPIPE. */
static void on_pipe(int sig)
{
    (void)sig;
}

static bool catch_pipe(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sa.sa_handler = on_pipe;
    return sigaction(SIGPIPE, &sa, NULL) == 0;
}

bool th_signals_catch_sigpipe(void)
{
    return catch_pipe();
}

static bool install(void)
{
    struct sigaction sa;
    sigset_t ours;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sigemptyset(&ours);
    sa.sa_flags = SA_RESTART;
    sa.sa_handler = on_stop;
    for (size_t i = 0; i < NSTOP; i++) {
        if (sigaction(stop_signals[i].sig, &sa, NULL) != 0)
            return false;
        sigaddset(&ours, stop_signals[i].sig);
    }
    if (!catch_pipe())
        return false;
    /* Inherited by every thread started later, and so by fork+exec'd
     * children: nothing of ours is blocked. */
    int rc = pthread_sigmask(SIG_UNBLOCK, &ours, NULL);
    if (rc != 0) {
        errno = rc;
        return false;
    }
    return true;
}

int th_signals_init(void)
{
    if (th_pipe_cloexec(stop_pipe, true) != 0)
        return -1;
    if (th_pipe_cloexec(hup_pipe, true) != 0) {
        int e = errno;
        close(stop_pipe[0]);
        close(stop_pipe[1]);
        stop_pipe[0] = stop_pipe[1] = -1;
        errno = e;
        return -1;
    }
    if (!install()) {
        int e = errno;
        close(stop_pipe[0]);
        close(stop_pipe[1]);
        stop_pipe[0] = stop_pipe[1] = -1;
        errno = e;
        return -1;
    }
    return stop_pipe[0];
}

void th_signals_loading(const char *path)
{
    loading_path = path;
    /* Between plugins: undo what the last one did to our dispositions, so a
     * stop signal still ends a later plugin's endless register function
     * with the message (best effort: failure leaves the default action,
     * which ends the process too). */
    if (!path)
        (void)install();
}

int th_signals_hup_fd(void)
{
    return hup_pipe[0];
}

bool th_signals_serve(void)
{
    loading_path = NULL;
    if (!install())
        return false;
    serving = 1;
    return true;
}
