/* SPDX-License-Identifier: MIT */
/*
** three.c: test plugin three.so, which registers three tools: three_a
** through the server handle (valid, with heap user_data the host must free
** through destroy), three_b through the handle (description too short, so
** refused), and three, the descriptor it returns. It checks what the server
** handle reports and declines (returns NULL) if that is wrong, so a test
** that finds "three" registered also knows th_server_add_tool() and
** th_server_errmsg() told the plugin the truth.
*/
#include <stdlib.h>
#include <string.h>

#include <toolhost/plugin.h>

static th_rc three(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    return th_call_text(call, user_data ? (const char *)user_data : "three");
}

#define EMPTY_SCHEMA "{\"type\":\"object\",\"properties\":{}}"

static const th_tool three_tool = {
    TH_TOOL_INIT,
    .name = "three",
    .description = "The tool three.so returns from its entry point.",
    .input_schema = EMPTY_SCHEMA,
    .handler = three,
};

TH_REGISTER(three)
{
    char *data = strdup("three_a's user data");
    if (!data)
        return NULL;
    /* On the stack on purpose: the host must copy what it keeps. */
    th_tool a = {
        TH_TOOL_INIT,
        .name = "three_a",
        .description = "First extra tool of three.so.",
        .input_schema = EMPTY_SCHEMA,
        .handler = three,
        .user_data = data,
        .destroy = free,
    };
    th_tool b = {
        TH_TOOL_INIT,
        .name = "three_b",
        .description = "Too short",
        .input_schema = EMPTY_SCHEMA,
        .handler = three,
    };
    if (th_server_add_tool(server, &a) != TH_OK) {
        free(data); /* refused: user_data is still ours */
        return NULL;
    }
    if (strcmp(th_server_errmsg(server), "") != 0)
        return NULL;
    if (th_server_add_tool(server, &b) != TH_ERR_VALUE)
        return NULL;
    if (strcmp(th_server_errmsg(server), "Tool description too short (min 10 chars), got 9") != 0)
        return NULL;
    return &three_tool;
}
