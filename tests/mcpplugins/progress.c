/* SPDX-License-Identifier: MIT */
/*
** progress.c: test plugin progress.so for the MCP integration tests. It
** reports progress 1..steps through th_call_progress(), with or without a
** total and a message, then returns one text block.
*/
#include <stdbool.h>
#include <stdio.h>

#include <toolhost/plugin.h>

static th_rc progress(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    json_object *v;
    int steps = 3;
    bool with_total = true, with_message = true;
    if (json_object_object_get_ex(args, "steps", &v))
        steps = json_object_get_int(v);
    if (json_object_object_get_ex(args, "with_total", &v))
        with_total = json_object_get_boolean(v);
    if (json_object_object_get_ex(args, "with_message", &v))
        with_message = json_object_get_boolean(v);
    for (int i = 1; i <= steps; i++) {
        char msg[64];
        snprintf(msg, sizeof msg, "step %d of %d", i, steps);
        th_rc rc = th_call_progress(call, i, with_total ? steps : -1, with_message ? msg : NULL);
        if (rc != TH_OK)
            return rc;
    }
    return th_call_textf(call, "progress: %d steps", steps);
}

static const th_tool progress_tool = {
    TH_TOOL_INIT,
    .name = "progress",
    .description = "Report progress a few times, then finish.",
    .input_schema = "{\"type\":\"object\",\"properties\":{"
                    "\"steps\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":100},"
                    "\"with_total\":{\"type\":\"boolean\"},"
                    "\"with_message\":{\"type\":\"boolean\"}}}",
    .handler = progress,
};

TH_REGISTER(progress)
{
    (void)server;
    return &progress_tool;
}
