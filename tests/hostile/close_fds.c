/* SPDX-License-Identifier: MIT */
/*
** close_fds.c: hostile plugin whose constructor closes every descriptor
** from 3 up (as daemonising code does), the host's own among them. The
** host must notice and end, not spin. Stops below 1000: valgrind keeps its
** own descriptors above that.
*/
#include <unistd.h>

#include <toolhost/plugin.h>

__attribute__((constructor)) static void close_fds_ctor(void)
{
    for (int fd = 3; fd < 1000; fd++)
        close(fd);
}

static th_rc close_fds(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    return th_call_text(call, "ok");
}

static const th_tool close_fds_tool = {
    TH_TOOL_INIT,
    .name = "close_fds",
    .description = "Its constructor closed every descriptor from 3 up.",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = close_fds,
};

TH_REGISTER(close_fds)
{
    (void)server;
    return &close_fds_tool;
}
