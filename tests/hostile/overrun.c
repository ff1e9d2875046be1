/* SPDX-License-Identifier: MIT */
/*
** overrun.c: hostile plugin whose handlers run past their deadline.
** overrun_ignore sleeps "ms" milliseconds whatever happens, then returns a
** result that must be discarded; overrun_poll asks for a 300 ms deadline in
** its descriptor and waits for the cancellation the deadline brings, which it
** reports on stderr; overrun_greedy asks for a deadline longer than any host's;
** overrun quick answers at once.
*/
#include <stdio.h>
#include <time.h>

#include <toolhost/plugin.h>

static void sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static th_rc ignore(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    json_object *v;
    long ms = json_object_object_get_ex(args, "ms", &v) ? (long)json_object_get_int(v) : 1000;
    sleep_ms(ms);
    /* Before the result is handed over: a test that reads this knows the
     * late result is on its way, and must never see it. */
    fprintf(stderr, "%s returning after %ld ms\n", th_call_tool_name(call), ms);
    return th_call_text(call, "late result");
}

static th_rc poll_cancel(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    /* At most 20 s, so a missing deadline fails the test, not the harness. */
    for (int i = 0; i < 2000 && !th_call_cancelled(call); i++)
        sleep_ms(10);
    if (th_call_cancelled(call))
        th_call_log(call, TH_LOG_WARNING, "saw the cancellation");
    return th_call_text(call, "late result");
}

static th_rc quick(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    return th_call_text(call, "quick");
}

#define MS_SCHEMA "{\"type\":\"object\",\"properties\":{\"ms\":{\"type\":\"integer\"}}}"

static const th_tool overrun_tool = {
    TH_TOOL_INIT,
    .name = "overrun",
    .description = "Answers at once: the tool a reused id is given.",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = quick,
};

TH_REGISTER(overrun)
{
    const th_tool ign = {
        TH_TOOL_INIT,
        .name = "overrun_ignore",
        .description = "Sleeps ms milliseconds, ignoring cancellation.",
        .input_schema = MS_SCHEMA,
        .handler = ignore,
    };
    const th_tool poll = {
        TH_TOOL_INIT,
        .name = "overrun_poll",
        .description = "Waits for cancellation; asks for a 300 ms deadline.",
        .input_schema = MS_SCHEMA,
        .handler = poll_cancel,
        .timeout_ms = 300,
    };
    const th_tool greedy = {
        TH_TOOL_INIT,
        .name = "overrun_greedy",
        .description = "Sleeps ms milliseconds; asks for a 10-minute deadline.",
        .input_schema = MS_SCHEMA,
        .handler = ignore,
        .timeout_ms = 600000,
    };
    th_server_add_tool(server, &ign);
    th_server_add_tool(server, &poll);
    th_server_add_tool(server, &greedy);
    return &overrun_tool;
}
