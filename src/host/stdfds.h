/* SPDX-License-Identifier: MIT */
/*
** host/stdfds.h: keeping the protocol's descriptors out of plugins' reach:
** private duplicates of stdin and stdout for the protocol, fd 0 and fd 1
** pointed elsewhere, children forked without exec cut off from them, and a
** check that plugin code left them (and the stop pipe) alone.
*/
#ifndef TH_HOST_STDFDS_H
#define TH_HOST_STDFDS_H

#include <stdbool.h>
#include <sys/types.h>

/* A descriptor's identity, to notice a plugin closing it (and maybe opening
 * something else at the same number). */
typedef struct th_fd_id {
    int fd;
    dev_t dev;
    ino_t ino;
} th_fd_id;

typedef struct th_stdfds {
    int in, out;     /* the protocol's stdin and stdout, close-on-exec */
    th_fd_id ids[3]; /* in, out and the stop pipe, as they were claimed */
} th_stdfds;

/*
** Claim stdin and stdout for the protocol (fd 0 becomes /dev/null, fd 1
** stderr, line-buffered so stray printf lines appear in order with the
** log), and close them in children plugin code forks without exec. Done
** first, so that no descriptor the host opens lands on a closed fd 0. False
** with a message on stderr naming what failed; FDS->in and FDS->out are then
** -1 or theirs to close.
*/
bool th_stdfds_claim(th_stdfds *fds);

/* Remember the claimed descriptors and STOP_FD as they are now, for
 * th_stdfds_intact. False with a message on stderr. */
bool th_stdfds_remember(th_stdfds *fds, int stop_fd);

/* Whether plugin code left every claimed descriptor in place; if not,
 * logged (critical) naming the descriptor. */
bool th_stdfds_intact(const th_stdfds *fds);

/* Close the protocol's stdout now (the client sees EOF), or both at exit. */
void th_stdfds_close_out(th_stdfds *fds);
void th_stdfds_close(th_stdfds *fds);

#endif
