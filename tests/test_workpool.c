/* SPDX-License-Identifier: MIT */
/*
** test_workpool.c: the pool's deadline timers in-process: they fire in
** deadline order on the supervisor, a stopped one never fires, and stopping
** one that is firing waits until its function has returned (what lets a
** call's owner free it right after). And th_pool_run_here: a job run on
** the caller holds a slot like a pool thread's, and a queued job waits for
** that slot and starts when it frees.
*/
#include "config.h"

#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "base/util.h"
#include "call/workpool.h"
#include "check_main.h"

static void sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static atomic_int order[8];
static atomic_int nfired;

static void record(void *arg)
{
    order[atomic_fetch_add(&nfired, 1)] = (int)(intptr_t)arg;
}

START_TEST(timers_fire_in_deadline_order)
{
    th_pool *pool = th_pool_new(2);
    th_pool_timer t[4] = {0};
    long long now = th_now_ms();
    atomic_store(&nfired, 0);
    /* Armed out of order; the list is searched from its end. */
    ck_assert_int_eq(th_pool_timer_start(pool, &t[0], now + 300, record, (void *)3), TH_OK);
    ck_assert_int_eq(th_pool_timer_start(pool, &t[1], now + 100, record, (void *)1), TH_OK);
    ck_assert_int_eq(th_pool_timer_start(pool, &t[2], now + 200, record, (void *)2), TH_OK);
    ck_assert_int_eq(th_pool_timer_start(pool, &t[3], now + 60000, record, (void *)9), TH_OK);
    long long until = th_now_ms() + 20000;
    while (atomic_load(&nfired) < 3 && th_now_ms() < until)
        sleep_ms(10);
    ck_assert_int_eq(atomic_load(&nfired), 3);
    ck_assert_int_eq(order[0], 1);
    ck_assert_int_eq(order[1], 2);
    ck_assert_int_eq(order[2], 3);
    for (int i = 0; i < 3; i++)
        ck_assert(!th_pool_timer_stop(pool, &t[i])); /* fired */
    ck_assert(th_pool_timer_stop(pool, &t[3]));     /* disarmed in time */
    ck_assert(th_pool_timer_stop(pool, &t[3]));     /* twice is harmless */
    ck_assert_int_eq(atomic_load(&nfired), 3);
    ck_assert(th_pool_shutdown(pool, th_now_ms() + 20000));
}
END_TEST

static atomic_int started, finished;

static void slow_fire(void *arg)
{
    (void)arg;
    atomic_store(&started, 1);
    sleep_ms(300);
    atomic_store(&finished, 1);
}

START_TEST(stopping_a_firing_timer_waits_for_it)
{
    th_pool *pool = th_pool_new(2);
    th_pool_timer t = {0};
    atomic_store(&started, 0);
    atomic_store(&finished, 0);
    ck_assert_int_eq(th_pool_timer_start(pool, &t, th_now_ms() + 10, slow_fire, NULL), TH_OK);
    long long until = th_now_ms() + 20000;
    while (!atomic_load(&started) && th_now_ms() < until)
        sleep_ms(1);
    ck_assert(atomic_load(&started));
    ck_assert(!th_pool_timer_stop(pool, &t));
    ck_assert_msg(atomic_load(&finished), "stop returned while the timer's function still ran");
    ck_assert(th_pool_shutdown(pool, th_now_ms() + 20000));
}
END_TEST

static pthread_t ran_on;
static atomic_int here_done, queued_ran;
static th_pool *shared_pool;

static void note_thread(void *arg)
{
    (void)arg;
    ran_on = pthread_self();
}

static void count_queued(void *arg)
{
    (void)arg;
    atomic_fetch_add(&queued_ran, 1);
}

/* While it runs, every slot of a one-thread pool is taken: another job is
 * neither run here nor started on a thread until it returns. */
static void hold_the_slot(void *arg)
{
    (void)arg;
    ck_assert(!th_pool_run_here(shared_pool, note_thread, NULL));
    ck_assert_int_eq(th_pool_submit(shared_pool, count_queued, NULL), TH_OK);
    sleep_ms(200);
    ck_assert_int_eq(atomic_load(&queued_ran), 0);
    atomic_store(&here_done, 1);
}

START_TEST(a_job_run_here_holds_a_slot)
{
    th_pool *pool = th_pool_new(1);
    shared_pool = pool;
    ck_assert(th_pool_run_here(pool, note_thread, NULL));
    ck_assert(pthread_equal(ran_on, pthread_self()));
    atomic_store(&queued_ran, 0);
    ck_assert(th_pool_run_here(pool, hold_the_slot, NULL));
    ck_assert(atomic_load(&here_done));
    long long until = th_now_ms() + 20000;
    while (!atomic_load(&queued_ran) && th_now_ms() < until)
        sleep_ms(1);
    ck_assert_msg(atomic_load(&queued_ran), "the queued job never ran once the slot was free");
    ck_assert(th_pool_shutdown(pool, th_now_ms() + 20000));
}
END_TEST

static Suite *workpool_suite(void)
{
    Suite *s = suite_create("workpool");
    TCase *tc = tcase_create("timers");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, timers_fire_in_deadline_order);
    tcase_add_test(tc, stopping_a_firing_timer_waits_for_it);
    suite_add_tcase(s, tc);
    tc = tcase_create("run_here");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, a_job_run_here_holds_a_slot);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN(workpool_suite)
