/* SPDX-License-Identifier: MIT */
/*
** addMemory.c: test plugin addMemory.so. Its tool name matches the file but
** breaks the name pattern (uppercase), so the registry refuses it.
*/
#include <toolhost/plugin.h>

static th_rc add_memory(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    return th_call_text(call, "unreachable");
}

static const th_tool add_memory_tool = {
    TH_TOOL_INIT,
    .name = "addMemory",
    .description = "Camel-case name that the registry must refuse.",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = add_memory,
};

TH_REGISTER(addMemory)
{
    (void)server;
    return &add_memory_tool;
}
