/* SPDX-License-Identifier: MIT */
/*
** fuzz/fuzz_schema_validate.c: a libFuzzer harness for JSON Schema
** validation: the input's first line is a schema, the rest the instance
** (a tools/call "arguments" value); both are parsed as the host parses them.
*/
/*
** `make fuzz` builds and runs it (see doc/HACKING.md, Fuzzing). A crash, a
** sanitizer report or an abort() below is a bug: the violation count and
** the messages must agree, the messages must be UTF-8 (they reach the
** client), and validating twice must give the same answer (one compiled
** schema serves many threads, so validation must not change it).
*/
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base/util.h"
#include "fuzz_json.h"
#include "schema/jsonschema.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NAME "fuzz_schema_validate"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    const char *nl = memchr(text, '\n', size);
    if (!nl)
        return 0;
    json_object *doc, *inst;
    if (!fz_parse_schema(text, (size_t)(nl - text), &doc))
        return 0;
    char err[512];
    th_schema *schema = th_schema_compile(doc, err, sizeof err);
    json_object_put(doc); /* the compiled form holds what it needs */
    if (!schema)
        return 0;
    if (fz_parse_args(nl + 1, size - (size_t)(nl + 1 - text), &inst)) {
        char *m1 = NULL, *m2 = NULL;
        size_t bad1 = th_schema_validate(schema, inst, &m1);
        size_t bad2 = th_schema_validate(schema, inst, &m2);
        if ((bad1 > 0) != (m1 != NULL))
            fz_die(NAME, "violations and messages disagree", text, size);
        if (m1 && (!*m1 || !th_utf8_valid(m1, strlen(m1))))
            fz_die(NAME, "an empty or non-UTF-8 violation message", text, size);
        if (bad1 != bad2 || (m1 && strcmp(m1, m2) != 0))
            fz_die(NAME, "validating twice gave two answers", text, size);
        /* A budget too small for anything fails closed, never open. */
        th_validate_opts tiny = {.max_steps = 1};
        if (bad1 > 0 && th_schema_validate_ex(schema, inst, &tiny, NULL) == 0)
            fz_die(NAME, "an invalid instance passed on a smaller budget", text, size);
        free(m1);
        free(m2);
        json_object_put(inst);
    }
    th_schema_free(schema);
    return 0;
}
