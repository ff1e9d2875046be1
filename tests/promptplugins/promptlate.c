/* SPDX-License-Identifier: MIT */
/*
** promptlate.c: a second plugin, loaded after promptfix, registering a
** prompt promptfix already has: refused, the message naming promptfix as
** the first registrant.
*/
#include <toolhost/plugin.h>

static th_rc get(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    return th_call_text(call, "dup");
}

TH_REGISTER(promptlate)
{
    static const th_prompt greet = {TH_PROMPT_INIT, .name = "greet", .get = get};
    static const th_prompt own = {TH_PROMPT_INIT, .name = "dup_own", .get = get};
    th_server_add_prompt(server, &greet);
    th_server_add_prompt(server, &own);
    return th_server_added_only(server);
}
