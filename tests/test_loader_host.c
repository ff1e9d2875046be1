/* SPDX-License-Identifier: MIT */
/*
** test_loader_host.c: the plugin loading rules as the toolhost binary applies
** them: who owns a tool name, relative directories that survive a plugin's
** chdir(), fatal and non-fatal directory problems, and the summary line.
*/
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mcp_harness.h"
#include "check_main.h"

#define ECHO_SO TOP_BUILDDIR "/plugins/.libs/echo.so"
#define STAGED_SO TEST_BUILDDIR "/plugins/.libs/staged.so"

#define TOOLS_LIST "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}"
#define CALL_ECHO "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\"," \
                  "\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"the real echo\"}}}"

/* Fails unless the captured stderr contains NEEDLE. */
static void assert_stderr_has(const mh_proc *p, const char *needle)
{
    char *err = mh_stderr(p);
    ck_assert_msg(strstr(err, needle) != NULL, "stderr lacks \"%s\":\n%s", needle, err);
    free(err);
}

static void assert_stderr_lacks(const mh_proc *p, const char *needle)
{
    char *err = mh_stderr(p);
    ck_assert_msg(strstr(err, needle) == NULL, "stderr has \"%s\":\n%s", needle, err);
    free(err);
}

/* echo answers as echo.so's tool does, not as a hijacker's. */
static void assert_real_echo(mh_proc *p)
{
    mh_initialize(p, "2025-11-25");
    json_object *o = mh_rpc(p, CALL_ECHO);
    MH_ASSERT_STR(o, "result content 0 text", "the real echo");
    json_object_put(o);
}

/* aa.so, loaded first, cannot take the name echo from echo.so. */
START_TEST(a_tool_name_belongs_to_its_plugin_file)
{
    char *dir = mh_private_dir(mh_hostile("aa"), ECHO_SO, NULL);
    mh_proc *p = mh_spawn("-d", dir, NULL);
    assert_real_echo(p);
    char want[600];
    snprintf(want, sizeof want, "plugin %s/aa.so: tool 'echo' refused: tool name 'echo' belongs to plugin file %s/echo.so",
             dir, dir);
    assert_stderr_has(p, want);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/* Also when echo.so is in a later --plugin-dir than the hijacker. */
START_TEST(a_tool_name_belongs_to_its_plugin_file_in_another_directory)
{
    char *first = mh_private_dir(mh_hostile("aa"), NULL);
    char *second = mh_private_dir(ECHO_SO, NULL);
    mh_proc *p = mh_spawn("-d", first, "-d", second, NULL);
    assert_real_echo(p);
    char want[600];
    snprintf(want, sizeof want, "belongs to plugin file %s/echo.so", second);
    assert_stderr_has(p, want);
    mh_finish(p);
    mh_rm_dir(first);
    mh_rm_dir(second);
}
END_TEST

/* chdir_root.so moves to "/" in its constructor; echo.so, after it
 * in the same relative directory, still loads. */
START_TEST(relative_plugin_dir_survives_a_chdir_in_a_constructor)
{
    char *dir = mh_private_dir(mh_hostile("chdir_root"), ECHO_SO, NULL);
    ck_assert(strncmp(dir, "/tmp/", 5) == 0);
    ck_assert_int_eq(chdir("/tmp"), 0);
    mh_proc *p = mh_spawn("-d", dir + 5, NULL);
    assert_real_echo(p);
    assert_stderr_has(p, "loaded 2 tools from 2 plugins; 0 plugins refused");
    assert_stderr_lacks(p, "cannot stat");
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/* staged.so adds a tool, then returns NULL: it serves nothing, and
 * the summary counts what happened. */
START_TEST(a_refused_plugin_serves_none_of_its_tools)
{
    char *dir = mh_private_dir(STAGED_SO, ECHO_SO, NULL);
    setenv("TH_TEST_STAGED_MODE", "null", 1); /* inherited by the host */
    mh_proc *p = mh_spawn("-d", dir, NULL);
    mh_initialize(p, "2025-11-25");
    json_object *o = mh_rpc(p, TOOLS_LIST);
    ck_assert_uint_eq(mh_len(o, "result tools"), 1);
    MH_ASSERT_STR(o, "result tools 0 name", "echo");
    json_object_put(o);
    assert_stderr_has(p, "tool 'staged_extra' discarded: its plugin was refused");
    assert_stderr_has(p, "loaded 1 tool from 1 plugin; 1 plugin refused, 1 tool refused, 0 directories refused");
    mh_finish(p);
    unsetenv("TH_TEST_STAGED_MODE");
    mh_rm_dir(dir);
}
END_TEST

/* A named directory that is missing is fatal, before any plugin of
 * another named directory is loaded. */
START_TEST(a_missing_plugin_dir_is_fatal)
{
    char *good = mh_private_dir(ECHO_SO, NULL);
    mh_proc *p = mh_spawn("-d", good, "-d", "/nonexistent/th-plugins", NULL);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 1);
    ck_assert(mh_wait_eof(p, MH_TIMEOUT_MS));
    assert_stderr_has(p, "plugin directory /nonexistent/th-plugins: cannot open: No such file or directory");
    assert_stderr_lacks(p, "tool_registered");
    mh_free(p);
    mh_rm_dir(good);
}
END_TEST

/* So is one that cannot be read as a directory (running as root,
 * permissions would not stop it; a file does). */
START_TEST(an_unreadable_plugin_dir_is_fatal)
{
    mh_proc *p = mh_spawn("-d", ECHO_SO, NULL);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 1);
    ck_assert(mh_wait_eof(p, MH_TIMEOUT_MS));
    assert_stderr_has(p, "plugin directory " ECHO_SO ": cannot open: Not a directory");
    mh_free(p);
}
END_TEST

/* The default plugin directory, from --help ("default DIR)"). */
static char *default_dir(void)
{
    mh_proc *p = mh_spawn("--help", NULL);
    char *found = NULL, *line;
    while (!found && (line = mh_read_line(p, MH_TIMEOUT_MS)) != NULL) {
        const char *at = strstr(line, "default /");
        if (at) {
            found = strdup(at + strlen("default "));
            found[strcspn(found, ")")] = '\0';
        }
        free(line);
    }
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
    ck_assert_msg(found != NULL, "--help names no default plugin directory");
    return found;
}

/* Without --plugin-dir, a missing default directory is a warning,
 * counted in the summary; the host serves zero tools. */
START_TEST(a_missing_default_dir_is_a_warning)
{
    char *dir = default_dir();
    ck_assert_msg(access(dir, F_OK) != 0 && errno == ENOENT,
                  "the default plugin directory %s exists here; this test needs it absent", dir);
    mh_proc *p = mh_spawn(NULL);
    mh_initialize(p, "2025-11-25");
    json_object *o = mh_rpc(p, TOOLS_LIST);
    ck_assert_uint_eq(mh_len(o, "result tools"), 0);
    json_object_put(o);
    char want[600];
    snprintf(want, sizeof want, "warning: plugin directory %s: cannot open", dir);
    assert_stderr_has(p, want);
    assert_stderr_has(p, "0 tools refused, 1 directory refused");
    mh_finish(p);
    free(dir);
}
END_TEST

/* An empty directory gets a warning; the host serves. */
START_TEST(an_empty_plugin_dir_is_a_warning)
{
    char *dir = mh_private_dir(NULL);
    mh_proc *p = mh_spawn("-d", dir, NULL);
    mh_ping_is_next(p, 1);
    char want[600];
    snprintf(want, sizeof want, "warning: plugin directory %s: no NAME.so files in it", dir);
    assert_stderr_has(p, want);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/* Trust: a named directory anyone may write to is fatal, with the
 * chmod that fixes it, before any plugin runs. */
START_TEST(a_plugin_dir_writable_by_others_is_fatal)
{
    char *dir = mh_private_dir(ECHO_SO, NULL);
    ck_assert_int_eq(chmod(dir, 0777), 0);
    mh_proc *p = mh_spawn("-d", dir, NULL);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 1);
    ck_assert(mh_wait_eof(p, MH_TIMEOUT_MS));
    char want[600];
    snprintf(want, sizeof want,
             "error: plugin directory %s refused: writable by group and others (mode 0777); fix with: chmod go-w %s",
             dir, dir);
    assert_stderr_has(p, want);
    assert_stderr_lacks(p, "tool_registered");
    mh_free(p);
    mh_rm_dir(dir);
}
END_TEST

/* Trust: --allow-insecure-plugins serves them, warning once for
 * the directory and once for the file. */
START_TEST(allow_insecure_plugins_serves_with_a_warning_each)
{
    char *dir = mh_private_dir(ECHO_SO, NULL);
    char so[600];
    snprintf(so, sizeof so, "%s/echo.so", dir);
    ck_assert_int_eq(chmod(dir, 0777), 0);
    ck_assert_int_eq(chmod(so, 0666), 0);
    mh_proc *p = mh_spawn("--allow-insecure-plugins", "-d", dir, NULL);
    assert_real_echo(p);
    char want[700];
    snprintf(want, sizeof want,
             "warning: plugin directory %s: writable by group and others (mode 0777); fix with: chmod go-w %s; "
             "let through by --allow-insecure-plugins",
             dir, dir);
    assert_stderr_has(p, want);
    snprintf(want, sizeof want, "warning: plugin %s: writable by group and others (mode 0666)", so);
    assert_stderr_has(p, want);
    assert_stderr_has(p, "loaded 1 tool from 1 plugin; 0 plugins refused, 0 tools refused, 0 directories refused");
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

static Suite *loader_host_suite(void)
{
    Suite *s = suite_create("loader_host");
    TCase *tc = tcase_create("rules");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_test(tc, a_tool_name_belongs_to_its_plugin_file);
    tcase_add_test(tc, a_tool_name_belongs_to_its_plugin_file_in_another_directory);
    tcase_add_test(tc, relative_plugin_dir_survives_a_chdir_in_a_constructor);
    tcase_add_test(tc, a_refused_plugin_serves_none_of_its_tools);
    tcase_add_test(tc, a_missing_plugin_dir_is_fatal);
    tcase_add_test(tc, an_unreadable_plugin_dir_is_fatal);
    tcase_add_test(tc, a_missing_default_dir_is_a_warning);
    tcase_add_test(tc, an_empty_plugin_dir_is_a_warning);
    tcase_add_test(tc, a_plugin_dir_writable_by_others_is_fatal);
    tcase_add_test(tc, allow_insecure_plugins_serves_with_a_warning_each);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(loader_host_suite, mh_global_setup, mh_global_teardown)
