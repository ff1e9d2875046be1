/* SPDX-License-Identifier: MIT */
/*
** fuzz/fuzz_typed.c: a libFuzzer harness for typed calls: the input's first
** byte picks a th_function from a table whose parameter lists cover every
** th_type and every array type; the rest is the call's "arguments" JSON.
*/
/*
** `make fuzz` builds and runs it (see doc/HACKING.md, Fuzzing). Each dummy C
** function checks what it receives (strings NUL-free and readable, array
** items readable, enums from the list) and records that it ran. A crash, a
** sanitizer report or an abort() below is a bug:
**   - a function that did not run must leave an isError result (a refusal
**     is an error, never silence or undefined behaviour);
**   - for an arguments object, the function runs exactly when the
**     generated input schema accepts the arguments: the schema the client
**     sees and the conversion the host does must agree (but for the two
**     refusals beyond_schema names);
**   - the finished result must be UTF-8 JSON that parses back.
*/
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base/util.h"
#include "call/callctx.h"
#include "call/typed.h"
#include "fuzz_json.h"
#include "schema/jsonschema.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NAME "fuzz_typed"

static int called;

static void bad(const char *what)
{
    fz_die(NAME, "the function received", what, strlen(what));
}

/* Read every byte of S, as a function would. */
static size_t touch_string(const char *s)
{
    if (!s)
        bad("a NULL string");
    size_t n = strlen(s);
    if (!th_utf8_valid(s, n))
        bad("a string that is not UTF-8");
    return n;
}

static size_t touch_array(const th_array *a, size_t item_size)
{
    if (!a)
        return 0;
    if (a->count && !a->items)
        bad("an array without items");
    volatile unsigned char sum = 0;
    const unsigned char *p = a->items;
    for (size_t i = 0; i < a->count * item_size; i++)
        sum ^= p[i];
    (void)sum;
    return a->count;
}

static size_t touch_strings(const th_array *a, const char *const *enums)
{
    if (!a)
        return 0;
    touch_array(a, sizeof(const char *));
    const char *const *s = a->items;
    for (size_t i = 0; i < a->count; i++) {
        touch_string(s[i]);
        if (enums) {
            size_t k = 0;
            while (enums[k] && strcmp(enums[k], s[i]) != 0)
                k++;
            if (!enums[k])
                bad("a string outside its enum");
        }
    }
    return a->count;
}

static const char *const modes[] = {"fast", "slow", "caf\xc3\xa9", "", NULL};

static bool f_signed(bool b, int8_t i8, int16_t i16, int32_t i32, int64_t i64)
{
    called++;
    return b ^ ((i8 + i16 + (int64_t)i32 + (i64 & 0xff)) & 1);
}

static uint64_t f_unsigned(uint8_t u8, uint16_t u16, uint32_t u32, uint64_t u64)
{
    called++;
    return u64 - u32 + u16 - u8; /* wraps: unsigned, defined */
}

static double f_floating(int i, long l, float f, double d)
{
    called++;
    return (double)i + (double)l + (double)f * 2 + d * 4; /* may overflow to inf */
}

static const char *f_strings(const char *mode, const char *text, const char *opt)
{
    called++;
    size_t k = 0;
    while (modes[k] && strcmp(modes[k], mode) != 0)
        k++;
    if (!modes[k])
        bad("a string outside its enum");
    touch_string(text);
    if (opt)
        touch_string(opt);
    return *text == 'n' ? NULL : text;
}

static json_object *f_json(json_object *obj, json_object *opt)
{
    called++;
    if (!obj || !json_object_is_type(obj, json_type_object) || (opt && !json_object_is_type(opt, json_type_object)))
        bad("a json argument that is not an object");
    /* A default is a fresh copy per call, so changing it is allowed. */
    if (opt)
        json_object_object_add(opt, "seen", json_object_new_boolean(1));
    if (json_object_object_length(obj) == 1)
        return NULL;
    return json_object_get(obj); /* the host owns the result */
}

static void f_arrays_signed(const th_array *b, const th_array *i8, const th_array *i16, const th_array *i32,
                            const th_array *i64)
{
    called++;
    touch_array(b, sizeof(bool));
    touch_array(i8, 1);
    touch_array(i16, 2);
    touch_array(i32, 4);
    touch_array(i64, 8);
}

static void f_arrays_unsigned(const th_array *u8, const th_array *u16, const th_array *u32, const th_array *u64,
                              const th_array *i, const th_array *l)
{
    called++;
    touch_array(u8, 1);
    touch_array(u16, 2);
    touch_array(u32, 4);
    touch_array(u64, 8);
    touch_array(i, sizeof(int));
    touch_array(l, sizeof(long));
}

static float f_arrays_other(const th_array *fs, const th_array *ds, const th_array *ms, const th_array *ss)
{
    called++;
    touch_array(fs, sizeof(float));
    touch_array(ds, sizeof(double));
    touch_strings(ms, modes);
    touch_strings(ss, NULL);
    float sum = 0;
    for (size_t i = 0; fs && i < fs->count; i++)
        sum += ((const float *)fs->items)[i]; /* may overflow to inf */
    return sum;
}

static void f_call(th_call *call, int32_t n, const char *s)
{
    called++;
    touch_string(s);
    if (n < 0)
        th_call_error(call, "negative: %d", n);
    else if (n == 1)
        th_call_text(call, s);
}

static int8_t f_none(void)
{
    called++;
    return -8;
}

static char *f_owned(int n, const char *s)
{
    called++;
    size_t len = touch_string(s);
    if (n == 0)
        return NULL;
    char *out = malloc(len + 1);
    if (out)
        memcpy(out, s, len + 1);
    return out;
}

/* One echo per remaining result type, so that every th_type is returned. */
#define ECHO(fname, ctype)        \
    static ctype fname(ctype v)   \
    {                             \
        called++;                 \
        return v;                 \
    }
ECHO(e_int16, int16_t)
ECHO(e_int32, int32_t)
ECHO(e_int64, int64_t)
ECHO(e_uint8, uint8_t)
ECHO(e_uint16, uint16_t)
ECHO(e_uint32, uint32_t)
ECHO(e_int, int)
ECHO(e_long, long)
ECHO(e_bool, bool)

#define N(arr) (sizeof(arr) / sizeof(th_param))
#define FN(f) ((void (*)(void))(f))

static const th_param p_signed[] = {
    {.name = "b", .type = TH_T_BOOL},
    {.name = "i8", .type = TH_T_INT8},
    {.name = "i16", .type = TH_T_INT16, .optional = true, .default_json = "-32768"},
    {.name = "i32", .type = TH_T_INT32, .optional = true},
    {.name = "i64", .type = TH_T_INT64, .optional = true, .default_json = "9223372036854775807"},
};
static const th_param p_unsigned[] = {
    {.name = "u8", .type = TH_T_UINT8},
    {.name = "u16", .type = TH_T_UINT16, .optional = true, .default_json = "65535"},
    {.name = "u32", .type = TH_T_UINT32},
    {.name = "u64", .type = TH_T_UINT64, .optional = true, .default_json = "18446744073709551615"},
};
static const th_param p_floating[] = {
    {.name = "i", .type = TH_T_INT},
    {.name = "l", .type = TH_T_LONG, .optional = true},
    {.name = "f", .type = TH_T_FLOAT, .optional = true, .default_json = "1.5e38"},
    {.name = "d", .type = TH_T_DOUBLE},
};
static const th_param p_strings[] = {
    {.name = "mode", .type = TH_T_STRING, .enum_values = modes},
    {.name = "text", .type = TH_T_STRING, .description = "any text"},
    {.name = "opt", .type = TH_T_STRING, .optional = true, .default_json = "\"d\\u00e9faut\""},
};
static const th_param p_json[] = {
    {.name = "obj", .type = TH_T_JSON},
    {.name = "opt", .type = TH_T_JSON, .optional = true, .default_json = "{\"k\":[1,{\"x\":null}]}"},
};
static const th_param p_arrays_signed[] = {
    {.name = "b", .type = TH_T_ARRAY | TH_T_BOOL, .optional = true},
    {.name = "i8", .type = TH_T_ARRAY | TH_T_INT8, .optional = true, .default_json = "[-128,127]"},
    {.name = "i16", .type = TH_T_ARRAY | TH_T_INT16},
    {.name = "i32", .type = TH_T_ARRAY | TH_T_INT32, .optional = true},
    {.name = "i64", .type = TH_T_ARRAY | TH_T_INT64, .optional = true, .default_json = "[]"},
};
static const th_param p_arrays_unsigned[] = {
    {.name = "u8", .type = TH_T_ARRAY | TH_T_UINT8, .optional = true},
    {.name = "u16", .type = TH_T_ARRAY | TH_T_UINT16, .optional = true},
    {.name = "u32", .type = TH_T_ARRAY | TH_T_UINT32, .optional = true},
    {.name = "u64", .type = TH_T_ARRAY | TH_T_UINT64, .optional = true, .default_json = "[18446744073709551615]"},
    {.name = "i", .type = TH_T_ARRAY | TH_T_INT},
    {.name = "l", .type = TH_T_ARRAY | TH_T_LONG, .optional = true},
};
static const th_param p_arrays_other[] = {
    {.name = "fs", .type = TH_T_ARRAY | TH_T_FLOAT},
    {.name = "ds", .type = TH_T_ARRAY | TH_T_DOUBLE, .optional = true},
    {.name = "ms", .type = TH_T_ARRAY | TH_T_STRING, .optional = true, .enum_values = modes,
     .default_json = "[\"fast\"]"},
    {.name = "ss", .type = TH_T_ARRAY | TH_T_STRING, .optional = true},
};
static const th_param p_call[] = {
    {.name = "n", .type = TH_T_INT32},
    {.name = "s", .type = TH_T_STRING, .optional = true, .default_json = "\"x\""},
};
static const th_param p_owned[] = {
    {.name = "n", .type = TH_T_INT},
    {.name = "s", .type = TH_T_STRING},
};
#define ECHO_PARAMS(var, t) static const th_param var[] = {{.name = "v", .type = (t)}};
ECHO_PARAMS(p_int16, TH_T_INT16)
ECHO_PARAMS(p_int32, TH_T_INT32)
ECHO_PARAMS(p_int64, TH_T_INT64)
ECHO_PARAMS(p_uint8, TH_T_UINT8)
ECHO_PARAMS(p_uint16, TH_T_UINT16)
ECHO_PARAMS(p_uint32, TH_T_UINT32)
ECHO_PARAMS(p_int, TH_T_INT)
ECHO_PARAMS(p_long, TH_T_LONG)
ECHO_PARAMS(p_bool, TH_T_BOOL)

/* What the first byte selects (modulo the count). */
static const th_function table[] = {
    {FN(f_signed), TH_T_BOOL, 0, N(p_signed), p_signed, NULL, NULL, {0}},
    {FN(f_unsigned), TH_T_UINT64, 0, N(p_unsigned), p_unsigned, NULL, NULL, {0}},
    {FN(f_floating), TH_T_DOUBLE, 0, N(p_floating), p_floating, "a sum", NULL, {0}},
    {FN(f_strings), TH_T_STRING, 0, N(p_strings), p_strings, NULL, NULL, {0}},
    {FN(f_json), TH_T_JSON, 0, N(p_json), p_json, NULL, NULL, {0}},
    {FN(f_arrays_signed), TH_T_VOID, 0, N(p_arrays_signed), p_arrays_signed, NULL, NULL, {0}},
    {FN(f_arrays_unsigned), TH_T_VOID, 0, N(p_arrays_unsigned), p_arrays_unsigned, NULL, NULL, {0}},
    {FN(f_arrays_other), TH_T_FLOAT, 0, N(p_arrays_other), p_arrays_other, NULL, NULL, {0}},
    {FN(f_call), TH_T_VOID, TH_FN_WANTS_CALL, N(p_call), p_call, NULL, NULL, {0}},
    {FN(f_none), TH_T_INT8, 0, 0, NULL, NULL, NULL, {0}},
    {FN(f_owned), TH_T_STRING, TH_FN_FREE_RESULT, N(p_owned), p_owned, NULL, NULL, {0}},
    {FN(e_int16), TH_T_INT16, 0, 1, p_int16, NULL, NULL, {0}},
    {FN(e_int32), TH_T_INT32, 0, 1, p_int32, NULL, NULL, {0}},
    {FN(e_int64), TH_T_INT64, 0, 1, p_int64, NULL, NULL, {0}},
    {FN(e_uint8), TH_T_UINT8, 0, 1, p_uint8, NULL, NULL, {0}},
    {FN(e_uint16), TH_T_UINT16, 0, 1, p_uint16, NULL, NULL, {0}},
    {FN(e_uint32), TH_T_UINT32, 0, 1, p_uint32, NULL, NULL, {0}},
    {FN(e_int), TH_T_INT, 0, 1, p_int, NULL, NULL, {0}},
    {FN(e_long), TH_T_LONG, 0, 1, p_long, NULL, NULL, {0}},
    {FN(e_bool), TH_T_BOOL, 0, 1, p_bool, NULL, NULL, {0}},
};
#define N_FUNCTIONS (sizeof table / sizeof *table)

static th_typed *typed[N_FUNCTIONS];
static th_schema *schemas[N_FUNCTIONS];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    for (size_t i = 0; i < N_FUNCTIONS; i++) {
        th_err err = {0};
        json_object *in = NULL, *out = NULL;
        char msg[512];
        if (th_typed_prepare(&table[i], &typed[i], &in, &out, &err) != TH_OK)
            fz_die(NAME, "a table entry is refused", err.msg, strlen(err.msg));
        if (!(schemas[i] = th_schema_compile(in, msg, sizeof msg)))
            fz_die(NAME, "a generated input schema does not compile", msg, strlen(msg));
        json_object_put(in);
        json_object_put(out);
    }
    return 0;
}

/*
** True when V holds what the conversion refuses though a schema's "number"
** or "string" admits it, by design (doc/plugins.md, typed tools): a number past
** a double's range (1e400; JSON has no infinity) and a string holding
** U+0000 (a C string would end there). Neither is written into every
** schema as a bound or a pattern, so the differential check skips them.
*/
static bool beyond_schema(json_object *v)
{
    switch (json_object_get_type(v)) {
    case json_type_double:
        return !isfinite(json_object_get_double(v));
    case json_type_string:
        return strlen(json_object_get_string(v)) != (size_t)json_object_get_string_len(v);
    case json_type_array:
        for (size_t i = 0; i < json_object_array_length(v); i++)
            if (beyond_schema(json_object_array_get_idx(v, i)))
                return true;
        return false;
    case json_type_object: {
        json_object_object_foreach(v, key, val) {
            (void)key;
            if (beyond_schema(val))
                return true;
        }
        return false;
    }
    default:
        return false;
    }
}

/* The finished result must go on the wire as is. */
static void check_result(json_object *res, const char *text, size_t size)
{
    size_t len;
    const char *s = json_object_to_json_string_length(res, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE,
                                                      &len);
    if (!th_utf8_valid(s, len))
        fz_die(NAME, "a result that is not UTF-8", text, size);
    json_object *back;
    if (!fz_parse_args(s, len, &back) || !back)
        fz_die(NAME, "a result that does not parse back", s, len);
    json_object_put(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t which = data[0] % N_FUNCTIONS;
    const char *text = (const char *)data + 1;
    json_object *args;
    if (!fz_parse_args(text, size - 1, &args))
        return 0;
    /* As the protocol layer does: absent or null arguments are {}. */
    int expect = -1;
    if (!args || (json_object_is_type(args, json_type_object) && !beyond_schema(args))) {
        json_object *obj = args ? json_object_get(args) : json_object_new_object();
        expect = th_schema_validate(schemas[which], obj, NULL) == 0;
        json_object_put(obj);
    }
    th_call *call = th_call_new("fuzzed", NULL);
    if (!call)
        fz_die(NAME, "out of memory", text, size - 1);
    called = 0;
    th_rc rc = th_typed_invoke(typed[which], call, args);
    if (rc != TH_OK)
        fz_die(NAME, "th_typed_invoke did not return TH_OK", th_rc_name(rc), strlen(th_rc_name(rc)));
    json_object *res = th_call_finish(call, rc);
    json_object *is_error = NULL;
    bool err = res && json_object_object_get_ex(res, "isError", &is_error) && json_object_get_boolean(is_error);
    if (!res)
        fz_die(NAME, "no result", text, size - 1);
    if (!called && !err)
        fz_die(NAME, "the function did not run, yet the result is not an error", text, size - 1);
    if (expect >= 0 && expect != called)
        fz_die(NAME, called ? "the function ran on arguments its schema refuses"
                            : "arguments its schema accepts were refused",
               text, size - 1);
    check_result(res, text, size - 1);
    json_object_put(res);
    th_call_free(call);
    json_object_put(args);
    return 0;
}
