/* SPDX-License-Identifier: MIT */
/*
** plugin/lockfile.c: the lock file of pinned definitions: canonical
** definitions and their hashes, the file's format, how a registry differs
** from a lock, and taking out of a registry what the lock refuses.
*/
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/canonjson.h"
#include "base/jsontree.h"
#include "base/log.h"
#include "base/sha256.h"
#include "plugin/lockfile.h"
#include "plugin/needs.h"
#include "plugin/prompts.h"
#include "plugin/qualname.h"
#include "plugin/resources.h"

/* A lock holds hashes, not definitions: far below this. */
#define LOCK_MAX_BYTES (64u << 20)
#define LOCK_MAX_DEPTH 16

typedef char digest[TH_SHA256_DIGEST_LEN + 1];

static int cmp_key(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool hash_of(json_object *o, digest out)
{
    char *text = th_json_canonical(o);
    if (!text)
        return false;
    th_sha256_digest(text, strlen(text), out);
    free(text);
    return true;
}

/* ---- definitions: what a client is shown of an entry -------------------- */

static void add_text(json_object *d, const char *key, const char *v)
{
    if (v)
        json_object_object_add(d, key, json_object_new_string(v));
}

static void add_tree(json_object *d, const char *key, json_object *v)
{
    if (v)
        json_object_object_add(d, key, json_object_get(v));
}

/* A description as the plugin gave it: a qualified entry's starts with
 * "[toolbox/plugin] ", which the naming adds and the lock leaves out, so
 * that one lock holds with and without --qualified-names. */
static const char *own_description(const char *d, bool qualified, const char *toolbox, const char *plugin)
{
    return d && qualified ? d + strlen(toolbox) + strlen(plugin) + 4 : d;
}

static json_object *tool_definition(const void *entry)
{
    const th_entry *e = entry;
    json_object *d = json_object_new_object();
    add_text(d, "name", e->original_name ? e->original_name : e->name);
    add_text(d, "title", e->title);
    add_text(d, "description", own_description(e->description, e->qualified, e->toolbox, e->plugin));
    add_tree(d, "inputSchema", e->input_schema);
    add_tree(d, "outputSchema", e->output_schema);
    add_tree(d, "annotations", e->annotations);
    return d;
}

static json_object *prompt_definition(const void *entry)
{
    const th_prompt_entry *e = entry;
    json_object *d = json_object_new_object();
    add_text(d, "name", e->original_name ? e->original_name : e->name);
    add_text(d, "title", e->title);
    add_text(d, "description", own_description(e->description, e->qualified, e->toolbox, e->plugin));
    add_tree(d, "arguments", e->arguments);
    return d;
}

static json_object *template_definition(const void *entry)
{
    const th_res_entry *e = entry;
    json_object *d = json_object_new_object();
    add_text(d, "uriTemplate", e->uri_template);
    add_text(d, "name", e->name);
    add_text(d, "title", e->title);
    add_text(d, "description", e->description);
    add_text(d, "mimeType", e->mime_type);
    add_tree(d, "annotations", e->annotations);
    return d;
}

/* ---- the registry's sections, as one table ------------------------------ */

static size_t tool_count(const th_registry *reg)
{
    return th_registry_count(reg);
}
static const void *tool_at(const th_registry *reg, size_t i)
{
    return th_registry_at(reg, i);
}
static const char *tool_origin(const void *e)
{
    return ((const th_entry *)e)->origin;
}
static const char *tool_id(const void *entry)
{
    const th_entry *e = entry;
    return e->original_name ? e->original_name : e->name;
}

static size_t prompt_count(const th_registry *reg)
{
    return th_prompts_count(th_registry_prompts(reg));
}
static const void *prompt_at(const th_registry *reg, size_t i)
{
    return th_prompts_at(th_registry_prompts(reg), i);
}
static const char *prompt_origin(const void *e)
{
    return ((const th_prompt_entry *)e)->origin;
}
static const char *prompt_id(const void *entry)
{
    const th_prompt_entry *e = entry;
    return e->original_name ? e->original_name : e->name;
}

static size_t template_count(const th_registry *reg)
{
    return th_resources_template_count(th_registry_resources(reg));
}
static const void *template_at(const th_registry *reg, size_t i)
{
    return th_resources_template_at(th_registry_resources(reg), i);
}
static size_t resource_count(const th_registry *reg)
{
    return th_resources_count(th_registry_resources(reg));
}
static const void *resource_at(const th_registry *reg, size_t i)
{
    return th_resources_at(th_registry_resources(reg), i);
}
static const char *res_origin(const void *e)
{
    return ((const th_res_entry *)e)->origin;
}
static const char *template_id(const void *e)
{
    return ((const th_res_entry *)e)->uri_template;
}
static const char *resource_id(const void *e)
{
    return ((const th_res_entry *)e)->uri;
}

/* What one removal looks for: PATH's entries of SEC (every plugin's when
 * PATH is NULL; only NAME, if given). */
struct section;
typedef struct target {
    const struct section *sec;
    const char *path, *name;
    size_t removed;
} target;

typedef struct section {
    const char *key;  /* in the lock; NULL: not pinned (plain resources are
                       * data a plugin lists, such as files, not definitions) */
    const char *what; /* in messages */
    size_t (*count)(const th_registry *reg);
    const void *(*at)(const th_registry *reg, size_t i);
    const char *(*origin)(const void *e);
    const char *(*id)(const void *e);
    json_object *(*definition)(const void *e);
    void (*remove)(th_registry *reg, target *t);
    size_t refused; /* the th_load_stats counter of its refusals */
    bool tools;     /* counted in tools_loaded too */
} section;

static bool drops(target *t, const void *e)
{
    bool d = (!t->path || strcmp(t->sec->origin(e), t->path) == 0) && (!t->name || strcmp(t->sec->id(e), t->name) == 0);
    t->removed += d;
    return d;
}
static bool drop_tool(const th_entry *e, void *t)
{
    return drops(t, e);
}
static bool drop_res(const th_res_entry *e, void *t)
{
    return drops(t, e);
}
static bool drop_prompt(const th_prompt_entry *e, void *t)
{
    return drops(t, e);
}
static void remove_tools(th_registry *reg, target *t)
{
    th_registry_remove_if(reg, drop_tool, t);
}
static void remove_prompts(th_registry *reg, target *t)
{
    th_prompts_remove_if(th_registry_prompts(reg), drop_prompt, t);
}
static void remove_templates(th_registry *reg, target *t)
{
    th_resources_remove_if(th_registry_resources(reg), true, drop_res, t);
}
static void remove_resources(th_registry *reg, target *t)
{
    th_resources_remove_if(th_registry_resources(reg), false, drop_res, t);
}

static const section sections[] = {
    {"tools", "tool", tool_count, tool_at, tool_origin, tool_id, tool_definition, remove_tools,
     offsetof(th_load_stats, tools_refused), true},
    {"prompts", "prompt", prompt_count, prompt_at, prompt_origin, prompt_id, prompt_definition, remove_prompts,
     offsetof(th_load_stats, prompts_refused), false},
    {"resourceTemplates", "resource template", template_count, template_at, res_origin, template_id,
     template_definition, remove_templates, offsetof(th_load_stats, resources_refused), false},
    {NULL, "resource", resource_count, resource_at, res_origin, resource_id, NULL, remove_resources,
     offsetof(th_load_stats, resources_refused), false},
};
#define NSECTIONS (sizeof sections / sizeof sections[0])

/* ---- building a lock from a registry ------------------------------------ */

static bool serves(const th_registry *reg, const char *path)
{
    for (size_t s = 0; s < NSECTIONS; s++)
        for (size_t i = 0; i < sections[s].count(reg); i++)
            if (strcmp(sections[s].origin(sections[s].at(reg, i)), path) == 0)
                return true;
    return false;
}

/* "TOOLBOX/NAME" for the plugin file PATH (its path when in no toolbox). */
static void plugin_key(const th_registry *reg, const char *path, char *out, size_t size)
{
    const char *box = th_naming_toolbox_of(th_registry_naming(reg), path);
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t len = strlen(base);
    if (len > 3 && strcmp(base + len - 3, ".so") == 0)
        len -= 3;
    if (box)
        snprintf(out, size, "%s/%.*s", box, (int)len, base);
    else
        snprintf(out, size, "%s", path);
}

/* {"sha256": the definition's hash, "fields": each field's}. */
static json_object *pin(json_object *def)
{
    digest h;
    json_object *p = json_object_new_object(), *fields = json_object_new_object();
    bool ok = p && fields && hash_of(def, h);
    if (ok)
        json_object_object_add(p, "sha256", json_object_new_string(h));
    json_object_object_foreach(def, key, val)
    {
        if (ok && (ok = hash_of(val, h)))
            json_object_object_add(fields, key, json_object_new_string(h));
    }
    if (ok)
        json_object_object_add(p, "fields", fields);
    else
        json_object_put(fields);
    if (!ok) {
        json_object_put(p);
        return NULL;
    }
    return p;
}

static bool pin_section(const th_registry *reg, const section *sec, const char *path, json_object *into)
{
    for (size_t i = 0; i < sec->count(reg); i++) {
        const void *e = sec->at(reg, i);
        if (strcmp(sec->origin(e), path) != 0)
            continue;
        json_object *def = sec->definition(e), *p = def ? pin(def) : NULL;
        json_object_put(def);
        if (!p)
            return false;
        json_object_object_add(into, sec->id(e), p);
    }
    return true;
}

static int by_text(const void *a, const void *b)
{
    return strcmp(json_object_get_string(*(json_object *const *)a), json_object_get_string(*(json_object *const *)b));
}

json_object *th_lock_declared_needs(const th_lock_file *f)
{
    json_object *out = json_object_new_array();
    size_t n = json_object_is_type(f->needs, json_type_array) ? json_object_array_length(f->needs) : 0;
    for (size_t i = 0; out && i < n; i++) {
        const char *need = json_object_get_string(json_object_array_get_idx(f->needs, i));
        if (th_needs_valid(need))
            json_object_array_add(out, json_object_new_string(need));
    }
    /* Sorted here too: the lock's text and its comparison depend on it. */
    if (out)
        json_object_array_sort(out, by_text);
    return out;
}

static bool file_digest(const th_lock_file *f, digest out, th_err *err)
{
    if (f->digest && f->digest[0]) {
        snprintf(out, sizeof(digest), "%s", f->digest);
        return true;
    }
    int fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    bool ok = fd >= 0 && th_loader_digest_fd(fd, out);
    if (!ok)
        th_err_set(err, TH_ERR_IO, "plugin %s: cannot read it to hash it: %s", f->path, strerror(errno));
    if (fd >= 0)
        close(fd);
    return ok;
}

static json_object *plugin_pin(const th_registry *reg, const th_lock_file *f, th_err *err)
{
    digest sha;
    if (!file_digest(f, sha, err))
        return NULL;
    json_object *p = json_object_new_object();
    if (!p)
        goto nomem;
    json_object_object_add(p, "path", json_object_new_string(f->path));
    json_object_object_add(p, "sha256", json_object_new_string(sha));
    json_object_object_add(p, "needs", th_lock_declared_needs(f));
    for (size_t s = 0; s < NSECTIONS; s++) {
        if (!sections[s].key)
            continue;
        json_object *sec = json_object_new_object();
        if (!sec || !pin_section(reg, &sections[s], f->path, sec)) {
            json_object_put(sec);
            json_object_put(p);
            goto nomem;
        }
        json_object_object_add(p, sections[s].key, sec);
    }
    return p;

nomem:
    th_err_set(err, TH_ERR_NOMEM, "plugin %s: out of memory building its lock", f->path);
    return NULL;
}

json_object *th_lock_build(const th_registry *reg, const th_lock_file *files, size_t n, th_err *err)
{
    json_object *lock = json_object_new_object(), *plugins = json_object_new_object();
    if (!lock || !plugins) {
        json_object_put(lock);
        json_object_put(plugins);
        th_err_set(err, TH_ERR_NOMEM, "out of memory building the lock");
        return NULL;
    }
    json_object_object_add(lock, "lockVersion", json_object_new_int(TH_LOCK_VERSION));
    json_object_object_add(lock, "plugins", plugins);
    for (size_t i = 0; i < n; i++) {
        char key[4096];
        json_object *other;
        if (!serves(reg, files[i].path))
            continue;
        plugin_key(reg, files[i].path, key, sizeof key);
        if (json_object_object_get_ex(plugins, key, &other)) {
            th_err_set(err, TH_ERR_VALUE,
                       "plugins %s and %s are both %s in a lock: give their directories different toolboxes",
                       json_object_get_string(json_object_object_get(other, "path")), files[i].path, key);
            goto fail;
        }
        json_object *p = plugin_pin(reg, &files[i], err);
        if (!p)
            goto fail;
        json_object_object_add(plugins, key, p);
    }
    return lock;

fail:
    json_object_put(lock);
    return NULL;
}

/* ---- the file ------------------------------------------------------------ */

static bool is_digest(json_object *o)
{
    const char *s = json_object_get_string(o);
    return json_object_is_type(o, json_type_string) && strncmp(s, "sha256:", 7) == 0 &&
           strlen(s) == TH_SHA256_DIGEST_LEN;
}

/* A pinned entry: {"sha256": DIGEST, "fields": {NAME: DIGEST...}}. */
static const char *check_pin(json_object *p)
{
    json_object *v;
    if (!json_object_is_type(p, json_type_object))
        return "an object is required";
    if (!json_object_object_get_ex(p, "sha256", &v) || !is_digest(v))
        return "\"sha256\" must be \"sha256:\" and 64 hex digits";
    if (!json_object_object_get_ex(p, "fields", &v) || !json_object_is_type(v, json_type_object))
        return "\"fields\" must be an object";
    json_object_object_foreach(v, key, val)
    {
        (void)key;
        if (!is_digest(val))
            return "each of \"fields\" must be \"sha256:\" and 64 hex digits";
    }
    return NULL;
}

static const char *check_plugin(json_object *p, const char **where)
{
    json_object *v;
    *where = NULL;
    if (!json_object_is_type(p, json_type_object))
        return "an object is required";
    if (!json_object_object_get_ex(p, "sha256", &v) || !is_digest(v))
        return "\"sha256\" must be \"sha256:\" and 64 hex digits";
    if (!json_object_object_get_ex(p, "needs", &v) || !json_object_is_type(v, json_type_array))
        return "\"needs\" must be an array";
    for (size_t i = 0; i < json_object_array_length(v); i++)
        if (!json_object_is_type(json_object_array_get_idx(v, i), json_type_string))
            return "each of \"needs\" must be a string";
    for (size_t s = 0; s < NSECTIONS; s++) {
        if (!sections[s].key)
            continue;
        if (!json_object_object_get_ex(p, sections[s].key, &v) || !json_object_is_type(v, json_type_object)) {
            *where = sections[s].key;
            return "an object is required";
        }
        json_object_object_foreach(v, key, val)
        {
            const char *why = check_pin(val);
            if (why) {
                *where = key;
                return why;
            }
        }
    }
    return NULL;
}

static th_rc check_lock(const char *path, json_object *doc, th_err *err)
{
    json_object *v, *plugins;
    if (!json_object_is_type(doc, json_type_object))
        return th_err_set(err, TH_ERR_VALUE, "lock %s: a JSON object is required", path);
    if (!json_object_object_get_ex(doc, "lockVersion", &v) || !json_object_is_type(v, json_type_int) ||
        json_object_get_int(v) != TH_LOCK_VERSION)
        return th_err_set(err, TH_ERR_VALUE, "lock %s: \"lockVersion\" must be %d", path, TH_LOCK_VERSION);
    if (!json_object_object_get_ex(doc, "plugins", &plugins) || !json_object_is_type(plugins, json_type_object))
        return th_err_set(err, TH_ERR_VALUE, "lock %s: \"plugins\" must be an object", path);
    json_object_object_foreach(plugins, key, val)
    {
        const char *where, *why = check_plugin(val, &where);
        if (why)
            return th_err_set(err, TH_ERR_VALUE, "lock %s: plugin \"%s\"%s%s%s: %s", path, key, where ? ", \"" : "",
                              where ? where : "", where ? "\"" : "", why);
    }
    return TH_OK;
}

th_rc th_lock_read(const char *path, json_object **out, th_err *err)
{
    *out = NULL;
    th_buf b = {0};
    char chunk[65536];
    size_t got;
    FILE *f = fopen(path, "re");
    if (!f)
        return th_err_set(err, TH_ERR_IO, "cannot read the lock %s: %s", path, strerror(errno));
    bool ok = true;
    while (ok && (got = fread(chunk, 1, sizeof chunk, f)) > 0)
        ok = b.len + got <= LOCK_MAX_BYTES && th_buf_append(&b, chunk, got);
    bool failed = ferror(f);
    fclose(f);
    if (failed || !ok) {
        free(b.data);
        return th_err_set(err, failed ? TH_ERR_IO : TH_ERR_VALUE, "cannot read the lock %s: %s", path,
                          failed ? "read error" : "larger than 64 MiB or out of memory");
    }
    const char *why = "empty";
    json_object *doc = b.data ? th_json_parse_strict(b.data, b.len, LOCK_MAX_DEPTH, &why) : NULL;
    free(b.data);
    if (!doc)
        return th_err_set(err, TH_ERR_VALUE, "lock %s: not JSON: %s", path, why);
    th_rc rc = check_lock(path, doc, err);
    if (rc != TH_OK) {
        json_object_put(doc);
        return rc;
    }
    *out = doc;
    return TH_OK;
}

/* O as a lock is written: keys sorted, one member a line, two spaces an
 * indent, empty objects and arrays on the line they open. */
static bool pretty(th_buf *b, json_object *o, int depth)
{
    bool object = json_object_is_type(o, json_type_object);
    if (!object && !json_object_is_type(o, json_type_array))
        return json_object_is_type(o, json_type_string)
                   ? th_json_append_string(b, json_object_get_string(o), (size_t)json_object_get_string_len(o))
                   : th_json_append(b, o);
    size_t n = object ? (size_t)json_object_object_length(o) : json_object_array_length(o), k = 0;
    const char **keys = object ? malloc((n + 1) * sizeof *keys) : NULL;
    if (object && !keys)
        return false;
    if (object) {
        json_object_object_foreach(o, key, val)
        {
            (void)val;
            keys[k++] = key;
        }
        qsort(keys, n, sizeof *keys, cmp_key);
    }
    bool ok = th_buf_append(b, object ? "{" : "[", 1);
    for (size_t i = 0; ok && i < n; i++) {
        ok = th_buf_printf(b, "%s\n%*s", i ? "," : "", 2 * (depth + 1), "");
        if (ok && object)
            ok = th_json_append_string(b, keys[i], strlen(keys[i])) && th_buf_append(b, ": ", 2);
        if (ok)
            ok = pretty(b, object ? json_object_object_get(o, keys[i]) : json_object_array_get_idx(o, i), depth + 1);
    }
    if (ok && n)
        ok = th_buf_printf(b, "\n%*s", 2 * depth, "");
    free(keys);
    return ok && th_buf_append(b, object ? "}" : "]", 1);
}

/* LOCK as it is written, without the plugins' paths, which differ from one
 * machine to the next. */
static char *written_text(json_object *lock)
{
    json_object *copy = NULL, *plugins;
    th_buf b = {0};
    if (json_object_deep_copy(lock, &copy, NULL) != 0)
        return NULL;
    if (json_object_object_get_ex(copy, "plugins", &plugins)) {
        json_object_object_foreach(plugins, key, val)
        {
            (void)key;
            json_object_object_del(val, "path");
        }
    }
    bool ok = pretty(&b, copy, 0) && th_buf_append(&b, "\n", 1);
    json_object_put(copy);
    if (ok)
        return b.data;
    free(b.data);
    return NULL;
}

th_rc th_lock_write(const char *path, json_object *lock, th_err *err)
{
    char *text = written_text(lock);
    size_t len = strlen(path) + 16;
    char *tmp = malloc(len);
    th_rc rc = TH_OK;
    int fd = -1;
    if (!text || !tmp) {
        rc = th_err_set(err, TH_ERR_NOMEM, "cannot write the lock %s: out of memory", path);
        goto cleanup;
    }
    /* A reader (a host reloading) sees the old lock or the new, whole. */
    snprintf(tmp, len, "%s.tmp-XXXXXX", path);
    if ((fd = mkstemp(tmp)) < 0) {
        rc = th_err_set(err, TH_ERR_IO, "cannot write the lock %s: %s", path, strerror(errno));
        goto cleanup;
    }
    size_t n = strlen(text), done = 0;
    ssize_t w = 0;
    while (done < n && ((w = write(fd, text + done, n - done)) > 0 || errno == EINTR))
        done += w > 0 ? (size_t)w : 0;
    bool ok = done == n && fchmod(fd, 0644) == 0 && fsync(fd) == 0;
    ok = close(fd) == 0 && ok;
    fd = -1;
    if (!ok || rename(tmp, path) != 0) {
        rc = th_err_set(err, TH_ERR_IO, "cannot write the lock %s: %s", path, strerror(errno));
        unlink(tmp);
    }

cleanup:
    if (fd >= 0)
        close(fd);
    free(tmp);
    free(text);
    return rc;
}

/* ---- drift --------------------------------------------------------------- */

typedef struct drifts {
    th_drift *v;
    size_t n, cap;
    bool oom;
    const char *lock; /* the lock's path, for the texts */
} drifts;

static void add(drifts *l, th_drift_kind kind, bool refused, const char *path, const char *sec,
                const char *name, const char *fmt, ...) TH_PRINTF(7, 8);

static void add(drifts *l, th_drift_kind kind, bool refused, const char *path, const char *sec,
                const char *name, const char *fmt, ...)
{
    if (l->oom)
        return;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 8;
        th_drift *v = realloc(l->v, cap * sizeof *v);
        if (!v) {
            l->oom = true;
            return;
        }
        l->v = v;
        l->cap = cap;
    }
    char line[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    th_drift *d = &l->v[l->n];
    *d = (th_drift){.kind = kind, .refused = refused, .section = sec};
    d->path = path ? strdup(path) : NULL;
    d->name = name ? strdup(name) : NULL;
    d->text = strdup(line);
    if (!d->text || (path && !d->path) || (name && !d->name)) {
        free(d->path);
        free(d->name);
        free(d->text);
        l->oom = true;
        return;
    }
    l->n++;
}

static const char *str_of(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : NULL;
}

static const char *or_none(const char *s)
{
    return s ? s : "none";
}

/* "FIELD changed (OLD in the lock, NEW now)" for each field whose hash
 * differs, fields that came or went included, into OUT. */
static void changed_fields(json_object *old, json_object *now, char *out, size_t size)
{
    json_object *of = json_object_object_get(old, "fields"), *nf = json_object_object_get(now, "fields");
    size_t used = 0;
    out[0] = '\0';
    for (int pass = 0; pass < 2; pass++) {
        json_object *from = pass ? of : nf, *other = pass ? nf : of;
        json_object_object_foreach(from, key, val)
        {
            (void)val;
            if (pass && json_object_object_get_ex(other, key, NULL))
                continue; /* seen in the first pass */
            const char *o = str_of(of, key), *n = str_of(nf, key);
            if (o && n && strcmp(o, n) == 0)
                continue;
            int w = snprintf(out + used, size - used, "%s%s changed (%s in the lock, %s now)", used ? "; " : "",
                             key, or_none(o), or_none(n));
            if (w > 0 && (size_t)w < size - used)
                used += (size_t)w;
        }
    }
}

static void diff_section(drifts *l, const section *sec, const char *path, const char *key, json_object *old,
                         json_object *now)
{
    json_object *os = json_object_object_get(old, sec->key), *ns = json_object_object_get(now, sec->key);
    char fields[3072];
    json_object_object_foreach(ns, name, pinned)
    {
        json_object *was;
        if (!json_object_object_get_ex(os, name, &was))
            add(l, TH_DRIFT_NEW, true, path, sec->key, name, "plugin %s: %s '%s' refused by the lock %s: it is not pinned "
                "(definition %s)", path, sec->what, name, l->lock, str_of(pinned, "sha256"));
        else if (strcmp(str_of(was, "sha256"), str_of(pinned, "sha256")) != 0) {
            changed_fields(was, pinned, fields, sizeof fields);
            add(l, TH_DRIFT_CHANGED, true, path, sec->key, name, "plugin %s: %s '%s' refused by the lock %s: %s", path,
                sec->what, name, l->lock, fields);
        }
    }
    json_object_object_foreach(os, gone, was)
    {
        (void)was;
        if (!json_object_object_get_ex(ns, gone, NULL))
            add(l, TH_DRIFT_REMOVED, false, path, sec->key, gone, "plugin %s: %s '%s' pinned by the lock %s (in %s) is no longer "
                "served", path, sec->what, gone, l->lock, key);
    }
}

static bool has_string(json_object *array, const char *s)
{
    for (size_t i = 0; i < json_object_array_length(array); i++)
        if (strcmp(json_object_get_string(json_object_array_get_idx(array, i)), s) == 0)
            return true;
    return false;
}

/* More needs than pinned refuse the plugin; fewer are only a difference. */
static void diff_needs(drifts *l, const char *path, const char *key, json_object *old, json_object *now)
{
    json_object *on = json_object_object_get(old, "needs"), *nn = json_object_object_get(now, "needs");
    char more[2048] = "";
    size_t used = 0;
    for (size_t i = 0; i < json_object_array_length(nn); i++) {
        const char *need = json_object_get_string(json_object_array_get_idx(nn, i));
        int w = has_string(on, need) ? 0 : snprintf(more + used, sizeof more - used, "%s%s", used ? ", " : "", need);
        if (w > 0 && (size_t)w < sizeof more - used)
            used += (size_t)w;
    }
    digest oh = "", nh = "";
    if (!hash_of(on, oh) || !hash_of(nn, nh)) {
        l->oom = true;
        return;
    }
    if (strcmp(oh, nh) == 0)
        return;
    if (used)
        add(l, TH_DRIFT_NEEDS, true, path, NULL, NULL, "plugin %s (%s) refused by the lock %s: it asks for needs the lock "
            "does not pin: %s (needs %s in the lock, %s now)", path, key, l->lock, more, oh, nh);
    else
        add(l, TH_DRIFT_NEEDS, false, path, NULL, NULL, "plugin %s (%s): its needs differ from the lock %s but ask for "
            "nothing more (needs %s in the lock, %s now)", path, key, l->lock, oh, nh);
}

static void diff_plugin(drifts *l, const char *key, json_object *old, json_object *now)
{
    const char *path = str_of(now, "path");
    if (!old) {
        add(l, TH_DRIFT_NEW_PLUGIN, true, path, NULL, NULL, "plugin %s (%s) refused by the lock %s: it is not pinned "
            "(file %s)", path, key, l->lock, str_of(now, "sha256"));
        return;
    }
    diff_needs(l, path, key, old, now);
    for (size_t s = 0; s < NSECTIONS; s++)
        if (sections[s].key)
            diff_section(l, &sections[s], path, key, old, now);
    const char *os = str_of(old, "sha256"), *ns = str_of(now, "sha256");
    if (strcmp(os, ns) != 0)
        add(l, TH_DRIFT_FILE, false, path, NULL, NULL, "plugin %s (%s): its file is not the one pinned by the lock %s "
            "(%s in the lock, %s now); what it serves is held to the definitions and needs pinned", path, key,
            l->lock, os, ns);
}

th_rc th_lock_diff(json_object *pinned, json_object *now, const char *lock_path, th_drift **out, size_t *n)
{
    drifts l = {.lock = lock_path};
    json_object *pp = json_object_object_get(pinned, "plugins");
    /* Sorted, so the differences come in one order on every machine. */
    char *text = th_json_canonical(now);
    json_object *sorted = text ? json_tokener_parse(text) : NULL, *np = json_object_object_get(sorted, "plugins");
    free(text);
    l.oom = !sorted || !np || !pp;
    if (l.oom)
        goto done;
    json_object_object_foreach(np, key, plugin)
    {
        json_object *old = NULL;
        json_object_object_get_ex(pp, key, &old);
        diff_plugin(&l, key, old, plugin);
    }
    json_object_object_foreach(pp, gone, was)
    {
        (void)was;
        if (!json_object_object_get_ex(np, gone, NULL))
            add(&l, TH_DRIFT_GONE_PLUGIN, false, NULL, NULL, NULL, "plugin %s pinned by the lock %s is no longer served",
                gone, l.lock);
    }
done:
    json_object_put(sorted);
    if (l.oom) {
        th_drift_free(l.v, l.n);
        *out = NULL;
        *n = 0;
        return TH_ERR_NOMEM;
    }
    *out = l.v;
    *n = l.n;
    return TH_OK;
}

void th_drift_free(th_drift *d, size_t n)
{
    for (size_t i = 0; d && i < n; i++) {
        free(d[i].path);
        free(d[i].name);
        free(d[i].text);
    }
    free(d);
}

/* ---- enforcing ----------------------------------------------------------- */

/* Take D's refusal out of REG, counting what went in STATS. */
static void withhold(th_registry *reg, const th_drift *d, th_load_stats *stats)
{
    for (size_t s = 0; s < NSECTIONS; s++) {
        if (d->section && (!sections[s].key || strcmp(sections[s].key, d->section) != 0))
            continue;
        target t = {.sec = &sections[s], .path = d->path, .name = d->name};
        sections[s].remove(reg, &t);
        *(size_t *)((char *)stats + sections[s].refused) += t.removed;
        if (sections[s].tools)
            stats->tools_loaded -= t.removed < stats->tools_loaded ? t.removed : stats->tools_loaded;
    }
    if (!d->section) {
        stats->plugins_refused++;
        stats->plugins_loaded -= stats->plugins_loaded > 0;
    }
}

size_t th_lock_enforce(th_registry *reg, const th_drift *d, size_t n, th_load_stats *stats)
{
    size_t refusals = 0;
    for (size_t i = 0; i < n; i++) {
        th_log(d[i].refused ? TH_LOG_ERROR : TH_LOG_WARNING, "%s", d[i].text);
        if (!d[i].refused || !d[i].path)
            continue;
        withhold(reg, &d[i], stats);
        refusals++;
    }
    return refusals;
}

void th_lock_withhold_all(th_registry *reg, th_load_stats *stats)
{
    for (size_t s = 0; s < NSECTIONS; s++) {
        target t = {.sec = &sections[s]};
        sections[s].remove(reg, &t);
        *(size_t *)((char *)stats + sections[s].refused) += t.removed;
    }
    stats->tools_loaded = 0;
    stats->plugins_refused += stats->plugins_loaded;
    stats->plugins_loaded = 0;
}
