#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/packaging/man-plugin.sh: toolhost-plugin(3) cannot fall behind
# <toolhost/plugin.h>: every th_ function the header declares has its
# prototype in the page's SYNOPSIS and a paragraph of its own (a .TP entry),
# every function the SYNOPSIS names exists, groff renders it without a
# warning, and `make install` installs it where man finds section 3 pages
# and `make uninstall` removes it.
set -u
fail() { echo "FAIL: $*"; exit 1; }
: "${TOP_SRCDIR:?}" "${TOP_BUILDDIR:?}" "${MAKE:=make}" "${mandir:?}"
header="$TOP_SRCDIR/include/toolhost/plugin.h"
page="$TOP_SRCDIR/doc/toolhost-plugin.3"

work=$(mktemp -d "${TMPDIR:-/tmp}/th-man3.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

# Declarations start a line: `th_rc th_call_text(`, `const char *th_server_errmsg(`.
sed -n -E 's/^[A-Za-z_][A-Za-z0-9_ ]*[ *](th_[a-z0-9_]+)\(.*/\1/p' "$header" | sort -u > "$work/declared"
n=$(wc -l < "$work/declared")
[ "$n" -ge 20 ] || fail "found only $n th_ functions in $header: the declaration pattern is out of date"
# SYNOPSIS prototypes are .BI lines; entries are `.B name` right after `.TP`.
sed -n '/^\.SH SYNOPSIS/,/^\.SH DESCRIPTION/p' "$page" |
    sed -n -E 's/^\.BI "[^"]*[ *](th_[a-z0-9_]+)\(.*/\1/p' | sort -u > "$work/synopsis"
awk '/^\.TP/ { tp = 1; next } tp && /^\.B th_[a-z0-9_]+$/ { print $2 } { tp = 0 }' "$page" | sort -u > "$work/described"

missing=$(comm -23 "$work/declared" "$work/synopsis" | tr '\n' ' ')
[ -z "$missing" ] || fail "toolhost-plugin.3's SYNOPSIS lacks: $missing(declared in include/toolhost/plugin.h)"
missing=$(comm -23 "$work/declared" "$work/described" | tr '\n' ' ')
[ -z "$missing" ] || fail "toolhost-plugin.3 has no .TP entry for: $missing"
stale=$(comm -13 "$work/declared" "$work/synopsis" | tr '\n' ' ')
[ -z "$stale" ] || fail "toolhost-plugin.3 names functions plugin.h does not declare: $stale"

# -ww: every groff warning; -z: no output. Warnings go to stderr.
if command -v groff >/dev/null 2>&1; then
    groff -man -Tutf8 -ww -z "$page" > "$work/groff" 2>&1 || { cat "$work/groff"; fail "groff failed on toolhost-plugin.3"; }
    [ ! -s "$work/groff" ] || { cat "$work/groff"; fail "groff warns about toolhost-plugin.3"; }
    rendered="rendered by groff without warnings"
else
    rendered="not rendered (no groff)"
fi

$MAKE -C "$TOP_BUILDDIR" install-man DESTDIR="$work/stage" > "$work/log" 2>&1 || { cat "$work/log"; fail "make install-man"; }
[ -f "$work/stage$mandir/man3/toolhost-plugin.3" ] || fail "make install did not install $mandir/man3/toolhost-plugin.3"
$MAKE -C "$TOP_BUILDDIR" uninstall-man DESTDIR="$work/stage" > "$work/log" 2>&1 || { cat "$work/log"; fail "make uninstall-man"; }
[ ! -e "$work/stage$mandir/man3/toolhost-plugin.3" ] || fail "make uninstall left $mandir/man3/toolhost-plugin.3"
echo "PASS: toolhost-plugin.3 documents all $n th_ functions of plugin.h, installs and uninstalls; $rendered"
