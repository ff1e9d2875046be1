/* SPDX-License-Identifier: MIT */
/*
** resrefused.c: a plugin that registers a resource and then declines
** (returns NULL): its resource must be taken back with it.
*/
#include <toolhost/plugin.h>

static th_rc read_nothing(th_call *call, const char *uri, json_object *vars, void *user_data)
{
    (void)vars;
    (void)user_data;
    return th_call_resource_text(call, uri, NULL, "never served");
}

TH_REGISTER(resrefused)
{
    th_resource r = {TH_RESOURCE_INIT, .uri = "mem://staged", .name = "staged", .read = read_nothing};
    th_server_add_resource(server, &r);
    return NULL;
}
