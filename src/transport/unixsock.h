/* SPDX-License-Identifier: MIT */
/*
** transport/unixsock.h: the Unix socket one daemon serves many clients on
** (--http unix:PATH): placing it safely (a trusted directory, a stale file
** replaced, a live one refused), and who is at the other end (SO_PEERCRED).
*/
#ifndef TH_TRANSPORT_UNIXSOCK_H
#define TH_TRANSPORT_UNIXSOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
** A listening socket at PATH with MODE (e.g. 0600), close-on-exec. PATH's
** directory must pass the plugin directory's trust rule (owned by root or
** this user, writable by nobody else, up to /). A socket file nobody
** answers on is replaced; one a server answers on is refused. -1 with ERR
** (ERRLEN bytes) naming the path and what failed.
*/
int th_unixsock_listen(const char *path, unsigned mode, char *err, size_t errlen);

/*
** Connect to the socket at PATH. The descriptor (close-on-exec), or -1
** with errno as connect(2) or socket(2) left it.
*/
int th_unixsock_connect(const char *path);

/* The uid of the process at the other end of connected Unix socket FD
 * (SO_PEERCRED: as it was at connect(2)); false when FD is no Unix socket. */
bool th_unixsock_peer_uid(int fd, uid_t *uid);

#endif
