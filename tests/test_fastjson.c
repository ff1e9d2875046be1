/* SPDX-License-Identifier: MIT */
/*
** test_fastjson.c: the quick JSON path (src/base/fastjson.c) builds
** exactly the tree json-c's strict tokener builds for the plain subset,
** and declines everything outside it, valid or not, so the general parser
** keeps deciding what is an error and how it reads.
*/
#include "config.h"

#include <check.h>
#include <stdio.h>
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

/* A special byte at every position of strings of many lengths (the scan
 * takes eight plain bytes at a time): an escape is decoded as the
 * tokener decodes it; a control or non-ASCII byte is declined. */
START_TEST(special_bytes_anywhere_in_strings)
{
    static const char *const specials[] = {"\\n", "\\\"", "\\\\", "\t", "\x01", "\xc3\xa9"};
    for (size_t len = 1; len < 40; len++) {
        for (size_t at = 0; at < len; at++) {
            for (size_t k = 0; k < sizeof specials / sizeof specials[0]; k++) {
                char text[128];
                int n = snprintf(text, sizeof text, "{\"s\":\"%.*s%s%.*s\"}", (int)at, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
                                 specials[k], (int)(len - at - 1), "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy");
                json_object *fast = th_fastjson_parse(text, (size_t)n);
                if (k >= 3) { /* outside the subset */
                    ck_assert_msg(fast == NULL, "accepted %s", text);
                    continue;
                }
                json_object *ref = reference(text);
                ck_assert_msg(fast && json_object_equal(fast, ref), "differs: %s", text);
                json_object_put(fast);
                json_object_put(ref);
            }
        }
    }
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

/* Messages whose envelope th_rpc_parse reads without an object
 * (th_fastjson_fields), and near misses the general path takes: every
 * one is classified exactly as classify() classifies json-c's tree. */
static const char *const envelopes[] = {
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"hi\"}}}",
    " { \"method\" : \"ping\" , \"id\" : \"s-1\" , \"jsonrpc\" : \"2.0\" } ",
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":3}}",
    "{\"jsonrpc\":\"2.0\",\"id\":-5,\"method\":\"m\",\"params\":{}}",
    "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"m\"}",
    "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"m\"}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":[1]}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":null}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":5}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"extra\":true}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"method\":\"m\"}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"to\\/ols\"}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a method name longer than the forty bytes kept in place\"}",
    "{\"jsonrpc\":\"2.0\",\"id\":1}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}",
    "{\"id\":1,\"method\":\"m\"}",
    "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"m\"}",
    "{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"m\"}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"a\":1}} x",
    "{}",
    /* tools/call's params read as members (call_lite), or whole when they
     * hold anything else; other methods' as an object either way. */
    "{\"params\":{\"arguments\":{\"text\":\"x\"},\"_meta\":{\"progressToken\":7},\"name\":\"echo\"},"
    "\"method\":\"tools/call\",\"id\":2,\"jsonrpc\":\"2.0\"}",
    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":null,\"_meta\":null}}",
    "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"arguments\":{}}}",
    "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{}}",
    "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":5,\"arguments\":{}}}",
    "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"e\\\"cho\",\"arguments\":{}}}",
    "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"task\":{\"ttl\":5}}}",
    "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"name\":\"add\"}}",
    "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"n\":1.5}}}",
    "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/call\",\"params\":{\"arguments\":[1],\"name\":\"echo\"}}",
    "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"prompts/get\",\"params\":{\"arguments\":{\"a\":\"b\"},\"name\":\"p\"}}",
    "{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"name\":\"echo\"}}",
    "{\"jsonrpc\":\"2.0\",\"id\":13,\"method\":\"tools/call\",\"params\":{\"name\":\""
    "a tool name of more than the hundred and twenty-seven bytes a message keeps in place, which is "
    "read as an object instead, as every other method's params are\"}}",
};

/* The params object M stands for: its own, or one built from a plain
 * tools/call's members (call_lite). The caller puts it. */
static json_object *params_of(const th_rpc_msg *m)
{
    if (!m->call_lite)
        return json_object_get(m->params);
    ck_assert_ptr_null(m->params);
    json_object *o = json_object_new_object();
    if (m->call_has_name)
        json_object_object_add(o, "name", json_object_new_string(m->call_name));
    if (m->call_has_args)
        json_object_object_add(o, "arguments", json_object_get(m->call_args));
    if (m->call_has_meta)
        json_object_object_add(o, "_meta", json_object_get(m->call_meta));
    return o;
}

START_TEST(envelopes_classify_as_trees_do)
{
    const char *text = envelopes[_i];
    th_rpc_msg got, want;
    th_rpc_parse(text, strlen(text), &got);
    json_tokener *tok = json_tokener_new();
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    json_object *tree = json_tokener_parse_ex(tok, text, (int)strlen(text));
    if (tree && json_tokener_get_parse_end(tok) != strlen(text)) {
        json_object_put(tree);
        tree = NULL;
    }
    json_tokener_free(tok);
    if (!tree) { /* not (one) JSON value: the general path says so */
        ck_assert_int_eq(got.kind, TH_RPC_INVALID);
        ck_assert_int_eq(got.error_code, TH_RPC_PARSE_ERROR);
        th_rpc_msg_clear(&got);
        return;
    }
    th_rpc_parse_value(tree, &want);
    json_object_put(tree);
    ck_assert_msg(got.kind == want.kind, "%s: kind %d, want %d", text, got.kind, want.kind);
    ck_assert_int_eq(got.error_code, want.error_code);
    ck_assert_str_eq(got.error_message, want.error_message);
    ck_assert(got.silent == want.silent);
    ck_assert(json_object_equal(got.id, want.id));
    ck_assert((got.id == NULL) == (want.id == NULL));
    json_object *params = params_of(&got);
    ck_assert_msg(json_object_equal(params, want.params), "%s: params %s", text, json_object_to_json_string(params));
    ck_assert((params == NULL) == (want.params == NULL));
    /* In the order they came, as json-c keeps an object's members. */
    if (params && json_object_is_type(params, json_type_object) && !got.call_lite)
        ck_assert_str_eq(json_object_to_json_string(got.params), json_object_to_json_string(want.params));
    json_object_put(params);
    /* Only a plain tools/call is read as members, and every plain one is. */
    if (got.call_lite)
        ck_assert_str_eq(got.method, "tools/call");
    ck_assert((got.method == NULL) == (want.method == NULL));
    if (want.method)
        ck_assert_str_eq(got.method, want.method);
    th_rpc_msg_clear(&got);
    th_rpc_msg_clear(&want);
}
END_TEST

/* A plain tools/call costs no object for its params; one whose params hold
 * more than name, arguments and _meta, or another method, gets one. */
START_TEST(tools_call_params_as_members)
{
    static const char call[] =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"hi\"}}}";
    th_rpc_msg m;
    th_rpc_parse(call, sizeof call - 1, &m);
    ck_assert_int_eq(m.kind, TH_RPC_REQUEST);
    ck_assert(m.call_lite && m.call_has_name && m.call_has_args && !m.call_has_meta);
    ck_assert_ptr_null(m.params);
    ck_assert_str_eq(m.call_name, "echo");
    ck_assert_str_eq(json_object_to_json_string_ext(m.call_args, JSON_C_TO_STRING_PLAIN), "{\"text\":\"hi\"}");
    /* Taken by the call: clearing frees what is left, once. */
    json_object *args = m.call_args;
    m.call_args = NULL;
    th_rpc_msg_clear(&m);
    json_object_put(args);
    static const char task[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                               "\"arguments\":{},\"task\":{}}}";
    th_rpc_parse(task, sizeof task - 1, &m);
    ck_assert(!m.call_lite && json_object_is_type(m.params, json_type_object));
    ck_assert_int_eq(json_object_object_length(m.params), 3);
    th_rpc_msg_clear(&m);
    static const char prompt[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"prompts/get\",\"params\":{\"name\":\"p\"}}";
    th_rpc_parse(prompt, sizeof prompt - 1, &m);
    ck_assert(!m.call_lite && m.params && m.own_params == m.params && !m.msg);
    ck_assert_str_eq(json_object_to_json_string_ext(m.params, JSON_C_TO_STRING_PLAIN), "{\"name\":\"p\"}");
    th_rpc_msg_clear(&m);
}
END_TEST

/* th_fastjson_fields itself: values handed over, text kept in place,
 * and a decline leaves nothing behind. */
START_TEST(fields_read_members)
{
    th_fastjson_field f[] = {{.name = "a", .as_text = true}, {.name = "b"}, {.name = "c"}};
    const char *t = "{\"b\":[1,{\"x\":null}],\"a\":\"text\",\"c\":null}";
    ck_assert(th_fastjson_fields(t, strlen(t), f, 3));
    ck_assert(f[0].present && f[1].present && f[2].present);
    ck_assert_uint_eq(f[0].len, 4);
    ck_assert_ptr_eq(f[0].text, strstr(t, "text"));
    ck_assert_str_eq(json_object_to_json_string_ext(f[1].value, JSON_C_TO_STRING_PLAIN), "[1,{\"x\":null}]");
    /* The value's own text, for a caller that passes it on as it came. */
    ck_assert_ptr_eq(f[1].span, strstr(t, "[1,"));
    ck_assert_uint_eq(f[1].span_len, strlen("[1,{\"x\":null}]"));
    ck_assert_ptr_null(f[2].value);
    json_object_put(f[1].value);
    static const char *const no[] = {"{\"a\":1}", "{\"a\":\"x\\ny\"}", "{\"b\":1,\"b\":2}", "{\"d\":1}",
                                     "{\"b\":[1,2}", "[1]", "{\"b\":1", "{\"b\":1}{}", "{\"\\u0062\":1}"};
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        ck_assert_msg(!th_fastjson_fields(no[i], strlen(no[i]), f, 3), "accepted %s", no[i]);
        for (size_t k = 0; k < 3; k++)
            ck_assert(!f[k].present && !f[k].value);
    }
    ck_assert(th_fastjson_fields(" {} ", 4, f, 3));
    ck_assert(!f[0].present && !f[1].present && !f[2].present);
}
END_TEST

/* An object member read into sub-fields when its members allow, else
 * whole; a decline of the whole text leaves nothing in either. */
START_TEST(fields_read_sub_members)
{
    th_fastjson_field sub[] = {{.name = "n", .as_text = true}, {.name = "v"}};
    th_fastjson_field f[] = {{.name = "p", .sub = sub, .nsub = 2}, {.name = "q"}};
    const char *t = "{\"q\":1,\"p\":{\"v\":{\"deep\":[true]},\"n\":\"name\"}}";
    ck_assert(th_fastjson_fields(t, strlen(t), f, 2));
    ck_assert(f[0].present && f[0].in_sub && !f[0].value && f[0].order == 1 && f[1].order == 0);
    ck_assert(sub[0].present && sub[1].present && sub[0].order == 1 && sub[1].order == 0);
    ck_assert_uint_eq(sub[0].len, 4);
    ck_assert_ptr_eq(sub[0].text, strstr(t, "name"));
    ck_assert_str_eq(json_object_to_json_string_ext(sub[1].value, JSON_C_TO_STRING_PLAIN), "{\"deep\":[true]}");
    json_object_put(sub[1].value);
    json_object_put(f[1].value);
    /* Not the sub-fields' shape: the member's value whole, as usual. */
    static const char *const whole[] = {"{\"p\":{\"n\":\"a\",\"x\":1}}", "{\"p\":{\"n\":1}}", "{\"p\":{\"n\":\"a\\tb\"}}",
                                        "{\"p\":{\"v\":1,\"v\":2}}", "{\"p\":[{\"n\":\"a\"}]}", "{\"p\":\"s\"}"};
    for (size_t i = 0; i < sizeof whole / sizeof whole[0]; i++) {
        ck_assert_msg(th_fastjson_fields(whole[i], strlen(whole[i]), f, 2), "declined %s", whole[i]);
        ck_assert(f[0].present && !f[0].in_sub && f[0].value);
        ck_assert(!sub[0].present && !sub[1].present && !sub[1].value);
        json_object *tree = json_tokener_parse(whole[i]), *p;
        ck_assert(json_object_object_get_ex(tree, "p", &p));
        ck_assert(json_object_equal(f[0].value, p));
        json_object_put(tree);
        json_object_put(f[0].value);
    }
    /* Declined as a whole after the sub-fields were read: nothing kept. */
    static const char *const no[] = {"{\"p\":{\"n\":\"a\",\"v\":[1]},\"x\":1}", "{\"p\":{\"v\":[1]}} x",
                                     "{\"p\":{\"v\":[1],\"n\":\"a\"},\"p\":{}}", "{\"p\":{\"v\":[1.5]}}"};
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        ck_assert_msg(!th_fastjson_fields(no[i], strlen(no[i]), f, 2), "accepted %s", no[i]);
        ck_assert(!f[0].present && !f[0].in_sub && !f[0].value && !f[1].present);
        ck_assert(!sub[0].present && !sub[1].present && !sub[1].value);
    }
}
END_TEST

static Suite *fastjson_suite(void)
{
    Suite *s = suite_create("fastjson");
    TCase *tc = tcase_create("core");
    tcase_add_loop_test(tc, plain_messages_build_the_tokeners_tree, 0, (int)(sizeof plain / sizeof plain[0]));
    tcase_add_loop_test(tc, other_text_is_declined, 0, (int)(sizeof declined / sizeof declined[0]));
    tcase_add_test(tc, length_not_nul_bounds_the_text);
    tcase_add_test(tc, special_bytes_anywhere_in_strings);
    tcase_add_test(tc, rpc_parse_uses_it);
    tcase_add_loop_test(tc, envelopes_classify_as_trees_do, 0, (int)(sizeof envelopes / sizeof envelopes[0]));
    tcase_add_test(tc, fields_read_members);
    tcase_add_test(tc, fields_read_sub_members);
    tcase_add_test(tc, tools_call_params_as_members);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN(fastjson_suite)
