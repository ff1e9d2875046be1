/* SPDX-License-Identifier: MIT */
/*
** test_testing.c: the test kit (toolhost/testing.h) as a plugin author uses
** it. Every condition runs in both isolation modes (the loop index: 0 in
** the host, 1 in workers): loading and refusals, calls and schema
** refusals, logs, progress, deadline, cancellation, scripted answers to
** the client requests, settings, a crashing handler, prompts and
** completions, and the diff messages.
*/
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "check_main.h"
#include "toolhost/testing.h"

#define KIT TEST_BUILDDIR "/kitplugins/.libs/kit.so"

static const char *const modes[][3] = {
    {"--isolation=none", NULL, NULL},
    {"--isolation=process", NULL, NULL},
};

/* A host in mode I with kit.so and one more option (may be NULL). */
static th_test_host *kit_host(int i, const char *extra)
{
    const char *args[] = {modes[i][0], extra, NULL};
    th_test_host *h = th_test_host_new(args);
    ck_assert_ptr_nonnull(h);
    ck_assert_int_eq(th_test_host_load(h, KIT), 0);
    ck_assert_msg(th_test_host_start(h) == 0, "start: %s", th_test_host_error(h));
    return h;
}

#define ASSERT_JSON(r, path, want)                                                                                     \
    do {                                                                                                               \
        char m_[512];                                                                                                  \
        ck_assert_msg(th_test_expect((r), (path), (want), m_, sizeof m_), "%s", m_);                                   \
    } while (0)

START_TEST(call_result_log_progress)
{
    th_test_host *h = kit_host(_i, NULL);
    ck_assert_uint_eq(th_test_host_tool_count(h), 5);
    th_test_result r;
    ck_assert_int_eq(th_test_call(h, "kit", "{\"a\":1,\"b\":2}", NULL, &r), 0);
    ck_assert(!r.is_error);
    ASSERT_JSON(&r, "structuredContent", "{\"sum\":3}");
    ck_assert_str_eq(th_test_text(&r, 0), "{\"sum\":3}");
    ck_assert_uint_eq(json_object_array_length(r.logs), 1);
    json_object *log = json_object_array_get_idx(r.logs, 0), *v;
    ck_assert(json_object_object_get_ex(log, "data", &v));
    ck_assert_str_eq(json_object_get_string(v), "adding 1 and 2");
    ck_assert(json_object_object_get_ex(log, "level", &v));
    ck_assert_str_eq(json_object_get_string(v), "info");
    ck_assert_uint_eq(json_object_array_length(r.progress), 2);
    json_object *last = json_object_array_get_idx(r.progress, 1);
    ck_assert(json_object_object_get_ex(last, "message", &v));
    ck_assert_str_eq(json_object_get_string(v), "done");
    ck_assert(r.duration_ms >= 0);
    th_test_result_clear(&r);
    th_test_host_free(h);
}
END_TEST

/* The host's schema check, not the handler, refuses (the handler would
 * have added a string as 0), with the host's message, as a tool error. */
START_TEST(schema_refusal)
{
    th_test_host *h = kit_host(_i, NULL);
    th_test_result r;
    ck_assert_int_eq(th_test_call(h, "kit", "{\"a\":\"one\",\"b\":2}", NULL, &r), 0);
    ck_assert(r.is_error);
    ck_assert_str_eq(th_test_text(&r, 0), "Invalid arguments for tool 'kit' (1 problem):\n/a: must be integer, got string (type)");
    ck_assert_uint_eq(json_object_array_length(r.logs), 0);
    th_test_result_clear(&r);
    ck_assert_int_eq(th_test_call(h, "nosuch", NULL, NULL, &r), -1);
    ck_assert_int_eq(r.status, TH_TEST_REFUSED);
    ck_assert_ptr_nonnull(strstr(r.error_text, "nosuch"));
    th_test_result_clear(&r);
    th_test_call(h, "kit", "[1]", NULL, &r);
    ck_assert_int_eq(r.status, TH_TEST_FAILED);
    th_test_result_clear(&r);
    th_test_host_free(h);
}
END_TEST

/* A plugin whose descriptor names another tool is refused with the
 * loader's message, and the good plugin next to it still serves. */
START_TEST(refused_plugin)
{
    const char *args[] = {modes[_i][0], NULL};
    th_test_host *h = th_test_host_new(args);
    ck_assert_int_eq(th_test_host_load(h, KIT), 0);
    ck_assert_int_eq(th_test_host_load(h, TEST_BUILDDIR "/plugins/.libs/mismatch.so"), 0);
    ck_assert_int_eq(th_test_host_start(h), -1);
    const char *e = th_test_host_error(h);
    ck_assert_msg(strstr(e, "mismatch.so refused") && strstr(e, "does not match the plugin file"), "%s", e);
    th_test_result r;
    ck_assert_int_eq(th_test_call(h, "kit", "{\"a\":2,\"b\":2}", NULL, &r), 0);
    ASSERT_JSON(&r, "structuredContent.sum", "4");
    th_test_result_clear(&r);
    ck_assert_int_eq(th_test_host_load(h, KIT), -1); /* too late */
    th_test_host_free(h);
}
END_TEST

START_TEST(deadline)
{
    th_test_host *h = kit_host(_i, NULL);
    th_test_call_opts o = {.deadline_ms = 300};
    th_test_result r;
    th_test_call(h, "kit_wait", NULL, &o, &r);
    /* The deadline's answer, not the kit's own wait running out. */
    ck_assert_int_ne(r.status, TH_TEST_NO_ANSWER);
    ck_assert_msg(r.is_error || r.status == TH_TEST_REFUSED, "%s", r.result_json ? r.result_json : "");
    th_test_result_clear(&r);
    th_test_host_free(h);
}
END_TEST

START_TEST(cancel_on_progress)
{
    th_test_host *h = kit_host(_i, NULL);
    th_test_call_opts o = {.cancel_on_progress = true};
    th_test_result r;
    ck_assert_int_eq(th_test_call(h, "kit_wait", NULL, &o, &r), -1);
    ck_assert_int_eq(r.status, TH_TEST_CANCELLED);
    ck_assert_uint_eq(json_object_array_length(r.progress), 1);
    th_test_result_clear(&r);
    th_test_host_free(h);
}
END_TEST

START_TEST(cancel_after)
{
    th_test_host *h = kit_host(_i, NULL);
    th_test_call_opts o = {.cancel_after_ms = 100};
    th_test_result r;
    ck_assert_int_eq(th_test_call(h, "kit_wait", NULL, &o, &r), -1);
    ck_assert_int_eq(r.status, TH_TEST_CANCELLED);
    ck_assert(r.duration_ms >= 100);
    th_test_result_clear(&r);
    th_test_host_free(h);
}
END_TEST

START_TEST(scripted_answers)
{
    th_test_host *h = kit_host(_i, NULL);
    const th_test_answer answers[] = {
        {"sampling/createMessage", "{\"role\":\"assistant\",\"content\":{\"type\":\"text\",\"text\":\"ok\"},"
                                   "\"model\":\"m\",\"stopReason\":\"endTurn\"}", NULL},
        {"elicitation/create", "{\"action\":\"accept\",\"content\":{\"name\":\"Ada\"}}", NULL},
        {"roots/list", "{\"roots\":[{\"uri\":\"file:///srv\",\"name\":\"srv\"}]}", NULL},
        {"elicitation/create", NULL, "the user closed the form"},
    };
    th_test_call_opts o = {.answers = answers, .nanswers = 4};
    th_test_result r;
    ck_assert_int_eq(th_test_call(h, "kit_ask", "{\"what\":\"elicit\"}", &o, &r), 0);
    ASSERT_JSON(&r, "structuredContent.content.name", "\"Ada\"");
    ck_assert_uint_eq(json_object_array_length(r.asked), 1);
    json_object *m;
    ck_assert(json_object_object_get_ex(json_object_array_get_idx(r.asked, 0), "method", &m));
    ck_assert_str_eq(json_object_get_string(m), "elicitation/create");
    th_test_result_clear(&r);
    ck_assert_int_eq(th_test_call(h, "kit_ask", "{\"what\":\"sample\"}", &o, &r), 0);
    ASSERT_JSON(&r, "structuredContent.content.text", "\"ok\"");
    th_test_result_clear(&r);
    ck_assert_int_eq(th_test_call(h, "kit_ask", "{\"what\":\"roots\"}", &o, &r), 0);
    ASSERT_JSON(&r, "structuredContent.roots.0.uri", "\"file:///srv\"");
    th_test_result_clear(&r);
    /* Unscripted: the client's error reaches the handler as TH_ERR_IO. */
    th_test_call_opts none = {0};
    ck_assert_int_eq(th_test_call(h, "kit_ask", "{\"what\":\"elicit\"}", &none, &r), 0);
    ck_assert(r.is_error);
    ck_assert_str_eq(th_test_text(&r, 0), "asking failed: TH_ERR_IO");
    th_test_result_clear(&r);
    th_test_host_free(h);
}
END_TEST

START_TEST(settings)
{
    th_test_host *h = kit_host(_i, "--set=kit.greeting=hello");
    th_test_result r;
    ck_assert_int_eq(th_test_call(h, "kit_setting", NULL, NULL, &r), 0);
    ck_assert_str_eq(th_test_text(&r, 0), "hello");
    th_test_result_clear(&r);
    th_test_host_free(h);
}
END_TEST

/* Process isolation only: in the host a crash is the test's own death.
 * The worker's SIGSEGV reaches the test as the host reports it. */
START_TEST(crash_reported)
{
    th_test_host *h = kit_host(1, NULL);
    th_test_result r;
    th_test_call(h, "kit_crash", NULL, NULL, &r);
    ck_assert_msg(r.status == TH_TEST_RESULT ? r.is_error : r.status == TH_TEST_REFUSED, "status %d", r.status);
    const char *said = r.result_json ? r.result_json : r.error_text;
    ck_assert_msg(strstr(said, "SIGSEGV") != NULL, "%s", said);
    th_test_result_clear(&r);
    /* The worker is restarted for the next call. */
    ck_assert_int_eq(th_test_call(h, "kit", "{\"a\":1,\"b\":1}", NULL, &r), 0);
    th_test_result_clear(&r);
    th_test_host_free(h);
}
END_TEST

START_TEST(prompts_and_completions)
{
    const char *args[] = {modes[_i][0], NULL};
    th_test_host *h = th_test_host_new(args);
    ck_assert_int_eq(th_test_host_load(h, TOP_BUILDDIR "/plugins/.libs/prompts.so"), 0);
    th_test_result r;
    ck_assert_int_eq(th_test_request(h, "prompts/get", "{\"name\":\"code_review\",\"arguments\":{\"code\":\"x=1\"}}",
                                     NULL, &r), 0);
    ASSERT_JSON(&r, "messages.0.role", "\"user\"");
    th_test_result_clear(&r);
    ck_assert_int_eq(th_test_request(h, "completion/complete",
                                     "{\"ref\":{\"type\":\"ref/prompt\",\"name\":\"code_review\"},"
                                     "\"argument\":{\"name\":\"language\",\"value\":\"py\"}}",
                                     NULL, &r), 0);
    ASSERT_JSON(&r, "completion.values.0", "\"python\"");
    th_test_result_clear(&r);
    th_test_host_free(h);
}
END_TEST

START_TEST(diff_messages)
{
    json_object *want = json_tokener_parse("{\"total\":3,\"items\":[1,2],\"ok\":true}");
    json_object *got = json_tokener_parse("{\"items\":[1,2],\"total\":2,\"ok\":true}");
    char msg[256];
    ck_assert(!th_test_json_diff("structuredContent", want, got, msg, sizeof msg));
    ck_assert_str_eq(msg, "structuredContent.total: expected 3, got 2");
    json_object_put(got);
    got = json_tokener_parse("{\"items\":[1],\"total\":3.0,\"ok\":true,\"more\":1}");
    ck_assert(!th_test_json_diff(NULL, want, got, msg, sizeof msg));
    ck_assert_str_eq(msg, "items.1: expected 2, got nothing");
    json_object_array_add(json_object_object_get(got, "items"), json_object_new_int(2));
    ck_assert(!th_test_json_diff(NULL, want, got, msg, sizeof msg));
    ck_assert_str_eq(msg, "more: expected nothing, got 1");
    json_object_object_del(got, "more");
    ck_assert(th_test_json_diff(NULL, want, got, msg, sizeof msg));
    json_object_put(want);
    json_object_put(got);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("testing");
    TCase *tc = tcase_create("kit");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, call_result_log_progress, 0, 2);
    tcase_add_loop_test(tc, schema_refusal, 0, 2);
    tcase_add_loop_test(tc, refused_plugin, 0, 2);
    tcase_add_loop_test(tc, deadline, 0, 2);
    tcase_add_loop_test(tc, cancel_on_progress, 0, 2);
    tcase_add_loop_test(tc, cancel_after, 0, 2);
    tcase_add_loop_test(tc, scripted_answers, 0, 2);
    tcase_add_loop_test(tc, settings, 0, 2);
    tcase_add_test(tc, crash_reported);
    tcase_add_loop_test(tc, prompts_and_completions, 0, 2);
    tcase_add_test(tc, diff_messages);
    suite_add_tcase(s, tc);
    return s;
}

static void setup(void)
{
    /* Workers and scans run the toolhost just built, not an installed one. */
    setenv("TOOLHOST_TEST_EXE", TOP_BUILDDIR "/src/toolhost", 1);
}

TH_CHECK_MAIN_WITH(suite, setup, th_check_nothing)
