/* SPDX-License-Identifier: MIT */
/*
** test_server_info.c: what toolhost says about itself to a client: --name
** for serverInfo.name, default instructions built from the tools,
** --instructions='' leaving the field out, and plugins' own
** registration-time log lines (th_server_log) following --log-level.
*/
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp_harness.h"
#include "check_main.h"

#define BUNDLED TOP_BUILDDIR "/plugins/.libs"

static json_object *initialize(mh_proc *p)
{
    return mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
                     "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
                     "\"clientInfo\":{\"name\":\"info-test\",\"version\":\"0.0.1\"}}}");
}

static json_object *discover(mh_proc *p)
{
    return mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{" MH_MODERN_META "}}");
}

START_TEST(name_option_sets_server_info)
{
    mh_proc *p = mh_spawn("--plugin-dir", BUNDLED, "--name", "my-tools", NULL);
    json_object *o = initialize(p);
    MH_ASSERT_STR(o, "result serverInfo name", "my-tools");
    json_object_put(o);
    mh_finish(p);
}
END_TEST

START_TEST(empty_name_is_a_usage_error)
{
    mh_proc *p = mh_spawn("--plugin-dir", BUNDLED, "--name", "", NULL);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 2);
    mh_free(p);
}
END_TEST

START_TEST(default_instructions_name_the_tools)
{
    mh_proc *p = mh_spawn("--plugin-dir", BUNDLED, NULL);
    json_object *o = initialize(p);
    MH_ASSERT_STR(o, "result instructions",
                  "Tools: add, echo, text. Call tools/list for what each does and takes.");
    json_object_put(o);
    mh_finish(p);
    p = mh_spawn("--plugin-dir", BUNDLED, NULL);
    o = discover(p);
    MH_ASSERT_STR(o, "result instructions",
                  "Tools: add, echo, text. Call tools/list for what each does and takes.");
    json_object_put(o);
    mh_finish(p);
}
END_TEST

START_TEST(empty_instructions_leave_the_field_out)
{
    mh_proc *p = mh_spawn("--plugin-dir", BUNDLED, "--instructions", "", NULL);
    json_object *o = initialize(p);
    MH_ASSERT_STR(o, "result serverInfo name", "toolhost");
    ck_assert_msg(!mh_has(o, "result instructions"), "%s", mh_json(o));
    json_object_put(o);
    mh_finish(p);
    p = mh_spawn("--plugin-dir", BUNDLED, "--instructions=", NULL);
    o = discover(p);
    ck_assert_msg(!mh_has(o, "result instructions"), "%s", mh_json(o));
    json_object_put(o);
    mh_finish(p);
}
END_TEST

/* The plugin's registration lines on stderr once the session has ended. */
static char *registration_log(const char *isolation, const char *level, char **dir)
{
    *dir = mh_private_dir(mh_hostile("reglog"), NULL);
    mh_proc *p = mh_spawn("--plugin-dir", *dir, isolation, level, NULL);
    json_object *o = initialize(p);
    MH_ASSERT_STR(o, "result serverInfo name", "toolhost");
    json_object_put(o);
    mh_close_stdin(p);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    char *err = mh_stderr(p);
    mh_free(p);
    return err;
}

static void assert_line(const char *err, const char *dir, const char *msg, bool present)
{
    char want[512];
    snprintf(want, sizeof want, "plugin %s/reglog.so: %s", dir, msg);
    ck_assert_msg((strstr(err, want) != NULL) == present, "stderr %s \"%s\":\n%s", present ? "lacks" : "has", want,
                  err);
}

/* th_server_log lines name the plugin file and honour --log-level. */
START_TEST(registration_log_follows_log_level)
{
    char *dir;
    char *err = registration_log("--isolation=none", "--log-level=warning", &dir);
    assert_line(err, dir, "reglog-warning 3", true);
    assert_line(err, dir, "reglog-info two", false);
    free(err);
    mh_rm_dir(dir);

    err = registration_log("--isolation=none", "--log-level=info", &dir);
    assert_line(err, dir, "reglog-info two", true);
    assert_line(err, dir, "reglog-debug 1", false);
    free(err);
    mh_rm_dir(dir);

    err = registration_log("--isolation=none", "--log-level=debug", &dir);
    assert_line(err, dir, "reglog-debug 1", true);
    free(err);
    mh_rm_dir(dir);

    /* Worker processes (the scanner's and the worker's) follow the host's
     * --log-level too, though their loader's own lines are quieter. */
    err = registration_log("--isolation=process", "--log-level=info", &dir);
    assert_line(err, dir, "reglog-warning 3", true);
    assert_line(err, dir, "reglog-info two", true);
    assert_line(err, dir, "reglog-debug 1", false);
    free(err);
    mh_rm_dir(dir);

    err = registration_log("--isolation=process", "--log-level=debug", &dir);
    assert_line(err, dir, "reglog-debug 1", true);
    free(err);
    mh_rm_dir(dir);

    err = registration_log("--isolation=process", "--log-level=error", &dir);
    assert_line(err, dir, "reglog-warning 3", false);
    free(err);
    mh_rm_dir(dir);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("server_info");
    TCase *tc = tcase_create("server_info");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_test(tc, name_option_sets_server_info);
    tcase_add_test(tc, empty_name_is_a_usage_error);
    tcase_add_test(tc, default_instructions_name_the_tools);
    tcase_add_test(tc, empty_instructions_leave_the_field_out);
    tcase_add_test(tc, registration_log_follows_log_level);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(suite, mh_global_setup, mh_global_teardown)
