/* SPDX-License-Identifier: MIT */
/*
** plugin/resources.c: the resource registry. Checks resource and template
** descriptors field by field (messages name the field and the rule), keeps
** deep copies in registration order, resolves a URI to its resource or the
** first matching template, and relays th_resource_updated() to a listener.
*/
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "call/crashnote.h"
#include "plugin/resources.h"

typedef struct vec {
    th_res_entry **items;
    size_t n, cap;
} vec;

struct th_resources {
    vec plain;     /* resources, registration order */
    vec templates; /* templates, registration order */
};

/* Minimum struct_size: the first published layout, which ends at destroy. */
#define TH_RESOURCE_MIN_SIZE (offsetof(th_resource, destroy) + sizeof(void (*)(void *)))

th_resources *th_resources_new(void)
{
    return calloc(1, sizeof(th_resources));
}

static void entry_free(th_res_entry *e)
{
    if (!e)
        return;
    if (e->destroy)
        e->destroy(e->user_data);
    free(e->uri);
    free(e->uri_template);
    free(e->name);
    free(e->title);
    free(e->description);
    free(e->mime_type);
    json_object_put(e->annotations);
    free(e->origin);
    free(e);
}

static void vec_truncate(vec *v, size_t n)
{
    while (v->n > n)
        entry_free(v->items[--v->n]);
}

void th_resources_free(th_resources *rs)
{
    if (!rs)
        return;
    vec_truncate(&rs->templates, 0);
    vec_truncate(&rs->plain, 0);
    free(rs->templates.items);
    free(rs->plain.items);
    free(rs);
}

bool th_uri_absolute(const char *uri)
{
    if (!uri || !((*uri >= 'a' && *uri <= 'z') || (*uri >= 'A' && *uri <= 'Z')))
        return false;
    const char *p = uri + 1;
    while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '+' ||
           *p == '-' || *p == '.')
        p++;
    return *p == ':';
}

/* Spaces and control characters cannot be in a URI (RFC 3986 section 2). */
static bool uri_chars_ok(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p <= 0x20 || *p == 0x7f)
            return false;
    return true;
}

/*
** The template's expressions: each "{" closes with "}" around a name of
** letters, digits and "_", expressions do not touch (nothing could tell
** where one variable ends), and the template has at least one.
*/
static th_rc check_template(const char *t, th_err *err)
{
    size_t nvars = 0;
    const char *prev_close = NULL;
    for (const char *p = t; *p; p++) {
        if (*p == '}')
            return th_err_set(err, TH_ERR_VALUE,
                              "Resource uri_template '%.200s': '}' at offset %zu closes no expression", t,
                              (size_t)(p - t));
        if (*p != '{')
            continue;
        if (prev_close && prev_close + 1 == p)
            return th_err_set(err, TH_ERR_VALUE,
                              "Resource uri_template '%.200s': expressions at offset %zu follow each other with "
                              "no literal text between them",
                              t, (size_t)(p - t));
        const char *q = p + 1;
        while ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') || *q == '_')
            q++;
        if (*q != '}' || q == p + 1)
            return th_err_set(err, TH_ERR_VALUE,
                              "Resource uri_template '%.200s': the expression at offset %zu must be {name} with a "
                              "name of letters, digits and '_' (operators and lists are not supported)",
                              t, (size_t)(p - t));
        nvars++;
        prev_close = q;
        p = q;
    }
    if (nvars == 0)
        return th_err_set(err, TH_ERR_VALUE,
                          "Resource uri_template '%.200s' has no {variable}; register it with "
                          "th_server_add_resource()",
                          t);
    return TH_OK;
}

/* Parse strict JSON text of FIELD; NULL on failure with ERR set. */
static json_object *parse_json(const char *text, const char *field, th_err *err)
{
    json_tokener *tok = json_tokener_new();
    if (!tok) {
        th_err_set(err, TH_ERR_NOMEM, "out of memory parsing %s", field);
        return NULL;
    }
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *o = json_tokener_parse_ex(tok, text, -1);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    if (jerr != json_tokener_success || end != strlen(text) || !th_utf8_valid(text, strlen(text))) {
        json_object_put(o);
        th_err_set(err, TH_ERR_VALUE, "Resource %s is not valid JSON", field);
        return NULL;
    }
    if (!json_object_is_type(o, json_type_object)) {
        json_object_put(o);
        th_err_set(err, TH_ERR_VALUE, "Resource %s must be a JSON object", field);
        return NULL;
    }
    return o;
}

/* VAL as JSON text in BUF, for a refusal to show the value it refused:
 * cut to SIZE at a character boundary, as messages stay UTF-8. */
static const char *json_text(json_object *val, char *buf, size_t size)
{
    snprintf(buf, size, "%s",
             json_object_to_json_string_ext(val, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    th_utf8_clip(buf);
    return buf;
}

/* The MCP Annotations object: audience, priority, lastModified, each typed. */
static th_rc check_annotations(json_object *a, th_err *err)
{
    char shown[64];
    json_object_object_foreach(a, key, val)
    {
        if (strcmp(key, "audience") == 0) {
            bool ok = json_object_is_type(val, json_type_array);
            for (size_t i = 0; ok && i < json_object_array_length(val); i++) {
                json_object *r = json_object_array_get_idx(val, i);
                ok = json_object_is_type(r, json_type_string) &&
                     (strcmp(json_object_get_string(r), "user") == 0 ||
                      strcmp(json_object_get_string(r), "assistant") == 0);
            }
            if (!ok)
                return th_err_set(err, TH_ERR_VALUE,
                                  "Resource annotations.audience must be an array of \"user\" and \"assistant\", "
                                  "got %s",
                                  json_text(val, shown, sizeof shown));
        } else if (strcmp(key, "priority") == 0) {
            double d = json_object_get_double(val);
            if (!(json_object_is_type(val, json_type_double) || json_object_is_type(val, json_type_int)) || d < 0 ||
                d > 1)
                return th_err_set(err, TH_ERR_VALUE,
                                  "Resource annotations.priority must be a number from 0 to 1, got %s",
                                  json_text(val, shown, sizeof shown));
        } else if (strcmp(key, "lastModified") == 0) {
            if (!json_object_is_type(val, json_type_string))
                return th_err_set(err, TH_ERR_VALUE,
                                  "Resource annotations.lastModified must be an ISO 8601 timestamp string, got %s",
                                  json_text(val, shown, sizeof shown));
        }
        /* Other members pass: later revisions may add some. */
    }
    return TH_OK;
}

static bool mime_ok(const char *m)
{
    const char *slash = strchr(m, '/');
    if (!slash || slash == m || !slash[1] || strchr(slash + 1, '/'))
        return false;
    for (const unsigned char *p = (const unsigned char *)m; *p; p++)
        if (*p <= 0x20 || *p >= 0x7f)
            return false;
    return true;
}

static const th_res_entry *find_in(const vec *v, bool template_, const char *key)
{
    for (size_t i = 0; i < v->n; i++) {
        const char *k = template_ ? v->items[i]->uri_template : v->items[i]->uri;
        if (strcmp(k, key) == 0)
            return v->items[i];
    }
    return NULL;
}

/*
** The rules, in order: descriptor, ABI, state, required fields, URI or
** template, duplicate, name, texts, MIME type, annotations, read function.
** *OUT gets RES with the fields past its struct_size zeroed, *ANN the parsed
** annotations (NULL when none).
*/
static th_rc check(const th_resources *rs, const th_resource *res, bool template_, bool started, bool need_read,
                   th_resource *out, json_object **ann, th_err *err)
{
    const char *what = template_ ? "Resource template" : "Resource";
    *ann = NULL;
    if (!res)
        return th_err_set(err, TH_ERR_TYPE, "%s must be a th_resource (descriptor is NULL)", what);
    if (res->abi_version != TH_ABI_VERSION)
        return th_err_set(err, TH_ERR_ABI,
                          "incompatible resource descriptor: ABI version mismatch. Host ABI version is %d, "
                          "plugin ABI version is %u.",
                          TH_ABI_VERSION, (unsigned)res->abi_version);
    if (res->struct_size < TH_RESOURCE_MIN_SIZE || res->struct_size > sizeof(th_resource))
        return th_err_set(err, TH_ERR_ABI,
                          "incompatible resource descriptor: struct size mismatch. Host th_resource is %zu bytes, "
                          "plugin th_resource is %u bytes%s.",
                          sizeof(th_resource), (unsigned)res->struct_size,
                          res->struct_size > sizeof(th_resource) ? " (built against a newer toolhost)" : "");
    memset(out, 0, sizeof *out);
    memcpy(out, res, res->struct_size);
    const th_resource *r = out;
    if (started)
        return th_err_set(err, TH_ERR_RUNTIME, "Cannot register resources after server has started");

    const char *key = template_ ? r->uri_template : r->uri;
    const char *field = template_ ? "uri_template" : "uri";
    if (!key)
        return th_err_set(err, TH_ERR_ATTRIBUTE, "%s missing required attribute: %s", what, field);
    if (template_ ? r->uri != NULL : r->uri_template != NULL)
        return th_err_set(err, TH_ERR_VALUE,
                          "%s must have 'uri' or 'uri_template', not both (use th_server_add_resource for a uri, "
                          "th_server_add_resource_template for a uri_template)",
                          what);
    if (!r->name)
        return th_err_set(err, TH_ERR_ATTRIBUTE, "%s missing required attribute: name", what);
    size_t klen = strlen(key);
    if (!th_utf8_valid(key, klen))
        return th_err_set(err, TH_ERR_VALUE, "%s %s must be valid UTF-8", what, field);
    if (klen > TH_URI_MAX)
        return th_err_set(err, TH_ERR_VALUE, "%s %s is %zu bytes long (max %d)", what, field, klen, TH_URI_MAX);
    if (!th_uri_absolute(key))
        return th_err_set(err, TH_ERR_VALUE,
                          "%s %s '%.200s' must be an absolute URI: a scheme (a letter, then letters, digits, '+', "
                          "'-', '.') and ':', e.g. file:///path or test://name",
                          what, field, key);
    if (!uri_chars_ok(key))
        return th_err_set(err, TH_ERR_VALUE, "%s %s '%.200s' must not contain spaces or control characters", what,
                          field, key);
    if (template_) {
        th_rc rc = check_template(key, err);
        if (rc != TH_OK)
            return rc;
    } else if (strchr(key, '{') || strchr(key, '}')) {
        return th_err_set(err, TH_ERR_VALUE,
                          "Resource uri '%.200s' contains '{' or '}'; a parameterised URI is a template: register "
                          "it with th_server_add_resource_template()",
                          key);
    }
    const th_res_entry *first = find_in(template_ ? &rs->templates : &rs->plain, template_, key);
    if (first && first->origin[0])
        return th_err_set(err, TH_ERR_VALUE, "%s '%.200s' already registered (first by %s)", what, key,
                          first->origin);
    if (first)
        return th_err_set(err, TH_ERR_VALUE, "%s '%.200s' already registered", what, key);

    size_t nlen = strlen(r->name);
    if (!th_utf8_valid(r->name, nlen))
        return th_err_set(err, TH_ERR_VALUE, "%s name must be valid UTF-8", what);
    if (nlen == 0 || th_utf8_length(r->name) > TH_RESOURCE_NAME_MAX)
        return th_err_set(err, TH_ERR_VALUE, "%s name length must be 1-%d chars, got %zu", what,
                          TH_RESOURCE_NAME_MAX, th_utf8_length(r->name));
    if (r->title && !th_utf8_valid(r->title, strlen(r->title)))
        return th_err_set(err, TH_ERR_VALUE, "%s title must be valid UTF-8", what);
    if (r->description && !th_utf8_valid(r->description, strlen(r->description)))
        return th_err_set(err, TH_ERR_VALUE, "%s description must be valid UTF-8", what);
    if (r->mime_type && !mime_ok(r->mime_type))
        return th_err_set(err, TH_ERR_VALUE, "%s mime_type '%.100s' must be type/subtype, e.g. text/plain", what,
                          r->mime_type);
    if (r->annotations) {
        if (!(*ann = parse_json(r->annotations, "annotations", err)))
            return err ? err->code : TH_ERR_VALUE;
        th_rc rc = check_annotations(*ann, err);
        if (rc != TH_OK) {
            json_object_put(*ann);
            *ann = NULL;
            return rc;
        }
    }
    if (need_read && !r->read) {
        json_object_put(*ann);
        *ann = NULL;
        return th_err_set(err, TH_ERR_VALUE, "%s must have a 'read' function", what);
    }
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

static th_rc add(th_resources *rs, const th_resource *res, bool template_, bool started, const char *origin,
                 bool proxy, th_read_fn read, void (*watch)(void *), th_err *err)
{
    th_resource r;
    json_object *ann;
    th_rc rc = check(rs, res, template_, started, !proxy, &r, &ann, err);
    if (rc != TH_OK)
        return rc;
    vec *v = template_ ? &rs->templates : &rs->plain;
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 8;
        th_res_entry **p = realloc(v->items, cap * sizeof *p);
        if (!p)
            goto nomem;
        v->items = p;
        v->cap = cap;
    }
    th_res_entry *e = calloc(1, sizeof *e);
    if (!e)
        goto nomem;
    bool oom = false;
    e->uri = dup_opt(r.uri, &oom);
    e->uri_template = dup_opt(r.uri_template, &oom);
    e->name = dup_opt(r.name, &oom);
    e->title = dup_opt(r.title, &oom);
    e->description = dup_opt(r.description, &oom);
    e->mime_type = dup_opt(r.mime_type, &oom);
    e->origin = dup_opt(origin ? origin : "", &oom);
    if (oom) {
        entry_free(e);
        goto nomem;
    }
    e->size = r.size;
    e->timeout_ms = r.timeout_ms;
    e->annotations = ann;
    e->read = proxy ? read : r.read;
    e->user_data = r.user_data;
    e->destroy = r.destroy;
    e->watch = watch;
    v->items[v->n++] = e;
    th_log(TH_LOG_INFO, "%s_registered %s=%s name=%s%s%s", template_ ? "resource_template" : "resource",
           template_ ? "uri_template" : "uri", template_ ? e->uri_template : e->uri, e->name,
           e->origin[0] ? " plugin=" : "", e->origin);
    return TH_OK;
nomem:
    json_object_put(ann);
    return th_err_set(err, TH_ERR_NOMEM, "out of memory registering a resource");
}

th_rc th_resources_add(th_resources *rs, const th_resource *res, bool template_, bool started, const char *origin,
                       th_err *err)
{
    return add(rs, res, template_, started, origin, false, NULL, NULL, err);
}

th_rc th_resources_add_proxy(th_resources *rs, const th_resource *res, bool template_, const char *origin,
                             void (*watch)(void *), th_err *err)
{
    /* RES carries the proxy's read, user_data and destroy already. */
    return add(rs, res, template_, false, origin, true, res ? res->read : NULL, watch, err);
}

size_t th_resources_count(const th_resources *rs)
{
    return rs ? rs->plain.n : 0;
}

const th_res_entry *th_resources_at(const th_resources *rs, size_t i)
{
    return rs && i < rs->plain.n ? rs->plain.items[i] : NULL;
}

size_t th_resources_template_count(const th_resources *rs)
{
    return rs ? rs->templates.n : 0;
}

const th_res_entry *th_resources_template_at(const th_resources *rs, size_t i)
{
    return rs && i < rs->templates.n ? rs->templates.items[i] : NULL;
}

void th_resources_truncate(th_resources *rs, size_t n, size_t t)
{
    vec_truncate(&rs->templates, t);
    vec_truncate(&rs->plain, n);
}

void th_resources_remove_if(th_resources *rs, bool templates, bool (*drop)(const th_res_entry *e, void *arg),
                            void *arg)
{
    vec *v = templates ? &rs->templates : &rs->plain;
    size_t kept = 0;
    for (size_t i = 0; i < v->n; i++) {
        if (drop(v->items[i], arg))
            entry_free(v->items[i]);
        else
            v->items[kept++] = v->items[i];
    }
    v->n = kept;
}

/* The percent-decoded S[0..LEN) as a new string; NULL when out of memory.
 * A "%" not followed by two hex digits is kept as it is, and so is "%00":
 * a NUL would silently cut the C string a read function gets. */
static char *decode(const char *s, size_t len)
{
    char *d = malloc(len + 1), *o = d;
    if (!d)
        return NULL;
    for (size_t i = 0; i < len; i++) {
        int hi, lo;
        if (s[i] == '%' && i + 2 < len && (hi = th_hex_digit((unsigned char)s[i + 1])) >= 0 &&
            (lo = th_hex_digit((unsigned char)s[i + 2])) >= 0 && (hi | lo) != 0) {
            *o++ = (char)(hi * 16 + lo);
            i += 2;
        } else {
            *o++ = s[i];
        }
    }
    *o = '\0';
    return d;
}

/*
** Match URI against template T; on success *VARS gets the variables. Each
** literal must match exactly; a variable takes the shortest non-empty text
** before the next literal's first occurrence, the last one the rest.
*/
static bool match_template(const char *t, const char *uri, json_object **vars)
{
    json_object *o = json_object_new_object();
    const char *u = uri;
    if (!o)
        return false;
    while (*t) {
        if (*t != '{') {
            if (*u != *t)
                goto no;
            t++;
            u++;
            continue;
        }
        const char *close = strchr(t, '}');
        char name[256];
        size_t nlen = (size_t)(close - t - 1);
        if (nlen >= sizeof name)
            goto no;
        memcpy(name, t + 1, nlen);
        name[nlen] = '\0';
        t = close + 1;
        /* The literal after the variable, up to the next expression. */
        size_t llen = strcspn(t, "{");
        const char *end;
        if (llen == 0) {
            end = u + strlen(u);
        } else {
            char lit[TH_URI_MAX + 1];
            if (llen > TH_URI_MAX)
                goto no;
            memcpy(lit, t, llen);
            lit[llen] = '\0';
            /* From the second character: a variable is never empty. */
            end = *u ? strstr(u + 1, lit) : NULL;
            if (!end)
                goto no;
        }
        if (end == u)
            goto no;
        char *val = decode(u, (size_t)(end - u));
        if (!val)
            goto no;
        json_object_object_add(o, name, json_object_new_string(val));
        free(val);
        u = end;
    }
    if (*u)
        goto no;
    *vars = o;
    return true;
no:
    json_object_put(o);
    return false;
}

const th_res_entry *th_resources_resolve(const th_resources *rs, const char *uri, json_object **vars)
{
    if (vars)
        *vars = NULL;
    if (!rs || !uri)
        return NULL;
    const th_res_entry *e = find_in(&rs->plain, false, uri);
    if (e) {
        if (vars)
            *vars = json_object_new_object();
        return e;
    }
    for (size_t i = 0; i < rs->templates.n; i++) {
        json_object *v = NULL;
        if (match_template(rs->templates.items[i]->uri_template, uri, &v)) {
            if (vars)
                *vars = v;
            else
                json_object_put(v);
            return rs->templates.items[i];
        }
    }
    return NULL;
}

const th_res_entry *th_resources_find(const th_resources *rs, const char *uri, const char *uri_template)
{
    if (!rs)
        return NULL;
    if (uri)
        return find_in(&rs->plain, false, uri);
    return uri_template ? find_in(&rs->templates, true, uri_template) : NULL;
}

json_object *th_resources_run_read(const th_res_entry *e, const char *uri, json_object *vars,
                                   const th_call_hooks *hooks, th_rc *rc)
{
    th_call *call = th_call_new(e->name, hooks);
    if (!call) {
        *rc = TH_ERR_NOMEM;
        return NULL;
    }
    json_object *own = vars ? NULL : json_object_new_object();
    int crash_slot = th_crashnote_begin(e->name); /* a fatal signal names the resource */
    *rc = e->read(th_call_handle(call), uri, vars ? vars : own, e->user_data);
    th_crashnote_end(crash_slot);
    json_object *result = th_call_finish(call, *rc);
    /* The host's refusal (too big, not valid on the wire) is no choice of
     * the plugin's, whatever code the read passed on from it. */
    if (th_call_refused(call))
        *rc = TH_ERR_TOOL;
    th_call_free(call);
    json_object_put(own);
    return result;
}

/* ---- update notices ---------------------------------------------------- */

static pthread_mutex_t listener_lock = PTHREAD_MUTEX_INITIALIZER;
static void (*listener)(const char *uri, void *ctx);
static void *listener_ctx;

void th_resources_on_update(void (*fn)(const char *uri, void *ctx), void *ctx)
{
    pthread_mutex_lock(&listener_lock);
    listener = fn;
    listener_ctx = ctx;
    pthread_mutex_unlock(&listener_lock);
}

th_rc th_resource_updated(const char *uri)
{
    if (!uri || !th_uri_absolute(uri) || !th_utf8_valid(uri, strlen(uri)) || strlen(uri) > TH_URI_MAX)
        return TH_ERR_MISUSE;
    /* Called under the lock so a listener being removed is never called
     * afterwards; listeners only queue or send, never call back in. */
    pthread_mutex_lock(&listener_lock);
    if (listener)
        listener(uri, listener_ctx);
    pthread_mutex_unlock(&listener_lock);
    return TH_OK;
}
