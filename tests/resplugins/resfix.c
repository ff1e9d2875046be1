/* SPDX-License-Identifier: MIT */
/*
** resfix.c: the resource test plugin. Plain resources (text, blob, a
** parameterless failure), a template whose id picks the outcome (found,
** not found, refused, crash, huge), five numbered resources for paging,
** and a tool "touch" that announces an update of the URI it is given.
*/
#include <stdlib.h>
#include <string.h>

#include <toolhost/plugin.h>

static th_rc read_hello(th_call *call, const char *uri, json_object *vars, void *user_data)
{
    (void)vars;
    (void)user_data;
    th_call_log(call, TH_LOG_INFO, "reading %s", uri);
    return th_call_text(call, "hello from resfix"); /* a plain text block: text of URI */
}

static th_rc read_blob(th_call *call, const char *uri, json_object *vars, void *user_data)
{
    (void)vars;
    (void)user_data;
    return th_call_resource_blob(call, uri, "application/octet-stream", "AAEC");
}

static th_rc read_item(th_call *call, const char *uri, json_object *vars, void *user_data)
{
    (void)user_data;
    json_object *v;
    const char *id = json_object_object_get_ex(vars, "id", &v) ? json_object_get_string(v) : "";
    if (strcmp(id, "missing") == 0)
        return TH_ERR_NOT_FOUND;
    if (strcmp(id, "refused") == 0) {
        th_call_error(call, "item '%s' is off limits", id);
        return TH_ERR_VALUE;
    }
    if (strcmp(id, "broken") == 0)
        return th_call_error(call, "the item store is down");
    if (strcmp(id, "crash") == 0)
        abort();
    if (strcmp(id, "huge") == 0) {
        size_t n = 4u << 20;
        char *big = malloc(n + 1);
        if (!big)
            return TH_ERR_NOMEM;
        memset(big, 'x', n);
        big[n] = '\0';
        th_rc rc = th_call_resource_text(call, uri, "text/plain", big);
        free(big);
        return rc;
    }
    /* Two parts: a read may return several. */
    th_call_textf(call, "item %s", id);
    return th_call_resource_text(call, "mem://items/meta", "application/json", "{\"part\":2}");
}

static th_rc touch(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    json_object *uri;
    json_object_object_get_ex(args, "uri", &uri);
    th_rc rc = th_resource_updated(json_object_get_string(uri));
    return th_call_textf(call, "%s", rc == TH_OK ? "touched" : "refused");
}

static const th_tool touch_tool = {
    TH_TOOL_INIT,
    .name = "resfix",
    .description = "Announce an update of the resource at uri",
    .input_schema = "{\"type\":\"object\",\"properties\":{\"uri\":{\"type\":\"string\"}},\"required\":[\"uri\"]}",
    .handler = touch,
};

TH_REGISTER(resfix)
{
    static const th_resource fixed[] = {
        {TH_RESOURCE_INIT, .uri = "mem://hello", .name = "hello", .title = "Hello", .description = "A greeting",
         .mime_type = "text/plain", .size = 17, .annotations = "{\"audience\":[\"user\"],\"priority\":0.5}",
         .read = read_hello},
        {TH_RESOURCE_INIT, .uri = "mem://blob", .name = "blob", .read = read_blob},
        {TH_RESOURCE_INIT, .uri = "mem://n/1", .name = "n1", .read = read_blob},
        {TH_RESOURCE_INIT, .uri = "mem://n/2", .name = "n2", .read = read_blob},
        {TH_RESOURCE_INIT, .uri = "mem://n/3", .name = "n3", .read = read_blob},
    };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        th_server_add_resource(server, &fixed[i]);
    th_resource items = {TH_RESOURCE_INIT, .uri_template = "mem://items/{id}", .name = "items",
                         .mime_type = "text/plain", .read = read_item};
    th_server_add_resource_template(server, &items);
    /* Refused, and the plugin goes on: a relative URI. */
    th_resource bad = {TH_RESOURCE_INIT, .uri = "relative/path", .name = "bad", .read = read_blob};
    th_server_add_resource(server, &bad);
    return &touch_tool;
}
