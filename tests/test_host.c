/* SPDX-License-Identifier: MIT */
/*
** tests/test_host.c: what src/host/ shows a person at the door: an
** unauthenticated public --http refused before any plugin code runs.
*/
#define _GNU_SOURCE 1
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "mcp_harness.h"

#define CALL(id, tool, args)                                                                                           \
    "{\"jsonrpc\":\"2.0\",\"id\":" #id ",\"method\":\"tools/call\",\"params\":{\"name\":\"" tool                      \
    "\",\"arguments\":" args "," MH_MODERN_META "}}"

/* The attack: serve a tool host on every address without authorization.
 * The refusal comes before any plugin is opened: the plugin would have left
 * a mark from its constructor (scanner, worker or host alike); with a
 * loopback address the same command loads it. */
START_TEST(public_http_without_auth_is_refused_before_plugins_load)
{
    char tmp[] = "/tmp/th-host-XXXXXX", mark[64];
    ck_assert_ptr_nonnull(mkdtemp(tmp));
    snprintf(mark, sizeof mark, "%s/mark", tmp);
    setenv("TH_TEST_CTOR_MARK", mark, 1); /* inherited by toolhost and its children */
    char *dir = mh_private_dir(mh_hostile("ctor_mark"), NULL);

    mh_proc *p = mh_spawn("--plugin-dir", dir, "--http=0.0.0.0:0", NULL);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 1);
    char *err = mh_stderr(p);
    ck_assert_msg(strstr(err, "0.0.0.0 is not a loopback address"), "stderr: %s", err);
    ck_assert_msg(access(mark, F_OK) != 0, "plugin code ran before the refusal:\n%s", err);
    free(err);
    mh_free(p);

    p = mh_spawn("--plugin-dir", dir, "--http=127.0.0.1:0", NULL);
    ck_assert(mh_stderr_wait(p, "listening on http://127.0.0.1:", MH_TIMEOUT_MS));
    ck_assert_msg(access(mark, F_OK) == 0, "the loopback control did not load the plugin");
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);

    unsetenv("TH_TEST_CTOR_MARK");
    unlink(mark);
    rmdir(tmp);
    mh_rm_dir(dir);
}
END_TEST

static Suite *host_suite(void)
{
    Suite *s = suite_create("host");
    TCase *tc = tcase_create("door");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, public_http_without_auth_is_refused_before_plugins_load);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(host_suite, mh_global_setup, mh_global_teardown)
