/* SPDX-License-Identifier: MIT */
/*
** tests/test_trace.c: base/trace.c alone: the ring between the threads that
** end spans and the exporter keeps their order, refuses spans past its
** capacity, and hands every span over exactly once while threads end
** spans and one drains at the same time; a traceparent's ids are taken.
*/
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/metrics.h"
#include "base/trace.h"
#include "base/util.h"
#include "check_main.h"

static void end_one(const char *method, int64_t id, long long t)
{
    th_span sp;
    ck_assert(th_span_begin(&sp, method, t));
    sp.int_id = true;
    sp.int_id_value = id;
    th_span_end(&sp, t + 5);
}

static void order_and_capacity(void)
{
    static const char *const methods[] = {"initialize", "tools/list", "tools/call", "ping"};
    for (int i = 0; i < 4; i++)
        end_one(methods[i], i, 100 * i);
    th_span sp;
    ck_assert_msg(!th_span_begin(&sp, "ping", 0), "a fifth span fitted in a ring of four");
    th_span out[8];
    ck_assert_uint_eq(th_trace_drain(out, 8, 0), 4);
    for (int i = 0; i < 4; i++) {
        ck_assert_ptr_eq(out[i].method, methods[i]);
        ck_assert_int_eq(out[i].int_id_value, i);
        ck_assert_int_eq(out[i].start_ns, 100 * i);
        ck_assert_int_eq(out[i].end_ns, 100 * i + 5);
        ck_assert_msg(memcmp(out[i].span_id, "\0\0\0\0\0\0\0\0", 8) != 0, "span %d has an all-zero id", i);
    }
    ck_assert_uint_eq(th_trace_drain(out, 8, 0), 0);
    end_one("ping", 9, 0); /* room again, on the ring's next lap */
    ck_assert_uint_eq(th_trace_drain(out, 8, 0), 1);
    ck_assert_int_eq(out[0].int_id_value, 9);
    th_trace_close();
    ck_assert(!th_span_begin(&sp, "ping", 0) || (th_span_end(&sp, 1), th_trace_drain(out, 8, 0) == 0));
}

#define THREADS 4
#define PER_THREAD 20000

static atomic_int finished;

/* toolhost_spans_dropped_total, as /metrics says it. */
static long long dropped(void)
{
    th_buf b = {0};
    ck_assert(th_metrics_render(&b, 4096));
    const char *line = strstr(b.data, "\ntoolhost_spans_dropped_total ");
    ck_assert_msg(line, "no toolhost_spans_dropped_total in:\n%s", b.data);
    long long n = atoll(line + sizeof "\ntoolhost_spans_dropped_total " - 1);
    free(b.data);
    return n;
}

static void *producer(void *arg)
{
    int64_t base = (int64_t)(intptr_t)arg * PER_THREAD;
    for (int64_t i = 0; i < PER_THREAD; i++) {
        th_span sp;
        if (!th_span_begin(&sp, "tools/call", 0))
            continue; /* counted dropped */
        sp.int_id = true;
        sp.int_id_value = base + i;
        th_span_end(&sp, 1); /* or counted dropped, when the ring filled meanwhile */
    }
    atomic_fetch_add(&finished, 1);
    return NULL;
}

/* Threads end spans while the test drains: each span comes out once, or
 * is counted dropped (the ring was full); none is lost or torn. */
static void concurrent_handover(void)
{
    long long before = dropped();
    pthread_t t[THREADS];
    for (intptr_t i = 0; i < THREADS; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, producer, (void *)i), 0);
    unsigned char *seen = calloc(THREADS * PER_THREAD, 1);
    th_span *out = malloc(32 * sizeof *out);
    ck_assert(seen && out);
    long long got = 0;
    for (;;) {
        bool done = atomic_load(&finished) == THREADS; /* before the drain that may find nothing */
        size_t n = th_trace_drain(out, 32, 0);
        for (size_t i = 0; i < n; i++) {
            int64_t id = out[i].int_id_value;
            ck_assert_msg(id >= 0 && id < THREADS * PER_THREAD && !seen[id], "span %lld twice or torn",
                          (long long)id);
            ck_assert_str_eq(out[i].method, "tools/call");
            ck_assert_int_eq(out[i].end_ns, 1);
            seen[id] = 1;
            got++;
        }
        if (n == 0 && done)
            break;
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    ck_assert_int_eq(got + dropped() - before, THREADS * PER_THREAD);
    ck_assert_int_gt(got, 0);
    free(seen);
    free(out);
}

static void traceparent(void)
{
    th_span sp;
    ck_assert(th_span_begin(&sp, "tools/call", 0));
    th_span_set_parent(&sp, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    ck_assert(sp.has_parent);
    ck_assert_mem_eq(sp.trace_id, "\x4b\xf9\x2f\x35\x77\xb3\x4d\xa6\xa3\xce\x92\x9d\x0e\x0e\x47\x36", 16);
    ck_assert_mem_eq(sp.parent_id, "\x00\xf0\x67\xaa\x0b\xa9\x02\xb7", 8);
    th_span fresh;
    ck_assert(th_span_begin(&fresh, "tools/call", 0));
    th_span_set_parent(&fresh, "00-00000000000000000000000000000000-00f067aa0ba902b7-01");
    ck_assert_msg(!fresh.has_parent, "an all-zero trace id was taken as a parent");
}

/* One ring for the process (th_trace_open is once per host), small so that
 * it fills: the parts run in turn on it, each leaving it empty. */
START_TEST(test_ring)
{
    th_metrics_enabled = true; /* drops are counted only then */
    ck_assert(th_trace_open(4));
    traceparent();
    concurrent_handover();
    order_and_capacity();
}
END_TEST

static Suite *trace_suite(void)
{
    Suite *s = suite_create("trace");
    TCase *tc = tcase_create("ring");
    tcase_add_test(tc, test_ring);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(trace_suite, th_check_nothing, th_check_nothing)
