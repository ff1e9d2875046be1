#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/include-graph.sh: the graph of `#include "..."` between the files
# of src/, by file (foo.c and foo.h are one node, "dir/foo") and by layer
# directory. It prints every circle and every include that goes up the
# layer order, and exits 1 if it found any, so a new circle fails `make check`.
#
# usage: include-graph.sh [-e] [SRCDIR]
#   -e      also print the edges (file graph, then layer graph)
#   SRCDIR  the src/ folder (default: $TOP_SRCDIR/src, else ./src)
set -u
edges=0
if [ "${1:-}" = "-e" ]; then edges=1; shift; fi
src=${1:-${TOP_SRCDIR:-.}/src}
[ -d "$src" ] || { echo "include-graph: $src: no such directory" >&2; exit 2; }

# The layers, lowest first (ARCHITECTURE.md). A file may include its own
# layer and those before it. "main" stands for the files directly in src/.
LAYERS="base schema call plugin worker protocol transport cli host testing main"

cd "$src" || exit 2
# Paths in src/ hold no blanks, so a word list will do.
files=$(find . -name '*.[ch]' | sed 's|^\./||' | LC_ALL=C sort)
set -f
# shellcheck disable=SC2086
awk -v layers="$LAYERS" -v edges="$edges" '
function node(path) { sub(/\.[ch]$/, "", path); return path }
function layer(n) { return index(n, "/") ? substr(n, 1, index(n, "/") - 1) : "main" }
# Tarjan: every strongly connected component of more than one node is a circle.
function visit(g, v,    i, w, comp, n) {
    idx[g, v] = low[g, v] = ++counter; stack[++sp] = v; onstack[g, v] = 1
    for (i = 1; i <= nout[g, v]; i++) {
        w = out[g, v, i]
        if (!((g, w) in idx)) { visit(g, w); if (low[g, w] < low[g, v]) low[g, v] = low[g, w] }
        else if (onstack[g, w] && idx[g, w] < low[g, v]) low[g, v] = idx[g, w]
    }
    if (low[g, v] != idx[g, v]) return
    comp = ""; n = 0
    do { w = stack[sp--]; onstack[g, w] = 0; comp = w (n++ ? " " : "") comp } while (w != v)
    if (n > 1) { printf "circle (%s): %s\n", g, comp; ncircles++ }
}
function addnode(g, v) { if (!((g, v) in isnode)) { isnode[g, v] = 1; nodes[g, ++nnodes[g]] = v } }
function edge(g, a, b) {
    if (a == b || ((g, a, b) in seen)) return
    seen[g, a, b] = 1; out[g, a, ++nout[g, a]] = b
    addnode(g, a); addnode(g, b)
    if (edges) printf "%s: %s -> %s\n", g, a, b
}
BEGIN {
    n = split(layers, L, " "); for (i = 1; i <= n; i++) rank[L[i]] = i
    for (i = 1; i < ARGC; i++) isfile[ARGV[i]] = 1 # empty files too
}
/^[ \t]*#[ \t]*include[ \t]*"/ {
    inc = $0; sub(/^[^"]*"/, "", inc); sub(/".*/, "", inc)
    from[++nincl] = FILENAME; to[nincl] = inc
}
function include(f, inc,    a, b, la, lb) {
    # Only headers of src/ are nodes: config.h and toolhost/plugin.h are not.
    if (!(inc in isfile)) return
    a = node(f); b = node(inc)
    edge("file", a, b); edge("layer", layer(a), layer(b))
    la = layer(a); lb = layer(b)
    if ((la in rank) && (lb in rank) && rank[lb] > rank[la]) {
        printf "upward: %s includes %s (%s is above %s)\n", f, inc, lb, la; nup++
    }
    if (!(la in rank)) unknown[la] = 1
}
END {
    for (i = 1; i <= nincl; i++) include(from[i], to[i])
    for (u in unknown) { printf "unknown layer: src/%s/ is not in the layer list\n", u; nup++ }
    for (k = 1; k <= 2; k++) {
        g = k == 1 ? "file" : "layer"
        for (i = 1; i <= nnodes[g]; i++) if (!((g, nodes[g, i]) in idx)) visit(g, nodes[g, i])
    }
    printf "include-graph: %d nodes, %d circles, %d upward includes\n", nnodes["file"], ncircles, nup
    exit (ncircles + nup) ? 1 : 0
}' $files
