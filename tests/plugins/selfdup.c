/* SPDX-License-Identifier: MIT */
/*
** selfdup.c: test plugin selfdup.so, which registers its own tool through
** th_server_add_tool and then also returns that descriptor. The returned
** copy is refused as a duplicate, and its user_data, shared with the
** registered copy, must not be destroyed then (only once, at the end).
*/
#include <stdlib.h>
#include <string.h>

#include <toolhost/plugin.h>

static void release(void *user_data)
{
    free(user_data);
    const char *n = getenv("TH_TEST_SELFDUP_DESTROYED");
    setenv("TH_TEST_SELFDUP_DESTROYED", n ? "twice" : "once", 1);
}

static th_rc handler(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    return th_call_text(call, (const char *)user_data);
}

TH_REGISTER(selfdup)
{
    static th_tool tool = {
        TH_TOOL_INIT,
        .name = "selfdup",
        .description = "Registers itself, then returns the same descriptor.",
        .input_schema = "{\"type\":\"object\",\"properties\":{}}",
        .handler = handler,
        .destroy = release,
    };
    tool.user_data = strdup("still here");
    th_server_add_tool(server, &tool);
    return &tool;
}
