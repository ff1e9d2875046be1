/* SPDX-License-Identifier: MIT */
/*
** conformance_prompts.c: the conformance suite's fixture prompts (the
** everything-server's test_simple_prompt, test_prompt_with_arguments,
** test_prompt_with_embedded_resource, test_prompt_with_image and the
** multi round-trip test_input_required_result_prompt) and a completion of
** test_prompt_with_arguments' arg1, served by a plugin of prompts only.
*/
#include <stdio.h>
#include <string.h>

#include <toolhost/plugin.h>

/* The suite's reference server's 1x1 red PNG, as in test_image_content. */
static const char red_pixel_png[] =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

static const char *arg(json_object *args, const char *name)
{
    json_object *v;
    return json_object_object_get_ex(args, name, &v) ? json_object_get_string(v) : "";
}

static th_rc simple(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    return th_call_text(call, "This is a simple prompt for testing.");
}

static th_rc with_arguments(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    return th_call_textf(call, "Prompt with arguments: arg1='%s', arg2='%s'", arg(args, "arg1"), arg(args, "arg2"));
}

static th_rc with_embedded_resource(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    th_rc rc = th_call_resource_text(call, arg(args, "resourceUri"), "text/plain",
                                     "Embedded resource content for testing.");
    return rc != TH_OK ? rc : th_call_text(call, "Please process the embedded resource above.");
}

static th_rc with_image(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    th_rc rc = th_call_image(call, "image/png", red_pixel_png);
    return rc != TH_OK ? rc : th_call_text(call, "Please analyze the image above.");
}

/* Asks first, stops on TH_ERR_INPUT_REQUIRED, finishes with the answer. */
static th_rc input_required(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    json_object *a = NULL, *content, *ctx;
    th_rc rc = th_call_elicit(call, "user_context", "What context should the prompt use?",
                              "{\"type\":\"object\",\"properties\":{\"context\":{\"type\":\"string\"}},"
                              "\"required\":[\"context\"]}",
                              &a);
    if (rc != TH_OK)
        return rc;
    const char *text = json_object_object_get_ex(a, "content", &content) &&
                               json_object_object_get_ex(content, "context", &ctx)
                           ? json_object_get_string(ctx)
                           : "none";
    rc = th_call_textf(call, "Prompt with context: %s", text);
    json_object_put(a);
    return rc;
}

/* arg1's suggestions: the words starting with what was typed. */
static th_rc complete_arg1(th_call *call, const char *argument, const char *value, json_object *context,
                           void *user_data)
{
    (void)argument;
    (void)context;
    (void)user_data;
    static const char *const words[] = {"paris", "park", "party", "test", "testing", "tested"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strncmp(words[i], value, strlen(value)) == 0) {
            th_rc rc = th_call_text(call, words[i]);
            if (rc != TH_OK)
                return rc;
        }
    return TH_OK;
}

TH_REGISTER(conformance_prompts)
{
    static const th_prompt prompts[] = {
        {TH_PROMPT_INIT, .name = "test_simple_prompt", .title = "Simple Prompt",
         .description = "A simple prompt without arguments", .get = simple},
        {TH_PROMPT_INIT, .name = "test_prompt_with_arguments", .title = "Prompt With Arguments",
         .description = "A prompt with required arguments",
         .arguments = "[{\"name\":\"arg1\",\"description\":\"First test argument\",\"required\":true},"
                      "{\"name\":\"arg2\",\"description\":\"Second test argument\",\"required\":true}]",
         .get = with_arguments},
        {TH_PROMPT_INIT, .name = "test_prompt_with_embedded_resource", .title = "Prompt With Embedded Resource",
         .description = "A prompt that includes an embedded resource",
         .arguments = "[{\"name\":\"resourceUri\",\"description\":\"URI of the resource to embed\","
                      "\"required\":true}]",
         .get = with_embedded_resource},
        {TH_PROMPT_INIT, .name = "test_prompt_with_image", .title = "Prompt With Image",
         .description = "A prompt that includes image content", .get = with_image},
        {TH_PROMPT_INIT, .name = "test_input_required_result_prompt", .title = "Input Required Prompt",
         .description = "A prompt that asks the client for context first (multi round-trip)",
         .get = input_required},
    };
    for (size_t i = 0; i < sizeof prompts / sizeof prompts[0]; i++)
        if (th_server_add_prompt(server, &prompts[i]) != TH_OK)
            return NULL;
    static const th_completion arg1 = {TH_COMPLETION_INIT, .prompt = "test_prompt_with_arguments",
                                       .complete = complete_arg1};
    if (th_server_add_completion(server, &arg1) != TH_OK)
        return NULL;
    return th_server_added_only(server);
}
