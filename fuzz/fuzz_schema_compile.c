/* SPDX-License-Identifier: MIT */
/*
** fuzz/fuzz_schema_compile.c: a libFuzzer harness for JSON Schema
** compilation: each input is one schema's text, parsed as the registry parses
** a plugin's input_schema and compiled; a refusal must come with a message.
*/
/*
** `make fuzz` builds and runs it (see doc/HACKING.md, Fuzzing); by hand, after
** `make fuzz`: fuzz/fuzz_schema_compile $(srcdir)/fuzz/corpus/schema_compile.
** A compiled schema also validates a few fixed instances, so that what the
** compiler built is walked once, and is freed; ASan checks both.
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

static const char *const instances[] = {
    "null", "true", "0", "-1.5", "18446744073709551616", "\"\"", "\"a\\ud800\"", "[]", "[1,\"a\",null]", "{}",
    "{\"a\":1,\"b\":[{}],\"c\":\"x\"}",
};

static void walk(const th_schema *schema, const char *data, size_t size)
{
    for (size_t i = 0; i < sizeof instances / sizeof *instances; i++) {
        json_object *inst;
        if (!fz_parse_args(instances[i], strlen(instances[i]), &inst))
            fz_die("fuzz_schema_compile", "a fixed instance does not parse", instances[i], strlen(instances[i]));
        char *messages = NULL;
        size_t bad = th_schema_validate(schema, inst, &messages);
        if ((bad > 0) != (messages != NULL))
            fz_die("fuzz_schema_compile", "violations and messages disagree", data, size);
        if (messages && (!*messages || !th_utf8_valid(messages, strlen(messages))))
            fz_die("fuzz_schema_compile", "an empty or non-UTF-8 violation message", data, size);
        free(messages);
        json_object_put(inst);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    json_object *doc;
    if (!fz_parse_schema(text, size, &doc))
        return 0;
    char err[512];
    err[0] = '\0';
    th_schema *schema = th_schema_compile(doc, err, sizeof err);
    if (!schema) {
        if (!err[0] || !th_utf8_valid(err, strlen(err)))
            fz_die("fuzz_schema_compile", "a refusal without a (UTF-8) message", text, size);
    } else {
        walk(schema, text, size);
        th_schema_free(schema);
    }
    json_object_put(doc);
    return 0;
}
