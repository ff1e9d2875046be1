/* SPDX-License-Identifier: MIT */
/*
** plugin/registry.c: the tool registry. Validation follows the registry
** specification step by step, with its messages word for word; accepted
** tools are deep-copied, indexed by an open-addressing hash table, and kept
** in registration order for listing.
*/
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "plugin/policy.h"
#include "plugin/qualname.h"
#include "plugin/registry.h"
#include "plugin/resources.h"
#include "plugin/prompts.h"
#include "plugin/settings.h"

/* One memo: text derived from the registry's tools, under a key. */
typedef struct memo {
    struct memo *next;
    char *key, *text;
} memo;

struct th_registry {
    atomic_int refs;
    unsigned long long version; /* see th_registry_version */
    pthread_mutex_t memo_lock;  /* memos */
    memo *memos;
    bool started;
    bool shutting_down;
    th_entry **entries; /* registration order */
    size_t count, cap;
    size_t *slots;      /* hash table of entry index + 1; 0 = empty */
    size_t nslots;      /* power of two, kept at most half full */
    void **handles;     /* dlopen handles, closed last */
    size_t nhandles;
    th_naming *naming;  /* toolboxes, or NULL: names as registered */
    th_policy *policy;  /* exposure, or NULL: everything is exposed */
    /* The exposed entries' indexes, built at the first listing of a
     * version (under memo_lock) so that paging a filtered list is direct. */
    size_t *shown, nshown;
    unsigned long long shown_version;
    bool last_contextual; /* see th_registry_refusal_contextual */
    bool private_copy;  /* see th_registry_set_private */
    /* Hot reload (plugin/reload.c): entries lent by an older registry, the
     * lenders (one reference each) and what to release with the registry. */
    bool *borrowed;     /* per entry index, as entries; NULL until grown */
    th_registry **lenders;
    size_t nlenders;
    struct release { void (*fn)(void *); void *arg; } *releases;
    size_t nreleases;
    th_resources *resources; /* resources and templates (plugin/resources.c) */
    th_prompts *prompts;     /* prompts and completions (plugin/prompts.c) */
};

/* Minimum struct_size: everything up to and including the ABI 1 fields. */
#define TH_TOOL_MIN_SIZE (offsetof(th_tool, function) + sizeof(const th_function *))

th_rc th_tool_normalize(const th_tool *tool, th_tool *out, th_err *err)
{
    if (!tool)
        return th_err_set(err, TH_ERR_TYPE, "Tool must implement MCPTool protocol (descriptor is NULL)");
    if (tool->abi_version != TH_ABI_VERSION)
        return th_err_set(err, TH_ERR_ABI,
                          "incompatible tool descriptor: ABI version mismatch. "
                          "Host ABI version is %d, plugin ABI version is %u.",
                          TH_ABI_VERSION, (unsigned)tool->abi_version);
    if (tool->struct_size < TH_TOOL_MIN_SIZE || tool->struct_size > sizeof(th_tool))
        return th_err_set(err, TH_ERR_ABI,
                          "incompatible tool descriptor: struct size mismatch. "
                          "Host th_tool is %zu bytes, plugin th_tool is %u bytes%s.",
                          sizeof(th_tool), (unsigned)tool->struct_size,
                          tool->struct_size > sizeof(th_tool) ? " (built against a newer toolhost)" : "");
    memset(out, 0, sizeof *out);
    memcpy(out, tool, tool->struct_size);
    return TH_OK;
}

/* FNV-1a: short names, few tools; good enough and branch-free. */
static size_t hash_name(const char *s)
{
    size_t h = (size_t)14695981039346656037ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= (size_t)1099511628211ULL;
    }
    return h;
}

static size_t *find_slot(size_t *slots, size_t nslots, th_entry *const *entries, const char *name)
{
    size_t mask = nslots - 1;
    for (size_t i = hash_name(name) & mask;; i = (i + 1) & mask) {
        if (slots[i] == 0 || strcmp(entries[slots[i] - 1]->name, name) == 0)
            return &slots[i];
    }
}

/* Versions are handed out process-wide, so that a registry built by a reload
 * never has the version of the one it replaces. */
static atomic_ullong last_version;

static void memos_free(memo *m)
{
    while (m) {
        memo *next = m->next;
        free(m->key);
        free(m->text);
        free(m);
        m = next;
    }
}

/* The tools changed: a new version, and what was derived from them goes. */
static void changed(th_registry *reg)
{
    reg->version = atomic_fetch_add(&last_version, 1) + 1;
    pthread_mutex_lock(&reg->memo_lock);
    memo *m = reg->memos;
    reg->memos = NULL;
    pthread_mutex_unlock(&reg->memo_lock);
    memos_free(m);
}

th_registry *th_registry_new(void)
{
    th_registry *reg = calloc(1, sizeof *reg);
    if (!reg)
        return NULL;
    atomic_init(&reg->refs, 1);
    pthread_mutex_init(&reg->memo_lock, NULL);
    changed(reg);
    reg->nslots = 16;
    reg->slots = calloc(reg->nslots, sizeof *reg->slots);
    reg->resources = th_resources_new();
    reg->prompts = th_prompts_new();
    if (!reg->slots || !reg->resources || !reg->prompts) {
        free(reg->slots);
        th_resources_free(reg->resources);
        th_prompts_free(reg->prompts);
        free(reg);
        return NULL;
    }
    return reg;
}

th_registry *th_registry_ref(th_registry *reg)
{
    atomic_fetch_add(&reg->refs, 1);
    return reg;
}

static void entry_free(th_entry *e)
{
    if (!e)
        return;
    if (e->destroy)
        e->destroy(e->user_data);
    free(e->name);
    free(e->title);
    free(e->description);
    json_object_put(e->input_schema);
    json_object_put(e->output_schema);
    json_object_put(e->annotations);
    json_object_put(e->icons);
    th_schema_free(atomic_load(&e->validator));
    th_schema_free(e->output_validator);
    th_typed_free(e->typed);
    free((char *)e->origin);
    free(e->original_name);
    free(e->toolbox);
    free(e->plugin);
    free(e);
}

void th_registry_unref(th_registry *reg)
{
    if (!reg || atomic_fetch_sub(&reg->refs, 1) != 1)
        return;
    /* Tools first: their destroy callbacks live in the plugins' code.
     * Borrowed ones belong to their lender, released after. */
    for (size_t i = 0; i < reg->count; i++)
        if (!reg->borrowed || !reg->borrowed[i])
            entry_free(reg->entries[i]);
    th_resources_free(reg->resources);
    th_prompts_free(reg->prompts);
    for (size_t i = 0; i < reg->nreleases; i++)
        reg->releases[i].fn(reg->releases[i].arg);
    for (size_t i = 0; i < reg->nhandles; i++)
        dlclose(reg->handles[i]);
    for (size_t i = 0; i < reg->nlenders; i++)
        th_registry_unref(reg->lenders[i]);
    free(reg->lenders);
    free(reg->releases);
    free(reg->borrowed);
    free(reg->handles);
    free(reg->entries);
    free(reg->slots);
    memos_free(reg->memos);
    pthread_mutex_destroy(&reg->memo_lock);
    th_naming_unref(reg->naming);
    th_policy_unref(reg->policy);
    free(reg->shown);
    free(reg);
}

static bool name_char_ok(char c, bool first)
{
    if (c >= 'a' && c <= 'z')
        return true;
    return !first && ((c >= '0' && c <= '9') || c == '_');
}

/*
** Parse JSON text strictly (RFC 8259: no trailing commas, leading zeros or
** invalid UTF-8, which json-c accepts by default) into *OUT, a new reference
** (NULL for the JSON literal null). On failure write a message naming FIELD.
*/
static th_rc parse_json(const char *text, const char *field, json_object **out, th_err *err)
{
    *out = NULL;
    json_tokener *tok = json_tokener_new();
    if (!tok)
        return th_err_set(err, TH_ERR_NOMEM, "out of memory parsing %s", field);
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    /* -1: up to the terminating NUL, which also ends a top-level literal or
     * number (with the bare length json-c waits for more input). */
    json_object *obj = json_tokener_parse_ex(tok, text, -1);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    th_rc rc = TH_OK;
    if (jerr == json_tokener_continue)
        jerr = json_tokener_error_parse_eof;
    if (jerr != json_tokener_success)
        rc = th_err_set(err, TH_ERR_VALUE, "Tool %s is not valid JSON: %s at offset %zu", field,
                        json_tokener_error_desc(jerr), end);
    else if (end != strlen(text))
        rc = th_err_set(err, TH_ERR_VALUE, "Tool %s is not valid JSON: trailing characters at offset %zu",
                        field, end);
    /* json-c's UTF-8 check lets overlong forms, surrogates and code points
     * past U+10FFFF through; tools/list and validation messages would
     * carry them to the client. */
    else if (!th_utf8_valid(text, end))
        rc = th_err_set(err, TH_ERR_VALUE, "Tool %s is not valid JSON: invalid UTF-8", field);
    json_tokener_free(tok);
    if (rc != TH_OK)
        json_object_put(obj);
    else
        *out = obj;
    return rc;
}

static const char *json_type_word(json_object *o)
{
    return o ? json_type_to_name(json_object_get_type(o)) : "null";
}

/*
** Everything check_tool derives from a descriptor. Owned by the caller until
** moved into an entry; free with checked_free.
*/
typedef struct checked {
    json_object *input_schema, *output_schema, *annotations, *icons;
    th_schema *output_validator;
    th_typed *typed;
    char *exposed, *toolbox, *plugin; /* th_naming_expose */
} checked;

static void checked_free(checked *c)
{
    json_object_put(c->input_schema);
    json_object_put(c->output_schema);
    json_object_put(c->annotations);
    json_object_put(c->icons);
    th_schema_free(c->output_validator);
    th_typed_free(c->typed);
    free(c->exposed);
    free(c->toolbox);
    free(c->plugin);
    memset(c, 0, sizeof *c);
}

/*
** The specification's first step: a registry that serves (or is shutting
** down) refuses every descriptor, before anything in it is read.
*/
static th_rc check_state(const th_registry *reg, th_err *err)
{
    if (reg->shutting_down)
        return th_err_set(err, TH_ERR_RUNTIME, "Server is shutting down, registration not allowed");
    if (reg->started)
        return th_err_set(err, TH_ERR_RUNTIME, "Cannot register tools after server has started");
    return TH_OK;
}

/* The members MCP defines for ToolAnnotations, and the JSON type of each. */
static const struct {
    const char *name;
    json_type type;
    const char *word; /* the type in a refusal */
} annotation_members[] = {
    {"title", json_type_string, "string"},
    {"readOnlyHint", json_type_boolean, "bool (true or false)"},
    {"destructiveHint", json_type_boolean, "bool (true or false)"},
    {"idempotentHint", json_type_boolean, "bool (true or false)"},
    {"openWorldHint", json_type_boolean, "bool (true or false)"},
};

/* Rules 6.12 and 6.13: only known members, each of its type. Clients act
 * on these hints (a read-only policy trusts readOnlyHint), so a misspelt or
 * mistyped one is refused rather than silently meaning "not said". */
static th_rc check_annotations(json_object *annotations, th_err *err)
{
    json_object_object_foreach(annotations, key, val) {
        size_t i = 0, n = sizeof annotation_members / sizeof *annotation_members;
        while (i < n && strcmp(annotation_members[i].name, key) != 0)
            i++;
        if (i == n)
            return th_err_set(err, TH_ERR_VALUE,
                              "Tool annotations member '%.64s' is unknown (known: title, readOnlyHint, "
                              "destructiveHint, idempotentHint, openWorldHint)",
                              key);
        if (!json_object_is_type(val, annotation_members[i].type))
            return th_err_set(err, TH_ERR_VALUE, "Tool annotations %s must be %s, got %s", key,
                              annotation_members[i].word, json_type_word(val));
    }
    return TH_OK;
}

/* An optional string member of an icon; false when present but not a string. */
static bool icon_string(json_object *icon, const char *key, const char **out)
{
    json_object *v;
    *out = NULL;
    if (!json_object_object_get_ex(icon, key, &v))
        return true;
    *out = json_object_get_string(v);
    return json_object_is_type(v, json_type_string);
}

/* Rule 6.14: MCP's Icon shape, so that a client never gets one it cannot
 * draw: a string src, mimeType a string, theme light or dark, sizes strings. */
static th_rc check_icons(json_object *icons, th_err *err)
{
    if (!json_object_is_type(icons, json_type_array))
        return th_err_set(err, TH_ERR_VALUE, "Tool icons must be list (a JSON array), got %s", json_type_word(icons));
    for (size_t i = 0; i < json_object_array_length(icons); i++) {
        json_object *ic = json_object_array_get_idx(icons, i), *sizes = NULL;
        const char *src, *mime, *theme;
        if (!json_object_is_type(ic, json_type_object) || !icon_string(ic, "src", &src) || !src || !*src)
            return th_err_set(err, TH_ERR_VALUE, "Tool icons[%zu] must be an object with a string \"src\"", i);
        if (!icon_string(ic, "mimeType", &mime))
            return th_err_set(err, TH_ERR_VALUE, "Tool icons[%zu].mimeType must be a string", i);
        if (!icon_string(ic, "theme", &theme) || (theme && strcmp(theme, "light") != 0 && strcmp(theme, "dark") != 0))
            return th_err_set(err, TH_ERR_VALUE, "Tool icons[%zu].theme must be \"light\" or \"dark\"", i);
        bool ok = !json_object_object_get_ex(ic, "sizes", &sizes) || json_object_is_type(sizes, json_type_array);
        for (size_t k = 0; ok && sizes && k < json_object_array_length(sizes); k++)
            ok = json_object_is_type(json_object_array_get_idx(sizes, k), json_type_string);
        if (!ok)
            return th_err_set(err, TH_ERR_VALUE, "Tool icons[%zu].sizes must be an array of strings", i);
    }
    return TH_OK;
}

/*
** The registry rules after the state, in the specification's order: required
** attributes, name, duplicate, description, input schema, execute. T has been
** normalised. ORIGIN (may be NULL) places it in a toolbox. On success fills
** OUT (which the caller owns).
*/
static th_rc check_tool(const th_registry *reg, const th_tool *t, const char *origin, checked *out, th_err *err,
                        bool *contextual)
{
    th_rc rc;
    memset(out, 0, sizeof *out);

    if (!t->name || !t->description)
        return th_err_set(err, TH_ERR_ATTRIBUTE,
                          "Tool missing required attribute: %s (Tool must have 'name' and 'description' attributes)",
                          !t->name ? "name" : "description");
    if (!t->input_schema && !t->function)
        return th_err_set(err, TH_ERR_ATTRIBUTE,
                          "Tool missing required attribute: input_schema (Tool must have 'input_schema' and 'execute' attributes)");

    size_t name_bytes = strlen(t->name);
    if (!th_utf8_valid(t->name, name_bytes))
        return th_err_set(err, TH_ERR_VALUE, "Tool name must be string, got bytes that are not UTF-8");
    /* Pattern before length, as doc/registry-rules.md, 4, orders them; only
     * the empty name, which the pattern would also refuse, gets the length
     * message, with rule 4.2's wording for it. */
    if (name_bytes == 0)
        return th_err_set(err, TH_ERR_VALUE,
                          "Tool name length must be 1-50 chars, got 0 (Tool name cannot be empty)");
    for (size_t i = 0; i < name_bytes; i++)
        if (!name_char_ok(t->name[i], i == 0))
            return th_err_set(err, TH_ERR_VALUE,
                              "Tool name '%s' invalid (must be lowercase, alphanumeric, underscores)", t->name);
    if (name_bytes > TH_NAME_MAX) /* all ASCII now: bytes are characters */
        return th_err_set(err, TH_ERR_VALUE, "Tool name length must be 1-50 chars, got %zu", name_bytes);

    /* The name clients see (qualified, in a toolbox) is the one that must
     * be unique, and the one a too-long refusal is about. */
    rc = th_naming_expose(reg->naming, origin, t->name, &out->toolbox, &out->plugin, &out->exposed, err);
    if (rc != TH_OK) {
        *contextual = true;
        return rc;
    }

    /* Naming the first registrant tells the author which of two plugins
     * to rename; tools added by the host itself have no origin. Across
     * toolboxes both are named, with their toolboxes (rule 4.6). */
    const th_entry *first = th_registry_get(reg, out->exposed);
    if (first && first->origin && first->origin[0] && first->toolbox && out->toolbox && origin &&
        strcmp(first->toolbox, out->toolbox) != 0)
        rc = th_err_set(err, TH_ERR_VALUE,
                        "Tool '%s' already registered (first by %s in toolbox '%s'; again by %s in toolbox '%s')",
                        out->exposed, first->origin, first->toolbox, origin, out->toolbox);
    else if (first && first->origin && first->origin[0])
        rc = th_err_set(err, TH_ERR_VALUE, "Tool '%s' already registered (first by %s)", out->exposed,
                        first->origin);
    else if (first)
        rc = th_err_set(err, TH_ERR_VALUE, "Tool '%s' already registered", out->exposed);
    if (first) {
        *contextual = true;
        goto fail;
    }

    size_t dlen = 0;
    if (!th_utf8_valid(t->description, strlen(t->description)))
        rc = th_err_set(err, TH_ERR_VALUE, "Tool description must be string (valid UTF-8)");
    else if ((dlen = th_utf8_length(t->description)) < TH_DESCRIPTION_MIN)
        rc = th_err_set(err, TH_ERR_VALUE, "Tool description too short (min 10 chars), got %zu", dlen);
    else if (dlen > TH_DESCRIPTION_MAX)
        rc = th_err_set(err, TH_ERR_VALUE, "Tool description too long (max 500 chars), got %zu", dlen);
    else if (t->title && !th_utf8_valid(t->title, strlen(t->title)))
        rc = th_err_set(err, TH_ERR_VALUE, "Tool title must be string (valid UTF-8)");
    else if ((t->task_support & ~(uint32_t)TH_TASK_AFTER_INPUT) > TH_TASK_REQUIRED ||
             t->task_support == TH_TASK_AFTER_INPUT)
        rc = th_err_set(err, TH_ERR_VALUE,
                        "Tool task_support must be TH_TASK_FORBIDDEN, TH_TASK_OPTIONAL or TH_TASK_REQUIRED, the "
                        "last two optionally with TH_TASK_AFTER_INPUT, got %#x",
                        (unsigned)t->task_support);
    if (rc != TH_OK)
        goto fail;

    if (t->function) {
        if (t->input_schema)
            rc = th_err_set(err, TH_ERR_VALUE, "Tool input_schema must be NULL for a typed function (it is generated)");
        else if (t->handler)
            rc = th_err_set(err, TH_ERR_VALUE,
                            "Tool must have exactly one execute method: 'handler' or 'function', not both");
        else if (t->output_schema)
            rc = th_err_set(err, TH_ERR_VALUE,
                            "Tool output_schema must be NULL for a typed function (it is generated)");
        else
            rc = th_typed_prepare(t->function, &out->typed, &out->input_schema, &out->output_schema, err);
        if (rc != TH_OK)
            goto fail;
        th_typed_set_user_data(out->typed, t->user_data); /* TH_FN_WANTS_USER_DATA */
    } else {
        rc = parse_json(t->input_schema, "input_schema", &out->input_schema, err);
        if (rc != TH_OK)
            goto fail;
        if (!json_object_is_type(out->input_schema, json_type_object)) {
            rc = th_err_set(err, TH_ERR_VALUE, "Tool input_schema must be dict (a JSON object), got %s",
                            json_type_word(out->input_schema));
            goto fail;
        }
        json_object *type = NULL;
        if (!json_object_object_get_ex(out->input_schema, "type", &type) ||
            !json_object_is_type(type, json_type_string) ||
            strcmp(json_object_get_string(type), "object") != 0) {
            char shown[64] = ""; /* cut to whole characters: messages stay UTF-8 */
            if (type)
                snprintf(shown, sizeof shown, "%s", json_object_to_json_string_ext(type, JSON_C_TO_STRING_PLAIN));
            th_utf8_clip(shown);
            rc = th_err_set(err, TH_ERR_VALUE, "Tool input_schema must have type='object', got %s%s",
                            type ? "type=" : "no type", shown);
            goto fail;
        }
        if (!json_object_object_get_ex(out->input_schema, "properties", NULL)) {
            rc = th_err_set(err, TH_ERR_VALUE, "Tool input_schema must have 'properties' field");
            goto fail;
        }
        if (!t->handler) {
            rc = th_err_set(err, TH_ERR_VALUE, "Tool must have callable 'execute' method");
            goto fail;
        }
        if (t->output_schema) {
            rc = parse_json(t->output_schema, "output_schema", &out->output_schema, err);
            if (rc != TH_OK)
                goto fail;
            if (!json_object_is_type(out->output_schema, json_type_object)) {
                rc = th_err_set(err, TH_ERR_VALUE, "Tool output_schema must be dict (a JSON object), got %s",
                                json_type_word(out->output_schema));
                goto fail;
            }
        }
    }

    /* Compiled here only to refuse what does not compile; the form that
     * validates is built on the first call (th_entry_validator). */
    char msg[512];
    th_schema *compiled = th_schema_compile(out->input_schema, msg, sizeof msg);
    if (!compiled) {
        rc = th_err_set(err, TH_ERR_VALUE, "Tool input_schema is not a valid JSON Schema: %s", msg);
        goto fail;
    }
    th_schema_free(compiled);
    if (out->output_schema) {
        out->output_validator = th_schema_compile(out->output_schema, msg, sizeof msg);
        if (!out->output_validator) {
            rc = th_err_set(err, TH_ERR_VALUE, "Tool output_schema is not a valid JSON Schema: %s", msg);
            goto fail;
        }
    }

    if (t->annotations) {
        rc = parse_json(t->annotations, "annotations", &out->annotations, err);
        if (rc != TH_OK)
            goto fail;
        if (!json_object_is_type(out->annotations, json_type_object)) {
            rc = th_err_set(err, TH_ERR_VALUE, "Tool annotations must be dict (a JSON object), got %s",
                            json_type_word(out->annotations));
            goto fail;
        }
        if ((rc = check_annotations(out->annotations, err)) != TH_OK)
            goto fail;
    }
    if (t->icons && ((rc = parse_json(t->icons, "icons", &out->icons, err)) != TH_OK ||
                     (rc = check_icons(out->icons, err)) != TH_OK))
        goto fail;
    th_err_clear(err);
    return TH_OK;

fail:
    checked_free(out);
    return rc;
}

static bool grow_table(th_registry *reg)
{
    size_t n = reg->nslots * 2;
    size_t *slots = calloc(n, sizeof *slots);
    if (!slots)
        return false;
    for (size_t i = 0; i < reg->count; i++)
        *find_slot(slots, n, reg->entries, reg->entries[i]->name) = i + 1;
    free(reg->slots);
    reg->slots = slots;
    reg->nslots = n;
    return true;
}

static char *dup_or_null(const char *s, bool *oom)
{
    if (!s)
        return NULL;
    char *d = strdup(s);
    if (!d)
        *oom = true;
    return d;
}

/* Room for one more entry (and its borrowed flag). */
static bool reserve_entry(th_registry *reg)
{
    if (reg->count < reg->cap)
        return true;
    size_t cap = reg->cap ? reg->cap * 2 : 8;
    bool *b = realloc(reg->borrowed, cap * sizeof *b);
    if (!b)
        return false;
    reg->borrowed = b;
    th_entry **p = realloc(reg->entries, cap * sizeof *p);
    if (!p)
        return false;
    reg->entries = p;
    reg->cap = cap;
    return true;
}

th_rc th_registry_add(th_registry *reg, const th_tool *tool, const char *origin, th_err *err)
{
    th_tool t;
    checked c;
    th_rc rc = check_state(reg, err);
    if (rc == TH_OK)
        rc = th_tool_normalize(tool, &t, err);
    if (rc != TH_OK)
        return rc;
    reg->last_contextual = false;
    rc = check_tool(reg, &t, origin, &c, err, &reg->last_contextual);
    if (rc != TH_OK)
        return rc;

    /* Reserve everything before touching the registry, so failure changes
     * nothing. */
    if ((reg->count + 1) * 2 > reg->nslots && !grow_table(reg))
        goto nomem;
    if (!reserve_entry(reg))
        goto nomem;
    th_entry *e = calloc(1, sizeof *e);
    if (!e)
        goto nomem;
    bool oom = false;
    e->qualified = strcmp(c.exposed, t.name) != 0;
    e->name = c.exposed;
    e->toolbox = c.toolbox;
    e->plugin = c.plugin;
    c.exposed = c.toolbox = c.plugin = NULL;
    e->original_name = dup_or_null(t.name, &oom);
    e->title = dup_or_null(t.title, &oom);
    if (e->qualified) {
        /* As doc/registry-rules.md, 7, shows it: "[toolbox/server] description". */
        size_t len = strlen(e->toolbox) + strlen(e->plugin) + strlen(t.description) + 5;
        if ((e->description = malloc(len)))
            snprintf(e->description, len, "[%s/%s] %s", e->toolbox, e->plugin, t.description);
        else
            oom = true;
    } else {
        e->description = dup_or_null(t.description, &oom);
    }
    e->origin = dup_or_null(origin ? origin : "", &oom);
    if (oom) {
        entry_free(e);
        goto nomem;
    }
    e->input_schema = c.input_schema;
    e->output_schema = c.output_schema;
    e->annotations = c.annotations;
    e->icons = c.icons;
    e->output_validator = c.output_validator;
    e->typed = c.typed;
    e->handler = t.handler;
    e->user_data = t.user_data;
    e->destroy = t.destroy;
    e->timeout_ms = t.timeout_ms;
    e->task_support = t.task_support;

    reg->entries[reg->count] = e;
    reg->borrowed[reg->count] = false;
    *find_slot(reg->slots, reg->nslots, reg->entries, e->name) = reg->count + 1;
    reg->count++;
    changed(reg);
    th_log(TH_LOG_INFO, "tool_registered tool_name=%s total_tools=%zu%s%s", e->name, reg->count,
           *e->origin ? " plugin=" : "", e->origin);
    if (!reg->private_copy && th_registry_placeholder(t.description))
        th_log(TH_LOG_WARNING, "plugin %s: tool '%s' still has the placeholder description toolhost new-plugin "
               "wrote; say what it does and when to use it, as the model reads it to choose",
               *e->origin ? e->origin : "(host)", e->name);
    return TH_OK;

nomem:
    checked_free(&c);
    return th_err_set(err, TH_ERR_NOMEM, "out of memory registering tool '%s'", t.name);
}

bool th_registry_placeholder(const char *description)
{
    size_t len = strlen(description), head = strlen(TH_PLACEHOLDER_HEAD), tail = strlen(TH_PLACEHOLDER_TAIL);
    return len > head + tail && strncmp(description, TH_PLACEHOLDER_HEAD, head) == 0 &&
           strcmp(description + len - tail, TH_PLACEHOLDER_TAIL) == 0;
}

void th_registry_set_private(th_registry *reg)
{
    reg->private_copy = true;
}

void th_registry_truncate(th_registry *reg, size_t count)
{
    if (reg->started || count >= reg->count)
        return;
    while (reg->count > count)
        entry_free(reg->entries[--reg->count]);
    changed(reg);
    /* Open addressing cannot simply blank a slot (it would cut probe chains
     * of later names), so the table is rebuilt; it never shrinks, so no
     * allocation can fail here. */
    memset(reg->slots, 0, reg->nslots * sizeof *reg->slots);
    for (size_t i = 0; i < reg->count; i++)
        *find_slot(reg->slots, reg->nslots, reg->entries, reg->entries[i]->name) = i + 1;
}

void th_registry_remove_if(th_registry *reg, bool (*drop)(const th_entry *e, void *arg), void *arg)
{
    if (reg->started)
        return;
    size_t kept = 0;
    for (size_t i = 0; i < reg->count; i++) {
        if (!drop(reg->entries[i], arg)) {
            reg->borrowed[kept] = reg->borrowed[i];
            reg->entries[kept++] = reg->entries[i];
        } else if (!reg->borrowed[i]) {
            entry_free(reg->entries[i]);
        }
    }
    if (kept == reg->count)
        return;
    reg->count = kept;
    changed(reg);
    /* As th_registry_truncate: the table is rebuilt, never shrunk. */
    memset(reg->slots, 0, reg->nslots * sizeof *reg->slots);
    for (size_t i = 0; i < reg->count; i++)
        *find_slot(reg->slots, reg->nslots, reg->entries, reg->entries[i]->name) = i + 1;
}

th_rc th_registry_add_all(th_registry *reg, const th_tool *const *tools, size_t n, const char *origin,
                          size_t *n_added, th_err *err)
{
    size_t i;
    th_rc rc = TH_OK;
    for (i = 0; i < n; i++) {
        rc = th_registry_add(reg, tools[i], origin, err);
        if (rc != TH_OK)
            break;
    }
    if (n_added)
        *n_added = i;
    return rc;
}

bool th_registry_validate(const th_registry *reg, const th_tool *tool)
{
    th_tool t;
    checked c;
    if (check_state(reg, NULL) != TH_OK || th_tool_normalize(tool, &t, NULL) != TH_OK ||
        check_tool(reg, &t, NULL, &c, NULL, &(bool){false}) != TH_OK)
        return false;
    checked_free(&c);
    return true;
}

const th_entry *th_registry_get(const th_registry *reg, const char *name)
{
    if (!name)
        return NULL;
    size_t idx = *find_slot(reg->slots, reg->nslots, reg->entries, name);
    return idx ? reg->entries[idx - 1] : NULL;
}

th_rc th_entry_invoke(const th_entry *e, th_call *call, json_object *args)
{
    return e->typed ? th_typed_invoke(e->typed, call, args) : e->handler(call, args, e->user_data);
}

const th_schema *th_entry_validator(const th_entry *e)
{
    th_entry *m = (th_entry *)e; /* the compiled form is a cache, not state */
    th_schema *v = atomic_load_explicit(&m->validator, memory_order_acquire);
    if (v)
        return v;
    char msg[512];
    if (!(v = th_schema_compile(e->input_schema, msg, sizeof msg))) {
        th_log(TH_LOG_ERROR, "tool '%s': compiling its input schema failed: %s", e->name, msg);
        return NULL;
    }
    th_schema *none = NULL;
    if (!atomic_compare_exchange_strong_explicit(&m->validator, &none, v, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        th_schema_free(v); /* another thread's came first */
        v = none;
    }
    return v;
}

size_t th_registry_count(const th_registry *reg)
{
    return reg->count;
}

const th_entry *th_registry_at(const th_registry *reg, size_t i)
{
    return i < reg->count ? reg->entries[i] : NULL;
}

void th_registry_start(th_registry *reg)
{
    reg->started = true;
}

bool th_registry_started(const th_registry *reg)
{
    return reg->started;
}

void th_registry_shutdown(th_registry *reg)
{
    reg->shutting_down = true;
}

th_rc th_registry_adopt_handle(th_registry *reg, void *dl_handle)
{
    void **p = realloc(reg->handles, (reg->nhandles + 1) * sizeof *p);
    if (!p)
        return TH_ERR_NOMEM;
    reg->handles = p;
    reg->handles[reg->nhandles++] = dl_handle;
    return TH_OK;
}

th_rc th_registry_borrow(th_registry *reg, th_registry *lender, size_t i, th_err *err)
{
    th_rc rc = check_state(reg, err);
    if (rc != TH_OK)
        return rc;
    th_entry *e = lender->entries[i];
    if (th_registry_get(reg, e->name))
        return th_err_set(err, TH_ERR_VALUE, "Tool '%s' already registered (first by %s)", e->name,
                          th_registry_get(reg, e->name)->origin);
    bool lent = false;
    for (size_t k = 0; k < reg->nlenders; k++)
        lent |= reg->lenders[k] == lender;
    if ((reg->count + 1) * 2 > reg->nslots && !grow_table(reg))
        goto nomem;
    if (!reserve_entry(reg))
        goto nomem;
    if (!lent) {
        th_registry **l = realloc(reg->lenders, (reg->nlenders + 1) * sizeof *l);
        if (!l)
            goto nomem;
        reg->lenders = l;
        reg->lenders[reg->nlenders++] = th_registry_ref(lender);
    }
    reg->entries[reg->count] = e;
    reg->borrowed[reg->count] = true;
    *find_slot(reg->slots, reg->nslots, reg->entries, e->name) = reg->count + 1;
    reg->count++;
    changed(reg);
    th_log(TH_LOG_INFO, "tool_kept tool_name=%s total_tools=%zu%s%s", e->name, reg->count,
           *e->origin ? " plugin=" : "", e->origin);
    return TH_OK;

nomem:
    return th_err_set(err, TH_ERR_NOMEM, "out of memory keeping tool '%s'", e->name);
}

th_rc th_registry_on_release(th_registry *reg, void (*fn)(void *arg), void *arg)
{
    struct release *r = realloc(reg->releases, (reg->nreleases + 1) * sizeof *r);
    if (!r)
        return TH_ERR_NOMEM;
    reg->releases = r;
    reg->releases[reg->nreleases++] = (struct release){fn, arg};
    return TH_OK;
}

unsigned long long th_registry_version(const th_registry *reg)
{
    return reg->version;
}

th_rc th_registry_set_naming(th_registry *reg, th_naming *naming)
{
    if (reg->count > 0)
        return TH_ERR_MISUSE;
    th_naming_unref(reg->naming);
    reg->naming = th_naming_ref(naming);
    th_prompts_set_naming(reg->prompts, naming); /* prompts are named alike */
    return TH_OK;
}

th_rc th_registry_set_policy(th_registry *reg, th_policy *policy)
{
    if (reg->count)
        return TH_ERR_MISUSE;
    th_policy_unref(reg->policy);
    reg->policy = th_policy_ref(policy);
    th_prompts_set_policy(reg->prompts, policy);
    th_resources_set_policy(reg->resources, policy);
    return TH_OK;
}

const th_policy *th_registry_policy(const th_registry *reg)
{
    return reg->policy;
}

/* The plugin an entry came from: its qualified name's part, else the
 * file's NAME (NULL when the origin is not a NAME.so). */
static const char *entry_plugin(const th_entry *e, char *buf, size_t size)
{
    if (e->plugin)
        return e->plugin;
    return e->origin && th_config_plugin_name(e->origin, buf, size) ? buf : NULL;
}

bool th_registry_exposes(const th_registry *reg, const th_entry *e)
{
    if (!th_policy_active(reg->policy))
        return true;
    char buf[256];
    return th_policy_tool(reg->policy, e->name, entry_plugin(e, buf, sizeof buf),
                          e->original_name ? e->original_name : e->name, e->annotations);
}

bool th_registry_exposes_to(const th_registry *reg, const th_policy *caller, const th_entry *e)
{
    if (!th_registry_exposes(reg, e))
        return false;
    if (!caller)
        return true;
    char buf[256];
    return th_policy_tool(caller, e->name, entry_plugin(e, buf, sizeof buf),
                          e->original_name ? e->original_name : e->name, e->annotations);
}

/* Rebuild the index of exposed entries if the tools changed since. Under memo_lock. */
static bool shown_fresh(th_registry *reg)
{
    if (reg->shown && reg->shown_version == reg->version)
        return true;
    size_t *v = malloc((reg->count ? reg->count : 1) * sizeof *v), n = 0;
    if (!v)
        return false;
    for (size_t i = 0; i < reg->count; i++)
        if (th_registry_exposes(reg, reg->entries[i]))
            v[n++] = i;
    free(reg->shown);
    reg->shown = v;
    reg->nshown = n;
    reg->shown_version = reg->version;
    return true;
}

size_t th_registry_exposed_count(const th_registry *reg)
{
    if (!th_policy_active(reg->policy))
        return reg->count;
    th_registry *r = (th_registry *)reg; /* the index is a cache, as memos are */
    pthread_mutex_lock(&r->memo_lock);
    size_t n = shown_fresh(r) ? r->nshown : 0;
    pthread_mutex_unlock(&r->memo_lock);
    return n;
}

const th_entry *th_registry_exposed_at(const th_registry *reg, size_t i)
{
    if (!th_policy_active(reg->policy))
        return i < reg->count ? reg->entries[i] : NULL;
    th_registry *r = (th_registry *)reg;
    pthread_mutex_lock(&r->memo_lock);
    const th_entry *e = shown_fresh(r) && i < r->nshown ? r->entries[r->shown[i]] : NULL;
    pthread_mutex_unlock(&r->memo_lock);
    return e;
}

const th_naming *th_registry_naming(const th_registry *reg)
{
    return reg->naming;
}

bool th_registry_refusal_contextual(const th_registry *reg)
{
    return reg->last_contextual;
}

/* Under memo_lock. */
static memo *memo_find(const th_registry *reg, const char *key)
{
    for (memo *m = reg->memos; m; m = m->next)
        if (strcmp(m->key, key) == 0)
            return m;
    return NULL;
}

const char *th_registry_memo_get(const th_registry *reg, const char *key)
{
    th_registry *r = (th_registry *)reg; /* the memos are a cache, not the tools */
    pthread_mutex_lock(&r->memo_lock);
    memo *m = memo_find(r, key);
    const char *text = m ? m->text : NULL;
    pthread_mutex_unlock(&r->memo_lock);
    return text;
}

const char *th_registry_memo_put(const th_registry *reg, const char *key, const char *text)
{
    th_registry *r = (th_registry *)reg;
    memo *fresh = calloc(1, sizeof *fresh);
    if (!fresh || !(fresh->key = strdup(key)) || !(fresh->text = strdup(text))) {
        memos_free(fresh);
        return NULL;
    }
    pthread_mutex_lock(&r->memo_lock);
    memo *m = memo_find(r, key);
    if (!m) {
        fresh->next = r->memos;
        r->memos = m = fresh;
        fresh = NULL;
    }
    const char *kept = m->text;
    pthread_mutex_unlock(&r->memo_lock);
    memos_free(fresh);
    return kept;
}

th_resources *th_registry_resources(const th_registry *reg)
{
    return reg->resources;
}

th_rc th_registry_hold(th_registry *reg, th_registry *lender)
{
    for (size_t k = 0; k < reg->nlenders; k++)
        if (reg->lenders[k] == lender)
            return TH_OK;
    th_registry **l = realloc(reg->lenders, (reg->nlenders + 1) * sizeof *l);
    if (!l)
        return TH_ERR_NOMEM;
    reg->lenders = l;
    reg->lenders[reg->nlenders++] = th_registry_ref(lender);
    return TH_OK;
}

th_prompts *th_registry_prompts(const th_registry *reg)
{
    return reg->prompts;
}

/* ---- Lookups by a client's name ------------------------------------------
** The registry answers what a name stands for; plugin/qualname.c only
** parses names and words the refusals. */

/* Is E of plugin SERVER in TOOLBOX (the parts of Q)? */
static bool part_of(bool qualified, const char *toolbox, const char *plugin, const th_qualname *q)
{
    return qualified && strlen(toolbox) == q->toolbox_len && memcmp(toolbox, q->toolbox, q->toolbox_len) == 0 &&
           strlen(plugin) == q->server_len && memcmp(plugin, q->server, q->server_len) == 0;
}

/* Does REG (may be NULL) or PS (may be NULL) expose anything of the plugin
 * Q names? Only on the way to a refusal, so a scan is fine. What the
 * policy hides counts as absent: the refusal must not tell it exists. */
static bool has_server(const th_registry *reg, const th_policy *caller, const th_prompts *ps, const th_qualname *q)
{
    for (size_t i = 0; i < th_prompts_count(ps); i++) {
        const th_prompt_entry *e = th_prompts_at(ps, i);
        if (part_of(e->qualified, e->toolbox, e->plugin, q) && (!reg || th_policy_plugin(reg->policy, e->plugin)))
            return true;
    }
    for (size_t i = 0; reg && i < th_registry_count(reg); i++) {
        const th_entry *e = th_registry_at(reg, i);
        if (part_of(e->qualified, e->toolbox, e->plugin, q) && th_registry_exposes_to(reg, caller, e))
            return true;
    }
    return false;
}

const th_entry *th_tool_resolve(const th_registry *reg, const char *name, char *why, size_t size)
{
    return th_tool_resolve_for(reg, NULL, name, why, size);
}

const th_entry *th_tool_resolve_for(const th_registry *reg, const th_policy *caller, const char *name, char *why,
                                    size_t size)
{
    /* A registered name always parses to parts that exist, so the exact
     * lookup decides every name that will be served; the parse only
     * explains the others. */
    const th_entry *e = name ? th_registry_get(reg, name) : NULL;
    if (e && th_registry_exposes_to(reg, caller, e))
        return e;
    const th_naming *n = th_registry_naming(reg);
    th_qualname q;
    if (!name)
        snprintf(why, size, "Unknown tool");
    else if (e || !th_naming_qualified(n))
        snprintf(why, size, "Unknown tool: %.200s", name); /* a hidden tool is as unknown as any */
    else if (!th_qualname_parse(name, &q))
        th_qualname_err_format(why, size, name);
    else if (!th_naming_has_toolbox(n, q.toolbox, q.toolbox_len))
        th_qualname_err_toolbox(why, size, q.toolbox, q.toolbox_len);
    else if (!has_server(reg, caller, NULL, &q))
        th_qualname_err_server(why, size, q.toolbox, q.toolbox_len, q.server, q.server_len);
    else
        snprintf(why, size, "Unknown tool: %.200s", name);
    th_utf8_clip(why); /* the client's name may have been cut mid-character */
    return NULL;
}

const th_prompt_entry *th_prompts_resolve(const th_registry *reg, const th_prompts *ps, const char *name, char *why,
                                          size_t size)
{
    /* As th_tool_resolve: the exact lookup decides, the parse explains. */
    const th_prompt_entry *e = th_prompts_find(ps, name);
    if (e)
        return e;
    const th_naming *n = th_prompts_naming(ps);
    th_qualname q;
    if (!name)
        snprintf(why, size, "unknown prompt '(no name)'");
    else if (!th_naming_qualified(n))
        snprintf(why, size, "unknown prompt '%.200s'", name);
    else if (!th_qualname_parse(name, &q))
        th_qualname_err_format_as(why, size, &th_qualname_prompt_kind, name);
    else if (!th_naming_has_toolbox(n, q.toolbox, q.toolbox_len))
        th_qualname_err_toolbox(why, size, q.toolbox, q.toolbox_len);
    else if (!has_server(reg, NULL, ps, &q))
        th_qualname_err_server(why, size, q.toolbox, q.toolbox_len, q.server, q.server_len);
    else
        snprintf(why, size, "unknown prompt '%.200s'", name);
    th_utf8_clip(why);
    return NULL;
}

json_object *th_qualname_delegation_error(const th_entry *e, json_object *result)
{
    json_object *content, *block = NULL, *type, *text;
    if (!e || !e->qualified || !e->toolbox || !e->plugin || !e->original_name || !result || !json_object_object_get_ex(result, "content", &content) ||
        !json_object_is_type(content, json_type_array))
        return result;
    for (size_t i = json_object_array_length(content); i-- > 0 && !block;) {
        json_object *b = json_object_array_get_idx(content, i);
        if (json_object_object_get_ex(b, "type", &type) && json_object_is_type(type, json_type_string) &&
            strcmp(json_object_get_string(type), "text") == 0 && json_object_object_get_ex(b, "text", &text) &&
            json_object_is_type(text, json_type_string))
            block = b;
    }
    const char *was = block ? json_object_get_string(text) : "the call failed";
    th_buf msg = {0};
    th_buf_printf(&msg, "[%s/%s/%s] Error: %s", e->toolbox, e->plugin, e->original_name, was);
    json_object *s = msg.data ? json_object_new_string_len(msg.data, (int)msg.len) : NULL;
    free(msg.data);
    if (!s)
        return result; /* out of memory: the undecorated text is still true */
    if (block) {
        json_object_object_add(block, "text", s);
    } else if ((block = json_object_new_object())) {
        json_object_object_add(block, "type", json_object_new_string("text"));
        json_object_object_add(block, "text", s);
        json_object_array_add(content, block);
    } else {
        json_object_put(s);
    }
    return result;
}
