#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/loadgen_check.sh: the benchmark's tools work (a functional test run
# by `make check`; nothing here is timed). loadgen must check every response:
# it passes against the floor and toolhost in both eras and payload sizes
# (httpgen likewise over HTTP),
# and fails against servers that answer wrongly (cat echoes the requests
# back; a floor whose ids or texts are off; a server that exits at once).
set -u
fail=0
lg=./loadgen
th="../src/toolhost -q --isolation=none --plugin-dir ../plugins/.libs"
ok() { # NAME CMD...: CMD must succeed and print a result line
    name=$1; shift
    if out=$("$@" 2>&1) && echo "$out" | grep -q '^mode='; then
        echo "ok: $name"
    else
        echo "FAIL: $name: $out"; fail=1
    fi
}
refused() { # NAME CMD...: CMD must fail
    name=$1; shift
    if out=$("$@" 2>&1); then
        echo "FAIL: $name: loadgen accepted it: $out"; fail=1
    else
        echo "ok: $name (${out%%
*})"
    fi
}
for era in legacy modern; do
    ok "floor $era W=1" $lg --era $era -n 100 -w 1 -- ./floor
    ok "floor $era W=64 64 KiB" $lg --era $era -n 100 -w 64 --size 65536 -- ./floor
    # The process-boundary reference: answers come from a child process.
    ok "floor --spin --hop $era W=1" $lg --era $era -n 100 -w 1 -- ./floor --spin --hop
    ok "floor --hop $era W=64 64 KiB" $lg --era $era -n 100 -w 64 --size 65536 -- ./floor --hop
    # shellcheck disable=SC2086
    ok "toolhost $era W=8 1 KiB" $lg --era $era -n 100 -w 8 --size 1024 -- $th
    # shellcheck disable=SC2086
    ok "toolhost $era list" $lg --era $era --mode list -n 3 -- $th
done
# shellcheck disable=SC2086
ok "toolhost start" $lg --mode start -- $th
ok "exec" $lg --mode exec -- /bin/true
refused "cat echoes the requests" $lg -n 10 -- /bin/cat
refused "ids off by one" $lg --era modern -n 10 -- sh -c './floor | sed -u "s/\"id\":\([0-9]*\)/\"id\":1\1/"'
refused "text changed" $lg -n 10 -- sh -c './floor | sed -u "s/abcdefgh/abcdefgX/"'
refused "exits without answering" $lg -n 10 -- /bin/true
refused "floor with an unknown option" $lg -n 10 -- ./floor --nonsense
# httpgen: the HTTP rows' driver, against the libmicrohttpd floor and
# toolhost --http in both eras; it must refuse a server that is not there.
hg=./httpgen
thh="../src/toolhost --http 127.0.0.1:0 --isolation=none --plugin-dir ../plugins/.libs"
ok "http floor modern W=4" $hg --modern -n 100 -w 4 -- ./httpfloor
ok "http floor session W=1 1 KiB" $hg --session -n 100 -w 1 --size 1024 -- ./httpfloor
# shellcheck disable=SC2086
ok "http toolhost modern W=8" $hg --modern -n 100 -w 8 -- $thh
# shellcheck disable=SC2086
ok "http toolhost session W=8 1 KiB" $hg --session -n 100 -w 8 --size 1024 -- $thh
# shellcheck disable=SC2086
refused "http toolhost without a session" $hg --stateless -n 10 -- $thh
refused "http server that never listens" $hg -n 10 -- /bin/true
exit $fail
