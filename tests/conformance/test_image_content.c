/* SPDX-License-Identifier: MIT */
/*
** test_image_content.c: the conformance suite's test_image_content fixture
** (scenario tools-call-image): one image block holding a 1x1 red PNG.
*/
#include <toolhost/plugin.h>

/* The suite's reference server sends this exact pixel; keeping the bytes
 * identical lets a result be compared with the reference byte for byte. */
static const char red_pixel_png[] =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

static th_rc image_content(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    return th_call_image(call, "image/png", red_pixel_png);
}

static const th_tool image_content_tool = {
    TH_TOOL_INIT,
    .name = "test_image_content",
    .description = "Tests image content response",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = image_content,
};

TH_REGISTER(test_image_content)
{
    (void)server;
    return &image_content_tool;
}
