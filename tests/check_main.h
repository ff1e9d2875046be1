/* SPDX-License-Identifier: MIT */
/*
** check_main.h: the main() every Check test program shares: run one suite
** (with optional process-wide setup and teardown) and exit non-zero when a
** test failed. Under -fsanitize=undefined every finding fails its test.
*/
#ifndef TH_CHECK_MAIN_H
#define TH_CHECK_MAIN_H

#include <stdlib.h>

#include <check.h>

/* Make a UBSan finding fail the test it occurs in instead of printing a
 * line nobody reads. Unused in builds without the sanitizer. */
#define TH_CHECK_UBSAN_OPTIONS                                                                                         \
    const char *__ubsan_default_options(void);                                                                         \
    const char *__ubsan_default_options(void)                                                                          \
    {                                                                                                                  \
        return "halt_on_error=1:print_stacktrace=1";                                                                   \
    }

/* main() running SUITE_FN(), between SETUP and TEARDOWN (either may be
 * a no-op function). */
#define TH_CHECK_MAIN_WITH(SUITE_FN, SETUP, TEARDOWN)                                                                  \
    TH_CHECK_UBSAN_OPTIONS                                                                                             \
    int main(void)                                                                                                     \
    {                                                                                                                  \
        SETUP();                                                                                                       \
        SRunner *sr = srunner_create(SUITE_FN());                                                                      \
        srunner_run_all(sr, CK_NORMAL);                                                                                \
        int failed = srunner_ntests_failed(sr);                                                                        \
        srunner_free(sr);                                                                                              \
        TEARDOWN();                                                                                                    \
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;                                                                   \
    }

static inline void th_check_nothing(void)
{
}

#define TH_CHECK_MAIN(SUITE_FN) TH_CHECK_MAIN_WITH(SUITE_FN, th_check_nothing, th_check_nothing)

#endif
