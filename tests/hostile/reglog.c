/* SPDX-License-Identifier: MIT */
/*
** reglog.c: a plugin that logs while it registers, at debug, info and
** warning, through th_server_log: the lines must follow --log-level and
** name the plugin file.
*/
#include <toolhost/plugin.h>

static th_rc reglog(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    return th_call_text(call, "ok");
}

static const th_tool reglog_tool = {
    TH_TOOL_INIT,
    .name = "reglog",
    .description = "Logs at registration time, at three levels.",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = reglog,
};

TH_REGISTER(reglog)
{
    th_server_log(server, TH_LOG_DEBUG, "reglog-debug %d", 1);
    th_server_log(server, TH_LOG_INFO, "reglog-info %s", "two");
    th_server_log(server, TH_LOG_WARNING, "reglog-warning %d", 3);
    return &reglog_tool;
}
