/* SPDX-License-Identifier: MIT */
/*
** host/stdfds.c: the protocol's stdin and stdout, kept where plugin code
** cannot read, write or close them unnoticed.
*/
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "host/stdfds.h"

/* The protocol's descriptors, for close_protocol_in_child. */
static int protocol_fds[2] = {-1, -1};

/* A child that plugin code fork()s without exec keeps every descriptor
 * (O_CLOEXEC acts only on exec): close the protocol's, so the child can
 * neither write to the client's stdout pipe nor hold it open after the host
 * exits. Runs in the child, where only async-signal-safe calls are allowed. */
static void close_protocol_in_child(void)
{
    for (size_t i = 0; i < sizeof protocol_fds / sizeof protocol_fds[0]; i++)
        if (protocol_fds[i] >= 0)
            close(protocol_fds[i]);
}

/*
** Keep the real stdout for the protocol and point fd 1 at stderr, so that a
** plugin's printf() lands in the log instead of corrupting the stream.
*/
static int claim_stdout(void)
{
    int fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    if (fd < 0)
        return -1;
    fflush(stdout);
    if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/*
** The same for stdin: the protocol reads a close-on-exec duplicate, and fd 0
** becomes /dev/null, so neither a plugin nor a child it starts can read
** (and eat) protocol messages. A closed fd 0 counts as empty input.
*/
static int claim_stdin(void)
{
    /* With fd 0 closed this opens at 0, and the input is empty, as with
     * </dev/null: the host ends at once instead of reading whatever a
     * later open() puts at fd 0. */
    int nul = open("/dev/null", O_RDONLY);
    if (nul < 0)
        return -1;
    int fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
    if (fd < 0 || (nul != STDIN_FILENO && dup2(nul, STDIN_FILENO) < 0)) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        if (nul != STDIN_FILENO)
            close(nul);
        errno = e;
        return -1;
    }
    if (nul != STDIN_FILENO)
        close(nul);
    return fd;
}

static bool fd_id_take(th_fd_id *id, int fd)
{
    struct stat st;
    id->fd = fd;
    if (fstat(fd, &st) != 0)
        return false;
    id->dev = st.st_dev;
    id->ino = st.st_ino;
    return true;
}

static bool fd_id_same(const th_fd_id *id)
{
    struct stat st;
    return fstat(id->fd, &st) == 0 && st.st_dev == id->dev && st.st_ino == id->ino;
}

bool th_stdfds_claim(th_stdfds *fds)
{
    fds->out = -1;
    if ((fds->in = claim_stdin()) < 0 || (fds->out = claim_stdout()) < 0) {
        fprintf(stderr, "toolhost: cannot set up stdin and stdout: %s\n", strerror(errno));
        return false;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    protocol_fds[0] = fds->in;
    protocol_fds[1] = fds->out;
    if (pthread_atfork(NULL, NULL, close_protocol_in_child) != 0) {
        fprintf(stderr, "toolhost: cannot set up stdin and stdout: pthread_atfork failed\n");
        return false;
    }
    return true;
}

bool th_stdfds_remember(th_stdfds *fds, int stop_fd)
{
    if (!fd_id_take(&fds->ids[0], fds->in) || !fd_id_take(&fds->ids[1], fds->out) ||
        !fd_id_take(&fds->ids[2], stop_fd)) {
        fprintf(stderr, "toolhost: cannot set up stdin and stdout: %s\n", strerror(errno));
        return false;
    }
    return true;
}

bool th_stdfds_intact(const th_stdfds *fds)
{
    for (size_t i = 0; i < sizeof fds->ids / sizeof fds->ids[0]; i++) {
        if (!fd_id_same(&fds->ids[i])) {
            th_log(TH_LOG_CRITICAL, "a plugin closed or replaced descriptor %d, which the host needs; exiting",
                   fds->ids[i].fd);
            return false;
        }
    }
    return true;
}

void th_stdfds_close_out(th_stdfds *fds)
{
    if (fds->out >= 0)
        close(fds->out);
    fds->out = -1;
}

void th_stdfds_close(th_stdfds *fds)
{
    if (fds->in >= 0)
        close(fds->in);
    fds->in = -1;
    th_stdfds_close_out(fds);
}
