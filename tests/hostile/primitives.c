/* SPDX-License-Identifier: MIT */
/*
** primitives.c: a hostile plugin for the callbacks beyond tools
** (test_hostile_primitives): a resource read, a prompt get and a
** completion that crash with SIGSEGV, a 50 MB resource, invalid UTF-8 in a
** resource's and a prompt's text, and functions that outlast a deadline,
** one stopping when cancelled and one ignoring it; "own" ones have a
** deadline of their own (timeout_ms), "greedy" ones ask for a longer one
** than the host's.
*/
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <toolhost/plugin.h>

#define HUGE_BYTES ((size_t)50 << 20)

/* Until cancelled, then a result that must never reach the client. The
 * line on stderr comes before the result is handed over: a test that has
 * read it knows the late result is on its way, and must never see it. The
 * first line tells a test the function has left the host's queue. */
static th_rc until_cancelled(th_call *call, const char *what)
{
    fprintf(stderr, "primitives: %s running\n", what);
    while (!th_call_cancelled(call))
        usleep(10 * 1000);
    fprintf(stderr, "primitives: %s returning after its cancellation\n", what);
    return th_call_text(call, "late");
}

/* Cancellation ignored: only a killed worker ends this. */
__attribute__((noreturn)) static void forever(void)
{
    for (;;)
        sleep(1);
}

static th_rc read_fn(th_call *call, const char *uri, json_object *vars, void *user_data)
{
    (void)vars;
    (void)user_data;
    const char *what = uri + strlen("hostile://");
    if (strcmp(what, "segv") == 0)
        raise(SIGSEGV);
    if (strcmp(what, "slow") == 0 || strcmp(what, "own") == 0 || strcmp(what, "greedy") == 0)
        return until_cancelled(call, "read");
    if (strcmp(what, "hang") == 0)
        forever();
    if (strcmp(what, "badutf8") == 0)
        return th_call_resource_text(call, uri, "text/plain", "caf\xe9 \xff end");
    if (strcmp(what, "huge") == 0) {
        char *text = malloc(HUGE_BYTES + 1);
        if (!text)
            return TH_ERR_NOMEM;
        memset(text, 'x', HUGE_BYTES);
        text[HUGE_BYTES] = '\0';
        th_rc rc = th_call_resource_text(call, uri, "text/plain", text);
        free(text);
        return rc;
    }
    return th_call_resource_text(call, uri, "text/plain", "fine");
}

static th_rc get_fn(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    const char *what = user_data;
    if (strcmp(what, "segv") == 0)
        raise(SIGSEGV);
    if (strcmp(what, "slow") == 0 || strcmp(what, "own") == 0 || strcmp(what, "greedy") == 0)
        return until_cancelled(call, "get");
    if (strcmp(what, "hang") == 0)
        forever();
    if (strcmp(what, "bad_utf8") == 0)
        return th_call_text(call, "caf\xe9 \xff end");
    return th_call_text(call, "fine");
}

/* The value typed so far says how to misbehave. */
static th_rc complete_fn(th_call *call, const char *argument, const char *value, json_object *context,
                         void *user_data)
{
    (void)argument;
    (void)context;
    (void)user_data;
    if (strcmp(value, "segv") == 0)
        raise(SIGSEGV);
    if (strcmp(value, "slow") == 0)
        return until_cancelled(call, "completion");
    if (strcmp(value, "hang") == 0)
        forever();
    return th_call_textf(call, "%s-done", value);
}

TH_REGISTER(primitives)
{
    static const char *const uris[] = {"hostile://segv", "hostile://huge", "hostile://badutf8", "hostile://slow",
                                       "hostile://hang", "hostile://fine"};
    for (size_t i = 0; i < sizeof uris / sizeof uris[0]; i++) {
        th_resource r = {TH_RESOURCE_INIT, .uri = uris[i], .name = uris[i] + strlen("hostile://"), .read = read_fn};
        th_server_add_resource(server, &r);
    }
    static const char *const prompts[] = {"segv", "bad_utf8", "slow", "hang", "fine"};
    for (size_t i = 0; i < sizeof prompts / sizeof prompts[0]; i++) {
        th_prompt p = {TH_PROMPT_INIT, .name = prompts[i], .arguments = "[{\"name\":\"x\"}]", .get = get_fn,
                       .user_data = (void *)prompts[i]};
        th_server_add_prompt(server, &p);
    }
    th_completion c = {TH_COMPLETION_INIT, .prompt = "fine", .complete = complete_fn};
    th_server_add_completion(server, &c);
    /* Deadlines of their own, shorter than the host's (timeout_ms). */
    th_resource own = {TH_RESOURCE_INIT, .uri = "hostile://own", .name = "own", .read = read_fn, .timeout_ms = 300};
    th_server_add_resource(server, &own);
    th_prompt pown = {TH_PROMPT_INIT, .name = "own", .arguments = "[{\"name\":\"x\"}]", .get = get_fn,
                      .user_data = (void *)"own", .timeout_ms = 300};
    th_server_add_prompt(server, &pown);
    th_completion cown = {TH_COMPLETION_INIT, .prompt = "own", .complete = complete_fn, .timeout_ms = 300};
    th_server_add_completion(server, &cown);
    /* Longer than any host deadline a test sets: the host's must win. */
    th_resource greedy = {TH_RESOURCE_INIT, .uri = "hostile://greedy", .name = "greedy", .read = read_fn,
                          .timeout_ms = 600000};
    th_server_add_resource(server, &greedy);
    th_prompt pgreedy = {TH_PROMPT_INIT, .name = "greedy", .arguments = "[{\"name\":\"x\"}]", .get = get_fn,
                         .user_data = (void *)"greedy", .timeout_ms = 600000};
    th_server_add_prompt(server, &pgreedy);
    th_completion cgreedy = {TH_COMPLETION_INIT, .prompt = "greedy", .complete = complete_fn, .timeout_ms = 600000};
    th_server_add_completion(server, &cgreedy);
    return th_server_added_only(server);
}
