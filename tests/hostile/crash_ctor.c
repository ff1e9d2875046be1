/* SPDX-License-Identifier: MIT */
/*
** crash_ctor.c: hostile plugin whose constructor faults (a read through a
** near-NULL pointer) as soon as it is opened. The scanner must refuse it,
** naming it and the signal, and the host start with the others.
*/
#include <stdint.h>

#include <toolhost/plugin.h>

static volatile int sink;
static volatile uintptr_t bad_address = 8;

__attribute__((constructor)) static void crash_ctor_init(void)
{
    sink = *(volatile int *)bad_address;
}

static th_rc crash_ctor(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    return th_call_text(call, "unreachable");
}

static const th_tool crash_ctor_tool = {
    TH_TOOL_INIT,
    .name = "crash_ctor",
    .description = "Its constructor crashed before this could be served.",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = crash_ctor,
};

TH_REGISTER(crash_ctor)
{
    (void)server;
    return &crash_ctor_tool;
}
