/* SPDX-License-Identifier: MIT */
/*
** echo.c: the smallest useful tool, and the model for a handler plugin:
** returns one text block with exactly the "text" argument.
*/
#include <toolhost/plugin.h>

static th_rc echo(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    json_object *text;
    /* The input schema was validated before this runs, but a handler that
     * checks what it dereferences survives a host without validation. */
    if (!json_object_object_get_ex(args, "text", &text) || !json_object_is_type(text, json_type_string))
        return th_call_error(call, "argument 'text' must be a string");
    /* The block reuses the argument's string object, so text with an
     * embedded NUL (legal in JSON) comes back whole. Its two keys are
     * literals and new to the block: json-c then neither copies them nor
     * looks them up first (a copy, a free and a search less per key). */
    json_object *block = json_object_new_object();
    if (!block)
        return TH_ERR_NOMEM;
    const unsigned fresh = JSON_C_OBJECT_ADD_KEY_IS_NEW | JSON_C_OBJECT_ADD_CONSTANT_KEY;
    json_object_object_add_ex(block, "type", json_object_new_string("text"), fresh);
    json_object_object_add_ex(block, "text", json_object_get(text), fresh);
    return th_call_content(call, block);
}

static const th_tool echo_tool = {
    TH_TOOL_INIT,
    .name = "echo",
    .title = "Echo",
    .description = "Return the given text unchanged, as one text block.",
    .input_schema = "{\"type\":\"object\","
                    "\"properties\":{\"text\":{\"type\":\"string\",\"description\":\"Text to echo back\"}},"
                    "\"required\":[\"text\"],\"additionalProperties\":false}",
    .annotations = "{\"readOnlyHint\":true,\"idempotentHint\":true,\"openWorldHint\":false}",
    .handler = echo,
};

TH_REGISTER(echo)
{
    (void)server;
    return &echo_tool;
}
