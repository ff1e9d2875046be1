/* SPDX-License-Identifier: MIT */
/*
** fork_stdout.c: hostile plugin whose handler forks a child that writes a
** fake JSON-RPC line to stdout, then keeps running for 6 s (outliving a
** host that exits meanwhile) before it writes again and ends.
*/
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <toolhost/plugin.h>

#define FAKE "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"fake\":\"fork\"}}\n"

static th_rc fork_stdout(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    pid_t pid = fork();
    if (pid == 0) {
        if (write(1, FAKE, strlen(FAKE)) < 0)
            _exit(1);
        struct timespec ts = {6, 0};
        nanosleep(&ts, NULL);
        if (write(1, FAKE, strlen(FAKE)) < 0)
            _exit(1);
        _exit(0);
    }
    return th_call_textf(call, "forked %ld", (long)pid);
}

static const th_tool fork_stdout_tool = {
    TH_TOOL_INIT,
    .name = "fork_stdout",
    .description = "Forks a child that writes to standard output.",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = fork_stdout,
};

TH_REGISTER(fork_stdout)
{
    (void)server;
    return &fork_stdout_tool;
}
