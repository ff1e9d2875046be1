/* SPDX-License-Identifier: MIT */
/*
** qual.c: the test plugins of the qualified-name examples, one source
** built three times (tests/qualname.mk): QP_NAME.so registers the tool QP_NAME and,
** through the server handle, QP_EXTRA (filesystem: read_file, memory:
** store_value_async, server: my__special__tool). Every tool answers with
** th_call_tool_name(), so a test sees which name the handler was given;
** the prompt ask_QP_NAME and its completion likewise.
*/
#include <string.h>

#include <toolhost/plugin.h>

#define QP_STR2(x) #x
#define QP_STR(x) QP_STR2(x)
#define QP_REG(N) TH_REGISTER(N)

static th_rc answer(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    return th_call_textf(call, "%s answered by %s.so", th_call_tool_name(call), QP_STR(QP_NAME));
}

#define EMPTY_SCHEMA "{\"type\":\"object\",\"properties\":{}}"

static const th_tool main_tool = {
    TH_TOOL_INIT,
    .name = QP_STR(QP_NAME),
    .description = "The tool named after its plugin file (qualified-name tests).",
    .input_schema = EMPTY_SCHEMA,
    .handler = answer,
};

static const th_tool extra_tool = {
    TH_TOOL_INIT,
    .name = QP_STR(QP_EXTRA),
    .description = "A second tool of the plugin, named as in the rules' examples.",
    .input_schema = EMPTY_SCHEMA,
    .handler = answer,
};

/* The prompt ask_QP_NAME (prompts are qualified as tools are):
 * says which name its get was given, and completes "who" with the plugin's
 * name. */
static th_rc get(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    return th_call_textf(call, "%s got by %s.so", th_call_tool_name(call), QP_STR(QP_NAME));
}

static th_rc complete(th_call *call, const char *argument, const char *value, json_object *context,
                      void *user_data)
{
    (void)argument;
    (void)context;
    (void)user_data;
    return th_call_textf(call, "%s-%s", QP_STR(QP_NAME), value);
}

QP_REG(QP_NAME)
{
    /* A refusal of the extra tool (the 64-character rule) leaves the
     * plugin's own tool standing, in both isolation modes. */
    th_server_add_tool(server, &extra_tool);
    th_prompt p = {TH_PROMPT_INIT, .name = "ask_" QP_STR(QP_NAME), .description = "Asks (qualified-name tests).",
                   .arguments = "[{\"name\":\"who\"}]", .get = get};
    th_server_add_prompt(server, &p);
    /* server.so's prompt is completed by memory.so, by its exposed name
     * (a plugin's own prompts by the names it gave them). */
    th_completion c = {TH_COMPLETION_INIT, .prompt = "ask_" QP_STR(QP_NAME), .complete = complete};
    if (strcmp(QP_STR(QP_NAME), "memory") == 0)
        c.prompt = "dev__server__ask_server";
    if (strcmp(QP_STR(QP_NAME), "server") != 0)
        th_server_add_completion(server, &c);
    return &main_tool;
}
