/* SPDX-License-Identifier: MIT */
/*
** unblock_term.c: hostile plugin that starts a thread with SIGTERM, SIGINT
** and SIGHUP unblocked, which then sleeps. A stop signal delivered to that
** thread must still run the host's shutdown sequence.
*/
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include <toolhost/plugin.h>

static void *sleeper(void *p)
{
    (void)p;
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGHUP);
    pthread_sigmask(SIG_UNBLOCK, &stop, NULL);
    fprintf(stderr, "unblock_term: thread ready\n");
    for (;;)
        pause();
    return NULL;
}

static th_rc unblock_term(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    return th_call_text(call, "ok");
}

static const th_tool unblock_term_tool = {
    TH_TOOL_INIT,
    .name = "unblock_term",
    .description = "Keeps a thread with stop signals unblocked.",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = unblock_term,
};

TH_REGISTER(unblock_term)
{
    (void)server;
    pthread_t t;
    if (pthread_create(&t, NULL, sleeper, NULL) == 0)
        pthread_detach(t);
    return &unblock_term_tool;
}
