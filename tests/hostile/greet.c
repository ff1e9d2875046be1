/* SPDX-License-Identifier: MIT */
/*
** greet.c: a plugin configured by its settings: "prefix" goes
** before every greeting, and "token" is a credential it reports only as
** present or not. The tool also says whether TOOLHOST_GREET_TOKEN is in
** its own environment (a worker must not inherit it) and logs, at info,
** which settings it found, never their values.
*/
#include <stdlib.h>
#include <string.h>
#include <toolhost/plugin.h>

/* What the handler needs, copied at registration: the strings
 * th_server_config() returns are valid only until then. */
typedef struct greet_conf {
    char *prefix;
    bool has_token;
} greet_conf;

static greet_conf conf;

static th_rc greet(th_call *call, json_object *args, void *user_data)
{
    const greet_conf *c = user_data;
    json_object *who;
    const char *name = json_object_object_get_ex(args, "name", &who) ? json_object_get_string(who) : "world";
    json_object *s = json_object_new_object();
    json_object_object_add(s, "text", json_object_new_string(name));
    json_object_object_add(s, "has_token", json_object_new_boolean(c->has_token));
    json_object_object_add(s, "env_visible", json_object_new_boolean(getenv("TOOLHOST_GREET_TOKEN") != NULL));
    th_rc rc = th_call_textf(call, "%s%s", c->prefix ? c->prefix : "Hello, ", name);
    return rc == TH_OK ? th_call_structured(call, s) : rc;
}

static void release(void *user_data)
{
    greet_conf *c = user_data;
    free(c->prefix);
    c->prefix = NULL;
}

static const th_tool greet_tool = {
    TH_TOOL_INIT,
    .name = "greet",
    .description = "Greets NAME with the configured prefix.",
    .input_schema = "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}}}",
    .handler = greet,
    .user_data = &conf,
    .destroy = release,
};

TH_REGISTER(greet)
{
    const char *prefix = th_server_config(server, "prefix");
    const char *token = th_server_config(server, "token");
    conf.prefix = prefix ? strdup(prefix) : NULL;
    conf.has_token = token != NULL;
    th_server_log(server, TH_LOG_INFO, "greet settings: prefix %s, token %s", prefix ? "set" : "unset",
                  token ? "set" : "unset");
    return &greet_tool;
}
