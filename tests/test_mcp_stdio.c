/* SPDX-License-Identifier: MIT */
/*
** test_mcp_stdio.c: integration tests of toolhost's stdio transport and
** JSON-RPC handling: framing, every kind of malformed input (each followed
** by a call that still works), silence for notifications and responses,
** stdout hygiene, the shutdown sequence, and the command line.
*/
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mcp_harness.h"
#include "base/util.h"
#include "check_main.h"

#define PING(id) "{\"jsonrpc\":\"2.0\",\"id\":" #id ",\"method\":\"ping\"}"

/* End the session the normal way and check the host was alive to do it. */
/* ---- framing -------------------------------------------------------------- */

START_TEST(two_messages_in_one_write)
{
    mh_proc *p = mh_start(NULL);
    const char both[] = PING(1) "\n" PING(2) "\n";
    mh_send_raw(p, both, sizeof both - 1);
    json_object *a = mh_next(p), *b = mh_next(p);
    MH_ASSERT_ID(a, "1");
    MH_ASSERT_RESULT(a);
    MH_ASSERT_ID(b, "2");
    MH_ASSERT_RESULT(b);
    json_object_put(a);
    json_object_put(b);
    mh_finish(p);
}
END_TEST

START_TEST(message_split_across_writes)
{
    mh_proc *p = mh_start(NULL);
    const char *line = PING(3);
    mh_send_raw(p, line, 10);
    usleep(100 * 1000);
    mh_send_raw(p, line + 10, strlen(line) - 10);
    usleep(100 * 1000);
    mh_send_raw(p, "\n", 1);
    json_object *o = mh_next(p);
    MH_ASSERT_ID(o, "3");
    MH_ASSERT_RESULT(o);
    json_object_put(o);
    mh_finish(p);
}
END_TEST

START_TEST(crlf_is_tolerated)
{
    mh_proc *p = mh_start(NULL);
    const char crlf[] = PING(4) "\r\n";
    mh_send_raw(p, crlf, sizeof crlf - 1);
    json_object *o = mh_next(p);
    MH_ASSERT_ID(o, "4");
    MH_ASSERT_RESULT(o);
    json_object_put(o);
    mh_finish(p);
}
END_TEST

START_TEST(blank_lines_are_ignored)
{
    mh_proc *p = mh_start(NULL);
    mh_send_raw(p, "\n\n\r\n\n", 5);
    mh_ping_is_next(p, 5);
    mh_finish(p);
}
END_TEST

START_TEST(white_space_only_lines_are_blank)
{
    /* A line of spaces or tabs holds no message: nothing to answer. */
    mh_proc *p = mh_start(NULL);
    const char lines[] = "   \n\t\n \t \r\n";
    mh_send_raw(p, lines, sizeof lines - 1);
    mh_ping_is_next(p, 5);
    mh_finish(p);
}
END_TEST

START_TEST(last_line_without_newline_at_eof)
{
    mh_proc *p = mh_start(NULL);
    const char line[] = PING(6);
    mh_send_raw(p, line, sizeof line - 1);
    mh_close_stdin(p);
    json_object *o = mh_next(p);
    MH_ASSERT_ID(o, "6");
    MH_ASSERT_RESULT(o);
    json_object_put(o);
    mh_finish(p);
}
END_TEST

/* A ping request padded with a "pad" param to exactly LEN bytes. */
static char *padded_ping(int id, size_t len)
{
    char head[64];
    int h = snprintf(head, sizeof head, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"ping\",\"params\":{\"p\":\"", id);
    const char tail[] = "\"}}";
    ck_assert(len > (size_t)h + sizeof tail);
    char *s = malloc(len + 1);
    ck_assert(s != NULL);
    memcpy(s, head, (size_t)h);
    memset(s + h, 'x', len - (size_t)h - (sizeof tail - 1));
    memcpy(s + len - (sizeof tail - 1), tail, sizeof tail);
    ck_assert_uint_eq(strlen(s), len);
    return s;
}

START_TEST(message_at_the_limit_is_accepted)
{
    mh_proc *p = mh_start("--max-message-bytes", "1024", NULL);
    char *line = padded_ping(7, 1024);
    json_object *o = mh_rpc(p, "%s", line);
    MH_ASSERT_ID(o, "7");
    MH_ASSERT_RESULT(o);
    json_object_put(o);
    free(line);
    mh_finish(p);
}
END_TEST

START_TEST(oversized_message_is_refused_and_host_stays_up)
{
    mh_proc *p = mh_start("--max-message-bytes", "1024", NULL);
    char *line = padded_ping(8, 1025);
    json_object *o = mh_rpc(p, "%s", line);
    MH_ASSERT_ERROR(o, -32600);
    MH_ASSERT_ID(o, "null");
    json_object_put(o);
    free(line);
    mh_ping_is_next(p, 9);
    mh_finish(p);
}
END_TEST

START_TEST(huge_message_spanning_many_reads_is_refused_once)
{
    mh_proc *p = mh_start("--max-message-bytes", "1024", NULL);
    /* Far beyond one read (64 KiB): the tail is discarded, not buffered. */
    char *line = padded_ping(10, 300000);
    mh_send(p, "%s", line);
    free(line);
    json_object *o = mh_next(p);
    MH_ASSERT_ERROR(o, -32600);
    MH_ASSERT_ID(o, "null");
    json_object_put(o);
    mh_ping_is_next(p, 11);
    /* And again, with the next message in the same write as the tail. */
    line = padded_ping(12, 100000);
    size_t n = strlen(line);
    const char after[] = "\n" PING(13) "\n";
    char *both = malloc(n + sizeof after);
    ck_assert(both != NULL);
    memcpy(both, line, n);
    memcpy(both + n, after, sizeof after);
    mh_send_raw(p, both, n + sizeof after - 1);
    free(line);
    free(both);
    o = mh_next(p);
    MH_ASSERT_ERROR(o, -32600);
    MH_ASSERT_ID(o, "null");
    json_object_put(o);
    o = mh_next(p);
    MH_ASSERT_ID(o, "13");
    MH_ASSERT_RESULT(o);
    json_object_put(o);
    mh_finish(p);
}
END_TEST

START_TEST(oversized_last_line_without_newline_is_refused)
{
    mh_proc *p = mh_start("--max-message-bytes", "1024", NULL);
    mh_ping_is_next(p, 14);
    char *line = padded_ping(15, 5000);
    mh_send_raw(p, line, strlen(line));
    free(line);
    mh_close_stdin(p);
    json_object *o = mh_read(p, MH_TIMEOUT_MS);
    ck_assert_msg(o != NULL, "a 5000-byte last line (no newline) over a 1024-byte limit got no answer");
    MH_ASSERT_ERROR(o, -32600);
    MH_ASSERT_ID(o, "null");
    json_object_put(o);
    ck_assert(mh_wait_eof(p, MH_TIMEOUT_MS));
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
}
END_TEST

/* ---- malformed input ------------------------------------------------------- */

static const struct {
    const char *line;
    int code;
    const char *id;
} malformed[] = {
    {"{", -32700, "null"},
    {"this is not json", -32700, "null"},
    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} trailing", -32700, "null"},
    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"s\":\"\xc3\x28\"}}", -32700, "null"},
    {"[]", -32600, "null"},
    {"[" PING(1) "," PING(2) "]", -32600, "null"},
    {"5", -32600, "null"},
    {"\"ping\"", -32600, "null"},
    {"null", -32600, "null"},
    {"{\"id\":21,\"method\":\"ping\"}", -32600, "21"},
    {"{\"jsonrpc\":\"1.0\",\"id\":22,\"method\":\"ping\"}", -32600, "22"},
    {"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", -32600, "null"},
    {"{\"jsonrpc\":\"2.0\",\"id\":23,\"method\":7}", -32600, "23"},
    {"{\"jsonrpc\":\"2.0\",\"id\":24,\"method\":\"ping\",\"params\":[1]}", -32602, "24"},
    {"{\"jsonrpc\":\"2.0\",\"id\":\"s25\",\"method\":\"ping\",\"params\":\"x\"}", -32600, "\"s25\""},
    {"{\"jsonrpc\":\"2.0\",\"id\":26,\"method\":\"no/such/method\"}", -32601, "26"},
    {"{\"jsonrpc\":\"2.0\",\"id\":27,\"method\":\"no/such_method\"}", -32601, "27"},
};

START_TEST(malformed_input_gets_its_error)
{
    mh_proc *p = mh_start(NULL);
    json_object *o = mh_rpc(p, "%s", malformed[_i].line);
    ck_assert_msg(mh_has(o, "error"), "%s: want error %d, got %s", malformed[_i].line, malformed[_i].code,
                  mh_json(o));
    MH_ASSERT_ERROR(o, malformed[_i].code);
    MH_ASSERT_ID(o, malformed[_i].id);
    json_object_put(o);
    mh_ping_is_next(p, 100);
    mh_finish(p);
}
END_TEST

START_TEST(all_malformed_input_then_a_tool_call_works)
{
    mh_proc *p = mh_start(NULL);
    mh_initialize(p, "2025-11-25");
    for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++) {
        json_object *o = mh_rpc(p, "%s", malformed[i].line);
        MH_ASSERT_ERROR(o, malformed[i].code);
        json_object_put(o);
    }
    json_object *o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":200,\"method\":\"tools/call\","
                               "\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"still here\"}}}");
    MH_ASSERT_ID(o, "200");
    MH_ASSERT_STR(o, "result content 0 text", "still here");
    json_object_put(o);
    mh_finish(p);
}
END_TEST

START_TEST(notifications_and_responses_are_never_answered)
{
    static const char *const silent[] = {
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/unknown\"}",
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/unknown\",\"params\":{\"x\":1}}",
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":[1]}",
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":5}",
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{}}",
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":null}}",
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":12345}}",
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\",\"params\":\"x\"}",
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}",
        "{\"jsonrpc\":\"2.0\",\"method\":\"tools/list\"}", /* a request method sent as a notification */
        "{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"name\":\"nope\"}}",
        "{\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{}}",
        "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"error\":{\"code\":-32601,\"message\":\"no\"}}",
        "{\"jsonrpc\":\"2.0\",\"id\":98,\"result\":{\"roots\":[]}}",
    };
    mh_proc *p = mh_start(NULL);
    for (size_t i = 0; i < sizeof silent / sizeof silent[0]; i++)
        mh_send(p, "%s", silent[i]);
    mh_ping_is_next(p, 1);
    mh_initialize(p, "2025-06-18");
    for (size_t i = 0; i < sizeof silent / sizeof silent[0]; i++)
        mh_send(p, "%s", silent[i]);
    mh_ping_is_next(p, 2);
    mh_finish(p);
}
END_TEST

START_TEST(ids_are_echoed_exactly)
{
    static const char *const ids[] = {"0", "-1", "9007199254740993", "\"\"", "\"a \\\"quoted\\\" id/\\u00e9\""};
    mh_proc *p = mh_start(NULL);
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        json_object *o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"ping\"}", ids[i]);
        json_object *want = mh_parse(ids[i]);
        ck_assert_msg(json_object_equal(mh_at(o, "id"), want), "id %s came back as %s", ids[i], mh_json(o));
        MH_ASSERT_RESULT(o);
        json_object_put(want);
        json_object_put(o);
    }
    mh_finish(p);
}
END_TEST

/* ---- stdout hygiene --------------------------------------------------------- */

START_TEST(plugin_stdout_goes_to_stderr)
{
    mh_proc *p = mh_start(NULL);
    mh_initialize(p, "2025-11-25");
    json_object *o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                               "\"params\":{\"name\":\"printer\",\"arguments\":{}}}");
    MH_ASSERT_ID(o, "1");
    MH_ASSERT_STR(o, "result content 0 text", "printed");
    json_object_put(o);
    mh_ping_is_next(p, 2);
    /* mh_finish() reads every remaining stdout line as JSON-RPC up to EOF,
     * including whatever the exit-time flush of stdout produced. */
    mh_finish(p);
}
END_TEST

START_TEST(plugin_stdout_marks_are_on_stderr)
{
    mh_proc *p = mh_start(NULL);
    mh_initialize(p, "2025-11-25");
    json_object *o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                               "\"params\":{\"name\":\"printer\",\"arguments\":{}}}");
    json_object_put(o);
    mh_close_stdin(p);
    ck_assert(mh_wait_eof(p, MH_TIMEOUT_MS));
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    char *err = mh_stderr(p);
    static const char *const marks[] = {"PRINTER-REGISTER-MARK", "PRINTER-HANDLER-MARK", "PRINTER-PUTS-MARK",
                                        "PRINTER-WRITE-MARK", "PRINTER-UNFLUSHED-MARK"};
    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++)
        ck_assert_msg(strstr(err, marks[i]) != NULL, "%s missing from stderr:\n%s", marks[i], err);
    free(err);
    mh_free(p);
}
END_TEST

/* ---- shutdown ---------------------------------------------------------------- */

#define SLOW_CALL(id, ms, extra)                                                                                       \
    "{\"jsonrpc\":\"2.0\",\"id\":" #id ",\"method\":\"tools/call\",\"params\":{\"name\":\"slow\","                    \
    "\"arguments\":{\"ms\":" #ms extra "}}}"

START_TEST(eof_when_idle_exits_zero)
{
    mh_proc *p = mh_start(NULL);
    mh_ping_is_next(p, 1);
    mh_finish(p);
}
END_TEST

START_TEST(eof_before_anything_exits_zero)
{
    mh_proc *p = mh_start(NULL);
    mh_finish(p);
}
END_TEST

START_TEST(eof_delivers_the_response_of_a_call_in_flight)
{
    mh_proc *p = mh_start(NULL);
    mh_initialize(p, "2025-11-25");
    mh_send(p, SLOW_CALL(5, 700, ",\"tag\":\"short\""));
    mh_close_stdin(p);
    json_object *o = mh_await(p, "5", NULL);
    MH_ASSERT_RESULT(o);
    const char *text = mh_str(o, "result content 0 text");
    ck_assert_msg(text && strstr(text, "slow[short]: slept"), "%s", mh_json(o));
    json_object_put(o);
    ck_assert(mh_wait_eof(p, MH_TIMEOUT_MS));
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
}
END_TEST

START_TEST(eof_cancels_a_long_call_after_the_grace_period)
{
    mh_proc *p = mh_start("--shutdown-grace-ms", "500", NULL);
    mh_initialize(p, "2025-11-25");
    mh_send(p, SLOW_CALL(5, 60000, ",\"tag\":\"graceful\""));
    mh_ping_is_next(p, 6); /* the call is registered before the ping is read */
    long long t0 = mh_now_ms();
    mh_close_stdin(p);
    /* No response for the cancelled call: stdout just ends. */
    ck_assert_msg(mh_wait_eof(p, MH_TIMEOUT_MS), "a message was sent for the cancelled call");
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    long long took = mh_now_ms() - t0;
    ck_assert_msg(took < 5000, "exit took %lld ms with a 500 ms grace period", took);
    ck_assert_msg(mh_stderr_wait(p, "slow[graceful]: saw cancellation", 1000), "handler never saw cancellation");
    mh_free(p);
}
END_TEST

START_TEST(eof_does_not_wait_for_a_call_that_ignores_cancellation)
{
    mh_proc *p = mh_start("--shutdown-grace-ms", "500", NULL);
    mh_initialize(p, "2025-11-25");
    mh_send(p, SLOW_CALL(5, 60000, ",\"ignore_cancel\":true,\"tag\":\"stubborn\""));
    mh_ping_is_next(p, 6);
    long long t0 = mh_now_ms();
    mh_close_stdin(p);
    ck_assert_msg(mh_wait_eof(p, MH_TIMEOUT_MS), "a message was sent for the abandoned call");
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    long long took = mh_now_ms() - t0;
    /* grace + about 1 s; the call itself would take a minute. */
    ck_assert_msg(took < 4000, "exit took %lld ms with a 500 ms grace period", took);
    mh_free(p);
}
END_TEST

static void signal_stops_the_host(int sig)
{
    mh_proc *p = mh_start("--shutdown-grace-ms", "500", NULL);
    mh_initialize(p, "2025-11-25");
    mh_send(p, SLOW_CALL(5, 60000, ",\"tag\":\"signalled\""));
    mh_ping_is_next(p, 6);
    long long t0 = mh_now_ms();
    mh_kill(p, sig);
    ck_assert_msg(mh_wait_eof(p, MH_TIMEOUT_MS), "a message was sent for the cancelled call");
    int status = mh_wait(p, MH_TIMEOUT_MS);
    ck_assert_msg(status == 0, "exit status %d after signal %d", status, sig);
    long long took = mh_now_ms() - t0;
    ck_assert_msg(took < 5000, "exit took %lld ms after signal %d", took, sig);
    ck_assert(mh_stderr_wait(p, "slow[signalled]: saw cancellation", 1000));
    mh_free(p);
}

START_TEST(sigterm_stops_the_host)
{
    signal_stops_the_host(SIGTERM);
}
END_TEST

START_TEST(sigint_stops_the_host)
{
    signal_stops_the_host(SIGINT);
}
END_TEST

/* SIGHUP is the operator's "rescan the plugin directories" (hot reload,
 * test_reload.c): the host keeps serving, and a call running through it
 * finishes normally. */
START_TEST(sighup_rescans_and_keeps_serving)
{
    mh_proc *p = mh_start(NULL);
    mh_initialize(p, "2025-11-25");
    mh_send(p, SLOW_CALL(5, 300, ",\"tag\":\"hup\""));
    mh_ping_is_next(p, 6);
    mh_kill(p, SIGHUP);
    ck_assert(mh_stderr_wait(p, "rescanning the plugin directories (SIGHUP)", MH_TIMEOUT_MS));
    json_object *r = mh_await(p, "5", NULL);
    ck_assert_msg(strstr(mh_json(r), "slow[hup]: slept"), "%s", mh_json(r));
    json_object_put(r);
    mh_ping_is_next(p, 7);
    mh_finish(p);
}
END_TEST

START_TEST(sigterm_when_idle_exits_zero)
{
    mh_proc *p = mh_start(NULL);
    mh_ping_is_next(p, 1);
    mh_kill(p, SIGTERM);
    ck_assert(mh_wait_eof(p, MH_TIMEOUT_MS));
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
}
END_TEST

/*
** A client that stops reading stdout: the host blocks writing, and must
** still stop on SIGTERM (it used to wait in write() for ever, the signal
** being only a readable fd).
*/
START_TEST(sigterm_while_the_client_does_not_read)
{
    mh_proc *p = mh_start(NULL);
    mh_ping_is_next(p, 1);
    /* Each tools/list answer is a few KiB: 200 of them overfill the pipe,
     * while the requests themselves fit in it. */
    for (int i = 0; i < 200; i++)
        mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/list\",\"params\":{" MH_MODERN_META "}}",
                100 + i);
    struct timespec ts = {0, 500 * 1000000L};
    nanosleep(&ts, NULL);
    long long t0 = mh_now_ms();
    mh_kill(p, SIGTERM);
    int status = mh_wait(p, 10000); /* without reading stdout */
    ck_assert_msg(status == 0, "exit status %d after SIGTERM with stdout unread", status);
    ck_assert_msg(mh_now_ms() - t0 < 8000, "took %lld ms", mh_now_ms() - t0);
    mh_free(p);
}
END_TEST

/* Texts cut to fit a buffer end on a whole UTF-8 character. */
START_TEST(long_unicode_names_give_valid_utf8_errors)
{
    mh_proc *p = mh_start(NULL);
    static char name[2048];
    size_t n = 0;
    name[n++] = 'x';
    for (int i = 0; i < 300; i++) {
        name[n++] = (char)0xC3; /* U+00E9 */
        name[n++] = (char)0xA9;
    }
    name[n] = '\0';
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\"}", name);
    char *line = mh_read_line(p, MH_TIMEOUT_MS);
    ck_assert_ptr_nonnull(line);
    ck_assert_msg(th_utf8_valid(line, strlen(line)), "not UTF-8: %s", line);
    ck_assert_ptr_nonnull(strstr(line, "-32601"));
    free(line);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\"," MH_MODERN_META "}}",
            name);
    line = mh_read_line(p, MH_TIMEOUT_MS);
    ck_assert_ptr_nonnull(line);
    ck_assert_msg(th_utf8_valid(line, strlen(line)), "not UTF-8: %s", line);
    ck_assert_ptr_nonnull(strstr(line, "Unknown tool: x"));
    free(line);
    mh_close_stdin(p);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
}
END_TEST

/* ---- command line ------------------------------------------------------------ */

START_TEST(help_goes_to_stdout_and_exits_zero)
{
    mh_proc *p = mh_spawn("--help", NULL);
    char *first = mh_read_line(p, MH_TIMEOUT_MS);
    ck_assert_ptr_nonnull(first);
    ck_assert_msg(strstr(first, "Usage: toolhost") != NULL, "first line: %s", first);
    free(first);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
}
END_TEST

START_TEST(unknown_option_exits_two)
{
    mh_proc *p = mh_spawn("--no-such-option", NULL);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 2);
    ck_assert(mh_wait_eof(p, MH_TIMEOUT_MS)); /* nothing on stdout */
    char *err = mh_stderr(p);
    ck_assert_msg(strstr(err, "no-such-option") != NULL, "stderr: %s", err);
    free(err);
    mh_free(p);
}
END_TEST

START_TEST(bad_option_values_exit_two)
{
    static const char *const bad[][2] = {
        {"--page-size", "many"}, {"--max-message-bytes", "10"}, {"--shutdown-grace-ms", "-1"},
        {"--log-level", "loud"}, {"--max-concurrent-calls", "0"},
        {"--call-timeout", "soon"}, {"--call-timeout", "-1"}, {"--call-timeout", "0.0001"},
        {"--call-timeout", "nan"}, {"--call-timeout", "86401"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mh_proc *p = mh_spawn(bad[i][0], bad[i][1], NULL);
        ck_assert_msg(mh_wait(p, MH_TIMEOUT_MS) == 2, "%s %s", bad[i][0], bad[i][1]);
        mh_free(p);
    }
}
END_TEST

/* A directory holding one file named like a plugin that is not one. */
static char *refused_dir(void)
{
    static char dir[64];
    snprintf(dir, sizeof dir, "/tmp/mh-refused-XXXXXX");
    ck_assert(mkdtemp(dir) != NULL);
    char path[128];
    snprintf(path, sizeof path, "%s/garbage.so", dir);
    FILE *f = fopen(path, "w");
    ck_assert(f != NULL);
    fputs("not an ELF file\n", f);
    fclose(f);
    return dir;
}

static void remove_refused_dir(const char *dir)
{
    char path[128];
    snprintf(path, sizeof path, "%s/garbage.so", dir);
    unlink(path);
    rmdir(dir);
}

START_TEST(strict_with_a_refused_plugin_exits_one)
{
    char *dir = refused_dir();
    mh_proc *p = mh_start("--strict", "-d", dir, NULL);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 1);
    ck_assert(mh_wait_eof(p, MH_TIMEOUT_MS));
    char *err = mh_stderr(p);
    ck_assert_msg(strstr(err, "garbage.so") != NULL, "stderr does not name the plugin: %s", err);
    free(err);
    mh_free(p);
    remove_refused_dir(dir);
}
END_TEST

START_TEST(refused_plugin_without_strict_is_reported_and_host_serves)
{
    char *dir = refused_dir();
    mh_proc *p = mh_start("-d", dir, NULL);
    mh_initialize(p, "2025-11-25");
    json_object *o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
    ck_assert_uint_eq(mh_len(o, "result tools"), mh_tool_count);
    json_object_put(o);
    char *err = mh_stderr(p);
    ck_assert_msg(strstr(err, "garbage.so") != NULL, "stderr does not name the plugin: %s", err);
    free(err);
    mh_finish(p);
    remove_refused_dir(dir);
}
END_TEST

/* A --plugin-dir that is missing is fatal (see also test_loader_host). */
START_TEST(missing_directory_is_reported_and_fatal)
{
    mh_proc *p = mh_start("-d", "/nonexistent/mh-plugins", NULL);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 1);
    ck_assert(mh_wait_eof(p, MH_TIMEOUT_MS));
    char *err = mh_stderr(p);
    ck_assert_msg(strstr(err, "/nonexistent/mh-plugins") != NULL, "stderr does not name the directory: %s", err);
    free(err);
    mh_free(p);
}
END_TEST

START_TEST(strict_with_a_missing_directory_exits_one)
{
    mh_proc *p = mh_start("--strict", "-d", "/nonexistent/mh-plugins", NULL);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 1);
    mh_free(p);
}
END_TEST

START_TEST(strict_with_good_plugins_serves)
{
    mh_proc *p = mh_start("--strict", NULL);
    mh_ping_is_next(p, 1);
    mh_finish(p);
}
END_TEST

static Suite *stdio_suite(void)
{
    Suite *s = suite_create("mcp_stdio");
    TCase *tc = tcase_create("framing");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_test(tc, two_messages_in_one_write);
    tcase_add_test(tc, message_split_across_writes);
    tcase_add_test(tc, crlf_is_tolerated);
    tcase_add_test(tc, blank_lines_are_ignored);
    tcase_add_test(tc, white_space_only_lines_are_blank);
    tcase_add_test(tc, last_line_without_newline_at_eof);
    tcase_add_test(tc, message_at_the_limit_is_accepted);
    tcase_add_test(tc, oversized_message_is_refused_and_host_stays_up);
    tcase_add_test(tc, huge_message_spanning_many_reads_is_refused_once);
    tcase_add_test(tc, oversized_last_line_without_newline_is_refused);
    suite_add_tcase(s, tc);

    tc = tcase_create("errors");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_loop_test(tc, malformed_input_gets_its_error, 0, (int)(sizeof malformed / sizeof malformed[0]));
    tcase_add_test(tc, all_malformed_input_then_a_tool_call_works);
    tcase_add_test(tc, notifications_and_responses_are_never_answered);
    tcase_add_test(tc, ids_are_echoed_exactly);
    suite_add_tcase(s, tc);

    tc = tcase_create("stdout");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_test(tc, plugin_stdout_goes_to_stderr);
    tcase_add_test(tc, plugin_stdout_marks_are_on_stderr);
    suite_add_tcase(s, tc);

    tc = tcase_create("shutdown");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_test(tc, eof_when_idle_exits_zero);
    tcase_add_test(tc, eof_before_anything_exits_zero);
    tcase_add_test(tc, eof_delivers_the_response_of_a_call_in_flight);
    tcase_add_test(tc, eof_cancels_a_long_call_after_the_grace_period);
    tcase_add_test(tc, eof_does_not_wait_for_a_call_that_ignores_cancellation);
    tcase_add_test(tc, sigterm_stops_the_host);
    tcase_add_test(tc, sigint_stops_the_host);
    tcase_add_test(tc, sighup_rescans_and_keeps_serving);
    tcase_add_test(tc, sigterm_when_idle_exits_zero);
    tcase_add_test(tc, sigterm_while_the_client_does_not_read);
    tcase_add_test(tc, long_unicode_names_give_valid_utf8_errors);
    suite_add_tcase(s, tc);

    tc = tcase_create("command_line");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_test(tc, help_goes_to_stdout_and_exits_zero);
    tcase_add_test(tc, unknown_option_exits_two);
    tcase_add_test(tc, bad_option_values_exit_two);
    tcase_add_test(tc, strict_with_a_refused_plugin_exits_one);
    tcase_add_test(tc, refused_plugin_without_strict_is_reported_and_host_serves);
    tcase_add_test(tc, missing_directory_is_reported_and_fatal);
    tcase_add_test(tc, strict_with_a_missing_directory_exits_one);
    tcase_add_test(tc, strict_with_good_plugins_serves);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(stdio_suite, mh_global_setup, mh_global_teardown)
