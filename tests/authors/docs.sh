#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/authors/docs.sh: README.md and doc/*.md say what the tree does.
# Every relative link names a file of the tree (and a #anchor a heading of
# it); every ```sh block after a `<!-- runnable -->` line runs, from the
# build tree, with status 0 and some output; every --option they name is
# one toolhost's --help (or a subcommand's) lists, or one of another
# program below; and bench/chart.svg is what bench/chart.sh draws from
# bench/README.md.
set -u
fail=0
no() { echo "FAIL: $*"; fail=1; }
: "${TOP_SRCDIR:?}" "${TOP_BUILDDIR:?}" "${TOOLHOST:?}"
work=$(mktemp -d "${TMPDIR:-/tmp}/th-docs.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cd "$TOP_SRCDIR" || exit 1
docs="README.md $(ls doc/*.md)"

# The lines of FILE outside fenced code blocks, as "LINE<TAB>TEXT".
prose() { awk '/^```/ { fenced = !fenced; next } !fenced { print NR "\t" $0 }' "$1"; }

# GitHub's anchors for FILE's headings: lower case, punctuation dropped,
# spaces as hyphens.
anchors() {
    prose "$1" | cut -f2- | sed -n 's/^#\{1,6\} \{1,\}//p' | tr 'A-Z' 'a-z' |
        sed 's/[^a-z0-9 _-]//g; s/ /-/g'
}

# ---- links -------------------------------------------------------------
links=0
for f in $docs; do
    dir=$(dirname "$f")
    prose "$f" | awk -F '\t' '{
        s = substr($0, length($1) + 2)
        while (match(s, /\]\([^)]*\)/)) {
            print $1 "\t" substr(s, RSTART + 2, RLENGTH - 3)
            s = substr(s, RSTART + RLENGTH)
        }
    }' > "$work/links"
    while IFS="$(printf '\t')" read -r line target; do
        case $target in http://* | https://* | mailto:*) continue ;; esac
        links=$((links + 1))
        path=${target%%#*}
        anchor=
        case $target in *'#'*) anchor=${target#*#} ;; esac
        if [ -z "$path" ]; then
            to=$f
        else
            to="$dir/$path"
        fi
        if [ ! -e "$to" ]; then
            no "$f:$line: link to $target: $to does not exist"
            continue
        fi
        if [ -n "$anchor" ]; then
            case $to in
            *.md) anchors "$to" | grep -qx -- "$anchor" || no "$f:$line: link to $target: $to has no heading #$anchor" ;;
            *) no "$f:$line: link to $target: an anchor into a file that is not Markdown" ;;
            esac
        fi
    done < "$work/links"
done

# ---- runnable blocks ---------------------------------------------------
# From the build tree, with the registry cache and HOME in the scratch
# directory and nothing on stdin, so that a block cannot wait for input.
blocks=0
for f in $docs; do
    rm -f "$work"/block.*
    awk -v dir="$work" '
        /^<!-- runnable -->$/ { armed = NR + 1; next }
        NR == armed && /^```sh$/ { n++; out = dir "/block." n; printf "" > out; inblock = 1; next }
        inblock && /^```$/ { inblock = 0; close(out); next }
        inblock { print >> out }
        NR == armed { printf "%s:%d: <!-- runnable --> is not followed by a ```sh block\n", FILENAME, armed - 1 > (dir "/block.bad") }
    ' "$f"
    [ -f "$work/block.bad" ] && no "$(cat "$work/block.bad")"
    for b in "$work"/block.[0-9]*; do
        [ -f "$b" ] || continue
        blocks=$((blocks + 1))
        mkdir -p "$work/home"
        (cd "$TOP_BUILDDIR" && HOME="$work/home" XDG_CACHE_HOME="$work/home/cache" \
            PATH="$TOP_BUILDDIR/src:$PATH" sh -e "$b") < /dev/null > "$work/out" 2> "$work/err"
        rc=$?
        if [ "$rc" -ne 0 ] || [ ! -s "$work/out" ]; then
            no "$f: runnable block $(basename "$b") exited $rc with $(wc -c < "$work/out") bytes of output:"
            sed 's/^/    | /' "$b"
            sed 's/^/    stderr: /' "$work/err" | head -n 20
        fi
    done
done

# ---- options -----------------------------------------------------------
# What toolhost and its subcommands accept, as their --help prints them.
{
    "$TOOLHOST" --help
    for sub in inspect call new-plugin lock test; do "$TOOLHOST" "$sub" --help; done
} 2>&1 | grep -o -- '--[a-z][a-z0-9-]*' | sort -u > "$work/known"
[ -s "$work/known" ] || no "toolhost --help lists no options"
# Options of other programs the docs show, with the program they belong to.
cat >> "$work/known" <<'EOF'
--disable-interop-tests configure
--enable-interop-tests configure
--disable-mcpb-tests configure
--disable-container-tests configure
--enable-mcpb-tests configure
--disable-linux-extensions configure
--disable-package-tests configure
--enable-werror configure
--with-systemdsystemunitdir configure
--with-systemduserunitdir configure
--disable-tests configure
--user systemctl
--only-section objcopy
--now systemctl
--prefix configure
--package scripts/deps-debian.sh
--test scripts/deps-debian.sh
--fuzz scripts/deps-debian.sh
--bench scripts/deps-debian.sh
--cflags pkg-config
--libs pkg-config
--variable pkg-config
--spin bench/floor
--hop bench/floor
--no-audit npm
--no-fund npm
--transport claude
--scope claude
--trace-children valgrind
--leak-check valgrind
--requirements conformance
--build-arg podman
--secret podman
--rm podman
--variant mmdebstrap
--internal-worker toolhost's own worker processes, not an option to give
EOF
options=0
for f in $docs; do
    grep -n -o -- '\(^\|[^A-Za-z0-9_-]\)--[a-z][a-z0-9-]*' "$f" | sed 's/:[^-]*--/:--/' > "$work/opts"
    while IFS=: read -r line opt; do
        options=$((options + 1))
        awk -v o="$opt" '$1 == o { found = 1 } END { exit !found }' "$work/known" ||
            no "$f:$line: $opt is no option of toolhost --help (nor of the other programs this test lists)"
    done < "$work/opts"
done

# ---- the benchmark chart -----------------------------------------------
sh bench/chart.sh bench/README.md > "$work/chart.svg" || no "bench/chart.sh bench/README.md failed"
cmp -s "$work/chart.svg" bench/chart.svg ||
    no "bench/chart.svg is not what bench/chart.sh draws from bench/README.md (sh bench/chart.sh bench/README.md > bench/chart.svg)"

[ "$fail" -eq 0 ] && echo "PASS: $links links, $blocks runnable blocks and $options option mentions in $(echo "$docs" | wc -w) files; bench/chart.svg current"
exit "$fail"
