/* SPDX-License-Identifier: MIT */
/*
** transport/deadline.h: the whole-request deadline of HTTP connections. A
** connection must begin a request (its request line) within one bound of
** starting to wait for it, then deliver the rest (headers, then body)
** within another, whatever it trickles meanwhile; past either, its socket
** is shut down and its server thread ends.
*/
#ifndef TH_TRANSPORT_DEADLINE_H
#define TH_TRANSPORT_DEADLINE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct th_deadlines th_deadlines;
typedef struct th_deadline th_deadline;

/* A watch with its own thread, WAIT_MS for a request line and REQUEST_MS
 * for the rest; NULL with a message in ERR on failure. */
th_deadlines *th_deadlines_new(long long wait_ms, long long request_ms, char *err, size_t errlen);
/* Stops the thread; every connection must have been removed first. */
void th_deadlines_free(th_deadlines *d);

/* Watch the connection on FD, waiting for a request from now on; NULL when
 * memory is short (the connection then goes unwatched). */
th_deadline *th_deadline_add(th_deadlines *d, int fd);
/* It waits for its next request from now on (keep-alive). */
void th_deadline_wait(th_deadlines *d, th_deadline *c);
/* Its request line came: the rest of the request is due. */
void th_deadline_request(th_deadlines *d, th_deadline *c);
/* Its request arrived whole: the connection is off the clock. */
void th_deadline_disarm(th_deadlines *d, th_deadline *c);
/* Stop watching it, before its FD is closed (C may be NULL). */
void th_deadline_remove(th_deadlines *d, th_deadline *c);

#endif
