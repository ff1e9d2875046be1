/* SPDX-License-Identifier: MIT */
/*
** worker/sandbox.h: a plugin's sandbox, default deny: the policy the host
** sends in a worker's hello ("sandbox"), the one Landlock ruleset and the
** resource limits a worker applies from it before any plugin code, and what
** this kernel can enforce of it.
*/
#ifndef TH_SANDBOX_H
#define TH_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "base/util.h"
#include "plugin/settings.h"

/* The operator's choice (--sandbox). */
typedef enum th_sandbox_mode {
    TH_SANDBOX_OFF,      /* nothing but the resource limits */
    TH_SANDBOX_DECLARED, /* what the plugin declared, plus the grants */
    TH_SANDBOX_STRICT,   /* the grants alone */
} th_sandbox_mode;

/* What the host decides for every worker. */
typedef struct th_sandbox_opts {
    th_sandbox_mode mode;
    bool require;              /* --require-sandbox: a part not enforced is fatal */
    const th_config *grants; /* the operator's grants (th_config_grant) */
} th_sandbox_opts;

/*
** The "sandbox" member of a worker's hello for plugin NAME: the mode, the
** grants (NAME's alone; none for the scanner, NAME NULL, which opens every
** plugin under the strictest policy), and NEEDS (a JSON array of canonical
** needs "read:/srv/data", or NULL) when the mode is declared. A new object.
*/
json_object *th_sandbox_hello(const th_sandbox_opts *o, const char *name, json_object *needs);

/* Whether POLICY (from th_sandbox_hello) lets a worker reach anything more
 * than the strictest policy does: a path, a port or a program. */
bool th_sandbox_grants_any(json_object *policy);

/*
** Worker side, step 6 of its start-up: apply POLICY (the hello's "sandbox"
** member; NULL: off) for the plugin files PLUGINS[0..N), which are readable
** inside it. Sets RLIMIT_CPU and RLIMIT_NPROC from it (its memory and
** max_files, grants that override --worker-memory-limit and
** --worker-max-files, are the worker's step 4), a network namespace of
** its own unless a connection is granted (before the seccomp filter of
** worker/isolate.c, which forbids one), then one Landlock ruleset on the
** calling thread, which must be the only one. A part this
** kernel lacks is left out (the host has said so); with "require" it is an
** error instead. TH_OK, or an error whose message names what failed.
*/
th_rc th_sandbox_apply(json_object *policy, char *const *plugins, size_t n, th_err *err);

/*
** Host side: the Landlock ABI this kernel offers (0: none), and into BUF
** the parts of a sandbox it cannot enforce ("" when it enforces all),
** network namespaces included where the system refuses them.
*/
int th_sandbox_probe(char *buf, size_t size);

/*
** Host side, once at start: log what this kernel cannot enforce (a warning
** naming it), or with O->require return TH_ERR_VALUE and ERR naming it.
*/
th_rc th_sandbox_check_kernel(const th_sandbox_opts *o, th_err *err);

/* The mode's name, for messages and inspect. */
const char *th_sandbox_mode_name(th_sandbox_mode mode);

#endif
