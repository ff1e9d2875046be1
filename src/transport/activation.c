/* SPDX-License-Identifier: MIT */
/*
** Socket activation without libsystemd: the protocol is three environment
** variables and descriptors from 3 (sd_listen_fds(3)); checking them is
** shorter than a dependency.
*/
#include "transport/activation.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define FIRST_FD 3 /* SD_LISTEN_FDS_START */

/* VALUE of NAME as a positive decimal number, or 0. */
static long env_number(const char *name)
{
    const char *v = getenv(name);
    char *end;
    if (!v || !*v)
        return 0;
    errno = 0;
    long n = strtol(v, &end, 10);
    return *end || errno || n < 0 ? 0 : n;
}

int th_activation_listen_fd(bool *loopback, char *err, size_t errlen)
{
    long pid = env_number("LISTEN_PID"), n = env_number("LISTEN_FDS");
    /* Ours or not, the variables must not reach the workers we spawn. */
    unsetenv("LISTEN_PID");
    unsetenv("LISTEN_FDS");
    unsetenv("LISTEN_FDNAMES");
    if (pid == 0 || n == 0) {
        snprintf(err, errlen, "no socket was passed (LISTEN_PID and LISTEN_FDS are not set; "
                              "start toolhost from a .socket unit)");
        return -1;
    }
    if (pid != (long)getpid()) {
        snprintf(err, errlen, "LISTEN_PID=%ld is not this process (%ld): the socket was passed to another",
                 pid, (long)getpid());
        return -1;
    }
    if (n != 1) {
        snprintf(err, errlen, "LISTEN_FDS=%ld: toolhost serves one endpoint; give its .socket unit one ListenStream=",
                 n);
        return -1;
    }
    int fd = FIRST_FD, type = 0, listening = 0;
    socklen_t len = sizeof type;
    struct sockaddr_storage ss;
    socklen_t sslen = sizeof ss;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM ||
        (len = sizeof listening, getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len)) != 0 || !listening ||
        getsockname(fd, (struct sockaddr *)&ss, &sslen) != 0) {
        snprintf(err, errlen, "descriptor %d is not a listening stream socket (ListenStream=)", fd);
        return -1;
    }
    if (ss.ss_family == AF_INET)
        *loopback = (ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr) >> 24) == 127;
    else if (ss.ss_family == AF_INET6)
        *loopback = IN6_IS_ADDR_LOOPBACK(&((struct sockaddr_in6 *)&ss)->sin6_addr);
    else
        *loopback = ss.ss_family == AF_UNIX;
    int flags = fcntl(fd, F_GETFD);
    if (flags < 0 || fcntl(fd, F_SETFD, flags | FD_CLOEXEC) != 0) {
        snprintf(err, errlen, "descriptor %d: cannot set close-on-exec: %s", fd, strerror(errno));
        return -1;
    }
    return fd;
}
