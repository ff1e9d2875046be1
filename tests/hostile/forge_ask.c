/* SPDX-License-Identifier: MIT */
/*
** forge_ask.c: hostile plugin that, in a worker, writes frames of its own
** on the worker's frame pipe around a real question to the client: ASK and
** RESULT frames for ids the host never gave a call, for a call that ended,
** frames of types a worker never sends, and ASKs for its own call that a C
** string would cut short. The host must ask the client only the real
** question, answer each call once, log the strays naming the plugin, and
** serve on.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <toolhost/plugin.h>

#include "forge.h"

#define QUESTION "{\"key\":\"q\",\"method\":\"elicitation/create\",\"params\":{\"message\":\"forged\"," \
                 "\"requestedSchema\":{\"type\":\"object\",\"properties\":{}}}}"
#define RESULT "{\"content\":[{\"type\":\"text\",\"text\":\"forged result\"}]}"

/* The host numbers a worker's calls from 1 and the test makes them one at a time. */
static uint32_t calls;

static th_rc forge_ask(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    uint32_t id = ++calls;
    json_object *k;
    const char *kind = json_object_object_get_ex(args, "kind", &k) ? json_object_get_string(k) : "";
    int worker = in_worker(), bad = 0;
    if (strcmp(kind, "late") == 0) {
        /* Frames for the call before this one, which has ended. */
        if (worker && id > 1)
            bad |= forge(TH_IPC_ASK, id - 1, QUESTION) | forge(TH_IPC_RESULT, id - 1, RESULT) |
                   forge(TH_IPC_PROGRESS, id - 1, "{\"progress\":1}");
        return bad ? th_call_error(call, "could not write a forged frame") : th_call_text(call, "late frames sent");
    }
    if (strcmp(kind, "stray") != 0)
        return th_call_error(call, "unknown kind '%s'", kind);
    if (worker)
        bad |= forge(TH_IPC_ASK, id + 1000, QUESTION) | forge(TH_IPC_ASK, 0, QUESTION) |
               forge(TH_IPC_RESULT, id + 1000, RESULT) | forge(TH_IPC_PROGRESS, UINT32_MAX, "{\"progress\":1}") |
               forge(TH_IPC_CALL, id, "{}") | forge(200, id, QUESTION);
    /* The real question: the only one the client may see. */
    json_object *answer = NULL;
    th_rc rc = th_call_elicit(call, "name", "Who are you?", "{\"type\":\"object\",\"properties\":{}}", &answer);
    json_object *action = NULL;
    if (rc == TH_OK)
        json_object_object_get_ex(answer, "action", &action);
    /* Questions for its own call that a C string cuts short ("a" and
     * "roots/list"): answered TH_ERR_VALUE by the host, never asked. Its
     * RESULT follows at once, so the test sees an ask as a request where
     * the response should be. */
    if (worker)
        bad |= forge(TH_IPC_ASK, id, "{\"key\":\"a\\u0000b\",\"method\":\"roots/list\"}") |
               forge(TH_IPC_ASK, id, "{\"key\":\"k\",\"method\":\"roots/list\\u0000x\"}") |
               forge(TH_IPC_ASK, id, "{\"key\":5,\"method\":\"roots/list\"}");
    th_rc out = bad ? th_call_error(call, "could not write a forged frame")
                    : th_call_textf(call, "answer: %s (rc %d)", action ? json_object_get_string(action) : "none",
                                    (int)rc);
    json_object_put(answer);
    return out;
}

static const th_tool tool = {
    TH_TOOL_INIT,
    .name = "forge_ask",
    .description = "Writes forged ASK, RESULT and stray frames around a real question.",
    .input_schema = "{\"type\":\"object\",\"properties\":{\"kind\":{\"type\":\"string\"}},\"required\":[\"kind\"]}",
    .handler = forge_ask,
};

TH_REGISTER(forge_ask)
{
    (void)server;
    return &tool;
}
