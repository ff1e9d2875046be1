/* SPDX-License-Identifier: MIT */
/*
** refused.c: test plugin refused.so, whose returned descriptor breaks a rule
** (description too short) and owns heap user_data. The host must release it
** through destroy, since the plugin never learns of the refusal; destroy
** leaves a mark in the environment for the test to see after dlclose.
*/
#include <stdlib.h>

#include <toolhost/plugin.h>

static void release(void *user_data)
{
    free(user_data);
    setenv("TH_TEST_REFUSED_DESTROYED", "yes", 1);
}

static th_rc handler(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    return th_call_text(call, "never called");
}

TH_REGISTER(refused)
{
    (void)server;
    static th_tool tool = {
        TH_TOOL_INIT,
        .name = "refused",
        .description = "Too short",
        .input_schema = "{\"type\":\"object\",\"properties\":{}}",
        .handler = handler,
        .destroy = release,
    };
    tool.user_data = malloc(64);
    return &tool;
}
