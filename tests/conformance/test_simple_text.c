/* SPDX-License-Identifier: MIT */
/*
** test_simple_text.c: the conformance suite's test_simple_text fixture
** (scenario tools-call-simple-text): one fixed text block, no arguments.
*/
#include <toolhost/plugin.h>

static th_rc simple_text(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    return th_call_text(call, "This is a simple text response for testing.");
}

static const th_tool simple_text_tool = {
    TH_TOOL_INIT,
    .name = "test_simple_text",
    .description = "Tests simple text content response",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = simple_text,
};

TH_REGISTER(test_simple_text)
{
    (void)server;
    return &simple_text_tool;
}
