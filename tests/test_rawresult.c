/* SPDX-License-Identifier: MIT */
/*
** test_rawresult.c: a worker's result passed on as its bytes:
** which texts the one-pass scan lets through as they are, which it leaves
** to the parse (anything not plain, and anything that is not valid), that
** a raw result writes exactly its bytes, and that th_call_finish hands it
** back only when nothing else was added to the call.
*/
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call/callctx.h"
#include "call/rawresult.h"
#include "protocol/jsonrpc.h"
#include "check_main.h"

static const char *const plain[] = {
    "{\"content\":[]}",
    "{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}",
    "{\"content\":[{\"type\":\"text\",\"text\":\"a \\\"q\\\" \\\\ \\n \\u00e9 caf\xc3\xa9\"}],\"isError\":true}",
    "{\"isError\":false,\"content\":[{\"text\":\"x\",\"type\":\"text\",\"annotations\":{\"priority\":0.5}}]}",
    "{\"content\":[{\"type\":\"image\",\"data\":\"AAAA\",\"mimeType\":\"image/png\"},"
    "{\"type\":\"audio\",\"data\":\"AAAA\",\"mimeType\":\"audio/wav\"},"
    "{\"type\":\"resource_link\",\"uri\":\"file:///x\",\"name\":\"x\"}]}",
    "{\"content\":[{\"type\":\"text\",\"text\":\"\xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf \xed\x9f\xbf\"}]}",
    "{\"content\":[{\"type\":\"text\",\"text\":\" ~\x7f\"}]}", /* the plain bytes' edges: space, '~', DEL */
    "{\"content\":[{\"type\":\"text\",\"text\":\"{}\"}],\"structuredContent\":{\"n\":-1.5e+3,\"big\":"
    "123456789012345678901234567890,\"a\":[true,false,null,0,{\"b\":[]}]}}",
};

/* Not plain: left to the parse, which refuses or accepts it by the full
 * rules. Each is NULL from th_raw_result_new. */
static const char *const not_plain[] = {
    "",
    "{}",                                                    /* no content */
    "{\"content\":{}}",                                      /* not an array */
    " {\"content\":[]}",                                     /* white space */
    "{\"content\": []}",                                     /* white space */
    "{\"content\":[]}\n",                                    /* a second line */
    "{\"content\":[]} ",                                     /* bytes after */
    "{\"content\":[]}{}",                                    /* a second value */
    "{\"content\":[],}",                                     /* trailing comma */
    "{\"content\":[],\"content\":[]}",                       /* duplicate */
    "{\"content\":[],\"_meta\":{}}",                         /* the host's member */
    "{\"content\":[],\"resultType\":\"complete\"}",          /* the host's member */
    "{\"content\":[],\"isError\":1}",                        /* not a boolean */
    "{\"content\":[],\"structuredContent\":[]}",             /* not an object */
    "{\"cont\\u0065nt\":[]}",                                /* an escaped key */
    "{\"content\":[1]}",                                     /* a block not an object */
    "{\"content\":[{}]}",                                    /* no type */
    "{\"content\":[{\"type\":\"text\"}]}",                   /* no text */
    "{\"content\":[{\"type\":\"text\",\"text\":1}]}",        /* text not a string */
    "{\"content\":[{\"type\":\"image\",\"data\":\"A\"}]}",   /* no mimeType */
    "{\"content\":[{\"type\":\"video\",\"text\":\"x\"}]}",   /* unknown type */
    "{\"content\":[{\"type\":\"text\",\"type\":\"text\",\"text\":\"x\"}]}", /* two types */
    "{\"content\":[{\"type\":\"resource\",\"resource\":{\"uri\":\"x\",\"text\":\"y\"}}]}", /* the long way */
    "{\"content\":[{\"type\":\"text\",\"text\":\"\\ud800\"}]}",              /* a surrogate escape */
    "{\"content\":[{\"type\":\"text\",\"text\":\"a\nb\"}]}",                 /* a raw newline */
    "{\"content\":[{\"type\":\"text\",\"text\":\"a\x1f\"}]}",               /* the last control character */
    "{\"content\":[{\"type\":\"text\",\"text\":\"\x01" "b\"}]}",           /* a control character first */
    "{\"content\":[{\"type\":\"text\",\"text\":\"\xff\"}]}",                 /* not UTF-8 */
    "{\"content\":[{\"type\":\"text\",\"text\":\"\xc0\xaf\"}]}",             /* overlong */
    "{\"content\":[{\"type\":\"text\",\"text\":\"\xe0\x9f\xbf\"}]}",         /* overlong */
    "{\"content\":[{\"type\":\"text\",\"text\":\"\xed\xa0\x80\"}]}",         /* a surrogate */
    "{\"content\":[{\"type\":\"text\",\"text\":\"\xf4\x90\x80\x80\"}]}",    /* past U+10FFFF */
    "{\"content\":[{\"type\":\"text\",\"text\":\"\xe2\x82\"}]}",             /* cut short */
    "{\"content\":[{\"type\":\"text\",\"text\":\"\x80\"}]}",                 /* a lone continuation */
    "{\"content\":[],\"structuredContent\":{\"\xc3\":1}}",                        /* in a key */
    "{\"content\":[{\"type\":\"text\",\"text\":\"\\x\"}]}",                  /* a bad escape */
    "{\"content\":[{\"type\":\"text\",\"text\":\"x\"}],\"structuredContent\":{\"n\":01}}",
    "{\"content\":[{\"type\":\"text\",\"text\":\"x\"}],\"structuredContent\":{\"n\":1.}}",
    "{\"content\":[{\"type\":\"text\",\"text\":\"x\"}],\"structuredContent\":{\"n\":-}}",
    "{\"content\":[{\"type\":\"text\",\"text\":\"x\"}],\"structuredContent\":{\"n\":tru}}",
    "{\"content\":[{\"type\":\"text\",\"text\":\"x\"}],\"structuredContent\":{\"n\":NaN}}",
    "{\"content\":[{\"type\":\"text\",\"text\":\"x\"}],\"structuredContent\":{\"n\"}}",
    "{\"content\":[{\"type\":\"text\",\"text\":\"x\"}]",     /* unterminated */
    "{\"content\":[{\"type\":\"text\",\"text\":\"x}]}",      /* unterminated string */
    /* A member a block's type requires, twice: a client keeps the last,
     * which the long path would refuse (fuzz_rawresult found the first). */
    "{\"content\":[{\"type\":\"text\",\"text\":\"a\",\"text\":5}]}",
    "{\"content\":[{\"type\":\"image\",\"data\":\"A\",\"mimeType\":\"image/png\",\"mimeType\":null}]}",
    "{\"content\":[{\"type\":\"resource_link\",\"uri\":\"x\",\"name\":\"x\",\"uri\":{}}]}",
    "{\"content\":[{\"type\":\"text\",\"text\":\"a\",\"text\":\"b\"}]}",
};

START_TEST(plain_results_pass_as_their_bytes)
{
    const char *t = plain[_i];
    json_object *o = th_raw_result_new(t, strlen(t));
    ck_assert_msg(o != NULL, "refused: %s", t);
    ck_assert(th_raw_result_is(o));
    /* json-c cannot see inside, so the call log and the metrics ask. */
    ck_assert_msg(th_raw_result_is_error(o) == (strstr(t, "\"isError\":true") != NULL), "isError of %s", t);
    size_t len;
    const char *out = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &len);
    ck_assert_uint_eq(len, strlen(t));
    ck_assert_msg(memcmp(out, t, len) == 0, "%s became %s", t, out);
    /* The tree of it is the same JSON. */
    json_object *tree = th_raw_result_tree(o);
    ck_assert(tree != NULL && !th_raw_result_is(tree));
    json_object *want = json_tokener_parse(t);
    ck_assert_msg(json_object_equal(tree, want), "%s", t);
    json_object_put(want);
    json_object_put(tree);
}
END_TEST

START_TEST(other_results_are_left_to_the_parse)
{
    const char *t = not_plain[_i];
    json_object *o = th_raw_result_new(t, strlen(t));
    ck_assert_msg(o == NULL, "let through: %s", t);
}
END_TEST

START_TEST(nesting_past_the_bound_is_left_to_the_parse)
{
    char buf[1024];
    size_t n = (size_t)snprintf(buf, sizeof buf, "{\"content\":[],\"structuredContent\":{\"a\":");
    for (int i = 0; i < 130; i++)
        buf[n++] = '[';
    for (int i = 0; i < 130; i++)
        buf[n++] = ']';
    n += (size_t)snprintf(buf + n, sizeof buf - n, "}}");
    ck_assert(th_raw_result_new(buf, n) == NULL);
    n = (size_t)snprintf(buf, sizeof buf, "{\"content\":[],\"structuredContent\":{\"a\":");
    for (int i = 0; i < 50; i++)
        buf[n++] = '[';
    for (int i = 0; i < 50; i++)
        buf[n++] = ']';
    n += (size_t)snprintf(buf + n, sizeof buf - n, "}}");
    json_object *o = th_raw_result_new(buf, n);
    ck_assert(o != NULL);
    json_object_put(o);
}
END_TEST

START_TEST(finish_returns_the_raw_result_only_alone)
{
    const char *t = "{\"content\":[{\"type\":\"text\",\"text\":\"from the worker\"}]}";
    th_call *c = th_call_new("t", NULL);
    th_call_set_raw(c, th_raw_result_new(t, strlen(t)));
    json_object *r = th_call_finish(c, TH_OK);
    ck_assert(th_raw_result_is(r));
    ck_assert_str_eq(json_object_to_json_string_ext(r, JSON_C_TO_STRING_PLAIN), t);
    json_object_put(r);
    th_call_free(c);

    /* An error added by the host wins; the raw result is dropped. */
    c = th_call_new("t", NULL);
    th_call_set_raw(c, th_raw_result_new(t, strlen(t)));
    th_call_error(c, "tool 't' crashed");
    r = th_call_finish(c, TH_OK);
    ck_assert(!th_raw_result_is(r));
    json_object *v;
    ck_assert(json_object_object_get_ex(r, "isError", &v) && json_object_get_boolean(v));
    json_object_put(r);
    th_call_free(c);

    /* Never finished: freed with the call. */
    c = th_call_new("t", NULL);
    th_call_set_raw(c, th_raw_result_new(t, strlen(t)));
    th_call_free(c);
}
END_TEST

START_TEST(a_response_carries_the_raw_bytes)
{
    const char *t = plain[_i];
    json_object *o = th_raw_result_new(t, strlen(t));
    ck_assert(o != NULL);
    size_t len = 0;
    const char *text = th_raw_result_text(o, &len);
    ck_assert(text != NULL && len == strlen(t) && memcmp(text, t, len) == 0);
    /* The response written straight from the bytes is the one json-c's
     * serialiser of the same message writes, with and without a tail. */
    json_object *id = json_object_new_int(7);
    for (int tail = 0; tail < 2; tail++) {
        json_object *msg = th_rpc_result_spliced(id, json_object_get(o), tail ? "{\"resultType\":\"complete\"}" : NULL);
        th_buf b = {0};
        ck_assert(th_rpc_write(msg, &b));
        size_t want_len;
        const char *want = th_rpc_serialize(msg, &want_len);
        ck_assert_msg(b.len == want_len && memcmp(b.data, want, want_len) == 0, "%.*s vs %s", (int)b.len, b.data, want);
        free(b.data);
        json_object_put(msg);
    }
    json_object_put(id);
    json_object_put(o);
    /* Any other object has no raw text. */
    json_object *tree = json_tokener_parse(t);
    ck_assert(th_raw_result_text(tree, &len) == NULL);
    json_object_put(tree);
}
END_TEST

static Suite *rawresult_suite(void)
{
    Suite *s = suite_create("rawresult");
    TCase *tc = tcase_create("scan");
    tcase_add_loop_test(tc, plain_results_pass_as_their_bytes, 0, (int)(sizeof plain / sizeof plain[0]));
    tcase_add_loop_test(tc, other_results_are_left_to_the_parse, 0, (int)(sizeof not_plain / sizeof not_plain[0]));
    tcase_add_test(tc, nesting_past_the_bound_is_left_to_the_parse);
    tcase_add_loop_test(tc, a_response_carries_the_raw_bytes, 0, (int)(sizeof plain / sizeof plain[0]));
    tcase_add_test(tc, finish_returns_the_raw_result_only_alone);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN(rawresult_suite)
