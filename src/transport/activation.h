/* SPDX-License-Identifier: MIT */
/*
** transport/activation.h: socket activation. Takes the listening socket a
** service manager passed (the sd_listen_fds(3) protocol: LISTEN_PID,
** LISTEN_FDS, descriptors from 3), without libsystemd.
*/
#ifndef TH_TRANSPORT_ACTIVATION_H
#define TH_TRANSPORT_ACTIVATION_H

#include <stdbool.h>
#include <stddef.h>

/*
** The one listening stream socket passed to this process: LISTEN_PID must
** be our pid and LISTEN_FDS 1 (toolhost serves one endpoint). The socket is
** made close-on-exec and LISTEN_PID, LISTEN_FDS and LISTEN_FDNAMES leave the
** environment, so worker processes take neither. *LOOPBACK says whether it
** is bound to a loopback address (or is a Unix socket). Call it before any
** thread starts (it changes the environment). -1 with ERR on failure.
*/
int th_activation_listen_fd(bool *loopback, char *err, size_t errlen);

#endif
