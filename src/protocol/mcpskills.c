/* SPDX-License-Identifier: MIT */
/*
** protocol/mcpskills.c: skills/list (paginated, an entry never split),
** skills/get and resources/directory/read over the skill files the registry
** holds (plugin/skills.c); each skill's entry is its SKILL.md's frontmatter
** and every file's digest and size.
*/
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "plugin/skills.h"
#include "protocol/jsonrpc.h"
#include "protocol/pagination.h"
#include "protocol/mcpskills.h"

#define CURSOR_SKILLS "s1:"
#define CURSOR_DIR "d1:"
#define DIRECTORY_MIME "inode/directory" /* the SEP's mark of a folder child */

static void oom(th_mcpres_answer *a)
{
    th_mcpres_fail(a, TH_RPC_INTERNAL_ERROR, NULL, "Internal error: out of memory");
}

/* Invalid params with the URI in data, as resources/read's SEP-2164 error. */
static void bad_uri(th_mcpres_answer *a, const char *uri, const char *why)
{
    json_object *data = json_object_new_object();
    if (data)
        json_object_object_add(data, "uri", json_object_new_string(uri));
    th_mcpres_fail(a, TH_RPC_INVALID_PARAMS, data, "Invalid params: %s", why);
}

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

/* Lists and entries change only with a reload, which notifies: cacheable. */
static void cache_hints(const th_mcpres_req *q, json_object *res)
{
    if (!q->modern)
        return;
    json_object_object_add(res, "ttlMs", json_object_new_int64(q->list_ttl_ms));
    json_object_object_add(res, "cacheScope", json_object_new_string("public"));
}

static bool is_manifest(const th_res_entry *e)
{
    const th_skill_file_entry *f = th_skills_file_of(e);
    return f && f->frontmatter;
}

/* The skill entry of manifest M: {uri, frontmatter, resources: [{uri, digest, size}]}. */
static json_object *skill_entry(const th_resources *rs, const th_res_entry *m)
{
    const th_skill_file_entry *mf = th_skills_file_of(m);
    json_object *o = json_object_new_object(), *files = json_object_new_array(), *fmc = NULL;
    if (!o || !files || json_object_deep_copy(mf->frontmatter, &fmc, NULL) != 0) {
        json_object_put(o);
        json_object_put(files);
        return NULL;
    }
    json_object_object_add(o, "uri", json_object_new_string(m->uri));
    json_object_object_add(o, "frontmatter", fmc);
    for (size_t i = 0; i < th_resources_count(rs); i++) {
        const th_res_entry *e = th_resources_at(rs, i);
        const th_skill_file_entry *f = th_skills_file_of(e);
        if (!f || strcmp(f->skill, mf->skill) != 0)
            continue;
        json_object *r = json_object_new_object();
        if (!r)
            continue;
        json_object_object_add(r, "uri", json_object_new_string(e->uri));
        json_object_object_add(r, "digest", json_object_new_string(f->digest));
        json_object_object_add(r, "size", json_object_new_int64((int64_t)f->size));
        json_object_array_add(files, r);
    }
    json_object_object_add(o, "resources", files);
    return o;
}

static void skills_list(const th_mcpres_req *q, th_mcpres_answer *a)
{
    const th_resources *rs = th_registry_resources(q->reg);
    size_t count = 0, offset;
    for (size_t i = 0; i < th_resources_count(rs); i++)
        count += is_manifest(th_resources_at(rs, i));
    size_t end;
    if (!th_page_window(q->params, CURSOR_SKILLS, count, q->page_size, &offset, &end)) {
        th_mcpres_fail(a, TH_RPC_INVALID_PARAMS, NULL, "Invalid params: invalid cursor");
        return;
    }
    json_object *res = json_object_new_object(), *arr = json_object_new_array();
    if (!res || !arr) {
        json_object_put(res);
        json_object_put(arr);
        oom(a);
        return;
    }
    /* A page holds whole entries: the unit of paging is the skill. */
    for (size_t i = 0, k = 0; i < th_resources_count(rs) && k < end; i++) {
        const th_res_entry *e = th_resources_at(rs, i);
        if (!is_manifest(e))
            continue;
        if (k++ < offset)
            continue;
        json_object *o = skill_entry(rs, e);
        if (o)
            json_object_array_add(arr, o);
    }
    json_object_object_add(res, "skills", arr);
    th_page_next(res, CURSOR_SKILLS, end, count);
    cache_hints(q, res);
    a->result = res;
}

static void skills_get(const th_mcpres_req *q, th_mcpres_answer *a)
{
    const char *uri = uri_param(q, a);
    if (!uri)
        return;
    const th_resources *rs = th_registry_resources(q->reg);
    const th_res_entry *e = th_resources_find(rs, uri, NULL);
    if (!is_manifest(e)) {
        bad_uri(a, uri, "no skill is served at this URI (a skill's URI is its skill://NAME/SKILL.md)");
        return;
    }
    json_object *res = json_object_new_object(), *o = skill_entry(rs, e);
    if (!res || !o) {
        json_object_put(res);
        json_object_put(o);
        oom(a);
        return;
    }
    json_object_object_add(res, "skill", o);
    cache_hints(q, res);
    a->result = res;
}

/* Does ARR already hold a child with URI? */
static bool has_uri(json_object *arr, const char *uri)
{
    for (size_t i = 0; i < json_object_array_length(arr); i++) {
        json_object *u;
        if (json_object_object_get_ex(json_object_array_get_idx(arr, i), "uri", &u) &&
            strcmp(json_object_get_string(u), uri) == 0)
            return true;
    }
    return false;
}

/*
** The direct children of skill folder DIR (no trailing "/"): its files as
** resources/list lists them, its subfolders as {uri, name, mimeType:
** "inode/directory"}, in registration order. An empty array: not a folder.
*/
static json_object *children(const th_resources *rs, const char *dir)
{
    json_object *arr = json_object_new_array();
    size_t dlen = strlen(dir);
    for (size_t i = 0; arr && i < th_resources_count(rs); i++) {
        const th_res_entry *e = th_resources_at(rs, i);
        const th_skill_file_entry *f = th_skills_file_of(e);
        if (!f || strncmp(e->uri, dir, dlen) != 0 || e->uri[dlen] != '/')
            continue;
        const char *rest = e->uri + dlen + 1, *slash = strchr(rest, '/');
        json_object *c = json_object_new_object();
        if (!c)
            continue;
        if (!slash) {
            json_object_object_add(c, "uri", json_object_new_string(e->uri));
            json_object_object_add(c, "name", json_object_new_string(rest));
            json_object_object_add(c, "mimeType", json_object_new_string(e->mime_type));
            json_object_object_add(c, "size", json_object_new_int64((int64_t)f->size));
        } else {
            char *sub = strndup(e->uri, (size_t)(slash - e->uri));
            if (!sub || has_uri(arr, sub)) {
                free(sub);
                json_object_put(c);
                continue;
            }
            json_object_object_add(c, "uri", json_object_new_string(sub));
            json_object_object_add(c, "name", json_object_new_string_len(rest, (int)(slash - rest)));
            json_object_object_add(c, "mimeType", json_object_new_string(DIRECTORY_MIME));
            free(sub);
        }
        json_object_array_add(arr, c);
    }
    return arr;
}

static void directory_read(const th_mcpres_req *q, th_mcpres_answer *a)
{
    const char *uri = uri_param(q, a);
    if (!uri)
        return;
    size_t n = strlen(uri);
    while (n > strlen(TH_SKILL_SCHEME) && uri[n - 1] == '/') /* skill://x/ is skill://x */
        n--;
    char *dir = strndup(uri, n);
    if (!dir) {
        oom(a);
        return;
    }
    json_object *all = strncmp(dir, TH_SKILL_SCHEME, strlen(TH_SKILL_SCHEME)) == 0
                           ? children(th_registry_resources(q->reg), dir)
                           : json_object_new_array();
    free(dir);
    if (!all) {
        oom(a);
        return;
    }
    size_t count = json_object_array_length(all), offset;
    if (count == 0) {
        json_object_put(all);
        bad_uri(a, uri, "not a skill directory the server serves");
        return;
    }
    size_t end;
    if (!th_page_window(q->params, CURSOR_DIR, count, q->page_size, &offset, &end)) {
        json_object_put(all);
        th_mcpres_fail(a, TH_RPC_INVALID_PARAMS, NULL, "Invalid params: invalid cursor");
        return;
    }
    json_object *res = json_object_new_object(), *arr = json_object_new_array();
    if (!res || !arr) {
        json_object_put(res);
        json_object_put(arr);
        json_object_put(all);
        oom(a);
        return;
    }
    for (size_t i = offset; i < end; i++)
        json_object_array_add(arr, json_object_get(json_object_array_get_idx(all, i)));
    json_object_put(all);
    json_object_object_add(res, "resources", arr);
    th_page_next(res, CURSOR_DIR, end, count);
    cache_hints(q, res);
    a->result = res;
}

static const struct {
    const char *name;
    void (*fn)(const th_mcpres_req *q, th_mcpres_answer *a);
} methods[] = {
    {"skills/list", skills_list},
    {"skills/get", skills_get},
    {"resources/directory/read", directory_read},
};

bool th_mcpskills_is_method(const char *method)
{
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
        if (strcmp(methods[i].name, method) == 0)
            return true;
    return false;
}

void th_mcpskills_serve(const th_mcpres_req *q, th_mcpres_answer *a)
{
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
        if (strcmp(methods[i].name, q->method) == 0) {
            methods[i].fn(q, a);
            return;
        }
    th_mcpres_fail(a, TH_RPC_METHOD_NOT_FOUND, NULL, "Method not found: %.200s", q->method);
}

json_object *th_mcpskills_capability(void)
{
    json_object *o = json_object_new_object();
    /* resources/directory/read is served for every skill folder. */
    if (o)
        json_object_object_add(o, "directoryRead", json_object_new_boolean(1));
    return o;
}
