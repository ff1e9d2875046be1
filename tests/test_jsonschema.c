/* SPDX-License-Identifier: MIT */
/*
** test_jsonschema.c: unit tests for th_schema: compile-time refusals with
** their exact messages, violation message format and cap, the limits that
** protect the host, and validation from several threads at once; the work
** budget against hostile arguments (uniqueItems, ReDoS, deep anyOf,
** cancellation) and the exactness of '.' and multipleOf.
*/
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "schema/jsonschema.h"
#include "check_main.h"

/* Compile schema TEXT; the test fails when it does not compile. */
/* Parse TEXT allowing deeper nesting than json-c's default of 32. */
static json_object *parse(const char *text)
{
    json_tokener *tok = json_tokener_new_ex(1000);
    json_object *j = json_tokener_parse_ex(tok, text, (int)strlen(text) + 1);
    json_tokener_free(tok);
    return j;
}

static th_schema *compile_ok(const char *text)
{
    json_object *j = parse(text);
    ck_assert_msg(j != NULL, "test schema is not JSON: %s", text);
    char err[512];
    th_schema *s = th_schema_compile(j, err, sizeof err);
    json_object_put(j);
    ck_assert_msg(s != NULL, "schema refused: %s", err);
    return s;
}

/* Compile schema TEXT, which must be refused with exactly WANT. */
static void refused(const char *text, const char *want)
{
    json_object *j = parse(text);
    ck_assert_msg(j != NULL, "test schema is not JSON: %s", text);
    char err[512] = "";
    th_schema *s = th_schema_compile(j, err, sizeof err);
    json_object_put(j);
    ck_assert_msg(s == NULL, "schema accepted: %s", text);
    ck_assert_str_eq(err, want);
}

/* Validate instance TEXT; returns the count, *MSGS the messages ("" if none). */
static size_t check_text(const th_schema *s, const char *text, char **msgs)
{
    json_object *j = json_tokener_parse(text);
    ck_assert_msg(j != NULL || !strcmp(text, "null"), "test instance is not JSON: %s", text);
    size_t n = th_schema_validate(s, j, msgs);
    json_object_put(j);
    if (!*msgs)
        *msgs = strdup("");
    return n;
}

/* Validating INSTANCE against SCHEMA gives exactly the messages WANT. */
static void violations(const char *schema, const char *instance, size_t count, const char *want)
{
    th_schema *s = compile_ok(schema);
    char *msgs = NULL;
    size_t n = check_text(s, instance, &msgs);
    ck_assert_str_eq(msgs, want);
    ck_assert_uint_eq(n, count);
    free(msgs);
    th_schema_free(s);
}

/* The official meta-schema URI is built in: valid means "compiles". */
START_TEST(builtin_meta_schema)
{
    const char *meta = "{\"$ref\":\"https://json-schema.org/draft/2020-12/schema\"}";
    violations(meta, "{\"type\":\"integer\",\"minLength\":1}", 0, "");
    violations(meta, "{\"properties\":{\"a\":{\"type\":1}}}", 1,
               "(root): is not a valid JSON Schema: /properties/a/type: must be a type name or an array of type names ($ref)");
    violations("{\"type\":\"object\",\"properties\":{\"schema\":{\"$ref\":"
               "\"https://json-schema.org/draft/2020-12/schema#\"}}}",
               "{\"schema\":{\"minLength\":-1}}", 1, "/schema: is not a valid JSON Schema: /minLength: must be a non-negative integer ($ref)");
}
END_TEST

START_TEST(refuses_wrong_keyword_types)
{
    refused("{\"type\":\"object\",\"properties\":{\"n\":{\"minimum\":\"3\"}}}", "/properties/n/minimum: must be a number");
    refused("{\"required\":5}", "/required: must be an array of strings");
    refused("{\"required\":[\"a\",3]}", "/required: must be an array of strings (entry 1 is int)");
    refused("{\"properties\":[]}", "/properties: must be an object whose values are schemas");
    refused("{\"properties\":{\"a\":3}}", "/properties/a: must be a schema (an object or a boolean), got int");
    refused("{\"type\":\"strin\"}",
            "/type: unknown type 'strin' (expected null, boolean, object, array, number, string or integer)");
    refused("{\"minLength\":-1}", "/minLength: must be a non-negative integer");
    refused("{\"maxItems\":1.5}", "/maxItems: must be a non-negative integer");
    refused("{\"multipleOf\":0}", "/multipleOf: must be a number greater than 0");
    refused("{\"allOf\":[]}", "/allOf: must be a non-empty array of schemas");
    refused("{\"anyOf\":[{}, 7]}", "/anyOf/1: must be a schema (an object or a boolean), got int");
    refused("{\"items\":[{}]}", "/items: must be a schema (an object or a boolean); use prefixItems for tuples");
    refused("{\"uniqueItems\":\"yes\"}", "/uniqueItems: must be a boolean");
    refused("{\"dependentRequired\":{\"a\":\"b\"}}", "/dependentRequired/a: must be an array of strings");
    refused("{\"properties\":{\"a/b\":{\"$defs\":{\"x\":{\"enum\":1}}}}}", "/properties/a~1b/$defs/x/enum: must be an array");
    refused("[1]", "(root): must be a schema (an object or a boolean), got array");
}
END_TEST

START_TEST(refuses_unresolvable_refs_and_bad_regexes)
{
    refused("{\"$ref\":\"#/$defs/missing\"}", "/$ref: '#/$defs/missing' resolves nowhere: no value at '/$defs/missing' in this schema");
    refused("{\"properties\":{\"a\":{\"$ref\":\"#nope\"}}}",
            "/properties/a/$ref: '#nope' resolves nowhere: no anchor 'nope' in this schema");
    refused("{\"$ref\":\"http://example.com/other.json\"}",
            "/$ref: 'http://example.com/other.json' resolves nowhere: no schema document "
            "'http://example.com/other.json' is known");
    refused("{\"properties\":{\"s\":{\"pattern\":\"[a-\"}}}",
            "/properties/s/pattern: invalid regular expression '[a-': missing terminating ] for character class");
    refused("{\"patternProperties\":{\"(x\":{}}}",
            "/patternProperties/(x: invalid regular expression '(x': missing closing parenthesis");
}
END_TEST

/* Found by fuzz/fuzz_schema_compile: a refusal quoted a percent-decoded
** $ref byte for byte (%fe is not UTF-8), and a small buffer cut a character
** in half; refusals are logged and handed to plugins as text. */
START_TEST(refusal_messages_are_utf8)
{
    refused("{\"$ref\":\"#/$defs/a%fe\"}",
            "/$ref: '#/$defs/a%fe' resolves nowhere: no value at '/$defs/a\xef\xbf\xbd' in this schema");
    json_object *j = parse("{\"$ref\":\"#/$defs/\xc3\xa9t\xc3\xa9\"}");
    char err[18]; /* "/$ref: '#/$defs/" and the first byte of the e-acute */
    ck_assert_ptr_null(th_schema_compile(j, err, sizeof err));
    json_object_put(j);
    ck_assert_str_eq(err, "/$ref: '#/$defs/");
}
END_TEST

START_TEST(accepts_refs_ids_and_unknown_keywords)
{
    th_schema *s = compile_ok("{\"$id\":\"https://example.com/root\",\"x-custom\":{\"a\":1},"
                              "\"$defs\":{\"a~b\":{\"type\":\"integer\"},\"p%\":{\"$anchor\":\"pct\",\"minimum\":2}},"
                              "\"properties\":{\"t\":{\"$ref\":\"#/$defs/a~0b\"},\"u\":{\"$ref\":\"root#pct\"},"
                              "\"v\":{\"$ref\":\"#/$defs/p%25\"}}}");
    char *msgs = NULL;
    ck_assert_uint_eq(check_text(s, "{\"t\":1,\"u\":3,\"v\":2}", &msgs), 0);
    free(msgs);
    ck_assert_uint_eq(check_text(s, "{\"t\":1.5,\"u\":1,\"v\":0}", &msgs), 3);
    ck_assert_str_eq(msgs, "/t: must be integer, got number (type)\n/u: must be >= 2 (minimum)\n/v: must be >= 2 (minimum)");
    free(msgs);
    th_schema_free(s);
}
END_TEST

static const char *tool_schema =
    "{\"type\":\"object\",\"required\":[\"text\",\"count\"],\"additionalProperties\":false,"
    "\"properties\":{\"text\":{\"type\":\"string\",\"minLength\":2,\"maxLength\":5},"
    "\"count\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":10},"
    "\"name\":{\"type\":\"string\"},"
    "\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\",\"pattern\":\"^[a-z]+$\"},\"uniqueItems\":true},"
    "\"mode\":{\"enum\":[\"fast\",\"slow\"]},\"ratio\":{\"multipleOf\":0.5,\"exclusiveMaximum\":2},"
    "\"k/e~y\":{\"const\":1}}}";

START_TEST(message_format)
{
    violations(tool_schema, "{\"text\":\"hi\",\"count\":3}", 0, "");
    violations(tool_schema, "{\"text\":\"hi\",\"count\":0}", 1, "/count: must be >= 1 (minimum)");
    violations(tool_schema, "{\"text\":\"hi\",\"count\":1,\"name\":7}", 1, "/name: must be string, got integer (type)");
    violations(tool_schema, "{\"count\":1}", 1, "(root): missing required property 'text' (required)");
    violations(tool_schema, "{\"text\":\"hi\",\"count\":1,\"extra\":true}", 1,
               "/extra: additional property not allowed (additionalProperties)");
    violations(tool_schema, "{\"text\":\"hi\",\"count\":1,\"tags\":[\"a\",\"b\",\"C1\"]}", 1,
               "/tags/2: must match pattern '^[a-z]+$' (pattern)");
    violations(tool_schema, "{\"text\":\"h\\u00e9llo!\",\"count\":1.0,\"mode\":\"Fast\",\"ratio\":2,\"k/e~y\":1.0,"
                            "\"tags\":[\"a\",\"a\"]}",
               4,
               "/text: must be at most 5 characters long, got 6 (maxLength)\n"
               "/mode: must be one of [\"fast\",\"slow\"] (enum)\n"
               "/ratio: must be < 2 (exclusiveMaximum)\n"
               "/tags: must not contain duplicates (items 0 and 1 are equal) (uniqueItems)");
    violations(tool_schema, "{\"text\":\"ab\",\"count\":2,\"ratio\":0.7,\"k/e~y\":2}", 2,
               "/ratio: must be a multiple of 0.5 (multipleOf)\n/k~1e~0y: must be equal to 1 (const)");
    violations(tool_schema, "[]", 1, "(root): must be object, got array (type)");
    violations("{\"type\":[\"string\",\"null\"]}", "3.5", 1, "(root): must be null or string, got number (type)");
    violations("{\"type\":\"number\"}", "true", 1, "(root): must be number, got boolean (type)");
}
END_TEST

START_TEST(composition_messages)
{
    violations("{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"integer\"}]}", "1.5", 1,
               "(root): must match at least one of the 2 schemas in 'anyOf', matches none (anyOf)");
    violations("{\"oneOf\":[{\"minimum\":1},{\"maximum\":5}]}", "3", 1,
               "(root): must match exactly one of the schemas in 'oneOf', matches schemas 0 and 1 (oneOf)");
    violations("{\"oneOf\":[{\"minimum\":10},{\"maximum\":0}]}", "3", 1,
               "(root): must match exactly one of the 2 schemas in 'oneOf', matches none (oneOf)");
    violations("{\"not\":{\"type\":\"string\"}}", "\"x\"", 1, "(root): must not match the schema in 'not' (not)");
    violations("{\"if\":{\"properties\":{\"a\":{\"const\":1}}},\"then\":{\"required\":[\"b\"]}}", "{\"a\":1}", 1,
               "(root): missing required property 'b' (required)");
    violations("{\"properties\":{\"a\":true},\"allOf\":[{\"properties\":{\"b\":true}}],\"unevaluatedProperties\":false}",
               "{\"a\":1,\"b\":2,\"c\":3}", 1, "/c: unevaluated property not allowed (unevaluatedProperties)");
    violations("{\"prefixItems\":[{}],\"items\":false}", "[1,2]", 1, "/1: item not allowed: at most 1 items (items)");
    violations("{\"contains\":{\"type\":\"string\"},\"maxContains\":1}", "[\"a\",\"b\"]", 1,
               "(root): must contain at most 1 item matching the 'contains' schema, found 2 (maxContains)");
    violations("{\"contains\":{\"type\":\"string\"}}", "[1]", 1,
               "(root): must contain at least 1 item matching the 'contains' schema, found 0 (contains)");
    violations("{\"dependentRequired\":{\"a\":[\"b\"]}}", "{\"a\":1}", 1,
               "(root): missing property 'b' (required when 'a' is present) (dependentRequired)");
    violations("{\"propertyNames\":{\"maxLength\":2}}", "{\"abc\":1}", 1,
               "/abc: property name 'abc' does not match the 'propertyNames' schema (propertyNames)");
    violations("{\"properties\":{\"x\":false}}", "{\"x\":1}", 1, "/x: property not allowed (false schema)");
    violations("false", "1", 1, "(root): no value is allowed here (false schema)");
    violations("{\"type\":\"integer\",\"const\":1}", "1.0", 0, "");
}
END_TEST

START_TEST(message_cap)
{
    th_schema *s = compile_ok("{\"items\":{\"type\":\"string\"}}");
    char text[1024] = "[";
    for (int i = 0; i < 25; i++)
        strcat(text, i ? ",1" : "1");
    strcat(text, "]");
    char *msgs = NULL;
    ck_assert_uint_eq(check_text(s, text, &msgs), 25);
    size_t lines = 1;
    for (const char *p = msgs; *p; p++)
        lines += *p == '\n';
    ck_assert_uint_eq(lines, 21);
    ck_assert_ptr_nonnull(strstr(msgs, "/19: must be string, got integer (type)\n... and 5 more"));
    ck_assert_ptr_null(strstr(msgs, "/20:"));
    free(msgs);
    /* Without a message buffer the count is the same. */
    json_object *j = json_tokener_parse(text);
    ck_assert_uint_eq(th_schema_validate(s, j, NULL), 25);
    json_object_put(j);
    th_schema_free(s);
}
END_TEST

START_TEST(limit_schema_nesting)
{
    char text[4096] = "";
    for (int i = 0; i < 80; i++)
        strcat(text, "{\"not\":");
    strcat(text, "{}");
    for (int i = 0; i < 80; i++)
        strcat(text, "}");
    char want[1024] = "";
    for (int i = 0; i < 65; i++)
        strcat(want, "/not");
    strcat(want, ": schema nested deeper than 64 levels (limit)");
    refused(text, want);
}
END_TEST

START_TEST(limit_fanout_and_node_count)
{
    size_t cap = 64 * 1024;
    char *text = malloc(cap);
    strcpy(text, "{\"anyOf\":[");
    for (int i = 0; i < 1001; i++)
        strcat(text, i ? ",{}" : "{}");
    strcat(text, "]}");
    refused(text, "/anyOf: has 1001 schemas, more than the limit of 1000");
    /* 10 properties each with 1000 subschemas: more than 10000 in all. */
    strcpy(text, "{\"properties\":{");
    for (int p = 0; p < 11; p++) {
        sprintf(text + strlen(text), "%s\"p%d\":{\"allOf\":[", p ? "," : "", p);
        for (int i = 0; i < 1000; i++)
            strcat(text, i ? ",true" : "true");
        strcat(text, "]}");
    }
    strcat(text, "}}");
    json_object *j = json_tokener_parse(text);
    ck_assert_ptr_nonnull(j);
    char err[512];
    th_schema *s = th_schema_compile(j, err, sizeof err);
    json_object_put(j);
    free(text);
    ck_assert_ptr_null(s);
    ck_assert_ptr_nonnull(strstr(err, ": schema has more than 10000 subschemas (limit)"));
}
END_TEST

START_TEST(limit_ref_cycles)
{
    /* A $ref loop that never reaches the instance: stopped, not overflowed. */
    violations("{\"$defs\":{\"a\":{\"$ref\":\"#/$defs/b\"},\"b\":{\"$ref\":\"#/$defs/a\"}},\"$ref\":\"#/$defs/a\"}", "1", 1,
               "(root): $ref followed more than 100 levels deep (a recursive schema?) ($ref)");
    violations("{\"$ref\":\"#\"}", "{}", 1,
               "(root): $ref followed more than 100 levels deep (a recursive schema?) ($ref)");
    /* Inside anyOf the limit is still reported though the branch is silent. */
    th_schema *s = compile_ok("{\"anyOf\":[{\"$ref\":\"#\"}]}");
    char *msgs = NULL;
    ck_assert_uint_eq(check_text(s, "1", &msgs), 2);
    ck_assert_ptr_nonnull(strstr(msgs, "validation stopped"));
    free(msgs);
    th_schema_free(s);
}
END_TEST

START_TEST(limit_deep_instance)
{
    /* A recursive schema against an instance nested 2000 deep. */
    json_object *inst = json_object_new_array();
    for (int i = 0; i < 2000; i++) {
        json_object *outer = json_object_new_array();
        json_object_array_add(outer, inst);
        inst = outer;
    }
    th_schema *s = compile_ok("{\"type\":\"array\",\"items\":{\"$ref\":\"#\"}}");
    char *msgs = NULL;
    ck_assert_uint_ge(th_schema_validate(s, inst, &msgs), 1);
    ck_assert_ptr_nonnull(msgs);
    ck_assert_ptr_nonnull(strstr(msgs, "more than"));
    free(msgs);
    th_schema *u = compile_ok("{\"uniqueItems\":true}");
    json_object *pair = json_object_new_array();
    json_object_array_add(pair, json_object_get(inst));
    json_object_array_add(pair, json_object_get(inst));
    ck_assert_uint_le(th_schema_validate(u, pair, NULL), 1);
    json_object_put(pair);
    th_schema_free(u);
    th_schema_free(s);
    json_object_put(inst);
}
END_TEST

START_TEST(unique_items_large_arrays)
{
    th_schema *s = compile_ok("{\"uniqueItems\":true}");
    json_object *arr = json_object_new_array();
    for (int i = 0; i < 500; i++) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "a", json_object_new_int(i));
        json_object_object_add(o, "b", json_object_new_string("x"));
        json_object_array_add(arr, o);
    }
    ck_assert_uint_eq(th_schema_validate(s, arr, NULL), 0);
    json_object *dup = json_object_new_object(); /* same members, other order, 7.0 for 7 */
    json_object_object_add(dup, "b", json_object_new_string("x"));
    json_object_object_add(dup, "a", json_object_new_double(7.0));
    json_object_array_add(arr, dup);
    char *msgs = NULL;
    ck_assert_uint_eq(th_schema_validate(s, arr, &msgs), 1);
    ck_assert_str_eq(msgs, "(root): must not contain duplicates (items 7 and 500 are equal) (uniqueItems)");
    free(msgs);
    json_object_put(arr);
    th_schema_free(s);
}
END_TEST

typedef struct {
    const th_schema *s;
    json_object *good, *bad;
    const char *want;
    int mismatches;
} thread_arg;

static void *validate_many(void *p)
{
    thread_arg *a = p;
    for (int i = 0; i < 2000; i++) {
        char *msgs = NULL;
        if (th_schema_validate(a->s, a->good, NULL) != 0)
            a->mismatches++;
        if (th_schema_validate(a->s, a->bad, &msgs) != 2 || !msgs || strcmp(msgs, a->want))
            a->mismatches++;
        free(msgs);
    }
    return NULL;
}

START_TEST(threads_share_one_schema)
{
    th_schema *s = compile_ok(tool_schema);
    json_object *good = json_tokener_parse("{\"text\":\"abc\",\"count\":2,\"tags\":[\"x\",\"y\"],\"mode\":\"fast\"}");
    json_object *bad = json_tokener_parse("{\"text\":\"abc\",\"count\":2,\"tags\":[\"x\",\"Y\"],\"mode\":\"no\"}");
    thread_arg args[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        args[i] = (thread_arg){ s, good, bad,
                                "/tags/1: must match pattern '^[a-z]+$' (pattern)\n"
                                "/mode: must be one of [\"fast\",\"slow\"] (enum)",
                                0 };
        ck_assert_int_eq(pthread_create(&th[i], NULL, validate_many, &args[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        ck_assert_int_eq(args[i].mismatches, 0);
    }
    json_object_put(good);
    json_object_put(bad);
    th_schema_free(s);
}
END_TEST

START_TEST(ecma_regex_semantics)
{
    /* \d and \w are ASCII only; \s includes Unicode spaces; $ is end only. */
    violations("{\"pattern\":\"^\\\\d+$\"}", "\"\\u0661\"", 1, "(root): must match pattern '^\\d+$' (pattern)");
    violations("{\"pattern\":\"^\\\\w$\"}", "\"\\u00e9\"", 1, "(root): must match pattern '^\\w$' (pattern)");
    violations("{\"pattern\":\"^\\\\s$\"}", "\"\\u00a0\"", 0, "");
    violations("{\"pattern\":\"^[\\\\s]$\"}", "\"\\u2003\"", 0, "");
    violations("{\"pattern\":\"^a$\"}", "\"a\\n\"", 1, "(root): must match pattern '^a$' (pattern)");
    violations("{\"pattern\":\"^\\\\p{Letter}+$\"}", "\"\\u00e9a\"", 0, "");
    violations("{\"pattern\":\"^\\\\u0041$\"}", "\"A\"", 0, "");
    violations("{\"pattern\":\"b\"}", "\"abc\"", 0, "");
}
END_TEST

/* ---- the validation work budget */

/* uniqueItems on [x,y] pairs crafted so that the old number/array hash
** (bits * C, FNV over the items) put every pair in one bucket: quadratic
** json_eq calls, 31 s for 40k pairs. Must now finish (the tcase timeout
** bounds it) with the right answer. */
START_TEST(unique_items_crafted_pairs)
{
    const uint64_t mul = 0x9E3779B97F4A7C15ull, fnv = 1099511628211ull, off = 1469598103934665603ull;
    uint64_t inv = mul; /* mul's inverse mod 2^64, by Newton's iteration */
    for (int i = 0; i < 6; i++)
        inv *= 2 - mul * inv;
    const uint64_t target = 0x0123456789abcdefull;
    th_schema *s = compile_ok("{\"uniqueItems\":true}");
    json_object *arr = json_object_new_array();
    size_t made = 0;
    for (int i = 0; made < 40000; i++) {
        double x = i + 0.5, y;
        uint64_t xb;
        memcpy(&xb, &x, sizeof xb);
        uint64_t yb = (target ^ ((off ^ (xb * mul)) * fnv)) * inv;
        memcpy(&y, &yb, sizeof y);
        if (!isfinite(y) || y == 0)
            continue;
        json_object *pair = json_object_new_array();
        json_object_array_add(pair, json_object_new_double(x));
        json_object_array_add(pair, json_object_new_double(y));
        json_object_array_add(arr, pair);
        made++;
    }
    ck_assert_uint_eq(th_schema_validate(s, arr, NULL), 0);
    json_object_array_add(arr, json_object_get(json_object_array_get_idx(arr, 5)));
    char *msgs = NULL;
    ck_assert_uint_eq(th_schema_validate(s, arr, &msgs), 1);
    ck_assert_str_eq(msgs, "(root): must not contain duplicates (items 5 and 40000 are equal) (uniqueItems)");
    free(msgs);
    json_object_put(arr);
    th_schema_free(s);
}
END_TEST

/* 30 a's and a '!': ^(a+)+$ backtracks 2^30 ways before it fails. */
#define REDOS_KEY "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"

/* A PCRE2 limit is a validation failure that says so, never "no match":
** under patternProperties "no match" skipped the subschema (fail open). */
START_TEST(pattern_limit_fails_closed)
{
    /* The key does match (by '!$'), so 'false' applies: on main it passed. */
    violations("{\"patternProperties\":{\"^(a+)+$|!$\":false}}", "{\"" REDOS_KEY "\":1}", 1,
               "/" REDOS_KEY ": pattern \"^(a+)+$|!$\" could not be evaluated within the match limit "
               "(patternProperties)");
    violations("{\"pattern\":\"^(a+)+$\"}", "\"" REDOS_KEY "\"", 1,
               "(root): pattern \"^(a+)+$\" could not be evaluated within the match limit (pattern)");
    /* Under 'not' too: not knowing is not "did not match". */
    violations("{\"properties\":{\"s\":{\"not\":{\"pattern\":\"^(a+)+$\"}}}}", "{\"s\":\"" REDOS_KEY "\"}", 1,
               "/s: pattern \"^(a+)+$\" could not be evaluated within the match limit (pattern)");
    /* The limits grow with the subject: long honest strings still match. */
    size_t n = 50000;
    char *text = malloc(n + 3);
    text[0] = '"';
    for (size_t i = 1; i <= n; i++)
        text[i] = "ab"[i % 2];
    strcpy(text + n + 1, "\"");
    violations("{\"pattern\":\"^[ab]+$\"}", text, 0, "");
    violations("{\"pattern\":\"^(a|b)*$\"}", text, 0, "");
    violations("{\"pattern\":\"^.*c\"}", text, 1, "(root): must match pattern '^.*c' (pattern)");
    free(text);
}
END_TEST

/* anyOf nested LEVELS deep, each with two branches that both lead to the
** next level, the innermost failing: 2^LEVELS subschema applications. */
static char *deep_anyof(int levels)
{
    char *text = malloc(256 * (size_t)levels + 256);
    strcpy(text, "{\"$defs\":{\"l0\":{\"type\":\"string\"}");
    for (int i = 1; i <= levels; i++)
        sprintf(text + strlen(text), ",\"l%d\":{\"anyOf\":[{\"$ref\":\"#/$defs/l%d\"},{\"$ref\":\"#/$defs/l%d\"}]}", i,
                i - 1, i - 1);
    sprintf(text + strlen(text), "},\"$ref\":\"#/$defs/l%d\"}", levels);
    return text;
}

START_TEST(step_budget)
{
    char *text = deep_anyof(26);
    /* One value: 1000 + 32 steps, then the answer is "invalid". */
    violations(text, "1", 1,
               "(root): validation stopped: the arguments need more than 1032 steps to check (step limit)");
    /* An explicit budget replaces the default. */
    th_schema *s = compile_ok(text);
    json_object *one = json_object_new_int(1);
    th_validate_opts opts = { .max_steps = 500 };
    char *msgs = NULL;
    ck_assert_uint_eq(th_schema_validate_ex(s, one, &opts, &msgs), 1);
    ck_assert_str_eq(msgs, "(root): validation stopped: the arguments need more than 500 steps to check (step limit)");
    free(msgs);
    json_object_put(one);
    th_schema_free(s);
    free(text);
    /* The default grows with the instance: 100000 items pass. */
    s = compile_ok("{\"type\":\"array\",\"items\":{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"integer\"}]}}");
    json_object *arr = json_object_new_array();
    for (int i = 0; i < 100000; i++)
        json_object_array_add(arr, json_object_new_int(i));
    ck_assert_uint_eq(th_schema_validate(s, arr, NULL), 0);
    json_object_put(arr);
    th_schema_free(s);
}
END_TEST

typedef struct {
    int polls, cancel_at;
} poll_state;

static bool cancel_after(void *ctx)
{
    poll_state *p = ctx;
    return ++p->polls >= p->cancel_at;
}

START_TEST(cancel_stops_validation)
{
    char *text = deep_anyof(26);
    th_schema *s = compile_ok(text);
    json_object *one = json_object_new_int(1);
    poll_state ps = { 0, 3 };
    th_validate_opts opts = { cancel_after, &ps, 100000000 };
    char *msgs = NULL;
    ck_assert_uint_eq(th_schema_validate_ex(s, one, &opts, &msgs), 1);
    ck_assert_int_eq(ps.polls, 3); /* polled until it said yes, then no more */
    ck_assert_str_eq(msgs, "(root): validation stopped: the call was cancelled (cancelled)");
    free(msgs);
    /* Already cancelled: stopped at the first step. */
    ps = (poll_state){ 0, 1 };
    ck_assert_uint_eq(th_schema_validate_ex(s, one, &opts, NULL), 1);
    ck_assert_int_eq(ps.polls, 1);
    /* Never cancelled: polled every TH_SCHEMA_POLL_STEPS steps, answer kept. */
    th_schema *small = compile_ok("{\"type\":\"array\",\"items\":{\"type\":\"integer\"}}");
    json_object *arr = json_object_new_array();
    for (int i = 0; i < 1000; i++)
        json_object_array_add(arr, json_object_new_int(i));
    ps = (poll_state){ 0, 1 << 30 };
    ck_assert_uint_eq(th_schema_validate_ex(small, arr, &opts, NULL), 0);
    ck_assert_int_eq(ps.polls, (1001 + TH_SCHEMA_POLL_STEPS - 1) / TH_SCHEMA_POLL_STEPS);
    json_object_put(arr);
    th_schema_free(small);
    json_object_put(one);
    th_schema_free(s);
    free(text);
}
END_TEST

static bool count_poll(void *ctx)
{
    ++*(int *)ctx;
    return false;
}

/*
** The quick check of "an object with a few typed properties" accepts
** exactly what the walk accepts, and leaves everything else to the walk,
** whose messages are the same either way. A walk polls for cancellation
** at its first step; the quick check never does, which shows which ran.
*/
START_TEST(quick_check_agrees_with_the_walk)
{
    static const struct {
        const char *text;
        bool quick; /* plain enough for the quick check */
    } schemas[] = {
        {"{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\",\"description\":\"d\"}},"
         "\"required\":[\"text\"],\"additionalProperties\":false}", true},
        {"{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"number\"},\"b\":{\"type\":\"integer\"},"
         "\"c\":{\"type\":[\"boolean\",\"null\"]},\"d\":true,\"e\":{\"type\":\"array\"},\"f\":{}},"
         "\"required\":[\"a\",\"b\"]}", true},
        {"{\"type\":\"object\",\"properties\":{\"o\":{\"type\":\"object\"}},\"additionalProperties\":true,"
         "\"title\":\"t\",\"$defs\":{\"x\":{\"type\":\"string\"}}}", true},
        /* One keyword more, and the walk decides. */
        {"{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\",\"minLength\":2}}}", false},
        {"{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\",\"enum\":[\"x\"]}}}", false},
        {"{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"}},\"required\":[\"b\"]}", false},
        {"{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"}},"
         "\"additionalProperties\":{\"type\":\"string\"}}", false},
        {"{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"}},\"maxProperties\":1}", false},
        {"{\"type\":\"object\",\"properties\":{\"a\":{\"$ref\":\"#/$defs/s\"}},"
         "\"$defs\":{\"s\":{\"type\":\"string\"}}}", false},
        {"{\"type\":\"object\",\"properties\":{\"a\":false}}", false},
        {"{\"type\":[\"object\",\"null\"],\"properties\":{\"a\":{\"type\":\"string\"}}}", false},
    };
    static const char *const instances[] = {
        "{\"text\":\"hi\"}", "{\"text\":1}", "{}", "{\"text\":\"hi\",\"more\":1}", "[]", "\"s\"", "null",
        "{\"a\":1.5,\"b\":2}", "{\"a\":1,\"b\":2.0}", "{\"a\":1,\"b\":2.5}", "{\"a\":\"1\",\"b\":2}",
        "{\"a\":1,\"b\":2,\"c\":null,\"d\":[1],\"e\":[],\"f\":{}}", "{\"a\":1,\"b\":2,\"c\":true,\"e\":{}}",
        "{\"o\":{}}", "{\"o\":[]}", "{\"a\":\"x\"}", "{\"a\":\"x\",\"b\":\"y\"}", "{\"a\":1}",
        "{\"text\":\"x\"}", "{\"a\":-9223372036854775809,\"b\":18446744073709551616}",
    };
    for (size_t i = 0; i < sizeof schemas / sizeof schemas[0]; i++) {
        th_schema *s = compile_ok(schemas[i].text);
        for (size_t k = 0; k < sizeof instances / sizeof instances[0]; k++) {
            json_object *inst = parse(instances[k]);
            int polls = 0;
            th_validate_opts quick = {count_poll, &polls, 0}, walk = {NULL, NULL, 100000000};
            char *mq = NULL, *mw = NULL;
            size_t nq = th_schema_validate_ex(s, inst, &quick, &mq);
            size_t nw = th_schema_validate_ex(s, inst, &walk, &mw);
            ck_assert_msg(nq == nw, "schema %zu, %s: %zu vs %zu", i, instances[k], nq, nw);
            ck_assert_msg((!mq && !mw) || (mq && mw && strcmp(mq, mw) == 0), "schema %zu, %s: %s vs %s", i,
                          instances[k], mq ? mq : "(none)", mw ? mw : "(none)");
            /* Valid instances of a quick schema skip the walk, barring a
             * double where an integer is wanted (the walk judges those). */
            bool skipped = polls == 0;
            if (!schemas[i].quick || nq > 0)
                ck_assert_msg(!skipped, "schema %zu, %s: no walk", i, instances[k]);
            else if (!strstr(instances[k], ".0") && !strstr(instances[k], "18446744073709551616"))
                ck_assert_msg(skipped, "schema %zu, %s: walked", i, instances[k]);
            free(mq);
            free(mw);
            json_object_put(inst);
        }
        th_schema_free(s);
    }
}
END_TEST

/* A failed cheap check (type, sizes, required) ends the work on that
** instance: uniqueItems, patterns and descent are not run, and the
** messages name the cheap failure only. */
START_TEST(cheap_checks_first)
{
    violations("{\"type\":\"array\",\"maxItems\":2,\"uniqueItems\":true,"
               "\"items\":{\"type\":\"string\",\"pattern\":\"^(a+)+$\"}}",
               "[\"" REDOS_KEY "\",\"" REDOS_KEY "\",\"" REDOS_KEY "\"]", 1,
               "(root): must have at most 2 items, got 3 (maxItems)");
    violations("{\"maxLength\":5,\"pattern\":\"^(a+)+$\"}", "\"" REDOS_KEY "\"", 1,
               "(root): must be at most 5 characters long, got 31 (maxLength)");
    violations("{\"maxProperties\":1,\"patternProperties\":{\"^(a+)+$\":{}}}",
               "{\"" REDOS_KEY "\":1,\"b" REDOS_KEY "\":2}", 1,
               "(root): must have at most 1 properties, got 2 (maxProperties)");
    violations("{\"type\":\"object\",\"allOf\":[{\"minimum\":1}],\"anyOf\":[{\"type\":\"string\"}]}", "0", 1,
               "(root): must be object, got integer (type)");
}
END_TEST

/* ECMA-262's . matches no line terminator: \n, \r, U+2028, U+2029. */
START_TEST(ecma_dot)
{
    const char *no[] = { "\"\\r\"", "\"\\n\"", "\"\\u2028\"", "\"\\u2029\"" };
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        violations("{\"pattern\":\"^.$\"}", no[i], 1, "(root): must match pattern '^.$' (pattern)");
    violations("{\"pattern\":\"^.$\"}", "\"\\u00e9\"", 0, "");
    violations("{\"pattern\":\"^.$\"}", "\"\\t\"", 0, "");
    violations("{\"pattern\":\"^[.]$\"}", "\"\\r\"", 1, "(root): must match pattern '^[.]$' (pattern)");
    violations("{\"pattern\":\"^[.]$\"}", "\".\"", 0, "");
    violations("{\"pattern\":\"^\\\\.$\"}", "\"x\"", 1, "(root): must match pattern '^\\.$' (pattern)");
    violations("{\"pattern\":\"^\\\\.$\"}", "\".\"", 0, "");
}
END_TEST

/* multipleOf in exact decimal: no tolerance, exact above INT64_MAX. */
/* Found by fuzz/fuzz_typed: an integer past 64 bits arrives as a double
** that keeps its literal, and the double had rounded onto the bound, so
** -9223372036854775809 passed "minimum": -9223372036854775808. */
START_TEST(bounds_judge_big_integers_by_literal)
{
    static const struct {
        const char *schema;
        double d;
        const char *literal;
        size_t bad;
    } cases[] = {
        {"{\"minimum\":-9223372036854775808}", -0x1p63, "-9223372036854775809", 1},
        {"{\"minimum\":-9223372036854775808}", -0x1p63, "-9223372036854775808", 0},
        {"{\"maximum\":18446744073709551615}", 0x1p64, "18446744073709551616", 1},
        {"{\"exclusiveMaximum\":18446744073709551615}", 0x1p64, "18446744073709551616", 1},
        {"{\"minimum\":-9.3e18}", -0x1p63, "-9223372036854775809", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        th_schema *s = compile_ok(cases[i].schema);
        json_object *v = json_object_new_double_s(cases[i].d, cases[i].literal);
        ck_assert_msg(th_schema_validate(s, v, NULL) == cases[i].bad, "%s against %s", cases[i].literal,
                      cases[i].schema);
        json_object_put(v);
        th_schema_free(s);
    }
}
END_TEST

START_TEST(multiple_of_precision)
{
    violations("{\"multipleOf\":0.0001}", "0.0075", 0, "");
    violations("{\"multipleOf\":0.0001}", "0.00751", 1, "(root): must be a multiple of 0.0001 (multipleOf)");
    violations("{\"multipleOf\":0.1}", "0.3", 0, "");
    violations("{\"multipleOf\":0.01}", "-19.99", 0, "");
    violations("{\"type\":\"integer\",\"multipleOf\":0.123456789}", "1e308", 1,
               "(root): must be a multiple of 0.123456789 (multipleOf)");
    violations("{\"multipleOf\":0.5}", "1e308", 0, "");
    violations("{\"multipleOf\":1e-8}", "12391239123", 0, "");
    /* The old 1e-9 relative tolerance took these. */
    violations("{\"multipleOf\":1}", "1.0000000001", 1, "(root): must be a multiple of 1 (multipleOf)");
    violations("{\"multipleOf\":3}", "3000000000.000001", 1, "(root): must be a multiple of 3 (multipleOf)");
    /* Integers above INT64_MAX (uint64 in json-c) and integral doubles. */
    violations("{\"multipleOf\":2}", "18446744073709551615", 1, "(root): must be a multiple of 2 (multipleOf)");
    violations("{\"multipleOf\":2}", "18446744073709551614", 0, "");
    violations("{\"multipleOf\":5}", "18446744073709551615", 0, "");
    violations("{\"multipleOf\":3}", "9223372036854775808", 1, "(root): must be a multiple of 3 (multipleOf)");
    violations("{\"multipleOf\":18446744073709551615}", "18446744073709551615", 0, "");
    violations("{\"multipleOf\":7}", "1e20", 1, "(root): must be a multiple of 7 (multipleOf)");
    violations("{\"multipleOf\":7}", "7e20", 0, "");
    violations("{\"multipleOf\":7}", "-9223372036854775807", 0, "");
}
END_TEST

static Suite *jsonschema_suite(void)
{
    Suite *s = suite_create("jsonschema");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, builtin_meta_schema);
    tcase_add_test(tc, refuses_wrong_keyword_types);
    tcase_add_test(tc, refuses_unresolvable_refs_and_bad_regexes);
    tcase_add_test(tc, refusal_messages_are_utf8);
    tcase_add_test(tc, accepts_refs_ids_and_unknown_keywords);
    tcase_add_test(tc, message_format);
    tcase_add_test(tc, composition_messages);
    tcase_add_test(tc, message_cap);
    tcase_add_test(tc, limit_schema_nesting);
    tcase_add_test(tc, limit_fanout_and_node_count);
    tcase_add_test(tc, limit_ref_cycles);
    tcase_add_test(tc, limit_deep_instance);
    tcase_add_test(tc, unique_items_large_arrays);
    tcase_add_test(tc, threads_share_one_schema);
    tcase_add_test(tc, ecma_regex_semantics);
    tcase_add_test(tc, pattern_limit_fails_closed);
    tcase_add_test(tc, cheap_checks_first);
    tcase_add_test(tc, ecma_dot);
    tcase_add_test(tc, multiple_of_precision);
    tcase_add_test(tc, bounds_judge_big_integers_by_literal);
    suite_add_tcase(s, tc);
    /* Hostile inputs: each must finish well inside this bound (on main they
    ** took from seconds to minutes). */
    TCase *adv = tcase_create("adversarial");
    tcase_set_timeout(adv, 10);
    tcase_add_test(adv, unique_items_crafted_pairs);
    tcase_add_test(adv, step_budget);
    tcase_add_test(adv, cancel_stops_validation);
    tcase_add_test(adv, quick_check_agrees_with_the_walk);
    suite_add_tcase(s, adv);
    return s;
}

TH_CHECK_MAIN(jsonschema_suite)
