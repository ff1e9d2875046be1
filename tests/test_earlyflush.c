/* SPDX-License-Identifier: MIT */
/*
** test_earlyflush.c: the stdio transport's early-write policy
** (src/transport/earlyflush.c): when corked answers leave before the end of
** a read, and how a client found on the host's own CPU turns that off.
*/
#include "config.h"

#include <limits.h>

#include <check.h>

#include "check_main.h"
#include "transport/earlyflush.h"

START_TEST(half_a_read_writes_what_is_corked)
{
    th_early e;
    th_early_init(&e, true);
    ck_assert(!th_early_due(&e, TH_EARLY_MIN_MSGS, 100, false));
    ck_assert(th_early_due(&e, TH_EARLY_MIN_MSGS, 100, true));
    /* Too few answers for a write (and a wake-up) of their own. */
    ck_assert(!th_early_due(&e, TH_EARLY_MIN_MSGS - 1, 100, true));
}
END_TEST

START_TEST(a_long_read_writes_at_the_bounds)
{
    th_early e;
    th_early_init(&e, true);
    ck_assert(!th_early_due(&e, TH_EARLY_MAX_MSGS - 1, 100, false));
    ck_assert(th_early_due(&e, TH_EARLY_MAX_MSGS, 100, false));
    ck_assert(th_early_due(&e, TH_EARLY_MIN_MSGS, TH_EARLY_MAX_BYTES, false));
    ck_assert(!th_early_due(&e, TH_EARLY_MIN_MSGS - 1, TH_EARLY_MAX_BYTES, false));
}
END_TEST

START_TEST(an_output_that_cannot_be_probed_is_never_written_early)
{
    th_early e;
    th_early_init(&e, false);
    for (int i = 0; i < 100000; i++)
        th_early_read_done(&e);
    ck_assert(!th_early_due(&e, TH_EARLY_MAX_MSGS, TH_EARLY_MAX_BYTES, true));
    /* Nor one whose probe fails. */
    th_early_init(&e, true);
    th_early_probed(&e, -1, false);
    for (int i = 0; i < 100000; i++)
        th_early_read_done(&e);
    ck_assert(!th_early_due(&e, TH_EARLY_MAX_MSGS, TH_EARLY_MAX_BYTES, true));
}
END_TEST

/* Reads until early writes resume. */
static unsigned reads_off(th_early *e)
{
    unsigned n = 0;
    while (!th_early_due(e, TH_EARLY_MAX_MSGS, 0, true)) {
        ck_assert_uint_lt(n, 10 * TH_EARLY_BACKOFF_MAX);
        th_early_read_done(e);
        n++;
    }
    return n;
}

START_TEST(a_client_on_our_cpu_turns_early_writes_off_for_longer_each_time)
{
    th_early e;
    th_early_init(&e, true);
    unsigned expect = TH_EARLY_BACKOFF_MIN;
    for (int i = 0; i < 12; i++) {
        th_early_probed(&e, 0, true);
        ck_assert_uint_eq(reads_off(&e), expect);
        if (expect < TH_EARLY_BACKOFF_MAX)
            expect *= 2;
    }
    ck_assert_uint_eq(expect, TH_EARLY_BACKOFF_MAX);
    /* Found elsewhere once: the next time costs the shortest pause again. */
    th_early_probed(&e, 100, false);
    ck_assert_uint_eq(reads_off(&e), 0);
    th_early_probed(&e, 0, true);
    ck_assert_uint_eq(reads_off(&e), TH_EARLY_BACKOFF_MIN);
}
END_TEST

START_TEST(an_empty_pipe_without_a_preemption_is_a_quick_client_elsewhere)
{
    th_early e;
    th_early_init(&e, true);
    th_early_probed(&e, 0, false);
    ck_assert(th_early_due(&e, TH_EARLY_MIN_MSGS, 0, true));
    /* And a preemption with the answers still unread: someone else ran. */
    th_early_probed(&e, 500, true);
    ck_assert(th_early_due(&e, TH_EARLY_MIN_MSGS, 0, true));
}
END_TEST

START_TEST(a_client_found_elsewhere_is_probed_every_few_reads)
{
    th_early e;
    th_early_init(&e, true);
    ck_assert(th_early_probe_due(&e));
    th_early_probed(&e, 100, false);
    for (int i = 0; i < TH_EARLY_PROBE_EVERY; i++) {
        ck_assert_msg(!th_early_probe_due(&e), "probed again after %d reads", i);
        th_early_read_done(&e);
    }
    ck_assert(th_early_probe_due(&e));
    /* Found on our CPU: the first early write after the pause is probed. */
    th_early_probed(&e, 0, true);
    ck_assert_uint_eq(reads_off(&e), TH_EARLY_BACKOFF_MIN);
    ck_assert(th_early_probe_due(&e));
}
END_TEST

static Suite *earlyflush_suite(void)
{
    Suite *s = suite_create("earlyflush");
    TCase *tc = tcase_create("policy");
    tcase_add_test(tc, half_a_read_writes_what_is_corked);
    tcase_add_test(tc, a_long_read_writes_at_the_bounds);
    tcase_add_test(tc, an_output_that_cannot_be_probed_is_never_written_early);
    tcase_add_test(tc, a_client_on_our_cpu_turns_early_writes_off_for_longer_each_time);
    tcase_add_test(tc, an_empty_pipe_without_a_preemption_is_a_quick_client_elsewhere);
    tcase_add_test(tc, a_client_found_elsewhere_is_probed_every_few_reads);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(earlyflush_suite, th_check_nothing, th_check_nothing)
