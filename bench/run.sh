#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/run.sh: the benchmark suite of `make bench`. Runs
# bench/loadgen (stdio) and bench/httpgen (HTTP) against toolhost
# in both isolation modes and against the
# references (the floor program, the official TypeScript SDK server, cMCP's
# echo server when CMCP_DIR names a built checkout, a bare dlopen loop over
# generated plugins), takes the median of BENCH_RUNS runs of each, and
# writes the tables with their ratios to results.md (printed too), the raw
# lines to results.log and a chart to results.svg (chart.sh).
#
# Run from the bench build directory (make does); environment:
#   BENCH_RUNS=5        runs per measurement (the median is reported)
#   BENCH_QUICK=1       a smoke run: one run, fewer calls, 10 and 100 plugins
#   BENCH_SCALE=100,1000,10000  the plugin counts of the start-up section
#                       (default; the largest is also the one of the
#                       RSS, first/last call and 100x1,000-tools rows)
#   BENCH_ONLY=startup  measure only the start-up section (plugins)
#   BENCH_WIDE_TOOLS=1000  tools per plugin of the 100-plugin rows
#   CMCP_DIR=DIR        a cMCP checkout with examples/echo-server built
#   SDK_NODE_MODULES    node_modules holding @modelcontextprotocol/sdk 1.x
#                       (default: tests/interop/node_modules, `npm ci`ed
#                       from its lock file when missing)
#   BENCH_PLUGINS=DIR   keep the generated plugins there (default: a
#                       temporary directory, removed at the end)
#   BENCH_REPORT=1      measure nothing: rewrite results.md (and the chart)
#                       from the runs in results.log
#   BENCH_PIN=0         do not pin loadgen to CPU 0 and the server to the
#                       others (pinned by default when taskset is there)
#   TOP_SRCDIR, TOP_BUILDDIR, CC, CFLAGS, NODE (set by make)
set -u
top_src=${TOP_SRCDIR:-..}
top_build=${TOP_BUILDDIR:-..}
node=${NODE:-node}
here=$(cd "$(dirname "$0")" && pwd)
runs=${BENCH_RUNS:-5}
quick=${BENCH_QUICK:-0}
[ "$quick" = 1 ] && runs=${BENCH_RUNS:-1}
umask 022

tmp=$(mktemp -d "${TMPDIR:-/tmp}/toolhost-bench.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
# A registry cache, when toolhost has one, must not be the user's.
export XDG_CACHE_HOME="$tmp/cache"
raw=results.log
errors="$tmp/errors"
: > "$errors"
# Loops run LOOP_RUNS times: none at all when only the report is wanted.
loop_runs=$runs
if [ "${BENCH_REPORT:-0}" = 1 ]; then
    loop_runs=0
    [ -s "$raw" ] || { echo "run.sh: BENCH_REPORT=1 but there is no $raw to report" >&2; exit 1; }
else
    : > "$raw"
fi

toolhost="$top_build/src/toolhost"
bundled="$top_build/plugins/.libs"
[ -x "$toolhost" ] || { echo "run.sh: $toolhost is not built" >&2; exit 1; }

# ---- the references ----------------------------------------------------
sdk_modules=${SDK_NODE_MODULES:-$top_src/tests/interop/node_modules}
sdk=""
if command -v "$node" >/dev/null 2>&1; then
    if [ ! -d "$sdk_modules/@modelcontextprotocol/sdk" ] && [ -z "${SDK_NODE_MODULES:-}" ]; then
        echo "run.sh: installing the SDK from tests/interop/package-lock.json (npm ci)"
        npm ci --prefix "$top_src/tests/interop" >>"$raw" 2>&1 || true
    fi
    [ -d "$sdk_modules/@modelcontextprotocol/sdk" ] && sdk="$node $here/node/sdk-server.mjs"
fi
[ -n "$sdk" ] || echo "run.sh: the TypeScript SDK server is not measured (no node or no SDK)" >&2
export SDK_NODE_MODULES="$sdk_modules"
cmcp=""
if [ -n "${CMCP_DIR:-}" ] && [ -x "$CMCP_DIR/examples/echo-server" ]; then
    cmcp="$CMCP_DIR/examples/echo-server"
elif [ -n "${CMCP_DIR:-}" ]; then
    echo "run.sh: $CMCP_DIR/examples/echo-server is not built; cMCP not measured" >&2
fi

# The servers of the echo scenarios: column key and command line.
servers="none process floor sdk cmcp"
server_cmd() {
    case $1 in
    none) echo "$toolhost -q --isolation=none --plugin-dir $bundled" ;;
    process) echo "$toolhost -q --isolation=process --plugin-dir $bundled" ;;
    metrics) echo "$toolhost -q --isolation=none --metrics=127.0.0.1:0 --plugin-dir $bundled" ;;
    metricsproc) echo "$toolhost -q --isolation=process --metrics=127.0.0.1:0 --plugin-dir $bundled" ;;
    traced) [ -z "$sink_port" ] ||
        echo "$toolhost -q --isolation=none --metrics=127.0.0.1:0 $otlp --plugin-dir $bundled" ;;
    tracedproc) [ -z "$sink_port" ] ||
        echo "$toolhost -q --isolation=process --metrics=127.0.0.1:0 $otlp --plugin-dir $bundled" ;;
    floor) echo "./floor" ;;
    floorspin) echo "./floor --spin" ;;
    floorhop) echo "./floor --spin --hop" ;;
    sdk) echo "$sdk" ;;
    cmcp) echo "$cmcp" ;;
    esac
}

# The cost of a process boundary as such, in the W=1 8-byte scenarios: the
# floor polling stdin as toolhost's reader does, alone and answering from a
# child process over two pipes. What the second adds is the least any
# process-isolated server pays per call on this machine.
hop_servers="floorspin floorhop"

# What --metrics costs: the same toolhost counting every call, in the W=64
# 8-byte scenarios, against the columns without it; and --metrics with
# --otlp-endpoint, a span per call exported to ./otlpsink, which accepts
# and discards.
metrics_servers="metrics metricsproc traced tracedproc"
sink_port="" sink_pid=""
if [ "$loop_runs" -gt 0 ] && [ -x ./otlpsink ]; then
    ./otlpsink >"$tmp/sink" &
    sink_pid=$!
    for i in 1 2 3 4 5 6 7 8 9 10; do
        sink_port=$(sed -n 's/^listening on http:\/\/127\.0\.0\.1:\([0-9]*\)$/\1/p' "$tmp/sink")
        [ -n "$sink_port" ] && break
        sleep 0.1
    done
    trap 'kill "$sink_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
fi
[ -n "$sink_port" ] || echo "run.sh: --otlp-endpoint is not measured (no ./otlpsink)" >&2
otlp="--otlp-endpoint http://127.0.0.1:$sink_port"

# ---- measuring ---------------------------------------------------------
# Placement. split: loadgen on CPU 0, the server (its threads and
# children) on the other CPUs, as a client and a server on separate cores;
# every message then pays a cross-CPU wake-up. one: both on the last CPU, so
# a call costs exactly the CPU time both ends spend on it, hand-offs
# included. Unpinned, a W=1 ping-pong is bimodal on a small VM (3 us when
# the scheduler happens to put both ends on one CPU, 60 us when not), and
# medians of luck mislead; BENCH_PIN=0 measures that way all the same.
ncpu=$(nproc)
pin=1
{ [ "${BENCH_PIN:-1}" = 0 ] || [ "$ncpu" -lt 2 ] || ! command -v taskset >/dev/null 2>&1; } && pin=0
lg_pin="" P=""
place() { # split|one: set the prefixes of loadgen (lg_pin) and servers (P)
    lg_pin="" P=""
    [ "$pin" = 1 ] || return 0
    case $1 in
    split) lg_pin="taskset -c 0" P="taskset -c 1-$((ncpu - 1))" ;;
    one) lg_pin="taskset -c $((ncpu - 1))" P="" ;;
    esac
}
place split

# record KEY [--http] LOADGEN-ARGS...: one run (of httpgen with --http); its
# key=value line goes to the log.
# A failed toolhost run is an error of `make bench`; a reference's is noted.
record() {
    key=$1
    shift
    # A cold start with 10,000 plugins says nothing for longer than
    # loadgen's default 20 s on a loaded machine.
    driver="./loadgen --stall 600"
    [ "$1" = --http ] && { driver=./httpgen; shift; }
    # shellcheck disable=SC2086
    if line=$($lg_pin $driver "$@" 2>"$tmp/stderr" | grep '^mode='); then
        echo "$key $line" >> "$raw"
    else
        echo "run.sh: $key failed: $(head -c 300 "$tmp/stderr")" | tee -a "$errors" >&2
    fi
}

# med KEY FIELD: the median of FIELD over KEY's runs, or "-".
med() {
    awk -v k="$1" -v f="$2" '$1 == k { for (i = 2; i <= NF; i++) { n = index($i, "=");
        if (substr($i, 1, n - 1) == f) print substr($i, n + 1) } }' "$raw" | sort -g |
        awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2];
              else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# ratio A B [PRECISION]: A/B as "1.23x", "-" when either is missing.
ratio() {
    awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-";
        else printf "%.2fx\n", a / b }'
}

# verdict RATIO OP LIMIT: "met" or "missed" for a target like "ratio >= 0.8".
verdict() {
    awk -v r="${1%x}" -v op="$2" -v l="$3" 'BEGIN { if (r == "-") { print "not measured"; exit }
        ok = (op == ">=") ? (r + 0 >= l + 0) : (r + 0 <= l + 0); print ok ? "met" : "**missed**" }'
}

# diff_us A B: A-B in µs as "+1.2 µs", "-" when either is missing.
diff_us() {
    awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-") print "-"; else printf "%+.1f µs\n", a - b }'
}

# Integers with thousands separators, for the tables.
num() {
    awk -v v="$1" 'BEGIN { if (v == "-") { print "-"; exit } v = sprintf("%.0f", v);
        s = ""; while (length(v) > 3) { s = "," substr(v, length(v) - 2) s; v = substr(v, 1, length(v) - 3) }
        print v s }'
}

scale() { # N: N calls, a tenth of it in quick mode
    if [ "$quick" = 1 ]; then echo $(($1 / 10)); else echo "$1"; fi
}

echo "run.sh: $runs run(s) per measurement; raw lines in bench/$raw"

only=${BENCH_ONLY:-}
[ "$only" = startup ] && [ "$loop_runs" -gt 0 ] && echo "run.sh: BENCH_ONLY=startup: no echo or HTTP rows"
echo_runs=$loop_runs
[ "$only" = startup ] && echo_runs=0

# ---- echo calls --------------------------------------------------------
# Scenario: name, W, text size, calls per run (sized for about half a
# second), placement; the 8-byte ones on one CPU too, when pinning.
scenarios="w1-8:1:8:$(scale 5000):split w64-8:64:8:$(scale 20000):split \
w1-1k:1:1024:$(scale 5000):split w64-1k:64:1024:$(scale 20000):split \
w1-64k:1:65536:$(scale 1000):split w64-64k:64:65536:$(scale 2000):split"
[ "$pin" = 1 ] && scenarios="$scenarios w1-8-one:1:8:$(scale 10000):one w64-8-one:64:8:$(scale 20000):one"
for sc in $scenarios; do
    IFS=: read -r name w size n where <<EOF
$sc
EOF
    place "$where"
    echo "run.sh: echo $name (W=$w, $size-byte text, $n calls) x $runs"
    r=0
    # Interleaved, so that a busy moment of the shared machine hits every
    # server alike rather than one server's runs.
    these=$servers
    case $name in
    w1-8 | w1-8-one) these="$servers $hop_servers" ;;
    w64-8 | w64-8-one) these="$servers $metrics_servers" ;;
    esac
    while [ "$r" -lt "$echo_runs" ]; do
        for s in $these; do
            cmd=$(server_cmd "$s")
            [ -n "$cmd" ] || continue
            # shellcheck disable=SC2086
            record "echo-$name-$s" -n "$n" -w "$w" --size "$size" -- $P $cmd
        done
        r=$((r + 1))
    done
done
place split

# ---- echo calls over HTTP ----------------------------------------------
# bench/httpgen: W keep-alive connections, one call in flight on each.
# Eras: modern (2026-07-28 stateless requests; the SDK 1.x, which has no
# 2026-07-28, serves stateless 2025-11-25 requests, a server per request as
# its examples do) and session (one 2025-11-25 Mcp-Session-Id). The floor
# is libmicrohttpd alone (bench/httpfloor.c).
http_servers="none process floor sdk"
http_cmd() { # SERVER ERA
    case $1 in
    none | process) echo "$toolhost --http 127.0.0.1:0 --isolation=$1 --plugin-dir $bundled" ;;
    floor) echo "./httpfloor" ;;
    sdk) [ -n "$sdk" ] && if [ "$2" = modern ]; then echo "$node $here/node/sdk-http-server.mjs stateless"
        else echo "$node $here/node/sdk-http-server.mjs session"; fi ;;
    esac
}
http_scenarios="modern-w1:modern:1:$(scale 4000) modern-w32:modern:32:$(scale 8000) \
session-w1:session:1:$(scale 4000) session-w32:session:32:$(scale 8000)"
for sc in $http_scenarios; do
    IFS=: read -r name era w n <<EOF
$sc
EOF
    echo "run.sh: HTTP echo $name (W=$w connections, 8-byte text, $n calls; the SDK a tenth) x $runs"
    r=0
    while [ "$r" -lt "$echo_runs" ]; do
        for s in $http_servers; do
            cmd=$(http_cmd "$s" "$era")
            [ -n "$cmd" ] || continue
            # The SDK serves a few hundred calls/s: fewer calls, same measure.
            m=$n
            [ "$s" = sdk ] && m=$((n / 10))
            flag=--$era
            [ "$s" = sdk ] && [ "$era" = modern ] && flag=--stateless
            # shellcheck disable=SC2086
            record "http-$name-$s" --http $flag -n "$m" -w "$w" --size 8 -- $P $cmd
        done
        r=$((r + 1))
    done
done

# ---- start-up: generated plugins ---------------------------------------
counts=$(echo "${BENCH_SCALE:-100,1000,10000}" | tr ',' ' ')
[ "$quick" = 1 ] && counts=$(echo "${BENCH_SCALE:-10,100}" | tr ',' ' ')
gen=${BENCH_PLUGINS:-$tmp/plugins}
max=$(echo "$counts" | tr ' ' '\n' | sort -n | tail -n 1)
# The 100,000-tools rows: 100 plugins of 1,000 tools (a tenth in quick mode).
wide_tools=${BENCH_WIDE_TOOLS:-1000}
[ "$quick" = 1 ] && wide_tools=100
if [ "$loop_runs" -gt 0 ]; then
    for c in $counts; do
        echo "run.sh: generating $c plugins in $gen/n$c"
        CC=${CC:-cc} CFLAGS=${CFLAGS:--g -O2} sh "$here/genplugins.sh" "$c" "$gen/n$c" "$top_src" >>"$raw" 2>&1 ||
            { echo "run.sh: building the generated plugins failed (see bench/$raw)" >&2; exit 1; }
    done
    echo "run.sh: generating 100 plugins of $wide_tools tools in $gen/wide"
    CC=${CC:-cc} CFLAGS=${CFLAGS:--g -O2} sh "$here/genplugins.sh" 100 "$gen/wide" "$top_src" "$wide_tools" \
        >>"$raw" 2>&1 || { echo "run.sh: building the generated plugins failed (see bench/$raw)" >&2; exit 1; }
fi
for c in $counts; do
    echo "run.sh: start with $c plugins (cold, warm, bare loop) x $runs"
    r=0
    while [ "$r" -lt "$loop_runs" ]; do
        for m in process none; do
            # Cold: the files just changed (new mtimes), as after an
            # install; warm: the same files again, unchanged.
            touch "$gen/n$c"/*.so
            # shellcheck disable=SC2086
            record "start-$c-$m-cold" --mode start -- $P "$toolhost" -q --isolation=$m --plugin-dir "$gen/n$c"
            # shellcheck disable=SC2086
            record "start-$c-$m-warm" --mode start -- $P "$toolhost" -q --isolation=$m --plugin-dir "$gen/n$c"
        done
        # shellcheck disable=SC2086
        record "start-$c-bare" --mode exec -- $P ./dlopen_loop "$gen/n$c"
        r=$((r + 1))
    done
done

# A call to the first plugin loaded and to the last, with MAX plugins; the
# memory of the host and its workers after them (loadgen's tree_pss_kb).
calls_n=$(scale 2000)
echo "run.sh: calls to the first and the last of $max plugins ($calls_n calls, W=1) x $runs"
last=$(printf 'p%05d' "$max")
r=0
while [ "$r" -lt "$loop_runs" ]; do
    for m in process none; do
        for t in p00001 "$last"; do
            # shellcheck disable=SC2086
            record "call-$max-$m-$t" -n "$calls_n" -w 1 --tool "$t" -- $P "$toolhost" -q --isolation=$m \
                --plugin-dir "$gen/n$max"
        done
    done
    r=$((r + 1))
done
# 100 plugins of many tools: start and list, and calls to the first tool
# and the last one, whose cost must not grow with the number of tools.
wide_last=$(printf 'q00100_t%04d' "$wide_tools")
echo "run.sh: 100 plugins x $wide_tools tools: start, list, first and last tool x $runs"
r=0
while [ "$r" -lt "$loop_runs" ]; do
    for m in process none; do
        # shellcheck disable=SC2086
        record "wide-$m-start" --mode start -- $P "$toolhost" -q --isolation=$m --plugin-dir "$gen/wide"
        for t in q00001_t0001 "$wide_last"; do
            # shellcheck disable=SC2086
            record "wide-$m-$t" -n "$calls_n" -w 1 --tool "$t" -- $P "$toolhost" -q --isolation=$m \
                --plugin-dir "$gen/wide"
        done
    done
    r=$((r + 1))
done

# ---- start with the bundled plugins; tools/list with 1,000 tools --------
echo "run.sh: start to first tools/list with the bundled plugins x $runs"
r=0
while [ "$r" -lt "$loop_runs" ]; do
    for s in $servers; do
        cmd=$(server_cmd "$s")
        [ -n "$cmd" ] || continue
        # shellcheck disable=SC2086
        record "first-$s" --mode start -- $P $cmd
    done
    r=$((r + 1))
done
if [ "$quick" != 1 ] && { [ "$loop_runs" = 0 ] || [ -d "$gen/n1000" ]; }; then
    echo "run.sh: tools/list and RSS with 1000 tools x $runs"
    r=0
    while [ "$r" -lt "$loop_runs" ]; do
        for m in none process; do
            # shellcheck disable=SC2086
            record "list-$m" --mode list -n 20 -- $P "$toolhost" -q --isolation=$m --plugin-dir "$gen/n1000"
        done
        # shellcheck disable=SC2086
        [ -n "$sdk" ] && record "list-sdk" --mode list -n 20 -- $P $sdk 1000
        r=$((r + 1))
    done
fi

# ---- the report --------------------------------------------------------
# The load average as the measuring ended, kept in the log, so that a
# report rewritten later (BENCH_REPORT=1) shows the run's and not its own.
[ "$loop_runs" -gt 0 ] && echo "loadavg $(cut -d' ' -f1-3 /proc/loadavg)" >> "$raw"
load=$(sed -n 's/^loadavg //p' "$raw" | tail -n 1)
out=results.md
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
{
    echo "Machine: $(nproc) CPUs, $cpu, Linux $(uname -r); load average at the end:" \
        "${load:-not recorded}. Medians of $(grep -c '^first-none ' "$raw") run(s) (\`BENCH_RUNS\`)." \
        "$(if [ "$pin" = 1 ]; then echo "loadgen on CPU 0, the servers on CPUs 1-$((ncpu - 1)); rows marked one CPU: both on CPU $((ncpu - 1)) (\`BENCH_PIN\`)."; else echo "Not pinned to CPUs."; fi)"
    echo
    echo "Echo calls over stdio (bench/loadgen: 2025-11-25 handshake, every response checked):" \
        "calls/s, and p50 latency in µs."
    echo
    echo "| scenario | toolhost \`--isolation=none\` | toolhost process | floor | TS SDK 1.x | cMCP |"
    echo "| --- | --- | --- | --- | --- | --- |"
    for sc in $scenarios; do
        IFS=: read -r name w size n where <<EOF
$sc
EOF
        label="W=$w, $(echo "$size" | sed 's/^65536$/64 KiB/; s/^1024$/1 KiB/; s/^8$/8 B/')"
        [ "$where" = one ] && label="$label, one CPU"
        row="| $label"
        for s in $servers; do
            t=$(med "echo-$name-$s" calls_per_s)
            if [ "$t" = "-" ]; then row="$row | not measured"; else
                row="$row | $(num "$t") ($(med "echo-$name-$s" p50_us) µs)"; fi
        done
        echo "$row |"
    done
    echo
    echo "What a process boundary costs on this machine, whoever draws it (W=1, 8 B, p50 latency in µs):" \
        "the floor polling stdin for 50 µs after a message as toolhost's reader does (\`floor --spin\`)," \
        "and the same floor answering from a child process that it hands each message to over two pipes" \
        "(\`floor --spin --hop\`), against toolhost in-process and in process mode."
    echo
    echo "| placement | floor --spin | floor --spin --hop | the hop adds | hop / floor | toolhost none | toolhost process | process mode adds | process / none |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    for pl in "" $([ "$pin" = 1 ] && echo -one); do
        fs=$(med "echo-w1-8$pl-floorspin" p50_us) fh=$(med "echo-w1-8$pl-floorhop" p50_us)
        tn=$(med "echo-w1-8$pl-none" p50_us) tp=$(med "echo-w1-8$pl-process" p50_us)
        echo "| $([ -n "$pl" ] && echo "one CPU" || echo "a CPU each") | $fs | $fh | $(diff_us "$fh" "$fs")" \
            "| $(ratio "$fh" "$fs") | $tn | $tp | $(diff_us "$tp" "$tn") | $(ratio "$tp" "$tn") |"
    done
    echo
    echo "Echo calls over HTTP (bench/httpgen: W keep-alive connections, one call in flight on each, every" \
        "response checked; 8-byte texts): calls/s, and p50 latency in µs. modern: 2026-07-28 stateless" \
        "requests (the TS SDK 1.x has no 2026-07-28: its stateless mode, a server per request as its" \
        "examples do, with 2025-11-25 requests); session: one 2025-11-25 session. The floor is" \
        "libmicrohttpd alone, set up as toolhost's transport (\`bench/httpfloor.c\`)."
    echo
    echo "| scenario | toolhost \`--isolation=none\` | toolhost process | libmicrohttpd floor | TS SDK 1.x | none / floor | none / SDK |"
    echo "| --- | --- | --- | --- | --- | --- | --- |"
    for sc in $http_scenarios; do
        IFS=: read -r name era w n <<EOF
$sc
EOF
        row="| $era, W=$w"
        for s in $http_servers; do
            t=$(med "http-$name-$s" calls_per_s)
            if [ "$t" = "-" ]; then row="$row | not measured"; else
                row="$row | $(num "$t") ($(med "http-$name-$s" p50_us) µs)"; fi
        done
        hn=$(med "http-$name-none" calls_per_s)
        echo "$row | $(ratio "$hn" "$(med "http-$name-floor" calls_per_s)") | $(ratio "$hn" "$(med "http-$name-sdk" calls_per_s)") |"
    done
    echo
    echo "Start, initialize, full \`tools/list\`, exit, with N generated one-tool plugins" \
        "(ms; cold: the files just touched; warm: the same run again):"
    echo
    echo "| plugins | process cold | process warm | none cold | none warm | bare dlopen loop | cold/bare | warm/bare |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
    for c in $counts; do
        bare=$(med "start-$c-bare" exit_ms)
        pc=$(med "start-$c-process-cold" exit_ms)
        pw=$(med "start-$c-process-warm" exit_ms)
        echo "| $c | $pc | $pw | $(med "start-$c-none-cold" exit_ms) | $(med "start-$c-none-warm" exit_ms)" \
            "| $bare | $(ratio "$pc" "$bare") | $(ratio "$pw" "$bare") |"
    done
    echo
    echo "Calls with $max plugins (W=1, 8-byte text): p50 latency of a call to the first plugin" \
        "loaded (p00001) and to the last ($last), and the memory of the host and its workers after" \
        "the calls (PSS summed over the processes; RSS summed, shared pages counted in each):"
    echo
    echo "| isolation | first p50 | last p50 | last/first | PSS, all processes | RSS, all processes |"
    echo "| --- | --- | --- | --- | --- | --- |"
    for m in process none; do
        f=$(med "call-$max-$m-p00001" p50_us) l=$(med "call-$max-$m-$last" p50_us)
        echo "| $m | $f µs | $l µs | $(ratio "$l" "$f") | $(num "$(med "call-$max-$m-$last" tree_pss_kb)") kB" \
            "| $(num "$(med "call-$max-$m-$last" tree_rss_kb)") kB |"
    done
    echo
    echo "100 plugins of $wide_tools tools each: start to the end of a full \`tools/list\` (ms), and p50" \
        "of a call to the first tool (q00001_t0001) and to the last ($wide_last):"
    echo
    echo "| isolation | tools | start + list | first p50 | last p50 | last/first | PSS, all processes |"
    echo "| --- | --- | --- | --- | --- | --- | --- |"
    for m in process none; do
        f=$(med "wide-$m-q00001_t0001" p50_us) l=$(med "wide-$m-$wide_last" p50_us)
        echo "| $m | $(med "wide-$m-start" tools) | $(med "wide-$m-start" exit_ms) | $f µs | $l µs" \
            "| $(ratio "$l" "$f") | $(num "$(med "wide-$m-$wide_last" tree_pss_kb)") kB |"
    done
    echo
    echo "Start to the first full \`tools/list\` answer with the bundled plugins (ms):"
    echo
    echo "| toolhost none | toolhost process | floor | TS SDK 1.x | cMCP |"
    echo "| --- | --- | --- | --- | --- |"
    row="|"
    for s in $servers; do row="$row $(med "first-$s" list_ms) |"; done
    echo "$row"
    if [ "$quick" != 1 ]; then
        echo
        echo "\`tools/list\` with 1,000 tools (every page; toolhost's default page size is 100):" \
            "p50 of a full listing, and peak RSS (VmHWM; the host process only):"
        echo
        echo "| server | tools | full list p50 | RSS |"
        echo "| --- | --- | --- | --- |"
        for s in none process sdk; do
            echo "| $s | $(med "list-$s" tools) | $(med "list-$s" p50_us) µs | $(num "$(med "list-$s" rss_kb)") kB |"
        done
    fi

    # The targets, each with what this run measured: the echo
    # ones for each placement (two CPUs; one CPU when pinned).
    echo
    echo "Targets; echo with 8-byte texts, toolhost in-process unless said." \
        "$([ "$pin" = 1 ] && echo "Rows marked one CPU hold the same ratios with both ends on one CPU: a stricter reading" \
            "than the targets' own placement (a client and a server on a CPU each), where a call" \
            "costs what both ends spend on it.")"
    echo
    echo "| target | measured | |"
    echo "| --- | --- | --- |"
    places=""
    [ "$pin" = 1 ] && places="-one"
    for pl in "" $places; do
        where=""
        [ -n "$pl" ] && where=", one CPU"
        w1n=$(med "echo-w1-8$pl-none" calls_per_s) w64n=$(med "echo-w64-8$pl-none" calls_per_s)
        w1p=$(med "echo-w1-8$pl-process" calls_per_s) w64p=$(med "echo-w64-8$pl-process" calls_per_s)
        # The targets are calls/s; at W=1 the p50 latency ratio is given too,
        # as it is without the tail a loaded machine (or a GC) adds to runs.
        p50n=$(med "echo-w1-8$pl-none" p50_us)
        x=$(ratio "$w1n" "$(med "echo-w1-8$pl-floor" calls_per_s)")
        echo "| W=1$where: ≥ 0.8x the floor | $x (p50: $(ratio "$(med "echo-w1-8$pl-floor" p50_us)" "$p50n")) |" \
            "$(verdict "$x" '>=' 0.8) |"
        x=$(ratio "$w64n" "$(med "echo-w64-8$pl-floor" calls_per_s)")
        echo "| W=64$where: ≥ 0.5x the floor | $x | $(verdict "$x" '>=' 0.5) |"
        x=$(ratio "$w1n" "$(med "echo-w1-8$pl-sdk" calls_per_s)")
        echo "| W=1$where: ≥ 2x the TS SDK | $x (p50: $(ratio "$(med "echo-w1-8$pl-sdk" p50_us)" "$p50n")) |" \
            "$(verdict "$x" '>=' 2) |"
        x=$(ratio "$w64n" "$(med "echo-w64-8$pl-sdk" calls_per_s)")
        echo "| W=64$where: ≥ 5x the TS SDK | $x | $(verdict "$x" '>=' 5) |"
        # A ratio to a peer cannot exceed the floor's own ratio to it: say
        # that ceiling, since at W=1 on two CPUs wake-ups, not work, set both.
        x=$(ratio "$w1n" "$(med "echo-w1-8$pl-cmcp" calls_per_s)")
        echo "| W=1$where: ≥ 1.5x cMCP | $x (p50: $(ratio "$(med "echo-w1-8$pl-cmcp" p50_us)" "$p50n");" \
            "the floor: $(ratio "$(med "echo-w1-8$pl-floor" calls_per_s)" "$(med "echo-w1-8$pl-cmcp" calls_per_s)")) |" \
            "$(verdict "$x" '>=' 1.5) |"
        x=$(ratio "$w64n" "$(med "echo-w64-8$pl-cmcp" calls_per_s)")
        echo "| W=64$where: ≥ 1.5x cMCP | $x | $(verdict "$x" '>=' 1.5) |"
        x=$(ratio "$(med "echo-w1-8$pl-process" p50_us)" "$p50n")
        echo "| process isolation$where: p50 latency at W=1 ≤ 2x in-process | $x (the floor with a process hop:" \
            "$(ratio "$(med "echo-w1-8$pl-floorhop" p50_us)" "$(med "echo-w1-8$pl-floorspin" p50_us)")) | $(verdict "$x" '<=' 2) |"
        echo "| (process mode$where: throughput at W=1 / W=64 vs in-process) |" \
            "$(ratio "$w1p" "$w1n") / $(ratio "$w64p" "$w64n") | |"
        x=$(ratio "$(med "echo-w64-8$pl-metrics" calls_per_s)" "$w64n")
        echo "| W=64$where: with \`--metrics\` ≥ 0.95x without | $x (process mode:" \
            "$(ratio "$(med "echo-w64-8$pl-metricsproc" calls_per_s)" "$w64p")) | $(verdict "$x" '>=' 0.95) |"
        x=$(ratio "$(med "echo-w64-8$pl-traced" calls_per_s)" "$w64n")
        echo "| W=64$where: with \`--metrics\` and \`--otlp-endpoint\` ≥ 0.95x without | $x (process mode:" \
            "$(ratio "$(med "echo-w64-8$pl-tracedproc" calls_per_s)" "$w64p")) | $(verdict "$x" '>=' 0.95) |"
    done
    top=$max
    bare=$(med "start-$top-bare" exit_ms)
    x=$(ratio "$(med "start-$top-process-cold" exit_ms)" "$bare")
    echo "| cold start to a full \`tools/list\`, $top plugins: ≤ 1x the bare loop (process mode) | $x |" \
        "$(verdict "$x" '<=' 1) |"
    x=$(ratio "$(med "start-$top-process-warm" exit_ms)" "$bare")
    echo "| warm start (registry cache), $top plugins: ≤ 0.3x the bare loop (process mode) | $x |" \
        "$(verdict "$x" '<=' 0.3) |"
    pss=$(med "call-$top-process-$last" tree_pss_kb)
    echo "| memory, $top plugins, host and workers (PSS summed): ≤ 40 MiB (process mode) |" \
        "$(num "$pss") kB | $(awk -v p="$pss" 'BEGIN { print (p == "-") ? "not measured" : (p + 0 <= 40960 ? "met" : "**missed**") }') |"
    x=$(ratio "$(med "call-$top-process-$last" p50_us)" "$(med "call-$top-process-p00001" p50_us)")
    echo "| a call to the last of $top plugins no slower than to the first (process mode, p50) | $x |" \
        "$(verdict "$x" '<=' 1.05) |"
    first=$(med first-process list_ms)
    echo "| start to first \`tools/list\`, bundled plugins: ≤ 5 ms (process mode) | $first ms |" \
        "$(awk -v f="$first" 'BEGIN { print (f == "-") ? "not measured" : (f + 0 <= 5 ? "met" : "**missed**") }') |"
    x=$(ratio "$(med list-process rss_kb)" "$(med list-sdk rss_kb)")
    echo "| RSS with 1,000 tools: ≤ 0.25x the SDK server's | $x | $(verdict "$x" '<=' 0.25) |"
    if [ -s "$errors" ]; then
        echo
        echo "Failed runs (not in the medians):"
        echo
        sed 's/^/    /' "$errors"
    fi
} > "$out"
cat "$out"

# ---- the chart --------------------------------------------------------
if sh "$here/chart.sh" "$out" > results.svg; then
    echo "run.sh: chart in bench/results.svg"
else
    rm -f results.svg
fi
# toolhost's own runs must all have worked; a missing reference is only noted.
if grep -q -E '(none|process)(-cold|-warm)? failed' "$errors"; then
    exit 1
fi
exit 0
