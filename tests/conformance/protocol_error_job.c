/* SPDX-License-Identifier: MIT */
/*
** protocol_error_job.c: protocol_error_job, the tasks fixture whose call
** ends in a protocol-level error rather than a tool error: it crashes its
** worker (process isolation, the default), so its task fails. Alone in
** its module, so the crash takes no other tool's worker with it.
*/
#include <stdlib.h>

#include <toolhost/plugin.h>

static th_rc protocol_error_job(th_call *call, json_object *args, void *user_data)
{
    (void)call;
    (void)args;
    (void)user_data;
    abort();
}

static const th_tool tool = {
    TH_TOOL_INIT,
    .name = "protocol_error_job",
    .description = "Crashes its worker, so its task fails (a protocol-level error)",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = protocol_error_job,
    .task_support = TH_TASK_OPTIONAL,
};

TH_REGISTER(protocol_error_job)
{
    (void)server;
    return &tool;
}
