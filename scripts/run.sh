#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/run.sh: build toolhost and its bundled plugins in the source tree,
# then serve them over stdio. Extra arguments go to toolhost.
set -eu
cd "$(dirname "$0")/.."
# A client launches this as its server command: stdout is the protocol
# stream from the first byte, so everything the build prints (apt-get,
# autoreconf, configure, make) goes to stderr.
{
    sh scripts/deps-debian.sh
    [ -x configure ] || autoreconf -fi
    [ -f Makefile ] || ./configure
    make -j"$(nproc)"
} >&2
exec ./src/toolhost --plugin-dir plugins/.libs "$@"
