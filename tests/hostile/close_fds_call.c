/* SPDX-License-Identifier: MIT */
/*
** close_fds_call.c: hostile plugin whose handler closes every descriptor
** from 3 up while the host serves, the protocol's among them. The host must
** see the closed descriptors (POLLNVAL) and end, not spin or hang.
** Stops below 1000: valgrind keeps its own descriptors above that.
*/
#include <unistd.h>

#include <toolhost/plugin.h>

static th_rc close_fds_call(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    for (int fd = 3; fd < 1000; fd++)
        close(fd);
    return th_call_text(call, "closed");
}

static const th_tool close_fds_call_tool = {
    TH_TOOL_INIT,
    .name = "close_fds_call",
    .description = "Closes every descriptor from 3 up when called.",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = close_fds_call,
};

TH_REGISTER(close_fds_call)
{
    (void)server;
    return &close_fds_call_tool;
}
