#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/chart.sh: draws the stdio echo table of a benchmark report (the
# results.md run.sh writes, or bench/README.md, whose newest run comes
# first) as an SVG bar chart on stdout: calls/s per scenario and server, on
# a log scale. POSIX sh and awk only, so `make bench` always draws it.
#
#   sh bench/chart.sh REPORT.md > chart.svg
set -eu
report=${1:?usage: chart.sh REPORT.md > chart.svg}
[ -r "$report" ] || { echo "chart.sh: cannot read $report" >&2; exit 1; }

LC_ALL=C awk '
# The first table after the "Echo calls over stdio" line: its header names
# the servers, each row a scenario and a "calls/s (p50)" cell per server.
/^Echo calls over stdio/ && !seen { seen = 1; want = 1; next }
want && /^\|/ {
    n = split($0, cell, "|")
    if (!ncol) {
        for (i = 3; i < n; i++) {
            name = cell[i]
            gsub(/`/, "", name); gsub(/--isolation=none/, "in-process", name)
            gsub(/^ +| +$/, "", name)
            series[++ncol] = name
        }
        next
    }
    if (cell[2] ~ /^ *-+ *$/)
        next
    label = cell[2]; gsub(/^ +| +$/, "", label)
    rows++
    rowname[rows] = label
    for (i = 3; i < n; i++) {
        v = cell[i]; gsub(/,/, "", v)
        # A cell that does not start with a number was not measured.
        value[rows, i - 2] = (match(v, /^ *[0-9]+/) ? substr(v, RSTART, RLENGTH) + 0 : 0)
        if (value[rows, i - 2] > top)
            top = value[rows, i - 2]
    }
    next
}
want && ncol && !/^\|/ { want = 0 }
function lg(x) { return log(x) / log(10) }
function y(v) { return plot_bottom - (lg(v) - lo) / (hi - lo) * (plot_bottom - plot_top) }
function tick(d) { return d >= 6 ? 10 ^ (d - 6) "M" : d >= 3 ? 10 ^ (d - 3) "k" : 10 ^ d }
END {
    if (!rows || !ncol || top <= 0) {
        print "chart.sh: no \"Echo calls over stdio\" table with numbers in the report" > "/dev/stderr"
        exit 1
    }
    split("#1f77b4 #ff7f0e #7f7f7f #2ca02c #9467bd #8c564b", colour, " ")
    width = 960; height = 520; left = 70; right = 20; plot_top = 90; plot_bottom = 430
    lo = 2; hi = int(lg(top)) + 1
    group = (width - left - right) / rows
    bar = (group * 0.8) / ncol
    printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"11\">\n", width, height, width, height
    printf "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", width, height
    printf "<text x=\"%d\" y=\"24\" font-size=\"15\" text-anchor=\"middle\">Echo calls over stdio: median calls/s (log scale, higher is better)</text>\n", width / 2
    for (s = 1; s <= ncol; s++) {
        x = left + (s - 1) * ((width - left - right) / ncol)
        printf "<rect x=\"%.1f\" y=\"44\" width=\"12\" height=\"12\" fill=\"%s\"/>", x, colour[s]
        printf "<text x=\"%.1f\" y=\"54\">%s</text>\n", x + 16, series[s]
    }
    for (d = lo; d <= hi; d++) {
        printf "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#dddddd\"/>", left, width - right, y(10 ^ d), y(10 ^ d)
        printf "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", left - 6, y(10 ^ d) + 4, tick(d)
    }
    for (r = 1; r <= rows; r++) {
        gx = left + (r - 1) * group + group * 0.1
        for (s = 1; s <= ncol; s++) {
            v = value[r, s]
            if (v <= 10 ^ lo)
                continue
            printf "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>%s, %s: %d calls/s</title></rect>\n", gx + (s - 1) * bar, y(v), bar - 1, plot_bottom - y(v), colour[s], rowname[r], series[s], v
        }
        # "W=1, 8 B, one CPU" on two lines: the scenario, then the placement.
        first = rowname[r]; second = ""
        if (sub(/, one CPU$/, "", first))
            second = "one CPU"
        printf "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>", left + (r - 0.5) * group, plot_bottom + 18, first
        if (second != "")
            printf "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>", left + (r - 0.5) * group, plot_bottom + 32, second
        printf "\n"
    }
    printf "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#000000\"/>\n", left, width - right, plot_bottom, plot_bottom
    printf "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">W: requests in flight; 8 B, 1 KiB, 64 KiB: the echoed text; one CPU: client and server on the same CPU</text>\n", width / 2, height - 20
    print "</svg>"
}
' "$report"
