/* SPDX-License-Identifier: MIT */
/*
** test_typed_call.c: calls of typed functions: every conversion rule
** (integer ranges and integral values, floats, strict booleans, strings,
** enums, objects, arrays, defaults), every argument error with its exact
** message (and proof, by a call counter, that the function never ran), and
** every way a return value becomes a result.
*/
#include "config.h"

#include <check.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "typed/helpers.h"
#include "check_main.h"

static int calls;

/* ---- one parameter of each kind, recording what arrived ---- */

static int64_t got_i64;
static uint64_t got_u64;
static double got_d;
static float got_f;
static bool got_b;
static const char *got_s;
static json_object *got_j;

static int8_t take_int8(int8_t v) { calls++; got_i64 = v; return v; }
static int16_t take_int16(int16_t v) { calls++; got_i64 = v; return v; }
static uint8_t take_uint8(uint8_t v) { calls++; got_u64 = v; return v; }
static uint32_t take_uint32(uint32_t v) { calls++; got_u64 = v; return v; }
static int64_t take_int64(int64_t v) { calls++; got_i64 = v; return v; }
static uint64_t take_uint64(uint64_t v) { calls++; got_u64 = v; return v; }
static int take_int(int v) { calls++; got_i64 = v; return v; }
static long take_long(long v) { calls++; got_i64 = v; return v; }
static double take_double(double v) { calls++; got_d = v; return v; }
static float take_float(float v) { calls++; got_f = v; return v; }
static bool take_bool(bool v) { calls++; got_b = v; return v; }
static const char *take_string(const char *v) { calls++; got_s = v; return v; }

static void take_json(json_object *v)
{
    calls++;
    got_j = v;
}

static prepared one(void (*fn)(void), th_type type, th_type result)
{
    static th_param prm;
    prm = (th_param){.name = "n", .type = type};
    th_function f = {.fn = fn, .result = result, .n_params = 1, .params = &prm};
    return prepare_ok(&f);
}

#define ONE(fn, type) one((void (*)(void))(fn), (type), (type))

START_TEST(test_int8_range)
{
    prepared p = ONE(take_int8, TH_T_INT8);
    calls = 0;
    ck_call_ok(&p, "{\"n\":127}", "127", "{\"result\":127}");
    ck_call_ok(&p, "{\"n\":-128}", "-128", "{\"result\":-128}");
    ck_assert_int_eq(got_i64, -128);
    ck_assert_int_eq(calls, 2);
    ck_call_error(&p, "{\"n\":300}", "Invalid argument 'n': 300 is out of range for int8 (-128..127)");
    ck_call_error(&p, "{\"n\":128}", "Invalid argument 'n': 128 is out of range for int8 (-128..127)");
    ck_call_error(&p, "{\"n\":-129}", "Invalid argument 'n': -129 is out of range for int8 (-128..127)");
    ck_assert_int_eq(calls, 2);
    prepared_free(&p);

    p = ONE(take_int16, TH_T_INT16);
    ck_call_ok(&p, "{\"n\":-32768}", "-32768", "{\"result\":-32768}");
    ck_call_error(&p, "{\"n\":32768}", "Invalid argument 'n': 32768 is out of range for int16 (-32768..32767)");
    prepared_free(&p);
}
END_TEST

START_TEST(test_integral_values)
{
    prepared p = ONE(take_int, TH_T_INT);
    calls = 0;
    /* JSON Schema's integer: a number with no fractional part. */
    ck_call_ok(&p, "{\"n\":2.0}", "2", "{\"result\":2}");
    ck_call_ok(&p, "{\"n\":1e2}", "100", "{\"result\":100}");
    ck_call_ok(&p, "{\"n\":-0.0}", "0", "{\"result\":0}");
    ck_assert_int_eq(calls, 3);
    ck_call_error(&p, "{\"n\":2.5}", "Invalid argument 'n': expected integer, got 2.5");
    ck_call_error(&p, "{\"n\":1e-7}", "Invalid argument 'n': expected integer, got 1e-07");
    ck_call_error(&p, "{\"n\":\"5\"}", "Invalid argument 'n': expected integer, got string");
    ck_call_error(&p, "{\"n\":true}", "Invalid argument 'n': expected integer, got boolean");
    ck_call_error(&p, "{\"n\":null}", "Invalid argument 'n': expected integer, got null");
    ck_call_error(&p, "{\"n\":[1]}", "Invalid argument 'n': expected integer, got array");
    ck_call_error(&p, "{\"n\":{}}", "Invalid argument 'n': expected integer, got object");
    ck_call_error(&p, "{\"n\":3e9}", "Invalid argument 'n': 3000000000 is out of range for int (-2147483648..2147483647)");
    ck_call_error(&p, "{\"n\":1e30}", "Invalid argument 'n': 1e+30 is out of range for int (-2147483648..2147483647)");
    ck_assert_int_eq(calls, 3);
    prepared_free(&p);

    p = ONE(take_long, TH_T_LONG);
    ck_call_ok(&p, "{\"n\":-5}", "-5", "{\"result\":-5}");
    ck_assert_int_eq(got_i64, -5);
    prepared_free(&p);
}
END_TEST

START_TEST(test_unsigned)
{
    prepared p = ONE(take_uint8, TH_T_UINT8);
    calls = 0;
    ck_call_ok(&p, "{\"n\":255}", "255", "{\"result\":255}");
    ck_call_error(&p, "{\"n\":-1}", "Invalid argument 'n': -1 is out of range for uint8 (0..255)");
    ck_call_error(&p, "{\"n\":-1.0}", "Invalid argument 'n': -1 is out of range for uint8 (0..255)");
    ck_call_error(&p, "{\"n\":256}", "Invalid argument 'n': 256 is out of range for uint8 (0..255)");
    ck_assert_int_eq(calls, 1);
    prepared_free(&p);

    p = ONE(take_uint32, TH_T_UINT32);
    ck_call_ok(&p, "{\"n\":4294967295}", "4294967295", "{\"result\":4294967295}");
    ck_call_error(&p, "{\"n\":4294967296}", "Invalid argument 'n': 4294967296 is out of range for uint32 (0..4294967295)");
    prepared_free(&p);
}
END_TEST

START_TEST(test_64bit)
{
    prepared p = ONE(take_uint64, TH_T_UINT64);
    calls = 0;
    /* Above INT64_MAX: json-c holds it as uint64; nothing may clamp it. */
    ck_call_ok(&p, "{\"n\":18446744073709551615}", "18446744073709551615", "{\"result\":18446744073709551615}");
    ck_assert_uint_eq(got_u64, UINT64_MAX);
    ck_call_ok(&p, "{\"n\":9223372036854775808}", "9223372036854775808", "{\"result\":9223372036854775808}");
    ck_assert_uint_eq(got_u64, (uint64_t)INT64_MAX + 1);
    ck_call_ok(&p, "{\"n\":9223372036854775807}", "9223372036854775807", "{\"result\":9223372036854775807}");
    ck_assert_uint_eq(got_u64, (uint64_t)INT64_MAX);
    ck_call_ok(&p, "{\"n\":1e19}", "10000000000000000000", "{\"result\":10000000000000000000}");
    ck_call_error(&p, "{\"n\":-1}", "Invalid argument 'n': -1 is out of range for uint64 (0..18446744073709551615)");
    ck_call_error(&p, "{\"n\":1.8446744073709552e19}",
                  "Invalid argument 'n': 1.8446744073709552e+19 is out of range for uint64 (0..18446744073709551615)");
    ck_assert_int_eq(calls, 4);
    prepared_free(&p);

    p = ONE(take_int64, TH_T_INT64);
    calls = 0;
    ck_call_ok(&p, "{\"n\":-9223372036854775808}", "-9223372036854775808", "{\"result\":-9223372036854775808}");
    ck_assert(got_i64 == INT64_MIN);
    ck_call_ok(&p, "{\"n\":9223372036854775807}", "9223372036854775807", "{\"result\":9223372036854775807}");
    ck_assert(got_i64 == INT64_MAX);
    ck_call_error(&p, "{\"n\":9223372036854775808}",
                  "Invalid argument 'n': 9223372036854775808 is out of range for int64 "
                  "(-9223372036854775808..9223372036854775807)");
    ck_call_error(&p, "{\"n\":9.3e18}",
                  "Invalid argument 'n': 9300000000000000000 is out of range for int64 "
                  "(-9223372036854775808..9223372036854775807)");
    ck_assert_int_eq(calls, 2);
    prepared_free(&p);
}
END_TEST

/* Call P with the one argument "n" given as a json-c value (owned here), as
** a parser that keeps a number's literal may deliver it; the result text. */
static char *call_with(const prepared *p, json_object *n)
{
    json_object *args = json_object_new_object();
    json_object_object_add(args, "n", n);
    th_call *call = th_call_new("t", NULL);
    ck_assert_int_eq(th_typed_invoke(p->typed, call, args), TH_OK);
    json_object *res = th_call_finish(call, TH_OK);
    char *text = strdup(result_is_error(res) ? result_text(res, 0) : json_object_to_json_string_ext(res, JSON_PLAIN));
    json_object_put(res);
    th_call_free(call);
    json_object_put(args);
    return text;
}

#define ck_call_with(p, n, want)                                                         \
    do {                                                                                 \
        char *t_ = call_with((p), (n));                                                  \
        ck_assert_str_eq(t_, (want));                                                    \
        free(t_);                                                                        \
    } while (0)

/* Integers past 64 bits reach a typed function neither clamped nor rounded
** into range: a double that carries its literal is judged by the literal. */
START_TEST(test_64bit_beyond)
{
    prepared p = ONE(take_uint64, TH_T_UINT64);
    calls = 0;
    ck_call_with(&p, json_object_new_uint64(UINT64_MAX),
                 "{\"content\":[{\"type\":\"text\",\"text\":\"18446744073709551615\"}],"
                 "\"structuredContent\":{\"result\":18446744073709551615}}");
    ck_assert_uint_eq(got_u64, UINT64_MAX);
    ck_call_with(&p, json_object_new_double(18446744073709551616.0),
                 "Invalid argument 'n': 1.8446744073709552e+19 is out of range for uint64 (0..18446744073709551615)");
    ck_call_with(&p, json_object_new_double_s(18446744073709551616.0, "18446744073709551616"),
                 "Invalid argument 'n': 18446744073709551616 is out of range for uint64 (0..18446744073709551615)");
    ck_call_with(&p, json_object_new_double_s(1e23, "99999999999999999999999"),
                 "Invalid argument 'n': 99999999999999999999999 is out of range for uint64 (0..18446744073709551615)");
    ck_assert_int_eq(calls, 1);
    prepared_free(&p);

    p = ONE(take_int64, TH_T_INT64);
    calls = 0;
    /* Its double rounds to -2^63, which is in range: the literal is not. */
    ck_call_with(&p, json_object_new_double_s(-9223372036854775808.0, "-9223372036854775809"),
                 "Invalid argument 'n': -9223372036854775809 is out of range for int64 "
                 "(-9223372036854775808..9223372036854775807)");
    ck_call_with(&p, json_object_new_double_s(9223372036854775808.0, "9223372036854775808"),
                 "Invalid argument 'n': 9223372036854775808 is out of range for int64 "
                 "(-9223372036854775808..9223372036854775807)");
    ck_call_with(&p, json_object_new_double_s(-9223372036854775808.0, "-9223372036854775808"),
                 "{\"content\":[{\"type\":\"text\",\"text\":\"-9223372036854775808\"}],"
                 "\"structuredContent\":{\"result\":-9223372036854775808}}");
    ck_assert_int_eq(calls, 1);
    prepared_free(&p);

    p = ONE(take_int, TH_T_INT);
    calls = 0;
    ck_call_with(&p, json_object_new_int64(2147483648LL),
                 "Invalid argument 'n': 2147483648 is out of range for int (-2147483648..2147483647)");
    ck_call_with(&p, json_object_new_double_s(1e23, "99999999999999999999999"),
                 "Invalid argument 'n': 99999999999999999999999 is out of range for int (-2147483648..2147483647)");
    ck_assert_int_eq(calls, 0);
    prepared_free(&p);

    /* A double parameter takes the double nearest the literal. */
    p = ONE(take_double, TH_T_DOUBLE);
    ck_call_with(&p, json_object_new_double_s(1e23, "99999999999999999999999"),
                 "{\"content\":[{\"type\":\"text\",\"text\":\"1e+23\"}],\"structuredContent\":{\"result\":1e+23}}");
    prepared_free(&p);
}
END_TEST

START_TEST(test_floating)
{
    prepared p = ONE(take_double, TH_T_DOUBLE);
    calls = 0;
    ck_call_ok(&p, "{\"n\":5.5}", "5.5", "{\"result\":5.5}");
    ck_call_ok(&p, "{\"n\":3}", "3", "{\"result\":3}");
    ck_assert(got_d == 3.0);
    ck_call_ok(&p, "{\"n\":0.1}", "0.1", "{\"result\":0.1}");
    ck_call_ok(&p, "{\"n\":-1e300}", "-1e+300", "{\"result\":-1e+300}");
    ck_call_ok(&p, "{\"n\":18446744073709551615}", "18446744073709552000", "{\"result\":18446744073709552000}");
    ck_call_error(&p, "{\"n\":\"1.5\"}", "Invalid argument 'n': expected number, got string");
    ck_call_error(&p, "{\"n\":false}", "Invalid argument 'n': expected number, got boolean");
    ck_assert_int_eq(calls, 5);
    prepared_free(&p);

    p = ONE(take_float, TH_T_FLOAT);
    calls = 0;
    ck_call_ok(&p, "{\"n\":0.1}", "0.1", "{\"result\":0.1}");
    ck_assert(got_f == 0.1f);
    ck_call_ok(&p, "{\"n\":-2}", "-2", "{\"result\":-2}");
    ck_call_error(&p, "{\"n\":1e39}",
                  "Invalid argument 'n': 1e+39 is out of range for float (-3.4028235e+38..3.4028235e+38)");
    ck_assert_int_eq(calls, 2);
    prepared_free(&p);
}
END_TEST

/* Double and float results read as JavaScript's
** Number.prototype.toString prints them, not as printf's %g ("1e+01"). */
START_TEST(test_js_number_form)
{
    static const struct {
        const char *in, *out;
    } doubles[] = {
        {"10", "10"},          {"3000", "3000"},         {"5", "5"},
        {"0.1", "0.1"},        {"0.30000000000000004", "0.30000000000000004"},
        {"1e21", "1e+21"},     {"1e20", "100000000000000000000"},
        {"1.5e-7", "1.5e-7"},  {"0.000001", "0.000001"}, {"123.456", "123.456"},
        {"-0.5", "-0.5"},      {"-0.0", "0"},            {"1.7976931348623157e308", "1.7976931348623157e+308"},
        {"5e-324", "5e-324"},  {"-1234.5e10", "-12345000000000"},
    };
    prepared p = ONE(take_double, TH_T_DOUBLE);
    for (size_t i = 0; i < sizeof doubles / sizeof doubles[0]; i++) {
        char args[64], sc[64];
        snprintf(args, sizeof args, "{\"n\":%s}", doubles[i].in);
        snprintf(sc, sizeof sc, "{\"result\":%s}", doubles[i].out);
        ck_call_ok(&p, args, doubles[i].out, sc);
    }
    prepared_free(&p);

    p = ONE(take_float, TH_T_FLOAT);
    ck_call_ok(&p, "{\"n\":10}", "10", "{\"result\":10}");
    ck_call_ok(&p, "{\"n\":16777216}", "16777216", "{\"result\":16777216}");
    ck_call_ok(&p, "{\"n\":1e-10}", "1e-10", "{\"result\":1e-10}");
    ck_call_ok(&p, "{\"n\":3e38}", "3e+38", "{\"result\":3e+38}");
    prepared_free(&p);
}
END_TEST

START_TEST(test_bool_strict)
{
    prepared p = ONE(take_bool, TH_T_BOOL);
    calls = 0;
    ck_call_ok(&p, "{\"n\":true}", "true", "{\"result\":true}");
    ck_assert(got_b);
    ck_call_ok(&p, "{\"n\":false}", "false", "{\"result\":false}");
    ck_assert(!got_b);
    ck_call_error(&p, "{\"n\":1}", "Invalid argument 'n': expected boolean, got integer");
    ck_call_error(&p, "{\"n\":0.0}", "Invalid argument 'n': expected boolean, got number");
    ck_call_error(&p, "{\"n\":\"true\"}", "Invalid argument 'n': expected boolean, got string");
    ck_call_error(&p, "{\"n\":null}", "Invalid argument 'n': expected boolean, got null");
    ck_assert_int_eq(calls, 2);
    prepared_free(&p);
}
END_TEST

START_TEST(test_strings)
{
    prepared p = ONE(take_string, TH_T_STRING);
    calls = 0;
    ck_call_ok(&p, "{\"n\":\"h\\u00e9llo \\\"x\\\"\"}", "h\xc3\xa9llo \"x\"", "{\"result\":\"h\xc3\xa9llo \\\"x\\\"\"}");
    ck_call_ok(&p, "{\"n\":\"\"}", "", "{\"result\":\"\"}");
    ck_call_error(&p, "{\"n\":5}", "Invalid argument 'n': expected string, got integer");
    /* A C string would end at the NUL: refuse rather than truncate. */
    ck_call_error(&p, "{\"n\":\"ab\\u0000cd\"}",
                  "Invalid argument 'n': expected string without NUL characters, got one with NUL at offset 2");
    ck_assert_int_eq(calls, 2);
    prepared_free(&p);
}
END_TEST

static const char *const sizes[] = {"small", "medium", "large", NULL};

START_TEST(test_enum)
{
    static const th_param prm = {.name = "size", .type = TH_T_STRING, .enum_values = sizes};
    th_function f = {.fn = (void (*)(void))take_string, .result = TH_T_STRING, .n_params = 1, .params = &prm};
    prepared p = prepare_ok(&f);
    calls = 0;
    ck_call_ok(&p, "{\"size\":\"medium\"}", "medium", "{\"result\":\"medium\"}");
    ck_call_error(&p, "{\"size\":\"huge\"}",
                  "Invalid argument 'size': expected one of \"small\", \"medium\", \"large\", got \"huge\"");
    ck_call_error(&p, "{\"size\":\"Medium\"}",
                  "Invalid argument 'size': expected one of \"small\", \"medium\", \"large\", got \"Medium\"");
    /* A long wrong value is cut, not echoed whole. */
    ck_call_error(&p, "{\"size\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}",
                  "Invalid argument 'size': expected one of \"small\", \"medium\", \"large\", got "
                  "\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...\"");
    ck_call_error(&p, "{\"size\":1}", "Invalid argument 'size': expected string, got integer");
    ck_assert_int_eq(calls, 1);
    prepared_free(&p);
}
END_TEST

START_TEST(test_json_object)
{
    prepared p = one((void (*)(void))take_json, TH_T_JSON, TH_T_VOID);
    calls = 0;
    json_object *r = invoke(&p, "{\"n\":{\"k\":[1,2]}}");
    ck_assert(!result_is_error(r));
    ck_assert_uint_eq(result_blocks(r), 0); /* void: no content, no structuredContent */
    ck_assert_ptr_null(result_structured(r));
    json_object_put(r);
    ck_assert_int_eq(calls, 1);
    ck_call_error(&p, "{\"n\":[1]}", "Invalid argument 'n': expected object, got array");
    ck_call_error(&p, "{\"n\":\"{}\"}", "Invalid argument 'n': expected object, got string");
    ck_assert_int_eq(calls, 1);
    prepared_free(&p);
}
END_TEST

/* ---- arrays ---- */

static int64_t sum_ints(const th_array *xs)
{
    calls++;
    int64_t s = 0;
    const int32_t *v = xs->items;
    for (size_t i = 0; i < xs->count; i++)
        s += v[i];
    return s * 1000 + (int64_t)xs->count;
}

static double sum_floats(const th_array *xs)
{
    calls++;
    double s = 0;
    const float *v = xs->items;
    for (size_t i = 0; i < xs->count; i++)
        s += v[i];
    return s;
}

static char *join(const th_array *words, const th_array *flags, const th_array *bytes)
{
    calls++;
    const char *const *w = words->items;
    const bool *f = flags->items;
    const uint8_t *b = bytes->items;
    char *out = calloc(1, 256);
    for (size_t i = 0; i < words->count; i++) {
        strcat(out, w[i]);
        strcat(out, i < flags->count && f[i] ? "!" : ".");
    }
    for (size_t i = 0; i < bytes->count; i++)
        sprintf(out + strlen(out), "%u,", b[i]);
    return out;
}

START_TEST(test_arrays)
{
    prepared p;
    static const th_param pi = {.name = "xs", .type = TH_T_INT32 | TH_T_ARRAY};
    th_function fi = {.fn = (void (*)(void))sum_ints, .result = TH_T_INT64, .n_params = 1, .params = &pi};
    p = prepare_ok(&fi);
    calls = 0;
    ck_call_ok(&p, "{\"xs\":[1,2,3,-2147483648]}", "-2147483641996", "{\"result\":-2147483641996}");
    ck_call_ok(&p, "{\"xs\":[]}", "0", "{\"result\":0}");
    ck_call_ok(&p, "{\"xs\":[4.0]}", "4001", "{\"result\":4001}");
    ck_call_error(&p, "{\"xs\":[1,\"2\"]}", "Invalid argument 'xs[1]': expected integer, got string");
    ck_call_error(&p, "{\"xs\":[1,2,2147483648]}",
                  "Invalid argument 'xs[2]': 2147483648 is out of range for int32 (-2147483648..2147483647)");
    ck_call_error(&p, "{\"xs\":{\"0\":1}}", "Invalid argument 'xs': expected array, got object");
    ck_call_error(&p, "{\"xs\":5}", "Invalid argument 'xs': expected array, got integer");
    ck_assert_int_eq(calls, 3);
    prepared_free(&p);

    static const th_param pf = {.name = "xs", .type = TH_T_FLOAT | TH_T_ARRAY};
    th_function ff = {.fn = (void (*)(void))sum_floats, .result = TH_T_DOUBLE, .n_params = 1, .params = &pf};
    p = prepare_ok(&ff);
    ck_call_ok(&p, "{\"xs\":[0.5,0.25,2]}", "2.75", "{\"result\":2.75}");
    prepared_free(&p);

    static const th_param pj[] = {{.name = "words", .type = TH_T_STRING | TH_T_ARRAY},
                                  {.name = "flags", .type = TH_T_BOOL | TH_T_ARRAY},
                                  {.name = "bytes", .type = TH_T_UINT8 | TH_T_ARRAY}};
    th_function fj = {.fn = (void (*)(void))join, .result = TH_T_STRING, .flags = TH_FN_FREE_RESULT,
                      .n_params = 3, .params = pj};
    p = prepare_ok(&fj);
    ck_call_ok(&p, "{\"words\":[\"a\",\"bc\",\"d\"],\"flags\":[true,false,true],\"bytes\":[0,255,7]}",
               "a!bc.d!0,255,7,", "{\"result\":\"a!bc.d!0,255,7,\"}");
    ck_call_error(&p, "{\"words\":[\"a\"],\"flags\":[1],\"bytes\":[]}",
                  "Invalid argument 'flags[0]': expected boolean, got integer");
    ck_call_error(&p, "{\"words\":[\"a\"],\"flags\":[],\"bytes\":[-1]}",
                  "Invalid argument 'bytes[0]': -1 is out of range for uint8 (0..255)");
    prepared_free(&p);
}
END_TEST

/* ---- missing, unknown, several problems, defaults ---- */

static double sub(double a, double b)
{
    calls++;
    return a - b;
}

static const th_param ab_params[] = {{.name = "a", .type = TH_T_DOUBLE}, {.name = "b", .type = TH_T_DOUBLE}};

START_TEST(test_missing_unknown)
{
    th_function f = {.fn = (void (*)(void))sub, .result = TH_T_DOUBLE, .n_params = 2, .params = ab_params};
    prepared p = prepare_ok(&f);
    calls = 0;
    ck_call_ok(&p, "{\"b\":0.5,\"a\":2}", "1.5", "{\"result\":1.5}");
    ck_call_error(&p, "{\"a\":1}", "Missing required argument 'b'");
    ck_call_error(&p, "{}", "Missing required argument 'a'\nMissing required argument 'b'");
    ck_call_error(&p, NULL, "Missing required argument 'a'\nMissing required argument 'b'");
    ck_call_error(&p, "{\"a\":1,\"b\":2,\"c\":3}", "Unknown argument 'c'");
    ck_call_error(&p, "{\"a\":\"x\",\"c\":3}",
                  "Unknown argument 'c'\nInvalid argument 'a': expected number, got string\n"
                  "Missing required argument 'b'");
    ck_call_error(&p, "[1,2]", "Invalid arguments: expected object, got array");
    ck_call_error(&p, "\"a\"", "Invalid arguments: expected object, got string");
    ck_assert_int_eq(calls, 1);
    prepared_free(&p);
}
END_TEST

static char seen[512];

static void record(int8_t n, const char *mode, bool flag, double x, const th_array *xs, json_object *o,
                   const char *plain, int zero, const th_array *none, json_object *nothing)
{
    calls++;
    const char *const *w = xs->items;
    snprintf(seen, sizeof seen, "n=%d mode=%s flag=%d x=%g xs=%zu:%s,%s o=%s plain=%s zero=%d none=%s nothing=%s",
             n, mode, flag, x, xs->count, w[0], w[1], json_object_to_json_string_ext(o, JSON_PLAIN),
             plain ? plain : "NULL", zero, none ? "set" : "NULL", nothing ? "set" : "NULL");
    /* A function may change its object: the next call must not see it. */
    json_object_object_add(o, "touched", json_object_new_boolean(1));
}

static const th_param defaults_params[] = {
    {.name = "n", .type = TH_T_INT8, .optional = true, .default_json = "-7"},
    {.name = "mode", .type = TH_T_STRING, .optional = true, .default_json = "\"b\"",
     .enum_values = (const char *const[]){"a", "b", NULL}},
    {.name = "flag", .type = TH_T_BOOL, .optional = true, .default_json = "true"},
    {.name = "x", .type = TH_T_DOUBLE, .optional = true, .default_json = "0.25"},
    {.name = "xs", .type = TH_T_STRING | TH_T_ARRAY, .optional = true, .default_json = "[\"p\",\"q\"]"},
    {.name = "o", .type = TH_T_JSON, .optional = true, .default_json = "{\"k\":1}"},
    {.name = "plain", .type = TH_T_STRING, .optional = true},
    {.name = "zero", .type = TH_T_INT, .optional = true},
    {.name = "none", .type = TH_T_INT | TH_T_ARRAY, .optional = true},
    {.name = "nothing", .type = TH_T_JSON, .optional = true},
};

START_TEST(test_defaults)
{
    th_function f = {.fn = (void (*)(void))record, .result = TH_T_VOID, .n_params = 10, .params = defaults_params};
    prepared p = prepare_ok(&f);
    calls = 0;
    for (int i = 0; i < 2; i++) {
        json_object_put(invoke(&p, "{}"));
        ck_assert_str_eq(seen, "n=-7 mode=b flag=1 x=0.25 xs=2:p,q o={\"k\":1} plain=NULL zero=0 "
                               "none=NULL nothing=NULL");
    }
    json_object_put(invoke(&p, "{\"n\":3,\"mode\":\"a\",\"flag\":false,\"x\":1,\"xs\":[\"r\",\"s\",\"t\"],"
                               "\"o\":{},\"plain\":\"z\",\"zero\":9}"));
    ck_assert_str_eq(seen, "n=3 mode=a flag=0 x=1 xs=3:r,s o={} plain=z zero=9 none=NULL nothing=NULL");
    ck_assert_int_eq(calls, 3);
    prepared_free(&p);
}
END_TEST

/* ---- results ---- */

static const char *ret_null(void) { return NULL; }
static const char *ret_bad_utf8(void) { return "ab\xff"; }
static char *ret_owned(void) { return strdup("owned \xe2\x82\xac"); }
static json_object *ret_object(void)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "path", json_object_new_string("a/b"));
    json_object_object_add(o, "n", json_object_new_int(3));
    return o;
}
static json_object *ret_array(void) { return json_object_new_array(); }
static json_object *ret_json_null(void) { return NULL; }
static double ret_nan(void) { return NAN; }

/* TH_T_JSON results the wire cannot carry. */
static json_object *ret_object_nan(void)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "avg", json_object_new_double(NAN));
    return o;
}

static json_object *ret_object_comma(void)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "avg", json_object_new_double_s(1.5, "1,5"));
    return o;
}

static json_object *ret_object_bad_key(void)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "caf\xe9", json_object_new_int(1));
    return o;
}

static json_object *ret_object_deep(void)
{
    json_object *v = json_object_new_int(1);
    for (int i = 0; i < 200000; i++) {
        json_object *a = json_object_new_array();
        json_object_array_add(a, v);
        v = a;
    }
    json_object *o = json_object_new_object();
    json_object_object_add(o, "tree", v);
    return o;
}
static double ret_inf(void) { return -INFINITY; }
static double ret_two(void) { return 2.0; }
static double ret_third(void) { return 1.0 / 3.0; }
static float ret_float_third(void) { return 1.0f / 3.0f; }
static bool ret_true(void) { return true; }
static int ret_42(void) { return 42; }
static long ret_long_min(void) { return LONG_MIN; }
static int16_t ret_i16(void) { return -300; }
static uint16_t ret_u16(void) { return 65535; }
static int32_t ret_i32(void) { return INT32_MIN; }
static uint32_t ret_u32(void) { return UINT32_MAX; }
static uint8_t ret_u8(void) { return 200; }
static int8_t ret_i8(void) { return -1; }

static void check_result(void (*fn)(void), th_type type, unsigned flags, const char *text, const char *structured)
{
    th_function f = {.fn = fn, .result = type, .flags = flags};
    prepared p = prepare_ok(&f);
    ck_call_ok(&p, "{}", text, structured);
    prepared_free(&p);
}

static void check_result_error(void (*fn)(void), th_type type, unsigned flags, const char *message)
{
    th_function f = {.fn = fn, .result = type, .flags = flags};
    prepared p = prepare_ok(&f);
    ck_call_error(&p, "{}", message);
    prepared_free(&p);
}

#define FNP(f) ((void (*)(void))(f))

START_TEST(test_results)
{
    check_result(FNP(ret_null), TH_T_STRING, 0, "null", "{\"result\":null}");
    check_result(FNP(ret_owned), TH_T_STRING, TH_FN_FREE_RESULT, "owned \xe2\x82\xac",
                 "{\"result\":\"owned \xe2\x82\xac\"}");
    check_result(FNP(ret_object), TH_T_JSON, 0, "{\"path\":\"a/b\",\"n\":3}", "{\"result\":{\"path\":\"a/b\",\"n\":3}}");
    check_result(FNP(ret_json_null), TH_T_JSON, 0, "null", "{\"result\":null}");
    check_result(FNP(ret_two), TH_T_DOUBLE, 0, "2", "{\"result\":2}");
    check_result(FNP(ret_third), TH_T_DOUBLE, 0, "0.3333333333333333", "{\"result\":0.3333333333333333}");
    check_result(FNP(ret_float_third), TH_T_FLOAT, 0, "0.33333334", "{\"result\":0.33333334}");
    check_result(FNP(ret_true), TH_T_BOOL, 0, "true", "{\"result\":true}");
    check_result(FNP(ret_42), TH_T_INT, 0, "42", "{\"result\":42}");
    char text[64], sc[80];
    snprintf(text, sizeof text, "%ld", LONG_MIN);
    snprintf(sc, sizeof sc, "{\"result\":%ld}", LONG_MIN);
    check_result(FNP(ret_long_min), TH_T_LONG, 0, text, sc);
    /* Narrow returns come back widened in an ffi_arg: sign and zero
     * extension must be right. */
    check_result(FNP(ret_i8), TH_T_INT8, 0, "-1", "{\"result\":-1}");
    check_result(FNP(ret_u8), TH_T_UINT8, 0, "200", "{\"result\":200}");
    check_result(FNP(ret_i16), TH_T_INT16, 0, "-300", "{\"result\":-300}");
    check_result(FNP(ret_u16), TH_T_UINT16, 0, "65535", "{\"result\":65535}");
    check_result(FNP(ret_i32), TH_T_INT32, 0, "-2147483648", "{\"result\":-2147483648}");
    check_result(FNP(ret_u32), TH_T_UINT32, 0, "4294967295", "{\"result\":4294967295}");

    check_result_error(FNP(ret_bad_utf8), TH_T_STRING, 0, "Tool 't' returned a string that is not valid UTF-8");
    check_result_error(FNP(ret_array), TH_T_JSON, 0,
                       "Tool 't' returned array, but its result must be a JSON object or NULL");
    check_result_error(FNP(ret_nan), TH_T_DOUBLE, 0, "Tool 't' returned nan, which JSON cannot represent");
    check_result_error(FNP(ret_inf), TH_T_DOUBLE, 0, "Tool 't' returned -inf, which JSON cannot represent");
    check_result_error(FNP(ret_object_nan), TH_T_JSON, 0,
                       "Tool 't' returned an invalid result: structuredContent.result.avg: NaN is not a JSON number");
    check_result_error(FNP(ret_object_comma), TH_T_JSON, 0,
                       "Tool 't' returned an invalid result: structuredContent.result.avg: "
                       "the number text \"1,5\" is not a JSON number");
    check_result_error(FNP(ret_object_bad_key), TH_T_JSON, 0,
                       "Tool 't' returned an invalid result: structuredContent.result.caf\xef\xbf\xbd: "
                       "key is not valid UTF-8");

    /* 200,000 levels: refused before json-c's recursive serialiser sees it. */
    th_function f = {.fn = FNP(ret_object_deep), .result = TH_T_JSON};
    prepared p = prepare_ok(&f);
    json_object *r = invoke(&p, "{}");
    ck_assert(result_is_error(r));
    const char *why = result_text(r, 0);
    ck_assert_msg(strncmp(why, "Tool 't' returned an invalid result: structuredContent.result.tree[0][0]", 72) == 0 &&
                      strstr(why, ": nested deeper than 128 levels"),
                  "%s", why);
    json_object_put(r);
    prepared_free(&p);
}
END_TEST

/* ---- the call context ---- */

static th_call *seen_call;

static char *refuse_odd(th_call *call, int n)
{
    calls++;
    seen_call = call;
    if (n % 2)
        th_call_error(call, "n must be even, got %d", n);
    /* Returned even on error: the host must ignore it but still free it. */
    return strdup(n % 2 ? "ignored" : "even");
}

START_TEST(test_wants_call)
{
    static const th_param prm = {.name = "n", .type = TH_T_INT};
    th_function f = {.fn = FNP(refuse_odd), .result = TH_T_STRING, .flags = TH_FN_WANTS_CALL | TH_FN_FREE_RESULT,
                     .n_params = 1, .params = &prm};
    prepared p = prepare_ok(&f);
    calls = 0;
    ck_call_ok(&p, "{\"n\":4}", "even", "{\"result\":\"even\"}");
    ck_call_error(&p, "{\"n\":3}", "n must be even, got 3");
    ck_assert_int_eq(calls, 2);
    /* Bad input still never reaches it. */
    ck_call_error(&p, "{\"n\":\"3\"}", "Invalid argument 'n': expected integer, got string");
    ck_assert_int_eq(calls, 2);

    th_call *call = th_call_new("t", NULL);
    json_object *args = json_tokener_parse("{\"n\":2}");
    ck_assert_int_eq(th_typed_invoke(p.typed, call, args), TH_OK);
    ck_assert_ptr_eq(seen_call, call);
    json_object_put(th_call_finish(call, TH_OK));
    th_call_free(call);
    json_object_put(args);
    prepared_free(&p);
}
END_TEST

static json_object *object_or_error(th_call *call, bool fail)
{
    if (fail)
        th_call_error(call, "refused");
    return ret_object(); /* the host owns it either way */
}

START_TEST(test_wants_call_json_result_ignored)
{
    static const th_param prm = {.name = "fail", .type = TH_T_BOOL};
    th_function f = {.fn = FNP(object_or_error), .result = TH_T_JSON, .flags = TH_FN_WANTS_CALL,
                     .n_params = 1, .params = &prm};
    prepared p = prepare_ok(&f);
    ck_call_error(&p, "{\"fail\":true}", "refused");
    ck_call_ok(&p, "{\"fail\":false}", "{\"path\":\"a/b\",\"n\":3}", "{\"result\":{\"path\":\"a/b\",\"n\":3}}");
    prepared_free(&p);
}
END_TEST

START_TEST(test_misuse)
{
    th_call *call = th_call_new("t", NULL);
    ck_assert_int_eq(th_typed_invoke(NULL, call, NULL), TH_ERR_MISUSE);
    th_call_free(call);
    th_function f = {.fn = FNP(ret_42), .result = TH_T_INT};
    prepared p = prepare_ok(&f);
    ck_assert_int_eq(th_typed_invoke(p.typed, NULL, NULL), TH_ERR_MISUSE);
    prepared_free(&p);
    th_err err = {0};
    ck_assert_int_eq(th_typed_prepare(NULL, NULL, NULL, NULL, &err), TH_ERR_MISUSE);
    th_typed_free(NULL);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("typed_call");
    TCase *tc = tcase_create("conversions");
    tcase_add_test(tc, test_int8_range);
    tcase_add_test(tc, test_integral_values);
    tcase_add_test(tc, test_unsigned);
    tcase_add_test(tc, test_64bit);
    tcase_add_test(tc, test_64bit_beyond);
    tcase_add_test(tc, test_floating);
    tcase_add_test(tc, test_js_number_form);
    tcase_add_test(tc, test_bool_strict);
    tcase_add_test(tc, test_strings);
    tcase_add_test(tc, test_enum);
    tcase_add_test(tc, test_json_object);
    tcase_add_test(tc, test_arrays);
    tcase_add_test(tc, test_missing_unknown);
    tcase_add_test(tc, test_defaults);
    suite_add_tcase(s, tc);
    tc = tcase_create("results");
    tcase_add_test(tc, test_results);
    tcase_add_test(tc, test_wants_call);
    tcase_add_test(tc, test_wants_call_json_result_ignored);
    tcase_add_test(tc, test_misuse);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN(suite)
