/* SPDX-License-Identifier: MIT */
/*
** base/compat.c: the Linux interface where configure found it, the POSIX
** fallback otherwise (see compat.h). Each fallback is what macOS and the
** BSDs would run; CI runs them on Linux (--disable-linux-extensions).
*/
#define _GNU_SOURCE /* pipe2, close_range, pthread_setname_np, pthread_getattr_np */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#if HAVE_SYS_PRCTL_H && HAVE_PRCTL
#include <sys/prctl.h>
#endif
#if HAVE_SYS_RANDOM_H
#include <sys/random.h>
#endif
#if HAVE_DECL_SYS_PIDFD_OPEN || HAVE_GETAUXVAL
#include <sys/syscall.h>
#endif
#if HAVE_GETAUXVAL
#include <sys/auxv.h>
#endif

#include "base/compat.h"

static int set_fd_flags(int fd, bool nonblock)
{
    int fl = fcntl(fd, F_GETFD);
    if (fl < 0 || fcntl(fd, F_SETFD, fl | FD_CLOEXEC) != 0)
        return -1;
    if (nonblock) {
        fl = fcntl(fd, F_GETFL);
        if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0)
            return -1;
    }
    return 0;
}

static void close_pair(int fds[2])
{
    int e = errno;
    close(fds[0]);
    close(fds[1]);
    fds[0] = fds[1] = -1;
    errno = e;
}

int th_pipe_cloexec(int fds[2], bool nonblock)
{
#if HAVE_PIPE2
    return pipe2(fds, O_CLOEXEC | (nonblock ? O_NONBLOCK : 0));
#else
    if (pipe(fds) != 0)
        return -1;
    if (set_fd_flags(fds[0], nonblock) != 0 || set_fd_flags(fds[1], nonblock) != 0) {
        close_pair(fds);
        return -1;
    }
    return 0;
#endif
}

int th_socketpair_cloexec(int fds[2])
{
#if HAVE_DECL_SOCK_CLOEXEC
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
        return -1;
#else
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0)
        return -1;
    if (set_fd_flags(fds[0], false) != 0 || set_fd_flags(fds[1], false) != 0) {
        close_pair(fds);
        return -1;
    }
#endif
#if !HAVE_DECL_MSG_NOSIGNAL && defined(SO_NOSIGPIPE)
    int one = 1;
    if (setsockopt(fds[0], SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof one) != 0 ||
        setsockopt(fds[1], SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof one) != 0) {
        close_pair(fds);
        return -1;
    }
#endif
    (void)close_pair;
    (void)set_fd_flags;
    return 0;
}

void th_close_from(int lowfd)
{
#if HAVE_CLOSE_RANGE
    if (close_range((unsigned)lowfd, ~0U, 0) == 0)
        return; /* an older kernel says ENOSYS: fall through */
#elif HAVE_CLOSEFROM
    closefrom(lowfd);
    return;
#endif
    /* Every number below the limit: the limit may have been lowered after
     * higher descriptors were opened, so never fewer than 1024. */
    struct rlimit rl;
    long max = 1024;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (long)rl.rlim_cur > max)
        max = rl.rlim_cur > 65536 ? 65536 : (long)rl.rlim_cur;
    for (long fd = lowfd; fd < max; fd++)
        close((int)fd);
}

#if !HAVE_GETRANDOM && !HAVE_GETENTROPY
static int urandom(void *buf, size_t n)
{
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t got = 0;
    while (got < n) {
        ssize_t k = read(fd, (char *)buf + got, n - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            int e = k == 0 ? EIO : errno;
            close(fd);
            errno = e;
            return -1;
        }
        got += (size_t)k;
    }
    close(fd);
    return 0;
}
#endif

int th_random_bytes(void *buf, size_t n)
{
#if HAVE_GETRANDOM
    size_t got = 0;
    while (got < n) {
        ssize_t k = getrandom((char *)buf + got, n - got, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        got += (size_t)k;
    }
    return 0;
#elif HAVE_GETENTROPY
    for (size_t off = 0; off < n; off += 256) /* getentropy's limit per call */
        if (getentropy((char *)buf + off, n - off < 256 ? n - off : 256) != 0)
            return -1;
    return 0;
#else
    return urandom(buf, n);
#endif
}

static char argv0[PATH_MAX];

void th_compat_set_argv0(const char *a)
{
    snprintf(argv0, sizeof argv0, "%s", a ? a : "");
}

#if !HAVE_PROC_SELF_EXE
/* argv[0] as the shell found it: a name with a slash is a path (relative to
 * the start directory, which nothing has changed yet), one without is the
 * first executable of that name in PATH. */
static bool resolve_argv0(char *buf, size_t size)
{
    char found[PATH_MAX], real[PATH_MAX];
    if (!argv0[0]) {
        errno = ENOENT;
        return false;
    }
    if (strchr(argv0, '/')) {
        memcpy(found, argv0, sizeof found); /* both PATH_MAX, argv0 terminated */
    } else {
        const char *path = getenv("PATH");
        bool ok = false;
        for (const char *p = path ? path : "/usr/bin:/bin"; !ok;) {
            const char *end = strchr(p, ':');
            size_t len = end ? (size_t)(end - p) : strlen(p);
            int k = snprintf(found, sizeof found, "%.*s/%s", (int)len, len ? p : ".", argv0);
            ok = k > 0 && (size_t)k < sizeof found && access(found, X_OK) == 0;
            if (!end)
                break;
            p = end + 1;
        }
        if (!ok) {
            errno = ENOENT;
            return false;
        }
    }
    if (!realpath(found, real))
        return false;
    if (strlen(real) >= size) {
        errno = ENAMETOOLONG;
        return false;
    }
    memcpy(buf, real, strlen(real) + 1);
    return true;
}
#endif

bool th_self_exe(char *buf, size_t size)
{
#if HAVE_PROC_SELF_EXE
    ssize_t n = readlink("/proc/self/exe", buf, size - 1);
    if (n <= 0)
        return false;
    if ((size_t)n >= size - 1) {
        errno = ENAMETOOLONG;
        return false;
    }
    buf[n] = '\0';
    return true;
#else
    return resolve_argv0(buf, size);
#endif
}

void th_thread_name(const char *name)
{
#if HAVE_PTHREAD_SETNAME_NP
    pthread_setname_np(pthread_self(), name);
#else
    (void)name; /* macOS has a one-argument form, the BSDs pthread_set_name_np: one port away */
#endif
}

/* The main thread's stack without /proc/self/maps, which glibc's
 * pthread_getattr_np() reads (and sscanf()s line by line) for it: the
 * kernel generating that file and glibc parsing it were a tenth of the
 * instructions of an in-process start. The kernel puts the executable's
 * name (AT_EXECFN) at the top of the main stack, so the page after it is
 * the stack's end; the stack may grow down to RLIMIT_STACK below that.
 * glibc's answer starts there too (later only where another mapping comes
 * within the limit, which no stack then reaches) and ends below the
 * arguments and environment, which this extent includes: a superset, as
 * the loader's "is it on this stack" check wants. False when not on the
 * main thread or without the facts, and the caller asks glibc. */
static bool main_stack(const char **low, size_t *size)
{
#if HAVE_GETAUXVAL && defined(SYS_gettid) && defined(AT_EXECFN)
    if ((pid_t)syscall(SYS_gettid) != getpid())
        return false;
    const char *fn = (const char *)getauxval(AT_EXECFN);
    struct rlimit rl;
    long page = sysconf(_SC_PAGESIZE);
    if (!fn || page <= 0 || getrlimit(RLIMIT_STACK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return false;
    uintptr_t top = ((uintptr_t)fn + strlen(fn) + 1 + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
    uintptr_t lim = (uintptr_t)rl.rlim_cur & ~((uintptr_t)page - 1);
    if (lim == 0 || lim > top)
        return false;
    *low = (const char *)(top - lim);
    *size = (size_t)lim;
    return true;
#else
    (void)low;
    (void)size;
    return false;
#endif
}

bool th_thread_stack(const char **low, size_t *size)
{
    if (main_stack(low, size))
        return true;
#if HAVE_PTHREAD_GETATTR_NP
    pthread_attr_t attr;
    void *l;
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
        return false;
    bool known = pthread_attr_getstack(&attr, &l, size) == 0;
    *low = l;
    pthread_attr_destroy(&attr);
    return known;
#else
    (void)low;
    (void)size;
    return false;
#endif
}

int th_die_with_parent(void)
{
#if HAVE_PRCTL && defined(PR_SET_PDEATHSIG)
    return prctl(PR_SET_PDEATHSIG, SIGKILL) == 0 ? 1 : -1;
#else
    return 0;
#endif
}

int th_no_new_privs(void)
{
#if HAVE_PRCTL && defined(PR_SET_NO_NEW_PRIVS)
    return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 ? 1 : -1;
#else
    return 0;
#endif
}

int th_pidfd_open(pid_t pid)
{
#if HAVE_DECL_SYS_PIDFD_OPEN
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    (void)pid;
    return -1;
#endif
}

/* The names of what this build uses; a table filled by the preprocessor. */
static const char *const features[] = {
#if HAVE_PIPE2
    "pipe2",
#endif
#if HAVE_DECL_SOCK_CLOEXEC
    "SOCK_CLOEXEC",
#endif
#if HAVE_DECL_MSG_NOSIGNAL
    "MSG_NOSIGNAL",
#endif
#if HAVE_DECL_POLLRDHUP
    "POLLRDHUP",
#endif
#if HAVE_DECL_RUSAGE_THREAD
    "RUSAGE_THREAD",
#endif
#if HAVE_CLOSE_RANGE
    "close_range",
#endif
#if HAVE_GETRANDOM
    "getrandom",
#endif
#if HAVE_PROC_SELF_EXE
    "/proc/self/exe",
#endif
#if HAVE_PTHREAD_GETATTR_NP
    "pthread_getattr_np",
#endif
#if HAVE_PRCTL
    "prctl",
#endif
#if HAVE_DECL_SYS_PIDFD_OPEN
    "pidfd_open",
#endif
#if HAVE_INOTIFY_INIT1 && HAVE_SYS_INOTIFY_H
    "inotify",
#endif
    NULL,
};

static char feature_list[256];

static void list_features(void)
{
    size_t len = 0;
    for (size_t i = 0; features[i] && len < sizeof feature_list; i++)
        len += (size_t)snprintf(feature_list + len, sizeof feature_list - len, "%s%s", len ? " " : "", features[i]);
    if (!len)
        snprintf(feature_list, sizeof feature_list, "none");
}

const char *th_compat_linux_features(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, list_features);
    return feature_list;
}

bool th_send_all(int fd, const void *p, size_t n)
{
    const char *at = p;
    while (n > 0) {
        ssize_t w = send(fd, at, n, TH_MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        at += w;
        n -= (size_t)w;
    }
    return true;
}
