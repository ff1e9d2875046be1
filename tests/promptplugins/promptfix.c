/* SPDX-License-Identifier: MIT */
/*
** promptfix.c: fixture prompts and completions for test_mcp_prompts: one
** with arguments and roles, one that asks its client (th_call_ask), one
** that crashes, one returning invalid UTF-8, one that refuses its argument,
** a completion of 150 values (capped at 100), one of a resource template's
** variable and one that crashes; plus descriptors the rules refuse.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <toolhost/plugin.h>

static const char *arg(json_object *args, const char *name)
{
    json_object *v;
    return json_object_object_get_ex(args, name, &v) ? json_object_get_string(v) : "-";
}

static th_rc greet(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    th_call_log(call, TH_LOG_INFO, "greeting %s", arg(args, "who"));
    th_rc rc = th_call_textf(call, "Greet %s in %s", arg(args, "who"), arg(args, "tone"));
    if (rc == TH_OK)
        rc = th_call_prompt_role(call, "assistant");
    if (rc == TH_OK)
        rc = th_call_text(call, "Hello!");
    if (rc == TH_OK)
        rc = th_call_prompt_role(call, "user");
    if (rc == TH_OK)
        rc = th_call_resource_text(call, "mem://note", "text/plain", "a note");
    return rc;
}

static th_rc ask(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    json_object *a = NULL, *content, *v;
    th_rc rc = th_call_elicit(call, "topic", "Which topic?",
                              "{\"type\":\"object\",\"properties\":{\"topic\":{\"type\":\"string\"}}}", &a);
    if (rc != TH_OK)
        return rc;
    /* th_call_client_can knows the client's capabilities, in a worker too. */
    rc = th_call_textf(call, "Topic: %s%s",
                       json_object_object_get_ex(a, "content", &content) &&
                               json_object_object_get_ex(content, "topic", &v)
                           ? json_object_get_string(v)
                           : "?",
                       th_call_client_can(call, TH_ASK_ELICITATION) ? "" : " (elicitation not declared?)");
    json_object_put(a);
    return rc;
}

static th_rc crash(th_call *call, json_object *args, void *user_data)
{
    (void)call;
    (void)args;
    (void)user_data;
    abort();
}

static th_rc crash_complete(th_call *call, const char *argument, const char *value, json_object *context,
                            void *user_data)
{
    (void)call;
    (void)argument;
    (void)value;
    (void)context;
    (void)user_data;
    abort();
}

static th_rc bad_utf8(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    return th_call_text(call, "caf\xe9 \xff");
}

static th_rc picky(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    if (strcmp(arg(args, "n"), "42") != 0) {
        th_call_error(call, "n must be 42, not '%s'", arg(args, "n"));
        return TH_ERR_VALUE;
    }
    return th_call_text(call, "right");
}

static th_rc many(th_call *call, const char *argument, const char *value, json_object *context, void *user_data)
{
    (void)user_data;
    json_object *who;
    /* The context reaches the function: it is echoed as the first value. */
    if (json_object_object_get_ex(context, "who", &who))
        th_call_textf(call, "who=%s", json_object_get_string(who));
    for (int i = 0; i < 150; i++)
        th_call_textf(call, "%s-%s-%d", argument, value, i);
    return TH_OK;
}

static th_rc item_ids(th_call *call, const char *argument, const char *value, json_object *context,
                      void *user_data)
{
    (void)argument;
    (void)context;
    (void)user_data;
    return th_call_textf(call, "%s1", value);
}

static th_rc read_item(th_call *call, const char *uri, json_object *vars, void *user_data)
{
    (void)vars;
    (void)user_data;
    return th_call_resource_text(call, uri, "text/plain", "item");
}

TH_REGISTER(promptfix)
{
    static const th_prompt prompts[] = {
        {TH_PROMPT_INIT, .name = "greet", .title = "Greeting", .description = "Greets someone",
         .arguments = "[{\"name\":\"who\",\"title\":\"Who\",\"required\":true},{\"name\":\"tone\"}]",
         .icons = "[{\"src\":\"https://example.com/i.png\",\"mimeType\":\"image/png\",\"sizes\":[\"48x48\"]}]",
         .get = greet},
        {TH_PROMPT_INIT, .name = "ask", .description = "Asks first", .get = ask},
        {TH_PROMPT_INIT, .name = "crash", .arguments = "[{\"name\":\"how\"}]", .get = crash},
        {TH_PROMPT_INIT, .name = "bad_utf8", .get = bad_utf8},
        {TH_PROMPT_INIT, .name = "picky", .arguments = "[{\"name\":\"n\",\"required\":true}]", .get = picky},
        /* Refused, each for one rule: */
        {TH_PROMPT_INIT, .name = "bad name", .get = greet},
        {TH_PROMPT_INIT, .name = "greet", .get = greet},
        {TH_PROMPT_INIT, .name = "noget"},
        {TH_PROMPT_INIT, .name = "badargs", .arguments = "[{\"description\":\"no name\"}]", .get = greet},
    };
    for (size_t i = 0; i < sizeof prompts / sizeof prompts[0]; i++)
        th_server_add_prompt(server, &prompts[i]);
    static const th_resource items = {TH_RESOURCE_INIT, .uri_template = "mem://items/{id}", .name = "items",
                                      .read = read_item};
    th_server_add_resource_template(server, &items);
    static const th_completion completions[] = {
        {TH_COMPLETION_INIT, .prompt = "greet", .complete = many},
        {TH_COMPLETION_INIT, .uri_template = "mem://items/{id}", .complete = item_ids},
        {TH_COMPLETION_INIT, .prompt = "crash", .complete = crash_complete},
        {TH_COMPLETION_INIT, .prompt = "greet", .complete = many}, /* refused: a duplicate */
    };
    for (size_t i = 0; i < sizeof completions / sizeof completions[0]; i++)
        th_server_add_completion(server, &completions[i]);
    return th_server_added_only(server);
}
