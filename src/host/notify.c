/* SPDX-License-Identifier: MIT */
/*
** host/notify.c: the sd_notify datagram, written by hand so that toolhost
** needs no libsystemd: one sendto(2) per state change, to the socket
** $NOTIFY_SOCKET names.
*/
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "host/notify.h"

/* $NOTIFY_SOCKET as an address; false (logged) when it cannot be one. */
static bool notify_address(const char *path, struct sockaddr_un *sa, socklen_t *len)
{
    size_t n = strlen(path);
    memset(sa, 0, sizeof *sa);
    sa->sun_family = AF_UNIX;
    if ((path[0] != '/' && path[0] != '@') || n < 2 || n >= sizeof sa->sun_path) {
        th_log(TH_LOG_WARNING, "NOTIFY_SOCKET '%s' is not an absolute path or an abstract ('@') name; "
               "the service manager is not told of the host's state", path);
        return false;
    }
    memcpy(sa->sun_path, path, n);
    if (path[0] == '@')
        sa->sun_path[0] = '\0'; /* abstract: no terminating NUL is counted */
    *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (path[0] == '@' ? 0 : 1));
    return true;
}

bool th_notify_send(const char *state)
{
    const char *path = getenv("NOTIFY_SOCKET");
    struct sockaddr_un sa;
    socklen_t len;
    if (!path || !*path)
        return true;
    if (!notify_address(path, &sa, &len))
        return false;
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    bool ok = fd >= 0 && sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa, len) >= 0;
    if (!ok)
        th_log(TH_LOG_WARNING, "NOTIFY_SOCKET %s: cannot send '%.*s': %s", path, (int)strcspn(state, "\n"), state,
               strerror(errno));
    if (fd >= 0)
        close(fd);
    return ok;
}

void th_notify_ready(void)
{
    th_notify_send("READY=1\nSTATUS=serving");
}

void th_notify_reloading(void)
{
    struct timespec ts;
    char state[96];
    clock_gettime(CLOCK_MONOTONIC, &ts);
    snprintf(state, sizeof state, "RELOADING=1\nSTATUS=rescanning the plugin directories\nMONOTONIC_USEC=%llu",
             (unsigned long long)ts.tv_sec * 1000000ULL + (unsigned long long)ts.tv_nsec / 1000ULL);
    th_notify_send(state);
}

void th_notify_stopping(void)
{
    th_notify_send("STOPPING=1\nSTATUS=stopping");
}
