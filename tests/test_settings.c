/* SPDX-License-Identifier: MIT */
/*
** test_settings.c: per-plugin settings: the three sources (--set, TOOLHOST_NAME_KEY, --config FILE)
** and their precedence, in both isolation modes; secrets kept out of the
** log (even at debug), `toolhost inspect`, the registry cache, the host's
** command line and a worker's environment; the cache invalidated by a
** changed setting; the file's [toolhost] section; and errors that name the
** file, the line and the rule. The plugin is tests/hostile/greet.c.
*/
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mcp_harness.h"
#include "check_main.h"

#define TOOLHOST TOP_BUILDDIR "/src/toolhost"
#define ARG_SECRET "argSecret-7f3a"
#define FILE_SECRET "fileSecret-91bc"
#define ENV_SECRET "envSecret-c5d2"

static const char *const modes[] = {"--isolation=none", "--isolation=process"};

/* A private plugin directory with greet.so and, when TEXT, a settings file
 * (mode 0600) written into it; *FILE gets its path. */
static char *setup(const char *text, char *file, size_t size)
{
    char *dir = mh_private_dir(mh_hostile("greet"), NULL);
    snprintf(file, size, "%s/settings.ini", dir);
    if (text) {
        int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
        close(fd);
    }
    return dir;
}

/* Call greet {"name":"Bo"} and return the result (caller puts it). */
static json_object *greet(mh_proc *p)
{
    mh_initialize(p, "2025-06-18");
    json_object *o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
                               "{\"name\":\"greet\",\"arguments\":{\"name\":\"Bo\"}}}");
    ck_assert_msg(!json_object_get_boolean(mh_at(o, "result isError")), "%s", mh_json(o));
    return o;
}

static void expect_text(const char *mode, const char *file, bool env, bool arg, const char *want)
{
    if (env)
        setenv("TOOLHOST_GREET_PREFIX", "Env: ", 1);
    char dirbuf[512];
    snprintf(dirbuf, sizeof dirbuf, "%s", file);
    *strrchr(dirbuf, '/') = '\0';
    mh_proc *p = arg ? mh_spawn("--plugin-dir", dirbuf, "--no-registry-cache", mode, "--config", file, "--set",
                                "greet.prefix=Arg: ", NULL)
                     : mh_spawn("--plugin-dir", dirbuf, "--no-registry-cache", mode, "--config", file, NULL);
    unsetenv("TOOLHOST_GREET_PREFIX");
    json_object *o = greet(p);
    MH_ASSERT_STR(o, "result content 0 text", want);
    json_object_put(o);
    mh_finish(p);
}

START_TEST(sources_and_precedence)
{
    char file[512];
    char *dir = setup("# greet's settings\n[greet]\nprefix = \"File: \"\n", file, sizeof file);
    expect_text(modes[_i], file, false, false, "File: Bo");
    expect_text(modes[_i], file, true, false, "Env: Bo");
    expect_text(modes[_i], file, true, true, "Arg: Bo");
    expect_text(modes[_i], file, false, true, "Arg: Bo");
    mh_rm_dir(dir);
}
END_TEST

static void assert_no_secret(const char *where, const char *text)
{
    static const char *const secrets[] = {ARG_SECRET, FILE_SECRET, ENV_SECRET};
    for (size_t i = 0; i < sizeof secrets / sizeof secrets[0]; i++)
        ck_assert_msg(!text || !strstr(text, secrets[i]), "%s shows the secret %s:\n%s", where, secrets[i], text);
}

static char *slurp_file(const char *path, size_t max)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = calloc(1, max + 1);
    size_t n = fread(buf, 1, max, f);
    buf[n] = '\0';
    fclose(f);
    for (size_t i = 0; i < n; i++) /* /proc/PID/cmdline separates with NULs */
        if (!buf[i])
            buf[i] = ' ';
    return buf;
}

/* Secrets from all three sources reach the plugin, and nothing else. */
START_TEST(secrets_stay_out_of_logs)
{
    char file[512], cache[600];
    char *dir = setup("[greet]\nsecret token = " FILE_SECRET "\n", file, sizeof file);
    snprintf(cache, sizeof cache, "%s/cache.json", dir);
    for (int format = 0; format < 2; format++) {
        setenv("TOOLHOST_GREET_TOKEN", ENV_SECRET, 1);
        mh_proc *p = mh_spawn("--plugin-dir", dir, "--registry-cache", cache, modes[_i], "--config", file,
                              "--set-secret", "greet.token=" ARG_SECRET, "--log-level=debug",
                              format ? "--log-format=json" : "--log-format=text", NULL);
        unsetenv("TOOLHOST_GREET_TOKEN");
        json_object *o = greet(p);
        ck_assert_msg(json_object_get_boolean(mh_at(o, "result structuredContent has_token")), "%s", mh_json(o));
        /* A worker does not inherit TOOLHOST_* (it gets its settings over
         * its socket); in-process plugins share the host's environment. */
        if (_i == 1)
            ck_assert_msg(!json_object_get_boolean(mh_at(o, "result structuredContent env_visible")), "%s",
                          mh_json(o));
        json_object_put(o);
        /* The host blanks the value in its argv. Under a wrapper
         * (check-valgrind) /proc shows the wrapper's own argv instead,
         * which the host cannot change: nothing to check there. */
        const char *wrapper = getenv("TH_TEST_WRAPPER");
        if (!wrapper || !*wrapper) {
            char procfile[64];
            snprintf(procfile, sizeof procfile, "/proc/%ld/cmdline", mh_pid(p));
            char *cmdline = slurp_file(procfile, 1 << 16);
            ck_assert_msg(cmdline && strstr(cmdline, "greet.token=*"), "the host's command line: %s", cmdline);
            assert_no_secret("the host's command line", cmdline);
            free(cmdline);
        }
        mh_close_stdin(p);
        ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
        char *err = mh_stderr(p);
        ck_assert_msg(strstr(err, "setting 'token' read (secret)"), "no debug line for the read:\n%s", err);
        assert_no_secret("the log", err);
        free(err);
        mh_free(p);
        /* A plugin with a secret setting is not cached at all. */
        char *c = slurp_file(cache, 1 << 20);
        assert_no_secret("the registry cache", c);
        ck_assert_msg(!c || !strstr(c, "greet.so"), "a plugin with a secret was cached: %s", c);
        free(c);
    }
    mh_rm_dir(dir);
}
END_TEST

/* Run toolhost inspect with ARGS; its stdout. */
static char *inspect(const char *args)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "TOOLHOST_GREET_TOKEN=" ENV_SECRET " %s inspect %s 2>&1", TOOLHOST, args);
    FILE *f = popen(cmd, "r");
    ck_assert_ptr_nonnull(f);
    char *out = calloc(1, 1 << 20);
    size_t n = fread(out, 1, (1 << 20) - 1, f);
    out[n] = '\0';
    pclose(f);
    return out;
}

START_TEST(inspect_lists_settings_without_secrets)
{
    char file[512], args[1600];
    char *dir = setup("[greet]\nsecret other = " FILE_SECRET "\nunits = metric\n", file, sizeof file);
    snprintf(args, sizeof args, "--config %s --set greet.prefix=Hi --set-secret greet.key=" ARG_SECRET " %s", file,
             dir);
    char *out = inspect(args);
    ck_assert_msg(strstr(out, "Setting: prefix = Hi") && strstr(out, "Setting: units = metric") &&
                      strstr(out, "Setting: key = (secret)") && strstr(out, "Setting: token = (secret)") &&
                      strstr(out, "Setting: other = (secret)"),
                  "%s", out);
    assert_no_secret("inspect", out);
    free(out);
    snprintf(args, sizeof args, "--json --config %s --set greet.prefix=Hi --set-secret greet.key=" ARG_SECRET " %s",
             file, dir);
    out = inspect(args);
    json_object *o = mh_parse(out);
    ck_assert_msg(o, "not JSON: %s", out);
    MH_ASSERT_STR(o, "plugins 0 settings prefix", "Hi");
    MH_ASSERT_STR(o, "plugins 0 settings token", "(secret)");
    MH_ASSERT_STR(o, "plugins 0 settings key", "(secret)");
    assert_no_secret("inspect --json", out);
    json_object_put(o);
    free(out);
    mh_rm_dir(dir);
}
END_TEST

/* The registration line of greet (from a scanner) in a session that never
 * calls it: absent when the scan came from the cache. */
static bool scanned(const char *dir, const char *cache, const char *set)
{
    mh_proc *p = mh_spawn("--plugin-dir", dir, "--registry-cache", cache, "--isolation=process", "--set", set, NULL);
    mh_initialize(p, "2025-06-18");
    mh_close_stdin(p);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    char *err = mh_stderr(p);
    bool seen = strstr(err, "greet settings: prefix set") != NULL;
    free(err);
    mh_free(p);
    return seen;
}

START_TEST(changed_settings_invalidate_the_cache)
{
    char file[512], cache[600];
    char *dir = setup(NULL, file, sizeof file);
    snprintf(cache, sizeof cache, "%s/cache.json", dir);
    ck_assert(scanned(dir, cache, "greet.prefix=One"));
    char *c = slurp_file(cache, 1 << 20);
    ck_assert_msg(c && strstr(c, "greet.so") && strstr(c, "\"settings\"") && !strstr(c, "One"), "%s", c);
    free(c);
    ck_assert_msg(!scanned(dir, cache, "greet.prefix=One"), "unchanged settings were scanned again");
    ck_assert_msg(scanned(dir, cache, "greet.prefix=Two"), "a changed setting used the cached scan");
    mh_rm_dir(dir);
}
END_TEST

/* The file's [toolhost] section gives options; the command line wins. */
START_TEST(server_section_gives_options)
{
    char file[512];
    char *dir = setup("[toolhost]\nname = from-file\nno-registry-cache\n[greet]\nprefix = x\n", file, sizeof file);
    mh_proc *p = mh_spawn("--plugin-dir", dir, "--config", file, NULL);
    mh_initialize(p, "2025-06-18");
    mh_finish(p);
    json_object *o;
    p = mh_spawn("--plugin-dir", dir, "--config", file, NULL);
    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                  "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
    MH_ASSERT_STR(o, "result serverInfo name", "from-file");
    json_object_put(o);
    mh_finish(p);
    p = mh_spawn("--plugin-dir", dir, "--config", file, "--name", "from-args", NULL);
    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                  "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
    MH_ASSERT_STR(o, "result serverInfo name", "from-args");
    json_object_put(o);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/* Each bad input: the exit status 2 and a message naming what and where. */
START_TEST(bad_settings_are_named)
{
    static const struct {
        const char *file, *arg, *want;
    } cases[] = {
        {"[greet]\nprefix\n", NULL, "settings.ini:2: expected key = value"},
        {"prefix = x\n", NULL, "settings.ini:1: a setting before any [section]"},
        {"[Greet]\n", NULL, "settings.ini:1: section 'Greet' is not a plugin name"},
        {"[greet]\nBad-Key = 1\n", NULL, "settings.ini:2: setting name 'Bad-Key' must match"},
        {"[toolhost]\nno-such-option = 1\n", NULL, "[toolhost] option 'no-such-option=1' is not a toolhost option"},
        {"[toolhost]\nset-secret = greet.token=x\n", NULL, "cannot be given in a configuration file"},
        {"[toolhost]\nsecret name = x\n", NULL, "settings.ini:2: [toolhost] options cannot be secret"},
        {NULL, "greet", "--set: 'greet' is not NAME.key=value"},
        {NULL, "greet.Key=1", "--set: setting name 'Key' must match"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char file[512];
        char *dir = setup(cases[i].file, file, sizeof file);
        mh_proc *p = cases[i].file ? mh_spawn("--plugin-dir", dir, "--config", file, NULL)
                                   : mh_spawn("--plugin-dir", dir, "--set", cases[i].arg, NULL);
        ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 2);
        char *err = mh_stderr(p);
        ck_assert_msg(strstr(err, cases[i].want), "case %zu: want \"%s\" in:\n%s", i, cases[i].want, err);
        free(err);
        mh_free(p);
        mh_rm_dir(dir);
    }
    mh_proc *p = mh_spawn("--config", "/nonexistent/toolhost.ini", NULL);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 2);
    char *err = mh_stderr(p);
    ck_assert_msg(strstr(err, "--config /nonexistent/toolhost.ini: cannot open"), "%s", err);
    free(err);
    mh_free(p);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("settings");
    TCase *tc = tcase_create("settings");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_loop_test(tc, sources_and_precedence, 0, 2);
    tcase_add_loop_test(tc, secrets_stay_out_of_logs, 0, 2);
    tcase_add_test(tc, inspect_lists_settings_without_secrets);
    tcase_add_test(tc, changed_settings_invalidate_the_cache);
    tcase_add_test(tc, server_section_gives_options);
    tcase_add_test(tc, bad_settings_are_named);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(suite, mh_global_setup, mh_global_teardown)
