/* SPDX-License-Identifier: MIT */
/*
** test_http_parse.c: an HTTP body is parsed once. The real th_http serves
** in this process, with every JSON parse entry point the host uses wrapped
** (-Wl,--wrap): each call given the POSTed text is counted.
*/
#define _GNU_SOURCE /* memmem */
#include "config.h"

#include <json-c/json.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fastjson.h"
#include "base/log.h"
#include "plugin/registry.h"
#include "protocol/mcp.h"
#include "transport/http.h"

#include "check_main.h"
#include "http_client.h"

/* Only the POSTed messages carry it (in their id); nothing else parsed,
 * such as a call's arguments or its answer, is counted. */
#define MARK "parse-once-mark"

static atomic_int parses;

static void count(const char *text, size_t len)
{
    if (text && memmem(text, len, MARK, strlen(MARK)))
        atomic_fetch_add(&parses, 1);
}

json_object *__real_json_tokener_parse(const char *str);
json_object *__wrap_json_tokener_parse(const char *str);
json_object *__wrap_json_tokener_parse(const char *str)
{
    count(str, str ? strlen(str) : 0);
    return __real_json_tokener_parse(str);
}

json_object *__real_json_tokener_parse_ex(json_tokener *tok, const char *str, int len);
json_object *__wrap_json_tokener_parse_ex(json_tokener *tok, const char *str, int len);
json_object *__wrap_json_tokener_parse_ex(json_tokener *tok, const char *str, int len)
{
    count(str, len > 0 ? (size_t)len : 0);
    return __real_json_tokener_parse_ex(tok, str, len);
}

json_object *__real_th_fastjson_parse(const char *text, size_t len);
json_object *__wrap_th_fastjson_parse(const char *text, size_t len);
json_object *__wrap_th_fastjson_parse(const char *text, size_t len)
{
    count(text, len);
    return __real_th_fastjson_parse(text, len);
}

bool __real_th_fastjson_fields(const char *text, size_t len, th_fastjson_field *f, size_t n);
bool __wrap_th_fastjson_fields(const char *text, size_t len, th_fastjson_field *f, size_t n);
bool __wrap_th_fastjson_fields(const char *text, size_t len, th_fastjson_field *f, size_t n)
{
    count(text, len);
    return __real_th_fastjson_fields(text, len, f, n);
}

static th_rc echo(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    json_object *t;
    return th_call_text(call, json_object_object_get_ex(args, "text", &t) ? json_object_get_string(t) : "");
}

static void quiet(th_log_level level, const char *line, void *ctx)
{
    (void)level;
    (void)line;
    (void)ctx;
}

static th_http *http;
static th_mcp *mcp;
static th_registry *reg;

static void serve(void)
{
    static const th_tool tool = {TH_TOOL_INIT, .name = "echo", .description = "echoes its text",
                                 .input_schema = "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}}}",
                                 .handler = echo};
    th_log_set_sink(quiet, NULL);
    th_err err;
    reg = th_registry_new();
    ck_assert_msg(reg && th_registry_add(reg, &tool, "test", &err) == TH_OK, "cannot register echo");
    th_registry_start(reg);
    th_mcp_config cfg;
    th_mcp_config_default(&cfg);
    ck_assert_ptr_nonnull(mcp = th_mcp_new(reg, &cfg));
    th_http_opts o = {.reg = reg, .max_body_bytes = 1 << 20, .request_timeout_ms = 10000};
    char why[256] = "";
    http = th_http_start(mcp, &o, why, sizeof why);
    ck_assert_msg(http != NULL, "cannot serve: %s", why);
}

/* POST BODY in session SID; how many times its text was parsed. */
static int parses_of(const char *sid, const char *body)
{
    char hdrs[256];
    snprintf(hdrs, sizeof hdrs, ACCEPT_BOTH "Mcp-Session-Id: %s\r\n", sid);
    atomic_store(&parses, 0);
    hres r = request((int)th_http_port(http), "POST", hdrs, body);
    ck_assert_msg(r.status == 200 && strstr(r.body, "\"result\""), "%s: HTTP %d %s", body, r.status, r.body);
    hres_free(&r);
    return atomic_load(&parses);
}

START_TEST(a_posted_message_is_parsed_once)
{
    serve();
    hres r = request((int)th_http_port(http), "POST", ACCEPT_BOTH,
                     "{\"jsonrpc\":\"2.0\",\"id\":\"" MARK "-0\",\"method\":\"initialize\",\"params\":{"
                     "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\","
                     "\"version\":\"1\"}}}");
    char *sid = header_of(&r, "Mcp-Session-Id");
    ck_assert_msg(r.status == 200 && sid, "initialize: HTTP %d %s", r.status, r.body);
    hres_free(&r);
    static const char *const bodies[] = {
        "{\"jsonrpc\":\"2.0\",\"id\":\"" MARK "-1\",\"method\":\"ping\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":\"" MARK "-2\",\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
        "\"arguments\":{\"text\":\"hi\"}}}",
    };
    for (size_t i = 0; i < sizeof bodies / sizeof *bodies; i++) {
        int n = parses_of(sid, bodies[i]);
        ck_assert_msg(n == 1, "the body was parsed %d times, not once: %s", n, bodies[i]);
    }
    free(sid);
    th_http_stop(http, 0);
}
END_TEST

static Suite *parse_suite(void)
{
    Suite *s = suite_create("http_parse");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, a_posted_message_is_parsed_once);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN(parse_suite)
