/* SPDX-License-Identifier: MIT */
/*
** test_logs.c: the host's log lines: the
** stable text format with a timestamp, --log-format=json (every line a JSON
** object with ts, level, component, msg), one line per tool call with its
** outcome, the protocol trace at debug, and the level filter, in both
** isolation modes (a worker's lines come back through the host).
*/
#include "config.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp_harness.h"
#include "check_main.h"

#define BUNDLED TOP_BUILDDIR "/plugins/.libs"
#define TS_RE "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z"

static const char *const modes[] = {"--isolation=none", "--isolation=process"};

static bool matches(const char *re, const char *s)
{
    regex_t r;
    ck_assert_int_eq(regcomp(&r, re, REG_EXTENDED | REG_NOSUB), 0);
    bool ok = regexec(&r, s, 0, NULL, 0) == 0;
    regfree(&r);
    return ok;
}

/* Run echo (id 2, ok), echo without its argument (id 3, error) and, when
 * CRASH, the crashing tool (id 4); return stderr once the host has ended. */
static char *session(const char *mode, const char *level, const char *format, bool crash)
{
    /* mh_hostile's answer lives in one static buffer. */
    char *reglog = strdup(mh_hostile("reglog")), *crasher = strdup(mh_hostile("crash"));
    char *dir = mh_private_dir(BUNDLED "/echo.so", reglog, crash ? crasher : NULL, NULL);
    free(reglog);
    free(crasher);
    mh_proc *p = mh_spawn("--plugin-dir", dir, "--no-registry-cache", mode, level, format, NULL);
    mh_initialize(p, "2025-06-18");
    json_object *o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
                               "{\"name\":\"echo\",\"arguments\":{\"text\":\"hi\"}}}");
    MH_ASSERT_STR(o, "result content 0 text", "hi");
    json_object_put(o);
    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                  "\"arguments\":{}}}");
    ck_assert_msg(json_object_get_boolean(mh_at(o, "result isError")), "%s", mh_json(o));
    json_object_put(o);
    if (crash) {
        o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"crash\","
                      "\"arguments\":{}}}");
        ck_assert_msg(json_object_get_boolean(mh_at(o, "result isError")), "%s", mh_json(o));
        json_object_put(o);
    }
    mh_close_stdin(p);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    char *err = mh_stderr(p);
    mh_free(p);
    mh_rm_dir(dir);
    return err;
}

/* The JSON lines of ERR, each checked for the fixed members. */
static json_object *json_lines(const char *err)
{
    json_object *lines = json_object_new_array();
    char *copy = strdup(err), *save = NULL;
    for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        json_object *o = mh_parse(l);
        ck_assert_msg(o && json_object_is_type(o, json_type_object), "not a JSON object: %s", l);
        const char *ts = mh_str(o, "ts"), *level = mh_str(o, "level");
        ck_assert_msg(ts && matches(TS_RE "$", ts), "bad ts: %s", l);
        ck_assert_msg(level && mh_str(o, "component") && mh_str(o, "msg"), "fixed members missing: %s", l);
        json_object_array_add(lines, o);
    }
    free(copy);
    return lines;
}

/* The call line of request ID in LINES, or NULL. */
static json_object *call_line(json_object *lines, int id)
{
    for (size_t i = 0; i < json_object_array_length(lines); i++) {
        json_object *o = json_object_array_get_idx(lines, i);
        const char *c = mh_str(o, "component");
        if (c && strcmp(c, "call") == 0 && json_object_get_int(mh_at(o, "id")) == id)
            return o;
    }
    return NULL;
}

static size_t count_component(json_object *lines, const char *component, const char *level)
{
    size_t n = 0;
    for (size_t i = 0; i < json_object_array_length(lines); i++) {
        json_object *o = json_object_array_get_idx(lines, i);
        if (strcmp(mh_str(o, "component"), component) == 0 && (!level || strcmp(mh_str(o, "level"), level) == 0))
            n++;
    }
    return n;
}

START_TEST(json_lines_with_call_outcomes)
{
    const char *mode = modes[_i];
    bool process = _i == 1;
    char *err = session(mode, "--log-level=info", "--log-format=json", process);
    json_object *lines = json_lines(err);
    static const struct {
        int id;
        const char *outcome;
    } want[] = {{2, "ok"}, {3, "error"}, {4, "crash"}};
    for (size_t i = 0; i < (process ? 3u : 2u); i++) {
        json_object *o = call_line(lines, want[i].id);
        ck_assert_msg(o, "%s: no call line for id %d:\n%s", mode, want[i].id, err);
        MH_ASSERT_STR(o, "level", "info");
        MH_ASSERT_STR(o, "outcome", want[i].outcome);
        MH_ASSERT_STR(o, "tool", want[i].id == 4 ? "crash" : "echo");
        MH_ASSERT_STR(o, "plugin", want[i].id == 4 ? "crash" : "echo");
        ck_assert_msg(json_object_is_type(mh_at(o, "duration_ms"), json_type_int) &&
                          json_object_get_int64(mh_at(o, "duration_ms")) >= 0,
                      "%s", mh_json(o));
    }
    /* The plugin's registration line, from the scanner and the worker in
     * process mode, comes back as JSON naming the plugin. */
    size_t reg = 0;
    for (size_t i = 0; i < json_object_array_length(lines); i++) {
        json_object *o = json_object_array_get_idx(lines, i);
        if (strstr(mh_str(o, "msg"), "reglog-info two")) {
            MH_ASSERT_STR(o, "level", "info");
            MH_ASSERT_STR(o, "plugin", "reglog");
            reg++;
        }
        ck_assert_msg(strcmp(mh_str(o, "level"), "debug") != 0, "a debug line at info: %s", mh_json(o));
    }
    ck_assert_msg(reg >= 1, "%s: no registration line:\n%s", mode, err);
    ck_assert_uint_eq(count_component(lines, "protocol", NULL), 0);
    json_object_put(lines);
    free(err);
}
END_TEST

/* Debug adds the protocol trace: every message in and out. */
START_TEST(debug_traces_the_protocol)
{
    char *err = session(modes[_i], "--log-level=debug", "--log-format=json", false);
    json_object *lines = json_lines(err);
    size_t in = 0, out = 0;
    for (size_t i = 0; i < json_object_array_length(lines); i++) {
        json_object *o = json_object_array_get_idx(lines, i);
        if (strcmp(mh_str(o, "component"), "protocol") != 0)
            continue;
        MH_ASSERT_STR(o, "level", "debug");
        const char *dir = mh_str(o, "dir");
        in += dir && strcmp(dir, "in") == 0;
        out += dir && strcmp(dir, "out") == 0;
        if (dir && strcmp(dir, "in") == 0 && strstr(mh_str(o, "msg"), "\"id\":2"))
            ck_assert_msg(strstr(mh_str(o, "msg"), "tools/call"), "%s", mh_json(o));
    }
    /* initialize, initialized, two calls in; three responses out. */
    ck_assert_msg(in == 4 && out == 3, "%zu in, %zu out:\n%s", in, out, err);
    ck_assert_msg(count_component(lines, "call", "info") == 2, "%s", err);
    json_object_put(lines);
    free(err);
}
END_TEST

/* Text lines: a timestamp, "toolhost: LEVEL:", the message, the fields. */
START_TEST(text_lines_and_the_level_filter)
{
    char *err = session(modes[_i], "--log-level=info", "--log-format=text", false);
    bool saw_call = false;
    char *copy = strdup(err), *save = NULL;
    for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        ck_assert_msg(matches(TS_RE " (toolhost: (debug|info|notice|warning|error|critical): |plugin )", l),
                      "not a log line: %s", l);
        if (strstr(l, " toolhost: info: call echo ") && strstr(l, " id=2 ") && strstr(l, " outcome=ok"))
            saw_call = matches(" duration_ms=[0-9]+ ", l);
    }
    ck_assert_msg(saw_call, "no call line for id 2:\n%s", err);
    free(copy);
    free(err);

    /* At warning, neither call lines nor info lines of plugins. */
    err = session(modes[_i], "--log-level=warning", "--log-format=text", false);
    ck_assert_msg(!strstr(err, "outcome=") && !strstr(err, "reglog-info"), "%s", err);
    ck_assert_msg(strstr(err, "reglog-warning 3"), "%s", err);
    free(err);
}
END_TEST

START_TEST(bad_log_format_is_a_usage_error)
{
    mh_proc *p = mh_spawn("--plugin-dir", BUNDLED, "--log-format=xml", NULL);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 2);
    char *err = mh_stderr(p);
    ck_assert_msg(strstr(err, "--log-format: 'xml' is not text or json"), "%s", err);
    free(err);
    mh_free(p);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("logs");
    TCase *tc = tcase_create("logs");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_loop_test(tc, json_lines_with_call_outcomes, 0, 2);
    tcase_add_loop_test(tc, debug_traces_the_protocol, 0, 2);
    tcase_add_loop_test(tc, text_lines_and_the_level_filter, 0, 2);
    tcase_add_test(tc, bad_log_format_is_a_usage_error);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(suite, mh_global_setup, mh_global_teardown)
