#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/mutate.sh: `make mutate`, mutation testing of the checks that guard
# security and the protocol. Each entry of a list (tests/mutate/mutations)
# breaks one check in a scratch copy of the tree; the tests that cover it
# must then fail ("killed"), or the suite would not notice that bug.
#
#   mutate.sh --check SRCDIR LIST        every snippet is found once (make check)
#   mutate.sh SRCDIR LIST [ID...]        run (all entries, or those IDs)
#
# The run is started from the top build directory, whose `make distdir`
# gives the scratch copy: the user's files are never changed, and the copy
# is removed at the end, on error and on Ctrl-C (MUTATE_KEEP=1 keeps it).
set -eu
LC_ALL=C
export LC_ALL

check_only=false
if [ "${1:-}" = --check ]; then
    check_only=true
    shift
fi
srcdir=$(cd "${1:?usage: mutate.sh [--check] SRCDIR LIST [ID...]}" && pwd)
list=${2:?usage: mutate.sh [--check] SRCDIR LIST [ID...]}
shift 2
case $list in /*) ;; *) list=$(pwd)/$list ;; esac
make=${MAKE:-make}

scratch=$(mktemp -d "${TMPDIR:-/tmp}/toolhost-mutate.XXXXXX")
cleanup() {
    if [ "${MUTATE_KEEP:-0}" = 1 ]; then
        echo "mutate: scratch copy kept in $scratch" >&2
    else
        rm -rf "$scratch"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# Split LIST into one directory per entry, $scratch/m/NNN, holding the
# fields as files: find and replace verbatim, several "find:" or
# "replace:" lines joined by newlines; the text starts after "KEY: ".
mkdir "$scratch/m"
awk -v out="$scratch/m" '
function flush() {
    if (!n_open)
        return
    n_open = 0
    for (k in need)
        if (!(k in have)) {
            printf "%s:%d: entry %s lacks \"%s:\"\n", FILENAME, start, have["id"], k > "/dev/stderr"
            bad = 1
        }
    if (have["id"] in ids) {
        printf "%s:%d: id %s is used twice\n", FILENAME, start, have["id"] > "/dev/stderr"
        bad = 1
    }
    ids[have["id"]] = 1
    dir = sprintf("%s/%03d", out, n)
    system("mkdir \"" dir "\"")
    for (k in have) {
        printf "%s\n", have[k] > (dir "/" k)
        close(dir "/" k)
    }
    printf "%d\n", start > (dir "/line")
    close(dir "/line")
    delete have
}
BEGIN { split("id file find replace tests what", f, " "); for (i in f) need[f[i]] = 1 }
/^#/ { next }
/^$/ { flush(); next }
{
    if (!n_open) { n++; n_open = 1; start = FNR }
    key = $0; sub(/:.*/, "", key)
    if (!(key in need) || substr($0, length(key) + 1, 1) != ":") {
        printf "%s:%d: unknown line: %s\n", FILENAME, FNR, $0 > "/dev/stderr"
        bad = 1
        next
    }
    text = substr($0, length(key) + 2)
    sub(/^ /, "", text)
    if ((key == "find" || key == "replace") && (key in have))
        have[key] = have[key] "\n" text
    else if (key in have) {
        printf "%s:%d: %s given twice\n", FILENAME, FNR, key > "/dev/stderr"
        bad = 1
    } else
        have[key] = text
}
END { flush(); exit bad }
' "$list" || { echo "mutate: $list is malformed" >&2; exit 1; }

# apply DIR FILE: write FILE with the entry's snippet replaced, to stdout.
# Exit 2: the snippet is missing; 3: it is there more than once (either way
# the entry no longer says which check it breaks).
apply() {
    awk -v ff="$1/find" -v rf="$1/replace" '
    function slurp(path,   s, line, n) {
        s = ""; n = 0
        while ((getline line < path) > 0)
            s = s (n++ ? "\n" : "") line
        close(path)
        return s
    }
    BEGIN { find = slurp(ff); repl = slurp(rf); RS = "\001" }
    { text = $0 } # the whole file: C sources have no \001
    END {
        i = index(text, find)
        if (!i)
            exit 2
        rest = substr(text, i + length(find))
        if (index(rest, find))
            exit 3
        printf "%s%s%s", substr(text, 1, i - 1), repl, rest
    }' "$2"
}

field() { cat "$1/$2"; }

# Every entry names an existing file, a snippet found exactly once, a
# replacement that differs, and tests that tests/*.mk declares.
declared=$(cat "$srcdir"/tests/*.mk | sed -n 's/^TESTS *+= *//p' | tr ' \t' '\n\n' | sort -u)
bad=0
for d in "$scratch"/m/*/; do
    d=${d%/}
    id=$(field "$d" id) file=$(field "$d" file) where="$list:$(field "$d" line): $id"
    if [ ! -f "$srcdir/$file" ]; then
        echo "$where: $file does not exist" >&2
        bad=1
        continue
    fi
    if cmp -s "$d/find" "$d/replace"; then
        echo "$where: the replacement is the snippet itself" >&2
        bad=1
    fi
    rc=0
    apply "$d" "$srcdir/$file" >/dev/null || rc=$?
    case $rc in
    0) ;;
    2) echo "$where: snippet not found in $file (update the entry to the code it breaks):" >&2
       sed 's/^/    /' "$d/find" >&2
       bad=1 ;;
    3) echo "$where: snippet found more than once in $file (lengthen it)" >&2
       bad=1 ;;
    *) echo "$where: applying it failed (awk exit $rc)" >&2
       bad=1 ;;
    esac
    for t in $(field "$d" tests); do
        if ! echo "$declared" | grep -qx "${t%%:*}"; then
            echo "$where: test ${t%%:*} is not in TESTS of tests/*.mk" >&2
            bad=1
        fi
    done
done
count=$(ls "$scratch/m" | wc -l)
if [ "$bad" != 0 ]; then
    echo "mutate: $list does not match the sources" >&2
    exit 1
fi
if $check_only; then
    echo "mutate: all $count mutations apply to $srcdir"
    exit 0
fi

# Pick the entries asked for.
if [ $# -gt 0 ]; then
    for d in "$scratch"/m/*/; do
        d=${d%/}
        case " $* " in *" $(field "$d" id) "*) ;; *) rm -rf "$d" ;; esac
    done
    [ -n "$(ls "$scratch/m")" ] || { echo "mutate: no entry has the id(s) $*" >&2; exit 1; }
fi

# The scratch tree: the distribution files, configured as this build was.
top=$(pwd)
[ -f "$top/config.status" ] || { echo "mutate: run from a configured build directory (make mutate)" >&2; exit 1; }
tree=$scratch/tree
log=$scratch/log
echo "mutate: copying the tree to $tree"
# distdir must be relative (automake prefixes ../ for the subdirectories),
# hence a name in the build directory, moved into the scratch at once.
rel=.mutate-tree.$$
rm -rf "$rel"
$make -s distdir top_distdir="$rel" distdir="$rel" >"$log" 2>&1 || { cat "$log" >&2; rm -rf "$rel"; echo "mutate: make distdir failed" >&2; exit 1; }
mv "$rel" "$tree"
cp -R "$tree" "$scratch/orig"
eval "set -- $("$top/config.status" --config)"
echo "mutate: configuring and building it (the host and the test programs)"
(cd "$tree" && ./configure -q "$@" && nice $make -s -j"${MUTATE_JOBS:-2}" && nice $make -s -j"${MUTATE_JOBS:-2}" -C tests check TESTS=) \
    >"$log" 2>&1 || { tail -n 40 "$log" >&2; echo "mutate: the unmutated build failed" >&2; exit 1; }

# run_test TEST: PROGRAM or PROGRAM:CASE (one Check test case), relinked
# against the current library, run from tests/ as make check would.
run_test() {
    prog=${1%%:*}
    nice $make -s -C "$tree/tests" "$prog" >>"$log" 2>&1 || return 1
    case $1 in
    *:*) (cd "$tree/tests" && CK_RUN_CASE=${1#*:} nice "./$prog") >>"$log" 2>&1 ;;
    *) (cd "$tree/tests" && unset CK_RUN_CASE && nice "./$prog") >>"$log" 2>&1 ;;
    esac
}

# Every test used must pass unmutated, or a kill would mean nothing.
tests=$(cat "$scratch"/m/*/tests | tr ' ' '\n' | sed '/^$/d' | sort -u)
echo "mutate: the covering tests, unmutated"
for t in $tests; do
    : >"$log"
    if ! run_test "$t"; then
        tail -n 30 "$log" >&2
        echo "mutate: $t fails without any mutation; fix that first" >&2
        exit 1
    fi
done

killed=0 survived=0 total=0 survivors=""
for d in "$scratch"/m/*/; do
    d=${d%/}
    id=$(field "$d" id) file=$(field "$d" file)
    total=$((total + 1))
    began=$(date +%s)
    apply "$d" "$scratch/orig/$file" >"$tree/$file"
    : >"$log"
    verdict=""
    if ! nice $make -s -C "$tree/src" >>"$log" 2>&1; then
        tail -n 20 "$log" >&2
        echo "mutate: $id does not compile; fix its entry" >&2
        exit 1
    fi
    for t in $(field "$d" tests); do
        if ! run_test "$t"; then
            verdict="killed by $t"
            break
        fi
    done
    # A fresh copy, newer than the objects, so the next build recompiles it.
    cp "$scratch/orig/$file" "$tree/$file"
    secs=$(($(date +%s) - began))
    if [ -n "$verdict" ]; then
        killed=$((killed + 1))
        printf 'KILLED    %-28s %s (%ss)\n' "$id" "$verdict" "$secs"
    else
        survived=$((survived + 1))
        survivors="$survivors $id"
        printf 'SURVIVED  %-28s %s (ran: %s; %ss)\n' "$id" "$(field "$d" what)" "$(field "$d" tests)" "$secs"
    fi
done
echo "mutation score: $killed of $total killed, $survived survived${survivors:+:$survivors}"
