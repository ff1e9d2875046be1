/*
** jsonschema.h: JSON Schema (draft 2020-12) compiled once, validated many
** times. The registry compiles each tool's input schema at registration; the
** protocol layer validates every tools/call's arguments before a handler runs.
*/
#ifndef TH_JSONSCHEMA_H
#define TH_JSONSCHEMA_H

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
*/
size_t th_schema_validate(const th_schema *schema, json_object *instance, char **messages);

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
};

#endif
