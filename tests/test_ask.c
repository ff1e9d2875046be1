/* SPDX-License-Identifier: MIT */
/*
** test_ask.c: th_call_ask's checks before a request reaches the host (key,
** method, params, capabilities, a handle used after its call), and the
** requestState of protocol/mrtr.c: answers found and recorded, a state
** that round-trips, and one refused when altered, expired, or issued for
** another tool, other arguments or another principal.
*/
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "base/base64.h"
#include "call/ask.h"
#include "call/callctx.h"
#include "check_main.h"
#include "protocol/jsonrpc.h"
#include "protocol/mrtr.h"

/* ---- th_call_ask ---------------------------------------------------------- */

static int asked;
static char last_key[80];

static th_rc fake_ask(void *ctx, th_call *call, const char *key, const char *method, json_object *params,
                      json_object **result)
{
    (void)ctx;
    (void)call;
    (void)method;
    asked++;
    snprintf(last_key, sizeof last_key, "%s", key);
    ck_assert(json_object_is_type(params, json_type_object));
    json_object_put(params);
    *result = json_object_new_object();
    return TH_OK;
}

static th_call *new_call(unsigned caps, bool with_hook)
{
    th_call_hooks h = {.client_caps = caps, .ask = with_hook ? fake_ask : NULL};
    asked = 0;
    return th_call_new("t", &h);
}

START_TEST(ask_checks_its_arguments)
{
    th_call *c = new_call(TH_ASK_SAMPLING | TH_ASK_ROOTS, true);
    json_object *r = (json_object *)1;
    ck_assert_int_eq(th_call_ask(c, "k", "tools/call", NULL, &r), TH_ERR_VALUE);
    ck_assert_ptr_null(r);
    ck_assert_int_eq(th_call_ask(c, "", "roots/list", NULL, &r), TH_ERR_VALUE);
    ck_assert_int_eq(th_call_ask(c, "a b", "roots/list", NULL, &r), TH_ERR_VALUE);
    char long_key[70];
    memset(long_key, 'k', sizeof long_key - 1);
    long_key[sizeof long_key - 1] = '\0';
    ck_assert_int_eq(th_call_ask(c, long_key, "roots/list", NULL, &r), TH_ERR_VALUE);
    ck_assert_int_eq(th_call_ask(c, "k", "roots/list", json_object_new_array(), &r), TH_ERR_VALUE);
    ck_assert_int_eq(th_call_ask(c, "k", "roots/list", NULL, NULL), TH_ERR_MISUSE);
    ck_assert_int_eq(th_call_ask(NULL, "k", "roots/list", NULL, &r), TH_ERR_MISUSE);
    ck_assert_int_eq(th_call_elicit(c, "k", "m", "[1]", &r), TH_ERR_VALUE);
    ck_assert_int_eq(th_call_sample(c, "k", "p", 0, &r), TH_ERR_VALUE);
    ck_assert_int_eq(asked, 0);
    ck_assert_int_eq(th_call_list_roots(c, "client.roots-1", &r), TH_OK);
    ck_assert_int_eq(asked, 1);
    ck_assert_str_eq(last_key, "client.roots-1");
    json_object_put(r);
    ck_assert(th_call_client_can(c, TH_ASK_SAMPLING));
    ck_assert(th_call_client_can(c, TH_ASK_SAMPLING | TH_ASK_ROOTS));
    ck_assert(!th_call_client_can(c, TH_ASK_ELICITATION | TH_ASK_ROOTS));
    th_call_free(c);
}
END_TEST

START_TEST(ask_without_a_way_to_the_client_is_io)
{
    th_call *c = new_call(TH_ASK_ELICITATION, false);
    json_object *r = NULL;
    ck_assert_int_eq(th_call_elicit(c, "k", "m", "{\"type\":\"object\",\"properties\":{}}", &r), TH_ERR_IO);
    ck_assert_ptr_null(r);
    th_call_free(c);
}
END_TEST

START_TEST(ask_on_an_ended_handle_is_misuse)
{
    th_call *c = new_call(TH_ASK_ROOTS, true);
    th_call *h = th_call_handle(c);
    th_call_end(c);
    json_object *r = NULL;
    ck_assert_int_eq(th_call_list_roots(h, "k", &r), TH_ERR_MISUSE);
    ck_assert(!th_call_client_can(h, TH_ASK_ROOTS));
    ck_assert_int_eq(asked, 0);
    th_call_free(c);
}
END_TEST

START_TEST(capabilities_are_read_from_objects_only)
{
    json_object *caps = json_tokener_parse("{\"sampling\":{},\"elicitation\":true,\"roots\":{\"listChanged\":true}}");
    ck_assert_uint_eq(th_ask_caps_of(caps), TH_ASK_SAMPLING | TH_ASK_ROOTS);
    ck_assert_uint_eq(th_ask_caps_of(NULL), 0);
    json_object_put(caps);
}
END_TEST

/* ---- requestState --------------------------------------------------------- */

static json_object *params_of(const char *text)
{
    json_object *o = json_tokener_parse(text);
    ck_assert_msg(o != NULL, "bad test JSON %s", text);
    return o;
}

/* A state issued for TOOL/ARGS after a run that asked KEY and used USED. */
static char *issue(const char *tool, json_object *args, const char *used_key, const char *ask_key)
{
    char msg[320];
    json_object *p = NULL, *r = NULL;
    if (used_key) {
        char text[256];
        snprintf(text, sizeof text, "{\"inputResponses\":{\"%s\":{\"action\":\"accept\"}}}", used_key);
        p = params_of(text);
    }
    th_mrtr *m = th_mrtr_begin(tool, args, NULL, p, msg, sizeof msg);
    ck_assert_msg(m != NULL, "%s", msg);
    if (used_key) {
        ck_assert_int_eq(th_mrtr_ask(m, used_key, "elicitation/create", json_object_new_object(), &r), TH_OK);
        json_object_put(r);
    }
    ck_assert_int_eq(th_mrtr_ask(m, ask_key, "roots/list", json_object_new_object(), &r), TH_ERR_INPUT_REQUIRED);
    ck_assert(th_mrtr_pending(m));
    json_object *res = th_mrtr_result(m);
    ck_assert_str_eq(json_object_get_string(json_object_object_get(res, "resultType")), "input_required");
    ck_assert(json_object_object_get_ex(json_object_object_get(res, "inputRequests"), ask_key, NULL));
    char *state = strdup(json_object_get_string(json_object_object_get(res, "requestState")));
    json_object_put(res);
    json_object_put(p);
    th_mrtr_free(m);
    return state;
}

/* th_mrtr_begin with STATE (and no new answers); NULL and MSG on refusal. */
static th_mrtr *resume(const char *tool, json_object *args, const char *state, char *msg, size_t size)
{
    json_object *p = json_object_new_object();
    json_object_object_add(p, "requestState", json_object_new_string(state));
    th_mrtr *m = th_mrtr_begin(tool, args, NULL, p, msg, size);
    json_object_put(p);
    return m;
}

START_TEST(state_carries_the_answers_used)
{
    json_object *args = params_of("{\"n\":1}");
    char *state = issue("tool_a", args, "first", "second");
    char msg[320];
    th_mrtr *m = resume("tool_a", args, state, msg, sizeof msg);
    ck_assert_msg(m != NULL, "%s", msg);
    json_object *r = NULL;
    ck_assert_int_eq(th_mrtr_ask(m, "first", "elicitation/create", json_object_new_object(), &r), TH_OK);
    ck_assert_str_eq(json_object_get_string(json_object_object_get(r, "action")), "accept");
    json_object_put(r);
    /* The same key twice in one run is the handler's mistake. */
    ck_assert_int_eq(th_mrtr_ask(m, "first", "elicitation/create", json_object_new_object(), &r), TH_ERR_VALUE);
    ck_assert(!th_mrtr_pending(m));
    th_mrtr_free(m);
    free(state);
    json_object_put(args);
}
END_TEST

START_TEST(state_refused_when_altered_foreign_or_expired)
{
    json_object *args = params_of("{\"n\":1}"), *other = params_of("{\"n\":2}");
    char *state = issue("tool_a", args, NULL, "q");
    char msg[320];

    /* Every change of the MAC's last character is refused, also one that
     * touches only the bits base64url leaves unused (A and B decode alike
     * there): the state was accepted in 2 of 64 runs before. */
    char *flipped = strdup(state);
    size_t last = strlen(flipped) - 1;
    for (const char *c = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"; *c; c++) {
        if (*c == state[last])
            continue;
        flipped[last] = *c;
        ck_assert_ptr_null(resume("tool_a", args, flipped, msg, sizeof msg));
        ck_assert_msg(strstr(msg, "integrity check"), "%c: %s", *c, msg);
    }
    free(flipped);

    ck_assert_ptr_null(resume("tool_a", args, "v1.e30.AAAA", msg, sizeof msg));
    ck_assert_ptr_null(resume("tool_a", args, "not a state", msg, sizeof msg));
    ck_assert_ptr_null(resume("tool_b", args, state, msg, sizeof msg));
    ck_assert_msg(strstr(msg, "another tool call"), "%s", msg);
    ck_assert_ptr_null(resume("tool_a", other, state, msg, sizeof msg));
    ck_assert_msg(strstr(msg, "another tool call"), "%s", msg);
    free(state);

    th_mrtr_set_ttl_ms(-1000); /* issued already expired */
    state = issue("tool_a", args, NULL, "q");
    th_mrtr_set_ttl_ms(TH_MRTR_STATE_TTL_MS);
    ck_assert_ptr_null(resume("tool_a", args, state, msg, sizeof msg));
    ck_assert_msg(strstr(msg, "expired"), "%s", msg);
    free(state);
    json_object_put(args);
    json_object_put(other);
}
END_TEST

START_TEST(state_refused_for_another_principal)
{
    char msg[320];
    json_object *r = NULL;
    th_mrtr *m = th_mrtr_begin("tool_a", NULL, "Bearer alice", NULL, msg, sizeof msg);
    ck_assert_msg(m != NULL, "%s", msg);
    ck_assert_int_eq(th_mrtr_ask(m, "q", "roots/list", json_object_new_object(), &r), TH_ERR_INPUT_REQUIRED);
    json_object *res = th_mrtr_result(m);
    json_object *p = json_object_new_object();
    json_object_object_add(p, "requestState", json_object_get(json_object_object_get(res, "requestState")));
    th_mrtr_free(m);
    const char *who[] = {"Bearer bob", NULL};
    for (size_t i = 0; i < 2; i++) {
        ck_assert_ptr_null(th_mrtr_begin("tool_a", NULL, who[i], p, msg, sizeof msg));
        ck_assert_msg(strstr(msg, "another client"), "%s", msg);
    }
    m = th_mrtr_begin("tool_a", NULL, "Bearer alice", p, msg, sizeof msg);
    ck_assert_msg(m != NULL, "%s", msg);
    th_mrtr_free(m);
    json_object_put(p);
    json_object_put(res);
}
END_TEST

/* ---- states signed with the server's key -------------------------------- */

/* fuzz_state found it (fuzz/corpus/state/regress-null-tool): a payload
 * whose "tool", "args" or "sub" was not a string reached strcmp(NULL, ..).
 * Only the key's holder can MAC one, but a leaked key or a writer's bug
 * must give a refusal, not a crash. The key is set from a file, and the
 * payloads are MACed here as th_mrtr_result MACs its own. */
static const char test_key[] = "test-state-key-0123456789abcdef01234567";

/* "v1." PAYLOAD "." MAC, as the server with test_key would write it. */
static char *signed_state(const char *payload)
{
    char *body = th_b64url_encode(payload, strlen(payload));
    ck_assert_ptr_nonnull(body);
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned maclen = 0;
    ck_assert_ptr_nonnull(HMAC(EVP_sha256(), test_key, (int)strlen(test_key), (const unsigned char *)body,
                               strlen(body), mac, &maclen));
    char *sig = th_b64url_encode(mac, maclen);
    ck_assert_ptr_nonnull(sig);
    size_t n = strlen(body) + strlen(sig) + 8;
    char *state = malloc(n);
    ck_assert_ptr_nonnull(state);
    snprintf(state, n, "v1.%s.%s", body, sig);
    free(body);
    free(sig);
    return state;
}

START_TEST(state_members_of_another_type_are_refused)
{
    char path[] = "/tmp/th-test-key-XXXXXX", msg[320];
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, test_key, strlen(test_key)), (ssize_t)strlen(test_key));
    close(fd);
    th_err err;
    ck_assert_int_eq(th_mrtr_key_file(path, &err), TH_OK);
    unlink(path);
    /* The digest of no arguments ("{}"), so that "sub" is reached too. */
    static const char none[] = "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a";
    char sub_null[256];
    snprintf(sub_null, sizeof sub_null, "{\"exp\":99999999999999,\"tool\":\"t\",\"args\":\"%s\",\"sub\":null}", none);
    const char *payloads[] = {
        "{\"exp\":99999999999999,\"tool\":null}",
        "{\"exp\":99999999999999,\"tool\":\"t\",\"args\":null}",
        "{\"exp\":99999999999999,\"tool\":7,\"args\":[]}",
        sub_null,
    };
    for (size_t i = 0; i < sizeof payloads / sizeof payloads[0]; i++) {
        char *state = signed_state(payloads[i]);
        msg[0] = '\0';
        ck_assert_msg(resume("t", NULL, state, msg, sizeof msg) == NULL, "%s was taken", payloads[i]);
        ck_assert_msg(strstr(msg, i < 3 ? "another tool call" : "another client"), "%s: %s", payloads[i], msg);
        free(state);
    }
    /* The same payload with strings is taken: the MAC here is the server's. */
    char ok[256];
    snprintf(ok, sizeof ok, "{\"exp\":99999999999999,\"tool\":\"t\",\"args\":\"%s\",\"sub\":\"\",\"answers\":{}}", none);
    char *state = signed_state(ok);
    th_mrtr *m = resume("t", NULL, state, msg, sizeof msg);
    ck_assert_msg(m != NULL, "%s", msg);
    th_mrtr_free(m);
    free(state);
}
END_TEST

/* fuzz_state found it (fuzz/corpus/state/regress-big-integer): an answer
 * holding an integer past 64 bits came back from requestState clamped,
 * since the state's payload was read back with json-c's tokener instead of
 * th_rpc_parse, which keeps numbers and lone surrogates as sent; and an
 * answer nested deeper than json-c's default 32 levels made the server
 * refuse its own state. The next round must see the answer as sent. */
START_TEST(state_keeps_answers_exactly)
{
    char deep[400] = "", text[1024], msg[320];
    for (int i = 0; i < 40; i++)
        strcat(deep, "[");
    strcat(deep, "1");
    for (int i = 0; i < 40; i++)
        strcat(deep, "]");
    const char *answer_fmt = "{\"action\":\"accept\",\"content\":{\"n\":123456789012345678901234567890,"
                             "\"m\":-98765432109876543210,\"x\":1.50e300,\"s\":\"\\ud800\",\"deep\":%s}}";
    char answer[700];
    snprintf(answer, sizeof answer, answer_fmt, deep);
    snprintf(text, sizeof text,
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"inputResponses\":{\"q\":%s}}}",
             answer);
    th_rpc_msg rm;
    th_rpc_parse(text, strlen(text), &rm);
    ck_assert_int_eq(rm.kind, TH_RPC_REQUEST);
    /* What the client sent, as the host writes it back. */
    json_object *sent = json_object_object_get(json_object_object_get(rm.params, "inputResponses"), "q");
    char *want = strdup(json_object_to_json_string_ext(sent, JSON_C_TO_STRING_PLAIN));

    th_mrtr *m = th_mrtr_begin("t", NULL, NULL, rm.params, msg, sizeof msg);
    ck_assert_msg(m != NULL, "%s", msg);
    json_object *r = NULL;
    ck_assert_int_eq(th_mrtr_ask(m, "q", "elicitation/create", json_object_new_object(), &r), TH_OK);
    json_object_put(r);
    ck_assert_int_eq(th_mrtr_ask(m, "next", "elicitation/create", json_object_new_object(), &r),
                     TH_ERR_INPUT_REQUIRED);
    json_object *res = th_mrtr_result(m);
    th_mrtr_free(m);
    th_rpc_msg_clear(&rm);
    char *state = strdup(json_object_get_string(json_object_object_get(res, "requestState")));
    json_object_put(res);

    m = resume("t", NULL, state, msg, sizeof msg);
    ck_assert_msg(m != NULL, "its own state refused: %s", msg);
    ck_assert_int_eq(th_mrtr_ask(m, "q", "elicitation/create", json_object_new_object(), &r), TH_OK);
    ck_assert_str_eq(json_object_to_json_string_ext(r, JSON_C_TO_STRING_PLAIN), want);
    json_object_put(r);
    th_mrtr_free(m);
    free(state);
    free(want);
}
END_TEST

START_TEST(input_responses_must_be_objects)
{
    char msg[320];
    const char *bad[] = {"{\"inputResponses\":null}", "{\"inputResponses\":[]}",
                         "{\"inputResponses\":{\"k\":12345}}", "{\"requestState\":7}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_object *p = params_of(bad[i]);
        ck_assert_msg(th_mrtr_begin("t", NULL, NULL, p, msg, sizeof msg) == NULL, "accepted %s", bad[i]);
        ck_assert_msg(strncmp(msg, "Invalid params: ", 16) == 0, "%s", msg);
        json_object_put(p);
    }
}
END_TEST

static Suite *ask_suite(void)
{
    Suite *s = suite_create("ask");
    TCase *tc = tcase_create("call");
    tcase_add_test(tc, ask_checks_its_arguments);
    tcase_add_test(tc, ask_without_a_way_to_the_client_is_io);
    tcase_add_test(tc, ask_on_an_ended_handle_is_misuse);
    tcase_add_test(tc, capabilities_are_read_from_objects_only);
    suite_add_tcase(s, tc);
    tc = tcase_create("state");
    tcase_add_test(tc, state_carries_the_answers_used);
    tcase_add_test(tc, state_refused_when_altered_foreign_or_expired);
    tcase_add_test(tc, state_refused_for_another_principal);
    tcase_add_test(tc, input_responses_must_be_objects);
    tcase_add_test(tc, state_members_of_another_type_are_refused);
    tcase_add_test(tc, state_keeps_answers_exactly);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(ask_suite, th_check_nothing, th_check_nothing)
