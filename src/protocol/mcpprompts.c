/* SPDX-License-Identifier: MIT */
/*
** protocol/mcpprompts.c: prompts/list (paginated) and prompts/get of MCP
** for both eras, over the prompt registry (plugin/prompts.c): the argument checks of server/prompts ("Invalid prompt name"
** and missing required arguments are -32602), and a get function's content
** blocks turned into PromptMessages.
*/
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/prompts.h"
#include "protocol/pagination.h"
#include "protocol/jsonrpc.h"
#include "protocol/mcpprompts.h"

#define CURSOR_PROMPTS "p1:"

void th_mcpprompt_fail(th_mcpprompt_answer *a, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->message, sizeof a->message, fmt, ap);
    va_end(ap);
    th_utf8_clip(a->message);
    a->code = code;
    json_object_put(a->result);
    a->result = NULL;
}

const char *th_mcpprompt_first_text(json_object *result)
{
    json_object *content, *t;
    if (!result || !json_object_object_get_ex(result, "content", &content))
        return NULL;
    for (size_t i = 0; i < json_object_array_length(content); i++) {
        json_object *b = json_object_array_get_idx(content, i);
        if (json_object_object_get_ex(b, "text", &t) && json_object_is_type(t, json_type_string) &&
            json_object_get_string_len(t) > 0)
            return json_object_get_string(t);
    }
    return NULL;
}

static void put_str(json_object *o, const char *key, const char *val)
{
    if (val)
        json_object_object_add(o, key, json_object_new_string(val));
}

static json_object *prompt_json(const th_mcpprompt_req *q, const th_prompt_entry *e)
{
    json_object *o = json_object_new_object();
    if (!o)
        return NULL;
    put_str(o, "name", e->name);
    if (q->titles)
        put_str(o, "title", e->title);
    put_str(o, "description", e->description);
    json_object *args = NULL;
    if (json_object_array_length(e->arguments) > 0 && json_object_deep_copy(e->arguments, &args, NULL) == 0) {
        /* "title" of an argument came with 2025-06-18, as the prompt's. */
        for (size_t i = 0; !q->titles && i < json_object_array_length(args); i++)
            json_object_object_del(json_object_array_get_idx(args, i), "title");
        json_object_object_add(o, "arguments", args);
    }
    if (q->titles && e->icons)
        json_object_object_add(o, "icons", json_object_get(e->icons));
    return o;
}

static void list(const th_mcpprompt_req *q, th_mcpprompt_answer *a)
{
    const th_prompts *ps = th_registry_prompts(q->reg);
    size_t count = th_prompts_count(ps), offset, end;
    if (!th_page_window(q->params, CURSOR_PROMPTS, count, q->page_size, &offset, &end)) {
        th_mcpprompt_fail(a, TH_RPC_INVALID_PARAMS, "Invalid params: invalid cursor");
        return;
    }
    json_object *res = json_object_new_object(), *arr = json_object_new_array();
    if (!res || !arr) {
        json_object_put(res);
        json_object_put(arr);
        th_mcpprompt_fail(a, TH_RPC_INTERNAL_ERROR, "Internal error: out of memory");
        return;
    }
    for (size_t i = offset; i < end; i++) {
        json_object *o = prompt_json(q, th_prompts_at(ps, i));
        if (o)
            json_object_array_add(arr, o);
    }
    json_object_object_add(res, "prompts", arr);
    th_page_next(res, CURSOR_PROMPTS, end, count);
    if (q->modern) {
        json_object_object_add(res, "ttlMs", json_object_new_int64(q->list_ttl_ms));
        json_object_object_add(res, "cacheScope", json_object_new_string("public"));
    }
    a->result = res;
}

/* A th_call_prompt_role() marker's role, or NULL for a real block. */
static const char *role_marker(json_object *b)
{
    json_object *meta, *role;
    if (!json_object_object_get_ex(b, "_meta", &meta) || !json_object_object_get_ex(meta, TH_PROMPT_ROLE_META, &role))
        return NULL;
    return json_object_get_string(role);
}

/* RESULT's content blocks as PromptMessages, roles switched by markers. */
static json_object *messages_of(json_object *result)
{
    json_object *content, *out = json_object_new_array();
    if (!out || !json_object_object_get_ex(result, "content", &content)) {
        json_object_put(out);
        return NULL;
    }
    const char *role = "user";
    for (size_t i = 0; i < json_object_array_length(content); i++) {
        json_object *b = json_object_array_get_idx(content, i), *m;
        const char *r = role_marker(b);
        if (r) {
            role = strcmp(r, "assistant") == 0 ? "assistant" : "user";
            continue;
        }
        if (!(m = json_object_new_object()))
            continue;
        json_object_object_add(m, "role", json_object_new_string(role));
        json_object_object_add(m, "content", json_object_get(b));
        json_object_array_add(out, m);
    }
    return out;
}

static void get(const th_mcpprompt_req *q, th_mcpprompt_answer *a)
{
    json_object *n, *args = NULL;
    if (!q->params || !json_object_object_get_ex(q->params, "name", &n) || !json_object_is_type(n, json_type_string)) {
        th_mcpprompt_fail(a, TH_RPC_INVALID_PARAMS, "Invalid params: prompts/get needs a string \"name\"");
        return;
    }
    const char *name = json_object_get_string(n);
    char why[512];
    const th_prompt_entry *e =
        th_prompts_resolve(q->reg, th_registry_prompts(q->reg),
                           (size_t)json_object_get_string_len(n) == strlen(name) ? name : NULL, why, sizeof why);
    if (!e) {
        th_mcpprompt_fail(a, TH_RPC_INVALID_PARAMS, "Invalid params: %s", why);
        return;
    }
    json_object_object_get_ex(q->params, "arguments", &args);
    if (args && json_object_is_type(args, json_type_null))
        args = NULL;
    if (!th_prompts_check_args(e, args, why, sizeof why)) {
        th_mcpprompt_fail(a, TH_RPC_INVALID_PARAMS, "%s", why);
        return;
    }
    th_rc rc;
    json_object *result = th_prompts_run_get(e, args, q->hooks, &rc), *flag;
    bool is_error = result && json_object_object_get_ex(result, "isError", &flag) && json_object_get_boolean(flag);
    const char *msg = th_mcpprompt_first_text(result);
    if (rc == TH_ERR_VALUE) {
        th_mcpprompt_fail(a, TH_RPC_INVALID_PARAMS, "Invalid params: %s", msg ? msg : "the arguments were refused");
    } else if (!result || rc != TH_OK || is_error) {
        th_mcpprompt_fail(a, TH_RPC_INTERNAL_ERROR, "Internal error: getting prompt '%s' failed: %s", e->name,
                          msg ? msg : th_rc_name(rc));
    } else {
        json_object *msgs = messages_of(result), *res = msgs ? json_object_new_object() : NULL;
        if (!res) {
            json_object_put(msgs);
            th_mcpprompt_fail(a, TH_RPC_INTERNAL_ERROR, "Internal error: out of memory");
        } else {
            put_str(res, "description", e->description);
            json_object_object_add(res, "messages", msgs);
            a->result = res;
        }
    }
    json_object_put(result);
}

static const struct {
    const char *name;
    void (*fn)(const th_mcpprompt_req *q, th_mcpprompt_answer *a);
} methods[] = {
    {"prompts/list", list},
    {"prompts/get", get},
    {"completion/complete", th_mcpcomplete_serve},
};

void th_mcpprompt_serve(const th_mcpprompt_req *q, th_mcpprompt_answer *a)
{
    memset(a, 0, sizeof *a);
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
        if (strcmp(methods[i].name, q->method) == 0) {
            methods[i].fn(q, a);
            return;
        }
    th_mcpprompt_fail(a, TH_RPC_METHOD_NOT_FOUND, "Method not found: %.200s", q->method);
}
