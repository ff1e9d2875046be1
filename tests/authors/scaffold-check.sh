#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/authors/scaffold-check.sh: the tests `toolhost new-plugin` writes,
# run as an author runs them, against a staged install found through
# pkg-config: `make check` and `make check-asan` pass as generated, and
# fail after a one-line bug in the handler, naming the tool, the case and
# the difference; check-asan catches an overflow that check does not; the
# --autotools project passes `make distcheck`.
set -u
fail() { echo "FAIL: $*"; exit 1; }
: "${TOOLHOST:?}" "${TOP_BUILDDIR:?}" "${MAKE:=make}" "${libdir:?}" "${bindir:?}"
work=$(mktemp -d "${TMPDIR:-/tmp}/th-scaffold-check.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
stage="$work/stage"
skipped=
# The author's makes are not ours: `make check TESTS=...` would otherwise
# pass TESTS on to the scaffold's own make check through MAKEFLAGS.
unset MAKEFLAGS MFLAGS MAKELEVEL

# A staged install, as tests/authors/install-layout.sh makes one; its .pc
# files then point into the stage, as they would at the final prefix.
$MAKE -C "$TOP_BUILDDIR/src" install DESTDIR="$stage" >"$work/install.log" 2>&1 &&
    $MAKE -C "$TOP_BUILDDIR" install-data-am install-exec-am DESTDIR="$stage" >>"$work/install.log" 2>&1 ||
    { cat "$work/install.log"; fail "make install DESTDIR=$stage"; }
for pc in "$stage$libdir"/pkgconfig/toolhost*.pc; do
    sed "s|^\([a-z_]*\)=/|\1=$stage/|" "$pc" >"$pc.new" && mv "$pc.new" "$pc" || fail "cannot rewrite $pc"
done
PKG_CONFIG_PATH="$stage$libdir/pkgconfig"
PATH="$stage$bindir:$PATH"
export PKG_CONFIG_PATH PATH
[ "$(pkg-config --variable=toolhost toolhost-testing)" = "$stage$bindir/toolhost" ] ||
    fail "pkg-config does not find the staged toolhost-testing"
command -v toolhost >/dev/null || fail "no toolhost on PATH"
# A sanitized build's kit needs the sanitizer runtimes linked into the test.
sanitized=no
if nm "$stage$libdir/libtoolhost-testing.a" 2>/dev/null | grep -q ' U __asan_'; then
    sanitized=yes
    LDFLAGS="-fsanitize=address,undefined"
    export LDFLAGS
fi

# TARGET in DIR: must pass, or (with a bug in) fail naming TOOL, CASE and DIFF.
passes() {
    $MAKE -C "$1" "$2" >"$work/out" 2>&1 || { cat "$work/out"; fail "$1: make $2 fails as generated"; }
}
fails_naming() {
    $MAKE -C "$1" "$2" >"$work/out" 2>&1 && { cat "$work/out"; fail "$1: make $2 passes with a bug in the handler"; }
    shift 2
    for want in "$@"; do
        grep -qF -- "$want" "$work/out" || { cat "$work/out"; fail "the failure does not say: $want"; }
    done
}

# check-asan needs GCC's runtime to preload (the Makefile's ASAN_PRELOAD).
if [ -f "$(${CC:-cc} -print-file-name=libasan.so)" ]; then
    asan=yes
else
    asan=no
    skipped="$skipped check-asan (${CC:-cc} has no libasan.so);"
fi

toolhost new-plugin --dir "$work/h" weather >/dev/null || fail "new-plugin weather"
toolhost new-plugin --typed --dir "$work/t" sum2 >/dev/null || fail "new-plugin --typed sum2"
for f in weather.c test_weather.c weather.cases.json Makefile; do
    [ -f "$work/h/$f" ] || fail "new-plugin did not write $f"
done
targets=check
[ "$asan" = yes ] && targets="check check-asan"
for t in $targets; do
    passes "$work/h" $t
    passes "$work/t" $t
done
# Both suites ran: the kit's points in both modes, the cases' TAP.
$MAKE -C "$work/h" check >"$work/out" 2>&1
for want in "ok - weather: prefixes its text [--isolation=none]" "ok - weather: refuses a missing text [--isolation=process]" \
            "ok 1 - weather prefixes its text [process]" "ok 4 - weather refuses a missing text [none]"; do
    grep -qxF -- "$want" "$work/out" || { cat "$work/out"; fail "make check did not print: $want"; }
done

# One-line bugs: a space too many, a sum that subtracts.
sed -i 's/"%s%s", pre,/"%s %s", pre,/' "$work/h/weather.c"
sed -i 's/return a + b;/return a - b;/' "$work/t/sum2.c"
grep -qF '"%s %s", pre,' "$work/h/weather.c" && grep -qF 'return a - b;' "$work/t/sum2.c" || fail "the bugs were not applied"
for t in $targets; do
    fails_naming "$work/h" $t \
        "FAIL: tool weather, case 'prefixes its text' [--isolation=process]: content.0.text: expected \"weather: hi\", got \"weather:  hi\"" \
        "not ok 1 - weather prefixes its text [process]" \
        'message: "text: expected \"weather: hi\", got \"weather:  hi\""'
    fails_naming "$work/t" $t \
        "FAIL: tool sum2, case 'adds' [--isolation=none]: structuredContent.result: expected 5, got -1" \
        "not ok 3 - sum2 adds [none]" 'message: "structuredContent.result: expected 5, got -1"'
done

# A bug only a sanitizer sees: a read past a stack array, which UBSan
# reports in the kit's test and in the worker `toolhost test` started.
if [ "$asan" = yes ]; then
    toolhost new-plugin --dir "$work/o" over >/dev/null || fail "new-plugin over"
    sed -i 's/^    return th_call_textf(call, "%s%s", pre,/    { char b[2] = "x"; volatile int i = 2; if (b[i] == 1) pre = ""; }\n&/' "$work/o/over.c"
    grep -qF 'volatile int i = 2;' "$work/o/over.c" || fail "the overflow was not applied"
    if [ "$sanitized" = yes ]; then
        # The kit's test is a sanitized program here: plain check sees it too.
        fails_naming "$work/o" check "runtime error: index 2 out of bounds for type 'char [2]'"
    else
        passes "$work/o" check
    fi
    fails_naming "$work/o" check-asan "runtime error: index 2 out of bounds for type 'char [2]'" \
        "not ok 1 - over prefixes its text [process]"
fi

# The Autotools project: make distcheck out of tree, against the stage.
missing=
for tool in autoreconf automake libtoolize; do
    command -v $tool >/dev/null 2>&1 || missing="$missing $tool"
done
if [ -n "$missing" ]; then
    skipped="$skipped --autotools (missing:$missing);"
else
    toolhost new-plugin --autotools --dir "$work/a" greet >/dev/null || fail "new-plugin --autotools greet"
    (cd "$work/a" && autoreconf -fi && ./configure && $MAKE distcheck) >"$work/a.log" 2>&1 ||
        { tail -n 60 "$work/a.log"; fail "--autotools: autoreconf -fi && ./configure && make distcheck"; }
    grep -q '^PASS: greet.cases.json 4 - greet refuses a missing text \[none\]' "$work/a.log" ||
        { tail -n 60 "$work/a.log"; fail "--autotools: the TAP driver did not report the cases one by one"; }
fi
if [ -n "$skipped" ]; then
    echo "SKIP: the rest passed, but not run:$skipped"
    exit 77
fi
echo "PASS: the scaffold's tests pass, catch a bug by tool, case and difference, and distcheck"
