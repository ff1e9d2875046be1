/* SPDX-License-Identifier: MIT */
/*
** many_tools.c: plugin that adds 10,000 tools, t0 .. t9999, each answering
** its own name, plus itself.
*/
#include <stdio.h>

#include <toolhost/plugin.h>

#define MANY 10000

static th_rc answer_name(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    return th_call_textf(call, "tool %s", th_call_tool_name(call));
}

static const th_tool many_tools_tool = {
    TH_TOOL_INIT,
    .name = "many_tools",
    .description = "Adds 10,000 tools to the host.",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = answer_name,
};

TH_REGISTER(many_tools)
{
    for (int i = 0; i < MANY; i++) {
        char name[16];
        snprintf(name, sizeof name, "t%d", i);
        th_tool t = {
            TH_TOOL_INIT,
            .name = name,
            .description = "One of 10,000 tools.",
            .input_schema = "{\"type\":\"object\",\"properties\":{}}",
            .handler = answer_name,
        };
        if (th_server_add_tool(server, &t) != TH_OK) {
            fprintf(stderr, "many_tools: %s refused: %s\n", name, th_server_errmsg(server));
            return NULL;
        }
    }
    return &many_tools_tool;
}
