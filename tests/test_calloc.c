/* SPDX-License-Identifier: MIT */
/*
** test_calloc.c: src/calloc.c, the executable's calloc, linked into this
** test as into toolhost: every block it hands out is zeroed (a reused one
** too), overflow is refused, and other libraries (json-c, plugins) reach it.
*/
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include "config.h"

#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "check_main.h"

/* What toolhost links, compiled into this program (not a library: only an
 * executable's definition comes first in every lookup). */
#include "calloc.c"

/* Through a volatile pointer: the compiler must not drop the stores into
 * a block that is freed next. */
static void *(*volatile fill)(void *, int, size_t) = memset;

/* One assertion per block: Check's assertion reports each pass to the
 * parent process (a write), which for every byte of 200,000 took 1.5 s,
 * 2.2 s under ASan, and past the tcase's 4 s on a loaded machine. */
static void all_zero(const unsigned char *p, size_t n)
{
    size_t i = 0;
    while (i < n && p[i] == 0)
        i++;
    ck_assert_msg(i == n, "byte %zu of %zu is 0x%02x", i, n, i < n ? p[i] : 0);
}

/* A block just freed with garbage in it is what malloc hands out next for
 * that size: calloc must still return it zeroed, small or large, for both
 * of its arguments' orders. */
START_TEST(zeroed_after_reuse)
{
    static const size_t sizes[] = {1, 7, 16, 24, 100, 640, 656, 1023, 1024, 1025, 4096, 200000};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t n = sizes[i];
        for (int round = 0; round < 3; round++) {
            unsigned char *dirty = malloc(n);
            ck_assert_ptr_nonnull(dirty);
            fill(dirty, 0xA5, n);
            free(dirty);
            unsigned char *p = round == 1 ? calloc(n, 1) : calloc(1, n);
            ck_assert_ptr_nonnull(p);
            all_zero(p, n);
            /* It is an ordinary block: realloc and free take it. */
            fill(p, 0x5A, n);
            unsigned char *q = realloc(p, n + 32);
            ck_assert_ptr_nonnull(q);
            free(q);
        }
    }
    /* Several elements: the product is what is zeroed. */
    unsigned char *p = calloc(16, 40);
    ck_assert_ptr_nonnull(p);
    all_zero(p, 640);
    free(p);
}
END_TEST

START_TEST(overflow_refused)
{
    /* Volatile: the compiler refuses such sizes when it sees them. */
    volatile size_t half = SIZE_MAX / 2 + 1, two = 2;
    errno = 0;
    ck_assert_ptr_null(calloc(half, two));
    ck_assert_int_eq(errno, ENOMEM);
    errno = 0;
    ck_assert_ptr_null(calloc(two, half));
    ck_assert_int_eq(errno, ENOMEM);
    /* Zero bytes: NULL or a block free takes, either is calloc's. */
    free(calloc(0, 8));
    free(calloc(8, 0));
}
END_TEST

/* The lookup a shared object's call goes through finds this program's
 * calloc (the executable exports it), and json-c's objects, which calloc
 * their tables, come out usable. */
START_TEST(other_libraries_reach_it)
{
    ck_assert_ptr_eq(dlsym(RTLD_DEFAULT, "calloc"), (void *)calloc);
    for (int i = 0; i < 1000; i++) {
        json_object *o = json_object_new_object();
        ck_assert_ptr_nonnull(o);
        ck_assert_int_eq(json_object_object_length(o), 0);
        json_object_object_add(o, "k", json_object_new_int(i));
        json_object *v;
        ck_assert(json_object_object_get_ex(o, "k", &v));
        ck_assert_int_eq(json_object_get_int(v), i);
        ck_assert(!json_object_object_get_ex(o, "other", NULL));
        json_object_put(o);
    }
}
END_TEST

static Suite *calloc_suite(void)
{
    Suite *s = suite_create("calloc");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, zeroed_after_reuse);
    tcase_add_test(tc, overflow_refused);
    tcase_add_test(tc, other_libraries_reach_it);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(calloc_suite, th_check_nothing, th_check_nothing)
