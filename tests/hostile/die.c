/* SPDX-License-Identifier: MIT */
/*
** die.c: hostile plugin whose handler ends its process as "how" says:
** "abort", "exit" (exit(3)), "_exit" (_exit(4)), "exit125" (exit(125)), "hang" (loops for ever,
** ignoring cancellation), "print" (writes a marker line to stdout and
** answers), anything else answers "alive". In process isolation each
** must fail only the calls of this plugin's worker.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <toolhost/plugin.h>

static th_rc die(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    json_object *v;
    const char *how = json_object_object_get_ex(args, "how", &v) ? json_object_get_string(v) : "";
    if (!strcmp(how, "abort"))
        abort();
    if (!strcmp(how, "exit"))
        exit(3);
    if (!strcmp(how, "_exit"))
        _exit(4);
    if (!strcmp(how, "exit125")) /* the status a lost socket once had */
        exit(125);
    if (!strcmp(how, "hang")) {
        fprintf(stderr, "die: hanging\n");
        for (;;) {
            struct timespec ts = {0, 10 * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    if (!strcmp(how, "print"))
        printf("DIE-STDOUT-MARK pid %ld\n", (long)getpid());
    return th_call_textf(call, "alive %ld", (long)getpid());
}

static const th_tool die_tool = {
    TH_TOOL_INIT,
    .name = "die",
    .description = "Ends its own process in the way the argument says.",
    .input_schema = "{\"type\":\"object\",\"properties\":{\"how\":{\"type\":\"string\"}}}",
    .handler = die,
};

TH_REGISTER(die)
{
    (void)server;
    return &die_tool;
}
