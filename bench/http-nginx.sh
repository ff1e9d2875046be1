#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/http-nginx.sh: `make bench-http`. The modern (2026-07-28) tools/call
# over HTTP against nginx's floor, driven by a load generator nobody here
# wrote (h2load --h1), so neither the floor nor the driver is ours.
#
# The floor is one nginx worker answering the same JSON from a static
# location (`return 200`, no access log). Against it: toolhost in the
# default isolation mode (process) and in-process (none), and the official
# TypeScript SDK's stateless Streamable HTTP server. Each is driven at
# -c 32 and -c 1 for the same duration, runs interleaved, and every
# response must be a 2xx (h2load counts them) carrying the echoed text.
#
# Environment:
#   BENCH_RUNS=3       runs per measurement (the median is reported)
#   BENCH_SECONDS=5    seconds per run (h2load -D), after 1 s of warm-up
#   BENCH_PIN=1        pin h2load to CPU 0 and the servers to the rest (off by
#                      default: one nginx process woken across CPUs on a busy
#                      VM waits for a timeslice at every request, a handicap
#                      the threaded servers share out)
#   SDK_NODE_MODULES   node_modules with @modelcontextprotocol/sdk 1.x
#                      (default tests/interop/node_modules; no SDK row without)
#   TOP_SRCDIR, TOP_BUILDDIR, NODE (set by make)
set -u
top_src=${TOP_SRCDIR:-..}
top_build=${TOP_BUILDDIR:-..}
node=${NODE:-node}
here=$(cd "$(dirname "$0")" && pwd)
runs=${BENCH_RUNS:-3}
secs=${BENCH_SECONDS:-5}
toolhost="$top_build/src/toolhost"
bundled="$top_build/plugins/.libs"

die() { echo "http-nginx.sh: $*" >&2; exit 1; }
[ -x "$toolhost" ] || die "$toolhost is not built"
command -v h2load >/dev/null 2>&1 || die "no h2load (sh scripts/deps-debian.sh --bench)"
nginx=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$nginx" ] || die "no nginx (sh scripts/deps-debian.sh --bench)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/toolhost-bench-http.XXXXXX") || exit 1
pids=""
cleanup() {
    for p in $pids; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
export XDG_CACHE_HOME="$tmp/cache"
raw=http-nginx.log
: > "$raw"

h2pin="" P=""
if [ "${BENCH_PIN:-0}" = 1 ] && [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null 2>&1; then
    h2pin="taskset -c 0" P="taskset -c 1-$(($(nproc) - 1))"
fi

# The request: a 2026-07-28 stateless tools/call, with the headers
# bench/httpgen.c --modern sends. The SDK (1.x) refuses that version with
# 400, so it gets the nearest it serves: a 2025-11-25 stateless request
# (no session, no _meta).
text=benchtxt
call_json="{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"$text\"}"
printf '%s' "$call_json,\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}" > "$tmp/body-modern.json"
printf '%s' "$call_json}}" > "$tmp/body-sdk.json"
era() { # KEY: the request's era, which names its body file
    if [ "$1" = sdk ]; then echo sdk; else echo modern; fi
}
# with_headers KEY CMD...: CMD with KEY's request headers appended.
with_headers() {
    key=$1
    shift
    if [ "$key" = sdk ]; then
        "$@" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
            -H 'MCP-Protocol-Version: 2025-11-25'
    else
        "$@" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
            -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: echo'
    fi
}

# start KEY CMD...: run a server whose stderr says "listening on
# http://127.0.0.1:PORT"; sets port.
start() {
    key=$1
    shift
    "$@" 2>"$tmp/$key.err" >/dev/null &
    pids="$pids $!"
    port=""
    for _ in $(seq 100); do
        port=$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$tmp/$key.err" | head -n 1)
        [ -n "$port" ] && return 0
        sleep 0.1
    done
    die "$key did not start: $(head -c 300 "$tmp/$key.err")"
}

# The nginx floor: one worker in the foreground, its files under $tmp, on
# a loopback port that is free (tried until one is).
nginx_start() {
    mkdir -p "$tmp/nginx/logs"
    tries=0
    while [ "$tries" -lt 20 ]; do
        tries=$((tries + 1))
        port=$((20000 + ($$ * 7 + tries * 131) % 30000))
        cat > "$tmp/nginx/nginx.conf" <<EOF
daemon off;
worker_processes 1;
pid $tmp/nginx/nginx.pid;
error_log $tmp/nginx/logs/error.log;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $tmp/nginx/body;
    proxy_temp_path $tmp/nginx/proxy;
    fastcgi_temp_path $tmp/nginx/fastcgi;
    uwsgi_temp_path $tmp/nginx/uwsgi;
    scgi_temp_path $tmp/nginx/scgi;
    keepalive_requests 1000000;
    server {
        listen 127.0.0.1:$port;
        location /mcp {
            default_type application/json;
            return 200 '$floor_json';
        }
    }
}
EOF
        $P "$nginx" -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" -e "$tmp/nginx/logs/error.log" 2>"$tmp/nginx.err" &
        npid=$!
        for _ in $(seq 50); do
            curl -s -o /dev/null "http://127.0.0.1:$port/mcp" && { pids="$pids $npid"; return 0; }
            kill -0 "$npid" 2>/dev/null || break
            sleep 0.1
        done
        kill "$npid" 2>/dev/null
        wait "$npid" 2>/dev/null
    done
    die "nginx did not start: $(cat "$tmp/nginx.err" "$tmp/nginx/logs/error.log" 2>/dev/null | head -c 300)"
}

# call KEY PORT: one tools/call with curl; the body to stdout (fails on a
# status other than 2xx).
call() {
    with_headers "$1" curl -sf -X POST --data-binary "@$tmp/body-$(era "$1").json" "http://127.0.0.1:$2/mcp"
}

sdk_modules=${SDK_NODE_MODULES:-$top_src/tests/interop/node_modules}
export SDK_NODE_MODULES="$sdk_modules"
servers="nginx process none"
if command -v "$node" >/dev/null 2>&1 && [ -d "$sdk_modules/@modelcontextprotocol/sdk" ]; then
    servers="$servers sdk"
else
    echo "http-nginx.sh: the TypeScript SDK server is not measured (no node, or no SDK in $sdk_modules)" >&2
fi

# Start every server once; each keeps its port for every run.
for s in $servers; do
    case $s in
    process | none) start "$s" $P "$toolhost" --http 127.0.0.1:0 --isolation=$s --plugin-dir "$bundled" ;;
    sdk) start sdk $P "$node" "$here/node/sdk-http-server.mjs" stateless ;;
    nginx) continue ;;
    esac
    eval "port_$s=$port"
    # A correct JSON-RPC result with the echoed text, not an error.
    out=$(call "$s" "$port") ||
        die "$s: the first call failed"
    case $out in
    *'"result"'*"\"text\":\"$text\""*) ;;
    *) die "$s: the first call gave no echo result: $out" ;;
    esac
    [ "$s" = process ] && floor_json=$out
done
# nginx answers exactly what toolhost answered (quotes escaped for its
# single-quoted string).
floor_json=$(printf '%s' "$floor_json" | sed "s/'/\\\\'/g")
nginx_start
port_nginx=$port

# h2load KEY CONNS: one run; its req/s and status counts into the log.
run() {
    key=$1 c=$2
    eval "p=\$port_$key"
    # shellcheck disable=SC2086
    if ! with_headers "$key" $h2pin h2load --h1 -c "$c" -t 1 -m 1 --warm-up-time=1 -D "$secs" \
        -d "$tmp/body-$(era "$key").json" "http://127.0.0.1:$p/mcp" > "$tmp/h2load.out" 2>&1; then
        echo "http-nginx.sh: $key c=$c: h2load failed: $(tail -c 300 "$tmp/h2load.out")" >&2
        return 1
    fi
    rps=$(sed -n 's/^finished in .*, \([0-9.]*\) req\/s,.*/\1/p' "$tmp/h2load.out")
    codes=$(sed -n 's/^status codes: //p' "$tmp/h2load.out")
    reqs=$(sed -n 's/^requests: .* \([0-9]*\) succeeded, \([0-9]*\) failed, \([0-9]*\) errored.*/\1 ok \2 failed \3 errored/p' "$tmp/h2load.out")
    echo "$key c=$c rps=$rps codes=[$codes] requests=[$reqs]" >> "$raw"
    # Every response a 2xx: anything else fails the benchmark.
    case $codes in
    *" 0 3xx, 0 4xx, 0 5xx"*) ;;
    *) echo "http-nginx.sh: $key c=$c: not every response was 2xx: $codes" >&2; return 1 ;;
    esac
}

status=0
for c in 32 1; do
    r=0
    while [ "$r" -lt "$runs" ]; do
        for s in $servers; do
            run "$s" "$c" || status=1
        done
        r=$((r + 1))
    done
    echo "http-nginx.sh: c=$c done"
done
# Toolhost still answers correctly after the load.
out=$(call process "$port_process") ||
    { echo "http-nginx.sh: process: the call after the load failed" >&2; status=1; }

med() { # KEY C: the median req/s of KEY at C connections, or "-"
    awk -v k="$1" -v c="c=$2" '$1 == k && $2 == c { sub(/^rps=/, "", $3); print $3 }' "$raw" | sort -g |
        awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2];
              else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ratio() {
    awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2fx\n", a / b }'
}
num() {
    awk -v v="$1" 'BEGIN { if (v == "-") { print "-"; exit } printf "%.0f\n", v }'
}

{
    echo "HTTP tools/call (2026-07-28, stateless, echo of 8 bytes) under h2load --h1, ${secs} s a run," \
        "median of $runs, req/s:"
    echo
    echo "| connections | nginx floor | toolhost process | toolhost none | TS SDK | process / nginx | none / nginx | process / SDK |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
    for c in 32 1; do
        n=$(med nginx $c) pr=$(med process $c) no=$(med none $c) sd=$(med sdk $c)
        echo "| $c | $(num "$n") | $(num "$pr") | $(num "$no") | $(num "$sd") | $(ratio "$pr" "$n") |" \
            "$(ratio "$no" "$n") | $(ratio "$pr" "$sd") |"
    done
} | tee http-nginx.md
exit $status
