/* SPDX-License-Identifier: MIT */
/*
** leak.c: careless plugin whose handler keeps 1 MiB more on every call
** (malloc'd, touched so it is resident, never freed). The blocks stay
** chained from a global so a leak checker at exit sees them reachable:
** the test measures growth, not a sanitizer report.
*/
#include <stdlib.h>
#include <string.h>

#include <toolhost/plugin.h>

#define LEAK_BYTES (1024 * 1024)

static void *volatile kept;

static th_rc leak(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    void **p = malloc(LEAK_BYTES);
    if (!p)
        return th_call_text(call, "out of memory");
    memset(p, 0x5a, LEAK_BYTES);
    *p = kept;
    kept = p;
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
