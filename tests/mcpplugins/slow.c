/* SPDX-License-Identifier: MIT */
/*
** slow.c: test plugin slow.so for the MCP integration tests. It sleeps in
** small steps for "ms" milliseconds, polling th_call_cancelled() (unless
** "ignore_cancel"), and says on stderr when it saw a cancellation. With
** "until_peak" N it sleeps on until N calls have run at once: a test of
** overlap then does not depend on how fast the machine starts them. With
** "mark" it creates that file as it starts: a test waits for it, not for
** a while that is usually enough. With "gate" it sleeps on until that
** file exists (at most a minute past "ms"): it ends when the test says.
** With "bytes" N its answer is N bytes of text.
*/
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <toolhost/plugin.h>

/* Calls running now, and the most ever seen at once (proves overlap). */
static atomic_int running;
static atomic_int peak;

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static th_rc slow(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    json_object *v;
    long long ms = 0;
    bool ignore = false, progress = false;
    const char *tag = "-";
    if (json_object_object_get_ex(args, "ms", &v))
        ms = json_object_get_int64(v);
    if (json_object_object_get_ex(args, "ignore_cancel", &v))
        ignore = json_object_get_boolean(v);
    if (json_object_object_get_ex(args, "progress", &v))
        progress = json_object_get_boolean(v);
    if (json_object_object_get_ex(args, "tag", &v))
        tag = json_object_get_string(v);
    int until_peak = json_object_object_get_ex(args, "until_peak", &v) ? json_object_get_int(v) : 0;
    const char *gate = json_object_object_get_ex(args, "gate", &v) ? json_object_get_string(v) : NULL;
    if (json_object_object_get_ex(args, "mark", &v)) {
        FILE *f = fopen(json_object_get_string(v), "w");
        if (f)
            fclose(f);
    }

    int now = atomic_fetch_add(&running, 1) + 1;
    int seen = atomic_load(&peak);
    while (now > seen && !atomic_compare_exchange_weak(&peak, &seen, now))
        ;

    long long start = now_ms(), waited = 0;
    bool cancelled = false;
    int step = 0;
    /* At most a minute past MS waiting for the peak or the gate. */
    while ((waited = now_ms() - start) < ms ||
           ((atomic_load(&peak) < until_peak || (gate && access(gate, F_OK) != 0)) && waited < ms + 60000)) {
        if (!ignore && th_call_cancelled(call)) {
            cancelled = true;
            break;
        }
        /* Progress every 50 ms, to show none is sent once cancelled. */
        if (progress && step % 5 == 0)
            th_call_progress(call, (double)waited, (double)ms, NULL);
        step++;
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (th_call_cancelled(call))
        cancelled = true;
    atomic_fetch_sub(&running, 1);
    if (cancelled) /* after cancellation this must reach stderr, not the client */
        th_call_log(call, TH_LOG_WARNING, "slow[%s]: saw cancellation after %lld ms", tag, waited);
    long long bytes = json_object_object_get_ex(args, "bytes", &v) ? json_object_get_int64(v) : 0;
    /* Bounded here, not by the schema, which stays types-only (below). */
    if (bytes > 16777216)
        bytes = 16777216;
    if (bytes > 0) { /* a large answer, for what the host keeps of it */
        char *big = malloc((size_t)bytes + 1);
        if (!big)
            return th_call_error(call, "out of memory");
        memset(big, 'x', (size_t)bytes);
        big[bytes] = '\0';
        th_rc rc = th_call_text(call, big);
        free(big);
        return rc;
    }
    return th_call_textf(call, "slow[%s]: slept %lld ms, peak %d", tag, waited, atomic_load(&peak));
}

static const th_tool slow_tool = {
    TH_TOOL_INIT,
    .name = "slow",
    .description = "Sleep for ms milliseconds in small steps, honouring cancellation.",
    /* Types only: the host checks such arguments without a walk that
     * polls for cancellation, so a call cancelled while queued reaches the
     * queue's own check. */
    .input_schema = "{\"type\":\"object\",\"properties\":{"
                    "\"ms\":{\"type\":\"integer\"},"
                    "\"ignore_cancel\":{\"type\":\"boolean\"},"
                    "\"progress\":{\"type\":\"boolean\"},"
                    "\"tag\":{\"type\":\"string\"},"
                    "\"until_peak\":{\"type\":\"integer\"},"
                    "\"mark\":{\"type\":\"string\"},"
                    "\"gate\":{\"type\":\"string\"},"
                    "\"bytes\":{\"type\":\"integer\"}},"
                    "\"required\":[\"ms\"]}",
    .handler = slow,
};

TH_REGISTER(slow)
{
    (void)server;
    return &slow_tool;
}
