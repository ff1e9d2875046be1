/* SPDX-License-Identifier: MIT */
/*
** limits.c: the typed tools of tests/test_typed_limits.c:
** "limits" has constrained parameters, "greet" takes the tool's user_data,
** and "pixel" answers with an image built from raw bytes
** (th_call_image_bytes) and an audio block from th_base64_encode; "names"
** returns an array of strings the host frees, "minmax" named result fields.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <toolhost/plugin.h>

static void limits(th_call *call, int64_t count, double ratio, const char *code, const th_array *tags)
{
    th_call_textf(call, "count=%lld ratio=%g code=%s tags=%zu", (long long)count, ratio, code, tags ? tags->count : 0);
}

static const th_constraints count_lim = {.set = TH_C_MINIMUM | TH_C_MAXIMUM, .minimum = 1, .maximum = 10};
static const th_constraints ratio_lim = {.set = TH_C_MINIMUM | TH_C_MAXIMUM, .minimum = 0, .maximum = 0.5};
static const th_constraints code_lim = {.set = TH_C_MIN_LENGTH | TH_C_MAX_LENGTH | TH_C_PATTERN,
                                        .min_length = 3, .max_length = 5, .pattern = "^[A-Z]+$"};
static const th_constraints tag_lim = {.set = TH_C_MAX_LENGTH, .max_length = 4};

static const th_param limits_params[] = {
    {.name = "count", .type = TH_T_INT64, .constraints = &count_lim},
    {.name = "ratio", .type = TH_T_DOUBLE, .optional = true, .default_json = "0.25", .constraints = &ratio_lim},
    {.name = "code", .type = TH_T_STRING, .constraints = &code_lim},
    {.name = "tags", .type = TH_T_STRING | TH_T_ARRAY, .optional = true, .constraints = &tag_lim},
};

static const th_function limits_fn = {
    .fn = (void (*)(void))limits,
    .result = TH_T_VOID,
    .flags = TH_FN_WANTS_CALL,
    .n_params = 4,
    .params = limits_params,
};

static const th_tool limits_tool = {
    TH_TOOL_INIT,
    .name = "limits",
    .description = "Typed parameters with minimum, maximum, length and pattern constraints.",
    .function = &limits_fn,
};

/* The tool's user_data: a greeting chosen at registration. */
static const char *greet(void *user_data, const char *name)
{
    static _Thread_local char out[128];
    strcpy(out, (const char *)user_data);
    strncat(out, name, sizeof out - strlen(out) - 1);
    return out;
}

static const th_param greet_params[] = {{.name = "name", .type = TH_T_STRING}};
static const th_function greet_fn = {
    .fn = (void (*)(void))greet,
    .result = TH_T_STRING,
    .flags = TH_FN_WANTS_USER_DATA,
    .n_params = 1,
    .params = greet_params,
};

static char greeting[] = "Hello, ";

static const th_tool greet_tool = {
    TH_TOOL_INIT,
    .name = "greet",
    .description = "A typed function that is given its tool's user_data.",
    .function = &greet_fn,
    .user_data = greeting,
};

/* Both th_call_* and user_data: the order is call, then user_data. */
static void pixel(th_call *call, void *user_data, int n)
{
    static const unsigned char png_start[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (th_call_image_bytes(call, "image/png", png_start, (size_t)n) != TH_OK)
        return;
    char *b64 = th_base64_encode("hi!?", 4);
    if (b64)
        th_call_audio(call, "audio/wav", b64);
    free(b64);
    th_call_textf(call, "answer=%d", *(const int *)user_data);
}

static const th_constraints pixel_lim = {.set = TH_C_MINIMUM | TH_C_MAXIMUM, .minimum = 0, .maximum = 8};
static const th_param pixel_params[] = {{.name = "n", .type = TH_T_INT, .constraints = &pixel_lim}};
static const th_function pixel_fn = {
    .fn = (void (*)(void))pixel,
    .result = TH_T_VOID,
    .flags = TH_FN_WANTS_CALL | TH_FN_WANTS_USER_DATA,
    .n_params = 1,
    .params = pixel_params,
};

static const int pixel_answer = 42;

static const th_tool pixel_tool = {
    TH_TOOL_INIT,
    .name = "pixel",
    .description = "An image from raw bytes and an audio block from th_base64_encode.",
    .function = &pixel_fn,
    .user_data = (void *)&pixel_answer,
};

/* An array result the host frees: N strings "0".."N-1". */
static th_array *names(int n)
{
    th_array *a = malloc(sizeof *a);
    char **items = calloc((size_t)n + 1, sizeof *items);
    if (!a || !items) {
        free(a);
        free(items);
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        items[i] = malloc(12);
        if (items[i])
            snprintf(items[i], 12, "%d", i);
    }
    *a = (th_array){.count = (size_t)n, .items = items};
    return a;
}

static const th_constraints names_lim = {.set = TH_C_MINIMUM | TH_C_MAXIMUM, .minimum = 0, .maximum = 100};
static const th_param names_params[] = {{.name = "n", .type = TH_T_INT, .constraints = &names_lim}};
static const th_function names_fn = {
    .fn = (void (*)(void))names,
    .result = TH_T_STRING | TH_T_ARRAY,
    .flags = TH_FN_FREE_RESULT,
    .n_params = 1,
    .params = names_params,
};

static const th_tool names_tool = {
    TH_TOOL_INIT,
    .name = "names",
    .description = "An array result (strings, freed by the host).",
    .function = &names_fn,
};

/* Named results: the function fills one pointer per field. */
static void minmax(const th_array *xs, int *min, int *max, char **note)
{
    const int *v = xs->items;
    for (size_t i = 0; i < xs->count; i++) {
        if (i == 0 || v[i] < *min)
            *min = v[i];
        if (i == 0 || v[i] > *max)
            *max = v[i];
    }
    *note = malloc(32);
    if (*note)
        snprintf(*note, 32, "%zu values", xs->count);
}

static const th_param minmax_in[] = {{.name = "xs", .type = TH_T_INT | TH_T_ARRAY}};
static const th_param minmax_out[] = {
    {.name = "min", .type = TH_T_INT}, {.name = "max", .type = TH_T_INT}, {.name = "note", .type = TH_T_STRING}, {0}};
static const th_function minmax_fn = {
    .fn = (void (*)(void))minmax,
    .flags = TH_FN_FREE_RESULT,
    .n_params = 1,
    .params = minmax_in,
    .result_fields = minmax_out,
};

static const th_tool minmax_tool = {
    TH_TOOL_INIT,
    .name = "minmax",
    .description = "Named result fields: the smallest and largest value.",
    .function = &minmax_fn,
};

TH_REGISTER(limits)
{
    if (th_server_add_tool(server, &greet_tool) != TH_OK || th_server_add_tool(server, &pixel_tool) != TH_OK ||
        th_server_add_tool(server, &names_tool) != TH_OK || th_server_add_tool(server, &minmax_tool) != TH_OK)
        return NULL;
    return &limits_tool;
}
