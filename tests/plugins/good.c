/* SPDX-License-Identifier: MIT */
/*
** good.c: test plugin good.so, a valid handler tool. Its handler answers
** with its user_data and the "text" argument, so a test can call it through
** the registry and see that the loaded code is still mapped.
*/
#include <toolhost/plugin.h>

static th_rc good(th_call *call, json_object *args, void *user_data)
{
    json_object *text;
    if (!json_object_object_get_ex(args, "text", &text))
        return th_call_error(call, "argument 'text' is missing");
    return th_call_textf(call, "%s: %s", (const char *)user_data, json_object_get_string(text));
}

static const th_tool good_tool = {
    TH_TOOL_INIT,
    .name = "good",
    .title = "Good",
    .description = "A well-formed test tool that echoes its text argument.",
    .input_schema = "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},"
                    "\"required\":[\"text\"]}",
    .handler = good,
    .user_data = "good says",
};

TH_REGISTER(good)
{
    (void)server;
    return &good_tool;
}
