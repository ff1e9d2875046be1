/* SPDX-License-Identifier: MIT */
/*
** cli/autostart.c: starting the shared daemon on demand: a lock file beside
** the socket serializes the clients that find none, a double fork detaches
** the one started, and the caller waits (bounded) until it answers.
*/
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/compat.h"
#include "base/util.h"
#include "cli/autostart.h"
#include "transport/unixsock.h"

#define WAIT_MS 10000 /* a daemon loads its plugins before it listens */

/* Whether a daemon answers on PATH; false with errno as connect(2) left it. */
static bool answers(const char *path)
{
    int fd = th_unixsock_connect(path);
    if (fd < 0)
        return false;
    close(fd);
    return true;
}

/* In the grandchild: no way back to the client's pipes or terminal, then
 * the daemon itself. Returns only when the exec failed. */
static void become_daemon(const char *self, const char *path, const char *log, int argc, char **argv)
{
    int null = open("/dev/null", O_RDWR);
    int out = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(out >= 0 ? out : null, 2) < 0)
        return;
    char **args = calloc((size_t)argc + 4, sizeof *args);
    size_t len = strlen(path) + 6;
    char *where = malloc(len);
    if (!args || !where)
        return;
    snprintf(where, len, "unix:%s", path);
    args[0] = (char *)self;
    args[1] = "--http";
    args[2] = where;
    for (int i = 0; i < argc; i++)
        args[3 + i] = argv[i];
    execv(self, args);
}

/* Start the daemon detached: setsid in a child, the daemon in its child,
 * so it is no child of the client (no zombie, no signal of its group). */
static bool spawn(const char *path, int argc, char **argv, char *err, size_t errlen)
{
    char self[4096], log[4200];
    if (!th_self_exe(self, sizeof self)) {
        snprintf(err, errlen, "cannot find the toolhost executable to start a daemon");
        return false;
    }
    snprintf(log, sizeof log, "%s.log", path);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        return false;
    }
    if (pid == 0) {
        if (setsid() >= 0 && fork() == 0)
            become_daemon(self, path, log, argc, argv);
        _exit(0); /* the middle child: its work is done, or the exec failed */
    }
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return true;
}

/* Wait until PATH answers, up to WAIT_MS. */
static bool wait_answer(const char *path)
{
    long long until = th_now_ms() + WAIT_MS;
    while (!answers(path)) {
        if (th_now_ms() >= until)
            return false;
        poll(NULL, 0, 20);
    }
    return true;
}

bool th_autostart(const char *path, bool start, int argc, char **argv, char *err, size_t errlen)
{
    if (answers(path))
        return true;
    bool absent = errno == ECONNREFUSED || errno == ENOENT; /* anything else is no reason to start one */
    if (!start || !absent) {
        snprintf(err, errlen, "unix:%s: connect: %s%s", path, strerror(errno),
                 absent ? " (no daemon answers; --start starts one)" : "");
        return false;
    }
    char lock[4200];
    snprintf(lock, sizeof lock, "%s.lock", path);
    int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", lock, strerror(errno));
        return false;
    }
    bool ok = false;
    while (flock(fd, LOCK_EX) != 0) {
        if (errno != EINTR) {
            snprintf(err, errlen, "%s: flock: %s", lock, strerror(errno));
            goto cleanup;
        }
    }
    /* Another client may have started it while this one waited. */
    if (answers(path)) {
        ok = true;
        goto cleanup;
    }
    if (!spawn(path, argc, argv, err, errlen))
        goto cleanup;
    if (!(ok = wait_answer(path)))
        snprintf(err, errlen, "the daemon started on unix:%s did not answer within %d s; see %s.log", path,
                 WAIT_MS / 1000, path);
cleanup:
    close(fd); /* and the lock with it */
    return ok;
}
