/* SPDX-License-Identifier: MIT */
/*
** staged.c: test plugin staged.so. It adds the tool staged_extra with heap
** user_data, then ends as TH_TEST_STAGED_MODE says: "null" returns NULL,
** "bad" an invalid descriptor, "only" th_server_added_only(), "none"
** th_server_added_only() without adding anything first. destroy counts its
** calls in TH_TEST_STAGED_DESTROYED for the test to read.
*/
#include <stdlib.h>
#include <string.h>

#include <toolhost/plugin.h>

static void release(void *user_data)
{
    free(user_data);
    const char *n = getenv("TH_TEST_STAGED_DESTROYED");
    setenv("TH_TEST_STAGED_DESTROYED", n ? "twice" : "once", 1);
}

static th_rc handler(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    return th_call_text(call, (const char *)user_data);
}

static const th_tool bad = {
    TH_TOOL_INIT,
    .name = "staged",
    .description = "Too short",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = handler,
};

TH_REGISTER(staged)
{
    const char *mode = getenv("TH_TEST_STAGED_MODE");
    mode = mode ? mode : "";
    if (strcmp(mode, "none") == 0)
        return th_server_added_only(server);
    th_tool extra = {
        TH_TOOL_INIT,
        .name = "staged_extra",
        .description = "Added with th_server_add_tool before the return.",
        .input_schema = "{\"type\":\"object\",\"properties\":{}}",
        .handler = handler,
        .user_data = strdup("staged extra"),
        .destroy = release,
    };
    if (th_server_add_tool(server, &extra) != TH_OK)
        release(extra.user_data);
    if (strcmp(mode, "only") == 0)
        return th_server_added_only(server);
    if (strcmp(mode, "bad") == 0)
        return &bad;
    return NULL;
}
