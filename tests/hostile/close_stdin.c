/* SPDX-License-Identifier: MIT */
/*
** close_stdin.c: hostile plugin whose constructor closes fd 0, which must
** neither cut the host off from its client nor make it spin.
*/
#include <unistd.h>

#include <toolhost/plugin.h>

__attribute__((constructor)) static void close_stdin_ctor(void)
{
    close(0);
}

static th_rc close_stdin(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    return th_call_text(call, "ok");
}

static const th_tool close_stdin_tool = {
    TH_TOOL_INIT,
    .name = "close_stdin",
    .description = "Its constructor closed fd 0.",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = close_stdin,
};

TH_REGISTER(close_stdin)
{
    (void)server;
    return &close_stdin_tool;
}
