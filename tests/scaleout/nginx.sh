#!/bin/sh
# tests/scaleout/nginx.sh: nginx in front of three toolhost --http instances
# (scripts/nginx-scaleout.sh, with contrib/nginx/toolhost-proxy.conf):
# modern requests go round-robin and succeed on every instance; legacy
# sessions stay on the instance that opened them. The "pid" tool
# (tests/hostile/limits.c) says which process served a call. Each case is a
# function named in CASES: an MRTR retry case (any instance verifying
# another's requestState, given one --state-key-file) goes in the same way.
set -u
: "${TOOLHOST:?}" "${HOSTILE:?}" "${TOP_SRCDIR:?}"
fail() { echo "FAIL: $*"; [ -n "${dir:-}" ] && for f in "$dir"/run/*.log; do echo "== $f"; cat "$f"; done; exit 1; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/toolhost-scaleout-XXXXXX")
trap 'sh "$TOP_SRCDIR/scripts/nginx-scaleout.sh" stop "$dir/run"; rm -rf "$dir"' EXIT
mkdir "$dir/plugins"
cp "$HOSTILE/limits.so" "$dir/plugins/"

# request METHOD BODY [HEADER...]: the status in $status, body in $dir/body,
# headers in $dir/headers.
request() {
    m=$1 b=$2
    shift 2
    set -- -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' "$@"
    status=$(curl -s -o "$dir/body" -D "$dir/headers" -w '%{http_code}' -X "$m" "$@" ${b:+--data-binary "$b"} "$NGINX_URL")
}

META='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
CALL_PID='{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"pid","arguments":{}'

# The toolhost instance that served a call answered with pid $1: the pid
# itself in-process, the worker's parent under process isolation.
instance_of() {
    p=$1
    [ "$iso" = process ] && p=$(sed -n 's/^PPid:[[:space:]]*//p' "/proc/$p/status" 2>/dev/null)
    k=1
    for ip in $INSTANCE_PIDS; do
        [ "$ip" = "$p" ] && { echo $k; return 0; }
        k=$((k + 1))
    done
    echo none
}

# The pid in a tools/call result ({"content":[{"type":"text","text":"PID"}]...}).
served_pid() {
    sed -n 's/.*"text":"\([0-9]*\)".*/\1/p' "$dir/body"
}

case_modern_round_robin() {
    seen=""
    for i in 1 2 3 4 5 6 7 8 9; do
        request POST "$CALL_PID,$META}}" -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: pid'
        [ "$status" = 200 ] || fail "$iso: modern call $i: HTTP $status $(cat "$dir/body")"
        grep -q '"isError":true' "$dir/body" && fail "$iso: modern call $i failed: $(cat "$dir/body")"
        k=$(instance_of "$(served_pid)")
        [ "$k" != none ] || fail "$iso: modern call $i was served by no instance: $(cat "$dir/body")"
        seen="$seen $k"
    done
    for k in 1 2 3; do
        case " $seen " in *" $k "*) ;; *) fail "$iso: instance $k served none of 9 modern calls (served:$seen)" ;; esac
    done
    echo "ok: $iso: 9 modern calls served by instances$seen"
}

case_legacy_sessions_pinned() {
    homes=""
    for s in 1 2 3; do
        request POST '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
        [ "$status" = 200 ] || fail "$iso: initialize $s: HTTP $status"
        sid=$(sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: *\([^[:space:]]*\).*/\1/p' "$dir/headers")
        [ -n "$sid" ] || fail "$iso: initialize $s: no Mcp-Session-Id in $(cat "$dir/headers")"
        request POST '{"jsonrpc":"2.0","method":"notifications/initialized"}' -H "Mcp-Session-Id: $sid"
        [ "$status" = 202 ] || fail "$iso: session $sid: initialized got HTTP $status"
        home=""
        for i in 1 2 3 4; do
            request POST "$CALL_PID}}" -H "Mcp-Session-Id: $sid"
            [ "$status" = 200 ] || fail "$iso: session $sid call $i: HTTP $status $(cat "$dir/body")"
            k=$(instance_of "$(served_pid)")
            [ -z "$home" ] && home=$k
            [ "$k" = "$home" ] || fail "$iso: session $sid moved from instance $home to $k"
        done
        # The prefix names the instance that holds the session.
        case "$sid" in "i$home-"*) ;; *) fail "$iso: session $sid served by instance $home" ;; esac
        homes="$homes $home"
        request DELETE "" -H "Mcp-Session-Id: $sid"
        [ "$status" = 200 ] || fail "$iso: DELETE $sid: HTTP $status"
        request POST "$CALL_PID}}" -H "Mcp-Session-Id: $sid"
        [ "$status" = 404 ] || fail "$iso: a call in ended session $sid: HTTP $status"
    done
    [ "$(echo $homes | tr ' ' '\n' | sort -u | wc -l)" -ge 2 ] || fail "$iso: every session on one instance:$homes"
    # An id no instance issued: 404 (the client initializes again), whether
    # its prefix routes it or not.
    for sid in i2-00000000000000000000000000000000 stranger; do
        request POST "$CALL_PID}}" -H "Mcp-Session-Id: $sid"
        [ "$status" = 404 ] || fail "$iso: unknown session $sid: HTTP $status"
    done
    echo "ok: $iso: 3 legacy sessions, each pinned to its instance:$homes"
}

CASES="case_modern_round_robin case_legacy_sessions_pinned"

for iso in none process; do
    TOOLHOST="$TOOLHOST" sh "$TOP_SRCDIR/scripts/nginx-scaleout.sh" start "$dir/run" 3 --isolation=$iso \
        --plugin-dir "$dir/plugins" || fail "$iso: could not start nginx and three instances"
    . "$dir/run/scaleout.env"
    for c in $CASES; do
        $c
    done
    # nginx's own account agrees: every instance got requests.
    for port in $INSTANCE_PORTS; do
        grep -q "^127.0.0.1:$port 200 " "$dir/run/access.log" || fail "$iso: nginx sent nothing to port $port"
    done
    sh "$TOP_SRCDIR/scripts/nginx-scaleout.sh" stop "$dir/run"
    rm -rf "$dir/run"
done
echo "PASS: nginx scale-out"
