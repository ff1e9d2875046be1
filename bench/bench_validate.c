/* SPDX-License-Identifier: MIT */
/*
** bench_validate.c: the cost of validating one tools/call's arguments
** against a typical 10-property input schema, in ns per validation and as a
** ratio against parsing the same arguments text (which every call pays);
** then the hostile arguments of the work-budget tests, each as the same
** ratio, with the worst case per keyword.
*/
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "schema/jsonschema.h"

static const char *schema_text =
    "{\"type\":\"object\",\"additionalProperties\":false,"
    "\"required\":[\"query\",\"limit\",\"mode\"],"
    "\"properties\":{"
    "\"query\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":200},"
    "\"user\":{\"type\":\"string\",\"pattern\":\"^[a-z][a-z0-9_]{2,15}$\"},"
    "\"email\":{\"type\":\"string\",\"pattern\":\"^[^@\\\\s]+@[^@\\\\s]+\\\\.[a-z]{2,}$\",\"maxLength\":254},"
    "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":100},"
    "\"offset\":{\"type\":\"integer\",\"minimum\":0},"
    "\"threshold\":{\"type\":\"number\",\"exclusiveMinimum\":0,\"maximum\":1},"
    "\"mode\":{\"enum\":[\"fast\",\"balanced\",\"thorough\"]},"
    "\"verbose\":{\"type\":\"boolean\"},"
    "\"tags\":{\"type\":\"array\",\"maxItems\":10,\"uniqueItems\":true,"
    "\"items\":{\"type\":\"string\",\"pattern\":\"^[a-z0-9-]+$\",\"maxLength\":32}},"
    "\"filter\":{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"field\"],"
    "\"properties\":{\"field\":{\"type\":\"string\",\"minLength\":1},"
    "\"op\":{\"enum\":[\"eq\",\"lt\",\"gt\"]},\"value\":{\"type\":[\"string\",\"number\"]}}}}}";

static const char *valid_text =
    "{\"query\":\"latest quarterly revenue by region\",\"user\":\"alice_01\","
    "\"email\":\"alice@example.com\",\"limit\":20,\"offset\":40,\"threshold\":0.75,"
    "\"mode\":\"balanced\",\"verbose\":false,\"tags\":[\"finance\",\"q3-report\",\"emea\"],"
    "\"filter\":{\"field\":\"region\",\"op\":\"eq\",\"value\":\"EMEA\"}}";

/* Four violations: pattern, maximum, enum, and a nested additional property. */
static const char *invalid_text =
    "{\"query\":\"latest quarterly revenue by region\",\"user\":\"Alice\","
    "\"email\":\"alice@example.com\",\"limit\":500,\"offset\":40,\"threshold\":0.75,"
    "\"mode\":\"quick\",\"verbose\":false,\"tags\":[\"finance\",\"q3-report\",\"emea\"],"
    "\"filter\":{\"field\":\"region\",\"op\":\"eq\",\"value\":\"EMEA\",\"extra\":1}}";

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

typedef enum { PARSE, VALIDATE, VALIDATE_MESSAGES } op;

/* Nanoseconds per operation, best of 5 runs of ITERS. */
static double measure(op what, const th_schema *s, const char *text, json_object *args, long iters, size_t *sink)
{
    double best = 0;
    for (int run = 0; run < 5; run++) {
        double t0 = now_ns();
        for (long i = 0; i < iters; i++) {
            if (what == PARSE) {
                json_object *j = json_tokener_parse(text);
                *sink += j != NULL;
                json_object_put(j);
            } else if (what == VALIDATE) {
                *sink += th_schema_validate(s, args, NULL);
            } else {
                char *msgs = NULL;
                *sink += th_schema_validate(s, args, &msgs);
                free(msgs);
            }
        }
        double per = (now_ns() - t0) / (double)iters;
        if (run == 0 || per < best)
            best = per;
    }
    return best;
}

/* ---- hostile arguments */

/* A growing text buffer; the bench exits on allocation failure. */
typedef struct {
    char *p;
    size_t len, cap;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(text *t, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(t->p ? t->p + t->len : NULL, t->p ? t->cap - t->len : 0, fmt, ap);
        va_end(ap);
        if (n >= 0 && t->p && (size_t)n < t->cap - t->len) {
            t->len += (size_t)n;
            return;
        }
        t->cap = t->cap ? t->cap * 2 + (size_t)n : 4096 + (size_t)n;
        t->p = realloc(t->p, t->cap);
        if (!t->p) {
            fprintf(stderr, "bench_validate: out of memory\n");
            exit(1);
        }
    }
}

/*
** N [x,y] pairs of doubles that the hash uniqueItems used before its work
** budget (number: its bits times a constant; array: FNV over the items' hashes)
** put in one bucket, making duplicate detection quadratic. Stops early
** once the text reaches MAX_BYTES (0: no limit).
*/
static char *crafted_pairs(size_t n, size_t max_bytes)
{
    const uint64_t mul = 0x9E3779B97F4A7C15ull, fnv = 1099511628211ull, off = 1469598103934665603ull;
    uint64_t inv = mul;
    for (int i = 0; i < 6; i++)
        inv *= 2 - mul * inv;
    text t = { 0 };
    put(&t, "[");
    size_t made = 0;
    for (long i = 0; made < n && (!max_bytes || t.len < max_bytes); i++) {
        double x = (double)i + 0.5, y;
        uint64_t xb, yb;
        memcpy(&xb, &x, sizeof xb);
        yb = (0x0123456789abcdefull ^ ((off ^ (xb * mul)) * fnv)) * inv;
        memcpy(&y, &yb, sizeof y);
        if (!isfinite(y) || y == 0 || fabs(y) < 1e-300 || fabs(y) > 1e300)
            continue;
        put(&t, "%s[%.17g,%.17g]", made ? "," : "", x, y);
        made++;
    }
    put(&t, "]");
    return t.p;
}

static char *distinct_objects(size_t n)
{
    text t = { 0 };
    put(&t, "[");
    for (size_t i = 0; i < n; i++)
        put(&t, "%s{\"id\":%zu,\"name\":\"item-%zu\",\"tags\":[\"a\",\"b\"]}", i ? "," : "", i, i);
    put(&t, "]");
    return t.p;
}

/* "aaa...a!": ^(a+)+$ backtracks 2^LEN ways before it fails. */
static void redos(text *t, size_t len)
{
    put(t, "\"");
    for (size_t i = 0; i < len; i++)
        put(t, "a");
    put(t, "!\"");
}

static char *redos_array(size_t n, size_t len)
{
    text t = { 0 };
    put(&t, "[");
    for (size_t i = 0; i < n; i++) {
        put(&t, "%s", i ? "," : "");
        redos(&t, len);
    }
    put(&t, "]");
    return t.p;
}

static char *redos_object(size_t n)
{
    text t = { 0 };
    put(&t, "{");
    for (size_t i = 0; i < n; i++) {
        put(&t, "%s\"", i ? "," : "");
        for (int k = 0; k < 30; k++)
            put(&t, "a");
        put(&t, "!%zu\":%zu", i, i);
    }
    put(&t, "}");
    return t.p;
}

static char *redos_long(size_t len)
{
    text t = { 0 };
    redos(&t, len);
    return t.p;
}

static char *ones(size_t n)
{
    text t = { 0 };
    put(&t, "[");
    for (size_t i = 0; i < n; i++)
        put(&t, "%s1", i ? "," : "");
    put(&t, "]");
    return t.p;
}

/* anyOf LEVELS deep with two branches that both lead on; the innermost
** (a string) fails for a number: 2^LEVELS applications without a budget.
** ITEMS: the same for every item of an array. */
static char *deep_anyof(int levels, bool items)
{
    text t = { 0 };
    put(&t, "{\"$defs\":{\"l0\":{\"type\":\"string\"}");
    for (int i = 1; i <= levels; i++)
        put(&t, ",\"l%d\":{\"anyOf\":[{\"$ref\":\"#/$defs/l%d\"},{\"$ref\":\"#/$defs/l%d\"}]}", i, i - 1, i - 1);
    if (items)
        put(&t, "},\"items\":{\"$ref\":\"#/$defs/l%d\"}}", levels);
    else
        put(&t, "},\"$ref\":\"#/$defs/l%d\"}", levels);
    return t.p;
}

/* A request as large as --max-message-bytes allows: 'tags' of the schema
** above (maxItems 10, uniqueItems, a pattern per item) with 400k items. */
static char *large_request(void)
{
    text t = { 0 };
    put(&t, "{\"query\":\"q\",\"limit\":1,\"mode\":\"fast\",\"tags\":[");
    for (size_t i = 0; i < 400000; i++)
        put(&t, "%s\"t%zu\"", i ? "," : "", i % 1000);
    put(&t, "]}");
    return t.p;
}

typedef struct {
    const char *keyword, *name;
    char *schema; /* malloc()ed */
    char *instance;
} hostile;

/* Best of 3 rounds, each repeating OP for at least 20 ms; ns per op. */
static double time_op(op what, const th_schema *s, const char *txt, json_object *args, size_t *sink)
{
    double best = 0;
    for (int round = 0; round < 3; round++) {
        long iters = 0;
        double t0 = now_ns(), t;
        do {
            if (what == PARSE) {
                json_object *j = json_tokener_parse(txt);
                *sink += j != NULL;
                json_object_put(j);
            } else {
                *sink += th_schema_validate(s, args, NULL);
            }
            iters++;
        } while ((t = now_ns() - t0) < 20e6);
        double per = t / (double)iters;
        if (round == 0 || per < best)
            best = per;
    }
    return best;
}

static char *dup(const char *str)
{
    char *p = strdup(str);
    if (!p)
        exit(1);
    return p;
}

static int run_hostile(size_t *sink)
{
    const char *arr_unique = "{\"type\":\"array\",\"uniqueItems\":true}";
    const char *pat_items = "{\"type\":\"array\",\"items\":{\"type\":\"string\",\"pattern\":\"^(a+)+$\"}}";
    const char *pat_items5 =
        "{\"type\":\"array\",\"maxItems\":5,\"items\":{\"type\":\"string\",\"pattern\":\"^(a+)+$\"}}";
    const char *pprops = "{\"type\":\"object\",\"patternProperties\":{\"^(a+)+$\":{\"type\":\"string\"}}}";
    const char *pprops5 =
        "{\"type\":\"object\",\"maxProperties\":5,\"patternProperties\":{\"^(a+)+$\":{\"type\":\"string\"}}}";
    hostile cases[] = {
        { "uniqueItems", "10k crafted [x,y] pairs", dup(arr_unique), crafted_pairs(10000, 0) },
        { "uniqueItems", "40k crafted [x,y] pairs", dup(arr_unique), crafted_pairs(40000, 0) },
        { "uniqueItems", "4.1 MB crafted pairs, maxItems 10",
          dup("{\"type\":\"array\",\"maxItems\":10,\"uniqueItems\":true}"), crafted_pairs(SIZE_MAX, 4100000) },
        { "uniqueItems", "40k distinct objects", dup(arr_unique), distinct_objects(40000) },
        { "pattern", "100 ReDoS strings, maxItems 5", dup(pat_items5), redos_array(100, 30) },
        { "pattern", "100 ReDoS strings", dup(pat_items), redos_array(100, 30) },
        { "pattern", "100k short ReDoS strings (2^10 each)", dup(pat_items), redos_array(100000, 10) },
        { "pattern", "one 1 MB ReDoS string", dup("{\"pattern\":\"^(a+)+$\"}"), redos_long(1000000) },
        { "pattern", "one 64 kB ReDoS string", dup("{\"pattern\":\"^(a+)+$\"}"), redos_long(64000) },
        { "patternProperties", "100 ReDoS keys, maxProperties 5", dup(pprops5), redos_object(100) },
        { "patternProperties", "100 ReDoS keys", dup(pprops), redos_object(100) },
        { "anyOf", "nested 22 levels", deep_anyof(22, false), dup("1") },
        { "anyOf", "nested 30 levels", deep_anyof(30, false), dup("1") },
        { "anyOf", "nested 22 levels, 10k items", deep_anyof(22, true), ones(10000) },
        { "(all)", "4 MB request, 'tags' over maxItems", dup(schema_text), large_request() },
    };
    size_t ncases = sizeof cases / sizeof cases[0];
    printf("\nhostile arguments: validation time against parse time of the same text\n");
    printf("%-18s %-36s %9s %10s %11s %8s  %s\n", "keyword", "case", "bytes", "parse ms", "validate ms", "ratio",
           "first message");
    typedef struct {
        const char *kw;
        double ratio;
        const char *name;
    } worst_case;
    worst_case worst[16];
    size_t nworst = 0;
    for (size_t i = 0; i < ncases; i++) {
        hostile *h = &cases[i];
        json_object *sj = json_tokener_parse(h->schema);
        json_object *args = json_tokener_parse(h->instance);
        char err[512];
        th_schema *s = sj ? th_schema_compile(sj, err, sizeof err) : NULL;
        if (!s || !args) {
            fprintf(stderr, "bench_validate: case '%s' does not parse or compile: %s\n", h->name, s ? "" : err);
            return 1;
        }
        char *msgs = NULL;
        th_schema_validate(s, args, &msgs);
        char first[72] = "(valid)";
        if (msgs) {
            snprintf(first, sizeof first, "%.*s", (int)strcspn(msgs, "\n"), msgs);
            free(msgs);
        }
        double parse = time_op(PARSE, NULL, h->instance, NULL, sink);
        double val = time_op(VALIDATE, s, NULL, args, sink);
        double ratio = val / parse;
        printf("%-18s %-36s %9zu %10.3f %11.3f %8.2f  %s\n", h->keyword, h->name, strlen(h->instance), parse / 1e6,
               val / 1e6, ratio, first);
        size_t w = 0;
        while (w < nworst && strcmp(worst[w].kw, h->keyword))
            w++;
        if (w == nworst)
            worst[nworst++] = (worst_case){ h->keyword, -1, NULL };
        if (ratio > worst[w].ratio) {
            worst[w].ratio = ratio;
            worst[w].name = h->name;
        }
        th_schema_free(s);
        json_object_put(sj);
        json_object_put(args);
    }
    printf("worst case per keyword (validation / parse):\n");
    for (size_t w = 0; w < nworst; w++)
        printf("  %-18s %8.2fx  (%s)\n", worst[w].kw, worst[w].ratio, worst[w].name);
    for (size_t i = 0; i < ncases; i++) {
        free(cases[i].schema);
        free(cases[i].instance);
    }
    return 0;
}

int main(void)
{
    json_object *schema = json_tokener_parse(schema_text);
    json_object *valid = json_tokener_parse(valid_text);
    json_object *invalid = json_tokener_parse(invalid_text);
    if (!schema || !valid || !invalid) {
        fprintf(stderr, "bench_validate: test data is not JSON\n");
        return 1;
    }
    char err[512];
    double t0 = now_ns();
    th_schema *s = th_schema_compile(schema, err, sizeof err);
    double compile_ns = now_ns() - t0;
    if (!s) {
        fprintf(stderr, "bench_validate: schema refused: %s\n", err);
        return 1;
    }
    char *msgs = NULL;
    size_t nvalid = th_schema_validate(s, valid, NULL);
    size_t ninvalid = th_schema_validate(s, invalid, &msgs);
    if (nvalid != 0 || ninvalid != 4) {
        fprintf(stderr, "bench_validate: expected 0 and 4 violations, got %zu and %zu:\n%s\n", nvalid, ninvalid,
                msgs ? msgs : "");
        return 1;
    }
    free(msgs);

    const long iters = 20000;
    size_t sink = 0;
    double parse_valid = measure(PARSE, NULL, valid_text, NULL, iters, &sink);
    double parse_invalid = measure(PARSE, NULL, invalid_text, NULL, iters, &sink);
    double v_valid = measure(VALIDATE, s, NULL, valid, iters, &sink);
    double v_invalid = measure(VALIDATE, s, NULL, invalid, iters, &sink);
    double v_invalid_msgs = measure(VALIDATE_MESSAGES, s, NULL, invalid, iters, &sink);

    printf("schema: 10 properties (patterns, lengths, bounds, enums, array of strings, nested object); "
           "compiled once in %.0f ns\n",
           compile_ns);
    printf("reference: json_tokener_parse of the arguments: %.0f ns (valid, %zu bytes), %.0f ns (invalid, %zu bytes)\n",
           parse_valid, strlen(valid_text), parse_invalid, strlen(invalid_text));
    printf("validate valid arguments:                 %7.0f ns/validation  %.2fx reference\n", v_valid,
           v_valid / parse_valid);
    printf("validate invalid arguments (4 violations): %6.0f ns/validation  %.2fx reference\n", v_invalid,
           v_invalid / parse_invalid);
    printf("  ... and format the messages:            %7.0f ns/validation  %.2fx reference\n", v_invalid_msgs,
           v_invalid_msgs / parse_invalid);
    th_schema_free(s);
    json_object_put(schema);
    json_object_put(valid);
    json_object_put(invalid);
    if (run_hostile(&sink))
        return 1;
    return sink == 0; /* keeps the loops from being optimised away */
}
