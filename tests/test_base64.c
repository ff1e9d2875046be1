/* SPDX-License-Identifier: MIT */
/*
** tests/test_base64.c: src/base/base64.c. RFC 4648's test vectors in both
** alphabets, and the texts the decoders must refuse: for base64url also
** those that spell a byte string another way; and that the standard
** encoder (plugin.h's th_base64_encode) is the URL one in its alphabet.
*/
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "base/base64.h"
#include "check_main.h"

/* RFC 4648 section 10, in the URL alphabet without padding. */
static const struct {
    const char *bytes, *text;
    size_t len;
} vectors[] = {
    {"", "", 0},
    {"f", "Zg", 1},
    {"fo", "Zm8", 2},
    {"foo", "Zm9v", 3},
    {"foob", "Zm9vYg", 4},
    {"fooba", "Zm9vYmE", 5},
    {"foobar", "Zm9vYmFy", 6},
    {"\xfb\xff", "-_8", 2},    /* '+' and '/' in the standard alphabet */
    {"\0\0", "AAA", 2},        /* 'A' is the value zero, not an absent one */
    {"\xff\xef\xbe", "_---", 3},
};

START_TEST(vectors_encode_and_decode)
{
    for (size_t i = 0; i < sizeof vectors / sizeof *vectors; i++) {
        char *t = th_b64url_encode(vectors[i].bytes, vectors[i].len);
        ck_assert_ptr_nonnull(t);
        ck_assert_str_eq(t, vectors[i].text);
        free(t);
        size_t n = 99;
        unsigned char *b = th_b64url_decode(vectors[i].text, strlen(vectors[i].text), &n);
        ck_assert_ptr_nonnull(b);
        ck_assert_uint_eq(n, vectors[i].len);
        ck_assert(memcmp(b, vectors[i].bytes, n) == 0);
        ck_assert_int_eq(b[n], '\0');
        free(b);
    }
}
END_TEST

START_TEST(every_byte_value_round_trips)
{
    unsigned char all[256];
    for (int i = 0; i < 256; i++)
        all[i] = (unsigned char)(255 - i);
    for (size_t len = 0; len <= sizeof all; len += 37) {
        char *t = th_b64url_encode(all, len);
        ck_assert_ptr_nonnull(t);
        ck_assert_uint_eq(strlen(t), (len * 4 + 2) / 3);
        ck_assert_uint_eq(strspn(t, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"), strlen(t));
        size_t n = 0;
        unsigned char *b = th_b64url_decode(t, strlen(t), &n);
        ck_assert_ptr_nonnull(b);
        ck_assert_uint_eq(n, len);
        ck_assert(memcmp(b, all, len) == 0);
        free(b);
        free(t);
    }
}
END_TEST

START_TEST(other_texts_refused)
{
    static const struct {
        const char *text;
        size_t len;
        const char *why;
    } bad[] = {
        {"Zg==", 4, "padding"},
        {"Zm8=", 4, "padding"},
        {"Z", 1, "one character left over: no byte ends there"},
        {"Zm9vY", 5, "one character left over"},
        {"Zh", 2, "unused bits set: \"Zg\" spelled another way"},
        {"Zm9", 3, "unused bits set: \"Zm8\" spelled another way"},
        {"Zm+v", 4, "the standard alphabet's '+'"},
        {"Zm/v", 4, "the standard alphabet's '/'"},
        {"Zm 9v", 5, "a space"},
        {"Zm\09v", 5, "a NUL inside"},
        {"Zm9v\n", 5, "a newline"},
        {"Zm\xc3\xa9v", 5, "a non-ASCII byte"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        size_t n = 0;
        unsigned char *b = th_b64url_decode(bad[i].text, bad[i].len, &n);
        ck_assert_msg(b == NULL, "accepted %s", bad[i].why);
    }
}
END_TEST

/* RFC 4648 section 10 as written, and the standard alphabet's two. */
START_TEST(standard_base64_decodes)
{
    static const struct {
        const char *text, *bytes;
        size_t len;
    } good[] = {
        {"", "", 0},          {"Zg==", "f", 1},       {"Zm8=", "fo", 2},        {"Zm9v", "foo", 3},
        {"Zm9vYg==", "foob", 4}, {"Zm9vYmE=", "fooba", 5}, {"Zm9vYmFy", "foobar", 6}, {"+/8=", "\xfb\xff", 2},
        {"Zh==", "f", 1}, /* unused bits are ignored: nothing standard is signed */
    };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        size_t n = 99;
        unsigned char *b = th_base64_decode(good[i].text, strlen(good[i].text), &n);
        ck_assert_msg(b != NULL, "refused %s", good[i].text);
        ck_assert_uint_eq(n, good[i].len);
        ck_assert(memcmp(b, good[i].bytes, n) == 0);
        ck_assert_int_eq(b[n], '\0');
        free(b);
    }
    static const char *const bad[] = {
        "Zg",   /* not padded */
        "Zg=",  /* not a multiple of four */
        "Z===", /* three '=' */
        "====", "Zg=A", "=Zg=", "Zm-v", "Zm_v", "Zm 9", "Zm9v\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        size_t n = 0;
        ck_assert_msg(th_base64_decode(bad[i], strlen(bad[i]), &n) == NULL, "accepted \"%s\"", bad[i]);
    }
}
END_TEST

/* The two encoders are one: the same bits, in their own alphabet, and
 * padded only in the standard one; each text decodes to the bytes. */
START_TEST(standard_and_url_encoders_agree)
{
    unsigned char all[256];
    for (int i = 0; i < 256; i++)
        all[i] = (unsigned char)(i * 7 + 3);
    for (size_t len = 0; len <= sizeof all; len++) {
        char *std = th_base64_encode(all, len), *url = th_b64url_encode(all, len);
        ck_assert_ptr_nonnull(std);
        ck_assert_ptr_nonnull(url);
        ck_assert_uint_eq(strlen(std), (len + 2) / 3 * 4);
        size_t unpadded = strcspn(std, "=");
        ck_assert_uint_eq(unpadded, strlen(url));
        for (size_t k = 0; k < unpadded; k++)
            ck_assert_int_eq(std[k] == '+' ? '-' : std[k] == '/' ? '_' : std[k], url[k]);
        size_t n = 0;
        unsigned char *b = th_base64_decode(std, strlen(std), &n);
        ck_assert_ptr_nonnull(b);
        ck_assert_uint_eq(n, len);
        ck_assert(memcmp(b, all, len) == 0);
        free(b);
        free(std);
        free(url);
    }
    char *t = th_base64_encode("\xfb\xff", 2);
    ck_assert_str_eq(t, "+/8=");
    free(t);
    ck_assert_ptr_null(th_base64_encode(NULL, 1));
}
END_TEST

static Suite *base64_suite(void)
{
    Suite *s = suite_create("base64");
    TCase *tc = tcase_create("base64");
    tcase_add_test(tc, vectors_encode_and_decode);
    tcase_add_test(tc, every_byte_value_round_trips);
    tcase_add_test(tc, other_texts_refused);
    tcase_add_test(tc, standard_base64_decodes);
    tcase_add_test(tc, standard_and_url_encoders_agree);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN(base64_suite)
