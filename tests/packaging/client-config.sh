#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/packaging/client-config.sh: the MCP client snippets of README.md
# and doc/running.md work when pasted. Every ```json block holding "mcpServers" or "servers" must be
# strict JSON (mcpconfig.c) whose servers run toolhost by a path an install
# really gives it, with absolute --plugin-dir paths; there must be one for
# Claude Desktop, VS Code ("servers", "type": "stdio") and Cursor, each
# after a paragraph naming its file; and `claude mcp add` lines must run the
# same paths. The built binary must accept each snippet's options.
set -u
fail() { echo "FAIL: $*"; exit 1; }
: "${TOP_SRCDIR:?}" "${TOOLHOST:?}" "${bindir:?}" "${CC:=cc}"
work=$(mktemp -d "${TMPDIR:-/tmp}/th-clients.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
readme="$work/docs.md"
cat "$TOP_SRCDIR/README.md" "$TOP_SRCDIR/doc/running.md" > "$readme"

$CC -std=c11 -Wall -Wextra -Werror $(pkg-config --cflags json-c) -o "$work/mcpconfig" \
    "$TOP_SRCDIR/tests/packaging/mcpconfig.c" $(pkg-config --libs json-c) || fail "compiling mcpconfig.c"

# Where installs put the binary: this build's bindir, configure's default
# prefix, and the Debian package's (debian/toolhost.install).
paths="$bindir/toolhost"
grep -q '^ac_default_prefix=/usr/local$' "$TOP_SRCDIR/configure" && paths="$paths /usr/local/bin/toolhost"
grep -qx 'usr/bin/toolhost' "$TOP_SRCDIR/debian/toolhost.install" && paths="$paths /usr/bin/toolhost"
known() { case " $paths " in *" $1 "*) return 0 ;; esac; return 1; }

# Each ```json block to work/N.json, the paragraph before it in N.before.
awk -v dir="$work" '
    /^```json$/ { n++; inblock = 1; out = dir "/" n ".json"; printf "" > out;
                  print para > (dir "/" n ".before"); next }
    /^```$/ && inblock { inblock = 0; close(out); para = ""; next }
    inblock { print >> out; next }
    /^$/ { if (para != "") last = para; next }
    { if (last != "") { para = ""; last = "" } para = para " " $0 }
' "$readme"

checked=0 claude=0 vscode=0 cursor=0
for j in "$work"/*.json; do
    [ -f "$j" ] || continue
    grep -q '"mcpServers"\|"servers"' "$j" || continue
    n=${j%.json}
    "$work/mcpconfig" "$j" > "$n.servers" 2> "$n.err" || { cat "$j" "$n.err"; fail "snippet $(basename "$j") is not a valid client configuration"; }
    checked=$((checked + 1))
    while IFS="$(printf '\t')" read -r key name type command args; do
        known "$command" || fail "snippet $(basename "$j"), server $name: command $command is none of the installed paths ($paths)"
        [ "$key" = servers ] && [ "$type" != stdio ] && fail "snippet $(basename "$j"): VS Code's \"servers\" need \"type\": \"stdio\", not $type"
        # The options, as the binary parses them: --help after them exits 0
        # only if every one before it was accepted.
        set -f
        # shellcheck disable=SC2086
        set -- $args
        set +f
        prev=
        for a in "$@"; do
            if [ "$prev" = --plugin-dir ]; then
                case "$a" in /*) ;; *) fail "snippet $(basename "$j"): --plugin-dir $a is not absolute (clients expand no ~ or \$HOME)" ;; esac
                case "$a" in /usr/local/*) [ "$a" = /usr/local/lib/toolhost/plugins ] || fail "snippet $(basename "$j"): $a is not make install's plugin directory" ;; esac
            fi
            prev=$a
        done
        "$TOOLHOST" "$@" --help > /dev/null 2> "$n.err" || { cat "$n.err"; fail "snippet $(basename "$j"): toolhost refuses the options $*"; }
    done < "$n.servers"
    before=$(cat "$n.before")
    case "$before" in *claude_desktop_config.json*) [ "$(cut -f1 "$n.servers" | sort -u)" = mcpServers ] && claude=$((claude + 1)) ;; esac
    case "$before" in *.vscode/mcp.json*) [ "$(cut -f1 "$n.servers" | sort -u)" = servers ] && vscode=$((vscode + 1)) ;; esac
    case "$before" in *.cursor/mcp.json*) [ "$(cut -f1 "$n.servers" | sort -u)" = mcpServers ] && cursor=$((cursor + 1)) ;; esac
done
[ "$claude" -ge 1 ] || fail "no \"mcpServers\" snippet after a paragraph naming claude_desktop_config.json"
[ "$vscode" -ge 1 ] || fail "no \"servers\" snippet after a paragraph naming .vscode/mcp.json"
[ "$cursor" -ge 1 ] || fail "no \"mcpServers\" snippet after a paragraph naming ~/.cursor/mcp.json"

adds=0
grep '^claude mcp add ' "$readme" > "$work/adds" || true
while read -r line; do
    cmd=${line#* -- }
    [ "$cmd" != "$line" ] || fail "'$line' has no -- before the server's command line"
    set -f
    # shellcheck disable=SC2086
    set -- $cmd
    set +f
    known "$1" || fail "'$line' runs $1, none of the installed paths ($paths)"
    shift
    "$TOOLHOST" "$@" --help > /dev/null 2>&1 || fail "toolhost refuses the options of '$line'"
    adds=$((adds + 1))
done < "$work/adds"
[ "$adds" -ge 1 ] || fail "no 'claude mcp add' line in README.md or doc/running.md"
echo "PASS: $checked client snippets and $adds 'claude mcp add' lines parse and run toolhost from $paths"
