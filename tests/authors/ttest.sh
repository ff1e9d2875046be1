#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/authors/ttest.sh: `toolhost test` on cases that pass and cases that
# fail on purpose: the TAP lines, the YAML block naming the case, the field
# and both values, exit 1; a bad cases file is exit 2 naming the line, case
# and field; a plugin that crashes fails its case in both modes and the run
# goes on; deadline and cancel cases in both modes; a server that never
# answers initialize is killed after --start-timeout.
set -u
fail() { echo "FAIL: $*"; [ -n "${out:-}" ] && printf '%s\n' "$out" | sed 's/^/    | /'; exit 1; }
: "${TOOLHOST:?}" "${PLUGINS:?}" "${HOSTILE:?}"
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
# A directory of just the plugins wanted: the hostile one holds many more.
mkdir "$work/p"
cp "$PLUGINS/echo.so" "$PLUGINS/add.so" "$HOSTILE/crash.so" "$(dirname "$(dirname "$HOSTILE")")/mcpplugins/.libs/slow.so" \
    "$work/p/" || fail "cannot copy the plugins"

cat > "$work/cases.json" <<'CASES'
[
  {"name": "echo ok", "tool": "echo", "arguments": {"text": "hi"}, "expect": {"text": "hi"}},
  {"name": "sum wrong", "tool": "add", "arguments": {"a": 1, "b": 1}, "expect": {"structuredContent": {"result": 3}}},
  {"name": "text wrong", "tool": "echo", "arguments": {"text": "ho"}, "expect": {"textContains": "hi"}},
  {"name": "crash", "tool": "crash", "expect": {"text": "survived"}},
  {"name": "after the crash", "tool": "echo", "arguments": {"text": "still here"}, "expect": {"text": "still here"}},
  {"name": "deadline", "tool": "slow", "arguments": {"ms": 60000}, "timeout": 0.2,
   "expect": {"isError": true, "textContains": "timed out after 200 ms"}},
  {"name": "cancel", "tool": "slow", "arguments": {"ms": 60000}, "cancelAfterMs": 50},
  {"name": "cancel too late", "tool": "echo", "arguments": {"text": "fast"}, "cancelAfterMs": 5000}
]
CASES
out=$("$TOOLHOST" test --plugin-dir "$work/p" "$work/cases.json" 2>"$work/err"); rc=$?
[ $rc -eq 1 ] || fail "a run with failing cases exited $rc, not 1"
printf '%s\n' "$out" | head -2 | tr '\n' ' ' | grep -qx 'TAP version 13 1\.\.16 ' || fail "no TAP header with 1..16"
for iso in process none; do
    for c in "echo ok" "after the crash" deadline cancel; do
        printf '%s\n' "$out" | grep -q "^ok [0-9]* - $c \[$iso\]\$" || fail "$iso: '$c' did not pass"
    done
    for c in "sum wrong" "text wrong" crash "cancel too late"; do
        printf '%s\n' "$out" | grep -q "^not ok [0-9]* - $c \[$iso\]\$" || fail "$iso: '$c' did not fail"
    done
done
# The diagnostic names the field and both values, and which case it was.
printf '%s\n' "$out" | grep -qF 'message: "structuredContent.result: expected 3, got 2"' || fail "no structuredContent diff"
printf '%s\n' "$out" | grep -A3 -F 'not ok 2 - sum wrong [process]' | grep -qx '  case: 2' || fail "no case number"
printf '%s\n' "$out" | grep -qF 'message: "textContains: expected \"hi\", got \"ho\""' || fail "no text diff"
printf '%s\n' "$out" | grep -qF 'field: "cancelled"' || fail "a result after the cancel time was not reported"
# A crash in a worker is the host's error result; without isolation the
# server dies by the signal and is started again for the next case.
printf '%s\n' "$out" | grep -A2 -F 'crash [process]' | grep -q 'message: "isError: expected false, got true: \\".*crash' ||
    fail "the process-mode crash was not reported with the host's error"
printf '%s\n' "$out" | grep -A2 -F 'crash [none]' | grep -qF 'the server ended without answering: killed by signal 11' ||
    fail "the none-mode crash was not reported as the server's end"

# --isolation picks one mode; a passing run exits 0.
printf '%s\n' '{"tool": "echo", "arguments": {"text": "a"}, "expect": {"text": "a"}}' \
    '{"tool": "add", "arguments": {"a": 1, "b": 2}, "expect": {"structuredContent": {"result": 3}}}' > "$work/ok.jsonl"
out=$("$TOOLHOST" test --isolation=none --plugin-dir "$work/p" "$work/ok.jsonl"); rc=$?
[ $rc -eq 0 ] || fail "a passing run exited $rc"
[ "$out" = "TAP version 13
1..2
ok 1 - tool echo [none]
ok 2 - tool add [none]" ] || fail "the JSON lines run printed the wrong TAP"

# Bad cases files: exit 2, the message names the file, line, case and field.
bad() {
    printf '%s\n' "$1" > "$work/bad.json"
    out=$("$TOOLHOST" test --plugin-dir "$work/p" "$work/bad.json" 2>&1); rc=$?
    [ $rc -eq 2 ] || fail "'$1' exited $rc, not 2"
    printf '%s\n' "$out" | grep -qF -- "$2" || fail "'$1' said something else than '$2'"
}
bad '[
  {"tool": "echo"},
  {"name": "typo", "tool": "echo", "expect": {"txt": "a"}}
]' "bad.json:3: case 2 ('typo'): field 'expect.txt': unknown field"
bad '{"tool": "echo", "expect": {"isError": "yes"}}' "bad.json:1: case 1: field 'expect.isError': must be true or false"
bad '{"tool": "echo", "prompt": "p"}' 'give exactly one of "tool", "resource" and "prompt"'
bad '{"tool": "echo", "cancelAfterMs": 5, "expect": {}}' "field 'expect': a cancelled call has no result"
bad '{"tool": "echo", "expect": {"structuredContentSchema": {"type": 5}}}' "field 'expect.structuredContentSchema': "
bad '[{"tool": "echo"},
  {"tool": ]' "bad.json:2: not JSON"
bad '' "bad.json: no cases in it"
out=$("$TOOLHOST" test --plugin-dir "$work/p" "$work/missing.json" 2>&1); rc=$?
[ $rc -eq 2 ] && printf '%s\n' "$out" | grep -qF 'missing.json: cannot open it' || fail "a missing file: exit $rc"
out=$("$TOOLHOST" test 2>&1); rc=$?
[ $rc -eq 2 ] && printf '%s\n' "$out" | grep -q '^Usage: toolhost test' || fail "no FILE: exit $rc"
out=$("$TOOLHOST" test --isolation=both "$work/ok.jsonl" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "--isolation=both exited $rc"
# A server that does not start (a bad option of its own) is exit 2 too.
out=$("$TOOLHOST" test --no-such-option "$work/ok.jsonl" 2>&1); rc=$?
[ $rc -eq 2 ] && printf '%s\n' "$out" | grep -qF 'did not start' || fail "a server that cannot start: exit $rc"

# A server that hangs before initialize (a plugin whose register function
# never returns, with no --load-timeout to refuse it) is killed after
# --start-timeout and the run ends, in the mode it was started for.
mkdir "$work/hang"
cp "$HOSTILE/loop_register.so" "$work/hang/" || fail "cannot copy loop_register.so"
for iso in process none; do
    out=$("$TOOLHOST" test --isolation=$iso --start-timeout=0.5 --load-timeout=0 --plugin-dir "$work/hang" \
        "$work/ok.jsonl" 2>&1); rc=$?
    [ $rc -eq 2 ] || fail "$iso: a server hanging before initialize: exit $rc, not 2"
    printf '%s\n' "$out" |
        grep -qF "the server (--isolation=$iso) did not answer initialize within 0.5 s (--start-timeout): it was killed" ||
        fail "$iso: the hang was not reported"
    printf '%s\n' "$out" | grep -q '^Bail out!' || fail "$iso: no Bail out! line"
done
for bad in 0 -1 x 1e9; do
    out=$("$TOOLHOST" test --start-timeout=$bad --plugin-dir "$work/p" "$work/ok.jsonl" 2>&1); rc=$?
    [ $rc -eq 2 ] && printf '%s\n' "$out" | grep -qF -- "--start-timeout: '$bad' is not a number of seconds" ||
        fail "--start-timeout=$bad: exit $rc"
done
# The option's value may be the next word, and is not the server's.
out=$("$TOOLHOST" test --isolation none --start-timeout 30 --plugin-dir "$work/p" "$work/ok.jsonl"); rc=$?
[ $rc -eq 0 ] || fail "--start-timeout 30 (two words): exit $rc"
echo "PASS: test"
