/* SPDX-License-Identifier: MIT */
/*
** test_log_format.c: base/log.c alone: the text line's timestamp, level and
** " key=value" fields; the JSON line's fixed members, its fields, and a
** message repaired to UTF-8; a child's relayed line re-filtered and
** re-formatted while a plugin's own output is never filtered; and
** th_log_raise muting the host's lines but not a plugin's.
*/
#include "config.h"

#include <check.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "check_main.h"

#define TS_RE "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z"

static FILE *capture_file;
static int saved_stderr = -1;

/* Point stderr at a fresh temporary file. */
static void capture(void)
{
    fflush(stderr);
    capture_file = tmpfile();
    ck_assert_ptr_nonnull(capture_file);
    saved_stderr = dup(2);
    dup2(fileno(capture_file), 2);
}

/* Restore stderr; what was written since capture() (malloc'd). */
static char *captured(void)
{
    fflush(stderr);
    dup2(saved_stderr, 2);
    close(saved_stderr);
    long n = ftell(capture_file);
    char *buf = calloc(1, (size_t)n + 1);
    rewind(capture_file);
    ck_assert_int_eq(fread(buf, 1, (size_t)n, capture_file), n);
    fclose(capture_file);
    return buf;
}

static bool matches(const char *re, const char *s)
{
    regex_t r;
    ck_assert_int_eq(regcomp(&r, re, REG_EXTENDED | REG_NOSUB), 0);
    bool ok = regexec(&r, s, 0, NULL, 0) == 0;
    regfree(&r);
    return ok;
}

static void reset(void)
{
    th_log_set_format(TH_LOG_TEXT);
    th_log_set_threshold(TH_LOG_INFO);
    th_log_raise(-1);
}

START_TEST(text_line_with_fields)
{
    reset();
    json_object *f = json_object_new_object();
    json_object_object_add(f, "tool", json_object_new_string("a b"));
    json_object_object_add(f, "n", json_object_new_int(3));
    json_object_object_add(f, "plain", json_object_new_string("x"));
    capture();
    th_log_ex(TH_LOG_WARNING, "call", "p", f, "hello %d", 1);
    th_log(TH_LOG_DEBUG, "below the threshold");
    char *out = captured();
    json_object_put(f);
    ck_assert_msg(matches("^" TS_RE " toolhost: warning: hello 1 tool=\"a b\" n=3 plain=x\n$", out), "%s", out);
    free(out);
}
END_TEST

START_TEST(json_line_members_and_utf8)
{
    reset();
    th_log_set_format(TH_LOG_JSON);
    json_object *f = json_object_new_object();
    json_object_object_add(f, "level", json_object_new_string("forged"));
    json_object_object_add(f, "outcome", json_object_new_string("ok"));
    capture();
    th_log_ex(TH_LOG_ERROR, "call", "echo", f, "caf\xe9 %s", "au lait");
    th_log(TH_LOG_INFO, "plain");
    char *out = captured();
    json_object_put(f);
    reset();
    char *nl = strchr(out, '\n');
    ck_assert_ptr_nonnull(nl);
    *nl = '\0';
    json_object *o = json_tokener_parse(out), *v;
    ck_assert_msg(o, "not JSON: %s", out);
    ck_assert(json_object_object_get_ex(o, "ts", &v) && matches("^" TS_RE "$", json_object_get_string(v)));
    ck_assert_str_eq(json_object_get_string(json_object_object_get(o, "level")), "error");
    ck_assert_str_eq(json_object_get_string(json_object_object_get(o, "component")), "call");
    ck_assert_str_eq(json_object_get_string(json_object_object_get(o, "plugin")), "echo");
    ck_assert_str_eq(json_object_get_string(json_object_object_get(o, "msg")), "caf\xef\xbf\xbd au lait");
    ck_assert_str_eq(json_object_get_string(json_object_object_get(o, "outcome")), "ok");
    json_object_put(o);
    o = json_tokener_parse(nl + 1);
    ck_assert_msg(o, "not JSON: %s", nl + 1);
    ck_assert_str_eq(json_object_get_string(json_object_object_get(o, "component")), "host");
    ck_assert(!json_object_object_get_ex(o, "plugin", NULL));
    json_object_put(o);
    free(out);
}
END_TEST

START_TEST(relay_refilters_children_but_not_output)
{
    reset();
    th_log_set_threshold(TH_LOG_ERROR);
    static const char child_debug[] =
        "{\"ts\":\"2026-01-02T03:04:05.678Z\",\"level\":\"debug\",\"component\":\"plugin\",\"msg\":\"hidden\"}";
    static const char child_error[] = "{\"ts\":\"2026-01-02T03:04:05.678Z\",\"level\":\"error\",\"component\":"
                                      "\"plugin\",\"plugin\":\"greet\",\"msg\":\"shown\",\"k\":\"v\"}";
    static const char child_own[] =
        "{\"ts\":\"2026-01-02T03:04:05.678Z\",\"level\":\"error\",\"component\":\"sandbox\",\"msg\":\"own\"}";
    static const char raw[] = "{\"ts\": not a log line";
    capture();
    th_log_relay("x.so", child_debug, strlen(child_debug));
    th_log_relay("x.so", child_error, strlen(child_error));
    th_log_relay("x.so", child_own, strlen(child_own));
    th_log_relay("x.so", raw, strlen(raw));
    char *out = captured();
    ck_assert_msg(!strstr(out, "hidden"), "%s", out);
    /* The plugin the line names, else the child's: first among the fields. */
    ck_assert_msg(strstr(out, "2026-01-02T03:04:05.678Z toolhost: error: shown plugin=greet k=v\n"), "%s", out);
    ck_assert_msg(strstr(out, "2026-01-02T03:04:05.678Z toolhost: error: own plugin=x\n"), "%s", out);
    ck_assert_msg(matches(TS_RE " plugin x.so: \\{\"ts\": not a log line\n", out), "%s", out);
    free(out);

    th_log_set_format(TH_LOG_JSON);
    capture();
    th_log_relay("x.so", child_error, strlen(child_error));
    th_log_relay("x.so", raw, strlen(raw));
    out = captured();
    reset();
    ck_assert_msg(strstr(out, "\"component\":\"plugin\",\"plugin\":\"greet\",\"msg\":\"shown\",\"k\":\"v\""), "%s",
                  out);
    ck_assert_msg(strstr(out, "\"level\":\"info\",\"component\":\"output\",\"plugin\":\"x\",\"msg\":\"{\\\"ts\\\": "
                              "not a log line\"}"),
                  "%s", out);
    free(out);
}
END_TEST

START_TEST(raise_mutes_the_host_not_plugins)
{
    reset();
    th_log_raise(TH_LOG_WARNING);
    ck_assert(!th_log_enabled(TH_LOG_INFO));
    capture();
    th_log(TH_LOG_INFO, "loader info");
    th_log_plugin(TH_LOG_INFO, "p", "plugin info");
    th_log_plugin(TH_LOG_DEBUG, "p", "plugin debug");
    char *out = captured();
    reset();
    ck_assert_msg(!strstr(out, "loader info") && strstr(out, "plugin info") && !strstr(out, "plugin debug"), "%s",
                  out);
    free(out);
    ck_assert_int_eq(th_log_format_parse("json"), TH_LOG_JSON);
    ck_assert_int_eq(th_log_format_parse("xml"), -1);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("log_format");
    TCase *tc = tcase_create("log_format");
    tcase_add_test(tc, text_line_with_fields);
    tcase_add_test(tc, json_line_members_and_utf8);
    tcase_add_test(tc, relay_refilters_children_but_not_output);
    tcase_add_test(tc, raise_mutes_the_host_not_plugins);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN(suite)
