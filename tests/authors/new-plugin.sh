#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/authors/new-plugin.sh: `toolhost new-plugin` writes a skeleton that,
# as generated, builds with -Wall -Wextra -Werror against the source tree's
# header, passes `toolhost inspect` and answers `toolhost call`; handler
# and typed, with a warning about the placeholder description from inspect
# and from the host. Existing files are never replaced; a missing --dir is created
# with its parents.
set -u
fail() { echo "FAIL: $*"; exit 1; }
: "${TOOLHOST:?}" "${TOP_SRCDIR:?}" "${MAKE:=make}"
work=$(mktemp -d "${TMPDIR:-/tmp}/th-scaffold.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
cflags="-I$TOP_SRCDIR/include $(pkg-config --cflags json-c)"

mkdir "$work/h" "$work/t"
"$TOOLHOST" new-plugin --dir "$work/h" weather >/dev/null || fail "new-plugin weather"
"$TOOLHOST" new-plugin --typed --dir "$work/t" sum2 >/dev/null || fail "new-plugin --typed sum2"
grep -qF 'PKG_CONFIG) --variable=plugindir toolhost' "$work/h/Makefile" || fail "the Makefile does not ask pkg-config for plugindir"
for d in h t; do
    $MAKE -s -C "$work/$d" TOOLHOST_CFLAGS="$cflags" CFLAGS="-O2" >"$work/$d.log" 2>&1 ||
        { cat "$work/$d.log"; fail "the $d skeleton does not build with -Werror"; }
done
# The skeletons are accepted, but their placeholder descriptions are flagged:
# a warning line naming the file and the tool, exit status 0 all the same.
for so in h/weather t/sum2; do
    tool=${so#*/}
    "$TOOLHOST" inspect "$work/$so.so" >"$work/i.log" 2>&1 || { cat "$work/i.log"; fail "inspect refuses $so.so"; }
    grep -qxF "  Warning: $work/$so.so: tool '$tool' still has the placeholder description toolhost new-plugin wrote" \
        "$work/i.log" || { cat "$work/i.log"; fail "inspect does not flag $tool's placeholder description"; }
    grep -q '; 0 refusals; 1 warning$' "$work/i.log" || { cat "$work/i.log"; fail "inspect's summary of $so.so"; }
done
"$TOOLHOST" inspect --json "$work/h/weather.so" >"$work/i.log" 2>&1 || fail "inspect --json of the skeleton"
grep -qF '"warnings": 1' "$work/i.log" || { cat "$work/i.log"; fail "inspect --json does not count the warning"; }
# The host warns once when it loads one, whichever process scanned or serves it.
for iso in process none; do
    "$TOOLHOST" --isolation=$iso --plugin-dir "$work/h" </dev/null >/dev/null 2>"$work/host.log" ||
        { cat "$work/host.log"; fail "$iso: toolhost serving the skeleton"; }
    n=$(grep -c "warning: plugin $work/h/weather.so: tool 'weather' still has the placeholder description" \
        "$work/host.log")
    [ "$n" -eq 1 ] || { cat "$work/host.log"; fail "$iso: the host warned $n times about the placeholder, not once"; }
done
out=$("$TOOLHOST" call --plugin "$work/h/weather.so" weather '{"text": "hi"}') || fail "call weather"
[ "$out" = "weather: hi" ] || fail "weather answered '$out'"
# The skeleton reads its "prefix" setting: command line over environment.
out=$(TOOLHOST_WEATHER_PREFIX='Env: ' "$TOOLHOST" call --plugin "$work/h/weather.so" weather '{"text": "hi"}') ||
    fail "call weather with TOOLHOST_WEATHER_PREFIX"
[ "$out" = "Env: hi" ] || fail "weather with TOOLHOST_WEATHER_PREFIX answered '$out'"
out=$(TOOLHOST_WEATHER_PREFIX='Env: ' "$TOOLHOST" call --set 'weather.prefix=Set: ' --plugin "$work/h/weather.so" weather '{"text": "hi"}') ||
    fail "call weather --set"
[ "$out" = "Set: hi" ] || fail "weather --set answered '$out'"
out=$("$TOOLHOST" call --plugin "$work/t/sum2.so" sum2 '{"a": 2, "b": 3}') || fail "call sum2"
[ "$out" = "5" ] || fail "sum2 answered '$out'"

# make install honours DESTDIR and PLUGINDIR.
$MAKE -s -C "$work/h" install DESTDIR="$work/stage" PLUGINDIR=/p TOOLHOST_CFLAGS="$cflags" >/dev/null 2>&1 || fail "make install"
[ -f "$work/stage/p/weather.so" ] || fail "make install did not install weather.so"

before=$(cat "$work/h/weather.c")
"$TOOLHOST" new-plugin --dir "$work/h" weather >/dev/null 2>&1; rc=$?
[ $rc -eq 1 ] || fail "new-plugin over an existing file exited $rc, not 1"
[ "$before" = "$(cat "$work/h/weather.c")" ] || fail "new-plugin replaced an existing file"
# --dir names a directory that does not exist yet, two levels deep.
"$TOOLHOST" new-plugin --dir "$work/new/deeper" fresh >"$work/n.log" 2>&1 ||
    { cat "$work/n.log"; fail "new-plugin --dir with a missing directory"; }
[ -f "$work/new/deeper/fresh.c" ] && [ -f "$work/new/deeper/Makefile" ] ||
    fail "new-plugin --dir did not create the missing directory and write into it"
: >"$work/file"
"$TOOLHOST" new-plugin --dir "$work/file/sub" fresh >"$work/n.log" 2>&1; rc=$?
[ $rc -eq 1 ] || fail "new-plugin --dir under a regular file exited $rc, not 1"
grep -qF "cannot create $work/file" "$work/n.log" || { cat "$work/n.log"; fail "the refusal does not name the path"; }
"$TOOLHOST" new-plugin Bad-Name >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "an invalid name exited $rc, not 2"
echo "PASS: new-plugin skeletons build, inspect and answer"
