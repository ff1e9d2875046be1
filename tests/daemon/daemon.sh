#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/daemon/daemon.sh: one daemon for many clients. toolhost serves
# --http=unix:PATH; clients reach it through `toolhost connect`. Checked:
# the socket's mode, a live socket refused and a stale one replaced; both
# protocol eras through the relay; ten `connect --start` clients at once
# start one daemon and each sees only its own answers (same ids); calls
# reuse one connection, also after the daemon closed an idle one; a killed
# client leaves the others served and a reload reaches them; a client of
# another uid is refused by the kernel under mode 0600 (the errno shown)
# and under 0666 gets in as its own principal; --idle-exit ends the daemon
# and removes the socket.
set -u
: "${TOOLHOST:?}" "${PLUGINS:?}" "${TESTPLUGINS:?}"
TESTBUILDDIR=$(dirname "$TESTPLUGINS")/..
dir=$(mktemp -d "${TMPDIR:-/tmp}/toolhost-daemon-XXXXXX")
chmod 755 "$dir" # uid 65534 must reach the socket to be refused by its mode
pids=""
cleanup() {
    : >"$dir/release" # the ten clients' inputs end, should a check fail first
    for p in $pids; do kill "$p" 2>/dev/null; done
    # Daemons --start detached are no children of this shell.
    for p in $(pgrep -f "unix:$dir/" 2>/dev/null); do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
fail() {
    echo "FAIL: $*"
    for f in "$dir"/*.log "$dir"/out*; do [ -f "$f" ] && { echo "== $f"; tail -20 "$f"; }; done
    exit 1
}
# until_ok CMD...: waits for CMD to succeed, tried every 0.1 s. The bound
# only ends a hung run: it is no measurement, so it is generous for a
# loaded CI machine, where starting a daemon and scanning its plugins in
# sandboxed workers can take seconds.
patience=120
until_ok() {
    end=$(($(date +%s) + patience))
    while ! "$@" >/dev/null 2>&1; do
        [ "$(date +%s)" -lt "$end" ] || return 1
        sleep 0.1
    done
}
mkdir "$dir/p"
cp "$PLUGINS/echo.so" "$PLUGINS/add.so" "$dir/p/"
INIT='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":{}},"clientInfo":{"name":"t","version":"1"}}}'
INITED='{"jsonrpc":"2.0","method":"notifications/initialized"}'
# echo_call ID TEXT: a legacy tools/call of echo.
echo_call() {
    printf '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"echo","arguments":{"text":"%s"}}}\n' "$1" "$2"
}
LIST='{"jsonrpc":"2.0","id":7,"method":"tools/list"}'

# ---- the socket --------------------------------------------------------
S="$dir/d.sock"
"$TOOLHOST" --http=unix:"$S" -d "$dir/p" --no-registry-cache 2>"$dir/d1.log" &
d1=$!
pids="$pids $d1"
until_ok grep -q 'listening on unix:' "$dir/d1.log" || fail "the daemon did not start"
mode=$(stat -c %a "$S")
[ "$mode" = 600 ] || fail "the socket's mode is $mode, not 600"
echo "ok: the socket is created with mode 0600"

"$TOOLHOST" --http=unix:"$S" -d "$dir/p" --no-registry-cache 2>"$dir/d2.log"
[ $? = 1 ] && grep -q 'another server answers on this socket already' "$dir/d2.log" ||
    fail "a second daemon on a live socket: $(cat "$dir/d2.log")"
echo "ok: a second daemon on a live socket is refused"

mkdir -m 777 "$dir/open"
"$TOOLHOST" --http=unix:"$dir/open/x.sock" -d "$dir/p" --no-registry-cache 2>"$dir/d3.log"
[ $? = 1 ] && grep -q 'writable by group and others' "$dir/d3.log" || fail "a socket in a world-writable directory: $(cat "$dir/d3.log")"
echo "ok: a socket directory others can write is refused"

# ---- the relay, both eras ---------------------------------------------
{ echo "$INIT"; echo "$INITED"; echo_call 1 one; echo "$LIST"; } |
    "$TOOLHOST" connect unix:"$S" >"$dir/out.legacy" 2>"$dir/c.log" || fail "connect: $(cat "$dir/c.log")"
grep -q '"id":0,"result":{"protocolVersion":"2025-06-18"' "$dir/out.legacy" || fail "no initialize answer"
grep -q '"id":1,"result":{"content":\[{"type":"text","text":"one"}' "$dir/out.legacy" || fail "no legacy call answer"
grep -q '"id":7,"result":{"tools":' "$dir/out.legacy" || fail "no tools/list answer"
[ "$(grep -c . "$dir/out.legacy")" = 3 ] || fail "legacy: not exactly three answers: $(cat "$dir/out.legacy")"
echo "ok: a legacy session through connect: initialize, a call, a list"

META='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
printf '{"jsonrpc":"2.0","id":"m","method":"tools/call","params":{"name":"echo","arguments":{"text":"new"},%s}}\n' "$META" |
    "$TOOLHOST" connect unix:"$S" >"$dir/out.modern" 2>"$dir/c.log" || fail "connect: $(cat "$dir/c.log")"
grep -q '"id":"m","result":{"content":\[{"type":"text","text":"new"}' "$dir/out.modern" ||
    fail "2026-07-28 call: $(cat "$dir/out.modern")"
echo "ok: a 2026-07-28 call through connect (headers read off the body)"

# ---- kept connections ---------------------------------------------------
# socks PID: the inodes of the sockets PID holds, one a line, sorted.
socks() {
    for f in /proc/"$1"/fd/*; do readlink "$f"; done 2>/dev/null | sed -n 's/^socket:\[\([0-9]*\)\]$/\1/p' | sort
}
# Sequential 2026-07-28 calls (no GET stream): after each answer connect
# holds one socket, the same one, so the daemon saw one connection for all.
mkfifo "$dir/ink"
"$TOOLHOST" connect unix:"$S" <"$dir/ink" >"$dir/outk" 2>"$dir/ck.log" &
ck=$!
pids="$pids $ck"
exec 7>"$dir/ink"
first=""
for n in 1 2 3 4 5 6; do
    printf '{"jsonrpc":"2.0","id":"k%s","method":"tools/call","params":{"name":"echo","arguments":{"text":"k%s"},%s}}\n' \
        "$n" "$n" "$META" >&7
    until_ok grep -q "\"id\":\"k$n\",\"result\"" "$dir/outk" || fail "kept connection: no answer to call $n"
    now=$(socks "$ck")
    [ -n "$now" ] && [ "$(echo "$now" | wc -l)" = 1 ] || fail "after call $n connect holds sockets '$now', not one"
    [ -n "$first" ] || first=$now
    [ "$now" = "$first" ] || fail "call $n went on socket $now, not on the first call's $first"
done
exec 7>&-
wait "$ck"
echo "ok: six sequential calls went on one kept connection (socket inode $first)"

# A daemon closing an idle connection (--http-timeout 1): the next call
# goes on a new one, and is answered once.
SK="$dir/k.sock"
"$TOOLHOST" --http=unix:"$SK" -d "$dir/p" --no-registry-cache --http-timeout 1 2>"$dir/dk.log" &
dk=$!
pids="$pids $dk"
until_ok grep -q 'listening on unix:' "$dir/dk.log" || fail "the daemon did not start"
mkfifo "$dir/inj"
"$TOOLHOST" connect unix:"$SK" <"$dir/inj" >"$dir/outj" 2>"$dir/cj.log" &
cj=$!
pids="$pids $cj"
exec 7>"$dir/inj"
printf '{"jsonrpc":"2.0","id":"j1","method":"tools/call","params":{"name":"echo","arguments":{"text":"j1"},%s}}\n' "$META" >&7
until_ok grep -q '"id":"j1","result"' "$dir/outj" || fail "no answer to the first call"
before=$(socks "$cj")
until_ok grep -q 'a connection did not deliver its request in time; closed' "$dir/dk.log" ||
    fail "the daemon kept the idle connection past --http-timeout"
printf '{"jsonrpc":"2.0","id":"j2","method":"tools/call","params":{"name":"echo","arguments":{"text":"j2"},%s}}\n' "$META" >&7
until_ok grep -q '"id":"j2","result":{"content":\[{"type":"text","text":"j2"}' "$dir/outj" ||
    fail "no answer after the daemon closed the idle connection: $(cat "$dir/outj" "$dir/cj.log")"
after=$(socks "$cj")
exec 7>&-
wait "$cj"
[ -n "$after" ] && [ "$after" != "$before" ] || fail "call j2 went on socket '$after', the closed one was $before"
[ "$(grep -c '"id":"j2"' "$dir/outj")" = 1 ] || fail "call j2 answered more than once: $(cat "$dir/outj")"
[ ! -s "$dir/cj.log" ] || fail "connect complained: $(cat "$dir/cj.log")"
echo "ok: after the daemon closed an idle connection ($before) the next call went on a new one ($after)"
kill "$dk"
wait "$dk"

# ---- clients apart: a killed one, a reload ---------------------------
# Three long-lived clients, each fed through a FIFO.
for i in 1 2 3; do
    mkfifo "$dir/in$i"
    "$TOOLHOST" connect unix:"$S" <"$dir/in$i" >"$dir/out$i" 2>"$dir/c$i.log" &
    eval "c$i=$!"
    pids="$pids $!"
done
exec 4>"$dir/in1" 5>"$dir/in2" 6>"$dir/in3"
for fd in 4 5 6; do
    { echo "$INIT"; echo "$INITED"; echo_call 1 "fd$fd"; } >&$fd
done
for i in 1 2 3; do
    until_ok grep -q "\"text\":\"fd$((i + 3))\"" "$dir/out$i" || fail "client $i got no answer"
done
kill -9 "$c2"
exec 5>&-
echo_call 2 after >&4
echo_call 2 after >&6
until_ok grep -q '"id":2,"result":{"content":\[{"type":"text","text":"after"}' "$dir/out1" ||
    fail "client 1 not served after client 2 was killed"
until_ok grep -q '"id":2,.*"after"' "$dir/out3" || fail "client 3 not served after client 2 was killed"
echo "ok: a killed client leaves the others served"

# A 2026-07-28 client hears of changes on its subscriptions/listen stream.
mkfifo "$dir/in4"
"$TOOLHOST" connect unix:"$S" <"$dir/in4" >"$dir/out4" 2>"$dir/c4.log" &
c4=$!
pids="$pids $c4"
exec 5>"$dir/in4"
printf '{"jsonrpc":"2.0","id":"sub","method":"subscriptions/listen","params":{%s,"notifications":{"toolsListChanged":true}}}\n' "$META" >&5
until_ok grep -q 'notifications/subscriptions/acknowledged' "$dir/out4" || fail "subscriptions/listen not acknowledged"
cp "$TESTPLUGINS/good.so" "$dir/p/"
kill -HUP "$d1"
for i in 1 3 4; do
    until_ok grep -q 'notifications/tools/list_changed' "$dir/out$i" ||
        fail "client $i did not hear of the reload"
done
echo "ok: a reload (SIGHUP) reaches every client as tools/list_changed (legacy GET stream, 2026-07-28 listen)"
exec 5>&-
kill "$c4"
exec 4>&- 6>&-
wait "$c1" "$c3"

# ---- asks and cancellation through the relay -------------------------
mkdir "$dir/q"
cp "$TESTBUILDDIR/conformance/.libs/client_asking_tools.so" "$TESTBUILDDIR/mcpplugins/.libs/slow.so" \
    "$TESTBUILDDIR/conformance/.libs/test_header_param.so" "$PLUGINS/echo.so" "$dir/q/"
SQ="$dir/q.sock"
"$TOOLHOST" --http=unix:"$SQ" -d "$dir/q" --no-registry-cache 2>"$dir/dq.log" &
dq=$!
pids="$pids $dq"
until_ok grep -q 'listening on unix:' "$dir/dq.log" || fail "the daemon did not start"
mkfifo "$dir/inq"
"$TOOLHOST" connect unix:"$SQ" <"$dir/inq" >"$dir/outq" 2>"$dir/cq.log" &
cq=$!
pids="$pids $cq"
exec 7>"$dir/inq"
echo '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}' >&7
echo "$INITED" >&7
echo '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_elicitation","arguments":{"message":"name?"}}}' >&7
echo '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","arguments":{"ms":60000,"tag":"relay"}}}' >&7
echo_call 4 meanwhile >&7
until_ok grep -q '"method":"elicitation/create"' "$dir/outq" || fail "no elicitation/create reached the client"
until_ok grep -q '"id":4,.*"meanwhile"' "$dir/outq" || fail "a slow call held up the next one"
ask=$(sed -n 's/.*"id":\("[^"]*"\),"method":"elicitation\/create".*/\1/p' "$dir/outq")
[ -n "$ask" ] || fail "no id in the elicitation request: $(cat "$dir/outq")"
echo "{\"jsonrpc\":\"2.0\",\"id\":$ask,\"result\":{\"action\":\"accept\",\"content\":{\"username\":\"ann\",\"email\":\"a@b\"}}}" >&7
until_ok grep -q '"id":1,"result":{"content":\[{"type":"text","text":"User response: .*ann' "$dir/outq" ||
    fail "the elicitation's answer did not reach the tool: $(cat "$dir/outq")"
echo "ok: an elicitation during a call reaches the client and its answer the tool"
echo '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"test"}}' >&7
until_ok grep -q 'slow\[relay\]: saw cancellation' "$dir/dq.log" || fail "the cancellation did not reach the call"
echo "ok: a cancellation reaches the call it names, while another call was answered"
exec 7>&-
wait "$cq"

# A 2026-07-28 call of a tool that mirrors an argument in a header
# (x-mcp-header): connect learns which from the tools/list it relays.
mkfifo "$dir/inh"
"$TOOLHOST" connect unix:"$SQ" <"$dir/inh" >"$dir/outh" 2>"$dir/ch.log" &
ch=$!
pids="$pids $ch"
exec 7>"$dir/inh"
printf '{"jsonrpc":"2.0","id":"l","method":"tools/list","params":{%s}}\n' "$META" >&7
until_ok grep -q '"id":"l","result"' "$dir/outh" || fail "no tools/list answer: $(cat "$dir/outh")"
# Plain ASCII goes as it is, anything else Base64-wrapped.
for region in "eu west" "zürich"; do
    printf '{"jsonrpc":"2.0","id":"%s","method":"tools/call","params":{"name":"test_header_param","arguments":{"region":"%s"},%s}}\n' \
        "$region" "$region" "$META" >&7
    until_ok grep -q "\"id\":\"$region\",\"result\":{\"content\":\[{\"type\":\"text\",\"text\":\"$region\"}" "$dir/outh" ||
        fail "a call with an Mcp-Param header ($region): $(cat "$dir/outh")"
done
exec 7>&-
wait "$ch"
echo "ok: a 2026-07-28 call of an x-mcp-header tool gets its Mcp-Param header"
kill "$dq"
wait "$dq"

# ---- another uid --------------------------------------------------------
command -v setpriv >/dev/null || fail "setpriv (util-linux) is missing"
setpriv --reuid=65534 --regid=65534 --clear-groups "$TOOLHOST" connect unix:"$S" </dev/null >/dev/null 2>"$dir/nobody.log"
rc=$?
[ $rc = 1 ] && grep -q 'connect: Permission denied' "$dir/nobody.log" ||
    fail "uid 65534 under mode 0600: status $rc: $(cat "$dir/nobody.log")"
echo "ok: uid 65534 under mode 0600: connect(2) got EACCES: $(cat "$dir/nobody.log")"
kill "$d1"
wait "$d1"
[ ! -e "$S" ] || fail "the socket is still there after a clean exit"
echo "ok: a clean exit removes the socket"

# A stale socket (its daemon killed) is replaced by the next daemon.
S2="$dir/shared.sock"
"$TOOLHOST" --http=unix:"$S2" --http-socket-mode 0666 -d "$dir/p" --no-registry-cache \
    --auth-tools uid:65534=echo --auth-tools uid:0=echo,add,good 2>"$dir/d4.log" &
d4=$!
until_ok grep -q 'listening on unix:' "$dir/d4.log" || fail "the daemon did not start"
kill -9 "$d4"
wait "$d4" 2>/dev/null
[ -S "$S2" ] || fail "no stale socket after kill -9"
"$TOOLHOST" --http=unix:"$S2" --http-socket-mode 0666 -d "$dir/p" --no-registry-cache \
    --auth-tools uid:65534=echo --auth-tools uid:0=echo,add,good 2>"$dir/d5.log" &
d5=$!
pids="$pids $d5"
until_ok grep -q 'listening on unix:' "$dir/d5.log" || fail "a stale socket was not replaced: $(cat "$dir/d5.log")"
[ "$(stat -c %a "$S2")" = 666 ] || fail "--http-socket-mode 0666 gave $(stat -c %a "$S2")"
echo "ok: a stale socket is replaced; --http-socket-mode 0666 is applied"

{ echo "$INIT"; echo "$INITED"; echo "$LIST"; } |
    setpriv --reuid=65534 --regid=65534 --clear-groups "$TOOLHOST" connect unix:"$S2" >"$dir/out.nobody" 2>"$dir/nobody.log" ||
    fail "uid 65534 under 0666: $(cat "$dir/nobody.log")"
{ echo "$INIT"; echo "$INITED"; echo "$LIST"; } |
    "$TOOLHOST" connect unix:"$S2" >"$dir/out.root" 2>"$dir/c.log" || fail "root: $(cat "$dir/c.log")"
grep -q '"name":"echo"' "$dir/out.nobody" && ! grep -q '"name":"add"' "$dir/out.nobody" ||
    fail "uid 65534 is not its own principal (uid:65534 sees echo alone): $(cat "$dir/out.nobody")"
grep -q '"name":"add"' "$dir/out.root" || fail "uid 0 does not see add: $(cat "$dir/out.root")"
echo "ok: under 0666 uid 65534 gets in as principal uid:65534 (--auth-tools uid:65534=echo: echo alone)"

# A session is bound to its uid: another uid presenting its id gets 404.
curl -s -D "$dir/h.root" -o /dev/null --unix-socket "$S2" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' --data-binary "$INIT" http://localhost/mcp
sid=$(sed -n 's/^Mcp-Session-Id: *\([^[:space:]]*\).*/\1/ip' "$dir/h.root")
[ -n "$sid" ] || fail "no session id: $(cat "$dir/h.root")"
code=$(setpriv --reuid=65534 --regid=65534 --clear-groups curl -s -o /dev/null -w '%{http_code}' \
    --unix-socket "$S2" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -H "Mcp-Session-Id: $sid" --data-binary "$LIST" http://localhost/mcp)
[ "$code" = 404 ] || fail "uid 65534 used uid 0's session: HTTP $code"
echo "ok: uid 65534 cannot use a session uid 0 opened (404)"
kill "$d5"
wait "$d5"

# ---- ten clients start one daemon; --idle-exit -----------------------
# Each client keeps its input open until all ten have their answers: a
# client that finished and left before a slow one (on a loaded machine)
# had connected would let the daemon's idle second run out, and the slow
# one would start a second daemon. Asserted after that: exactly one.
S3="$dir/auto.sock"
for i in 0 1 2 3 4 5 6 7 8 9; do
    { echo "$INIT"; echo "$INITED"; echo_call 1 "client$i"; echo_call 2 "again$i"
      until [ -e "$dir/release" ]; do sleep 0.1; done; } |
        "$TOOLHOST" connect --start unix:"$S3" -d "$dir/p" --no-registry-cache --idle-exit 1 \
            >"$dir/out.auto$i" 2>"$dir/auto$i.log" &
    pids="$pids $!"
done
for i in 0 1 2 3 4 5 6 7 8 9; do
    until_ok grep -q "\"id\":2,.*\"again$i\"" "$dir/out.auto$i" || break
done
touch "$dir/release"
wait
for i in 0 1 2 3 4 5 6 7 8 9; do
    grep -q "\"id\":1,\"result\":{\"content\":\[{\"type\":\"text\",\"text\":\"client$i\"}" "$dir/out.auto$i" ||
        fail "client $i: no answer of its own to id 1: $(cat "$dir/out.auto$i" "$dir/auto$i.log")"
    grep -q "\"id\":2,.*\"again$i\"" "$dir/out.auto$i" || fail "client $i: no answer of its own to id 2"
    [ "$(grep -c '"text":"client\|"text":"again' "$dir/out.auto$i")" = 2 ] ||
        fail "client $i saw answers not its own: $(cat "$dir/out.auto$i")"
done
echo "ok: ten clients, same ids, each sees only its own answers"
n=$(grep -c 'listening on unix:' "$S3.log")
[ "$n" = 1 ] || fail "$n daemons started for ten clients"
echo "ok: ten 'connect --start' clients at once started exactly one daemon"
until_ok test ! -e "$S3" || fail "--idle-exit: the socket is still there"
until_ok sh -c "! pgrep -f '[u]nix:$S3' >/dev/null" || fail "--idle-exit: the daemon still runs"
grep -q 'no client for --idle-exit' "$S3.log" || fail "--idle-exit: no log line"
echo "ok: --idle-exit: the daemon exited and removed its socket"
exit 0
