/* SPDX-License-Identifier: MIT */
/*
** test_worker.c: the process boundary with hostile plugins. Loading: a plugin
** that crashes, exits or hangs in its constructor or register function is
** refused and named by the scanner, in both isolation modes, and the host
** serves the others. Calls (--isolation=process): a handler that crashes,
** aborts, exits or overflows its stack fails only its own calls, each with
** exactly one isError response naming the cause; the worker restarts; a
** plugin that keeps crashing is quarantined; a handler that ignores
** cancellation is killed after the grace period; worker output is tagged.
*/
#include "config.h"

#include <signal.h>
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

static const char *const modes[] = {"--isolation=none", "--isolation=process"};

/* The failure shows stderr's last 2 KiB: Check refuses a longer message
 * (and then reports only an early exit), and 300 plugins log more. */
static void assert_stderr_has(const mh_proc *p, const char *needle)
{
    if (mh_stderr_wait(p, needle, MH_TIMEOUT_MS))
        return;
    char *err = mh_stderr(p);
    size_t n = strlen(err);
    ck_abort_msg("stderr lacks \"%s\":\n%s", needle, err + (n > 2048 ? n - 2048 : 0));
}

/* echo answers: the good plugin serves. */
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

/* The die plugin answers call ID normally: its worker serves again. */
static void assert_die_serves(mh_proc *p, int id)
{
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"die\","
               "\"arguments\":{}," MH_MODERN_META "}}",
            id);
    char want[16];
    snprintf(want, sizeof want, "%d", id);
    json_object *o = mh_next(p);
    MH_ASSERT_ID(o, want);
    const char *text = mh_str(o, "result content 0 text");
    ck_assert_msg(text && strncmp(text, "alive ", 6) == 0, "%s", mh_json(o));
    json_object_put(o);
}

/* Start with the hostile plugin NAME and echo.so in MODE; the hostile one
 * must be refused with "plugin DIR/NAME.so refused: WHY". */
static void refused_at_load(const char *name, const char *mode, const char *why, const char *extra)
{
    char *dir = mh_private_dir(mh_hostile(name), ECHO_SO, NULL);
    mh_proc *p = mh_spawn("-d", dir, mode, extra, NULL);
    mh_ping_is_next(p, 1);
    assert_echo_serves(p, 2);
    char want[700];
    snprintf(want, sizeof want, "plugin %s/%s.so refused: %s", dir, name, why);
    assert_stderr_has(p, want);
    assert_stderr_has(p, "loaded 1 tool from 1 plugin; 1 plugin refused");
    mh_finish(p);
    mh_rm_dir(dir);
}

START_TEST(a_crash_in_a_constructor_refuses_only_that_plugin)
{
    refused_at_load("crash_ctor", modes[_i], "crashed while loading: signal 11 (SIGSEGV)", NULL);
}
END_TEST

START_TEST(a_crash_in_register_refuses_only_that_plugin)
{
    refused_at_load("crash_register", modes[_i], "crashed while loading: signal 11 (SIGSEGV)", NULL);
}
END_TEST

START_TEST(exit_in_register_refuses_only_that_plugin)
{
    refused_at_load("exit_register", modes[_i], "called exit(3) while loading", NULL);
}
END_TEST

START_TEST(an_endless_register_is_refused_after_the_load_timeout)
{
    refused_at_load("loop_register", modes[_i], "did not finish loading within 1 s", "--load-timeout=1");
}
END_TEST

/* ---- calls in worker processes ------------------------------------------------------ */

static mh_proc *start_with(char **dir, const char *hostile, const char *extra)
{
    *dir = mh_private_dir(mh_hostile(hostile), ECHO_SO, NULL);
    mh_proc *p = mh_spawn("-d", *dir, "--isolation=process", extra, NULL);
    mh_ping_is_next(p, 1);
    return p;
}

/* The response to ID is an isError result with exactly TEXT. */
static void assert_error_result(mh_proc *p, const char *id, const char *text)
{
    json_object *o = mh_await(p, id, NULL);
    MH_ASSERT_TRUE(o, "result isError");
    MH_ASSERT_STR(o, "result content 0 text", text);
    json_object_put(o);
}

static void crash_fails_the_call(const char *hostile, const char *call, const char *want)
{
    char *dir;
    mh_proc *p = start_with(&dir, hostile, NULL);
    mh_send(p, "%s", call);
    assert_error_result(p, "2", want);
    assert_echo_serves(p, 3);
    /* The worker restarts: the same crash is reported again, not hung. */
    mh_send(p, "%s", call);
    assert_error_result(p, "2", want);
    mh_ping_is_next(p, 4); /* and nothing else came: one response per request */
    mh_finish(p);
    mh_rm_dir(dir);
}

START_TEST(a_segfault_in_a_handler_fails_only_its_call)
{
    crash_fails_the_call("crash", CALL(2, "crash", "{}"), "tool 'crash' crashed: signal 11 (SIGSEGV)");
}
END_TEST

START_TEST(a_stack_overflow_in_a_handler_fails_only_its_call)
{
    crash_fails_the_call("crash", CALL(2, "crash", "{\"overflow\":true}"), "tool 'crash' crashed: signal 11 (SIGSEGV)");
}
END_TEST

START_TEST(abort_in_a_handler_fails_only_its_call)
{
    crash_fails_the_call("die", CALL(2, "die", "{\"how\":\"abort\"}"), "tool 'die' crashed: signal 6 (SIGABRT)");
}
END_TEST

START_TEST(exit_in_a_handler_fails_only_its_call)
{
    crash_fails_the_call("die", CALL(2, "die", "{\"how\":\"exit\"}"), "tool 'die' crashed: the plugin called exit(3)");
}
END_TEST

START_TEST(underscore_exit_in_a_handler_fails_only_its_call)
{
    crash_fails_the_call("die", CALL(2, "die", "{\"how\":\"_exit\"}"), "tool 'die' crashed: the plugin called exit(4)");
}
END_TEST

/* 125 is an exit status like any other: no longer the lost socket's. */
START_TEST(exit_125_in_a_handler_is_reported_as_exit)
{
    crash_fails_the_call("die", CALL(2, "die", "{\"how\":\"exit125\"}"),
                         "tool 'die' crashed: the plugin called exit(125)");
}
END_TEST

/* A grandchild holding the worker's pipes (fork_stdout's
 * runs 6 s) must not hold the host's exit: it once waited 5 s for them. */
START_TEST(a_grandchild_holding_the_workers_pipes_does_not_delay_exit)
{
    char *dir;
    mh_proc *p = start_with(&dir, "fork_stdout", NULL);
    mh_send(p, CALL(2, "fork_stdout", "{}"));
    json_object *o = mh_await(p, "2", NULL);
    json_object_put(o);
    mh_ping_is_next(p, 3);
    long long t0 = mh_now_ms();
    mh_close_stdin(p);
    /* Generous for a loaded machine; the bug took 5 s. */
    int status = mh_wait(p, 2500);
    ck_assert_msg(status == 0, "host exit status %d after %lld ms (-1: still running)", status, mh_now_ms() - t0);
    mh_free(p);
    mh_rm_dir(dir);
}
END_TEST

/* A crash fails every call running in that worker, each exactly once. */
START_TEST(a_crash_fails_every_call_running_in_the_worker)
{
    char *dir;
    mh_proc *p = start_with(&dir, "die", NULL);
    mh_send(p, CALL(2, "die", "{\"how\":\"hang\"}"));
    assert_stderr_has(p, "die: hanging");
    mh_send(p, CALL(3, "die", "{\"how\":\"abort\"}"));
    int seen2 = 0, seen3 = 0;
    for (int k = 0; k < 2; k++) {
        json_object *o = mh_next(p);
        MH_ASSERT_TRUE(o, "result isError");
        MH_ASSERT_STR(o, "result content 0 text", "tool 'die' crashed: signal 6 (SIGABRT)");
        if (!strcmp(mh_json(mh_at(o, "id")), "2"))
            seen2++;
        else if (!strcmp(mh_json(mh_at(o, "id")), "3"))
            seen3++;
        json_object_put(o);
    }
    ck_assert_int_eq(seen2, 1);
    ck_assert_int_eq(seen3, 1);
    assert_echo_serves(p, 4);
    mh_ping_is_next(p, 5);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/* Several requests in one write: the reader holds the later ones while it
 * handles the first, so the first calls do not wait for their answers
 * (they are deferred) and their CALL frames reach the worker together. */
static void send_together(mh_proc *p, const char *const *lines, size_t n)
{
    char buf[4096];
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        int k = snprintf(buf + len, sizeof buf - len, "%s\n", lines[i]);
        ck_assert(k > 0 && (size_t)k < sizeof buf - len);
        len += (size_t)k;
    }
    mh_send_raw(p, buf, len);
}

START_TEST(a_crash_fails_every_pipelined_call_in_flight)
{
    char *dir;
    mh_proc *p = start_with(&dir, "die", NULL);
    /* Three calls hang in the worker (each past the worker's hand-off
     * tick), the fourth aborts it; the ping behind them keeps every call
     * deferred. Each call gets exactly one crash answer. */
    const char *const lines[] = {CALL(2, "die", "{\"how\":\"hang\"}"), CALL(3, "die", "{\"how\":\"hang\"}"),
                                 CALL(4, "die", "{\"how\":\"hang\"}"), CALL(5, "die", "{\"how\":\"abort\"}"),
                                 "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\"}"};
    send_together(p, lines, sizeof lines / sizeof lines[0]);
    int seen[7] = {0};
    for (int k = 0; k < 5; k++) {
        json_object *o = mh_next(p);
        int id = atoi(mh_json(mh_at(o, "id")));
        ck_assert_msg(id >= 2 && id <= 6, "%s", mh_json(o));
        seen[id]++;
        if (id != 6) {
            MH_ASSERT_TRUE(o, "result isError");
            MH_ASSERT_STR(o, "result content 0 text", "tool 'die' crashed: signal 6 (SIGABRT)");
        }
        json_object_put(o);
    }
    for (int id = 2; id <= 6; id++)
        ck_assert_int_eq(seen[id], 1);
    assert_echo_serves(p, 7);
    mh_ping_is_next(p, 8); /* nothing else came */
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

START_TEST(a_pipelined_call_ignoring_cancellation_is_killed_after_the_grace)
{
    char *dir;
    mh_proc *p = start_with(&dir, "die", "--cancel-grace-ms=200");
    const char *const lines[] = {CALL(2, "die", "{\"how\":\"hang\"}"),
                                 "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}"};
    send_together(p, lines, 2);
    json_object *o = mh_next(p);
    MH_ASSERT_ID(o, "3"); /* the ping is not held up by the deferred call */
    json_object_put(o);
    assert_stderr_has(p, "die: hanging");
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":2," MH_MODERN_META
               "}}");
    assert_stderr_has(p, "tool 'die' ignored cancellation for 200 ms (--cancel-grace-ms)");
    assert_die_serves(p, 4); /* next, with no response for the cancelled call */
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/* A deferred call's deadline answers it, its late result is dropped, and
 * the host exits at end of input without waiting for it. */
START_TEST(a_pipelined_call_past_its_deadline_is_answered_and_not_waited_for)
{
    int k = mh_time_scale();
    char timeout[32];
    snprintf(timeout, sizeof timeout, "--call-timeout=%g", 0.3 * k);
    char *dir = mh_private_dir(mh_hostile("die"), ECHO_SO, NULL);
    mh_proc *p = mh_spawn("-d", dir, "--isolation=process", timeout, "--log-level=info", NULL);
    mh_ping_is_next(p, 1);
    const char *const lines[] = {CALL(2, "die", "{\"how\":\"hang\"}"), "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}"};
    send_together(p, lines, 2);
    json_object *o = mh_next(p);
    MH_ASSERT_ID(o, "3");
    json_object_put(o);
    o = mh_next(p);
    MH_ASSERT_ID(o, "2");
    MH_ASSERT_TRUE(o, "result isError");
    const char *text = mh_str(o, "result content 0 text");
    ck_assert_msg(text && strstr(text, "tool 'die' timed out after"), "%s", mh_json(o));
    json_object_put(o);
    assert_echo_serves(p, 4);
    mh_close_stdin(p);
    ck_assert_msg(mh_wait_eof(p, MH_TIMEOUT_MS), "stdout did not close after EOF on stdin");
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    char *err = mh_stderr(p);
    ck_assert_msg(!strstr(err, "shutting down: waiting") && !strstr(err, "still running in workers"),
                  "a call already answered was waited for:\n%s", err);
    free(err);
    mh_free(p);
    mh_rm_dir(dir);
}
END_TEST

START_TEST(a_plugin_that_keeps_crashing_is_quarantined)
{
    char *dir;
    mh_proc *p = start_with(&dir, "die", NULL);
    for (int i = 0; i < 5; i++) {
        mh_send(p, CALL(2, "die", "{\"how\":\"abort\"}"));
        assert_error_result(p, "2", "tool 'die' crashed: signal 6 (SIGABRT)");
    }
    long long before = mh_now_ms();
    mh_send(p, CALL(3, "die", "{}"));
    json_object *o = mh_await(p, "3", NULL);
    MH_ASSERT_TRUE(o, "result isError");
    const char *text = mh_str(o, "result content 0 text");
    const char *want = "tool 'die' is unavailable: its plugin crashed 5 times in 60 s; quarantined until ";
    ck_assert_msg(text && strncmp(text, want, strlen(want)) == 0, "%s", mh_json(o));
    json_object_put(o);
    ck_assert_msg(mh_now_ms() - before < MH_TIMEOUT_MS, "the quarantined call waited");
    assert_stderr_has(p, "die.so crashed 5 times in 60 s; quarantined for 60 s");
    assert_echo_serves(p, 4); /* other plugins are never affected */
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

START_TEST(a_handler_ignoring_cancellation_is_killed_after_the_grace)
{
    char *dir;
    mh_proc *p = start_with(&dir, "die", "--cancel-grace-ms=200");
    mh_send(p, CALL(2, "die", "{\"how\":\"hang\"}"));
    assert_stderr_has(p, "die: hanging");
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":2," MH_MODERN_META
               "}}");
    assert_stderr_has(p, "tool 'die' ignored cancellation for 200 ms (--cancel-grace-ms)");
    /* No response for the cancelled call; the plugin serves again. */
    assert_die_serves(p, 3);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

START_TEST(worker_output_is_logged_tagged_with_the_plugin)
{
    char *dir;
    mh_proc *p = start_with(&dir, "die", NULL);
    mh_send(p, CALL(2, "die", "{\"how\":\"print\"}"));
    json_object *o = mh_await(p, "2", NULL);
    MH_ASSERT_RESULT(o);
    json_object_put(o);
    assert_stderr_has(p, "plugin die.so: DIE-STDOUT-MARK pid ");
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/* What a plugin writes while it is scanned is tagged with that
 * plugin, line for line, however the scanner's frame and output pipes
 * are interleaved; an unterminated last line is its own, not glued to
 * the next plugin's output. */
START_TEST(scanner_output_is_tagged_with_the_plugin_that_wrote_it)
{
    char *dir = mh_private_dir(TEST_BUILDDIR "/hostile/.libs/noisy_a.so", TEST_BUILDDIR "/hostile/.libs/noisy_b.so", ECHO_SO, NULL);
    mh_proc *p = mh_spawn("-d", dir, modes[_i], NULL);
    mh_ping_is_next(p, 1);
    static const char *const want[] = {
        "plugin noisy_a.so: NOISY-a-CTOR\n",
        "plugin noisy_a.so: NOISY-a-REGISTER no newline\n",
        "plugin noisy_b.so: NOISY-b-CTOR\n",
        "plugin noisy_b.so: NOISY-b-REGISTER no newline\n",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        assert_stderr_has(p, want[i]);
    char *err = mh_stderr(p);
    ck_assert_msg(!strstr(err, "plugin noisy_b.so: NOISY-a") && !strstr(err, "plugin noisy_a.so: NOISY-b") &&
                      !strstr(err, "plugin echo.so: NOISY") && !strstr(err, "plugin scanner: NOISY"),
                  "output tagged with the wrong plugin:\n%s", err);
    free(err);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/* A handler closing every descriptor closes its worker's, never
 * the protocol's: the call fails, the host serves on. */
START_TEST(a_handler_closing_all_descriptors_fails_only_its_call)
{
    char *dir;
    mh_proc *p = start_with(&dir, "close_fds_call", NULL);
    mh_send(p, CALL(2, "close_fds_call", "{}"));
    assert_error_result(p, "2",
                        "tool 'close_fds_call' crashed: the plugin closed or replaced descriptor 3 or 4 (its worker's pipes)");
    assert_echo_serves(p, 3);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/* Workers cost what is used: none runs before its plugin's first call. */
START_TEST(workers_start_on_the_first_call)
{
    char *dir;
    mh_proc *p = start_with(&dir, "die", NULL);
    char *err = mh_stderr(p);
    ck_assert_msg(!strstr(err, "worker"), "%s", err);
    free(err);
    mh_send(p, CALL(2, "die", "{}"));
    json_object *a = mh_await(p, "2", NULL);
    mh_send(p, CALL(3, "die", "{}"));
    json_object *b = mh_await(p, "3", NULL);
    /* The same worker served both. */
    MH_ASSERT_STR(b, "result content 0 text", mh_str(a, "result content 0 text"));
    json_object_put(a);
    json_object_put(b);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/* A plain request's arguments reach the worker as the client wrote them
 * (white space and all): the handler sees the same values, and a refused
 * argument gets the same error, in both modes. */
START_TEST(arguments_arrive_as_sent_in_both_modes)
{
    char *dir = mh_private_dir(ECHO_SO, NULL);
    const char *answers[2][2];
    json_object *keep[2][2];
    for (int m = 0; m < 2; m++) {
        mh_proc *p = mh_spawn("-d", dir, modes[m], NULL);
        mh_send(p, CALL(2, "echo", " {  \"text\" :\t\"a  b {}\" } "));
        keep[m][0] = mh_await(p, "2", NULL);
        answers[m][0] = mh_str(keep[m][0], "result content 0 text");
        mh_send(p, CALL(3, "echo", "{\"text\" : 5}"));
        keep[m][1] = mh_await(p, "3", NULL);
        answers[m][1] = json_object_to_json_string_ext(keep[m][1], JSON_C_TO_STRING_PLAIN);
        mh_finish(p);
    }
    ck_assert_str_eq(answers[0][0], "a  b {}");
    ck_assert_str_eq(answers[1][0], "a  b {}");
    ck_assert_msg(strstr(answers[1][1], "text"), "%s", answers[1][1]); /* names the argument */
    ck_assert_str_eq(answers[0][1], answers[1][1]);
    for (int m = 0; m < 2; m++)
        for (int k = 0; k < 2; k++)
            json_object_put(keep[m][k]);
    mh_rm_dir(dir);
}
END_TEST

/* The scanner loads plugins in batches, a child each (SCAN_BATCH in
 * worker/scanner.c, 256). 300 plugins: the first batch ends as batches
 * do; the first plugin of the second crashes its scanner, and so does one
 * near the end, so the rest load in a third and a fourth child. Every
 * other plugin is listed exactly once and answers, on both sides of each
 * boundary. */
#define MANY 300

static void copy_as(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    ck_assert_msg(in && out, "cannot copy %s to %s", from, to);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        ck_assert_uint_eq(fwrite(buf, 1, n, out), n);
    fclose(in);
    ck_assert_int_eq(fclose(out), 0);
}

/* Count every tool tools/list gives, page by page, into SEEN (by number). */
static size_t list_many(mh_proc *p, int seen[MANY])
{
    char cursor[256] = "";
    size_t total = 0;
    for (int id = 100;; id++) {
        json_object *o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/list\",\"params\":{"
                                   MH_MODERN_META "%s}}",
                                id, cursor);
        MH_ASSERT_RESULT(o);
        for (size_t i = 0; i < mh_len(o, "result tools"); i++, total++) {
            char path[64];
            snprintf(path, sizeof path, "result tools %zu name", i);
            const char *name = mh_str(o, path);
            ck_assert_msg(name && name[0] == 'm', "unexpected tool in %s", mh_json(o));
            int k = atoi(name + 1);
            ck_assert_msg(k >= 0 && k < MANY && !seen[k], "tool %s out of range or listed twice", name);
            seen[k] = 1;
        }
        const char *next = mh_str(o, "result nextCursor");
        if (next)
            snprintf(cursor, sizeof cursor, ",\"cursor\":\"%s\"", next);
        json_object_put(o);
        if (!next)
            return total;
    }
}

START_TEST(scanner_batches_lose_and_repeat_nothing)
{
    char *dir = mh_private_dir(NULL);
    char many[512], crash[512];
    snprintf(many, sizeof many, "%s", mh_hostile("many"));
    snprintf(crash, sizeof crash, "%s", mh_hostile("many_crash"));
    for (int i = 0; i < MANY; i++) {
        char to[600];
        snprintf(to, sizeof to, "%s/m%03d.so", dir, i);
        copy_as(i == 256 || i == 298 ? crash : many, to);
    }
    mh_proc *p = mh_spawn("-d", dir, modes[_i], NULL);
    mh_ping_is_next(p, 1);
    int seen[MANY] = {0};
    ck_assert_uint_eq(list_many(p, seen), MANY - 2);
    for (int k = 0; k < MANY; k++)
        ck_assert_msg(seen[k] == (k != 256 && k != 298), "m%03d %s", k, seen[k] ? "listed" : "not listed");
    static const char *const ends[] = {"m000", "m255", "m257", "m297", "m299"};
    for (int i = 0; i < 5; i++) {
        json_object *o = mh_rpc(p,
                                "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\","
                                "\"arguments\":{}," MH_MODERN_META "}}",
                                10 + i, ends[i]);
        MH_ASSERT_STR(o, "result content 0 text", ends[i]);
        json_object_put(o);
    }
    for (int k = 256; k <= 298; k += 42) {
        char want[700];
        snprintf(want, sizeof want, "plugin %s/m%03d.so refused: crashed while loading", dir, k);
        assert_stderr_has(p, want);
    }
    assert_stderr_has(p, "loaded 298 tools from 298 plugins; 2 plugins refused,");
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

static Suite *worker_suite(void)
{
    Suite *s = suite_create("worker");
    TCase *tc = tcase_create("loading");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_loop_test(tc, a_crash_in_a_constructor_refuses_only_that_plugin, 0, 2);
    tcase_add_loop_test(tc, a_crash_in_register_refuses_only_that_plugin, 0, 2);
    tcase_add_loop_test(tc, exit_in_register_refuses_only_that_plugin, 0, 2);
    tcase_add_loop_test(tc, an_endless_register_is_refused_after_the_load_timeout, 0, 2);
    tcase_add_loop_test(tc, scanner_output_is_tagged_with_the_plugin_that_wrote_it, 0, 2);
    tcase_add_loop_test(tc, scanner_batches_lose_and_repeat_nothing, 0, 2);
    suite_add_tcase(s, tc);

    tc = tcase_create("calls");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_test(tc, a_segfault_in_a_handler_fails_only_its_call);
    tcase_add_test(tc, a_stack_overflow_in_a_handler_fails_only_its_call);
    tcase_add_test(tc, abort_in_a_handler_fails_only_its_call);
    tcase_add_test(tc, exit_in_a_handler_fails_only_its_call);
    tcase_add_test(tc, underscore_exit_in_a_handler_fails_only_its_call);
    tcase_add_test(tc, a_crash_fails_every_call_running_in_the_worker);
    tcase_add_test(tc, a_crash_fails_every_pipelined_call_in_flight);
    tcase_add_test(tc, a_pipelined_call_ignoring_cancellation_is_killed_after_the_grace);
    tcase_add_test(tc, a_pipelined_call_past_its_deadline_is_answered_and_not_waited_for);
    tcase_add_test(tc, exit_125_in_a_handler_is_reported_as_exit);
    tcase_add_test(tc, a_grandchild_holding_the_workers_pipes_does_not_delay_exit);
    tcase_add_test(tc, a_plugin_that_keeps_crashing_is_quarantined);
    tcase_add_test(tc, a_handler_ignoring_cancellation_is_killed_after_the_grace);
    tcase_add_test(tc, worker_output_is_logged_tagged_with_the_plugin);
    tcase_add_test(tc, a_handler_closing_all_descriptors_fails_only_its_call);
    tcase_add_test(tc, workers_start_on_the_first_call);
    tcase_add_test(tc, arguments_arrive_as_sent_in_both_modes);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(worker_suite, mh_global_setup, mh_global_teardown)
