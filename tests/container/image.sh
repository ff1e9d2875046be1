#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/container/image.sh: builds contrib/container/Containerfile with
# podman from a Debian 12 minbase made by mmdebstrap (no registry pull),
# then serves MCP from it over HTTP with a token and over `run -i` stdio,
# with a plugin mounted read-only at /plugins. Needs podman, runc or crun,
# mmdebstrap and curl, and deb.debian.org; without them it skips (77),
# except in CI, where it fails. The minbase tarball is kept in the build
# tree (tests/container/bookworm-minbase.tar; `make clean` removes it).
set -u
fail() { echo "FAIL: $*"; exit 1; }
skip() {
    [ -z "${CI:-}" ] || fail "$* (CI must run the container test; scripts/deps-debian.sh --test installs its tools)"
    echo "SKIP: $*"
    exit 77
}
: "${TOP_BUILDDIR:?}" "${TOP_SRCDIR:?}" "${TOOLHOST:?}" "${PLUGINS:?}" "${MAKE:=make}"
for t in podman mmdebstrap curl; do
    command -v "$t" >/dev/null 2>&1 || skip "$t was not found (Debian: apt-get install podman runc mmdebstrap curl)"
done
[ "$(id -u)" = 0 ] || skip "mmdebstrap and rootful podman need root here; run as root"

# Every name is this run's own: rootful podman's storage is one per
# machine, and two runs at once (CI and a distcheck, two clones' `make
# check`) must neither retag nor remove each other's images. A name holds
# the run's pid namespace and pid, so that a later run can tell what a
# run killed outright (SIGKILL: no trap runs) left behind.
pidns=$(readlink /proc/self/ns/pid | tr -cd 0-9)
run=$pidns-$$-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
tag=localhost/toolhost-check:$run
base=localhost/toolhost-check-bookworm:$run
ctr=toolhost-check-$run
secret=toolhost-check-$run
# A container outlives a killed run by this many seconds at most.
lifetime=600
tmp=$(mktemp -d "${TMPDIR:-/tmp}/th-oci-$run.XXXXXX") || exit 1
cleanup() {
    podman rm -f -i -t 0 "$ctr-probe-default" "$ctr-probe-runc" "$ctr-id" "$ctr-stdio" "$ctr-notoken" "$ctr-http" >/dev/null 2>&1
    # The image first: its base cannot go while an image is built on it.
    podman rmi -i "$tag" >/dev/null 2>&1
    podman rmi -i "$base" >/dev/null 2>&1
    podman secret rm "$secret" >/dev/null 2>&1
    rm -rf "$tmp"
    [ -z "${partial:-}" ] || rm -f "$partial"
}
trap cleanup EXIT
# dash runs the EXIT trap on exit only: a signal must become an exit.
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

# What earlier runs of this pid namespace left when killed: names whose
# pid is no longer alive (a pid reused since keeps its leftovers a while).
stale() { # reads names; prints those of dead runs
    while read -r n; do
        p=${n#*[-:]"$pidns"-}
        p=${p%%-*}
        case $p in '' | *[!0-9]*) continue ;; esac
        kill -0 "$p" 2>/dev/null || echo "$n"
    done
}
sweep() {
    names=$(podman ps -a --format '{{.Names}}' --filter "name=^toolhost-check-$pidns-" | stale)
    [ -z "$names" ] || podman rm -f -i -t 0 $names >/dev/null 2>&1
    for repo in localhost/toolhost-check localhost/toolhost-check-bookworm; do
        names=$(podman images --format '{{.Repository}}:{{.Tag}}' --filter "reference=$repo:$pidns-*" | stale)
        [ -z "$names" ] || podman rmi -i $names >/dev/null 2>&1
    done
    names=$(podman secret ls --format '{{.Name}}' | grep "^toolhost-check-$pidns-" | stale)
    [ -z "$names" ] || podman secret rm $names >/dev/null 2>&1
    names=$(ls -d "${TMPDIR:-/tmp}/th-oci-$pidns-"* "$TOP_BUILDDIR/tests/container/.minbase-$pidns-"* 2>/dev/null | stale)
    [ -z "$names" ] || rm -rf $names
    return 0
}
sweep
started=$(date +%s)
step() { echo "$(($(date +%s) - started))s: $*"; }

# Containers get the limits podman itself has: as root it asks for
# 1048576 open files and processes by default, which a machine whose root
# lacks CAP_SYS_RESOURCE (a container, a VM sandbox) refuses with EPERM.
# podman lowers its own process limit to 32768.
hard() { awk -v l="$1" 'index($0, l) == 1 { print $(NF - 1) }' /proc/self/limits; }
nofile=$(hard 'Max open files') nproc=$(hard 'Max processes')
[ "$nofile" = unlimited ] && nofile=1048576
{ [ "$nproc" = unlimited ] || [ "$nproc" -gt 32768 ]; } && nproc=32768
conf="$tmp/containers.conf"
printf '[containers]\ndefault_ulimits = ["nofile=%s:%s", "nproc=%s:%s"]\n' "$nofile" "$nofile" "$nproc" "$nproc" >"$conf"
CONTAINERS_CONF=$conf
export CONTAINERS_CONF

# The Debian 12 root filesystem, made once and kept in the build tree,
# imported under this run's name each time (seconds; the layer is shared).
cache="$TOP_BUILDDIR/tests/container/bookworm-minbase.tar"
if [ ! -s "$cache" ]; then
    mkdir -p "$(dirname "$cache")"
    step "mmdebstrap --variant=minbase bookworm (once; kept in $cache)"
    # Written beside the cache and renamed, so that a run at once in the
    # same tree sees the whole file or none. mmdebstrap picks the format
    # from the name's extension.
    partial="$(dirname "$cache")/.minbase-$run.tar"
    mmdebstrap --variant=minbase bookworm "$partial" >"$tmp/mmdebstrap.log" 2>&1 || {
        rm -f "$partial"
        tail -5 "$tmp/mmdebstrap.log"
        skip "mmdebstrap could not make a bookworm minbase (is deb.debian.org reachable?)"
    }
    mv "$partial" "$cache" || exit 1
fi
step "podman import"
podman import "$cache" "$base" >"$tmp/import.log" 2>&1 || { cat "$tmp/import.log"; fail "podman import $cache"; }

# crun refuses a hybrid cgroup v1/v2 hierarchy with controllers on the v2
# side ("cgroups in hybrid mode not supported"); runc runs there.
runtime=""
for rt in "" runc; do
    if [ -n "$rt" ]; then
        command -v "$rt" >/dev/null 2>&1 || continue
        printf '[engine]\nruntime = "%s"\n' "$rt" >>"$conf"
    fi
    if podman run --rm --name "$ctr-probe-${rt:-default}" --network=none "$base" true >"$tmp/probe.log" 2>&1; then
        runtime=${rt:-default}
        break
    fi
    sed "s/^/    runtime ${rt:-default}: /" "$tmp/probe.log"
done
[ -n "$runtime" ] || skip "podman cannot run a container here (above; Debian: apt-get install runc)"
step "podman $(podman --version | cut -d' ' -f3), runtime $runtime, storage $(podman info --format '{{.Store.GraphDriverName}}')"

# The build context, as doc/running.md#a-container-image assembles it.
# prefix=/usr/local: the image's PATH and entry point expect it, whatever
# prefix this tree was configured with (make distcheck's is a scratch one).
ctx="$tmp/ctx"
for d in src plugins; do
    $MAKE -C "$TOP_BUILDDIR/$d" install prefix=/usr/local DESTDIR="$ctx/root" >>"$tmp/install.log" 2>&1 ||
        { cat "$tmp/install.log"; fail "make -C $d install DESTDIR=$ctx/root"; }
done
cp "$TOP_SRCDIR/contrib/container/Containerfile" "$TOP_SRCDIR/contrib/container/toolhost-container" "$ctx/" || exit 1
version=$("$TOOLHOST" --version | sed -n '1s/^toolhost \([^ ]*\).*/\1/p')
step "podman build (toolhost $version)"
# --layers=false: no intermediate image per step is kept, which would
# stay behind untagged; nothing could reuse it, the base being new.
podman build --layers=false --force-rm --build-arg BASE="$base" --build-arg VERSION="$version" -t "$tag" "$ctx" \
    >"$tmp/build.log" 2>&1 || { tail -30 "$tmp/build.log"; fail "podman build"; }

# The labels the MCP Registry and OCI tools read.
name=$(sed -n 's/^  "name": "\(.*\)",$/\1/p' "$TOP_SRCDIR/server.json")
[ -n "$name" ] || fail "no top-level name in server.json"
label() { podman image inspect --format "{{index .Labels \"$1\"}}" "$tag"; }
[ "$(label io.modelcontextprotocol.server.name)" = "$name" ] ||
    fail "label io.modelcontextprotocol.server.name is '$(label io.modelcontextprotocol.server.name)', server.json says '$name'"
[ "$(label org.opencontainers.image.version)" = "$version" ] ||
    fail "label org.opencontainers.image.version is '$(label org.opencontainers.image.version)', not $version"
for l in title source licenses; do
    [ -n "$(label "org.opencontainers.image.$l")" ] || fail "no label org.opencontainers.image.$l"
done
uid=$(podman run --rm --name "$ctr-id" --network=none --entrypoint id "$tag" -u)
[ "$uid" != 0 ] || fail "the image runs as root"

# A plugin directory as an operator would mount it: owned by root, not
# writable by others, read-only in the container.
plugdir="$tmp/plugins"
mkdir -m 0755 "$plugdir" && install -m 0644 "$PLUGINS/echo.so" "$plugdir/echo.so" || exit 1
mount="$plugdir:/plugins:ro"

init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'
inited='{"jsonrpc":"2.0","method":"notifications/initialized"}'
list='{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
call='{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"from the container"}}}'

# stdio: `run -i` as the registry's server.json runs it (a pipe on stdin),
# the host as the image's user (not root) and the plugin root's: judged
# as it is, with no --allow-insecure-plugins.
step "podman run -i (stdio)"
printf '%s\n' "$init" "$inited" "$list" "$call" |
    podman run -i --rm --name "$ctr-stdio" --network=none -v "$mount" "$tag" --plugin-dir /plugins >"$tmp/stdio.out" 2>"$tmp/stdio.err" ||
    { cat "$tmp/stdio.err"; fail "podman run -i exited $?"; }
grep -q '"id":1,"result":{"protocolVersion":"2025-11-25"' "$tmp/stdio.out" || { cat "$tmp/stdio.out" "$tmp/stdio.err"; fail "stdio initialize"; }
grep -q '"text":"from the container"' "$tmp/stdio.out" || { cat "$tmp/stdio.out" "$tmp/stdio.err"; fail "stdio tools/call echo"; }
grep -q '"id":2,"result":{"tools":\[{"name":"echo"' "$tmp/stdio.out" || { cat "$tmp/stdio.out"; fail "stdio tools/list does not list echo"; }

# HTTP without a token file: the entry point says what to mount, status 2.
podman run --rm --name "$ctr-notoken" --network=none "$tag" >"$tmp/notoken.out" 2>&1
rc=$?
[ "$rc" = 2 ] && grep -q 'no token file /run/secrets/toolhost-tokens' "$tmp/notoken.out" ||
    { cat "$tmp/notoken.out"; fail "HTTP without a token file: status $rc, not 2 with the reason"; }

# HTTP: the default without -i, on 0.0.0.0:8080 with the token file from
# a podman secret, reached from outside through a published port.
token=check-$$-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
printf '%s mcp\n' "$token" >"$tmp/tokens"
podman secret create "$secret" "$tmp/tokens" >/dev/null || fail "podman secret create"
step "podman run -d (HTTP)"
podman run -d --rm --name "$ctr-http" --timeout "$lifetime" --secret "$secret,target=toolhost-tokens" -p 127.0.0.1::8080 \
    -v "$mount" "$tag" >/dev/null || fail "podman run -d"
addr=""
for _ in $(seq 100); do
    podman logs "$ctr-http" 2>&1 | grep -q 'listening on http://0.0.0.0:8080/mcp' &&
        addr=$(podman port "$ctr-http" 8080) && break
    sleep 0.1
done
[ -n "$addr" ] || { podman logs "$ctr-http"; fail "the container did not listen on 0.0.0.0:8080"; }
post() { # BODY [HEADER...]: the status, then the body, into $tmp/http.out
    b=$1
    shift
    curl -s --max-time 20 -o "$tmp/http.out" -D "$tmp/http.hdr" -w '%{http_code}' -X POST "http://$addr/mcp" \
        -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' "$@" -d "$b"
}
code=$(post "$init")
[ "$code" = 401 ] || fail "initialize without a token: HTTP $code, not 401"
code=$(post "$init" -H "Authorization: Bearer $token")
[ "$code" = 200 ] && grep -q '"protocolVersion":"2025-11-25"' "$tmp/http.out" || { cat "$tmp/http.out"; fail "HTTP initialize: $code"; }
sid=$(sed -n 's/^Mcp-Session-Id: *\([^[:space:]]*\).*/\1/ip' "$tmp/http.hdr")
[ -n "$sid" ] || fail "no Mcp-Session-Id"
code=$(post "$inited" -H "Authorization: Bearer $token" -H "Mcp-Session-Id: $sid" -H 'MCP-Protocol-Version: 2025-11-25')
[ "$code" = 202 ] || fail "notifications/initialized: HTTP $code"
code=$(post "$list" -H "Authorization: Bearer $token" -H "Mcp-Session-Id: $sid" -H 'MCP-Protocol-Version: 2025-11-25')
[ "$code" = 200 ] && grep -q '"tools":\[{"name":"echo"' "$tmp/http.out" || { cat "$tmp/http.out"; fail "HTTP tools/list: $code"; }
podman stop -t 10 "$ctr-http" >/dev/null 2>&1
step "done"
echo "PASS: the image serves MCP over HTTP (token, port 8080) and run -i stdio, with /plugins mounted"
