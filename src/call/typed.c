/* SPDX-License-Identifier: MIT */
/*
** call/typed.c: plain C functions as tools. At registration it checks a
** th_function, generates its schemas, converts defaults and prepares the
** libffi CIF; per call it converts JSON arguments, calls through ffi_call and
** turns the return value into a text block plus structuredContent.
*/
#include "config.h"

#include <errno.h>
#include <ffi.h>
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call/callctx.h"
#include "call/result.h"
#include "call/typed.h"
#include "schema/jsonschema.h"

/* TH_T_BOOL travels as a uint8; a C bool of another size would be misread. */
_Static_assert(sizeof(bool) == 1, "toolhost passes bool as one byte");

/* One C argument or array element. Every member starts at offset 0, so the
** first ffi_type.size bytes are the value whichever member was written. */
typedef union slot {
    bool b;
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    float f;
    double d;
    const void *p;
} slot;

typedef enum kind { K_NONE, K_BOOL, K_INT, K_FLOAT, K_STRING, K_JSON } kind;

typedef struct tinfo {
    const char *name; /* for messages: "int8", "double", ... */
    kind kind;
    bool is_signed;
    ffi_type *ffi;
    int64_t min; /* K_INT range */
    uint64_t max;
} tinfo;

static const tinfo types[] = {
    [TH_T_VOID] = {"void", K_NONE, false, &ffi_type_void, 0, 0},
    [TH_T_BOOL] = {"bool", K_BOOL, false, &ffi_type_uint8, 0, 0},
    [TH_T_INT8] = {"int8", K_INT, true, &ffi_type_sint8, INT8_MIN, INT8_MAX},
    [TH_T_INT16] = {"int16", K_INT, true, &ffi_type_sint16, INT16_MIN, INT16_MAX},
    [TH_T_INT32] = {"int32", K_INT, true, &ffi_type_sint32, INT32_MIN, INT32_MAX},
    [TH_T_INT64] = {"int64", K_INT, true, &ffi_type_sint64, INT64_MIN, INT64_MAX},
    [TH_T_UINT8] = {"uint8", K_INT, false, &ffi_type_uint8, 0, UINT8_MAX},
    [TH_T_UINT16] = {"uint16", K_INT, false, &ffi_type_uint16, 0, UINT16_MAX},
    [TH_T_UINT32] = {"uint32", K_INT, false, &ffi_type_uint32, 0, UINT32_MAX},
    [TH_T_UINT64] = {"uint64", K_INT, false, &ffi_type_uint64, 0, UINT64_MAX},
    [TH_T_INT] = {"int", K_INT, true, &ffi_type_sint, INT_MIN, INT_MAX},
    [TH_T_LONG] = {"long", K_INT, true, &ffi_type_slong, LONG_MIN, LONG_MAX},
    [TH_T_FLOAT] = {"float", K_FLOAT, true, &ffi_type_float, 0, 0},
    [TH_T_DOUBLE] = {"double", K_FLOAT, true, &ffi_type_double, 0, 0},
    [TH_T_STRING] = {"string", K_STRING, false, &ffi_type_pointer, 0, 0},
    [TH_T_JSON] = {"json", K_JSON, false, &ffi_type_pointer, 0, 0},
};

/* The JSON Schema type of each kind. */
static const char *const schema_type[] = {
    [K_BOOL] = "boolean", [K_INT] = "integer", [K_FLOAT] = "number",
    [K_STRING] = "string", [K_JSON] = "object",
};

/* What a JSON value is called in "got ..." messages. */
static const char *const json_word[] = {
    [json_type_null] = "null",     [json_type_boolean] = "boolean", [json_type_double] = "number",
    [json_type_int] = "integer",   [json_type_object] = "object",   [json_type_array] = "array",
    [json_type_string] = "string",
};

static const char *word_of(json_object *v)
{
    return json_word[json_object_get_type(v)];
}

/* The element type's info, or NULL when T is not a th_type at all. */
static const tinfo *type_info(unsigned t)
{
    return t < sizeof types / sizeof types[0] && types[t].name ? &types[t] : NULL;
}

typedef struct tparam {
    char *name;
    char *description; /* NULL when none */
    const tinfo *ti;   /* the element type for arrays */
    bool array;
    bool optional;
    char **enums; /* NULL-terminated copy, NULL when none */
    size_t n_enums;
    json_object *def; /* parsed default_json; NULL when none */
    slot def_slot;    /* def converted: the argument when it is absent */
    th_array def_array;
    void *def_items; /* owned storage behind def_array */
    th_constraints lim; /* copied; lim.pattern points at pattern */
    char *pattern;      /* owned copy, NULL when none */
} tparam;

struct th_typed {
    void (*fn)(void);
    const tinfo *result;
    unsigned flags;
    void *user_data; /* the tool's, for TH_FN_WANTS_USER_DATA */
    bool result_array; /* RESULT is the element type of a th_array * result */
    tparam *fields;    /* named results (name, description, ti), or NULL */
    size_t n_fields;
    size_t n_params;
    tparam *params;
    ffi_cif cif;
    ffi_type *atypes[TH_TYPED_MAX_PARAMS + 2 + TH_TYPED_MAX_FIELDS]; /* call, user_data, params, fields */
};

/* ---------------------------------------------------------------------
** Numbers as text: the shortest form that reads back as the same value,
** laid out as JavaScript prints it. A plugin may call setlocale(), and
** printf and strtod follow LC_NUMERIC, so this thread borrows the C locale
** meanwhile (and only the digits of printf's text are used).
** ------------------------------------------------------------------- */

static pthread_once_t c_numeric_once = PTHREAD_ONCE_INIT;
static locale_t c_numeric; /* (locale_t)0 if newlocale failed */

static void make_c_numeric(void)
{
    c_numeric = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
}

/* Switch this thread to the C numeric locale; returns what to restore. */
static locale_t numeric_begin(void)
{
    pthread_once(&c_numeric_once, make_c_numeric);
    return c_numeric ? uselocale(c_numeric) : (locale_t)0;
}

static void numeric_end(locale_t old)
{
    if (old)
        uselocale(old);
}

/* Should newlocale have failed: a comma radix becomes a point. */
static void fix_radix(char *buf)
{
    char *comma = strchr(buf, ',');
    if (comma)
        *comma = '.';
}

/* Messages about arguments quote a number in C's shortest %g form, with a
** ".0" on integral values ("2.5", "1e+30", "1.8446744073709552e+19"): it
** names the value without suggesting more precision than it has. */
static void format_arg_double(double d, char *buf, size_t len)
{
    locale_t old = numeric_begin();
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, len, "%.*g", prec, d);
        if (strtod(buf, NULL) == d)
            break;
    }
    numeric_end(old);
    fix_radix(buf);
    if (isfinite(d) && !strpbrk(buf, ".e"))
        strncat(buf, ".0", len - strlen(buf) - 1);
}

static void format_arg_float(float f, char *buf, size_t len)
{
    locale_t old = numeric_begin();
    for (int prec = 1; prec <= 9; prec++) {
        snprintf(buf, len, "%.*g", prec, (double)f);
        if (strtof(buf, NULL) == f)
            break;
    }
    numeric_end(old);
    fix_radix(buf);
    if (isfinite(f) && !strpbrk(buf, ".e"))
        strncat(buf, ".0", len - strlen(buf) - 1);
}

/* D's shortest round-trip digits and decimal exponent, as "%.*e" finds
** them: FLOAT_WIDTH reads back through strtof, so a float keeps its own
** shortest form ("0.33333334", not the double's 17 digits). */
static void shortest_digits(double d, bool float_width, char *digits, size_t dlen, int *exp10)
{
    char sci[40];
    locale_t old = numeric_begin();
    for (int prec = 0; prec <= 16; prec++) {
        snprintf(sci, sizeof sci, "%.*e", prec, d);
        if (float_width ? strtof(sci, NULL) == (float)d : strtod(sci, NULL) == d)
            break;
    }
    numeric_end(old);
    /* "d[.ddd]e[+-]x", with '.' or the locale's radix character. */
    size_t n = 0;
    const char *c = sci;
    for (; *c && *c != 'e'; c++)
        if (*c >= '0' && *c <= '9' && n + 1 < dlen)
            digits[n++] = *c;
    while (n > 1 && digits[n - 1] == '0')
        n--;
    digits[n] = '\0';
    *exp10 = *c == 'e' ? atoi(c + 1) : 0;
}

/* JavaScript's Number.prototype.toString (ECMA-262 Number::toString):
** what a client author sees for the same value in their own language,
** "10", "0.1", "1e+21", "1.5e-7", never "1e+01" or "5.0". */
static void format_js(double d, bool float_width, char *buf, size_t len)
{
    if (isnan(d)) {
        snprintf(buf, len, "nan");
        return;
    }
    if (isinf(d)) {
        snprintf(buf, len, d < 0 ? "-inf" : "inf");
        return;
    }
    if (d == 0) {
        snprintf(buf, len, "0");
        return;
    }
    char digits[24], out[48];
    int e;
    shortest_digits(fabs(d), float_width, digits, sizeof digits, &e);
    int k = (int)strlen(digits);
    int n = e + 1; /* the value is 0.DIGITS times 10^n */
    size_t o = 0;
    if (d < 0)
        out[o++] = '-';
    if (k <= n && n <= 21) { /* 3000 */
        for (int i = 0; i < n; i++)
            out[o++] = i < k ? digits[i] : '0';
    } else if (0 < n && n <= 21) { /* 2.75 */
        for (int i = 0; i < k; i++) {
            if (i == n)
                out[o++] = '.';
            out[o++] = digits[i];
        }
    } else if (-6 < n && n <= 0) { /* 0.001 */
        out[o++] = '0';
        out[o++] = '.';
        for (int i = 0; i < -n; i++)
            out[o++] = '0';
        for (int i = 0; i < k; i++)
            out[o++] = digits[i];
    } else { /* 1.5e-7, 1e+21 */
        for (int i = 0; i < k; i++) {
            if (i == 1)
                out[o++] = '.';
            out[o++] = digits[i];
        }
        o += (size_t)snprintf(out + o, sizeof out - o, "e%c%d", n - 1 < 0 ? '-' : '+', abs(n - 1));
    }
    out[o] = '\0';
    snprintf(buf, len, "%s", out);
}

static void format_double(double d, char *buf, size_t len)
{
    format_js(d, false, buf, len);
}

static void format_float(float f, char *buf, size_t len)
{
    format_js((double)f, true, buf, len);
}

/* ---------------------------------------------------------------------
** Converting one JSON value to a C value. On refusal WHY gets the reason
** without the parameter: "expected integer, got string".
** ------------------------------------------------------------------- */

/* An exact integer: VALUE is S when NEG, else U. */
typedef struct wide {
    bool neg;
    int64_t s;
    uint64_t u;
} wide;

static void range_text(const tinfo *ti, char *buf, size_t len)
{
    if (ti->max > INT64_MAX)
        snprintf(buf, len, "%" PRId64 "..%" PRIu64, ti->min, ti->max);
    else
        snprintf(buf, len, "%" PRId64 "..%" PRId64, ti->min, (int64_t)ti->max);
}

static bool out_of_range(const tinfo *ti, const char *value, th_buf *why)
{
    char range[64];
    range_text(ti, range, sizeof range);
    th_buf_printf(why, "%s is out of range for %s (%s)", value, ti->name, range);
    return false;
}

/* The text of a double that carries the integer literal it was read from
** (json_object_new_double_s: a parser keeps "99999999999999999999999"
** that way), else NULL. Its double may have rounded into range. */
static const char *integer_literal(json_object *v)
{
    const char *text = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
    const char *p = text && *text == '-' ? text + 1 : text;
    if (!p || !*p)
        return NULL;
    for (; *p; p++)
        if (*p < '0' || *p > '9')
            return NULL;
    return text;
}

/* LITERAL (an integer literal) exactly, refused when it passes 64 bits. */
static bool literal_wide(const tinfo *ti, const char *literal, wide *w, th_buf *why)
{
    char shown[72];
    snprintf(shown, sizeof shown, "%.64s%s", literal, strlen(literal) > 64 ? "..." : "");
    errno = 0;
    if (*literal == '-') {
        intmax_t s = strtoimax(literal, NULL, 10);
        if (errno == ERANGE || s < INT64_MIN)
            return out_of_range(ti, shown, why);
        w->neg = s < 0;
        w->s = (int64_t)s;
        w->u = 0;
    } else {
        uintmax_t u = strtoumax(literal, NULL, 10);
        if (errno == ERANGE || u > UINT64_MAX)
            return out_of_range(ti, shown, why);
        w->neg = false;
        w->s = 0;
        w->u = (uint64_t)u;
    }
    return true;
}

/* JSON integers arrive as int64 or, above INT64_MAX, uint64; doubles count
** when integral (2.0), as JSON Schema's "integer" says. */
static bool to_wide(const tinfo *ti, json_object *v, wide *w, th_buf *why)
{
    char text[40];
    if (json_object_is_type(v, json_type_int)) {
        int64_t s = json_object_get_int64(v);
        w->neg = s < 0;
        w->s = s;
        /* json-c clamps get_int64 of a uint64 at INT64_MAX; ask again. */
        w->u = s < 0 ? 0 : s == INT64_MAX ? json_object_get_uint64(v) : (uint64_t)s;
        return true;
    }
    if (!json_object_is_type(v, json_type_double)) {
        th_buf_printf(why, "expected integer, got %s", word_of(v));
        return false;
    }
    const char *literal = integer_literal(v);
    if (literal)
        return literal_wide(ti, literal, w, why);
    double d = json_object_get_double(v);
    format_arg_double(d, text, sizeof text);
    if (!isfinite(d) || d != floor(d)) {
        th_buf_printf(why, "expected integer, got %s", text);
        return false;
    }
    if (d < -0x1p63 || d >= 0x1p64)
        return out_of_range(ti, text, why);
    w->neg = d < 0;
    w->s = d < 0 ? (int64_t)d : 0;
    w->u = d < 0 ? 0 : (uint64_t)d;
    return true;
}

static bool to_int(const tinfo *ti, json_object *v, slot *out, th_buf *why)
{
    wide w = {false, 0, 0};
    if (!to_wide(ti, v, &w, why))
        return false;
    if (w.neg ? w.s < ti->min : w.u > ti->max) {
        char text[32];
        if (w.neg)
            snprintf(text, sizeof text, "%" PRId64, w.s);
        else
            snprintf(text, sizeof text, "%" PRIu64, w.u);
        return out_of_range(ti, text, why);
    }
    /* The value fits, so its two's complement low bytes are the C value. */
    uint64_t bits = w.neg ? (uint64_t)w.s : w.u;
    switch (ti->ffi->size) {
    case 1: out->u8 = (uint8_t)bits; break;
    case 2: out->u16 = (uint16_t)bits; break;
    case 4: out->u32 = (uint32_t)bits; break;
    default: out->u64 = bits; break;
    }
    return true;
}

static bool to_float(const tinfo *ti, json_object *v, slot *out, th_buf *why)
{
    double d;
    if (json_object_is_type(v, json_type_int)) {
        int64_t s = json_object_get_int64(v);
        d = s == INT64_MAX ? (double)json_object_get_uint64(v) : (double)s;
    } else if (json_object_is_type(v, json_type_double)) {
        d = json_object_get_double(v);
    } else {
        th_buf_printf(why, "expected number, got %s", word_of(v));
        return false;
    }
    char text[40];
    format_arg_double(d, text, sizeof text);
    if (!isfinite(d)) {
        th_buf_printf(why, "expected number, got %s", text);
        return false;
    }
    if (ti->ffi == &ffi_type_float) {
        if (fabs(d) > FLT_MAX) {
            char max[40];
            format_arg_float(FLT_MAX, max, sizeof max);
            th_buf_printf(why, "%s is out of range for float (-%s..%s)", text, max, max);
            return false;
        }
        out->f = (float)d;
    } else {
        out->d = d;
    }
    return true;
}

/* Append S to WHY as a quoted string cut to about 60 bytes at a UTF-8
** boundary: a message should not echo a huge argument. */
static void quote(th_buf *why, const char *s)
{
    size_t n = strlen(s), cut = n;
    if (cut > 60) {
        cut = 60;
        while (cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80)
            cut--;
    }
    th_buf_printf(why, "\"%.*s%s\"", (int)cut, s, cut < n ? "..." : "");
}

static bool to_string(const tparam *p, json_object *v, slot *out, th_buf *why)
{
    if (!json_object_is_type(v, json_type_string)) {
        th_buf_printf(why, "expected string, got %s", word_of(v));
        return false;
    }
    const char *s = json_object_get_string(v);
    size_t len = (size_t)json_object_get_string_len(v);
    if (strlen(s) != len) {
        /* A C string would silently end at the NUL. */
        th_buf_printf(why, "expected string without NUL characters, got one with NUL at offset %zu",
                      strlen(s));
        return false;
    }
    if (p->enums) {
        for (size_t i = 0; i < p->n_enums; i++)
            if (strcmp(p->enums[i], s) == 0)
                goto ok;
        th_buf_printf(why, "expected one of ");
        for (size_t i = 0; i < p->n_enums; i++) {
            quote(why, p->enums[i]);
            th_buf_printf(why, ", ");
        }
        th_buf_printf(why, "got ");
        quote(why, s);
        return false;
    }
ok:
    out->p = s;
    return true;
}

/* Convert V to parameter P's element type. */
static bool to_scalar(const tparam *p, json_object *v, slot *out, th_buf *why)
{
    switch (p->ti->kind) {
    case K_BOOL:
        if (!json_object_is_type(v, json_type_boolean)) {
            th_buf_printf(why, "expected boolean, got %s", word_of(v));
            return false;
        }
        out->b = json_object_get_boolean(v);
        return true;
    case K_INT:
        return to_int(p->ti, v, out, why);
    case K_FLOAT:
        return to_float(p->ti, v, out, why);
    case K_STRING:
        return to_string(p, v, out, why);
    case K_JSON:
        if (!json_object_is_type(v, json_type_object)) {
            th_buf_printf(why, "expected object, got %s", word_of(v));
            return false;
        }
        out->p = v;
        return true;
    case K_NONE:
        break;
    }
    return false;
}

/*
** Convert V for parameter P into OUT. An array's elements go into a new
** block stored in *ITEMS (caller frees) described by *ARR, and OUT points at
** ARR. On refusal *BAD_INDEX is the failing element (SIZE_MAX: V itself).
** Element pointers (strings) borrow from V.
*/
static bool convert(const tparam *p, json_object *v, slot *out, th_array *arr, void **items,
                    size_t *bad_index, th_buf *why)
{
    *bad_index = SIZE_MAX;
    *items = NULL;
    if (!p->array)
        return to_scalar(p, v, out, why);
    if (!json_object_is_type(v, json_type_array)) {
        th_buf_printf(why, "expected array, got %s", word_of(v));
        return false;
    }
    size_t n = json_object_array_length(v), size = p->ti->ffi->size;
    char *block = n ? calloc(n, size) : NULL;
    if (n && !block) {
        th_buf_printf(why, "out of memory converting %zu items", n);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        slot s;
        if (!to_scalar(p, json_object_array_get_idx(v, i), &s, why)) {
            *bad_index = i;
            free(block);
            return false;
        }
        memcpy(block + i * size, &s, size);
    }
    arr->count = n;
    arr->items = block;
    *items = block;
    out->p = arr;
    return true;
}

/* ---------------------------------------------------------------------
** Registration: checks, defaults, schemas, CIF.
** ------------------------------------------------------------------- */

static void param_clear(tparam *p)
{
    free(p->name);
    free(p->description);
    if (p->enums)
        for (size_t i = 0; i < p->n_enums; i++)
            free(p->enums[i]);
    free(p->enums);
    json_object_put(p->def);
    free(p->def_items);
    free(p->pattern);
}

void th_typed_set_user_data(th_typed *t, void *user_data)
{
    if (t)
        t->user_data = user_data;
}

void th_typed_free(th_typed *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n_params; i++)
        param_clear(&t->params[i]);
    for (size_t i = 0; i < t->n_fields; i++)
        param_clear(&t->fields[i]);
    free(t->params);
    free(t->fields);
    free(t);
}

static bool name_ok(const char *s)
{
    if (!(*s >= 'a' && *s <= 'z'))
        return false;
    for (s++; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return false;
    return true;
}

/* Parse JSON text strictly (RFC 8259: no NaN, no single quotes, nothing
** after the value); NULL with ERR set on failure. */
static json_object *parse_default(const char *name, const char *text, th_err *err)
{
    json_tokener *tok = json_tokener_new();
    if (!tok) {
        th_err_set(err, TH_ERR_NOMEM, "out of memory parsing the default of parameter '%s'", name);
        return NULL;
    }
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    size_t len = strlen(text);
    /* Including the NUL tells json-c the input ends there: a number has
     * no closing character of its own. */
    json_object *v = json_tokener_parse_ex(tok, text, (int)len + 1);
    enum json_tokener_error e = json_tokener_get_error(tok);
    if (e == json_tokener_continue)
        e = json_tokener_error_parse_eof;
    size_t end = json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    if (e != json_tokener_success || end < len) {
        th_err_set(err, TH_ERR_VALUE, "Tool parameter '%s' default_json is not valid JSON: %s at offset %zu",
                   name, e != json_tokener_success ? json_tokener_error_desc(e) : "trailing characters", end);
        json_object_put(v);
        return NULL;
    }
    if (!v) {
        /* Strict JSON "null": the absent default is already NULL/zero. */
        th_err_set(err, TH_ERR_VALUE,
                   "Tool parameter '%s' default_json is invalid: null (leave default_json NULL instead)", name);
    }
    return v;
}

static th_rc copy_enums(tparam *p, const th_param *src, th_err *err)
{
    size_t n = 0;
    while (src->enum_values[n])
        n++;
    if (n == 0)
        return th_err_set(err, TH_ERR_VALUE, "Tool parameter '%s' enum_values is empty", p->name);
    p->enums = calloc(n + 1, sizeof *p->enums);
    if (!p->enums)
        return th_err_set(err, TH_ERR_NOMEM, "out of memory copying parameter '%s'", p->name);
    for (size_t i = 0; i < n; i++) {
        const char *v = src->enum_values[i];
        if (!th_utf8_valid(v, strlen(v)))
            return th_err_set(err, TH_ERR_VALUE, "Tool parameter '%s' enum value %zu is not valid UTF-8",
                              p->name, i);
        for (size_t j = 0; j < i; j++)
            if (strcmp(p->enums[j], v) == 0)
                return th_err_set(err, TH_ERR_VALUE, "Tool parameter '%s' enum value \"%s\" is listed twice",
                                  p->name, v);
        p->enums[i] = strdup(v);
        p->n_enums = i + 1;
        if (!p->enums[i])
            return th_err_set(err, TH_ERR_NOMEM, "out of memory copying parameter '%s'", p->name);
    }
    return TH_OK;
}

/* Which constraint bits each kind takes. */
static const unsigned kind_constraints[] = {
    [K_INT] = TH_C_MINIMUM | TH_C_MAXIMUM,
    [K_FLOAT] = TH_C_MINIMUM | TH_C_MAXIMUM,
    [K_STRING] = TH_C_MIN_LENGTH | TH_C_MAX_LENGTH | TH_C_PATTERN,
};
#define KNOWN_CONSTRAINTS (TH_C_MINIMUM | TH_C_MAXIMUM | TH_C_MIN_LENGTH | TH_C_MAX_LENGTH | TH_C_PATTERN)

/* The lowest and highest value of a numeric element type. */
static void type_range(const tinfo *ti, double *lo, double *hi)
{
    if (ti->kind == K_INT) {
        *lo = (double)ti->min;
        *hi = (double)ti->max;
    } else if (ti->ffi == &ffi_type_float) {
        *lo = -(double)FLT_MAX;
        *hi = (double)FLT_MAX;
    } else {
        *lo = -DBL_MAX;
        *hi = DBL_MAX;
    }
}

/* Check C against P's type and copy it into P->lim. */
static th_rc copy_constraints(tparam *p, const th_constraints *c, th_err *err)
{
    const char *tn = p->ti->name, *arr = p->array ? "array of " : "";
    unsigned allowed = p->ti->kind < sizeof kind_constraints / sizeof kind_constraints[0]
                           ? kind_constraints[p->ti->kind] : 0;
    if (c->set & ~KNOWN_CONSTRAINTS)
        return th_err_set(err, TH_ERR_VALUE, "Tool parameter '%s' constraints set 0x%x has unknown bits", p->name,
                          c->set);
    static const struct {
        unsigned bit;
        const char *keyword;
    } names[] = {{TH_C_MINIMUM, "minimum"}, {TH_C_MAXIMUM, "maximum"}, {TH_C_MIN_LENGTH, "minLength"},
                 {TH_C_MAX_LENGTH, "maxLength"}, {TH_C_PATTERN, "pattern"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if ((c->set & names[i].bit) && !(allowed & names[i].bit))
            return th_err_set(err, TH_ERR_VALUE, "Tool parameter '%s' has constraint %s, which does not apply to %s%s",
                              p->name, names[i].keyword, arr, tn);
    double lo, hi;
    type_range(p->ti, &lo, &hi);
    if ((c->set & TH_C_MINIMUM) && (!isfinite(c->minimum) || c->minimum < lo || c->minimum > hi))
        return th_err_set(err, TH_ERR_VALUE, "Tool parameter '%s' minimum %g does not fit %s (%g..%g)", p->name,
                          c->minimum, tn, lo, hi);
    if ((c->set & TH_C_MAXIMUM) && (!isfinite(c->maximum) || c->maximum < lo || c->maximum > hi))
        return th_err_set(err, TH_ERR_VALUE, "Tool parameter '%s' maximum %g does not fit %s (%g..%g)", p->name,
                          c->maximum, tn, lo, hi);
    if ((c->set & TH_C_MINIMUM) && (c->set & TH_C_MAXIMUM) && c->minimum > c->maximum)
        return th_err_set(err, TH_ERR_VALUE, "Tool parameter '%s' minimum %g is above its maximum %g", p->name,
                          c->minimum, c->maximum);
    if ((c->set & TH_C_MIN_LENGTH) && (c->set & TH_C_MAX_LENGTH) && c->min_length > c->max_length)
        return th_err_set(err, TH_ERR_VALUE, "Tool parameter '%s' minLength %zu is above its maxLength %zu", p->name,
                          c->min_length, c->max_length);
    if ((c->set & (TH_C_MIN_LENGTH | TH_C_MAX_LENGTH)) &&
        ((c->set & TH_C_MIN_LENGTH ? c->min_length : 0) > INT64_MAX ||
         (c->set & TH_C_MAX_LENGTH ? c->max_length : 0) > INT64_MAX))
        return th_err_set(err, TH_ERR_VALUE, "Tool parameter '%s' length bound is too large", p->name);
    p->lim = *c;
    p->lim.pattern = NULL;
    if (c->set & TH_C_PATTERN) {
        if (!c->pattern)
            return th_err_set(err, TH_ERR_VALUE, "Tool parameter '%s' sets TH_C_PATTERN but pattern is NULL", p->name);
        if (!th_utf8_valid(c->pattern, strlen(c->pattern)))
            return th_err_set(err, TH_ERR_VALUE, "Tool parameter '%s' pattern is not valid UTF-8", p->name);
        /* Compiled here, alone, so the refusal names the parameter. */
        json_object *probe = json_object_new_object();
        char msg[512] = "";
        th_schema *sc = NULL;
        if (!probe || json_object_object_add(probe, "pattern", json_object_new_string(c->pattern)) != 0 ||
            !(sc = th_schema_compile(probe, msg, sizeof msg))) {
            json_object_put(probe);
            if (!msg[0])
                return th_err_set(err, TH_ERR_NOMEM, "out of memory checking parameter '%s'", p->name);
            return th_err_set(err, TH_ERR_VALUE, "Tool parameter '%s' pattern /%s/ does not compile: %s", p->name,
                              c->pattern, msg);
        }
        th_schema_free(sc);
        json_object_put(probe);
        if (!(p->pattern = strdup(c->pattern)))
            return th_err_set(err, TH_ERR_NOMEM, "out of memory copying parameter '%s'", p->name);
        p->lim.pattern = p->pattern;
    }
    return TH_OK;
}

static json_object *param_schema(const tparam *p);

/* P's default against P's own schema, so a default that breaks its
** constraints is refused at registration rather than failing every call. */
static th_rc check_default_limits(const tparam *p, th_err *err)
{
    json_object *js = param_schema(p);
    char msg[512] = "", *why = NULL;
    th_schema *sc = js ? th_schema_compile(js, msg, sizeof msg) : NULL;
    th_rc rc = TH_OK;
    if (!sc)
        rc = js ? th_err_set(err, TH_ERR_VALUE, "Tool parameter '%s' schema does not compile: %s", p->name, msg)
                : th_err_set(err, TH_ERR_NOMEM, "out of memory checking parameter '%s'", p->name);
    else if (th_schema_validate(sc, p->def, &why) > 0)
        rc = th_err_set(err, TH_ERR_VALUE, "Tool parameter '%s' default_json breaks its constraints: %s", p->name,
                        why ? why : "");
    free(why);
    th_schema_free(sc);
    json_object_put(js);
    return rc;
}

/* Check SRC (parameter number I) and fill P. DONE are the I parameters
** already checked, for the duplicate rule. */
static th_rc check_param(tparam *p, const th_param *src, size_t i, const tparam *done, th_err *err)
{
    if (!src->name)
        return th_err_set(err, TH_ERR_VALUE, "Tool parameter %zu has no name", i);
    if (!name_ok(src->name))
        return th_err_set(err, TH_ERR_VALUE,
                          "Tool parameter name '%s' invalid (must match ^[a-z][a-z0-9_]*$)", src->name);
    if (strlen(src->name) > TH_TYPED_PARAM_NAME_MAX)
        return th_err_set(err, TH_ERR_VALUE, "Tool parameter name '%s' too long (max %d chars)", src->name,
                          TH_TYPED_PARAM_NAME_MAX);
    for (size_t j = 0; j < i; j++)
        if (strcmp(done[j].name, src->name) == 0)
            return th_err_set(err, TH_ERR_VALUE, "Tool parameter '%s' is listed twice", src->name);
    p->name = strdup(src->name);
    if (!p->name)
        return th_err_set(err, TH_ERR_NOMEM, "out of memory copying parameter '%s'", src->name);

    unsigned type = (unsigned)src->type;
    p->array = (type & TH_T_ARRAY) != 0;
    p->ti = type_info(type & ~(unsigned)TH_T_ARRAY);
    if (!p->ti)
        return th_err_set(err, TH_ERR_VALUE, "Tool parameter '%s' type 0x%x is not a th_type", p->name, type);
    if (p->ti->kind == K_NONE)
        return th_err_set(err, TH_ERR_VALUE, "Tool parameter '%s' type %svoid is not supported (void is a result type only)",
                          p->name, p->array ? "array of " : "");
    if (p->array && p->ti->kind == K_JSON)
        return th_err_set(err, TH_ERR_VALUE,
                          "Tool parameter '%s' type array of json is not supported "
                          "(array items must be bool, integer, floating or string types)",
                          p->name);

    if (src->description) {
        if (!th_utf8_valid(src->description, strlen(src->description)))
            return th_err_set(err, TH_ERR_VALUE, "Tool parameter '%s' description is not valid UTF-8", p->name);
        p->description = strdup(src->description);
        if (!p->description)
            return th_err_set(err, TH_ERR_NOMEM, "out of memory copying parameter '%s'", p->name);
    }

    if (src->enum_values) {
        if (p->ti->kind != K_STRING)
            return th_err_set(err, TH_ERR_VALUE, "Tool parameter '%s' has enum_values but is not a string (%s%s)",
                              p->name, p->array ? "array of " : "", p->ti->name);
        th_rc rc = copy_enums(p, src, err);
        if (rc != TH_OK)
            return rc;
    }

    if (src->constraints) {
        th_rc rc = copy_constraints(p, src->constraints, err);
        if (rc != TH_OK)
            return rc;
    }

    p->optional = src->optional;
    if (src->default_json) {
        if (!src->optional)
            return th_err_set(err, TH_ERR_VALUE,
                              "Tool parameter '%s' has a default but is required (set optional to use it)",
                              p->name);
        p->def = parse_default(p->name, src->default_json, err);
        if (!p->def)
            return err ? err->code : TH_ERR_VALUE;
        th_buf why = {0};
        size_t bad;
        bool ok = convert(p, p->def, &p->def_slot, &p->def_array, &p->def_items, &bad, &why);
        if (ok)
            return p->lim.set ? check_default_limits(p, err) : TH_OK;
        th_rc rc;
        if (bad != SIZE_MAX)
            rc = th_err_set(err, TH_ERR_VALUE, "Tool parameter '%s' default_json is invalid: item %zu: %s",
                            p->name, bad, why.data ? why.data : "");
        else
            rc = th_err_set(err, TH_ERR_VALUE, "Tool parameter '%s' default_json is invalid: %s", p->name,
                            why.data ? why.data : "");
        free(why.data);
        return rc;
    }
    return TH_OK;
}

/* Add KEY: VALUE to OBJ; false when VALUE is NULL (allocation failed). */
static bool put(json_object *obj, const char *key, json_object *value)
{
    if (!value)
        return false;
    if (json_object_object_add(obj, key, value) != 0) {
        json_object_put(value);
        return false;
    }
    return true;
}

static json_object *int_json(const wide *w)
{
    if (w->neg)
        return json_object_new_int64(w->s);
    return w->u > INT64_MAX ? json_object_new_uint64(w->u) : json_object_new_int64((int64_t)w->u);
}

/* The keywords after "type" that an element type adds. */
/* A bound as JSON: an integer when it is one (2, not 2.0). */
static json_object *bound_json(double v)
{
    if (v == floor(v) && v >= -9007199254740992.0 && v <= 9007199254740992.0)
        return json_object_new_int64((int64_t)v);
    return json_object_new_double(v);
}

static bool put_type_details(json_object *s, const tinfo *ti, char *const *enums, size_t n_enums,
                             const th_constraints *lim)
{
    bool ok = true;
    /* A parameter's own bounds replace its type's: they are never wider. */
    if (ti->kind == K_INT) {
        wide lo = {ti->min < 0, ti->min, ti->min < 0 ? 0 : (uint64_t)ti->min};
        wide hi = {false, 0, ti->max};
        ok = put(s, "minimum", lim->set & TH_C_MINIMUM ? bound_json(lim->minimum) : int_json(&lo)) &&
             put(s, "maximum", lim->set & TH_C_MAXIMUM ? bound_json(lim->maximum) : int_json(&hi));
    }
    /* A float refuses what it cannot hold: say so where clients look, or a
     * client that follows the schema is refused all the same. */
    if (ti->kind == K_FLOAT) {
        bool f = ti->ffi == &ffi_type_float;
        if (ok && (lim->set & TH_C_MINIMUM))
            ok = put(s, "minimum", bound_json(lim->minimum));
        else if (ok && f)
            ok = put(s, "minimum", json_object_new_double(-(double)FLT_MAX));
        if (ok && (lim->set & TH_C_MAXIMUM))
            ok = put(s, "maximum", bound_json(lim->maximum));
        else if (ok && f)
            ok = put(s, "maximum", json_object_new_double((double)FLT_MAX));
    }
    if (ok && (lim->set & TH_C_MIN_LENGTH))
        ok = put(s, "minLength", json_object_new_int64((int64_t)lim->min_length));
    if (ok && (lim->set & TH_C_MAX_LENGTH))
        ok = put(s, "maxLength", json_object_new_int64((int64_t)lim->max_length));
    if (ok && (lim->set & TH_C_PATTERN))
        ok = put(s, "pattern", json_object_new_string(lim->pattern));
    if (ok && enums) {
        json_object *e = json_object_new_array();
        ok = put(s, "enum", e);
        for (size_t i = 0; ok && i < n_enums; i++)
            ok = json_object_array_add(e, json_object_new_string(enums[i])) == 0;
    }
    return ok;
}

/* {"type": ..., "description": ..., <details or items>, "default": ...} */
static json_object *param_schema(const tparam *p)
{
    json_object *s = json_object_new_object();
    if (!s)
        return NULL;
    bool ok = put(s, "type", json_object_new_string(p->array ? "array" : schema_type[p->ti->kind]));
    if (ok && p->description)
        ok = put(s, "description", json_object_new_string(p->description));
    if (ok && p->array) {
        json_object *items = json_object_new_object();
        ok = put(s, "items", items) && put(items, "type", json_object_new_string(schema_type[p->ti->kind])) &&
             put_type_details(items, p->ti, p->enums, p->n_enums, &p->lim);
    } else if (ok) {
        ok = put_type_details(s, p->ti, p->enums, p->n_enums, &p->lim);
    }
    if (ok && p->def) {
        json_object *copy = NULL;
        ok = json_object_deep_copy(p->def, &copy, NULL) == 0 && put(s, "default", copy);
    }
    if (!ok) {
        json_object_put(s);
        return NULL;
    }
    return s;
}

static json_object *input_schema(const th_typed *t)
{
    json_object *s = json_object_new_object(), *props = json_object_new_object(),
                *req = json_object_new_array();
    bool ok = s && props && req && put(s, "type", json_object_new_string("object")) &&
              put(s, "properties", json_object_get(props));
    for (size_t i = 0; ok && i < t->n_params; i++) {
        ok = put(props, t->params[i].name, param_schema(&t->params[i]));
        if (ok && !t->params[i].optional)
            ok = json_object_array_add(req, json_object_new_string(t->params[i].name)) == 0;
    }
    /* An empty "required" says nothing, and draft-04-era validators that
     * some clients still use reject it; leave it out. */
    if (ok && json_object_array_length(req) > 0)
        ok = put(s, "required", json_object_get(req));
    ok = ok && put(s, "additionalProperties", json_object_new_boolean(0));
    json_object_put(props);
    json_object_put(req);
    if (!ok) {
        json_object_put(s);
        return NULL;
    }
    return s;
}

/* {"type":"object","properties":{"result":R},"required":["result"]}. A
** string or JSON result may be NULL, which is sent as null. */
static json_object *output_schema(const tinfo *ti, bool array, const char *description)
{
    json_object *s = json_object_new_object(), *props = json_object_new_object(), *r = json_object_new_object(),
                *req = json_object_new_array();
    bool ok = s && props && r && req && put(s, "type", json_object_new_string("object")) &&
              put(s, "properties", json_object_get(props)) && put(props, "result", json_object_get(r)) &&
              put(s, "required", json_object_get(req)) &&
              json_object_array_add(req, json_object_new_string("result")) == 0;
    static const th_constraints none = {0};
    if (ok && (array || ti->kind == K_STRING || ti->kind == K_JSON)) {
        json_object *tlist = json_object_new_array();
        ok = put(r, "type", tlist) &&
             json_object_array_add(tlist, json_object_new_string(array ? "array" : schema_type[ti->kind])) == 0 &&
             json_object_array_add(tlist, json_object_new_string("null")) == 0;
    } else if (ok) {
        ok = put(r, "type", json_object_new_string(schema_type[ti->kind]));
    }
    if (ok && description)
        ok = put(r, "description", json_object_new_string(description));
    if (ok && array) {
        json_object *items = json_object_new_object();
        ok = put(r, "items", items) && put(items, "type", json_object_new_string(schema_type[ti->kind])) &&
             put_type_details(items, ti, NULL, 0, &none);
    } else {
        ok = ok && put_type_details(r, ti, NULL, 0, &none);
    }
    json_object_put(props);
    json_object_put(r);
    json_object_put(req);
    if (!ok) {
        json_object_put(s);
        return NULL;
    }
    return s;
}

/* Check the named results of FN and fill T->fields. */
static th_rc check_fields(th_typed *t, const th_function *fn, th_err *err)
{
    size_t n = 0;
    while (fn->result_fields[n].name)
        if (++n > TH_TYPED_MAX_FIELDS)
            return th_err_set(err, TH_ERR_VALUE, "Tool function has more than %d result_fields (or no entry with a "
                              "NULL name to end them)", TH_TYPED_MAX_FIELDS);
    if (n == 0)
        return th_err_set(err, TH_ERR_VALUE, "Tool function result_fields is empty (leave it NULL for one result)");
    if (fn->result != TH_T_VOID)
        return th_err_set(err, TH_ERR_VALUE, "Tool function has result_fields, so its result must be TH_T_VOID");
    if (!(t->fields = calloc(n, sizeof *t->fields)))
        return th_err_set(err, TH_ERR_NOMEM, "out of memory copying result_fields");
    for (size_t i = 0; i < n; i++) {
        const th_param *src = &fn->result_fields[i];
        tparam *f = &t->fields[i];
        t->n_fields = i + 1;
        if (!name_ok(src->name) || strlen(src->name) > TH_TYPED_PARAM_NAME_MAX)
            return th_err_set(err, TH_ERR_VALUE, "Tool result field name '%s' invalid (must match ^[a-z][a-z0-9_]*$, "
                              "at most %d chars)", src->name, TH_TYPED_PARAM_NAME_MAX);
        for (size_t j = 0; j < i; j++)
            if (strcmp(t->fields[j].name, src->name) == 0)
                return th_err_set(err, TH_ERR_VALUE, "Tool result field '%s' is listed twice", src->name);
        f->ti = type_info((unsigned)src->type);
        if (!f->ti || f->ti->kind == K_NONE || f->ti->kind == K_JSON)
            return th_err_set(err, TH_ERR_VALUE, "Tool result field '%s' type 0x%x is not supported (bool, integer, "
                              "floating or string types)", src->name, (unsigned)src->type);
        if (src->optional || src->default_json || src->enum_values || src->constraints)
            return th_err_set(err, TH_ERR_VALUE, "Tool result field '%s' may only have a name, a type and a "
                              "description", src->name);
        if (src->description && !th_utf8_valid(src->description, strlen(src->description)))
            return th_err_set(err, TH_ERR_VALUE, "Tool result field '%s' description is not valid UTF-8", src->name);
        if (!(f->name = strdup(src->name)) || (src->description && !(f->description = strdup(src->description))))
            return th_err_set(err, TH_ERR_NOMEM, "out of memory copying result field '%s'", src->name);
    }
    return TH_OK;
}

/* {"type":"object","properties":{FIELD: schema...},"required":[every field]}. */
static json_object *fields_schema(const th_typed *t)
{
    static const th_constraints none = {0};
    json_object *s = json_object_new_object(), *props = json_object_new_object(), *req = json_object_new_array();
    bool ok = s && props && req && put(s, "type", json_object_new_string("object")) &&
              put(s, "properties", json_object_get(props)) && put(s, "required", json_object_get(req));
    for (size_t i = 0; ok && i < t->n_fields; i++) {
        const tparam *f = &t->fields[i];
        json_object *fs = json_object_new_object();
        ok = put(props, f->name, fs) && json_object_array_add(req, json_object_new_string(f->name)) == 0;
        if (ok && f->ti->kind == K_STRING) {
            json_object *tlist = json_object_new_array();
            ok = put(fs, "type", tlist) && json_object_array_add(tlist, json_object_new_string("string")) == 0 &&
                 json_object_array_add(tlist, json_object_new_string("null")) == 0;
        } else if (ok) {
            ok = put(fs, "type", json_object_new_string(schema_type[f->ti->kind]));
        }
        if (ok && f->description)
            ok = put(fs, "description", json_object_new_string(f->description));
        ok = ok && put_type_details(fs, f->ti, NULL, 0, &none);
    }
    json_object_put(props);
    json_object_put(req);
    if (!ok) {
        json_object_put(s);
        return NULL;
    }
    return s;
}

static th_rc check_function(const th_function *fn, th_err *err)
{
    if (!fn->fn)
        return th_err_set(err, TH_ERR_VALUE, "Tool function pointer (th_function.fn) must not be NULL");
    if (fn->n_params > TH_TYPED_MAX_PARAMS)
        return th_err_set(err, TH_ERR_VALUE, "Tool function has too many parameters: %zu (max %d)", fn->n_params,
                          TH_TYPED_MAX_PARAMS);
    if (fn->n_params > 0 && !fn->params)
        return th_err_set(err, TH_ERR_VALUE, "Tool function params is NULL but n_params is %zu", fn->n_params);
    bool array = ((unsigned)fn->result & TH_T_ARRAY) != 0;
    const tinfo *r = type_info((unsigned)fn->result & ~(unsigned)TH_T_ARRAY);
    if (!r)
        return th_err_set(err, TH_ERR_VALUE, "Tool function result type 0x%x is not supported", (unsigned)fn->result);
    if (array && (r->kind == K_NONE || r->kind == K_JSON))
        return th_err_set(err, TH_ERR_VALUE,
                          "Tool function result type array of %s is not supported "
                          "(array items must be bool, integer, floating or string types)",
                          r->name);
    if (fn->flags & ~(TH_FN_WANTS_CALL | TH_FN_FREE_RESULT | TH_FN_WANTS_USER_DATA))
        return th_err_set(err, TH_ERR_VALUE, "Tool function flags 0x%x has unknown bits", fn->flags);
    if ((fn->flags & TH_FN_FREE_RESULT) && r->kind != K_STRING && !array && !fn->result_fields)
        return th_err_set(err, TH_ERR_VALUE,
                          "Tool function flag TH_FN_FREE_RESULT needs a string or array result, not %s", r->name);
    if (fn->result_description && !th_utf8_valid(fn->result_description, strlen(fn->result_description)))
        return th_err_set(err, TH_ERR_VALUE, "Tool function result_description is not valid UTF-8");
    return TH_OK;
}

th_rc th_typed_prepare(const th_function *fn, th_typed **out, json_object **in_schema, json_object **out_schema,
                       th_err *err)
{
    if (!fn || !out || !in_schema || !out_schema)
        return th_err_set(err, TH_ERR_MISUSE, "th_typed_prepare: NULL argument");
    th_rc rc = check_function(fn, err);
    if (rc != TH_OK)
        return rc;

    json_object *is = NULL, *os = NULL;
    th_typed *t = calloc(1, sizeof *t);
    if (!t || (fn->n_params && !(t->params = calloc(fn->n_params, sizeof *t->params))))
        goto nomem;
    t->fn = fn->fn;
    t->flags = fn->flags;
    t->result_array = ((unsigned)fn->result & TH_T_ARRAY) != 0;
    t->result = type_info((unsigned)fn->result & ~(unsigned)TH_T_ARRAY);
    for (size_t i = 0; i < fn->n_params; i++) {
        t->n_params = i + 1; /* so th_typed_free clears what this one got */
        rc = check_param(&t->params[i], &fn->params[i], i, t->params, err);
        if (rc != TH_OK)
            goto fail;
    }
    if (fn->result_fields && (rc = check_fields(t, fn, err)) != TH_OK)
        goto fail;

    size_t nargs = 0;
    if (t->flags & TH_FN_WANTS_CALL)
        t->atypes[nargs++] = &ffi_type_pointer;
    if (t->flags & TH_FN_WANTS_USER_DATA)
        t->atypes[nargs++] = &ffi_type_pointer;
    for (size_t i = 0; i < t->n_params; i++)
        t->atypes[nargs++] = t->params[i].array ? &ffi_type_pointer : t->params[i].ti->ffi;
    for (size_t i = 0; i < t->n_fields; i++)
        t->atypes[nargs++] = &ffi_type_pointer;
    ffi_status st = ffi_prep_cif(&t->cif, FFI_DEFAULT_ABI, (unsigned)nargs,
                                 t->result_array ? &ffi_type_pointer : t->result->ffi, t->atypes);
    if (st != FFI_OK) {
        rc = th_err_set(err, TH_ERR_VALUE, "Tool function cannot be called through libffi (ffi_prep_cif status %d)",
                        (int)st);
        goto fail;
    }

    is = input_schema(t);
    if (!is)
        goto nomem;
    if (t->n_fields ? !(os = fields_schema(t))
                    : t->result->kind != K_NONE && !(os = output_schema(t->result, t->result_array, fn->result_description)))
        goto nomem;
    *out = t;
    *in_schema = is;
    *out_schema = os;
    return TH_OK;

nomem:
    rc = th_err_set(err, TH_ERR_NOMEM, "out of memory preparing a typed function");
fail:
    json_object_put(is);
    th_typed_free(t);
    return rc;
}

/* ---------------------------------------------------------------------
** Calls.
** ------------------------------------------------------------------- */

static const tparam *find_param(const th_typed *t, const char *name)
{
    for (size_t i = 0; i < t->n_params; i++)
        if (strcmp(t->params[i].name, name) == 0)
            return &t->params[i];
    return NULL;
}

/* Start another problem line in MSG; false when memory ran out. */
static bool next_line(th_buf *msg)
{
    return msg->len == 0 || th_buf_append(msg, "\n", 1);
}

/* What the function returned, as libffi stored it: integer types narrower
** than ffi_arg come back widened to it. */
typedef union retval {
    ffi_arg a;
    ffi_sarg s;
    uint64_t u64;
    int64_t i64;
    float f;
    double d;
    void *p;
} retval;

static wide read_int(const tinfo *ti, const retval *r)
{
    wide w = {false, 0, 0};
    int64_t s;
    if (ti->is_signed) {
        s = ti->ffi->size < sizeof(ffi_arg) ? (int64_t)r->s : ti->ffi->size == 4 ? (int64_t)(int32_t)r->a : r->i64;
        w.neg = s < 0;
        w.s = s;
        w.u = s < 0 ? 0 : (uint64_t)s;
    } else {
        w.u = ti->ffi->size < sizeof(ffi_arg) ? (uint64_t)r->a : ti->ffi->size == 4 ? (uint64_t)(uint32_t)r->a : r->u64;
    }
    return w;
}

/* Item I of the array at BASE (element type TI) as JSON; NULL with WHY set
** when it cannot be sent (or memory ran out: WHY stays empty). */
static json_object *item_json(const tinfo *ti, const void *base, size_t i, char *why, size_t whylen)
{
    char text[48];
    switch (ti->kind) {
    case K_BOOL:
        return json_object_new_boolean(((const bool *)base)[i]);
    case K_INT: {
        retval r = {0};
        const char *at = (const char *)base + i * ti->ffi->size;
        /* Widened as libffi widens a return value, so read_int applies. */
        if (ti->ffi->size == 8)
            memcpy(&r.u64, at, 8);
        else if (ti->is_signed)
            r.s = ti->ffi->size == 1 ? *(const int8_t *)at : ti->ffi->size == 2 ? *(const int16_t *)at : *(const int32_t *)at;
        else
            r.a = ti->ffi->size == 1 ? *(const uint8_t *)at : ti->ffi->size == 2 ? *(const uint16_t *)at : *(const uint32_t *)at;
        wide w = read_int(ti, &r);
        return int_json(&w);
    }
    case K_FLOAT: {
        bool f = ti->ffi == &ffi_type_float;
        double d = f ? (double)((const float *)base)[i] : ((const double *)base)[i];
        if (f)
            format_float(((const float *)base)[i], text, sizeof text);
        else
            format_double(d, text, sizeof text);
        if (!isfinite(d)) {
            snprintf(why, whylen, "item %zu is %s, which JSON cannot represent", i, text);
            return NULL;
        }
        return json_object_new_double_s(d, text);
    }
    case K_STRING: {
        const char *str = ((const char *const *)base)[i];
        if (!str) {
            snprintf(why, whylen, "item %zu is NULL", i);
            return NULL;
        }
        if (!th_utf8_valid(str, strlen(str))) {
            snprintf(why, whylen, "item %zu is not valid UTF-8", i);
            return NULL;
        }
        return json_object_new_string(str);
    }
    default:
        return NULL;
    }
}

/* With TH_FN_FREE_RESULT the host owns an array result: its string items,
** its items, then the th_array itself, each from malloc(). */
static void free_result_array(const th_typed *t, th_array *arr)
{
    if (!arr || !(t->flags & TH_FN_FREE_RESULT))
        return;
    if (t->result->kind == K_STRING && arr->items)
        for (size_t i = 0; i < arr->count; i++)
            free((void *)((const char *const *)arr->items)[i]);
    free((void *)arr->items);
    free(arr);
}

/* An array result: {"result": [...]} and its JSON text. Takes ownership of
** ARR with TH_FN_FREE_RESULT (string items, items, then ARR: free()). */
static th_rc deliver_array(const th_typed *t, th_call *call, th_array *arr)
{
    const tinfo *ti = t->result;
    th_rc rc = TH_OK;
    char why[128] = "";
    json_object *value = NULL, *sc = NULL;
    if (arr && arr->count && !arr->items) {
        rc = th_call_error(call, "Tool '%s' returned an array of %zu items with NULL items", th_call_tool_name(call),
                           arr->count);
        goto done;
    }
    if (arr) {
        if (!(value = json_object_new_array())) {
            rc = TH_ERR_NOMEM;
            goto done;
        }
        for (size_t i = 0; i < arr->count; i++) {
            json_object *v = item_json(ti, arr->items, i, why, sizeof why);
            if (!v || json_object_array_add(value, v) != 0) {
                json_object_put(v);
                rc = why[0] ? th_call_error(call, "Tool '%s' returned an array whose %s", th_call_tool_name(call), why)
                            : TH_ERR_NOMEM;
                goto done;
            }
        }
    }
    if (!(sc = json_object_new_object()) || json_object_object_add(sc, "result", value) != 0) {
        rc = TH_ERR_NOMEM;
        goto done;
    }
    json_object *shown_from = value;
    value = NULL; /* SC has it */
    rc = th_call_structured(call, sc);
    sc = NULL;
    if (rc == TH_ERR_VALUE) { /* recorded in the call, which reports it */
        rc = TH_OK;
        goto done;
    }
    if (rc == TH_OK)
        rc = th_call_text(call, shown_from ? json_object_to_json_string_ext(shown_from, JSON_C_TO_STRING_PLAIN |
                                                                                            JSON_C_TO_STRING_NOSLASHESCAPE)
                                           : "null");
done:
    json_object_put(value);
    json_object_put(sc);
    free_result_array(t, arr);
    return rc;
}

/* With TH_FN_FREE_RESULT the string fields are the host's. */
static void free_fields(const th_typed *t, retval *vals)
{
    if (!(t->flags & TH_FN_FREE_RESULT))
        return;
    for (size_t i = 0; i < t->n_fields; i++)
        if (t->fields[i].ti->kind == K_STRING)
            free(vals[i].p);
}

/* Named results: structuredContent {FIELD: value...} and its JSON text. */
static th_rc deliver_fields(const th_typed *t, th_call *call, retval *vals)
{
    th_rc rc = TH_OK;
    char why[128] = "";
    json_object *obj = NULL;
    if ((t->flags & TH_FN_WANTS_CALL) && th_call_is_error(call))
        goto done; /* a reported failure: the fields mean nothing */
    if (!(obj = json_object_new_object())) {
        rc = TH_ERR_NOMEM;
        goto done;
    }
    for (size_t i = 0; i < t->n_fields; i++) {
        const tparam *f = &t->fields[i];
        json_object *v = NULL;
        if (f->ti->kind != K_STRING || vals[i].p) {
            why[0] = '\0';
            if (!(v = item_json(f->ti, &vals[i], 0, why, sizeof why))) {
                /* item_json names "item 0": say which field instead. */
                const char *rest = strncmp(why, "item 0 ", 7) == 0 ? why + 7 : why;
                rc = why[0] ? th_call_error(call, "Tool '%s' returned field '%s', which %s", th_call_tool_name(call),
                                            f->name, rest)
                            : TH_ERR_NOMEM;
                goto done;
            }
        }
        if (json_object_object_add(obj, f->name, v) != 0) {
            json_object_put(v);
            rc = TH_ERR_NOMEM;
            goto done;
        }
    }
    json_object *shown = obj;
    rc = th_call_structured(call, obj);
    obj = NULL; /* the call's now */
    if (rc == TH_ERR_VALUE) { /* recorded in the call, which reports it */
        rc = TH_OK;
        goto done;
    }
    if (rc == TH_OK)
        rc = th_call_text(call, json_object_to_json_string_ext(shown, JSON_C_TO_STRING_PLAIN |
                                                                          JSON_C_TO_STRING_NOSLASHESCAPE));
done:
    json_object_put(obj);
    free_fields(t, vals);
    return rc;
}

/* Turn the return value into a text block and {"result": value}. Takes
** ownership of a JSON result and, with TH_FN_FREE_RESULT, of a string. */
static th_rc deliver(const th_typed *t, th_call *call, const retval *r)
{
    if (t->result_array) {
        if ((t->flags & TH_FN_WANTS_CALL) && th_call_is_error(call)) {
            free_result_array(t, r->p); /* a reported failure: the value means nothing */
            return TH_OK;
        }
        return deliver_array(t, call, r->p);
    }
    const tinfo *ti = t->result;
    char text[48];
    json_object *value = NULL;
    const char *shown = text;
    char *owned_str = (t->flags & TH_FN_FREE_RESULT) ? r->p : NULL;
    th_rc rc = TH_OK;

    if ((t->flags & TH_FN_WANTS_CALL) && th_call_is_error(call)) {
        /* The function reported a failure: its return value means nothing. */
        if (ti->kind == K_JSON)
            th_result_free(r->p);
        goto done;
    }
    switch (ti->kind) {
    case K_NONE:
        goto done;
    case K_BOOL:
        strcpy(text, (uint8_t)r->a ? "true" : "false");
        value = json_object_new_boolean((uint8_t)r->a != 0);
        break;
    case K_INT: {
        wide w = read_int(ti, r);
        if (w.neg)
            snprintf(text, sizeof text, "%" PRId64, w.s);
        else
            snprintf(text, sizeof text, "%" PRIu64, w.u);
        value = int_json(&w);
        break;
    }
    case K_FLOAT: {
        double d = ti->ffi == &ffi_type_float ? (double)r->f : r->d;
        if (ti->ffi == &ffi_type_float)
            format_float(r->f, text, sizeof text);
        else
            format_double(d, text, sizeof text);
        if (!isfinite(d)) {
            rc = th_call_error(call, "Tool '%s' returned %s, which JSON cannot represent", th_call_tool_name(call),
                               text);
            goto done;
        }
        value = json_object_new_double_s(d, text);
        break;
    }
    case K_STRING:
        if (!r->p) {
            shown = "null";
            break;
        }
        if (!th_utf8_valid(r->p, strlen(r->p))) {
            rc = th_call_error(call, "Tool '%s' returned a string that is not valid UTF-8", th_call_tool_name(call));
            goto done;
        }
        shown = r->p;
        if (!(value = json_object_new_string(r->p))) {
            rc = TH_ERR_NOMEM;
            goto done;
        }
        break;
    case K_JSON:
        value = r->p;
        if (value && !json_object_is_type(value, json_type_object)) {
            rc = th_call_error(call, "Tool '%s' returned %s, but its result must be a JSON object or NULL",
                               th_call_tool_name(call), word_of(value));
            th_result_free(value);
            goto done;
        }
        /* Its text is taken once th_call_structured has checked it: a
         * NaN or a too deep tree must not reach the serialiser. */
        shown = "null";
        break;
    }
    /* NULL is JSON null for strings and objects; for the rest, no memory. */
    if (!value && ti->kind != K_STRING && ti->kind != K_JSON) {
        rc = TH_ERR_NOMEM;
        goto done;
    }
    json_object *sc = json_object_new_object();
    if (!sc) {
        json_object_put(value);
        rc = TH_ERR_NOMEM;
        goto done;
    }
    if (json_object_object_add(sc, "result", value) != 0) {
        json_object_put(value);
        json_object_put(sc);
        rc = TH_ERR_NOMEM;
        goto done;
    }
    rc = th_call_structured(call, sc);
    /* A refused value is recorded in the call, which reports it. */
    if (rc == TH_ERR_VALUE) {
        rc = TH_OK;
        goto done;
    }
    if (rc == TH_OK && ti->kind == K_JSON && value)
        shown = json_object_to_json_string_ext(value, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    if (rc == TH_OK)
        rc = th_call_text(call, shown);
done:
    free(owned_str);
    return rc;
}

th_rc th_typed_invoke(const th_typed *t, th_call *call, json_object *args)
{
    if (!t || !call)
        return TH_ERR_MISUSE;
    slot slots[TH_TYPED_MAX_PARAMS + 2];
    void *avalues[TH_TYPED_MAX_PARAMS + 2 + TH_TYPED_MAX_FIELDS];
    retval fieldvals[TH_TYPED_MAX_FIELDS];
    void *fieldptrs[TH_TYPED_MAX_FIELDS];
    th_array arrays[TH_TYPED_MAX_PARAMS];
    void *items[TH_TYPED_MAX_PARAMS] = {0};
    json_object *copies[TH_TYPED_MAX_PARAMS] = {0};
    th_buf msg = {0}, why = {0};
    th_rc rc = TH_OK;
    bool oom = false;
    size_t n = 0; /* arguments placed in avalues */

    if (args && !json_object_is_type(args, json_type_object)) {
        oom |= !th_buf_printf(&msg, "Invalid arguments: expected object, got %s", word_of(args));
        goto report;
    }
    if (args) {
        json_object_object_foreach(args, key, val) {
            (void)val;
            if (!find_param(t, key))
                oom |= !next_line(&msg) || !th_buf_printf(&msg, "Unknown argument '%s'", key);
        }
    }

    th_call *call_arg = call;
    void *user_data_arg = t->user_data;
    if (t->flags & TH_FN_WANTS_CALL) {
        avalues[n++] = &call_arg;
    }
    if (t->flags & TH_FN_WANTS_USER_DATA)
        avalues[n++] = &user_data_arg;
    for (size_t i = 0; i < t->n_params; i++, n++) {
        const tparam *p = &t->params[i];
        json_object *v;
        avalues[n] = &slots[n];
        if (!args || !json_object_object_get_ex(args, p->name, &v)) {
            if (!p->optional) {
                oom |= !next_line(&msg) || !th_buf_printf(&msg, "Missing required argument '%s'", p->name);
                continue;
            }
            slots[n] = p->def_slot;
            /* A function may change or keep its json_object: give each call
             * its own copy of the shared default. */
            if (p->def && p->ti->kind == K_JSON) {
                if (json_object_deep_copy(p->def, &copies[i], NULL) != 0) {
                    oom = true;
                    continue;
                }
                slots[n].p = copies[i];
            }
            continue;
        }
        size_t bad;
        why.len = 0;
        if (!convert(p, v, &slots[n], &arrays[i], &items[i], &bad, &why)) {
            char index[32] = "";
            if (bad != SIZE_MAX)
                snprintf(index, sizeof index, "[%zu]", bad);
            oom |= !next_line(&msg) ||
                   !th_buf_printf(&msg, "Invalid argument '%s%s': %s", p->name, index, why.data ? why.data : "");
        }
    }

report:
    if (oom) {
        rc = TH_ERR_NOMEM;
    } else if (msg.len) {
        rc = th_call_error(call, "%s", msg.data);
    } else {
        retval r;
        memset(&r, 0, sizeof r);
        memset(fieldvals, 0, sizeof fieldvals);
        for (size_t i = 0; i < t->n_fields; i++) {
            fieldptrs[i] = &fieldvals[i];
            avalues[n + i] = &fieldptrs[i];
        }
        ffi_call((ffi_cif *)&t->cif, t->fn, &r, avalues);
        rc = t->n_fields ? deliver_fields(t, call, fieldvals) : deliver(t, call, &r);
    }
    for (size_t i = 0; i < t->n_params; i++) {
        free(items[i]);
        json_object_put(copies[i]);
    }
    free(msg.data);
    free(why.data);
    return rc;
}
