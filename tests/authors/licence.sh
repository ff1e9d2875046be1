#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/authors/licence.sh: the licence is stated once and everywhere the
# same: LICENSE is the MIT licence, `toolhost --version` and
# debian/copyright name it, and every source file carries its SPDX line.
set -u
: "${TOP_SRCDIR:?}" "${TOOLHOST:?}"
fail=0
no() { echo "FAIL: $*"; fail=1; }
grep -q '^MIT License$' "$TOP_SRCDIR/LICENSE" || no "LICENSE is not the MIT licence"
"$TOOLHOST" --version | grep -qx 'License: MIT' || no "toolhost --version does not print 'License: MIT'"
grep -q '^License: Expat$' "$TOP_SRCDIR/debian/copyright" || no "debian/copyright does not name the Expat (MIT) licence"
if grep -q 'none-yet' "$TOP_SRCDIR/debian/copyright"; then no "debian/copyright still says none-yet"; fi
# Sources: C, headers and shell scripts of the tree (not generated files).
missing=$(cd "$TOP_SRCDIR" && find src include plugins tests fuzz bench scripts -type f \
    \( -name '*.c' -o -name '*.h' -o -name '*.sh' \) ! -path '*/node_modules/*' ! -name 'config.h' |
    while read -r f; do head -n 5 "$f" | grep -q 'SPDX-License-Identifier: MIT' || echo "$f"; done)
if [ -n "$missing" ]; then
    no "files without 'SPDX-License-Identifier: MIT' in their first 5 lines:"
    printf '%s\n' "$missing" | head -n 20
fi
[ "$fail" -eq 0 ] && echo "licence: LICENSE, --version, debian/copyright and every source file agree"
exit "$fail"
