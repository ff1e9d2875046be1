/* SPDX-License-Identifier: MIT */
/*
** transport/deadline.c: one thread sleeps until the earliest deadline of
** the connections it watches and shuts down the sockets past theirs (see
** deadline.h). libmicrohttpd's own timeout restarts at every byte, so a
** client sending a header line every half second would hold its
** connection for ever.
*/
#include "config.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/log.h"
#include "base/util.h"
#include "transport/deadline.h"

struct th_deadline {
    int fd;
    long long due;  /* th_now_ms; 0: off the clock */
    th_deadline *prev, *next;
};

struct th_deadlines {
    long long wait_ms, request_ms;
    pthread_mutex_t lock; /* everything below */
    pthread_cond_t wake;  /* a deadline came nearer, or stop */
    th_deadline *conns;
    long long sleeps_until; /* when the thread wakes by itself; 0: it has not looked yet */
    bool stop;
    pthread_t thread;
};

/* The earliest deadline among D's connections, 0 when none is armed. */
static long long earliest(const th_deadlines *d)
{
    long long due = 0;
    for (const th_deadline *c = d->conns; c; c = c->next)
        if (c->due && (!due || c->due < due))
            due = c->due;
    return due;
}

/* Shut down every connection past its deadline (under D->lock). The socket
 * stays open: its server thread sees the end of input, closes it, and
 * removes it from the watch before the descriptor can be reused. */
static void expire(th_deadlines *d, long long now)
{
    for (th_deadline *c = d->conns; c; c = c->next) {
        if (!c->due || c->due > now)
            continue;
        c->due = 0;
        shutdown(c->fd, SHUT_RDWR);
        th_log(TH_LOG_INFO, "http: a connection did not deliver its request in time; closed");
    }
}

static void *watch(void *arg)
{
    th_deadlines *d = arg;
    pthread_mutex_lock(&d->lock);
    while (!d->stop) {
        expire(d, th_now_ms());
        long long due = earliest(d);
        d->sleeps_until = due ? due : LLONG_MAX;
        if (due)
            th_cond_wait_until(&d->wake, &d->lock, due);
        else
            pthread_cond_wait(&d->wake, &d->lock);
    }
    pthread_mutex_unlock(&d->lock);
    return NULL;
}

th_deadlines *th_deadlines_new(long long wait_ms, long long request_ms, char *err, size_t errlen)
{
    th_deadlines *d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(err, errlen, "request deadlines: out of memory");
        return NULL;
    }
    d->wait_ms = wait_ms;
    d->request_ms = request_ms;
    pthread_mutex_init(&d->lock, NULL);
    pthread_cond_init(&d->wake, NULL);
    int rc = pthread_create(&d->thread, NULL, watch, d);
    if (rc != 0) {
        snprintf(err, errlen, "request deadlines: cannot start a thread: %s", strerror(rc));
        pthread_mutex_destroy(&d->lock);
        pthread_cond_destroy(&d->wake);
        free(d);
        return NULL;
    }
    return d;
}

void th_deadlines_free(th_deadlines *d)
{
    if (!d)
        return;
    pthread_mutex_lock(&d->lock);
    d->stop = true;
    pthread_cond_signal(&d->wake);
    pthread_mutex_unlock(&d->lock);
    pthread_join(d->thread, NULL);
    pthread_mutex_destroy(&d->lock);
    pthread_cond_destroy(&d->wake);
    free(d);
}

th_deadline *th_deadline_add(th_deadlines *d, int fd)
{
    th_deadline *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->fd = fd;
    pthread_mutex_lock(&d->lock);
    c->next = d->conns;
    if (d->conns)
        d->conns->prev = c;
    d->conns = c;
    pthread_mutex_unlock(&d->lock);
    th_deadline_wait(d, c);
    return c;
}

static void arm(th_deadlines *d, th_deadline *c, long long ms)
{
    if (!c)
        return;
    pthread_mutex_lock(&d->lock);
    c->due = th_now_ms() + ms;
    /* Woken only when this comes before the thread's own wake-up: a later
     * one keeps until then, when the thread looks again. Comparing with
     * the earliest of all instead woke it at nearly every request (the
     * one just armed is the earliest whenever the others are off the
     * clock), a context switch and a scan of every connection each. */
    if (c->due < d->sleeps_until) {
        d->sleeps_until = c->due;
        pthread_cond_signal(&d->wake);
    }
    pthread_mutex_unlock(&d->lock);
}

void th_deadline_wait(th_deadlines *d, th_deadline *c)
{
    arm(d, c, d->wait_ms);
}

void th_deadline_request(th_deadlines *d, th_deadline *c)
{
    arm(d, c, d->request_ms);
}

void th_deadline_disarm(th_deadlines *d, th_deadline *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&d->lock);
    c->due = 0;
    pthread_mutex_unlock(&d->lock);
}

void th_deadline_remove(th_deadlines *d, th_deadline *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&d->lock);
    if (c->prev)
        c->prev->next = c->next;
    else
        d->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    pthread_mutex_unlock(&d->lock);
    free(c);
}
