/* SPDX-License-Identifier: MIT */
/*
** big_result.c: hostile plugin whose handler answers with a 50 MB text,
** past the default --max-result-bytes (16 MiB).
*/
#include <stdlib.h>
#include <string.h>

#include <toolhost/plugin.h>

#define BIG_BYTES (50u * 1000u * 1000u)

static th_rc big_result(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    char *text = malloc(BIG_BYTES + 1);
    if (!text)
        return th_call_text(call, "out of memory");
    memset(text, 'x', BIG_BYTES);
    text[BIG_BYTES] = '\0';
    th_rc rc = th_call_text(call, text);
    free(text);
    return rc;
}

static const th_tool big_result_tool = {
    TH_TOOL_INIT,
    .name = "big_result",
    .description = "Answers with a 50 MB text.",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = big_result,
};

TH_REGISTER(big_result)
{
    (void)server;
    return &big_result_tool;
}
