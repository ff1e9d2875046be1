/* SPDX-License-Identifier: MIT */
/*
** logger.c: test plugin logger.so for the MCP integration tests. It logs
** one line at every level through th_call_log(), tagged so a test can find
** each line on stdout (notifications/message) or on stderr.
*/
#include <toolhost/plugin.h>

static const char *const level_names[] = {"debug", "info", "notice", "warning",
                                          "error", "critical", "alert", "emergency"};

static th_rc logger(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    json_object *v;
    const char *tag = "-";
    if (json_object_object_get_ex(args, "tag", &v))
        tag = json_object_get_string(v);
    for (int l = TH_LOG_DEBUG; l <= TH_LOG_EMERGENCY; l++)
        th_call_log(call, (th_log_level)l, "logger[%s] %s", tag, level_names[l]);
    return th_call_text(call, "logged 8 lines");
}

static const th_tool logger_tool = {
    TH_TOOL_INIT,
    .name = "logger",
    .description = "Log one message at every level, then finish.",
    .input_schema = "{\"type\":\"object\",\"properties\":{\"tag\":{\"type\":\"string\"}}}",
    .handler = logger,
};

TH_REGISTER(logger)
{
    (void)server;
    return &logger_tool;
}
