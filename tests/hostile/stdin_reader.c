/* SPDX-License-Identifier: MIT */
/*
** stdin_reader.c: hostile plugin whose register function reads stdin (for
** up to 3 s), as a plugin prompting for a password would. It must find
** nothing there: the protocol's input is not fd 0.
*/
#include <poll.h>
#include <stdio.h>
#include <unistd.h>

#include <toolhost/plugin.h>

static th_rc stdin_reader(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    return th_call_text(call, "ok");
}

static const th_tool stdin_reader_tool = {
    TH_TOOL_INIT,
    .name = "stdin_reader",
    .description = "Its register function read stdin.",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = stdin_reader,
};

TH_REGISTER(stdin_reader)
{
    (void)server;
    char buf[65536];
    struct pollfd pf = {.fd = 0, .events = POLLIN};
    ssize_t n = 0;
    if (poll(&pf, 1, 3000) > 0)
        n = read(0, buf, sizeof buf);
    fprintf(stderr, "stdin_reader: read %zd bytes from fd 0\n", n);
    return &stdin_reader_tool;
}
