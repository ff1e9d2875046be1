/* SPDX-License-Identifier: MIT */
/*
** noentry.c: test plugin noentry.so, which exports a valid descriptor under
** a misspelled entry point, so the expected register_noentry_tool is absent.
*/
#include <toolhost/plugin.h>

static th_rc noentry(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    return th_call_text(call, "unreachable");
}

static const th_tool noentry_tool = {
    TH_TOOL_INIT,
    .name = "noentry",
    .description = "Valid tool behind a misspelled entry point.",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = noentry,
};

/* "tools", not "tool": the host must not guess. */
TH_EXPORT const th_tool *register_noentry_tools(th_server *server);
TH_EXPORT const th_tool *register_noentry_tools(th_server *server)
{
    (void)server;
    return &noentry_tool;
}
