/* SPDX-License-Identifier: MIT */
/*
** base/trace.c: server spans and the bounded ring between the threads that
** serve requests and the one that exports (transport/otlp.c). Ending a span
** claims a slot with one compare-and-swap and copies the span in; the lock
** is taken once per batch, to wake the exporter. When it falls behind,
** spans are dropped and counted rather than a call waiting for it.
*/
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/compat.h"
#include "base/metrics.h"
#include "base/trace.h"
#include "base/util.h"

bool th_trace_enabled;

/* A slot of the ring (Vyukov's bounded queue, one consumer): SEQ is its
 * position when free for a producer, position + 1 once its span is in,
 * and position + capacity again when the exporter has copied it out. */
typedef struct slot {
    atomic_size_t seq;
    th_span span;
} slot;

static struct {
    slot *ring;
    size_t cap, mask;
    _Alignas(64) atomic_size_t tail; /* the next position a producer claims */
    _Alignas(64) atomic_size_t head; /* the next position the exporter reads */
    atomic_size_t want;              /* ended spans that make a batch worth waking for */
    atomic_bool waiting, closed;     /* the exporter sleeps on READY; no more spans */
    pthread_mutex_t lock;
    pthread_cond_t ready;
} q = {.lock = PTHREAD_MUTEX_INITIALIZER, .ready = PTHREAD_COND_INITIALIZER};

bool th_trace_open(size_t capacity)
{
    size_t cap = 2;
    while (cap < capacity)
        cap *= 2; /* a power of two: a position's slot is a mask away */
    if (!(q.ring = calloc(cap, sizeof *q.ring)))
        return false;
    for (size_t i = 0; i < cap; i++)
        atomic_init(&q.ring[i].seq, i);
    q.cap = cap;
    q.mask = cap - 1;
    atomic_init(&q.want, cap);
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

/* A span's ids, neither all zero (invalid in W3C and OTLP): a zero word
 * is one in 2^64, so making it 1 costs nothing in uniqueness. */
static void random_ids(th_span *sp)
{
    uint64_t t[2] = {next_random(), next_random()}, id = next_random();
    if (!t[0] && !t[1])
        t[0] = 1;
    memcpy(sp->trace_id, t, sizeof t);
    id += !id;
    memcpy(sp->span_id, &id, sizeof id);
}

static void count_dropped(void)
{
    if (th_metrics_enabled)
        th_metrics_span_dropped();
}

bool th_span_begin(th_span *sp, const char *method, long long now_ns)
{
    /* A span that could only be dropped at its end is not made: under
     * overload a request pays two loads here, not a span. */
    size_t head = atomic_load_explicit(&q.head, memory_order_relaxed);
    if ((intptr_t)(atomic_load_explicit(&q.tail, memory_order_relaxed) - head) >= (intptr_t)q.cap) {
        count_dropped();
        return false;
    }
    sp->has_parent = false;
    sp->int_id = false;
    sp->start_ns = now_ns;
    sp->end_ns = 0;
    random_ids(sp);
    sp->method = method;
    sp->target_key = NULL;
    sp->operation = NULL;
    sp->version = NULL;
    sp->transport = "pipe";
    sp->target[0] = sp->request_id[0] = sp->session_id[0] = '\0';
    sp->error_type[0] = sp->status[0] = '\0';
    return true;
}

void th_span_set_text(char *field, size_t size, const char *text)
{
    size_t len = text ? strlen(text) : 0;
    if (len >= size)
        len = size - 1;
    memcpy(field, text ? text : "", len);
    field[len] = '\0';
    /* A string that ends in ASCII ends on a character: the usual case. */
    if (len && (unsigned char)field[len - 1] >= 0x80)
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

/* Claim the next free slot; NULL when the ring is full. */
static slot *claim(size_t *pos_out)
{
    size_t pos = atomic_load_explicit(&q.tail, memory_order_relaxed);
    for (;;) {
        slot *sl = &q.ring[pos & q.mask];
        size_t seq = atomic_load_explicit(&sl->seq, memory_order_acquire);
        intptr_t dif = (intptr_t)seq - (intptr_t)pos;
        if (dif < 0)
            return NULL; /* the exporter has not copied this lap's span out */
        if (dif == 0 && atomic_compare_exchange_weak_explicit(&q.tail, &pos, pos + 1, memory_order_relaxed,
                                                              memory_order_relaxed)) {
            *pos_out = pos;
            return sl;
        }
        if (dif > 0)
            pos = atomic_load_explicit(&q.tail, memory_order_relaxed);
    }
}

/* A batch has ended since the exporter went to sleep: wake it, once. The
 * fence orders this span's publication before the load of WAITING, as the
 * exporter orders its store of WAITING before counting (th_trace_drain):
 * one of the two sees the other. */
static void wake_if_due(intptr_t ended)
{
    if (ended < (intptr_t)atomic_load_explicit(&q.want, memory_order_relaxed))
        return;
    atomic_thread_fence(memory_order_seq_cst);
    if (!atomic_load_explicit(&q.waiting, memory_order_relaxed))
        return;
    pthread_mutex_lock(&q.lock);
    if (atomic_exchange(&q.waiting, false))
        pthread_cond_signal(&q.ready);
    pthread_mutex_unlock(&q.lock);
}

void th_span_end(th_span *sp, long long now_ns)
{
    if (!sp)
        return;
    size_t pos;
    slot *sl = atomic_load_explicit(&q.closed, memory_order_relaxed) ? NULL : claim(&pos);
    if (!sl) {
        count_dropped();
        return;
    }
    sp->end_ns = now_ns;
    sl->span = *sp;
    atomic_store_explicit(&sl->seq, pos + 1, memory_order_release);
    wake_if_due((intptr_t)(pos + 1 - atomic_load_explicit(&q.head, memory_order_relaxed)));
}

/* How many spans, up to MAX, have ended in order from the head. */
static size_t ended_from(size_t head, size_t max)
{
    size_t n = 0;
    while (n < max &&
           atomic_load_explicit(&q.ring[(head + n) & q.mask].seq, memory_order_acquire) == head + n + 1)
        n++;
    return n;
}

/* Sleep until WANT spans have ended, the ring closes or DEADLINE (ms). */
static void wait_for(size_t head, size_t want, long long deadline)
{
    pthread_mutex_lock(&q.lock);
    for (;;) {
        atomic_store(&q.waiting, true); /* seq_cst: see wake_if_due */
        if (ended_from(head, want) >= want || atomic_load(&q.closed) ||
            !th_cond_wait_until(&q.ready, &q.lock, deadline))
            break;
    }
    atomic_store(&q.waiting, false);
    pthread_mutex_unlock(&q.lock);
}

size_t th_trace_drain(th_span *out, size_t max, long long wait_ms)
{
    size_t head = atomic_load_explicit(&q.head, memory_order_relaxed);
    size_t want = max < q.cap ? max : q.cap;
    atomic_store_explicit(&q.want, want, memory_order_relaxed);
    if (ended_from(head, want) < want && wait_ms > 0)
        wait_for(head, want, th_now_ms() + wait_ms);
    size_t n = ended_from(head, want);
    for (size_t i = 0; i < n; i++) {
        slot *sl = &q.ring[(head + i) & q.mask];
        out[i] = sl->span;
        atomic_store_explicit(&sl->seq, head + i + q.cap, memory_order_release);
    }
    atomic_store_explicit(&q.head, head + n, memory_order_relaxed);
    return n;
}

void th_trace_close(void)
{
    pthread_mutex_lock(&q.lock);
    atomic_store(&q.closed, true);
    pthread_cond_broadcast(&q.ready);
    pthread_mutex_unlock(&q.lock);
}

bool th_trace_closed(void)
{
    return atomic_load(&q.closed);
}
