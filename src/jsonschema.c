/*
** jsonschema.c: PLACEHOLDER until the validator lands: accepts every schema
** and every instance. Replaced by the draft 2020-12 implementation.
*/
#include "config.h"

#include <stdlib.h>

#include "jsonschema.h"

struct th_schema {
    int unused;
};

th_schema *th_schema_compile(json_object *schema, char *err, size_t errlen)
{
    (void)schema;
    (void)err;
    (void)errlen;
    return calloc(1, sizeof(th_schema));
}

void th_schema_free(th_schema *schema)
{
    free(schema);
}

size_t th_schema_validate(const th_schema *schema, json_object *instance, char **messages)
{
    (void)schema;
    (void)instance;
    if (messages)
        *messages = NULL;
    return 0;
}
