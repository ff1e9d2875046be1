#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/genplugins.sh: the generated plugins of the start-up benchmarks.
# Builds one plugin (include/toolhost/plugin.h, the flags the bundled
# plugins get) and copies it N times under new names with ./soclone, which
# renames its entry point and tools: N real files, p00001.so to pNNNNN.so,
# each registering one echo tool of its own name. 10,000 compilers and
# linkers on a shared two-core machine would take longer than the runs.
#   usage: genplugins.sh N DIR TOP_SRCDIR [TOOLS]
# TOOLS (default 1) tools per plugin: with more, the plugins are
# q00001.so ... and their tools q00001_t0001 ... (th_server_add_tool).
# DIR ends up 0755 with 0644 files whatever the caller's umask: toolhost
# refuses group- or other-writable plugin directories and files.
set -eu
n=$1 dir=$2 top=$3 tools=${4:-1}
soclone=${SOCLONE:-./soclone}
umask 022
mkdir -p "$dir"
chmod 0755 "$dir"
stem=p00000
[ "$tools" -gt 1 ] && stem=q00000
src="$dir/$stem.c"
# The head both kinds share: an echo handler.
cat > "$src" <<PLUGIN
/* $stem.c: a generated benchmark plugin (bench/genplugins.sh). */
#include <stdio.h>
#include <toolhost/plugin.h>

static th_rc handler(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    json_object *text;
    if (!json_object_object_get_ex(args, "text", &text))
        return th_call_error(call, "argument 'text' is required");
    return th_call_text(call, json_object_get_string(text));
}

PLUGIN
schema='"{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},\"required\":[\"text\"]}"'
if [ "$tools" -gt 1 ]; then
    cat >> "$src" <<PLUGIN
TH_REGISTER($stem)
{
    for (int i = 1; i <= $tools; i++) {
        char name[32];
        snprintf(name, sizeof name, "${stem}_t%04d", i);
        th_tool tool = {
            TH_TOOL_INIT,
            .name = name,
            .description = "Generated benchmark tool of $stem: returns its text unchanged.",
            .input_schema = $schema,
            .handler = handler,
        };
        if (th_server_add_tool(server, &tool) != TH_OK)
            return NULL;
    }
    return th_server_added_only(server);
}
PLUGIN
else
    cat >> "$src" <<PLUGIN
static const th_tool tool = {
    TH_TOOL_INIT,
    .name = "$stem",
    .description = "Generated benchmark tool $stem: returns its text unchanged.",
    .input_schema = $schema,
    .handler = handler,
};

TH_REGISTER($stem)
{
    (void)server;
    return &tool;
}
PLUGIN
fi
# soclone rebuilds the sysv hash table only; the template is kept out of DIR.
${CC:-cc} ${CFLAGS:--g -O2} -I"$top/include" -shared -fPIC -fvisibility=hidden -Wl,--hash-style=sysv \
    -o "$dir/$stem.tmpl" "$src"
rm -f "$src"
"$soclone" "$dir/$stem.tmpl" "$stem" "${stem%00000}%05ld" 1 "$n" "$dir"
rm -f "$dir/$stem.tmpl"
chmod 0644 "$dir"/*.so
