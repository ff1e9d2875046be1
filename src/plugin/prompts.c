/* SPDX-License-Identifier: MIT */
/*
** plugin/prompts.c: the prompt and completion registry. Checks descriptors
** field by field (messages name the field and the rule), keeps deep copies
** in registration order, checks a prompts/get's arguments against the
** declared ones, and runs get and complete functions on a call context.
*/
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "call/crashnote.h"
#include "plugin/prompts.h"
#include "plugin/qualname.h"

typedef struct vec {
    void **items;
    size_t n, cap;
} vec;

struct th_prompts {
    vec prompts;     /* th_prompt_entry *, registration order */
    vec completions; /* th_completion_entry * */
    const th_naming *naming; /* borrowed from the registry, or NULL */
};

/* Minimum struct_size: the first published layouts, which end at destroy. */
#define TH_PROMPT_MIN_SIZE (offsetof(th_prompt, destroy) + sizeof(void (*)(void *)))
#define TH_COMPLETION_MIN_SIZE (offsetof(th_completion, destroy) + sizeof(void (*)(void *)))

th_prompts *th_prompts_new(void)
{
    return calloc(1, sizeof(th_prompts));
}

void th_prompts_set_naming(th_prompts *ps, const th_naming *n)
{
    if (ps)
        ps->naming = n;
}

const th_naming *th_prompts_naming(const th_prompts *ps)
{
    return ps ? ps->naming : NULL;
}

static void prompt_free(th_prompt_entry *e)
{
    if (!e)
        return;
    if (e->destroy)
        e->destroy(e->user_data);
    free(e->name);
    free(e->title);
    free(e->description);
    json_object_put(e->arguments);
    json_object_put(e->icons);
    free(e->origin);
    free(e->original_name);
    free(e->toolbox);
    free(e->plugin);
    free(e);
}

static void completion_free(th_completion_entry *e)
{
    if (!e)
        return;
    if (e->destroy)
        e->destroy(e->user_data);
    free(e->prompt);
    free(e->uri_template);
    free(e->origin);
    free(e);
}

void th_prompts_truncate(th_prompts *ps, size_t n, size_t c)
{
    while (ps->completions.n > c)
        completion_free(ps->completions.items[--ps->completions.n]);
    while (ps->prompts.n > n)
        prompt_free(ps->prompts.items[--ps->prompts.n]);
}

void th_prompts_remove_if(th_prompts *ps, bool (*drop)(const th_prompt_entry *e, void *arg), void *arg)
{
    size_t kept = 0;
    for (size_t i = 0; i < ps->prompts.n; i++) {
        th_prompt_entry *e = ps->prompts.items[i];
        if (!drop(e, arg)) {
            ps->prompts.items[kept++] = e;
            continue;
        }
        /* A completion of a prompt no longer served would answer for it. */
        size_t ckept = 0;
        for (size_t k = 0; k < ps->completions.n; k++) {
            th_completion_entry *c = ps->completions.items[k];
            if (c->prompt && strcmp(c->prompt, e->name) == 0)
                completion_free(c);
            else
                ps->completions.items[ckept++] = c;
        }
        ps->completions.n = ckept;
        prompt_free(e);
    }
    ps->prompts.n = kept;
}

void th_prompts_free(th_prompts *ps)
{
    if (!ps)
        return;
    th_prompts_truncate(ps, 0, 0);
    free(ps->prompts.items);
    free(ps->completions.items);
    free(ps);
}

static bool vec_push(vec *v, void *item)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 8;
        void **p = realloc(v->items, cap * sizeof *p);
        if (!p)
            return false;
        v->items = p;
        v->cap = cap;
    }
    v->items[v->n++] = item;
    return true;
}

size_t th_prompts_count(const th_prompts *ps)
{
    return ps ? ps->prompts.n : 0;
}

const th_prompt_entry *th_prompts_at(const th_prompts *ps, size_t i)
{
    return ps && i < ps->prompts.n ? ps->prompts.items[i] : NULL;
}

size_t th_prompts_completion_count(const th_prompts *ps)
{
    return ps ? ps->completions.n : 0;
}

const th_completion_entry *th_prompts_completion_at(const th_prompts *ps, size_t i)
{
    return ps && i < ps->completions.n ? ps->completions.items[i] : NULL;
}

const th_prompt_entry *th_prompts_find(const th_prompts *ps, const char *name)
{
    for (size_t i = 0; ps && name && i < ps->prompts.n; i++) {
        const th_prompt_entry *e = ps->prompts.items[i];
        if (strcmp(e->name, name) == 0)
            return e;
    }
    return NULL;
}

const th_completion_entry *th_prompts_find_completion(const th_prompts *ps, const char *prompt,
                                                      const char *uri_template)
{
    for (size_t i = 0; ps && i < ps->completions.n; i++) {
        const th_completion_entry *e = ps->completions.items[i];
        if (prompt ? e->prompt && strcmp(e->prompt, prompt) == 0
                   : uri_template && e->uri_template && strcmp(e->uri_template, uri_template) == 0)
            return e;
    }
    return NULL;
}

static bool same_str(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

static bool same_json(json_object *a, json_object *b)
{
    return a == b || (a && b && json_object_equal(a, b));
}

bool th_prompts_same(const th_prompts *a, const th_prompts *b)
{
    if (th_prompts_count(a) != th_prompts_count(b))
        return false;
    for (size_t i = 0; i < th_prompts_count(a); i++) {
        const th_prompt_entry *x = th_prompts_at(a, i), *y = th_prompts_at(b, i);
        if (!same_str(x->name, y->name) || !same_str(x->title, y->title) ||
            !same_str(x->description, y->description) || !same_json(x->arguments, y->arguments) ||
            !same_json(x->icons, y->icons))
            return false;
    }
    return true;
}

/* ---- rules -------------------------------------------------------------- */

static bool name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == '.';
}

/* Strict JSON text of FIELD that must be an array; NULL with ERR set. */
static json_object *parse_array(const char *text, const char *field, th_err *err)
{
    json_tokener *tok = json_tokener_new();
    if (!tok) {
        th_err_set(err, TH_ERR_NOMEM, "out of memory parsing Prompt %s", field);
        return NULL;
    }
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *o = json_tokener_parse_ex(tok, text, -1);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    if (jerr != json_tokener_success || end != strlen(text)) {
        json_object_put(o);
        th_err_set(err, TH_ERR_VALUE, "Prompt %s is not valid JSON", field);
        return NULL;
    }
    if (!json_object_is_type(o, json_type_array)) {
        json_object_put(o);
        th_err_set(err, TH_ERR_VALUE, "Prompt %s must be a JSON array", field);
        return NULL;
    }
    return o;
}

static bool is_string(json_object *o, const char *key, bool required)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v))
        return !required;
    return json_object_is_type(v, json_type_string) && json_object_get_string_len(v) > 0;
}

/* Each PromptArgument: an object with a unique non-empty string "name",
 * optional string "title"/"description", optional boolean "required". */
static th_rc check_arguments(json_object *args, th_err *err)
{
    for (size_t i = 0; i < json_object_array_length(args); i++) {
        json_object *a = json_object_array_get_idx(args, i), *v;
        if (!json_object_is_type(a, json_type_object) || !is_string(a, "name", true))
            return th_err_set(err, TH_ERR_VALUE, "Prompt arguments[%zu] must be an object with a string \"name\"", i);
        if (!is_string(a, "description", false) || !is_string(a, "title", false))
            return th_err_set(err, TH_ERR_VALUE, "Prompt arguments[%zu].description and .title must be strings", i);
        if (json_object_object_get_ex(a, "required", &v) && !json_object_is_type(v, json_type_boolean))
            return th_err_set(err, TH_ERR_VALUE, "Prompt arguments[%zu].required must be true or false", i);
        const char *name = json_object_get_string(json_object_object_get(a, "name"));
        for (size_t k = 0; k < i; k++)
            if (strcmp(json_object_get_string(json_object_object_get(json_object_array_get_idx(args, k), "name")),
                       name) == 0)
                return th_err_set(err, TH_ERR_VALUE, "Prompt arguments[%zu]: name '%.100s' already used by "
                                  "arguments[%zu]", i, name, k);
    }
    return TH_OK;
}

/* Each Icon: an object with a string "src"; "mimeType", "theme" strings,
 * "sizes" an array of strings. */
static th_rc check_icons(json_object *icons, th_err *err)
{
    for (size_t i = 0; i < json_object_array_length(icons); i++) {
        json_object *ic = json_object_array_get_idx(icons, i), *v;
        if (!json_object_is_type(ic, json_type_object) || !is_string(ic, "src", true))
            return th_err_set(err, TH_ERR_VALUE, "Prompt icons[%zu] must be an object with a string \"src\"", i);
        if (!is_string(ic, "mimeType", false) || !is_string(ic, "theme", false))
            return th_err_set(err, TH_ERR_VALUE, "Prompt icons[%zu].mimeType and .theme must be strings", i);
        if (json_object_object_get_ex(ic, "sizes", &v)) {
            bool ok = json_object_is_type(v, json_type_array);
            for (size_t k = 0; ok && k < json_object_array_length(v); k++)
                ok = json_object_is_type(json_object_array_get_idx(v, k), json_type_string);
            if (!ok)
                return th_err_set(err, TH_ERR_VALUE, "Prompt icons[%zu].sizes must be an array of strings", i);
        }
    }
    return TH_OK;
}

/* The ABI check every descriptor gets first; copies into OUT (SIZE bytes). */
static th_rc check_abi(const void *desc, uint32_t abi, uint32_t size, size_t min, size_t max, const char *what,
                       void *out, th_err *err)
{
    if (abi != TH_ABI_VERSION)
        return th_err_set(err, TH_ERR_ABI,
                          "incompatible %s descriptor: ABI version mismatch. Host ABI version is %d, plugin ABI "
                          "version is %u.",
                          what, TH_ABI_VERSION, (unsigned)abi);
    if (size < min || size > max)
        return th_err_set(err, TH_ERR_ABI,
                          "incompatible %s descriptor: struct size mismatch. Host th_%s is %zu bytes, plugin "
                          "th_%s is %u bytes%s.",
                          what, what, max, what, (unsigned)size, size > max ? " (built against a newer toolhost)" : "");
    memset(out, 0, max);
    memcpy(out, desc, size);
    return TH_OK;
}

static char *dup_opt(const char *s, bool *oom)
{
    if (!s)
        return NULL;
    char *d = strdup(s);
    if (!d)
        *oom = true;
    return d;
}

th_rc th_prompts_add(th_prompts *ps, const th_prompt *p, bool started, const char *origin, th_err *err)
{
    if (!p)
        return th_err_set(err, TH_ERR_TYPE, "Prompt must be a th_prompt (descriptor is NULL)");
    th_prompt r;
    th_rc rc = check_abi(p, p->abi_version, p->struct_size, TH_PROMPT_MIN_SIZE, sizeof r, "prompt", &r, err);
    if (rc != TH_OK)
        return rc;
    if (started)
        return th_err_set(err, TH_ERR_RUNTIME, "Cannot register prompts after server has started");
    if (!r.name)
        return th_err_set(err, TH_ERR_ATTRIBUTE, "Prompt missing required attribute: name");
    size_t nlen = strlen(r.name);
    if (nlen == 0 || nlen > TH_PROMPT_NAME_MAX)
        return th_err_set(err, TH_ERR_VALUE, "Prompt name length must be 1-%d chars, got %zu", TH_PROMPT_NAME_MAX,
                          nlen);
    for (const char *c = r.name; *c; c++)
        if (!name_char(*c))
            return th_err_set(err, TH_ERR_VALUE,
                              "Prompt name '%.200s' invalid (must be letters, digits, '_', '-' and '.')", r.name);
    /* The name clients see is the one that must be unique (as for tools). */
    char *exposed = NULL, *toolbox = NULL, *plugin = NULL, *described = NULL;
    json_object *args = NULL, *icons = NULL;
    if (th_naming_expose_as(ps->naming, origin, r.name, &th_qualname_prompt_kind, &toolbox, &plugin, &exposed, err) !=
        TH_OK)
        return err ? err->code : TH_ERR_VALUE;
    const th_prompt_entry *first = th_prompts_find(ps, exposed);
    if (first && first->toolbox && toolbox && strcmp(first->toolbox, toolbox) != 0)
        th_err_set(err, TH_ERR_VALUE,
                   "Prompt '%s' already registered (first by %s in toolbox '%s'; again by %s in toolbox '%s')",
                   exposed, first->origin, first->toolbox, origin ? origin : "", toolbox);
    else if (first)
        th_err_set(err, TH_ERR_VALUE, "Prompt '%s' already registered%s%s%s", exposed,
                   first->origin[0] ? " (first by " : "", first->origin, first->origin[0] ? ")" : "");
    if (first)
        goto refused;
    if (r.title && !th_utf8_valid(r.title, strlen(r.title))) {
        th_err_set(err, TH_ERR_VALUE, "Prompt title must be valid UTF-8");
        goto refused;
    }
    if (r.description && !th_utf8_valid(r.description, strlen(r.description))) {
        th_err_set(err, TH_ERR_VALUE, "Prompt description must be valid UTF-8");
        goto refused;
    }
    bool qualified = strcmp(exposed, r.name) != 0;
    if (qualified) { /* "[toolbox/server] " before it (doc/registry-rules.md, 7) */
        th_buf d = {0};
        th_buf_printf(&d, "[%s/%s]%s%s", toolbox, plugin, r.description ? " " : "", r.description ? r.description : "");
        if (!(described = d.data))
            goto nomem;
    }
    if (r.arguments && (!(args = parse_array(r.arguments, "arguments", err)) || check_arguments(args, err) != TH_OK))
        goto refused;
    if (r.icons && (!(icons = parse_array(r.icons, "icons", err)) || check_icons(icons, err) != TH_OK))
        goto refused;
    if (!r.get) {
        th_err_set(err, TH_ERR_VALUE, "Prompt must have a 'get' function");
        goto refused;
    }
    if (!args && !(args = json_object_new_array()))
        goto nomem;
    th_prompt_entry *e = calloc(1, sizeof *e);
    if (!e)
        goto nomem;
    bool oom = false;
    e->name = exposed;
    e->original_name = dup_opt(r.name, &oom);
    e->toolbox = toolbox;
    e->plugin = plugin;
    e->qualified = qualified;
    e->title = dup_opt(r.title, &oom);
    e->description = described ? described : dup_opt(r.description, &oom);
    e->origin = dup_opt(origin ? origin : "", &oom);
    e->arguments = args;
    e->icons = icons;
    exposed = toolbox = plugin = described = NULL; /* the entry's now */
    if (oom || !vec_push(&ps->prompts, e)) {
        e->arguments = e->icons = NULL;
        e->destroy = NULL;
        prompt_free(e);
        goto nomem;
    }
    e->get = r.get;
    e->user_data = r.user_data;
    e->destroy = r.destroy;
    e->timeout_ms = r.timeout_ms;
    th_log(TH_LOG_INFO, "prompt_registered name=%s%s%s", e->name, e->origin[0] ? " plugin=" : "", e->origin);
    return TH_OK;
nomem:
    th_err_set(err, TH_ERR_NOMEM, "out of memory registering a prompt");
refused:
    json_object_put(args);
    json_object_put(icons);
    free(exposed);
    free(toolbox);
    free(plugin);
    free(described);
    return err ? err->code : TH_ERR_VALUE;
}

th_rc th_prompts_add_completion(th_prompts *ps, const th_completion *c, bool started, const char *origin,
                                th_err *err)
{
    if (!c)
        return th_err_set(err, TH_ERR_TYPE, "Completion must be a th_completion (descriptor is NULL)");
    th_completion r;
    th_rc rc =
        check_abi(c, c->abi_version, c->struct_size, TH_COMPLETION_MIN_SIZE, sizeof r, "completion", &r, err);
    if (rc != TH_OK)
        return rc;
    if (started)
        return th_err_set(err, TH_ERR_RUNTIME, "Cannot register completions after server has started");
    if (!r.prompt == !r.uri_template)
        return th_err_set(err, TH_ERR_ATTRIBUTE,
                          "Completion must name exactly one of 'prompt' and 'uri_template' (got %s)",
                          r.prompt ? "both" : "neither");
    const char *ref = r.prompt ? r.prompt : r.uri_template;
    if (!*ref || !th_utf8_valid(ref, strlen(ref)))
        return th_err_set(err, TH_ERR_VALUE, "Completion %s must be non-empty UTF-8",
                          r.prompt ? "prompt" : "uri_template");
    if (!r.complete)
        return th_err_set(err, TH_ERR_VALUE, "Completion must have a 'complete' function");
    /* With qualified names, a plugin completes its own prompt by the name
     * it registered (qualified here as the prompt is), or any plugin's by
     * the exposed name: one that parses into a toolbox of the host. */
    char *prompt = NULL, *toolbox = NULL, *plugin = NULL;
    th_qualname q;
    if (r.prompt && th_naming_qualified(ps->naming) && th_qualname_parse(r.prompt, &q) &&
        th_naming_has_toolbox(ps->naming, q.toolbox, q.toolbox_len)) {
        if (!(prompt = strdup(r.prompt)))
            return th_err_set(err, TH_ERR_NOMEM, "out of memory registering a completion");
        ref = prompt;
    } else if (r.prompt) {
        rc = th_naming_expose_as(ps->naming, origin, r.prompt, &th_qualname_prompt_kind, &toolbox, &plugin, &prompt,
                                 err);
        free(toolbox);
        free(plugin);
        if (rc != TH_OK)
            return rc;
        ref = prompt;
    }
    const th_completion_entry *first = th_prompts_find_completion(ps, prompt, r.uri_template);
    if (first) {
        rc = th_err_set(err, TH_ERR_VALUE, "Completion of %s '%.200s' already registered%s%s%s",
                        r.prompt ? "prompt" : "uri_template", ref, first->origin[0] ? " (first by " : "",
                        first->origin, first->origin[0] ? ")" : "");
        free(prompt);
        return rc;
    }
    th_completion_entry *e = calloc(1, sizeof *e);
    bool oom = !e;
    if (e) {
        e->prompt = prompt;
        prompt = NULL;
        e->uri_template = dup_opt(r.uri_template, &oom);
        e->origin = dup_opt(origin ? origin : "", &oom);
    }
    if (oom || !vec_push(&ps->completions, e)) {
        if (e) {
            free(e->prompt);
            free(e->uri_template);
            free(e->origin);
            free(e);
        }
        free(prompt);
        return th_err_set(err, TH_ERR_NOMEM, "out of memory registering a completion");
    }
    e->complete = r.complete;
    e->user_data = r.user_data;
    e->destroy = r.destroy;
    e->timeout_ms = r.timeout_ms;
    th_log(TH_LOG_INFO, "completion_registered %s=%s%s%s", r.prompt ? "prompt" : "uri_template",
           e->prompt ? e->prompt : e->uri_template,
           e->origin[0] ? " plugin=" : "", e->origin);
    return TH_OK;
}

bool th_prompts_check_args(const th_prompt_entry *e, json_object *args, char *msg, size_t msgsize)
{
    if (args && !json_object_is_type(args, json_type_object)) {
        snprintf(msg, msgsize, "Invalid params: \"arguments\" must be an object of strings");
        return false;
    }
    if (args) {
        json_object_object_foreach(args, key, val)
        {
            bool declared = false;
            for (size_t i = 0; !declared && i < json_object_array_length(e->arguments); i++)
                declared = strcmp(json_object_get_string(json_object_object_get(
                                      json_object_array_get_idx(e->arguments, i), "name")),
                                  key) == 0;
            if (!declared) {
                snprintf(msg, msgsize, "Invalid params: prompt '%s' has no argument '%.100s'", e->name, key);
                return false;
            }
            if (!json_object_is_type(val, json_type_string)) {
                snprintf(msg, msgsize, "Invalid params: argument '%.100s' of prompt '%s' must be a string", key,
                         e->name);
                return false;
            }
        }
    }
    for (size_t i = 0; i < json_object_array_length(e->arguments); i++) {
        json_object *a = json_object_array_get_idx(e->arguments, i), *req;
        const char *name = json_object_get_string(json_object_object_get(a, "name"));
        if (json_object_object_get_ex(a, "required", &req) && json_object_get_boolean(req) &&
            !(args && json_object_object_get_ex(args, name, NULL))) {
            snprintf(msg, msgsize, "Invalid params: missing required argument '%s' of prompt '%s'", name, e->name);
            return false;
        }
    }
    return true;
}

/* ---- running ------------------------------------------------------------ */

/* Finish CALL after its function returned *RC; the host's refusal of the
 * result (too big, invalid) is no choice of the plugin's. */
static json_object *finish(th_call *call, th_rc *rc)
{
    json_object *result = th_call_finish(call, *rc);
    if (th_call_refused(call))
        *rc = TH_ERR_TOOL;
    th_call_free(call);
    return result;
}

json_object *th_prompts_run_get(const th_prompt_entry *e, json_object *args, const th_call_hooks *hooks, th_rc *rc)
{
    /* The get is given the name it registered, qualified or not, in a
     * worker or not (as a tool's handler is). */
    th_call *call = th_call_new(e->original_name ? e->original_name : e->name, hooks);
    if (!call) {
        *rc = TH_ERR_NOMEM;
        return NULL;
    }
    json_object *own = args ? NULL : json_object_new_object();
    int slot = th_crashnote_begin(e->name); /* a fatal signal names the prompt */
    *rc = e->get(th_call_handle(call), args ? args : own, e->user_data);
    th_crashnote_end(slot);
    json_object_put(own);
    return finish(call, rc);
}

json_object *th_prompts_run_complete(const th_completion_entry *e, const char *argument, const char *value,
                                     json_object *context, const th_call_hooks *hooks, th_rc *rc)
{
    const char *name = e->prompt ? e->prompt : e->uri_template;
    th_call *call = th_call_new(name, hooks);
    if (!call) {
        *rc = TH_ERR_NOMEM;
        return NULL;
    }
    json_object *own = context ? NULL : json_object_new_object();
    int slot = th_crashnote_begin(name);
    *rc = e->complete(th_call_handle(call), argument, value, context ? context : own, e->user_data);
    th_crashnote_end(slot);
    json_object_put(own);
    return finish(call, rc);
}

/* A marker block: the host turns the blocks after it into ROLE's messages
 * (protocol/mcpprompts.c). A block, so that it crosses the worker IPC with
 * the rest of the result unchanged. */
th_rc th_call_prompt_role(th_call *call, const char *role)
{
    if (!role || (strcmp(role, "user") != 0 && strcmp(role, "assistant") != 0))
        return TH_ERR_VALUE;
    json_object *b = json_object_new_object(), *meta = json_object_new_object();
    if (!b || !meta) {
        json_object_put(b);
        json_object_put(meta);
        return TH_ERR_NOMEM;
    }
    json_object_object_add(b, "type", json_object_new_string("text"));
    json_object_object_add(b, "text", json_object_new_string(""));
    json_object_object_add(meta, TH_PROMPT_ROLE_META, json_object_new_string(role));
    json_object_object_add(b, "_meta", meta);
    return th_call_content(call, b);
}
