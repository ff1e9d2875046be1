#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/authors/call.sh: `toolhost call` runs one call through a server and
# prints the result; exit 0 for a result, 1 for isError, 2 for usage and
# protocol errors (unknown tool), in both isolation modes. A usage error
# says what is wrong and shows the usage line.
set -u
fail() { echo "FAIL: $*"; exit 1; }
: "${TOOLHOST:?}" "${PLUGINS:?}"
for iso in process none; do
    out=$("$TOOLHOST" call --isolation=$iso --plugin-dir "$PLUGINS" add '{"a": 10, "b": 0}'); rc=$?
    [ $rc -eq 0 ] && [ "$out" = "10" ] || fail "$iso: add(10,0) printed '$out', exit $rc"
    out=$("$TOOLHOST" call --isolation=$iso --plugin "$PLUGINS/echo.so" echo '{"text": "two\nlines"}'); rc=$?
    [ $rc -eq 0 ] && [ "$out" = "two
lines" ] || fail "$iso: echo printed '$out', exit $rc"
    out=$("$TOOLHOST" call --isolation=$iso --plugin-dir "$PLUGINS" --json add '{"a": 1, "b": 2}'); rc=$?
    [ $rc -eq 0 ] || fail "$iso: --json exit $rc"
    printf '%s\n' "$out" | grep -qF '"result": 3' || fail "$iso: --json printed $out"
    err=$("$TOOLHOST" call --isolation=$iso --plugin-dir "$PLUGINS" add '{"a": "x", "b": 0}' 2>&1 >/dev/null); rc=$?
    [ $rc -eq 1 ] || fail "$iso: invalid arguments exited $rc, not 1"
    printf '%s\n' "$err" | grep -qF '/a: must be number, got string' || fail "$iso: isError text was '$err'"
    err=$("$TOOLHOST" call --isolation=$iso --plugin-dir "$PLUGINS" nope 2>&1); rc=$?
    [ $rc -eq 2 ] || fail "$iso: an unknown tool exited $rc, not 2"
    printf '%s\n' "$err" | grep -qF 'nope' || fail "$iso: unknown tool message was '$err'"
done
err=$("$TOOLHOST" call --plugin-dir "$PLUGINS" 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] || fail "call without a tool exited $rc, not 2"
# Without a tool the message says what is missing and shows the usage line.
printf '%s\n' "$err" | grep -qF 'no tool named' || fail "call without a tool said '$err'"
printf '%s\n' "$err" | grep -q '^Usage: toolhost call .*' || fail "call without a tool gave no usage line: '$err'"
err=$("$TOOLHOST" call --plugin-dir "$PLUGINS" add '{"a":' '1}' 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] || fail "call with JSON split in two words exited $rc, not 2"
printf '%s\n' "$err" | grep -qF "unexpected '1}'" || fail "call with a third word said '$err'"
"$TOOLHOST" call --plugin-dir "$PLUGINS" add '[1]' >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "call with non-object arguments exited $rc, not 2"
left=$(ls -d "${TMPDIR:-/tmp}"/toolhost-call-* 2>/dev/null | head -1)
echo "PASS: call (left: ${left:-nothing})"
