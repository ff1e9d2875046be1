/* SPDX-License-Identifier: MIT */
/*
** test_typed_limits.c: typed tools' limits: parameter constraints in
** the generated schema and enforced on calls, refusals naming the
** parameter and the rule, user_data for typed functions, and
** th_base64_encode / th_call_image_bytes; unit tests on th_typed_prepare
** and the spawned host in both isolation modes (typedplugins/limits.c).
*/
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <json-c/json.h>

#include "check_main.h"
#include "mcp_harness.h"
#include "toolhost/plugin.h"
#include "typed/helpers.h"

static const char *const isolation[] = {"--isolation=process", "--isolation=none"};
#define LIMITS_SO TEST_BUILDDIR "/typedplugins/.libs/limits.so"

static void nothing(void)
{
}

/* ---- the generated schema --------------------------------------------- */

static const th_constraints count_lim = {.set = TH_C_MINIMUM | TH_C_MAXIMUM, .minimum = 1, .maximum = 10};
static const th_constraints half = {.set = TH_C_MAXIMUM, .maximum = 0.5};
static const th_constraints code_lim = {.set = TH_C_MIN_LENGTH | TH_C_MAX_LENGTH | TH_C_PATTERN,
                                        .min_length = 3, .max_length = 5, .pattern = "^[A-Z]+$"};
static const th_constraints short_items = {.set = TH_C_MAX_LENGTH, .max_length = 4};

START_TEST(constraints_go_into_the_schema)
{
    const th_param params[] = {
        {.name = "count", .type = TH_T_INT8, .constraints = &count_lim},
        {.name = "ratio", .type = TH_T_FLOAT, .optional = true, .default_json = "0.25", .constraints = &half},
        {.name = "code", .type = TH_T_STRING, .constraints = &code_lim},
        {.name = "tags", .type = TH_T_STRING | TH_T_ARRAY, .optional = true, .constraints = &short_items},
        {.name = "plain", .type = TH_T_INT8, .optional = true},
    };
    th_function fn = {.fn = (void (*)(void))nothing, .n_params = 5, .params = params};
    prepared p = prepare_ok(&fn);
    json_object *props = mh_at(p.input, "properties");
    MH_ASSERT_JSON_EQ(mh_at(props, "count"), "{\"type\":\"integer\",\"minimum\":1,\"maximum\":10}");
    /* The parameter's maximum replaces float's; the minimum stays float's. */
    MH_ASSERT_JSON_EQ(mh_at(props, "ratio"),
                      "{\"type\":\"number\",\"minimum\":-3.4028234663852886e+38,\"maximum\":0.5,\"default\":0.25}");
    MH_ASSERT_JSON_EQ(mh_at(props, "code"),
                      "{\"type\":\"string\",\"minLength\":3,\"maxLength\":5,\"pattern\":\"^[A-Z]+$\"}");
    MH_ASSERT_JSON_EQ(mh_at(props, "tags"), "{\"type\":\"array\",\"items\":{\"type\":\"string\",\"maxLength\":4}}");
    MH_ASSERT_JSON_EQ(mh_at(props, "plain"), "{\"type\":\"integer\",\"minimum\":-128,\"maximum\":127}");
    prepared_free(&p);
}
END_TEST

/* Every refusal names the parameter and the rule; nothing is set. */
START_TEST(bad_constraints_are_refused_naming_the_parameter)
{
    static const struct {
        th_type type;
        th_constraints lim;
        const char *default_json;
        const char *message;
    } cases[] = {
        {TH_T_STRING, {.set = TH_C_MINIMUM, .minimum = 1}, NULL,
         "Tool parameter 'x' has constraint minimum, which does not apply to string"},
        {TH_T_INT | TH_T_ARRAY, {.set = TH_C_PATTERN, .pattern = "a"}, NULL,
         "Tool parameter 'x' has constraint pattern, which does not apply to array of int"},
        {TH_T_BOOL, {.set = TH_C_MAXIMUM, .maximum = 1}, NULL,
         "Tool parameter 'x' has constraint maximum, which does not apply to bool"},
        {TH_T_DOUBLE, {.set = TH_C_MAX_LENGTH, .max_length = 1}, NULL,
         "Tool parameter 'x' has constraint maxLength, which does not apply to double"},
        {TH_T_INT8, {.set = TH_C_MAXIMUM, .maximum = 300}, NULL,
         "Tool parameter 'x' maximum 300 does not fit int8 (-128..127)"},
        {TH_T_UINT8, {.set = TH_C_MINIMUM, .minimum = -1}, NULL,
         "Tool parameter 'x' minimum -1 does not fit uint8 (0..255)"},
        {TH_T_DOUBLE, {.set = TH_C_MINIMUM, .minimum = 1.0 / 0.0}, NULL,
         "Tool parameter 'x' minimum inf does not fit double (-1.79769e+308..1.79769e+308)"},
        {TH_T_INT, {.set = TH_C_MINIMUM | TH_C_MAXIMUM, .minimum = 5, .maximum = 4}, NULL,
         "Tool parameter 'x' minimum 5 is above its maximum 4"},
        {TH_T_STRING, {.set = TH_C_MIN_LENGTH | TH_C_MAX_LENGTH, .min_length = 5, .max_length = 4}, NULL,
         "Tool parameter 'x' minLength 5 is above its maxLength 4"},
        {TH_T_STRING, {.set = TH_C_PATTERN}, NULL, "Tool parameter 'x' sets TH_C_PATTERN but pattern is NULL"},
        {TH_T_STRING, {.set = 0x80}, NULL, "Tool parameter 'x' constraints set 0x80 has unknown bits"},
        {TH_T_INT, {.set = TH_C_MAXIMUM, .maximum = 10}, "11",
         "Tool parameter 'x' default_json breaks its constraints: (root): must be <= 10 (maximum)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        th_param prm = {.name = "x", .type = cases[i].type, .constraints = &cases[i].lim,
                        .optional = cases[i].default_json != NULL, .default_json = cases[i].default_json};
        th_function fn = {.fn = (void (*)(void))nothing, .n_params = 1, .params = &prm};
        ck_assert_refused(&fn, cases[i].message);
    }
}
END_TEST

/* A pattern that does not compile: the message names the parameter and the
 * pattern, then the schema compiler's reason. */
START_TEST(a_pattern_that_does_not_compile_is_refused)
{
    const th_constraints bad = {.set = TH_C_PATTERN, .pattern = "([a-z]"};
    th_param prm = {.name = "word", .type = TH_T_STRING, .constraints = &bad};
    th_function fn = {.fn = (void (*)(void))nothing, .n_params = 1, .params = &prm};
    th_typed *t = NULL;
    json_object *i = NULL, *o = NULL;
    th_err e = {0};
    ck_assert_int_eq(th_typed_prepare(&fn, &t, &i, &o, &e), TH_ERR_VALUE);
    ck_assert_msg(strncmp(e.msg, "Tool parameter 'word' pattern /([a-z]/ does not compile: ", 57) == 0, "%s", e.msg);
    ck_assert_ptr_null(t);
}
END_TEST

/* ---- user_data --------------------------------------------------------- */

static const char *with_data(void *user_data, int n)
{
    static _Thread_local char out[64];
    snprintf(out, sizeof out, "%s %d", (const char *)user_data, n);
    return out;
}

static void with_call_and_data(th_call *call, void *user_data, const char *s)
{
    th_call_textf(call, "%s/%s", (const char *)user_data, s);
}

START_TEST(user_data_reaches_the_function)
{
    th_param n = {.name = "n", .type = TH_T_INT};
    th_function fn = {.fn = (void (*)(void))with_data, .result = TH_T_STRING, .flags = TH_FN_WANTS_USER_DATA,
                      .n_params = 1, .params = &n};
    prepared p = prepare_ok(&fn);
    /* Not part of the schema: the model never sees it. */
    MH_ASSERT_JSON_EQ(mh_at(p.input, "required"), "[\"n\"]");
    th_typed_set_user_data(p.typed, "seven");
    json_object *res = invoke(&p, "{\"n\":7}");
    MH_ASSERT_STR(res, "content 0 text", "seven 7");
    json_object_put(res);
    prepared_free(&p);

    th_param s = {.name = "s", .type = TH_T_STRING};
    th_function both = {.fn = (void (*)(void))with_call_and_data, .flags = TH_FN_WANTS_CALL | TH_FN_WANTS_USER_DATA,
                        .n_params = 1, .params = &s};
    p = prepare_ok(&both);
    th_typed_set_user_data(p.typed, "ud");
    res = invoke(&p, "{\"s\":\"x\"}");
    MH_ASSERT_STR(res, "content 0 text", "ud/x");
    json_object_put(res);
    prepared_free(&p);
}
END_TEST

/* ---- array results ----------------------------------------------------- */

static th_array *int16s(void)
{
    static const int16_t v[] = {-32768, 0, 32767};
    static th_array a = {.count = 3, .items = v};
    return &a;
}

static th_array *doubles(int bad)
{
    static _Thread_local double v[3];
    static _Thread_local th_array a;
    v[0] = 0.1;
    v[1] = 3000;
    v[2] = bad ? 1.0 / 0.0 : 1e21;
    a = (th_array){.count = 3, .items = v};
    return &a;
}

static th_array *none(void)
{
    return NULL;
}

static th_array *owned_strings(void)
{
    th_array *a = malloc(sizeof *a);
    char **items = malloc(2 * sizeof *items);
    items[0] = strdup("a\"b");
    items[1] = strdup("\xc3\xa9"); /* U+00E9 */
    *a = (th_array){.count = 2, .items = items};
    return a;
}

START_TEST(array_results_become_json_arrays)
{
    th_function fn = {.fn = (void (*)(void))int16s, .result = TH_T_INT16 | TH_T_ARRAY};
    prepared p = prepare_ok(&fn);
    MH_ASSERT_JSON_EQ(mh_at(p.output, "properties result"),
                      "{\"type\":[\"array\",\"null\"],\"items\":{\"type\":\"integer\",\"minimum\":-32768,"
                      "\"maximum\":32767}}");
    json_object *res = invoke(&p, "{}");
    MH_ASSERT_STR(res, "content 0 text", "[-32768,0,32767]");
    MH_ASSERT_JSON_EQ(mh_at(res, "structuredContent"), "{\"result\":[-32768,0,32767]}");
    json_object_put(res);
    prepared_free(&p);

    th_param bad = {.name = "bad", .type = TH_T_INT};
    fn = (th_function){.fn = (void (*)(void))doubles, .result = TH_T_DOUBLE | TH_T_ARRAY, .n_params = 1,
                       .params = &bad};
    p = prepare_ok(&fn);
    res = invoke(&p, "{\"bad\":0}");
    MH_ASSERT_STR(res, "content 0 text", "[0.1,3000,1e+21]");
    json_object_put(res);
    res = invoke(&p, "{\"bad\":1}");
    ck_assert(result_is_error(res));
    MH_ASSERT_STR(res, "content 0 text",
                  "Tool 't' returned an array whose item 2 is inf, which JSON cannot represent");
    json_object_put(res);
    prepared_free(&p);

    fn = (th_function){.fn = (void (*)(void))none, .result = TH_T_BOOL | TH_T_ARRAY};
    p = prepare_ok(&fn);
    res = invoke(&p, "{}");
    MH_ASSERT_STR(res, "content 0 text", "null");
    MH_ASSERT_JSON_EQ(mh_at(res, "structuredContent"), "{\"result\":null}");
    json_object_put(res);
    prepared_free(&p);

    /* Freed by the host (LeakSanitizer and valgrind would see a leak). */
    fn = (th_function){.fn = (void (*)(void))owned_strings, .result = TH_T_STRING | TH_T_ARRAY,
                       .flags = TH_FN_FREE_RESULT};
    p = prepare_ok(&fn);
    res = invoke(&p, "{}");
    MH_ASSERT_JSON_EQ(mh_at(res, "structuredContent"), "{\"result\":[\"a\\\"b\",\"\\u00e9\"]}");
    json_object_put(res);
    prepared_free(&p);
}
END_TEST

/* ---- named result fields ---------------------------------------------- */

static void stats(const th_array *xs, double *mean, int16_t *count, char **label, bool *empty)
{
    double sum = 0;
    for (size_t i = 0; i < xs->count; i++)
        sum += ((const double *)xs->items)[i];
    *count = (int16_t)xs->count;
    *empty = xs->count == 0;
    if (xs->count) {
        *mean = sum / (double)xs->count;
        *label = strdup(*mean > 1 ? "big" : "small");
    } /* else: mean stays 0 and label NULL */
}

static const th_param stats_in[] = {{.name = "xs", .type = TH_T_DOUBLE | TH_T_ARRAY}};
static const th_param stats_out[] = {
    {.name = "mean", .type = TH_T_DOUBLE, .description = "the average"},
    {.name = "count", .type = TH_T_INT16},
    {.name = "label", .type = TH_T_STRING},
    {.name = "empty", .type = TH_T_BOOL},
    {.name = NULL},
};

START_TEST(named_result_fields_become_structured_content)
{
    th_function fn = {.fn = (void (*)(void))stats, .flags = TH_FN_FREE_RESULT, .n_params = 1, .params = stats_in,
                      .result_fields = stats_out};
    prepared p = prepare_ok(&fn);
    MH_ASSERT_JSON_EQ(p.output, "{\"type\":\"object\",\"properties\":{"
                                "\"mean\":{\"type\":\"number\",\"description\":\"the average\"},"
                                "\"count\":{\"type\":\"integer\",\"minimum\":-32768,\"maximum\":32767},"
                                "\"label\":{\"type\":[\"string\",\"null\"]},\"empty\":{\"type\":\"boolean\"}},"
                                "\"required\":[\"mean\",\"count\",\"label\",\"empty\"]}");
    json_object *res = invoke(&p, "{\"xs\":[1,2,4.5]}");
    MH_ASSERT_JSON_EQ(mh_at(res, "structuredContent"),
                      "{\"mean\":2.5,\"count\":3,\"label\":\"big\",\"empty\":false}");
    MH_ASSERT_STR(res, "content 0 text", "{\"mean\":2.5,\"count\":3,\"label\":\"big\",\"empty\":false}");
    json_object_put(res);
    res = invoke(&p, "{\"xs\":[]}");
    MH_ASSERT_JSON_EQ(mh_at(res, "structuredContent"), "{\"mean\":0.0,\"count\":0,\"label\":null,\"empty\":true}");
    json_object_put(res);
    prepared_free(&p);
}
END_TEST

START_TEST(bad_result_fields_are_refused)
{
    th_param json_field[] = {{.name = "j", .type = TH_T_JSON}, {.name = NULL}};
    th_param dup[] = {{.name = "a", .type = TH_T_INT}, {.name = "a", .type = TH_T_BOOL}, {.name = NULL}};
    th_param with_default[] = {{.name = "a", .type = TH_T_INT, .optional = true, .default_json = "1"},
                               {.name = NULL}};
    th_param bad_name[] = {{.name = "A", .type = TH_T_INT}, {.name = NULL}};
    th_param empty[] = {{.name = NULL}};
    th_function fn = {.fn = (void (*)(void))nothing, .result_fields = json_field};
    ck_assert_refused(&fn, "Tool result field 'j' type 0xf is not supported (bool, integer, floating or string types)");
    fn.result_fields = dup;
    ck_assert_refused(&fn, "Tool result field 'a' is listed twice");
    fn.result_fields = with_default;
    ck_assert_refused(&fn, "Tool result field 'a' may only have a name, a type and a description");
    fn.result_fields = bad_name;
    ck_assert_refused(&fn, "Tool result field name 'A' invalid (must match ^[a-z][a-z0-9_]*$, at most 64 chars)");
    fn.result_fields = empty;
    ck_assert_refused(&fn, "Tool function result_fields is empty (leave it NULL for one result)");
    fn = (th_function){.fn = (void (*)(void))nothing, .result = TH_T_INT, .result_fields = dup};
    ck_assert_refused(&fn, "Tool function has result_fields, so its result must be TH_T_VOID");
}
END_TEST

/* ---- base64 ------------------------------------------------------------ */

START_TEST(base64_matches_rfc_4648)
{
    static const char *const vectors[][2] = {{"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},
                                             {"foo", "Zm9v"},  {"foob", "Zm9vYg=="},  {"fooba", "Zm9vYmE="},
                                             {"foobar", "Zm9vYmFy"}};
    for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
        char *b = th_base64_encode(vectors[i][0], strlen(vectors[i][0]));
        ck_assert_ptr_nonnull(b);
        ck_assert_str_eq(b, vectors[i][1]);
        free(b);
    }
    const unsigned char bin[] = {0x00, 0xff, 0xfe, 0x3e, 0x3f, 0x80};
    char *b = th_base64_encode(bin, sizeof bin);
    ck_assert_str_eq(b, "AP/+Pj+A");
    free(b);
    b = th_base64_encode(NULL, 0);
    ck_assert_str_eq(b, "");
    free(b);
    ck_assert_ptr_null(th_base64_encode(NULL, 1));
}
END_TEST

START_TEST(image_bytes_refuse_bad_arguments)
{
    th_call *call = th_call_new("t", NULL);
    ck_assert_int_eq(th_call_image_bytes(call, NULL, "x", 1), TH_ERR_VALUE);
    ck_assert_int_eq(th_call_audio_bytes(call, "audio/wav", NULL, 1), TH_ERR_VALUE);
    ck_assert_int_eq(th_call_image_bytes(call, "image/png", "\x01\x02", 2), TH_OK);
    json_object *res = th_call_finish(call, TH_OK);
    MH_ASSERT_JSON_EQ(mh_at(res, "content"), "[{\"type\":\"image\",\"data\":\"AQI=\",\"mimeType\":\"image/png\"}]");
    json_object_put(res);
    th_call_free(call);
}
END_TEST

/* ---- the spawned host, both isolation modes ---------------------------- */

static json_object *call_tool(mh_proc *p, int id, const char *name, const char *args)
{
    return mh_rpc(p,
                  "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\","
                  "\"arguments\":%s}}",
                  id, name, args);
}

static void expect_text(mh_proc *p, int id, const char *name, const char *args, const char *want)
{
    json_object *r = call_tool(p, id, name, args);
    MH_ASSERT_RESULT(r);
    ck_assert_msg(!mh_has(r, "result isError"), "%s", mh_json(r));
    MH_ASSERT_STR(r, "result content 0 text", want);
    json_object_put(r);
}

/* A call that breaks a constraint is an isError result naming the
 * argument and the rule; the host keeps serving. */
static void expect_invalid(mh_proc *p, int id, const char *args, const char *rule)
{
    json_object *r = call_tool(p, id, "limits", args);
    MH_ASSERT_RESULT(r);
    MH_ASSERT_TRUE(r, "result isError");
    const char *text = mh_str(r, "result content 0 text");
    ck_assert_msg(text && strstr(text, "Invalid arguments for tool 'limits'") && strstr(text, rule), "want %s in %s",
                  rule, mh_json(r));
    json_object_put(r);
}

static json_object *listed(json_object *list, const char *name)
{
    for (size_t i = 0; i < mh_len(list, "result tools"); i++) {
        json_object *t = json_object_array_get_idx(mh_at(list, "result tools"), i);
        if (strcmp(mh_str(t, "name"), name) == 0)
            return t;
    }
    ck_abort_msg("%s not listed", name);
    return NULL;
}

START_TEST(constraints_are_listed_and_enforced)
{
    char *dir = mh_private_dir(LIMITS_SO, NULL);
    mh_proc *p = mh_spawn(isolation[_i], "--no-registry-cache", "--plugin-dir", dir, NULL);
    mh_initialize(p, "2025-11-25");
    json_object *list = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
    json_object *props = mh_at(listed(list, "limits"), "inputSchema properties");
    MH_ASSERT_JSON_EQ(mh_at(props, "count"), "{\"type\":\"integer\",\"minimum\":1,\"maximum\":10}");
    MH_ASSERT_JSON_EQ(mh_at(props, "code"),
                      "{\"type\":\"string\",\"minLength\":3,\"maxLength\":5,\"pattern\":\"^[A-Z]+$\"}");
    json_object_put(list);

    expect_text(p, 3, "limits", "{\"count\":10,\"code\":\"ABC\",\"tags\":[\"a\",\"abcd\"]}",
                "count=10 ratio=0.25 code=ABC tags=2");
    expect_invalid(p, 4, "{\"count\":0,\"code\":\"ABC\"}", "/count: must be >= 1 (minimum)");
    expect_invalid(p, 5, "{\"count\":11,\"code\":\"ABC\"}", "/count: must be <= 10 (maximum)");
    expect_invalid(p, 6, "{\"count\":1,\"code\":\"ABC\",\"ratio\":0.75}", "/ratio: must be <= 0.5 (maximum)");
    expect_invalid(p, 7, "{\"count\":1,\"code\":\"AB\"}", "/code:");
    expect_invalid(p, 8, "{\"count\":1,\"code\":\"ABCDEF\"}", "(maxLength)");
    expect_invalid(p, 9, "{\"count\":1,\"code\":\"abc\"}", "(pattern)");
    expect_invalid(p, 10, "{\"count\":1,\"code\":\"ABC\",\"tags\":[\"ok\",\"toolong\"]}", "/tags/1:");
    expect_text(p, 11, "greet", "{\"name\":\"Bob\"}", "Hello, Bob");

    json_object *r = call_tool(p, 12, "pixel", "{\"n\":8}");
    MH_ASSERT_RESULT(r);
    MH_ASSERT_JSON_EQ(mh_at(r, "result content"),
                      "[{\"type\":\"image\",\"data\":\"iVBORw0KGgo=\",\"mimeType\":\"image/png\"},"
                      "{\"type\":\"audio\",\"data\":\"aGkhPw==\",\"mimeType\":\"audio/wav\"},"
                      "{\"type\":\"text\",\"text\":\"answer=42\"}]");
    json_object_put(r);
    r = call_tool(p, 13, "pixel", "{\"n\":9}");
    MH_ASSERT_TRUE(r, "result isError");
    json_object_put(r);
    r = call_tool(p, 14, "names", "{\"n\":3}");
    MH_ASSERT_RESULT(r);
    MH_ASSERT_STR(r, "result content 0 text", "[\"0\",\"1\",\"2\"]");
    MH_ASSERT_JSON_EQ(mh_at(r, "result structuredContent"), "{\"result\":[\"0\",\"1\",\"2\"]}");
    json_object_put(r);
    r = call_tool(p, 15, "minmax", "{\"xs\":[3,-7,5]}");
    MH_ASSERT_RESULT(r);
    MH_ASSERT_JSON_EQ(mh_at(r, "result structuredContent"), "{\"min\":-7,\"max\":5,\"note\":\"3 values\"}");
    json_object_put(r);
    list = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":16,\"method\":\"tools/list\"}");
    MH_ASSERT_JSON_EQ(mh_at(listed(list, "minmax"), "outputSchema required"), "[\"min\",\"max\",\"note\"]");
    json_object_put(list);
    expect_text(p, 17, "greet", "{\"name\":\"again\"}", "Hello, again"); /* still serving */
    mh_kill(p, SIGTERM);
    mh_wait(p, MH_TIMEOUT_MS);
    mh_free(p);
    mh_rm_dir(dir);
}
END_TEST

static Suite *typed_limits_suite(void)
{
    Suite *s = suite_create("typed_limits");
    TCase *unit = tcase_create("unit");
    tcase_add_test(unit, constraints_go_into_the_schema);
    tcase_add_test(unit, bad_constraints_are_refused_naming_the_parameter);
    tcase_add_test(unit, a_pattern_that_does_not_compile_is_refused);
    tcase_add_test(unit, user_data_reaches_the_function);
    tcase_add_test(unit, array_results_become_json_arrays);
    tcase_add_test(unit, named_result_fields_become_structured_content);
    tcase_add_test(unit, bad_result_fields_are_refused);
    tcase_add_test(unit, base64_matches_rfc_4648);
    tcase_add_test(unit, image_bytes_refuse_bad_arguments);
    suite_add_tcase(s, unit);
    TCase *host = tcase_create("host");
    tcase_set_timeout(host, MH_TCASE_TIMEOUT);
    tcase_add_loop_test(host, constraints_are_listed_and_enforced, 0, 2);
    suite_add_tcase(s, host);
    return s;
}

TH_CHECK_MAIN_WITH(typed_limits_suite, mh_global_setup, mh_global_teardown)
