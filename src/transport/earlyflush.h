/* SPDX-License-Identifier: MIT */
/*
** transport/earlyflush.h: when the answers a reader corks leave before the
** end of its read, so that a pipelined client on another CPU works while
** the host does, and when not (a client on the host's own CPU). The policy
** only: stdio.c does the writes and the probing.
*/
#ifndef TH_TRANSPORT_EARLYFLUSH_H
#define TH_TRANSPORT_EARLYFLUSH_H

#include <stdbool.h>
#include <stddef.h>

/* No early write carries fewer answers; a long read writes at least every
 * TH_EARLY_MAX_MSGS answers or TH_EARLY_MAX_BYTES bytes. */
#define TH_EARLY_MIN_MSGS 8
#define TH_EARLY_MAX_MSGS 32
#define TH_EARLY_MAX_BYTES ((size_t)32 << 10)
/* Reads without early writes after a probe found the client on our CPU:
 * the first time, and at most (doubling in between). */
#define TH_EARLY_BACKOFF_MIN 16
#define TH_EARLY_BACKOFF_MAX 1024
/* While the client is found elsewhere, reads between two probes. */
#define TH_EARLY_PROBE_EVERY 8

/* One output's state; the reader's alone. */
typedef struct th_early {
    unsigned off;     /* reads left without early writes; UINT_MAX: never */
    unsigned backoff; /* off after the next probe that finds the client on our CPU */
    unsigned unprobed; /* reads until the next probe */
} th_early;

/* Start: CAN_PROBE: the output is one whose unread bytes can be asked
 * (a pipe or a socket); other outputs are never written early. */
void th_early_init(th_early *e, bool can_probe);

/* Whether N corked answers of BYTES bytes are to be written now; HALF:
 * the reader is past the middle of what its read brought. */
bool th_early_due(const th_early *e, unsigned n, size_t bytes, bool half);

/* At the start of a read: whether to probe its first early write. */
bool th_early_probe_due(const th_early *e);

/* After the first early write of a read went out whole, if probe_due: UNREAD, the bytes
 * the client has not read (-1: cannot tell); PREEMPTED, this thread was
 * switched out involuntarily during the write. Unread 0 and preempted: the
 * client ran on our CPU, so early writes stop for a while. */
void th_early_probed(th_early *e, int unread, bool preempted);

/* At the end of each read. */
void th_early_read_done(th_early *e);

#endif
