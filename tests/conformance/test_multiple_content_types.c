/* SPDX-License-Identifier: MIT */
/*
** test_multiple_content_types.c: the conformance suite's
** test_multiple_content_types fixture (scenario tools-call-mixed-content):
** a text block, an image block and an embedded JSON resource, in that order.
*/
#include <toolhost/plugin.h>

/* Same pixel as test_image_content.c: each plugin is a separate .so with no
 * shared code, and the reference server uses one image for both tools. */
static const char red_pixel_png[] =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

static th_rc multiple_content_types(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    th_rc rc = th_call_text(call, "Multiple content types test:");
    if (rc == TH_OK)
        rc = th_call_image(call, "image/png", red_pixel_png);
    if (rc == TH_OK)
        /* JSON.stringify({test: "data", value: 123}) in the reference. */
        rc = th_call_resource_text(call, "test://mixed-content-resource", "application/json",
                                   "{\"test\":\"data\",\"value\":123}");
    return rc;
}

static const th_tool multiple_content_types_tool = {
    TH_TOOL_INIT,
    .name = "test_multiple_content_types",
    .description = "Tests response with multiple content types (text, image, resource)",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = multiple_content_types,
};

TH_REGISTER(test_multiple_content_types)
{
    (void)server;
    return &multiple_content_types_tool;
}
