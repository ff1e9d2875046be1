/* SPDX-License-Identifier: MIT */
/*
** test_embedded_resource.c: the conformance suite's test_embedded_resource
** fixture (scenario tools-call-embedded-resource): one embedded text resource.
*/
#include <toolhost/plugin.h>

static th_rc embedded_resource(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    return th_call_resource_text(call, "test://embedded-resource", "text/plain",
                                 "This is an embedded resource content.");
}

static const th_tool embedded_resource_tool = {
    TH_TOOL_INIT,
    .name = "test_embedded_resource",
    .description = "Tests embedded resource content response",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = embedded_resource,
};

TH_REGISTER(test_embedded_resource)
{
    (void)server;
    return &embedded_resource_tool;
}
