/* SPDX-License-Identifier: MIT */
/*
** json_schema_2020_12_tool.c: the conformance suite's json_schema_2020_12_tool
** fixture (scenario json-schema-2020-12): an inputSchema using $schema, $defs
** with $anchor, $ref, allOf/anyOf and if/then/else, which tools/list must
** pass through unchanged.
*/
#include <toolhost/plugin.h>

static th_rc schema_tool(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    return th_call_text(call, "ok");
}

static const th_tool schema_tool_def = {
    TH_TOOL_INIT,
    .name = "json_schema_2020_12_tool",
    .description = "Tool with JSON Schema 2020-12 features",
    .input_schema =
        "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"type\":\"object\","
        "\"$defs\":{\"address\":{\"$anchor\":\"addressDef\",\"type\":\"object\","
        "\"properties\":{\"street\":{\"type\":\"string\"},\"city\":{\"type\":\"string\"}}}},"
        "\"properties\":{\"name\":{\"type\":\"string\"},\"address\":{\"$ref\":\"#/$defs/address\"},"
        "\"contactMethod\":{\"type\":\"string\",\"enum\":[\"phone\",\"email\"]},"
        "\"phone\":{\"type\":\"string\"},\"email\":{\"type\":\"string\"}},"
        "\"allOf\":[{\"anyOf\":[{\"required\":[\"phone\"]},{\"required\":[\"email\"]}]}],"
        "\"if\":{\"properties\":{\"contactMethod\":{\"const\":\"phone\"}},\"required\":[\"contactMethod\"]},"
        "\"then\":{\"required\":[\"phone\"]},\"else\":{\"required\":[\"email\"]},"
        "\"additionalProperties\":false}",
    .handler = schema_tool,
};

TH_REGISTER(json_schema_2020_12_tool)
{
    (void)server;
    return &schema_tool_def;
}
