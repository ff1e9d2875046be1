/* SPDX-License-Identifier: MIT */
/*
** printer.c: test plugin printer.so for the MCP integration tests. It writes
** to stdout every way a careless plugin might (printf at registration and in
** the handler, puts, write(1), and a printf left in the buffer until exit);
** all of it must land on stderr, never in the protocol stream.
*/
#include <stdio.h>
#include <unistd.h>

#include <toolhost/plugin.h>

static th_rc printer(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    printf("PRINTER-HANDLER-MARK {\"jsonrpc\":\"2.0\",\"id\":1}\n");
    fflush(stdout);
    puts("PRINTER-PUTS-MARK");
    fflush(stdout);
    static const char raw[] = "PRINTER-WRITE-MARK\n";
    if (write(STDOUT_FILENO, raw, sizeof raw - 1) < 0)
        return th_call_error(call, "write to fd 1 failed");
    printf("PRINTER-UNFLUSHED-MARK\n"); /* flushed only at exit */
    return th_call_text(call, "printed");
}

static const th_tool printer_tool = {
    TH_TOOL_INIT,
    .name = "printer",
    .description = "Print to stdout from the handler, which must not reach the client.",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = printer,
};

TH_REGISTER(printer)
{
    (void)server;
    printf("PRINTER-REGISTER-MARK\n");
    fflush(stdout);
    return &printer_tool;
}
