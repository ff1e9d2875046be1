/* SPDX-License-Identifier: MIT */
/*
** noisy_b.c: a plugin that writes to stderr while it is scanned, in its
** constructor and register function, the last line without a newline: the
** scanner's output must be tagged with this plugin, not its neighbour.
*/
#include <string.h>
#include <unistd.h>

#include <toolhost/plugin.h>

static void say(const char *s)
{
    ssize_t n = write(2, s, strlen(s));
    (void)n;
}

__attribute__((constructor)) static void noisy_ctor(void)
{
    say("NOISY-b-CTOR\n");
}

static th_rc noisy(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    return th_call_text(call, "ok");
}

static const th_tool noisy_tool = {
    TH_TOOL_INIT,
    .name = "noisy_b",
    .description = "Writes to stderr while it loads.",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = noisy,
};

TH_REGISTER(noisy_b)
{
    (void)server;
    say("NOISY-b-REGISTER no newline");
    return &noisy_tool;
}
