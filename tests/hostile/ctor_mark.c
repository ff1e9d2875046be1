/* SPDX-License-Identifier: MIT */
/*
** ctor_mark.c: a plugin whose constructor appends a line to the file named
** by $TH_TEST_CTOR_MARK, so a test can count how often its code was loaded
** (scanner, host, worker); its tool ctor_mark answers "marked".
*/
#include <stdio.h>
#include <stdlib.h>

#include <toolhost/plugin.h>

__attribute__((constructor)) static void mark(void)
{
    const char *path = getenv("TH_TEST_CTOR_MARK");
    FILE *f = path ? fopen(path, "a") : NULL;
    if (f) {
        fputs("loaded\n", f);
        fclose(f);
    }
}

static th_rc run(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    return th_call_text(call, "marked");
}

static const th_tool tool = {
    TH_TOOL_INIT,
    .name = "ctor_mark",
    .description = "Counts how often its plugin file is loaded",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = run,
};

TH_REGISTER(ctor_mark)
{
    (void)server;
    return &tool;
}
