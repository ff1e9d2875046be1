/* SPDX-License-Identifier: MIT */
/*
** schema/jsonschema.c: JSON Schema draft 2020-12. Owns compiling a schema document
** (and the documents its $refs name) into a graph of nodes, refusing schemas
** that are not valid, and validating instances against that graph.
*/
#include "config.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsontree.h"
#include "schema/ecma_regex.h"
#include "schema/jsonschema.h"
#include "base/util.h"

/* ---------------------------------------------------------------- types */

/* Instance types as bits; "number" in a schema allows both numeric bits. */
enum {
    T_NULL = 1,
    T_BOOL = 2,
    T_INT = 4,
    T_NUM = 8,
    T_STR = 16,
    T_ARR = 32,
    T_OBJ = 64,
};

static const struct {
    const char *name;
    unsigned bits;
} type_names[] = {
    { "null", T_NULL },         { "boolean", T_BOOL }, { "object", T_OBJ },  { "array", T_ARR },
    { "number", T_NUM | T_INT }, { "string", T_STR },   { "integer", T_INT },
};

/*
** N_META stands for the official 2020-12 meta-schema: an instance is valid
** against it exactly when this compiler accepts it as a schema, so the
** document itself need not be shipped.
*/
enum nkind { N_TRUE, N_FALSE, N_OBJ, N_META };
#define META_SCHEMA_URI "https://json-schema.org/draft/2020-12/schema"

typedef struct node node;

typedef struct {
    const char *name;
    node *sub;
} named_node;

typedef struct {
    pcre2_code *re;
    const char *src;
    node *sub;
} pattern_node;

typedef struct {
    const char *name;
    const char **needs;
    size_t nneeds;
} dep_required;

/* A numeric keyword: its value and its text as written, for messages. */
typedef struct {
    bool set;
    long double v;
    const char *txt;
    json_object *json; /* the value itself, held by the schema's documents */
} num_kw;

/*
** A compiled subschema. Everything it points to (strings, arrays, other
** nodes) belongs to the th_schema's allocation list and lives as long as it.
*/
struct node {
    enum nkind kind;
    node *res; /* the schema resource (root or $id) this node is in */
    named_node *dyn_anchors; /* on resource roots: their $dynamicAnchors */
    size_t ndyn_anchors;

    unsigned types; /* 0: no "type" keyword */
    bool has_const;
    json_object *konst;
    const char *konst_txt;
    json_object *enumv;
    const char *enum_txt;

    num_kw minimum, maximum, xminimum, xmaximum, multiple_of;
    long long min_length, max_length; /* -1: absent */
    pcre2_code *pattern;
    const char *pattern_src;

    named_node *props; /* sorted by name for bsearch */
    size_t nprops;
    pattern_node *pprops;
    size_t npprops;
    node *additional;
    node *property_names;
    const char **required;
    size_t nrequired;
    dep_required *dep_required;
    size_t ndep_required;
    named_node *dep_schemas;
    size_t ndep_schemas;
    long long min_props, max_props;

    node **prefix;
    size_t nprefix;
    node *items;
    node *contains;
    long long min_contains, max_contains;
    bool has_min_contains;
    long long min_items, max_items;
    bool unique;

    node **all_of, **any_of, **one_of;
    size_t nall_of, nany_of, none_of;
    node *not_;
    node *if_, *then_, *else_;
    node *ref;
    node *dyn_ref;
    const char *dyn_name; /* $dynamicRef's anchor when it is dynamic */
    node *uneval_props, *uneval_items;
};

/* The quick check (see quick_plan): at most this many properties. */
#define QUICK_MAX_PROPS 16

/* A property of a quick schema: its name (the node's) and its types (0:
 * any value). */
typedef struct {
    const char *name;
    unsigned types;
} quick_prop;

struct th_schema {
    /* "An object with a few typed properties", the shape nearly every tool's
     * input schema has, checked without the general walk: NQUICK > 0 when
     * the schema is exactly that (see quick_plan). */
    size_t nquick;
    quick_prop quick[QUICK_MAX_PROPS];
    uint32_t quick_required; /* bits of QUICK */
    bool quick_closed;       /* additionalProperties: false */
    node *root;
    void **allocs; /* every block the nodes use */
    size_t nallocs, capallocs;
    pcre2_code **regexes;
    size_t nregexes, capregexes;
    json_object **docs; /* the documents held (root first) */
    size_t ndocs, capdocs;
};

/* Grow *ARR (of ELEM-byte entries) so it holds one more than *N. */
static bool grow(void *arrp, size_t *cap, size_t n, size_t elem)
{
    void **arr = arrp;
    if (n < *cap)
        return true;
    size_t ncap = *cap ? *cap * 2 : 16;
    void *p = realloc(*arr, ncap * elem);
    if (!p)
        return false;
    *arr = p;
    *cap = ncap;
    return true;
}

/* ------------------------------------------------------------- compiling */

/* What phase one learns about each subschema position. */
typedef struct info {
    json_object *json;
    json_object *res_json; /* the resource root it belongs to */
    char *base;            /* absolute base URI, no fragment */
    char *ptr;             /* where it is, for messages: "/properties/a" */
    node *node;            /* once compiled (or queued) */
} info;

typedef struct {
    char *uri;
    json_object *json;
} resource;

typedef struct {
    char *key; /* "base#name" */
    const char *name;
    json_object *json;
    json_object *res_json;
    bool dynamic;
} anchor;

typedef struct cctx {
    th_schema *s;
    th_schema_resolver resolver;
    void *rdata;
    char *err;
    size_t errlen;
    bool failed;

    info **infos;
    size_t ninfos, capinfos;
    info **hash; /* open addressing on the json_object pointer */
    size_t hcap;
    resource *res;
    size_t nres, capres;
    anchor *anchors;
    size_t nanchors, capanchors;
    info **work; /* nodes allocated but not yet filled */
    size_t nwork, capwork;
    bool no_validation; /* the meta-schema's $vocabulary leaves validation out */
} cctx;

#define ROOT_BASE "th:/root.json"

static bool cfail(cctx *c, const char *ptr, const char *kw, const char *fmt, ...) TH_PRINTF(4, 5);

/* Record "<ptr>/<kw>: <message>" (the first failure wins); returns false. */
static bool cfail(cctx *c, const char *ptr, const char *kw, const char *fmt, ...)
{
    if (c->failed)
        return false;
    c->failed = true;
    if (!c->err || !c->errlen)
        return false;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (kw)
        snprintf(c->err, c->errlen, "%s/%s: %s", ptr, kw, msg);
    else
        snprintf(c->err, c->errlen, "%s: %s", *ptr ? ptr : "(root)", msg);
    /* The message quotes the schema: a percent-decoded $ref can hold any
     * byte, and either buffer may cut a character; the message reaches logs
     * and plugins as text, so it must stay UTF-8. */
    char *fixed = th_utf8_repair(c->err, strlen(c->err), NULL);
    if (fixed) {
        snprintf(c->err, c->errlen, "%s", fixed);
        free(fixed);
    }
    th_utf8_clip(c->err);
    return false;
}

static bool oom(cctx *c)
{
    return cfail(c, "", NULL, "out of memory compiling the schema");
}

/* A zeroed block owned by the schema. */
static void *salloc(cctx *c, size_t size)
{
    void *p = calloc(1, size ? size : 1);
    if (!p || !grow(&c->s->allocs, &c->s->capallocs, c->s->nallocs, sizeof(void *))) {
        free(p);
        oom(c);
        return NULL;
    }
    c->s->allocs[c->s->nallocs++] = p;
    return p;
}

static const char *sdup(cctx *c, const char *str)
{
    size_t n = strlen(str);
    char *p = salloc(c, n + 1);
    if (p)
        memcpy(p, str, n + 1);
    return p;
}

/* JSON text of V kept by the schema (json-c's own buffer is not stable). */
static const char *stext(cctx *c, json_object *v)
{
    return sdup(c, json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
}

/* ---- URIs (RFC 3986 reference resolution) */

typedef struct {
    const char *p;
    size_t n;
    bool has;
} part;

typedef struct {
    part scheme, auth, path, query, frag;
} uri;

static void uri_parse(const char *s, uri *u)
{
    memset(u, 0, sizeof *u);
    const char *p = s;
    size_t i = 0;
    if ((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')) {
        while (s[i] && strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-", s[i]))
            i++;
        if (s[i] == ':') {
            u->scheme = (part){ s, i, true };
            p = s + i + 1;
        }
    }
    if (p[0] == '/' && p[1] == '/') {
        size_t n = strcspn(p + 2, "/?#");
        u->auth = (part){ p + 2, n, true };
        p += 2 + n;
    }
    size_t n = strcspn(p, "?#");
    u->path = (part){ p, n, true };
    p += n;
    if (*p == '?') {
        n = strcspn(p + 1, "#");
        u->query = (part){ p + 1, n, true };
        p += 1 + n;
    }
    if (*p == '#')
        u->frag = (part){ p + 1, strlen(p + 1), true };
}

/* RFC 3986 5.2.4 on IN (LEN bytes), appended to OUT. */
static bool remove_dots(const char *in, size_t len, th_buf *out)
{
    char *buf = malloc(len + 1);
    if (!buf)
        return false;
    memcpy(buf, in, len);
    buf[len] = '\0';
    char *s = buf;
    size_t start = out->len;
    bool ok = true;
    while (*s && ok) {
        if (!strncmp(s, "../", 3))
            s += 3;
        else if (!strncmp(s, "./", 2))
            s += 2;
        else if (!strncmp(s, "/./", 3))
            s += 2;
        else if (!strcmp(s, "/."))
            s[1] = '\0';
        else if (!strncmp(s, "/../", 4) || !strcmp(s, "/..")) {
            if (s[3])
                s += 3;
            else {
                s += 2;
                s[0] = '/';
            }
            while (out->len > start && out->data[out->len - 1] != '/')
                out->len--;
            if (out->len > start)
                out->len--;
        } else if (!strcmp(s, ".") || !strcmp(s, ".."))
            break;
        else {
            size_t n = strcspn(s + 1, "/") + 1;
            ok = th_buf_append(out, s, n);
            s += n;
        }
    }
    free(buf);
    if (out->data)
        out->data[out->len] = '\0';
    return ok;
}

static bool put(th_buf *b, part p, const char *prefix)
{
    if (!p.has)
        return true;
    return th_buf_append(b, prefix, strlen(prefix)) && th_buf_append(b, p.p, p.n);
}

/* REF resolved against BASE, malloc()ed; the fragment is kept. */
static char *uri_resolve(const char *base, const char *ref)
{
    uri b, r;
    uri_parse(base, &b);
    uri_parse(ref, &r);
    th_buf out = { 0 };
    bool ok = th_buf_append(&out, "", 0);
    if (r.scheme.has) {
        ok = ok && th_buf_append(&out, r.scheme.p, r.scheme.n) && th_buf_append(&out, ":", 1) &&
             put(&out, r.auth, "//") && remove_dots(r.path.p, r.path.n, &out) && put(&out, r.query, "?");
    } else {
        ok = ok && put(&out, b.scheme, "") && (!b.scheme.has || th_buf_append(&out, ":", 1));
        if (r.auth.has) {
            ok = ok && put(&out, r.auth, "//") && remove_dots(r.path.p, r.path.n, &out) && put(&out, r.query, "?");
        } else {
            ok = ok && put(&out, b.auth, "//");
            if (!r.path.n) {
                ok = ok && th_buf_append(&out, b.path.p, b.path.n) && put(&out, r.query.has ? r.query : b.query, "?");
            } else if (r.path.p[0] == '/') {
                ok = ok && remove_dots(r.path.p, r.path.n, &out) && put(&out, r.query, "?");
            } else {
                th_buf m = { 0 };
                if (b.auth.has && !b.path.n)
                    ok = ok && th_buf_append(&m, "/", 1);
                else {
                    size_t keep = b.path.n;
                    while (keep && b.path.p[keep - 1] != '/')
                        keep--;
                    ok = ok && th_buf_append(&m, b.path.p, keep);
                }
                ok = ok && th_buf_append(&m, r.path.p, r.path.n) && remove_dots(m.data, m.len, &out) &&
                     put(&out, r.query, "?");
                free(m.data);
            }
        }
    }
    ok = ok && put(&out, r.frag, "#");
    if (!ok) {
        free(out.data);
        return NULL;
    }
    return out.data;
}

/* Cut the fragment off URI in place; returns the fragment ("" if none). */
static char *cut_fragment(char *u)
{
    char *h = strchr(u, '#');
    if (!h)
        return u + strlen(u);
    *h = '\0';
    return h + 1;
}

/* Percent-decode S in place. */
static void pct_decode(char *s)
{
    char *w = s;
    for (char *r = s; *r; r++) {
        if (r[0] == '%' && th_hex_digit(r[1]) >= 0 && th_hex_digit(r[2]) >= 0) {
            *w++ = (char)(th_hex_digit(r[1]) * 16 + th_hex_digit(r[2]));
            r += 2;
        } else
            *w++ = *r;
    }
    *w = '\0';
}

/* ---- phase one: index every subschema position, $id and anchor */

static size_t hslot(const cctx *c, const json_object *j)
{
    uintptr_t h = (uintptr_t)j;
    h ^= h >> 17;
    h *= (uintptr_t)0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 7) & (c->hcap - 1);
}

static info *info_of(const cctx *c, const json_object *j)
{
    if (!c->hcap)
        return NULL;
    for (size_t i = hslot(c, j);; i = (i + 1) & (c->hcap - 1)) {
        if (!c->hash[i])
            return NULL;
        if (c->hash[i]->json == j)
            return c->hash[i];
    }
}

static bool hash_put(cctx *c, info *in)
{
    if ((c->ninfos + 1) * 2 > c->hcap) {
        size_t ncap = c->hcap ? c->hcap * 2 : 64;
        info **nh = calloc(ncap, sizeof *nh);
        if (!nh)
            return false;
        free(c->hash);
        c->hash = nh;
        c->hcap = ncap;
        for (size_t k = 0; k < c->ninfos; k++) {
            size_t i = hslot(c, c->infos[k]->json);
            while (c->hash[i])
                i = (i + 1) & (c->hcap - 1);
            c->hash[i] = c->infos[k];
        }
    }
    if (!grow(&c->infos, &c->capinfos, c->ninfos, sizeof(info *)))
        return false;
    c->infos[c->ninfos++] = in;
    size_t i = hslot(c, in->json);
    while (c->hash[i])
        i = (i + 1) & (c->hcap - 1);
    c->hash[i] = in;
    return true;
}

static json_object *find_resource(const cctx *c, const char *u)
{
    for (size_t i = 0; i < c->nres; i++)
        if (!strcmp(c->res[i].uri, u))
            return c->res[i].json;
    return NULL;
}

static bool add_resource(cctx *c, const char *u, json_object *j)
{
    if (find_resource(c, u))
        return true; /* the first document to claim a URI keeps it */
    if (!grow(&c->res, &c->capres, c->nres, sizeof(resource)))
        return oom(c);
    char *d = strdup(u);
    if (!d)
        return oom(c);
    c->res[c->nres++] = (resource){ d, j };
    return true;
}

static bool add_anchor(cctx *c, const char *base, json_object *name, json_object *j, json_object *res_json,
                       bool dynamic)
{
    if (!json_object_is_type(name, json_type_string))
        return true; /* phase two reports the type */
    if (!grow(&c->anchors, &c->capanchors, c->nanchors, sizeof(anchor)))
        return oom(c);
    size_t n = strlen(base) + json_object_get_string_len(name) + 2;
    char *key = malloc(n);
    if (!key)
        return oom(c);
    snprintf(key, n, "%s#%s", base, json_object_get_string(name));
    c->anchors[c->nanchors++] = (anchor){ key, json_object_get_string(name), j, res_json, dynamic };
    return true;
}

/* PTR + "/" + SEG with ~ and / escaped (RFC 6901), malloc()ed. */
static char *ptr_join(const char *ptr, const char *seg)
{
    th_buf b = { 0 };
    bool ok = th_buf_append(&b, ptr, strlen(ptr)) && th_buf_append(&b, "/", 1);
    for (const char *p = seg; ok && *p; p++)
        ok = *p == '~' ? th_buf_append(&b, "~0", 2) : *p == '/' ? th_buf_append(&b, "~1", 2) : th_buf_append(&b, p, 1);
    if (!ok) {
        free(b.data);
        return NULL;
    }
    return b.data;
}

/* How a keyword holds subschemas. */
enum holds { H_ONE, H_MAP, H_LIST };

static const struct {
    const char *kw;
    enum holds holds;
} applicators[] = {
    { "additionalProperties", H_ONE },  { "propertyNames", H_ONE }, { "items", H_ONE },
    { "contains", H_ONE },              { "not", H_ONE },           { "if", H_ONE },
    { "then", H_ONE },                  { "else", H_ONE },          { "unevaluatedProperties", H_ONE },
    { "unevaluatedItems", H_ONE },      { "properties", H_MAP },    { "patternProperties", H_MAP },
    { "$defs", H_MAP },                 { "dependentSchemas", H_MAP }, { "allOf", H_LIST },
    { "anyOf", H_LIST },                { "oneOf", H_LIST },        { "prefixItems", H_LIST },
};

static bool index_schema(cctx *c, json_object *j, const char *base, json_object *res_json, const char *ptr,
                         int depth);

static bool index_child(cctx *c, json_object *j, const char *base, json_object *res_json, const char *ptr,
                        const char *seg, int depth)
{
    char *p = ptr_join(ptr, seg);
    if (!p)
        return oom(c);
    bool ok = index_schema(c, j, base, res_json, p, depth);
    free(p);
    return ok;
}

static bool index_schema(cctx *c, json_object *j, const char *base, json_object *res_json, const char *ptr,
                         int depth)
{
    if (!json_object_is_type(j, json_type_object) && !json_object_is_type(j, json_type_boolean))
        return true; /* not a schema: phase two says so where it matters */
    if (info_of(c, j))
        return true;
    if (depth > TH_SCHEMA_MAX_NESTING)
        return cfail(c, ptr, NULL, "schema nested deeper than %d levels (limit)", TH_SCHEMA_MAX_NESTING);
    if (c->ninfos >= TH_SCHEMA_MAX_NODES)
        return cfail(c, ptr, NULL, "schema has more than %d subschemas (limit)", TH_SCHEMA_MAX_NODES);
    info *in = calloc(1, sizeof *in);
    if (!in)
        return oom(c);
    in->json = j;
    in->res_json = res_json ? res_json : j;
    json_object *id;
    if (json_object_object_get_ex(j, "$id", &id) && json_object_is_type(id, json_type_string)) {
        in->base = uri_resolve(base, json_object_get_string(id));
        if (in->base)
            cut_fragment(in->base);
        in->res_json = j;
    } else
        in->base = strdup(base);
    in->ptr = strdup(ptr);
    if (!in->base || !in->ptr || !hash_put(c, in)) {
        free(in->base);
        free(in->ptr);
        free(in);
        return oom(c);
    }
    if (!json_object_is_type(j, json_type_object))
        return true;
    if (in->res_json == j && !add_resource(c, in->base, j))
        return false;
    json_object *a;
    if (json_object_object_get_ex(j, "$anchor", &a) && !add_anchor(c, in->base, a, j, in->res_json, false))
        return false;
    if (json_object_object_get_ex(j, "$dynamicAnchor", &a) && !add_anchor(c, in->base, a, j, in->res_json, true))
        return false;
    for (size_t k = 0; k < sizeof applicators / sizeof applicators[0]; k++) {
        json_object *v;
        if (!json_object_object_get_ex(j, applicators[k].kw, &v))
            continue;
        char *kp = ptr_join(ptr, applicators[k].kw);
        if (!kp)
            return oom(c);
        bool ok = true;
        if (applicators[k].holds == H_ONE)
            ok = index_schema(c, v, in->base, in->res_json, kp, depth + 1);
        else if (applicators[k].holds == H_MAP && json_object_is_type(v, json_type_object)) {
            json_object_object_foreach(v, key, sub)
            {
                if (!(ok = index_child(c, sub, in->base, in->res_json, kp, key, depth + 1)))
                    break;
            }
        } else if (applicators[k].holds == H_LIST && json_object_is_type(v, json_type_array)) {
            for (size_t i = 0; ok && i < json_object_array_length(v); i++) {
                char seg[32];
                snprintf(seg, sizeof seg, "%zu", i);
                ok = index_child(c, json_object_array_get_idx(v, i), in->base, in->res_json, kp, seg, depth + 1);
            }
        }
        free(kp);
        if (!ok)
            return false;
    }
    return true;
}

/* Hold DOC (a new reference) and index it as the document at URI. */
static bool add_document(cctx *c, json_object *doc, const char *u, const char *ptr)
{
    th_schema *s = c->s;
    if (!grow(&s->docs, &s->capdocs, s->ndocs, sizeof(json_object *))) {
        json_object_put(doc);
        return oom(c);
    }
    s->docs[s->ndocs++] = doc;
    return add_resource(c, u, doc) && index_schema(c, doc, u, doc, ptr, 0);
}

/* ---- phase two: nodes */

static node *get_node(cctx *c, info *in)
{
    if (in->node)
        return in->node;
    node *n = salloc(c, sizeof *n);
    if (!n || !grow(&c->work, &c->capwork, c->nwork, sizeof(info *))) {
        oom(c);
        return NULL;
    }
    in->node = n;
    c->work[c->nwork++] = in;
    return n;
}

/* The node for the subschema V found under keyword KW of IN. */
static node *child(cctx *c, const info *in, const char *kw, json_object *v)
{
    if (!json_object_is_type(v, json_type_object) && !json_object_is_type(v, json_type_boolean)) {
        cfail(c, in->ptr, kw, "must be a schema (an object or a boolean), got %s",
              json_type_to_name(json_object_get_type(v)));
        return NULL;
    }
    info *ci = info_of(c, v);
    if (!ci) {
        char p[512];
        snprintf(p, sizeof p, "%s/%s", in->ptr, kw);
        if (!index_schema(c, v, in->base, in->res_json, p, 0) || !(ci = info_of(c, v))) {
            if (!c->failed)
                oom(c);
            return NULL;
        }
    }
    return get_node(c, ci);
}

/* Walk the JSON pointer FRAG (decoded) from DOC, whose base is BASE. On
** success *OUT is the target and *OUTBASE its base (malloc()ed). */
static bool walk_pointer(json_object *doc, const char *base, const char *frag, json_object **out, char **outbase)
{
    char *b = strdup(base);
    char *tok = malloc(strlen(frag) + 1);
    json_object *cur = doc;
    bool ok = b && tok;
    const char *p = frag;
    while (ok && *p == '/') {
        p++;
        size_t n = 0;
        for (; *p && *p != '/'; p++) {
            if (*p == '~' && p[1] == '0')
                tok[n++] = '~', p++;
            else if (*p == '~' && p[1] == '1')
                tok[n++] = '/', p++;
            else
                tok[n++] = *p;
        }
        tok[n] = '\0';
        json_object *next = NULL;
        if (json_object_is_type(cur, json_type_object))
            ok = json_object_object_get_ex(cur, tok, &next);
        else if (json_object_is_type(cur, json_type_array)) {
            char *end;
            unsigned long idx = strtoul(tok, &end, 10);
            ok = n && !*end && (tok[0] != '0' || n == 1) && tok[0] >= '0' && tok[0] <= '9' &&
                 idx < json_object_array_length(cur);
            if (ok)
                next = json_object_array_get_idx(cur, idx);
        } else
            ok = false;
        cur = next;
        json_object *id;
        if (ok && json_object_object_get_ex(cur, "$id", &id) && json_object_is_type(id, json_type_string)) {
            char *nb = uri_resolve(b, json_object_get_string(id));
            free(b);
            b = nb;
            ok = b != NULL;
            if (b)
                cut_fragment(b);
        }
    }
    free(tok);
    if (!ok || *p) {
        free(b);
        return false;
    }
    *out = cur;
    *outbase = b;
    return true;
}

/*
** Resolve the reference REF written at IN's keyword KW to the info of its
** target, loading documents through the resolver as needed. *DYN is set to
** the anchor name when the target carries a $dynamicAnchor of that name.
*/
static info *resolve_ref(cctx *c, const info *in, const char *kw, const char *ref, const char **dyn)
{
    info *res = NULL;
    char *docuri = uri_resolve(in->base, ref);
    if (!docuri) {
        oom(c);
        return NULL;
    }
    char *frag = cut_fragment(docuri);
    pct_decode(frag);
    json_object *doc = find_resource(c, docuri);
    if (!doc && c->resolver) {
        json_object *loaded = c->resolver(docuri, c->rdata);
        if (loaded) {
            size_t n = strlen(docuri) + 2;
            char *p = malloc(n);
            if (!p) {
                json_object_put(loaded);
                oom(c);
                goto cleanup;
            }
            snprintf(p, n, "%s#", docuri);
            bool ok = add_document(c, loaded, docuri, p);
            free(p);
            if (!ok)
                goto cleanup;
            doc = loaded;
        }
    }
    if (!doc) {
        cfail(c, in->ptr, kw, "'%s' resolves nowhere: no schema document '%s' is known", ref, docuri);
        goto cleanup;
    }
    const char *where = strcmp(docuri, ROOT_BASE) ? docuri : "this schema";
    json_object *target = NULL;
    if (!*frag) {
        target = doc;
    } else if (*frag == '/') {
        char *tbase = NULL;
        if (!walk_pointer(doc, docuri, frag, &target, &tbase)) {
            cfail(c, in->ptr, kw, "'%s' resolves nowhere: no value at '%s' in %s", ref, frag, where);
            goto cleanup;
        }
        if (!info_of(c, target)) {
            char *p = ptr_join(in->ptr, kw);
            bool ok = p && index_schema(c, target, tbase, doc, p, 0);
            free(p);
            if (!ok) {
                free(tbase);
                if (!c->failed)
                    oom(c);
                goto cleanup;
            }
        }
        free(tbase);
    } else {
        size_t n = strlen(docuri) + strlen(frag) + 2;
        char *key = malloc(n);
        if (!key) {
            oom(c);
            goto cleanup;
        }
        snprintf(key, n, "%s#%s", docuri, frag);
        for (size_t i = 0; i < c->nanchors && !target; i++)
            if (!strcmp(c->anchors[i].key, key)) {
                target = c->anchors[i].json;
                if (dyn && c->anchors[i].dynamic)
                    *dyn = c->anchors[i].name;
            }
        free(key);
        if (!target) {
            cfail(c, in->ptr, kw, "'%s' resolves nowhere: no anchor '%s' in %s", ref, frag, where);
            goto cleanup;
        }
    }
    res = info_of(c, target);
    if (!res)
        cfail(c, in->ptr, kw, "'%s' does not point to a schema (an object or a boolean)", ref);
cleanup:
    free(docuri);
    return res;
}

/* ---- keyword compilers: each checks its value and fills the node */

typedef bool (*kw_fn)(cctx *c, const info *in, node *n, json_object *v, const char *kw);

static bool is_number(json_object *v)
{
    return json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double);
}

static long double num_of(json_object *v)
{
    if (json_object_is_type(v, json_type_int)) {
        int64_t i = json_object_get_int64(v);
        if (i == INT64_MAX)
            return (long double)json_object_get_uint64(v);
        return (long double)i;
    }
    double d = json_object_get_double(v);
    /* An integer past 64 bits arrives as a double that keeps its literal
     * (see th_rpc_parse); the double may have rounded onto a bound, as
     * -9223372036854775809 does onto INT64_MIN, so judge it by the literal,
     * as typed calls do. Smaller doubles are exact already. */
    if (fabs(d) >= 0x1p53 && d == floor(d)) {
        const char *text = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
        const char *q = text && *text == '-' ? text + 1 : text;
        bool digits = q && *q;
        for (; digits && *q; q++)
            digits = *q >= '0' && *q <= '9';
        if (digits)
            return strtold(text, NULL);
    }
    return (long double)d;
}

/* A non-negative integer (2.0 counts) into *OUT. */
static bool get_count(cctx *c, const info *in, json_object *v, const char *kw, long long *out)
{
    if (is_number(v)) {
        long double d = num_of(v);
        if (d >= 0 && d <= (long double)LLONG_MAX && floorl(d) == d) {
            *out = (long long)d;
            return true;
        }
    }
    return cfail(c, in->ptr, kw, "must be a non-negative integer");
}

static bool k_type(cctx *c, const info *in, node *n, json_object *v, const char *kw)
{
    size_t count = json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 1;
    if (!count)
        return cfail(c, in->ptr, kw, "must be a type name or a non-empty array of type names");
    for (size_t i = 0; i < count; i++) {
        json_object *t = json_object_is_type(v, json_type_array) ? json_object_array_get_idx(v, i) : v;
        if (!json_object_is_type(t, json_type_string))
            return cfail(c, in->ptr, kw, "must be a type name or an array of type names");
        unsigned bits = 0;
        for (size_t k = 0; k < sizeof type_names / sizeof type_names[0]; k++)
            if (!strcmp(type_names[k].name, json_object_get_string(t)))
                bits = type_names[k].bits;
        if (!bits)
            return cfail(c, in->ptr, kw,
                         "unknown type '%s' (expected null, boolean, object, array, number, string or integer)",
                         json_object_get_string(t));
        n->types |= bits;
    }
    return true;
}

static bool k_enum(cctx *c, const info *in, node *n, json_object *v, const char *kw)
{
    if (!json_object_is_type(v, json_type_array))
        return cfail(c, in->ptr, kw, "must be an array");
    n->enumv = v;
    return (n->enum_txt = stext(c, v)) != NULL;
}

static bool k_const(cctx *c, const info *in, node *n, json_object *v, const char *kw)
{
    (void)in;
    (void)kw;
    n->has_const = true;
    n->konst = v;
    return (n->konst_txt = stext(c, v)) != NULL;
}

/* Which num_kw a numeric keyword fills, by offset into the node. */
static const struct {
    const char *kw;
    size_t off;
} num_fields[] = {
    { "minimum", offsetof(node, minimum) },          { "maximum", offsetof(node, maximum) },
    { "exclusiveMinimum", offsetof(node, xminimum) }, { "exclusiveMaximum", offsetof(node, xmaximum) },
    { "multipleOf", offsetof(node, multiple_of) },
};

static bool k_number(cctx *c, const info *in, node *n, json_object *v, const char *kw)
{
    if (!is_number(v))
        return cfail(c, in->ptr, kw, "must be a number");
    long double d = num_of(v);
    if (!strcmp(kw, "multipleOf") && !(d > 0))
        return cfail(c, in->ptr, kw, "must be a number greater than 0");
    for (size_t k = 0; k < sizeof num_fields / sizeof num_fields[0]; k++)
        if (!strcmp(num_fields[k].kw, kw)) {
            num_kw *f = (num_kw *)((char *)n + num_fields[k].off);
            f->set = true;
            f->v = d;
            f->json = v;
            f->txt = stext(c, v);
            return f->txt != NULL;
        }
    return true;
}

/* Which count a count keyword fills, by offset into the node. */
static const struct {
    const char *kw;
    size_t off;
} count_fields[] = {
    { "minLength", offsetof(node, min_length) },    { "maxLength", offsetof(node, max_length) },
    { "minItems", offsetof(node, min_items) },      { "maxItems", offsetof(node, max_items) },
    { "minProperties", offsetof(node, min_props) }, { "maxProperties", offsetof(node, max_props) },
    { "minContains", offsetof(node, min_contains) }, { "maxContains", offsetof(node, max_contains) },
};

static bool k_count(cctx *c, const info *in, node *n, json_object *v, const char *kw)
{
    long long val = 0;
    if (!get_count(c, in, v, kw, &val))
        return false;
    for (size_t k = 0; k < sizeof count_fields / sizeof count_fields[0]; k++)
        if (!strcmp(count_fields[k].kw, kw))
            *(long long *)((char *)n + count_fields[k].off) = val;
    if (!strcmp(kw, "minContains"))
        n->has_min_contains = true;
    return true;
}

static pcre2_code *regex(cctx *c, const info *in, const char *kw, const char *src)
{
    char msg[256];
    pcre2_code *re = th_ecma_regex_compile(src, msg, sizeof msg);
    if (!re) {
        cfail(c, in->ptr, kw, "invalid regular expression '%s': %s", src, msg);
        return NULL;
    }
    th_schema *s = c->s;
    if (!grow(&s->regexes, &s->capregexes, s->nregexes, sizeof(pcre2_code *))) {
        pcre2_code_free(re);
        oom(c);
        return NULL;
    }
    s->regexes[s->nregexes++] = re;
    return re;
}

static bool k_pattern(cctx *c, const info *in, node *n, json_object *v, const char *kw)
{
    if (!json_object_is_type(v, json_type_string))
        return cfail(c, in->ptr, kw, "must be a string (a regular expression)");
    n->pattern_src = sdup(c, json_object_get_string(v));
    return n->pattern_src && (n->pattern = regex(c, in, kw, n->pattern_src)) != NULL;
}

static int cmp_named(const void *a, const void *b)
{
    return strcmp(((const named_node *)a)->name, ((const named_node *)b)->name);
}

/* An object of schemas into a sorted named_node array. */
static bool schema_map(cctx *c, const info *in, json_object *v, const char *kw, named_node **out, size_t *nout)
{
    if (!json_object_is_type(v, json_type_object))
        return cfail(c, in->ptr, kw, "must be an object whose values are schemas");
    size_t n = (size_t)json_object_object_length(v), i = 0;
    named_node *arr = salloc(c, n * sizeof *arr);
    if (!arr)
        return false;
    json_object_object_foreach(v, key, sub)
    {
        char *kp = ptr_join(kw, key);
        if (!kp)
            return oom(c);
        arr[i].name = sdup(c, key);
        arr[i].sub = child(c, in, kp, sub);
        free(kp);
        if (!arr[i].name || !arr[i].sub)
            return false;
        i++;
    }
    qsort(arr, n, sizeof *arr, cmp_named);
    *out = arr;
    *nout = n;
    return true;
}

/* An array of schemas (non-empty, within the fan-out limit). */
static bool schema_list(cctx *c, const info *in, json_object *v, const char *kw, node ***out, size_t *nout)
{
    if (!json_object_is_type(v, json_type_array) || !json_object_array_length(v))
        return cfail(c, in->ptr, kw, "must be a non-empty array of schemas");
    size_t n = json_object_array_length(v);
    if (n > TH_SCHEMA_MAX_FANOUT)
        return cfail(c, in->ptr, kw, "has %zu schemas, more than the limit of %d", n, TH_SCHEMA_MAX_FANOUT);
    node **arr = salloc(c, n * sizeof *arr);
    if (!arr)
        return false;
    for (size_t i = 0; i < n; i++) {
        char kp[160];
        snprintf(kp, sizeof kp, "%s/%zu", kw, i);
        if (!(arr[i] = child(c, in, kp, json_object_array_get_idx(v, i))))
            return false;
    }
    *out = arr;
    *nout = n;
    return true;
}

/* An array of unique strings. */
static bool string_list(cctx *c, const info *in, json_object *v, const char *kw, const char ***out, size_t *nout)
{
    if (!json_object_is_type(v, json_type_array))
        return cfail(c, in->ptr, kw, "must be an array of strings");
    size_t n = json_object_array_length(v);
    const char **arr = salloc(c, n * sizeof *arr);
    if (!arr)
        return false;
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(v, i);
        if (!json_object_is_type(e, json_type_string))
            return cfail(c, in->ptr, kw, "must be an array of strings (entry %zu is %s)", i,
                         json_type_to_name(json_object_get_type(e)));
        for (size_t k = 0; k < i; k++)
            if (!strcmp(arr[k], json_object_get_string(e)))
                return cfail(c, in->ptr, kw, "must not repeat '%s'", arr[k]);
        if (!(arr[i] = sdup(c, json_object_get_string(e))))
            return false;
    }
    *out = arr;
    *nout = n;
    return true;
}

static bool k_properties(cctx *c, const info *in, node *n, json_object *v, const char *kw)
{
    return schema_map(c, in, v, kw, &n->props, &n->nprops);
}

static bool k_dep_schemas(cctx *c, const info *in, node *n, json_object *v, const char *kw)
{
    return schema_map(c, in, v, kw, &n->dep_schemas, &n->ndep_schemas);
}

static bool k_defs(cctx *c, const info *in, node *n, json_object *v, const char *kw)
{
    /* Compiled so that a broken definition is refused even if unused. */
    named_node *defs;
    size_t ndefs;
    (void)n;
    return schema_map(c, in, v, kw, &defs, &ndefs);
}

static bool k_pattern_props(cctx *c, const info *in, node *n, json_object *v, const char *kw)
{
    if (!json_object_is_type(v, json_type_object))
        return cfail(c, in->ptr, kw, "must be an object whose keys are regular expressions and values schemas");
    size_t i = 0;
    n->pprops = salloc(c, (size_t)json_object_object_length(v) * sizeof *n->pprops);
    if (!n->pprops)
        return false;
    json_object_object_foreach(v, key, sub)
    {
        char *kp = ptr_join(kw, key);
        if (!kp)
            return oom(c);
        pattern_node *p = &n->pprops[i++];
        p->src = sdup(c, key);
        p->sub = child(c, in, kp, sub);
        p->re = p->src && p->sub ? regex(c, in, kp, p->src) : NULL;
        free(kp);
        if (!p->re)
            return false;
    }
    n->npprops = i;
    return true;
}

static bool k_required(cctx *c, const info *in, node *n, json_object *v, const char *kw)
{
    return string_list(c, in, v, kw, &n->required, &n->nrequired);
}

static bool k_dep_required(cctx *c, const info *in, node *n, json_object *v, const char *kw)
{
    if (!json_object_is_type(v, json_type_object))
        return cfail(c, in->ptr, kw, "must be an object whose values are arrays of strings");
    size_t i = 0;
    n->dep_required = salloc(c, (size_t)json_object_object_length(v) * sizeof *n->dep_required);
    if (!n->dep_required)
        return false;
    json_object_object_foreach(v, key, list)
    {
        char *kp = ptr_join(kw, key);
        if (!kp)
            return oom(c);
        dep_required *d = &n->dep_required[i++];
        d->name = sdup(c, key);
        bool ok = d->name && string_list(c, in, list, kp, &d->needs, &d->nneeds);
        free(kp);
        if (!ok)
            return false;
    }
    n->ndep_required = i;
    return true;
}

/* Which node pointer a single-schema keyword fills, by offset. */
static const struct {
    const char *kw;
    size_t off;
} one_fields[] = {
    { "additionalProperties", offsetof(node, additional) },
    { "propertyNames", offsetof(node, property_names) },
    { "items", offsetof(node, items) },
    { "contains", offsetof(node, contains) },
    { "not", offsetof(node, not_) },
    { "if", offsetof(node, if_) },
    { "then", offsetof(node, then_) },
    { "else", offsetof(node, else_) },
    { "unevaluatedProperties", offsetof(node, uneval_props) },
    { "unevaluatedItems", offsetof(node, uneval_items) },
};

static bool k_one(cctx *c, const info *in, node *n, json_object *v, const char *kw)
{
    if (!strcmp(kw, "items") && json_object_is_type(v, json_type_array))
        return cfail(c, in->ptr, kw, "must be a schema (an object or a boolean); use prefixItems for tuples");
    node *sub = child(c, in, kw, v);
    if (!sub)
        return false;
    for (size_t k = 0; k < sizeof one_fields / sizeof one_fields[0]; k++)
        if (!strcmp(one_fields[k].kw, kw))
            *(node **)((char *)n + one_fields[k].off) = sub;
    return true;
}

static const struct {
    const char *kw;
    size_t off, noff;
} list_fields[] = {
    { "allOf", offsetof(node, all_of), offsetof(node, nall_of) },
    { "anyOf", offsetof(node, any_of), offsetof(node, nany_of) },
    { "oneOf", offsetof(node, one_of), offsetof(node, none_of) },
    { "prefixItems", offsetof(node, prefix), offsetof(node, nprefix) },
};

static bool k_list(cctx *c, const info *in, node *n, json_object *v, const char *kw)
{
    for (size_t k = 0; k < sizeof list_fields / sizeof list_fields[0]; k++)
        if (!strcmp(list_fields[k].kw, kw))
            return schema_list(c, in, v, kw, (node ***)((char *)n + list_fields[k].off),
                               (size_t *)((char *)n + list_fields[k].noff));
    return true;
}

static bool k_unique(cctx *c, const info *in, node *n, json_object *v, const char *kw)
{
    if (!json_object_is_type(v, json_type_boolean))
        return cfail(c, in->ptr, kw, "must be a boolean");
    n->unique = json_object_get_boolean(v);
    return true;
}

static bool k_ref(cctx *c, const info *in, node *n, json_object *v, const char *kw)
{
    if (!json_object_is_type(v, json_type_string))
        return cfail(c, in->ptr, kw, "must be a string (a URI reference)");
    const char *dyn = NULL;
    if (!strcmp(kw, "$ref")) {
        char *u = uri_resolve(in->base, json_object_get_string(v));
        if (!u)
            return oom(c);
        size_t ul = strlen(u);
        bool meta = (!strcmp(u, META_SCHEMA_URI) || (ul && u[ul - 1] == '#' && ul - 1 == strlen(META_SCHEMA_URI) &&
                                                       !strncmp(u, META_SCHEMA_URI, ul - 1))) &&
                    !find_resource(c, META_SCHEMA_URI);
        free(u);
        if (meta) {
            node *m = salloc(c, sizeof *m);
            if (!m)
                return false;
            m->kind = N_META;
            n->ref = m;
            return true;
        }
    }
    info *t = resolve_ref(c, in, kw, json_object_get_string(v), &dyn);
    if (!t)
        return false;
    node *target = get_node(c, t);
    if (!target)
        return false;
    if (!strcmp(kw, "$ref"))
        n->ref = target;
    else {
        n->dyn_ref = target;
        n->dyn_name = dyn;
    }
    return true;
}

static bool k_string(cctx *c, const info *in, node *n, json_object *v, const char *kw)
{
    (void)n;
    if (!json_object_is_type(v, json_type_string))
        return cfail(c, in->ptr, kw, "must be a string");
    return true;
}

static bool k_anchor(cctx *c, const info *in, node *n, json_object *v, const char *kw)
{
    if (!k_string(c, in, n, v, kw))
        return false;
    const char *a = json_object_get_string(v);
    bool ok = (*a >= 'A' && *a <= 'Z') || (*a >= 'a' && *a <= 'z') || *a == '_';
    for (const char *p = a + 1; ok && *a && *p; p++)
        ok = strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.", *p) != NULL;
    if (!ok)
        return cfail(c, in->ptr, kw, "'%s' is not a valid anchor name (a letter or '_', then letters, digits, '-', '_', '.')",
                     a);
    return true;
}

static bool k_vocabulary(cctx *c, const info *in, node *n, json_object *v, const char *kw)
{
    (void)n;
    if (!json_object_is_type(v, json_type_object))
        return cfail(c, in->ptr, kw, "must be an object of URIs to booleans");
    return true;
}

/* Every keyword with a meaning; others are annotations and ignored. */
static const struct {
    const char *kw;
    kw_fn fn;
    bool validation; /* in the validation vocabulary, which $vocabulary can turn off */
} keywords[] = {
    { "type", k_type, true },
    { "enum", k_enum, true },
    { "const", k_const, true },
    { "minimum", k_number, true },
    { "maximum", k_number, true },
    { "exclusiveMinimum", k_number, true },
    { "exclusiveMaximum", k_number, true },
    { "multipleOf", k_number, true },
    { "minLength", k_count, true },
    { "maxLength", k_count, true },
    { "minItems", k_count, true },
    { "maxItems", k_count, true },
    { "minProperties", k_count, true },
    { "maxProperties", k_count, true },
    { "minContains", k_count, true },
    { "maxContains", k_count, true },
    { "pattern", k_pattern, true },
    { "patternProperties", k_pattern_props, false },
    { "properties", k_properties, false },
    { "required", k_required, true },
    { "dependentRequired", k_dep_required, true },
    { "dependentSchemas", k_dep_schemas, false },
    { "$defs", k_defs, false },
    { "additionalProperties", k_one, false },
    { "propertyNames", k_one, false },
    { "items", k_one, false },
    { "contains", k_one, false },
    { "not", k_one, false },
    { "if", k_one, false },
    { "then", k_one, false },
    { "else", k_one, false },
    { "unevaluatedProperties", k_one, false },
    { "unevaluatedItems", k_one, false },
    { "allOf", k_list, false },
    { "anyOf", k_list, false },
    { "oneOf", k_list, false },
    { "prefixItems", k_list, false },
    { "uniqueItems", k_unique, true },
    { "$ref", k_ref, false },
    { "$dynamicRef", k_ref, false },
    { "$id", k_string, false },
    { "$schema", k_string, false },
    { "$comment", k_string, false },
    { "$anchor", k_anchor, false },
    { "$dynamicAnchor", k_anchor, false },
    { "$vocabulary", k_vocabulary, false },
    { "format", k_string, false },
};

static bool fill_node(cctx *c, info *in)
{
    node *n = in->node;
    if (json_object_is_type(in->json, json_type_boolean)) {
        n->kind = json_object_get_boolean(in->json) ? N_TRUE : N_FALSE;
        return true;
    }
    if (!json_object_is_type(in->json, json_type_object))
        return cfail(c, in->ptr, NULL, "must be a schema (an object or a boolean), got %s",
                     json_type_to_name(json_object_get_type(in->json)));
    n->kind = N_OBJ;
    n->min_length = n->max_length = n->min_items = n->max_items = -1;
    n->min_props = n->max_props = n->max_contains = -1;
    n->min_contains = 1;
    json_object_object_foreach(in->json, key, v)
    {
        for (size_t k = 0; k < sizeof keywords / sizeof keywords[0]; k++)
            if (!strcmp(keywords[k].kw, key) && !(keywords[k].validation && c->no_validation) &&
                !keywords[k].fn(c, in, n, v, key))
                return false;
    }
    info *ri = info_of(c, in->res_json);
    if (ri && !(n->res = get_node(c, ri)))
        return false;
    if (in->res_json != in->json)
        return true;
    size_t ndyn = 0;
    for (size_t i = 0; i < c->nanchors; i++)
        ndyn += c->anchors[i].dynamic && c->anchors[i].res_json == in->json;
    if (!ndyn)
        return true;
    if (!(n->dyn_anchors = salloc(c, ndyn * sizeof *n->dyn_anchors)))
        return false;
    for (size_t i = 0; i < c->nanchors; i++) {
        anchor *a = &c->anchors[i];
        if (!a->dynamic || a->res_json != in->json)
            continue;
        info *ai = info_of(c, a->json);
        named_node *d = &n->dyn_anchors[n->ndyn_anchors++];
        if (!ai || !(d->name = sdup(c, a->name)) || !(d->sub = get_node(c, ai)))
            return c->failed ? false : oom(c);
    }
    return true;
}

static void cctx_free(cctx *c)
{
    for (size_t i = 0; i < c->ninfos; i++) {
        free(c->infos[i]->base);
        free(c->infos[i]->ptr);
        free(c->infos[i]);
    }
    free(c->infos);
    free(c->hash);
    for (size_t i = 0; i < c->nres; i++)
        free(c->res[i].uri);
    free(c->res);
    for (size_t i = 0; i < c->nanchors; i++)
        free(c->anchors[i].key);
    free(c->anchors);
    free(c->work);
}

#define VALIDATION_VOCAB "https://json-schema.org/draft/2020-12/vocab/validation"

/*
** Whether the meta-schema SCHEMA names in $schema, when the resolver knows
** it, lists a $vocabulary without the validation vocabulary. Unknown
** meta-schemas (the official one included) keep every vocabulary.
*/
static bool validation_off(const cctx *c, json_object *schema)
{
    json_object *ms, *vocab;
    if (!c->resolver || !json_object_object_get_ex(schema, "$schema", &ms) ||
        !json_object_is_type(ms, json_type_string))
        return false;
    char *u = strdup(json_object_get_string(ms));
    if (!u)
        return false;
    cut_fragment(u);
    json_object *doc = c->resolver(u, c->rdata);
    free(u);
    bool off = json_object_object_get_ex(doc, "$vocabulary", &vocab) && json_object_is_type(vocab, json_type_object) &&
               !json_object_object_get_ex(vocab, VALIDATION_VOCAB, NULL);
    json_object_put(doc);
    return off;
}

/* ---------------------------------------------------------- quick check */

/*
** Whether N applies no keyword but (perhaps) "type" and, with PROPS, the
** object keywords "properties", "required" and "additionalProperties":
** every other field as fill_node leaves it when its keyword is absent.
** Annotations ("description", "default", "title") compile to nothing.
*/
static bool only_types(const node *n, bool props)
{
    if (n->kind != N_OBJ || n->ndyn_anchors || n->has_const || n->enumv || n->minimum.set || n->maximum.set ||
        n->xminimum.set || n->xmaximum.set || n->multiple_of.set || n->min_length != -1 || n->max_length != -1 ||
        n->pattern || n->npprops || n->property_names || n->ndep_required || n->ndep_schemas ||
        n->min_props != -1 || n->max_props != -1 || n->nprefix || n->items || n->contains ||
        n->min_contains != 1 || n->max_contains != -1 || n->has_min_contains || n->min_items != -1 ||
        n->max_items != -1 || n->unique || n->nall_of || n->nany_of || n->none_of || n->not_ || n->if_ ||
        n->then_ || n->else_ || n->ref || n->dyn_ref || n->uneval_props || n->uneval_items)
        return false;
    return props || (!n->nprops && !n->additional && !n->nrequired);
}

/*
** Fill S's quick fields when its root is {"type":"object", "properties":
** {NAME: {"type": ...} or true, ...}, "required": [...],
** "additionalProperties": false or true} and nothing else that validates.
** Such a schema holds for an instance exactly when quick_valid says so;
** when it says "not sure", the general walk decides and words the errors.
*/
static void quick_plan(th_schema *s)
{
    const node *r = s->root;
    s->nquick = 0;
    if (!r || !only_types(r, true) || r->types != T_OBJ || r->nprops == 0 || r->nprops > QUICK_MAX_PROPS ||
        (r->additional && r->additional->kind != N_FALSE && r->additional->kind != N_TRUE))
        return;
    for (size_t i = 0; i < r->nprops; i++) {
        const node *sub = r->props[i].sub;
        if (sub->kind != N_TRUE && !only_types(sub, false))
            return;
        s->quick[i] = (quick_prop){.name = r->props[i].name, .types = sub->kind == N_TRUE ? 0 : sub->types};
    }
    uint32_t req = 0;
    for (size_t k = 0; k < r->nrequired; k++) {
        size_t i = 0;
        while (i < r->nprops && strcmp(r->props[i].name, r->required[k]) != 0)
            i++;
        if (i == r->nprops)
            return; /* required but not a property: left to the walk */
        req |= (uint32_t)1 << i;
    }
    s->quick_required = req;
    s->quick_closed = r->additional && r->additional->kind == N_FALSE;
    s->nquick = r->nprops;
}

/*
** True when INST surely holds for S's quick plan; false when it may not
** (then the general walk decides). A double counts as "integer" only when
** integral, which is the walk's business: only "number" takes it here.
*/
static bool quick_valid(const th_schema *s, json_object *inst)
{
    lh_table *t = json_object_get_object(inst); /* NULL: not an object */
    if (!t)
        return false;
    uint32_t seen = 0;
    for (struct lh_entry *e = lh_table_head(t); e; e = lh_entry_next(e)) {
        const char *k = lh_entry_k(e);
        size_t i = 0;
        while (i < s->nquick && strcmp(s->quick[i].name, k) != 0)
            i++;
        if (i == s->nquick) {
            if (s->quick_closed)
                return false;
            continue;
        }
        seen |= (uint32_t)1 << i;
        unsigned want = s->quick[i].types;
        json_object *v = (json_object *)lh_entry_v(e);
        if (!want)
            continue;
        static const unsigned by_json_type[] = {
            [json_type_null] = T_NULL, [json_type_boolean] = T_BOOL, [json_type_double] = T_NUM,
            [json_type_int] = T_INT,   [json_type_object] = T_OBJ,   [json_type_array] = T_ARR,
            [json_type_string] = T_STR,
        };
        enum json_type jt = json_object_get_type(v);
        if ((unsigned)jt >= sizeof by_json_type / sizeof by_json_type[0] || !(want & by_json_type[jt]))
            return false;
    }
    return (seen & s->quick_required) == s->quick_required;
}

th_schema *th_schema_compile_ex(json_object *schema, th_schema_resolver resolver, void *data, char *err,
                                size_t errlen)
{
    cctx c = { .resolver = resolver, .rdata = data, .err = err, .errlen = errlen };
    if (err && errlen)
        err[0] = '\0';
    if (!(c.s = calloc(1, sizeof *c.s))) {
        oom(&c);
        return NULL;
    }
    if (!json_object_is_type(schema, json_type_object) && !json_object_is_type(schema, json_type_boolean)) {
        cfail(&c, "", NULL, "must be a schema (an object or a boolean), got %s",
              json_type_to_name(json_object_get_type(schema)));
        goto cleanup;
    }
    c.no_validation = validation_off(&c, schema);
    if (!add_document(&c, json_object_get(schema), ROOT_BASE, ""))
        goto cleanup;
    info *root = info_of(&c, schema);
    if (!root || !(c.s->root = get_node(&c, root)))
        goto cleanup;
    /* A work list rather than recursion: $ref chains cannot deepen the C stack. */
    while (c.nwork) {
        info *in = c.work[--c.nwork];
        if (!fill_node(&c, in))
            goto cleanup;
    }
cleanup:
    cctx_free(&c);
    if (c.failed) {
        th_schema_free(c.s);
        return NULL;
    }
    quick_plan(c.s);
    return c.s;
}

th_schema *th_schema_compile(json_object *schema, char *err, size_t errlen)
{
    return th_schema_compile_ex(schema, NULL, NULL, err, errlen);
}

void th_schema_free(th_schema *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nallocs; i++)
        free(s->allocs[i]);
    free(s->allocs);
    for (size_t i = 0; i < s->nregexes; i++)
        pcre2_code_free(s->regexes[i]);
    free(s->regexes);
    for (size_t i = 0; i < s->ndocs; i++)
        json_object_put(s->docs[i]);
    free(s->docs);
    free(s);
}

/* ------------------------------------------------------------ validating */

/* The instance location: a chain of frames on the C stack. */
typedef struct ipath {
    const struct ipath *up;
    const char *key; /* NULL: an array index */
    size_t idx;
} ipath;

/* The schema resources entered, innermost first (the dynamic scope). */
typedef struct scope {
    const struct scope *up;
    const node *res;
} scope;

/* Instance positions (properties by iteration order, or items) that some
** keyword evaluated: what unevaluatedProperties/Items look at. */
typedef struct ann {
    uint64_t *w;
    size_t nbits;
    uint64_t inl[4];
} ann;

typedef struct vctx {
    pcre2_match_data *md; /* this call's own */
    bool collect;         /* report violations (false inside anyOf/oneOf/not/if) */
    size_t count;
    th_buf *out; /* NULL: count only */
    int depth, ref_depth;
    bool limit_hit, limit_reported;
    const scope *scope;
    pcre2_match_context *mctx; /* this call's own: per-subject regex limits */
    size_t steps, max_steps, next_poll;
    const th_validate_opts *opts;
    /* Once set, every check fails at once and only STOP_MSG (malloc()ed,
    ** a whole message line) is added: the answer is "invalid" without
    ** further work, which is what fail closed means. */
    bool stopped;
    char *stop_msg;
} vctx;

static bool ann_init(ann *a, size_t nbits)
{
    size_t words = (nbits + 63) / 64;
    a->nbits = nbits;
    if (words <= sizeof a->inl / sizeof a->inl[0]) {
        a->w = a->inl;
        memset(a->inl, 0, sizeof a->inl);
        return true;
    }
    a->w = calloc(words, sizeof(uint64_t));
    return a->w != NULL;
}

static void ann_free(ann *a)
{
    if (a && a->w != a->inl)
        free(a->w);
}

static void ann_set(ann *a, size_t i)
{
    if (a && i < a->nbits)
        a->w[i / 64] |= (uint64_t)1 << (i % 64);
}

static bool ann_get(const ann *a, size_t i)
{
    return (a->w[i / 64] >> (i % 64)) & 1;
}

static void ann_merge(ann *into, const ann *from)
{
    if (into && from)
        for (size_t i = 0; i < (into->nbits + 63) / 64; i++)
            into->w[i] |= from->w[i];
}

static void path_append(th_buf *b, const ipath *p)
{
    if (!p)
        return;
    path_append(b, p->up);
    if (!p->key) {
        th_buf_printf(b, "/%zu", p->idx);
        return;
    }
    th_buf_append(b, "/", 1);
    for (const char *k = p->key; *k; k++)
        th_buf_append(b, *k == '~' ? "~0" : *k == '/' ? "~1" : k, *k == '~' || *k == '/' ? 2 : 1);
}

static void report(vctx *c, const ipath *p, const char *kw, const char *fmt, ...) TH_PRINTF(4, 5);

static void report(vctx *c, const ipath *p, const char *kw, const char *fmt, ...)
{
    /* After a stop, failures are consequences of it, not findings. */
    if (!c->collect || c->stopped)
        return;
    c->count++;
    if (!c->out || c->count > TH_SCHEMA_MAX_MESSAGES)
        return;
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof msg)
        memcpy(msg + sizeof msg - 4, "...", 4);
    if (c->out->len)
        th_buf_append(c->out, "\n", 1);
    if (p)
        path_append(c->out, p);
    else
        th_buf_append(c->out, "(root)", 6);
    th_buf_printf(c->out, ": %s (%s)", msg, kw);
}

static void stop(vctx *c, const ipath *p, const char *kw, const char *fmt, ...) TH_PRINTF(4, 5);

/* Stop validating: the instance is invalid because of this, at P. */
static void stop(vctx *c, const ipath *p, const char *kw, const char *fmt, ...)
{
    if (c->stopped)
        return;
    c->stopped = true;
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    th_buf b = { 0 };
    if (p)
        path_append(&b, p);
    else
        th_buf_append(&b, "(root)", 6);
    th_buf_printf(&b, ": %s (%s)", msg, kw);
    c->stop_msg = b.data; /* NULL when out of memory: the count still tells */
}

/* Pay one step of the work budget, and poll for cancellation every
** TH_SCHEMA_POLL_STEPS steps (the first time on the first step, so an
** already cancelled call does no work). False: validation has stopped. */
static bool charge(vctx *c)
{
    if (c->stopped)
        return false;
    if (++c->steps > c->max_steps) {
        stop(c, NULL, "step limit", "validation stopped: the arguments need more than %zu steps to check",
             c->max_steps);
        return false;
    }
    if (c->opts && c->opts->cancelled && c->steps >= c->next_poll) {
        c->next_poll = c->steps + TH_SCHEMA_POLL_STEPS;
        if (c->opts->cancelled(c->opts->ctx)) {
            stop(c, NULL, "cancelled", "validation stopped: the call was cancelled");
            return false;
        }
    }
    return true;
}

/* PCRE2 backtracking units bought with one step: a step of validation
** costs about as much time as four units. */
enum { RE_UNITS_PER_STEP = 4 };

/* Does RE (written SRC) find a match in S? 1 or 0; -1 when PCRE2 could not
** tell (a limit, or bad UTF-8): validation then stops and fails, since
** reading it as "no match" would skip a patternProperties subschema. */
static int re_test(vctx *c, const pcre2_code *re, const char *src, const char *s, size_t len, const ipath *p,
                   const char *kw)
{
    if (!charge(c))
        return -1;
    uint32_t quick, full;
    th_ecma_regex_limits(len, &quick, &full);
    int rc = th_ecma_regex_search(re, s, len, c->md, c->mctx, quick);
    if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT) {
        /* More than any honest pattern needs: the retry is paid for from
        ** the step budget in advance, so strings that each need a little
        ** more than QUICK cannot add up to more than the budget allows. */
        uint64_t afford = (uint64_t)(c->max_steps - c->steps) * RE_UNITS_PER_STEP;
        uint32_t limit = afford < full ? (uint32_t)afford : full;
        if (limit > quick) {
            c->steps += limit / RE_UNITS_PER_STEP;
            rc = th_ecma_regex_search(re, s, len, c->md, c->mctx, limit);
        }
    }
    if (rc >= 0)
        return rc;
    char why[256];
    th_ecma_regex_why(rc, why, sizeof why);
    stop(c, p, kw, "pattern \"%s\" could not be evaluated %s", src, why);
    return -1;
}

static unsigned inst_type(json_object *j)
{
    static const unsigned by_json_type[] = {
        [json_type_null] = T_NULL,  [json_type_boolean] = T_BOOL, [json_type_double] = T_NUM,
        [json_type_int] = T_INT,    [json_type_object] = T_OBJ,   [json_type_array] = T_ARR,
        [json_type_string] = T_STR,
    };
    enum json_type t = json_object_get_type(j);
    if (t == json_type_double) {
        double d = json_object_get_double(j);
        return isfinite(d) && floor(d) == d ? T_INT : T_NUM;
    }
    return by_json_type[t];
}

static const char *type_word(unsigned t)
{
    for (size_t k = 0; k < sizeof type_names / sizeof type_names[0]; k++)
        if (type_names[k].bits == t)
            return type_names[k].name;
    return "number";
}

enum { EQ_MAX_DEPTH = 128 };

/* JSON equality: 1 == 1.0, objects regardless of member order. */
static bool json_eq(json_object *a, json_object *b, int depth)
{
    if (depth > EQ_MAX_DEPTH)
        return false;
    unsigned ta = inst_type(a), tb = inst_type(b);
    if ((ta | tb) & ~(unsigned)(T_INT | T_NUM)) {
        if (ta != tb)
            return false;
    } else
        return num_of(a) == num_of(b);
    switch (ta) {
    case T_NULL:
        return true;
    case T_BOOL:
        return json_object_get_boolean(a) == json_object_get_boolean(b);
    case T_STR:
        return json_object_get_string_len(a) == json_object_get_string_len(b) &&
               !memcmp(json_object_get_string(a), json_object_get_string(b), (size_t)json_object_get_string_len(a));
    case T_ARR: {
        size_t n = json_object_array_length(a);
        if (n != json_object_array_length(b))
            return false;
        for (size_t i = 0; i < n; i++)
            if (!json_eq(json_object_array_get_idx(a, i), json_object_array_get_idx(b, i), depth + 1))
                return false;
        return true;
    }
    default: {
        if (json_object_object_length(a) != json_object_object_length(b))
            return false;
        json_object_object_foreach(a, key, va)
        {
            json_object *vb;
            if (!json_object_object_get_ex(b, key, &vb) || !json_eq(va, vb, depth + 1))
                return false;
        }
        return true;
    }
    }
}

static int cmp_key(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
** Append to B a serialisation of J that is byte-equal for two values exactly
** when json_eq() calls them equal: object members sorted by key, numbers as
** the hexadecimal text of their long double value (1 and 1.0 alike), strings
** length-prefixed so no encoding is a prefix of another. What json_eq gives
** up on (too deep, NaN) is named by its address, equal only to itself.
*/
static bool canon(th_buf *b, json_object *j, int depth)
{
    unsigned t = inst_type(j);
    if (depth > EQ_MAX_DEPTH)
        return th_buf_printf(b, "X%p;", (void *)j);
    if (t & (T_INT | T_NUM)) {
        long double v = num_of(j);
        if (isnan(v))
            return th_buf_printf(b, "X%p;", (void *)j);
        return th_buf_printf(b, "#%La;", v == 0 ? 0.0L : v); /* -0 equals 0 */
    }
    switch (t) {
    case T_NULL:
        return th_buf_append(b, "n", 1);
    case T_BOOL:
        return th_buf_append(b, json_object_get_boolean(j) ? "t" : "f", 1);
    case T_STR: {
        size_t n = (size_t)json_object_get_string_len(j);
        return th_buf_printf(b, "s%zu:", n) && th_buf_append(b, json_object_get_string(j), n);
    }
    case T_ARR: {
        bool ok = th_buf_append(b, "[", 1);
        for (size_t i = 0, n = json_object_array_length(j); ok && i < n; i++)
            ok = canon(b, json_object_array_get_idx(j, i), depth + 1);
        return ok && th_buf_append(b, "]", 1);
    }
    default: {
        size_t n = (size_t)json_object_object_length(j), k = 0;
        const char **keys = malloc((n ? n : 1) * sizeof *keys);
        if (!keys)
            return false;
        json_object_object_foreach(j, key, v)
        {
            (void)v;
            keys[k++] = key;
        }
        qsort(keys, n, sizeof *keys, cmp_key);
        bool ok = th_buf_append(b, "{", 1);
        for (size_t i = 0; ok && i < n; i++) {
            size_t kl = strlen(keys[i]);
            ok = th_buf_printf(b, "%zu:", kl) && th_buf_append(b, keys[i], kl) &&
                 canon(b, json_object_object_get(j, keys[i]), depth + 1);
        }
        free(keys);
        return ok && th_buf_append(b, "}", 1);
    }
    }
}

typedef struct {
    const char *p; /* into the canonical buffer */
    size_t off, len, i;
} canon_item;

static int cmp_canon(const void *a, const void *b)
{
    const canon_item *x = a, *y = b;
    int d = memcmp(x->p, y->p, x->len < y->len ? x->len : y->len);
    if (d)
        return d;
    if (x->len != y->len)
        return x->len < y->len ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/*
** Find two equal items of ARR; true (with their indices, the pair with the
** smallest first index) if there are. Sorting the canonical forms costs
** O(n log n) comparisons whatever the items are: no hash an attacker can
** aim at one bucket. Out of memory counts as a duplicate (fail closed).
*/
static bool find_duplicate(json_object *arr, size_t *first, size_t *second)
{
    size_t n = json_object_array_length(arr);
    if (n <= 16) {
        for (size_t i = 0; i < n; i++)
            for (size_t k = i + 1; k < n; k++)
                if (json_eq(json_object_array_get_idx(arr, i), json_object_array_get_idx(arr, k), 0)) {
                    *first = i, *second = k;
                    return true;
                }
        return false;
    }
    th_buf b = { 0 };
    canon_item *items = malloc(n * sizeof *items);
    bool ok = items != NULL;
    for (size_t i = 0; ok && i < n; i++) {
        items[i].off = b.len;
        items[i].i = i;
        ok = canon(&b, json_object_array_get_idx(arr, i), 0);
        items[i].len = b.len - items[i].off;
    }
    bool found = false;
    if (!ok) {
        *first = 0, *second = 1;
        found = true;
    } else {
        for (size_t i = 0; i < n; i++)
            items[i].p = b.data + items[i].off;
        qsort(items, n, sizeof *items, cmp_canon);
        /* Sorted by index within a run of equal forms: a run's first two
        ** entries are its earliest pair. */
        for (size_t k = 1; k < n; k++)
            if (items[k].len == items[k - 1].len && !memcmp(items[k].p, items[k - 1].p, items[k].len) &&
                (!found || items[k - 1].i < *first)) {
                *first = items[k - 1].i, *second = items[k].i;
                found = true;
            }
    }
    free(items);
    free(b.data);
    return found;
}

static bool v_node(vctx *c, const node *n, json_object *inst, const ipath *p, ann *a);

/* Failing a keyword: stop at once unless every violation is wanted. */
#define FAIL()                            \
    do {                                  \
        ok = false;                       \
        if (!c->collect || c->stopped)    \
            goto out;                     \
    } while (0)

/*
** |V| as A * 10^E, A an integer without trailing zeros: the shortest
** decimal that reads back as V, which is the number as written whenever it
** was written with at most 17 significant digits. Integers json-c keeps
** exactly (int64 or uint64) are taken as they are, without a long double,
** whose precision valgrind does not emulate.
*/
static bool decimal_of(json_object *v, uint64_t *a, int *e)
{
    *e = 0;
    if (json_object_is_type(v, json_type_int)) {
        int64_t i = json_object_get_int64(v);
        *a = i == INT64_MAX ? json_object_get_uint64(v) : i < 0 ? (uint64_t)(-(i + 1)) + 1 : (uint64_t)i;
    } else {
        double d = fabs(json_object_get_double(v));
        if (!isfinite(d))
            return false;
        if (floor(d) == d && d < 0x1p63) {
            *a = (uint64_t)d;
        } else {
            char buf[64];
            for (int prec = 14; prec <= 16; prec++) {
                snprintf(buf, sizeof buf, "%.*e", prec, d);
                if (prec == 16 || strtod(buf, NULL) == d)
                    break;
            }
            /* "d.ddde+XX"; the radix character may be the locale's, skip it. */
            uint64_t m = 0;
            int frac = 0;
            const char *p = buf;
            for (bool after = false; *p && *p != 'e'; p++)
                if (*p >= '0' && *p <= '9') {
                    m = m * 10 + (uint64_t)(*p - '0');
                    frac += after;
                } else
                    after = true;
            if (*p != 'e')
                return false;
            *a = m;
            *e = atoi(p + 1) - frac;
        }
    }
    while (*a && *a % 10 == 0) {
        *a /= 10;
        ++*e;
    }
    return true;
}

/* (X + Y) mod M for X, Y < M, without overflow. */
static uint64_t addmod(uint64_t x, uint64_t y, uint64_t m)
{
    return x >= m - y ? x - (m - y) : x + y;
}

/*
** Is V a multiple of M (> 0)? Decided exactly in decimal: with V = A*10^E
** and M = B*10^F (see decimal_of), V/M = (A/B)*10^(E-F). A has no factor
** 10, so E < F means no; otherwise B must divide A*10^(E-F). No tolerance:
** 0.0075 is a multiple of 0.0001, 0.00751 is not, 2^64-1 is odd, and
** 1e308 is no multiple of 0.123456789.
*/
static bool is_multiple(json_object *v, json_object *m)
{
    uint64_t a, b;
    int e, f;
    if (!decimal_of(v, &a, &e) || !decimal_of(m, &b, &f) || !b)
        return false;
    if (a == 0)
        return true;
    if (e < f)
        return false;
    uint64_t r = a % b;
    for (int k = e - f; k > 0 && r; k--) {
        uint64_t t = 0;
        for (int i = 0; i < 10; i++)
            t = addmod(t, r, b);
        r = t;
    }
    return r == 0;
}

static bool v_number(vctx *c, const node *n, json_object *inst, const ipath *p)
{
    bool ok = true;
    long double v = num_of(inst);
    if (n->minimum.set && !(v >= n->minimum.v)) {
        report(c, p, "minimum", "must be >= %s", n->minimum.txt);
        FAIL();
    }
    if (n->maximum.set && !(v <= n->maximum.v)) {
        report(c, p, "maximum", "must be <= %s", n->maximum.txt);
        FAIL();
    }
    if (n->xminimum.set && !(v > n->xminimum.v)) {
        report(c, p, "exclusiveMinimum", "must be > %s", n->xminimum.txt);
        FAIL();
    }
    if (n->xmaximum.set && !(v < n->xmaximum.v)) {
        report(c, p, "exclusiveMaximum", "must be < %s", n->xmaximum.txt);
        FAIL();
    }
    if (n->multiple_of.set && !is_multiple(inst, n->multiple_of.json)) {
        report(c, p, "multipleOf", "must be a multiple of %s", n->multiple_of.txt);
        FAIL();
    }
out:
    return ok;
}

/* The size checks below set *OVER when the instance is larger than a max
** bound allows: the work on it must then stop (see v_node). */
static bool v_string(vctx *c, const node *n, json_object *inst, const ipath *p, bool *over)
{
    bool ok = true;
    const char *s = json_object_get_string(inst);
    size_t len = (size_t)json_object_get_string_len(inst);
    if (n->min_length >= 0 || n->max_length >= 0) {
        long long cps = 0;
        for (size_t i = 0; i < len; i++)
            cps += ((unsigned char)s[i] & 0xC0) != 0x80;
        if (n->min_length >= 0 && cps < n->min_length) {
            report(c, p, "minLength", "must be at least %lld characters long, got %lld", n->min_length, cps);
            FAIL();
        }
        if (n->max_length >= 0 && cps > n->max_length) {
            *over = true;
            report(c, p, "maxLength", "must be at most %lld characters long, got %lld", n->max_length, cps);
            FAIL();
        }
    }
out:
    return ok;
}

static bool v_pattern(vctx *c, const node *n, json_object *inst, const ipath *p)
{
    int rc = re_test(c, n->pattern, n->pattern_src, json_object_get_string(inst),
                     (size_t)json_object_get_string_len(inst), p, "pattern");
    if (rc == 0)
        report(c, p, "pattern", "must match pattern '%s'", n->pattern_src);
    return rc == 1;
}

static bool v_array_size(vctx *c, const node *n, json_object *inst, const ipath *p, bool *over)
{
    bool ok = true;
    size_t len = json_object_array_length(inst);
    if (n->min_items >= 0 && (long long)len < n->min_items) {
        report(c, p, "minItems", "must have at least %lld items, got %zu", n->min_items, len);
        FAIL();
    }
    if (n->max_items >= 0 && (long long)len > n->max_items) {
        *over = true;
        report(c, p, "maxItems", "must have at most %lld items, got %zu", n->max_items, len);
        FAIL();
    }
out:
    return ok;
}

static bool v_array(vctx *c, const node *n, json_object *inst, const ipath *p, ann *own)
{
    bool ok = true;
    size_t len = json_object_array_length(inst);
    size_t d1 = 0, d2 = 0;
    if (n->unique && len > 1 && find_duplicate(inst, &d1, &d2)) {
        report(c, p, "uniqueItems", "must not contain duplicates (items %zu and %zu are equal)", d1, d2);
        FAIL();
    }
    for (size_t i = 0; i < len && i < n->nprefix; i++) {
        ipath cp = { p, NULL, i };
        if (!v_node(c, n->prefix[i], json_object_array_get_idx(inst, i), &cp, NULL))
            FAIL();
        ann_set(own, i);
    }
    if (n->items) {
        for (size_t i = n->nprefix; i < len; i++) {
            ipath cp = { p, NULL, i };
            if (n->items->kind == N_FALSE) {
                report(c, &cp, "items", "item not allowed: at most %zu items", n->nprefix);
                FAIL();
            } else if (!v_node(c, n->items, json_object_array_get_idx(inst, i), &cp, NULL))
                FAIL();
            ann_set(own, i);
        }
    }
    if (n->contains) {
        long long found = 0;
        bool saved = c->collect;
        c->collect = false;
        for (size_t i = 0; i < len; i++) {
            ipath cp = { p, NULL, i };
            if (v_node(c, n->contains, json_object_array_get_idx(inst, i), &cp, NULL)) {
                found++;
                ann_set(own, i);
                if (!own && n->max_contains < 0 && found >= n->min_contains)
                    break;
            }
        }
        c->collect = saved;
        if (found < n->min_contains) {
            report(c, p, n->has_min_contains ? "minContains" : "contains",
                   "must contain at least %lld item%s matching the 'contains' schema, found %lld", n->min_contains,
                   n->min_contains == 1 ? "" : "s", found);
            FAIL();
        }
        if (n->max_contains >= 0 && found > n->max_contains) {
            report(c, p, "maxContains", "must contain at most %lld item%s matching the 'contains' schema, found %lld",
                   n->max_contains, n->max_contains == 1 ? "" : "s", found);
            FAIL();
        }
    }
out:
    return ok;
}

static const node *lookup_prop(const node *n, const char *key)
{
    named_node k = { key, NULL };
    const named_node *hit = bsearch(&k, n->props, n->nprops, sizeof k, cmp_named);
    return hit ? hit->sub : NULL;
}

static bool v_object_size(vctx *c, const node *n, json_object *inst, const ipath *p, bool *over)
{
    bool ok = true;
    long long len = json_object_object_length(inst);
    if (n->min_props >= 0 && len < n->min_props) {
        report(c, p, "minProperties", "must have at least %lld properties, got %lld", n->min_props, len);
        FAIL();
    }
    if (n->max_props >= 0 && len > n->max_props) {
        *over = true;
        report(c, p, "maxProperties", "must have at most %lld properties, got %lld", n->max_props, len);
        FAIL();
    }
    for (size_t i = 0; i < n->nrequired; i++)
        if (!th_json_get(inst, n->required[i], NULL)) {
            report(c, p, "required", "missing required property '%s'", n->required[i]);
            FAIL();
        }
    for (size_t i = 0; i < n->ndep_required; i++) {
        const dep_required *d = &n->dep_required[i];
        if (!th_json_get(inst, d->name, NULL))
            continue;
        for (size_t k = 0; k < d->nneeds; k++)
            if (!th_json_get(inst, d->needs[k], NULL)) {
                report(c, p, "dependentRequired", "missing property '%s' (required when '%s' is present)", d->needs[k],
                       d->name);
                FAIL();
            }
    }
out:
    return ok;
}

static bool v_object(vctx *c, const node *n, json_object *inst, const ipath *p, ann *own)
{
    bool ok = true;
    if (n->nprops || n->npprops || n->additional || n->property_names) {
        size_t i = 0;
        json_object_object_foreach(inst, key, val)
        {
            ipath cp = { p, key, 0 };
            bool seen = false;
            const node *sub = n->nprops ? lookup_prop(n, key) : NULL;
            if (sub) {
                seen = true;
                if (!v_node(c, sub, val, &cp, NULL))
                    FAIL();
            }
            for (size_t k = 0; k < n->npprops; k++) {
                int rc = re_test(c, n->pprops[k].re, n->pprops[k].src, key, strlen(key), &cp, "patternProperties");
                if (rc < 0)
                    FAIL();
                if (rc == 1) {
                    seen = true;
                    if (!v_node(c, n->pprops[k].sub, val, &cp, NULL))
                        FAIL();
                }
            }
            if (!seen && n->additional) {
                seen = true;
                if (n->additional->kind == N_FALSE) {
                    report(c, &cp, "additionalProperties", "additional property not allowed");
                    FAIL();
                } else if (!v_node(c, n->additional, val, &cp, NULL))
                    FAIL();
            }
            if (seen)
                ann_set(own, i);
            if (n->property_names) {
                json_object *name = json_object_new_string(key);
                bool saved = c->collect;
                c->collect = false;
                bool good = name && v_node(c, n->property_names, name, &cp, NULL);
                c->collect = saved;
                json_object_put(name);
                if (!good) {
                    report(c, &cp, "propertyNames", "property name '%s' does not match the 'propertyNames' schema",
                           key);
                    FAIL();
                }
            }
            i++;
        }
    }
    for (size_t i = 0; i < n->ndep_schemas; i++)
        if (json_object_object_get_ex(inst, n->dep_schemas[i].name, NULL) &&
            !v_node(c, n->dep_schemas[i].sub, inst, p, own))
            FAIL();
out:
    return ok;
}

/* The $dynamicRef target: the outermost resource in scope that has a
** $dynamicAnchor of the name, else the static target. */
static const node *dynamic_target(const vctx *c, const node *n)
{
    const node *t = n->dyn_ref;
    if (!n->dyn_name)
        return t;
    for (const scope *s = c->scope; s; s = s->up)
        for (size_t i = 0; i < s->res->ndyn_anchors; i++)
            if (!strcmp(s->res->dyn_anchors[i].name, n->dyn_name))
                t = s->res->dyn_anchors[i].sub;
    return t;
}

static bool follow_ref(vctx *c, const node *target, json_object *inst, const ipath *p, ann *own)
{
    if (c->ref_depth >= TH_SCHEMA_MAX_REF_DEPTH) {
        c->limit_hit = true;
        if (c->collect)
            c->limit_reported = true;
        report(c, p, "$ref", "$ref followed more than %d levels deep (a recursive schema?)", TH_SCHEMA_MAX_REF_DEPTH);
        return false;
    }
    c->ref_depth++;
    bool ok = v_node(c, target, inst, p, own);
    c->ref_depth--;
    return ok;
}

/* anyOf/oneOf: how many of SUBS the instance matches, without reporting.
** Annotations of matching branches go to OWN (for oneOf only when exactly
** one matched); FIRST/SECOND get the first two matching indices. */
static size_t count_matches(vctx *c, node *const *subs, size_t nsubs, bool one, json_object *inst, const ipath *p,
                            ann *own, size_t *first, size_t *second)
{
    size_t matched = 0;
    bool saved = c->collect;
    ann keep = { 0 };
    c->collect = false;
    for (size_t i = 0; i < nsubs; i++) {
        ann tmp;
        ann *tp = own && ann_init(&tmp, own->nbits) ? &tmp : NULL;
        if (v_node(c, subs[i], inst, p, tp)) {
            if (matched == 0)
                *first = i;
            else if (matched == 1)
                *second = i;
            matched++;
            if (!one)
                ann_merge(own, tp);
            else if (matched == 1 && tp) {
                keep = tmp;
                if (tmp.w == tmp.inl)
                    keep.w = keep.inl;
                tp = NULL; /* kept */
            }
        }
        ann_free(tp);
        if ((!own && !one && matched) || (one && matched > 1 && !own) || c->stopped)
            break;
    }
    c->collect = saved;
    if (one && matched == 1)
        ann_merge(own, &keep);
    if (keep.w)
        ann_free(&keep);
    return matched;
}

static bool v_node(vctx *c, const node *n, json_object *inst, const ipath *p, ann *a)
{
    if (n->kind == N_TRUE)
        return true;
    if (n->kind == N_FALSE) {
        report(c, p, "false schema", p && p->key ? "property not allowed" : "no value is allowed here");
        return false;
    }
    if (n->kind == N_META) {
        char msg[256];
        th_schema *sub = th_schema_compile(inst, msg, sizeof msg);
        if (!sub) {
            report(c, p, "$ref", "is not a valid JSON Schema: %s", msg);
            return false;
        }
        th_schema_free(sub);
        return true;
    }
    if (!charge(c))
        return false;
    if (c->depth >= TH_SCHEMA_MAX_EVAL_DEPTH) {
        c->limit_hit = true;
        if (c->collect)
            c->limit_reported = true;
        report(c, p, "depth limit", "schema evaluation nested more than %d levels deep", TH_SCHEMA_MAX_EVAL_DEPTH);
        return false;
    }
    c->depth++;
    const scope *saved_scope = c->scope;
    scope sc;
    if (n->res && (!c->scope || c->scope->res != n->res)) {
        sc = (scope){ c->scope, n->res };
        c->scope = &sc;
    }
    bool ok = true;
    unsigned t = inst_type(inst);
    ann local;
    bool has_local = false;
    ann *own = NULL;
    size_t width = t == T_OBJ ? (size_t)json_object_object_length(inst) : t == T_ARR ? json_object_array_length(inst) : 0;
    if ((t == T_OBJ && n->uneval_props) || (t == T_ARR && n->uneval_items)) {
        if (!ann_init(&local, width)) {
            report(c, p, "unevaluatedProperties", "out of memory");
            ok = false;
            goto out;
        }
        has_local = true;
        own = &local;
    } else if (t & (T_OBJ | T_ARR))
        own = a;

    if (n->types && !(n->types & t)) {
        char want[128] = "";
        size_t k = 0;
        for (size_t i = 0; i < sizeof type_names / sizeof type_names[0]; i++) {
            unsigned bits = type_names[i].bits;
            if ((n->types & bits) != bits || (bits == T_INT && (n->types & T_NUM)))
                continue;
            k++;
            snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s", k > 1 ? " or " : "", type_names[i].name);
        }
        report(c, p, "type", "must be %s, got %s", want, type_word(t));
        ok = false;
        goto out; /* nothing else about a value of the wrong type is worth the work */
    }
    if (n->has_const && !json_eq(inst, n->konst, 0)) {
        report(c, p, "const", "must be equal to %s", n->konst_txt);
        FAIL();
    }
    if (n->enumv) {
        bool found = false;
        for (size_t i = 0; i < json_object_array_length(n->enumv) && !found; i++)
            found = json_eq(inst, json_object_array_get_idx(n->enumv, i), 0);
        if (!found) {
            report(c, p, "enum", "must be one of %s", n->enum_txt);
            FAIL();
        }
    }
    if ((t & (T_INT | T_NUM)) && !v_number(c, n, inst, p))
        FAIL();
    bool over = false;
    if (t == T_STR && !v_string(c, n, inst, p, &over))
        FAIL();
    if (t == T_ARR && !v_array_size(c, n, inst, p, &over))
        FAIL();
    if (t == T_OBJ && !v_object_size(c, n, inst, p, &over))
        FAIL();
    /* Cheap checks come first. An instance over a max bound (maxLength,
    ** maxItems, maxProperties) is invalid here whatever else holds, and the
    ** work on it grows with its size: patterns, uniqueItems, descent into
    ** items and properties and the in-place applicators are skipped (a 4 MB
    ** array under maxItems: 10 is not walked), and the messages name the
    ** bound. Other failures (minLength, required, ...) cost nothing to
    ** look past, so the rest is still checked and reported. */
    if (over)
        goto out;
    if (t == T_STR && n->pattern && !v_pattern(c, n, inst, p))
        FAIL();
    if (t == T_ARR && !v_array(c, n, inst, p, own))
        FAIL();
    if (t == T_OBJ && !v_object(c, n, inst, p, own))
        FAIL();
    if (n->ref && !follow_ref(c, n->ref, inst, p, own))
        FAIL();
    if (n->dyn_ref && !follow_ref(c, dynamic_target(c, n), inst, p, own))
        FAIL();
    for (size_t i = 0; i < n->nall_of; i++)
        if (!v_node(c, n->all_of[i], inst, p, own))
            FAIL();
    size_t first = 0, second = 0;
    if (n->nany_of && !count_matches(c, n->any_of, n->nany_of, false, inst, p, own, &first, &second)) {
        report(c, p, "anyOf", "must match at least one of the %zu schemas in 'anyOf', matches none", n->nany_of);
        FAIL();
    }
    if (n->none_of) {
        size_t m = count_matches(c, n->one_of, n->none_of, true, inst, p, own, &first, &second);
        if (m == 0) {
            report(c, p, "oneOf", "must match exactly one of the %zu schemas in 'oneOf', matches none", n->none_of);
            FAIL();
        } else if (m > 1) {
            report(c, p, "oneOf", "must match exactly one of the schemas in 'oneOf', matches schemas %zu and %zu",
                   first, second);
            FAIL();
        }
    }
    if (n->not_) {
        bool saved = c->collect;
        c->collect = false;
        bool matched = v_node(c, n->not_, inst, p, NULL);
        c->collect = saved;
        if (matched) {
            report(c, p, "not", "must not match the schema in 'not'");
            FAIL();
        }
    }
    if (n->if_ && (n->then_ || n->else_ || own)) {
        bool saved = c->collect;
        ann tmp;
        ann *tp = own && ann_init(&tmp, own->nbits) ? &tmp : NULL;
        c->collect = false;
        bool cond = v_node(c, n->if_, inst, p, tp);
        c->collect = saved;
        if (cond)
            ann_merge(own, tp);
        ann_free(tp);
        const node *branch = cond ? n->then_ : n->else_;
        if (branch && !v_node(c, branch, inst, p, own))
            FAIL();
    }
    if (t == T_OBJ && n->uneval_props) {
        size_t i = 0;
        json_object_object_foreach(inst, key, val)
        {
            if (!ann_get(own, i)) {
                ipath cp = { p, key, 0 };
                if (n->uneval_props->kind == N_FALSE) {
                    report(c, &cp, "unevaluatedProperties", "unevaluated property not allowed");
                    FAIL();
                } else if (!v_node(c, n->uneval_props, val, &cp, NULL))
                    FAIL();
                ann_set(own, i);
            }
            i++;
        }
    }
    if (t == T_ARR && n->uneval_items) {
        for (size_t i = 0; i < width; i++) {
            if (ann_get(own, i))
                continue;
            ipath cp = { p, NULL, i };
            if (n->uneval_items->kind == N_FALSE) {
                report(c, &cp, "unevaluatedItems", "unevaluated item not allowed");
                FAIL();
            } else if (!v_node(c, n->uneval_items, json_object_array_get_idx(inst, i), &cp, NULL))
                FAIL();
            ann_set(own, i);
        }
    }
out:
    if (has_local) {
        if (ok)
            ann_merge(a, &local);
        ann_free(&local);
    }
    c->scope = saved_scope;
    c->depth--;
    return ok;
}

/* How many values INSTANCE holds (itself included), for the default budget.
** Values deeper than the evaluation can reach are not counted. */
static size_t count_values(json_object *j, int depth)
{
    size_t n = 1;
    if (depth > TH_SCHEMA_MAX_EVAL_DEPTH)
        return n;
    if (json_object_is_type(j, json_type_array)) {
        for (size_t i = 0, len = json_object_array_length(j); i < len; i++)
            n += count_values(json_object_array_get_idx(j, i), depth + 1);
    } else if (json_object_is_type(j, json_type_object)) {
        json_object_object_foreach(j, key, v)
        {
            (void)key;
            n += count_values(v, depth + 1);
        }
    }
    return n;
}

size_t th_schema_validate_ex(const th_schema *schema, json_object *instance, const th_validate_opts *opts,
                             char **messages)
{
    if (messages)
        *messages = NULL;
    /* Within the default budget, a plain instance of a plain schema needs
     * no walk; anything else (a smaller budget included) takes it. */
    if (schema->nquick && !(opts && opts->max_steps) && quick_valid(schema, instance))
        return 0;
    th_buf out = { 0 };
    vctx c = { .collect = true, .out = messages ? &out : NULL, .opts = opts, .next_poll = 1 };
    c.max_steps = opts && opts->max_steps ? opts->max_steps : TH_SCHEMA_BASE_STEPS;
    if (!opts || !opts->max_steps) {
        size_t values = count_values(instance, 0);
        c.max_steps += values < SIZE_MAX / TH_SCHEMA_STEPS_PER_VALUE / 2 ? values * TH_SCHEMA_STEPS_PER_VALUE
                                                                          : SIZE_MAX / 2;
    }
    if (schema->nregexes &&
        (!(c.md = pcre2_match_data_create(1, NULL)) || !(c.mctx = pcre2_match_context_create(NULL)))) {
        pcre2_match_data_free(c.md);
        if (messages)
            *messages = strdup("(root): out of memory validating (limit)");
        return 1;
    }
    v_node(&c, schema->root, instance, NULL, NULL);
    if (c.limit_hit && !c.limit_reported && !c.stopped)
        report(&c, NULL, "depth limit",
               "validation stopped: schema evaluation nested more than %d levels deep or $ref followed more than %d "
               "levels",
               TH_SCHEMA_MAX_EVAL_DEPTH, TH_SCHEMA_MAX_REF_DEPTH);
    if (c.count > TH_SCHEMA_MAX_MESSAGES && messages)
        th_buf_printf(&out, "\n... and %zu more", c.count - TH_SCHEMA_MAX_MESSAGES);
    if (c.stopped) {
        /* The reason validation stopped goes first: it is why the rest is
        ** incomplete, and the line cap must not hide it. */
        c.count++;
        if (messages) {
            th_buf first = { 0 };
            const char *why = c.stop_msg ? c.stop_msg : "(root): validation stopped (out of memory)";
            th_buf_append(&first, why, strlen(why));
            if (out.len)
                th_buf_printf(&first, "\n%s", out.data);
            free(out.data);
            out = first;
        }
        free(c.stop_msg);
    }
    pcre2_match_context_free(c.mctx);
    pcre2_match_data_free(c.md);
    if (messages && c.count)
        *messages = out.data;
    else
        free(out.data);
    return c.count;
}

size_t th_schema_validate(const th_schema *schema, json_object *instance, char **messages)
{
    return th_schema_validate_ex(schema, instance, NULL, messages);
}
