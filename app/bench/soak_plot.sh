#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Plots a soak's CSV (app/bench/soak.sh) as a PNG with gnuplot: requests
# per second, ewykd's resident memory, mbufs in use and open connections
# against time. Not used by the test suite (apt-get install gnuplot-nox).
#
# Usage: app/bench/soak_plot.sh CSV PNG [TITLE]
set -euo pipefail
CSV=${1:?usage: soak_plot.sh CSV PNG [TITLE]}
PNG=${2:?usage: soak_plot.sh CSV PNG [TITLE]}
TITLE=${3:-ewykd soak}
command -v gnuplot >/dev/null || { echo "needs gnuplot (apt-get install gnuplot-nox)" >&2; exit 1; }
gnuplot <<PLOT
set datafile separator ","
set terminal pngcairo size 1000,900 font ",10" noenhanced
set output "$PNG"
set multiplot layout 3,1 title "$TITLE"
set key bottom left opaque
set grid
set xlabel "time (s)"
set ylabel "requests/s"
set yrange [0:*]
plot "$CSV" every ::1 using 1:6 with lines lw 2 title "requests served per second"
set ylabel "MiB"
set yrange [0:*]
plot "$CSV" every ::1 using 1:(\$2 / 1024) with lines lw 2 title "ewykd VmRSS"
set ylabel "mbufs in use"
set yrange [0:*]
set y2label "open connections"
set y2range [0:*]
set y2tics
plot "$CSV" every ::1 using 1:3 with lines lw 2 title "mbufs in use", \
     "$CSV" every ::1 using 1:4 axes x1y2 with lines lw 2 title "open connections (right)"
unset multiplot
PLOT
