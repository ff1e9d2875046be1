/* SPDX-License-Identifier: MIT */
/*
** test_jsonrpc.c: unit tests of the JSON-RPC layer (src/jsonrpc.c): how
** every kind of line is classified and which error code it earns, and the
** exact shape of the messages the builders produce.
*/
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/jsonrpc.h"
#include "check_main.h"

static th_rpc_msg msg;

static void parse(const char *text)
{
    th_rpc_parse(text, strlen(text), &msg);
}

static void teardown(void)
{
    th_rpc_msg_clear(&msg);
}

/* The id as JSON text, "none" when the parser kept none. */
static const char *id_text(void)
{
    return msg.id ? json_object_to_json_string_ext(msg.id, JSON_C_TO_STRING_PLAIN) : "none";
}

#define ASSERT_INVALID(code_)                                                                                          \
    do {                                                                                                               \
        ck_assert_int_eq(msg.kind, TH_RPC_INVALID);                                                                    \
        ck_assert_int_eq(msg.error_code, (code_));                                                                     \
        ck_assert_msg(msg.error_message[0] != '\0', "an error needs a message");                                      \
    } while (0)

/* ---- classification ---------------------------------------------------- */

START_TEST(request_with_int_id)
{
    parse("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\",\"params\":{\"cursor\":\"x\"}}");
    ck_assert_int_eq(msg.kind, TH_RPC_REQUEST);
    ck_assert_str_eq(msg.method, "tools/list");
    ck_assert_str_eq(id_text(), "7");
    ck_assert_ptr_nonnull(msg.params);
    ck_assert_str_eq(json_object_get_string(json_object_object_get(msg.params, "cursor")), "x");
}
END_TEST

/* Nesting up to TH_RPC_MAX_DEPTH is a request; deeper is a parse error. */
START_TEST(nesting_limit)
{
    char text[1024];
    for (int depth = TH_RPC_MAX_DEPTH - 2; depth <= TH_RPC_MAX_DEPTH + 10; depth += 12) {
        /* The message object and params are two levels already. */
        int n = snprintf(text, sizeof text, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":");
        for (int i = 0; i < depth - 2; i++)
            text[n++] = '[';
        for (int i = 0; i < depth - 2; i++)
            text[n++] = ']';
        snprintf(text + n, sizeof text - (size_t)n, "}}");
        parse(text);
        if (depth <= TH_RPC_MAX_DEPTH) {
            ck_assert_int_eq(msg.kind, TH_RPC_REQUEST);
        } else {
            ASSERT_INVALID(TH_RPC_PARSE_ERROR);
            ck_assert_ptr_nonnull(strstr(msg.error_message, "nesting too deep"));
        }
        th_rpc_msg_clear(&msg);
    }
}
END_TEST

START_TEST(request_with_string_id_no_params)
{
    parse("{\"method\":\"ping\",\"id\":\"a b\",\"jsonrpc\":\"2.0\"}");
    ck_assert_int_eq(msg.kind, TH_RPC_REQUEST);
    ck_assert_str_eq(msg.method, "ping");
    ck_assert_str_eq(id_text(), "\"a b\"");
    ck_assert_ptr_null(msg.params);
}
END_TEST

START_TEST(notification)
{
    parse("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    ck_assert_int_eq(msg.kind, TH_RPC_NOTIFICATION);
    ck_assert_str_eq(msg.method, "notifications/initialized");
    ck_assert_ptr_null(msg.id);
}
END_TEST

START_TEST(responses_are_recognised)
{
    parse("{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}");
    ck_assert_int_eq(msg.kind, TH_RPC_RESPONSE);
    th_rpc_msg_clear(&msg);
    parse("{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-1,\"message\":\"x\"}}");
    ck_assert_int_eq(msg.kind, TH_RPC_RESPONSE);
}
END_TEST

START_TEST(surrounding_white_space_is_fine)
{
    parse("  {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} \t\r");
    ck_assert_int_eq(msg.kind, TH_RPC_REQUEST);
}
END_TEST

/* ---- -32700 ------------------------------------------------------------- */

static const char *const unparseable[] = {
    "{",
    "{\"jsonrpc\":\"2.0\",",
    "not json",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} {}", /* two values */
    "{'jsonrpc':'2.0'}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",}",
    "",
};

START_TEST(unparseable_is_parse_error)
{
    parse(unparseable[_i]);
    ASSERT_INVALID(TH_RPC_PARSE_ERROR);
    ck_assert_ptr_null(msg.id);
    ck_assert_ptr_null(msg.msg);
    ck_assert(!msg.silent);
}
END_TEST

START_TEST(invalid_utf8_is_parse_error)
{
    parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":\"\xff\xfe\"}}");
    ASSERT_INVALID(TH_RPC_PARSE_ERROR);
    th_rpc_msg_clear(&msg);
    /* A truncated multi-byte sequence. */
    parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":\"\xe2\x82\"}}");
    ASSERT_INVALID(TH_RPC_PARSE_ERROR);
}
END_TEST

/* json-c takes NaN and Infinity even in strict mode; JSON has neither. */
static const char *const nonfinite[] = {
    "{\"jsonrpc\":\"2.0\",\"id\":NaN,\"method\":\"ping\"}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":Infinity}}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":[1,-Infinity]}}",
};

START_TEST(nan_and_infinity_are_parse_errors)
{
    parse(nonfinite[_i]);
    ASSERT_INVALID(TH_RPC_PARSE_ERROR);
    ck_assert_ptr_null(msg.id);
    th_rpc_msg_clear(&msg);
    /* Inside strings they are just text. */
    parse("{\"jsonrpc\":\"2.0\",\"id\":\"NaN\",\"method\":\"ping\",\"params\":{\"Infinity\":\"NaN\"}}");
    ck_assert_int_eq(msg.kind, TH_RPC_REQUEST);
}
END_TEST

/* A NUL byte after the message is not white space (strchr finds the
 * terminator in any set). */
START_TEST(trailing_nul_is_parse_error)
{
    const char text[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\0";
    th_rpc_parse(text, sizeof text - 1, &msg);
    ASSERT_INVALID(TH_RPC_PARSE_ERROR);
    th_rpc_msg_clear(&msg);
    const char text2[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} \0 ";
    th_rpc_parse(text2, sizeof text2 - 1, &msg);
    ASSERT_INVALID(TH_RPC_PARSE_ERROR);
}
END_TEST

START_TEST(embedded_length_is_respected)
{
    /* LEN, not the NUL, ends the message: the valid prefix is one request. */
    const char text[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}garbage";
    th_rpc_parse(text, strlen(text) - strlen("garbage"), &msg);
    ck_assert_int_eq(msg.kind, TH_RPC_REQUEST);
}
END_TEST

/* ---- -32600 ------------------------------------------------------------- */

/* Valid JSON that is not a request object. Top-level scalars must not be
 * mistaken for unfinished input: "5" is complete JSON. */
static const char *const not_objects[] = {"[]", "\"ping\"", "5", "true", "null", "-1.5e3"};

/* A non-empty array is a batch (whether it is served is the session's
 * call); each element is classified like a message, but cannot nest. */
START_TEST(arrays_are_batches)
{
    parse("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},{\"jsonrpc\":\"2.0\",\"method\":\"n\"},5,[],"
          "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"x\",\"params\":null}]");
    ck_assert_int_eq(msg.kind, TH_RPC_BATCH);
    ck_assert_uint_eq(json_object_array_length(msg.msg), 5);
    static const struct {
        th_rpc_kind kind;
        int code;
    } want[] = {{TH_RPC_REQUEST, 0},
                {TH_RPC_NOTIFICATION, 0},
                {TH_RPC_INVALID, TH_RPC_INVALID_REQUEST},
                {TH_RPC_INVALID, TH_RPC_INVALID_REQUEST},
                {TH_RPC_INVALID, TH_RPC_INVALID_REQUEST}};
    for (size_t i = 0; i < 5; i++) {
        th_rpc_msg m;
        th_rpc_parse_value(json_object_array_get_idx(msg.msg, i), &m);
        ck_assert_msg(m.kind == want[i].kind && m.error_code == want[i].code, "element %zu: kind %d code %d", i,
                      m.kind, m.error_code);
        th_rpc_msg_clear(&m);
    }
}
END_TEST

/* 2026-07-28 leaves -32000..-32019 to old implementations and asks for
 * codes it does not define outside -32768..-32000. */
START_TEST(busy_code_is_outside_the_reserved_range)
{
    ck_assert(TH_RPC_SERVER_BUSY < -32768 || TH_RPC_SERVER_BUSY > -32000);
}
END_TEST

START_TEST(non_object_is_invalid_request)
{
    parse(not_objects[_i]);
    ck_assert_msg(msg.kind == TH_RPC_INVALID && msg.error_code == TH_RPC_INVALID_REQUEST,
                  "%s: want -32600, got kind %d code %d (%s)", not_objects[_i], msg.kind, msg.error_code,
                  msg.error_message);
    ck_assert_ptr_null(msg.id);
}
END_TEST

static const struct {
    const char *text;
    const char *id; /* the id the error goes to, "none" for null */
} bad_requests[] = {
    {"{\"id\":1,\"method\":\"ping\"}", "1"},                                 /* no jsonrpc */
    {"{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", "1"},             /* wrong version */
    {"{\"jsonrpc\":2.0,\"id\":1,\"method\":\"ping\"}", "1"},                 /* not a string */
    {"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", "none"},       /* null id */
    {"{\"jsonrpc\":\"2.0\",\"id\":{\"a\":1},\"method\":\"ping\"}", "none"},  /* object id */
    {"{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"ping\"}", "none"},        /* array id */
    {"{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}", "none"},       /* boolean id */
    {"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":5}", "2"},                    /* method not a string */
    {"{\"jsonrpc\":\"2.0\",\"id\":\"q\"}", "\"q\""},                         /* neither method nor result */
    {"{}", "none"},
};

START_TEST(structurally_wrong_is_invalid_request)
{
    parse(bad_requests[_i].text);
    ASSERT_INVALID(TH_RPC_INVALID_REQUEST);
    ck_assert_msg(strcmp(id_text(), bad_requests[_i].id) == 0, "%s: want id %s, got %s", bad_requests[_i].text,
                  bad_requests[_i].id, id_text());
    ck_assert(!msg.silent);
}
END_TEST

/* ---- -32602 ------------------------------------------------------------- */

/* JSON-RPC 2.0: params, when present, MUST be a structured value. A scalar
 * or null makes the Request object invalid (-32600); an array is a valid
 * Request whose params MCP cannot take (-32602). */
START_TEST(params_not_object_is_invalid_params)
{
    static const struct {
        const char *params;
        int code;
    } cases[] = {{"[1,2]", TH_RPC_INVALID_PARAMS},  {"[]", TH_RPC_INVALID_PARAMS},
                 {"5", TH_RPC_INVALID_REQUEST},     {"\"x\"", TH_RPC_INVALID_REQUEST},
                 {"null", TH_RPC_INVALID_REQUEST},  {"true", TH_RPC_INVALID_REQUEST}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[160];
        snprintf(text, sizeof text, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\",\"params\":%s}",
                 cases[i].params);
        parse(text);
        ck_assert_msg(msg.kind == TH_RPC_INVALID && msg.error_code == cases[i].code, "%s: want %d, got %d", text,
                      cases[i].code, msg.error_code);
        ck_assert_str_eq(id_text(), "9");
        ck_assert(!msg.silent);
        th_rpc_msg_clear(&msg);
    }
}
END_TEST

START_TEST(notification_with_bad_params_is_silent)
{
    parse("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":[1]}");
    ck_assert_int_eq(msg.kind, TH_RPC_INVALID);
    ck_assert(msg.silent);
}
END_TEST

/* ---- builders ------------------------------------------------------------ */

static const char *plain(json_object *o)
{
    size_t len;
    return th_rpc_serialize(o, &len);
}

START_TEST(result_envelope)
{
    json_object *id = json_object_new_string("x/1");
    json_object *res = json_object_new_object();
    json_object_object_add(res, "k", json_object_new_string("a/b"));
    json_object *m = th_rpc_result(id, res);
    ck_assert_ptr_nonnull(m);
    size_t len;
    const char *s = th_rpc_serialize(m, &len);
    /* Compact, no escaped slashes, no newline (framing is the transport's). */
    ck_assert_str_eq(s, "{\"jsonrpc\":\"2.0\",\"id\":\"x/1\",\"result\":{\"k\":\"a/b\"}}");
    ck_assert_uint_eq(len, strlen(s));
    json_object_put(m);
    /* The id was borrowed: still ours. */
    ck_assert_str_eq(json_object_get_string(id), "x/1");
    json_object_put(id);
}
END_TEST

START_TEST(result_with_null_id)
{
    json_object *m = th_rpc_result(NULL, json_object_new_object());
    ck_assert_str_eq(plain(m), "{\"jsonrpc\":\"2.0\",\"id\":null,\"result\":{}}");
    json_object_put(m);
}
END_TEST

START_TEST(error_envelope)
{
    json_object *id = json_object_new_int(42);
    json_object *m = th_rpc_error(id, TH_RPC_METHOD_NOT_FOUND, "Method not found: x", NULL);
    ck_assert_str_eq(plain(m),
                     "{\"jsonrpc\":\"2.0\",\"id\":42,\"error\":{\"code\":-32601,\"message\":\"Method not found: x\"}}");
    json_object_put(m);
    json_object *data = json_object_new_object();
    json_object_object_add(data, "requested", json_object_new_string("1900-01-01"));
    m = th_rpc_error(NULL, TH_RPC_UNSUPPORTED_VERSION, "Unsupported protocol version", data);
    ck_assert_str_eq(plain(m), "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32022,\"message\":"
                               "\"Unsupported protocol version\",\"data\":{\"requested\":\"1900-01-01\"}}}");
    json_object_put(m);
    json_object_put(id);
}
END_TEST

START_TEST(notification_envelope)
{
    json_object *p = json_object_new_object();
    json_object_object_add(p, "progress", json_object_new_int(1));
    json_object *m = th_rpc_notification("notifications/progress", p);
    ck_assert_str_eq(plain(m),
                     "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}");
    json_object_put(m);
    m = th_rpc_notification("notifications/x", NULL);
    ck_assert_str_eq(plain(m), "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}");
    json_object_put(m);
}
END_TEST

START_TEST(serialised_text_has_no_raw_newline)
{
    /* One message per line: a newline inside a string must be escaped. */
    json_object *m = th_rpc_result(NULL, json_object_new_string("a\nb\r\u2028c"));
    const char *s = plain(m);
    ck_assert_ptr_null(strchr(s, '\n'));
    ck_assert_ptr_null(strchr(s, '\r'));
    json_object_put(m);
}
END_TEST

START_TEST(parsed_request_round_trips)
{
    parse("{\"jsonrpc\":\"2.0\",\"id\":\"r1\",\"method\":\"tools/call\",\"params\":{\"name\":\"echo\"}}");
    ck_assert_int_eq(msg.kind, TH_RPC_REQUEST);
    json_object *m = th_rpc_result(msg.id, json_object_new_object());
    ck_assert_str_eq(plain(m), "{\"jsonrpc\":\"2.0\",\"id\":\"r1\",\"result\":{}}");
    json_object_put(m);
}
END_TEST

/* ---- numbers and strings kept exactly ------------------------------------ */

/* The id a message serialises back to, and its key (malloc'd). */
static char *parsed_key(const char *id_json, char *echo, size_t size)
{
    char text[4096];
    snprintf(text, sizeof text, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"ping\"}", id_json);
    th_rpc_msg m;
    th_rpc_parse(text, strlen(text), &m);
    ck_assert_msg(m.kind == TH_RPC_REQUEST, "%s: kind %d (%s)", text, m.kind, m.error_message);
    json_object *reply = th_rpc_result(m.id, json_object_new_object());
    size_t len;
    snprintf(echo, size, "%s", th_rpc_serialize(reply, &len));
    json_object_put(reply);
    char *key = th_rpc_id_key(m.id);
    ck_assert_ptr_nonnull(key);
    /* The same key written into a caller's buffer, or malloc'd when it
     * does not fit there. */
    char small[6], here[32];
    char *in_small = th_rpc_id_key_in(m.id, small, sizeof small), *in_here = th_rpc_id_key_in(m.id, here, sizeof here);
    ck_assert_str_eq(in_small, key);
    ck_assert_str_eq(in_here, key);
    ck_assert(strlen(key) < sizeof small || in_small != small);
    ck_assert(strlen(key) < sizeof here || in_here != here);
    if (in_small != small)
        free(in_small);
    if (in_here != here)
        free(in_here);
    th_rpc_msg_clear(&m);
    return key;
}

/* An id echoed byte for byte: the reply holds "id":ID_JSON. */
static void assert_echo(const char *id_json, const char *echo)
{
    char want[4200];
    snprintf(want, sizeof want, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}", id_json);
    ck_assert_str_eq(echo, want);
}

/* json-c clamps integers outside [-2^63, 2^64-1]; ids and values past them
 * keep their literal, and distinct literals stay distinct. */
START_TEST(huge_integers_are_kept_as_sent)
{
    static const char *const ids[] = {"18446744073709551616", "18446744073709551615", "18446744073709551617",
                                      "-9223372036854775809", "-9223372036854775808",
                                      "123456789012345678901234567890"};
    enum { N = sizeof ids / sizeof ids[0] };
    char *keys[N], echo[4200];
    for (int i = 0; i < N; i++) {
        keys[i] = parsed_key(ids[i], echo, sizeof echo);
        assert_echo(ids[i], echo);
    }
    for (int i = 0; i < N; i++)
        for (int k = i + 1; k < N; k++)
            ck_assert_msg(strcmp(keys[i], keys[k]) != 0, "%s and %s share the key %s", ids[i], ids[k], keys[i]);
    for (int i = 0; i < N; i++)
        free(keys[i]);

    /* Nested, in arrays, and under a duplicate key (json-c keeps the last). */
    parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{\"a\":[1,99999999999999999999999,"
          "{\"b\":-99999999999999999999}],\"c\":5,\"c\":77777777777777777777}}");
    ck_assert_int_eq(msg.kind, TH_RPC_REQUEST);
    ck_assert_str_eq(json_object_to_json_string_ext(msg.params, JSON_C_TO_STRING_PLAIN),
                     "{\"a\":[1,99999999999999999999999,{\"b\":-99999999999999999999}],\"c\":77777777777777777777}");
    json_object *big = json_object_array_get_idx(json_object_object_get(msg.params, "a"), 1);
    ck_assert(json_object_is_type(big, json_type_double)); /* never a clamped int */
    ck_assert(json_object_get_double(big) > 9.9e22);
    th_rpc_msg_clear(&msg);
    parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{\"c\":77777777777777777777,\"c\":5}}");
    ck_assert_str_eq(json_object_to_json_string_ext(msg.params, JSON_C_TO_STRING_PLAIN), "{\"c\":5}");
    th_rpc_msg_clear(&msg);
    /* Siblings before and after, deeper nesting, a lone surrogate beside. */
    parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{\"a\":[{\"x\":1},[2,[3,99999999999999999999]],"
          "\"\\ud800\",\"z\"],\"b\":\"\\udbff\",\"b\":\"ok\",\"d\":{\"e\":[\"\\udc00x\"]}}}");
    ck_assert_int_eq(msg.kind, TH_RPC_REQUEST);
    ck_assert_str_eq(json_object_to_json_string_ext(msg.params, JSON_C_TO_STRING_PLAIN),
                     "{\"a\":[{\"x\":1},[2,[3,99999999999999999999]],\"\\ud800\",\"z\"],\"b\":\"ok\","
                     "\"d\":{\"e\":[\"\\udc00x\"]}}");
}
END_TEST

/* A lone surrogate has no UTF-8 form; json-c decodes it to U+FFFD. The id
 * is still answered as sent, and keyed apart from other lone surrogates
 * and from U+FFFD itself. */
START_TEST(lone_surrogate_ids_are_kept_as_sent)
{
    char echo[4200];
    char *a = parsed_key("\"\\ud800\"", echo, sizeof echo);
    assert_echo("\"\\ud800\"", echo);
    char *b = parsed_key("\"\\udbff\"", echo, sizeof echo);
    assert_echo("\"\\udbff\"", echo);
    char *c2 = parsed_key("\"\\ufffd\"", echo, sizeof echo);
    char *d = parsed_key("\"\\uD800\"", echo, sizeof echo); /* same value as \ud800 */
    assert_echo("\"\\uD800\"", echo);
    char *e = parsed_key("\"x\\udc00\\ud83d\\ude00\\n\"", echo, sizeof echo);
    assert_echo("\"x\\udc00\\ud83d\\ude00\\n\"", echo);
    char *f = parsed_key("\"x\\udc00\xf0\x9f\x98\x80\\u000a\"", echo, sizeof echo); /* same value as e */
    ck_assert_str_ne(a, b);
    ck_assert_str_ne(a, c2);
    ck_assert_str_eq(a, d);
    ck_assert_str_eq(e, f);
    free(a);
    free(b);
    free(c2);
    free(d);
    free(e);
    free(f);
}
END_TEST

/* ---- id keys ------------------------------------------------------------- */

START_TEST(id_keys_distinguish_types)
{
    json_object *n = json_object_new_int(12), *s = json_object_new_string("12");
    char *a = th_rpc_id_key(n), *b = th_rpc_id_key(s);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert_str_ne(a, b);
    json_object *n2 = json_object_new_int64(12);
    char *c = th_rpc_id_key(n2);
    ck_assert_str_eq(a, c);
    json_object_put(n);
    json_object_put(s);
    json_object_put(n2);
    free(a);
    free(b);
    free(c);
}
END_TEST

/* Numeric ids compare by value: cancelling 8.0 names the call 8. */
START_TEST(numeric_id_keys_compare_by_value)
{
    static const char *const same[] = {"8", "8.0", "8.000", "0.8e1", "80e-1", "8E0", "800e-2"};
    static const char *const other[] = {"8.5", "80", "-8", "0.8", "18", "9"};
    char echo[4200];
    char *k8 = parsed_key("8", echo, sizeof echo);
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        char *k = parsed_key(same[i], echo, sizeof echo);
        ck_assert_msg(strcmp(k, k8) == 0, "%s: key %s, want %s", same[i], k, k8);
        free(k);
    }
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++) {
        char *k = parsed_key(other[i], echo, sizeof echo);
        ck_assert_msg(strcmp(k, k8) != 0, "%s shares the key of 8", other[i]);
        free(k);
    }
    char *z1 = parsed_key("0", echo, sizeof echo), *z2 = parsed_key("0.0e5", echo, sizeof echo);
    ck_assert_str_eq(z1, z2);
    free(z1);
    free(z2);
    free(k8);
}
END_TEST

/* No fixed limit on the key: an id is bounded by the message alone. */
START_TEST(long_ids_have_keys)
{
    char id[3003], echo[4200];
    id[0] = '"';
    memset(id + 1, 'k', 3000);
    id[3001] = '\0';
    strcat(id, "\"");
    char *k = parsed_key(id, echo, sizeof echo);
    ck_assert_uint_gt(strlen(k), 3000);
    free(k);
}
END_TEST

/* MCP ids are strings or numbers: a fractional id is a request too, and
 * string ids that differ only after an embedded NUL get different keys. */
START_TEST(fractional_ids_and_nul_in_string_ids)
{
    parse("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}");
    ck_assert_int_eq(msg.kind, TH_RPC_REQUEST);
    ck_assert_str_eq(id_text(), "1.5");
    json_object *x = json_tokener_parse("\"a\\u0000b\""), *y = json_tokener_parse("\"a\\u0000c\"");
    char *a = th_rpc_id_key(x), *b = th_rpc_id_key(y);
    ck_assert(a && b);
    ck_assert_str_ne(a, b);
    free(a);
    free(b);
    json_object_put(x);
    json_object_put(y);
    th_rpc_msg_clear(&msg);
    parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\\u0000x\"}");
    ASSERT_INVALID(TH_RPC_INVALID_REQUEST);
}
END_TEST

/* Integer ids and plain string ids take a quick way to their key (no
 * serialising); ids equal in value to them that take the general way
 * (fractions, exponents, escapes) must still get the same key. */
START_TEST(quick_id_keys_match_general_ones)
{
    static const char *const pairs[][2] = {
        {"800", "8e2"},       {"-120", "-1.2e2"}, {"1000000000000", "1e12"}, {"-7", "-7.0"},
        {"0", "-0.0"},        {"120", "12e1"},    {"\"abc\"", "\"\\u0061bc\""}, {"\"a-b c\"", "\"a\\u002db c\""},
        {"9007199254740993", "9007199254740993.0"},
    };
    char echo[4200];
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        char *a = parsed_key(pairs[i][0], echo, sizeof echo), *b = parsed_key(pairs[i][1], echo, sizeof echo);
        ck_assert_msg(strcmp(a, b) == 0, "%s: key %s, %s: key %s", pairs[i][0], a, pairs[i][1], b);
        free(a);
        free(b);
    }
    char *p = parsed_key("12", echo, sizeof echo), *q = parsed_key("\"12\"", echo, sizeof echo),
         *r = parsed_key("\"a/b\"", echo, sizeof echo), *t = parsed_key("\"a\\/b\"", echo, sizeof echo);
    ck_assert_str_ne(p, q);
    ck_assert_str_eq(r, t);
    free(p);
    free(q);
    free(r);
    free(t);
}
END_TEST

START_TEST(id_key_refuses_other_types)
{
    json_object *d = json_object_new_boolean(1);
    ck_assert_ptr_null(th_rpc_id_key(d));
    ck_assert_ptr_null(th_rpc_id_key(NULL));
    json_object_put(d);
}
END_TEST

/* A spliced result serialises exactly as the tree th_rpc_result builds with
 * the tail's members added last: ids of every kind, an empty result, none. */
START_TEST(spliced_results_match_built_ones)
{
    static const char *const ids[] = {
        "7", "\"a\\\"b\\ud800\"", "null", "12345678901234567890", "1.50", "-42", "0", "\"plain/id~\"",
        "\"an id of more than sixty-four characters, which takes json-c's own text .....\"", "\"tab\\there\"",
        "9223372036854775807", "-9223372036854775808", "18446744073709551615", "\"caf\u00e9\""};
    static const char *const results[] = {"{}", "{\"content\":[{\"type\":\"text\",\"text\":\"x/y\"}],\"isError\":false}"};
    static const char tail[] = "{\"resultType\":\"complete\",\"_meta\":{\"k\":{\"name\":\"n\\\"\"}}}";
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        for (size_t r = 0; r < sizeof results / sizeof results[0]; r++) {
            for (int with_tail = 0; with_tail < 2; with_tail++) {
                char line[512];
                snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"m\"}", ids[i]);
                parse(line);
                json_object *id = strcmp(ids[i], "null") ? msg.id : NULL; /* refused as a request id */
                ck_assert(id || msg.kind == TH_RPC_INVALID);
                json_object *want_res = json_tokener_parse(results[r]);
                if (with_tail) {
                    json_object *t = json_tokener_parse(tail);
                    json_object_object_foreach(t, k, v) json_object_object_add(want_res, k, json_object_get(v));
                    json_object_put(t);
                }
                json_object *want = th_rpc_result(id, want_res);
                json_object *got = th_rpc_result_spliced(id, json_tokener_parse(results[r]), with_tail ? tail : NULL);
                size_t wl, gl;
                const char *w = th_rpc_serialize(want, &wl), *g = th_rpc_serialize(got, &gl);
                ck_assert_msg(wl == gl && memcmp(w, g, wl) == 0, "want %s\n got %s", w, g);
                /* The same text appended to a buffer, as the stdio transport
                 * writes it, after what the buffer already holds; a message
                 * that is not spliced too. */
                json_object *again = th_rpc_result_spliced(id, json_tokener_parse(results[r]), with_tail ? tail : NULL);
                th_buf b = {0};
                ck_assert(th_buf_append(&b, "x\n", 2));
                ck_assert(th_rpc_write(again, &b));
                ck_assert_msg(b.len == wl + 2 && memcmp(b.data + 2, w, wl) == 0, "want %s\n got %s", w, b.data + 2);
                b.len = 0;
                ck_assert(th_rpc_write(want, &b));
                ck_assert_msg(b.len == wl && strcmp(b.data, w) == 0, "want %s\n got %s", w, b.data);
                /* The response made as text: the same bytes, and its
                 * members, as sent, for a transport that looks for them. */
                size_t at;
                b.len = 0;
                ck_assert(th_buf_append(&b, "x", 1));
                ck_assert(th_rpc_response_text_begin(&b, id, &at));
                ck_assert(th_buf_append(&b, results[r], strlen(results[r])));
                ck_assert(th_rpc_response_text_end(&b, at, with_tail ? tail : NULL));
                ck_assert_msg(b.len == wl + 1 && strcmp(b.data + 1, w) == 0, "want %s\n got %s", w, b.data + 1);
                json_object *text = th_rpc_response_text(id, b.data + 1, b.len - 1, at - 1);
                ck_assert_ptr_nonnull(text);
                b.len = 0;
                ck_assert(th_rpc_write(text, &b));
                ck_assert_msg(b.len == wl && strcmp(b.data, w) == 0, "want %s\n got %s", w, b.data);
                const char *t = th_rpc_serialize(text, &gl);
                ck_assert_msg(gl == wl && strcmp(t, w) == 0, "want %s\n got %s", w, t);
                json_object *member = NULL, *want_member = NULL;
                ck_assert(th_rpc_member(text, "id", &member));
                ck_assert_ptr_eq(member, id);
                ck_assert(th_rpc_member(text, "result", NULL));
                ck_assert(th_rpc_member(text, "result", &member));
                ck_assert(json_object_object_get_ex(want, "result", &want_member));
                ck_assert(json_object_equal(member, want_member));
                ck_assert(!th_rpc_member(text, "error", NULL));
                /* Looked into, it still writes the same text. */
                b.len = 0;
                ck_assert(th_rpc_write(text, &b));
                ck_assert_msg(b.len == wl && strcmp(b.data, w) == 0, "want %s\n got %s", w, b.data);
                json_object_put(text);
                free(b.data);
                json_object_put(again);
                json_object_put(want);
                json_object_put(got);
                th_rpc_msg_clear(&msg);
            }
        }
    }
}
END_TEST

static Suite *jsonrpc_suite(void)
{
    Suite *s = suite_create("jsonrpc");
    TCase *tc = tcase_create("parse");
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_add_test(tc, request_with_int_id);
    tcase_add_test(tc, nesting_limit);
    tcase_add_test(tc, request_with_string_id_no_params);
    tcase_add_test(tc, notification);
    tcase_add_test(tc, responses_are_recognised);
    tcase_add_test(tc, surrounding_white_space_is_fine);
    tcase_add_loop_test(tc, unparseable_is_parse_error, 0, (int)(sizeof unparseable / sizeof unparseable[0]));
    tcase_add_test(tc, invalid_utf8_is_parse_error);
    tcase_add_test(tc, embedded_length_is_respected);
    tcase_add_loop_test(tc, nan_and_infinity_are_parse_errors, 0, (int)(sizeof nonfinite / sizeof nonfinite[0]));
    tcase_add_test(tc, trailing_nul_is_parse_error);
    tcase_add_loop_test(tc, non_object_is_invalid_request, 0, (int)(sizeof not_objects / sizeof not_objects[0]));
    tcase_add_test(tc, arrays_are_batches);
    tcase_add_test(tc, busy_code_is_outside_the_reserved_range);
    tcase_add_loop_test(tc, structurally_wrong_is_invalid_request, 0,
                        (int)(sizeof bad_requests / sizeof bad_requests[0]));
    tcase_add_test(tc, params_not_object_is_invalid_params);
    tcase_add_test(tc, notification_with_bad_params_is_silent);
    suite_add_tcase(s, tc);

    tc = tcase_create("build");
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_add_test(tc, result_envelope);
    tcase_add_test(tc, result_with_null_id);
    tcase_add_test(tc, error_envelope);
    tcase_add_test(tc, notification_envelope);
    tcase_add_test(tc, serialised_text_has_no_raw_newline);
    tcase_add_test(tc, parsed_request_round_trips);
    tcase_add_test(tc, id_keys_distinguish_types);
    tcase_add_test(tc, id_key_refuses_other_types);
    tcase_add_test(tc, quick_id_keys_match_general_ones);
    tcase_add_test(tc, numeric_id_keys_compare_by_value);
    tcase_add_test(tc, long_ids_have_keys);
    tcase_add_test(tc, huge_integers_are_kept_as_sent);
    tcase_add_test(tc, lone_surrogate_ids_are_kept_as_sent);
    tcase_add_test(tc, fractional_ids_and_nul_in_string_ids);
    tcase_add_test(tc, spliced_results_match_built_ones);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN(jsonrpc_suite)
