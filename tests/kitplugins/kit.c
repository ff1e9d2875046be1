/* SPDX-License-Identifier: MIT */
/*
** kit.c: test plugin kit.so for the test kit's own tests (test_testing).
** "kit" adds a and b (structuredContent, a log line, two progress steps);
** "kit_ask" elicits, samples or lists roots as "what" says and returns the
** client's answer; "kit_wait" sleeps in steps of 5 ms until cancelled,
** saying how it ended; "kit_setting" returns its plugin setting "greeting";
** "kit_crash" dies of SIGSEGV, as a buggy handler would.
*/
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <toolhost/plugin.h>

static char greeting[128] = "unset", token[128] = "unset";

static th_rc kit(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    json_object *a, *b;
    json_object_object_get_ex(args, "a", &a);
    json_object_object_get_ex(args, "b", &b);
    long long sum = json_object_get_int64(a) + json_object_get_int64(b);
    th_call_log(call, TH_LOG_INFO, "adding %lld and %lld", (long long)json_object_get_int64(a),
                (long long)json_object_get_int64(b));
    th_call_progress(call, 1, 2, "half");
    th_call_progress(call, 2, 2, "done");
    json_object *s = json_object_new_object();
    json_object_object_add(s, "sum", json_object_new_int64(sum));
    return th_call_structured(call, s);
}

static th_rc kit_ask(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    json_object *w, *answer = NULL;
    const char *what = json_object_object_get_ex(args, "what", &w) ? json_object_get_string(w) : "";
    th_rc rc;
    if (strcmp(what, "elicit") == 0)
        rc = th_call_elicit(call, "name", "Your name?",
                            "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}}}", &answer);
    else if (strcmp(what, "sample") == 0)
        rc = th_call_sample(call, "haiku", "Write a haiku", 50, &answer);
    else
        rc = th_call_list_roots(call, "roots", &answer);
    if (rc == TH_ERR_INPUT_REQUIRED)
        return rc;
    if (rc != TH_OK)
        return th_call_error(call, "asking failed: %s", rc == TH_ERR_IO ? "TH_ERR_IO" : "another code");
    return th_call_structured(call, answer);
}

static th_rc kit_wait(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    (void)args;
    struct timespec step = {0, 5000000};
    /* Progress first, so a test can cancel when the handler is known to run. */
    th_call_progress(call, 0, -1, "waiting");
    for (int i = 0; i < 12000 && !th_call_cancelled(call); i++)
        nanosleep(&step, NULL);
    return th_call_text(call, th_call_cancelled(call) ? "cancelled" : "not cancelled");
}

static th_rc kit_setting(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    json_object *k;
    bool secret = json_object_object_get_ex(args, "key", &k) && strcmp(json_object_get_string(k), "token") == 0;
    return th_call_text(call, secret ? token : greeting);
}

static th_rc read_note(th_call *call, const char *uri, json_object *vars, void *user_data)
{
    (void)vars;
    (void)user_data;
    th_call_log(call, TH_LOG_INFO, "reading %s", uri);
    return th_call_text(call, "a note");
}

static th_rc read_item(th_call *call, const char *uri, json_object *vars, void *user_data)
{
    (void)uri;
    (void)user_data;
    json_object *v;
    const char *id = json_object_object_get_ex(vars, "id", &v) ? json_object_get_string(v) : "";
    if (strcmp(id, "missing") == 0)
        return TH_ERR_NOT_FOUND;
    return th_call_textf(call, "item %s", id);
}

static const th_resource note = {TH_RESOURCE_INIT, .uri = "kit://note", .name = "note", .mime_type = "text/plain",
                                 .read = read_note};
static const th_resource items = {TH_RESOURCE_INIT, .uri_template = "kit://items/{id}", .name = "items",
                                  .mime_type = "text/plain", .read = read_item};

static th_rc kit_crash(th_call *call, json_object *args, void *user_data)
{
    (void)call;
    (void)args;
    (void)user_data;
    raise(SIGSEGV);
    return TH_OK;
}

#define OBJ(props) "{\"type\":\"object\",\"properties\":{" props "}}"
static const th_tool tools[] = {
    {TH_TOOL_INIT, .name = "kit_ask", .description = "Ask the client something.",
     .input_schema = OBJ("\"what\":{\"enum\":[\"elicit\",\"sample\",\"roots\"]}"), .handler = kit_ask},
    {TH_TOOL_INIT, .name = "kit_wait", .description = "Wait until the call is cancelled.", .input_schema = OBJ(""),
     .handler = kit_wait},
    {TH_TOOL_INIT, .name = "kit_setting", .description = "Return the setting greeting, or the secret token.",
     .input_schema = OBJ("\"key\":{\"enum\":[\"greeting\",\"token\"]}"), .handler = kit_setting},
    {TH_TOOL_INIT, .name = "kit_crash", .description = "Crash with SIGSEGV.", .input_schema = OBJ(""), .handler = kit_crash},
};

static const th_tool kit_tool = {
    TH_TOOL_INIT,
    .name = "kit",
    .description = "Add the integers a and b.",
    .input_schema = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"},\"b\":{\"type\":\"integer\"}},"
                    "\"required\":[\"a\",\"b\"]}",
    .handler = kit,
};

TH_REGISTER(kit)
{
    const char *g = th_server_config(server, "greeting");
    if (g)
        snprintf(greeting, sizeof greeting, "%s", g);
    const char *t = th_server_config(server, "token");
    if (t)
        snprintf(token, sizeof token, "%s", t);
    if (th_server_add_resource(server, &note) != TH_OK || th_server_add_resource_template(server, &items) != TH_OK)
        return NULL;
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++)
        if (th_server_add_tool(server, &tools[i]) != TH_OK)
            return NULL;
    return &kit_tool;
}
