/* SPDX-License-Identifier: MIT */
/*
** test_mcp_results.c: integration tests that what careless plugins hand
** back stays valid on the wire: the real toolhost with the hostile plugins
** stats.so and setlocale.so (tests/hostile/), every stdout line parsed
** strictly by the harness, and the host still answering afterwards. Also
** the byte bound on requests in flight (--max-inflight-bytes).
*/
/* sched_setaffinity, CPU_SET */
#define _GNU_SOURCE
#include "config.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <toolhost/plugin.h>

#include "protocol/jsonrpc.h"
#include "mcp_harness.h"
#include "check_main.h"

static int last_id = 100;

/* A legacy 2025-11-25 session (ping and structuredContent both exist)
 * serving only the plugins in DIR, with one more option if OPT. */
static mh_proc *start_in(const char *dir, const char *opt, const char *val)
{
    mh_proc *p = opt ? mh_spawn("-d", dir, opt, val, NULL) : mh_spawn("-d", dir, NULL);
    mh_initialize(p, "2025-11-25");
    return p;
}

/* tools/call NAME with ARGS_JSON; the response, its id checked. */
static json_object *call(mh_proc *p, const char *name, const char *args_json)
{
    char id[16];
    snprintf(id, sizeof id, "%d", ++last_id);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\",\"arguments\":%s}}",
            id, name, args_json);
    json_object *o = mh_next(p);
    MH_ASSERT_ID(o, id);
    return o;
}

/* The call's result is an isError result with one text block containing
 * WANT, and nothing else; then the host still answers a ping. */
static void assert_refused(mh_proc *p, json_object *o, const char *want)
{
    MH_ASSERT_RESULT(o);
    MH_ASSERT_TRUE(o, "result isError");
    MH_ASSERT_ABSENT(o, "result structuredContent");
    ck_assert_msg(mh_len(o, "result content") == 1, "want one block in %s", mh_json(o));
    const char *text = mh_str(o, "result content 0 text");
    ck_assert_msg(text && strstr(text, want), "want \"%s\" in %s", want, mh_json(o));
    json_object_put(o);
    mh_ping_is_next(p, ++last_id);
}

static char *stats_dir;
static mh_proc *stats_proc;

static void stats_setup(void)
{
    stats_dir = mh_private_dir(mh_hostile("stats"), NULL);
    stats_proc = start_in(stats_dir, NULL, NULL);
}

static void stats_teardown(void)
{
    mh_finish(stats_proc);
    mh_rm_dir(stats_dir);
}

/* ---- text and numbers ------------------------------------------------------ */

START_TEST(latin1_error_message_arrives_with_replacement_characters)
{
    json_object *o = call(stats_proc, "stats", "{\"kind\":\"latin1_error\"}");
    MH_ASSERT_TRUE(o, "result isError");
    MH_ASSERT_STR(o, "result content 0 text", "cannot open caf\xef\xbf\xbd.csv");
    json_object_put(o);
    mh_ping_is_next(stats_proc, ++last_id);
}
END_TEST

START_TEST(every_c_string_a_plugin_passes_is_repaired)
{
    /* The log notification is sent to the client (level warning). */
    json_object *o = mh_rpc(stats_proc,
                            "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"logging/setLevel\",\"params\":{\"level\":\"debug\"}}",
                            ++last_id);
    json_object_put(o);
    char id[16];
    snprintf(id, sizeof id, "%d", ++last_id);
    mh_send(stats_proc,
            "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"tools/call\",\"params\":{\"name\":\"stats\","
            "\"arguments\":{\"kind\":\"latin1_all\"},\"_meta\":{\"progressToken\":\"t\"}}}",
            id);
    json_object *notes = json_object_new_array();
    o = mh_await(stats_proc, id, notes);
    ck_assert_msg(json_object_array_length(notes) == 2, "want log and progress in %s", mh_json(notes));
    for (size_t i = 0; i < 2; i++) {
        json_object *n = json_object_array_get_idx(notes, i);
        if (mh_has(n, "params data"))
            MH_ASSERT_STR(n, "params data", "reading caf\xef\xbf\xbd.csv");
        else
            MH_ASSERT_STR(n, "params message", "caf\xef\xbf\xbd");
    }
    MH_ASSERT_STR(o, "result content 0 text", "caf\xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd");
    MH_ASSERT_STR(o, "result content 1 uri", "file:///caf\xef\xbf\xbd.csv");
    MH_ASSERT_STR(o, "result content 1 name", "caf\xef\xbf\xbd.csv");
    MH_ASSERT_STR(o, "result content 1 description", "d\xef\xbf\xbdj\xef\xbf\xbd");
    MH_ASSERT_STR(o, "result content 1 mimeType", "text/csv\xef\xbf\xbd");
    MH_ASSERT_STR(o, "result content 2 resource text", "x\xef\xbf\xbd");
    json_object_put(o);
    json_object_put(notes);
    mh_ping_is_next(stats_proc, ++last_id);
}
END_TEST

START_TEST(non_finite_progress_is_not_sent)
{
    char id[16];
    snprintf(id, sizeof id, "%d", ++last_id);
    mh_send(stats_proc,
            "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"tools/call\",\"params\":{\"name\":\"stats\","
            "\"arguments\":{\"kind\":\"progress_nan\"},\"_meta\":{\"progressToken\":7}}}",
            id);
    json_object *notes = json_object_new_array();
    json_object *o = mh_await(stats_proc, id, notes);
    ck_assert_msg(json_object_array_length(notes) == 0, "no progress may be sent: %s", mh_json(notes));
    char want[64];
    snprintf(want, sizeof want, "progress returned %d and %d", (int)TH_ERR_VALUE, (int)TH_ERR_VALUE);
    MH_ASSERT_STR(o, "result content 0 text", want);
    json_object_put(o);
    json_object_put(notes);
    ck_assert(mh_stderr_wait(stats_proc, "tool stats: th_call_progress with a non-finite progress", MH_TIMEOUT_MS));
    mh_ping_is_next(stats_proc, ++last_id);
}
END_TEST

static const struct {
    const char *kind;
    const char *want;
} refusals[] = {
    /* structuredContent that is not JSON */
    {"nan", "Tool 'stats' returned an invalid result: structuredContent.avg: NaN is not a JSON number"},
    {"comma", "structuredContent.avg: the number text \"1,5\" is not a JSON number"},
    {"bad_key", "structuredContent.caf\xef\xbf\xbd: key is not valid UTF-8"},
    /* content blocks that are not MCP content */
    {"no_text", "content[0]: a \"text\" block needs a string \"text\", got none"},
    {"text_42", "content[0]: a \"text\" block needs a string \"text\", got number"},
    {"unknown", "content[0]: unknown content block type \"video\""},
    {"image_no_data", "content[0]: a \"image\" block needs a string \"data\", got none"},
    {"audio_no_mime", "content[0]: a \"audio\" block needs a string \"mimeType\", got none"},
    {"resource_no_uri", "content[0]: an embedded resource needs a string \"uri\", got none"},
    {"sc_string", "structuredContent: must be a JSON object, got a string"},
    {"sc_array", "structuredContent: must be a JSON object, got an array"},
    {"sc_number", "structuredContent: must be a JSON object, got a number"},
    {"deep", "structuredContent.tree[0][0]"},
    {"deep_block", "content[0]._meta[0][0]"},
};

START_TEST(a_result_the_wire_cannot_carry_becomes_a_tool_error)
{
    char args[128];
    snprintf(args, sizeof args, "{\"kind\":\"%s\"}", refusals[_i].kind);
    json_object *o = call(stats_proc, "stats", args);
    assert_refused(stats_proc, o, refusals[_i].want);
    if (!strncmp(refusals[_i].kind, "deep", 4)) {
        o = call(stats_proc, "stats", args);
        assert_refused(stats_proc, o, "nested deeper than 128 levels");
    }
}
END_TEST

/* ---- size ---------------------------------------------------------------------- */

START_TEST(a_result_past_max_result_bytes_becomes_a_tool_error)
{
    char *dir = mh_private_dir(mh_hostile("stats"), NULL);
    mh_proc *p = start_in(dir, "--max-result-bytes", "100000");
    json_object *o = call(p, "stats", "{\"kind\":\"big\",\"bytes\":150000}");
    assert_refused(p, o, "Tool 'stats' returned 150000 bytes, more than --max-result-bytes (100000)");
    /* Just under the limit still goes out whole. */
    o = call(p, "stats", "{\"kind\":\"big\",\"bytes\":90000}");
    MH_ASSERT_RESULT(o);
    MH_ASSERT_ABSENT(o, "result isError");
    ck_assert_uint_eq(strlen(mh_str(o, "result content 0 text")), 90000);
    json_object_put(o);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

START_TEST(the_default_result_limit_is_16_mib)
{
    json_object *o = call(stats_proc, "stats", "{\"kind\":\"big\",\"bytes\":17000000}");
    assert_refused(stats_proc, o, "returned 17000000 bytes, more than --max-result-bytes (16777216)");
    o = call(stats_proc, "stats", "{\"kind\":\"fine\"}");
    MH_ASSERT_STR(o, "result content 0 text", "fine: fine");
    json_object_put(o);
}
END_TEST

/* ---- locale --------------------------------------------------------------------- */

/* Compile de_DE.UTF-8 into a private LOCPATH; a machine without localedef
 * fails the test (scripts/deps-debian.sh --test installs "locales"). */
static char *make_locale(void)
{
    char *dir = strdup("/tmp/mh-locale-XXXXXX");
    ck_assert(dir && mkdtemp(dir));
    char cmd[256];
    snprintf(cmd, sizeof cmd, "localedef -i de_DE -f UTF-8 %s/de_DE.UTF-8 2>&1", dir);
    int rc = system(cmd);
    ck_assert_msg(rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 0,
                  "localedef -i de_DE -f UTF-8 failed (status %d): install the Debian package 'locales'", rc);
    return dir;
}

START_TEST(numbers_do_not_follow_a_plugins_setlocale)
{
    char *loc = make_locale();
    char *dir = mh_private_dir(mh_hostile("setlocale"), TOP_BUILDDIR "/plugins/.libs/add.so", NULL);
    /* glibc's setlocale() keeps locale names where LeakSanitizer cannot
     * see them; that is the plugin's libc, not the host. */
    char supp[512], lsan[600];
    snprintf(supp, sizeof supp, "%s/lsan.supp", loc);
    FILE *f = fopen(supp, "w");
    ck_assert(f && fputs("leak:__argz_add_sep\n", f) >= 0 && fclose(f) == 0);
    snprintf(lsan, sizeof lsan, "suppressions=%s", supp);
    char *old_lsan = getenv("LSAN_OPTIONS") ? strdup(getenv("LSAN_OPTIONS")) : NULL;
    setenv("LSAN_OPTIONS", lsan, 1);
    setenv("LOCPATH", loc, 1);
    setenv("LC_ALL", "de_DE.UTF-8", 1);
    mh_proc *p = mh_spawn("-d", dir, NULL);
    /* Before this process parses anything: json-c's parser calls
     * newlocale(), which leaks the same way under LOCPATH. */
    unsetenv("LC_ALL");
    unsetenv("LOCPATH");
    if (old_lsan)
        setenv("LSAN_OPTIONS", old_lsan, 1);
    else
        unsetenv("LSAN_OPTIONS");
    free(old_lsan);
    mh_initialize(p, "2025-11-25");

    json_object *o = call(p, "add", "{\"a\":2,\"b\":3.5}");
    MH_ASSERT_STR(o, "result content 0 text", "5.5");
    MH_ASSERT_JSON_EQ(mh_at(o, "result structuredContent"), "{\"result\":5.5}");
    ck_assert_msg(strstr(mh_json(o), "{\"result\":5.5}") != NULL, "%s", mh_json(o));
    json_object_put(o);

    /* Numbers json-c formats itself: structured content and progress. */
    char id[16];
    snprintf(id, sizeof id, "%d", ++last_id);
    mh_send(p,
            "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"tools/call\",\"params\":{\"name\":\"setlocale\","
            "\"arguments\":{\"x\":5.5},\"_meta\":{\"progressToken\":1}}}",
            id);
    json_object *notes = json_object_new_array();
    o = mh_await(p, id, notes);
    ck_assert_uint_eq(json_object_array_length(notes), 1);
    MH_ASSERT_JSON_EQ(mh_at(json_object_array_get_idx(notes, 0), "params progress"), "2.75");
    MH_ASSERT_JSON_EQ(mh_at(o, "result structuredContent"), "{\"half\":2.75}");
    MH_ASSERT_STR(o, "result content 0 text", "{\"half\":2.75}");
    json_object_put(o);
    json_object_put(notes);

    mh_ping_is_next(p, ++last_id);
    mh_finish(p);
    mh_rm_dir(dir);
    char path[512];
    snprintf(path, sizeof path, "rm -rf '%s'", loc);
    ck_assert_int_eq(system(path), 0);
    free(loc);
}
END_TEST

/* ---- the parser keeps literals, typed tools judge them ---------------------- */

START_TEST(huge_literals_reach_typed_tools_unclamped)
{
    char *dir = mh_private_dir(TOP_BUILDDIR "/plugins/.libs/add.so", NULL);
    mh_proc *p = mh_spawn("-d", dir, NULL);
    mh_initialize(p, "2025-11-25");
    /* json-c alone clamps this literal to 2^64-1, so the sum would be
     * 1.8446744073709552e+19; the double nearest the literal is 1e+23. */
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":18446744073709551616,\"method\":\"tools/call\",\"params\":"
               "{\"name\":\"add\",\"arguments\":{\"a\":99999999999999999999999,\"b\":0}}}");
    /* Read as text: the harness's own json-c would clamp the id again. */
    char *line = mh_read_line(p, MH_TIMEOUT_MS);
    ck_assert_ptr_nonnull(line);
    ck_assert_msg(strstr(line, "\"id\":18446744073709551616,") != NULL, "%s", line);
    ck_assert_msg(strstr(line, "\"text\":\"1e+23\"") != NULL, "%s", line);
    free(line);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/* ---- bytes in flight ---------------------------------------------------------- */

/*
** A call's place and bytes are given back before its answer goes out: a
** client that sends its next call as soon as it reads the answer is never
** refused busy for a call that is over. Host and client share one CPU, so
** the answer wakes the client while the thread that wrote it (a 2 ms call
** runs off the reader) has not yet gone on; two calls of 800 bytes pass
** --max-inflight-bytes together, and each is admitted only alone. The
** race is narrow: 600 calls lost it in most runs before the fix.
*/
START_TEST(an_answered_call_no_longer_counts_as_in_flight)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    ck_assert_int_eq(sched_getaffinity(0, sizeof one, &one), 0);
    int cpu = 0;
    while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &one))
        cpu++;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    ck_assert_int_eq(sched_setaffinity(0, sizeof one, &one), 0); /* this test's process and the host it starts */
    mh_proc *p = mh_start("--max-inflight-bytes", "1000", NULL);
    mh_initialize(p, "2025-11-25");
    char pad[700];
    memset(pad, 'x', sizeof pad - 1);
    pad[sizeof pad - 1] = '\0';
    for (int id = 1; id <= 600; id++) {
        json_object *o = mh_rpc(p,
                                "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{"
                                "\"name\":\"slow\",\"arguments\":{\"ms\":2,\"tag\":\"%s\"}}}",
                                id, pad);
        ck_assert_msg(mh_has(o, "result"), "call %d: %s", id, mh_json(o));
        json_object_put(o);
    }
    mh_finish(p);
}
END_TEST


START_TEST(requests_in_flight_are_bounded_in_bytes)
{
    mh_proc *p = mh_start("--max-inflight-bytes", "1000", NULL);
    mh_initialize(p, "2025-11-25");
    char pad[700];
    memset(pad, 'x', sizeof pad - 1);
    pad[sizeof pad - 1] = '\0';
    /* The first call is always admitted, even past the bound alone. */
    mh_send(p,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\","
            "\"arguments\":{\"ms\":60000,\"tag\":\"%s%s\"}}}",
            pad, pad);
    /* A second while 1400 bytes are held: refused at once as busy. */
    json_object *o = mh_rpc(p,
                            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                            "\"arguments\":{\"text\":\"hi\"}}}");
    MH_ASSERT_ID(o, "2");
    MH_ASSERT_ERROR(o, TH_RPC_SERVER_BUSY);
    const char *msg = mh_str(o, "error message");
    ck_assert_msg(strstr(msg, "--max-inflight-bytes (1000)") != NULL, "%s", msg);
    json_object_put(o);
    mh_ping_is_next(p, 3);
    /* Once the slow call is cancelled and answered, calls are admitted. */
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1}}");
    long long until = mh_now_ms() + MH_TIMEOUT_MS;
    for (int id = 4;; id++) {
        o = mh_rpc(p,
                   "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                   "\"arguments\":{\"text\":\"hi\"}}}",
                   id);
        bool ok = mh_has(o, "result");
        json_object_put(o);
        if (ok)
            break;
        ck_assert_msg(mh_now_ms() < until, "calls still refused after the slow call was cancelled");
        usleep(50 * 1000);
    }
    mh_finish(p);
}
END_TEST

static Suite *results_suite(void)
{
    Suite *s = suite_create("mcp_results");
    TCase *tc = tcase_create("hostile_results");
    tcase_add_checked_fixture(tc, stats_setup, stats_teardown);
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_test(tc, latin1_error_message_arrives_with_replacement_characters);
    tcase_add_test(tc, every_c_string_a_plugin_passes_is_repaired);
    tcase_add_test(tc, non_finite_progress_is_not_sent);
    tcase_add_loop_test(tc, a_result_the_wire_cannot_carry_becomes_a_tool_error, 0,
                        (int)(sizeof refusals / sizeof refusals[0]));
    tcase_add_test(tc, the_default_result_limit_is_16_mib);
    suite_add_tcase(s, tc);

    tc = tcase_create("limits");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_test(tc, a_result_past_max_result_bytes_becomes_a_tool_error);
    tcase_add_test(tc, numbers_do_not_follow_a_plugins_setlocale);
    tcase_add_test(tc, requests_in_flight_are_bounded_in_bytes);
    tcase_add_test(tc, an_answered_call_no_longer_counts_as_in_flight);
    tcase_add_test(tc, huge_literals_reach_typed_tools_unclamped);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(results_suite, mh_global_setup, mh_global_teardown)
