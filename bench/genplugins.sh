#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/genplugins.sh: the generated plugins of the start-up benchmarks.
# Writes N one-tool toolhost plugins pNNNN.c (an echo handler each, using
# include/toolhost/plugin.h) into DIR and builds pNNNN.so beside them with
# the flags the bundled plugins get, two compilers at a time.
#   usage: genplugins.sh N DIR TOP_SRCDIR   (CC, CFLAGS from the environment)
# DIR ends up 0755 with 0644 files whatever the caller's umask: toolhost
# refuses group- or other-writable plugin directories and files.
set -eu
n=$1 dir=$2 top=$3
umask 022
mkdir -p "$dir"
chmod 0755 "$dir"
i=1
while [ "$i" -le "$n" ]; do
    name=$(printf 'p%04d' "$i")
    if [ ! -f "$dir/$name.so" ]; then
        cat > "$dir/$name.c" <<PLUGIN
/* $name.c: a generated benchmark plugin (bench/genplugins.sh). */
#include <toolhost/plugin.h>

static th_rc handler(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    json_object *text;
    if (!json_object_object_get_ex(args, "text", &text))
        return th_call_error(call, "argument 'text' is required");
    return th_call_text(call, json_object_get_string(text));
}

static const th_tool tool = {
    TH_TOOL_INIT,
    .name = "$name",
    .description = "Generated benchmark tool $i: returns its text unchanged.",
    .input_schema = "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},\"required\":[\"text\"]}",
    .handler = handler,
};

TH_REGISTER($name)
{
    (void)server;
    return &tool;
}
PLUGIN
        echo "$name"
    fi
    i=$((i + 1))
done | xargs -r -P 2 -n 25 sh -c 'set -e; d=$1; t=$2; shift 2; for p; do
    ${CC:-cc} ${CFLAGS:--g -O2} -I"$t/include" -shared -fPIC -fvisibility=hidden -o "$d/$p.so" "$d/$p.c"; done' \
    sh "$dir" "$top"
chmod 0644 "$dir"/*.so
