#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/scaleout/nginx.sh: nginx in front of three toolhost --http instances
# (scripts/nginx-scaleout.sh, with contrib/nginx/toolhost-proxy.conf):
# modern requests go round-robin and succeed on every instance; legacy
# sessions stay on the instance that opened them. The "pid" tool
# (tests/hostile/limits.c) says which process served a call. Each case is a
# function named in CASES. A 2026-07-28 multi round-trip call
# (tests/conformance/input_required_tools.c) is retried on another instance
# than the one that asked: it completes when the instances share a
# --state-key-file, and is refused (-32602) when each has its own.
set -u
: "${TOOLHOST:?}" "${HOSTILE:?}" "${TOP_SRCDIR:?}"
fail() { echo "FAIL: $*"; [ -n "${dir:-}" ] && for f in "$dir"/run/*.log; do echo "== $f"; cat "$f"; done; exit 1; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/toolhost-scaleout-XXXXXX")
trap 'sh "$TOP_SRCDIR/scripts/nginx-scaleout.sh" stop "$dir/run"; rm -rf "$dir"' EXIT
CONFORMANCE=${CONFORMANCE:-$HOSTILE/../../conformance/.libs}
mkdir "$dir/plugins"
cp "$HOSTILE/limits.so" "$CONFORMANCE/input_required_tools.so" "$dir/plugins/"
# One key for all instances, and one each for the case that must fail.
for k in shared 1 2 3; do
    head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$dir/key-$k"
done
# A TOOLHOST that gives instance K (scripts/nginx-scaleout.sh sets
# TOOLHOST_INSTANCE) a key of its own.
cat >"$dir/own-key.sh" <<WRAP
#!/bin/sh
exec "$TOOLHOST" --state-key-file="$dir/key-\$TOOLHOST_INSTANCE" "\$@"
WRAP
chmod +x "$dir/own-key.sh"

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

# The upstream address of nginx's last logged request.
last_upstream() {
    tail -n 1 "$dir/run/access.log" | cut -d' ' -f1
}

MRTR_TOOL=test_input_required_result_elicitation
MRTR_HEADERS="-H MCP-Protocol-Version:2026-07-28 -H Mcp-Method:tools/call -H Mcp-Name:$MRTR_TOOL"
MRTR_META='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}'

# Ask (input_required) through nginx; the requestState in $state, the
# instance that asked in $asked_by.
mrtr_ask() {
    # nginx writes its log line after the response: wait for it.
    before=$(wc -l <"$dir/run/access.log")
    request POST '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"'$MRTR_TOOL'","arguments":{},'"$MRTR_META"'}}' $MRTR_HEADERS
    [ "$status" = 200 ] || fail "$1: MRTR ask: HTTP $status $(cat "$dir/body")"
    grep -q '"resultType":"input_required"' "$dir/body" || fail "$1: no input_required: $(cat "$dir/body")"
    state=$(sed -n 's/.*"requestState":"\([^"]*\)".*/\1/p' "$dir/body")
    [ -n "$state" ] || fail "$1: no requestState: $(cat "$dir/body")"
    wait_log_line "$before"
    asked_by=$(last_upstream)
}

# Retry with the answer and $state; the instance that answered in $retried_by.
mrtr_retry() {
    before=$(wc -l <"$dir/run/access.log")
    request POST '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"'$MRTR_TOOL'","arguments":{},"inputResponses":{"user_name":{"action":"accept","content":{"name":"Ada"}}},"requestState":"'"$state"'",'"$MRTR_META"'}}' $MRTR_HEADERS
    wait_log_line "$before"
    retried_by=$(last_upstream)
}

wait_log_line() {
    i=0
    while [ "$(wc -l <"$dir/run/access.log")" -le "$1" ] && [ $i -lt 50 ]; do
        i=$((i + 1))
        sleep 0.1
    done
}

case_mrtr_retry_on_another_instance() {
    mrtr_ask "$iso"
    mrtr_retry
    [ "$retried_by" != "$asked_by" ] || fail "$iso: the MRTR retry went to $asked_by again (want another instance)"
    [ "$status" = 200 ] || fail "$iso: MRTR retry on $retried_by: HTTP $status $(cat "$dir/body")"
    grep -q '"text":"Hello, Ada!"' "$dir/body" || fail "$iso: MRTR retry on $retried_by: $(cat "$dir/body")"
    echo "ok: $iso: input_required from $asked_by, completed by $retried_by (one --state-key-file)"
}

# Each instance its own key: another instance cannot verify the state.
mrtr_refused_with_own_keys() {
    mrtr_ask "own keys"
    mrtr_retry
    [ "$retried_by" != "$asked_by" ] || fail "own keys: the MRTR retry went to $asked_by again"
    [ "$status" = 400 ] || fail "own keys: a foreign requestState got HTTP $status $(cat "$dir/body")"
    grep -q '"code":-32602' "$dir/body" || fail "own keys: want -32602: $(cat "$dir/body")"
    echo "ok: own keys: requestState from $asked_by refused by $retried_by (-32602)"
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

CASES="case_modern_round_robin case_legacy_sessions_pinned case_mrtr_retry_on_another_instance"

for iso in none process; do
    TOOLHOST="$TOOLHOST" sh "$TOP_SRCDIR/scripts/nginx-scaleout.sh" start "$dir/run" 3 --isolation=$iso \
        --plugin-dir "$dir/plugins" --state-key-file="$dir/key-shared" || fail "$iso: could not start nginx and three instances"
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
TOOLHOST="$dir/own-key.sh" sh "$TOP_SRCDIR/scripts/nginx-scaleout.sh" start "$dir/run" 3 --isolation=none \
    --plugin-dir "$dir/plugins" || fail "own keys: could not start nginx and three instances"
. "$dir/run/scaleout.env"
mrtr_refused_with_own_keys
sh "$TOP_SRCDIR/scripts/nginx-scaleout.sh" stop "$dir/run"
echo "PASS: nginx scale-out"
