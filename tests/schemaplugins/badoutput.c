/* SPDX-License-Identifier: MIT */
/*
** badoutput.c: test plugin badoutput.so, which declares an output schema
** and breaks it (argument "mode": "wrong" returns a string where an integer
** is promised, "missing" returns no structuredContent, anything else keeps
** the promise).
*/
#include <string.h>

#include <toolhost/plugin.h>

static th_rc handler(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    json_object *mode, *sc = json_object_new_object();
    const char *m = json_object_object_get_ex(args, "mode", &mode) ? json_object_get_string(mode) : "good";
    if (strcmp(m, "missing") == 0) {
        json_object_put(sc);
        return th_call_text(call, "no structured content");
    }
    json_object_object_add(sc, "n", strcmp(m, "wrong") == 0 ? json_object_new_string("seven")
                                                             : json_object_new_int(7));
    return th_call_structured(call, sc);
}

static const th_tool tool = {
    TH_TOOL_INIT,
    .name = "badoutput",
    .description = "Declares an output schema and, when asked, breaks it.",
    .input_schema = "{\"type\":\"object\",\"properties\":{\"mode\":{\"type\":\"string\"}}}",
    .output_schema = "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\"}},\"required\":[\"n\"]}",
    .handler = handler,
};

TH_REGISTER(badoutput)
{
    (void)server;
    return &tool;
}
