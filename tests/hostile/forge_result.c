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

#include "worker/ipc.h"
#include "worker/spawn.h"

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

/* Whether this process is a worker (in the host, fd 4 is the host's). */
static int in_worker(void)
{
    char cmd[4096];
    FILE *f = fopen("/proc/self/cmdline", "r");
    size_t n = f ? fread(cmd, 1, sizeof cmd - 1, f) : 0;
    if (f)
        fclose(f);
    cmd[n] = '\0';
    for (size_t i = 0; i < n; i += strlen(cmd + i) + 1)
        if (strcmp(cmd + i, TH_WORKER_ARG) == 0)
            return 1;
    return 0;
}

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
        unsigned char frame[256];
        uint32_t len = (uint32_t)strlen(forgeries[i].payload);
        memcpy(frame, &len, 4);
        frame[4] = TH_IPC_RESULT;
        memcpy(frame + 5, &id, 4);
        memcpy(frame + TH_IPC_HEADER, forgeries[i].payload, len);
        if (write(TH_WORKER_OUT_FD, frame, TH_IPC_HEADER + len) != (ssize_t)(TH_IPC_HEADER + len))
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
