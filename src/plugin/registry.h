/* SPDX-License-Identifier: MIT */
/*
** plugin/registry.h: the tool registry. It validates descriptors against the
** registry rules, owns a copy of every accepted tool, and answers lookups by
** name (O(1)) and listings in registration order. Once the server starts
** serving, the registry is frozen; a later reload builds a new registry and
** swaps it in whole, which is why readers hold references.
*/
#ifndef TH_REGISTRY_H
#define TH_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "schema/jsonschema.h"
#include "toolhost/plugin.h"
#include "call/typed.h"
#include "base/util.h"

/* Limits from the registry rules. */
#define TH_NAME_MAX 50
#define TH_DESCRIPTION_MIN 10
#define TH_DESCRIPTION_MAX 500

/* The description `toolhost new-plugin` writes, "Describe what NAME does
** and when to use it.": a model reads it to choose the tool, so a tool
** still carrying it is worth a warning (th_registry_placeholder). */
#define TH_PLACEHOLDER_HEAD "Describe what "
#define TH_PLACEHOLDER_TAIL " and when to use it."

/*
** One registered tool. Everything is owned by the registry and lives as long
** as it does; readers must hold a registry reference while they use it.
*/
typedef struct th_entry {
    char *name;
    char *title;                /* NULL when not given */
    char *description;
    json_object *input_schema;  /* parsed or generated */
    json_object *output_schema; /* NULL when not given */
    json_object *annotations;   /* NULL when not given */
    /* input_schema compiled, on the tool's first call (th_entry_validator):
     * a compiled schema costs more than its tree, and most of 10,000
     * installed tools are never called. */
    _Atomic(th_schema *) validator;
    th_schema *output_validator; /* output_schema compiled, or NULL */
    th_handler handler;         /* NULL for typed tools */
    th_typed *typed;            /* NULL for handler tools */
    void *user_data;
    void (*destroy)(void *user_data);
    const char *origin;         /* plugin path for messages ("" if none) */
    uint32_t timeout_ms;        /* the descriptor's own deadline; 0: the host's */
    /* Toolboxes (plugin/qualname.h). NAME above is the exposed name: with
     * qualified names {toolbox}__{plugin}__{original_name}, and then
     * DESCRIPTION starts with "[toolbox/plugin] ". */
    char *original_name;        /* the name the plugin registered */
    char *toolbox;              /* NULL: in no toolbox (or no naming set) */
    char *plugin;               /* NAME of NAME.so; NULL likewise */
    bool qualified;             /* exposed under its qualified name */
    uint32_t task_support;      /* th_task_support (the tasks extension) */
    json_object *icons;         /* NULL when not given */
} th_entry;

typedef struct th_registry th_registry;
typedef struct th_naming th_naming; /* plugin/qualname.h */

/* A new, empty registry with one reference. NULL on allocation failure. */
th_registry *th_registry_new(void);

/* Take and drop references. The last unref destroys tools, then closes the
** plugin handles the registry adopted. */
th_registry *th_registry_ref(th_registry *reg);
void th_registry_unref(th_registry *reg);

/*
** Validate TOOL and add a copy. ORIGIN (may be NULL) names where it came
** from, for log lines, and is copied. On failure returns the rule's code
** with ERR's message (the registry specification's text) and changes
** nothing; TOOL's destroy is not called (the caller still owns user_data).
** On success logs the registration with the running total, and a warning
** when the description is still the placeholder.
*/
th_rc th_registry_add(th_registry *reg, const th_tool *tool, const char *origin, th_err *err);

/* Is DESCRIPTION (as the plugin gave it, without a toolbox prefix) still
** the placeholder new-plugin wrote? */
bool th_registry_placeholder(const char *description);

/*
** Mark REG private to a scanner, a worker or a first call: it checks and
** serves what the host's own registry also registers, so it leaves the
** warnings about those tools to the host's, and each shows once.
*/
void th_registry_set_private(th_registry *reg);

/* Register TOOLS in order; stop at the first failure, keeping those before it.
** *N_ADDED (may be NULL) receives how many were added. */
th_rc th_registry_add_all(th_registry *reg, const th_tool *const *tools, size_t n,
                          const char *origin, size_t *n_added, th_err *err);

/* Would TOOL be accepted now? No side effects, no logging. */
bool th_registry_validate(const th_registry *reg, const th_tool *tool);

/* The tool named NAME (case-sensitive), or NULL. */
const th_entry *th_registry_get(const th_registry *reg, const char *name);

/*
** Run E's function on CALL with ARGS (already checked against its input
** schema): a typed tool through its ffi call (call/typed.h), any other
** through its handler with its user_data. The one place that choice is made,
** whoever runs the call: the protocol, a task, a worker or a lazy stand-in.
*/
th_rc th_entry_invoke(const th_entry *e, th_call *call, json_object *args);

/*
** E's compiled input schema, compiled on first use and kept: registration
** proved that it compiles, so NULL means only that memory ran out. Safe to
** call from several threads at once (one compiled form wins).
*/
const th_schema *th_entry_validator(const th_entry *e);

/* Number of tools, and the I-th in registration order. */
size_t th_registry_count(const th_registry *reg);
const th_entry *th_registry_at(const th_registry *reg, size_t i);

/* Freeze the registry: from now on registration fails with TH_ERR_RUNTIME
** "Cannot register tools after server has started". */
void th_registry_start(th_registry *reg);
bool th_registry_started(const th_registry *reg);

/* Refuse registration because the host is shutting down. */
void th_registry_shutdown(th_registry *reg);

/*
** Remove the tools registered after the first COUNT (the newest ones), last
** first, calling each one's destroy: how a loader takes back what a refused
** plugin staged. Only before the registry is started; a COUNT at or above
** the current count changes nothing.
*/
void th_registry_truncate(th_registry *reg, size_t count);

/*
** Remove every tool for which DROP(E, ARG) is true, calling the destroy of
** those REG owns (a borrowed one stays its lender's): how the lock
** withholds what drifted from what it pins (plugin/lockfile.c). Only
** before the registry is started; the order of the others is kept.
*/
void th_registry_remove_if(th_registry *reg, bool (*drop)(const th_entry *e, void *arg), void *arg);

/* Keep a dlopen() handle until the registry is destroyed (after its tools). */
th_rc th_registry_adopt_handle(th_registry *reg, void *dl_handle);

/*
** Hot reload (plugin/reload.c). th_registry_borrow adds LENDER's I-th tool
** to REG as it is (same handler, same plugin code, same destroy, which stays
** LENDER's to call): REG keeps a reference on LENDER until it is destroyed.
** The registry rules on names still apply (a duplicate is refused, TH_ERR_VALUE).
** th_registry_on_release runs FN(ARG) when REG is destroyed, after its own
** tools and before its plugin handles are closed (a supervisor whose proxy
** tools REG holds). th_registry_borrow only before th_registry_start.
*/
th_rc th_registry_borrow(th_registry *reg, th_registry *lender, size_t i, th_err *err);
th_rc th_registry_on_release(th_registry *reg, void (*fn)(void *arg), void *arg);
/* Keep LENDER (a reference) until REG is destroyed: for resources a reload
 * carries over (plugin/reload.c), whose read functions are LENDER's code. */
th_rc th_registry_hold(th_registry *reg, th_registry *lender);

/*
** The registry's version: unique among all registries of the process and
** changed by every change to its tools (a hot reload's new registry has a
** new one), so text derived from a registry can be keyed by it.
*/
unsigned long long th_registry_version(const th_registry *reg);

/*
** Toolboxes: from now on a tool added with an ORIGIN inside one of
** NAMING's directories is named and described as NAMING says
** (th_naming_expose). Takes a reference. Only on an empty registry (a
** reload sets it on the registry it builds); TH_ERR_MISUSE otherwise.
*/
th_rc th_registry_set_naming(th_registry *reg, th_naming *naming);
const th_naming *th_registry_naming(const th_registry *reg);

/*
** The exposure policy (plugin/policy.h): from now on what POLICY hides is
** absent to clients, in th_tool_resolve and the exposed listing alike.
** Takes a reference; NULL exposes everything. Only on an empty registry
** (TH_ERR_MISUSE otherwise), as th_registry_set_naming.
*/
struct th_policy;
th_rc th_registry_set_policy(th_registry *reg, struct th_policy *policy);
const struct th_policy *th_registry_policy(const th_registry *reg);

/* Whether the policy lets clients see and call E, one of REG's tools. */
bool th_registry_exposes(const th_registry *reg, const th_entry *e);

/* The same for one caller whose own set is CALLER (NULL: no set of its own):
 * both the registry's policy and CALLER must expose E. */
bool th_registry_exposes_to(const th_registry *reg, const struct th_policy *caller, const th_entry *e);

/*
** The tools clients may see, in registration order: what tools/list pages
** through. Without a policy the same as th_registry_count/th_registry_at.
** th_registry_exposed_at returns NULL past the end.
*/
size_t th_registry_exposed_count(const th_registry *reg);
const th_entry *th_registry_exposed_at(const th_registry *reg, size_t i);

/*
** Did th_registry_add's last refusal come from the registry's context (a
** tool already registered under the name, or the toolbox naming) rather
** than from the descriptor alone? A scan of the plugin by itself cannot
** have seen (and logged) such a refusal.
*/
bool th_registry_refusal_contextual(const th_registry *reg);

/*
** Memos: text derived from the tools (a serialised tools/list page), kept
** with the registry under a KEY its user chooses (naming everything the
** text depends on besides the tools) and dropped whenever the tools change.
** Safe from any thread; the registry's tools are not touched, so the
** registry is const here. th_registry_memo_get returns the text or NULL;
** th_registry_memo_put copies TEXT and returns the kept copy (the one
** already kept under KEY if another thread was first), NULL when out of
** memory. Both texts live as long as the registry, or until it changes.
*/
const char *th_registry_memo_get(const th_registry *reg, const char *key);
const char *th_registry_memo_put(const th_registry *reg, const char *key, const char *text);



/*
** The registry's resources and resource templates (plugin/resources.h):
** they live and are swapped with its tools. Registration goes through
** th_resources_add with th_registry_started() as the state.
*/
struct th_resources;
struct th_resources *th_registry_resources(const th_registry *reg);

/* The registry's prompts and completions (plugin/prompts.h), likewise. */
struct th_prompts;
struct th_prompts *th_registry_prompts(const th_registry *reg);

/* ---- Lookups by a client's name ---------------------------------------- */

/*
** The tool a client's NAME stands for: the one lookup every request that
** names a tool goes through (tools/call, HTTP's header checks), so a rule
** on what a client may reach has one place to sit. The entry, or NULL with
** WHY (SIZE bytes) in the words the client gets: with qualified names,
** NAME is parsed as doc/registry-rules.md, 7 says (plugin/qualname.h) and its texts name
** what is missing (the format, the toolbox, the server); otherwise, and for
** a name whose parts all exist, "Unknown tool: NAME".
*/
const th_entry *th_tool_resolve(const th_registry *reg, const char *name, char *why, size_t size);

/* th_tool_resolve for a caller whose own set is CALLER (NULL: none): a
 * tool outside it is refused in the same words as one never served. */
const th_entry *th_tool_resolve_for(const th_registry *reg, const struct th_policy *caller, const char *name,
                                    char *why, size_t size);

/*
** The prompt a client's NAME stands for (prompts/get, completion/complete's
** ref/prompt), as th_tool_resolve is for tools: the entry, or NULL with
** WHY (SIZE bytes): with qualified names the texts of doc/registry-rules.md, 7 ("Invalid prompt
** name format ...", "Toolbox 'x' not found", "Server 'y' not found in
** toolbox 'x'"), else "unknown prompt 'NAME'". REG (may be NULL) is the
** registry PS belongs to (its tools count as servers too).
*/
struct th_prompt_entry;
const struct th_prompt_entry *th_prompts_resolve(const th_registry *reg, const struct th_prompts *ps,
                                                 const char *name, char *why, size_t size);

/*
** The delegation error of doc/registry-rules.md, 7: the text of a call the host failed (not the
** plugin's own answer) worded "[TOOLBOX/PLUGIN/TOOL] Error: TEXT" for a
** tool E exposed under its qualified name. The host's text is the last
** text block of RESULT (a CallToolResult tree, changed in place; a block is
** added if there is none). RESULT is returned; unchanged when E is not
** qualified.
*/
json_object *th_qualname_delegation_error(const th_entry *e, json_object *result);

/*
** Check TOOL's abi_version and struct_size, the first thing read from any
** descriptor, and copy it into *OUT with fields the plugin's header did not
** have set to zero. Returns TH_ERR_TYPE for NULL, TH_ERR_ABI for a mismatch,
** naming the host's value first and then the plugin's.
*/
th_rc th_tool_normalize(const th_tool *tool, th_tool *out, th_err *err);
#endif
