#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# ewykd against nghttpd, h2o and nginx (Debian's), serving the same small
# file, side by side in one run: h2load over h2c (prior knowledge) and
# h2load --h1 with pipelining. ewykd runs on $EWYK_MEDIUM (tap, af_xdp or
# memif; default af_xdp where the kernel supports it: deploy/ewyk-ns.sh);
# the others, one at a time, in a namespace joined to the client's by a veth
# pair (deploy/ewyk-ns.sh), with the same addresses. Servers are pinned to
# CPU 1 (one worker each), h2load to CPU 0. Prints, per server and
# protocol, requests/s and the 50th, 90th and 99th percentiles of the
# per-request latency (from h2load --log-file: microseconds from a
# request's start to the end of its response), and ewykd's figures as
# ratios of the server's: req/s (above 1: ewykd serves more) and p99
# (below 1: ewykd's tail is shorter). Figures, not a test.
#
# Usage: [EWYK_MEDIUM=...] app/bench/http_vs_servers.sh [REQUESTS]
#        (as root, after a build)
set -euo pipefail
cd "$(dirname "$0")/../.."
. deploy/ewyk-ns.sh
N=${1:-50000}
NS_A="ewyk-hbench-a-$$"
NS_B="ewyk-hbench-b-$$"
WWW=""
LOG=""
RUNS=""
PID=""
EWYKD_PID=""

cleanup() {
	ewyk_ns_stop "$NS_A" || true
	stop_server
	veth_ns_del "$NS_B"
	rm -rf "$WWW" "$LOG" "$RUNS"
}
stop_server() {
	[ -n "$PID" ] && kill -TERM "$PID" 2>/dev/null && wait "$PID" 2>/dev/null || true
	PID=""
}
trap cleanup EXIT
WWW=$(mktemp -d /tmp/ewyk-hbench-www.XXXXXX)
LOG=$(mktemp /tmp/ewyk-hbench-log.XXXXXX)
RUNS=$(mktemp -d /tmp/ewyk-hbench-runs.XXXXXX)	# h2load's per-request logs
for tool in nghttpd h2o nginx h2load; do
	command -v "$tool" >/dev/null || { echo "needs $tool" >&2; exit 1; }
done
printf 'hello from a benchmark\n' > "$WWW/small.txt"
chmod 755 "$WWW"
chmod 644 "$WWW/small.txt"

# load NS h2|h1 RUN [PORT] -> "req/s p50 p90 p99" (latencies in µs).
# A run where not every request got a 2xx prints "0 - - -".
load() {
	local log="$RUNS/$3.tsv" out rate
	local args=(-n "$N" -c 8 -m 10 --log-file="$log")
	[ "$2" = h1 ] && args=(--h1 "${args[@]}")
	out=$(ip netns exec "$1" taskset -c 0 h2load "${args[@]}" \
		"http://198.18.0.2:${4:-80}/small.txt") || true
	rate=$(awk -v n="$N" '/^finished in/ {r = $4}
		/^status codes:/ {ok = ($3 == n)}
		END {print (ok ? r : 0)}' <<<"$out")
	if [ "$rate" = 0 ] || [ ! -s "$log" ]; then
		echo "0 - - -"
		return
	fi
	# columns: start (µs since epoch), status (-1: failed), µs to the end
	# of the response; nearest-rank percentiles over the 2xx rows, which
	# must be all N of them
	awk -F '\t' '$2 >= 200 && $2 < 300 {print $3}' "$log" | sort -n |
		awk -v n="$N" -v r="$rate" '{d[NR] = $1}
			function q(p,	k) {
				k = p * NR / 100
				k = (k == int(k)) ? k : int(k) + 1
				return d[k < 1 ? 1 : k]
			}
			END {
				if (NR != n) print 0, "-", "-", "-"
				else print r, q(50), q(90), q(99)
			}'
}

declare -A RATE P50 P90 P99
run() {	# run NS h2|h1 SERVER [PORT]: load, kept under SERVER_h2|h1
	read -r "RATE[$3_$2]" "P50[$3_$2]" "P90[$3_$2]" "P99[$3_$2]" \
		< <(load "$1" "$2" "$3_$2" "${4:-80}")
}

EWYK_CPU=1 ewyk_ns_start "$NS_A" "$LOG" -l 1 -- --www "$WWW" --idle poll
for p in h2 h1; do run "$EWYK_CLIENT_NS" "$p" ewykd; done
ewyk_ns_stop "$NS_A"

# the others: server in NS_B, client in NS_Bc
veth_ns "$NS_B"
CLIENT="${NS_B}c"

ip netns exec "$NS_B" taskset -c 1 nghttpd --no-tls -n 1 -d "$WWW" 80 >/dev/null 2>&1 &
PID=$!
sleep 0.5
run "$CLIENT" h2 nghttpd
RATE[nghttpd_h1]="n/a"; P50[nghttpd_h1]="n/a"; P90[nghttpd_h1]="n/a"
P99[nghttpd_h1]="n/a"	# HTTP/2 only
stop_server

cat > "$WWW/.h2o.conf" <<CONF
num-threads: 1
listen:
  host: 198.18.0.2
  port: 80
error-log: /dev/null
hosts:
  default:
    paths:
      /:
        file.dir: $WWW
CONF
ip netns exec "$NS_B" taskset -c 1 h2o -c "$WWW/.h2o.conf" >/dev/null 2>&1 &
PID=$!
sleep 0.8
for p in h2 h1; do run "$CLIENT" "$p" h2o; done
stop_server

cat > "$WWW/.nginx.conf" <<CONF
worker_processes 1;
worker_cpu_affinity 10;
daemon off;
pid $WWW/.nginx.pid;
error_log /dev/null crit;
events { worker_connections 1024; }
http {
	access_log off;
	keepalive_requests 1000000;
	server { listen 198.18.0.2:80 http2; root $WWW; }
	server { listen 198.18.0.2:81; root $WWW; }
}
CONF
ip netns exec "$NS_B" nginx -c "$WWW/.nginx.conf" &
PID=$!
sleep 0.5
run "$CLIENT" h2 nginx
# nginx cannot speak HTTP/1.1 and h2c on one port: its HTTP/1.1 is on 81
run "$CLIENT" h1 nginx 81
stop_server

ratio() {	# ratio A B -> A/B to two places, or "-" unless both are > 0
	awk -v a="$1" -v b="$2" \
		'BEGIN {print (a + 0 > 0 && b + 0 > 0) ? sprintf("%.2f", a / b) : "-"}'
}
echo "small file, $N requests, 8 connections x 10 streams (h2c) or pipelined (h1)"
echo "ewykd on $(ewyk_medium_name "$EWYK_MEDIUM"); the others on veth"
row='%-8s %-7s %-5s %12s %10s %10s %10s %10s %10s\n'
# shellcheck disable=SC2059
printf "$row" server medium proto "req/s" "p50 us" "p90 us" "p99 us" "req/s x" "p99 x"
for p in h2 h1; do
	for s in ewykd nghttpd h2o nginx; do
		k=${s}_$p
		# shellcheck disable=SC2059
		printf "$row" "$s" "$([ "$s" = ewykd ] && echo "$EWYK_MEDIUM" || echo veth)" \
			"$([ "$p" = h2 ] && echo h2c || echo h1)" \
			"${RATE[$k]}" "${P50[$k]}" "${P90[$k]}" "${P99[$k]}" \
			"$(ratio "${RATE[ewykd_$p]}" "${RATE[$k]}")" \
			"$(ratio "${P99[ewykd_$p]}" "${P99[$k]}")"
	done
done
echo "us: microseconds from a request's start to the end of its response (h2load --log-file)"
echo "req/s x: ewykd's req/s over the server's (above 1: ewykd serves more)"
echo "p99 x: ewykd's p99 over the server's (below 1: ewykd's tail is shorter)"
echo "req/s 0, percentiles and ratios -: not every request of the run got a 2xx; n/a: not run"
