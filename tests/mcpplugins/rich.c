/* SPDX-License-Identifier: MIT */
/*
** rich.c: test plugin rich.so for the MCP integration tests. "rich" returns
** one content block of every kind the call API can build; "rich_structured"
** (registered through the server handle, with title, output schema and
** annotations) returns only structuredContent.
*/
#include <toolhost/plugin.h>

static th_rc rich(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    th_call_text(call, "rich text");
    th_call_image(call, "image/png", "iVBORw0KGgo=");
    th_call_audio(call, "audio/wav", "UklGRg==");
    th_call_resource_link(call, "file:///tmp/rich.txt", "rich.txt", "A linked file", "text/plain");
    th_call_resource_link(call, "https://example.com/x", "x", NULL, NULL);
    th_call_resource_text(call, "test://rich/text", "text/plain", "embedded text");
    th_call_resource_blob(call, "test://rich/blob", NULL, "AAEC");
    json_object *block = json_tokener_parse("{\"type\":\"text\",\"text\":\"annotated\","
                                            "\"annotations\":{\"audience\":[\"user\"],\"priority\":0.5}}");
    return th_call_content(call, block);
}

static th_rc rich_structured(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    return th_call_structured(call, json_tokener_parse("{\"temperature\":22.5,\"conditions\":\"sunny\","
                                                       "\"tags\":[\"a/b\",\"\\\"q\\\"\"]}"));
}

static const th_tool rich_tool = {
    TH_TOOL_INIT,
    .name = "rich",
    .description = "Return one content block of every kind.",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = rich,
};

TH_REGISTER(rich)
{
    th_tool s = {
        TH_TOOL_INIT,
        .name = "rich_structured",
        .title = "Rich structured",
        .description = "Return structured content only.",
        .input_schema = "{\"type\":\"object\",\"properties\":{}}",
        .output_schema = "{\"type\":\"object\",\"properties\":{"
                         "\"temperature\":{\"type\":\"number\"},\"conditions\":{\"type\":\"string\"},"
                         "\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}},"
                         "\"required\":[\"temperature\",\"conditions\"]}",
        .annotations = "{\"readOnlyHint\":true,\"openWorldHint\":false}",
        .icons = "[{\"src\":\"data:image/svg+xml;base64,PHN2Zy8+\",\"mimeType\":\"image/svg+xml\",\"sizes\":[\"any\"],\"theme\":\"light\"}]",
        .handler = rich_structured,
    };
    if (th_server_add_tool(server, &s) != TH_OK)
        return NULL;
    return &rich_tool;
}
