/* SPDX-License-Identifier: MIT */
/*
** keep_call.c: hostile plugin that keeps its th_call past the handler's
** return. {"op":"stash"} stores the call in a global; {"op":"use"} uses the
** stored one from the next call and reports what each function returned;
** {"op":"thread"} leaves a detached thread that uses the call after the
** handler returned and reports on stderr. Every use must be refused.
*/
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <toolhost/plugin.h>

static th_call *kept;

/* What every th_call function does with CALL, as "name=rc ..." text. */
static void try_all(th_call *call, char *out, size_t size)
{
    int text = th_call_text(call, "ghost");
    int textf = th_call_textf(call, "ghost %d", 1);
    int error = th_call_error(call, "ghost");
    int structured = th_call_structured(call, json_object_new_object());
    int content = th_call_content(call, json_object_new_object());
    int image = th_call_image(call, "image/png", "AAAA");
    int link = th_call_resource_link(call, "file:///x", "x", NULL, NULL);
    int progress = th_call_progress(call, 1, 2, "ghost");
    int log = th_call_log(call, TH_LOG_ERROR, "ghost");
    snprintf(out, size,
             "text=%d textf=%d error=%d structured=%d content=%d image=%d link=%d progress=%d log=%d "
             "cancelled=%d name='%s'",
             text, textf, error, structured, content, image, link, progress, log, th_call_cancelled(call),
             th_call_tool_name(call));
}

static void *late_thread(void *p)
{
    struct timespec ts = {.tv_sec = 0, .tv_nsec = 300 * 1000000L};
    nanosleep(&ts, NULL);
    char out[512];
    try_all(p, out, sizeof out);
    fprintf(stderr, "keep_call thread: %s\n", out);
    return NULL;
}

static th_rc keep_call(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    json_object *v;
    const char *op = json_object_object_get_ex(args, "op", &v) ? json_object_get_string(v) : "";
    if (!strcmp(op, "stash")) {
        kept = call;
        return th_call_text(call, "stashed");
    }
    if (!strcmp(op, "use")) {
        char out[512];
        try_all(kept, out, sizeof out);
        return th_call_text(call, out);
    }
    pthread_t t;
    if (pthread_create(&t, NULL, late_thread, call) != 0)
        return TH_ERR_NOMEM;
    pthread_detach(t);
    return th_call_text(call, "thread started");
}

static const th_tool keep_call_tool = {
    TH_TOOL_INIT,
    .name = "keep_call",
    .description = "Keeps its th_call after returning and uses it later.",
    .input_schema = "{\"type\":\"object\",\"properties\":{\"op\":{\"type\":\"string\"}}}",
    .handler = keep_call,
};

TH_REGISTER(keep_call)
{
    (void)server;
    return &keep_call_tool;
}
