/* SPDX-License-Identifier: MIT */
/*
** test_memory_bounds.c: what one request or a slow reader can make the host
** hold over stdio: a JSON-RPC batch's answers, the parsed arguments of calls
** in flight, and answers queued for a client that does not read. Each test
** measures the host's own RSS (/proc/PID/status) with a wide margin.
*/
#include "config.h"

#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mcp_harness.h"
#include "check_main.h"

#define FILES_SO TOP_BUILDDIR "/plugins/.libs/files.so"
#define BIG_BYTES (512 * 1024)
/* Under AddressSanitizer freed memory waits in quarantine (256 MiB by
 * default) and every block has redzones: RSS says little there, so the
 * bounds get that much room. */
#if defined(__SANITIZE_ADDRESS__)
#define RSS_SLACK_KIB (1024L * 1024)
#else
#define RSS_SLACK_KIB 0L
#endif

static const char *const modes[] = {"--isolation=none", "--isolation=process"};

static char froot[64];

/* A files root holding one 512 KiB text file, served by the files plugin. */
static void setup(void)
{
    mh_global_setup();
    snprintf(froot, sizeof froot, "/tmp/th-membound-%ld", (long)getpid());
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s && head -c %d /dev/zero | tr '\\000' a > %s/big", froot,
             froot, BIG_BYTES, froot);
    if (system(cmd) != 0) { /* before the runner: no ck_assert here */
        fprintf(stderr, "cannot create the files root %s\n", froot);
        exit(1);
    }
    setenv("TOOLHOST_FILES_ROOT", froot, 1);
    setenv("TOOLHOST_FILES_MAX_BYTES", "1048576", 1);
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", froot);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", froot);
    mh_global_teardown();
}

/* Read the big file once, so the baseline includes what serving it costs. */
static void read_big_once(mh_proc *p)
{
    json_object *o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\","
                               "\"params\":{\"uri\":\"file:///big\"}}");
    MH_ASSERT_RESULT(o);
    json_object_put(o);
}

/* The batch's elements answered with a result, and busy; it must answer each. */
static void count_batch(json_object *a, size_t n, size_t *results, size_t *busy)
{
    ck_assert_msg(json_object_is_type(a, json_type_array) && json_object_array_length(a) == n,
                  "want an array of %zu answers", n);
    *results = *busy = 0;
    for (size_t i = 0; i < n; i++) {
        json_object *o = json_object_array_get_idx(a, i);
        if (mh_has(o, "result"))
            (*results)++;
        else if (json_object_get_int(mh_at(o, "error code")) == -31000)
            (*busy)++;
        else
            ck_abort_msg("unexpected answer %s", mh_json(o));
    }
}

/*
** 200 reads of a 512 KiB file in one 17 KB batch used to answer 100 MB and
** grow the host by 322 MB. The batch is answered in full, but past the
** bound (--max-result-bytes, 16 MiB by default) the reads are busy errors.
*/
START_TEST(batch_answers_are_bounded)
{
    char *dir = mh_private_dir(FILES_SO, NULL);
    mh_proc *p = mh_spawn("-d", dir, modes[_i], "--no-registry-cache", NULL);
    mh_initialize(p, "2025-03-26");
    read_big_once(p);
    long before = mh_status_kib(mh_pid(p), "VmRSS");

    enum { N = 200 };
    size_t cap = N * 96 + 16, len = 0;
    char *batch = malloc(cap);
    ck_assert_ptr_nonnull(batch);
    batch[len++] = '[';
    for (int i = 0; i < N; i++)
        len += (size_t)snprintf(batch + len, cap - len,
                                "%s{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"resources/read\","
                                "\"params\":{\"uri\":\"file:///big\"}}",
                                i ? "," : "", 10 + i);
    batch[len++] = ']';
    mh_send_raw(p, batch, len);
    mh_send_raw(p, "\n", 1);
    free(batch);

    char *line = mh_read_line(p, MH_TIMEOUT_MS);
    ck_assert_msg(line != NULL, "no answer to the batch");
    size_t answer = strlen(line);
    json_object *a = mh_parse(line);
    free(line);
    size_t results, busy;
    count_batch(a, N, &results, &busy);
    json_object_put(a);
    long hwm = mh_status_kib(mh_pid(p), "VmHWM");
    fprintf(stderr, "test_memory_bounds: %s: batch of %d reads: %zu results, %zu busy, answer %zu bytes; "
                    "host VmRSS %ld kB before, VmHWM %ld kB after\n",
            modes[_i], N, results, busy, answer, before, hwm);
    ck_assert_msg(busy > 0 && results > 0, "want both results and busy errors, got %zu and %zu", results, busy);
    ck_assert_msg(answer <= (size_t)20 << 20, "the batch's answer is %zu bytes", answer);
    ck_assert_msg(hwm - before < 160 * 1024 + RSS_SLACK_KIB, "the host grew from %ld kB to a peak of %ld kB", before, hwm);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/* Past the count bound, a batch's requests are busy even when small. */
START_TEST(batch_count_is_bounded)
{
    mh_proc *p = mh_start(NULL);
    mh_initialize(p, "2025-03-26");
    enum { N = 300 };
    size_t cap = N * 48 + 16, len = 0;
    char *batch = malloc(cap);
    ck_assert_ptr_nonnull(batch);
    batch[len++] = '[';
    for (int i = 0; i < N; i++)
        len += (size_t)snprintf(batch + len, cap - len, "%s{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"ping\"}",
                                i ? "," : "", 10 + i);
    batch[len++] = ']';
    mh_send_raw(p, batch, len);
    mh_send_raw(p, "\n", 1);
    free(batch);
    char *line = mh_read_line(p, MH_TIMEOUT_MS);
    ck_assert_msg(line != NULL, "no answer to the batch");
    json_object *a = mh_parse(line);
    free(line);
    size_t results, busy;
    count_batch(a, N, &results, &busy);
    json_object_put(a);
    ck_assert_msg(results == 128 && busy == N - 128, "want 128 results and %d busy, got %zu and %zu", N - 128,
                  results, busy);
    mh_finish(p);
}
END_TEST

/*
** Send pings until the host's stdin pipe is full: the host stopped
** reading (it waits for its client to read). Returns how many were sent.
*/
static int fill_stdin(mh_proc *p)
{
    int fd = mh_stdin_fd(p), sent = 0, unread = 0;
    long long give_up = mh_now_ms() + MH_TIMEOUT_MS;
    for (;;) {
        struct pollfd pfd = {.fd = fd, .events = POLLOUT};
        if (poll(&pfd, 1, 0) == 1) { /* room for PIPE_BUF bytes: a line never blocks */
            mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":\"p%d\",\"method\":\"ping\"}", sent++);
            continue;
        }
        ck_assert_msg(ioctl(fd, FIONREAD, &unread) == 0, "FIONREAD on the host's stdin");
        if (unread > 32768)
            return sent;
        ck_assert_msg(mh_now_ms() < give_up, "the host's stdin neither drains nor fills");
    }
}

/*
** A client that sends 400 reads of a 512 KiB file (35 KB) and never reads
** its answers used to grow the host to 235 MB: the output bound was
** checked between read() calls, and one read brought all 400. The host
** now stops before the message that would pass it. The test waits until
** the host stops reading (its stdin pipe fills), then reads everything.
*/
START_TEST(unread_answers_are_bounded)
{
    char *dir = mh_private_dir(FILES_SO, NULL);
    mh_proc *p = mh_spawn("-d", dir, modes[_i], "--no-registry-cache", NULL);
    mh_initialize(p, "2025-11-25");
    read_big_once(p);
    long before = mh_status_kib(mh_pid(p), "VmRSS");

    enum { N = 400 };
    size_t cap = (size_t)N * 96, len = 0;
    char *lines = malloc(cap);
    ck_assert_ptr_nonnull(lines);
    for (int i = 0; i < N; i++)
        len += (size_t)snprintf(lines + len, cap - len,
                                "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"resources/read\","
                                "\"params\":{\"uri\":\"file:///big\"}}\n",
                                10 + i);
    mh_send_raw(p, lines, len);
    free(lines);
    int pings = fill_stdin(p);

    int reads = 0, pongs = 0;
    while (reads < N || pongs < pings) {
        json_object *o = mh_next(p);
        MH_ASSERT_RESULT(o);
        if (json_object_is_type(mh_at(o, "id"), json_type_string))
            pongs++;
        else
            reads++;
        json_object_put(o);
    }
    long hwm = mh_status_kib(mh_pid(p), "VmHWM");
    fprintf(stderr, "test_memory_bounds: %s: %d unread reads of 512 KiB then %d pings: host VmRSS %ld kB before, "
                    "VmHWM %ld kB after\n",
            modes[_i], N, pings, before, hwm);
    ck_assert_msg(hwm - before < 120 * 1024 + RSS_SLACK_KIB, "the host grew from %ld kB to a peak of %ld kB", before, hwm);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/*
** The reader waits while 64 answers are owed; answers written by their own
** senders (the output idle) must still let it go on. 70 gated calls: the
** reader stops with 64 owed, the gate opens, and all 70 must be answered.
*/
START_TEST(owed_answers_do_not_stall_the_reader)
{
    enum { N = 70, OWED = 64 };
    mh_proc *p = mh_start(modes[_i], NULL);
    mh_initialize(p, "2025-11-25");
    char gate[64], mark[80];
    snprintf(gate, sizeof gate, "%s/owed", mh_marks_dir());
    unlink(gate);
    for (int i = 0; i < N; i++) {
        snprintf(mark, sizeof mark, "%s.%d", gate, i);
        unlink(mark);
        mh_send(p,
                "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\","
                "\"arguments\":{\"ms\":0,\"gate\":\"%s\",\"mark\":\"%s\"}}}",
                100 + i, gate, mark);
    }
    long long give_up = mh_now_ms() + MH_TIMEOUT_MS;
    for (int i = 0; i < OWED; i++) { /* the first 64 run; the reader holds the rest */
        snprintf(mark, sizeof mark, "%s.%d", gate, i);
        while (access(mark, F_OK) != 0) {
            ck_assert_msg(mh_now_ms() < give_up, "call %d never started", i);
            usleep(10 * 1000);
        }
    }
    FILE *f = fopen(gate, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    for (int k = 0; k < N; k++) {
        json_object *o = mh_next(p);
        MH_ASSERT_RESULT(o);
        json_object_put(o);
    }
    unlink(gate);
    for (int i = 0; i < N; i++) {
        snprintf(mark, sizeof mark, "%s.%d", gate, i);
        unlink(mark);
    }
    mh_finish(p);
}
END_TEST

/*
** 20 calls held by a gate, each with a 3 MB array argument (1.5 million
** numbers): the parsed trees used to take ~100 MiB each (2.5 GiB in all
** with 4 MB) while --max-inflight-bytes counted text. Now the host counts
** the parsed size, and drops the tree of a call its worker runs once it
** is validated: each call runs or is answered busy, and the host stays
** under 512 MiB. The test waits until every call has either started (its
** mark file) or been answered.
*/
START_TEST(parsed_arguments_are_bounded)
{
    enum { N = 20, ELEMS = 1500000 };
    /* The running call waits for the gate, however long the others take to
     * be read (minutes under a sanitizer): no deadline answers it first. */
    mh_proc *p = mh_start(modes[_i], "--call-timeout=3600", NULL);
    mh_initialize(p, "2025-11-25");
    long before = mh_status_kib(mh_pid(p), "VmRSS");
    char gate[64], mark[80];
    snprintf(gate, sizeof gate, "%s/gate", mh_marks_dir());
    unlink(gate);

    size_t cap = (size_t)ELEMS * 2 + 512;
    char *line = malloc(cap);
    ck_assert_ptr_nonnull(line);
    for (int i = 0; i < N; i++) {
        snprintf(mark, sizeof mark, "%s.%d", gate, i);
        unlink(mark);
        int len = snprintf(line, cap,
                           "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\","
                           "\"arguments\":{\"ms\":0,\"gate\":\"%s\",\"mark\":\"%s\",\"pad\":[",
                           100 + i, gate, mark);
        for (int k = 0; k < ELEMS; k++) {
            line[len++] = '0';
            line[len++] = ',';
        }
        len--; /* the last comma */
        len += snprintf(line + len, cap - (size_t)len, "]}}}\n");
        mh_send_raw(p, line, (size_t)len);
    }
    free(line);

    /* Each call either runs (it made its mark) or was answered busy. */
    bool answered[N] = {0}, running[N] = {0};
    int settled = 0, busy = 0, ran = 0, early = 0;
    long long give_up = mh_now_ms() + MH_TIMEOUT_MS;
    while (settled < N) {
        for (int i = 0; i < N; i++) {
            snprintf(mark, sizeof mark, "%s.%d", gate, i);
            if (!running[i] && !answered[i] && access(mark, F_OK) == 0) {
                running[i] = true;
                settled++;
                ran++;
            }
        }
        json_object *o = mh_read(p, 20);
        int id = o ? json_object_get_int(mh_at(o, "id")) - 100 : -1;
        if (o && id >= 0 && id < N && running[id] && !answered[id] && mh_has(o, "result")) {
            /* The plugin waits a minute at most for its gate: a slow
             * (sanitizer) build may get here later than that. */
            answered[id] = true;
            early++;
            json_object_put(o);
            o = NULL;
        }
        if (o) {
            ck_assert_msg(id >= 0 && id < N && !running[id] && !answered[id], "unexpected %s", mh_json(o));
            MH_ASSERT_ERROR(o, -31000);
            answered[id] = true;
            settled++;
            busy++;
            json_object_put(o);
        }
        ck_assert_msg(mh_now_ms() < give_up, "%d of %d calls neither ran nor were answered", N - settled, N);
    }
    long rss = mh_status_kib(mh_pid(p), "VmRSS");
    fprintf(stderr, "test_memory_bounds: %s: %d calls with a 3 MB array: %d running, %d busy; host VmRSS %ld kB "
                    "before, %ld kB with the calls in flight\n",
            modes[_i], N, ran, busy, before, rss);
    ck_assert_msg(rss < 512 * 1024 + RSS_SLACK_KIB, "the host holds %ld kB with %d calls in flight", rss, ran);
    ck_assert_msg(ran >= 1, "no call ran");

    FILE *f = fopen(gate, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    for (int k = early; k < ran; k++) {
        json_object *o = mh_next(p);
        MH_ASSERT_RESULT(o);
        json_object_put(o);
    }
    unlink(gate);
    for (int i = 0; i < N; i++) {
        snprintf(mark, sizeof mark, "%s.%d", gate, i);
        unlink(mark);
    }
    mh_finish(p);
}
END_TEST

static Suite *memory_suite(void)
{
    Suite *s = suite_create("memory_bounds");
    TCase *tc = tcase_create("batches");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_loop_test(tc, batch_answers_are_bounded, 0, 2);
    tcase_add_test(tc, batch_count_is_bounded);
    suite_add_tcase(s, tc);
    tc = tcase_create("stdio");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_loop_test(tc, unread_answers_are_bounded, 0, 2);
    tcase_add_loop_test(tc, owed_answers_do_not_stall_the_reader, 0, 2);
    suite_add_tcase(s, tc);
    tc = tcase_create("arguments");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_loop_test(tc, parsed_arguments_are_bounded, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(memory_suite, setup, teardown)
