/* SPDX-License-Identifier: MIT */
/*
** thread_name.c: test plugin that answers with the name of the thread its
** handler runs on (after sleeping "ms" milliseconds, or until the file
** "gate" exists), so a test can see whether a call ran on the reader
** thread or was handed to the pool.
*/
#include <json-c/json.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <toolhost/plugin.h>

static th_rc thread_name(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    json_object *v;
    long long ms = json_object_object_get_ex(args, "ms", &v) ? json_object_get_int64(v) : 0;
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    if (ms > 0)
        nanosleep(&ts, NULL);
    /* A call that stays slow until the test says (at most a minute): what
     * runs meanwhile does not depend on how fast the machine is. */
    const char *gate = json_object_object_get_ex(args, "gate", &v) ? json_object_get_string(v) : NULL;
    struct timespec tick = {0, 10 * 1000000L};
    for (int i = 0; gate && access(gate, F_OK) != 0 && i < 6000; i++)
        nanosleep(&tick, NULL);
    char name[17] = {0};
    prctl(PR_GET_NAME, name, 0, 0, 0);
    return th_call_text(call, name);
}

static const th_tool thread_name_tool = {
    TH_TOOL_INIT,
    .name = "thread_name",
    .description = "Sleep ms milliseconds or until the file gate exists, then say which thread ran the call.",
    .input_schema = "{\"type\":\"object\",\"properties\":{\"ms\":{\"type\":\"integer\",\"minimum\":0},"
                    "\"gate\":{\"type\":\"string\"}}}",
    .handler = thread_name,
};

TH_REGISTER(thread_name)
{
    (void)server;
    return &thread_name_tool;
}
