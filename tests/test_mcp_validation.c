/* SPDX-License-Identifier: MIT */
/*
** test_mcp_validation.c: argument and output validation seen through the
** host: tools/call on a tool with a demanding schema, valid and invalid,
** checking the exact isError text; a tool breaking its own output schema; a
** plugin schema that does not compile, refused at load with the reason.
*/
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "mcp_harness.h"
#include "check_main.h"

#define PLUGINS TEST_BUILDDIR "/schemaplugins/.libs"

static mh_proc *start(void)
{
    mh_proc *p = mh_spawn("--plugin-dir", PLUGINS, NULL);
    mh_initialize(p, "2025-11-25");
    return p;
}

static json_object *call(mh_proc *p, const char *tool, const char *args)
{
    return mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\",\"arguments\":%s}}",
                  tool, args);
}

/* An isError result whose only text is exactly WANT. */
static void assert_tool_error(json_object *o, const char *want)
{
    MH_ASSERT_ID(o, "1");
    MH_ASSERT_TRUE(o, "result isError");
    ck_assert_uint_eq(mh_len(o, "result content"), 1);
    MH_ASSERT_STR(o, "result content 0 text", want);
}

START_TEST(valid_arguments_reach_the_handler)
{
    mh_proc *p = start();
    json_object *o = call(p, "demanding",
                          "{\"count\":4,\"name\":\"abc\",\"mode\":\"fast\",\"tags\":[\"a\",\"b\"],"
                          "\"point\":{\"x\":1,\"y\":2.5},\"limit\":\"none\"}");
    MH_ASSERT_ABSENT(o, "result isError");
    MH_ASSERT_STR(o, "result content 0 text",
                  "ok {\"count\":4,\"name\":\"abc\",\"mode\":\"fast\",\"tags\":[\"a\",\"b\"],"
                  "\"point\":{\"x\":1,\"y\":2.5},\"limit\":\"none\"}");
    json_object_put(o);
    mh_finish(p);
}
END_TEST

START_TEST(each_violation_is_named_by_pointer_and_keyword)
{
    mh_proc *p = start();
    json_object *o = call(p, "demanding",
                          "{\"count\":3,\"name\":\"A\",\"mode\":\"medium\",\"tags\":[\"a\",\"a\"],"
                          "\"point\":{\"x\":\"1\"},\"extra\":true,\"limit\":2.5}");
    assert_tool_error(o, "Invalid arguments for tool 'demanding' (9 problems):\n"
                         "/count: must be a multiple of 2 (multipleOf)\n"
                         "/name: must be at least 2 characters long, got 1 (minLength)\n"
                         "/name: must match pattern '^[a-z]+$' (pattern)\n"
                         "/mode: must be one of [\"fast\",\"slow\"] (enum)\n"
                         "/tags: must not contain duplicates (items 0 and 1 are equal) (uniqueItems)\n"
                         "/point: missing required property 'y' (required)\n"
                         "/point/x: must be number, got string (type)\n"
                         "/extra: additional property not allowed (additionalProperties)\n"
                         "/limit: must match exactly one of the 2 schemas in 'oneOf', matches none (oneOf)");
    json_object_put(o);
    mh_finish(p);
}
END_TEST

START_TEST(missing_required_and_wrong_root_type)
{
    mh_proc *p = start();
    json_object *o = call(p, "demanding", "{}");
    assert_tool_error(o, "Invalid arguments for tool 'demanding' (2 problems):\n"
                         "(root): missing required property 'count' (required)\n"
                         "(root): missing required property 'name' (required)");
    json_object_put(o);
    o = call(p, "demanding", "{\"count\":2,\"name\":\"ab\",\"limit\":5}");
    assert_tool_error(o, "Invalid arguments for tool 'demanding' (1 problem):\n"
                         "(root): missing property 'mode' (required when 'limit' is present) (dependentRequired)");
    json_object_put(o);
    o = call(p, "demanding", "{\"count\":200,\"name\":\"abcdefghij\"}");
    assert_tool_error(o, "Invalid arguments for tool 'demanding' (2 problems):\n"
                         "/count: must be <= 100 (maximum)\n"
                         "/name: must be at most 8 characters long, got 10 (maxLength)");
    json_object_put(o);
    mh_finish(p);
}
END_TEST

START_TEST(output_schema_is_enforced)
{
    mh_proc *p = start();
    json_object *o = call(p, "badoutput", "{\"mode\":\"good\"}");
    MH_ASSERT_ABSENT(o, "result isError");
    MH_ASSERT_INT(o, "result structuredContent n", 7);
    json_object_put(o);
    o = call(p, "badoutput", "{\"mode\":\"wrong\"}");
    assert_tool_error(o, "Tool 'badoutput' returned structuredContent that does not match its outputSchema:\n"
                         "/n: must be integer, got string (type)");
    json_object_put(o);
    o = call(p, "badoutput", "{\"mode\":\"missing\"}");
    assert_tool_error(o, "Tool 'badoutput' declares an outputSchema but returned no structuredContent");
    json_object_put(o);
    mh_finish(p);
}
END_TEST

START_TEST(invalid_plugin_schema_is_refused_at_load)
{
    mh_proc *p = start();
    /* The other plugins still serve. */
    json_object *o = call(p, "badregex", "{}");
    MH_ASSERT_INT(o, "error code", -32602);
    MH_ASSERT_STR(o, "error message", "Unknown tool: badregex");
    json_object_put(o);
    mh_finish(p);
    p = mh_spawn("--plugin-dir", PLUGINS, NULL);
    ck_assert(mh_stderr_wait(p, "Tool input_schema is not a valid JSON Schema: /properties/s/pattern:", MH_TIMEOUT_MS));
    char *err = mh_stderr(p);
    ck_assert_msg(strstr(err, "badregex.so") && strstr(err, "tool 'badregex'"), "refusal must name file and tool: %s",
                  err);
    free(err);
    mh_finish(p);
}
END_TEST

/* Cancelling a call stops the validation of its
 * arguments. With one pool thread, the probe call waits for that thread:
 * without the cancel, checking 500k items would take the whole work budget
 * (16 million steps over a 1000-entry enum, far beyond the read timeout). */
START_TEST(cancel_stops_argument_validation)
{
    mh_proc *p = mh_spawn("--plugin-dir", PLUGINS, "--max-concurrent-calls", "1", NULL);
    mh_initialize(p, "2025-11-25");
    size_t n = 500000;
    char *xs = malloc(2 * n + 2);
    ck_assert_ptr_nonnull(xs);
    xs[0] = '[';
    for (size_t i = 0; i < n; i++) {
        xs[1 + 2 * i] = '1';
        xs[2 + 2 * i] = i + 1 < n ? ',' : ']';
    }
    xs[2 * n + 1] = '\0';
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"costly\","
               "\"arguments\":{\"xs\":%s}}}",
            xs);
    free(xs);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1}}");
    /* The cancelled call is never answered; the probe is, in time. */
    json_object *o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
                               "\"costly_probe\",\"arguments\":{}}}");
    MH_ASSERT_ID(o, "2");
    MH_ASSERT_STR(o, "result content 0 text", "probe");
    json_object_put(o);
    mh_finish(p);
}
END_TEST

/* An id is free again once its response is read: a client that reuses it
 * at once must never see "in flight". */
START_TEST(ids_can_be_reused_once_answered)
{
    mh_proc *p = start();
    for (int i = 0; i < 300; i++) {
        json_object *o = call(p, "badoutput", "{\"mode\":\"good\"}");
        MH_ASSERT_INT(o, "result structuredContent n", 7);
        json_object_put(o);
    }
    mh_finish(p);
}
END_TEST

/*
** Arguments outside the plain JSON subset (a 30-digit integer, an exponent,
** non-ASCII text, \u escapes) reach a worker's handler exactly as they
** reach an in-process one: the worker parses them with the protocol's own
** parser, so nothing is clamped or reworded on the way.
*/
START_TEST(unusual_literals_reach_a_worker_as_they_reach_the_host)
{
    static const char args[] = "{\"count\":4,\"name\":\"abc\",\"mode\":\"fast\","
                               "\"tags\":[\"caf\\u00e9\",\"\xc3\xa9t\xc3\xa9\",\"\\ud83d\\ude00\"],"
                               "\"point\":{\"x\":1e3,\"y\":-0.5E-2},"
                               "\"limit\":123456789012345678901234567890}";
    char *text[2];
    const char *modes[2] = {"--isolation=none", "--isolation=process"};
    for (int m = 0; m < 2; m++) {
        mh_proc *p = mh_spawn("--plugin-dir", PLUGINS, modes[m], NULL);
        mh_initialize(p, "2025-11-25");
        json_object *o = call(p, "demanding", args);
        MH_ASSERT_ABSENT(o, "result isError");
        text[m] = strdup(mh_str(o, "result content 0 text"));
        json_object_put(o);
        mh_finish(p);
    }
    ck_assert_ptr_nonnull(strstr(text[0], "\"limit\":123456789012345678901234567890"));
    ck_assert_str_eq(text[1], text[0]);
    free(text[0]);
    free(text[1]);
}
END_TEST

static Suite *validation_suite(void)
{
    Suite *s = suite_create("mcp_validation");
    TCase *tc = tcase_create("validation");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_test(tc, valid_arguments_reach_the_handler);
    tcase_add_test(tc, unusual_literals_reach_a_worker_as_they_reach_the_host);
    tcase_add_test(tc, each_violation_is_named_by_pointer_and_keyword);
    tcase_add_test(tc, missing_required_and_wrong_root_type);
    tcase_add_test(tc, output_schema_is_enforced);
    tcase_add_test(tc, invalid_plugin_schema_is_refused_at_load);
    tcase_add_test(tc, ids_can_be_reused_once_answered);
    tcase_add_test(tc, cancel_stops_argument_validation);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(validation_suite, mh_global_setup, mh_global_teardown)
