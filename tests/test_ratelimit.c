/* SPDX-License-Identifier: MIT */
/*
** test_ratelimit.c: protocol/ratelimit.c alone, on a clock the test passes
** in: burst, refill, the retry time, a bucket per principal, the first
** matching rule, a concurrency slot given back once, bad rules, and the
** rules replaced as a reload does (state kept for a glob kept).
*/
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "protocol/ratelimit.h"

#define S 1000000000LL /* a second, in th_now_ns units */

static th_ratelimit *with(th_limit_kind kind, const char *spec)
{
    th_ratelimit *rl = th_ratelimit_new();
    ck_assert(rl != NULL);
    th_err err;
    ck_assert_msg(th_ratelimit_add(rl, kind, spec, &err) == TH_OK, "%s: %s", spec, err.msg);
    return rl;
}

static th_limit_verdict admit(th_ratelimit *rl, const char *tool, const char *who, long long now, long long *retry)
{
    th_limit_hold hold;
    th_limit_verdict v = th_ratelimit_admit(rl, tool, who, now, &hold, retry);
    th_ratelimit_release(&hold);
    return v;
}

START_TEST(burst_then_refill)
{
    th_ratelimit *rl = with(TH_LIMIT_RATE, "ec*=2/s,burst=3");
    long long retry;
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(admit(rl, "echo", NULL, 10 * S, &retry), TH_LIMIT_PASS);
    ck_assert_int_eq(admit(rl, "echo", NULL, 10 * S, &retry), TH_LIMIT_RATE_HIT);
    ck_assert_int_eq(retry, 500); /* one token at 2/s */
    /* Not a token yet 499 ms on; one at 500 ms, and only one. */
    ck_assert_int_eq(admit(rl, "echo", NULL, 10 * S + 499000000, &retry), TH_LIMIT_RATE_HIT);
    ck_assert_msg(retry >= 1 && retry <= 2, "retry in %lld ms for 2 ms of a token", retry); /* rounded up */
    ck_assert_int_eq(admit(rl, "echo", NULL, 10 * S + S / 2, &retry), TH_LIMIT_PASS);
    ck_assert_int_eq(admit(rl, "echo", NULL, 10 * S + S / 2, &retry), TH_LIMIT_RATE_HIT);
    /* A long pause refills to the burst, no more. */
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(admit(rl, "echo", NULL, 100 * S, &retry), TH_LIMIT_PASS);
    ck_assert_int_eq(admit(rl, "echo", NULL, 100 * S, &retry), TH_LIMIT_RATE_HIT);
    /* Outside the glob: never limited. */
    ck_assert_int_eq(admit(rl, "printer", NULL, 100 * S, &retry), TH_LIMIT_PASS);
    th_ratelimit_free(rl);
}
END_TEST

START_TEST(per_minute_default_burst)
{
    th_ratelimit *rl = with(TH_LIMIT_RATE, "*=1/m");
    long long retry;
    ck_assert_int_eq(admit(rl, "a", NULL, S, &retry), TH_LIMIT_PASS);
    ck_assert_int_eq(admit(rl, "b", NULL, S, &retry), TH_LIMIT_RATE_HIT); /* one bucket for the glob */
    ck_assert_int_eq(retry, 60000);
    th_ratelimit_free(rl);
}
END_TEST

START_TEST(a_bucket_per_principal)
{
    th_ratelimit *rl = with(TH_LIMIT_RATE_PER_PRINCIPAL, "echo=1/h");
    long long retry;
    ck_assert_int_eq(admit(rl, "echo", "sha256:aa", S, &retry), TH_LIMIT_PASS);
    ck_assert_int_eq(admit(rl, "echo", "sha256:aa", S, &retry), TH_LIMIT_RATE_HIT);
    ck_assert_int_eq(admit(rl, "echo", "sha256:bb", S, &retry), TH_LIMIT_PASS);
    ck_assert_int_eq(admit(rl, "echo", NULL, S, &retry), TH_LIMIT_PASS);
    /* Many principals: the table forgets idle ones, and a newcomer past
     * the bound still gets a bucket (its own or the shared one). */
    char who[32];
    for (int i = 0; i < 3000; i++) {
        snprintf(who, sizeof who, "p%d", i);
        th_limit_verdict v = admit(rl, "echo", who, S + i, &retry);
        ck_assert(v == TH_LIMIT_PASS || v == TH_LIMIT_RATE_HIT);
    }
    ck_assert_int_eq(admit(rl, "echo", "sha256:aa", S, &retry), TH_LIMIT_RATE_HIT);
    th_ratelimit_free(rl);
}
END_TEST

START_TEST(first_matching_rule_applies)
{
    th_ratelimit *rl = with(TH_LIMIT_RATE, "echo=1/h");
    th_err err;
    ck_assert_int_eq(th_ratelimit_add(rl, TH_LIMIT_RATE, "*=100/s", &err), TH_OK);
    long long retry;
    ck_assert_int_eq(admit(rl, "echo", NULL, S, &retry), TH_LIMIT_PASS);
    ck_assert_int_eq(admit(rl, "echo", NULL, S, &retry), TH_LIMIT_RATE_HIT);
    ck_assert_int_eq(admit(rl, "other", NULL, S, &retry), TH_LIMIT_PASS);
    th_ratelimit_free(rl);
}
END_TEST

START_TEST(concurrency_slot_given_back_once)
{
    th_ratelimit *rl = with(TH_LIMIT_CONCURRENCY, "slow=2");
    th_err err;
    ck_assert_int_eq(th_ratelimit_add(rl, TH_LIMIT_RATE, "slow=1/h,burst=3", &err), TH_OK);
    th_limit_hold a, b, c;
    long long retry;
    ck_assert_int_eq(th_ratelimit_admit(rl, "slow", NULL, S, &a, &retry), TH_LIMIT_PASS);
    ck_assert_int_eq(th_ratelimit_admit(rl, "slow", NULL, S, &b, &retry), TH_LIMIT_PASS);
    ck_assert_int_eq(th_ratelimit_admit(rl, "slow", NULL, S, &c, &retry), TH_LIMIT_CONCURRENCY_HIT);
    ck_assert_int_eq(retry, 1000);
    ck_assert(c.slot == NULL);
    th_ratelimit_release(&a);
    th_ratelimit_release(&a); /* a second release gives nothing back */
    /* The refused call took no token: the third one is still there. */
    ck_assert_int_eq(th_ratelimit_admit(rl, "slow", NULL, S, &c, &retry), TH_LIMIT_PASS);
    ck_assert_int_eq(th_ratelimit_admit(rl, "slow", NULL, S, &a, &retry), TH_LIMIT_CONCURRENCY_HIT);
    th_ratelimit_release(&b);
    th_ratelimit_release(&c);
    ck_assert_int_eq(th_ratelimit_admit(rl, "slow", NULL, S, &a, &retry), TH_LIMIT_RATE_HIT);
    th_ratelimit_free(rl);
}
END_TEST

START_TEST(bad_rules_refused)
{
    static const struct {
        th_limit_kind kind;
        const char *spec;
    } bad[] = {
        {TH_LIMIT_RATE, "echo"},          {TH_LIMIT_RATE, "=1/s"},           {TH_LIMIT_RATE, "echo=0/s"},
        {TH_LIMIT_RATE, "echo=-1/s"},     {TH_LIMIT_RATE, "echo=1"},         {TH_LIMIT_RATE, "echo=1/d"},
        {TH_LIMIT_RATE, "echo=1/s,"},     {TH_LIMIT_RATE, "echo=1/s,burst=0"}, {TH_LIMIT_RATE, "echo=nan/s"},
        {TH_LIMIT_CONCURRENCY, "slow=0"}, {TH_LIMIT_CONCURRENCY, "slow=2x"},
    };
    th_ratelimit *rl = th_ratelimit_new();
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        th_err err;
        ck_assert_msg(th_ratelimit_add(rl, bad[i].kind, bad[i].spec, &err) == TH_ERR_VALUE, "'%s' accepted",
                      bad[i].spec);
        ck_assert_msg(strstr(err.msg, bad[i].spec) != NULL, "the message does not name '%s': %s", bad[i].spec,
                      err.msg);
    }
    th_ratelimit_free(rl);
}
END_TEST

START_TEST(replace_keeps_state_of_a_kept_glob)
{
    th_ratelimit *rl = with(TH_LIMIT_RATE, "echo=1/h");
    th_err err;
    ck_assert_int_eq(th_ratelimit_add(rl, TH_LIMIT_CONCURRENCY, "slow=1", &err), TH_OK);
    ck_assert_int_eq(th_ratelimit_add(rl, TH_LIMIT_CONCURRENCY, "gone=1", &err), TH_OK);
    long long retry;
    th_limit_hold held, gone, h;
    ck_assert_int_eq(admit(rl, "echo", NULL, S, &retry), TH_LIMIT_PASS);
    ck_assert_int_eq(th_ratelimit_admit(rl, "slow", NULL, S, &held, &retry), TH_LIMIT_PASS);
    ck_assert_int_eq(th_ratelimit_admit(rl, "gone", NULL, S, &gone, &retry), TH_LIMIT_PASS);
    /* The new set: echo's rule again (its bucket is empty and stays so),
     * slow's cap raised to 2 (one call of it runs), gone's rule dropped
     * while a call holds it, add's new. */
    th_ratelimit *fresh = with(TH_LIMIT_RATE, "echo=1/h,burst=5");
    ck_assert_int_eq(th_ratelimit_add(fresh, TH_LIMIT_CONCURRENCY, "slow=2", &err), TH_OK);
    ck_assert_int_eq(th_ratelimit_add(fresh, TH_LIMIT_RATE, "add=1/h", &err), TH_OK);
    th_ratelimit_replace(rl, fresh);
    ck_assert_int_eq(admit(rl, "echo", NULL, S, &retry), TH_LIMIT_RATE_HIT);
    ck_assert_int_eq(th_ratelimit_admit(rl, "slow", NULL, S, &h, &retry), TH_LIMIT_PASS);
    ck_assert_int_eq(admit(rl, "slow", NULL, S, &retry), TH_LIMIT_CONCURRENCY_HIT);
    th_ratelimit_release(&h);
    th_ratelimit_release(&held); /* admitted under the old numbers, counted by the new */
    ck_assert_int_eq(th_ratelimit_admit(rl, "slow", NULL, S, &h, &retry), TH_LIMIT_PASS);
    ck_assert_int_eq(th_ratelimit_admit(rl, "slow", NULL, S, &held, &retry), TH_LIMIT_PASS);
    th_ratelimit_release(&h);
    th_ratelimit_release(&held);
    /* gone is no longer limited; its held slot is given back to the
     * retired rule without harm (ASan: no use after free). */
    ck_assert_int_eq(admit(rl, "gone", NULL, S, &retry), TH_LIMIT_PASS);
    ck_assert_int_eq(admit(rl, "gone", NULL, S, &retry), TH_LIMIT_PASS);
    th_ratelimit_release(&gone);
    ck_assert_int_eq(admit(rl, "add", NULL, S, &retry), TH_LIMIT_PASS);
    ck_assert_int_eq(admit(rl, "add", NULL, S, &retry), TH_LIMIT_RATE_HIT);
    th_ratelimit_free(rl);
}
END_TEST

static Suite *ratelimit_suite(void)
{
    Suite *s = suite_create("ratelimit");
    TCase *tc = tcase_create("ratelimit");
    tcase_add_test(tc, burst_then_refill);
    tcase_add_test(tc, per_minute_default_burst);
    tcase_add_test(tc, a_bucket_per_principal);
    tcase_add_test(tc, first_matching_rule_applies);
    tcase_add_test(tc, concurrency_slot_given_back_once);
    tcase_add_test(tc, bad_rules_refused);
    tcase_add_test(tc, replace_keeps_state_of_a_kept_glob);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN(ratelimit_suite)
