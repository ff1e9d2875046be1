#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/authors/include-graph.sh: src/ keeps its layers. No two files
# include each other, directly or around a circle, and no file includes a
# layer above its own (scripts/include-graph.sh). The script is first shown
# a small tree with one of each, so a pass means it looked.
set -u
: "${TOP_SRCDIR:?}"
script="$TOP_SRCDIR/scripts/include-graph.sh"
fail=0
no() { echo "FAIL: $*"; fail=1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/th-incgraph.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src/base" "$tmp/src/plugin" "$tmp/src/protocol"
printf '#include "plugin/b.h"\n' > "$tmp/src/plugin/a.h"
printf '#include "plugin/c.h"\n' > "$tmp/src/plugin/b.c"
printf '#include "plugin/a.h"\n#include "config.h"\n' > "$tmp/src/plugin/c.c"
: > "$tmp/src/plugin/b.h"
: > "$tmp/src/plugin/c.h"
printf '#include "protocol/p.h"\n' > "$tmp/src/base/u.c"
: > "$tmp/src/protocol/p.h"
printf '#include "base/u.h"\n' > "$tmp/src/protocol/p.c"
: > "$tmp/src/base/u.h"
out=$(sh "$script" "$tmp/src"); rc=$?
echo "$out" | sed 's/^/fixture: /'
[ "$rc" -eq 1 ] || no "a tree with a circle passed (exit $rc)"
echo "$out" | grep -qx 'circle (file): plugin/a plugin/b plugin/c' || no "the circle a -> b -> c -> a was not named"
echo "$out" | grep -qx 'circle (layer): base protocol' || no "the layer circle base <-> protocol was not named"
echo "$out" | grep -q '^upward: base/u.c includes protocol/p.h' || no "base/u.c including protocol/ was not called upward"

out=$(sh "$script" "$TOP_SRCDIR/src"); rc=$?
echo "$out"
[ "$rc" -eq 0 ] || no "src/ has include circles or upward includes (above)"
[ "$fail" -eq 0 ] && echo "include-graph: src/ has no include circle and no upward include"
exit "$fail"
