/* SPDX-License-Identifier: MIT */
/*
** dup_a.c: test plugin dup_a.so. Besides its own tool it registers dup_b
** through the server handle, so that dup_b.so, loaded after it, collides.
*/
#include <toolhost/plugin.h>

static th_rc dup(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    return th_call_text(call, (const char *)user_data);
}

static const th_tool dup_a_tool = {
    TH_TOOL_INIT,
    .name = "dup_a",
    .description = "Tool dup_a, from dup_a.so.",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = dup,
    .user_data = "dup_a",
};

static const th_tool dup_b_from_a = {
    TH_TOOL_INIT,
    .name = "dup_b",
    .description = "Tool dup_b, registered first by dup_a.so.",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = dup,
    .user_data = "dup_b from dup_a",
};

TH_REGISTER(dup_a)
{
    if (th_server_add_tool(server, &dup_b_from_a) != TH_OK)
        return NULL;
    return &dup_a_tool;
}
