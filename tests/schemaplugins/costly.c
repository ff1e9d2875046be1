/* SPDX-License-Identifier: MIT */
/*
** costly.c: test plugin costly.so: "costly", whose input schema makes every
** array item cost a whole work budget to check (anyOf nested 24 deep over
** a 1000-entry enum), and "costly_probe", which answers at once; so a test
** can see that cancelling a call stops its argument validation.
*/
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <toolhost/plugin.h>

static th_rc probe(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    return th_call_text(call, "probe");
}

static th_rc never(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    /* The schema accepts no item: reaching here is a bug the test sees. */
    return th_call_text(call, "arguments accepted");
}

enum { LEVELS = 24, ENUM_SIZE = 1000 };

/* Filled once by register; the host reads the descriptors after it returns. */
static char schema[32768];

static const th_tool probe_tool = {
    TH_TOOL_INIT,
    .name = "costly_probe",
    .description = "Answers at once.",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = probe,
};

static th_tool costly_tool = {
    TH_TOOL_INIT,
    .name = "costly",
    .description = "Arguments that take the whole work budget to check.",
    .input_schema = schema,
    .handler = never,
};

static void append(size_t *len, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void append(size_t *len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(schema + *len, sizeof schema - *len, fmt, ap);
    va_end(ap);
    if (n > 0)
        *len += (size_t)n;
}

TH_REGISTER(costly)
{
    size_t len = 0;
    append(&len, "{\"type\":\"object\",\"properties\":{\"xs\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/$defs/l%d\"}}},"
                 "\"$defs\":{\"l0\":{\"enum\":[2",
           LEVELS);
    for (int i = 3; i < ENUM_SIZE + 2; i++)
        append(&len, ",%d", i);
    append(&len, "]}");
    for (int i = 1; i <= LEVELS; i++)
        append(&len, ",\"l%d\":{\"anyOf\":[{\"$ref\":\"#/$defs/l%d\"},{\"$ref\":\"#/$defs/l%d\"}]}", i, i - 1, i - 1);
    append(&len, "}}");
    if (len >= sizeof schema - 1 || th_server_add_tool(server, &probe_tool) != TH_OK)
        return NULL;
    return &costly_tool;
}
