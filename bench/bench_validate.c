/*
** bench_validate.c: the cost of validating one tools/call's arguments
** against a typical 10-property input schema, in ns per validation and as a
** ratio against parsing the same arguments text (which every call pays).
*/
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "jsonschema.h"

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
    return sink == 0; /* keeps the loops from being optimised away */
}
