/* SPDX-License-Identifier: MIT */
/*
** test_limits.c: --rate-limit, --rate-limit-per-principal and
** --concurrency-limit against a real src/toolhost: over stdio a JSON-RPC
** error -31002 with data.retryAfterMs, ping answered meanwhile; over HTTP a
** 429 with Retry-After, in both eras; one bucket per bearer token; a
** concurrency cap that frees its slot when the call ends; the audit line;
** the metrics; the same set from --config's [toolhost] keys, re-read on
** SIGHUP (the command line's kept, a broken file leaving them in force).
*/
#include "config.h"

#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "http_client.h"
#include "mcp_harness.h"

#define RATE_LIMITED -31002

static json_object *call(mh_proc *p, int id, const char *tool, const char *args)
{
    char idj[16];
    snprintf(idj, sizeof idj, "%d", id);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\",\"arguments\":%s}}",
            id, tool, args);
    return mh_await(p, idj, NULL);
}

static void assert_limited(json_object *o, const char *limit)
{
    MH_ASSERT_ERROR(o, RATE_LIMITED);
    MH_ASSERT_STR(o, "error data limit", limit);
    json_object *ms = mh_at(o, "error data retryAfterMs");
    ck_assert_msg(json_object_is_type(ms, json_type_int) && json_object_get_int64(ms) > 0,
                  "no positive retryAfterMs in %s", mh_json(o));
}

START_TEST(stdio_rate_limit_error_and_ping)
{
    char dir[] = "/tmp/th-limits-XXXXXX", file[64];
    ck_assert(mkdtemp(dir));
    snprintf(file, sizeof file, "%s/audit.log", dir);
    /* One a minute: the second call cannot have a token however slow the machine. */
    mh_proc *p = mh_start("--rate-limit", "ec*=1/m", "--audit-log", file, NULL);
    mh_initialize(p, "2025-11-25");
    json_object *o = call(p, 2, "echo", "{\"text\":\"a\"}");
    MH_ASSERT_RESULT(o);
    json_object_put(o);
    o = call(p, 3, "echo", "{\"text\":\"a\"}");
    assert_limited(o, "rate");
    ck_assert_int_gt(json_object_get_int64(mh_at(o, "error data retryAfterMs")), 30000);
    json_object_put(o);
    mh_ping_is_next(p, 4); /* never limited */
    o = call(p, 5, "printer", "{}"); /* outside the glob */
    ck_assert_msg(!mh_has(o, "error"), "printer was limited: %s", mh_json(o));
    json_object_put(o);
    mh_finish(p);
    FILE *f = fopen(file, "r");
    ck_assert(f != NULL);
    char line[1024];
    int n = 0, limited = 0;
    while (fgets(line, sizeof line, f)) {
        json_object *l = mh_parse(line);
        ck_assert(l != NULL);
        n++;
        if (strcmp(mh_str(l, "outcome"), "rate_limited") == 0) {
            limited++;
            MH_ASSERT_STR(l, "tool", "echo");
            MH_ASSERT_INT(l, "code", RATE_LIMITED);
        }
        json_object_put(l);
    }
    fclose(f);
    ck_assert_int_eq(n, 3);
    ck_assert_int_eq(limited, 1);
    unlink(file);
    rmdir(dir);
}
END_TEST

/* A slow call holds the one slot until its gate file exists; a second is
 * refused meanwhile, and a third runs once the first has ended. */
START_TEST(concurrency_limit)
{
    char gate[64], mark[128], args[256];
    snprintf(gate, sizeof gate, "/tmp/th-limits-gate-%ld", (long)getpid());
    snprintf(mark, sizeof mark, "%s/limits-%ld", mh_marks_dir(), (long)getpid());
    unlink(gate);
    unlink(mark);
    mh_proc *p = mh_start("--concurrency-limit", "slow=1", NULL);
    mh_initialize(p, "2025-11-25");
    snprintf(args, sizeof args, "{\"ms\":0,\"gate\":\"%s\",\"mark\":\"%s\"}", gate, mark);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\",\"arguments\":%s}}",
            args);
    long long until = mh_now_ms() + MH_TIMEOUT_MS;
    while (access(mark, F_OK) != 0 && mh_now_ms() < until)
        usleep(10000);
    ck_assert_msg(access(mark, F_OK) == 0, "the gated call never started");
    json_object *o = call(p, 3, "slow", "{\"ms\":0}");
    assert_limited(o, "concurrency");
    json_object_put(o);
    mh_ping_is_next(p, 4);
    FILE *g = fopen(gate, "w");
    ck_assert(g && fclose(g) == 0);
    o = mh_await(p, "2", NULL);
    MH_ASSERT_RESULT(o);
    json_object_put(o);
    o = call(p, 5, "slow", "{\"ms\":0}");
    MH_ASSERT_RESULT(o);
    json_object_put(o);
    mh_finish(p);
    unlink(gate);
    unlink(mark);
}
END_TEST

/* ---- HTTP ---------------------------------------------------------------- */

#define INIT_BODY \
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\"," \
    "\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}"
#define CALL_ECHO \
    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\"," \
    "\"arguments\":{\"text\":\"hi\"}}}"
#define MODERN_CALL_ECHO \
    "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\"," \
    "\"arguments\":{\"text\":\"x\"}," MH_MODERN_META "}}"

/* A legacy session, with AUTH ("Authorization: ...\r\n" or ""); the
 * headers later requests need, in HDRS. */
static void open_session(int port, const char *auth, char *hdrs, size_t size)
{
    char h[1024];
    snprintf(h, sizeof h, ACCEPT_BOTH "%s", auth);
    hres r = request(port, "POST", h, INIT_BODY);
    ck_assert_msg(r.status == 200, "initialize: HTTP %d %s", r.status, r.body);
    char *sid = header_of(&r, "Mcp-Session-Id");
    ck_assert(sid != NULL);
    hres_free(&r);
    snprintf(hdrs, size, ACCEPT_BOTH "%sMcp-Session-Id: %s\r\n", auth, sid);
    free(sid);
    r = request(port, "POST", hdrs, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    ck_assert_int_eq(r.status, 202);
    hres_free(&r);
}

static void assert_ok(hres *r)
{
    ck_assert_msg(r->status == 200, "want 200, got HTTP %d %s", r->status, r->body);
    json_object *o = mh_parse(r->body);
    ck_assert_msg(o && !mh_has(o, "error"), "want a result: %s", r->body);
    json_object_put(o);
    hres_free(r);
}

/* 429, Retry-After in whole seconds (rounded up from retryAfterMs), and
 * the JSON-RPC error in the body for an MCP client. */
static void assert_429(hres *r)
{
    ck_assert_msg(r->status == 429, "want 429, got HTTP %d %s", r->status, r->body);
    char *after = header_of(r, "Retry-After");
    ck_assert_msg(after != NULL, "no Retry-After in %s", r->headers);
    json_object *o = mh_parse(r->body);
    ck_assert_msg(o != NULL, "body not JSON: %s", r->body);
    MH_ASSERT_ERROR(o, RATE_LIMITED);
    long long ms = json_object_get_int64(mh_at(o, "error data retryAfterMs"));
    ck_assert_int_eq(atoll(after), (ms + 999) / 1000);
    ck_assert_int_ge(atoll(after), 1);
    json_object_put(o);
    free(after);
    hres_free(r);
}

START_TEST(http_429_with_retry_after)
{
    int port;
    mh_proc *p = start_http(&port, "--rate-limit=echo=1/h", NULL, NULL);
    char hdrs[1024];
    open_session(port, "", hdrs, sizeof hdrs);
    hres r = request(port, "POST", hdrs, CALL_ECHO);
    assert_ok(&r);
    r = request(port, "POST", hdrs, CALL_ECHO);
    assert_429(&r);
    /* ping is never limited. */
    r = request(port, "POST", hdrs, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}");
    assert_ok(&r);
    /* The bucket is the rule's: a modern request shares it. */
    r = request(port, "POST", ACCEPT_BOTH MODERN_HEADERS "Mcp-Method: tools/call\r\nMcp-Name: echo\r\n",
                MODERN_CALL_ECHO);
    assert_429(&r);
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
}
END_TEST

START_TEST(per_principal_buckets_are_independent)
{
    char path[] = "/tmp/th-limits-tokens-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    const char *text = "token-one\ntoken-two\n";
    ck_assert(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    char opt[128];
    snprintf(opt, sizeof opt, "--auth-token-file=%s", path);
    int port;
    mh_proc *p = start_http(&port, opt, "--rate-limit-per-principal=echo=1/h", NULL);
    char one[1024], two[1024];
    open_session(port, "Authorization: Bearer token-one\r\n", one, sizeof one);
    open_session(port, "Authorization: Bearer token-two\r\n", two, sizeof two);
    hres r = request(port, "POST", one, CALL_ECHO);
    assert_ok(&r);
    r = request(port, "POST", one, CALL_ECHO);
    assert_429(&r);
    /* token-one's empty bucket is not token-two's. */
    r = request(port, "POST", two, CALL_ECHO);
    assert_ok(&r);
    r = request(port, "POST", two, CALL_ECHO);
    assert_429(&r);
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
    unlink(path);
}
END_TEST

/* Limited calls and lost audit lines are counted in /metrics. */
START_TEST(limited_calls_and_lost_lines_counted)
{
    int port;
    mh_proc *p = start_http(&port, "--metrics=http", "--rate-limit=echo=1/h", "--audit-log=/dev/full");
    char hdrs[1024];
    open_session(port, "", hdrs, sizeof hdrs);
    hres r = request(port, "POST", hdrs, CALL_ECHO);
    assert_ok(&r);
    r = request(port, "POST", hdrs, CALL_ECHO);
    assert_429(&r);
    r = read_response(send_request(port, "GET", "/metrics", "", NULL));
    ck_assert_msg(r.status == 200, "/metrics: HTTP %d", r.status);
    ck_assert_msg(strstr(r.body, "toolhost_tool_calls_total{tool=\"echo\",outcome=\"limited\"} 1\n"),
                  "no limited call counted in %s", r.body);
    ck_assert_msg(strstr(r.body, "toolhost_audit_write_failures_total 2\n"), "lost lines not counted in %s", r.body);
    hres_free(&r);
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
}
END_TEST

/* The [toolhost] keys of --config set the same. */
START_TEST(config_file_keys)
{
    char dir[] = "/tmp/th-limits-XXXXXX", conf[64], log[64];
    ck_assert(mkdtemp(dir));
    snprintf(conf, sizeof conf, "%s/toolhost.conf", dir);
    snprintf(log, sizeof log, "%s/audit.log", dir);
    FILE *f = fopen(conf, "w");
    ck_assert(f != NULL);
    fprintf(f, "[toolhost]\naudit-log = %s\nrate-limit = echo=1/h\nconcurrency-limit = slow=1\n", log);
    ck_assert(fclose(f) == 0);
    mh_proc *p = mh_start("--config", conf, NULL);
    mh_initialize(p, "2025-11-25");
    json_object *o = call(p, 2, "echo", "{\"text\":\"a\"}");
    MH_ASSERT_RESULT(o);
    json_object_put(o);
    o = call(p, 3, "echo", "{\"text\":\"a\"}");
    assert_limited(o, "rate");
    json_object_put(o);
    mh_finish(p);
    f = fopen(log, "r");
    ck_assert(f != NULL);
    char line[1024];
    int n = 0;
    while (fgets(line, sizeof line, f))
        n++;
    fclose(f);
    ck_assert_int_eq(n, 2);
    unlink(log);
    unlink(conf);
    rmdir(dir);
}
END_TEST

static void write_conf(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert(f != NULL);
    fputs(text, f);
    ck_assert(fclose(f) == 0);
}

/* SIGHUP, then the reload's line about --config, WHAT (each said once). */
static void hup(mh_proc *p, const char *what)
{
    mh_kill(p, SIGHUP);
    if (!mh_stderr_wait(p, what, MH_TIMEOUT_MS)) {
        char *err = mh_stderr(p);
        ck_abort_msg("no '%s' after SIGHUP: %s", what, err);
        free(err);
    }
}

/* A step of a config-reload script: call TOOL with ARGS; RATE_LIMITED
 * says whether its bucket must be empty. */
struct limit_step {
    const char *tool, *args;
    int limited;
};

static void run_steps(mh_proc *p, int *id, const struct limit_step *st, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        json_object *o = call(p, (*id)++, st[i].tool, st[i].args);
        if (st[i].limited)
            assert_limited(o, "rate");
        else
            MH_ASSERT_RESULT(o);
        json_object_put(o);
    }
}

#define STEPS(p, id, ...) \
    do { \
        static const struct limit_step st_[] = {__VA_ARGS__}; \
        run_steps(p, id, st_, sizeof st_ / sizeof st_[0]); \
    } while (0)

START_TEST(sighup_rereads_config_limits)
{
    static const char echo_args[] = "{\"text\":\"a\"}";
    char dir[] = "/tmp/th-limits-XXXXXX", conf[64];
    int id = 2;
    ck_assert(mkdtemp(dir));
    snprintf(conf, sizeof conf, "%s/toolhost.conf", dir);
    write_conf(conf, "[toolhost]\nrate-limit = echo=1/h\n");
    mh_proc *p = mh_start("--config", conf, "--rate-limit", "printer=1/h", NULL);
    mh_initialize(p, "2025-11-25");
    STEPS(p, &id, {"echo", echo_args, 0}, {"echo", echo_args, 1}, {"printer", "{}", 0});
    /* The file now limits logger, not echo; the command line's printer
     * rule stays, its empty bucket with it. */
    write_conf(conf, "[toolhost]\nrate-limit = logger=1/h\n");
    hup(p, "reload: --config re-read: 1 limit from it, 1 from the command line");
    STEPS(p, &id, {"echo", echo_args, 0}, {"printer", "{}", 1}, {"logger", "{}", 0}, {"logger", "{}", 1});
    /* A broken file leaves the limits in force: logger stays limited, echo not. */
    write_conf(conf, "[toolhost]\nrate-limit = logger=often\n");
    hup(p, "the limits in force stay");
    STEPS(p, &id, {"logger", "{}", 1}, {"echo", echo_args, 0});
    mh_finish(p);
    unlink(conf);
    rmdir(dir);
}
END_TEST

START_TEST(bad_rules_are_usage_errors)
{
    static const char *const bad[][2] = {
        {"--rate-limit", "echo"},         {"--rate-limit", "echo=0/s"},       {"--rate-limit", "echo=5/d"},
        {"--rate-limit", "echo=5/s,x=1"}, {"--rate-limit-per-principal", "=1/s"}, {"--concurrency-limit", "slow=0"},
        {"--concurrency-limit", "slow=1/s"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mh_proc *p = mh_spawn(bad[i][0], bad[i][1], "-d", mh_echo_dir(), NULL);
        ck_assert_msg(mh_wait(p, MH_TIMEOUT_MS) == 2, "%s %s: not a usage error", bad[i][0], bad[i][1]);
        mh_free(p);
    }
}
END_TEST

static Suite *limits_suite(void)
{
    Suite *s = suite_create("limits");
    TCase *tc = tcase_create("limits");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_test(tc, stdio_rate_limit_error_and_ping);
    tcase_add_test(tc, concurrency_limit);
    tcase_add_test(tc, http_429_with_retry_after);
    tcase_add_test(tc, per_principal_buckets_are_independent);
    tcase_add_test(tc, limited_calls_and_lost_lines_counted);
    tcase_add_test(tc, config_file_keys);
    tcase_add_test(tc, sighup_rereads_config_limits);
    tcase_add_test(tc, bad_rules_are_usage_errors);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(limits_suite, mh_global_setup, mh_global_teardown)
