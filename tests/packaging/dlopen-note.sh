#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/packaging/dlopen-note.sh: the toolhost binary declares the libraries
# it opens with dlopen() in a .note.dlopen ELF note
# (https://systemd.io/ELF_DLOPEN_METADATA/, src/dlnote.c), which packaging
# tools read (debian/dlopen-deps): owner "FDO", type 0x407c0c0a, a JSON
# array of {feature, description, priority, soname[]}, whose sonames are
# the very ones the binary opens (seen through the dynamic linker's
# LD_DEBUG=files). And libmicrohttpd is only recommended because it is
# optional: with it unloadable (a mount namespace puts /dev/null over the
# file), stdio serves and --http fails with a message naming it.
set -u
fail() { echo "FAIL: $*"; exit 1; }
: "${TOOLHOST:?}" "${PLUGINS:?}"
work=$(mktemp -d "${TMPDIR:-/tmp}/th-dlnote.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
if ! command -v jq >/dev/null 2>&1; then
    [ -z "${CI:-}" ] || fail "jq was not found; CI must read the note (scripts/deps-debian.sh --test installs it)"
    echo "SKIP: jq was not found (Debian: apt-get install jq)"
    exit 77
fi

# The note: one, 4-byte header words (namesz, descsz, type), "FDO\0", JSON.
objcopy -O binary --only-section=.note.dlopen "$TOOLHOST" "$work/note" || fail "objcopy --only-section=.note.dlopen"
[ -s "$work/note" ] || fail "$TOOLHOST has no .note.dlopen section"
readelf -S -W "$TOOLHOST" | grep '\.note\.dlopen' | grep -q ' NOTE ' || fail ".note.dlopen is not of type NOTE"
set -- $(od -An -tu4 -N12 "$work/note")
[ "$1" = 4 ] && [ "$3" = $((0x407c0c0a)) ] || fail "note header namesz=$1 type=$3, not 4 and 0x407c0c0a"
[ "$(dd if="$work/note" bs=1 skip=12 count=3 2>/dev/null)" = FDO ] || fail "the note's owner is not FDO"
size=$(wc -c < "$work/note")
[ $((16 + $2)) -le "$size" ] || fail "descsz $2 runs past the section ($size bytes)"
tail -c +17 "$work/note" | head -c "$2" | tr -d '\000' > "$work/json"
jq -e 'type == "array" and length > 0 and all(.[];
        (.feature | type == "string") and (.description | type == "string") and
        (.priority | IN("required", "recommended", "suggested")) and
        (.soname | type == "array" and length > 0 and all(.[]; type == "string")))' "$work/json" > /dev/null ||
    { cat "$work/json"; fail "the note's JSON is not an array of {feature, description, priority, soname[]}"; }
mhd=$(jq -r '.[] | select(.feature == "http") | .soname[0]' "$work/json")
crypto=$(jq -r '.[] | select(.feature == "crypto") | .soname[0]' "$work/json")
[ "$(jq -r '.[] | select(.feature == "http") | .priority' "$work/json")" = recommended ] || fail "http is not recommended"
[ "$(jq -r '.[] | select(.feature == "crypto") | .priority' "$work/json")" = required ] || fail "crypto is not required"

# What the binary opens: LD_DEBUG=files names each file dlopen() loads.
opened() { grep 'dynamically loaded by' "$1" | sed -n 's/.*file=\([^ ]*\) .*/\1/p' | sort -u; }
printf '' > "$work/tokens"
LD_DEBUG=files LD_DEBUG_OUTPUT="$work/ld-crypto" "$TOOLHOST" --plugin-dir "$PLUGINS" --no-registry-cache \
    --http=127.0.0.1:0 --auth-token-file "$work/no-such-file" < /dev/null > /dev/null 2>&1
cat "$work"/ld-crypto* > "$work/ld" 2>/dev/null
opened "$work/ld" | grep -qxF "$crypto" || { opened "$work/ld"; fail "toolhost did not dlopen $crypto, the note's libcrypto"; }
LD_DEBUG=files LD_DEBUG_OUTPUT="$work/ld-mhd" "$TOOLHOST" --plugin-dir "$PLUGINS" --no-registry-cache \
    --metrics=not-an-address:9 < /dev/null > /dev/null 2>&1
cat "$work"/ld-mhd* > "$work/ld" 2>/dev/null
opened "$work/ld" | grep -qxF "$mhd" || { opened "$work/ld"; fail "toolhost did not dlopen $mhd, the note's libmicrohttpd"; }

# libmicrohttpd unloadable: in a user and mount namespace of our own, the
# file the dynamic linker finds for the soname is /dev/null.
lib=$(ldconfig -p | awk -v s="$mhd" '$1 == s { print $NF; exit }')
[ -n "$lib" ] || fail "ldconfig does not know $mhd"
if ! unshare -rm true 2>"$work/err"; then
    [ -z "${CI:-}" ] || fail "unshare -rm: $(cat "$work/err")"
    echo "SKIP: no user namespaces here ($(cat "$work/err")): --http without $mhd not tried"
    exit 77
fi
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
echo "$init" | unshare -rm sh -c 'mount --bind /dev/null "$1" && shift && exec "$@"' sh "$lib" \
    "$TOOLHOST" --plugin-dir "$PLUGINS" --no-registry-cache > "$work/out" 2> "$work/err" ||
    { cat "$work/err"; fail "stdio without $mhd exited with $?"; }
grep -q '"id":1,"result"' "$work/out" || { cat "$work/out" "$work/err"; fail "stdio without $mhd did not answer initialize"; }
unshare -rm sh -c 'mount --bind /dev/null "$1" && shift && exec "$@"' sh "$lib" \
    "$TOOLHOST" --plugin-dir "$PLUGINS" --no-registry-cache --http=127.0.0.1:0 < /dev/null > "$work/out" 2> "$work/err"
rc=$?
[ "$rc" -eq 1 ] || { cat "$work/err"; fail "--http without $mhd exited with $rc, not 1 (a clean failure)"; }
grep -q -- "--http: .*$mhd" "$work/err" || { cat "$work/err"; fail "--http without $mhd: the message does not name it"; }
echo "PASS: .note.dlopen declares $crypto (required) and $mhd (recommended), as opened;" \
    "without $mhd: $(grep -o "$mhd[^\"]*" "$work/err" | sed -n 1p)"
