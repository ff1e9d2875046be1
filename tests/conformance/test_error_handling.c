/* SPDX-License-Identifier: MIT */
/*
** test_error_handling.c: the conformance suite's test_error_handling fixture
** (scenario tools-call-error): always fails, as a tool result with isError.
*/
#include <toolhost/plugin.h>

static th_rc error_handling(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    /* A tool-level failure, not a protocol error: the host answers with
     * isError: true and this text, which is what the scenario checks. Should
     * the message fail to allocate, the code still makes the result isError. */
    return th_call_error(call, "This tool intentionally returns an error for testing");
}

static const th_tool error_handling_tool = {
    TH_TOOL_INIT,
    .name = "test_error_handling",
    .description = "Tests error response handling",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = error_handling,
};

TH_REGISTER(test_error_handling)
{
    (void)server;
    return &error_handling_tool;
}
