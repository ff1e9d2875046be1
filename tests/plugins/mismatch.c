/* SPDX-License-Identifier: MIT */
/*
** mismatch.c: test plugin mismatch.so. Its tool is valid but named
** other_tool, not after the file, so the loader refuses it.
*/
#include <toolhost/plugin.h>

static th_rc other(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    return th_call_text(call, "unreachable");
}

static const th_tool other_tool = {
    TH_TOOL_INIT,
    .name = "other_tool",
    .description = "Valid tool whose name does not match its file.",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = other,
};

TH_REGISTER(mismatch)
{
    (void)server;
    return &other_tool;
}
