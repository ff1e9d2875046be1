#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/daemon.sh: what one shared daemon saves and costs (`make
# bench-daemon`). Memory: the PSS (/proc/PID/smaps_rollup) of 10 clients
# served by 10 stdio hosts (each host and its workers) against 10 clients
# served through `toolhost connect` by one daemon (the daemon, its workers
# and the 10 connect processes), every client having made one echo call,
# so each plugin's worker runs; beside them, 10 `sleep` processes, the
# least any 10 relays can cost. Time: p50/p99 of one echo call at a time
# (bench/loadgen, W=1) direct over stdio and through connect, both eras,
# and the same for the floor (bench/floor --hop, a process hop as to a
# worker, against floor --relay --hop, one relay process and HTTP/1.1 over
# a Unix socket in front of it): what the relay's design costs with
# nothing of toolhost in it. Prints Markdown tables; run from the bench
# build directory.
#   BENCH_CALLS=N   calls per latency run (default 5000)
set -u
top_build=${TOP_BUILDDIR:-..}
toolhost="$top_build/src/toolhost"
plugins="$top_build/plugins/.libs"
calls=${BENCH_CALLS:-5000}
clients=10
tmp=$(mktemp -d "${TMPDIR:-/tmp}/toolhost-bench-daemon.XXXXXX") || exit 1
pids=""
cleanup() {
    for p in $pids; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
export XDG_CACHE_HOME="$tmp/cache"
INIT='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}'
CALL='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}'
ADD='{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}'

# PIDS and all their descendants, one a line.
tree() {
    for p in "$@"; do
        echo "$p"
        # shellcheck disable=SC2046
        tree $(pgrep -P "$p")
    done
}
# The summed PSS (kB) of PIDS and their descendants.
pss() {
    for p in $(tree "$@"); do cat "/proc/$p/smaps_rollup" 2>/dev/null; done | awk '/^Pss:/ { s += $2 } END { print s }'
}
# start_client N CMD...: CMD with a FIFO as stdin (held open on fd 10+N
# is not portable: the FIFO is kept open by a sleeping writer instead).
start_client() {
    n=$1
    shift
    mkfifo "$tmp/in$n"
    "$@" <"$tmp/in$n" >"$tmp/out$n" 2>"$tmp/err$n" &
    cpid=$!
    pids="$pids $cpid"
    { echo "$INIT"; echo "$CALL"; echo "$ADD"; sleep 600; } >"$tmp/in$n" &
    pids="$pids $!"
}
wait_answers() {
    for n in $(seq 1 $clients); do
        t=0
        until grep -q '"id":2' "$tmp/out$n" 2>/dev/null; do
            t=$((t + 1))
            [ $t -lt 300 ] || { echo "client $n: no answer" >&2; cat "$tmp/err$n" >&2; exit 1; }
            sleep 0.1
        done
    done
}

# ---- 10 stdio hosts ----
hosts=""
for n in $(seq 1 $clients); do
    start_client "$n" "$toolhost" -d "$plugins" --no-registry-cache
    hosts="$hosts $cpid"
done
wait_answers
# shellcheck disable=SC2086
pss_hosts=$(pss $hosts)
nproc_hosts=$(tree $hosts | wc -l)
for p in $pids; do kill "$p" 2>/dev/null; done
wait 2>/dev/null
pids=""
rm -f "$tmp"/in* "$tmp"/out* "$tmp"/err*

# ---- one daemon, 10 connect clients ----
sock="$tmp/d.sock"
"$toolhost" --http=unix:"$sock" -d "$plugins" --no-registry-cache 2>"$tmp/daemon.log" &
daemon=$!
pids="$pids $daemon"
until grep -q 'listening on unix:' "$tmp/daemon.log"; do sleep 0.1; done
conns=""
for n in $(seq 1 $clients); do
    start_client "$n" "$toolhost" connect unix:"$sock"
    conns="$conns $cpid"
done
wait_answers
# shellcheck disable=SC2086
pss_shared=$(pss $daemon $conns)
# shellcheck disable=SC2086
pss_conns=$(pss $conns)
pss_daemon=$(pss $daemon)
# The floor of a relay: 10 processes that do nothing at all (sleep), what
# any 10 client-side processes cost however small their program.
idle=""
for n in $(seq 1 $clients); do
    sleep 600 &
    idle="$idle $!"
done
pids="$pids $idle"
sleep 0.2
# shellcheck disable=SC2086
pss_idle=$(pss $idle)
# shellcheck disable=SC2086
nproc_shared=$(tree $daemon $conns | wc -l)

# ---- latency, one call at a time ----
lat() { # ERA, then the server's command line
    era=$1
    shift
    ./loadgen --era "$era" -n "$calls" -w 1 -- "$@" 2>/dev/null |
        sed -n 's/.*calls_per_s=\([0-9]*\) p50_us=\([0-9.]*\) p99_us=\([0-9.]*\).*/\1 \2 \3/p'
}
set -- $(lat legacy "$toolhost" -d "$plugins" --no-registry-cache)
d_leg_cps=$1 d_leg_p50=$2 d_leg_p99=$3
set -- $(lat legacy "$toolhost" connect unix:"$sock")
c_leg_cps=$1 c_leg_p50=$2 c_leg_p99=$3
set -- $(lat modern "$toolhost" -d "$plugins" --no-registry-cache)
d_mod_cps=$1 d_mod_p50=$2 d_mod_p99=$3
set -- $(lat modern "$toolhost" connect unix:"$sock")
c_mod_cps=$1 c_mod_p50=$2 c_mod_p99=$3
set -- $(lat legacy ./floor --hop)
f_dir_cps=$1 f_dir_p50=$2 f_dir_p99=$3
set -- $(lat legacy ./floor --relay --hop)
f_rel_cps=$1 f_rel_p50=$2 f_rel_p99=$3

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
# The p50 a relay adds: microseconds, and the ratio to the direct p50.
added() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f µs (%.2fx)", a - b, a / b }'; }
cat <<EOF
| 10 clients, one echo and one add call each | processes | PSS (kB) | ratio |
| --- | --- | --- | --- |
| 10 stdio hosts (hosts + workers) | $nproc_hosts | $pss_hosts | 1 |
| one daemon + 10 \`connect\` (daemon + workers + connects) | $nproc_shared | $pss_shared | $(ratio "$pss_shared" "$pss_hosts") |
| of which the 10 \`connect\` processes | $clients | $pss_conns | $(ratio "$pss_conns" "$pss_hosts") |
| of which the daemon and its workers | $((nproc_shared - clients)) | $pss_daemon | $(ratio "$pss_daemon" "$pss_hosts") |
| reference: 10 processes doing nothing (\`sleep\`) | $clients | $pss_idle | $(ratio "$pss_idle" "$pss_hosts") |

| one echo call at a time ($calls calls) | calls/s | p50 µs | p99 µs | p50 added by the relay |
| --- | --- | --- | --- | --- |
| 2025-11-25 session, stdio | $d_leg_cps | $d_leg_p50 | $d_leg_p99 | |
| 2025-11-25 session, through connect | $c_leg_cps | $c_leg_p50 | $c_leg_p99 | $(added "$c_leg_p50" "$d_leg_p50") |
| 2026-07-28, stdio | $d_mod_cps | $d_mod_p50 | $d_mod_p99 | |
| 2026-07-28, through connect | $c_mod_cps | $c_mod_p50 | $c_mod_p99 | $(added "$c_mod_p50" "$d_mod_p50") |
| floor, a process hop (\`floor --hop\`) | $f_dir_cps | $f_dir_p50 | $f_dir_p99 | |
| floor relayed over HTTP (\`floor --relay --hop\`) | $f_rel_cps | $f_rel_p50 | $f_rel_p99 | $(added "$f_rel_p50" "$f_dir_p50") |
EOF
