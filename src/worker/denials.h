/* SPDX-License-Identifier: MIT */
/*
** worker/denials.h: the worker's reporter of what its seccomp filter refused
** (seccomp user notification, answered EPERM and logged).
*/
#ifndef TH_DENIALS_H
#define TH_DENIALS_H

#include <stdbool.h>

/* Before the filter is built: true when this kernel and libseccomp can send
** refused calls to a listener, and its buffers are allocated. */
bool th_denials_prepare(void);

/*
** Right after the filter is loaded, FD its listener (owned from here on):
** start the thread answering each refused call EPERM and logging it. False
** when no thread could start; FD is then closed, and the kernel answers the
** filter's refusals ENOSYS instead.
*/
bool th_denials_start(int fd);

#endif
