#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Instructions the HTTP layer spends per request, counted by callgrind:
# lib/http's server (with nghttp2 and libc under it) driven in-process by
# tests/unit/http-instr over a scripted transport, for a small static file,
# in three shapes (HTTP/1.1 keep-alive, pipelined 16 deep, h2c with 100
# streams in flight). Only the server's side is counted (callgrind's
# collection is on inside the server's entry points). Instruction counts
# do not depend on the machine's load, so two builds compare exactly where
# a timed benchmark here would be noise; they leave out TCP, the NIC and
# cache misses: see app/bench/http_vs_servers.sh for the whole appliance.
#
# Usage: app/bench/http_instr.sh [REQUESTS] [BUILD_DIR]   (default 20000, build)
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-20000}
BUILD=${2:-build}
BIN=$BUILD/tests/unit/http-instr
command -v valgrind >/dev/null || { echo "needs valgrind (apt-get install valgrind)" >&2; exit 1; }
[ -x "$BIN" ] || { echo "$BIN: build first (ninja -C $BUILD)" >&2; exit 1; }
OUT=$(mktemp -d /tmp/ewyk-instr.XXXXXX)
trap 'rm -rf "$OUT"' EXIT

printf '%-28s %12s %10s   %s\n' shape "instr/req" "" "by object (instr/req)"
for shape in h1 h1p h2c; do
	valgrind --tool=callgrind --callgrind-out-file="$OUT/$shape.out" \
		--collect-atstart=no --toggle-collect=http_conn_recv \
		--toggle-collect=http_conn_writable --toggle-collect=http_server_answer \
		--toggle-collect=http_conn_peer_closed --toggle-collect=http_conn_closed \
		"$BIN" "$shape" "$N" >/dev/null 2>"$OUT/$shape.log" ||
		{ cat "$OUT/$shape.log" >&2; exit 1; }
	callgrind_annotate --inclusive=no --threshold=100 "$OUT/$shape.out" 2>/dev/null >"$OUT/$shape.txt"
	/usr/bin/python3 - "$OUT/$shape.txt" "$shape" "$N" <<'PY'
import re, sys, collections
path, shape, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
total = 0
by_obj = collections.Counter()
names = {"h1": "HTTP/1.1 keep-alive", "h1p": "HTTP/1.1 pipelined 16", "h2c": "h2c, 100 streams"}
for line in open(path):
    m = re.match(r"\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+PROGRAM TOTALS", line) or \
        re.match(r"\s*([\d,]+)\s+PROGRAM TOTALS", line)
    if m:
        total = int(m.group(1).replace(",", ""))
        continue
    m = re.match(r"\s*([\d,]+)\s+(?:\(\s*[\d.]+%\)\s+)?(\S+?):(\S+)", line)
    if m and "PROGRAM" not in line:
        obj = m.group(2)
        obj = "libnghttp2" if "nghttp2" in obj or obj == "???" else \
              "libc" if "libc" in obj or "glibc" in obj or obj.startswith("./string") \
              or obj.startswith("./") else "ewyk" if "lib/http" in obj or "tests/unit" in obj \
              else obj.split("/")[-1]
        by_obj[obj] += int(m.group(1).replace(",", ""))
parts = ", ".join(f"{k} {v / n:,.0f}" for k, v in by_obj.most_common(4))
print(f"{names[shape]:<28} {total / n:>12,.0f} {'':>10}   {parts}")
PY
done
echo "top functions under h2c (instructions per request):"
callgrind_annotate --inclusive=no "$OUT/h2c.out" 2>/dev/null |
	awk -v n="$N" '/^ *[0-9,]+ .*:/ && !/PROGRAM/ {
		v = $1; gsub(",", "", v); if (++k > 14) exit
		f = ($2 ~ /^\(/) ? $4 : $2; o = $NF
		sub(/^.*\//, "", f); sub(/^.*\//, "", o); sub(/\]$/, "", o)
		printf "  %8.0f  %s %s\n", v / n, f, (f ~ /^\?\?\?/ ? o : "") }'
