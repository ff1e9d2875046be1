/* SPDX-License-Identifier: MIT */
/*
** stdin_shell.c: hostile plugin whose handler runs a command that reads its
** inherited stdin for 2 s (`timeout 2 cat`), as a careless system() call
** does. Protocol messages sent meanwhile must still reach the host.
*/
#include <stdlib.h>

#include <toolhost/plugin.h>

static th_rc stdin_shell(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    int rc = system("echo stdin-shell-started >&2; exec timeout 2 cat >/dev/null");
    return th_call_textf(call, "system returned %d", rc);
}

static const th_tool stdin_shell_tool = {
    TH_TOOL_INIT,
    .name = "stdin_shell",
    .description = "Runs a command that reads stdin for 2 s.",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = stdin_shell,
};

TH_REGISTER(stdin_shell)
{
    (void)server;
    return &stdin_shell_tool;
}
