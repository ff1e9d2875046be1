#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/fuzz-harnesses.sh: the fuzz harnesses cannot rot unnoticed. `make
# fuzz` needs clang and is not part of make check, so an API change could
# leave a harness that no longer compiles: each fuzz/fuzz_*.c is compiled
# here (syntax only, with the build's compiler) and must be one `make fuzz` runs.
set -u
fail() { echo "FAIL: $*"; exit 1; }
: "${TOP_SRCDIR:?}" "${TOP_BUILDDIR:?}" "${CC:?}"

work=$(mktemp -d "${TMPDIR:-/tmp}/th-fuzz-harnesses.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

# compile FILE: the flags of `make fuzz-build`, without clang's sanitizers.
compile() {
    # shellcheck disable=SC2086 # FUZZ_CFLAGS is a list of flags
    $CC -fsyntax-only -Wall -Wextra -I"$TOP_BUILDDIR" -I"$TOP_SRCDIR/include" -I"$TOP_SRCDIR/src" \
        -I"$TOP_SRCDIR/fuzz" -DTH_PLUGINDIR='"/nowhere"' -DFUZZ_PLUGIN_DIR='"/nowhere"' ${FUZZ_CFLAGS:-} "$1"
}

listed=$(sed -n '/^FUZZ_HARNESSES =/,/[^\\]$/p' "$TOP_SRCDIR/Makefile.am" | sed 's/^FUZZ_HARNESSES =//; s/\\$//')
n=0
for f in "$TOP_SRCDIR"/fuzz/fuzz_*.c; do
    h=${f##*/fuzz_}
    h=${h%.c}
    compile "$f" >"$work/out" 2>&1 || { cat "$work/out"; fail "fuzz/fuzz_$h.c does not compile against the sources"; }
    case " $(echo $listed) " in
    *" $h "*) ;;
    *) fail "fuzz/fuzz_$h.c is not in FUZZ_HARNESSES of Makefile.am: make fuzz would never run it" ;;
    esac
    n=$((n + 1))
done
[ "$n" -ge 14 ] || fail "only $n harnesses in $TOP_SRCDIR/fuzz"
echo "all $n harnesses compile"

# The check must really compile: a harness defining its entry point twice
# is refused.
f=$(ls "$TOP_SRCDIR"/fuzz/fuzz_*.c | head -n 1)
{ cat "$f"; echo 'int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { (void)data; return (int)size; }'; } \
    >"$work/stale.c"
if compile "$work/stale.c" >"$work/out" 2>&1; then
    fail "a harness that cannot compile passed ($CC -fsyntax-only)"
fi
echo "a harness that does not compile is refused: $(grep -m 1 error "$work/out")"
