/* SPDX-License-Identifier: MIT */
/*
** test_load.c: the load test: 100,000 pipelined tools/call requests,
** 1,000 in flight, against fast, slow, failing and crashing tools; every
** request gets exactly one response and the host's memory stays bounded.
*/
/* asprintf */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcp_harness.h"
#include "check_main.h"

#define ECHO_SO TOP_BUILDDIR "/plugins/.libs/echo.so"
#define SLOW_SO TEST_BUILDDIR "/mcpplugins/.libs/slow.so"
#define FAILER_SO TEST_BUILDDIR "/mcpplugins/.libs/failer.so"

/* A sanitizer build (the host is built with the same flags as this test). */
#if defined(__SANITIZE_ADDRESS__)
#define ASAN_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ASAN_BUILD 1
#endif
#endif

#define WINDOW 1000          /* requests in flight */
#define DEFAULT_CALLS 100000 /* TH_LOAD_CALLS overrides (scripts/test.sh, for slow builds) */
/* Generous: the host, its workers and a json-c client on a loaded machine.
 * What matters is that it is fixed, whatever the number of calls. */
#define RSS_BOUND_KIB (200 * 1024)
/* A leak grows the host in every quarter of the run; the allocator's
 * one-off steps (an arena filling, more threads: how many the host runs
 * depends on how often a reader was held up by a slow call, which a
 * loaded machine changes from run to run, seen from 13 to 138) come once.
 * So the growth of the calmer of the last two quarters is what is
 * bounded: a leak of 48 bytes or more per call is past it over 25,000
 * calls, plus what the threads started in that quarter bring (the stack
 * pages of each). The host runs with one malloc arena (see the test):
 * with one per thread, each arena's high-water mark went on rising as
 * the calls' blocks landed unevenly on 30 arenas, 1-3 MB a quarter
 * whether the quarter had 25,000 calls or 100,000, which failed a third
 * of the runs on a loaded machine; with one, 100,000 calls grow it by
 * some 100 kB. */
#define RSS_SLACK_KIB 1024
#define THREAD_SLACK_KIB 256
/* The pool's and the readers' bounds, with room for the host's fixed
 * threads: a host that kept starting threads would pass it. */
#define THREAD_BOUND 200

/* The tools of the mix, by what their answer must look like. */
enum kind { ECHO, SLOW, FAIL, CRASH };
static const char *const tool_name[] = {"echo", "slow", "failer", "crash"};

/* Mostly fast echoes; every 10th fails, every 50th sleeps, and (where a
 * crash is survivable) every 1000th faults in its worker. */
static enum kind kind_of(long i, bool crashing)
{
    if (crashing && i % 1000 == 500)
        return CRASH;
    if (i % 50 == 7)
        return SLOW;
    if (i % 10 == 3)
        return FAIL;
    return ECHO;
}

typedef struct {
    long ok, tool_errors, crashed, quarantined, crash_other, busy;
} tally;

static long calls_wanted(void)
{
    const char *env = getenv("TH_LOAD_CALLS");
    long n = env ? strtol(env, NULL, 10) : DEFAULT_CALLS;
    ck_assert_msg(n >= 2 * WINDOW, "TH_LOAD_CALLS=%s: want at least %d", env, 2 * WINDOW);
    return n;
}

static int format_call(char *buf, size_t size, long i, enum kind k)
{
    const char *args = "{}";
    char text[48];
    if (k == ECHO) {
        snprintf(text, sizeof text, "{\"text\":\"t%ld\"}", i);
        args = text;
    } else if (k == SLOW) {
        args = "{\"ms\":3}";
    } else if (k == FAIL) {
        args = "{\"reason\":\"load\"}";
    }
    int n = snprintf(buf, size,
                     "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\","
                     "\"arguments\":%s," MH_MODERN_META "}}\n",
                     i, tool_name[k], args);
    ck_assert(n > 0 && (size_t)n < size);
    return n;
}

/* Check one response against what its request asked, and count it. */
static void take_response(json_object *o, uint8_t *seen, long calls, bool crashing, tally *t)
{
    json_object *id = mh_at(o, "id");
    ck_assert_msg(json_object_is_type(id, json_type_int), "a response without an integer id: %s", mh_json(o));
    long i = (long)json_object_get_int64(id);
    ck_assert_msg(i >= 0 && i < calls, "a response to an id never sent: %s", mh_json(o));
    ck_assert_msg(seen[i] == 0, "a second response to id %ld: %s", i, mh_json(o));
    seen[i] = 1;
    if (mh_has(o, "error")) {
        MH_ASSERT_ERROR(o, -31000); /* busy is a response; any other error is not expected */
        t->busy++;
        return;
    }
    MH_ASSERT_RESULT(o);
    json_object *is_error = mh_at(o, "result isError");
    bool failed = is_error && json_object_get_boolean(is_error);
    const char *text = mh_str(o, "result content 0 text");
    ck_assert_msg(text != NULL, "no text in %s", mh_json(o));
    switch (kind_of(i, crashing)) {
    case ECHO: {
        char want[32];
        snprintf(want, sizeof want, "t%ld", i);
        ck_assert_msg(!failed && strcmp(text, want) == 0, "echo %ld: want \"%s\" in %s", i, want, mh_json(o));
        t->ok++;
        break;
    }
    case SLOW:
        ck_assert_msg(!failed && strncmp(text, "slow[-]: slept ", 15) == 0, "slow %ld: %s", i, mh_json(o));
        t->ok++;
        break;
    case FAIL:
        ck_assert_msg(failed, "failer %ld must be an isError result: %s", i, mh_json(o));
        t->tool_errors++;
        break;
    case CRASH:
        ck_assert_msg(failed, "crash %ld must be an isError result: %s", i, mh_json(o));
        if (strncmp(text, "tool 'crash' crashed: signal 11", 31) == 0)
            t->crashed++;
        else if (strstr(text, "quarantined"))
            t->quarantined++;
        else if (t->crash_other++ == 0)
            fprintf(stderr, "test_load: crash %ld: %s\n", i, text);
        break;
    }
}

/*
** Pipeline CALLS requests through P with WINDOW in flight. Writes never
** block (the host stops reading while its output waits, so a blocking
** client would deadlock with it); reads wait only when there is nothing to
** send. Samples the host's VmRSS once half the responses are in.
*/
static void run_load(mh_proc *p, long calls, bool crashing, tally *t, long rss[2], long threads[2])
{
    uint8_t *seen = calloc((size_t)calls, 1);
    ck_assert(seen != NULL);
    int fd = mh_stdin_fd(p);
    ck_assert(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == 0);
    char req[512];
    size_t req_len = 0, req_off = 0; /* the request being written */
    long sent = 0, answered = 0;
    while (answered < calls) {
        bool blocked = false;
        while (!blocked) {
            if (req_off == req_len) {
                if (sent == calls || sent - answered >= WINDOW)
                    break;
                req_len = (size_t)format_call(req, sizeof req, sent, kind_of(sent, crashing));
                req_off = 0;
                sent++;
            }
            ssize_t n = write(fd, req + req_off, req_len - req_off);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0 && errno == EAGAIN) {
                blocked = true;
                break;
            }
            ck_assert_msg(n > 0, "writing to toolhost: %s", strerror(errno));
            req_off += (size_t)n;
        }
        /* Nothing more to send: wait for a response. The pipe full: give
         * the host a moment to drain its output. Else only take what is there. */
        bool can_send = req_off < req_len || (sent < calls && sent - answered < WINDOW);
        int timeout = blocked ? 10 : can_send ? 0 : MH_TIMEOUT_MS;
        for (;;) {
            char *line = mh_read_line(p, timeout);
            if (!line) {
                ck_assert_msg(timeout < MH_TIMEOUT_MS, "no response for %d ms with %ld of %ld answered (%s)",
                              MH_TIMEOUT_MS, answered, calls, mh_eof(p) ? "EOF" : "timeout");
                break;
            }
            json_object *o = mh_parse(line);
            ck_assert_msg(o != NULL, "not JSON: %s", line);
            free(line);
            if (mh_has(o, "id")) {
                take_response(o, seen, calls, crashing, t);
                ++answered;
                if (answered == calls / 2 || answered == calls / 4 * 3) {
                    int k = answered != calls / 2;
                    rss[k] = mh_status_kib(mh_pid(p), "VmRSS");
                    threads[k] = mh_status_kib(mh_pid(p), "Threads");
                }
            }
            json_object_put(o);
            timeout = 0;
        }
    }
    for (long i = 0; i < calls; i++)
        ck_assert_msg(seen[i] == 1, "no response to id %ld", i);
    free(seen);
    ck_assert(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) == 0);
}

/* _i: 0 in worker processes (with the crashing tool), 1 in the host (where
 * a crash would end it by design, so without it, and a fifth of the calls). */
START_TEST(pipelined_calls_each_get_one_response_and_memory_stays_bounded)
{
    bool in_process = _i == 0;
    long calls = calls_wanted();
    if (!in_process && calls / 5 >= 2 * WINDOW)
        calls /= 5;
    char *dir = in_process ? mh_private_dir(ECHO_SO, SLOW_SO, FAILER_SO, mh_hostile("crash"), NULL)
                           : mh_private_dir(ECHO_SO, SLOW_SO, FAILER_SO, NULL);
    /* A sanitizer build parks freed blocks in a quarantine of up to 256 MiB,
     * which would read as growth: keep it small, so the host is measured. */
    const char *asan = getenv("ASAN_OPTIONS");
    char *asan_small = NULL;
    ck_assert(asprintf(&asan_small, "%s%squarantine_size_mb=4", asan ? asan : "", asan ? ":" : "") > 0);
    ck_assert(setenv("ASAN_OPTIONS", asan_small, 1) == 0);
    free(asan_small);
    /* One arena: the host's RSS is then what it holds plus one heap's
     * slack, not the drifting peaks of one arena per thread (RSS_SLACK_KIB). */
    ck_assert(setenv("MALLOC_ARENA_MAX", "1", 1) == 0);
    mh_proc *p = mh_spawn("-d", dir, in_process ? "--isolation=process" : "--isolation=none", NULL);
    mh_ping_is_next(p, -1);

    tally t = {0};
    long rss[3] = {0}, threads[3] = {0}; /* at half, three quarters, the end */
    long long start = mh_now_ms();
    run_load(p, calls, in_process, &t, rss, threads);
    rss[2] = mh_status_kib(mh_pid(p), "VmRSS");
    threads[2] = mh_status_kib(mh_pid(p), "Threads");
    long hwm = mh_status_kib(mh_pid(p), "VmHWM");
    fprintf(stderr,
            "test_load: %s: %ld calls, %d in flight, in %lld ms: %ld ok, %ld tool errors, %ld crashed, "
            "%ld quarantined, %ld other crash-tool errors, %ld busy; host VmRSS %ld kB at half, %ld at three "
            "quarters, %ld at the end, VmHWM %ld kB; threads %ld, %ld, %ld\n",
            in_process ? "process" : "none", calls, WINDOW, mh_now_ms() - start, t.ok, t.tool_errors, t.crashed,
            t.quarantined, t.crash_other, t.busy, rss[0], rss[1], rss[2], hwm, threads[0], threads[1], threads[2]);
    ck_assert_msg(threads[2] <= THREAD_BOUND, "the host runs %ld threads, over the bound of %d", threads[2],
                  THREAD_BOUND);

    /* Under a wrapper (TH_TEST_WRAPPER: valgrind) the process measured is
     * the wrapper, whose own memory grows as it runs: the bounds are the
     * host's, so they hold only without one. AddressSanitizer's allocator
     * holds freed blocks per thread and grows with the pool's threads (its
     * own leak check covers that build), so the growth is checked without it. */
    const char *wrapper = getenv("TH_TEST_WRAPPER");
    if (!wrapper || !*wrapper) {
        ck_assert_msg(hwm < RSS_BOUND_KIB, "host VmHWM %ld kB, over the bound of %d kB", hwm, RSS_BOUND_KIB);
#ifndef ASAN_BUILD
        long over[2];
        for (int q = 0; q < 2; q++) {
            long started = threads[q + 1] > threads[q] ? threads[q + 1] - threads[q] : 0;
            over[q] = rss[q + 1] - rss[q] - RSS_SLACK_KIB - started * THREAD_SLACK_KIB;
        }
        ck_assert_msg(over[0] <= 0 || over[1] <= 0,
                      "host VmRSS grew in both of the last quarters: %ld kB at half, %ld at three quarters, %ld at "
                      "the end (threads %ld, %ld, %ld)",
                      rss[0], rss[1], rss[2], threads[0], threads[1], threads[2]);
#endif
    }
    /* The mix was served, not refused wholesale. */
    ck_assert_msg(t.busy < calls / 100, "%ld of %ld calls answered busy", t.busy, calls);
    if (in_process)
        ck_assert_msg(t.crashed >= 1 && t.crash_other == 0 && t.crashed + t.quarantined == (calls + 499) / 1000,
                      "crash calls: %ld crashed, %ld quarantined, %ld other (the first on stderr)", t.crashed,
                      t.quarantined, t.crash_other);
    /* And the host is still itself: the next message answers a ping. */
    mh_ping_is_next(p, -2);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

static Suite *load_suite(void)
{
    Suite *s = suite_create("load");
    TCase *tc = tcase_create("pipelined");
    tcase_set_timeout(tc, 600); /* the per-response timeout is the harness's 20 s */
    tcase_add_loop_test(tc, pipelined_calls_each_get_one_response_and_memory_stays_bounded, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(load_suite, mh_global_setup, mh_global_teardown)
