/* SPDX-License-Identifier: MIT */
/*
** slow_start.c: a plugin whose register function takes a second, so its
** worker takes that long to start: a call's deadline must not count it
** (the start has --load-timeout of its own).
*/
#include <time.h>

#include <toolhost/plugin.h>

static th_rc slow_start(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    return th_call_text(call, "started");
}

static const th_tool slow_start_tool = {
    TH_TOOL_INIT,
    .name = "slow_start",
    .description = "Registers slowly, answers at once.",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = slow_start,
};

TH_REGISTER(slow_start)
{
    (void)server;
    struct timespec ts = {1, 0};
    while (nanosleep(&ts, &ts) != 0)
        ;
    return &slow_start_tool;
}
