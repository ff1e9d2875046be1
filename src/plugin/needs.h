/* SPDX-License-Identifier: MIT */
/*
** plugin/needs.h: what a plugin declared it needs (th_server_need), in the
** canonical form the host shows, caches, sends to a worker and records:
** "read:/srv/data", "connect:api.example.com:443", ... sorted, each once.
*/
#ifndef TH_PLUGIN_NEEDS_H
#define TH_PLUGIN_NEEDS_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "base/util.h"
#include "toolhost/plugin.h"

typedef struct th_needs th_needs;

th_needs *th_needs_new(void);
void th_needs_free(th_needs *n);

/* Add KIND VALUE (N NULL: only check it); TH_ERR_VALUE with ERR naming
 * the rule it breaks. */
th_rc th_needs_add(th_needs *n, th_need kind, const char *value, th_err *err);

/* The needs, sorted: a new JSON array of canonical strings. */
json_object *th_needs_json(const th_needs *n);

/* The first need of N missing from GIVEN (a JSON array of canonical
 * strings; NULL: none), or NULL when N asks for nothing more. */
const char *th_needs_beyond(const th_needs *n, json_object *given);

/* Whether TEXT is a canonical need: KIND:VALUE with a valid VALUE. */
bool th_needs_valid(const char *text);

#endif
