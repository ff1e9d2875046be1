#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/authors/registry-rules.sh: doc/registry-rules.md states every
# refusal's message and the code words them. Each message in the document's
# tables (the last backquoted cell of a row), with its stand-ins (NAME,
# FILE, N, ...) as written, must be an output of one format string of
# src/plugin/ or src/protocol/ (adjacent literals joined, as the compiler
# joins them; a conversion matches anything), so the two cannot drift. A
# message shown as `... tail` is the end of one.
set -u
: "${TOP_SRCDIR:?}"
doc="$TOP_SRCDIR/doc/registry-rules.md"
[ -f "$doc" ] || { echo "FAIL: $doc is missing"; exit 1; }
sed -n 's/^|.*| `\([^`]*\)`[^`|]*|[[:space:]]*$/\1/p' "$doc" > "${TMPDIR:-/tmp}/th-rules.$$" || exit 1
trap 'rm -f "${TMPDIR:-/tmp}/th-rules.$$"' EXIT
awk -v msgs="${TMPDIR:-/tmp}/th-rules.$$" '
# Every C string literal of the sources, adjacent ones joined.
{ text = text $0 "\n" }
function literals(s,    i, n, c, lit, open, out) {
    n = length(s); open = 0; lit = ""
    for (i = 1; i <= n; i++) {
        c = substr(s, i, 1)
        if (!open) {
            if (c == "'\''") { i += (substr(s, i + 1, 1) == "\\") ? 3 : 2; continue }
            if (c == "\"") { open = 1; continue }
            if (lit != "" && c !~ /[ \t\n]/) { lits[++nlits] = lit; lit = "" }
            continue
        }
        if (c == "\\") { lit = lit substr(s, i, 2); i++; continue }
        if (c == "\"") { open = 0; continue }
        lit = lit c
    }
    if (lit != "") lits[++nlits] = lit
}
# A format string as an anchored regular expression: each conversion
# (%s, %zu, %.60s, %#x, ...) matches anything, the rest itself.
function as_regex(f,    out, i, n, c, conv) {
    gsub(/\\"/, "\"", f); gsub(/\\n/, "\n", f)
    out = ""; n = length(f); fixedlen = 0
    for (i = 1; i <= n; i++) {
        c = substr(f, i, 1)
        if (c == "%") {
            if (substr(f, i + 1, 1) == "%") { out = out "%"; i++; fixedlen++; continue }
            conv = substr(f, i + 1)
            if (match(conv, /^[-#0-9.*]*(hh|h|ll|l|z|j|t)?[diouxXeEfgGcsp]/)) { out = out ".*"; i += RLENGTH; continue }
        }
        if (index("\\^$.[]|()*+?{}/", c)) out = out "\\" c; else out = out c
        fixedlen++
    }
    return out
}
END {
    literals(text)
    for (l = 1; l <= nlits; l++) { re[l] = as_regex(lits[l]); fixed[l] = fixedlen }
    checked = failed = 0
    while ((getline m < msgs) > 0) {
        if (m == "") continue
        tail = sub(/^\.\.\. /, "", m)
        checked++
        found = 0
        for (l = 1; l <= nlits && !found; l++)
            if (fixed[l] >= 12 && m ~ ((tail ? "" : "^") re[l] "$")) found = 1
        if (!found) { print "FAIL: doc/registry-rules.md says \"" m "\", but no string in the code reads so"; failed++ }
    }
    if (checked < 25) { print "FAIL: only " checked " messages found in the document (its tables changed shape?)"; exit 1 }
    print checked " messages of doc/registry-rules.md found in the code, " failed " not"
    exit failed != 0
}' "$TOP_SRCDIR"/src/plugin/*.c "$TOP_SRCDIR"/src/protocol/*.c
