/* SPDX-License-Identifier: MIT */
/*
** demanding.c: test plugin demanding.so, a tool whose input schema uses
** most of JSON Schema 2020-12, so tests can check through the host that
** invalid arguments never reach the handler and how each is reported.
*/
#include <toolhost/plugin.h>

static th_rc handler(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    /* Reaching here means the arguments were valid: say what arrived. */
    return th_call_textf(call, "ok %s", json_object_to_json_string_ext(args, JSON_C_TO_STRING_PLAIN));
}

static const th_tool tool = {
    TH_TOOL_INIT,
    .name = "demanding",
    .description = "Accepts only arguments that satisfy a demanding JSON Schema.",
    .input_schema =
        "{\"type\":\"object\","
        "\"properties\":{"
        "\"count\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":100,\"multipleOf\":2},"
        "\"name\":{\"type\":\"string\",\"pattern\":\"^[a-z]+$\",\"minLength\":2,\"maxLength\":8},"
        "\"mode\":{\"enum\":[\"fast\",\"slow\"]},"
        "\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"uniqueItems\":true,\"maxItems\":3},"
        "\"point\":{\"$ref\":\"#/$defs/point\"},"
        "\"limit\":{\"oneOf\":[{\"type\":\"integer\"},{\"const\":\"none\"}]}},"
        "\"required\":[\"count\",\"name\"],"
        "\"additionalProperties\":false,"
        "\"dependentRequired\":{\"limit\":[\"mode\"]},"
        "\"$defs\":{\"point\":{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"number\"},"
        "\"y\":{\"type\":\"number\"}},\"required\":[\"x\",\"y\"],\"additionalProperties\":false}}}",
    .handler = handler,
};

TH_REGISTER(demanding)
{
    (void)server;
    return &tool;
}
