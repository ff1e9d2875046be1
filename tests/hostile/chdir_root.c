/* SPDX-License-Identifier: MIT */
/*
** chdir_root.c: hostile plugin chdir_root.so, whose constructor changes the
** working directory to "/" while the host loads it. Plugins after it in a
** relative --plugin-dir must still load.
*/
#include <unistd.h>

#include <toolhost/plugin.h>

__attribute__((constructor)) static void move_away(void)
{
    if (chdir("/") != 0)
        _exit(99); /* the test would prove nothing */
}

static th_rc handler(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    return th_call_text(call, "moved to /");
}

static const th_tool tool = {
    TH_TOOL_INIT,
    .name = "chdir_root",
    .description = "Changed the working directory while it was loaded.",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = handler,
};

TH_REGISTER(chdir_root)
{
    (void)server;
    return &tool;
}
