/*
** thread_name.c: test plugin that answers with the name of the thread its
** handler runs on (after sleeping "ms" milliseconds), so a test can see
** whether a call ran on the reader thread or was handed to the pool.
*/
#include <json-c/json.h>
#include <sys/prctl.h>
#include <time.h>

#include <toolhost/plugin.h>

static th_rc thread_name(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    json_object *v;
    long long ms = json_object_object_get_ex(args, "ms", &v) ? json_object_get_int64(v) : 0;
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    if (ms > 0)
        nanosleep(&ts, NULL);
    char name[17] = {0};
    prctl(PR_GET_NAME, name, 0, 0, 0);
    return th_call_text(call, name);
}

static const th_tool thread_name_tool = {
    TH_TOOL_INIT,
    .name = "thread_name",
    .description = "Sleep ms milliseconds, then say which thread ran the call.",
    .input_schema = "{\"type\":\"object\",\"properties\":{\"ms\":{\"type\":\"integer\",\"minimum\":0}}}",
    .handler = thread_name,
};

TH_REGISTER(thread_name)
{
    (void)server;
    return &thread_name_tool;
}
