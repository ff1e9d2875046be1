/* SPDX-License-Identifier: MIT */
/*
** cli/hostproc.h: a toolhost server as a child process spoken to over
** pipes, one JSON-RPC message a line, the way a stdio client drives it.
** `toolhost call` and `toolhost test` start their servers with it.
*/
#ifndef TH_CLI_HOSTPROC_H
#define TH_CLI_HOSTPROC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <json-c/json.h>

typedef struct th_hostproc {
    pid_t pid;
    int to, from; /* its stdin, its stdout */
    char *buf;    /* what was read from it past the last whole line */
    size_t len, cap;
} th_hostproc;

/* Start this executable with ARGV (argv[0] is replaced by its path) on
 * pipes. False with errno when it could not be started. */
bool th_hostproc_start(th_hostproc *h, char **argv);

/* Write LINE and a newline to its stdin. False when it is gone. */
bool th_hostproc_send(th_hostproc *h, const char *line);

/* Send initialize (as client NAME) and notifications/initialized, and wait
 * for the answer to the first. False when the server ended first. */
bool th_hostproc_initialize(th_hostproc *h, const char *name);

/* The same, waiting at most TIMEOUT_MS (-1: no limit) for the answer:
 * false with *TIMED_OUT (when not NULL) when the time was up, the server
 * left running. */
bool th_hostproc_initialize_within(th_hostproc *h, const char *name, long long timeout_ms, bool *timed_out);

/* The next message it writes, waiting at most TIMEOUT_MS (-1: no limit).
 * NULL at end of output or when the time is up (*TIMED_OUT then, when
 * TIMED_OUT is not NULL). Lines that are not JSON are skipped. */
json_object *th_hostproc_read(th_hostproc *h, int timeout_ms, bool *timed_out);

/* The response with id ID; messages on the way are skipped. NULL at end
 * of output. */
json_object *th_hostproc_await(th_hostproc *h, int id);

/* Close its stdin, wait for it to end (killing it first when KILL) and
 * free H's buffers. Returns its wait status, or -1 when it never ran. */
int th_hostproc_stop(th_hostproc *h, bool kill);

#endif
