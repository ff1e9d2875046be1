/*
** workpool.c: a grow-on-demand thread pool with one FIFO queue. Threads
** block on a condition variable while idle; shutdown drains the queue and
** joins with a deadline, so a handler that never returns cannot hang exit.
*/
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "util.h"
#include "workpool.h"

typedef struct job {
    void (*fn)(void *);
    void *arg;
    struct job *next;
} job;

struct th_pool {
    pthread_mutex_t lock;
    pthread_cond_t work;     /* a job was queued, or shutdown */
    pthread_cond_t finished; /* a thread exited */
    job *head, *tail;
    size_t max_threads, nthreads, nidle, nexited;
    bool stopping;
    pthread_t *threads;
};

static void *worker(void *p)
{
    th_pool *pool = p;
    pthread_mutex_lock(&pool->lock);
    for (;;) {
        while (!pool->head && !pool->stopping) {
            pool->nidle++;
            pthread_cond_wait(&pool->work, &pool->lock);
            pool->nidle--;
        }
        job *j = pool->head;
        if (!j)
            break; /* stopping and nothing left */
        pool->head = j->next;
        if (!pool->head)
            pool->tail = NULL;
        pthread_mutex_unlock(&pool->lock);
        j->fn(j->arg);
        free(j);
        pthread_mutex_lock(&pool->lock);
    }
    pool->nexited++;
    pthread_cond_broadcast(&pool->finished);
    pthread_mutex_unlock(&pool->lock);
    return NULL;
}

th_pool *th_pool_new(size_t max_threads)
{
    th_pool *pool = calloc(1, sizeof *pool);
    if (!pool)
        return NULL;
    pool->max_threads = max_threads ? max_threads : 1;
    pool->threads = calloc(pool->max_threads, sizeof *pool->threads);
    if (!pool->threads) {
        free(pool);
        return NULL;
    }
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->work, NULL);
    pthread_cond_init(&pool->finished, NULL);
    return pool;
}

th_rc th_pool_submit(th_pool *pool, void (*fn)(void *), void *arg)
{
    job *j = malloc(sizeof *j);
    if (!j)
        return TH_ERR_NOMEM;
    j->fn = fn;
    j->arg = arg;
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
    /* Count queued jobs against idle threads: start one more thread when the
     * queue is longer than the number of threads waiting for it. */
    size_t queued = 0;
    for (job *q = pool->head; q && queued <= pool->nidle; q = q->next)
        queued++;
    if (queued > pool->nidle && pool->nthreads < pool->max_threads) {
        if (pthread_create(&pool->threads[pool->nthreads], NULL, worker, pool) == 0)
            pool->nthreads++;
        /* On failure the job waits for a running thread; if there is none
         * it still runs at shutdown's drain, never silently dropped. */
    }
    pthread_cond_signal(&pool->work);
    pthread_mutex_unlock(&pool->lock);
    return TH_OK;
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
    }
    pthread_cond_broadcast(&pool->work);
    while (pool->nexited < pool->nthreads) {
        if (!th_cond_wait_until(&pool->finished, &pool->lock, deadline_ms)) {
            pthread_mutex_unlock(&pool->lock);
            return false;
        }
    }
    pthread_mutex_unlock(&pool->lock);
    for (size_t i = 0; i < pool->nthreads; i++)
        pthread_join(pool->threads[i], NULL);
    pthread_mutex_destroy(&pool->lock);
    pthread_cond_destroy(&pool->work);
    pthread_cond_destroy(&pool->finished);
    free(pool->threads);
    free(pool);
    return true;
}
