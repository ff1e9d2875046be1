/* SPDX-License-Identifier: MIT */
/*
** failer.c: test plugin failer.so for the MCP integration tests. "failer"
** reports a tool error with th_call_error() (and may also return
** TH_ERR_TOOL); "failer_bare", registered through the server handle, returns
** TH_ERR_TOOL without any message, so the host must write one.
*/
#include <stdbool.h>

#include <toolhost/plugin.h>

static th_rc failer(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    json_object *v;
    const char *reason = "no reason";
    bool also_fail = false;
    if (json_object_object_get_ex(args, "reason", &v))
        reason = json_object_get_string(v);
    if (json_object_object_get_ex(args, "also_fail", &v))
        also_fail = json_object_get_boolean(v);
    th_call_error(call, "failer could not comply: %s", reason);
    return also_fail ? TH_ERR_TOOL : TH_OK;
}

static th_rc failer_bare(th_call *call, json_object *args, void *user_data)
{
    (void)call;
    (void)args;
    (void)user_data;
    return TH_ERR_TOOL;
}

static const th_tool failer_tool = {
    TH_TOOL_INIT,
    .name = "failer",
    .description = "Always fail with a readable message.",
    .input_schema = "{\"type\":\"object\",\"properties\":{"
                    "\"reason\":{\"type\":\"string\"},\"also_fail\":{\"type\":\"boolean\"}}}",
    .handler = failer,
};

TH_REGISTER(failer)
{
    th_tool bare = {
        TH_TOOL_INIT,
        .name = "failer_bare",
        .description = "Always fail without saying why.",
        .input_schema = "{\"type\":\"object\",\"properties\":{}}",
        .handler = failer_bare,
    };
    if (th_server_add_tool(server, &bare) != TH_OK)
        return NULL;
    return &failer_tool;
}
