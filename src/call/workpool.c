/* SPDX-License-Identifier: MIT */
/*
** call/workpool.c: the thread pool tool calls run on, with one FIFO queue. A
** core of threads (one per CPU) starts on demand; beyond it a supervisor adds
** a thread only when jobs wait and no thread has taken one for
** GROW_AFTER_MS: the threads are stuck in slow calls. So a slow call never
** holds up another for long, while a flood of fast calls (a long queue that
** moves) does not pay for dozens of contending threads. A job that waits
** longer than the queue timeout is taken out and handed to its expiry
** function instead (all threads may be stuck for good). The supervisor also
** fires the call deadline timers. Shutdown drains the queue and joins with a
** deadline.
*/
/* pthread_setname_np */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "base/compat.h"
#include "base/util.h"
#include "call/workpool.h"

/* How long a queued job may wait for a busy pool before a thread is added. */
#define GROW_AFTER_MS 2

typedef struct job {
    void (*fn)(void *);
    void (*expired)(void *); /* NULL: waits as long as it takes */
    void *arg;
    long long queued_ms;
    struct job *next;
} job;

struct th_pool {
    pthread_mutex_t lock;
    pthread_cond_t work;     /* a job was queued, or shutdown */
    pthread_cond_t backlog;  /* for the supervisor: jobs wait, no thread free */
    pthread_cond_t finished; /* a thread exited */
    pthread_cond_t fired;    /* a timer's function returned */
    th_pool_timer *timers, *last_timer; /* armed, earliest first */
    long long sleep_until;   /* the supervisor waits until then; LLONG_MIN: awake */
    job *head, *tail;
    size_t max_threads, core_threads, nthreads, nidle, nexited;
    size_t nqueued;          /* jobs in the queue */
    size_t running;          /* jobs running, on pool threads and callers' */
    size_t nhere;            /* of them, run by callers (th_pool_run_here) */
    long long queue_timeout_ms; /* 0: none */
    long long last_take_ms;  /* when a thread last took a job */
    bool stopping;
    bool supervising;        /* the supervisor thread runs */
    pthread_t supervisor;
    pthread_t *threads;
};

/*
** th_pool_hold is per thread: wake-ups for jobs this thread queues are
** owed until its release, while other threads' jobs wake at once (a thread
** holding the pool may be stuck in a slow call it runs itself).
*/
static _Thread_local struct {
    th_pool *pool;
    int depth;
    size_t owed;
} holding;

static void *worker(void *p)
{
    th_pool *pool = p;
    th_thread_name("th-pool"); /* not its creator's name */
    pthread_mutex_lock(&pool->lock);
    for (;;) {
        /* A caller running a job itself holds a slot too: the limit is
         * on calls running, whoever runs them. */
        while ((!pool->head || pool->running >= pool->max_threads) && !(pool->stopping && !pool->head)) {
            pool->nidle++;
            pthread_cond_wait(&pool->work, &pool->lock);
            pool->nidle--;
        }
        job *j = pool->head;
        if (!j)
            break; /* stopping and nothing left */
        pool->running++;
        pool->head = j->next;
        if (!pool->head)
            pool->tail = NULL;
        pool->nqueued--;
        pool->last_take_ms = th_now_ms();
        pthread_mutex_unlock(&pool->lock);
        j->fn(j->arg);
        free(j);
        pthread_mutex_lock(&pool->lock);
        pool->running--;
    }
    pool->nexited++;
    pthread_cond_broadcast(&pool->finished);
    pthread_mutex_unlock(&pool->lock);
    return NULL;
}

/* Start one more worker. Under pool->lock. */
static void spawn(th_pool *pool)
{
    if (pool->nthreads < pool->max_threads &&
        pthread_create(&pool->threads[pool->nthreads], NULL, worker, pool) == 0)
        pool->nthreads++;
    /* On failure the job waits for a running thread; if there is none it
     * still runs at shutdown's drain, never silently dropped. */
}

/* Take the jobs at the head that waited past the queue timeout (the queue
 * is FIFO, so they are the oldest). Under pool->lock. */
static job *take_expired(th_pool *pool, long long now)
{
    job *out = NULL, **tail = &out;
    while (pool->queue_timeout_ms > 0 && pool->head && pool->head->expired &&
           now >= pool->head->queued_ms + pool->queue_timeout_ms) {
        job *j = pool->head;
        pool->head = j->next;
        if (!pool->head)
            pool->tail = NULL;
        pool->nqueued--;
        j->next = NULL;
        *tail = j;
        tail = &j->next;
    }
    return out;
}

enum { TIMER_IDLE, TIMER_ARMED, TIMER_FIRING, TIMER_FIRED };

/* Take T out of the armed list. Under pool->lock. */
static void timer_unlink(th_pool *pool, th_pool_timer *t)
{
    if (t->prev)
        t->prev->next = t->next;
    else
        pool->timers = t->next;
    if (t->next)
        t->next->prev = t->prev;
    else
        pool->last_timer = t->prev;
    t->prev = t->next = NULL;
}

/* Fire the first timer if it is due; true if one was fired (the lock was
 * dropped meanwhile). Under pool->lock. */
static bool fire_due_timer(th_pool *pool, long long now)
{
    th_pool_timer *t = pool->timers;
    if (!t || t->at_ms > now)
        return false;
    timer_unlink(pool, t);
    t->state = TIMER_FIRING;
    pthread_mutex_unlock(&pool->lock);
    t->fn(t->arg);
    pthread_mutex_lock(&pool->lock);
    /* From here on its owner may free T: touch nothing after the wake.
     * FN may have armed it again (a deadline that moved). */
    if (t->state == TIMER_FIRING)
        t->state = TIMER_FIRED;
    pthread_cond_broadcast(&pool->fired);
    return true;
}

/*
** The supervisor: adds a thread when jobs wait and none was taken for
** GROW_AFTER_MS (below the maximum), and expires jobs that waited past the
** queue timeout, calling their expiry functions here, outside the lock, and
** fires due timers.
*/
static void *supervise(void *p)
{
    th_pool *pool = p;
    th_thread_name("th-pool-timer");
    pthread_mutex_lock(&pool->lock);
    while (!pool->stopping) {
        long long now = th_now_ms();
        job *expired = take_expired(pool, now);
        if (expired) {
            pthread_mutex_unlock(&pool->lock);
            for (job *j = expired, *next; j; j = next) {
                next = j->next;
                j->expired(j->arg);
                free(j);
            }
            pthread_mutex_lock(&pool->lock);
            continue;
        }
        if (fire_due_timer(pool, now))
            continue;
        long long wake = pool->timers ? pool->timers->at_ms : LLONG_MAX;
        if (pool->head && pool->nthreads < pool->max_threads && pool->running < pool->max_threads) {
            long long since =
                pool->head->queued_ms > pool->last_take_ms ? pool->head->queued_ms : pool->last_take_ms;
            long long due = since + GROW_AFTER_MS;
            /* Idle threads already woken count as free until they run: only
             * jobs beyond them need a new thread. */
            if (now >= due && pool->nqueued > pool->nidle) {
                spawn(pool);
                continue;
            }
            if (due < wake)
                wake = due > now ? due : now + 1;
        }
        if (pool->head && pool->head->expired && pool->queue_timeout_ms > 0 &&
            pool->head->queued_ms + pool->queue_timeout_ms < wake)
            wake = pool->head->queued_ms + pool->queue_timeout_ms;
        pool->sleep_until = wake;
        if (wake == LLONG_MAX)
            pthread_cond_wait(&pool->backlog, &pool->lock);
        else
            th_cond_wait_until(&pool->backlog, &pool->lock, wake);
        pool->sleep_until = LLONG_MIN;
    }
    pthread_mutex_unlock(&pool->lock);
    return NULL;
}

/* Start the supervisor if it is not running. Under pool->lock. */
static bool supervise_started(th_pool *pool)
{
    if (!pool->supervising && pthread_create(&pool->supervisor, NULL, supervise, pool) == 0)
        pool->supervising = true;
    return pool->supervising;
}

th_pool *th_pool_new(size_t max_threads)
{
    th_pool *pool = calloc(1, sizeof *pool);
    if (!pool)
        return NULL;
    pool->max_threads = max_threads ? max_threads : 1;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    pool->core_threads = ncpu > 1 ? (size_t)ncpu : 1;
    if (pool->core_threads > pool->max_threads)
        pool->core_threads = pool->max_threads;
    pool->threads = calloc(pool->max_threads, sizeof *pool->threads);
    if (!pool->threads) {
        free(pool);
        return NULL;
    }
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->work, NULL);
    pthread_cond_init(&pool->backlog, NULL);
    pthread_cond_init(&pool->finished, NULL);
    pthread_cond_init(&pool->fired, NULL);
    pool->sleep_until = LLONG_MIN;
    return pool;
}

void th_pool_set_queue_timeout(th_pool *pool, long long ms)
{
    pthread_mutex_lock(&pool->lock);
    pool->queue_timeout_ms = ms > 0 ? ms : 0;
    pthread_mutex_unlock(&pool->lock);
}

th_rc th_pool_submit(th_pool *pool, void (*fn)(void *), void *arg)
{
    return th_pool_submit_ex(pool, fn, NULL, arg);
}

th_rc th_pool_submit_ex(th_pool *pool, void (*fn)(void *), void (*expired)(void *), void *arg)
{
    job *j = malloc(sizeof *j);
    if (!j)
        return TH_ERR_NOMEM;
    j->fn = fn;
    j->expired = expired;
    j->arg = arg;
    j->queued_ms = th_now_ms();
    j->next = NULL;

    pthread_mutex_lock(&pool->lock);
    if (pool->stopping) {
        pthread_mutex_unlock(&pool->lock);
        free(j);
        return TH_ERR_RUNTIME;
    }
    if (pool->tail)
        pool->tail->next = j;
    else
        pool->head = j;
    pool->tail = j;
    pool->nqueued++;
    /* Signalled after the unlock: a thread woken while this one holds the
     * lock would run at once on a busy CPU only to block on the lock, and
     * hand the CPU back (two context switches per job for nothing). A
     * waiter checks the queue under the lock before it sleeps, so no wake
     * is lost. */
    pthread_cond_t *wake = NULL;
    /* nidle drops only when a woken thread runs, so compare it with the
     * queue: jobs beyond the idle threads need a new or future thread. */
    if (pool->running >= pool->max_threads) {
        /* Every slot is taken (some by callers running a job here): it
         * waits for one to free, or for the supervisor to expire it. */
        if (expired && pool->queue_timeout_ms > 0 && supervise_started(pool))
            wake = &pool->backlog;
    } else if (pool->nqueued <= pool->nidle) {
        if (holding.pool == pool && holding.depth > 0)
            holding.owed++;
        else
            wake = &pool->work;
    } else if (pool->nthreads < pool->core_threads) {
        spawn(pool);
    } else if (pool->nthreads < pool->max_threads || (expired && pool->queue_timeout_ms > 0)) {
        /* The job waits: the supervisor grows the pool or expires it. */
        if (supervise_started(pool))
            wake = &pool->backlog;
    }
    pthread_mutex_unlock(&pool->lock);
    if (wake)
        pthread_cond_signal(wake);
    return TH_OK;
}

th_rc th_pool_timer_start(th_pool *pool, th_pool_timer *t, long long at_ms, void (*fn)(void *), void *arg)
{
    pthread_mutex_lock(&pool->lock);
    if (pool->stopping || !supervise_started(pool)) {
        th_rc rc = pool->stopping ? TH_ERR_RUNTIME : TH_ERR_NOMEM;
        pthread_mutex_unlock(&pool->lock);
        return rc;
    }
    t->fn = fn;
    t->arg = arg;
    t->at_ms = at_ms;
    t->state = TIMER_ARMED;
    /* Most calls share one timeout, so a new deadline is usually the
     * latest: search from the end. */
    th_pool_timer *after = pool->last_timer;
    while (after && after->at_ms > at_ms)
        after = after->prev;
    t->prev = after;
    t->next = after ? after->next : pool->timers;
    if (t->next)
        t->next->prev = t;
    else
        pool->last_timer = t;
    if (after)
        after->next = t;
    else
        pool->timers = t;
    /* Wake the supervisor only when it would sleep past this deadline: a
     * call per wake-up would cost a context switch on every call. */
    if (at_ms < pool->sleep_until)
        pthread_cond_signal(&pool->backlog);
    pthread_mutex_unlock(&pool->lock);
    return TH_OK;
}

bool th_pool_timer_stop(th_pool *pool, th_pool_timer *t)
{
    pthread_mutex_lock(&pool->lock);
    for (;;) {
        if (t->state == TIMER_ARMED) {
            timer_unlink(pool, t);
            t->state = TIMER_IDLE;
        }
        if (t->state != TIMER_FIRING)
            break;
        pthread_cond_wait(&pool->fired, &pool->lock); /* it may be armed again meanwhile */
    }
    bool never_fired = t->state != TIMER_FIRED;
    pthread_mutex_unlock(&pool->lock);
    return never_fired;
}

void th_pool_hold(th_pool *pool)
{
    if (holding.depth == 0)
        holding.pool = pool;
    holding.depth++;
}

/* Wake the idle threads this thread owes a signal. Under pool->lock. */
static void pay_wakes(th_pool *pool)
{
    if (!holding.owed || holding.pool != pool)
        return;
    if (holding.owed >= pool->nidle)
        pthread_cond_broadcast(&pool->work);
    else
        for (size_t i = 0; i < holding.owed; i++)
            pthread_cond_signal(&pool->work);
    holding.owed = 0;
}

void th_pool_release(th_pool *pool)
{
    if (holding.depth > 0 && --holding.depth == 0 && holding.owed) {
        pthread_mutex_lock(&pool->lock);
        pay_wakes(pool);
        pthread_mutex_unlock(&pool->lock);
    }
}

bool th_pool_run_here(th_pool *pool, void (*fn)(void *), void *arg)
{
    pthread_mutex_lock(&pool->lock);
    /* Jobs already queued go first (FIFO), and a full pool is full. */
    if (pool->stopping || pool->head || pool->running >= pool->max_threads) {
        pthread_mutex_unlock(&pool->lock);
        return false;
    }
    pool->running++;
    pool->nhere++;
    /* Wake-ups this thread deferred must not wait for a call that may be
     * slow. */
    pay_wakes(pool);
    pthread_mutex_unlock(&pool->lock);
    fn(arg);
    pthread_mutex_lock(&pool->lock);
    pool->running--;
    pool->nhere--;
    /* Its slot is free: a job that waited for it may start. */
    if (pool->head && pool->nidle > 0)
        pthread_cond_signal(&pool->work);
    else if (pool->head && pool->nthreads < pool->max_threads)
        spawn(pool);
    if (pool->stopping)
        pthread_cond_broadcast(&pool->finished);
    pthread_mutex_unlock(&pool->lock);
    return true;
}

bool th_pool_shutdown(th_pool *pool, long long deadline_ms)
{
    if (!pool)
        return true;
    pthread_mutex_lock(&pool->lock);
    pool->stopping = true;
    if (pool->nthreads == 0 && pool->head) {
        /* No thread could ever be started: run what is queued here. */
        pthread_mutex_unlock(&pool->lock);
        for (job *j = pool->head, *next; j; j = next) {
            next = j->next;
            j->fn(j->arg);
            free(j);
        }
        pthread_mutex_lock(&pool->lock);
        pool->head = pool->tail = NULL;
        pool->nqueued = 0;
    }
    pthread_cond_broadcast(&pool->work);
    pthread_cond_broadcast(&pool->backlog);
    /* Callers running a job here use the pool too: wait for them as well. */
    while (pool->nexited < pool->nthreads || pool->nhere > 0) {
        if (!th_cond_wait_until(&pool->finished, &pool->lock, deadline_ms)) {
            pthread_mutex_unlock(&pool->lock);
            return false;
        }
    }
    pthread_mutex_unlock(&pool->lock);
    if (pool->supervising)
        pthread_join(pool->supervisor, NULL);
    for (size_t i = 0; i < pool->nthreads; i++)
        pthread_join(pool->threads[i], NULL);
    pthread_mutex_destroy(&pool->lock);
    pthread_cond_destroy(&pool->work);
    pthread_cond_destroy(&pool->backlog);
    pthread_cond_destroy(&pool->finished);
    pthread_cond_destroy(&pool->fired);
    free(pool->threads);
    free(pool);
    return true;
}
