#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/mcpb/bundle.sh: `make mcpb-check` into a scratch folder: the bundle
# is staged, its manifest validated and the bundle packed by the MCPB CLI,
# then unpacked and run from there by run.mjs (with an empty environment,
# checking where every mapped library comes from).
set -eu
scratch=$(mktemp -d "${TMPDIR:-/tmp}/toolhost-mcpb.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
"${MAKE:-make}" -s -C "$TOP_BUILDDIR" mcpb-check MCPB_OUT="$scratch"
