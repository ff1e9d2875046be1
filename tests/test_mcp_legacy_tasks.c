/* SPDX-License-Identifier: MIT */
/*
** test_mcp_legacy_tasks.c: the experimental core tasks of 2025-11-25
** (protocol/tasks.c through mcp.c) over stdio against the real toolhost,
** in both isolation modes: capabilities, the -32601 rules of tool-level
** negotiation, the deferred tasks/result, progress and status
** notifications, input_required with a live elicitation, cancel, list,
** expiry, and a session that ends while a tasks/result waits.
*/
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "mcp_harness.h"

#define FIXTURES TEST_BUILDDIR "/conformance/.libs/"
#define RELATED "_meta io.modelcontextprotocol/related-task taskId"

static const char *const isolation[] = {"--isolation=process", "--isolation=none"};

static char *dir;
static int next_id = 100;

static void setup(void)
{
    dir = mh_private_dir(FIXTURES "task_tools.so", NULL);
}

static void teardown(void)
{
    mh_rm_dir(dir);
    dir = NULL;
}

/* A toolhost with the task fixtures, initialized at VERSION with the
 * client capabilities CAPS. */
static mh_proc *start(int i, const char *version, const char *caps, const char *extra)
{
    mh_proc *p = mh_spawn("-d", dir, isolation[i], extra, NULL);
    json_object *o = mh_rpc(p,
                            "{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"method\":\"initialize\",\"params\":{"
                            "\"protocolVersion\":\"%s\",\"capabilities\":%s,"
                            "\"clientInfo\":{\"name\":\"mh\",\"version\":\"1\"}}}",
                            version, caps);
    MH_ASSERT_RESULT(o);
    MH_ASSERT_STR(o, "result protocolVersion", version);
    json_object_put(o);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    return p;
}

/* Send METHOD with PARAMS (members, without braces); returns its id. */
static int post(mh_proc *p, const char *method, const char *params)
{
    int id = next_id++;
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s\",\"params\":{%s}}", id, method, params);
    return id;
}

/* The response to ID; notifications before it go to NOTES (or are dropped). */
static json_object *await(mh_proc *p, int id, json_object *notes)
{
    char idtext[16];
    snprintf(idtext, sizeof idtext, "%d", id);
    return mh_await(p, idtext, notes);
}

static json_object *request(mh_proc *p, const char *method, const char *params)
{
    return await(p, post(p, method, params), NULL);
}

static json_object *with_task_id(mh_proc *p, const char *method, const char *task_id)
{
    char params[128];
    snprintf(params, sizeof params, "\"taskId\":\"%s\"", task_id);
    return request(p, method, params);
}

/* tools/call TOOL with ARGS and params.task TASK (members); the taskId
 * of the CreateTaskResult (malloc'd). */
static char *create(mh_proc *p, const char *tool, const char *args, const char *task, const char *more)
{
    char params[512];
    snprintf(params, sizeof params, "\"name\":\"%s\",\"arguments\":%s,\"task\":{%s}%s%s", tool, args, task,
             more ? "," : "", more ? more : "");
    json_object *o = request(p, "tools/call", params);
    MH_ASSERT_STR(o, "result task status", "working");
    MH_ASSERT_HAS(o, "result task createdAt");
    MH_ASSERT_HAS(o, "result task lastUpdatedAt");
    MH_ASSERT_HAS(o, "result task ttl");
    MH_ASSERT_HAS(o, "result task pollInterval");
    MH_ASSERT_ABSENT(o, "result content");
    MH_ASSERT_ABSENT(o, "result resultType");
    ck_assert_ptr_nonnull(mh_str(o, "result task taskId"));
    char *id = strdup(mh_str(o, "result task taskId"));
    json_object_put(o);
    return id;
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

/* The next elicitation/create the server sends; what comes before it
 * (status notifications) is dropped. */
static json_object *next_ask(mh_proc *p)
{
    for (;;) {
        json_object *m = next_any(p);
        const char *method = mh_str(m, "method");
        if (method && strcmp(method, "elicitation/create") == 0)
            return m;
        json_object_put(m);
    }
}

/* The responses to A and B, in whichever order they come. */
static void await_both(mh_proc *p, int a, int b, json_object **ra, json_object **rb)
{
    *ra = *rb = NULL;
    while (!*ra || !*rb) {
        json_object *o = mh_next(p);
        json_object *id = mh_at(o, "id");
        if (id && json_object_get_int(id) == a)
            *ra = o;
        else if (id && json_object_get_int(id) == b)
            *rb = o;
        else
            json_object_put(o);
    }
}

/* mh_finish, but the status notifications of tasks that ended after the
 * last response may still come: EOF must follow only notifications. */
static void finish(mh_proc *p)
{
    mh_close_stdin(p);
    json_object *o;
    while ((o = mh_read(p, MH_TIMEOUT_MS))) {
        MH_ASSERT_ABSENT(o, "id");
        json_object_put(o);
    }
    ck_assert_msg(mh_eof(p), "stdout did not close after EOF on stdin");
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
}

/* With one tool thread (--max-concurrent-calls=1), a task that runs to
 * its end shows that no earlier handler still holds the thread: a
 * cancelled or expired task's handler was stopped, not left to run. */
static void assert_thread_free(mh_proc *p)
{
    char *id = create(p, "slow_compute", "{\"seconds\":0,\"label\":\"next\"}", "", NULL);
    json_object *o = with_task_id(p, "tasks/result", id);
    MH_ASSERT_STR(o, "result content 0 text", "Computed 'next' after 0 s");
    json_object_put(o);
    free(id);
}

/* The first notification METHOD in NOTES, or NULL. */
static json_object *find_note(json_object *notes, const char *method, const char *status)
{
    for (size_t i = 0; i < json_object_array_length(notes); i++) {
        json_object *n = json_object_array_get_idx(notes, i);
        const char *m = mh_str(n, "method");
        if (m && strcmp(m, method) == 0 && (!status || (mh_str(n, "params status") &&
                                                        strcmp(mh_str(n, "params status"), status) == 0)))
            return n;
    }
    return NULL;
}

START_TEST(capabilities_follow_the_revision)
{
    mh_proc *p = mh_spawn("-d", dir, isolation[_i], NULL);
    json_object *o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":\"i\",\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                  "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"mh\",\"version\":\"1\"}}}");
    ck_assert(json_object_is_type(mh_at(o, "result capabilities tasks list"), json_type_object));
    ck_assert(json_object_is_type(mh_at(o, "result capabilities tasks cancel"), json_type_object));
    ck_assert(json_object_is_type(mh_at(o, "result capabilities tasks requests tools call"), json_type_object));
    json_object_put(o);
    finish(p);

    /* Before 2025-11-25 there are no tasks: none declared, params.task
     * ignored (the call answers as a plain one), the methods unknown. */
    p = mh_spawn("-d", dir, isolation[_i], NULL);
    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":\"i\",\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                  "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"mh\",\"version\":\"1\"}}}");
    MH_ASSERT_ABSENT(o, "result capabilities tasks");
    json_object_put(o);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    o = request(p, "tools/call", "\"name\":\"slow_compute\",\"arguments\":{\"seconds\":0},\"task\":{}");
    ck_assert_ptr_nonnull(strstr(mh_str(o, "result content 0 text"), "Computed"));
    MH_ASSERT_ABSENT(o, "result task");
    json_object_put(o);
    o = with_task_id(p, "tasks/get", "x");
    MH_ASSERT_ERROR(o, -32601);
    json_object_put(o);
    o = request(p, "tasks/list", "");
    MH_ASSERT_ERROR(o, -32601);
    json_object_put(o);
    finish(p);
}
END_TEST

START_TEST(tool_level_negotiation_is_minus_32601)
{
    mh_proc *p = start(_i, "2025-11-25", "{}", NULL);
    /* "required" called without params.task */
    json_object *o = request(p, "tools/call", "\"name\":\"failing_job\",\"arguments\":{}");
    MH_ASSERT_ERROR(o, -32601);
    ck_assert_ptr_nonnull(strstr(mh_str(o, "error message"), "required"));
    json_object_put(o);
    /* no execution.taskSupport (forbidden) called with params.task */
    o = request(p, "tools/call", "\"name\":\"greet\",\"arguments\":{},\"task\":{\"ttl\":1000}");
    MH_ASSERT_ERROR(o, -32601);
    ck_assert_ptr_nonnull(strstr(mh_str(o, "error message"), "forbidden"));
    json_object_put(o);
    /* a plain call of a forbidden tool and of an optional one still work */
    o = request(p, "tools/call", "\"name\":\"greet\",\"arguments\":{\"name\":\"x\"}");
    MH_ASSERT_STR(o, "result content 0 text", "Hello, x!");
    json_object_put(o);
    o = request(p, "tools/call", "\"name\":\"slow_compute\",\"arguments\":{\"seconds\":0}");
    MH_ASSERT_HAS(o, "result content");
    json_object_put(o);
    /* a malformed task */
    o = request(p, "tools/call", "\"name\":\"slow_compute\",\"arguments\":{},\"task\":{\"ttl\":\"long\"}");
    MH_ASSERT_ERROR(o, -32602);
    json_object_put(o);
    o = request(p, "tools/call", "\"name\":\"slow_compute\",\"arguments\":{},\"task\":7");
    MH_ASSERT_ERROR(o, -32602);
    json_object_put(o);
    finish(p);
}
END_TEST

START_TEST(tasks_result_waits_and_progress_keeps_its_token)
{
    mh_proc *p = start(_i, "2025-11-25", "{}", NULL);
    char *id = create(p, "slow_compute", "{\"seconds\":0.3,\"label\":\"a\"}", "\"ttl\":60000",
                      "\"_meta\":{\"progressToken\":\"tok-1\"}");
    /* Asked at once: answered when the task ends, the server meanwhile
     * still serving (the tasks/get behind it is answered first). */
    char params[128];
    snprintf(params, sizeof params, "\"taskId\":\"%s\"", id);
    int rid = post(p, "tasks/result", params);
    json_object *o = with_task_id(p, "tasks/get", id);
    MH_ASSERT_STR(o, "result taskId", id);
    MH_ASSERT_INT(o, "result ttl", 60000);
    MH_ASSERT_ABSENT(o, "result result");
    json_object_put(o);
    json_object *notes = json_object_new_array();
    o = await(p, rid, notes);
    MH_ASSERT_STR(o, "result content 0 text", "Computed 'a' after 0.3 s");
    MH_ASSERT_STR(o, "result " RELATED, id);
    json_object_put(o);
    json_object *prog = find_note(notes, "notifications/progress", NULL);
    ck_assert_msg(prog != NULL, "no progress before the result: %s", mh_json(notes));
    MH_ASSERT_STR(prog, "params progressToken", "tok-1");
    MH_ASSERT_STR(prog, "params " RELATED, id);
    json_object *st = find_note(notes, "notifications/tasks/status", "completed");
    ck_assert_msg(st != NULL, "no completed status notification: %s", mh_json(notes));
    MH_ASSERT_STR(st, "params taskId", id);
    json_object_put(notes);

    o = with_task_id(p, "tasks/get", id);
    MH_ASSERT_STR(o, "result status", "completed");
    MH_ASSERT_ABSENT(o, "result content");
    json_object_put(o);
    /* once finished, tasks/result answers at once, the same again */
    o = with_task_id(p, "tasks/result", id);
    MH_ASSERT_STR(o, "result content 0 text", "Computed 'a' after 0.3 s");
    json_object_put(o);
    free(id);
    finish(p);
}
END_TEST

START_TEST(an_error_result_fails_the_task_and_is_its_result)
{
    mh_proc *p = start(_i, "2025-11-25", "{}", NULL);
    char *id = create(p, "failing_job", "{}", "", NULL);
    json_object *o = with_task_id(p, "tasks/result", id);
    MH_ASSERT_TRUE(o, "result isError");
    MH_ASSERT_STR(o, "result content 0 text", "failing_job failed, as it always does");
    MH_ASSERT_STR(o, "result " RELATED, id);
    json_object_put(o);
    o = with_task_id(p, "tasks/get", id);
    MH_ASSERT_STR(o, "result status", "failed");
    MH_ASSERT_STR(o, "result statusMessage", "failing_job failed, as it always does");
    json_object_put(o);
    /* the client's ttl is capped at the server's (--task-ttl, 300 s) */
    free(id);
    id = create(p, "slow_compute", "{\"seconds\":0}", "\"ttl\":999999999", NULL);
    o = with_task_id(p, "tasks/get", id);
    MH_ASSERT_INT(o, "result ttl", 300000);
    json_object_put(o);
    free(id);
    finish(p);
}
END_TEST

START_TEST(cancel_answers_the_waiting_result_and_refuses_twice)
{
    mh_proc *p = start(_i, "2025-11-25", "{}", "--max-concurrent-calls=1");
    char *id = create(p, "slow_compute", "{\"seconds\":60}", "", NULL);
    char params[128];
    snprintf(params, sizeof params, "\"taskId\":\"%s\"", id);
    int rid = post(p, "tasks/result", params);
    json_object *o, *waited;
    await_both(p, post(p, "tasks/cancel", params), rid, &o, &waited);
    MH_ASSERT_STR(o, "result taskId", id);
    MH_ASSERT_STR(o, "result status", "cancelled");
    json_object_put(o);
    o = waited;
    MH_ASSERT_ERROR(o, -32603);
    ck_assert_ptr_nonnull(strstr(mh_str(o, "error message"), "cancelled"));
    json_object_put(o);
    o = with_task_id(p, "tasks/cancel", id);
    MH_ASSERT_ERROR(o, -32602);
    ck_assert_ptr_nonnull(strstr(mh_str(o, "error message"), "terminal status 'cancelled'"));
    json_object_put(o);
    o = with_task_id(p, "tasks/get", id);
    MH_ASSERT_STR(o, "result status", "cancelled");
    json_object_put(o);
    assert_thread_free(p); /* not after its 60 s */
    /* unknown ids, and no taskId at all */
    const char *const methods[] = {"tasks/get", "tasks/result", "tasks/cancel"};
    for (size_t i = 0; i < 3; i++) {
        o = with_task_id(p, methods[i], "0123456789abcdef");
        MH_ASSERT_ERROR(o, -32602);
        json_object_put(o);
        o = request(p, methods[i], "");
        MH_ASSERT_ERROR(o, -32602);
        json_object_put(o);
    }
    free(id);
    finish(p);
}
END_TEST

START_TEST(list_pages_through_the_sessions_own_tasks)
{
    mh_proc *p = start(_i, "2025-11-25", "{}", "--max-tasks=200");
    enum { N = 101 }; /* one more than a page */
    char *ids[N];
    for (int i = 0; i < N; i++)
        ids[i] = create(p, "slow_compute", "{\"seconds\":0}", "", NULL);
    /* A 2026-07-28 task of the same process belongs to another requester. */
    json_object *o = request(p, "tools/call",
                             "\"name\":\"slow_compute\",\"arguments\":{\"seconds\":0},\"_meta\":{"
                             "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                             "\"io.modelcontextprotocol/clientCapabilities\":{\"extensions\":{"
                             "\"io.modelcontextprotocol/tasks\":{}}}}");
    char *modern = strdup(mh_str(o, "result taskId"));
    json_object_put(o);

    o = request(p, "tasks/list", "");
    ck_assert_uint_eq(mh_len(o, "result tasks"), 100);
    MH_ASSERT_STR(o, "result tasks 0 taskId", ids[0]); /* oldest first */
    const char *cursor = mh_str(o, "result nextCursor");
    ck_assert_ptr_nonnull(cursor);
    char params[128];
    snprintf(params, sizeof params, "\"cursor\":\"%s\"", cursor);
    json_object *o2 = request(p, "tasks/list", params);
    ck_assert_uint_eq(mh_len(o2, "result tasks"), 1);
    MH_ASSERT_ABSENT(o2, "result nextCursor");
    /* every task of ours once, the modern one never */
    for (int i = 0; i < N; i++) {
        int seen = 0;
        json_object *pages[] = {o, o2};
        for (int k = 0; k < 2; k++)
            for (size_t j = 0; j < mh_len(pages[k], "result tasks"); j++) {
                json_object *t = json_object_array_get_idx(mh_at(pages[k], "result tasks"), j);
                seen += strcmp(mh_str(t, "taskId"), ids[i]) == 0;
                ck_assert_str_ne(mh_str(t, "taskId"), modern);
            }
        ck_assert_int_eq(seen, 1);
        free(ids[i]);
    }
    json_object_put(o);
    json_object_put(o2);
    o = with_task_id(p, "tasks/get", modern);
    MH_ASSERT_ERROR(o, -32602);
    json_object_put(o);
    free(modern);
    o = request(p, "tasks/list", "\"cursor\":\"bogus\"");
    MH_ASSERT_ERROR(o, -32602);
    json_object_put(o);
    finish(p);
}
END_TEST

START_TEST(input_required_while_the_elicitation_waits)
{
    mh_proc *p = start(_i, "2025-11-25", "{\"elicitation\":{}}", NULL);
    char *id = create(p, "confirm_delete", "{\"filename\":\"f.txt\"}", "", NULL);
    char params[128];
    snprintf(params, sizeof params, "\"taskId\":\"%s\"", id);
    int rid = post(p, "tasks/result", params);
    json_object *ask = next_ask(p);
    MH_ASSERT_STR(ask, "params " RELATED, id);
    json_object *o = with_task_id(p, "tasks/get", id);
    MH_ASSERT_STR(o, "result status", "input_required");
    json_object_put(o);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"action\":\"accept\",\"content\":{\"confirm\":true}}}",
            mh_json(mh_at(ask, "id")));
    json_object_put(ask);
    o = await(p, rid, NULL);
    MH_ASSERT_STR(o, "result content 0 text", "Deleted f.txt");
    MH_ASSERT_STR(o, "result " RELATED, id);
    json_object_put(o);
    free(id);

    /* A client without the elicitation capability: the handler is told, as
     * in a plain call, and the task ends with what it answered. */
    finish(p);
    p = start(_i, "2025-11-25", "{}", NULL);
    id = create(p, "confirm_delete", "{}", "", NULL);
    o = with_task_id(p, "tasks/result", id);
    MH_ASSERT_TRUE(o, "result isError");
    json_object_put(o);
    free(id);
    finish(p);
}
END_TEST

/* A handler that asks at once races the CreateTaskResult: the client must
 * learn the task's id before anything related to it, so the first line
 * after each tools/call is its answer. Repeated, as the race is. */
START_TEST(the_task_id_comes_before_its_questions)
{
    mh_proc *p = start(_i, "2025-11-25", "{\"elicitation\":{}}", NULL);
    for (int n = 0; n < 25; n++) {
        int rid = post(p, "tools/call", "\"name\":\"confirm_delete\",\"arguments\":{},\"task\":{}");
        json_object *o = next_any(p);
        ck_assert_msg(mh_at(o, "id") && json_object_get_int(mh_at(o, "id")) == rid && !mh_at(o, "method"),
                      "round %d: before the CreateTaskResult came %s", n, mh_json(o));
        char *id = strdup(mh_str(o, "result task taskId"));
        json_object_put(o);
        json_object *ask = next_ask(p);
        MH_ASSERT_STR(ask, "params " RELATED, id);
        mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"action\":\"decline\"}}",
                mh_json(mh_at(ask, "id")));
        json_object_put(ask);
        /* Its last word, before the next round begins. */
        for (bool ended = false; !ended;) {
            json_object *m = next_any(p);
            const char *st = mh_str(m, "params status");
            ended = st && strcmp(mh_str(m, "params taskId"), id) == 0 &&
                    (strcmp(st, "completed") == 0 || strcmp(st, "failed") == 0);
            json_object_put(m);
        }
        free(id);
    }
    finish(p);
}
END_TEST

START_TEST(an_expiring_task_answers_its_waiting_result)
{
    mh_proc *p = start(_i, "2025-11-25", "{}", "--max-concurrent-calls=1");
    char *id = create(p, "slow_compute", "{\"seconds\":60}", "\"ttl\":200", NULL);
    json_object *o = with_task_id(p, "tasks/result", id);
    MH_ASSERT_ERROR(o, -32602);
    ck_assert_ptr_nonnull(strstr(mh_str(o, "error message"), "expired"));
    json_object_put(o);
    o = with_task_id(p, "tasks/get", id);
    MH_ASSERT_ERROR(o, -32602);
    json_object_put(o);
    assert_thread_free(p); /* its handler was stopped */
    free(id);
    finish(p);
}
END_TEST

START_TEST(a_session_ending_drops_a_waiting_result)
{
    /* The wait counts as a call in flight: end of input gives it the
     * shutdown grace, then the session ends and drops it. */
    mh_proc *p = start(_i, "2025-11-25", "{}", "--shutdown-grace-ms=200");
    char *id = create(p, "slow_compute", "{\"seconds\":600}", "", NULL);
    char params[128];
    snprintf(params, sizeof params, "\"taskId\":\"%s\"", id);
    post(p, "tasks/result", params);
    mh_close_stdin(p);
    /* The wait ends with the session; the host exits cleanly. */
    ck_assert_msg(mh_wait_eof(p, MH_TIMEOUT_MS), "stdout stayed open");
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    free(id);
    mh_free(p);
}
END_TEST

static Suite *legacy_tasks_suite(void)
{
    Suite *s = suite_create("mcp_legacy_tasks");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, capabilities_follow_the_revision, 0, 2);
    tcase_add_loop_test(tc, tool_level_negotiation_is_minus_32601, 0, 2);
    tcase_add_loop_test(tc, tasks_result_waits_and_progress_keeps_its_token, 0, 2);
    tcase_add_loop_test(tc, an_error_result_fails_the_task_and_is_its_result, 0, 2);
    tcase_add_loop_test(tc, cancel_answers_the_waiting_result_and_refuses_twice, 0, 2);
    tcase_add_loop_test(tc, list_pages_through_the_sessions_own_tasks, 0, 2);
    tcase_add_loop_test(tc, input_required_while_the_elicitation_waits, 0, 2);
    tcase_add_loop_test(tc, the_task_id_comes_before_its_questions, 0, 2);
    tcase_add_loop_test(tc, an_expiring_task_answers_its_waiting_result, 0, 2);
    suite_add_tcase(s, tc);
    /* Apart: it ends the host with a handler still running, which
     * check-valgrind's timing cannot hold (see scripts/check-valgrind.sh). */
    tc = tcase_create("shutdown");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, a_session_ending_drops_a_waiting_result, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(legacy_tasks_suite, mh_global_setup, mh_global_teardown)
