/*
** test_fastjson.c: the quick JSON path (src/base/fastjson.c) builds
** exactly the tree json-c's strict tokener builds for the plain subset,
** and declines everything outside it, valid or not, so the general parser
** keeps deciding what is an error and how it reads.
*/
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "base/fastjson.h"
#include "protocol/jsonrpc.h"
#include "check_main.h"

/* json-c's strict tokener on TEXT, as th_rpc_parse runs it. */
static json_object *reference(const char *text)
{
    json_tokener *tok = json_tokener_new_ex(TH_RPC_MAX_DEPTH);
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *o = json_tokener_parse_ex(tok, text, (int)strlen(text));
    ck_assert_int_eq(json_tokener_get_error(tok), json_tokener_success);
    json_tokener_free(tok);
    return o;
}

static const char *const plain[] = {
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"hi\"}}}",
    " {\"a\" : [1, -2, 0, true, false, null, {}, []] ,\"b\":\"x\"}\t\r\n",
    "[{\"jsonrpc\":\"2.0\",\"id\":\"s-1\",\"method\":\"ping\"},{\"id\":-999999999999999999}]",
    "{\"esc\":\"q\\\" b\\\\ s\\/ \\b\\f\\n\\r\\t end\",\"k\\n\\\"ey\":1}",
    "{\"dup\":1,\"dup\":{\"x\":2},\"other\":3}",
    "{\"id\":1,\"method\":\"m\",\"id\":2,\"params\":{\"name\":\"a\",\"arguments\":{\"text\":\"t\",\"id\":[]}}}",
    "{\"\":\"\",\"n\":123456789012345678}",
    "{\"a long key that is longer than sixty-four bytes, so it is copied to the heap\":1}",
    "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
    "{\"del\":\"\x7f\"}",
};

START_TEST(plain_messages_build_the_tokeners_tree)
{
    const char *text = plain[_i];
    json_object *fast = th_fastjson_parse(text, strlen(text)), *ref = reference(text);
    ck_assert_msg(fast != NULL, "declined: %s", text);
    ck_assert_msg(json_object_equal(fast, ref), "different trees for %s", text);
    /* Same text out, members in the same order. */
    ck_assert_str_eq(json_object_to_json_string_ext(fast, JSON_C_TO_STRING_PLAIN),
                     json_object_to_json_string_ext(ref, JSON_C_TO_STRING_PLAIN));
    json_object_put(fast);
    json_object_put(ref);
}
END_TEST

/* Valid JSON outside the subset, and invalid JSON: both go the general way. */
static const char *const declined[] = {
    "{\"x\":1.5}", "{\"x\":1e3}", "{\"x\":-0}", "{\"x\":1234567890123456789}", "{\"x\":\"\\u0041\"}",
    "{\"x\":\"caf\xc3\xa9\"}", "\"top-level string\"", "5", "", "   ", "{\"x\":01}", "{\"x\":1,}", "[1,]",
    "{\"x\":1} {}", "{\"x\":\"a\tb\"}", "{\"x\":\"\\q\"}", "{\"x\":\"unterminated}", "{\"x\" 1}", "{x:1}",
    "{\"x\":tru}", "{\"x\":True}", "{\"x\":NaN}", "{\"x\":-}", "[1 2]", "{\"x\":1", "[",
    "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]", "{\"x\":\"\\",
};

START_TEST(other_text_is_declined)
{
    const char *text = declined[_i];
    json_object *fast = th_fastjson_parse(text, strlen(text));
    ck_assert_msg(fast == NULL, "accepted: %s", text);
}
END_TEST

/* An embedded NUL ends nothing: the length does. */
START_TEST(length_not_nul_bounds_the_text)
{
    static const char text[] = "{\"a\":1}\0garbage";
    json_object *o = th_fastjson_parse(text, 7);
    ck_assert_ptr_nonnull(o);
    json_object_put(o);
    ck_assert_ptr_null(th_fastjson_parse(text, sizeof text - 1));
}
END_TEST

/* Through th_rpc_parse, a plain request is classified as before. */
START_TEST(rpc_parse_uses_it)
{
    th_rpc_msg m;
    const char *t = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\"}}";
    th_rpc_parse(t, strlen(t), &m);
    ck_assert_int_eq(m.kind, TH_RPC_REQUEST);
    ck_assert_int_eq(json_object_get_int(m.id), 7);
    th_rpc_msg_clear(&m);
    th_rpc_parse("[]", 2, &m);
    ck_assert_int_eq(m.kind, TH_RPC_INVALID);
    ck_assert_int_eq(m.error_code, TH_RPC_INVALID_REQUEST);
    th_rpc_msg_clear(&m);
}
END_TEST

static Suite *fastjson_suite(void)
{
    Suite *s = suite_create("fastjson");
    TCase *tc = tcase_create("core");
    tcase_add_loop_test(tc, plain_messages_build_the_tokeners_tree, 0, (int)(sizeof plain / sizeof plain[0]));
    tcase_add_loop_test(tc, other_text_is_declined, 0, (int)(sizeof declined / sizeof declined[0]));
    tcase_add_test(tc, length_not_nul_bounds_the_text);
    tcase_add_test(tc, rpc_parse_uses_it);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN(fastjson_suite)
