/*
** worker/spawn.h: starting a child process of the host's own executable in
** its internal worker role: the IPC socket at fd 3, stdin /dev/null, stdout
** and stderr a pipe the host logs, a clean signal mask and dispositions.
*/
#ifndef TH_SPAWN_H
#define TH_SPAWN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/util.h"

/* The hidden first argument that makes the executable a child. */
#define TH_WORKER_ARG "--internal-worker"

/* The descriptor the child finds its socket at. */
#define TH_WORKER_FD 3

/*
** How a child ends when plugin code closed or replaced its socket: by a
** real-time signal, not an exit status, since a plugin may exit() with any
** status itself and must be reported as having done so. Never returns.
*/
void th_child_lose_socket(void) __attribute__((noreturn));

/* True when wait status STATUS is a th_child_lose_socket end. */
bool th_child_lost_socket(int status);

/*
** Remember the running executable (/proc/self/exe) for later spawns. Call
** once at start-up, before any plugin code runs (which could replace or
** unlink the file behind the name). False with errno on failure.
*/
bool th_spawn_init(void);

/* A running child: its pid, the host's end of the socket and the read end
 * of its output pipe (both close-on-exec). */
typedef struct th_child {
    pid_t pid;
    int sock;
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
** once its socket has ended), then SIGKILL. Returns its wait status.
*/
int th_child_reap(pid_t pid, long long grace_ms);

/* "SIGSEGV" for 11; "signal N" style names are the caller's business:
 * NULL for a signal without a name here. */
const char *th_signal_name(int sig);


/* A child's output, logged a line at a time with a tag naming the plugin. */
typedef struct th_outbuf {
    char buf[4096];
    size_t len;
} th_outbuf;

/*
** One read(2) from FD into B, logging every complete line on stderr as
** "TAG: line" (a line longer than the buffer is cut in pieces). Returns the
** read's result: >0, 0 at end of output (the rest is logged), -1 on error.
*/
long th_outbuf_pump(th_outbuf *b, int fd, const char *tag);

#endif
