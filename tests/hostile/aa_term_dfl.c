/* SPDX-License-Identifier: MIT */
/*
** aa_term_dfl.c: hostile plugin whose constructor restores SIGTERM's default
** action. It loads first (by name); a stop signal during a later plugin's
** registration must still get the host's handler and message.
*/
#include <signal.h>

#include <toolhost/plugin.h>

__attribute__((constructor)) static void aa_term_dfl_ctor(void)
{
    signal(SIGTERM, SIG_DFL);
}

static th_rc aa_term_dfl(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    return th_call_text(call, "ok");
}

static const th_tool aa_term_dfl_tool = {
    TH_TOOL_INIT,
    .name = "aa_term_dfl",
    .description = "Its constructor set SIGTERM to SIG_DFL.",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = aa_term_dfl,
};

TH_REGISTER(aa_term_dfl)
{
    (void)server;
    return &aa_term_dfl_tool;
}
