/* SPDX-License-Identifier: MIT */
/*
** test_hostile_primitives.c: the hostile plugin hostile/primitives
** against the callbacks beyond tools, in both isolation modes where it
** applies: a SIGSEGV in a read, a get and a completion function, a 50 MB
** resource, invalid UTF-8 in a resource's and a prompt's text, and reads,
** gets and completions that outlast --call-timeout or are cancelled by the
** client. Each shows echo keeps serving, every request gets exactly one
** response (none when cancelled), and the bad plugin is named.
*/
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcp_harness.h"
#include "check_main.h"

#define ECHO_SO TOP_BUILDDIR "/plugins/.libs/echo.so"

/* A modern request: "method" and its params' members (without _meta). */
#define REQ(id, method, params)                                                                                        \
    "{\"jsonrpc\":\"2.0\",\"id\":" #id ",\"method\":\"" method "\",\"params\":{" params "," MH_MODERN_META "}}"
#define READ(id, what) REQ(id, "resources/read", "\"uri\":\"hostile://" what "\"")
#define GET(id, what) REQ(id, "prompts/get", "\"name\":\"" what "\"")
#define COMPLETE(id, value)                                                                                            \
    REQ(id, "completion/complete",                                                                                     \
        "\"ref\":{\"type\":\"ref/prompt\",\"name\":\"fine\"},\"argument\":{\"name\":\"x\",\"value\":\"" value "\"}")
#define CANCEL(id)                                                                                                     \
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":" #id                      \
    "," MH_MODERN_META "}}"

static const char *const modes[] = {"--isolation=none", "--isolation=process"};

static mh_proc *start(char **dir, const char *mode, const char *opt1, const char *opt2)
{
    *dir = mh_private_dir(mh_hostile("primitives"), ECHO_SO, NULL);
    mh_proc *p = mh_spawn("-d", *dir, mode, "--no-registry-cache", opt1, opt2, NULL);
    mh_ping_is_next(p, 1);
    return p;
}

static void assert_echo_serves(mh_proc *p, int id)
{
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
               "\"arguments\":{\"text\":\"still here\"}," MH_MODERN_META "}}",
            id);
    char want[16];
    snprintf(want, sizeof want, "%d", id);
    json_object *o = mh_await(p, want, NULL);
    MH_ASSERT_STR(o, "result content 0 text", "still here");
    json_object_put(o);
}

/* The response to ID is error CODE whose message contains NEEDLE. */
static void assert_error(mh_proc *p, const char *id, int code, const char *needle)
{
    json_object *o = mh_await(p, id, NULL);
    MH_ASSERT_ERROR(o, code);
    const char *msg = mh_str(o, "error message");
    ck_assert_msg(msg && strstr(msg, needle), "want \"%s\" in %s", needle, mh_json(o));
    json_object_put(o);
}

static void assert_stderr_has(const mh_proc *p, const char *needle)
{
    ck_assert_msg(mh_stderr_wait(p, needle, MH_TIMEOUT_MS), "stderr lacks \"%s\":\n%s", needle, mh_stderr(p));
}

/* The slow read, get and completion have returned their late results
 * (primitives.c says so on stderr just before). */
static void assert_late_results_returned(const mh_proc *p)
{
    assert_stderr_has(p, "primitives: read returning after its cancellation");
    assert_stderr_has(p, "primitives: get returning after its cancellation");
    assert_stderr_has(p, "primitives: completion returning after its cancellation");
}

/* ---- SIGSEGV in a read, a get and a completion (a worker) --------------------------- */

START_TEST(a_segfault_in_read_get_or_complete_is_reported_and_the_host_serves_on)
{
    char *dir;
    mh_proc *p = start(&dir, "--isolation=process", NULL, NULL);
    mh_send(p, READ(2, "segv"));
    assert_error(p, "2", -32603, "resource 'hostile://segv' crashed: signal 11 (SIGSEGV)");
    assert_echo_serves(p, 3);
    mh_send(p, GET(4, "segv"));
    assert_error(p, "4", -32603, "prompt 'segv' crashed: signal 11 (SIGSEGV)");
    assert_echo_serves(p, 5);
    mh_send(p, COMPLETE(6, "segv"));
    assert_error(p, "6", -32603, "completion of 'fine' crashed: signal 11 (SIGSEGV)");
    /* The plugin is named in the log; the next worker serves it again. */
    assert_stderr_has(p, "primitives.so");
    assert_echo_serves(p, 7);
    long long until = mh_now_ms() + MH_TIMEOUT_MS;
    for (int id = 8;; id++) { /* past the restart backoff */
        mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"resources/read\",\"params\":{\"uri\":"
                   "\"hostile://fine\"," MH_MODERN_META "}}",
                id);
        char want[16];
        snprintf(want, sizeof want, "%d", id);
        json_object *o = mh_await(p, want, NULL);
        bool ok = mh_has(o, "result");
        if (ok || mh_now_ms() > until) {
            MH_ASSERT_STR(o, "result contents 0 text", "fine");
            json_object_put(o);
            break;
        }
        json_object_put(o);
        usleep(50 * 1000);
    }
    mh_ping_is_next(p, 99);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/* ---- a 50 MB resource ---------------------------------------------------------------- */

START_TEST(a_50_mb_resource_is_refused_naming_the_limit)
{
    char *dir;
    mh_proc *p = start(&dir, modes[_i], NULL, NULL);
    mh_send(p, READ(2, "huge"));
    assert_error(p, "2", -32603, "--max-result-bytes (16777216)");
    assert_echo_serves(p, 3);
    mh_send(p, READ(4, "fine"));
    json_object *o = mh_await(p, "4", NULL);
    MH_ASSERT_STR(o, "result contents 0 text", "fine");
    json_object_put(o);
    mh_ping_is_next(p, 5);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/* ---- invalid UTF-8 in a resource's and a prompt's text --------------------------------- */

/* The text arrives as valid UTF-8 (the harness parses strictly), its good
 * bytes kept. */
START_TEST(invalid_utf8_in_resource_and_prompt_text_arrives_repaired)
{
    char *dir;
    mh_proc *p = start(&dir, modes[_i], NULL, NULL);
    mh_send(p, READ(2, "badutf8"));
    json_object *o = mh_await(p, "2", NULL);
    const char *text = mh_str(o, "result contents 0 text");
    ck_assert_msg(text && strncmp(text, "caf", 3) == 0 && strstr(text, " end"), "%s", mh_json(o));
    json_object_put(o);
    mh_send(p, GET(3, "bad_utf8"));
    o = mh_await(p, "3", NULL);
    text = mh_str(o, "result messages 0 content text");
    ck_assert_msg(text && strncmp(text, "caf", 3) == 0 && strstr(text, " end"), "%s", mh_json(o));
    json_object_put(o);
    assert_echo_serves(p, 4);
    mh_ping_is_next(p, 5);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/* ---- deadlines ------------------------------------------------------------------------ */

/* "500 ms", or seconds under valgrind's time scale. */
static void deadline_text(char *buf, size_t size, double seconds)
{
    if (seconds < 1)
        snprintf(buf, size, "timed out after %d ms", (int)(seconds * 1000 + 0.5));
    else
        snprintf(buf, size, "timed out after %g s", seconds);
}

/* A read, a get and a completion that stop only when cancelled: each is
 * answered -31001 by the deadline, and its late result is discarded. */
START_TEST(slow_read_get_and_complete_time_out_with_one_response_each)
{
    char *dir, timeout[32], after[64], want[160];
    double secs = 0.5 * mh_time_scale();
    snprintf(timeout, sizeof timeout, "--call-timeout=%g", secs);
    deadline_text(after, sizeof after, secs);
    mh_proc *p = start(&dir, modes[_i], timeout, NULL);
    mh_send(p, READ(2, "slow"));
    snprintf(want, sizeof want, "resource 'hostile://slow' %s", after);
    assert_error(p, "2", -31001, want);
    assert_echo_serves(p, 3);
    mh_send(p, GET(4, "slow"));
    snprintf(want, sizeof want, "prompt 'slow' %s", after);
    assert_error(p, "4", -31001, want);
    mh_send(p, COMPLETE(5, "slow"));
    snprintf(want, sizeof want, "completion of prompt 'fine' %s", after);
    assert_error(p, "5", -31001, want);
    assert_stderr_has(p, "its late result will be discarded");
    /* The three late results are on their way: none may be sent, before
     * the ping's answer or after it (mh_finish fails on any line). */
    assert_late_results_returned(p);
    mh_ping_is_next(p, 6);
    mh_send(p, READ(7, "fine"));
    json_object *o = mh_await(p, "7", NULL);
    MH_ASSERT_STR(o, "result contents 0 text", "fine");
    json_object_put(o);
    mh_finish(p); /* which fails on any further line */
    mh_rm_dir(dir);
}
END_TEST

/* A read, a get and a completion that ignore cancellation: answered by
 * the deadline, and their worker killed past --cancel-grace-ms; the next
 * worker serves. */
START_TEST(a_function_ignoring_cancellation_gets_its_worker_killed)
{
    char *dir, timeout[32], grace[32], ignored[128];
    int k = mh_time_scale();
    snprintf(timeout, sizeof timeout, "--call-timeout=%g", 0.5 * k);
    snprintf(grace, sizeof grace, "--cancel-grace-ms=%d", 200 * k);
    mh_proc *p = start(&dir, "--isolation=process", timeout, grace);
    mh_send(p, READ(2, "hang"));
    assert_error(p, "2", -31001, "resource 'hostile://hang' timed out after");
    snprintf(ignored, sizeof ignored, "resource 'hostile://hang' ignored cancellation for %d ms (--cancel-grace-ms)",
             200 * k);
    assert_stderr_has(p, ignored);
    assert_stderr_has(p, "primitives.so");
    assert_echo_serves(p, 3);
    mh_send(p, GET(4, "hang"));
    assert_error(p, "4", -31001, "prompt 'hang' timed out after");
    snprintf(ignored, sizeof ignored, "prompt 'hang' ignored cancellation for %d ms (--cancel-grace-ms)", 200 * k);
    assert_stderr_has(p, ignored);
    assert_echo_serves(p, 40);
    mh_send(p, COMPLETE(41, "hang"));
    assert_error(p, "41", -31001, "completion of prompt 'fine' timed out after");
    snprintf(ignored, sizeof ignored, "completion of 'fine' ignored cancellation for %d ms (--cancel-grace-ms)",
             200 * k);
    assert_stderr_has(p, ignored);
    long long until = mh_now_ms() + MH_TIMEOUT_MS;
    for (int id = 5;; id++) { /* the next worker, past the restart backoff */
        mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"prompts/get\",\"params\":{\"name\":\"fine\","
                   MH_MODERN_META "}}",
                id);
        char want[16];
        snprintf(want, sizeof want, "%d", id);
        json_object *o = mh_await(p, want, NULL);
        bool ok = mh_has(o, "result");
        if (ok || mh_now_ms() > until) {
            MH_ASSERT_STR(o, "result messages 0 content text", "fine");
            json_object_put(o);
            break;
        }
        json_object_put(o);
        usleep(50 * 1000);
    }
    mh_ping_is_next(p, 99);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/* A descriptor's own timeout_ms, shorter than the host's, is the deadline,
 * in a worker too (it crosses the scan). */
START_TEST(a_descriptors_own_deadline_applies)
{
    char *dir;
    mh_proc *p = start(&dir, modes[_i], NULL, NULL);
    mh_send(p, READ(2, "own"));
    assert_error(p, "2", -31001, "resource 'hostile://own' timed out after 300 ms");
    mh_send(p, GET(3, "own"));
    assert_error(p, "3", -31001, "prompt 'own' timed out after 300 ms");
    mh_send(p, REQ(4, "completion/complete",
                   "\"ref\":{\"type\":\"ref/prompt\",\"name\":\"own\"},\"argument\":{\"name\":\"x\",\"value\":\"slow\"}"));
    assert_error(p, "4", -31001, "completion of prompt 'own' timed out after 300 ms");
    assert_echo_serves(p, 5);
    mh_ping_is_next(p, 6);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/* A descriptor's own timeout_ms longer than the host's (600 s against
 * --call-timeout=1) does not lengthen the deadline: the host's applies, in
 * a worker too. A deadline the plugin lengthened would leave the test
 * waiting (Check's timeout) instead. */
START_TEST(a_descriptor_cannot_lengthen_the_hosts_deadline)
{
    char *dir;
    mh_proc *p = start(&dir, modes[_i], "--call-timeout=1", NULL);
    mh_send(p, READ(2, "greedy"));
    assert_error(p, "2", -31001, "resource 'hostile://greedy' timed out after 1 s");
    mh_send(p, GET(3, "greedy"));
    assert_error(p, "3", -31001, "prompt 'greedy' timed out after 1 s");
    mh_send(p, REQ(4, "completion/complete",
                   "\"ref\":{\"type\":\"ref/prompt\",\"name\":\"greedy\"},\"argument\":{\"name\":\"x\",\"value\":\"slow\"}"));
    assert_error(p, "4", -31001, "completion of prompt 'greedy' timed out after 1 s");
    assert_echo_serves(p, 5);
    mh_ping_is_next(p, 6);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/* ---- cancellation by the client -------------------------------------------------------- */

/* notifications/cancelled stops a read, a get and a completion: none gets a
 * response (the slow functions return only when cancelled, so a missed
 * cancel would leave the test waiting for them). */
START_TEST(cancelled_read_get_and_complete_get_no_response)
{
    char *dir;
    mh_proc *p = start(&dir, modes[_i], "--call-timeout=0", NULL);
    mh_send(p, READ(2, "slow"));
    mh_send(p, GET(3, "slow"));
    mh_send(p, COMPLETE(4, "slow"));
    assert_echo_serves(p, 5);
    mh_send(p, CANCEL(2));
    mh_send(p, CANCEL(3));
    mh_send(p, CANCEL(4));
    assert_echo_serves(p, 6);
    /* The functions saw their cancellation and returned: a response to a
     * cancelled request would come now, before the ping's or after it. */
    assert_late_results_returned(p);
    mh_ping_is_next(p, 7);
    /* The ids are free again, and the functions ran to their end: EOF
     * needs no waiting for them. */
    mh_send(p, READ(2, "fine"));
    json_object *o = mh_await(p, "2", NULL);
    MH_ASSERT_STR(o, "result contents 0 text", "fine");
    json_object_put(o);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

static int count_of(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *q = hay; (q = strstr(q, needle)); q++)
        n++;
    return n;
}

/*
** A read and a get cancelled while they wait for the only thread never
** run: a slow one that ran would see its cancellation at once and say so
** on stderr. The blocker, a slow read, holds the thread until cancelled;
** the echo call after it queues behind the cancelled two (FIFO, one
** thread), so once it is answered they had their turn.
*/
START_TEST(a_read_or_get_cancelled_in_the_queue_never_runs)
{
    char *dir;
    mh_proc *p = start(&dir, "--isolation=none", "--call-timeout=0", "--max-concurrent-calls=1");
    mh_send(p, READ(2, "slow"));
    assert_stderr_has(p, "primitives: read running"); /* 2 holds the only slot */
    mh_send(p, READ(3, "slow"));
    mh_send(p, GET(4, "slow"));
    mh_send(p, CANCEL(3));
    mh_send(p, CANCEL(4));
    mh_ping_is_next(p, 5); /* the cancels are read */
    mh_send(p, CANCEL(2));
    assert_stderr_has(p, "primitives: read returning after its cancellation");
    assert_echo_serves(p, 6);
    mh_ping_is_next(p, 7);
    char *err = mh_stderr(p);
    ck_assert_msg(count_of(err, "primitives: read running") == 1 && count_of(err, "primitives: get running") == 0 &&
                      count_of(err, "primitives: read returning") == 1 && count_of(err, "primitives: get returning") == 0,
                  "a cancelled queued read or get ran:\n%s", err);
    free(err);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

static Suite *hostile_primitives_suite(void)
{
    Suite *s = suite_create("hostile_primitives");
    TCase *tc = tcase_create("corpus");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_test(tc, a_segfault_in_read_get_or_complete_is_reported_and_the_host_serves_on);
    tcase_add_loop_test(tc, a_50_mb_resource_is_refused_naming_the_limit, 0, 2);
    tcase_add_loop_test(tc, invalid_utf8_in_resource_and_prompt_text_arrives_repaired, 0, 2);
    tcase_add_loop_test(tc, slow_read_get_and_complete_time_out_with_one_response_each, 0, 2);
    tcase_add_test(tc, a_function_ignoring_cancellation_gets_its_worker_killed);
    tcase_add_loop_test(tc, a_descriptors_own_deadline_applies, 0, 2);
    tcase_add_loop_test(tc, a_descriptor_cannot_lengthen_the_hosts_deadline, 0, 2);
    tcase_add_loop_test(tc, cancelled_read_get_and_complete_get_no_response, 0, 2);
    tcase_add_test(tc, a_read_or_get_cancelled_in_the_queue_never_runs);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(hostile_primitives_suite, mh_global_setup, mh_global_teardown)
