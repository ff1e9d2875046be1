/* SPDX-License-Identifier: MIT */
/*
** test_hostile.c: the corpus of hostile plugins, each run in both
** isolation modes where it applies: a handler ignoring cancellation past its
** deadline, a 30 s sleep, fake JSON-RPC lines on stdout, a 50 MB result, a
** forked child writing to stdout, a crashing destroy, 10,000 tools, leaks,
** a worker's forged RESULT frame that is not JSON or not one line.
** Each shows echo keeps serving and every request gets exactly one response.
*/
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcp_harness.h"
#include "check_main.h"

#define ECHO_SO TOP_BUILDDIR "/plugins/.libs/echo.so"

#define CALL(id, tool, args)                                                                                           \
    "{\"jsonrpc\":\"2.0\",\"id\":" #id ",\"method\":\"tools/call\",\"params\":{\"name\":\"" tool                      \
    "\",\"arguments\":" args "," MH_MODERN_META "}}"
#define CANCEL(id)                                                                                                     \
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":" #id                      \
    "," MH_MODERN_META "}}"

/* _i of a loop test: 0 runs plugins in the host, 1 in worker processes. */
static const char *const modes[] = {"--isolation=none", "--isolation=process"};
#define IN_PROCESS (_i == 1)

static void assert_stderr_has(const mh_proc *p, const char *needle)
{
    ck_assert_msg(mh_stderr_wait(p, needle, MH_TIMEOUT_MS), "stderr lacks \"%s\":\n%s", needle, mh_stderr(p));
}

static size_t count_in_stderr(const mh_proc *p, const char *needle)
{
    char *err = mh_stderr(p);
    size_t n = 0;
    for (const char *s = err; (s = strstr(s, needle)) != NULL; s += strlen(needle))
        n++;
    free(err);
    return n;
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

/* Start toolhost in MODE with echo and the hostile plugin NAME (plus up to
 * two more options) and check it answers a ping with id 1. */
static mh_proc *start(char **dir, const char *name, const char *mode, const char *opt1, const char *opt2)
{
    *dir = mh_private_dir(mh_hostile(name), ECHO_SO, NULL);
    mh_proc *p = mh_spawn("-d", *dir, mode, opt1, opt2, NULL);
    mh_ping_is_next(p, 1);
    return p;
}

/* The response to ID: an isError result whose text starts with PREFIX and
 * contains NEEDLE (may be NULL). */
static void assert_error_result(mh_proc *p, const char *id, const char *prefix, const char *needle)
{
    json_object *o = mh_await(p, id, NULL);
    MH_ASSERT_TRUE(o, "result isError");
    const char *text = mh_str(o, "result content 0 text");
    ck_assert_msg(text && strncmp(text, prefix, strlen(prefix)) == 0, "want \"%s...\" in %s", prefix, mh_json(o));
    ck_assert_msg(!needle || strstr(text, needle), "want \"%s\" in %s", needle, mh_json(o));
    json_object_put(o);
}

static void assert_text_result(mh_proc *p, const char *id, const char *prefix)
{
    json_object *o = mh_await(p, id, NULL);
    MH_ASSERT_RESULT(o);
    MH_ASSERT_ABSENT(o, "result isError");
    const char *text = mh_str(o, "result content 0 text");
    ck_assert_msg(text && strncmp(text, prefix, strlen(prefix)) == 0, "want \"%s...\" in %s", prefix, mh_json(o));
    json_object_put(o);
}

/* ---- a handler in an endless loop that ignores cancellation ------------------------- */

START_TEST(an_endless_handler_times_out_and_the_host_serves_on)
{
    char *dir;
    /* Under valgrind (make check-valgrind) everything is slower: the times
     * scale with the harness's. */
    int k = mh_time_scale();
    char timeout[32], grace[32], timed_out[64], ignored[96];
    snprintf(timeout, sizeof timeout, "--call-timeout=%g", 0.5 * k);
    snprintf(grace, sizeof grace, "--cancel-grace-ms=%d", 200 * k);
    if (k == 1)
        snprintf(timed_out, sizeof timed_out, "tool 'die' timed out after 500 ms");
    else /* a second or more is said in seconds */
        snprintf(timed_out, sizeof timed_out, "tool 'die' timed out after %g s", 0.5 * k);
    snprintf(ignored, sizeof ignored, "tool 'die' ignored cancellation for %d ms (--cancel-grace-ms)", 200 * k);
    mh_proc *p = start(&dir, "die", modes[_i], timeout, grace);
    assert_echo_serves(p, 9); /* its worker started before the clock matters */
    mh_send(p, CALL(2, "die", "{\"how\":\"hang\"}"));
    assert_error_result(p, "2", timed_out, NULL);
    assert_echo_serves(p, 3);
    if (IN_PROCESS) {
        /* The worker is killed after the grace and a new one serves the tool. */
        assert_stderr_has(p, ignored);
        mh_send(p, CALL(4, "die", "{}"));
        assert_text_result(p, "4", "alive ");
    }
    mh_ping_is_next(p, 5);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/* A call answered by its deadline is not waited for at shutdown, nor
 * reported as a call being waited for: its response is out, although its
 * handler (ignoring cancellation) still runs. */
START_TEST(a_timed_out_call_is_not_waited_for_at_shutdown)
{
    char *dir;
    int k = mh_time_scale();
    char timeout[32];
    snprintf(timeout, sizeof timeout, "--call-timeout=%g", 0.3 * k);
    mh_proc *p = start(&dir, "die", modes[_i], timeout, "--log-level=info");
    mh_send(p, CALL(2, "die", "{\"how\":\"hang\"}"));
    assert_error_result(p, "2", "tool 'die' timed out after", NULL);
    assert_stderr_has(p, "die: hanging");
    mh_close_stdin(p);
    ck_assert_msg(mh_wait_eof(p, MH_TIMEOUT_MS), "stdout did not close after EOF on stdin");
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    ck_assert_msg(count_in_stderr(p, "shutting down: waiting") == 0 && count_in_stderr(p, "shutting down: cancelling") == 0,
                  "a call already answered was waited for:\n%s", mh_stderr(p));
    mh_free(p);
    mh_rm_dir(dir);
}
END_TEST

/* ---- a worker that is slow to start ------------------------------------------------- */

/* The deadline starts when the call reaches a running worker: a first call
 * whose worker takes 1 s to start is answered although --call-timeout is
 * shorter. (Process isolation only: in the host, loading is over before
 * any call.) */
START_TEST(a_workers_start_does_not_count_against_the_call_deadline)
{
    char *dir;
    char timeout[32];
    snprintf(timeout, sizeof timeout, "--call-timeout=%g", 0.4 * mh_time_scale());
    mh_proc *p = start(&dir, "slow_start", "--isolation=process", timeout, NULL);
    mh_send(p, CALL(2, "slow_start", "{}"));
    assert_text_result(p, "2", "started");
    assert_echo_serves(p, 3);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/* ---- a 30 s sleep, cancelled by the client ------------------------------------------ */

START_TEST(a_cancelled_30s_sleep_gets_no_response_and_others_are_served)
{
    char *dir;
    mh_proc *p = start(&dir, "sleep30", modes[_i], "--cancel-grace-ms=500", NULL);
    mh_send(p, CALL(2, "sleep30", "{}"));
    assert_stderr_has(p, "sleep30: sleeping");
    assert_echo_serves(p, 3);
    mh_send(p, CANCEL(2));
    assert_echo_serves(p, 4);
    if (IN_PROCESS)
        assert_stderr_has(p, "tool 'sleep30' ignored cancellation for 500 ms (--cancel-grace-ms)");
    /* Nothing answers the cancelled call, now or after the grace. */
    mh_ping_is_next(p, 5);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/* ---- fake JSON-RPC lines on fd 1 ---------------------------------------------------- */

START_TEST(fake_protocol_lines_on_stdout_go_to_the_log)
{
    char *dir;
    mh_proc *p = start(&dir, "fake_rpc", modes[_i], NULL, NULL);
    /* mh_await fails on the fake "id":1 response should it reach stdout. */
    mh_send(p, CALL(2, "fake_rpc", "{}"));
    assert_text_result(p, "2", "wrote fakes");
    assert_echo_serves(p, 3);
    mh_ping_is_next(p, 4);
    /* Each way lands in the log from the constructor, which runs twice (in
     * the scanner, then in the host or the worker), and from the handler. */
    static const char *const fakes[] = {"\"fake\":\"printf\"", "\"fake\":\"write\"", "\"fake\":\"dup\""};
    for (size_t i = 0; i < sizeof fakes / sizeof fakes[0]; i++) {
        assert_stderr_has(p, fakes[i]);
        for (int tries = 0; tries < 200 && count_in_stderr(p, fakes[i]) < 3; tries++)
            usleep(50 * 1000);
        ck_assert_msg(count_in_stderr(p, fakes[i]) >= 3, "%s not logged from constructor and handler:\n%s", fakes[i],
                      mh_stderr(p));
    }
    mh_finish(p); /* which fails on any further stdout line */
    mh_rm_dir(dir);
}
END_TEST

/* ---- a worker's forged RESULT frame -------------------------------------------------- */

START_TEST(a_forged_result_frame_never_reaches_the_client)
{
    char *dir;
    mh_proc *p = start(&dir, "forge_result", modes[_i], NULL, NULL);
    if (!IN_PROCESS) { /* nothing to forge: fd 4 is no frame pipe in the host */
        mh_send(p, CALL(2, "forge_result", "{\"kind\":\"trailing\"}"));
        assert_text_result(p, "2", "not in a worker");
    } else {
        /* Each forgery comes before the plugin's real answer: the client
         * gets one response to the call, an error, and then the next
         * response is the next request's (mh_await fails on a stray line). */
        static const char *const calls[] = {
            CALL(2, "forge_result", "{\"kind\":\"not_json\"}"),
            CALL(3, "forge_result", "{\"kind\":\"trailing\"}"),
            CALL(4, "forge_result", "{\"kind\":\"not_utf8\"}"),
        };
        static const char *const ids[] = {"2", "3", "4"};
        for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
            mh_send(p, "%s", calls[i]);
            assert_error_result(p, ids[i], "", "its worker sent no valid result");
        }
        /* Valid JSON the long path refuses: never passed on as bytes. */
        mh_send(p, CALL(8, "forge_result", "{\"kind\":\"dup_member\"}"));
        assert_error_result(p, "8", "Tool 'forge_result' returned an invalid result",
                            "a \"text\" block needs a string \"text\", got number");
        /* A raw newline in a string would end the response's line if the
         * bytes went through: the host escapes it or refuses the result. */
        mh_send(p, CALL(5, "forge_result", "{\"kind\":\"newline\"}"));
        json_object *o = mh_await(p, "5", NULL);
        const char *text = mh_str(o, "result content 0 text");
        ck_assert_msg(text && strcmp(text, "the real answer") != 0 &&
                          (strcmp(text, "a\nb") == 0 || strstr(text, "its worker sent no valid result")),
                      "%s", mh_json(o));
        json_object_put(o);
    }
    assert_echo_serves(p, 6);
    mh_ping_is_next(p, 7);
    mh_finish(p); /* which fails on any further stdout line */
    mh_rm_dir(dir);
}
END_TEST

/* ---- a 50 MB result ----------------------------------------------------------------- */

START_TEST(a_50_mb_result_is_refused_naming_the_limit)
{
    char *dir;
    mh_proc *p = start(&dir, "big_result", modes[_i], NULL, NULL);
    mh_send(p, CALL(2, "big_result", "{}"));
    assert_error_result(p, "2", "Tool 'big_result' returned ", "--max-result-bytes (16777216)");
    assert_echo_serves(p, 3);
    mh_send(p, CALL(4, "big_result", "{}"));
    assert_error_result(p, "4", "Tool 'big_result' returned ", "--max-result-bytes (16777216)");
    mh_ping_is_next(p, 5);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/* ---- a forked child writing to stdout ----------------------------------------------- */

START_TEST(a_forked_child_neither_writes_to_nor_holds_the_protocol_pipe)
{
    char *dir;
    mh_proc *p = start(&dir, "fork_stdout", modes[_i], NULL, NULL);
    mh_send(p, CALL(2, "fork_stdout", "{}"));
    assert_text_result(p, "2", "forked ");
    assert_echo_serves(p, 3);
    /* The child's first fake line is logged, never sent. */
    assert_stderr_has(p, "\"fake\":\"fork\"");
    mh_ping_is_next(p, 4);
    /* The child keeps running 6 s: EOF must come well before, when the host
     * exits, or the child holds the protocol pipe. */
    mh_close_stdin(p);
    ck_assert_msg(mh_wait_eof(p, 4000), "stdout did not reach EOF while the forked child ran");
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
    mh_rm_dir(dir);
}
END_TEST

/* ---- a destroy callback that crashes ------------------------------------------------ */

START_TEST(a_crashing_destroy_does_not_fail_the_host)
{
    char *dir;
    mh_proc *p = start(&dir, "crash_destroy", modes[_i], NULL, NULL);
    mh_send(p, CALL(2, "crash_destroy", "{}"));
    assert_text_result(p, "2", "fine until destroy");
    assert_echo_serves(p, 3);
    mh_ping_is_next(p, 4);
    mh_finish(p); /* EOF on stdout and exit status 0 */
    mh_rm_dir(dir);
}
END_TEST

/* ---- 10,000 tools from one plugin --------------------------------------------------- */

START_TEST(ten_thousand_tools_page_through_and_serve)
{
    char *dir;
    mh_proc *p = start(&dir, "many_tools", modes[_i], NULL, NULL);
    char *seen = calloc(10000, 1);
    ck_assert_ptr_nonnull(seen);
    size_t total = 0, pages = 0;
    char *cursor = NULL;
    for (;;) {
        char params[600] = "";
        if (cursor)
            snprintf(params, sizeof params, "\"cursor\":%s,", cursor);
        free(cursor);
        cursor = NULL;
        mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":%zu,\"method\":\"tools/list\",\"params\":{%s" MH_MODERN_META "}}",
                100 + pages, params);
        char id[32];
        snprintf(id, sizeof id, "%zu", 100 + pages);
        json_object *o = mh_await(p, id, NULL);
        size_t n = mh_len(o, "result tools");
        ck_assert_msg(n > 0, "empty page in %.300s", mh_json(o));
        for (size_t i = 0; i < n; i++) {
            char path[64];
            snprintf(path, sizeof path, "result tools %zu name", i);
            const char *name = mh_str(o, path);
            ck_assert_ptr_nonnull(name);
            if (name[0] == 't' && name[1] >= '0' && name[1] <= '9') {
                int k = atoi(name + 1);
                ck_assert_msg(k >= 0 && k < 10000 && !seen[k], "tool %s out of range or listed twice", name);
                seen[k] = 1;
            }
            total++;
        }
        pages++;
        json_object *next = mh_at(o, "result nextCursor");
        if (next)
            cursor = strdup(json_object_to_json_string_ext(next, JSON_C_TO_STRING_PLAIN));
        json_object_put(o);
        if (!cursor)
            break;
        ck_assert_msg(pages < 1000, "tools/list never ends");
    }
    for (int k = 0; k < 10000; k++)
        ck_assert_msg(seen[k], "t%d never listed", k);
    free(seen);
    ck_assert_uint_eq(total, 10002); /* t0..t9999, many_tools, echo */
    ck_assert_uint_ge(pages, 100);   /* 100 a page by default */
    mh_send(p, CALL(2, "t9999", "{}"));
    assert_text_result(p, "2", "tool t9999");
    mh_send(p, CALL(3, "t0", "{}"));
    assert_text_result(p, "3", "tool t0");
    assert_echo_serves(p, 4);
    mh_ping_is_next(p, 5);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/* ---- a plugin that leaks on every call ---------------------------------------------- */

#define LEAK_CALLS 64 /* 1 MiB each */

START_TEST(a_leak_stays_in_the_worker)
{
    char *dir;
    mh_proc *p = start(&dir, "leak", modes[_i], NULL, NULL);
    /* One call first, so the baseline includes a started worker's link. */
    mh_send(p, CALL(2, "leak", "{}"));
    assert_text_result(p, "2", "leaked 1 MiB");
    long before = mh_status_kib(mh_pid(p), "VmRSS");
    for (int i = 0; i < LEAK_CALLS; i++) {
        mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"leak\","
                   "\"arguments\":{}," MH_MODERN_META "}}",
                10 + i);
        char id[16];
        snprintf(id, sizeof id, "%d", 10 + i);
        assert_text_result(p, id, "leaked 1 MiB");
    }
    long after = mh_status_kib(mh_pid(p), "VmRSS");
    fprintf(stderr, "test_hostile: %s: host VmRSS %ld kB before %d leaking calls, %ld kB after\n", modes[_i], before,
            LEAK_CALLS, after);
    if (IN_PROCESS)
        ck_assert_msg(after - before < 16 * 1024, "host RSS grew %ld kB over %d leaking calls", after - before,
                      LEAK_CALLS);
    else /* the measure sees the leak when the plugin runs in the host */
        ck_assert_msg(after - before > 48 * 1024, "host RSS grew only %ld kB over %d leaking calls in the host",
                      after - before, LEAK_CALLS);
    assert_echo_serves(p, 3);
    mh_ping_is_next(p, 4);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

static Suite *hostile_suite(void)
{
    Suite *s = suite_create("hostile");
    TCase *tc = tcase_create("corpus");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_loop_test(tc, an_endless_handler_times_out_and_the_host_serves_on, 0, 2);
    tcase_add_test(tc, a_workers_start_does_not_count_against_the_call_deadline);
    tcase_add_loop_test(tc, a_timed_out_call_is_not_waited_for_at_shutdown, 0, 2);
    tcase_add_loop_test(tc, a_cancelled_30s_sleep_gets_no_response_and_others_are_served, 0, 2);
    tcase_add_loop_test(tc, fake_protocol_lines_on_stdout_go_to_the_log, 0, 2);
    tcase_add_loop_test(tc, a_50_mb_result_is_refused_naming_the_limit, 0, 2);
    tcase_add_loop_test(tc, a_forged_result_frame_never_reaches_the_client, 0, 2);
    tcase_add_loop_test(tc, a_forked_child_neither_writes_to_nor_holds_the_protocol_pipe, 0, 2);
    tcase_add_loop_test(tc, a_crashing_destroy_does_not_fail_the_host, 0, 2);
    tcase_add_loop_test(tc, ten_thousand_tools_page_through_and_serve, 0, 2);
    tcase_add_loop_test(tc, a_leak_stays_in_the_worker, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(hostile_suite, mh_global_setup, mh_global_teardown)
