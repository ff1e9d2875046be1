/* SPDX-License-Identifier: MIT */
/*
** limits.c: hostile test plugin for the worker resource limits. "hog"
** allocates and touches "mib" MiB (512 by default) without checking what
** malloc returned, as careless code does; "fds" opens /dev/null until that
** fails and says how many it got; "pid" says which process serves it.
*/
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <toolhost/plugin.h>

#define MAX_OPENS 100000 /* whatever the inherited limit, stop somewhere */

static th_rc hog(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    json_object *v;
    size_t mib = json_object_object_get_ex(args, "mib", &v) ? (size_t)json_object_get_int64(v) : 512;
    size_t size = mib << 20;
    /* Volatile: the touches must happen, even through a NULL pointer. */
    volatile char *block = malloc(size);
    for (size_t i = 0; i < size; i += 4096)
        block[i] = 1;
    free((char *)block);
    return th_call_textf(call, "touched %zu MiB", mib);
}

static th_rc fds(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    static int opened[MAX_OPENS];
    int n = 0, why = 0;
    while (n < MAX_OPENS) {
        int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            why = errno;
            break;
        }
        opened[n++] = fd;
    }
    for (int i = 0; i < n; i++)
        close(opened[i]);
    return th_call_textf(call, "opened %d (%s)", n, why ? strerror(why) : "no failure");
}

static th_rc pid(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    return th_call_textf(call, "%ld", (long)getpid());
}

static const th_tool tools[] = {
    {
        TH_TOOL_INIT,
        .name = "hog",
        .description = "Allocate and touch mib MiB without checking malloc.",
        .input_schema = "{\"type\":\"object\",\"properties\":{\"mib\":{\"type\":\"integer\",\"minimum\":1}}}",
        .handler = hog,
    },
    {
        TH_TOOL_INIT,
        .name = "fds",
        .description = "Open /dev/null until it fails; say how many opened.",
        .input_schema = "{\"type\":\"object\",\"properties\":{}}",
        .handler = fds,
    },
    {
        TH_TOOL_INIT,
        .name = "pid",
        .description = "The serving process's id.",
        .input_schema = "{\"type\":\"object\",\"properties\":{}}",
        .handler = pid,
    },
};

TH_REGISTER(limits)
{
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++)
        if (th_server_add_tool(server, &tools[i]) != TH_OK)
            return NULL;
    return th_server_added_only(server);
}
