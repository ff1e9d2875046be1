/* SPDX-License-Identifier: MIT */
/*
** test_worker_route.c: worker/route.c, the matching of a worker's frames to
** the host's calls by id (in order, interleaved, late, stray, after the
** result, at the worker's end), and worker/frames.c's answer to an ASK.
*/
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call/callctx.h"
#include "worker/frames.h"
#include "worker/route.h"
#include "check_main.h"

static th_route_verdict route(th_route *rt, uint8_t type, uint32_t id, const char *payload, th_route_call **to)
{
    th_ipc_frame f = {.type = type, .id = id, .payload = payload, .len = strlen(payload)};
    return th_route_frame(rt, &f, to);
}

/* Pop C's next frame: of TYPE with PAYLOAD. */
static void assert_pop(th_route_call *c, uint8_t type, const char *payload)
{
    th_qframe *q = th_route_pop(c);
    ck_assert_ptr_nonnull(q);
    ck_assert_uint_eq(q->type, type);
    ck_assert_str_eq(q->payload, payload);
    ck_assert_uint_eq(q->len, strlen(payload));
    free(q);
}

START_TEST(frames_reach_their_call_in_order_when_two_interleave)
{
    th_route rt = {0};
    th_route_call a = {0}, b = {0}, *to;
    ck_assert_uint_eq(th_route_add(&rt, &a, false), 1);
    ck_assert_uint_eq(th_route_add(&rt, &b, false), 2);
    ck_assert_int_eq(route(&rt, TH_IPC_PROGRESS, 2, "b1", &to), TH_ROUTE_WAITER);
    ck_assert_ptr_eq(to, &b);
    ck_assert_int_eq(route(&rt, TH_IPC_ASK, 1, "a1", &to), TH_ROUTE_WAITER);
    ck_assert_ptr_eq(to, &a);
    ck_assert_int_eq(route(&rt, TH_IPC_LOG, 2, "b2", &to), TH_ROUTE_WAITER);
    ck_assert_int_eq(route(&rt, TH_IPC_RESULT, 1, "a2", &to), TH_ROUTE_WAITER);
    ck_assert_ptr_eq(to, &a);
    assert_pop(&a, TH_IPC_ASK, "a1");
    assert_pop(&a, TH_IPC_RESULT, "a2");
    ck_assert_ptr_null(th_route_pop(&a));
    assert_pop(&b, TH_IPC_PROGRESS, "b1");
    assert_pop(&b, TH_IPC_LOG, "b2");
    ck_assert_ptr_null(th_route_pop(&b));
    th_route_remove(&rt, &b);
    ck_assert_ptr_null(rt.calls);
}
END_TEST

START_TEST(nothing_follows_a_result_not_even_an_ask)
{
    th_route rt = {0};
    th_route_call a = {0}, b = {0}, *to;
    th_route_add(&rt, &a, false);
    th_route_add(&rt, &b, false);
    ck_assert_int_eq(route(&rt, TH_IPC_FAILED, 1, "{}", &to), TH_ROUTE_WAITER);
    ck_assert(a.final_seen && !a.linked);
    /* An ASK, a second result, progress: late, and B is untouched. */
    ck_assert_int_eq(route(&rt, TH_IPC_ASK, 1, "{}", &to), TH_ROUTE_LATE);
    ck_assert_ptr_null(to);
    ck_assert_int_eq(route(&rt, TH_IPC_RESULT, 1, "{}", &to), TH_ROUTE_LATE);
    ck_assert_int_eq(route(&rt, TH_IPC_PROGRESS, 1, "{}", &to), TH_ROUTE_LATE);
    ck_assert_ptr_eq(rt.calls, &b);
    ck_assert_ptr_null(b.head);
    th_route_clear(&a);
    th_route_remove(&rt, &a); /* already out: a no-op */
    th_route_remove(&rt, &b);
}
END_TEST

START_TEST(an_id_never_given_out_or_a_foreign_type_is_stray)
{
    th_route rt = {0};
    th_route_call a = {0}, *to;
    /* Before any call, every id is stray. */
    ck_assert_int_eq(route(&rt, TH_IPC_RESULT, 1, "{}", &to), TH_ROUTE_STRAY);
    th_route_add(&rt, &a, false);
    ck_assert_int_eq(route(&rt, TH_IPC_RESULT, 0, "{}", &to), TH_ROUTE_STRAY);
    ck_assert_int_eq(route(&rt, TH_IPC_RESULT, 2, "{}", &to), TH_ROUTE_STRAY);
    ck_assert_int_eq(route(&rt, TH_IPC_ASK, UINT32_MAX, "{}", &to), TH_ROUTE_STRAY);
    /* The host's own frame types, and numbers no frame has, for a live call. */
    static const uint8_t foreign[] = {TH_IPC_HELLO, TH_IPC_CALL, TH_IPC_CANCEL, TH_IPC_READY, TH_IPC_ANSWER,
                                      TH_IPC_READ, TH_IPC_PROMPT, TH_IPC_COMPLETE, 0, 200, 255};
    for (size_t i = 0; i < sizeof foreign / sizeof foreign[0]; i++) {
        ck_assert_int_eq(route(&rt, foreign[i], 1, "{}", &to), TH_ROUTE_STRAY);
        ck_assert_ptr_null(to);
    }
    ck_assert_ptr_null(a.head);
    /* An update belongs to no call, whatever its id. */
    ck_assert_int_eq(route(&rt, TH_IPC_UPDATED, 0, "{}", &to), TH_ROUTE_UPDATED);
    ck_assert_int_eq(route(&rt, TH_IPC_UPDATED, 1, "{}", &to), TH_ROUTE_UPDATED);
    ck_assert_ptr_null(a.head);
    ck_assert_str_eq(th_route_type_name(TH_IPC_ASK), "ASK");
    ck_assert_ptr_null(th_route_type_name(200));
    th_route_remove(&rt, &a);
}
END_TEST

START_TEST(a_call_that_gave_up_gets_nothing_and_ids_are_not_reused)
{
    th_route rt = {0};
    th_route_call a = {0}, b = {0}, *to;
    th_route_add(&rt, &a, false);
    ck_assert_int_eq(route(&rt, TH_IPC_PROGRESS, 1, "x", &to), TH_ROUTE_WAITER);
    th_route_remove(&rt, &a); /* cancelled: its proxy stopped waiting */
    th_route_clear(&a);
    ck_assert_int_eq(route(&rt, TH_IPC_RESULT, 1, "{}", &to), TH_ROUTE_LATE);
    /* The next call gets a new id: the old one's frames never reach it. */
    ck_assert_uint_eq(th_route_add(&rt, &b, false), 2);
    ck_assert_int_eq(route(&rt, TH_IPC_RESULT, 1, "{}", &to), TH_ROUTE_LATE);
    ck_assert_ptr_null(b.head);
    th_route_remove(&rt, &b);
}
END_TEST

/* A waiting call whose thread lets go of it (supervisor.c's hand_over):
 * its deferred stand-in keeps its id and place, and gets its next frames. */
START_TEST(a_waiting_call_handed_over_keeps_its_id)
{
    th_route rt = {0};
    th_route_call a = {0}, w = {0}, b = {0}, d = {0}, *to;
    th_route_add(&rt, &a, false);
    th_route_add(&rt, &w, false);
    th_route_add(&rt, &b, true);
    th_route_hand_over(&rt, &w, &d);
    ck_assert_uint_eq(d.id, 2);
    ck_assert(d.deferred && d.linked && !w.linked);
    ck_assert_uint_eq(rt.ndeferred, 2);
    ck_assert_int_eq(route(&rt, TH_IPC_RESULT, 2, "{}", &to), TH_ROUTE_READY);
    ck_assert_ptr_eq(to, &d);
    ck_assert_ptr_null(w.head);
    ck_assert_ptr_eq(th_route_next_ready(&rt), &d);
    ck_assert_uint_eq(rt.ndeferred, 1);
    size_t n = 0;
    for (th_route_call *c = rt.calls; c; c = c->next, n++)
        ck_assert(c == &a || c == &b);
    ck_assert_uint_eq(n, 2);
    th_route_clear(&d);
    th_route_remove(&rt, &a);
    th_route_remove(&rt, &b);
    ck_assert_uint_eq(rt.ndeferred, 0);
}
END_TEST

/* A worker's 4 billionth call: the ids start again from 1, never 0 (no
 * frame for it would be routed), and an id past the last may be a call's
 * from before the wrap: late, not stray. */
START_TEST(ids_wrap_past_uint32_max_to_1)
{
    th_route rt = {.last_id = UINT32_MAX - 1};
    th_route_call a = {0}, b = {0}, c = {0}, *to;
    ck_assert_uint_eq(th_route_add(&rt, &a, false), UINT32_MAX);
    ck_assert_uint_eq(th_route_add(&rt, &b, false), 1);
    ck_assert_int_eq(route(&rt, TH_IPC_RESULT, 1, "{}", &to), TH_ROUTE_WAITER);
    ck_assert_ptr_eq(to, &b);
    ck_assert_int_eq(route(&rt, TH_IPC_RESULT, UINT32_MAX, "{}", &to), TH_ROUTE_WAITER);
    ck_assert_ptr_eq(to, &a);
    ck_assert_uint_eq(th_route_add(&rt, &c, false), 2);
    ck_assert_int_eq(route(&rt, TH_IPC_RESULT, 7, "{}", &to), TH_ROUTE_LATE);
    ck_assert_int_eq(route(&rt, TH_IPC_RESULT, 0, "{}", &to), TH_ROUTE_STRAY);
    th_route_clear(&a);
    th_route_clear(&b);
    th_route_remove(&rt, &c);
}
END_TEST

START_TEST(a_deferred_call_is_put_ready_once_and_leaves_at_its_result)
{
    th_route rt = {0};
    th_route_call d = {0}, e = {0}, w = {0}, *to;
    th_route_add(&rt, &d, true);
    th_route_add(&rt, &w, false);
    th_route_add(&rt, &e, true);
    ck_assert_uint_eq(rt.ndeferred, 2);
    ck_assert_int_eq(route(&rt, TH_IPC_PROGRESS, 1, "d1", &to), TH_ROUTE_READY);
    ck_assert_int_eq(route(&rt, TH_IPC_LOG, 1, "d2", &to), TH_ROUTE_READY);
    ck_assert_int_eq(route(&rt, TH_IPC_RESULT, 3, "e1", &to), TH_ROUTE_READY);
    ck_assert_uint_eq(rt.ndeferred, 1); /* E is answered: out of flight */
    ck_assert(e.final_seen && !e.linked);
    /* Each is on the ready list once, however many frames it has. */
    th_route_call *r1 = th_route_next_ready(&rt), *r2 = th_route_next_ready(&rt);
    ck_assert_ptr_null(th_route_next_ready(&rt));
    ck_assert((r1 == &d && r2 == &e) || (r1 == &e && r2 == &d));
    /* While D is being run (still queued), a new frame does not list it again. */
    assert_pop(&d, TH_IPC_PROGRESS, "d1");
    ck_assert_int_eq(route(&rt, TH_IPC_PROGRESS, 1, "d3", &to), TH_ROUTE_READY);
    ck_assert_ptr_null(rt.ready);
    assert_pop(&d, TH_IPC_LOG, "d2");
    assert_pop(&d, TH_IPC_PROGRESS, "d3");
    d.queued = false; /* its runner found no frame left */
    ck_assert_int_eq(route(&rt, TH_IPC_FAILED, 1, "d4", &to), TH_ROUTE_READY);
    ck_assert_ptr_eq(th_route_next_ready(&rt), &d);
    ck_assert_uint_eq(rt.ndeferred, 0);
    ck_assert_ptr_eq(rt.calls, &w);
    assert_pop(&d, TH_IPC_FAILED, "d4");
    assert_pop(&e, TH_IPC_RESULT, "e1");
    th_route_remove(&rt, &w);
}
END_TEST

START_TEST(the_workers_end_readies_its_deferred_calls_and_leaves_waiters)
{
    th_route rt = {0};
    th_route_call d = {0}, e = {0}, w = {0}, *to;
    th_route_add(&rt, &d, true);
    th_route_add(&rt, &w, false);
    th_route_add(&rt, &e, true);
    ck_assert_int_eq(route(&rt, TH_IPC_PROGRESS, 3, "e1", &to), TH_ROUTE_READY);
    th_route_orphan(&rt);
    ck_assert_uint_eq(rt.ndeferred, 0);
    ck_assert_ptr_eq(rt.calls, &w);
    ck_assert_ptr_null(w.next);
    /* E was ready already: listed once. */
    th_route_call *r1 = th_route_next_ready(&rt), *r2 = th_route_next_ready(&rt);
    ck_assert_ptr_null(th_route_next_ready(&rt));
    ck_assert((r1 == &d && r2 == &e) || (r1 == &e && r2 == &d));
    ck_assert(!d.linked && !e.linked && !d.final_seen);
    /* What the dead worker still wrote for them is late. */
    ck_assert_int_eq(route(&rt, TH_IPC_RESULT, 1, "{}", &to), TH_ROUTE_LATE);
    th_route_clear(&e);
    th_route_remove(&rt, &w);
}
END_TEST

/* ---- th_worker_answer_ask ---------------------------------------------------- */

static int asked;
static char asked_key[80], asked_method[80], asked_params[256];

static th_rc fake_ask(void *ctx, th_call *call, const char *key, const char *method, json_object *params,
                      json_object **result)
{
    (void)ctx;
    (void)call;
    asked++;
    snprintf(asked_key, sizeof asked_key, "%s", key);
    snprintf(asked_method, sizeof asked_method, "%s", method);
    snprintf(asked_params, sizeof asked_params, "%s", json_object_to_json_string_ext(params, JSON_C_TO_STRING_PLAIN));
    json_object_put(params);
    if (strcmp(key, "decline") == 0)
        return TH_ERR_IO;
    *result = json_tokener_parse("{\"action\":\"accept\"}");
    return TH_OK;
}

/* The answer to PAYLOAD on a call with the fake client, as compact text. */
static char *answer(const char *payload)
{
    th_call_hooks hooks = {.ask = fake_ask, .client_caps = TH_ASK_ELICITATION, .max_result_bytes = 1 << 20};
    th_call *call = th_call_new("t", &hooks);
    ck_assert_ptr_nonnull(call);
    asked = 0;
    json_object *a = th_worker_answer_ask(call, payload, strlen(payload));
    ck_assert_ptr_nonnull(a);
    char *text = strdup(json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN));
    json_object_put(a);
    json_object_put(th_call_finish(call, TH_OK));
    th_call_free(call);
    return text;
}

static void assert_answer(const char *payload, const char *want, int want_asked)
{
    char *got = answer(payload);
    ck_assert_msg(strcmp(got, want) == 0, "%s: answered %s, want %s", payload, got, want);
    ck_assert_int_eq(asked, want_asked);
    free(got);
}

START_TEST(an_ask_is_asked_and_answered_with_the_clients_result)
{
    char ok[64], io[64];
    snprintf(ok, sizeof ok, "{\"rc\":%d,\"result\":{\"action\":\"accept\"}}", TH_OK);
    snprintf(io, sizeof io, "{\"rc\":%d}", TH_ERR_IO);
    assert_answer("{\"key\":\"k\",\"method\":\"elicitation/create\",\"params\":{\"message\":\"m\"}}", ok, 1);
    ck_assert_str_eq(asked_key, "k");
    ck_assert_str_eq(asked_method, "elicitation/create");
    ck_assert_str_eq(asked_params, "{\"message\":\"m\"}");
    /* No params, or null: asked with {}. */
    assert_answer("{\"key\":\"k\",\"method\":\"roots/list\"}", ok, 1);
    ck_assert_str_eq(asked_params, "{}");
    assert_answer("{\"key\":\"k\",\"method\":\"roots/list\",\"params\":null}", ok, 1);
    /* The client's refusal is passed on as its code. */
    assert_answer("{\"key\":\"decline\",\"method\":\"roots/list\"}", io, 1);
}
END_TEST

START_TEST(a_malformed_ask_asks_nothing_and_is_answered_value)
{
    char value[32];
    snprintf(value, sizeof value, "{\"rc\":%d}", TH_ERR_VALUE);
    static const char *const bad[] = {
        "",
        "{",
        "[]",
        "\"key\"",
        "{\"key\":\"k\",\"method\":\"roots/list\"}x",
        "{\"key\":\"k\",\"method\":\"roots/list\",\"params\":\"\xff\"}",
        "{\"method\":\"roots/list\"}",
        "{\"key\":\"k\"}",
        "{\"key\":5,\"method\":\"roots/list\"}", /* json-c would print it "5", a valid key */
        "{\"key\":null,\"method\":\"roots/list\"}",
        "{\"key\":\"k\",\"method\":[\"roots/list\"]}",
        "{\"key\":\"k\",\"method\":\"tools/call\"}",
        "{\"key\":\"k k\",\"method\":\"roots/list\"}",
        "{\"key\":\"k\",\"method\":\"roots/list\",\"params\":[]}",
        "{\"key\":\"k\",\"method\":\"roots/list\",\"params\":7}",
        /* A NUL inside: the C string would end early (fuzz_route found both). */
        "{\"key\":\"a\\u0000b\",\"method\":\"roots/list\"}",
        "{\"key\":\"k\",\"method\":\"roots/list\\u0000x\"}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_answer(bad[i], value, 0);
}
END_TEST

static Suite *route_suite(void)
{
    Suite *s = suite_create("worker_route");
    TCase *tc = tcase_create("route");
    tcase_add_test(tc, frames_reach_their_call_in_order_when_two_interleave);
    tcase_add_test(tc, nothing_follows_a_result_not_even_an_ask);
    tcase_add_test(tc, an_id_never_given_out_or_a_foreign_type_is_stray);
    tcase_add_test(tc, a_call_that_gave_up_gets_nothing_and_ids_are_not_reused);
    tcase_add_test(tc, ids_wrap_past_uint32_max_to_1);
    tcase_add_test(tc, a_waiting_call_handed_over_keeps_its_id);
    tcase_add_test(tc, a_deferred_call_is_put_ready_once_and_leaves_at_its_result);
    tcase_add_test(tc, the_workers_end_readies_its_deferred_calls_and_leaves_waiters);
    suite_add_tcase(s, tc);
    TCase *ask = tcase_create("ask");
    tcase_add_test(ask, an_ask_is_asked_and_answered_with_the_clients_result);
    tcase_add_test(ask, a_malformed_ask_asks_nothing_and_is_answered_value);
    suite_add_tcase(s, ask);
    return s;
}

TH_CHECK_MAIN(route_suite)
