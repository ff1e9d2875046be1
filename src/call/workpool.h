/* SPDX-License-Identifier: MIT */
/*
** call/workpool.h: the threads tool calls run on. Threads are started on demand up
** to a maximum and then kept, so a slow call never waits for another and a
** burst of fast calls does not pay for thread creation each time.
*/
#ifndef TH_WORKPOOL_H
#define TH_WORKPOOL_H

#include <stdbool.h>
#include <stddef.h>

#include "toolhost/plugin.h"

typedef struct th_pool th_pool;

/* A pool of at most MAX_THREADS threads (none started yet). */
th_pool *th_pool_new(size_t max_threads);

/*
** Run FN(ARG) on a pool thread: an idle one, a new one if all are busy and
** the maximum is not reached, else the first to become free. Returns
** TH_ERR_NOMEM, or TH_ERR_RUNTIME after th_pool_shutdown began; FN is then
** not run.
*/
th_rc th_pool_submit(th_pool *pool, void (*fn)(void *), void *arg);

/*
** Like th_pool_submit, but if the job waits in the queue longer than the
** pool's queue timeout (th_pool_set_queue_timeout) it is taken out and
** EXPIRED(ARG) is called instead of FN(ARG), on the pool's supervisor
** thread. Exactly one of the two runs.
*/
th_rc th_pool_submit_ex(th_pool *pool, void (*fn)(void *), void (*expired)(void *), void *arg);

/* How long a job from th_pool_submit_ex may wait for a thread; 0: for
 * ever. Applies to jobs queued before the change too. */
void th_pool_set_queue_timeout(th_pool *pool, long long ms);

/*
** A one-shot timer run by the pool's supervisor thread, so a deadline per
** call costs no thread of its own. The caller owns the memory (embed it in
** the job it guards, zeroed) and must not touch the fields.
*/
typedef struct th_pool_timer {
    void (*fn)(void *);
    void *arg;
    long long at_ms;
    struct th_pool_timer *prev, *next;
    int state; /* 0 idle, armed, firing, fired */
} th_pool_timer;

/*
** Arm T: at AT_MS (th_now_ms clock) FN(ARG) runs on the supervisor thread,
** outside the pool's lock, unless th_pool_timer_stop comes first. FN must
** not stop its own timer, but may arm it again (a deadline that moved). Returns TH_ERR_NOMEM when no supervisor thread
** could be started, TH_ERR_RUNTIME after shutdown began (T not armed).
*/
th_rc th_pool_timer_start(th_pool *pool, th_pool_timer *t, long long at_ms, void (*fn)(void *), void *arg);

/*
** Disarm T. Returns true when FN will never run for it; false when FN has
** run. Either way FN is not running when this returns (it waits for one in
** progress), so the caller may free what ARG points at. A T never armed
** returns true.
*/
bool th_pool_timer_stop(th_pool *pool, th_pool_timer *t);

/*
** Between th_pool_hold and th_pool_release, jobs this thread queues may be
** taken by threads that are awake, but sleeping threads are not woken for
** them until the release (or until this thread runs a job itself with
** th_pool_run_here): a producer with a batch at hand pays for one wake-up
** per batch instead of one per job. Holds are per thread and nest; other
** threads' jobs are not held back.
*/
void th_pool_hold(th_pool *pool);
void th_pool_release(th_pool *pool);

/*
** Run FN(ARG) on the calling thread, without a thread hand-off, when the
** pool has a free slot and no job is queued (so FIFO order holds); the call
** counts against MAX_THREADS while it runs. Returns false, not running FN,
** when it must be queued instead (th_pool_submit), or after shutdown began.
*/
bool th_pool_run_here(th_pool *pool, void (*fn)(void *), void *arg);

/*
** Stop accepting work, let queued and running jobs finish (those of
** th_pool_run_here too), and join the threads, waiting until DEADLINE_MS (th_now_ms clock). Returns true and
** frees the pool when every thread was joined; returns false and leaves the
** pool allocated (its threads still running) when the deadline passed, since
** freeing memory a running thread uses would be worse than leaking it.
*/
bool th_pool_shutdown(th_pool *pool, long long deadline_ms);

#endif
