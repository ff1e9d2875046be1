/* SPDX-License-Identifier: MIT */
/*
** worker/promptproxy.h: prompts and completions across the process
** boundary, as worker/resproxy.h does it for resources. The scanner
** describes them as JSON descriptors marked with "kind" ("prompt",
** "completion") in the array of the plugin's tools (so the registry cache
** keeps them too); the host registers them back with proxy functions; a
** worker turns a PROMPT or COMPLETE frame into a run of its own entry.
*/
#ifndef TH_PROMPTPROXY_H
#define TH_PROMPTPROXY_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "plugin/prompts.h"
#include "plugin/registry.h"

/* Append the descriptors of REG's prompts from PBASE and completions from CBASE to INTO. */
void th_promptproxy_describe(const th_registry *reg, size_t pbase, size_t cbase, json_object *into);

/* Is descriptor D a prompt or a completion? *COMPLETION_ says which. */
bool th_promptproxy_is_prompt(json_object *d, bool *completion_);

/*
** Register descriptor D in REG from ORIGIN with the proxy GET or COMPLETE
** (whichever D is) and USER_DATA; the registry rules decide. *KEY gets
** the name D is known by (borrowed from D), for messages.
*/
th_rc th_promptproxy_register(th_registry *reg, json_object *d, const char *origin, th_prompt_fn get,
                              th_complete_fn complete, void *user_data, const char **key, th_err *err);

/*
** A worker's side of a frame: PROMPT {"name","arguments"}, COMPLETE
** {"prompt"|"uri_template","argument","value","context"}. The entry of
** REG it names, or NULL.
*/
const th_prompt_entry *th_promptproxy_lookup_prompt(const th_registry *reg, json_object *req);
const th_completion_entry *th_promptproxy_lookup_completion(const th_registry *reg, json_object *req);

#endif
