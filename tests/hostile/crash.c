/* SPDX-License-Identifier: MIT */
/*
** crash.c: hostile plugin whose handler faults: a read through a near-NULL
** pointer (a member of a NULL struct), or with "overflow": true, unbounded
** recursion. The host dies by SIGSEGV, but stderr must name the tool.
*/
#include <stdbool.h>
#include <stdint.h>

#include <toolhost/plugin.h>

static volatile int sink;
/* Volatile, so the compiler cannot see the fault or the endless recursion. */
static volatile uintptr_t bad_address = 8;
static volatile long depth_limit = -1;

static int recurse(volatile char *up, long depth)
{
    volatile char frame[1024];
    frame[0] = up ? up[0] : 0;
    if (depth == depth_limit)
        return 0;
    return recurse(frame, depth + 1) + frame[1];
}

static th_rc crash(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    json_object *v;
    if (json_object_object_get_ex(args, "overflow", &v) && json_object_get_boolean(v))
        sink = recurse(0, 0);
    volatile int *p = (volatile int *)bad_address;
    sink = *p;
    return th_call_text(call, "survived");
}

static const th_tool crash_tool = {
    TH_TOOL_INIT,
    .name = "crash",
    .description = "Dereferences a near-NULL pointer.",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = crash,
};

TH_REGISTER(crash)
{
    (void)server;
    return &crash_tool;
}
