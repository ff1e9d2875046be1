/* SPDX-License-Identifier: MIT */
/*
** client_asking_tools.c: the conformance suite's fixture tools that ask the
** client, before 2026-07-28 as server-to-client requests (test_sampling,
** test_elicitation, the SEP-1034 defaults and SEP-1330 enums fixtures), all
** through th_call_ask, so they also work as InputRequiredResults.
*/
#include <stdio.h>
#include <string.h>

#include <toolhost/plugin.h>

/* The answer's text, or why there is none, as the fixtures report it. */
static th_rc report(th_call *call, th_rc rc, const char *what, json_object *answer, const char *prefix)
{
    if (rc == TH_ERR_INPUT_REQUIRED || rc == TH_ERR_CAPABILITY)
        return rc; /* the host answers for us (see th_call_ask) */
    if (rc != TH_OK)
        return th_call_error(call, "%s not supported or error: %s", what,
                             rc == TH_ERR_CANCELLED ? "cancelled" : "the client refused or failed");
    th_rc r = th_call_textf(call, "%s%s", prefix, json_object_to_json_string_ext(answer, JSON_C_TO_STRING_PLAIN));
    json_object_put(answer);
    return r;
}

static th_rc sampling(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    json_object *prompt, *answer = NULL, *content, *text;
    json_object_object_get_ex(args, "prompt", &prompt);
    th_rc rc = th_call_sample(call, "sample", json_object_get_string(prompt), 100, &answer);
    if (rc == TH_OK && json_object_object_get_ex(answer, "content", &content) &&
        json_object_object_get_ex(content, "text", &text)) {
        rc = th_call_textf(call, "LLM response: %s", json_object_get_string(text));
        json_object_put(answer);
        return rc;
    }
    return report(call, rc, "Sampling", answer, "LLM response: ");
}

static th_rc elicitation(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    json_object *message, *answer = NULL;
    json_object_object_get_ex(args, "message", &message);
    th_rc rc = th_call_elicit(call, "user_info", json_object_get_string(message),
                              "{\"type\":\"object\",\"properties\":{"
                              "\"username\":{\"type\":\"string\",\"description\":\"User's response\"},"
                              "\"email\":{\"type\":\"string\",\"description\":\"User's email address\"}},"
                              "\"required\":[\"username\",\"email\"]}",
                              &answer);
    return report(call, rc, "Elicitation", answer, "User response: ");
}

static th_rc sep1034(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    json_object *answer = NULL;
    th_rc rc = th_call_elicit(
        call, "defaults", "Please review and update the form fields with defaults",
        "{\"type\":\"object\",\"properties\":{"
        "\"name\":{\"type\":\"string\",\"description\":\"User name\",\"default\":\"John Doe\"},"
        "\"age\":{\"type\":\"integer\",\"description\":\"User age\",\"default\":30},"
        "\"score\":{\"type\":\"number\",\"description\":\"User score\",\"default\":95.5},"
        "\"status\":{\"type\":\"string\",\"description\":\"User status\","
        "\"enum\":[\"active\",\"inactive\",\"pending\"],\"default\":\"active\"},"
        "\"verified\":{\"type\":\"boolean\",\"description\":\"Verification status\",\"default\":true}},"
        "\"required\":[]}",
        &answer);
    return report(call, rc, "Elicitation", answer, "Elicitation completed: ");
}

static th_rc sep1330(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    json_object *answer = NULL;
    th_rc rc = th_call_elicit(
        call, "enums", "Please select options from the enum fields",
        "{\"type\":\"object\",\"properties\":{"
        "\"untitledSingle\":{\"type\":\"string\",\"description\":\"Select one option\","
        "\"enum\":[\"option1\",\"option2\",\"option3\"]},"
        "\"titledSingle\":{\"type\":\"string\",\"description\":\"Select one option with titles\",\"oneOf\":["
        "{\"const\":\"value1\",\"title\":\"First Option\"},{\"const\":\"value2\",\"title\":\"Second Option\"},"
        "{\"const\":\"value3\",\"title\":\"Third Option\"}]},"
        "\"legacyEnum\":{\"type\":\"string\",\"description\":\"Select one option (legacy)\","
        "\"enum\":[\"opt1\",\"opt2\",\"opt3\"],\"enumNames\":[\"Option One\",\"Option Two\",\"Option Three\"]},"
        "\"untitledMulti\":{\"type\":\"array\",\"description\":\"Select multiple options\",\"minItems\":1,"
        "\"maxItems\":3,\"items\":{\"type\":\"string\",\"enum\":[\"option1\",\"option2\",\"option3\"]}},"
        "\"titledMulti\":{\"type\":\"array\",\"description\":\"Select multiple options with titles\","
        "\"minItems\":1,\"maxItems\":3,\"items\":{\"anyOf\":["
        "{\"const\":\"value1\",\"title\":\"First Choice\"},{\"const\":\"value2\",\"title\":\"Second Choice\"},"
        "{\"const\":\"value3\",\"title\":\"Third Choice\"}]}}},"
        "\"required\":[]}",
        &answer);
    return report(call, rc, "Elicitation", answer, "Elicitation completed: ");
}

static const th_tool tools[] = {
    {TH_TOOL_INIT, .name = "test_sampling", .description = "Tests server-initiated sampling (LLM completion request)",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"prompt\":{\"type\":\"string\",\"description\":"
                     "\"The prompt to send to the LLM\"}},\"required\":[\"prompt\"]}",
     .handler = sampling},
    {TH_TOOL_INIT, .name = "test_elicitation", .description = "Tests server-initiated elicitation (user input request)",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"message\":{\"type\":\"string\",\"description\":"
                     "\"The message to show the user\"}},\"required\":[\"message\"]}",
     .handler = elicitation},
    {TH_TOOL_INIT, .name = "test_elicitation_sep1034_defaults",
     .description = "Tests elicitation with default values per SEP-1034",
     .input_schema = "{\"type\":\"object\",\"properties\":{}}", .handler = sep1034},
    {TH_TOOL_INIT, .name = "test_elicitation_sep1330_enums",
     .description = "Tests elicitation with enum schema improvements per SEP-1330",
     .input_schema = "{\"type\":\"object\",\"properties\":{}}", .handler = sep1330},
};

TH_REGISTER(client_asking_tools)
{
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++)
        if (th_server_add_tool(server, &tools[i]) != TH_OK)
            return NULL;
    return th_server_added_only(server);
}
