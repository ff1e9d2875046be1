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

#endif
