/* SPDX-License-Identifier: MIT */
/*
** task_tools.c: the conformance suite's fixture tools of the tasks
** extension (tasks-* scenarios, SEP-2663): greet runs synchronously, the
** others declare task support. protocol_error_job lives in its own module
** (protocol_error_job.c), since its crash takes its worker down.
*/
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <time.h>

#include <toolhost/plugin.h>

#define NO_ARGS "{\"type\":\"object\",\"properties\":{}}"
#define CONFIRM_SCHEMA "{\"type\":\"object\",\"properties\":{\"confirm\":{\"type\":\"boolean\"}},\"required\":[\"confirm\"]}"
#define NAME_SCHEMA "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}},\"required\":[\"name\"]}"

/* Sleep MS in short steps; false when the call was cancelled meanwhile. */
static bool nap(th_call *call, long long ms)
{
    const struct timespec step = {.tv_sec = 0, .tv_nsec = 5 * 1000000L};
    for (long long waited = 0; waited < ms; waited += 5) {
        if (th_call_cancelled(call))
            return false;
        nanosleep(&step, NULL);
    }
    return !th_call_cancelled(call);
}

static const char *str_arg(json_object *args, const char *key, const char *fallback)
{
    json_object *v;
    return json_object_object_get_ex(args, key, &v) && json_object_is_type(v, json_type_string)
               ? json_object_get_string(v)
               : fallback;
}

static th_rc greet(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    return th_call_textf(call, "Hello, %s!", str_arg(args, "name", "stranger"));
}

static th_rc slow_compute(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    json_object *v;
    double seconds = json_object_object_get_ex(args, "seconds", &v) ? json_object_get_double(v) : 1;
    /* Progress at the start and the end (sent only when the call, or the
     * task, came with a progressToken). */
    th_call_progress(call, 0, seconds, "started");
    if (!nap(call, llround(seconds * 1000)))
        return TH_ERR_CANCELLED;
    th_call_progress(call, seconds, seconds, "done");
    return th_call_textf(call, "Computed '%s' after %g s", str_arg(args, "label", "job"), seconds);
}

static th_rc failing_job(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    if (!nap(call, 1000))
        return TH_ERR_CANCELLED;
    return th_call_error(call, "failing_job failed, as it always does");
}

static th_rc confirm_delete(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    const char *file = str_arg(args, "filename", "file");
    json_object *a = NULL, *content, *v;
    th_rc rc = th_call_elicit(call, "confirm", "Delete this file?", CONFIRM_SCHEMA, &a);
    if (rc != TH_OK)
        return rc;
    bool yes = json_object_object_get_ex(a, "content", &content) && json_object_object_get_ex(content, "confirm", &v) &&
               json_object_get_boolean(v);
    json_object_put(a);
    return th_call_textf(call, yes ? "Deleted %s" : "Kept %s", file);
}

/* Two questions at once: both are asked before the handler stops, so the
 * task waits for two answers. */
static th_rc multi_input(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    json_object *a = NULL, *b = NULL;
    th_rc ra = th_call_elicit(call, "first", "First name?", NAME_SCHEMA, &a);
    th_rc rb = th_call_elicit(call, "second", "Second name?", NAME_SCHEMA, &b);
    th_rc rc = ra != TH_OK ? ra : rb;
    if (rc == TH_OK)
        rc = th_call_text(call, "Both inputs received");
    json_object_put(a);
    json_object_put(b);
    return rc;
}

/* Asks for a name (a synchronous input-required round), then, once the
 * answer came, runs as a task that greets the name. */
static th_rc with_task(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    json_object *a = NULL, *content, *v;
    th_rc rc = th_call_elicit(call, "user_name", "What is your name?", NAME_SCHEMA, &a);
    if (rc != TH_OK)
        return rc;
    const char *name = json_object_object_get_ex(a, "content", &content) &&
                               json_object_object_get_ex(content, "name", &v) && json_object_is_type(v, json_type_string)
                           ? json_object_get_string(v)
                           : "stranger";
    rc = nap(call, 200) ? th_call_textf(call, "Hello, %s, from a task", name) : TH_ERR_CANCELLED;
    json_object_put(a);
    return rc;
}

static const th_tool tools[] = {
    {TH_TOOL_INIT, .name = "greet", .description = "Says hello to NAME, synchronously",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}}}", .handler = greet},
    {TH_TOOL_INIT, .name = "slow_compute", .description = "Sleeps SECONDS, then reports LABEL (with progress); may run as a task",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"seconds\":{\"type\":\"number\",\"minimum\":0,"
                     "\"maximum\":3600},\"label\":{\"type\":\"string\"}}}",
     .handler = slow_compute, .task_support = TH_TASK_OPTIONAL},
    {TH_TOOL_INIT, .name = "failing_job", .description = "Fails with a tool error after a second; runs only as a task",
     .input_schema = NO_ARGS, .handler = failing_job, .task_support = TH_TASK_REQUIRED},
    {TH_TOOL_INIT, .name = "confirm_delete", .description = "Asks the client to confirm before it deletes FILENAME",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"filename\":{\"type\":\"string\"}}}",
     .handler = confirm_delete, .task_support = TH_TASK_OPTIONAL},
    {TH_TOOL_INIT, .name = "multi_input", .description = "Asks the client two questions at once",
     .input_schema = NO_ARGS, .handler = multi_input, .task_support = TH_TASK_OPTIONAL},
    {TH_TOOL_INIT, .name = "test_tool_with_task",
     .description = "Asks for a name, then runs as a task that greets it", .input_schema = NO_ARGS,
     .handler = with_task, .task_support = TH_TASK_REQUIRED | TH_TASK_AFTER_INPUT},
};

TH_REGISTER(task_tools)
{
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++)
        if (th_server_add_tool(server, &tools[i]) != TH_OK)
            return NULL;
    return th_server_added_only(server);
}
