/* SPDX-License-Identifier: MIT */
/*
** test_typed_abi.c: the calling convention. Functions of 26 mixed integer,
** floating and pointer parameters (more than the argument registers of
** either class, so some travel on the stack), one per return type, are
** called through th_typed_invoke and directly, with the same values; the
** results must agree exactly.
*/
#include "config.h"

#include <check.h>
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "typed/helpers.h"
#include "check_main.h"

#define MIXED_PARAMS                                                                                    \
    int8_t a0, double d0, uint8_t a1, float f0, int16_t a2, double d1, uint16_t a3, float f1, int32_t a4, \
        double d2, uint32_t a5, float f2, int64_t a6, double d3, uint64_t a7, float f3, int a8, double d4,  \
        long a9, float f4, bool a10, const char *s, const th_array *arr, json_object *j, double d5, float f5
#define MIXED_ARGS \
    a0, d0, a1, f0, a2, d1, a3, f1, a4, d2, a5, f2, a6, d3, a7, f3, a8, d4, a9, f4, a10, s, arr, j, d5, f5

static const th_param mixed_params[] = {
    {.name = "a0", .type = TH_T_INT8},    {.name = "d0", .type = TH_T_DOUBLE},
    {.name = "a1", .type = TH_T_UINT8},   {.name = "f0", .type = TH_T_FLOAT},
    {.name = "a2", .type = TH_T_INT16},   {.name = "d1", .type = TH_T_DOUBLE},
    {.name = "a3", .type = TH_T_UINT16},  {.name = "f1", .type = TH_T_FLOAT},
    {.name = "a4", .type = TH_T_INT32},   {.name = "d2", .type = TH_T_DOUBLE},
    {.name = "a5", .type = TH_T_UINT32},  {.name = "f2", .type = TH_T_FLOAT},
    {.name = "a6", .type = TH_T_INT64},   {.name = "d3", .type = TH_T_DOUBLE},
    {.name = "a7", .type = TH_T_UINT64},  {.name = "f3", .type = TH_T_FLOAT},
    {.name = "a8", .type = TH_T_INT},     {.name = "d4", .type = TH_T_DOUBLE},
    {.name = "a9", .type = TH_T_LONG},    {.name = "f4", .type = TH_T_FLOAT},
    {.name = "a10", .type = TH_T_BOOL},   {.name = "s", .type = TH_T_STRING},
    {.name = "arr", .type = TH_T_INT32 | TH_T_ARRAY}, {.name = "j", .type = TH_T_JSON},
    {.name = "d5", .type = TH_T_DOUBLE},  {.name = "f5", .type = TH_T_FLOAT},
};
#define N_MIXED (sizeof mixed_params / sizeof mixed_params[0])

static uint64_t mix(uint64_t h, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        h ^= (v >> (8 * i)) & 0xff;
        h *= 0x100000001b3ULL;
    }
    return h;
}

static uint64_t mix_d(uint64_t h, double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return mix(h, b);
}

static uint64_t mix_f(uint64_t h, float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return mix(h, b);
}

/* Every argument, in order, into one number: any argument in the wrong
** register, truncated or mis-extended changes it. */
static uint64_t hash_all(MIXED_PARAMS)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    h = mix(h, (uint64_t)(int64_t)a0);
    h = mix_d(h, d0);
    h = mix(h, a1);
    h = mix_f(h, f0);
    h = mix(h, (uint64_t)(int64_t)a2);
    h = mix_d(h, d1);
    h = mix(h, a3);
    h = mix_f(h, f1);
    h = mix(h, (uint64_t)(int64_t)a4);
    h = mix_d(h, d2);
    h = mix(h, a5);
    h = mix_f(h, f2);
    h = mix(h, (uint64_t)a6);
    h = mix_d(h, d3);
    h = mix(h, a7);
    h = mix_f(h, f3);
    h = mix(h, (uint64_t)(int64_t)a8);
    h = mix_d(h, d4);
    h = mix(h, (uint64_t)(int64_t)a9);
    h = mix_f(h, f4);
    h = mix(h, a10);
    for (const char *p = s; *p; p++)
        h = mix(h, (unsigned char)*p);
    h = mix(h, arr->count);
    for (size_t i = 0; i < arr->count; i++)
        h = mix(h, (uint64_t)(int64_t)((const int32_t *)arr->items)[i]);
    json_object *k;
    h = mix(h, json_object_object_get_ex(j, "k", &k) ? (uint64_t)json_object_get_int64(k) : 7);
    h = mix_d(h, d5);
    h = mix_f(h, f5);
    return h;
}

static uint64_t void_hash;

static void r_void(MIXED_PARAMS) { void_hash = hash_all(MIXED_ARGS); }
static bool r_bool(MIXED_PARAMS) { return hash_all(MIXED_ARGS) & 1; }
static int8_t r_int8(MIXED_PARAMS) { return (int8_t)(hash_all(MIXED_ARGS) >> 7); }
static int16_t r_int16(MIXED_PARAMS) { return (int16_t)(hash_all(MIXED_ARGS) >> 3); }
static int32_t r_int32(MIXED_PARAMS) { return (int32_t)(hash_all(MIXED_ARGS) >> 5); }
static int64_t r_int64(MIXED_PARAMS) { return (int64_t)hash_all(MIXED_ARGS); }
static uint8_t r_uint8(MIXED_PARAMS) { return (uint8_t)(hash_all(MIXED_ARGS) >> 9); }
static uint16_t r_uint16(MIXED_PARAMS) { return (uint16_t)(hash_all(MIXED_ARGS) >> 11); }
static uint32_t r_uint32(MIXED_PARAMS) { return (uint32_t)(hash_all(MIXED_ARGS) >> 13); }
static uint64_t r_uint64(MIXED_PARAMS) { return hash_all(MIXED_ARGS) | (1ULL << 63); }
static int r_int(MIXED_PARAMS) { return (int)(hash_all(MIXED_ARGS) >> 17); }
static long r_long(MIXED_PARAMS) { return (long)hash_all(MIXED_ARGS); }
static float r_float(MIXED_PARAMS) { return (float)(int32_t)(hash_all(MIXED_ARGS) >> 20) / 64.0f; }
static double r_double(MIXED_PARAMS) { return (double)(int64_t)hash_all(MIXED_ARGS) / 3.0; }

static json_object *r_json(MIXED_PARAMS)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "hash", json_object_new_uint64(hash_all(MIXED_ARGS)));
    json_object_object_add(o, "s", json_object_new_string(s));
    return o;
}

/* Every argument printed: a mismatch shows which one went wrong. */
static char *describe(const char *prefix, MIXED_PARAMS)
{
    char *out = malloc(2048);
    int n = snprintf(out, 2048,
                     "%s|%d %.17g %u %.9g %d %.17g %u %.9g %" PRId32 " %.17g %" PRIu32 " %.9g %" PRId64
                     " %.17g %" PRIu64 " %.9g %d %.17g %ld %.9g %d [%s] [",
                     prefix, a0, d0, a1, (double)f0, a2, d1, a3, (double)f1, a4, d2, a5, (double)f2, a6, d3, a7,
                     (double)f3, a8, d4, a9, (double)f4, a10, s);
    for (size_t i = 0; i < arr->count; i++)
        n += snprintf(out + n, 2048 - (size_t)n, "%" PRId32 ",", ((const int32_t *)arr->items)[i]);
    snprintf(out + n, 2048 - (size_t)n, "] %s %.17g %.9g", json_object_to_json_string_ext(j, JSON_PLAIN), d5,
             (double)f5);
    return out;
}

static char *r_string(MIXED_PARAMS) { return describe("plain", MIXED_ARGS); }

static char *r_string_call(th_call *call, MIXED_PARAMS) { return describe(th_call_tool_name(call), MIXED_ARGS); }

/* One set of argument values. */
typedef struct vals {
    int8_t a0; double d0; uint8_t a1; float f0; int16_t a2; double d1; uint16_t a3; float f1; int32_t a4;
    double d2; uint32_t a5; float f2; int64_t a6; double d3; uint64_t a7; float f3; int a8; double d4;
    long a9; float f4; bool a10; const char *s; int32_t items[4]; size_t count; int64_t k; double d5; float f5;
} vals;

static const vals sets[] = {
    {1, 1.5, 2, 2.5f, 3, 3.25, 4, 4.75f, 5, 6.125, 7, 8.5f, 9, 10.5, 11, 12.25f, 13, 14.5, 15, 16.5f, true,
     "hello", {1, 2, 3}, 3, 42, 17.75, 18.5f},
    {INT8_MIN, -DBL_MAX, UINT8_MAX, -FLT_MAX, INT16_MIN, DBL_MIN, UINT16_MAX, FLT_MIN, INT32_MIN, -0.0,
     UINT32_MAX, 1e-30f, INT64_MIN, 1e300, UINT64_MAX, -3.4e38f, INT_MIN, 0.1, LONG_MAX, 0.1f, false,
     "\xc3\xa9t\xc3\xa9 \xe2\x82\xac", {INT32_MIN, INT32_MAX, 0, -1}, 4, -9, -2.2250738585072014e-308, 1e-38f},
    {INT8_MAX, -1.0, 0, -0.0f, INT16_MAX, -2.5, 0, -1.0f, INT32_MAX, 1.0 / 3.0, 0, 1.0f / 3.0f, INT64_MAX, -1e-300,
     (uint64_t)INT64_MAX + 1, 3.4e38f, INT_MAX, -7.0, LONG_MIN, -0.5f, true, "", {0}, 0, 0, 123456789.125, -2.0f},
};

static uint64_t hash_of(const vals *v, json_object *j)
{
    th_array arr = {v->count, v->items};
    return hash_all(v->a0, v->d0, v->a1, v->f0, v->a2, v->d1, v->a3, v->f1, v->a4, v->d2, v->a5, v->f2, v->a6,
                    v->d3, v->a7, v->f3, v->a8, v->d4, v->a9, v->f4, v->a10, v->s, &arr, j, v->d5, v->f5);
}

/* The C argument list for set V with object J. */
#define DIRECT_ARGS(v, j)                                                                                      \
    (v)->a0, (v)->d0, (v)->a1, (v)->f0, (v)->a2, (v)->d1, (v)->a3, (v)->f1, (v)->a4, (v)->d2, (v)->a5,         \
        (v)->f2, (v)->a6, (v)->d3, (v)->a7, (v)->f3, (v)->a8, (v)->d4, (v)->a9, (v)->f4, (v)->a10, (v)->s,     \
        &(th_array){(v)->count, (v)->items}, (j), (v)->d5, (v)->f5
#define DIRECT(fn, v, j) fn(DIRECT_ARGS(v, j))

/* The arguments object for V, as JSON text (doubles print exactly). */
static char *args_of(const vals *v)
{
    json_object *o = json_object_new_object(), *arr = json_object_new_array(), *j = json_object_new_object();
    json_object_object_add(o, "a0", json_object_new_int(v->a0));
    json_object_object_add(o, "d0", json_object_new_double(v->d0));
    json_object_object_add(o, "a1", json_object_new_int(v->a1));
    json_object_object_add(o, "f0", json_object_new_double(v->f0));
    json_object_object_add(o, "a2", json_object_new_int(v->a2));
    json_object_object_add(o, "d1", json_object_new_double(v->d1));
    json_object_object_add(o, "a3", json_object_new_int(v->a3));
    json_object_object_add(o, "f1", json_object_new_double(v->f1));
    json_object_object_add(o, "a4", json_object_new_int64(v->a4));
    json_object_object_add(o, "d2", json_object_new_double(v->d2));
    json_object_object_add(o, "a5", json_object_new_uint64(v->a5));
    json_object_object_add(o, "f2", json_object_new_double(v->f2));
    json_object_object_add(o, "a6", json_object_new_int64(v->a6));
    json_object_object_add(o, "d3", json_object_new_double(v->d3));
    json_object_object_add(o, "a7", json_object_new_uint64(v->a7));
    json_object_object_add(o, "f3", json_object_new_double(v->f3));
    json_object_object_add(o, "a8", json_object_new_int64(v->a8));
    json_object_object_add(o, "d4", json_object_new_double(v->d4));
    json_object_object_add(o, "a9", json_object_new_int64(v->a9));
    json_object_object_add(o, "f4", json_object_new_double(v->f4));
    json_object_object_add(o, "a10", json_object_new_boolean(v->a10));
    json_object_object_add(o, "s", json_object_new_string(v->s));
    for (size_t i = 0; i < v->count; i++)
        json_object_array_add(arr, json_object_new_int64(v->items[i]));
    json_object_object_add(o, "arr", arr);
    json_object_object_add(j, "k", json_object_new_int64(v->k));
    json_object_object_add(o, "j", j);
    json_object_object_add(o, "d5", json_object_new_double(v->d5));
    json_object_object_add(o, "f5", json_object_new_double(v->f5));
    char *text = strdup(json_object_to_json_string_ext(o, JSON_PLAIN));
    json_object_put(o);
    return text;
}

static json_object *j_of(const vals *v)
{
    json_object *j = json_object_new_object();
    json_object_object_add(j, "k", json_object_new_int64(v->k));
    return j;
}

static prepared prepare_mixed(void (*fn)(void), th_type result, unsigned flags)
{
    th_function f = {.fn = fn, .result = result, .flags = flags, .n_params = N_MIXED, .params = mixed_params};
    return prepare_ok(&f);
}

/* Call FN through the host with set V; return the result object. */
static json_object *via_host(void (*fn)(void), th_type result, unsigned flags, const vals *v)
{
    prepared p = prepare_mixed(fn, result, flags);
    char *args = args_of(v);
    json_object *r = invoke(&p, args);
    free(args);
    prepared_free(&p);
    ck_assert_msg(!result_is_error(r), "error: %s", json_object_to_json_string_ext(r, JSON_PLAIN));
    return r;
}

static json_object *structured_result(json_object *r)
{
    json_object *sc, *v;
    ck_assert(json_object_object_get_ex(r, "structuredContent", &sc));
    ck_assert(json_object_object_get_ex(sc, "result", &v));
    return v;
}

/* Integer results: text and structuredContent against the direct value. */
static void check_signed(void (*fn)(void), th_type t, const vals *v, int64_t direct)
{
    json_object *r = via_host(fn, t, 0, v);
    char text[32];
    snprintf(text, sizeof text, "%" PRId64, direct);
    ck_assert_str_eq(result_text(r, 0), text);
    ck_assert(json_object_get_int64(structured_result(r)) == direct);
    json_object_put(r);
}

static void check_unsigned(void (*fn)(void), th_type t, const vals *v, uint64_t direct)
{
    json_object *r = via_host(fn, t, 0, v);
    char text[32];
    snprintf(text, sizeof text, "%" PRIu64, direct);
    ck_assert_str_eq(result_text(r, 0), text);
    ck_assert(json_object_get_uint64(structured_result(r)) == direct);
    json_object_put(r);
}

#define FNP(f) ((void (*)(void))(f))

START_TEST(test_mixed_every_return_type)
{
    const vals *v = &sets[_i];
    json_object *j = j_of(v);
    json_object *r;

    /* The argument values themselves, printed by the function. */
    char *direct = DIRECT(r_string, v, j);
    r = via_host(FNP(r_string), TH_T_STRING, TH_FN_FREE_RESULT, v);
    ck_assert_str_eq(result_text(r, 0), direct);
    ck_assert_str_eq(json_object_get_string(structured_result(r)), direct);
    json_object_put(r);
    free(direct);

    check_signed(FNP(r_int8), TH_T_INT8, v, DIRECT(r_int8, v, j));
    check_signed(FNP(r_int16), TH_T_INT16, v, DIRECT(r_int16, v, j));
    check_signed(FNP(r_int32), TH_T_INT32, v, DIRECT(r_int32, v, j));
    check_signed(FNP(r_int64), TH_T_INT64, v, DIRECT(r_int64, v, j));
    check_signed(FNP(r_int), TH_T_INT, v, DIRECT(r_int, v, j));
    check_signed(FNP(r_long), TH_T_LONG, v, DIRECT(r_long, v, j));
    check_unsigned(FNP(r_uint8), TH_T_UINT8, v, DIRECT(r_uint8, v, j));
    check_unsigned(FNP(r_uint16), TH_T_UINT16, v, DIRECT(r_uint16, v, j));
    check_unsigned(FNP(r_uint32), TH_T_UINT32, v, DIRECT(r_uint32, v, j));
    check_unsigned(FNP(r_uint64), TH_T_UINT64, v, DIRECT(r_uint64, v, j));

    bool b = DIRECT(r_bool, v, j);
    r = via_host(FNP(r_bool), TH_T_BOOL, 0, v);
    ck_assert_str_eq(result_text(r, 0), b ? "true" : "false");
    ck_assert(json_object_get_boolean(structured_result(r)) == b);
    json_object_put(r);

    /* Floating results: the text reads back as exactly the direct value. */
    float f = DIRECT(r_float, v, j);
    r = via_host(FNP(r_float), TH_T_FLOAT, 0, v);
    ck_assert(strtof(result_text(r, 0), NULL) == f);
    ck_assert((float)json_object_get_double(structured_result(r)) == f);
    json_object_put(r);

    double d = DIRECT(r_double, v, j);
    r = via_host(FNP(r_double), TH_T_DOUBLE, 0, v);
    ck_assert(strtod(result_text(r, 0), NULL) == d);
    ck_assert(json_object_get_double(structured_result(r)) == d);
    json_object_put(r);

    json_object *o = DIRECT(r_json, v, j);
    r = via_host(FNP(r_json), TH_T_JSON, 0, v);
    ck_assert(json_object_equal(structured_result(r), o));
    ck_assert_str_eq(result_text(r, 0), json_object_to_json_string_ext(o, JSON_PLAIN));
    json_object_put(r);
    json_object_put(o);

    void_hash = 0;
    r = via_host(FNP(r_void), TH_T_VOID, 0, v);
    ck_assert_uint_eq(result_blocks(r), 0);
    ck_assert(void_hash == hash_of(v, j));
    ck_assert(void_hash != 0);
    json_object_put(r);

    json_object_put(j);
}
END_TEST

START_TEST(test_mixed_with_call_first)
{
    /* th_call * takes the first integer register and shifts the rest. */
    const vals *v = &sets[_i];
    json_object *j = j_of(v);
    prepared p = prepare_mixed(FNP(r_string_call), TH_T_STRING, TH_FN_WANTS_CALL | TH_FN_FREE_RESULT);
    char *args = args_of(v);
    json_object *r = invoke(&p, args);
    th_call *call = th_call_new("t", NULL);
    char *direct = r_string_call(call, DIRECT_ARGS(v, j));
    ck_assert(!result_is_error(r));
    ck_assert_str_eq(result_text(r, 0), direct);
    free(direct);
    th_call_free(call);
    json_object_put(r);
    free(args);
    prepared_free(&p);
    json_object_put(j);
}
END_TEST

START_TEST(test_distinct_sets_differ)
{
    /* The comparison above could pass with constant results; it does not. */
    json_object *j0 = j_of(&sets[0]), *j1 = j_of(&sets[1]), *j2 = j_of(&sets[2]);
    uint64_t h0 = hash_of(&sets[0], j0), h1 = hash_of(&sets[1], j1), h2 = hash_of(&sets[2], j2);
    ck_assert(h0 != h1 && h1 != h2 && h0 != h2);
    json_object_put(j0);
    json_object_put(j1);
    json_object_put(j2);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("typed_abi");
    TCase *tc = tcase_create("mixed");
    int n = (int)(sizeof sets / sizeof sets[0]);
    tcase_add_loop_test(tc, test_mixed_every_return_type, 0, n);
    tcase_add_loop_test(tc, test_mixed_with_call_first, 0, n);
    tcase_add_test(tc, test_distinct_sets_differ);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN(suite)
