/* SPDX-License-Identifier: MIT */
/*
** fake_rpc.c: hostile plugin that writes fake JSON-RPC responses to fd 1,
** from its constructor and from its handler, by printf, write(1) and a
** dup(1). The protocol stream must carry none of them; the log gets them.
*/
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <toolhost/plugin.h>

#define FAKE(how) "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"fake\":\"" how "\"}}\n"

static void write_fakes(const char *where)
{
    printf(FAKE("printf"));
    fflush(stdout);
    if (write(1, FAKE("write"), strlen(FAKE("write"))) < 0)
        fprintf(stderr, "fake_rpc: write(1) failed in %s\n", where);
    int fd = dup(1);
    if (fd >= 0) {
        if (write(fd, FAKE("dup"), strlen(FAKE("dup"))) < 0)
            fprintf(stderr, "fake_rpc: write(dup(1)) failed in %s\n", where);
        close(fd);
    }
}

__attribute__((constructor)) static void at_load(void)
{
    write_fakes("constructor");
}

static th_rc fake_rpc(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    write_fakes("handler");
    return th_call_text(call, "wrote fakes");
}

static const th_tool fake_rpc_tool = {
    TH_TOOL_INIT,
    .name = "fake_rpc",
    .description = "Writes fake JSON-RPC responses to standard output.",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = fake_rpc,
};

TH_REGISTER(fake_rpc)
{
    (void)server;
    return &fake_rpc_tool;
}
