/* SPDX-License-Identifier: MIT */
/*
** plugin/policy.h: the exposure policy: which tools, prompts and resources
** a client may see and call, from --tools, --exclude-tools, --read-only and
** the same keys in a plugin's config section, compiled once at start.
*/
#ifndef TH_PLUGIN_POLICY_H
#define TH_PLUGIN_POLICY_H

#include <stdbool.h>

#include <json-c/json.h>

#include "base/util.h"

typedef struct th_policy th_policy;

/* What a rule says: show only what matches, hide what matches, or show
 * only tools annotated readOnlyHint: true. */
typedef enum th_policy_kind { TH_POLICY_TOOLS, TH_POLICY_EXCLUDE, TH_POLICY_READ_ONLY } th_policy_kind;

/* A new policy that exposes everything, with one reference. NULL when out of memory. */
th_policy *th_policy_new(void);

/*
** A new policy that exposes no tool until TOOLS rules name some: one
** caller's own set over HTTP (--auth-tools), where a token that carries
** none of the scopes named must see nothing rather than everything.
*/
th_policy *th_policy_new_closed(void);
th_policy *th_policy_ref(th_policy *p);
void th_policy_unref(th_policy *p);

/*
** Add the rules of SPEC: for TOOLS and EXCLUDE "[PLUGIN:]GLOB,GLOB..."
** (fnmatch globs; with PLUGIN: they concern that plugin's tools alone),
** for READ_ONLY a plugin's NAME, or NULL for all plugins. TH_ERR_VALUE
** with ERR naming the option (OPT) and the rule broken.
*/
th_rc th_policy_add(th_policy *p, th_policy_kind kind, const char *opt, const char *spec, th_err *err);

/* Whether P changes anything: a policy without rules exposes all. */
bool th_policy_active(const th_policy *p);

/*
** Whether the tool a client knows as NAME, which plugin PLUGIN (NAME of
** NAME.so, or NULL) registered as LOCAL, with ANNOTATIONS (may be NULL),
** is exposed. A glob matches NAME or "PLUGIN/LOCAL"; a plugin's own globs
** match NAME or LOCAL. P NULL: exposed.
*/
bool th_policy_tool(const th_policy *p, const char *name, const char *plugin, const char *local,
                    json_object *annotations);

/*
** Whether PLUGIN's prompts and resources are exposed: not when an exclude
** glob hides every tool name the plugin could have, that is, it matches
** the text PLUGIN followed by "/" and "*" (a plugin's own glob: "*").
*/
bool th_policy_plugin(const th_policy *p, const char *plugin);

#endif
