/* SPDX-License-Identifier: MIT */
/*
** transport/unixsock.c: placing the daemon's Unix socket (trusted
** directory, stale file replaced, live one refused, mode set before anyone
** can connect) and reading a peer's uid.
*/
#define _GNU_SOURCE /* struct ucred */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "plugin/trust.h"
#include "transport/unixsock.h"

/* PATH into ADDR; false when it does not fit sun_path. */
static bool unix_addr(const char *path, struct sockaddr_un *addr)
{
    *addr = (struct sockaddr_un){.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof addr->sun_path)
        return false;
    memcpy(addr->sun_path, path, strlen(path) + 1);
    return true;
}

int th_unixsock_connect(const char *path)
{
    struct sockaddr_un addr;
    if (!unix_addr(path, &addr)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

bool th_unixsock_peer_uid(int fd, uid_t *uid)
{
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof cred)
        return false;
    *uid = cred.uid;
    return true;
}

/* The directory PATH is in must pass the rule plugin directories pass: a
 * socket in a directory others can write could be replaced by theirs. */
static bool dir_trusted(const char *path, char *err, size_t errlen)
{
    char *copy = strdup(path), *real = NULL, why[2048];
    bool ok = false;
    int fd = -1;
    struct stat st;
    if (!copy) {
        snprintf(err, errlen, "out of memory");
        goto cleanup;
    }
    char *slash = strrchr(copy, '/');
    const char *dir = !slash ? "." : slash == copy ? "/" : (*slash = '\0', copy);
    if (!(real = realpath(dir, NULL))) {
        snprintf(err, errlen, "the socket's directory %s: %s", dir, strerror(errno));
        goto cleanup;
    }
    bool trusted;
    if ((fd = th_trust_open_dir(real, geteuid(), &trusted, why, sizeof why)) < 0 || !trusted) {
        snprintf(err, errlen, "the socket's directory %s: %s", real, why);
        goto cleanup;
    }
    if (fstat(fd, &st) != 0 || !th_trust_check(&st, geteuid(), real, why, sizeof why)) {
        snprintf(err, errlen, "the socket's directory %s: %s", real, why);
        goto cleanup;
    }
    ok = true;
cleanup:
    if (fd >= 0)
        close(fd);
    free(real);
    free(copy);
    return ok;
}

/* A socket file left at PATH by a server that is gone is removed; a live
 * one, or anything not a socket, is left and refused. */
static bool clear_stale(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT || (snprintf(err, errlen, "%s: %s", path, strerror(errno)), false);
    if (!S_ISSOCK(st.st_mode)) {
        snprintf(err, errlen, "%s exists and is not a socket; remove it or choose another path", path);
        return false;
    }
    int fd = th_unixsock_connect(path);
    if (fd >= 0) {
        close(fd);
        snprintf(err, errlen, "%s: another server answers on this socket already", path);
        return false;
    }
    if (errno != ECONNREFUSED) {
        snprintf(err, errlen, "%s: cannot tell whether a server answers: %s", path, strerror(errno));
        return false;
    }
    if (unlink(path) != 0 && errno != ENOENT) {
        snprintf(err, errlen, "%s: cannot remove the stale socket: %s", path, strerror(errno));
        return false;
    }
    return true;
}

int th_unixsock_listen(const char *path, unsigned mode, char *err, size_t errlen)
{
    struct sockaddr_un addr;
    int fd = -1;
    if (!unix_addr(path, &addr)) {
        snprintf(err, errlen, "%s: longer than a socket path may be (%zu bytes)", path, sizeof addr.sun_path - 1);
        return -1;
    }
    if (!dir_trusted(path, err, errlen) || !clear_stale(path, err, errlen))
        return -1;
    if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        return -1;
    }
    /* Nobody may connect between bind and chmod: the umask closes the
     * window, and fchmod cannot reach a socket's file. */
    mode_t old = umask(0777);
    int rc = bind(fd, (struct sockaddr *)&addr, sizeof addr);
    int e = errno;
    umask(old);
    if (rc != 0) {
        snprintf(err, errlen, "cannot bind %s: %s", path, strerror(e));
        goto fail;
    }
    if (chmod(path, mode & 0777) != 0 || listen(fd, 128) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        unlink(path);
        goto fail;
    }
    return fd;
fail:
    close(fd);
    return -1;
}
