#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/check-valgrind.sh: `make check-valgrind`: runs the tests that spawn
# the host (worker, hostile, load, MCP) with every host, worker and scanner
# under valgrind (memcheck, children traced, one log per process), then fails
# if a test failed or any process that ended by itself logged an error.
# Run from the top build directory: scripts/check-valgrind.sh SRCDIR [TEST...]
# where TEST is a program of tests/ or PROGRAM:CASE (one Check test case).
set -eu
srcdir=$(cd "${1:?usage: check-valgrind.sh SRCDIR [TEST...]}" && pwd)
shift
# Valgrind runs one thread at a time, 20-50x slower: the test cases that
# measure overlap, races or grace periods in wall-clock time cannot hold
# under it and are left out (test_mcp_calls' concurrency and cancellation,
# test_mcp_stdio's shutdown, test_mcp_legacy's batches); so is
# test_load_limits, whose memory limit no valgrind process fits in.
default="test_worker test_hostile test_load test_load_refusals test_mcp_modern test_mcp_results
  test_inproc_mcp_results test_mcp_validation
  test_mcp_calls:list test_mcp_calls:echo test_mcp_calls:errors test_mcp_calls:content test_mcp_calls:progress
  test_inproc_mcp_calls:list test_inproc_mcp_calls:errors test_inproc_mcp_calls:content
  test_mcp_stdio:framing test_mcp_stdio:errors test_mcp_stdio:stdout test_mcp_stdio:command_line
  test_mcp_legacy:initialize test_mcp_legacy:logging test_mcp_legacy:tools
  test_mcp_ask test_ask test_resources test_mcp_resources test_mcp_tasks test_prompts test_mcp_prompts
  test_skills test_mcp_skills test_hostile_primitives test_mcp_legacy_tasks:core"
tests=${*:-$default}
logs=$(pwd)/tests/valgrind-logs
rm -rf "$logs"
mkdir -p "$logs/out"
${MAKE:-make} -C tests check TESTS= >/dev/null # builds the programs and plugins

# The harness puts TH_TEST_WRAPPER's words before each host command line
# (tests/mcp_harness.c). --error-exitcode makes the host's own errors fail
# its test at once; the logs catch the children's.
TH_TEST_WRAPPER="valgrind --trace-children=yes --error-exitcode=99 --leak-check=full \
--suppressions=$srcdir/tests/valgrind.supp --log-file=$logs/vg.%p.log"
# Check's time limits and the harness's waits grow to match; the load test
# makes fewer calls (what it checks does not depend on the count).
CK_TIMEOUT_MULTIPLIER=${CK_TIMEOUT_MULTIPLIER:-5}
TH_LOAD_CALLS=${TH_LOAD_CALLS:-4000}
export TH_TEST_WRAPPER CK_TIMEOUT_MULTIPLIER TH_LOAD_CALLS
failed=""
for t in $tests; do
    prog=${t%%:*}
    case $t in *:*) CK_RUN_CASE=${t#*:} && export CK_RUN_CASE ;; *) unset CK_RUN_CASE ;; esac
    out="$logs/out/$(echo "$t" | tr ':' '-').out"
    if (cd tests && "./$prog") >"$out" 2>&1; then
        echo "PASS: $t"
    else
        echo "FAIL: $t"
        grep -E ':[FE]:' "$out" >&2 || tail -n 20 "$out" >&2
        failed="$failed $t"
    fi
done

# Per process: a clean end, an error, or a death by signal. Hostile plugins
# crash (SIGSEGV, SIGABRT) on purpose, and memcheck's report of what such a
# process was doing at the fault (the faulting read, what its threads held)
# is the crash the test asked for, not a defect: those are counted apart. A
# host that dies when its test did not expect it fails that test. SIGKILL
# leaves no summary: the host kills its workers when it stops, and hung
# ones; their logs still show every error found while they ran (a stack:
# "   at 0x..."), only their leaks go unchecked.
clean=0 crashed=0 killed=0 bad=0
for log in "$logs"/vg.*.log; do
    [ -e "$log" ] || continue
    if grep -q 'Process terminating with default action of signal' "$log"; then
        crashed=$((crashed + 1))
    elif ! grep -q 'ERROR SUMMARY:' "$log" && ! grep -q '^==[0-9]*==    at 0x' "$log"; then
        killed=$((killed + 1))
    elif grep -q 'ERROR SUMMARY: 0 errors' "$log"; then
        clean=$((clean + 1))
    else
        bad=$((bad + 1))
        echo "check-valgrind: errors in $log:" >&2
        cat "$log" >&2
    fi
done
echo "check-valgrind: $clean processes clean, $crashed crashed by a signal (hostile plugins)," \
    "$killed killed (SIGKILL) without errors, $bad with errors; logs in $logs"
if [ -n "$failed" ] || [ "$bad" -ne 0 ]; then
    echo "check-valgrind: FAILED:${failed:- (no test failed)}; $bad processes with errors" >&2
    exit 1
fi
echo "check-valgrind: all passed"
