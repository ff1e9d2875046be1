/* SPDX-License-Identifier: MIT */
/*
** transport/stdio.h: MCP over a pair of byte streams, one JSON-RPC message
** per line. It frames, enforces the message size limit, writes replies whole,
** and runs the shutdown sequence on end of input or a stop request.
*/
#ifndef TH_TRANSPORT_STDIO_H
#define TH_TRANSPORT_STDIO_H

#include <stddef.h>

#include "protocol/mcp.h"

typedef struct th_stdio_opts {
    size_t max_message_bytes; /* longer lines are refused (default 4 MiB) */
    long long grace_ms;       /* at shutdown, how long calls may finish */
    long long busy_poll_us;   /* after a message, how long the reader polls
                               * for the next before it sleeps (0: never;
                               * see wait_input in stdio.c) */
} th_stdio_opts;

/*
** Serve one session: read from IN_FD, write to OUT_FD, until end of input,
** an unrecoverable read error, OUT_FD failing (the client is gone), or
** STOP_FD (-1: none) becoming readable (main passes the stop-signal pipe).
** Then let calls in flight finish for up to grace_ms, cancel the rest, write
** the output still queued until the grace period ends (at least 250 ms;
** what the client has not read by then is dropped), and return 0 (1 after a
** read or write error other than EPIPE). The descriptors' flags are left
** alone: OUT_FD is written with blocking writes from a thread of its own.
*/
int th_stdio_serve(th_mcp *mcp, int in_fd, int out_fd, int stop_fd, const th_stdio_opts *opts);

#endif
