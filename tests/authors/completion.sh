#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/authors/completion.sh: the generated bash and zsh completions
# (src/completion/, from the option table) offer every option
# `toolhost --help` lists, and bash's completes an option's choices.
set -u
fail() { echo "FAIL: $*"; exit 1; }
: "${TOP_BUILDDIR:?}" "${TOOLHOST:?}"
bashc="$TOP_BUILDDIR/src/completion/toolhost"
zshc="$TOP_BUILDDIR/src/completion/_toolhost"
[ -f "$bashc" ] && [ -f "$zshc" ] || fail "the completions were not generated"

opts=$("$TOOLHOST" --help | sed -n 's/^ *\(-[a-zA-Z], \)\{0,1\}--\([a-z][a-z0-9-]*\).*/\2/p' | sort -u)
count=$(echo "$opts" | wc -l)
[ "$count" -gt 40 ] || fail "toolhost --help lists only $count options"

for o in $opts; do
    grep -q -e "'\*\{0,1\}--$o[=[]" -e ",--$o[=}]" "$zshc" || fail "the zsh completion lacks --$o"
done

command -v bash >/dev/null 2>&1 || fail "bash was not found"
# What bash would offer after WORDS..., the last being the word completed.
offer() {
    bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _toolhost; printf "%s\n" "${COMPREPLY[@]}"' \
        sh "$bashc" "$@"
}
offered=$(offer toolhost --) || fail "the bash completion failed"
for o in $opts; do
    echo "$offered" | grep -qx -- "--$o" || fail "the bash completion does not offer --$o"
done
[ "$(offer toolhost --isolation '' | tr '\n' ' ')" = "process none " ] ||
    fail "bash offers '$(offer toolhost --isolation '')' for --isolation"
[ "$(offer toolhost --sandbox=st)" = "strict" ] || fail "bash does not complete --sandbox=st to strict"
echo "PASS: both completions offer all $count options"
