#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# ewyk's TCP against the Linux stack, side by side in one run.
#
#   ewykd: its own TCP on $EWYK_MEDIUM (198.18.0.2; tap, af_xdp or memif,
#          default af_xdp where the kernel supports it: deploy/ewyk-ns.sh),
#          the client in its client namespace
#   Linux: nginx (one worker) in a namespace of its own, client in another,
#          joined by a veth pair (deploy/ewyk-ns.sh)
#
# Both serve the same files; the server is pinned to CPU 1, the client to
# CPU 0. Measured: single-connection bulk throughput (curl, 64 MB, best of
# N) and small request-response rate on one connection (h2load --h1, one
# request at a time), then the ratio ewykd / Linux. Figures, not a test.
#
# Usage: [EWYK_MEDIUM=tap|af_xdp|memif] app/bench/tcp_vs_linux.sh [ROUNDS]
#        (as root, after a build)
set -euo pipefail
cd "$(dirname "$0")/../.."
. deploy/ewyk-ns.sh
ROUNDS=${1:-3}
NS_A="ewyk-bench-a-$$"
NS_B="ewyk-bench-b-$$"
WWW=$(mktemp -d /tmp/ewyk-bench-www.XXXXXX)
LOG=$(mktemp /tmp/ewyk-bench-log.XXXXXX)
EWYKD_PID=""

cleanup() {
	ewyk_ns_stop "$NS_A" || true
	[ -f "$WWW/.nginx.pid" ] && kill -TERM "$(cat "$WWW/.nginx.pid")" 2>/dev/null
	sleep 0.2
	veth_ns_del "$NS_B"
	rm -rf "$WWW" "$LOG"
}
trap cleanup EXIT
command -v nginx >/dev/null || { echo "needs nginx (apt-get install nginx-light)" >&2; exit 1; }

head -c $((64 << 20)) /dev/urandom > "$WWW/bulk.bin"
printf 'ok\n' > "$WWW/small.txt"
chmod 755 "$WWW"	# nginx's worker runs as www-data
chmod 644 "$WWW/bulk.bin" "$WWW/small.txt"

EWYK_CPU=1 ewyk_ns_start "$NS_A" "$LOG" -l 1 -- --www "$WWW" --idle poll

veth_ns "$NS_B"
cat > "$WWW/.nginx.conf" <<CONF
worker_processes 1;
worker_cpu_affinity 10;
daemon on;
pid $WWW/.nginx.pid;
error_log /dev/null crit;
events { worker_connections 1024; }
http {
	access_log off;
	sendfile on;
	keepalive_requests 1000000;
	server { listen 198.18.0.2:80; root $WWW; }
}
CONF
ip netns exec "$NS_B" nginx -c "$WWW/.nginx.conf"
sleep 0.5

bulk() {	# bulk NS -> best MB/s of ROUNDS downloads of 64 MB
	local best=0 r
	for _ in $(seq "$ROUNDS"); do
		r=$(ip netns exec "$1" taskset -c 0 curl -sS -m 60 -o /dev/null \
			-w '%{http_code} %{speed_download}' http://198.18.0.2/bulk.bin |
			awk '{print ($1 == 200) ? $2 : 0}')
		best=$(awk -v a="$best" -v b="$r" 'BEGIN {print (b > a) ? b : a}')
	done
	awk -v b="$best" 'BEGIN {printf "%.1f", b / 1048576}'
}

rr() {		# rr NS -> best requests/s on one connection, one at a time
	local best=0 r
	for _ in $(seq "$ROUNDS"); do
		r=$(ip netns exec "$1" taskset -c 0 h2load --h1 -c 1 -m 1 -n 20000 \
			http://198.18.0.2/small.txt | awk '/^finished in/ {rate = $4}
			/^status codes:/ {ok = ($3 == 20000)} END {print ok ? rate : 0}')
		best=$(awk -v a="$best" -v b="$r" 'BEGIN {print (b > a) ? b : a}')
	done
	echo "$best"
}

echo "ewyk TCP vs Linux TCP, $ROUNDS rounds each, best of rounds"
echo "ewykd on $(ewyk_medium_name "$EWYK_MEDIUM"); Linux on veth"
bulk_a=$(bulk "$EWYK_CLIENT_NS"); bulk_b=$(bulk "${NS_B}c")
rr_a=$(rr "$EWYK_CLIENT_NS"); rr_b=$(rr "${NS_B}c")
printf '%-40s %12s %12s %8s\n' "" "ewykd/$EWYK_MEDIUM" "Linux/veth" "ratio"
printf '%-40s %12s %12s %8s\n' "bulk, one connection, 64 MB (MB/s)" "$bulk_a" "$bulk_b" \
	"$(awk -v a="$bulk_a" -v b="$bulk_b" 'BEGIN {printf "%.2f", a / b}')"
printf '%-40s %12s %12s %8s\n' "request-response, one connection (req/s)" "$rr_a" "$rr_b" \
	"$(awk -v a="$rr_a" -v b="$rr_b" 'BEGIN {printf "%.2f", a / b}')"
