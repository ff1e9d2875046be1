#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/packaging/man-plugin.sh: the section 3 pages cannot fall behind
# their headers: toolhost-plugin(3) <toolhost/plugin.h>, toolhost-testing(3)
# <toolhost/testing.h>. Every th_ function (and th_ function-like macro) a
# header declares has its prototype in the page's SYNOPSIS and a paragraph
# of its own (a .TP entry), every function the SYNOPSIS names exists, groff
# renders the page without a warning, and `make install` installs it where
# man finds section 3 pages and `make uninstall` removes it.
set -u
fail() { echo "FAIL: $*"; exit 1; }
: "${TOP_SRCDIR:?}" "${TOP_BUILDDIR:?}" "${MAKE:=make}" "${mandir:?}"

work=$(mktemp -d "${TMPDIR:-/tmp}/th-man3.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

# check HEADER PAGE MIN: PAGE (doc/NAME.3) documents HEADER's MIN or more names.
check() {
    header="$TOP_SRCDIR/include/toolhost/$1"
    page="$TOP_SRCDIR/doc/$2"
    # Declarations start a line: `th_rc th_call_text(`, `const char *th_server_errmsg(`,
    # `#define th_test_assert_ok(`.
    sed -n -E -e 's/^[A-Za-z_][A-Za-z0-9_ ]*[ *](th_[a-z0-9_]+)\(.*/\1/p' \
        -e 's/^#define (th_[a-z0-9_]+)\(.*/\1/p' "$header" | sort -u > "$work/declared"
    n=$(wc -l < "$work/declared")
    [ "$n" -ge "$3" ] || fail "found only $n th_ functions in $header: the declaration pattern is out of date"
    # SYNOPSIS prototypes are .BI lines; entries are `.B name` right after `.TP`.
    sed -n '/^\.SH SYNOPSIS/,/^\.SH DESCRIPTION/p' "$page" |
        sed -n -E -e 's/^\.BI "[^"]*[ *](th_[a-z0-9_]+)\(.*/\1/p' -e 's/^\.BI "(th_[a-z0-9_]+)\(.*/\1/p' |
        sort -u > "$work/synopsis"
    awk '/^\.TP/ { tp = 1; next } tp && /^\.B th_[a-z0-9_]+$/ { print $2 } { tp = 0 }' "$page" | sort -u > "$work/described"

    missing=$(comm -23 "$work/declared" "$work/synopsis" | tr '\n' ' ')
    [ -z "$missing" ] || fail "$2's SYNOPSIS lacks: $missing(declared in include/toolhost/$1)"
    missing=$(comm -23 "$work/declared" "$work/described" | tr '\n' ' ')
    [ -z "$missing" ] || fail "$2 has no .TP entry for: $missing"
    stale=$(comm -13 "$work/declared" "$work/synopsis" | tr '\n' ' ')
    [ -z "$stale" ] || fail "$2 names functions $1 does not declare: $stale"

    # -ww: every groff warning; -z: no output. Warnings go to stderr.
    if command -v groff >/dev/null 2>&1; then
        groff -man -Tutf8 -ww -z "$page" > "$work/groff" 2>&1 || { cat "$work/groff"; fail "groff failed on $2"; }
        [ ! -s "$work/groff" ] || { cat "$work/groff"; fail "groff warns about $2"; }
        rendered="rendered by groff without warnings"
    else
        rendered="not rendered (no groff)"
    fi
    [ -f "$work/stage$mandir/man3/$2" ] || fail "make install did not install $mandir/man3/$2"
    echo "$2 documents all $n th_ names of $1; $rendered"
}

$MAKE -C "$TOP_BUILDDIR" install-man DESTDIR="$work/stage" > "$work/log" 2>&1 || { cat "$work/log"; fail "make install-man"; }
check plugin.h toolhost-plugin.3 20
check testing.h toolhost-testing.3 12
$MAKE -C "$TOP_BUILDDIR" uninstall-man DESTDIR="$work/stage" > "$work/log" 2>&1 || { cat "$work/log"; fail "make uninstall-man"; }
for p in toolhost-plugin.3 toolhost-testing.3; do
    [ ! -e "$work/stage$mandir/man3/$p" ] || fail "make uninstall left $mandir/man3/$p"
done
echo "PASS: both section 3 pages document their headers, install and uninstall"
