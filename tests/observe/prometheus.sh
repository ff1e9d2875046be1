#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/observe/prometheus.sh: /metrics as an operator's Prometheus reads
# it. toolhost serves HTTP with --metrics=http; the test makes a known set
# of calls (echo ok, good with a missing argument: a tool error, crash: a
# worker that dies, five times, so its plugin is quarantined; a listing
# and a call of an unknown tool, counted by method), checks the
# text with promtool, has Debian's prometheus scrape it and reads the
# counters back through its query API. Then /readyz says 503 while a slow
# plugin loads behind --metrics ADDR, and 200 once it is served.
# prometheus and promtool come with scripts/deps-debian.sh --test: this
# test fails, never skips, without them.
set -u
: "${TOOLHOST:?}" "${HOSTILE:?}" "${TESTPLUGINS:?}" "${PLUGINS:?}"
for t in prometheus promtool curl; do
    command -v $t >/dev/null 2>&1 || { echo "FAIL: $t is missing: run scripts/deps-debian.sh --test"; exit 1; }
done
dir=$(mktemp -d "${TMPDIR:-/tmp}/toolhost-prom-XXXXXX")
chmod 755 "$dir"
pids=""
cleanup() {
    for p in $pids; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
fail() {
    echo "FAIL: $*"
    for f in "$dir"/*.log; do [ -f "$f" ] && { echo "== $f"; tail -30 "$f"; }; done
    exit 1
}
# until_ok N CMD...: CMD succeeds within N tries 0.1 s apart (a guard for
# processes starting, not a measurement).
until_ok() {
    n=$1
    shift
    while ! "$@" >/dev/null 2>&1; do
        n=$((n - 1))
        [ "$n" -gt 0 ] || return 1
        sleep 0.1
    done
}

# Counting with nowhere to read it is a usage error; an address that is no
# literal is refused before any plugin loads.
"$TOOLHOST" --metrics=http -d "$PLUGINS" </dev/null >/dev/null 2>"$dir/usage.log"
[ $? = 2 ] && grep -q -- '--metrics=http needs --http' "$dir/usage.log" || fail "--metrics=http without --http: $(cat "$dir/usage.log")"
"$TOOLHOST" --metrics=localhost:9464 -d "$PLUGINS" </dev/null >/dev/null 2>"$dir/usage.log"
[ $? = 1 ] && grep -q "'localhost' is not an IPv4 or IPv6 address" "$dir/usage.log" ||
    fail "--metrics=localhost:9464: $(cat "$dir/usage.log")"
echo "ok: --metrics without a place to serve, or with a host name, is refused"

mkdir "$dir/p"
cp "$PLUGINS/echo.so" "$TESTPLUGINS/good.so" "$HOSTILE/crash.so" "$dir/p/"
"$TOOLHOST" --http=127.0.0.1:0 --metrics=http --no-registry-cache -d "$dir/p" 2>"$dir/toolhost.log" &
pids="$pids $!"
until_ok 100 grep -q 'listening on http' "$dir/toolhost.log" || fail "toolhost did not start"
port=$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9]*\)\/mcp.*/\1/p' "$dir/toolhost.log")
base="http://127.0.0.1:$port"

META='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
# call TOOL ARGS: one 2026-07-28 tools/call; the response in $dir/body.
call() {
    curl -s -o "$dir/body" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
        -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H "Mcp-Name: $1" \
        --data-binary "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"$1\",\"arguments\":$2,$META}}" \
        "$base/mcp" || fail "tools/call $1: curl failed"
}
for i in 1 2 3; do
    call echo '{"text":"hi"}'
    grep -q '"text":"hi"' "$dir/body" || fail "echo $i: $(cat "$dir/body")"
done
for i in 1 2; do
    call good '{}'
    grep -q '"isError":true' "$dir/body" || fail "good without text was no tool error: $(cat "$dir/body")"
done
# Five crashes in a row quarantine the plugin (worker/supervisor.c); each
# waits out the backoff the crash before it set (100 ms, doubling).
for wait in 0 0.3 0.5 0.9 1.7; do
    sleep $wait
    call crash '{}'
    grep -q '"isError":true' "$dir/body" || fail "crash answered no error: $(cat "$dir/body")"
done

# Other methods count in the same histogram by method: a listing, and a
# call of a tool that does not exist (-32602, refused before it ran).
curl -s -o "$dir/body" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/list' \
    --data-binary "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{$META}}" "$base/mcp" ||
    fail "tools/list: curl failed"
grep -q '"name":"echo"' "$dir/body" || fail "tools/list: $(cat "$dir/body")"
call no_such_tool '{}'
grep -q '"code":-32602' "$dir/body" || fail "an unknown tool was not -32602: $(cat "$dir/body")"

curl -s -o "$dir/metrics.txt" -w '%{http_code} %{content_type}' "$base/metrics" >"$dir/status" ||
    fail "GET /metrics failed"
grep -q '^200 text/plain; version=0.0.4' "$dir/status" || fail "GET /metrics: $(cat "$dir/status")"
promtool check metrics <"$dir/metrics.txt" >"$dir/promtool.log" 2>&1 || fail "promtool check metrics: $(cat "$dir/promtool.log")"
echo "ok: promtool check metrics passes"

# expect LINE: the exposition holds LINE exactly.
expect() {
    grep -qxF "$1" "$dir/metrics.txt" || fail "/metrics has no line '$1': $(grep -v '^#' "$dir/metrics.txt")"
}
expect 'toolhost_tool_calls_total{tool="echo",outcome="ok"} 3'
expect 'toolhost_tool_calls_total{tool="good",outcome="error"} 2'
expect 'toolhost_tool_calls_total{tool="crash",outcome="crash"} 5'
expect 'mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call",gen_ai_tool_name="echo"} 3'
expect 'mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call",gen_ai_tool_name="good",error_type="tool_error"} 2'
expect 'mcp_server_operation_duration_seconds_bucket{mcp_method_name="tools/call",gen_ai_tool_name="echo",le="300"} 3'
expect 'mcp_server_operation_duration_seconds_count{mcp_method_name="tools/list"} 1'
expect 'mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call",error_type="-32602"} 1'
expect 'toolhost_spans_dropped_total 0'
expect 'toolhost_worker_crashes_total 5'
expect 'toolhost_worker_restarts_total 4'
expect 'toolhost_worker_quarantines_total 1'
expect 'toolhost_calls_in_flight 0'
expect 'toolhost_plugins_refused 0'
echo "ok: the counters match the calls made"

# Debian's prometheus scrapes it; its query API reads a counter back. A
# port is tried until one is free.
cat >"$dir/prometheus.yml" <<YML
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: toolhost
    static_configs:
      - targets: ['127.0.0.1:$port']
YML
promtool check config "$dir/prometheus.yml" >/dev/null 2>&1 || fail "promtool check config failed"
started=""
for try in 1 2 3 4 5; do
    pport=$((20000 + ($$ * 7 + try * 1009) % 30000))
    prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/tsdb" \
        --web.listen-address="127.0.0.1:$pport" >"$dir/prometheus.log" 2>&1 &
    ppid_=$!
    pids="$pids $ppid_"
    if until_ok 100 curl -sf "http://127.0.0.1:$pport/-/ready"; then
        started=1
        break
    fi
    kill "$ppid_" 2>/dev/null
done
[ -n "$started" ] || fail "prometheus did not start"
# query EXPR: the value of EXPR's one sample, or nothing.
query() {
    curl -s "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$1" |
        sed -n 's/.*"value":\[[0-9.]*,"\([^"]*\)"\].*/\1/p'
}
got=""
n=300
while [ "$n" -gt 0 ]; do
    got=$(query 'toolhost_tool_calls_total{tool="echo",outcome="ok"}')
    [ -n "$got" ] && break
    n=$((n - 1))
    sleep 0.1
done
[ "$got" = 3 ] || fail "prometheus read toolhost_tool_calls_total{tool=\"echo\",outcome=\"ok\"} as '$got', not 3"
got=$(query 'sum(mcp_server_operation_duration_seconds_count{error_type="tool_error"})')
[ "$got" = 7 ] || fail "prometheus read the tool_error operations as '$got', not 7 (2 errors, 5 crashes)"
got=$(query 'up{job="toolhost"}')
[ "$got" = 1 ] || fail "prometheus reports the scrape target up as '$got'"
echo "ok: prometheus scraped /metrics and read the counters back"

# /healthz and /readyz on the HTTP listener, without a token.
[ "$(curl -s -o /dev/null -w '%{http_code}' "$base/healthz")" = 200 ] || fail "/healthz is not 200"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$base/readyz")" = 200 ] || fail "/readyz is not 200 while serving"

# --metrics ADDR listens before the plugins load: /readyz is 503 while a
# plugin that takes a second to register is scanned, 200 once served. The
# host serves stdio, whose input stays open on a fifo.
mkdir "$dir/slow"
cp "$HOSTILE/slow_start.so" "$dir/slow/"
mkfifo "$dir/in"
"$TOOLHOST" --metrics=127.0.0.1:0 --no-registry-cache -d "$dir/slow" <"$dir/in" >/dev/null 2>"$dir/stdio.log" &
pids="$pids $!"
exec 3>"$dir/in"
until_ok 100 grep -q 'metrics on http' "$dir/stdio.log" || fail "--metrics ADDR did not listen"
mport=$(sed -n 's/.*metrics on http:\/\/127\.0\.0\.1:\([0-9]*\)\/metrics.*/\1/p' "$dir/stdio.log")
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$mport/readyz")
[ "$code" = 503 ] || fail "/readyz was $code while the plugin loaded, not 503"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$mport/healthz")" = 200 ] ||
    fail "/healthz is not 200 while loading"
until_ok 100 sh -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$mport/readyz)\" = 200 ]" ||
    fail "/readyz never became 200"
curl -s "http://127.0.0.1:$mport/metrics" | grep -qx 'toolhost_sessions 1' || fail "the stdio client is not one session"
echo "ok: /readyz is 503 while plugins load and 200 once they serve"
exec 3>&-
