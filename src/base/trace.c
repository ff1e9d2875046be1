/* SPDX-License-Identifier: MIT */
/*
** base/trace.c: server spans and the bounded queue between the threads that
** serve requests and the one that exports (transport/otlp.c). Ending a span
** is a copy under a lock; when the exporter falls behind, spans are dropped
** and counted rather than a call waiting for it.
*/
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/compat.h"
#include "base/metrics.h"
#include "base/trace.h"
#include "base/util.h"

bool th_trace_enabled;

static struct {
    pthread_mutex_t lock;
    pthread_cond_t ready; /* WANT spans are queued, or the queue closed */
    th_span **ring; /* a pointer moves in and out: the lock is held for no copy */
    size_t cap, head, count, want;
    atomic_size_t full; /* COUNT == CAP, read without the lock */
    bool closed;
} q = {.lock = PTHREAD_MUTEX_INITIALIZER, .ready = PTHREAD_COND_INITIALIZER};

bool th_trace_open(size_t capacity)
{
    if (!(q.ring = calloc(capacity, sizeof *q.ring)))
        return false;
    q.cap = capacity;
    q.want = capacity;
    th_trace_enabled = true;
    return true;
}

static long long unix_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Identifiers need to be unique, not secret: a per-thread xorshift seeded
 * once from the kernel costs nothing per span. */
static uint64_t next_random(void)
{
    static _Thread_local uint64_t s[2];
    if (!s[0] && !s[1]) {
        if (th_random_bytes(s, sizeof s) != 0 || (!s[0] && !s[1])) {
            s[0] = (uint64_t)unix_ns() | 1;
            s[1] = (uint64_t)(uintptr_t)&s;
        }
    }
    uint64_t a = s[0], b = s[1];
    s[0] = b;
    a ^= a << 23;
    s[1] = a ^ b ^ (a >> 17) ^ (b >> 26);
    return s[1] + b;
}

static bool all_zero(const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (b[i])
            return false;
    return true;
}

/* BYTES random bytes that are not all zero (an invalid id in W3C and OTLP). */
static void random_id(uint8_t *id, size_t bytes)
{
    do {
        for (size_t i = 0; i < bytes; i += 8) {
            uint64_t r = next_random();
            memcpy(id + i, &r, bytes - i < 8 ? bytes - i : 8);
        }
    } while (all_zero(id, bytes));
}

th_span *th_span_begin(const char *method)
{
    /* A span that could only be dropped at its end is not made: under
     * overload a request pays one load here, not a span. */
    if (atomic_load_explicit(&q.full, memory_order_relaxed)) {
        if (th_metrics_enabled)
            th_metrics_span_dropped();
        return NULL;
    }
    th_span *sp = malloc(sizeof *sp);
    if (!sp)
        return NULL;
    sp->has_parent = false;
    sp->start_ns = unix_ns();
    sp->end_ns = 0;
    random_id(sp->trace_id, sizeof sp->trace_id);
    random_id(sp->span_id, sizeof sp->span_id);
    TH_SPAN_SET(sp, method, method);
    sp->target_key = NULL;
    sp->operation = NULL;
    sp->target[0] = sp->request_id[0] = sp->version[0] = sp->session_id[0] = '\0';
    sp->error_type[0] = sp->status[0] = '\0';
    sp->transport = "pipe";
    return sp;
}

void th_span_set_text(char *field, size_t size, const char *text)
{
    size_t len = text ? strlen(text) : 0;
    if (len >= size)
        len = size - 1;
    memcpy(field, text ? text : "", len);
    field[len] = '\0';
    th_utf8_clip(field);
}

static int hex_value(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* N bytes from 2N lowercase hex digits at S; false unless all are. */
static bool hex_bytes(const char *s, uint8_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int hi = hex_value(s[2 * i]), lo = hi < 0 ? -1 : hex_value(s[2 * i + 1]);
        if (lo < 0)
            return false;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return true;
}

/*
** VERSION "-" TRACE-ID "-" PARENT-ID "-" FLAGS (W3C Trace Context, level 1):
** 55 characters for version 00; a later version may append "-" and more.
** Version ff and all-zero ids are invalid.
*/
void th_span_set_parent(th_span *sp, const char *tp)
{
    uint8_t version, trace[16], parent[8], flags;
    size_t len = tp ? strlen(tp) : 0;
    if (!sp || len < 55 || !hex_bytes(tp, &version, 1) || version == 0xff || tp[2] != '-' ||
        !hex_bytes(tp + 3, trace, 16) || tp[35] != '-' || !hex_bytes(tp + 36, parent, 8) || tp[52] != '-' ||
        !hex_bytes(tp + 53, &flags, 1) || (version == 0 ? len != 55 : len > 55 && tp[55] != '-') ||
        all_zero(trace, 16) || all_zero(parent, 8))
        return;
    memcpy(sp->trace_id, trace, 16);
    memcpy(sp->parent_id, parent, 8);
    sp->has_parent = true;
}

void th_span_set_target(th_span *sp, const char *key, const char *target)
{
    if (!sp || !target)
        return;
    sp->target_key = key;
    TH_SPAN_SET(sp, target, target);
}

void th_span_fail(th_span *sp, const char *error_type, const char *message)
{
    if (!sp)
        return;
    TH_SPAN_SET(sp, error_type, error_type);
    TH_SPAN_SET(sp, status, message);
}

void th_span_end(th_span *sp)
{
    if (!sp)
        return;
    sp->end_ns = unix_ns();
    pthread_mutex_lock(&q.lock);
    bool queued = !q.closed && q.count < q.cap;
    if (queued) {
        q.ring[(q.head + q.count) % q.cap] = sp;
        if (++q.count == q.want)
            pthread_cond_signal(&q.ready);
        if (q.count == q.cap)
            atomic_store_explicit(&q.full, 1, memory_order_relaxed);
    }
    pthread_mutex_unlock(&q.lock);
    if (queued)
        return;
    if (th_metrics_enabled)
        th_metrics_span_dropped();
    free(sp);
}

size_t th_trace_drain(th_span **out, size_t max, long long wait_ms)
{
    long long deadline = th_now_ms() + wait_ms;
    pthread_mutex_lock(&q.lock);
    q.want = max < q.cap ? max : q.cap;
    while (q.count < q.want && !q.closed && th_cond_wait_until(&q.ready, &q.lock, deadline))
        ;
    size_t n = q.count < max ? q.count : max;
    for (size_t i = 0; i < n; i++)
        out[i] = q.ring[(q.head + i) % q.cap];
    q.head = (q.head + n) % q.cap;
    q.count -= n;
    if (n)
        atomic_store_explicit(&q.full, 0, memory_order_relaxed);
    pthread_mutex_unlock(&q.lock);
    return n;
}

void th_trace_close(void)
{
    pthread_mutex_lock(&q.lock);
    q.closed = true;
    pthread_cond_broadcast(&q.ready);
    pthread_mutex_unlock(&q.lock);
}

bool th_trace_closed(void)
{
    pthread_mutex_lock(&q.lock);
    bool closed = q.closed;
    pthread_mutex_unlock(&q.lock);
    return closed;
}
