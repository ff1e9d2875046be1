/* SPDX-License-Identifier: MIT */
/*
** worker/spawn.h: starting a child process of the host's own executable in
** its internal worker role: the IPC pipes at fds 3 (in) and 4 (out), stdin
** /dev/null, stdout and stderr a pipe the host logs, a clean signal mask and
** dispositions.
*/
#ifndef TH_SPAWN_H
#define TH_SPAWN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/util.h"

/* The hidden first argument that makes the executable a child. */
#define TH_WORKER_ARG "--internal-worker"

/* The descriptors the child finds its pipes at: it reads the host's frames
 * from the first and writes its own to the second. */
#define TH_WORKER_FD 3
#define TH_WORKER_OUT_FD 4

/*
** How a child ends when plugin code closed or replaced one of its pipes: by a
** real-time signal, not an exit status, since a plugin may exit() with any
** status itself and must be reported as having done so. Never returns.
*/
void th_child_lose_pipe(void) __attribute__((noreturn));

/* True when wait status STATUS is a th_child_lose_pipe end. */
bool th_child_lost_pipe(int status);

/*
** Remember the running executable (/proc/self/exe) for later spawns. Call
** once at start-up, before any plugin code runs (which could replace or
** unlink the file behind the name). False with errno on failure.
*/
bool th_spawn_init(void);

/*
** th_spawn_init for a process that is not the toolhost executable (a test
** program, testing/): its children run EXE, an absolute path to toolhost,
** since only that executable knows the worker and scanner roles.
*/
bool th_spawn_init_exe(const char *exe);

/*
** Also pass the variables named in LISTS (N strings of comma-separated
** names, --pass-env) to every child, besides the few every child gets
** (spawn.c). Once, at start-up. False when out of memory.
*/
bool th_spawn_pass_env(const char *const *lists, size_t n);

/*
** A running child: its pid, the host's ends of the two frame pipes and the
** read end of its output pipe (all close-on-exec). Two pipes rather than
** one socketpair: a pipe keeps separate wait queues for its reader and its
** writer, so a thread asleep in read(2) is woken by bytes only, and a pipe
** is the cheapest wake-up the kernel has (a round trip between two
** processes on one CPU: 5.4 us over pipes, 10.3 us over a unix stream
** socket waited on in poll(2), on the 2-core machine of the benchmarks).
*/
typedef struct th_child {
    pid_t pid;
    int to;   /* frames to the child */
    int from; /* frames from the child */
    int out;
} th_child;

/*
** Start a child. It is started by the host's one spawner thread, which
** lives as long as the process, so that the child's PR_SET_PDEATHSIG ties
** it to the host and not to the calling thread; any thread may call this
** and waits for the start. TH_OK, or an error code with ERR naming what
** failed.
*/
th_rc th_spawn_child(th_child *child, th_err *err);

/*
** Reap child PID, giving it GRACE_MS to exit on its own (it usually is,
** once its pipes have ended), then SIGKILL. Returns its wait status.
*/
int th_child_reap(pid_t pid, long long grace_ms);

/* "SIGSEGV" for 11; "signal N" style names are the caller's business:
 * NULL for a signal without a name here. */
const char *th_signal_name(int sig);


/* A child's output, logged a line at a time with a tag naming the plugin,
 * or held back while HOLD (up to a bound, then logged after all). */
typedef struct th_outbuf {
    char buf[4096];
    size_t len;
    bool hold;
    char *held; /* the lines held, each ending in '\n' (owned; th_outbuf_release) */
    size_t held_len;
    long long held_since_ms; /* th_now_ms of the first line held */
} th_outbuf;

/*
** One read(2) from FD into B, logging every complete line on stderr as
** "TAG: line" (a line longer than the buffer is cut in pieces). Returns the
** read's result: >0, 0 at end of output (the rest is logged), -1 on error.
*/
long th_outbuf_pump(th_outbuf *b, int fd, const char *tag);

/* Log HELD (lines as th_outbuf holds them; may be NULL) tagged TAG, then
 * free it. */
void th_outbuf_release(char *held, size_t len, const char *tag);

#endif
