/* SPDX-License-Identifier: MIT */
/*
** badregex.c: test plugin badregex.so, whose input schema has a pattern that
** is not a regular expression: the host must refuse it at registration.
*/
#include <toolhost/plugin.h>

static th_rc handler(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    return th_call_text(call, "never called");
}

static const th_tool tool = {
    TH_TOOL_INIT,
    .name = "badregex",
    .description = "Has a pattern that does not compile.",
    .input_schema = "{\"type\":\"object\",\"properties\":{\"s\":{\"type\":\"string\",\"pattern\":\"([a-z\"}}}",
    .handler = handler,
};

TH_REGISTER(badregex)
{
    (void)server;
    return &tool;
}
