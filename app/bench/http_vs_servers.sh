#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# ewykd against nghttpd, h2o and nginx (Debian's), serving the same small
# file, side by side in one run: h2load over h2c (prior knowledge) and
# h2load --h1 with pipelining. ewykd runs on net_tap in one namespace; the
# others, one at a time, in a namespace joined to the client's by a veth
# pair (deploy/ewyk-ns.sh), with the same addresses. Servers are pinned to CPU 1 (one worker each), h2load to
# CPU 0. Prints requests/s and mean latency, and each server's rate as a
# ratio of ewykd's. Figures, not a test.
#
# Usage: app/bench/http_vs_servers.sh [REQUESTS]   (as root, after a build)
set -euo pipefail
cd "$(dirname "$0")/../.."
. deploy/ewyk-ns.sh
N=${1:-50000}
NS_A="ewyk-hbench-a-$$"
NS_B="ewyk-hbench-b-$$"
WWW=$(mktemp -d /tmp/ewyk-hbench-www.XXXXXX)
LOG=$(mktemp /tmp/ewyk-hbench-log.XXXXXX)
PID=""
EWYKD_PID=""

cleanup() {
	ewyk_ns_stop "$NS_A" || true
	stop_server
	veth_ns_del "$NS_B"
	rm -rf "$WWW" "$LOG"
}
stop_server() {
	[ -n "$PID" ] && kill -TERM "$PID" 2>/dev/null && wait "$PID" 2>/dev/null || true
	PID=""
}
trap cleanup EXIT
for tool in nghttpd h2o nginx h2load; do
	command -v "$tool" >/dev/null || { echo "needs $tool" >&2; exit 1; }
done
printf 'hello from a benchmark\n' > "$WWW/small.txt"
chmod 755 "$WWW"
chmod 644 "$WWW/small.txt"

load() {	# load NS h2|h1 -> "req/s mean_latency"
	local args=(-n "$N" -c 8 -m 10)
	[ "$2" = h1 ] && args=(--h1 "${args[@]}")
	ip netns exec "$1" taskset -c 0 h2load "${args[@]}" http://198.18.0.2/small.txt |
		awk -v n="$N" '/^finished in/ {r = $4}
			/^status codes:/ {ok = ($3 == n)}
			/^time for request:/ {m = $4}
			END {print (ok ? r : 0), m}'
}

declare -A RATE LAT

EWYK_CPU=1 ewyk_ns_start "$NS_A" "$LOG" -l 1 -- --www "$WWW" --idle poll
for p in h2 h1; do read -r "RATE[ewykd_$p]" "LAT[ewykd_$p]" < <(load "$NS_A" "$p"); done
ewyk_ns_stop "$NS_A"

# the others: server in NS_B, client in NS_Bc
veth_ns "$NS_B"
CLIENT="${NS_B}c"

ip netns exec "$NS_B" taskset -c 1 nghttpd --no-tls -n 1 -d "$WWW" 80 >/dev/null 2>&1 &
PID=$!
sleep 0.5
read -r "RATE[nghttpd_h2]" "LAT[nghttpd_h2]" < <(load "$CLIENT" h2)
RATE[nghttpd_h1]="n/a"; LAT[nghttpd_h1]="n/a"	# HTTP/2 only
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
for p in h2 h1; do read -r "RATE[h2o_$p]" "LAT[h2o_$p]" < <(load "$CLIENT" "$p"); done
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
read -r "RATE[nginx_h2]" "LAT[nginx_h2]" < <(load "$CLIENT" h2)
# nginx cannot speak HTTP/1.1 and h2c on one port: its HTTP/1.1 is on 81
RATE[nginx_h1]=$(ip netns exec "$CLIENT" taskset -c 0 h2load --h1 -n "$N" -c 8 -m 10 \
	http://198.18.0.2:81/small.txt | awk -v n="$N" '/^finished in/ {r = $4}
	/^status codes:/ {ok = ($3 == n)} /^time for request:/ {m = $4}
	END {print (ok ? r : 0) " " m}')
LAT[nginx_h1]=${RATE[nginx_h1]#* }
RATE[nginx_h1]=${RATE[nginx_h1]%% *}
stop_server

echo "small file, $N requests, 8 connections x 10 streams (h2c) or pipelined (h1)"
printf '%-10s %14s %10s %8s   %14s %10s %8s\n' "" "h2c req/s" "mean" "ratio" \
	"h1 req/s" "mean" "ratio"
for s in ewykd nghttpd h2o nginx; do
	r2=${RATE[${s}_h2]}; r1=${RATE[${s}_h1]}
	q2=$(awk -v a="${RATE[ewykd_h2]}" -v b="$r2" 'BEGIN {print (b + 0 > 0) ? sprintf("%.2f", a / b) : "-"}')
	q1=$(awk -v a="${RATE[ewykd_h1]}" -v b="$r1" 'BEGIN {print (b + 0 > 0) ? sprintf("%.2f", a / b) : "-"}')
	printf '%-10s %14s %10s %8s   %14s %10s %8s\n' "$s" "$r2" "${LAT[${s}_h2]}" "$q2" \
		"$r1" "${LAT[${s}_h1]}" "$q1"
done
echo "ratio: ewykd's rate over the server's"
