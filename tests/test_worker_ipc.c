/* SPDX-License-Identifier: MIT */
/*
** test_worker_ipc.c: the host-child framing: frames split across reads at
** every byte, many frames in one read, an oversized length refused before
** any allocation, end of stream inside a frame, strict payload parsing, and
** a waiting reader that sleeps through the peer's reads of its own frames,
** and results printed without json-c exactly as json-c prints them.
*/
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "worker/ipc.h"
#include "check_main.h"

static int sp[2];

static void pair(void)
{
    ck_assert_int_eq(pipe(sp), 0); /* frames go one way on a pipe, as between host and worker */
}

static void unpair(void)
{
    if (sp[0] >= 0)
        close(sp[0]);
    if (sp[1] >= 0)
        close(sp[1]);
    sp[0] = sp[1] = -1;
}

/* The bytes of one frame as th_ipc_send writes them. */
static size_t frame_bytes(unsigned char *out, uint8_t type, uint32_t id, const char *payload)
{
    uint32_t len = (uint32_t)strlen(payload);
    memcpy(out, &len, 4);
    out[4] = type;
    memcpy(out + 5, &id, 4);
    memcpy(out + 9, payload, len);
    return 9 + len;
}

START_TEST(a_frame_split_at_every_byte_arrives_whole)
{
    unsigned char buf[256];
    size_t n = frame_bytes(buf, TH_IPC_RESULT, 77, "{\"content\":[]}");
    n += frame_bytes(buf + n, TH_IPC_LOG, 78, "{}");
    pair();
    th_ipc_reader r = {.fd = sp[0], .max = 1024};
    th_ipc_frame f;
    th_err err;
    int got = 0;
    for (size_t i = 0; i < n; i++) {
        ck_assert_int_eq(write(sp[1], buf + i, 1), 1);
        ck_assert_int_eq(th_ipc_fill(&r), 1);
        int k;
        while ((k = th_ipc_next(&r, &f, &err)) == 1) {
            if (got == 0) {
                ck_assert_int_eq(f.type, TH_IPC_RESULT);
                ck_assert_uint_eq(f.id, 77);
                ck_assert_str_eq(f.payload, "{\"content\":[]}");
            } else {
                ck_assert_int_eq(f.type, TH_IPC_LOG);
                ck_assert_uint_eq(f.id, 78);
                ck_assert_str_eq(f.payload, "{}");
            }
            got++;
        }
        ck_assert_int_eq(k, 0);
    }
    ck_assert_int_eq(got, 2);
    th_ipc_reader_free(&r);
    unpair();
}
END_TEST

START_TEST(many_frames_in_one_read_each_come_out_intact)
{
    pair();
    for (uint32_t i = 0; i < 200; i++) {
        char p[64];
        snprintf(p, sizeof p, "{\"n\":%u}", (unsigned)i);
        ck_assert_int_eq(th_ipc_send(sp[1], TH_IPC_PROGRESS, i, p, strlen(p)), TH_OK);
    }
    ck_assert_int_eq(th_ipc_send(sp[1], TH_IPC_DONE, 9, "", 0), TH_OK);
    close(sp[1]);
    sp[1] = -1;
    th_ipc_reader r = {.fd = sp[0], .max = 1024};
    th_ipc_frame f;
    th_err err;
    for (uint32_t i = 0; i < 200; i++) {
        char p[64];
        snprintf(p, sizeof p, "{\"n\":%u}", (unsigned)i);
        ck_assert_int_eq(th_ipc_recv(&r, &f, &err), 1);
        ck_assert_uint_eq(f.id, i);
        ck_assert_str_eq(f.payload, p);
    }
    ck_assert_int_eq(th_ipc_recv(&r, &f, &err), 1);
    ck_assert_int_eq(f.type, TH_IPC_DONE);
    ck_assert_uint_eq(f.len, 0);
    ck_assert_str_eq(f.payload, "");
    ck_assert_int_eq(th_ipc_recv(&r, &f, &err), 0); /* clean end between frames */
    th_ipc_reader_free(&r);
    unpair();
}
END_TEST

START_TEST(an_oversized_length_is_refused)
{
    pair();
    unsigned char h[9] = {0};
    uint32_t len = 0xfffffff0u;
    memcpy(h, &len, 4);
    h[4] = TH_IPC_RESULT;
    ck_assert_int_eq(write(sp[1], h, sizeof h), 9);
    th_ipc_reader r = {.fd = sp[0], .max = 1u << 20};
    th_ipc_frame f;
    th_err err;
    ck_assert_int_eq(th_ipc_recv(&r, &f, &err), -1);
    ck_assert_msg(strstr(err.msg, "over the limit"), "%s", err.msg);
    ck_assert_uint_lt(r.cap, 1u << 20); /* nothing of that size was allocated */
    th_ipc_reader_free(&r);
    unpair();
}
END_TEST

START_TEST(end_of_stream_inside_a_frame_is_an_error)
{
    pair();
    unsigned char buf[64];
    size_t n = frame_bytes(buf, TH_IPC_RESULT, 1, "{\"content\":[]}");
    ck_assert_int_eq(write(sp[1], buf, n - 3), (ssize_t)(n - 3));
    close(sp[1]);
    sp[1] = -1;
    th_ipc_reader r = {.fd = sp[0], .max = 1024};
    th_ipc_frame f;
    th_err err;
    ck_assert_int_eq(th_ipc_recv(&r, &f, &err), -1);
    ck_assert_msg(strstr(err.msg, "end of stream inside a frame"), "%s", err.msg);
    th_ipc_reader_free(&r);
    unpair();
}
END_TEST

START_TEST(payloads_are_parsed_strictly)
{
    th_err err;
    json_object *o = th_ipc_parse("{\"a\":[1,2]}", 11, &err);
    ck_assert_ptr_nonnull(o);
    json_object_put(o);
    ck_assert_ptr_null(th_ipc_parse("{\"a\":1} x", 9, &err));
    ck_assert_ptr_null(th_ipc_parse("{\"a\":\xff}", 7, &err));
    ck_assert_ptr_null(th_ipc_parse("{\"a\":", 5, &err));
    /* Trailing bytes other than white space are refused on the quick path
     * too; "{}" with a NUL inside the length is not a whole payload. */
    o = th_ipc_parse("{\"a\":1} ", 8, &err);
    ck_assert_ptr_nonnull(o);
    json_object_put(o);
    ck_assert_ptr_null(th_ipc_parse("{\"a\":1}{}", 9, &err));
    ck_assert_ptr_null(th_ipc_parse("{}\0}", 4, &err));
    /* Values outside the quick subset parse as before. */
    o = th_ipc_parse("{\"d\":1.5,\"s\":\"\\u00e9\",\"n\":12345678901234567890}", 47, &err);
    ck_assert_ptr_nonnull(o);
    ck_assert_str_eq(json_object_get_string(json_object_object_get(o, "s")), "\xc3\xa9");
    json_object_put(o);
    /* A result nested 100 deep (the host allows 128) still parses. */
    char deep[512];
    size_t k = 0;
    for (int i = 0; i < 100; i++)
        deep[k++] = '[';
    for (int i = 0; i < 100; i++)
        deep[k++] = ']';
    o = th_ipc_parse(deep, k, &err);
    ck_assert_ptr_nonnull(o);
    json_object_put(o);
}
END_TEST

/*
** A frame to a reader that is gone is TH_ERR_IO, never a SIGPIPE: a host
** whose worker died mid-call must live on, whatever disposition a plugin
** in its process left for SIGPIPE (here the default, which would end it),
** and no SIGPIPE stays pending for a later unblock to deliver.
*/
START_TEST(a_frame_to_a_reader_that_is_gone_fails_without_sigpipe)
{
    signal(SIGPIPE, SIG_DFL);
    pair();
    close(sp[0]);
    sp[0] = -1;
    ck_assert_int_eq(th_ipc_send(sp[1], TH_IPC_RESULT, 1, "{}", 2), TH_ERR_IO);
    sigset_t pending;
    ck_assert_int_eq(sigpending(&pending), 0);
    ck_assert(!sigismember(&pending, SIGPIPE));
    unpair();
}
END_TEST

/* The waiting side of a_waiting_reader_sleeps_through_the_peers_reads:
 * it writes a request to TO and waits for the answer on its reader. */
typedef struct waiter {
    th_ipc_reader r;
    int to;
    pid_t tid;
    long got;
} waiter;

static void *wait_for_frame(void *p)
{
    waiter *w = p;
    __atomic_store_n(&w->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
    ck_assert_int_eq(th_ipc_send(w->to, TH_IPC_RESULT, 1, "{}", 2), TH_OK);
    w->got = th_ipc_fill(&w->r);
    return NULL;
}

/* Field KEY of /proc/self/task/TID/status (a number), or -1. */
static long task_status(pid_t tid, const char *key)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/self/task/%ld/status", (long)tid);
    FILE *f = fopen(path, "r");
    long v = -1;
    size_t n = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, key, n) == 0 && line[n] == ':')
            v = strtol(line + n + 1, NULL, 10);
    if (f)
        fclose(f);
    return v;
}

/*
** True once thread TID is blocked in system call NR: switched out and off
** the run queue, its voluntary context switch counted. The kernel prints
** the call in /proc/.../syscall only then ("running" while the thread is
** on a CPU or preempted). State S alone is not that: a thread shows S
** from the moment it marks itself sleeping, before it has switched out,
** and a loaded machine can preempt it right there (seen: "before" 0, then
** 1 with no wake-up at all).
*/
static bool task_blocked_in(pid_t tid, long nr)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%ld/syscall", (long)tid);
    FILE *f = fopen(path, "r");
    long got = -1;
    bool blocked = f && fscanf(f, "%ld", &got) == 1 && got == nr;
    if (f)
        fclose(f);
    return blocked;
}

/*
** A reader asleep in read(2) waiting for its answer is not woken when the
** peer reads the request it wrote: on the two pipes between host and
** worker the request and the answer have separate wait queues. (Asleep in
** read(2) on one unix socket it would be: the kernel wakes every waiter on
** the socket when its sent bytes are consumed, a wasted pair of context
** switches on every call.)
*/
START_TEST(a_waiting_reader_sleeps_through_the_peers_reads)
{
    int down[2], up[2];
    ck_assert_int_eq(pipe(down), 0);
    ck_assert_int_eq(pipe(up), 0);
    waiter w = {.r = {.fd = up[0], .max = 1024}, .to = down[1]};
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, wait_for_frame, &w), 0);
    /* Its request is in the pipe and it sleeps waiting for the answer. */
    char buf[64];
    struct timespec tick = {0, 1000000L};
    int queued = 0;
    while (ioctl(down[0], FIONREAD, &queued) == 0 && queued < TH_IPC_HEADER + 2)
        nanosleep(&tick, NULL);
    long long until = th_now_ms() + 20000;
    while (!__atomic_load_n(&w.tid, __ATOMIC_SEQ_CST) || !task_blocked_in(w.tid, SYS_read)) {
        ck_assert_msg(th_now_ms() < until, "the waiter was not seen blocked in read(2) for 20 s");
        nanosleep(&tick, NULL);
    }
    long before = task_status(w.tid, "voluntary_ctxt_switches");
    ck_assert_int_ge(before, 0);
    /* The peer reads the request: the waiter must sleep on. */
    ck_assert_int_eq(read(down[0], buf, TH_IPC_HEADER + 2), TH_IPC_HEADER + 2);
    for (int i = 0; i < 50; i++) /* room for a wake-up, were there one */
        nanosleep(&tick, NULL);
    ck_assert_int_eq(task_status(w.tid, "voluntary_ctxt_switches"), before);
    /* The answer wakes it, and it has the bytes. */
    ck_assert_int_eq(th_ipc_send(up[1], TH_IPC_RESULT, 1, "[]", 2), TH_OK);
    pthread_join(t, NULL);
    ck_assert_int_eq(w.got, TH_IPC_HEADER + 2);
    th_ipc_frame f;
    th_err err;
    ck_assert_int_eq(th_ipc_next(&w.r, &f, &err), 1);
    ck_assert_str_eq(f.payload, "[]");
    th_ipc_reader_free(&w.r);
    close(down[0]);
    close(down[1]);
    close(up[0]);
    close(up[1]);
}
END_TEST

static Suite *ipc_suite(void)
{
    Suite *s = suite_create("worker_ipc");
    TCase *tc = tcase_create("frames");
    tcase_add_test(tc, a_frame_split_at_every_byte_arrives_whole);
    tcase_add_test(tc, many_frames_in_one_read_each_come_out_intact);
    tcase_add_test(tc, an_oversized_length_is_refused);
    tcase_add_test(tc, end_of_stream_inside_a_frame_is_an_error);
    tcase_add_test(tc, payloads_are_parsed_strictly);
    tcase_add_test(tc, a_waiting_reader_sleeps_through_the_peers_reads);
    tcase_add_test(tc, a_frame_to_a_reader_that_is_gone_fails_without_sigpipe);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(ipc_suite, th_check_nothing, th_check_nothing)
