#!/bin/sh
# SPDX-License-Identifier: MIT
# mcpb/launch.sh: the MCP Bundle's entry point (bin/launch in the bundle).
# An MCPB client replaces ${user_config.KEY} in the manifest's arguments,
# but leaves the text as it is when the user left an optional setting
# empty, and toolhost would take that text for a directory or a value. So
# this drops every such argument (the manifest writes each as one
# --OPTION=VALUE word) and runs the bundle's toolhost with the rest. Only
# shell built-ins: a client may start it with an empty environment.
case $0 in
*/*) here=${0%/*} ;;
*) here=. ;;
esac
count=$#
while [ "$count" -gt 0 ]; do
    case $1 in
    *'${user_config.'*) ;;
    *) set -- "$@" "$1" ;;
    esac
    shift
    count=$((count - 1))
done
exec "$here/toolhost" "$@"
