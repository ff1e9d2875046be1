/* SPDX-License-Identifier: MIT */
/*
** test_mcp_prompts.c: integration tests of prompts and completion against
** the real toolhost, each in both isolation modes (loop index: none,
** process) and where it matters both eras: listing with pagination,
** getting (roles, embedded resources, argument checks, a get's refusal),
** multi round-trip prompts/get, completion (the 100-value cap, context,
** templates), the rules' refusals, a crashing get, an oversized result,
** invalid UTF-8, the registry cache, and the bundled prompts plugin.
*/
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>

#include "mcp_harness.h"
#include "check_main.h"

#define PROMPTFIX_SO TEST_BUILDDIR "/promptplugins/.libs/promptfix.so"
#define PROMPTLATE_SO TEST_BUILDDIR "/promptplugins/.libs/promptlate.so"
#define PROMPTS_SO TOP_BUILDDIR "/plugins/.libs/prompts.so"

static const char *const modes[] = {"--isolation=none", "--isolation=process"};

static char *dir;

static void setup(void)
{
    mh_global_setup();
    dir = mh_private_dir(PROMPTFIX_SO, PROMPTLATE_SO, PROMPTS_SO, NULL);
}

static void teardown(void)
{
    mh_rm_dir(dir);
    mh_global_teardown();
}

static mh_proc *start(int mode, bool legacy, const char *extra)
{
    mh_proc *p = mh_spawn("-d", dir, modes[mode], "--no-registry-cache", extra, NULL);
    if (legacy)
        mh_initialize(p, "2025-11-25");
    return p;
}

static int next_id = 100;

/* METHOD with PARAMS (JSON members, may be "") in the era; the modern
 * client declares elicitation. NOTES gets notifications (may be NULL). */
static json_object *req(mh_proc *p, bool legacy, const char *method, const char *params, json_object *notes)
{
    char id[16];
    snprintf(id, sizeof id, "%d", ++next_id);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"%s\",\"params\":{%s%s%s}}", id, method, params,
            legacy ? "" : (*params ? "," : ""),
            legacy ? ""
                   : "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                     "\"io.modelcontextprotocol/clientCapabilities\":{\"elicitation\":{}}}");
    return mh_await(p, id, notes);
}

static int code_of(json_object *o)
{
    return json_object_get_int(mh_at(o, "error code"));
}

START_TEST(test_list_and_capabilities)
{
    mh_proc *p = start(_i, true, NULL);
    json_object *o = req(p, true, "prompts/list", "", NULL);
    /* File order: promptfix's five, promptlate's own, the bundled code_review. */
    ck_assert_uint_eq(mh_len(o, "result prompts"), 7);
    MH_ASSERT_STR(o, "result prompts 0 name", "greet");
    MH_ASSERT_STR(o, "result prompts 0 title", "Greeting");
    MH_ASSERT_STR(o, "result prompts 0 arguments 0 title", "Who");
    ck_assert(json_object_get_boolean(mh_at(o, "result prompts 0 arguments 0 required")));
    MH_ASSERT_STR(o, "result prompts 0 icons 0 src", "https://example.com/i.png");
    MH_ASSERT_STR(o, "result prompts 5 name", "dup_own");
    MH_ASSERT_STR(o, "result prompts 6 name", "code_review");
    json_object_put(o);
    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                  "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
    json_object_put(o);
    o = req(p, false, "server/discover", "", NULL);
    ck_assert(mh_has(o, "result capabilities prompts"));
    ck_assert(mh_has(o, "result capabilities completions"));
    json_object_put(o);
    /* Each refusal names the plugin, the field and the rule. */
    char *err = mh_stderr(p);
    const char *want[] = {
        "prompt 'bad name' refused: Prompt name 'bad name' invalid (must be letters, digits, '_', '-' and '.')",
        "prompt 'noget' refused: Prompt must have a 'get' function",
        "prompt 'badargs' refused: Prompt arguments[0] must be an object with a string \"name\"",
        "completion 'greet' refused: Completion of prompt 'greet' already registered (first by ",
        "promptfix.so: prompt 'greet' refused: Prompt 'greet' already registered (first by ",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        ck_assert_msg(strstr(err, want[i]), "missing: %s\n%s", want[i], err);
    ck_assert_msg(strstr(err, "promptlate.so: prompt 'greet' refused: Prompt 'greet' already registered (first by ") &&
                      strstr(err, "promptfix.so)"),
                  "%s", err);
    free(err);
    mh_finish(p);
}
END_TEST

START_TEST(test_pagination)
{
    mh_proc *p = start(_i, true, "--page-size=3");
    json_object *o = req(p, true, "prompts/list", "", NULL);
    ck_assert_uint_eq(mh_len(o, "result prompts"), 3);
    char cursor[64];
    snprintf(cursor, sizeof cursor, "\"cursor\":\"%s\"", mh_str(o, "result nextCursor"));
    json_object_put(o);
    o = req(p, true, "prompts/list", cursor, NULL);
    ck_assert_uint_eq(mh_len(o, "result prompts"), 3);
    MH_ASSERT_STR(o, "result prompts 0 name", "bad_utf8");
    json_object_put(o);
    o = req(p, true, "prompts/list", "\"cursor\":\"p1:99\"", NULL);
    ck_assert_int_eq(code_of(o), -32602);
    json_object_put(o);
    mh_finish(p);
}
END_TEST

START_TEST(test_get_in_both_eras)
{
    for (int era = 0; era < 2; era++) {
        bool legacy = era == 0;
        mh_proc *p = start(_i, legacy, NULL);
        json_object *notes = json_object_new_array();
        json_object *o = req(p, legacy, "prompts/get", "\"name\":\"greet\",\"arguments\":{\"who\":\"Ada\"}", notes);
        ck_assert_uint_eq(mh_len(o, "result messages"), 3);
        MH_ASSERT_STR(o, "result description", "Greets someone");
        MH_ASSERT_STR(o, "result messages 0 role", "user");
        MH_ASSERT_STR(o, "result messages 0 content text", "Greet Ada in -");
        MH_ASSERT_STR(o, "result messages 1 role", "assistant");
        MH_ASSERT_STR(o, "result messages 1 content text", "Hello!");
        MH_ASSERT_STR(o, "result messages 2 role", "user");
        MH_ASSERT_STR(o, "result messages 2 content resource uri", "mem://note");
        ck_assert(!mh_has(o, "result messages 1 content _meta")); /* the role marker is no message */
        if (!legacy)
            MH_ASSERT_STR(o, "result resultType", "complete");
        ck_assert_uint_eq(json_object_array_length(notes), legacy ? 1 : 0); /* th_call_log */
        json_object_put(notes);
        json_object_put(o);

        /* Missing required, undeclared, non-string, unknown prompt: -32602. */
        const char *bad[][2] = {
            {"\"name\":\"greet\"", "missing required argument 'who' of prompt 'greet'"},
            {"\"name\":\"greet\",\"arguments\":{\"who\":\"a\",\"x\":\"1\"}", "prompt 'greet' has no argument 'x'"},
            {"\"name\":\"greet\",\"arguments\":{\"who\":1}", "argument 'who' of prompt 'greet' must be a string"},
            {"\"name\":\"nope\"", "unknown prompt 'nope'"},
            {"\"name\":\"picky\",\"arguments\":{\"n\":\"7\"}", "n must be 42, not '7'"},
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            o = req(p, legacy, "prompts/get", bad[i][0], NULL);
            ck_assert_int_eq(code_of(o), -32602);
            ck_assert_msg(strstr(mh_str(o, "error message"), bad[i][1]), "%s", mh_json(o));
            json_object_put(o);
        }
        mh_finish(p);
    }
}
END_TEST

START_TEST(test_modern_get_asks_through_the_retry)
{
    mh_proc *p = start(_i, false, NULL);
    json_object *o = req(p, false, "prompts/get", "\"name\":\"ask\"", NULL);
    MH_ASSERT_STR(o, "result resultType", "input_required");
    MH_ASSERT_STR(o, "result inputRequests topic method", "elicitation/create");
    char retry[4096];
    snprintf(retry, sizeof retry,
             "\"name\":\"ask\",\"inputResponses\":{\"topic\":{\"action\":\"accept\",\"content\":{\"topic\":\"cats\"}}},"
             "\"requestState\":\"%s\"",
             mh_str(o, "result requestState"));
    json_object_put(o);
    o = req(p, false, "prompts/get", retry, NULL);
    MH_ASSERT_STR(o, "result resultType", "complete");
    MH_ASSERT_STR(o, "result messages 0 content text", "Topic: cats");
    json_object_put(o);
    /* A state is bound to its prompt: not accepted for another one. */
    o = req(p, false, "prompts/get", "\"name\":\"ask\"", NULL);
    snprintf(retry, sizeof retry, "\"name\":\"bad_utf8\",\"requestState\":\"%s\"", mh_str(o, "result requestState"));
    json_object_put(o);
    o = req(p, false, "prompts/get", retry, NULL);
    ck_assert_int_eq(code_of(o), -32602);
    json_object_put(o);
    mh_finish(p);
}
END_TEST

START_TEST(test_legacy_get_asks_the_client)
{
    mh_proc *p = mh_spawn("-d", dir, modes[_i], "--no-registry-cache", NULL);
    json_object *o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                               "\"2025-11-25\",\"capabilities\":{\"elicitation\":{}},\"clientInfo\":{\"name\":\"t\","
                               "\"version\":\"1\"}}}");
    json_object_put(o);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"prompts/get\",\"params\":{\"name\":\"ask\"}}");
    char *line = mh_read_line(p, MH_TIMEOUT_MS); /* a request: mh_next takes none */
    ck_assert_msg(line != NULL, "no request from toolhost");
    json_object *q = mh_parse(line);
    free(line);
    MH_ASSERT_STR(q, "method", "elicitation/create");
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"action\":\"accept\",\"content\":{\"topic\":\"dogs\"}}}",
            mh_json(mh_at(q, "id")));
    json_object_put(q);
    o = mh_await(p, "7", NULL);
    MH_ASSERT_STR(o, "result messages 0 content text", "Topic: dogs");
    json_object_put(o);
    mh_finish(p);
}
END_TEST

START_TEST(test_completion)
{
    for (int era = 0; era < 2; era++) {
        bool legacy = era == 0;
        mh_proc *p = start(_i, legacy, NULL);
        json_object *o = req(p, legacy, "completion/complete",
                             "\"ref\":{\"type\":\"ref/prompt\",\"name\":\"greet\"},\"argument\":{\"name\":\"tone\","
                             "\"value\":\"x\"},\"context\":{\"arguments\":{\"who\":\"Ada\"}}",
                             NULL);
        ck_assert_uint_eq(mh_len(o, "result completion values"), 100);
        MH_ASSERT_STR(o, "result completion values 0", "who=Ada");
        MH_ASSERT_STR(o, "result completion values 1", "tone-x-0");
        ck_assert_int_eq(json_object_get_int(mh_at(o, "result completion total")), 151);
        ck_assert(json_object_get_boolean(mh_at(o, "result completion hasMore")));
        json_object_put(o);
        o = req(p, legacy, "completion/complete",
                "\"ref\":{\"type\":\"ref/resource\",\"uri\":\"mem://items/{id}\"},\"argument\":{\"name\":\"id\","
                "\"value\":\"4\"}",
                NULL);
        ck_assert_str_eq(mh_json(mh_at(o, "result completion")), "{\"values\":[\"41\"],\"total\":1,\"hasMore\":false}");
        json_object_put(o);
        /* A prompt nobody completes: no values, no error. */
        o = req(p, legacy, "completion/complete",
                "\"ref\":{\"type\":\"ref/prompt\",\"name\":\"picky\"},\"argument\":{\"name\":\"n\",\"value\":\"\"}",
                NULL);
        ck_assert_str_eq(mh_json(mh_at(o, "result completion")), "{\"values\":[],\"total\":0,\"hasMore\":false}");
        json_object_put(o);
        const char *bad[][2] = {
            {"\"ref\":{\"type\":\"ref/prompt\",\"name\":\"nope\"},\"argument\":{\"name\":\"a\",\"value\":\"\"}",
             "unknown prompt 'nope'"},
            {"\"ref\":{\"type\":\"ref/prompt\",\"name\":\"greet\"},\"argument\":{\"name\":\"zz\",\"value\":\"\"}",
             "prompt 'greet' has no argument 'zz'"},
            {"\"ref\":{\"type\":\"ref/resource\",\"uri\":\"mem://none/{x}\"},\"argument\":{\"name\":\"x\","
             "\"value\":\"\"}",
             "unknown resource template 'mem://none/{x}'"},
            {"\"ref\":{\"type\":\"ref/other\"},\"argument\":{\"name\":\"x\",\"value\":\"\"}", "ref.type must be"},
            {"\"ref\":{\"type\":\"ref/prompt\",\"name\":\"greet\"}", "needs \"ref\""},
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            o = req(p, legacy, "completion/complete", bad[i][0], NULL);
            ck_assert_int_eq(code_of(o), -32602);
            ck_assert_msg(strstr(mh_str(o, "error message"), bad[i][1]), "%s", mh_json(o));
            json_object_put(o);
        }
        mh_finish(p);
    }
}
END_TEST

/* Invalid UTF-8 from a get function arrives repaired; the host serves on. */
START_TEST(test_invalid_utf8_is_repaired)
{
    mh_proc *p = start(_i, true, NULL);
    json_object *o = req(p, true, "prompts/get", "\"name\":\"bad_utf8\"", NULL);
    MH_ASSERT_STR(o, "result messages 0 content text", "caf\xef\xbf\xbd \xef\xbf\xbd");
    json_object_put(o);
    mh_finish(p);
}
END_TEST

/* A get's messages are held to --max-result-bytes like a tool's result. */
START_TEST(test_oversized_get_is_refused)
{
    mh_proc *p = start(_i, true, "--max-result-bytes=2000");
    char params[4200] = "\"name\":\"code_review\",\"arguments\":{\"code\":\"";
    size_t n = strlen(params);
    memset(params + n, 'x', 4000);
    strcpy(params + n + 4000, "\"}");
    json_object *o = req(p, true, "prompts/get", params, NULL);
    ck_assert_int_eq(code_of(o), -32603);
    ck_assert_msg(strstr(mh_str(o, "error message"), "max-result-bytes"), "%s", mh_json(o));
    json_object_put(o);
    o = req(p, true, "prompts/get", "\"name\":\"code_review\",\"arguments\":{\"code\":\"x\"}", NULL);
    MH_ASSERT_STR(o, "result messages 1 role", "assistant");
    json_object_put(o);
    mh_finish(p);
}
END_TEST

START_TEST(test_crashing_get_in_a_worker)
{
    mh_proc *p = start(1, true, NULL);
    json_object *o = req(p, true, "prompts/get", "\"name\":\"crash\"", NULL);
    ck_assert_int_eq(code_of(o), -32603);
    /* The message names what crashed: a prompt, not a tool. */
    MH_ASSERT_STR(o, "error message",
                  "Internal error: getting prompt 'crash' failed: prompt 'crash' crashed: signal 6 (SIGABRT)");
    json_object_put(o);
    o = req(p, true, "completion/complete",
            "\"ref\":{\"type\":\"ref/prompt\",\"name\":\"crash\"},\"argument\":{\"name\":\"how\",\"value\":\"\"}", NULL);
    ck_assert_int_eq(code_of(o), -32603);
    MH_ASSERT_STR(o, "error message",
                  "Internal error: completing 'how' failed: completion of 'crash' crashed: signal 6 (SIGABRT)");
    json_object_put(o);
    long long until = mh_now_ms() + MH_TIMEOUT_MS;
    for (;;) { /* the worker comes back */
        o = req(p, true, "prompts/get", "\"name\":\"greet\",\"arguments\":{\"who\":\"x\"}", NULL);
        bool ok = mh_has(o, "result");
        if (ok || mh_now_ms() > until) {
            MH_ASSERT_STR(o, "result messages 1 content text", "Hello!");
            json_object_put(o);
            break;
        }
        json_object_put(o);
        usleep(50000);
    }
    mh_finish(p);
}
END_TEST

START_TEST(test_registry_cache_keeps_prompts)
{
    char cache[300];
    snprintf(cache, sizeof cache, "--registry-cache=/tmp/th-promptcache-%ld.json", (long)getpid());
    for (int round = 0; round < 2; round++) {
        mh_proc *p = mh_spawn("-d", dir, "--isolation=process", cache, NULL);
        mh_initialize(p, "2025-11-25");
        json_object *o = req(p, true, "prompts/list", "", NULL);
        ck_assert_uint_eq(mh_len(o, "result prompts"), 7);
        json_object_put(o);
        o = req(p, true, "completion/complete",
                "\"ref\":{\"type\":\"ref/prompt\",\"name\":\"code_review\"},\"argument\":{\"name\":\"language\","
                "\"value\":\"ru\"}",
                NULL);
        ck_assert_str_eq(mh_json(mh_at(o, "result completion values")), "[\"ruby\",\"rust\"]");
        json_object_put(o);
        mh_finish(p);
    }
    unlink(cache + strlen("--registry-cache="));
}
END_TEST

/* A rescan that changes the prompts tells a legacy session and a modern
 * subscription that asked (notifications/prompts/list_changed). */
START_TEST(test_reload_announces_changed_prompts)
{
    char *d = mh_private_dir(PROMPTFIX_SO, NULL);
    mh_proc *p = mh_spawn("-d", d, modes[_i], "--no-registry-cache", NULL);
    json_object *o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"method\":\"initialize\",\"params\":{"
                               "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
                               "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
    ck_assert(json_object_get_boolean(mh_at(o, "result capabilities prompts listChanged")));
    json_object_put(o);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":\"sub\",\"method\":\"subscriptions/listen\",\"params\":{" MH_MODERN_META
                  ",\"notifications\":{\"promptsListChanged\":true}}}");
    ck_assert(json_object_get_boolean(mh_at(o, "params notifications promptsListChanged")));
    json_object_put(o);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cp %s %s/", PROMPTS_SO, d);
    ck_assert_int_eq(system(cmd), 0);
    mh_kill(p, SIGHUP);
    bool legacy = false, modern = false;
    while (!legacy || !modern) {
        o = mh_next(p);
        const char *m = mh_str(o, "method");
        ck_assert_msg(m && strcmp(m, "notifications/prompts/list_changed") == 0, "unexpected %s", mh_json(o));
        if (mh_has(o, "params _meta io.modelcontextprotocol/subscriptionId"))
            modern = true;
        else
            legacy = true;
        json_object_put(o);
    }
    o = req(p, true, "prompts/list", "", NULL);
    ck_assert_uint_eq(mh_len(o, "result prompts"), 6); /* promptfix's five and code_review */
    json_object_put(o);
    mh_finish(p);
    mh_rm_dir(d);
}
END_TEST

/* Input ends right after the requests: their answers still come (the
 * drain at end of input waits for pooled gets and completions). */
START_TEST(test_answered_at_end_of_input)
{
    /* Past --shutdown-grace-ms they are cancelled, as tool calls are: the
     * grace grows with the harness's time scale (valgrind). */
    char grace[48];
    snprintf(grace, sizeof grace, "--shutdown-grace-ms=%d", 5000 * mh_time_scale());
    mh_proc *p = start(_i, true, grace);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"prompts/get\",\"params\":{\"name\":\"code_review\","
               "\"arguments\":{\"code\":\"x\"}}}");
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"completion/complete\",\"params\":{\"ref\":{\"type\":"
               "\"ref/prompt\",\"name\":\"code_review\"},\"argument\":{\"name\":\"language\",\"value\":\"py\"}}}");
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/read\",\"params\":{\"uri\":\"mem://items/7\"}}");
    mh_close_stdin(p);
    json_object *by_id[4] = {NULL}; /* pooled: in any order */
    for (int n = 0; n < 3; n++) {
        json_object *o = mh_next(p);
        int id = json_object_get_int(mh_at(o, "id"));
        ck_assert_msg(id >= 1 && id <= 3 && !by_id[id], "unexpected %s", mh_json(o));
        by_id[id] = o;
    }
    MH_ASSERT_STR(by_id[1], "result messages 1 role", "assistant");
    MH_ASSERT_STR(by_id[2], "result completion values 0", "python");
    MH_ASSERT_STR(by_id[3], "result contents 0 text", "item");
    for (int n = 1; n <= 3; n++)
        json_object_put(by_id[n]);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
}
END_TEST

/* A refused prompt is a refusal: --strict exits on it, in both modes. */
START_TEST(test_strict_counts_refused_prompts)
{
    mh_proc *p = mh_spawn("-d", dir, modes[_i], "--no-registry-cache", "--strict", NULL);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 1);
    char *err = mh_stderr(p);
    ck_assert_msg(strstr(err, "--strict: 6 refusals; exiting"), "%s", err);
    free(err);
    mh_free(p);
}
END_TEST

static Suite *mcp_prompts_suite(void)
{
    Suite *s = suite_create("mcp_prompts");
    TCase *tc = tcase_create("both_modes");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_loop_test(tc, test_list_and_capabilities, 0, 2);
    tcase_add_loop_test(tc, test_pagination, 0, 2);
    tcase_add_loop_test(tc, test_get_in_both_eras, 0, 2);
    tcase_add_loop_test(tc, test_modern_get_asks_through_the_retry, 0, 2);
    tcase_add_loop_test(tc, test_legacy_get_asks_the_client, 0, 2);
    tcase_add_loop_test(tc, test_completion, 0, 2);
    tcase_add_loop_test(tc, test_invalid_utf8_is_repaired, 0, 2);
    tcase_add_loop_test(tc, test_strict_counts_refused_prompts, 0, 2);
    tcase_add_loop_test(tc, test_oversized_get_is_refused, 0, 2);
    tcase_add_loop_test(tc, test_reload_announces_changed_prompts, 0, 2);
    tcase_add_loop_test(tc, test_answered_at_end_of_input, 0, 2);
    tcase_add_test(tc, test_crashing_get_in_a_worker);
    tcase_add_test(tc, test_registry_cache_keeps_prompts);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(mcp_prompts_suite, setup, teardown)
