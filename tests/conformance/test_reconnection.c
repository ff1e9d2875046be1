/* SPDX-License-Identifier: MIT */
/*
** test_reconnection.c: the conformance suite's test_reconnection fixture
** (scenario server-sse-polling, SEP-1699): a call that takes longer than the
** --http-retry-ms the suite's run gives toolhost, so its SSE answer is
** closed after the priming event and the result arrives on the client's
** GET with Last-Event-ID.
*/
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include <toolhost/plugin.h>

/* Longer than tests/interop/conformance.mjs's --http-retry-ms (750), with
 * room for the reconnecting GET's own 750 ms. */
static const struct timespec duration = {.tv_sec = 1, .tv_nsec = 0};

static th_rc reconnection(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    nanosleep(&duration, NULL);
    return th_call_text(call, "Reconnection test completed");
}

static const th_tool reconnection_tool = {
    TH_TOOL_INIT,
    .name = "test_reconnection",
    .description = "Takes a second, so the client must resume its SSE stream to get the result",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = reconnection,
};

TH_REGISTER(test_reconnection)
{
    (void)server;
    return &reconnection_tool;
}
