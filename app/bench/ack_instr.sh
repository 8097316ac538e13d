#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Instructions lib/net spends per ACK of a bulk sender, by flight, counted
# by callgrind: build/tests/tcp/ack-instr drives one connection of the TCP
# harness's real stack (timestamps, window scale and SACK on); of its
# measured ACKs, what net_rx_us and net_flush spend is counted: the ACK's
# processing and the segments it lets out. Two shapes: cumulative ACKs of two segments each with the
# peer's window holding the flight (the steady state of a download), and
# ACKs whose SACK block grows by two segments over a lost first segment
# (recovery: RACK, the hole resent). Counts do not depend on the machine's
# load. SEGS: the flights to measure, in segments of 1448 bytes (128: the
# scoreboard's old bound, 185 KB; 5500: 8 MB).
#
# Usage: [SEGS="128 1024 5500"] app/bench/ack_instr.sh [ACKS] [BUILD_DIR]
#        (default 4000 ACKs of the steady state, build)
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-4000}
BUILD=${2:-build}
SEGS=${SEGS:-"128 1024 5500"}
BIN=$BUILD/tests/tcp/ack-instr
command -v valgrind >/dev/null || { echo "needs valgrind (apt-get install valgrind)" >&2; exit 1; }
[ -x "$BIN" ] || { echo "$BIN: build first (ninja -C $BUILD)" >&2; exit 1; }
OUT=$(mktemp -d /tmp/ewyk-ack-instr.XXXXXX)
trap 'rm -rf "$OUT"' EXIT

printf '%-10s %8s %8s %14s %12s\n' shape segs acks instr_per_ack segs_out
for shape in ack sack; do
	for segs in $SEGS; do
		valgrind --tool=callgrind --callgrind-out-file="$OUT/cg.out" \
			--collect-atstart=no --toggle-collect=measured_ack \
			"$BIN" "$shape" "$segs" "$N" >"$OUT/run.txt" 2>"$OUT/run.log" ||
			{ echo "$shape $segs: $(tail -n 1 "$OUT/run.log")" >&2; continue; }
		acks=$(awk '{print $1; exit}' "$OUT/run.txt")
		out=$(awk '{print $(NF - 4); exit}' "$OUT/run.txt")
		# lib/net's part: net_rx_us and net_flush, inclusive.
		total=$(callgrind_annotate --inclusive=yes "$OUT/cg.out" 2>/dev/null |
			awk '/:(net_rx_us|net_flush) \[/ { gsub(",", "", $1); t += $1 } END { print t }')
		printf '%-10s %8s %8s %14.0f %12s\n' "$shape" "$segs" "$acks" \
			"$(echo "$total / $acks" | bc -l)" "$out"
	done
done
