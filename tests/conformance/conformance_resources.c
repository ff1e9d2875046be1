/* SPDX-License-Identifier: MIT */
/*
** conformance_resources.c: the conformance suite's fixture resources (the
** everything-server's test://static-text, test://static-binary,
** test://template/{id}/data and test://watched-resource), served by a
** plugin that registers resources only.
*/
#include <stdio.h>
#include <string.h>

#include <toolhost/plugin.h>

/* The suite's reference server's 1x1 red PNG, as in test_image_content. */
static const char red_pixel_png[] =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

static th_rc read_static_text(th_call *call, const char *uri, json_object *vars, void *user_data)
{
    (void)vars;
    (void)user_data;
    return th_call_resource_text(call, uri, "text/plain", "This is the content of the static text resource.");
}

static th_rc read_static_binary(th_call *call, const char *uri, json_object *vars, void *user_data)
{
    (void)vars;
    (void)user_data;
    return th_call_resource_blob(call, uri, "image/png", red_pixel_png);
}

static th_rc read_template(th_call *call, const char *uri, json_object *vars, void *user_data)
{
    (void)user_data;
    json_object *id = NULL;
    json_object_object_get_ex(vars, "id", &id);
    /* Built with json-c so an id with quotes stays valid JSON. */
    json_object *o = json_object_new_object();
    json_object_object_add(o, "id", json_object_get(id));
    json_object_object_add(o, "templateTest", json_object_new_boolean(1));
    char data[300];
    snprintf(data, sizeof data, "Data for ID: %.200s", id ? json_object_get_string(id) : "");
    json_object_object_add(o, "data", json_object_new_string(data));
    th_rc rc = th_call_resource_text(call, uri, "application/json",
                                     json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
    json_object_put(o);
    return rc;
}

static th_rc read_watched(th_call *call, const char *uri, json_object *vars, void *user_data)
{
    (void)vars;
    (void)user_data;
    return th_call_resource_text(call, uri, "text/plain", "Watched resource content");
}

TH_REGISTER(conformance_resources)
{
    static const th_resource resources[] = {
        {TH_RESOURCE_INIT, .uri = "test://static-text", .name = "static-text", .title = "Static Text Resource",
         .description = "A static text resource for testing", .mime_type = "text/plain", .read = read_static_text},
        {TH_RESOURCE_INIT, .uri = "test://static-binary", .name = "static-binary",
         .title = "Static Binary Resource", .description = "A static binary resource (image) for testing",
         .mime_type = "image/png", .read = read_static_binary},
        {TH_RESOURCE_INIT, .uri = "test://watched-resource", .name = "watched-resource",
         .title = "Watched Resource", .description = "A resource that auto-updates every 3 seconds",
         .mime_type = "text/plain", .read = read_watched},
    };
    static const th_resource template_ = {
        TH_RESOURCE_INIT, .uri_template = "test://template/{id}/data", .name = "template",
        .title = "Resource Template", .description = "A resource template with parameter substitution",
        .mime_type = "application/json", .read = read_template};
    for (size_t i = 0; i < sizeof resources / sizeof resources[0]; i++)
        if (th_server_add_resource(server, &resources[i]) != TH_OK)
            return NULL;
    if (th_server_add_resource_template(server, &template_) != TH_OK)
        return NULL;
    return th_server_added_only(server);
}
