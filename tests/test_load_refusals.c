/* SPDX-License-Identifier: MIT */
/*
** test_load_refusals.c: a tool refused while its plugin loads is logged
** once, by the scan, in both isolation modes: neither the in-host load of
** --isolation=none nor a worker's start reports it again.
*/
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp_harness.h"
#include "check_main.h"

/* three.so registers three and three_a, and tries three_b, whose description is too short. */
#define THREE_SO TEST_BUILDDIR "/plugins/.libs/three.so"
#define REFUSAL "tool 'three_b' refused: Tool description too short"

static const char *const modes[] = {"--isolation=none", "--isolation=process"};

static size_t count(const char *haystack, const char *needle)
{
    size_t n = 0;
    for (const char *s = haystack; (s = strstr(s, needle)) != NULL; s += strlen(needle))
        n++;
    return n;
}

START_TEST(a_refused_tool_is_logged_once)
{
    char *dir = mh_private_dir(THREE_SO, NULL);
    mh_proc *p = mh_spawn("-d", dir, modes[_i], NULL);
    mh_ping_is_next(p, 1);
    /* A call, so that in process mode a worker loads the plugin again. */
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"three_a\","
               "\"arguments\":{}," MH_MODERN_META "}}");
    json_object *o = mh_await(p, "2", NULL);
    MH_ASSERT_RESULT(o);
    MH_ASSERT_ABSENT(o, "result isError");
    json_object_put(o);
    /* Everything the host and its worker will log is in once it has exited. */
    mh_close_stdin(p);
    ck_assert(mh_wait_eof(p, MH_TIMEOUT_MS));
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    char *err = mh_stderr(p);
    ck_assert_msg(count(err, REFUSAL) == 1, "%s: want \"%s\" once in:\n%s", modes[_i], REFUSAL, err);
    /* Still counted, once. */
    ck_assert_msg(strstr(err, "loaded 2 tools from 1 plugin; 0 plugins refused, 1 tool refused"),
                  "%s: the summary must count the refusal once:\n%s", modes[_i], err);
    free(err);
    mh_free(p);
    mh_rm_dir(dir);
}
END_TEST

static Suite *refusals_suite(void)
{
    Suite *s = suite_create("refusals");
    TCase *tc = tcase_create("logged once");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_loop_test(tc, a_refused_tool_is_logged_once, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(refusals_suite, mh_global_setup, mh_global_teardown)
