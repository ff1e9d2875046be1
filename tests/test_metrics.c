/* SPDX-License-Identifier: MIT */
/*
** tests/test_metrics.c: base/metrics.c alone: cumulative buckets at the
** OpenTelemetry boundaries, outcomes merged into error_type, the series of
** methods other than tools/call, the span counters, label
** escaping, the cap on tool names, and counts that stay exact when threads
** record at once.
*/
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/metrics.h"
#include "check_main.h"

#define MS 1000000LL

static char *render(void)
{
    th_buf b = {0};
    ck_assert(th_metrics_render(&b, 4096));
    return b.data;
}

/* TEXT holds LINE as a whole line. */
static bool has_line(const char *text, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = text; (p = strstr(p, line)); p += n)
        if ((p == text || p[-1] == '\n') && p[n] == '\n')
            return true;
    return false;
}

#define ASSERT_LINE(text, line) ck_assert_msg(has_line(text, line), "no line '%s' in:\n%s", line, text)

START_TEST(test_buckets_are_cumulative)
{
    th_metrics_reset();
    th_metrics_call_begin();
    th_metrics_call_end("t", TH_METRICS_OK, 5 * MS);
    th_metrics_call_begin();
    th_metrics_call_end("t", TH_METRICS_OK, 15 * MS);
    th_metrics_call_begin();
    th_metrics_call_end("t", TH_METRICS_OK, 400000 * MS); /* past the last bound */
    char *t = render();
    const char *l = "mcp_server_operation_duration_seconds_bucket{mcp_method_name=\"tools/call\",gen_ai_tool_name=\"t\",";
    char line[256];
    snprintf(line, sizeof line, "%sle=\"0.01\"} 1", l);
    ASSERT_LINE(t, line);
    snprintf(line, sizeof line, "%sle=\"0.02\"} 2", l);
    ASSERT_LINE(t, line);
    snprintf(line, sizeof line, "%sle=\"300\"} 2", l);
    ASSERT_LINE(t, line);
    snprintf(line, sizeof line, "%sle=\"+Inf\"} 3", l);
    ASSERT_LINE(t, line);
    ASSERT_LINE(t, "toolhost_tool_calls_total{tool=\"t\",outcome=\"ok\"} 3");
    ASSERT_LINE(t, "toolhost_calls_in_flight 0");
    ASSERT_LINE(t, "process_resident_memory_bytes 4096");
    free(t);
}
END_TEST

/* A crash and a timeout are answered as results with isError: both are
 * "tool_error" under the conventions, while the counter keeps them apart. */
START_TEST(test_error_types)
{
    th_metrics_reset();
    th_metrics_call_end("t", TH_METRICS_ERROR, MS);
    th_metrics_call_end("t", TH_METRICS_CRASH, MS);
    th_metrics_call_end("t", TH_METRICS_TIMEOUT, MS);
    th_metrics_call_end("t", TH_METRICS_BUSY, MS);
    char *t = render();
    ASSERT_LINE(t, "mcp_server_operation_duration_seconds_count{mcp_method_name=\"tools/call\",gen_ai_tool_name=\"t\","
                   "error_type=\"tool_error\"} 3");
    ASSERT_LINE(t, "mcp_server_operation_duration_seconds_count{mcp_method_name=\"tools/call\",gen_ai_tool_name=\"t\","
                   "error_type=\"-31000\"} 1");
    ASSERT_LINE(t, "toolhost_tool_calls_total{tool=\"t\",outcome=\"crash\"} 1");
    ASSERT_LINE(t, "toolhost_tool_calls_total{tool=\"t\",outcome=\"timeout\"} 1");
    ck_assert_ptr_null(strstr(t, "gen_ai_tool_name=\"t\"}")); /* no ok series: nothing succeeded */
    free(t);
}
END_TEST

/* Every other method in the same histogram, by method and error code; a
 * method's codes are capped as tool names are. */
START_TEST(test_other_methods)
{
    th_metrics_reset();
    th_metrics_request_end("tools/list", 0, MS);
    th_metrics_request_end("tools/list", 0, 30 * MS);
    th_metrics_request_end("tools/call", -32602, MS); /* refused before it ran: no tool */
    for (int code = -32000; code > -32000 - TH_METRICS_MAX_CODES - 3; code--)
        th_metrics_request_end("resources/read", code, MS);
    char *t = render();
    ASSERT_LINE(t, "mcp_server_operation_duration_seconds_count{mcp_method_name=\"tools/list\"} 2");
    ASSERT_LINE(t, "mcp_server_operation_duration_seconds_bucket{mcp_method_name=\"tools/list\",le=\"0.02\"} 1");
    ASSERT_LINE(t, "mcp_server_operation_duration_seconds_count{mcp_method_name=\"tools/call\",error_type=\"-32602\"} 1");
    ASSERT_LINE(t, "mcp_server_operation_duration_seconds_count{mcp_method_name=\"resources/read\",error_type=\"-32000\"} 1");
    ASSERT_LINE(t, "mcp_server_operation_duration_seconds_count{mcp_method_name=\"resources/read\",error_type=\"_OTHER\"} 3");
    ck_assert_ptr_null(strstr(t, "mcp_method_name=\"resources/read\"}")); /* nothing succeeded */
    free(t);
}
END_TEST

START_TEST(test_span_counters)
{
    th_metrics_reset();
    th_metrics_span_dropped();
    th_metrics_spans_exported(512, true);
    th_metrics_spans_exported(3, false);
    char *t = render();
    ASSERT_LINE(t, "toolhost_spans_dropped_total 1");
    ASSERT_LINE(t, "toolhost_spans_exported_total 512");
    ASSERT_LINE(t, "toolhost_spans_export_failed_total 3");
    free(t);
}
END_TEST

START_TEST(test_label_escaping)
{
    th_metrics_reset();
    th_metrics_call_end("a\"b\\c\nd", TH_METRICS_OK, MS);
    char *t = render();
    ASSERT_LINE(t, "toolhost_tool_calls_total{tool=\"a\\\"b\\\\c\\nd\",outcome=\"ok\"} 1");
    free(t);
}
END_TEST

/* A client naming ever new tools cannot grow the output without bound. */
START_TEST(test_names_are_capped)
{
    th_metrics_reset();
    char name[32];
    for (int i = 0; i < TH_METRICS_MAX_TOOLS + 88; i++) {
        snprintf(name, sizeof name, "tool%d", i);
        th_metrics_call_end(name, TH_METRICS_OK, MS);
    }
    th_metrics_call_end("tool0", TH_METRICS_OK, MS); /* an early name keeps its series */
    char *t = render();
    ASSERT_LINE(t, "toolhost_tool_calls_total{tool=\"_other\",outcome=\"ok\"} 88");
    ASSERT_LINE(t, "toolhost_tool_calls_total{tool=\"tool0\",outcome=\"ok\"} 2");
    size_t series = 0;
    for (const char *p = t; (p = strstr(p, "toolhost_tool_calls_total{")); p++)
        series++;
    ck_assert_uint_eq(series, TH_METRICS_MAX_TOOLS + 1);
    free(t);
}
END_TEST

#define THREADS 4
#define PER_THREAD 20000

static void *record(void *arg)
{
    const char *tool = arg;
    for (int i = 0; i < PER_THREAD; i++) {
        th_metrics_call_begin();
        th_metrics_call_end(i % 2 ? tool : "shared", TH_METRICS_OK, MS);
        th_metrics_worker(TH_METRICS_WORKER_START);
    }
    return NULL;
}

START_TEST(test_concurrent_counts_are_exact)
{
    th_metrics_reset();
    pthread_t th[THREADS];
    static const char *tools[THREADS] = {"w0", "w1", "w2", "w3"};
    for (int i = 0; i < THREADS; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, record, (void *)tools[i]), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    char *t = render();
    char line[128];
    snprintf(line, sizeof line, "toolhost_tool_calls_total{tool=\"shared\",outcome=\"ok\"} %d", THREADS * PER_THREAD / 2);
    ASSERT_LINE(t, line);
    snprintf(line, sizeof line, "toolhost_tool_calls_total{tool=\"w3\",outcome=\"ok\"} %d", PER_THREAD / 2);
    ASSERT_LINE(t, line);
    snprintf(line, sizeof line, "toolhost_worker_starts_total %d", THREADS * PER_THREAD);
    ASSERT_LINE(t, line);
    ASSERT_LINE(t, "toolhost_calls_in_flight 0");
    free(t);
}
END_TEST

START_TEST(test_gauges)
{
    th_metrics_reset();
    th_metrics_sessions_add(1);
    th_metrics_sessions_add(1);
    th_metrics_sessions_add(-1);
    th_metrics_set_refused(3);
    th_metrics_queue_wait(2 * MS);
    char *t = render();
    ASSERT_LINE(t, "toolhost_sessions 1");
    ASSERT_LINE(t, "toolhost_plugins_refused 3");
    ASSERT_LINE(t, "toolhost_queue_wait_seconds_bucket{le=\"0.001\"} 0");
    ASSERT_LINE(t, "toolhost_queue_wait_seconds_bucket{le=\"0.01\"} 1");
    ASSERT_LINE(t, "toolhost_queue_wait_seconds_count 1");
    free(t);
}
END_TEST

static Suite *metrics_suite(void)
{
    Suite *s = suite_create("metrics");
    TCase *tc = tcase_create("render");
    tcase_add_test(tc, test_buckets_are_cumulative);
    tcase_add_test(tc, test_error_types);
    tcase_add_test(tc, test_other_methods);
    tcase_add_test(tc, test_span_counters);
    tcase_add_test(tc, test_label_escaping);
    tcase_add_test(tc, test_names_are_capped);
    tcase_add_test(tc, test_concurrent_counts_are_exact);
    tcase_add_test(tc, test_gauges);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(metrics_suite, th_check_nothing, th_check_nothing)
