/* SPDX-License-Identifier: MIT */
/*
** flip.c: test plugin flip.so for the hot-reload tests, built three ways
** from this file: v1 and v2 (FLIP_VERSION; the description, schema and
** answer name the version, so a replacement shows in tools/list and in
** calls) and bad (FLIP_BAD: a descriptor the registry refuses, a
** replacement that must leave the previous version serving).
*/
#include <stdbool.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include <toolhost/plugin.h>

#ifndef FLIP_VERSION
#define FLIP_VERSION 0
#endif
#define STR_(x) #x
#define STR(x) STR_(x)

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Unloading this object says so, with the process, on stderr: the tests
 * see when the host dlclose()s a replaced version. */
__attribute__((destructor)) static void flip_unloaded(void)
{
    fprintf(stderr, "flip v%d unloaded in %ld\n", FLIP_VERSION, (long)getpid());
}

/* Sleeps "ms" milliseconds, or until file "gate" exists (honouring
 * cancellation), then says which version of the code ran: the version
 * compiled into this very object. */
static th_rc flip(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    json_object *v;
    long long ms = 0;
    if (json_object_object_get_ex(args, "ms", &v))
        ms = json_object_get_int64(v);
    const char *gate = NULL;
    if (json_object_object_get_ex(args, "gate", &v))
        gate = json_object_get_string(v);
    long long start = now_ms();
    while ((gate ? access(gate, F_OK) != 0 : now_ms() - start < ms) && !th_call_cancelled(call)) {
        struct timespec ts = {0, 5 * 1000000L};
        nanosleep(&ts, NULL);
    }
    return th_call_textf(call, "flip v%d", FLIP_VERSION);
}

static const th_tool flip_tool = {
    TH_TOOL_INIT,
    .name = "flip",
#ifdef FLIP_BAD
    .description = "short", /* under the 10-character minimum: refused */
#else
    .description = "Answer with the version of this plugin, version " STR(FLIP_VERSION) ".",
#endif
    .input_schema = "{\"type\":\"object\",\"properties\":{\"ms\":{\"type\":\"integer\",\"minimum\":0},"
                    "\"gate\":{\"type\":\"string\"}"
#if FLIP_VERSION == 2
                    ",\"v2_only\":{\"type\":\"boolean\"}"
#endif
                    "}}",
    .handler = flip,
};

TH_REGISTER(flip)
{
    (void)server;
    return &flip_tool;
}
