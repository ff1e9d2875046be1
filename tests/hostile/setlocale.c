/* SPDX-License-Identifier: MIT */
/*
** setlocale.c: hostile test plugin setlocale.so. Its constructor calls
** setlocale(LC_ALL, ""), as plugins linking a GUI or i18n library do, so the
** host runs in the caller's locale (a comma radix under de_DE). Its tool
** "setlocale" returns X / 2 as structured content and reports it as progress,
** numbers json-c formats itself.
*/
#include <locale.h>

#include <toolhost/plugin.h>

__attribute__((constructor)) static void take_the_locale(void)
{
    setlocale(LC_ALL, "");
}

static th_rc setlocale_tool(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    json_object *x;
    double v = json_object_object_get_ex(args, "x", &x) ? json_object_get_double(x) : 0;
    th_call_progress(call, v / 2, v, "halving");
    json_object *o = json_object_new_object();
    json_object_object_add(o, "half", json_object_new_double(v / 2));
    return th_call_structured(call, o);
}

static const th_tool halve_tool = {
    TH_TOOL_INIT,
    .name = "setlocale",
    .description = "Return x / 2 (the plugin took the caller's locale).",
    .input_schema = "{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"number\"}},\"required\":[\"x\"]}",
    .handler = setlocale_tool,
};

TH_REGISTER(setlocale)
{
    (void)server;
    return &halve_tool;
}
