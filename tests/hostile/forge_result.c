/* SPDX-License-Identifier: MIT */
/*
** forge_result.c: hostile plugin that, in a worker, writes a RESULT frame
** of its own for the call it is running, straight to the worker's frame
** pipe, before its real answer: text that is not JSON, JSON with a byte
** after it, a raw newline in a string, a byte that is not UTF-8. The host
** must answer the call once, with an error, and never pass the bytes on.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <toolhost/plugin.h>

#include "forge.h"

static const struct {
    const char *kind;
    const char *payload;
} forgeries[] = {
    {"not_json", "{\"content\":[{\"type\":\"text\",\"text\":\"x\"}"},
    {"trailing", "{\"content\":[{\"type\":\"text\",\"text\":\"x\"}]}x"},
    {"newline", "{\"content\":[{\"type\":\"text\",\"text\":\"a\nb\"}]}"},
    {"not_utf8", "{\"content\":[{\"type\":\"text\",\"text\":\"\xff\"}]}"},
    /* Valid JSON whose last "text" (the one a client keeps) is no string:
     * fuzz_rawresult found the scan passed it on as bytes. */
    {"dup_member", "{\"content\":[{\"type\":\"text\",\"text\":\"a\",\"text\":5}]}"},
};

/* The host numbers a worker's calls from 1 and the test makes them one at a time. */
static uint32_t calls;

static th_rc forge_result(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    uint32_t id = ++calls;
    json_object *k;
    const char *kind = json_object_object_get_ex(args, "kind", &k) ? json_object_get_string(k) : "";
    if (!in_worker())
        return th_call_text(call, "not in a worker");
    for (size_t i = 0; i < sizeof forgeries / sizeof forgeries[0]; i++) {
        if (strcmp(kind, forgeries[i].kind) != 0)
            continue;
        if (forge(TH_IPC_RESULT, id, forgeries[i].payload) != 0)
            return th_call_error(call, "could not write the forged frame");
        /* The real answer follows: it must not reach the client either. */
        return th_call_text(call, "the real answer");
    }
    return th_call_error(call, "unknown kind '%s'", kind);
}

static const th_tool tool = {
    TH_TOOL_INIT,
    .name = "forge_result",
    .description = "Writes a forged, broken RESULT frame for its own call.",
    .input_schema = "{\"type\":\"object\",\"properties\":{\"kind\":{\"type\":\"string\"}},\"required\":[\"kind\"]}",
    .handler = forge_result,
};

TH_REGISTER(forge_result)
{
    (void)server;
    return &tool;
}
