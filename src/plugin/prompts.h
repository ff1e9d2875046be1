/* SPDX-License-Identifier: MIT */
/*
** plugin/prompts.h: the prompt and completion side of the registry. Checks
** th_prompt and th_completion descriptors against their rules, owns a copy
** of each accepted one in registration order, finds them by name or
** reference, and runs their get and complete functions on a call context.
** A th_prompts lives inside a th_registry and is swapped with it.
*/
#ifndef TH_PROMPTS_H
#define TH_PROMPTS_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "base/util.h"
#include "call/callctx.h"
#include "toolhost/plugin.h"

#define TH_PROMPT_NAME_MAX 128
/* completion/complete sends at most this many values (server/utilities/completion). */
#define TH_COMPLETION_MAX 100
/* The _meta member of th_call_prompt_role()'s marker block. */
#define TH_PROMPT_ROLE_META "dev.toolhost/role"

/* One registered prompt; owned by its th_prompts. */
typedef struct th_prompt_entry {
    char *name;
    char *title;             /* NULL when not given */
    char *description;       /* NULL when not given */
    json_object *arguments;  /* array of PromptArgument, never NULL */
    json_object *icons;      /* NULL when not given */
    th_prompt_fn get;
    void *user_data;
    void (*destroy)(void *user_data);
    char *origin;            /* plugin path ("" if none) */
    /* Toolboxes (plugin/qualname.h), as for a tool: NAME is the exposed
     * name, {toolbox}__{plugin}__{original_name} when QUALIFIED, and then
     * DESCRIPTION starts with "[toolbox/plugin] ". */
    char *original_name;     /* the name the plugin registered */
    char *toolbox, *plugin;  /* NULL: in no toolbox */
    bool qualified;
    uint32_t timeout_ms;     /* the descriptor's own deadline; 0: the host's */
} th_prompt_entry;

/* One registered completion function; owned by its th_prompts. */
typedef struct th_completion_entry {
    char *prompt;            /* the prompt's exposed name, or NULL */
    char *uri_template;      /* the template's text, or NULL */
    th_complete_fn complete;
    void *user_data;
    void (*destroy)(void *user_data);
    char *origin;
    uint32_t timeout_ms;     /* the descriptor's own deadline; 0: the host's */
} th_completion_entry;

typedef struct th_prompts th_prompts;

struct th_naming;
th_prompts *th_prompts_new(void);
/* Name prompts added from now on by the toolboxes of N (borrowed: the
 * registry holding PS holds N too), qualified when N says so. */
void th_prompts_set_naming(th_prompts *ps, const struct th_naming *n);
/* The naming set, or NULL (PS may be NULL). */
const struct th_naming *th_prompts_naming(const th_prompts *ps);
/* Calls every entry's destroy, newest first. */
void th_prompts_free(th_prompts *ps);

/*
** Validate P and add a copy; ORIGIN (may be NULL) names the plugin.
** STARTED: the registry is serving (refused, TH_ERR_RUNTIME). Process
** isolation registers proxies the same way, get or complete being the
** proxy's. On failure ERR names the field and the rule; nothing changes.
*/
th_rc th_prompts_add(th_prompts *ps, const th_prompt *p, bool started, const char *origin, th_err *err);
th_rc th_prompts_add_completion(th_prompts *ps, const th_completion *c, bool started, const char *origin,
                                th_err *err);

size_t th_prompts_count(const th_prompts *ps);
const th_prompt_entry *th_prompts_at(const th_prompts *ps, size_t i);
size_t th_prompts_completion_count(const th_prompts *ps);
const th_completion_entry *th_prompts_completion_at(const th_prompts *ps, size_t i);

/* Take back the entries added after the first N prompts and C completions. */
void th_prompts_truncate(th_prompts *ps, size_t n, size_t c);
/* Remove the prompts for which DROP(E, ARG) is true, calling their destroy,
 * and the completions of those prompts; the order of the others is kept. */
void th_prompts_remove_if(th_prompts *ps, bool (*drop)(const th_prompt_entry *e, void *arg), void *arg);

const th_prompt_entry *th_prompts_find(const th_prompts *ps, const char *name);

/* Would prompts/list show A and B alike (names, titles, descriptions,
 * arguments, icons, in order)? A reload tells clients when not. */
bool th_prompts_same(const th_prompts *a, const th_prompts *b);
/* The completion of the prompt PROMPT, or of the template URI_TEMPLATE. */
const th_completion_entry *th_prompts_find_completion(const th_prompts *ps, const char *prompt,
                                                      const char *uri_template);

/*
** Run E's get with ARGS (an object of strings) on a fresh call context
** named after the prompt with HOOKS (may be NULL); returns the finished
** CallToolResult-shaped object, *RC what get returned.
*/
json_object *th_prompts_run_get(const th_prompt_entry *e, json_object *args, const th_call_hooks *hooks, th_rc *rc);

/* Run E's complete likewise; the result's text blocks are the values. */
json_object *th_prompts_run_complete(const th_completion_entry *e, const char *argument, const char *value,
                                     json_object *context, const th_call_hooks *hooks, th_rc *rc);

/*
** Check ARGS (the client's "arguments", may be NULL) against E's declared
** arguments: an object of strings, every required one present, none
** undeclared. false with MSG (MSGSIZE bytes) saying which rule broke.
*/
bool th_prompts_check_args(const th_prompt_entry *e, json_object *args, char *msg, size_t msgsize);

#endif
