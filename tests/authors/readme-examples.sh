#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/authors/readme-examples.sh: the README's C examples are real. A
# ```c block introduced as `plugins/NAME.c` must be that file
# byte for byte, and every block that registers a tool must compile as a
# plugin with -Wall -Wextra -Werror against the source tree's header.
set -u
fail() { echo "FAIL: $*"; exit 1; }
: "${TOP_SRCDIR:?}" "${CC:=cc}"
work=$(mktemp -d "${TMPDIR:-/tmp}/th-readme.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

# Each block to work/N.c; work/N.name holds the plugins/ file the 3 lines
# before it name, if any.
awk -v dir="$work" '
    /^```c$/ { n++; inblock = 1; out = dir "/" n ".c"; printf "" > out;
               if (match(prev3 " " prev2 " " prev1, /`plugins\/[a-z0-9_]+\.c`/))
                   print substr(prev3 " " prev2 " " prev1, RSTART + 1, RLENGTH - 2) > (dir "/" n ".name");
               next }
    /^```$/ && inblock { inblock = 0; close(out); next }
    inblock { print >> out; next }
    { prev3 = prev2; prev2 = prev1; prev1 = $0 }
' "$TOP_SRCDIR/README.md"

blocks=0 named=0 built=0
for c in "$work"/*.c; do
    [ -f "$c" ] || continue
    blocks=$((blocks + 1))
    n=${c%.c}
    if [ -f "$n.name" ]; then
        f=$(cat "$n.name")
        cmp -s "$c" "$TOP_SRCDIR/$f" || { diff -u "$TOP_SRCDIR/$f" "$c"; fail "the README's copy of $f differs from the file"; }
        named=$((named + 1))
    fi
    if grep -q 'TH_REGISTER\|register_[a-z0-9_]*_tool' "$c"; then
        $CC -std=c11 -Wall -Wextra -Werror -shared -fPIC -I"$TOP_SRCDIR/include" $(pkg-config --cflags json-c) \
            -o "$n.so" "$c" || fail "README block $(basename "$c") does not compile"
        built=$((built + 1))
    fi
done
[ "$named" -ge 2 ] || fail "expected the README to show plugins/echo.c and plugins/add.c, found $named"
echo "PASS: $blocks C blocks in README.md, $named identical to their files, $built compiled"
