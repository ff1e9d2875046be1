/* SPDX-License-Identifier: MIT */
/*
** test_header_param.c: a fixture for the suite's
** http-custom-header-server-validation scenario (SEP-2243): a string
** argument marked "x-mcp-header", which a 2026-07-28 client mirrors in an
** Mcp-Param-Region header that the HTTP transport checks against the body.
*/
#include <toolhost/plugin.h>

static th_rc header_param(th_call *call, json_object *args, void *user_data)
{
    json_object *region = NULL;
    (void)user_data;
    json_object_object_get_ex(args, "region", &region);
    return th_call_text(call, region ? json_object_get_string(region) : "");
}

static const th_tool header_param_def = {
    TH_TOOL_INIT,
    .name = "test_header_param",
    .description = "Echoes its region argument, which clients also send as the Mcp-Param-Region header",
    .input_schema = "{\"type\":\"object\",\"properties\":{\"region\":{\"type\":\"string\","
                    "\"x-mcp-header\":\"Region\"}},\"required\":[\"region\"]}",
    .handler = header_param,
};

TH_REGISTER(test_header_param)
{
    (void)server;
    return &header_param_def;
}
