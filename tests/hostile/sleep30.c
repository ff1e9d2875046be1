/* SPDX-License-Identifier: MIT */
/*
** sleep30.c: hostile plugin whose handler sleeps 30 s, ignoring
** cancellation, then answers.
*/
#include <stdio.h>
#include <unistd.h>

#include <toolhost/plugin.h>

static th_rc sleep30(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    fprintf(stderr, "sleep30: sleeping\n");
    unsigned left = 30;
    while (left)
        left = sleep(left);
    return th_call_text(call, "woke up");
}

static const th_tool sleep30_tool = {
    TH_TOOL_INIT,
    .name = "sleep30",
    .description = "Sleeps 30 seconds, ignoring cancellation.",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = sleep30,
};

TH_REGISTER(sleep30)
{
    (void)server;
    return &sleep30_tool;
}
