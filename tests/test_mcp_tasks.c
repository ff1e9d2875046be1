/* SPDX-License-Identifier: MIT */
/*
** test_mcp_tasks.c: integration tests of the tasks extension (SEP-2663,
** protocol/tasks.c) over stdio against the real toolhost, in both
** isolation modes: create, poll, result, input through tasks/update,
** cancel, gating on the declared extension, expiry, the per-client limit,
** input gathered before the task, and a crashing task in process mode.
*/
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "mcp_harness.h"

#define FIXTURES TEST_BUILDDIR "/conformance/.libs/"
#define EXT "\"extensions\":{\"io.modelcontextprotocol/tasks\":{}}"
#define META(caps)                                                                                                    \
    "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","                                          \
    "\"io.modelcontextprotocol/clientCapabilities\":" caps "}"
#define TASKS_META META("{\"elicitation\":{}," EXT "}")
#define PLAIN_META META("{}")

static const char *const isolation[] = {"--isolation=process", "--isolation=none"};

static char *dir;
static int next_id = 100;

static void setup(void)
{
    dir = mh_private_dir(FIXTURES "task_tools.so", FIXTURES "protocol_error_job.so", NULL);
}

static void teardown(void)
{
    mh_rm_dir(dir);
    dir = NULL;
}

/* The response to METHOD with PARAMS (members, without braces) and META. */
static json_object *request(mh_proc *p, const char *method, const char *params, const char *meta)
{
    int id = next_id++;
    char idtext[16];
    snprintf(idtext, sizeof idtext, "%d", id);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s\",\"params\":{%s%s%s}}", id, method, params,
            *params ? "," : "", meta);
    return mh_await(p, idtext, NULL);
}

/* Call TOOL with ARGS as a task; returns its taskId (malloc'd). */
static char *create(mh_proc *p, const char *tool, const char *args)
{
    char params[512];
    snprintf(params, sizeof params, "\"name\":\"%s\",\"arguments\":%s", tool, args);
    json_object *o = request(p, "tools/call", params, TASKS_META);
    MH_ASSERT_STR(o, "result resultType", "task");
    MH_ASSERT_STR(o, "result status", "working");
    MH_ASSERT_HAS(o, "result createdAt");
    MH_ASSERT_HAS(o, "result ttlMs");
    MH_ASSERT_ABSENT(o, "result result");
    MH_ASSERT_ABSENT(o, "result task");
    ck_assert_ptr_nonnull(mh_str(o, "result taskId"));
    char *id = strdup(mh_str(o, "result taskId"));
    json_object_put(o);
    return id;
}

static json_object *get(mh_proc *p, const char *id)
{
    char params[128];
    snprintf(params, sizeof params, "\"taskId\":\"%s\"", id);
    return request(p, "tasks/get", params, TASKS_META);
}

/* tasks/get until the status is not "working" (bounded, never timed). */
static json_object *settle(mh_proc *p, const char *id)
{
    for (int i = 0; i < 2000; i++) {
        json_object *o = get(p, id);
        const char *st = mh_str(o, "result status");
        ck_assert_msg(st != NULL, "tasks/get has no status: %s", mh_json(o));
        if (strcmp(st, "working") != 0)
            return o;
        json_object_put(o);
        usleep(10000);
    }
    ck_abort_msg("task %s stayed working", id);
    return NULL;
}

/* An empty ack: resultType complete and none of a task's members. */
static void assert_ack(json_object *o)
{
    MH_ASSERT_STR(o, "result resultType", "complete");
    MH_ASSERT_ABSENT(o, "result taskId");
    MH_ASSERT_ABSENT(o, "result status");
}

START_TEST(task_runs_and_its_result_is_inlined)
{
    mh_proc *p = mh_spawn("-d", dir, isolation[_i], NULL);
    json_object *o = request(p, "tools/list", "", PLAIN_META);
    json_object *tools = mh_at(o, "result tools");
    bool seen = false;
    for (size_t i = 0; i < json_object_array_length(tools); i++) {
        json_object *t = json_object_array_get_idx(tools, i);
        if (strcmp(mh_str(t, "name"), "failing_job") == 0) {
            MH_ASSERT_STR(t, "execution taskSupport", "required");
            seen = true;
        }
        if (strcmp(mh_str(t, "name"), "greet") == 0)
            MH_ASSERT_ABSENT(t, "execution");
    }
    ck_assert(seen);
    json_object_put(o);

    char *id = create(p, "slow_compute", "{\"seconds\":0.1,\"label\":\"a\"}");
    o = get(p, id); /* durable before the answer: found at once */
    MH_ASSERT_STR(o, "result taskId", id);
    MH_ASSERT_STR(o, "result resultType", "complete");
    json_object_put(o);
    o = settle(p, id);
    MH_ASSERT_STR(o, "result status", "completed");
    MH_ASSERT_STR(o, "result result content 0 text", "Computed 'a' after 0.1 s");
    MH_ASSERT_ABSENT(o, "result error");
    json_object_put(o);
    free(id);

    /* A tool error completes the task with isError; it is not "failed". */
    id = create(p, "failing_job", "{}");
    o = settle(p, id);
    MH_ASSERT_STR(o, "result status", "completed");
    MH_ASSERT_TRUE(o, "result result isError");
    json_object_put(o);
    free(id);
    mh_finish(p);
}
END_TEST

START_TEST(input_is_asked_through_the_task)
{
    mh_proc *p = mh_spawn("-d", dir, isolation[_i], NULL);
    char *id = create(p, "confirm_delete", "{\"filename\":\"f.txt\"}");
    json_object *o = settle(p, id);
    MH_ASSERT_STR(o, "result status", "input_required");
    MH_ASSERT_STR(o, "result inputRequests confirm method", "elicitation/create");
    json_object_put(o);
    char params[512];
    snprintf(params, sizeof params,
             "\"taskId\":\"%s\",\"inputResponses\":{\"confirm\":{\"action\":\"accept\",\"content\":{\"confirm\":true}}}",
             id);
    o = request(p, "tasks/update", params, TASKS_META);
    assert_ack(o);
    json_object_put(o);
    o = settle(p, id);
    MH_ASSERT_STR(o, "result status", "completed");
    MH_ASSERT_STR(o, "result result content 0 text", "Deleted f.txt");
    json_object_put(o);
    free(id);

    /* Two questions: one answer keeps the task waiting for the other. */
    id = create(p, "multi_input", "{}");
    o = settle(p, id);
    MH_ASSERT_HAS(o, "result inputRequests first");
    MH_ASSERT_HAS(o, "result inputRequests second");
    json_object_put(o);
    snprintf(params, sizeof params,
             "\"taskId\":\"%s\",\"inputResponses\":{\"first\":{\"action\":\"accept\",\"content\":{\"name\":\"x\"}}}",
             id);
    json_object_put(request(p, "tasks/update", params, TASKS_META));
    o = get(p, id);
    MH_ASSERT_STR(o, "result status", "input_required");
    MH_ASSERT_ABSENT(o, "result inputRequests first");
    MH_ASSERT_HAS(o, "result inputRequests second");
    json_object_put(o);
    snprintf(params, sizeof params,
             "\"taskId\":\"%s\",\"inputResponses\":{\"second\":{\"action\":\"accept\",\"content\":{\"name\":\"y\"}}}",
             id);
    json_object_put(request(p, "tasks/update", params, TASKS_META));
    o = settle(p, id);
    MH_ASSERT_STR(o, "result status", "completed");
    json_object_put(o);
    free(id);
    mh_finish(p);
}
END_TEST

START_TEST(cancel_ends_the_task_and_is_idempotent)
{
    /* One tool thread: the next task runs only once the cancelled
     * handler has stopped and given its thread back. */
    mh_proc *p = mh_spawn("-d", dir, isolation[_i], "--max-concurrent-calls", "1", NULL);
    char *id = create(p, "slow_compute", "{\"seconds\":600}");
    char params[128];
    snprintf(params, sizeof params, "\"taskId\":\"%s\"", id);
    json_object *o = request(p, "tasks/cancel", params, TASKS_META);
    assert_ack(o);
    json_object_put(o);
    o = get(p, id);
    MH_ASSERT_STR(o, "result status", "cancelled");
    MH_ASSERT_ABSENT(o, "result result");
    json_object_put(o);
    o = request(p, "tasks/cancel", params, TASKS_META);
    assert_ack(o);
    json_object_put(o);
    free(id);
    /* The cancelled handler stopped (else this task would wait for its
     * 600 s), and the host still serves. */
    id = create(p, "slow_compute", "{\"seconds\":0}");
    o = settle(p, id);
    MH_ASSERT_STR(o, "result status", "completed");
    json_object_put(o);
    free(id);
    o = request(p, "tools/call", "\"name\":\"greet\",\"arguments\":{\"name\":\"z\"}", TASKS_META);
    MH_ASSERT_STR(o, "result content 0 text", "Hello, z!");
    json_object_put(o);
    mh_finish(p);
}
END_TEST

START_TEST(the_extension_gates_tasks)
{
    mh_proc *p = mh_spawn("-d", dir, isolation[_i], NULL);
    /* Without the extension: no task methods, task-optional tools run
     * synchronously, task-required ones are refused naming it. */
    json_object *o = request(p, "tasks/get", "\"taskId\":\"x\"", PLAIN_META);
    MH_ASSERT_ERROR(o, -32021);
    json_object_put(o);
    o = request(p, "tools/call", "\"name\":\"slow_compute\",\"arguments\":{\"seconds\":0}", PLAIN_META);
    MH_ASSERT_STR(o, "result resultType", "complete");
    MH_ASSERT_ABSENT(o, "result taskId");
    MH_ASSERT_HAS(o, "result content");
    json_object_put(o);
    o = request(p, "tools/call", "\"name\":\"failing_job\",\"arguments\":{}", PLAIN_META);
    MH_ASSERT_ERROR(o, -32021);
    ck_assert(json_object_is_type(mh_at(o, "error data requiredCapabilities extensions io.modelcontextprotocol/tasks"),
                                  json_type_object));
    json_object_put(o);
    /* With it: v1's methods are gone, an unknown id is -32602, a sync
     * tool stays sync. */
    o = request(p, "tasks/result", "\"taskId\":\"x\"", TASKS_META);
    MH_ASSERT_ERROR(o, -32601);
    json_object_put(o);
    o = request(p, "tasks/list", "", TASKS_META);
    MH_ASSERT_ERROR(o, -32601);
    json_object_put(o);
    o = request(p, "tasks/get", "\"taskId\":\"nonexistent\"", TASKS_META);
    MH_ASSERT_ERROR(o, -32602);
    json_object_put(o);
    o = request(p, "tasks/get", "\"taskId\":7", TASKS_META);
    MH_ASSERT_ERROR(o, -32602);
    json_object_put(o);
    o = request(p, "tools/call", "\"name\":\"greet\",\"arguments\":{\"name\":\"q\"},\"task\":{\"ttl\":1000}",
                TASKS_META);
    MH_ASSERT_ABSENT(o, "result taskId");
    MH_ASSERT_STR(o, "result content 0 text", "Hello, q!");
    json_object_put(o);
    /* The server says it serves the extension. */
    o = request(p, "server/discover", "", PLAIN_META);
    ck_assert(json_object_is_type(mh_at(o, "result capabilities extensions io.modelcontextprotocol/tasks"),
                                  json_type_object));
    MH_ASSERT_ABSENT(o, "result capabilities tasks");
    json_object_put(o);
    mh_finish(p);
}
END_TEST

START_TEST(a_task_expires_after_its_ttl)
{
    mh_proc *p = mh_spawn("-d", dir, isolation[_i], "--task-ttl", "1", NULL);
    /* A task that waits for input: no handler runs while it expires. */
    char *id = create(p, "confirm_delete", "{}");
    bool gone = false;
    for (int i = 0; i < 2000 && !gone; i++) {
        json_object *o = get(p, id);
        gone = mh_has(o, "error");
        if (gone)
            MH_ASSERT_ERROR(o, -32602);
        else
            MH_ASSERT_INT(o, "result ttlMs", 1000);
        json_object_put(o);
        if (!gone)
            usleep(10000);
    }
    ck_assert_msg(gone, "task %s was still kept past its TTL", id);
    free(id);
    mh_finish(p);
}
END_TEST

START_TEST(unfinished_tasks_per_client_are_limited)
{
    mh_proc *p = mh_spawn("-d", dir, isolation[_i], "--max-tasks", "2", NULL);
    /* Tasks waiting for input are unfinished, with no handler running. */
    char *a = create(p, "confirm_delete", "{}");
    char *b = create(p, "confirm_delete", "{}");
    json_object_put(settle(p, a));
    json_object_put(settle(p, b));
    json_object *o = request(p, "tools/call", "\"name\":\"slow_compute\",\"arguments\":{\"seconds\":600}", TASKS_META);
    MH_ASSERT_ERROR(o, -31000);
    ck_assert_ptr_nonnull(strstr(mh_str(o, "error message"), "--max-tasks"));
    json_object_put(o);
    char params[128];
    snprintf(params, sizeof params, "\"taskId\":\"%s\"", a);
    json_object_put(request(p, "tasks/cancel", params, TASKS_META));
    char *c = create(p, "slow_compute", "{\"seconds\":0}"); /* a finished task no longer counts */
    json_object_put(settle(p, c));
    snprintf(params, sizeof params, "\"taskId\":\"%s\"", b);
    json_object_put(request(p, "tasks/cancel", params, TASKS_META));
    free(a);
    free(b);
    free(c);
    mh_finish(p);
}
END_TEST

START_TEST(input_gathered_before_the_task_seeds_it)
{
    mh_proc *p = mh_spawn("-d", dir, isolation[_i], NULL);
    json_object *o = request(p, "tools/call", "\"name\":\"test_tool_with_task\",\"arguments\":{}", TASKS_META);
    MH_ASSERT_STR(o, "result resultType", "input_required");
    MH_ASSERT_ABSENT(o, "result taskId");
    MH_ASSERT_HAS(o, "result inputRequests user_name");
    json_object_put(o);
    o = request(p, "tools/call",
                "\"name\":\"test_tool_with_task\",\"arguments\":{},\"inputResponses\":{\"user_name\":"
                "{\"action\":\"accept\",\"content\":{\"name\":\"Alice\"}}}",
                TASKS_META);
    MH_ASSERT_STR(o, "result resultType", "task");
    MH_ASSERT_ABSENT(o, "result requestState");
    char *id = strdup(mh_str(o, "result taskId"));
    json_object_put(o);
    o = settle(p, id);
    MH_ASSERT_STR(o, "result status", "completed");
    MH_ASSERT_STR(o, "result result content 0 text", "Hello, Alice, from a task");
    json_object_put(o);
    free(id);
    mh_finish(p);
}
END_TEST

/* Process isolation only: in-process, a crash takes the host down. */
START_TEST(a_crashing_task_fails_and_the_host_keeps_serving)
{
    mh_proc *p = mh_spawn("-d", dir, "--isolation=process", NULL);
    char *id = create(p, "protocol_error_job", "{}");
    json_object *o = settle(p, id);
    MH_ASSERT_STR(o, "result status", "failed");
    MH_ASSERT_INT(o, "result error code", -32603);
    ck_assert_ptr_nonnull(strstr(mh_str(o, "result error message"), "crashed"));
    MH_ASSERT_ABSENT(o, "result result");
    json_object_put(o);
    /* The run ends with a call's log line, the task id as its id. */
    char line[128];
    snprintf(line, sizeof line, "id=%s duration_ms=", id);
    ck_assert_msg(mh_stderr_wait(p, line, MH_TIMEOUT_MS), "no log line for task %s", id);
    char *err = mh_stderr(p);
    const char *at = strstr(err, line);
    ck_assert_ptr_nonnull(at);
    const char *eol = strchr(at, '\n');
    const char *outcome = strstr(at, "outcome=crash");
    ck_assert_msg(outcome && (!eol || outcome < eol), "the task's log line does not say outcome=crash");
    free(err);
    free(id);
    id = create(p, "slow_compute", "{\"seconds\":0}");
    o = settle(p, id);
    MH_ASSERT_STR(o, "result status", "completed");
    json_object_put(o);
    free(id);
    mh_finish(p);
}
END_TEST

/* --lazy-load lists tools from the scan: their task support comes along,
 * and the plugin opened at the first call runs the task. */
START_TEST(lazy_loaded_tools_keep_their_task_support)
{
    mh_proc *p = mh_spawn("-d", dir, "--isolation=none", "--lazy-load", NULL);
    json_object *o = request(p, "tools/list", "", PLAIN_META);
    json_object *tools = mh_at(o, "result tools");
    bool seen = false;
    for (size_t i = 0; i < json_object_array_length(tools); i++) {
        json_object *t = json_object_array_get_idx(tools, i);
        if (strcmp(mh_str(t, "name"), "slow_compute") == 0) {
            MH_ASSERT_STR(t, "execution taskSupport", "optional");
            seen = true;
        }
    }
    ck_assert(seen);
    json_object_put(o);
    char *id = create(p, "slow_compute", "{\"seconds\":0,\"label\":\"lazy\"}");
    o = settle(p, id);
    MH_ASSERT_STR(o, "result result content 0 text", "Computed 'lazy' after 0 s");
    json_object_put(o);
    free(id);
    mh_finish(p);
}
END_TEST

static Suite *tasks_suite(void)
{
    Suite *s = suite_create("tasks");
    TCase *tc = tcase_create("tasks");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_loop_test(tc, task_runs_and_its_result_is_inlined, 0, 2);
    tcase_add_loop_test(tc, input_is_asked_through_the_task, 0, 2);
    tcase_add_loop_test(tc, cancel_ends_the_task_and_is_idempotent, 0, 2);
    tcase_add_loop_test(tc, the_extension_gates_tasks, 0, 2);
    tcase_add_loop_test(tc, a_task_expires_after_its_ttl, 0, 2);
    tcase_add_loop_test(tc, unfinished_tasks_per_client_are_limited, 0, 2);
    tcase_add_loop_test(tc, input_gathered_before_the_task_seeds_it, 0, 2);
    tcase_add_test(tc, a_crashing_task_fails_and_the_host_keeps_serving);
    tcase_add_test(tc, lazy_loaded_tools_keep_their_task_support);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(tasks_suite, mh_global_setup, mh_global_teardown)
