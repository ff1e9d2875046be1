/* SPDX-License-Identifier: MIT */
/*
** abi.c: test plugin abi.so, built as if against a future header: its
** descriptor carries ABI version TH_ABI_VERSION + 1.
*/
#include <toolhost/plugin.h>

static th_rc abi(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    return th_call_text(call, "unreachable");
}

static const th_tool abi_tool = {
    .abi_version = TH_ABI_VERSION + 1,
    .struct_size = sizeof(th_tool),
    .name = "abi",
    .description = "Descriptor from another ABI version.",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = abi,
};

TH_REGISTER(abi)
{
    (void)server;
    return &abi_tool;
}
