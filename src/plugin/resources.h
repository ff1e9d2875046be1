/* SPDX-License-Identifier: MIT */
/*
** plugin/resources.h: the resource side of the registry. Validates th_resource
** descriptors against the resource rules, owns a copy of every accepted
** resource and template, resolves a URI to what serves it, and carries
** th_resource_updated() notices to whoever listens (the protocol, or in a
** worker the IPC). A th_resources lives inside a th_registry and is
** swapped with it.
*/
#ifndef TH_RESOURCES_H
#define TH_RESOURCES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "base/util.h"
#include "call/callctx.h"
#include "toolhost/plugin.h"

#define TH_URI_MAX 2048
#define TH_RESOURCE_NAME_MAX 128

/* One registered resource or template; owned by its th_resources. */
typedef struct th_res_entry {
    char *uri;          /* a plain resource's URI, or NULL */
    char *uri_template; /* a template's text, or NULL */
    char *name;
    char *title;        /* NULL when not given */
    char *description;  /* NULL when not given */
    char *mime_type;    /* NULL when not given */
    uint64_t size;      /* 0: not given */
    json_object *annotations; /* NULL when not given */
    th_read_fn read;
    void *user_data;
    void (*destroy)(void *user_data);
    char *origin;       /* plugin path ("" if none) */
    uint32_t timeout_ms; /* the descriptor's own deadline; 0: the host's */
    /* A subscription to this resource was made: called once per
     * resources/subscribe (in process isolation it starts the plugin's
     * worker, so that its updates can flow). NULL: nothing to do. */
    void (*watch)(void *user_data);
} th_res_entry;

typedef struct th_resources th_resources;

th_resources *th_resources_new(void);
/* Calls every entry's destroy, newest first. */
void th_resources_free(th_resources *rs);

/*
** Validate RES (a resource when TEMPLATE is false, else a template) and add
** a copy; ORIGIN (may be NULL) names the plugin. STARTED: the registry is
** serving (refused with TH_ERR_RUNTIME). On failure ERR says which field
** broke which rule, nothing changes, and RES's destroy is not called.
*/
th_rc th_resources_add(th_resources *rs, const th_resource *res, bool template_, bool started, const char *origin,
                       th_err *err);

/* Add an entry whose read goes elsewhere (process isolation's proxies):
** RES validated as above, then READ/USER_DATA/DESTROY/WATCH replace its own. */
th_rc th_resources_add_proxy(th_resources *rs, const th_resource *res, bool template_, const char *origin,
                             void (*watch)(void *), th_err *err);

/* Counts, and entries in registration order. */
size_t th_resources_count(const th_resources *rs);
const th_res_entry *th_resources_at(const th_resources *rs, size_t i);
size_t th_resources_template_count(const th_resources *rs);
const th_res_entry *th_resources_template_at(const th_resources *rs, size_t i);

/* Take back the entries added after the first N resources and T templates. */
void th_resources_truncate(th_resources *rs, size_t n, size_t t);
/* Remove the resources (TEMPLATES: the templates) for which DROP(E, ARG) is
 * true, calling their destroy; the order of the others is kept. */
void th_resources_remove_if(th_resources *rs, bool templates, bool (*drop)(const th_res_entry *e, void *arg),
                            void *arg);

/*
** What serves URI: the plain resource with exactly that URI, else the first
** template that matches it; *VARS (when not NULL) gets a new object of the
** template's variables, percent-decoded ({} for a plain resource). NULL when
** nothing does.
*/
const th_res_entry *th_resources_resolve(const th_resources *rs, const char *uri, json_object **vars);

/* The plain resource with URI, or the template with text URI_TEMPLATE. */
const th_res_entry *th_resources_find(const th_resources *rs, const char *uri, const char *uri_template);

/*
** Run E's read function for URI with VARS on a fresh call context (named
** after the resource, with HOOKS, may be NULL) and return the finished
** CallToolResult-shaped object (content blocks); *RC gets what read returned.
*/
json_object *th_resources_run_read(const th_res_entry *e, const char *uri, json_object *vars,
                                   const th_call_hooks *hooks, th_rc *rc);

/* Is URI an absolute URI (scheme ":" ...), as the rules require? */
bool th_uri_absolute(const char *uri);

/*
** Where th_resource_updated() notices go: FN(URI, CTX) on the thread that
** called it. The protocol layer sets it in the host, the worker in a
** worker process; NULL drops them. One listener per process.
*/
void th_resources_on_update(void (*fn)(const char *uri, void *ctx), void *ctx);

#endif
