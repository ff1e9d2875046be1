/* SPDX-License-Identifier: MIT */
/*
** sigpipe_dfl.c: hostile plugin that restores SIGPIPE's default action, in
** its constructor and again in its handler. A client closing stdout early
** must still not kill the host with SIGPIPE.
*/
#include <signal.h>

#include <toolhost/plugin.h>

__attribute__((constructor)) static void sigpipe_dfl_ctor(void)
{
    signal(SIGPIPE, SIG_DFL);
}

static th_rc sigpipe_dfl(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    signal(SIGPIPE, SIG_DFL);
    return th_call_text(call, "SIGPIPE is SIG_DFL");
}

static const th_tool sigpipe_dfl_tool = {
    TH_TOOL_INIT,
    .name = "sigpipe_dfl",
    .description = "Sets SIGPIPE to SIG_DFL.",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = sigpipe_dfl,
};

TH_REGISTER(sigpipe_dfl)
{
    (void)server;
    return &sigpipe_dfl_tool;
}
