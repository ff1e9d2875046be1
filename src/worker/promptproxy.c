/* SPDX-License-Identifier: MIT */
/*
** worker/promptproxy.c: prompt and completion descriptors as the scanner
** reports them and the host registers them again (with proxy functions),
** and the worker's lookup of the entry a PROMPT or COMPLETE frame names.
*/
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "worker/promptproxy.h"

static void put_str(json_object *o, const char *key, const char *val)
{
    if (val)
        json_object_object_add(o, key, json_object_new_string(val));
}

static const char *str_of(json_object *o, const char *key)
{
    json_object *v;
    return o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
               ? json_object_get_string(v)
               : NULL;
}

void th_promptproxy_describe(const th_registry *reg, size_t pbase, size_t cbase, json_object *into)
{
    const th_prompts *ps = th_registry_prompts(reg);
    for (size_t i = pbase; into && i < th_prompts_count(ps); i++) {
        const th_prompt_entry *e = th_prompts_at(ps, i);
        json_object *d = json_object_new_object();
        if (!d)
            continue;
        put_str(d, "kind", "prompt");
        put_str(d, "name", e->name);
        put_str(d, "title", e->title);
        put_str(d, "description", e->description);
        put_str(d, "arguments", json_object_to_json_string_ext(e->arguments, JSON_C_TO_STRING_PLAIN));
        if (e->icons)
            put_str(d, "icons", json_object_to_json_string_ext(e->icons, JSON_C_TO_STRING_PLAIN));
        if (e->timeout_ms)
            json_object_object_add(d, "timeout_ms", json_object_new_int64(e->timeout_ms));
        json_object_array_add(into, d);
    }
    for (size_t i = cbase; into && i < th_prompts_completion_count(ps); i++) {
        const th_completion_entry *e = th_prompts_completion_at(ps, i);
        json_object *d = json_object_new_object();
        if (!d)
            continue;
        put_str(d, "kind", "completion");
        put_str(d, "prompt", e->prompt);
        put_str(d, "uri_template", e->uri_template);
        if (e->timeout_ms)
            json_object_object_add(d, "timeout_ms", json_object_new_int64(e->timeout_ms));
        json_object_array_add(into, d);
    }
}

bool th_promptproxy_is_prompt(json_object *d, bool *completion_)
{
    const char *kind = str_of(d, "kind");
    bool p = kind && strcmp(kind, "prompt") == 0, c = kind && strcmp(kind, "completion") == 0;
    if (completion_)
        *completion_ = c;
    return p || c;
}

th_rc th_promptproxy_register(th_registry *reg, json_object *d, const char *origin, th_prompt_fn get,
                              th_complete_fn complete, void *user_data, const char **key, th_err *err)
{
    bool completion_ = false;
    th_promptproxy_is_prompt(d, &completion_);
    th_prompts *ps = th_registry_prompts(reg);
    json_object *v;
    int64_t t = json_object_object_get_ex(d, "timeout_ms", &v) ? json_object_get_int64(v) : 0;
    uint32_t timeout = t > 0 && t <= UINT32_MAX ? (uint32_t)t : 0;
    if (completion_) {
        th_completion c = {TH_COMPLETION_INIT, .prompt = str_of(d, "prompt"),
                           .uri_template = str_of(d, "uri_template"), .complete = complete,
                           .user_data = user_data, .timeout_ms = timeout};
        *key = c.prompt ? c.prompt : c.uri_template;
        return th_prompts_add_completion(ps, &c, false, origin, err);
    }
    th_prompt p = {TH_PROMPT_INIT,
                   .name = str_of(d, "name"),
                   .title = str_of(d, "title"),
                   .description = str_of(d, "description"),
                   .arguments = str_of(d, "arguments"),
                   .icons = str_of(d, "icons"),
                   .get = get,
                   .user_data = user_data,
                   .timeout_ms = timeout};
    *key = p.name;
    return th_prompts_add(ps, &p, false, origin, err);
}

const th_prompt_entry *th_promptproxy_lookup_prompt(const th_registry *reg, json_object *req)
{
    return th_prompts_find(th_registry_prompts(reg), str_of(req, "name"));
}

const th_completion_entry *th_promptproxy_lookup_completion(const th_registry *reg, json_object *req)
{
    const char *prompt = str_of(req, "prompt"), *t = str_of(req, "uri_template");
    return prompt || t ? th_prompts_find_completion(th_registry_prompts(reg), prompt, prompt ? NULL : t) : NULL;
}
