/* SPDX-License-Identifier: MIT */
/*
** base/compat.h: one portable call for each Linux-only interface the host
** uses. configure decides (HAVE_* in config.h); --disable-linux-extensions
** takes every POSIX fallback on Linux too, so the fallbacks are tested.
*/
#ifndef TH_COMPAT_H
#define TH_COMPAT_H

#include "config.h"

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

/* send()/sendmsg() flag: a dead peer is EPIPE, never SIGPIPE. Without it
 * the socket has SO_NOSIGPIPE where there is one (th_socketpair_cloexec),
 * and the host's SIGPIPE handler (base/signals.c) covers the rest. */
#if HAVE_DECL_MSG_NOSIGNAL
#define TH_MSG_NOSIGNAL MSG_NOSIGNAL
#else
#define TH_MSG_NOSIGNAL 0
#endif

/* poll() event for "the peer closed its end" without asking for input;
 * without it only POLLHUP (always reported) is seen, which a pipe gives. */
#if HAVE_DECL_POLLRDHUP
#define TH_POLLRDHUP POLLRDHUP
#else
#define TH_POLLRDHUP 0
#endif

/* All N bytes of P on the blocking socket FD, through EINTR and short
 * writes, never raising SIGPIPE. False with errno on a failure. */
bool th_send_all(int fd, const void *p, size_t n);

/* pipe2(O_CLOEXEC [| O_NONBLOCK]), or pipe() then fcntl(). 0, or -1 with
 * errno (no descriptor left open). The fallback leaves a window in which a
 * fork+exec of another thread inherits the pipe; the host starts children
 * from one thread (worker/spawn.c) and only with posix_spawn. */
int th_pipe_cloexec(int fds[2], bool nonblock);

/* socketpair(AF_UNIX, SOCK_STREAM) with close-on-exec on both ends (and
 * SO_NOSIGPIPE where it exists). 0, or -1 with errno. */
int th_socketpair_cloexec(int fds[2]);

/* Close every descriptor from LOWFD up: close_range, closefrom, or each
 * number below the descriptor limit. For a freshly started child. */
void th_close_from(int lowfd);

/* N bytes from the system's random source: getrandom, getentropy (256 bytes
 * at a time) or /dev/urandom. 0, or -1 with errno. */
int th_random_bytes(void *buf, size_t n);

/* Remember argv[0] (call from main, first): the fallback for the path of
 * the running executable where /proc/self/exe does not exist. */
void th_compat_set_argv0(const char *argv0);

/* The absolute path of the running executable into BUF (SIZE bytes):
 * /proc/self/exe, else argv[0] resolved (realpath, or looked up in PATH).
 * False with errno when it cannot be found. */
bool th_self_exe(char *buf, size_t size);

/* Name the calling thread for debuggers and top (at most 15 bytes shown);
 * nothing where the system has no such call. */
void th_thread_name(const char *name);

/* Where the calling thread's stack lies. False when the system cannot say
 * (callers then skip the check that needs it). */
bool th_thread_stack(const char **low, size_t *size);

/* The child is killed with SIGKILL when its parent ends (PR_SET_PDEATHSIG).
 * 1 when armed, 0 when the system has no such thing (the worker then relies
 * on the end of stream of its socket, which it reads on its own thread),
 * -1 with errno on failure. */
int th_die_with_parent(void);

/* Nothing the process executes can gain privileges (PR_SET_NO_NEW_PRIVS).
 * 1 when set, 0 when the system has no such thing, -1 with errno. */
int th_no_new_privs(void);

/* A descriptor that becomes readable when child PID ends (pidfd_open), or
 * -1: callers then poll waitid() on a short timeout. */
int th_pidfd_open(pid_t pid);

/* The Linux interfaces this build uses, space-separated ("none" for a
 * --disable-linux-extensions build), for --version and the tests. */
const char *th_compat_linux_features(void);

#endif
