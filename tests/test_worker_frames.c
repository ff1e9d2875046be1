/* SPDX-License-Identifier: MIT */
/*
** test_worker_frames.c: worker/frames.c, what a worker's frames do to the
** host's call: progress and log onto it, a result as bytes or parsed, a
** failure reworded, an update fanned out, and bad payloads refused cleanly.
*/
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "call/callctx.h"
#include "call/rawresult.h"
#include "plugin/resources.h"
#include "protocol/jsonrpc.h"
#include "worker/frames.h"
#include "worker/ipc.h"
#include "check_main.h"

/* The notifications a call sent, as their serialised text, one after another. */
static th_buf sent;

static void on_notify(void *ctx, json_object *n)
{
    (void)ctx;
    size_t len;
    const char *t = th_rpc_serialize(n, &len);
    ck_assert(t && th_buf_append(&sent, t, len) && th_buf_append(&sent, "\n", 1));
    json_object_put(n);
}

static json_object *token;

static th_call *new_call(void)
{
    free(sent.data);
    memset(&sent, 0, sizeof sent);
    token = json_object_new_int(9);
    th_call_hooks hooks = {.notify = on_notify, .progress_token = token, .log_to_client = true,
                           .log_level = TH_LOG_DEBUG, .max_result_bytes = 1 << 20};
    return th_call_new("t", &hooks);
}

/* Finish CALL; its result's text (the caller frees it). */
static char *finish(th_call *call, bool *raw)
{
    json_object *r = th_call_finish(call, TH_OK);
    *raw = th_raw_result_is(r);
    size_t len;
    const char *t = th_rpc_serialize(r, &len);
    char *copy = strndup(t, len);
    json_object_put(r);
    th_call_free(call);
    json_object_put(token);
    return copy;
}

static bool apply(th_call *c, bool parse, int type, const char *payload)
{
    return th_worker_apply_frame(c, "t", parse, type, payload, strlen(payload));
}

START_TEST(progress_and_log_reach_the_client)
{
    th_call *c = new_call();
    ck_assert(!apply(c, false, TH_IPC_PROGRESS, "{\"progress\":1,\"total\":2,\"message\":\"half\"}"));
    ck_assert(!apply(c, false, TH_IPC_LOG, "{\"level\":\"warning\",\"data\":\"careful\"}"));
    ck_assert_ptr_nonnull(sent.data);
    ck_assert_ptr_nonnull(strstr(sent.data, "\"progress\":1"));
    ck_assert_ptr_nonnull(strstr(sent.data, "\"message\":\"half\""));
    ck_assert_ptr_nonnull(strstr(sent.data, "\"level\":\"warning\""));
    ck_assert_ptr_nonnull(strstr(sent.data, "careful"));
    /* Not objects, not JSON, unknown level: nothing sent, nothing broken. */
    size_t before = sent.len;
    ck_assert(!apply(c, false, TH_IPC_PROGRESS, "[1]"));
    ck_assert(!apply(c, false, TH_IPC_PROGRESS, "{\"progress\":"));
    ck_assert(!apply(c, false, TH_IPC_LOG, "{\"level\":\"loud\",\"data\":\"x\"}"));
    ck_assert(!apply(c, false, TH_IPC_LOG, "{\"level\":\"info\",\"data\":5}"));
    ck_assert(!apply(c, false, TH_IPC_LOG, "\xff"));
    ck_assert_uint_eq(sent.len, before);
    bool raw;
    free(finish(c, &raw));
}
END_TEST

START_TEST(a_plain_result_passes_as_its_bytes)
{
    const char *r = "{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}],\"isError\":true}";
    th_call *c = new_call();
    ck_assert(apply(c, false, TH_IPC_RESULT, r));
    bool raw;
    char *t = finish(c, &raw);
    ck_assert(raw);
    ck_assert_str_eq(t, r);
    free(t);
    /* PARSE: the same text, as objects. */
    c = new_call();
    ck_assert(apply(c, true, TH_IPC_RESULT, r));
    t = finish(c, &raw);
    ck_assert(!raw);
    ck_assert_ptr_nonnull(strstr(t, "\"text\":\"hi\""));
    ck_assert_ptr_nonnull(strstr(t, "\"isError\":true"));
    free(t);
}
END_TEST

/* What fuzz_rawresult found: a block with "text" twice is parsed, and the
 * long path refuses the one a client would keep. */
START_TEST(a_block_with_a_member_twice_is_checked)
{
    th_call *c = new_call();
    ck_assert(apply(c, false, TH_IPC_RESULT, "{\"content\":[{\"type\":\"text\",\"text\":\"a\",\"text\":5}]}"));
    bool raw;
    char *t = finish(c, &raw);
    ck_assert(!raw);
    ck_assert_ptr_null(strstr(t, "\"text\":5"));
    ck_assert_ptr_nonnull(strstr(t, "\"isError\":true"));
    free(t);
}
END_TEST

START_TEST(a_bad_result_fails_the_call_by_name)
{
    static const char *const bad[] = {"", "{", "[]", "{\"content\":{}}", "{\"content\":[]}x", "\xc0\xaf", "null"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        th_call *c = new_call();
        ck_assert(apply(c, i % 2, TH_IPC_RESULT, bad[i]));
        bool raw;
        char *t = finish(c, &raw);
        ck_assert(!raw);
        ck_assert_msg(strstr(t, "tool 't' failed: its worker sent no valid result") != NULL, "%s", t);
        free(t);
    }
}
END_TEST

START_TEST(a_failure_is_parsed_and_marked)
{
    th_call *c = new_call();
    ck_assert(apply(c, false, TH_IPC_FAILED,
                    "{\"content\":[{\"type\":\"text\",\"text\":\"boom\"}],\"isError\":true}"));
    ck_assert(th_call_failed(c));
    bool raw;
    char *t = finish(c, &raw);
    ck_assert(!raw);
    ck_assert_ptr_nonnull(strstr(t, "boom"));
    free(t);
}
END_TEST

START_TEST(other_frames_change_nothing)
{
    static const int types[] = {0, TH_IPC_HELLO, TH_IPC_CALL, TH_IPC_READY, TH_IPC_ASK, TH_IPC_UPDATED, 255};
    th_call *c = new_call();
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        ck_assert(!apply(c, false, types[i], "{\"content\":[{\"type\":\"text\",\"text\":\"no\"}]}"));
    ck_assert_ptr_null(sent.data);
    bool raw;
    char *t = finish(c, &raw);
    ck_assert_ptr_null(strstr(t, "\"no\""));
    free(t);
}
END_TEST

static char updated[256];

static void on_updated(const char *uri, void *ctx)
{
    (void)ctx;
    strncat(updated, uri, sizeof updated - strlen(updated) - 2);
    strcat(updated, " ");
}

START_TEST(an_update_is_fanned_out_when_it_names_a_uri)
{
    th_resources_on_update(on_updated, NULL);
    static const char *const p[] = {"{\"uri\":\"file:///a\"}", "{\"uri\":\"relative\"}", "{\"uri\":5}", "[]", "{",
                                    "{\"uri\":\"mem://b\"}"};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++)
        th_worker_apply_updated(p[i], strlen(p[i]));
    th_resources_on_update(NULL, NULL);
    ck_assert_str_eq(updated, "file:///a mem://b ");
}
END_TEST

static Suite *frames_suite(void)
{
    Suite *s = suite_create("worker_frames");
    TCase *tc = tcase_create("frames");
    tcase_add_test(tc, progress_and_log_reach_the_client);
    tcase_add_test(tc, a_plain_result_passes_as_its_bytes);
    tcase_add_test(tc, a_block_with_a_member_twice_is_checked);
    tcase_add_test(tc, a_bad_result_fails_the_call_by_name);
    tcase_add_test(tc, a_failure_is_parsed_and_marked);
    tcase_add_test(tc, other_frames_change_nothing);
    tcase_add_test(tc, an_update_is_fanned_out_when_it_names_a_uri);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN(frames_suite)
