/* SPDX-License-Identifier: MIT */
/*
** worker/resproxy.h: resources across the process boundary. The scanner
** describes a plugin's resources and templates as JSON descriptors (in the
** same array as its tools, marked with "kind", so the registry cache keeps
** them too); the host registers them back with a proxy read function; a
** worker turns a READ frame into the read of its own registry's entry.
*/
#ifndef TH_RESPROXY_H
#define TH_RESPROXY_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "plugin/registry.h"
#include "plugin/resources.h"

/* Append to INTO the descriptors of REG's resources from RBASE and its
 * templates from TBASE: {"kind":"resource"|"resource_template", ...}. */
void th_resproxy_describe(const th_registry *reg, size_t rbase, size_t tbase, json_object *into);

/* Is descriptor D a resource or template (not a tool)? *TEMPLATE_ says which. */
bool th_resproxy_is_resource(json_object *d, bool *template_);

/*
** Register descriptor D in REG's resources from ORIGIN, reading through READ
** with USER_DATA (freed by DESTROY when the registry lets go) and WATCH
** for subscriptions. The registry rules decide, as for a loaded plugin.
*/
th_rc th_resproxy_register(th_registry *reg, json_object *d, const char *origin, th_read_fn read, void *user_data,
                           void (*destroy)(void *), void (*watch)(void *), th_err *err);

/* The key a READ frame names its entry by: the URI or the template text. */
const char *th_resproxy_key(const th_res_entry *e);

/*
** A worker's side of a READ frame's payload {"key","template","uri","vars"}:
** the entry of REG it names (NULL when none), with *URI and *VARS borrowed
** from REQ.
*/
const th_res_entry *th_resproxy_lookup(const th_registry *reg, json_object *req, const char **uri,
                                       json_object **vars);

#endif
