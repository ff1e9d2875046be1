/* SPDX-License-Identifier: MIT */
/*
** plugins/prompts.c: a bundled prompt plugin. code_review asks for a review
** of a piece of code in a given language (with a few-shot assistant turn
** showing the expected shape), and completes its "language" argument from
** a fixed list. It serves no tool: prompts only.
*/
#include <string.h>
#include <strings.h>

#include <toolhost/plugin.h>

static const char *const languages[] = {"c", "c++", "csharp", "go", "java", "javascript", "kotlin", "python",
                                        "ruby", "rust", "shell", "sql", "swift", "typescript"};

static const char *arg(json_object *args, const char *name, const char *fallback)
{
    json_object *v;
    return json_object_object_get_ex(args, name, &v) ? json_object_get_string(v) : fallback;
}

static th_rc code_review(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    const char *language = arg(args, "language", "the language it is written in");
    const char *focus = arg(args, "focus", "correctness, error handling and readability");
    th_rc rc = th_call_textf(call,
                             "Please review this code, written in %s. Focus on %s. List each problem with the "
                             "line it is on, why it is one, and a fix; end with what is good about it.\n\n%s",
                             language, focus, arg(args, "code", ""));
    if (rc == TH_OK)
        rc = th_call_prompt_role(call, "assistant");
    if (rc == TH_OK)
        rc = th_call_text(call, "I will list the problems first, most serious first, then what works well.");
    return rc;
}

/* The languages that start with what was typed, case-insensitively. */
static th_rc complete_language(th_call *call, const char *argument, const char *value, json_object *context,
                               void *user_data)
{
    (void)context;
    (void)user_data;
    if (strcmp(argument, "language") != 0)
        return TH_OK; /* code and focus are free text */
    for (size_t i = 0; i < sizeof languages / sizeof languages[0]; i++)
        if (strncasecmp(languages[i], value, strlen(value)) == 0) {
            th_rc rc = th_call_text(call, languages[i]);
            if (rc != TH_OK)
                return rc;
        }
    return TH_OK;
}

TH_REGISTER(prompts)
{
    static const th_prompt review = {
        TH_PROMPT_INIT,
        .name = "code_review",
        .title = "Request Code Review",
        .description = "Asks the model to review a piece of code and suggest improvements",
        .arguments = "[{\"name\":\"code\",\"description\":\"The code to review\",\"required\":true},"
                     "{\"name\":\"language\",\"description\":\"Its programming language\"},"
                     "{\"name\":\"focus\",\"description\":\"What to look at most (default: correctness, error "
                     "handling and readability)\"}]",
        .get = code_review,
    };
    static const th_completion language = {TH_COMPLETION_INIT, .prompt = "code_review",
                                           .complete = complete_language};
    if (th_server_add_prompt(server, &review) != TH_OK || th_server_add_completion(server, &language) != TH_OK)
        return NULL;
    return th_server_added_only(server);
}
