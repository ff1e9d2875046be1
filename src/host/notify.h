/* SPDX-License-Identifier: MIT */
/*
** host/notify.h: the service manager told of the host's state with the
** sd_notify protocol (READY=1, RELOADING=1, STOPPING=1 on $NOTIFY_SOCKET),
** without libsystemd.
*/
#ifndef TH_HOST_NOTIFY_H
#define TH_HOST_NOTIFY_H

#include <stdbool.h>

/* Serving: plugins loaded, transports up. */
void th_notify_ready(void);

/* A reload begins (with MONOTONIC_USEC, which Type=notify-reload needs on
 * systemd 253 and later); th_notify_ready ends it. */
void th_notify_reloading(void);

/* The ordered shutdown begins. */
void th_notify_stopping(void);

/*
** Send STATE (lines of NAME=VALUE) to $NOTIFY_SOCKET: a datagram AF_UNIX
** socket, abstract when the value starts with '@'. True when there is no
** such variable (nothing to tell) or the datagram went; false with the
** failure logged.
*/
bool th_notify_send(const char *state);

#endif
