/* SPDX-License-Identifier: MIT */
/*
** test_mcp_ask.c: integration tests of tools that ask the client
** (th_call_ask) over stdio against the real toolhost, in both isolation
** modes: legacy server-to-client requests answered by a scripted client
** (accept, error, cancellation, a missing capability), and the 2026-07-28
** multi round-trip pattern (rounds, requestState across instances sharing
** --state-key-file, a tampered or foreign state, -32021).
*/
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "mcp_harness.h"

#define FIXTURES TEST_BUILDDIR "/conformance/.libs/"
#define CAPS_ALL "{\"elicitation\":{},\"sampling\":{},\"roots\":{}}"
#define META(caps)                                                                                                    \
    "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","                                          \
    "\"io.modelcontextprotocol/clientCapabilities\":" caps "}"

static const char *const isolation[] = {"--isolation=process", "--isolation=none"};

static char *dir;

static void setup(void)
{
    dir = mh_private_dir(FIXTURES "input_required_tools.so", FIXTURES "client_asking_tools.so", NULL);
}

static void teardown(void)
{
    mh_rm_dir(dir);
    dir = NULL;
}

static mh_proc *start(int i, const char *key_file)
{
    if (key_file)
        return mh_spawn("-d", dir, isolation[i], "--state-key-file", key_file, NULL);
    return mh_spawn("-d", dir, isolation[i], NULL);
}

/* The next stdout line as JSON: a request from the server is allowed
 * here, which mh_read (responses and notifications only) refuses. */
static json_object *next_any(mh_proc *p)
{
    char *line = mh_read_line(p, MH_TIMEOUT_MS);
    ck_assert_msg(line != NULL, "no line from toolhost within %d ms", MH_TIMEOUT_MS);
    json_object *o = mh_parse(line);
    ck_assert_msg(o != NULL, "stdout line is not JSON: %s", line);
    free(line);
    return o;
}

/* Skip notifications (progress) up to the next request or response. */
static json_object *next_message(mh_proc *p)
{
    for (;;) {
        json_object *o = next_any(p);
        if (!(mh_has(o, "method") && !mh_has(o, "id")))
            return o;
        json_object_put(o);
    }
}

static void initialize(mh_proc *p, const char *caps)
{
    json_object *o = mh_rpc(p,
                            "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
                            "\"protocolVersion\":\"2025-11-25\",\"capabilities\":%s,"
                            "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}",
                            caps);
    MH_ASSERT_RESULT(o);
    json_object_put(o);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
}

/* ---- legacy: requests to the client -------------------------------------- */

START_TEST(legacy_elicitation_is_answered_by_the_client)
{
    mh_proc *p = start(_i, NULL);
    initialize(p, CAPS_ALL);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"test_elicitation\","
               "\"arguments\":{\"message\":\"Who are you?\"}}}");
    json_object *req = next_message(p);
    MH_ASSERT_STR(req, "method", "elicitation/create");
    MH_ASSERT_STR(req, "params message", "Who are you?");
    MH_ASSERT_STR(req, "params requestedSchema properties username type", "string");
    ck_assert_msg(json_object_is_type(mh_at(req, "id"), json_type_string), "%s", mh_json(req));
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"action\":\"accept\",\"content\":"
               "{\"username\":\"ada\",\"email\":\"ada@example.org\"}}}",
            mh_json(mh_at(req, "id")));
    json_object_put(req);
    json_object *o = mh_await(p, "7", NULL);
    MH_ASSERT_RESULT(o);
    const char *text = mh_str(o, "result content 0 text");
    ck_assert_msg(text && strstr(text, "User response: ") && strstr(text, "\"username\":\"ada\"") &&
                      strstr(text, "\"action\":\"accept\""),
                  "%s", mh_json(o));
    MH_ASSERT_ABSENT(o, "result isError");
    json_object_put(o);
    mh_finish(p);
}
END_TEST

/* As many calls waiting for their client's answers as the reader holds
 * back for (answers owed) must not stop it reading those answers: sent
 * before any is read, the seventy calls all end, none by their deadline. */
START_TEST(legacy_waiting_asks_do_not_stop_the_reader)
{
    enum { CALLS = 70 };
    mh_proc *p = mh_spawn("-d", dir, isolation[_i], "--call-timeout=600", NULL);
    initialize(p, CAPS_ALL);
    for (int i = 0; i < CALLS; i++)
        mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":"
                   "\"test_elicitation\",\"arguments\":{\"message\":\"n%d\"}}}",
                1000 + i, i);
    int done = 0, asked = 0;
    while (done < CALLS) {
        json_object *o = next_message(p);
        if (mh_has(o, "method")) {
            MH_ASSERT_STR(o, "method", "elicitation/create");
            asked++;
            mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"action\":\"decline\"}}",
                    mh_json(mh_at(o, "id")));
        } else {
            MH_ASSERT_RESULT(o);
            done++;
        }
        json_object_put(o);
    }
    ck_assert_int_eq(asked, CALLS);
    mh_finish(p);
}
END_TEST

START_TEST(legacy_client_error_reaches_the_handler)
{
    mh_proc *p = start(_i, NULL);
    initialize(p, CAPS_ALL);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"method\":\"tools/call\",\"params\":{\"name\":\"test_sampling\","
               "\"arguments\":{\"prompt\":\"2+2?\"}}}");
    json_object *req = next_message(p);
    MH_ASSERT_STR(req, "method", "sampling/createMessage");
    MH_ASSERT_STR(req, "params messages 0 content text", "2+2?");
    MH_ASSERT_INT(req, "params maxTokens", 100);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":{\"code\":-1,\"message\":\"user rejected sampling\"}}",
            mh_json(mh_at(req, "id")));
    json_object_put(req);
    json_object *o = mh_await(p, "\"s\"", NULL);
    MH_ASSERT_TRUE(o, "result isError");
    ck_assert_msg(strstr(mh_str(o, "result content 0 text"), "Sampling not supported or error"), "%s", mh_json(o));
    json_object_put(o);
    /* The host keeps serving, and a stray response changes nothing. */
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":\"th-ask-99@nothing\",\"result\":{}}");
    mh_ping_is_next(p, 8);
    mh_finish(p);
}
END_TEST

START_TEST(legacy_undeclared_capability_is_not_asked)
{
    mh_proc *p = start(_i, NULL);
    initialize(p, "{}");
    json_object *o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{"
                               "\"name\":\"test_sampling\",\"arguments\":{\"prompt\":\"x\"}}}");
    /* The very next message is the answer: no request went out. */
    MH_ASSERT_ID(o, "3");
    MH_ASSERT_TRUE(o, "result isError");
    ck_assert_msg(strstr(mh_str(o, "result content 0 text"), "TH_ERR_CAPABILITY"), "%s", mh_json(o));
    json_object_put(o);
    mh_finish(p);
}
END_TEST

START_TEST(legacy_cancel_ends_the_wait)
{
    mh_proc *p = start(_i, NULL);
    initialize(p, CAPS_ALL);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{"
               "\"name\":\"test_elicitation_sep1034_defaults\",\"arguments\":{}}}");
    json_object *req = next_message(p);
    MH_ASSERT_STR(req, "method", "elicitation/create");
    MH_ASSERT_STR(req, "params requestedSchema properties name default", "John Doe");
    MH_ASSERT_INT(req, "params requestedSchema properties age default", 30);
    json_object_put(req);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":4}}");
    /* No response for the cancelled call: the ping's is the next message,
     * and the session goes on asking for the next call. */
    mh_ping_is_next(p, 5);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{"
               "\"name\":\"test_elicitation_sep1330_enums\",\"arguments\":{}}}");
    req = next_message(p);
    ck_assert_msg(mh_has(req, "method"), "want the new call's request, got %s", mh_json(req));
    MH_ASSERT_STR(req, "params requestedSchema properties titledSingle oneOf 0 const", "value1");
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"action\":\"decline\"}}", mh_json(mh_at(req, "id")));
    json_object_put(req);
    json_object *o = mh_await(p, "6", NULL);
    ck_assert_msg(strstr(mh_str(o, "result content 0 text"), "\"action\":\"decline\""), "%s", mh_json(o));
    json_object_put(o);
    mh_finish(p);
}
END_TEST

START_TEST(legacy_deadline_ends_the_wait)
{
    mh_proc *p = mh_spawn("-d", dir, isolation[_i], "--call-timeout", "0.5", NULL);
    initialize(p, CAPS_ALL);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"test_elicitation\","
               "\"arguments\":{\"message\":\"anyone?\"}}}");
    json_object *req = next_message(p);
    MH_ASSERT_STR(req, "method", "elicitation/create");
    json_object_put(req);
    /* Never answered: the call's deadline answers it, and the handler's
     * wait ends (its late answer would be discarded). */
    json_object *o = mh_await(p, "1", NULL);
    MH_ASSERT_TRUE(o, "result isError");
    ck_assert_msg(strstr(mh_str(o, "result content 0 text"), "timed out"), "%s", mh_json(o));
    json_object_put(o);
    ck_assert(mh_stderr_wait(p, "timed out", MH_TIMEOUT_MS));
    mh_ping_is_next(p, 2);
    mh_finish(p);
}
END_TEST

/* ---- 2026-07-28: InputRequiredResult ------------------------------------ */

static json_object *modern_call(mh_proc *p, int id, const char *tool, const char *extra)
{
    return mh_rpc(p,
                  "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\","
                  "\"arguments\":{}%s," META(CAPS_ALL) "}}",
                  id, tool, extra ? extra : "");
}

/* ,"inputResponses":{KEY:{"action":"accept","content":{FIELD:VALUE}}},"requestState":STATE */
static char *retry_members(const char *key, const char *field, const char *value, const char *state)
{
    size_t n = strlen(key) + strlen(field) + strlen(value) + strlen(state) + 128;
    char *s = malloc(n);
    ck_assert(s != NULL);
    snprintf(s, n,
             ",\"inputResponses\":{\"%s\":{\"action\":\"accept\",\"content\":{\"%s\":\"%s\"}}},"
             "\"requestState\":\"%s\"",
             key, field, value, state);
    return s;
}

START_TEST(modern_rounds_carry_earlier_answers)
{
    mh_proc *p = start(_i, NULL);
    json_object *r1 = modern_call(p, 1, "test_input_required_result_multi_round", NULL);
    MH_ASSERT_STR(r1, "result resultType", "input_required");
    MH_ASSERT_STR(r1, "result inputRequests step1 method", "elicitation/create");
    MH_ASSERT_HAS(r1, "result _meta io.modelcontextprotocol/serverInfo");
    const char *s1 = mh_str(r1, "result requestState");
    ck_assert_msg(s1 != NULL, "%s", mh_json(r1));

    char *m = retry_members("step1", "name", "Alice", s1);
    json_object *r2 = modern_call(p, 2, "test_input_required_result_multi_round", m);
    free(m);
    MH_ASSERT_STR(r2, "result resultType", "input_required");
    MH_ASSERT_STR(r2, "result inputRequests step2 method", "elicitation/create");
    MH_ASSERT_ABSENT(r2, "result inputRequests step1");
    const char *s2 = mh_str(r2, "result requestState");
    ck_assert_msg(s2 && strcmp(s1, s2) != 0, "the state must change between rounds: %s", mh_json(r2));

    /* The third round trip brings only step2's answer: step1's comes from the state. */
    m = retry_members("step2", "color", "blue", s2);
    json_object *r3 = modern_call(p, 3, "test_input_required_result_multi_round", m);
    free(m);
    MH_ASSERT_STR(r3, "result resultType", "complete");
    MH_ASSERT_STR(r3, "result content 0 text", "Multi-round complete for Alice who likes blue");
    json_object_put(r1);
    json_object_put(r2);
    json_object_put(r3);
    mh_finish(p);
}
END_TEST

START_TEST(modern_tampered_or_foreign_state_is_refused)
{
    mh_proc *p = start(_i, NULL);
    json_object *r1 = modern_call(p, 1, "test_input_required_result_tampered_state", NULL);
    const char *s1 = mh_str(r1, "result requestState");
    ck_assert_msg(s1 != NULL, "%s", mh_json(r1));

    /* One character changed in the payload. */
    char *bad = strdup(s1);
    size_t at = strlen("v1.") + 5;
    bad[at] = bad[at] == 'A' ? 'B' : 'A';
    char *m = retry_members("confirm", "ok", "yes", bad);
    json_object *o = modern_call(p, 2, "test_input_required_result_tampered_state", m);
    MH_ASSERT_ERROR(o, -32602);
    ck_assert_msg(strstr(mh_str(o, "error message"), "integrity"), "%s", mh_json(o));
    json_object_put(o);
    free(m);
    free(bad);

    /* A genuine state, presented to another tool. */
    m = retry_members("confirm", "ok", "yes", s1);
    o = modern_call(p, 3, "test_input_required_result_request_state", m);
    MH_ASSERT_ERROR(o, -32602);
    ck_assert_msg(strstr(mh_str(o, "error message"), "another tool call"), "%s", mh_json(o));
    json_object_put(o);

    /* ... and to its own tool: accepted. */
    o = modern_call(p, 4, "test_input_required_result_tampered_state", m);
    MH_ASSERT_STR(o, "result content 0 text", "integrity-ok: state verified");
    json_object_put(o);
    free(m);

    /* Not a string, not an object of objects. */
    o = modern_call(p, 5, "test_input_required_result_elicitation", ",\"requestState\":42");
    MH_ASSERT_ERROR(o, -32602);
    json_object_put(o);
    o = modern_call(p, 6, "test_input_required_result_elicitation", ",\"inputResponses\":{\"user_name\":12345}");
    MH_ASSERT_ERROR(o, -32602);
    ck_assert_msg(strstr(mh_str(o, "error message"), "inputResponses[\"user_name\"]"), "%s", mh_json(o));
    json_object_put(o);
    json_object_put(r1);
    mh_ping_is_next(p, 9);
    mh_finish(p);
}
END_TEST

/* A requestState whose MAC is cut short (nothing, one byte, all but its
 * last byte) is refused: a check that compared only the bytes given would
 * let anyone forge a state with an empty MAC. The whole one still works. */
START_TEST(modern_state_with_a_truncated_mac_is_refused)
{
    mh_proc *p = start(_i, NULL);
    json_object *r1 = modern_call(p, 1, "test_input_required_result_tampered_state", NULL);
    const char *s1 = mh_str(r1, "result requestState");
    ck_assert_msg(s1 != NULL, "%s", mh_json(r1));
    size_t mac_at = (size_t)(strrchr(s1, '.') + 1 - s1);
    ck_assert_uint_eq(strlen(s1) - mac_at, 43); /* 32 bytes, base64url without padding */
    static const size_t keep[] = {0, 2, 42}; /* characters: 0, 1 and 31 bytes of the MAC */
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) {
        char *forged = strndup(s1, mac_at + keep[i]);
        char *m = retry_members("confirm", "ok", "yes", forged);
        json_object *o = modern_call(p, 2 + (int)i, "test_input_required_result_tampered_state", m);
        MH_ASSERT_ERROR(o, -32602);
        ck_assert_msg(strstr(mh_str(o, "error message"), "integrity"), "MAC of %zu characters: %s", keep[i],
                      mh_json(o));
        json_object_put(o);
        free(m);
        free(forged);
    }
    char *m = retry_members("confirm", "ok", "yes", s1);
    json_object *o = modern_call(p, 9, "test_input_required_result_tampered_state", m);
    MH_ASSERT_STR(o, "result content 0 text", "integrity-ok: state verified");
    json_object_put(o);
    free(m);
    json_object_put(r1);
    mh_finish(p);
}
END_TEST

/* Instances sharing --state-key-file accept each other's state (a load
 * balancer may send the retry anywhere); one with another key refuses it. */
START_TEST(modern_state_key_is_shared_by_configuration)
{
    char key_a[] = "/tmp/mrtr-key-XXXXXX", key_b[] = "/tmp/mrtr-key-XXXXXX";
    int fa = mkstemp(key_a), fb = mkstemp(key_b);
    ck_assert(fa >= 0 && fb >= 0);
    ck_assert(write(fa, "0123456789abcdef0123456789abcdef\n", 33) == 33);
    ck_assert(write(fb, "fedcba9876543210fedcba9876543210\n", 33) == 33);
    close(fa);
    close(fb);
    mh_proc *a1 = start(_i, key_a), *a2 = start(_i, key_a), *b = start(_i, key_b);
    json_object *r1 = modern_call(a1, 1, "test_input_required_result_request_state", NULL);
    const char *s = mh_str(r1, "result requestState");
    ck_assert_msg(s != NULL, "%s", mh_json(r1));
    char *m = retry_members("confirm", "ok", "true", s);
    json_object *o = modern_call(a2, 2, "test_input_required_result_request_state", m);
    MH_ASSERT_STR(o, "result resultType", "complete");
    ck_assert_msg(strstr(mh_str(o, "result content 0 text"), "state-ok"), "%s", mh_json(o));
    json_object_put(o);
    o = modern_call(b, 3, "test_input_required_result_request_state", m);
    MH_ASSERT_ERROR(o, -32602);
    json_object_put(o);
    free(m);
    json_object_put(r1);
    mh_finish(a1);
    mh_finish(a2);
    mh_finish(b);

    /* A key too short is a usage error naming the file. */
    int fs = open(key_b, O_WRONLY | O_TRUNC);
    ck_assert(fs >= 0 && write(fs, "short\n", 6) == 6);
    close(fs);
    mh_proc *bad = mh_spawn("-d", dir, "--state-key-file", key_b, NULL);
    ck_assert_int_eq(mh_wait(bad, MH_TIMEOUT_MS), 2);
    ck_assert(mh_stderr_wait(bad, key_b, MH_TIMEOUT_MS));
    mh_free(bad);
    unlink(key_a);
    unlink(key_b);
}
END_TEST

START_TEST(modern_undeclared_capability_is_32021)
{
    mh_proc *p = start(_i, NULL);
    json_object *o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
                               "\"name\":\"test_missing_capability\",\"arguments\":{}," META("{}") "}}");
    MH_ASSERT_ERROR(o, -32021);
    ck_assert(json_object_is_type(mh_at(o, "error data requiredCapabilities sampling"), json_type_object));
    json_object_put(o);
    /* Only what the client declared is asked. */
    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{"
                  "\"name\":\"test_input_required_result_capabilities\",\"arguments\":{}," META(
                      "{\"sampling\":{}}") "}}");
    MH_ASSERT_STR(o, "result resultType", "input_required");
    MH_ASSERT_HAS(o, "result inputRequests sample_input");
    MH_ASSERT_ABSENT(o, "result inputRequests elicit_input");
    json_object_put(o);
    mh_finish(p);
}
END_TEST

static Suite *ask_suite(void)
{
    Suite *s = suite_create("ask");
    TCase *tc = tcase_create("legacy");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_loop_test(tc, legacy_elicitation_is_answered_by_the_client, 0, 2);
    tcase_add_loop_test(tc, legacy_waiting_asks_do_not_stop_the_reader, 0, 2);
    tcase_add_loop_test(tc, legacy_client_error_reaches_the_handler, 0, 2);
    tcase_add_loop_test(tc, legacy_undeclared_capability_is_not_asked, 0, 2);
    tcase_add_loop_test(tc, legacy_cancel_ends_the_wait, 0, 2);
    tcase_add_loop_test(tc, legacy_deadline_ends_the_wait, 0, 2);
    suite_add_tcase(s, tc);
    tc = tcase_create("modern");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_loop_test(tc, modern_rounds_carry_earlier_answers, 0, 2);
    tcase_add_loop_test(tc, modern_tampered_or_foreign_state_is_refused, 0, 2);
    tcase_add_loop_test(tc, modern_state_with_a_truncated_mac_is_refused, 0, 2);
    tcase_add_loop_test(tc, modern_state_key_is_shared_by_configuration, 0, 2);
    tcase_add_loop_test(tc, modern_undeclared_capability_is_32021, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(ask_suite, mh_global_setup, mh_global_teardown)
