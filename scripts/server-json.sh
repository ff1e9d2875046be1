#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/server-json.sh: at release, write the SHA-256 of the built MCP
# bundle into server.json's mcpb package: the registry's schema requires
# fileSha256 for mcpb, and clients refuse a download that does not match.
# Usage: sh scripts/server-json.sh toolhost-VERSION-linux-ARCH.mcpb [server.json]
set -eu
[ $# -ge 1 ] || { echo "usage: sh scripts/server-json.sh BUNDLE.mcpb [server.json]" >&2; exit 2; }
bundle=$1
json=${2:-$(dirname "$0")/../server.json}
name=$(basename "$bundle")
[ -f "$bundle" ] || { echo "server-json.sh: $bundle: no such file" >&2; exit 1; }
# The identifier is the release URL, so the bundle must carry its name.
grep -q "\"identifier\": \"https://[^\"]*/$name\"" "$json" ||
    { echo "server-json.sh: $json names no mcpb package $name" >&2; exit 1; }
sum=$(sha256sum "$bundle" | cut -d' ' -f1)
sed "s/\"fileSha256\": \"[0-9a-f]*\"/\"fileSha256\": \"$sum\"/" "$json" >"$json.tmp"
mv "$json.tmp" "$json"
echo "server-json.sh: $json: fileSha256 $sum for $name"
