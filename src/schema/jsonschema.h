/* SPDX-License-Identifier: MIT */
/*
** schema/jsonschema.h: JSON Schema (draft 2020-12) compiled once, validated many
** times. The registry compiles each tool's input schema at registration; the
** protocol layer validates every tools/call's arguments before a handler runs.
*/
#ifndef TH_JSONSCHEMA_H
#define TH_JSONSCHEMA_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

typedef struct th_schema th_schema;

/*
** Compile SCHEMA (borrowed; the compiled form takes the references it
** needs). Returns NULL when the schema is not valid JSON Schema, after
** writing a message to ERR (ERRLEN bytes) that names the JSON pointer into
** the schema, the keyword and what is wrong, e.g.
** "/properties/n/minimum: must be a number".
*/
th_schema *th_schema_compile(json_object *schema, char *err, size_t errlen);

/* Free a compiled schema (NULL is fine). */
void th_schema_free(th_schema *schema);

/*
** Validate INSTANCE. Returns the number of violations found (0: valid).
** When MESSAGES is not NULL and there are violations, *MESSAGES is set to a
** malloc()ed string, one violation per line ("/count: must be >= 1
** (minimum)"), capped at a fixed number of lines; the caller free()s it.
** Thread-safe: one compiled schema may validate on many threads at once.
** Runs within the default work budget (see th_validate_opts).
*/
size_t th_schema_validate(const th_schema *schema, json_object *instance, char **messages);

/*
** What bounds one validation. CANCELLED (may be NULL) is polled with CTX
** every TH_SCHEMA_POLL_STEPS steps, from the validating thread; once it
** returns true validation stops and fails ("validation stopped: the call
** was cancelled"). MAX_STEPS is the work budget in steps (one step: one
** subschema applied to one instance value, or one pattern tried on one
** string); 0 means the default,
** TH_SCHEMA_BASE_STEPS plus TH_SCHEMA_STEPS_PER_VALUE for every value in
** the instance. A validation that needs more fails closed.
*/
typedef struct th_validate_opts {
    bool (*cancelled)(void *ctx);
    void *ctx;
    size_t max_steps;
} th_validate_opts;

/* th_schema_validate() bounded by OPTS (NULL: the defaults, no polling). */
size_t th_schema_validate_ex(const th_schema *schema, json_object *instance, const th_validate_opts *opts,
                             char **messages);

/*
** Where th_schema_compile_ex() finds documents that a $ref names by an
** absolute URI (fragment removed) that no loaded document defines. Returns a
** new reference the compiler takes over, or NULL: the $ref then fails to
** resolve. Called only during compilation, on the compiling thread.
*/
typedef json_object *(*th_schema_resolver)(const char *uri, void *data);

/* th_schema_compile() with a RESOLVER (may be NULL) for remote documents;
** the test suite serves its http://localhost:1234/ files through it. */
th_schema *th_schema_compile_ex(json_object *schema, th_schema_resolver resolver, void *data, char *err,
                                size_t errlen);

/* Limits that protect the host from hostile schemas and arguments. */
enum {
    TH_SCHEMA_MAX_NESTING = 64,     /* subschemas inside subschemas, at compile */
    TH_SCHEMA_MAX_NODES = 10000,    /* subschemas in one compiled schema */
    TH_SCHEMA_MAX_FANOUT = 1000,    /* entries of one allOf/anyOf/oneOf/prefixItems */
    TH_SCHEMA_MAX_EVAL_DEPTH = 200, /* nested subschema evaluations per validation */
    TH_SCHEMA_MAX_REF_DEPTH = 100,  /* nested $ref / $dynamicRef follows per validation */
    TH_SCHEMA_MAX_MESSAGES = 20,    /* message lines before "... and N more" */
    TH_SCHEMA_BASE_STEPS = 1000,    /* default work budget: this many steps ... */
    TH_SCHEMA_STEPS_PER_VALUE = 32, /* ... plus this many per instance value */
    TH_SCHEMA_POLL_STEPS = 256,     /* steps between polls of opts->cancelled */
};

#endif
