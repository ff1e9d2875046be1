#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/authors/completion.sh: the generated bash and zsh completions
# (src/gencompletion.c, from the option table) offer every option
# `toolhost --help` lists, every subcommand it lists and every option of
# each subcommand's synopsis (its --help), and bash's completes an
# option's choices.
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

# The subcommands: every one the usage lines or the Subcommands list of
# --help name, so that a new one cannot be left out of the completions.
subs=$("$TOOLHOST" --help | sed -n -e 's/^\(Usage: \|       \)toolhost \([a-z][a-z-]*\)\( .*\)\{0,1\}$/\2/p' \
    -e '/^Subcommands/,/^$/s/^  \([a-z][a-z-]*\)  .*/\1/p' | sort -u)
nsubs=$(echo "$subs" | wc -l)
[ "$nsubs" -ge 6 ] || fail "toolhost --help lists only $nsubs subcommands: $subs"
offered=$(offer toolhost '')
nsubopts=0
for s in $subs; do
    echo "$offered" | grep -qx -- "$s" || fail "the bash completion does not offer the subcommand $s"
    grep -q "^_arguments .*'1:subcommand:(\(.* \)\{0,1\}$s[ )]" "$zshc" || fail "the zsh completion lacks the subcommand $s"
    # The options of its synopsis: the Usage line and the indented ones after it.
    sopts=$("$TOOLHOST" "$s" --help 2>&1 | awk '/^Usage:/ { on = 1; print; next } on && /^ / { print; next } { on = 0 }' |
        grep -o -- '--[a-z][a-z0-9-]*' | sort -u)
    [ -n "$sopts" ] || fail "toolhost $s --help shows no option in its synopsis"
    soffered=$(offer toolhost "$s" --)
    # zsh: the subcommand's block, and the server's options when it uses them.
    block=$(awk -v s="    $s)" '$0 == s { on = 1; next } on && /return ;;/ { exit } on' "$zshc")
    for o in $sopts; do
        nsubopts=$((nsubopts + 1))
        echo "$soffered" | grep -qx -- "$o" || fail "bash does not offer $o after toolhost $s"
        echo "$block" | grep -q -- "'$o[=[]" ||
            { echo "$block" | grep -q '\$server' && grep -q -e "'\*\{0,1\}$o[=[]" -e ",$o[=}]" "$zshc"; } ||
            fail "the zsh completion lacks $o after toolhost $s"
    done
done
[ "$(offer toolhost test --isolation '' | tr '\n' ' ')" = "process none " ] ||
    fail "bash does not complete test --isolation"
echo "PASS: both completions offer all $count options, $nsubs subcommands and their $nsubopts options"
