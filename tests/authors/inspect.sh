#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/authors/inspect.sh: `toolhost inspect` on good plugins (the bundled
# ones) and bad ones (one that crashes while registering, one refused by the
# registry rules, a duplicate), in text and JSON, and a plugin's resources,
# prompts, completions and skill files.
# A crash must not end the report, and any refusal makes the exit status 1.
set -u
fail() { echo "FAIL: $*"; exit 1; }
: "${TOOLHOST:?}" "${PLUGINS:?}" "${HOSTILE:?}" "${TESTPLUGINS:?}"
work=$(mktemp -d "${TMPDIR:-/tmp}/th-inspect.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"

# Good: the bundled plugins, text.
out=$("$TOOLHOST" inspect "$PLUGINS" 2>"$work/err"); rc=$?
[ $rc -eq 0 ] || fail "inspect of the bundled plugins exited $rc: $out $(cat "$work/err")"
for want in "Plugin $PLUGINS/add.so" "  Tool add" "    Description: Add two numbers and return the sum" \
            "    Output schema:" '            "description": "a + b"' "  Tool echo" \
            "Plugin $PLUGINS/files.so" "  Resource template file:///{path}" \
            "Plugin $PLUGINS/prompts.so" "  Prompt code_review" "  Completion of prompt code_review" \
            "Plugin $PLUGINS/skills.so" "  Resource skill://toolhost-skills-setup/SKILL.md" \
            "6 plugins accepted, 0 refused; 3 tools; 2 resources, 1 resource template; 1 prompt; 0 refusals"; do
    printf '%s\n' "$out" | grep -qxF -- "$want" || fail "text report lacks the line '$want':
$out"
done

# A skill file shows the digest skills/list publishes.
printf '%s\n' "$out" | grep -qx '    Digest:      sha256:[0-9a-f]\{64\}' || fail "text report lacks a skill file's digest:
$out"

# Good, JSON, one file named directly.
out=$("$TOOLHOST" inspect --json "$PLUGINS/add.so"); rc=$?
[ $rc -eq 0 ] || fail "inspect --json add.so exited $rc"
for want in '"path": "'"$PLUGINS"'/add.so",' '"accepted": true,' '"name": "add",' \
            '"inputSchema": {' '"outputSchema": {' '"refusals": 0'; do
    printf '%s\n' "$out" | grep -qF -- "$want" || fail "JSON report lacks '$want':
$out"
done

# Bad: a crash while registering, a registry refusal, next to a good one.
mkdir -m 700 "$work/bad"
cp "$HOSTILE/crash_register.so" "$TESTPLUGINS/refused.so" "$TESTPLUGINS/good.so" "$work/bad/"
out=$("$TOOLHOST" inspect "$work/bad" 2>"$work/err"); rc=$?
[ $rc -eq 1 ] || fail "inspect of refused plugins exited $rc, not 1: $out"
for want in "Plugin $work/bad/crash_register.so" "  Status: REFUSED" \
            "  Refused: crashed while loading: signal 11 (SIGSEGV)" \
            "  Refused: tool 'refused': Tool description too short (min 10 chars), got 9 [TH_ERR_VALUE]" \
            "Plugin $work/bad/good.so" "  Status: accepted" "  Tool good" \
            "1 plugin accepted, 2 refused; 1 tool; 2 refusals"; do
    printf '%s\n' "$out" | grep -qxF -- "$want" || fail "text report lacks the line '$want':
$out"
done
# The scanner's lines went into the report, not onto the terminal.
if grep -q 'SIGSEGV\|too short' "$work/err"; then fail "refusals leaked to stderr: $(cat "$work/err")"; fi

out=$("$TOOLHOST" inspect --json "$work/bad"); rc=$?
[ $rc -eq 1 ] || fail "inspect --json of refused plugins exited $rc, not 1"
for want in '"accepted": false,' '"crashed while loading: signal 11 (SIGSEGV)"' '"pluginsRefused": 2,' '"refusals": 2'; do
    printf '%s\n' "$out" | grep -qF -- "$want" || fail "JSON report lacks '$want':
$out"
done

# Resources: listed per plugin with their fields, and a refused one (a
# relative URI) named with its rule, in text and JSON.
RESFIX="$(dirname "$TESTPLUGINS")/../resplugins/.libs/resfix.so"
out=$("$TOOLHOST" inspect "$RESFIX"); rc=$?
[ $rc -eq 1 ] || fail "inspect of resfix.so (one refused resource) exited $rc, not 1: $out"
for want in "  Resource mem://hello" "    Name:        hello" "    Size:        17" \
            '    Annotations: {"audience":["user"],"priority":0.5}' "  Resource template mem://items/{id}" \
            "  Refused: resource 'relative/path' refused: Resource uri 'relative/path' must be an absolute URI: a scheme (a letter, then letters, digits, '+', '-', '.') and ':', e.g. file:///path or test://name [TH_ERR_VALUE]" \
            "1 plugin accepted, 0 refused; 1 tool; 5 resources, 1 resource template; 1 refusal"; do
    printf '%s\n' "$out" | grep -qxF -- "$want" || fail "text report lacks the line '$want':
$out"
done
out=$("$TOOLHOST" inspect --json "$RESFIX")
for want in '"uri": "mem://hello",' '"uriTemplate": "mem://items/{id}",' '"resources": 5,' '"resourceTemplates": 1,'; do
    printf '%s\n' "$out" | grep -qF -- "$want" || fail "JSON report lacks '$want':
$out"
done

# Prompts: listed with their arguments, completions named, each refusal
# with its rule, in text and JSON.
PROMPTFIX="$(dirname "$TESTPLUGINS")/../promptplugins/.libs/promptfix.so"
out=$("$TOOLHOST" inspect "$PROMPTFIX"); rc=$?
[ $rc -eq 1 ] || fail "inspect of promptfix.so (refused prompts) exited $rc, not 1: $out"
for want in "  Prompt greet" "    Title:       Greeting" '    Arguments:   [{"name":"who","title":"Who","required":true},{"name":"tone"}]' \
            "  Completion of resource template mem://items/{id}" \
            "  Refused: prompt 'noget' refused: Prompt must have a 'get' function [TH_ERR_VALUE]" \
            "1 plugin accepted, 0 refused; 0 tools; 0 resources, 1 resource template; 5 prompts; 5 refusals"; do
    printf '%s\n' "$out" | grep -qxF -- "$want" || fail "text report lacks the line '$want':
$out"
done
out=$("$TOOLHOST" inspect --json "$PROMPTFIX")
for want in '"prompts": 5,' '"prompt": "greet"' '"uriTemplate": "mem://items/{id}"'; do
    printf '%s\n' "$out" | grep -qF -- "$want" || fail "JSON report lacks '$want':
$out"
done

# A usage error is 2.
"$TOOLHOST" inspect --no-such-option >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "inspect --no-such-option exited $rc, not 2"
echo "PASS: inspect, text and JSON, good and bad plugins"
