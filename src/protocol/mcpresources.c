/* SPDX-License-Identifier: MIT */
/*
** protocol/mcpresources.c: the resource methods of MCP for both eras over
** the registry's resources (plugin/resources.c), the legacy
** resources/subscribe table (session, URI), and the fan-out of resource
** events (updates from plugins, list changes) to sessions and listeners.
*/
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "plugin/resources.h"
#include "protocol/jsonrpc.h"
#include "protocol/pagination.h"
#include "protocol/mcpresources.h"

#define CURSOR_RES "r1:"
#define CURSOR_TPL "t1:"
#define ERR_NOT_FOUND_LEGACY (-32002) /* 2025-11-25 server/resources */

/* ---- sessions and subscriptions ---------------------------------------- */

typedef struct sub {
    void *session;
    char *uri;
    struct sub *next;
} sub;

static pthread_mutex_t subs_lock = PTHREAD_MUTEX_INITIALIZER;
static sub *subs;
/* The listener runs under the read lock, so that removing it waits for
 * an event being delivered; never under subs_lock, since it asks
 * th_mcpres_subscribed. */
static pthread_rwlock_t event_lock = PTHREAD_RWLOCK_INITIALIZER;
static void (*event_fn)(const char *uri, void *ctx);
static void *event_ctx;

void th_mcpres_on_updated(void (*fn)(const char *uri, void *ctx), void *ctx)
{
    pthread_rwlock_wrlock(&event_lock);
    if (fn || event_ctx == ctx) {
        event_fn = fn;
        event_ctx = fn ? ctx : NULL;
    }
    pthread_rwlock_unlock(&event_lock);
}

/* A plugin's th_resource_updated(): to the listener, which tells sessions. */
static void updated(const char *uri, void *ctx)
{
    (void)ctx;
    pthread_rwlock_rdlock(&event_lock);
    if (event_fn)
        event_fn(uri, event_ctx);
    pthread_rwlock_unlock(&event_lock);
}

void th_mcpres_init(void)
{
    th_resources_on_update(updated, NULL);
}

bool th_mcpres_subscribed(const void *session, const char *uri)
{
    bool found = false;
    pthread_mutex_lock(&subs_lock);
    for (sub *s = subs; s && !found; s = s->next)
        found = s->session == session && strcmp(s->uri, uri) == 0;
    pthread_mutex_unlock(&subs_lock);
    return found;
}

void th_mcpres_session_gone(void *session)
{
    pthread_mutex_lock(&subs_lock);
    for (sub **pp = &subs; *pp;) {
        sub *s = *pp;
        if (s->session == session) {
            *pp = s->next;
            free(s->uri);
            free(s);
        } else {
            pp = &s->next;
        }
    }
    pthread_mutex_unlock(&subs_lock);
}

/* Under subs_lock. */
static sub *find_sub(void *session, const char *uri)
{
    for (sub *s = subs; s; s = s->next)
        if (s->session == session && strcmp(s->uri, uri) == 0)
            return s;
    return NULL;
}

/* Record (SESSION, URI) once. */
static bool subscribe(void *session, const char *uri)
{
    bool ok = true;
    pthread_mutex_lock(&subs_lock);
    if (!find_sub(session, uri)) {
        sub *s = calloc(1, sizeof *s);
        if (s && (s->uri = strdup(uri))) {
            s->session = session;
            s->next = subs;
            subs = s;
        } else {
            free(s);
            ok = false;
        }
    }
    pthread_mutex_unlock(&subs_lock);
    return ok;
}

static void unsubscribe(void *session, const char *uri)
{
    pthread_mutex_lock(&subs_lock);
    for (sub **pp = &subs; *pp; pp = &(*pp)->next) {
        sub *s = *pp;
        if (s->session == session && s->uri && strcmp(s->uri, uri) == 0) {
            *pp = s->next;
            free(s->uri);
            free(s);
            break;
        }
    }
    pthread_mutex_unlock(&subs_lock);
}

/* ---- answers ----------------------------------------------------------- */

void th_mcpres_fail(th_mcpres_answer *a, int code, json_object *data, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->message, sizeof a->message, fmt, ap);
    va_end(ap);
    th_utf8_clip(a->message);
    a->code = code;
    a->data = data;
    json_object_put(a->result);
    a->result = NULL;
}

/* The not-found error of Q's revision, with the URI in data. */
static void not_found(const th_mcpres_req *q, th_mcpres_answer *a, const char *uri)
{
    json_object *data = json_object_new_object();
    if (data)
        json_object_object_add(data, "uri", json_object_new_string(uri));
    th_mcpres_fail(a, q->modern ? TH_RPC_INVALID_PARAMS : ERR_NOT_FOUND_LEGACY, data, "Resource not found");
}

static void put_str(json_object *o, const char *key, const char *val)
{
    if (val)
        json_object_object_add(o, key, json_object_new_string(val));
}

static json_object *entry_json(const th_mcpres_req *q, const th_res_entry *e)
{
    json_object *o = json_object_new_object();
    if (!o)
        return NULL;
    if (e->uri)
        put_str(o, "uri", e->uri);
    else
        put_str(o, "uriTemplate", e->uri_template);
    put_str(o, "name", e->name);
    if (q->titles)
        put_str(o, "title", e->title);
    put_str(o, "description", e->description);
    put_str(o, "mimeType", e->mime_type);
    if (e->size && e->uri)
        json_object_object_add(o, "size", json_object_new_int64((int64_t)e->size));
    if (e->annotations)
        json_object_object_add(o, "annotations", json_object_get(e->annotations));
    return o;
}

static void cache_hints(const th_mcpres_req *q, json_object *res, long long ttl, const char *scope)
{
    if (!q->modern)
        return;
    json_object_object_add(res, "ttlMs", json_object_new_int64(ttl));
    json_object_object_add(res, "cacheScope", json_object_new_string(scope));
}

static void list(const th_mcpres_req *q, th_mcpres_answer *a, bool templates)
{
    const th_resources *rs = th_registry_resources(q->reg);
    size_t count = templates ? th_resources_template_count(rs) : th_resources_count(rs), offset;
    const char *prefix = templates ? CURSOR_TPL : CURSOR_RES;
    size_t end;
    if (!th_page_window(q->params, prefix, count, q->page_size, &offset, &end)) {
        th_mcpres_fail(a, TH_RPC_INVALID_PARAMS, NULL, "Invalid params: invalid cursor");
        return;
    }
    json_object *res = json_object_new_object(), *arr = json_object_new_array();
    if (!res || !arr) {
        json_object_put(res);
        json_object_put(arr);
        th_mcpres_fail(a, TH_RPC_INTERNAL_ERROR, NULL, "Internal error: out of memory");
        return;
    }
    for (size_t i = offset; i < end; i++) {
        json_object *o = entry_json(q, templates ? th_resources_template_at(rs, i) : th_resources_at(rs, i));
        if (o)
            json_object_array_add(arr, o);
    }
    json_object_object_add(res, templates ? "resourceTemplates" : "resources", arr);
    th_page_next(res, prefix, end, count);
    cache_hints(q, res, q->list_ttl_ms, "public");
    a->result = res;
}

/* The "uri" parameter as a plain string, or NULL with the error set. */
static const char *uri_param(const th_mcpres_req *q, th_mcpres_answer *a)
{
    json_object *u;
    if (!q->params || !json_object_object_get_ex(q->params, "uri", &u) || !json_object_is_type(u, json_type_string) ||
        strlen(json_object_get_string(u)) != (size_t)json_object_get_string_len(u)) {
        th_mcpres_fail(a, TH_RPC_INVALID_PARAMS, NULL, "Invalid params: %s needs a string \"uri\"", q->method);
        return NULL;
    }
    return json_object_get_string(u);
}

/* The first text block's text of a read's result, for an error message. */
static const char *first_text(json_object *result)
{
    json_object *content, *t;
    if (!result || !json_object_object_get_ex(result, "content", &content))
        return NULL;
    for (size_t i = 0; i < json_object_array_length(content); i++) {
        json_object *b = json_object_array_get_idx(content, i);
        if (json_object_object_get_ex(b, "text", &t) && json_object_is_type(t, json_type_string))
            return json_object_get_string(t);
    }
    return NULL;
}

static const char *str_of(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ? json_object_get_string(v)
                                                                                             : NULL;
}

/*
** The content blocks a read function produced as ReadResourceResult
** contents: embedded resources as they are, a text block as text of URI, an
** image or audio block as a blob. NULL with *WHY for a block that cannot be
** a resource's contents.
*/
static json_object *contents_of(json_object *result, const th_res_entry *e, const char *uri, const char **why)
{
    json_object *content, *out = json_object_new_array();
    if (!out || !json_object_object_get_ex(result, "content", &content)) {
        *why = "no result";
        json_object_put(out);
        return NULL;
    }
    for (size_t i = 0; i < json_object_array_length(content); i++) {
        json_object *b = json_object_array_get_idx(content, i), *inner;
        const char *type = str_of(b, "type");
        if (type && strcmp(type, "resource") == 0 && json_object_object_get_ex(b, "resource", &inner)) {
            json_object_array_add(out, json_object_get(inner));
            continue;
        }
        json_object *c = json_object_new_object();
        if (!c)
            continue;
        put_str(c, "uri", uri);
        bool text = type && strcmp(type, "text") == 0;
        bool bin = type && (strcmp(type, "image") == 0 || strcmp(type, "audio") == 0);
        if (!text && !bin) {
            json_object_put(c);
            json_object_put(out);
            *why = "a block that is not text, image, audio or an embedded resource";
            return NULL;
        }
        const char *mime = text ? e->mime_type : str_of(b, "mimeType");
        put_str(c, "mimeType", mime);
        put_str(c, text ? "text" : "blob", str_of(b, text ? "text" : "data"));
        json_object_array_add(out, c);
    }
    return out;
}

static void read_resource(const th_mcpres_req *q, th_mcpres_answer *a)
{
    const char *uri = uri_param(q, a);
    if (!uri)
        return;
    json_object *vars = NULL;
    const th_res_entry *e = th_resources_resolve(th_registry_resources(q->reg), uri, &vars);
    if (!e) {
        not_found(q, a, uri);
        return;
    }
    th_rc rc;
    json_object *result = th_resources_run_read(e, uri, vars, q->hooks, &rc);
    json_object *err_flag;
    bool is_error = result && json_object_object_get_ex(result, "isError", &err_flag) &&
                    json_object_get_boolean(err_flag);
    const char *msg = first_text(result);
    if (rc == TH_ERR_NOT_FOUND) {
        not_found(q, a, uri);
    } else if (rc == TH_ERR_VALUE) {
        th_mcpres_fail(a, TH_RPC_INVALID_PARAMS, NULL, "Invalid params: %s", is_error && msg ? msg : "the URI was refused");
    } else if (!result || rc != TH_OK || is_error) {
        th_mcpres_fail(a, TH_RPC_INTERNAL_ERROR, NULL, "Internal error: reading resource '%s' failed: %s", e->name,
             msg ? msg : th_rc_name(rc));
    } else {
        const char *why = NULL;
        json_object *contents = contents_of(result, e, uri, &why);
        json_object *res = contents ? json_object_new_object() : NULL;
        if (!res) {
            json_object_put(contents);
            th_mcpres_fail(a, TH_RPC_INTERNAL_ERROR, NULL, "Internal error: resource '%s' returned %s", e->name,
                 why ? why : "nothing (out of memory)");
        } else {
            json_object_object_add(res, "contents", contents);
            /* Contents may change at any time (th_resource_updated): not
             * for caching. */
            cache_hints(q, res, 0, "private");
            a->result = res;
        }
    }
    json_object_put(result);
    json_object_put(vars);
}

static void subscribe_method(const th_mcpres_req *q, th_mcpres_answer *a, bool on)
{
    const char *uri = uri_param(q, a);
    if (!uri)
        return;
    if (!on) {
        unsubscribe(q->session, uri);
        a->result = json_object_new_object();
        return;
    }
    const th_res_entry *e = th_resources_resolve(th_registry_resources(q->reg), uri, NULL);
    if (!e) {
        not_found(q, a, uri);
        return;
    }
    if (!subscribe(q->session, uri)) {
        th_mcpres_fail(a, TH_RPC_INTERNAL_ERROR, NULL, "Internal error: out of memory");
        return;
    }
    if (e->watch)
        e->watch(e->user_data);
    a->result = json_object_new_object();
}

static void m_list(const th_mcpres_req *q, th_mcpres_answer *a)
{
    list(q, a, false);
}

static void m_templates(const th_mcpres_req *q, th_mcpres_answer *a)
{
    list(q, a, true);
}

static void m_subscribe(const th_mcpres_req *q, th_mcpres_answer *a)
{
    subscribe_method(q, a, true);
}

static void m_unsubscribe(const th_mcpres_req *q, th_mcpres_answer *a)
{
    subscribe_method(q, a, false);
}

static const struct {
    const char *name;
    bool legacy_only; /* 2026-07-28 has subscriptions/listen instead */
    void (*fn)(const th_mcpres_req *q, th_mcpres_answer *a);
} methods[] = {
    {"resources/list", false, m_list},
    {"resources/templates/list", false, m_templates},
    {"resources/read", false, read_resource},
    {"resources/subscribe", true, m_subscribe},
    {"resources/unsubscribe", true, m_unsubscribe},
};

bool th_mcpres_is_method(const char *method, bool *legacy_only)
{
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
        if (strcmp(methods[i].name, method) == 0) {
            if (legacy_only)
                *legacy_only = methods[i].legacy_only;
            return true;
        }
    return false;
}

void th_mcpres_serve(const th_mcpres_req *q, th_mcpres_answer *a)
{
    memset(a, 0, sizeof *a);
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
        if (strcmp(methods[i].name, q->method) == 0) {
            methods[i].fn(q, a);
            return;
        }
    th_mcpres_fail(a, TH_RPC_METHOD_NOT_FOUND, NULL, "Method not found: %.200s", q->method);
}
