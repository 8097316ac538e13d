#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Instructions lib/net spends per request over IPv4 and over IPv6, counted
# by callgrind: build/tests/tcp/net-instr drives one connection of the TCP
# harness's real stack (a 100-byte request in, a 400-byte answer out, each
# request acknowledging the last answer; timestamps, window scale and SACK
# on; checksums in software, as on net_af_xdp and net_memif), and only the
# stack's entry points are counted (net_rx, tcp_write, tcp_output,
# net_flush). Counts do not depend on the machine's load: the families
# compare exactly, where a timed benchmark on a loaded host moves by more
# than the difference (app/bench/http_vs_servers.sh with EWYK_FAMILY="4 6"
# for the whole appliance). lib/http's part is the same in both families
# (app/bench/http_instr.sh).
#
# Usage: app/bench/net_instr.sh [REQUESTS] [BUILD_DIR]   (default 20000, build)
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-20000}
BUILD=${2:-build}
BIN=$BUILD/tests/tcp/net-instr
command -v valgrind >/dev/null || { echo "needs valgrind (apt-get install valgrind)" >&2; exit 1; }
[ -x "$BIN" ] || { echo "$BIN: build first (ninja -C $BUILD)" >&2; exit 1; }
OUT=$(mktemp -d /tmp/ewyk-net-instr.XXXXXX)
trap 'rm -rf "$OUT"' EXIT

for fam in 4 6; do
	TH_FAMILY=$fam valgrind --tool=callgrind --callgrind-out-file="$OUT/ip$fam.out" \
		--collect-atstart=no --toggle-collect=net_rx --toggle-collect=tcp_write \
		--toggle-collect=tcp_output --toggle-collect=net_flush \
		"$BIN" "$N" >/dev/null 2>"$OUT/ip$fam.log" ||
		{ cat "$OUT/ip$fam.log" >&2; exit 1; }
	callgrind_annotate --inclusive=no "$OUT/ip$fam.out" 2>/dev/null >"$OUT/ip$fam.txt"
done
/usr/bin/python3 - "$OUT" "$N" <<'PY'
import re, sys
out, n = sys.argv[1], int(sys.argv[2])
def read(fam):
    total, funcs = 0, {}
    for line in open(f"{out}/ip{fam}.txt"):
        m = re.match(r"\s*([\d,]+)\s+(?:\(\s*[\d.]+%\)\s+)?PROGRAM TOTALS", line)
        if m:
            total = int(m.group(1).replace(",", ""))
            continue
        m = re.match(r"\s*([\d,]+)\s+(?:\(\s*[\d.]+%\)\s+)?\S+?:(\S+)", line)
        if m:
            funcs[m.group(2)] = funcs.get(m.group(2), 0) + int(m.group(1).replace(",", ""))
    return total / n, {k: v / n for k, v in funcs.items()}
t4, f4 = read(4)
t6, f6 = read(6)
print(f"lib/net per request (100-byte request in, 400-byte answer out; {n} requests)")
print(f"  IPv4 {t4:8,.0f} instructions")
print(f"  IPv6 {t6:8,.0f} instructions   IPv6 / IPv4 {t6 / t4:.3f}")
print("  where they differ most (instructions per request, IPv4 -> IPv6):")
diff = sorted(set(f4) | set(f6), key=lambda k: -abs(f6.get(k, 0) - f4.get(k, 0)))
for k in diff[:8]:
    print(f"    {k:<28} {f4.get(k, 0):7,.0f} -> {f6.get(k, 0):7,.0f}")
PY
