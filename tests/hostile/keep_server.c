/* SPDX-License-Identifier: MIT */
/*
** keep_server.c: hostile plugin that keeps its th_server past
** register_keep_server_tool: a tool call and a detached thread then try to
** add a tool through it. Both must be refused and the registry unchanged.
*/
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include <toolhost/plugin.h>

static th_server *kept;

static const th_tool ghost_tool = {
    TH_TOOL_INIT,
    .name = "ghost",
    .description = "Must never be registered.",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = NULL, /* set below: a valid descriptor, refused only for the handle */
};

static th_rc ghost(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    return th_call_text(call, "ghost");
}

static th_tool ghost_copy(void)
{
    th_tool t = ghost_tool;
    t.handler = ghost;
    return t;
}

static void *late_thread(void *p)
{
    (void)p;
    struct timespec ts = {.tv_sec = 0, .tv_nsec = 300 * 1000000L};
    nanosleep(&ts, NULL);
    th_tool t = ghost_copy();
    int rc = th_server_add_tool(kept, &t);
    fprintf(stderr, "keep_server thread: add=%d errmsg='%s'\n", rc, th_server_errmsg(kept));
    return NULL;
}

static th_rc keep_server(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    th_tool t = ghost_copy();
    int rc = th_server_add_tool(kept, &t);
    return th_call_textf(call, "add=%d errmsg='%s'", rc, th_server_errmsg(kept));
}

static const th_tool keep_server_tool = {
    TH_TOOL_INIT,
    .name = "keep_server",
    .description = "Keeps its th_server and registers through it later.",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = keep_server,
};

TH_REGISTER(keep_server)
{
    kept = server;
    pthread_t t;
    if (pthread_create(&t, NULL, late_thread, NULL) == 0)
        pthread_detach(t);
    return &keep_server_tool;
}
