/*
** leak.c: careless plugin whose handler leaks 1 MiB per call (malloc'd,
** touched so it is resident, never freed).
*/
#include <stdlib.h>
#include <string.h>

#include <toolhost/plugin.h>

#define LEAK_BYTES (1024 * 1024)

char *volatile leaked;

static th_rc leak(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    char *p = malloc(LEAK_BYTES);
    if (p)
        memset(p, 0x5a, LEAK_BYTES);
    /* Stored through a volatile global so the compiler cannot drop the
     * allocation; the next call overwrites it, so the block is lost. */
    leaked = p;
    return th_call_text(call, "leaked 1 MiB");
}

static const th_tool leak_tool = {
    TH_TOOL_INIT,
    .name = "leak",
    .description = "Leaks a mebibyte on every call.",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = leak,
};

TH_REGISTER(leak)
{
    (void)server;
    return &leak_tool;
}
