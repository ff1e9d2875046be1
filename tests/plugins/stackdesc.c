/* SPDX-License-Identifier: MIT */
/*
** stackdesc.c: test plugin stackdesc.so, a careless one whose entry point
** returns a descriptor that lives in its own stack frame. That frame is gone
** when the host reads the descriptor, so the host must refuse it unread.
*/
#include <toolhost/plugin.h>

static th_rc handler(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    return th_call_text(call, "never called");
}

/* Through a volatile, so that the compiler cannot see (and warn about, or
 * replace with NULL) the address of a local escaping. */
static const th_tool *volatile escape;

TH_REGISTER(stackdesc)
{
    (void)server;
    th_tool tool = {
        TH_TOOL_INIT,
        .name = "stackdesc",
        .description = "A descriptor on the stack of its entry point.",
        .input_schema = "{\"type\":\"object\",\"properties\":{}}",
        .handler = handler,
    };
    escape = &tool;
    return escape;
}
