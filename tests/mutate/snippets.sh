#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/mutate/snippets.sh: the mutation list cannot rot. Every entry of
# tests/mutate/mutations must still find its snippet, once, in its file
# (scripts/mutate.sh --check); and the check itself must refuse an entry
# whose snippet is gone, or a stale list would pass unnoticed.
set -u
fail() { echo "FAIL: $*"; exit 1; }
: "${TOP_SRCDIR:?}"
script="$TOP_SRCDIR/scripts/mutate.sh"
list="$TOP_SRCDIR/tests/mutate/mutations"

work=$(mktemp -d "${TMPDIR:-/tmp}/th-mutate-check.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

sh "$script" --check "$TOP_SRCDIR" "$list" >"$work/out" 2>&1 || { cat "$work/out"; fail "the mutation list does not match the sources"; }
cat "$work/out"
n=$(grep -c '^id:' "$list")
[ "$n" -ge 30 ] || fail "only $n mutations in $list"

# The same list with one snippet changed as an edit of the code would.
awk '/^find:/ && !done { sub(/$/, " /* edited */"); done = 1 } { print }' "$list" >"$work/stale"
if sh "$script" --check "$TOP_SRCDIR" "$work/stale" >"$work/out" 2>&1; then
    cat "$work/out"
    fail "--check accepted a list whose first snippet is not in the sources"
fi
grep -q "snippet not found" "$work/out" || { cat "$work/out"; fail "--check did not say which snippet is missing"; }
echo "a stale entry is refused: $(grep 'snippet not found' "$work/out")"
