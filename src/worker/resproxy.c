/* SPDX-License-Identifier: MIT */
/*
** worker/resproxy.c: resource descriptors as the scanner reports them and the
** host registers them again (with a proxy read), and the worker's lookup of
** the entry a READ frame names.
*/
#include "config.h"

#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "base/base64.h"
#include "plugin/skills.h"
#include "worker/resproxy.h"

static void put_str(json_object *o, const char *key, const char *val)
{
    if (val)
        json_object_object_add(o, key, json_object_new_string(val));
}

static json_object *describe(const th_res_entry *e)
{
    json_object *d = json_object_new_object();
    if (!d)
        return NULL;
    put_str(d, "kind", e->uri ? "resource" : "resource_template");
    put_str(d, "uri", e->uri);
    put_str(d, "uri_template", e->uri_template);
    put_str(d, "name", e->name);
    put_str(d, "title", e->title);
    put_str(d, "description", e->description);
    put_str(d, "mime_type", e->mime_type);
    if (e->size)
        json_object_object_add(d, "size", json_object_new_int64((int64_t)e->size));
    if (e->annotations)
        put_str(d, "annotations", json_object_to_json_string_ext(e->annotations, JSON_C_TO_STRING_PLAIN));
    /* A skill file's bytes go along: the host serves them itself. */
    const th_skill_file_entry *f = th_skills_file_of(e);
    if (f) {
        put_str(d, "skill", f->skill);
        put_str(d, "skill_path", f->path);
        char *b64 = th_base64_encode(f->data, f->size);
        put_str(d, "skill_data", b64 ? b64 : "");
        free(b64);
    }
    if (e->timeout_ms)
        json_object_object_add(d, "timeout_ms", json_object_new_int64(e->timeout_ms));
    return d;
}

void th_resproxy_describe(const th_registry *reg, size_t rbase, size_t tbase, json_object *into)
{
    const th_resources *rs = th_registry_resources(reg);
    for (size_t i = rbase; into && i < th_resources_count(rs); i++)
        json_object_array_add(into, describe(th_resources_at(rs, i)));
    for (size_t i = tbase; into && i < th_resources_template_count(rs); i++)
        json_object_array_add(into, describe(th_resources_template_at(rs, i)));
}


static const char *str_of(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ? json_object_get_string(v)
                                                                                             : NULL;
}

bool th_resproxy_is_resource(json_object *d, bool *template_)
{
    const char *kind = str_of(d, "kind");
    if (!kind)
        return false;
    if (template_)
        *template_ = strcmp(kind, "resource_template") == 0;
    return true;
}

/* A skill file: registered with the host's own read of its bytes (no proxy). */
static th_rc register_skill_file(th_registry *reg, json_object *d, const char *origin, th_err *err)
{
    const char *skill = str_of(d, "skill"), *path = str_of(d, "skill_path"), *data = str_of(d, "skill_data");
    size_t len = 0;
    unsigned char *bytes = skill && path && data ? th_base64_decode(data, strlen(data), &len) : NULL;
    if (!bytes)
        return th_err_set(err, TH_ERR_VALUE, "skill file descriptor '%.200s' is malformed", str_of(d, "uri"));
    th_rc rc = th_skills_add_file(th_registry_resources(reg), skill, path, bytes, len, str_of(d, "mime_type"), origin,
                                  err);
    free(bytes);
    return rc;
}

th_rc th_resproxy_register(th_registry *reg, json_object *d, const char *origin, th_read_fn read, void *user_data,
                           void (*destroy)(void *), void (*watch)(void *), th_err *err)
{
    if (json_object_object_get_ex(d, "skill", NULL)) {
        if (destroy)
            destroy(user_data);
        return register_skill_file(reg, d, origin, err);
    }
    bool template_ = false;
    th_resproxy_is_resource(d, &template_);
    json_object *v;
    int64_t size = json_object_object_get_ex(d, "size", &v) ? json_object_get_int64(v) : 0;
    int64_t timeout = json_object_object_get_ex(d, "timeout_ms", &v) ? json_object_get_int64(v) : 0;
    th_resource r = {
        TH_RESOURCE_INIT,
        .uri = str_of(d, "uri"),
        .uri_template = str_of(d, "uri_template"),
        .name = str_of(d, "name"),
        .title = str_of(d, "title"),
        .description = str_of(d, "description"),
        .mime_type = str_of(d, "mime_type"),
        .size = size > 0 ? (uint64_t)size : 0,
        .annotations = str_of(d, "annotations"),
        .read = read,
        .user_data = user_data,
        .destroy = destroy,
        .timeout_ms = timeout > 0 && timeout <= UINT32_MAX ? (uint32_t)timeout : 0,
    };
    return th_resources_add_proxy(th_registry_resources(reg), &r, template_, origin, watch, err);
}

const char *th_resproxy_key(const th_res_entry *e)
{
    return e->uri ? e->uri : e->uri_template;
}

const th_res_entry *th_resproxy_lookup(const th_registry *reg, json_object *req, const char **uri,
                                       json_object **vars)
{
    json_object *t, *v;
    const char *key = str_of(req, "key");
    bool template_ = json_object_object_get_ex(req, "template", &t) && json_object_get_boolean(t);
    *uri = str_of(req, "uri");
    *vars = json_object_object_get_ex(req, "vars", &v) && json_object_is_type(v, json_type_object) ? v : NULL;
    if (!key || !*uri)
        return NULL;
    return th_resources_find(th_registry_resources(reg), template_ ? NULL : key, template_ ? key : NULL);
}
