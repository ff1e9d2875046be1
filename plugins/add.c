/* SPDX-License-Identifier: MIT */
/*
** add.c: the smallest typed tool, and the model for one: an ordinary C
** function described for the host, which generates the schema and calls it.
*/
#include <toolhost/plugin.h>

static double add(double a, double b)
{
    return a + b;
}

static const th_param add_params[] = {
    {.name = "a", .type = TH_T_DOUBLE, .description = "First addend"},
    {.name = "b", .type = TH_T_DOUBLE, .description = "Second addend"},
};

static const th_function add_fn = {
    .fn = (void (*)(void))add,
    .result = TH_T_DOUBLE,
    .n_params = 2,
    .params = add_params,
    .result_description = "a + b",
};

static const th_tool add_tool = {
    TH_TOOL_INIT,
    .name = "add",
    .title = "Add",
    .description = "Add two numbers and return the sum",
    .annotations = "{\"readOnlyHint\":true,\"idempotentHint\":true,\"openWorldHint\":false}",
    .function = &add_fn,
};

TH_REGISTER(add)
{
    (void)server;
    return &add_tool;
}
