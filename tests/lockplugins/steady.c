/* SPDX-License-Identifier: MIT */
/*
** steady.c: test plugin steady.so for the lock tests: one tool that never
** changes, to show that a plugin the lock pins keeps serving beside one
** that drifted, and to be the plugin added after a lock was written.
*/
#include <toolhost/plugin.h>

static th_rc steady(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    return th_call_text(call, "steady served");
}

static const th_tool steady_tool = {
    TH_TOOL_INIT,
    .name = "steady",
    .description = "Answer with a word; this plugin never changes.",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = steady,
};

TH_REGISTER(steady)
{
    (void)server;
    return &steady_tool;
}
