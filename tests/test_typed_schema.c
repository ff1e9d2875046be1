/* SPDX-License-Identifier: MIT */
/*
** test_typed_schema.c: the schemas generated from th_function descriptions
** (golden text for every supported type, defaults, enums, arrays, required,
** output schemas) and every registration refusal with its exact message.
*/
#include "config.h"

#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "plugin/registry.h"
#include "schema/jsonschema.h"
#include "typed/helpers.h"
#include "check_main.h"

/* Never called: schema tests only need a non-NULL function. */
static void noop(void)
{
}

/* The generated schema of a one-parameter function, as JSON text. */
static char *schema_of_param(th_param param)
{
    th_function fn = {.fn = noop, .result = TH_T_VOID, .n_params = 1, .params = &param};
    prepared p = prepare_ok(&fn);
    json_object *props, *x;
    ck_assert(json_object_object_get_ex(p.input, "properties", &props));
    ck_assert(json_object_object_get_ex(props, param.name, &x));
    char *s = strdup(json_object_to_json_string_ext(x, JSON_PLAIN));
    prepared_free(&p);
    return s;
}

static void check_param_schema(th_param param, const char *expected)
{
    char *s = schema_of_param(param);
    ck_assert_str_eq(s, expected);
    free(s);
}

static void check_type_schema(th_type type, const char *expected)
{
    check_param_schema((th_param){.name = "x", .type = type}, expected);
}

START_TEST(test_schema_scalars)
{
    check_type_schema(TH_T_BOOL, "{\"type\":\"boolean\"}");
    check_type_schema(TH_T_INT8, "{\"type\":\"integer\",\"minimum\":-128,\"maximum\":127}");
    check_type_schema(TH_T_INT16, "{\"type\":\"integer\",\"minimum\":-32768,\"maximum\":32767}");
    check_type_schema(TH_T_INT32, "{\"type\":\"integer\",\"minimum\":-2147483648,\"maximum\":2147483647}");
    check_type_schema(TH_T_INT64,
                      "{\"type\":\"integer\",\"minimum\":-9223372036854775808,\"maximum\":9223372036854775807}");
    check_type_schema(TH_T_UINT8, "{\"type\":\"integer\",\"minimum\":0,\"maximum\":255}");
    check_type_schema(TH_T_UINT16, "{\"type\":\"integer\",\"minimum\":0,\"maximum\":65535}");
    check_type_schema(TH_T_UINT32, "{\"type\":\"integer\",\"minimum\":0,\"maximum\":4294967295}");
    check_type_schema(TH_T_UINT64, "{\"type\":\"integer\",\"minimum\":0,\"maximum\":18446744073709551615}");
    check_type_schema(TH_T_FLOAT, "{\"type\":\"number\",\"minimum\":-3.4028234663852886e+38,\"maximum\":3.4028234663852886e+38}");
    check_type_schema(TH_T_DOUBLE, "{\"type\":\"number\"}");
    check_type_schema(TH_T_STRING, "{\"type\":\"string\"}");
    check_type_schema(TH_T_JSON, "{\"type\":\"object\"}");

    char expected[200];
    snprintf(expected, sizeof expected, "{\"type\":\"integer\",\"minimum\":%d,\"maximum\":%d}", INT_MIN, INT_MAX);
    check_type_schema(TH_T_INT, expected);
    snprintf(expected, sizeof expected, "{\"type\":\"integer\",\"minimum\":%ld,\"maximum\":%ld}", LONG_MIN, LONG_MAX);
    check_type_schema(TH_T_LONG, expected);
}
END_TEST

START_TEST(test_schema_64bit_bounds_are_exact_integers)
{
    /* Not doubles: 2^64-1 would round to 1.8446744073709552e19. */
    th_param prm = {.name = "x", .type = TH_T_UINT64};
    th_function fn = {.fn = noop, .n_params = 1, .params = &prm};
    prepared p = prepare_ok(&fn);
    json_object *props, *x, *max, *min;
    ck_assert(json_object_object_get_ex(p.input, "properties", &props));
    ck_assert(json_object_object_get_ex(props, "x", &x));
    ck_assert(json_object_object_get_ex(x, "maximum", &max));
    ck_assert(json_object_is_type(max, json_type_int));
    ck_assert_uint_eq(json_object_get_uint64(max), UINT64_MAX);
    ck_assert(json_object_object_get_ex(x, "minimum", &min));
    ck_assert(json_object_is_type(min, json_type_int));
    prepared_free(&p);
}
END_TEST

/* Found by fuzz/fuzz_typed: a float's schema said only "number", so a
** client that followed it sent 1e39 and was refused. The schema's bounds and
** the conversion's must agree, at the edge too. */
static void take_float(float x)
{
    (void)x;
}

START_TEST(test_schema_float_bounds_match_conversion)
{
    th_param prm = {.name = "x", .type = TH_T_FLOAT};
    th_function fn = {.fn = (void (*)(void))take_float, .n_params = 1, .params = &prm};
    prepared p = prepare_ok(&fn);
    char err[256];
    th_schema *v = th_schema_compile(p.input, err, sizeof err);
    ck_assert_msg(v != NULL, "%s", err);
    static const struct {
        const char *args;
        bool ok;
    } cases[] = {
        {"{\"x\":1e39}", false},
        {"{\"x\":-1e39}", false},
        {"{\"x\":3.4028234663852886e38}", true},
        {"{\"x\":-3.4028234663852886e38}", true},
        {"{\"x\":3.402823466385289e38}", false},
        {"{\"x\":0.5}", true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        json_object *args = json_tokener_parse(cases[i].args);
        ck_assert_msg((th_schema_validate(v, args, NULL) == 0) == cases[i].ok, "schema: %s", cases[i].args);
        json_object_put(args);
        json_object *r = invoke(&p, cases[i].args);
        ck_assert_msg(result_is_error(r) != cases[i].ok, "conversion: %s", cases[i].args);
        json_object_put(r);
    }
    th_schema_free(v);
    prepared_free(&p);
}
END_TEST

START_TEST(test_schema_arrays)
{
    check_type_schema(TH_T_BOOL | TH_T_ARRAY, "{\"type\":\"array\",\"items\":{\"type\":\"boolean\"}}");
    check_type_schema(TH_T_UINT8 | TH_T_ARRAY,
                      "{\"type\":\"array\",\"items\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":255}}");
    check_type_schema(TH_T_INT64 | TH_T_ARRAY,
                      "{\"type\":\"array\",\"items\":{\"type\":\"integer\",\"minimum\":-9223372036854775808,"
                      "\"maximum\":9223372036854775807}}");
    check_type_schema(TH_T_DOUBLE | TH_T_ARRAY, "{\"type\":\"array\",\"items\":{\"type\":\"number\"}}");
    check_type_schema(TH_T_FLOAT | TH_T_ARRAY,
                      "{\"type\":\"array\",\"items\":{\"type\":\"number\",\"minimum\":-3.4028234663852886e+38,\"maximum\":3.4028234663852886e+38}}");
    check_type_schema(TH_T_STRING | TH_T_ARRAY, "{\"type\":\"array\",\"items\":{\"type\":\"string\"}}");
}
END_TEST

static const char *const colours[] = {"red", "green", "blue", NULL};

START_TEST(test_schema_enum_description_default)
{
    check_param_schema((th_param){.name = "c", .type = TH_T_STRING, .enum_values = colours},
                       "{\"type\":\"string\",\"enum\":[\"red\",\"green\",\"blue\"]}");
    check_param_schema((th_param){.name = "c",
                                  .type = TH_T_STRING,
                                  .description = "A colour",
                                  .optional = true,
                                  .default_json = "\"green\"",
                                  .enum_values = colours},
                       "{\"type\":\"string\",\"description\":\"A colour\",\"enum\":[\"red\",\"green\",\"blue\"],"
                       "\"default\":\"green\"}");
    check_param_schema((th_param){.name = "cs", .type = TH_T_STRING | TH_T_ARRAY, .enum_values = colours,
                                  .optional = true, .default_json = "[\"red\",\"blue\"]"},
                       "{\"type\":\"array\",\"items\":{\"type\":\"string\",\"enum\":[\"red\",\"green\",\"blue\"]},"
                       "\"default\":[\"red\",\"blue\"]}");
    check_param_schema((th_param){.name = "n", .type = TH_T_INT8, .description = "Count", .optional = true,
                                  .default_json = "10"},
                       "{\"type\":\"integer\",\"description\":\"Count\",\"minimum\":-128,\"maximum\":127,"
                       "\"default\":10}");
    check_param_schema((th_param){.name = "f", .type = TH_T_BOOL, .optional = true, .default_json = " false "},
                       "{\"type\":\"boolean\",\"default\":false}");
    check_param_schema((th_param){.name = "d", .type = TH_T_DOUBLE, .optional = true, .default_json = "2.5"},
                       "{\"type\":\"number\",\"default\":2.5}");
    check_param_schema((th_param){.name = "o", .type = TH_T_JSON, .optional = true,
                                  .default_json = "{\"k\":[1,2]}"},
                       "{\"type\":\"object\",\"default\":{\"k\":[1,2]}}");
    /* Optional without a default: no "default" keyword. */
    check_param_schema((th_param){.name = "s", .type = TH_T_STRING, .optional = true}, "{\"type\":\"string\"}");
}
END_TEST

static const th_param weather_params[] = {
    {.name = "city", .type = TH_T_STRING, .description = "City name"},
    {.name = "units", .type = TH_T_STRING, .description = "Temperature units", .optional = true,
     .default_json = "\"metric\"", .enum_values = (const char *const[]){"metric", "imperial", NULL}},
    {.name = "include_forecast", .type = TH_T_BOOL, .optional = true, .default_json = "false"},
    {.name = "days", .type = TH_T_UINT8},
};

START_TEST(test_schema_whole_input_schema)
{
    /* The get_weather example of typed tools, plus a required parameter
     * after the optional ones. */
    th_function fn = {.fn = noop, .result = TH_T_JSON, .n_params = 4, .params = weather_params};
    prepared p = prepare_ok(&fn);
    ck_assert_str_eq(json_object_to_json_string_ext(p.input, JSON_PLAIN),
                     "{\"type\":\"object\",\"properties\":{"
                     "\"city\":{\"type\":\"string\",\"description\":\"City name\"},"
                     "\"units\":{\"type\":\"string\",\"description\":\"Temperature units\","
                     "\"enum\":[\"metric\",\"imperial\"],\"default\":\"metric\"},"
                     "\"include_forecast\":{\"type\":\"boolean\",\"default\":false},"
                     "\"days\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":255}},"
                     "\"required\":[\"city\",\"days\"],\"additionalProperties\":false}");
    prepared_free(&p);
}
END_TEST

START_TEST(test_schema_required_omitted_when_empty)
{
    th_param prm = {.name = "x", .type = TH_T_INT, .optional = true};
    th_function fn = {.fn = noop, .n_params = 1, .params = &prm};
    prepared p = prepare_ok(&fn);
    ck_assert(!json_object_object_get_ex(p.input, "required", NULL));
    prepared_free(&p);

    th_function none = {.fn = noop, .result = TH_T_INT};
    p = prepare_ok(&none);
    ck_assert_str_eq(json_object_to_json_string_ext(p.input, JSON_PLAIN),
                     "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}");
    prepared_free(&p);
}
END_TEST

static void check_output_schema(th_type result, const char *description, const char *expected_result)
{
    th_function fn = {.fn = noop, .result = result, .result_description = description};
    prepared p = prepare_ok(&fn);
    char expected[400];
    snprintf(expected, sizeof expected,
             "{\"type\":\"object\",\"properties\":{\"result\":%s},\"required\":[\"result\"]}", expected_result);
    ck_assert_ptr_nonnull(p.output);
    ck_assert_str_eq(json_object_to_json_string_ext(p.output, JSON_PLAIN), expected);
    prepared_free(&p);
}

START_TEST(test_schema_output)
{
    check_output_schema(TH_T_DOUBLE, NULL, "{\"type\":\"number\"}");
    check_output_schema(TH_T_FLOAT, "the ratio",
                        "{\"type\":\"number\",\"description\":\"the ratio\",\"minimum\":-3.4028234663852886e+38,\"maximum\":3.4028234663852886e+38}");
    check_output_schema(TH_T_BOOL, NULL, "{\"type\":\"boolean\"}");
    check_output_schema(TH_T_INT8, NULL, "{\"type\":\"integer\",\"minimum\":-128,\"maximum\":127}");
    check_output_schema(TH_T_UINT64, NULL, "{\"type\":\"integer\",\"minimum\":0,\"maximum\":18446744073709551615}");
    /* A NULL string or object is sent as null, so the schema allows it. */
    check_output_schema(TH_T_STRING, NULL, "{\"type\":[\"string\",\"null\"]}");
    check_output_schema(TH_T_JSON, "data", "{\"type\":[\"object\",\"null\"],\"description\":\"data\"}");

    th_function v = {.fn = noop, .result = TH_T_VOID};
    prepared p = prepare_ok(&v);
    ck_assert_ptr_null(p.output);
    prepared_free(&p);
}
END_TEST

START_TEST(test_schema_descriptor_may_go_away)
{
    /* Names, descriptions, enums and defaults are copied at registration. */
    char name[8] = "mode", desc[16] = "the mode", v0[8] = "fast", v1[8] = "slow", def[16] = "\"slow\"";
    const char *values[] = {v0, v1, NULL};
    th_param prm = {.name = name, .type = TH_T_STRING, .description = desc, .optional = true,
                    .default_json = def, .enum_values = values};
    th_function fn = {.fn = noop, .n_params = 1, .params = &prm};
    prepared p = prepare_ok(&fn);
    memset(name, 'z', 7);
    memset(desc, 'z', 15);
    memset(v0, 'z', 7);
    memset(v1, 'z', 7);
    memset(def, 'z', 15);
    values[0] = NULL;
    ck_assert_str_eq(json_object_to_json_string_ext(p.input, JSON_PLAIN),
                     "{\"type\":\"object\",\"properties\":{\"mode\":{\"type\":\"string\",\"description\":\"the mode\","
                     "\"enum\":[\"fast\",\"slow\"],\"default\":\"slow\"}},\"additionalProperties\":false}");
    prepared_free(&p);
}
END_TEST

/* ------------------------------------------------------------------ */

static void refused1(th_param prm, const char *message)
{
    th_function fn = {.fn = noop, .n_params = 1, .params = &prm};
    ck_assert_refused(&fn, message);
}

START_TEST(test_refuse_unsupported_types)
{
    refused1((th_param){.name = "x", .type = TH_T_VOID},
             "Tool parameter 'x' type void is not supported (void is a result type only)");
    refused1((th_param){.name = "x", .type = TH_T_VOID | TH_T_ARRAY},
             "Tool parameter 'x' type array of void is not supported (void is a result type only)");
    refused1((th_param){.name = "x", .type = (th_type)99}, "Tool parameter 'x' type 0x63 is not a th_type");
    refused1((th_param){.name = "x", .type = (th_type)(0x200 | TH_T_INT)},
             "Tool parameter 'x' type 0x20a is not a th_type");
    refused1((th_param){.name = "x", .type = TH_T_JSON | TH_T_ARRAY},
             "Tool parameter 'x' type array of json is not supported "
             "(array items must be bool, integer, floating or string types)");
    refused1((th_param){.name = "x", .type = (th_type)(TH_T_ARRAY | 77)},
             "Tool parameter 'x' type 0x14d is not a th_type");
}
END_TEST

START_TEST(test_refuse_names)
{
    static const char *const bad[] = {"X", "1a", "a-b", "", "_a", "a b", "caf\xc3\xa9", "aB"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char msg[200];
        snprintf(msg, sizeof msg, "Tool parameter name '%s' invalid (must match ^[a-z][a-z0-9_]*$)", bad[i]);
        refused1((th_param){.name = bad[i], .type = TH_T_INT}, msg);
    }
    refused1((th_param){.name = NULL, .type = TH_T_INT}, "Tool parameter 0 has no name");

    char longname[70];
    memset(longname, 'a', 65);
    longname[65] = '\0';
    char msg[200];
    snprintf(msg, sizeof msg, "Tool parameter name '%s' too long (max 64 chars)", longname);
    refused1((th_param){.name = longname, .type = TH_T_INT}, msg);
    longname[64] = '\0'; /* 64 is fine */
    char *s = schema_of_param((th_param){.name = longname, .type = TH_T_BOOL});
    free(s);

    th_param two[] = {{.name = "a", .type = TH_T_INT}, {.name = NULL, .type = TH_T_INT}};
    th_function fn = {.fn = noop, .n_params = 2, .params = two};
    ck_assert_refused(&fn, "Tool parameter 1 has no name");
}
END_TEST

START_TEST(test_refuse_duplicate)
{
    th_param dup[] = {{.name = "a", .type = TH_T_INT}, {.name = "b", .type = TH_T_INT},
                      {.name = "a", .type = TH_T_DOUBLE}};
    th_function fn = {.fn = noop, .n_params = 3, .params = dup};
    ck_assert_refused(&fn, "Tool parameter 'a' is listed twice");
}
END_TEST

static const char *const ab[] = {"a", "b", NULL};

START_TEST(test_refuse_enums)
{
    refused1((th_param){.name = "mode", .type = TH_T_STRING, .optional = true, .default_json = "\"c\"",
                        .enum_values = ab},
             "Tool parameter 'mode' default_json is invalid: expected one of \"a\", \"b\", got \"c\"");
    refused1((th_param){.name = "modes", .type = TH_T_STRING | TH_T_ARRAY, .optional = true,
                        .default_json = "[\"a\",\"z\"]", .enum_values = ab},
             "Tool parameter 'modes' default_json is invalid: item 1: expected one of \"a\", \"b\", got \"z\"");
    refused1((th_param){.name = "n", .type = TH_T_INT32, .enum_values = ab},
             "Tool parameter 'n' has enum_values but is not a string (int32)");
    refused1((th_param){.name = "n", .type = TH_T_BOOL | TH_T_ARRAY, .enum_values = ab},
             "Tool parameter 'n' has enum_values but is not a string (array of bool)");
    refused1((th_param){.name = "e", .type = TH_T_STRING, .enum_values = (const char *const[]){NULL}},
             "Tool parameter 'e' enum_values is empty");
    refused1((th_param){.name = "e", .type = TH_T_STRING, .enum_values = (const char *const[]){"a", "b", "a", NULL}},
             "Tool parameter 'e' enum value \"a\" is listed twice");
    refused1((th_param){.name = "e", .type = TH_T_STRING, .enum_values = (const char *const[]){"a", "\xff", NULL}},
             "Tool parameter 'e' enum value 1 is not valid UTF-8");
}
END_TEST

START_TEST(test_refuse_defaults)
{
    refused1((th_param){.name = "n", .type = TH_T_INT, .default_json = "3"},
             "Tool parameter 'n' has a default but is required (set optional to use it)");
    refused1((th_param){.name = "n", .type = TH_T_INT, .optional = true, .default_json = "\"3\""},
             "Tool parameter 'n' default_json is invalid: expected integer, got string");
    refused1((th_param){.name = "n", .type = TH_T_INT8, .optional = true, .default_json = "300"},
             "Tool parameter 'n' default_json is invalid: 300 is out of range for int8 (-128..127)");
    refused1((th_param){.name = "n", .type = TH_T_UINT32, .optional = true, .default_json = "-1"},
             "Tool parameter 'n' default_json is invalid: -1 is out of range for uint32 (0..4294967295)");
    refused1((th_param){.name = "n", .type = TH_T_INT, .optional = true, .default_json = "1.5"},
             "Tool parameter 'n' default_json is invalid: expected integer, got 1.5");
    refused1((th_param){.name = "f", .type = TH_T_FLOAT, .optional = true, .default_json = "1e39"},
             "Tool parameter 'f' default_json is invalid: 1e+39 is out of range for float "
             "(-3.4028235e+38..3.4028235e+38)");
    refused1((th_param){.name = "b", .type = TH_T_BOOL, .optional = true, .default_json = "0"},
             "Tool parameter 'b' default_json is invalid: expected boolean, got integer");
    refused1((th_param){.name = "o", .type = TH_T_JSON, .optional = true, .default_json = "[1]"},
             "Tool parameter 'o' default_json is invalid: expected object, got array");
    refused1((th_param){.name = "xs", .type = TH_T_INT | TH_T_ARRAY, .optional = true, .default_json = "[1,\"2\"]"},
             "Tool parameter 'xs' default_json is invalid: item 1: expected integer, got string");
    refused1((th_param){.name = "xs", .type = TH_T_INT | TH_T_ARRAY, .optional = true, .default_json = "1"},
             "Tool parameter 'xs' default_json is invalid: expected array, got integer");
    refused1((th_param){.name = "s", .type = TH_T_STRING, .optional = true, .default_json = "null"},
             "Tool parameter 's' default_json is invalid: null (leave default_json NULL instead)");
}
END_TEST

START_TEST(test_refuse_default_not_json)
{
    /* Strict JSON: the text goes into the schema as a value. */
    refused1((th_param){.name = "s", .type = TH_T_STRING, .optional = true, .default_json = "'x'"},
             "Tool parameter 's' default_json is not valid JSON: unexpected character at offset 0");
    refused1((th_param){.name = "n", .type = TH_T_INT, .optional = true, .default_json = "12x"},
             "Tool parameter 'n' default_json is not valid JSON: unexpected character at offset 2");
    refused1((th_param){.name = "n", .type = TH_T_INT, .optional = true, .default_json = "[1,"},
             "Tool parameter 'n' default_json is not valid JSON: unexpected end of data at offset 3");
    refused1((th_param){.name = "n", .type = TH_T_INT, .optional = true, .default_json = ""},
             "Tool parameter 'n' default_json is not valid JSON: unexpected end of data at offset 0");
    /* json-c reads NaN and Infinity even in strict mode; no JSON number is
     * either, so the conversion refuses them. */
    refused1((th_param){.name = "d", .type = TH_T_DOUBLE, .optional = true, .default_json = "NaN"},
             "Tool parameter 'd' default_json is invalid: expected number, got nan");
    refused1((th_param){.name = "d", .type = TH_T_FLOAT, .optional = true, .default_json = "-Infinity"},
             "Tool parameter 'd' default_json is invalid: expected number, got -inf");
}
END_TEST

START_TEST(test_refuse_function)
{
    th_param one = {.name = "x", .type = TH_T_INT};
    th_function fn = {.fn = NULL, .n_params = 1, .params = &one};
    ck_assert_refused(&fn, "Tool function pointer (th_function.fn) must not be NULL");

    fn = (th_function){.fn = noop, .n_params = 2, .params = NULL};
    ck_assert_refused(&fn, "Tool function params is NULL but n_params is 2");

    fn = (th_function){.fn = noop, .result = TH_T_JSON | TH_T_ARRAY};
    ck_assert_refused(&fn, "Tool function result type array of json is not supported "
                           "(array items must be bool, integer, floating or string types)");
    fn = (th_function){.fn = noop, .result = (th_type)42};
    ck_assert_refused(&fn, "Tool function result type 0x2a is not supported");

    fn = (th_function){.fn = noop, .flags = 0x10};
    ck_assert_refused(&fn, "Tool function flags 0x10 has unknown bits");
    fn = (th_function){.fn = noop, .result = TH_T_JSON, .flags = TH_FN_FREE_RESULT};
    ck_assert_refused(&fn, "Tool function flag TH_FN_FREE_RESULT needs a string or array result, not json");
    fn = (th_function){.fn = noop, .result = TH_T_INT, .result_description = "bad \xc0\x80"};
    ck_assert_refused(&fn, "Tool function result_description is not valid UTF-8");

    refused1((th_param){.name = "x", .type = TH_T_INT, .description = "\xed\xa0\x80"},
             "Tool parameter 'x' description is not valid UTF-8");
}
END_TEST

START_TEST(test_param_count_limit)
{
    static th_param many[65];
    static char names[65][16];
    for (int i = 0; i < 65; i++) {
        snprintf(names[i], sizeof names[i], "p%d", i);
        many[i] = (th_param){.name = names[i], .type = (i % 2) ? TH_T_DOUBLE : TH_T_INT64};
    }
    th_function fn = {.fn = noop, .n_params = 65, .params = many};
    ck_assert_refused(&fn, "Tool function has too many parameters: 65 (max 64)");
    fn.n_params = 64;
    prepared p = prepare_ok(&fn);
    json_object *props;
    ck_assert(json_object_object_get_ex(p.input, "properties", &props));
    ck_assert_int_eq(json_object_object_length(props), 64);
    prepared_free(&p);
    fn.flags = TH_FN_WANTS_CALL; /* 65 C arguments, 64 of them parameters */
    p = prepare_ok(&fn);
    prepared_free(&p);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Through the registry: the typed path of registration. */

static void quiet(th_log_level level, const char *line, void *ctx)
{
    (void)level;
    (void)line;
    (void)ctx;
}

START_TEST(test_registry_typed_tool)
{
    th_log_set_sink(quiet, NULL);
    th_registry *reg = th_registry_new();
    static const th_param prm[] = {{.name = "a", .type = TH_T_DOUBLE}, {.name = "b", .type = TH_T_DOUBLE}};
    th_function fn = {.fn = noop, .result = TH_T_DOUBLE, .n_params = 2, .params = prm};
    th_tool t = {TH_TOOL_INIT, .name = "sum", .description = "Add two numbers and return the sum", .function = &fn};
    th_err err = {0};
    ck_assert_int_eq(th_registry_add(reg, &t, NULL, &err), TH_OK);
    const th_entry *e = th_registry_get(reg, "sum");
    ck_assert_ptr_nonnull(e);
    ck_assert_ptr_nonnull(e->typed);
    ck_assert_ptr_null(e->handler);
    ck_assert_str_eq(json_object_to_json_string_ext(e->input_schema, JSON_PLAIN),
                     "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"number\"},\"b\":{\"type\":\"number\"}},"
                     "\"required\":[\"a\",\"b\"],\"additionalProperties\":false}");
    ck_assert_str_eq(json_object_to_json_string_ext(e->output_schema, JSON_PLAIN),
                     "{\"type\":\"object\",\"properties\":{\"result\":{\"type\":\"number\"}},\"required\":[\"result\"]}");

    /* A refused typed tool: the registry passes the message through and
     * changes nothing. */
    static const th_param bad[] = {{.name = "x", .type = TH_T_INT}, {.name = "x", .type = TH_T_INT}};
    th_function badfn = {.fn = noop, .n_params = 2, .params = bad};
    th_tool t2 = {TH_TOOL_INIT, .name = "dup", .description = "Has a duplicate parameter", .function = &badfn};
    ck_assert_int_eq(th_registry_add(reg, &t2, NULL, &err), TH_ERR_VALUE);
    ck_assert_str_eq(err.msg, "Tool parameter 'x' is listed twice");
    ck_assert_uint_eq(th_registry_count(reg), 1);
    ck_assert(!th_registry_validate(reg, &t2));
    th_registry_unref(reg);
    th_log_set_sink(NULL, NULL);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("typed_schema");
    TCase *tc = tcase_create("schema");
    tcase_add_test(tc, test_schema_scalars);
    tcase_add_test(tc, test_schema_64bit_bounds_are_exact_integers);
    tcase_add_test(tc, test_schema_float_bounds_match_conversion);
    tcase_add_test(tc, test_schema_arrays);
    tcase_add_test(tc, test_schema_enum_description_default);
    tcase_add_test(tc, test_schema_whole_input_schema);
    tcase_add_test(tc, test_schema_required_omitted_when_empty);
    tcase_add_test(tc, test_schema_output);
    tcase_add_test(tc, test_schema_descriptor_may_go_away);
    suite_add_tcase(s, tc);
    tc = tcase_create("refusals");
    tcase_add_test(tc, test_refuse_unsupported_types);
    tcase_add_test(tc, test_refuse_names);
    tcase_add_test(tc, test_refuse_duplicate);
    tcase_add_test(tc, test_refuse_enums);
    tcase_add_test(tc, test_refuse_defaults);
    tcase_add_test(tc, test_refuse_default_not_json);
    tcase_add_test(tc, test_refuse_function);
    tcase_add_test(tc, test_param_count_limit);
    tcase_add_test(tc, test_registry_typed_tool);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN(suite)
