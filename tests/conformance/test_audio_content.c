/* SPDX-License-Identifier: MIT */
/*
** test_audio_content.c: the conformance suite's test_audio_content fixture
** (scenario tools-call-audio): one audio block holding a minimal WAV file.
*/
#include <toolhost/plugin.h>

/* The reference server's WAV: a RIFF header and one 16-bit mono sample. */
static const char minimal_wav[] = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

static th_rc audio_content(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    return th_call_audio(call, "audio/wav", minimal_wav);
}

static const th_tool audio_content_tool = {
    TH_TOOL_INIT,
    .name = "test_audio_content",
    .description = "Tests audio content response",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = audio_content,
};

TH_REGISTER(test_audio_content)
{
    (void)server;
    return &audio_content_tool;
}
