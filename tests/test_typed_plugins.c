/* SPDX-License-Identifier: MIT */
/*
** test_typed_plugins.c: the bundled typed plugins add and text through the
** test kit (toolhost/testing.h), in both isolation modes (loop index: none,
** process): their schemas as tools/list shows them, each call's text and
** structuredContent, and what the host refuses or the result rules reject.
*/
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "check_main.h"
#include "toolhost/testing.h"

static const char *const modes[] = {"--isolation=none", "--isolation=process"};

static th_test_host *typed_host(int mode)
{
    th_test_host *h = th_test_host_new((const char *[]){modes[mode], NULL});
    ck_assert_ptr_nonnull(h);
    ck_assert_int_eq(th_test_host_load(h, TOP_BUILDDIR "/plugins/.libs/add.so"), 0);
    ck_assert_int_eq(th_test_host_load(h, TOP_BUILDDIR "/plugins/.libs/text.so"), 0);
    ck_assert_msg(th_test_host_start(h) == 0, "start: %s", th_test_host_error(h));
    ck_assert_uint_eq(th_test_host_tool_count(h), 2);
    return h;
}

/* One call: its text block, and its structuredContent as JSON, or NULL
 * when the call must be an isError result whose text is TEXT. */
typedef struct {
    const char *tool, *args, *text, *structured;
} call_case;

static void run_cases(int mode, const call_case *cases, size_t n)
{
    th_test_host *h = typed_host(mode);
    th_test_result r = {0};
    for (size_t i = 0; i < n; i++) {
        const call_case *c = &cases[i];
        char msg[1024];
        th_test_call(h, c->tool, c->args, NULL, &r);
        ck_assert_msg(r.status == TH_TEST_RESULT && r.is_error == !c->structured, "%s %s [%s]: %s", c->tool, c->args,
                      modes[mode], r.result_json ? r.result_json : r.error_text);
        ck_assert_msg(th_test_text(&r, 0) != NULL, "%s %s: no text block: %s", c->tool, c->args, r.result_json);
        ck_assert_msg(strcmp(th_test_text(&r, 0), c->text) == 0, "%s %s [%s]: text \"%s\", expected \"%s\"", c->tool,
                      c->args, modes[mode], th_test_text(&r, 0), c->text);
        if (c->structured)
            ck_assert_msg(th_test_expect(&r, "structuredContent", c->structured, msg, sizeof msg), "%s %s [%s]: %s",
                          c->tool, c->args, modes[mode], msg);
        th_test_result_clear(&r);
    }
    th_test_host_free(h);
}

#define RUN(cases) run_cases(_i, cases, sizeof cases / sizeof cases[0])

/* tools/list's entry I is TOOL with these schemas. */
static void expect_tool(th_test_host *h, int i, const char *tool, const char *input, const char *output)
{
    th_test_result r;
    char path[64], msg[1024];
    ck_assert_int_eq(th_test_request(h, "tools/list", NULL, NULL, &r), 0);
    snprintf(path, sizeof path, "tools.%d.name", i);
    th_test_assert_json(&r, path, tool);
    snprintf(path, sizeof path, "tools.%d.inputSchema", i);
    ck_assert_msg(th_test_expect(&r, path, input, msg, sizeof msg), "%s", msg);
    snprintf(path, sizeof path, "tools.%d.outputSchema", i);
    ck_assert_msg(th_test_expect(&r, path, output, msg, sizeof msg), "%s", msg);
    snprintf(path, sizeof path, "tools.%d.annotations", i);
    ck_assert_msg(th_test_expect(&r, path, "{\"readOnlyHint\":true,\"idempotentHint\":true,\"openWorldHint\":false}",
                                 msg, sizeof msg),
                  "%s", msg);
    th_test_result_clear(&r);
}

START_TEST(add_schema)
{
    th_test_host *h = typed_host(_i);
    expect_tool(h, 0, "\"add\"",
                "{\"type\":\"object\",\"properties\":{"
                "\"a\":{\"type\":\"number\",\"description\":\"First addend\"},"
                "\"b\":{\"type\":\"number\",\"description\":\"Second addend\"}},"
                "\"required\":[\"a\",\"b\"],\"additionalProperties\":false}",
                "{\"type\":\"object\",\"properties\":{\"result\":{\"type\":\"number\",\"description\":\"a + b\"}},"
                "\"required\":[\"result\"]}");
    th_test_host_free(h);
}
END_TEST

static const call_case add_cases[] = {
    {"add", "{\"a\": 2, \"b\": 3.5}", "5.5", "{\"result\":5.5}"},
    {"add", "{\"a\": 0.1, \"b\": 0.2}", "0.30000000000000004", "{\"result\":0.30000000000000004}"},
    {"add", "{\"a\": -1, \"b\": 1}", "0", "{\"result\":0}"},
    /* As JavaScript prints numbers: not "1e+01", "3e+03", "5.0". */
    {"add", "{\"a\": 10, \"b\": 0}", "10", "{\"result\":10}"},
    {"add", "{\"a\": 1000, \"b\": 2000}", "3000", "{\"result\":3000}"},
    {"add", "{\"a\": 2, \"b\": 3}", "5", "{\"result\":5}"},
    /* The host's schema check answers before the function runs. */
    {"add", "{\"a\": \"2\", \"b\": 1}", "Invalid arguments for tool 'add' (1 problem):\n/a: must be number, got string (type)",
     NULL},
    {"add", "{\"a\": 2}", "Invalid arguments for tool 'add' (1 problem):\n(root): missing required property 'b' (required)",
     NULL},
    {"add", "{\"a\": 2, \"b\": 1, \"c\": 0}",
     "Invalid arguments for tool 'add' (1 problem):\n/c: additional property not allowed (additionalProperties)", NULL},
    /* A sum JSON cannot hold is the result rules' error, not "inf". */
    {"add", "{\"a\": 1e308, \"b\": 1e308}", "Tool 'add' returned inf, which JSON cannot represent", NULL},
};

START_TEST(add_calls)
{
    RUN(add_cases);
}
END_TEST

START_TEST(text_schema)
{
    th_test_host *h = typed_host(_i);
    expect_tool(h, 1, "\"text\"",
                "{\"type\":\"object\",\"properties\":{"
                "\"text\":{\"type\":\"string\",\"description\":\"The text to work on\"},"
                "\"operation\":{\"type\":\"string\",\"description\":\"word_count, char_count (Unicode code "
                "points) and line_count return a number; upper, lower and title return the converted text\","
                "\"enum\":[\"word_count\",\"char_count\",\"line_count\",\"upper\",\"lower\",\"title\"],"
                "\"default\":\"word_count\"},"
                "\"trim\":{\"type\":\"boolean\",\"description\":\"Remove leading and trailing whitespace "
                "first\",\"default\":false}},"
                "\"required\":[\"text\"],\"additionalProperties\":false}",
                "{\"type\":\"object\",\"properties\":{\"result\":{\"type\":[\"string\",\"null\"],\"description\":\"The count "
                "as decimal digits, or the converted text\"}},\"required\":[\"result\"]}");
    th_test_host_free(h);
}
END_TEST

static const call_case text_counts[] = {
    {"text", "{\"text\": \"  the quick\\tbrown\\n fox \"}", "4", "{\"result\":\"4\"}"},
    {"text", "{\"text\": \"\"}", "0", "{\"result\":\"0\"}"},
    {"text", "{\"text\": \"h\\u00e9llo \\u20ac\", \"operation\": \"char_count\"}", "7", "{\"result\":\"7\"}"},
    {"text", "{\"text\": \"  ab  \", \"operation\": \"char_count\"}", "6", "{\"result\":\"6\"}"},
    {"text", "{\"text\": \"  ab  \", \"operation\": \"char_count\", \"trim\": true}", "2", "{\"result\":\"2\"}"},
    {"text", "{\"text\": \" \\t\\n \", \"operation\": \"char_count\", \"trim\": true}", "0", "{\"result\":\"0\"}"},
    {"text", "{\"text\": \"a\\nb\", \"operation\": \"line_count\"}", "2", "{\"result\":\"2\"}"},
    {"text", "{\"text\": \"a\\nb\\n\", \"operation\": \"line_count\"}", "2", "{\"result\":\"2\"}"},
    {"text", "{\"text\": \"\\n\\n\", \"operation\": \"line_count\"}", "2", "{\"result\":\"2\"}"},
    {"text", "{\"text\": \"\", \"operation\": \"line_count\"}", "0", "{\"result\":\"0\"}"},
    {"text", "{\"text\": \"x\", \"operation\": \"line_count\"}", "1", "{\"result\":\"1\"}"},
};

START_TEST(text_counts_)
{
    RUN(text_counts);
}
END_TEST

static const call_case text_case[] = {
    {"text", "{\"text\": \"Hello, World\", \"operation\": \"upper\"}", "HELLO, WORLD", "{\"result\":\"HELLO, WORLD\"}"},
    {"text", "{\"text\": \"Hello, World\", \"operation\": \"lower\"}", "hello, world", "{\"result\":\"hello, world\"}"},
    {"text", "{\"text\": \"hELLO wORLD\\tagain\", \"operation\": \"title\"}", "Hello World\tAgain",
     "{\"result\":\"Hello World\\tAgain\"}"},
    /* Latin-1, Greek and Cyrillic letters; the sign and the euro unchanged. */
    {"text", "{\"text\": \"\\u00e9t\\u00e9 \\u00f7 \\u03b1\\u03c9 \\u0436\\u0451 \\u20ac\", \"operation\": \"upper\"}",
     "\xc3\x89T\xc3\x89 \xc3\xb7 \xce\x91\xce\xa9 \xd0\x96\xd0\x81 \xe2\x82\xac",
     "{\"result\":\"\xc3\x89T\xc3\x89 \xc3\xb7 \xce\x91\xce\xa9 \xd0\x96\xd0\x81 \xe2\x82\xac\"}"},
    {"text", "{\"text\": \"\\u00c9T\\u00c9 \\u00d7 \\u0391\\u03a9 \\u0416\\u0401\", \"operation\": \"lower\"}",
     "\xc3\xa9t\xc3\xa9 \xc3\x97 \xce\xb1\xcf\x89 \xd0\xb6\xd1\x91",
     "{\"result\":\"\xc3\xa9t\xc3\xa9 \xc3\x97 \xce\xb1\xcf\x89 \xd0\xb6\xd1\x91\"}"},
    {"text", "{\"text\": \"  padded  \", \"operation\": \"upper\", \"trim\": true}", "PADDED", "{\"result\":\"PADDED\"}"},
};

START_TEST(text_case_)
{
    RUN(text_case);
}
END_TEST

static const call_case text_errors[] = {
    {"text", "{\"text\": \"x\", \"operation\": \"reverse\"}",
     "Invalid arguments for tool 'text' (1 problem):\n/operation: must be one of [\"word_count\",\"char_count\",\"line_count\","
     "\"upper\",\"lower\",\"title\"] (enum)",
     NULL},
    {"text", "{\"operation\": \"upper\"}",
     "Invalid arguments for tool 'text' (1 problem):\n(root): missing required property 'text' (required)", NULL},
    {"text", "{\"text\": \"x\", \"trim\": \"yes\"}",
     "Invalid arguments for tool 'text' (1 problem):\n/trim: must be boolean, got string (type)", NULL},
};

START_TEST(text_errors_)
{
    RUN(text_errors);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("typed_plugins");
    TCase *tc = tcase_create("kit");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, add_schema, 0, 2);
    tcase_add_loop_test(tc, add_calls, 0, 2);
    tcase_add_loop_test(tc, text_schema, 0, 2);
    tcase_add_loop_test(tc, text_counts_, 0, 2);
    tcase_add_loop_test(tc, text_case_, 0, 2);
    tcase_add_loop_test(tc, text_errors_, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}

static void setup(void)
{
    /* Workers and scans run the toolhost just built, not an installed one. */
    setenv("TOOLHOST_TEST_EXE", TOP_BUILDDIR "/src/toolhost", 1);
}

TH_CHECK_MAIN_WITH(suite, setup, th_check_nothing)
