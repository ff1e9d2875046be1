/* SPDX-License-Identifier: MIT */
/*
** crash_destroy.c: hostile plugin whose tool works but whose destroy
** callback (run when the host, or its worker, lets go of the tool at exit)
** faults.
*/
#include <stdint.h>
#include <stdio.h>

#include <toolhost/plugin.h>

static volatile int sink;
static volatile uintptr_t bad_address = 8;

static void crash_on_destroy(void *user_data)
{
    (void)user_data;
    fprintf(stderr, "crash_destroy: destroying\n");
    sink = *(volatile int *)bad_address;
}

static th_rc crash_destroy(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    return th_call_text(call, "fine until destroy");
}

static const th_tool crash_destroy_tool = {
    TH_TOOL_INIT,
    .name = "crash_destroy",
    .description = "Works, but its destroy callback crashes.",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = crash_destroy,
    .destroy = crash_on_destroy,
};

TH_REGISTER(crash_destroy)
{
    (void)server;
    return &crash_destroy_tool;
}
