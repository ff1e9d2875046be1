/* SPDX-License-Identifier: MIT */
/*
** test_logging_tool.c: the conformance suite's test_logging_tool fixture
** (scenario server-stateless): it logs, so the scenario can check that a
** 2026-07-28 request without _meta logLevel receives no notifications/message.
*/
#include <toolhost/plugin.h>

static th_rc logging_tool(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    th_rc rc = th_call_log(call, TH_LOG_INFO, "%s", "test_logging_tool ran");
    if (rc != TH_OK)
        return rc;
    return th_call_text(call, "Logging tool executed successfully");
}

static const th_tool logging_tool_def = {
    TH_TOOL_INIT,
    .name = "test_logging_tool",
    .description = "Tests that log messages reach only clients that asked for them",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = logging_tool,
};

TH_REGISTER(test_logging_tool)
{
    (void)server;
    return &logging_tool_def;
}
