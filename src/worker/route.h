/* SPDX-License-Identifier: MIT */
/*
** worker/route.h: the calls in flight on one worker, by id, and where each
** frame the worker writes goes: onto the call it names, in order, to no call
** (UPDATED), or nowhere. Pure: no pipe, no lock, no thread; the supervisor
** holds its worker's lock around every call here.
*/
#ifndef TH_WORKER_ROUTE_H
#define TH_WORKER_ROUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "worker/ipc.h"

/* A frame routed to its call, copied out of the reader (whose buffer the
 * next read reuses) in one allocation. */
typedef struct th_qframe {
    uint8_t type;
    size_t len;
    struct th_qframe *next;
    char payload[]; /* NUL-terminated */
} th_qframe;

/*
** One call in flight, owned by its caller (a waiting proxy's lives on its
** stack, a deferred one's is allocated). A waiting call takes its frames
** itself (th_route_pop); a deferred call's frames are run by whichever
** thread reads them, from the ready list (th_route_next_ready).
*/
typedef struct th_route_call {
    uint32_t id;
    bool deferred;
    bool linked;     /* in flight: frames for its id are routed to it */
    bool queued;     /* deferred: on the ready list, or being run */
    bool final_seen; /* its RESULT or FAILED was routed: nothing more is */
    th_qframe *head, *tail;
    struct th_route_call *next, *ready_next;
} th_route_call;

/* A worker's calls. Zero-initialised: no call, no id given out. */
typedef struct th_route {
    th_route_call *calls; /* in flight (linked) */
    th_route_call *ready; /* deferred calls with frames to run, or ended */
    size_t ndeferred;     /* deferred calls in flight */
    uint32_t last_id;     /* ids 1..last_id were given out, in order */
    bool wrapped;         /* past UINT32_MAX (a worker's 4 billionth call):
                           * any id but 0 may have been given out */
} th_route;

/* Where th_route_frame put a frame. */
typedef enum th_route_verdict {
    TH_ROUTE_UPDATED, /* belongs to no call: the caller fans it out */
    TH_ROUTE_WAITER,  /* queued on a waiting call: the caller wakes it */
    TH_ROUTE_READY,   /* queued on a deferred call, which is on the ready list */
    TH_ROUTE_LATE,    /* for a call that ended (given up, answered): dropped */
    TH_ROUTE_STRAY,   /* an id never given out, or a type a worker does not
                       * send for a call: dropped, the worker is at fault */
    TH_ROUTE_NOMEM,   /* no memory to queue it: dropped */
} th_route_verdict;

/* What the thread running a call does with one of its frames. */
typedef enum th_route_use {
    TH_USE_APPLY, /* PROGRESS, LOG: th_worker_apply_frame */
    TH_USE_ASK,   /* ASK: ask the client, answer the worker */
    TH_USE_FINAL, /* RESULT, FAILED: the call's result; its last frame */
    TH_USE_NONE,  /* anything else (th_route_frame routes none) */
} th_route_use;

/* Give C (zeroed by the caller but for what it owns) the next id (never 0,
 * which no call has) and put it in flight. Returns the id. */
uint32_t th_route_add(th_route *rt, th_route_call *c, bool deferred);

/* Put deferred call TO in flight in FROM's place, with its id: a waiting
 * call its thread lets go of. FROM has no frame queued (the caller checks). */
void th_route_hand_over(th_route *rt, th_route_call *from, th_route_call *to);

/* Take C out of flight (nothing is routed to it any more); a no-op when it
 * is not in flight. Its queued frames stay (th_route_clear). */
void th_route_remove(th_route *rt, th_route_call *c);

/*
** Route frame F (its payload copied) by its id and type; *TO is the call it
** was queued on (WAITER, READY), else NULL. A final frame takes a deferred
** call out of flight (final_seen); a waiting call takes itself out when it
** runs it. The verdict says what the caller still has to do.
*/
th_route_verdict th_route_frame(th_route *rt, const th_ipc_frame *f, th_route_call **to);

/* C's next frame (the caller frees it), or NULL. */
th_qframe *th_route_pop(th_route_call *c);

/* Free every frame still queued on C. */
void th_route_clear(th_route_call *c);

/* Put deferred call C on the ready list unless it is there or being run. */
void th_route_ready(th_route *rt, th_route_call *c);

/* The next deferred call to run (it stays queued: nobody else runs it), or
 * NULL. */
th_route_call *th_route_next_ready(th_route *rt);

/* The worker ended: every deferred call in flight is taken out and put on
 * the ready list (its runner answers it crashed); waiting calls stay in
 * flight, to take themselves out once they see it. */
void th_route_orphan(th_route *rt);

/* What a frame of TYPE does for its call. */
th_route_use th_route_use_of(uint8_t type);

/* TYPE's name ("PROGRESS"), or NULL for a number no frame has. */
const char *th_route_type_name(uint8_t type);

#endif
