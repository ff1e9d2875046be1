/*
** callctx.c: th_call, the one way a running handler talks to the host. It
** collects content blocks, structured content and the error flag, and turns
** progress and log reports into notifications through the call's hooks.
*/
#include "config.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "callctx.h"
#include "log.h"
#include "util.h"

struct th_call {
    char *tool_name;
    th_call_hooks hooks;
    json_object *content;    /* array */
    json_object *structured; /* NULL until set */
    bool is_error;
    atomic_bool cancelled;
};

th_call *th_call_new(const char *tool_name, const th_call_hooks *hooks)
{
    th_call *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->tool_name = strdup(tool_name ? tool_name : "");
    c->content = json_object_new_array();
    if (!c->tool_name || !c->content) {
        th_call_free(c);
        return NULL;
    }
    if (hooks)
        c->hooks = *hooks;
    atomic_init(&c->cancelled, false);
    return c;
}

void th_call_free(th_call *c)
{
    if (!c)
        return;
    free(c->tool_name);
    json_object_put(c->content);
    json_object_put(c->structured);
    free(c);
}

void th_call_cancel(th_call *c)
{
    atomic_store(&c->cancelled, true);
}

bool th_call_cancelled(const th_call *c)
{
    return c && atomic_load(&((th_call *)c)->cancelled);
}

const char *th_call_tool_name(const th_call *c)
{
    return c ? c->tool_name : "";
}

bool th_call_is_error(const th_call *c)
{
    return c->is_error;
}

th_rc th_call_content(th_call *c, json_object *block)
{
    json_object *type;
    if (!c || !block || !json_object_is_type(block, json_type_object) ||
        !json_object_object_get_ex(block, "type", &type) || !json_object_is_type(type, json_type_string)) {
        json_object_put(block);
        return TH_ERR_MISUSE;
    }
    if (json_object_array_add(c->content, block) != 0) {
        json_object_put(block);
        return TH_ERR_NOMEM;
    }
    return TH_OK;
}

/* Add KEY: VALUE (a C string) to OBJ when VALUE is not NULL. */
static void put_str(json_object *obj, const char *key, const char *value)
{
    if (value)
        json_object_object_add(obj, key, json_object_new_string(value));
}

static json_object *block_of(const char *type)
{
    json_object *b = json_object_new_object();
    if (b)
        json_object_object_add(b, "type", json_object_new_string(type));
    return b;
}

th_rc th_call_text(th_call *c, const char *text)
{
    if (!c || !text)
        return TH_ERR_MISUSE;
    json_object *b = block_of("text");
    if (!b)
        return TH_ERR_NOMEM;
    put_str(b, "text", text);
    return th_call_content(c, b);
}

static th_rc vtextf(th_call *c, const char *fmt, va_list ap)
{
    th_buf buf = {0};
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return TH_ERR_MISUSE;
    buf.data = malloc((size_t)n + 1);
    if (!buf.data)
        return TH_ERR_NOMEM;
    vsnprintf(buf.data, (size_t)n + 1, fmt, ap);
    th_rc rc = th_call_text(c, buf.data);
    free(buf.data);
    return rc;
}

th_rc th_call_textf(th_call *c, const char *fmt, ...)
{
    if (!c || !fmt)
        return TH_ERR_MISUSE;
    va_list ap;
    va_start(ap, fmt);
    th_rc rc = vtextf(c, fmt, ap);
    va_end(ap);
    return rc;
}

static th_rc media(th_call *c, const char *type, const char *mime, const char *data)
{
    if (!c || !mime || !data)
        return TH_ERR_MISUSE;
    json_object *b = block_of(type);
    if (!b)
        return TH_ERR_NOMEM;
    put_str(b, "data", data);
    put_str(b, "mimeType", mime);
    return th_call_content(c, b);
}

th_rc th_call_image(th_call *c, const char *mime_type, const char *base64)
{
    return media(c, "image", mime_type, base64);
}

th_rc th_call_audio(th_call *c, const char *mime_type, const char *base64)
{
    return media(c, "audio", mime_type, base64);
}

th_rc th_call_resource_link(th_call *c, const char *uri, const char *name, const char *description,
                            const char *mime_type)
{
    if (!c || !uri || !name)
        return TH_ERR_MISUSE;
    json_object *b = block_of("resource_link");
    if (!b)
        return TH_ERR_NOMEM;
    put_str(b, "uri", uri);
    put_str(b, "name", name);
    put_str(b, "description", description);
    put_str(b, "mimeType", mime_type);
    return th_call_content(c, b);
}

static th_rc embedded(th_call *c, const char *uri, const char *mime, const char *key, const char *value)
{
    if (!c || !uri || !value)
        return TH_ERR_MISUSE;
    json_object *b = block_of("resource");
    json_object *r = json_object_new_object();
    if (!b || !r) {
        json_object_put(b);
        json_object_put(r);
        return TH_ERR_NOMEM;
    }
    put_str(r, "uri", uri);
    put_str(r, "mimeType", mime);
    put_str(r, key, value);
    json_object_object_add(b, "resource", r);
    return th_call_content(c, b);
}

th_rc th_call_resource_text(th_call *c, const char *uri, const char *mime_type, const char *text)
{
    return embedded(c, uri, mime_type, "text", text);
}

th_rc th_call_resource_blob(th_call *c, const char *uri, const char *mime_type, const char *base64)
{
    return embedded(c, uri, mime_type, "blob", base64);
}

th_rc th_call_structured(th_call *c, json_object *value)
{
    if (!c) {
        json_object_put(value);
        return TH_ERR_MISUSE;
    }
    json_object_put(c->structured);
    c->structured = value;
    return TH_OK;
}

th_rc th_call_error(th_call *c, const char *fmt, ...)
{
    if (!c || !fmt)
        return TH_ERR_MISUSE;
    c->is_error = true;
    va_list ap;
    va_start(ap, fmt);
    th_rc rc = vtextf(c, fmt, ap);
    va_end(ap);
    return rc;
}

static void notify(th_call *c, const char *method, json_object *params)
{
    json_object *n = json_object_new_object();
    if (!n) {
        json_object_put(params);
        return;
    }
    json_object_object_add(n, "jsonrpc", json_object_new_string("2.0"));
    json_object_object_add(n, "method", json_object_new_string(method));
    json_object_object_add(n, "params", params);
    c->hooks.notify(c->hooks.ctx, n);
}

th_rc th_call_progress(th_call *c, double progress, double total, const char *message)
{
    if (!c)
        return TH_ERR_MISUSE;
    if (th_call_cancelled(c))
        return TH_ERR_CANCELLED;
    if (!c->hooks.progress_token || !c->hooks.notify)
        return TH_OK;
    json_object *p = json_object_new_object();
    if (!p)
        return TH_ERR_NOMEM;
    json_object_object_add(p, "progressToken", json_object_get(c->hooks.progress_token));
    json_object_object_add(p, "progress", json_object_new_double(progress));
    if (total >= 0)
        json_object_object_add(p, "total", json_object_new_double(total));
    put_str(p, "message", message);
    notify(c, "notifications/progress", p);
    return TH_OK;
}

th_rc th_call_log(th_call *c, th_log_level level, const char *fmt, ...)
{
    if (!c || !fmt || (unsigned)level > TH_LOG_EMERGENCY)
        return TH_ERR_MISUSE;
    char text[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    th_utf8_clip(text);

    if (c->hooks.log_to_client && c->hooks.notify && level >= c->hooks.log_level && !th_call_cancelled(c)) {
        json_object *p = json_object_new_object();
        if (!p)
            return TH_ERR_NOMEM;
        json_object_object_add(p, "level", json_object_new_string(th_log_level_name(level)));
        json_object_object_add(p, "logger", json_object_new_string(c->tool_name));
        json_object_object_add(p, "data", json_object_new_string(text));
        notify(c, "notifications/message", p);
    } else {
        th_log(level, "tool %s: %s", c->tool_name, text);
    }
    return TH_OK;
}

json_object *th_call_finish(th_call *c, th_rc handler_rc)
{
    if (handler_rc != TH_OK && !c->is_error) {
        c->is_error = true;
        th_call_textf(c, "Tool '%s' failed (%s)", c->tool_name, th_rc_name(handler_rc));
    }
    json_object *r = json_object_new_object();
    if (!r)
        return NULL;
    /* Structured content is also sent as text for clients that ignore it. */
    if (c->structured && json_object_array_length(c->content) == 0)
        th_call_text(c, json_object_to_json_string_ext(c->structured, JSON_C_TO_STRING_PLAIN |
                                                                          JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_object_add(r, "content", c->content);
    c->content = json_object_new_array();
    if (c->structured) {
        json_object_object_add(r, "structuredContent", c->structured);
        c->structured = NULL;
    }
    if (c->is_error)
        json_object_object_add(r, "isError", json_object_new_boolean(1));
    return r;
}
