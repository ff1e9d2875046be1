/* SPDX-License-Identifier: MIT */
/*
** test_dynlib.c: a library opened on first use (src/base/dynlib.c) opens
** once whatever the number of threads, says which library or function is
** missing, and the libcrypto and libmicrohttpd tables call the real thing;
** the toolhost binary does not make the dynamic linker load either.
*/
#include "config.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <check.h>

#include "base/crypto.h"
#include "base/dynlib.h"
#include "check_main.h"
#include "transport/mhd.h"

START_TEST(missing_library_named)
{
    static const char *const names[] = {"cos"};
    static void *slots[1];
    static th_dynlib lib = TH_DYNLIB_INIT("libth-no-such-library.so.7", names, slots, 1, NULL);
    ck_assert(!th_dynlib_open(&lib));
    ck_assert_ptr_nonnull(strstr(lib.error, "libth-no-such-library.so.7"));
    ck_assert(!th_dynlib_is_open(&lib));
    /* Asked again: the same answer, not a crash or a second attempt. */
    ck_assert(!th_dynlib_open(&lib));
    ck_assert_ptr_null(slots[0]);
}
END_TEST

START_TEST(missing_function_named)
{
    static const char *const names[] = {"cos", "th_no_such_function"};
    static void *slots[2];
    static th_dynlib lib = TH_DYNLIB_INIT("libm.so.6", names, slots, 2, NULL);
    ck_assert(!th_dynlib_open(&lib));
    ck_assert_ptr_nonnull(strstr(lib.error, "th_no_such_function"));
    ck_assert_ptr_nonnull(strstr(lib.error, "libm.so.6"));
    ck_assert(!th_dynlib_is_open(&lib));
}
END_TEST

static atomic_int after_runs;
static void count_after(void)
{
    atomic_fetch_add(&after_runs, 1);
}
static const char *const libm_names[] = {"cos", "sqrt"};
static void *libm_slots[2];
static th_dynlib libm_lib = TH_DYNLIB_INIT("libm.so.6", libm_names, libm_slots, 2, count_after);

static void *open_libm(void *arg)
{
    (void)arg;
    return th_dynlib_open(&libm_lib) ? libm_slots[0] : NULL;
}

START_TEST(opens_once_across_threads)
{
    enum { N = 8 };
    pthread_t t[N];
    ck_assert(!th_dynlib_is_open(&libm_lib));
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, open_libm, NULL), 0);
    for (int i = 0; i < N; i++) {
        void *got = NULL;
        pthread_join(t[i], &got);
        ck_assert_ptr_nonnull(got); /* every thread saw the slots filled */
    }
    ck_assert_int_eq(atomic_load(&after_runs), 1);
    ck_assert(th_dynlib_is_open(&libm_lib));
    double (*my_sqrt)(double) = (double (*)(double))libm_slots[1];
    ck_assert(my_sqrt(16.0) == 4.0);
}
END_TEST

/* Check forks each test: this process has not opened libcrypto yet. */
START_TEST(crypto_opens_on_first_use)
{
    ck_assert_msg(dlopen(TH_CRYPTO_SONAME, RTLD_NOW | RTLD_NOLOAD) == NULL, "libcrypto loaded before any use");
    /* A thread's exit path must not be what opens it. */
    OPENSSL_thread_stop();
    ck_assert(dlopen(TH_CRYPTO_SONAME, RTLD_NOW | RTLD_NOLOAD) == NULL);
    unsigned char d[SHA256_DIGEST_LENGTH];
    SHA256((const unsigned char *)"abc", 3, d); /* FIPS 180-2, appendix B.1 */
    static const unsigned char want[8] = {0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea};
    ck_assert_mem_eq(d, want, sizeof want);
    void *h = dlopen(TH_CRYPTO_SONAME, RTLD_NOW | RTLD_NOLOAD);
    ck_assert_ptr_nonnull(h);
    dlclose(h);
    char err[256] = "";
    ck_assert(th_crypto_open(err, sizeof err));
    ck_assert_int_eq(CRYPTO_memcmp("same", "same", 4), 0);
    OPENSSL_thread_stop();
}
END_TEST

START_TEST(mhd_opens_on_first_use)
{
    ck_assert(dlopen(TH_MHD_SONAME, RTLD_NOW | RTLD_NOLOAD) == NULL);
    char err[256] = "";
    ck_assert_msg(th_mhd_open(err, sizeof err), "%s", err);
    void *h = dlopen(TH_MHD_SONAME, RTLD_NOW | RTLD_NOLOAD);
    ck_assert_ptr_nonnull(h);
    dlclose(h);
    /* A call through the table reaches the library. */
    static char body[] = "x";
    struct MHD_Response *r = MHD_create_response_from_buffer(1, body, MHD_RESPMEM_PERSISTENT);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(MHD_add_response_header(r, "X-Test", "1"), MHD_YES);
    MHD_destroy_response(r);
}
END_TEST

/* The point of it all: starting toolhost maps neither library. */
START_TEST(binary_does_not_link_them)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s -p '%s/src/toolhost'", TH_OBJDUMP, TOP_BUILDDIR);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    char line[1024];
    int needed = 0;
    while (fgets(line, sizeof line, p)) {
        if (!strstr(line, "NEEDED"))
            continue;
        needed++;
        ck_assert_msg(!strstr(line, "libcrypto") && !strstr(line, "libmicrohttpd") && !strstr(line, "gnutls"),
                      "src/toolhost links %s", line);
    }
    ck_assert_int_eq(pclose(p), 0);
    ck_assert_int_gt(needed, 0); /* objdump did read the binary */
}
END_TEST

static Suite *dynlib_suite(void)
{
    Suite *s = suite_create("dynlib");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, missing_library_named);
    tcase_add_test(tc, missing_function_named);
    tcase_add_test(tc, opens_once_across_threads);
    tcase_add_test(tc, crypto_opens_on_first_use);
    tcase_add_test(tc, mhd_opens_on_first_use);
    tcase_add_test(tc, binary_does_not_link_them);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN(dynlib_suite)
