/* SPDX-License-Identifier: MIT */
/*
** test_jsontree.c: src/base/jsontree.c against json-c itself: th_json_append
** writes byte for byte what json-c's compact serialiser writes, and
** th_json_get answers as json_object_object_get_ex does, for small and
** large objects alike.
*/
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsontree.h"
#include "check_main.h"

#define FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

/* O appended after a prefix equals json-c's text of O, NUL-terminated. */
static void same_text(json_object *o)
{
    th_buf b = {0};
    ck_assert(th_buf_append(&b, "pre", 3));
    ck_assert(th_json_append(&b, o));
    const char *want = o ? json_object_to_json_string_ext(o, FLAGS) : "null";
    ck_assert_msg(b.len == 3 + strlen(want) && strcmp(b.data + 3, want) == 0, "want %s\n got %s", want, b.data + 3);
    free(b.data);
}

/* Texts json-c's tokener reads into trees of every type, with strings
 * that need each kind of escape. */
static const char *const texts[] = {
    "{}", "[]", "{\"a\":null,\"b\":[null,true,false],\"c\":{}}",
    "{\"q\":\"\\\" \\\\ / \\b\\f\\n\\r\\t \\u0001\\u001f\\u007f end\",\"k\\n\\\"ey/\":1}",
    "{\"utf8\":\"caf\xc3\xa9 \xf0\x9f\x98\x80\",\"nul\":\"a\\u0000b\"}",
    "[0,-1,9223372036854775807,-9223372036854775808,18446744073709551615,123456789]",
    "[1.5,-0.0,1e300,0.1,3.0]",
    "{\"content\":[{\"type\":\"text\",\"text\":\"xxxxxxxx\"}],\"isError\":false}",
    "[[[[[[[[[[{\"deep\":[[[[\"x\"]]]]}]]]]]]]]]]",
};

/* A string's bytes appended alone, as a string object of them is. */
START_TEST(append_string_matches_the_object)
{
    char s[300];
    for (int i = 0; i < 300; i++)
        s[i] = (char)(i * 7 + 3);
    for (size_t n = 0; n <= sizeof s; n += 13) {
        json_object *o = json_object_new_string_len(s, (int)n);
        th_buf a = {0}, b = {0};
        ck_assert(th_buf_append(&a, "x", 1) && th_buf_append(&b, "x", 1));
        ck_assert(th_json_append_string(&a, s, n));
        ck_assert(th_json_append(&b, o));
        ck_assert_uint_eq(a.len, b.len);
        ck_assert(memcmp(a.data, b.data, a.len + 1) == 0);
        free(a.data);
        free(b.data);
        json_object_put(o);
    }
}
END_TEST

/* th_fmt_u64 writes what printf writes, at every digit count. */
START_TEST(fmt_u64_matches_printf)
{
    unsigned long long v[] = {0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 4096, 65535, 99999, 100000, 1234567,
                              4294967295ULL, 10000000000ULL, 999999999999999999ULL, 1000000000000000000ULL,
                              9223372036854775807ULL, 18446744073709551615ULL};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        for (int d = -1; d <= 1; d++) {
            unsigned long long x = v[i] + (unsigned long long)d;
            char got[32], want[32];
            memset(got, 'z', sizeof got);
            size_t n = th_fmt_u64(got, x);
            snprintf(want, sizeof want, "%llu", x);
            ck_assert_str_eq(got, want);
            ck_assert_uint_eq(n, strlen(want));
        }
}
END_TEST

START_TEST(append_matches_json_c)
{
    json_object *o = json_tokener_parse(texts[_i]);
    ck_assert_ptr_nonnull(o);
    same_text(o);
    json_object_put(o);
}
END_TEST

/* Every byte value in a string, and a string longer than the quick
 * reservation, escaped as json-c escapes them. */
START_TEST(append_escapes_every_byte)
{
    char s[256];
    for (int i = 0; i < 256; i++)
        s[i] = (char)i;
    json_object *o = json_object_new_string_len(s, 256);
    same_text(o);
    json_object_put(o);
    size_t n = 10000;
    char *big = malloc(n);
    for (size_t i = 0; i < n; i++)
        big[i] = (char)(i % 7 == 0 ? '\n' : i % 11 == 0 ? 0x01 : 'a' + i % 26);
    o = json_object_new_string_len(big, (int)n);
    same_text(o);
    json_object_put(o);
    free(big);
    /* Escapes at every position of short strings, across the eight-byte
     * steps plain bytes are copied in, into buffers of every fill. */
    char t[40];
    for (size_t len = 1; len < sizeof t; len++) {
        for (size_t at = 0; at < len; at++) {
            memset(t, 'x', len);
            t[at] = at % 3 == 0 ? '"' : at % 3 == 1 ? '\x02' : '\\';
            o = json_object_new_string_len(t, (int)len);
            same_text(o);
            json_object_put(o);
        }
    }
}
END_TEST

/* A value with a serializer of its own is written by it, at any depth. */
START_TEST(append_keeps_custom_serializers)
{
    json_object *o = json_object_new_object(), *arr = json_object_new_array();
    json_object *raw = json_object_new_string("ignored");
    json_object_set_serializer(raw, json_object_userdata_to_json_string, strdup("\"as sent\\ud800\""),
                               json_object_free_userdata);
    json_object_array_add(arr, raw);
    json_object_array_add(arr, json_object_new_double_s(1.0, "1.000"));
    json_object_array_add(arr, NULL);
    json_object_object_add(o, "a", arr);
    same_text(o);
    same_text(NULL);
    json_object_put(o);
}
END_TEST

/* th_json_get: present, absent, null-valued members; non-objects; an
 * object past the walked size. */
START_TEST(get_matches_get_ex)
{
    /* Keys of every length around the eight bytes compared inline, and
     * long ones that share a prefix (MCP's _meta names). */
    json_object *small = json_tokener_parse("{\"a\":1,\"b\":null,\"c\":\"x\",\"abcdefg\":2,\"abcdefgh\":3,"
                                            "\"abcdefghi\":4,\"io.modelcontextprotocol/protocolVersion\":5}");
    json_object *big = json_object_new_object();
    for (int i = 0; i < 40; i++) {
        char k[16];
        snprintf(k, sizeof k, "k%d", i);
        json_object_object_add(big, k, json_object_new_int(i));
    }
    json_object *arr = json_object_new_array();
    json_object *objs[] = {small, big, arr, NULL};
    const char *keys[] = {"a", "b", "c", "d", "k0", "k39", "k40", "", "abcdefg", "abcdefgh", "abcdefghi",
                          "abcdefgH", "abcdefghI", "abcdefgh\xff", "io.modelcontextprotocol/protocolVersion",
                          "io.modelcontextprotocol/protocolVersio", "io.modelcontextprotocol/protocolVersionX",
                          "io.modelcontextprotocol/clientCapabilities"};
    for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++) {
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            json_object *want = (json_object *)&want, *got = (json_object *)&got;
            bool w = json_object_object_get_ex(objs[i], keys[k], &want);
            bool g = th_json_get(objs[i], keys[k], &got);
            ck_assert_msg(w == g && want == got, "object %zu key %s", i, keys[k]);
            ck_assert(th_json_get(objs[i], keys[k], NULL) == w);
        }
    }
    json_object_put(small);
    json_object_put(big);
    json_object_put(arr);
}
END_TEST

/* A carrier prints as its block says, is known only by its own tag, and
 * frees its block with itself; plain ints and other kinds are not taken. */
typedef struct carried_text {
    th_json_tag tag;
    int *freed;
    char text[16];
} carried_text;

static const char tag_a = 0, tag_b = 0;

static int carried_print(json_object *o, struct printbuf *pb, int level, int flags)
{
    (void)level;
    (void)flags;
    const carried_text *c = json_object_get_userdata(o);
    return printbuf_memappend(pb, c->text, (int)strlen(c->text));
}

static void carried_free(json_object *o, void *p)
{
    (void)o;
    carried_text *c = p;
    (*c->freed)++;
    free(c);
}

START_TEST(carriers_are_known_by_their_tag)
{
    int freed = 0;
    carried_text *c = calloc(1, sizeof *c);
    ck_assert_ptr_nonnull(c);
    c->freed = &freed;
    strcpy(c->text, "{\"a\":[1]}");
    json_object *o = th_json_carrier(&c->tag, &tag_a, carried_print, carried_free);
    ck_assert_ptr_nonnull(o);
    ck_assert_ptr_eq(th_json_carried(o, &tag_a), c);
    ck_assert_ptr_null(th_json_carried(o, &tag_b));
    json_object *plain = json_object_new_int(0), *obj = json_object_new_object();
    ck_assert_ptr_null(th_json_carried(plain, &tag_a));
    ck_assert_ptr_null(th_json_carried(obj, &tag_a));
    ck_assert_ptr_null(th_json_carried(NULL, &tag_a));
    /* Inside a tree, written by its own printer in both writers. */
    json_object_object_add(obj, "r", o);
    th_buf b = {0};
    ck_assert(th_json_append(&b, obj));
    ck_assert_str_eq(b.data, "{\"r\":{\"a\":[1]}}");
    ck_assert_str_eq(json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN), "{\"r\":{\"a\":[1]}}");
    free(b.data);
    json_object_put(obj);
    ck_assert_int_eq(freed, 1);
    json_object_put(plain);
}
END_TEST

static Suite *jsontree_suite(void)
{
    Suite *s = suite_create("jsontree");
    TCase *tc = tcase_create("core");
    tcase_add_loop_test(tc, append_matches_json_c, 0, (int)(sizeof texts / sizeof texts[0]));
    tcase_add_test(tc, append_escapes_every_byte);
    tcase_add_test(tc, append_string_matches_the_object);
    tcase_add_test(tc, fmt_u64_matches_printf);
    tcase_add_test(tc, carriers_are_known_by_their_tag);
    tcase_add_test(tc, append_keeps_custom_serializers);
    tcase_add_test(tc, get_matches_get_ex);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN(jsontree_suite)
