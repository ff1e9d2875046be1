/* SPDX-License-Identifier: MIT */
/*
** test_typed_plugins.c: the bundled typed plugins, loaded from the build
** tree as the host loads them: add (the README's example call and schema) and
** text (strings, an enum with a default, an optional boolean).
*/
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/loader.h"
#include "base/log.h"
#include "plugin/registry.h"
#include "typed/helpers.h"
#include "check_main.h"

static th_registry *reg;

static void quiet(th_log_level level, const char *line, void *ctx)
{
    (void)level;
    (void)line;
    (void)ctx;
}

static void setup(void)
{
    th_log_set_sink(quiet, NULL);
    reg = th_registry_new();
    th_load_stats stats = {0};
    ck_assert_int_eq(th_loader_load_file(reg, TOP_BUILDDIR "/plugins/.libs/add.so", NULL, &stats), TH_OK);
    ck_assert_int_eq(th_loader_load_file(reg, TOP_BUILDDIR "/plugins/.libs/text.so", NULL, &stats), TH_OK);
    ck_assert_uint_eq(stats.tools_loaded, 2);
}

static void teardown(void)
{
    th_registry_unref(reg);
    th_log_set_sink(NULL, NULL);
}

/* Call the registered tool NAME as the protocol layer will. */
static json_object *call_tool(const char *name, const char *args_json)
{
    const th_entry *e = th_registry_get(reg, name);
    ck_assert_ptr_nonnull(e);
    ck_assert_ptr_nonnull(e->typed);
    json_object *args = json_tokener_parse(args_json);
    ck_assert_ptr_nonnull(args);
    th_call *call = th_call_new(name, NULL);
    th_rc rc = th_typed_invoke(e->typed, call, args);
    json_object *res = th_call_finish(call, rc);
    th_call_free(call);
    json_object_put(args);
    return res;
}

static void expect(const char *name, const char *args, const char *text, const char *structured)
{
    json_object *r = call_tool(name, args);
    ck_assert_msg(!result_is_error(r), "%s", json_object_to_json_string_ext(r, JSON_PLAIN));
    ck_assert_uint_eq(result_blocks(r), 1);
    ck_assert_str_eq(result_text(r, 0), text);
    ck_assert_pstr_eq(result_structured(r), structured);
    json_object_put(r);
}

static void expect_error(const char *name, const char *args, const char *message)
{
    json_object *r = call_tool(name, args);
    ck_assert(result_is_error(r));
    ck_assert_str_eq(result_text(r, 0), message);
    json_object_put(r);
}

START_TEST(test_add_schema)
{
    const th_entry *e = th_registry_get(reg, "add");
    ck_assert_ptr_nonnull(e);
    ck_assert_str_eq(e->description, "Add two numbers and return the sum");
    ck_assert_str_eq(json_object_to_json_string_ext(e->input_schema, JSON_PLAIN),
                     "{\"type\":\"object\",\"properties\":{"
                     "\"a\":{\"type\":\"number\",\"description\":\"First addend\"},"
                     "\"b\":{\"type\":\"number\",\"description\":\"Second addend\"}},"
                     "\"required\":[\"a\",\"b\"],\"additionalProperties\":false}");
    ck_assert_str_eq(json_object_to_json_string_ext(e->output_schema, JSON_PLAIN),
                     "{\"type\":\"object\",\"properties\":{\"result\":{\"type\":\"number\",\"description\":\"a + b\"}},"
                     "\"required\":[\"result\"]}");
}
END_TEST

START_TEST(test_add_calls)
{
    expect("add", "{\"a\": 2, \"b\": 3.5}", "5.5", "{\"result\":5.5}");
    expect("add", "{\"a\": 0.1, \"b\": 0.2}", "0.30000000000000004", "{\"result\":0.30000000000000004}");
    expect("add", "{\"a\": -1, \"b\": 1}", "0", "{\"result\":0}");
    /* As JavaScript prints numbers: not "1e+01", "3e+03", "5.0". */
    expect("add", "{\"a\": 10, \"b\": 0}", "10", "{\"result\":10}");
    expect("add", "{\"a\": 1000, \"b\": 2000}", "3000", "{\"result\":3000}");
    expect("add", "{\"a\": 2, \"b\": 3}", "5", "{\"result\":5}");
    expect_error("add", "{\"a\": \"2\", \"b\": 1}", "Invalid argument 'a': expected number, got string");
    expect_error("add", "{\"a\": 2}", "Missing required argument 'b'");
    expect_error("add", "{\"a\": 2, \"b\": 1, \"c\": 0}", "Unknown argument 'c'");
    expect_error("add", "{\"a\": 1e308, \"b\": 1e308}", "Tool 'add' returned inf, which JSON cannot represent");
}
END_TEST

START_TEST(test_text_schema)
{
    const th_entry *e = th_registry_get(reg, "text");
    ck_assert_ptr_nonnull(e);
    ck_assert_str_eq(json_object_to_json_string_ext(e->input_schema, JSON_PLAIN),
                     "{\"type\":\"object\",\"properties\":{"
                     "\"text\":{\"type\":\"string\",\"description\":\"The text to work on\"},"
                     "\"operation\":{\"type\":\"string\",\"description\":\"word_count, char_count (Unicode code "
                     "points) and line_count return a number; upper, lower and title return the converted text\","
                     "\"enum\":[\"word_count\",\"char_count\",\"line_count\",\"upper\",\"lower\",\"title\"],"
                     "\"default\":\"word_count\"},"
                     "\"trim\":{\"type\":\"boolean\",\"description\":\"Remove leading and trailing whitespace "
                     "first\",\"default\":false}},"
                     "\"required\":[\"text\"],\"additionalProperties\":false}");
}
END_TEST

START_TEST(test_text_counts)
{
    expect("text", "{\"text\": \"  the quick\\tbrown\\n fox \"}", "4", "{\"result\":\"4\"}");
    expect("text", "{\"text\": \"\"}", "0", "{\"result\":\"0\"}");
    expect("text", "{\"text\": \"h\\u00e9llo \\u20ac\", \"operation\": \"char_count\"}", "7", "{\"result\":\"7\"}");
    expect("text", "{\"text\": \"  ab  \", \"operation\": \"char_count\"}", "6", "{\"result\":\"6\"}");
    expect("text", "{\"text\": \"  ab  \", \"operation\": \"char_count\", \"trim\": true}", "2",
           "{\"result\":\"2\"}");
    expect("text", "{\"text\": \"a\\nb\", \"operation\": \"line_count\"}", "2", "{\"result\":\"2\"}");
    expect("text", "{\"text\": \"a\\nb\\n\", \"operation\": \"line_count\"}", "2", "{\"result\":\"2\"}");
    expect("text", "{\"text\": \"\\n\\n\", \"operation\": \"line_count\"}", "2", "{\"result\":\"2\"}");
    expect("text", "{\"text\": \"\", \"operation\": \"line_count\"}", "0", "{\"result\":\"0\"}");
    expect("text", "{\"text\": \"x\", \"operation\": \"line_count\"}", "1", "{\"result\":\"1\"}");
}
END_TEST

START_TEST(test_text_case)
{
    expect("text", "{\"text\": \"Hello, World\", \"operation\": \"upper\"}", "HELLO, WORLD",
           "{\"result\":\"HELLO, WORLD\"}");
    expect("text", "{\"text\": \"Hello, World\", \"operation\": \"lower\"}", "hello, world",
           "{\"result\":\"hello, world\"}");
    expect("text", "{\"text\": \"hELLO wORLD\\tagain\", \"operation\": \"title\"}", "Hello World\tAgain",
           "{\"result\":\"Hello World\\tAgain\"}");
    /* Latin-1, Greek and Cyrillic letters; the sign and the euro unchanged. */
    expect("text", "{\"text\": \"\\u00e9t\\u00e9 \\u00f7 \\u03b1\\u03c9 \\u0436\\u0451 \\u20ac\", \"operation\": \"upper\"}",
           "\xc3\x89T\xc3\x89 \xc3\xb7 \xce\x91\xce\xa9 \xd0\x96\xd0\x81 \xe2\x82\xac",
           "{\"result\":\"\xc3\x89T\xc3\x89 \xc3\xb7 \xce\x91\xce\xa9 \xd0\x96\xd0\x81 \xe2\x82\xac\"}");
    expect("text", "{\"text\": \"\\u00c9T\\u00c9 \\u00d7 \\u0391\\u03a9 \\u0416\\u0401\", \"operation\": \"lower\"}",
           "\xc3\xa9t\xc3\xa9 \xc3\x97 \xce\xb1\xcf\x89 \xd0\xb6\xd1\x91",
           "{\"result\":\"\xc3\xa9t\xc3\xa9 \xc3\x97 \xce\xb1\xcf\x89 \xd0\xb6\xd1\x91\"}");
    expect("text", "{\"text\": \"  padded  \", \"operation\": \"upper\", \"trim\": true}", "PADDED",
           "{\"result\":\"PADDED\"}");
}
END_TEST

START_TEST(test_text_errors)
{
    expect_error("text", "{\"text\": \"x\", \"operation\": \"reverse\"}",
                 "Invalid argument 'operation': expected one of \"word_count\", \"char_count\", \"line_count\", "
                 "\"upper\", \"lower\", \"title\", got \"reverse\"");
    expect_error("text", "{\"operation\": \"upper\"}", "Missing required argument 'text'");
    expect_error("text", "{\"text\": \"x\", \"trim\": \"yes\"}", "Invalid argument 'trim': expected boolean, got string");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("typed_plugins");
    TCase *tc = tcase_create("plugins");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_add_schema);
    tcase_add_test(tc, test_add_calls);
    tcase_add_test(tc, test_text_schema);
    tcase_add_test(tc, test_text_counts);
    tcase_add_test(tc, test_text_case);
    tcase_add_test(tc, test_text_errors);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN(suite)
