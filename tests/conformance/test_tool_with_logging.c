/* SPDX-License-Identifier: MIT */
/*
** test_tool_with_logging.c: the conformance suite's test_tool_with_logging
** fixture (scenario tools-call-with-logging): three info-level log messages
** about 50 ms apart during the call, then a confirming text block.
*/
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include <toolhost/plugin.h>

static const char *const messages[] = {
    "Tool execution started",
    "Tool processing data",
    "Tool execution completed",
};

/* The pause between messages: the scenario wants them spread over the call
 * so a client proves it handles notifications while a request is pending. */
static const struct timespec pause_between = {.tv_sec = 0, .tv_nsec = 50 * 1000 * 1000};

static th_rc tool_with_logging(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    for (size_t i = 0; i < sizeof messages / sizeof messages[0]; i++) {
        if (i > 0)
            nanosleep(&pause_between, NULL);
        if (th_call_cancelled(call))
            return TH_ERR_CANCELLED;
        th_rc rc = th_call_log(call, TH_LOG_INFO, "%s", messages[i]);
        if (rc != TH_OK)
            return rc;
    }
    return th_call_text(call, "Tool with logging executed successfully");
}

static const th_tool tool_with_logging_tool = {
    TH_TOOL_INIT,
    .name = "test_tool_with_logging",
    .description = "Tests tool that emits log messages during execution",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = tool_with_logging,
};

TH_REGISTER(test_tool_with_logging)
{
    (void)server;
    return &tool_with_logging_tool;
}
