/* SPDX-License-Identifier: MIT */
/*
** dup_b.c: test plugin dup_b.so, a valid tool whose name dup_a.so has
** already taken when the two are loaded in sorted order.
*/
#include <toolhost/plugin.h>

static th_rc dup(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    return th_call_text(call, "dup_b from dup_b");
}

static const th_tool dup_b_tool = {
    TH_TOOL_INIT,
    .name = "dup_b",
    .description = "Tool dup_b, from dup_b.so.",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = dup,
};

TH_REGISTER(dup_b)
{
    (void)server;
    return &dup_b_tool;
}
