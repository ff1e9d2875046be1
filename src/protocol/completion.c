/* SPDX-License-Identifier: MIT */
/*
** protocol/completion.c: completion/complete (server/utilities/completion)
** for both eras: the reference (a prompt's argument or a resource
** template's variable) checked against the registry, the plugin's
** completion function run, and its values capped at 100 with total and
** hasMore.
*/
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "plugin/prompts.h"
#include "plugin/resources.h"
#include "protocol/jsonrpc.h"
#include "protocol/mcpprompts.h"

/* O[KEY] as a string without an embedded NUL, or NULL. */
static const char *str_of(json_object *o, const char *key)
{
    json_object *v;
    if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
        return NULL;
    const char *s = json_object_get_string(v);
    return strlen(s) == (size_t)json_object_get_string_len(v) ? s : NULL;
}

static bool prompt_has_argument(const th_prompt_entry *p, const char *arg)
{
    for (size_t i = 0; i < json_object_array_length(p->arguments); i++)
        if (strcmp(str_of(json_object_array_get_idx(p->arguments, i), "name"), arg) == 0)
            return true;
    return false;
}

static bool template_has_variable(const char *t, const char *var)
{
    size_t n = strlen(var);
    for (const char *p = strchr(t, '{'); p; p = strchr(p + 1, '{'))
        if (strncmp(p + 1, var, n) == 0 && p[1 + n] == '}')
            return true;
    return false;
}

/* The values of the completion function's RESULT, at most 100 sent. */
static json_object *completion_of(json_object *result)
{
    json_object *content, *values = json_object_new_array(), *c = json_object_new_object();
    if (!values || !c) {
        json_object_put(values);
        json_object_put(c);
        return NULL;
    }
    size_t total = 0;
    if (json_object_object_get_ex(result, "content", &content))
        for (size_t i = 0; i < json_object_array_length(content); i++) {
            json_object *b = json_object_array_get_idx(content, i), *t;
            if (!json_object_object_get_ex(b, "text", &t) || !json_object_is_type(t, json_type_string))
                continue; /* only text blocks are values */
            if (total++ < TH_COMPLETION_MAX)
                json_object_array_add(values, json_object_get(t));
        }
    json_object_object_add(c, "values", values);
    json_object_object_add(c, "total", json_object_new_int64((int64_t)total));
    json_object_object_add(c, "hasMore", json_object_new_boolean(total > TH_COMPLETION_MAX));
    return c;
}

void th_mcpcomplete_serve(const th_mcpprompt_req *q, th_mcpprompt_answer *a)
{
    json_object *ref = NULL, *arg = NULL, *ctx = NULL, *cargs = NULL;
    if (q->params) {
        json_object_object_get_ex(q->params, "ref", &ref);
        json_object_object_get_ex(q->params, "argument", &arg);
        json_object_object_get_ex(q->params, "context", &ctx);
    }
    const char *type = str_of(ref, "type"), *name = str_of(arg, "name"), *value = str_of(arg, "value");
    if (!type || !name || !value) {
        th_mcpprompt_fail(a, TH_RPC_INVALID_PARAMS,
                          "Invalid params: completion/complete needs \"ref\" with a string \"type\" and "
                          "\"argument\" with strings \"name\" and \"value\"");
        return;
    }
    if (ctx && json_object_is_type(ctx, json_type_object) && json_object_object_get_ex(ctx, "arguments", &cargs) &&
        !json_object_is_type(cargs, json_type_object)) {
        th_mcpprompt_fail(a, TH_RPC_INVALID_PARAMS, "Invalid params: context.arguments must be an object");
        return;
    }
    const th_prompts *ps = th_registry_prompts(q->reg);
    const th_completion_entry *c = NULL;
    if (strcmp(type, "ref/prompt") == 0) {
        char why[512];
        const th_prompt_entry *p = th_prompts_resolve(q->reg, ps, str_of(ref, "name"), why, sizeof why);
        if (!p) {
            th_mcpprompt_fail(a, TH_RPC_INVALID_PARAMS, "Invalid params: %s", why);
            return;
        }
        if (!prompt_has_argument(p, name)) {
            th_mcpprompt_fail(a, TH_RPC_INVALID_PARAMS, "Invalid params: prompt '%s' has no argument '%.100s'",
                              p->name, name);
            return;
        }
        c = th_prompts_find_completion(ps, p->name, NULL);
    } else if (strcmp(type, "ref/resource") == 0) {
        const char *uri = str_of(ref, "uri");
        const th_res_entry *t = uri ? th_resources_find(th_registry_resources(q->reg), NULL, uri) : NULL;
        if (!t) {
            th_mcpprompt_fail(a, TH_RPC_INVALID_PARAMS, "Invalid params: unknown resource template '%.200s'",
                              uri ? uri : "(no uri)");
            return;
        }
        if (!template_has_variable(t->uri_template, name)) {
            th_mcpprompt_fail(a, TH_RPC_INVALID_PARAMS,
                              "Invalid params: resource template '%.200s' has no variable '%.100s'", uri, name);
            return;
        }
        c = th_prompts_find_completion(ps, NULL, uri);
    } else {
        th_mcpprompt_fail(a, TH_RPC_INVALID_PARAMS,
                          "Invalid params: ref.type must be \"ref/prompt\" or \"ref/resource\", not '%.100s'", type);
        return;
    }
    th_rc rc = TH_OK;
    json_object *result = c ? th_prompts_run_complete(c, name, value, cargs, q->hooks, &rc) : NULL, *flag;
    bool is_error = result && json_object_object_get_ex(result, "isError", &flag) && json_object_get_boolean(flag);
    if (c && (!result || rc != TH_OK || is_error)) {
        const char *msg = th_mcpprompt_first_text(result);
        th_mcpprompt_fail(a, TH_RPC_INTERNAL_ERROR, "Internal error: completing '%.100s' failed: %s", name,
                          msg ? msg : th_rc_name(rc));
        json_object_put(result);
        return;
    }
    /* Nobody completes this reference: no suggestions, not an error. */
    json_object *completion = completion_of(result), *res = completion ? json_object_new_object() : NULL;
    json_object_put(result);
    if (!res) {
        json_object_put(completion);
        th_mcpprompt_fail(a, TH_RPC_INTERNAL_ERROR, "Internal error: out of memory");
        return;
    }
    json_object_object_add(res, "completion", completion);
    a->result = res;
}
