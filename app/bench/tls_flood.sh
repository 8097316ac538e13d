#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Requests on established TLS connections while a flood of new TLS
# connections arrives: does a handshake flood hold them back? ewykd serves
# a small file over TLS 1.3 (ECDSA P-256, X25519, AES-128-GCM) on
# $EWYK_MEDIUM (default af_xdp where the kernel can: deploy/ewyk-ns.sh).
#
# The established load: h2load over 4 TLS connections opened before,
# HTTP/2, one request at a time each, RATE requests/s per connection
# (open loop, --rps), for SECONDS; each request's latency from h2load's
# --log-file. The flood, from the second second to the end: h2load --h1
# with FLOOD_C clients of one request each, again and again: every
# request a new connection, so a full handshake. Figures: handshakes per
# second ewykd completed (/ewyk/tls), and p50, p99, p99.9 and max of the
# established load's latency during the flood; the same without the flood
# for reference.
#
# Three ways to run the handshakes:
#   inline   --tls-offload off: each handshake runs on the shard's lcore
#            as it comes (the baseline: polling stops meanwhile)
#   pool     --tls-offload on, no reserved lcore: a full handshake's first
#            step is a BLOCKING task of the strategy, queued to the
#            blocking pool (PEC), whose threads run on the CPUs that no
#            worker lcore has; the shard's lcore polls on
#   auto     --tls-offload auto (the default), no reserved lcore: pool
#            while the pool's CPUs have half a CPU free of other
#            processes' work (the flood's client counts), else inline
#   epc      --tls-offload on with a reserved lcore: EPC while the reserved
#            lcore is idle (it takes the polling over), else PEC
# ewykd's main and shard lcores are on CPU 1 (the reserved one, epc, on
# CPU 0); the flood's client and the pool threads on CPU 0; the
# established load's client on CPU EST_CPU (default 1, beside the shard: the
# flood's client and the pool threads keep CPU 0 busy), ewykd with --idle
# IDLE (default sleep, so that the shard leaves that client its CPU between
# bursts).
#
# Usage: [EWYK_MEDIUM=...] [ROUNDS=3] [RATE=200] [FLOOD_C=200]
#        [MODES="inline pool auto epc"] [EST_CPU=1] [IDLE=sleep|poll]
#        app/bench/tls_flood.sh [SECONDS]
#        (as root, after a build; SECONDS per run, default 10)
set -euo pipefail
cd "$(dirname "$0")/../.."
. deploy/ewyk-ns.sh
SECS=${1:-10}
ROUNDS=${ROUNDS:-3}
RATE=${RATE:-200}
FLOOD_C=${FLOOD_C:-200}
EST_CPU=${EST_CPU:-1}
IDLE=${IDLE:-sleep}
MODES=${MODES:-inline pool auto epc}
: "${EWYK_MEDIUM:=$(ewyk_medium_default)}"
export EWYK_MEDIUM
NS="ewyk-tflood-$$"
TMP=$(mktemp -d /tmp/ewyk-tflood.XXXXXX)
LOG=$TMP/ewykd.log
FLOOD_PID=""

cleanup() {
	[ -n "$FLOOD_PID" ] && kill "$FLOOD_PID" 2>/dev/null && wait "$FLOOD_PID" 2>/dev/null
	ewyk_ns_stop "$NS" || true
	rm -rf "$TMP"
}
trap cleanup EXIT
for tool in h2load openssl; do
	command -v "$tool" >/dev/null || { echo "needs $tool" >&2; exit 1; }
done
mkdir -p "$TMP/www"
printf 'hello from a benchmark\n' >"$TMP/www/small.txt"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	-subj /CN=ewyk.test -addext subjectAltName=DNS:ewyk.test,IP:198.18.0.2 \
	-keyout "$TMP/key.pem" -out "$TMP/cert.pem" -days 2 2>/dev/null
chmod 600 "$TMP/key.pem"
URL=https://198.18.0.2/small.txt

handshakes() {
	echo /ewyk/tls | /usr/bin/python3 /usr/bin/dpdk-telemetry.py -f "$NS" 2>/dev/null |
		/usr/bin/python3 -c '
import json, sys
for line in sys.stdin:
    if line.strip().startswith("{"):
        t = json.loads(line)["/ewyk/tls"]
        print(t["handshakes_full_count"], t["hs_steps_offloaded_count"])'
}

# flood_loop END_EPOCH: new connections, one request each, until END.
flood_loop() {
	while [ "$(date +%s)" -lt "$1" ]; do
		ip netns exec "$EWYK_CLIENT_NS" taskset -c 0 h2load --h1 \
			-c "$FLOOD_C" -n "$FLOOD_C" "$URL" >/dev/null 2>&1 || true
	done
}

# run MODE ROUND FLOOD(0|1): one run; a line to $TMP/results.
run() {
	local mode=$1 round=$2 flood=$3 lcores=(--lcores 0@1,1@1) extra=()
	case "$mode" in
	inline) extra=(--tls-offload off) ;;
	pool) extra=(--tls-offload on) ;;
	auto) extra=(--tls-offload auto) ;;
	epc) lcores=(--lcores 0@1,1@1,2@0) extra=(--reserved 1 --tls-offload on) ;;
	esac
	ewyk_ns_start "$NS" "$LOG" "${lcores[@]}" -- --www "$TMP/www" \
		--tls-cert "$TMP/cert.pem" --tls-key "$TMP/key.pem" "${extra[@]}" \
		--idle "$IDLE" >/dev/null
	local t0 h0 h1 start end
	start=$(date +%s%6N)
	ip netns exec "$EWYK_CLIENT_NS" taskset -c "$EST_CPU" h2load -c 4 -m 1 --rps "$RATE" \
		-D "$SECS" --log-file="$TMP/est.tsv" "$URL" >"$TMP/est.out" 2>&1 &
	local est=$!
	sleep 1
	read -r h0 _ < <(handshakes)
	t0=$(date +%s%6N)
	if [ "$flood" = 1 ]; then
		flood_loop $(($(date +%s) + SECS - 2)) &
		FLOOD_PID=$!
	fi
	sleep $((SECS - 2))
	read -r h1 _ < <(handshakes)
	end=$(date +%s%6N)
	if [ -n "$FLOOD_PID" ]; then
		wait "$FLOOD_PID" || true
		FLOOD_PID=""
	fi
	wait "$est" || true
	ewyk_ns_stop "$NS"
	grep -q "0 failed, 0 errored" "$TMP/est.out" ||
		{ echo "$mode: the established load failed:" >&2; cat "$TMP/est.out" >&2; }
	# latencies of the established requests that started in the window
	awk -F '\t' -v a="$t0" -v b="$end" '$1 >= a && $1 <= b && $2 == 200 {print $3}' \
		"$TMP/est.tsv" | sort -n | awk -v m="$mode" -v r="$round" -v f="$flood" \
		-v hs="$(( (h1 - h0) * 1000000 / (end - t0) ))" '{d[NR] = $1}
		function q(p,	k) { k = p * NR / 100; k = (k == int(k)) ? k : int(k) + 1
			return d[k < 1 ? 1 : k] }
		END { printf "%s %s %s %s %d %d %d %d %d\n", m, r, f, hs, NR,
			q(50), q(99), q(99.9), d[NR] }' >>"$TMP/results"
}

: >"$TMP/results"
for round in $(seq "$ROUNDS"); do
	for mode in $MODES; do
		run "$mode" "$round" 0
		run "$mode" "$round" 1
	done
done

echo "established TLS load: 4 connections, HTTP/2, ${RATE} req/s each; flood: h2load" \
	"--h1 -c $FLOOD_C, a new TLS connection per request; ${SECS} s runs, median of" \
	"$ROUNDS rounds"
echo "ewykd on $(ewyk_medium_name "$EWYK_MEDIUM"), shard lcore on CPU 1, --idle $IDLE;" \
	"the flood's client on CPU 0, the established load's on CPU $EST_CPU;" \
	"load average $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 - "$TMP/results" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
runs = {}
for mode, rnd, flood, hs, n, p50, p99, p999, mx in rows:
    runs.setdefault((mode, flood), []).append([int(x) for x in (hs, n, p50, p99, p999, mx)])
fmt = "{:<8} {:<7} {:>11} {:>9} {:>9} {:>9} {:>10} {:>9}  {}"
print(fmt.format("mode", "flood", "hs/s", "requests", "p50 us", "p99 us", "p99.9 us",
                 "max us", "p99 of each round"))
for (mode, flood), xs in runs.items():
    med = [statistics.median(c) for c in zip(*xs)]
    print(fmt.format(mode, "yes" if flood == "1" else "no", f"{med[0]:,.0f}",
                     f"{med[1]:,.0f}", f"{med[2]:,.0f}", f"{med[3]:,.0f}",
                     f"{med[4]:,.0f}", f"{med[5]:,.0f}", " ".join(str(x[3]) for x in xs)))
PY
