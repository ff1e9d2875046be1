#!/bin/sh
# SPDX-License-Identifier: MIT
# The transports carry JSON-RPC and never read MCP's structure: what they
# must know of a message (the tool a call names, _meta, the headers that
# mirror a body, where a notification goes) they ask protocol/envelope.c.
# A method name, a params member or a _meta key in src/transport/ means a
# second reading of MCP there, which drifts from the protocol's own.
set -eu
src=${TOP_SRCDIR:?}/src/transport
pattern='"(tools|resources|prompts|tasks|completion|notifications|elicitation|sampling|roots)/|"_meta"|"params"|"arguments"|progressToken|io\.modelcontextprotocol/'
found=$(grep -nE "$pattern" "$src"/*.c "$src"/*.h || true)
if [ -n "$found" ]; then
    echo "MCP structure read in the transport layer (ask protocol/envelope.c):" >&2
    echo "$found" >&2
    exit 1
fi
# The check itself: it must see what it looks for.
probe=$(printf '%s\n' 'th_rpc_member(msg, "params", &v);' | grep -cE "$pattern")
[ "$probe" = 1 ]
echo "src/transport names no MCP method, params member or _meta key"
