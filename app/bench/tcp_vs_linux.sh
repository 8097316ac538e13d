#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# ewyk's TCP against the Linux stack, side by side in one run.
#
#   ewykd: its own TCP on net_tap in namespace A (198.18.0.2, client .1)
#   Linux: nginx (one worker) on a veth pair in namespace B, same addresses
#
# Both serve the same files; the server is pinned to CPU 1, the client to
# CPU 0. Measured: single-connection bulk throughput (curl, 64 MB, best of
# N) and small request-response rate on one connection (h2load --h1, one
# request at a time), then the ratio ewykd / Linux. Figures, not a test.
#
# Usage: app/bench/tcp_vs_linux.sh [ROUNDS]      (as root, after a build)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-3}
NS_A="ewyk-bench-a-$$"
NS_B="ewyk-bench-b-$$"
WWW=$(mktemp -d /tmp/ewyk-bench-www.XXXXXX)
LOG=$(mktemp /tmp/ewyk-bench-log.XXXXXX)
NGINX_CONF=$(mktemp /tmp/ewyk-bench-nginx.XXXXXX)
EWYKD_PID=""

cleanup() {
	[ -n "$EWYKD_PID" ] && kill -TERM "$EWYKD_PID" 2>/dev/null && wait "$EWYKD_PID" 2>/dev/null
	if [ -f "$WWW/.nginx.pid" ]; then
		kill -TERM "$(cat "$WWW/.nginx.pid")" 2>/dev/null || true
		sleep 0.2
	fi
	ip netns del "$NS_A" 2>/dev/null || true
	ip netns del "$NS_B" 2>/dev/null || true
	rm -rf "$WWW" "$LOG" "$NGINX_CONF" "/var/run/dpdk/$NS_A"
}
trap cleanup EXIT
[ -n "${BENCH_DEBUG:-}" ] && set -x
command -v nginx >/dev/null || { echo "needs nginx (apt-get install nginx-light)" >&2; exit 1; }

head -c $((64 << 20)) /dev/urandom > "$WWW/bulk.bin"
printf 'ok\n' > "$WWW/small.txt"
chmod 755 "$WWW"	# nginx's worker runs as www-data
chmod 644 "$WWW/bulk.bin" "$WWW/small.txt"

# A: ewykd on net_tap
ip netns add "$NS_A"
# shellcheck disable=SC2046
ip netns exec "$NS_A" taskset -c 1 ./build/app/ewykd -l 1 --no-pci \
	--vdev net_tap0,iface=ewyk0 --file-prefix "$NS_A" --log-level '*:warning' \
	$(./deploy/eal-mem.sh 512) -- --www "$WWW" --idle poll >"$LOG" 2>&1 &
EWYKD_PID=$!
for _ in $(seq 200); do grep -q serving "$LOG" && break; sleep 0.1; done
ip -n "$NS_A" addr add 198.18.0.1/24 dev ewyk0
ip -n "$NS_A" link set ewyk0 up
ip -n "$NS_A" link set lo up

# B: nginx on veth
ip netns add "$NS_B"
ip -n "$NS_B" link add veth0 type veth peer name veth1
ip -n "$NS_B" link set lo up
ip -n "$NS_B" link set veth0 up
ip -n "$NS_B" link set veth1 up
ip -n "$NS_B" addr add 198.18.0.1/32 dev veth0
ip -n "$NS_B" addr add 198.18.0.2/32 dev veth1
ip -n "$NS_B" route add 198.18.0.2/32 dev veth0 src 198.18.0.1 2>/dev/null || true
cat > "$NGINX_CONF" <<CONF
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
ip netns exec "$NS_B" nginx -c "$NGINX_CONF"
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
bulk_a=$(bulk "$NS_A"); bulk_b=$(bulk "$NS_B")
rr_a=$(rr "$NS_A"); rr_b=$(rr "$NS_B")
printf '%-40s %12s %12s %8s\n' "" "ewykd" "Linux" "ratio"
printf '%-40s %12s %12s %8s\n' "bulk, one connection, 64 MB (MB/s)" "$bulk_a" "$bulk_b" \
	"$(awk -v a="$bulk_a" -v b="$bulk_b" 'BEGIN {printf "%.2f", a / b}')"
printf '%-40s %12s %12s %8s\n' "request-response, one connection (req/s)" "$rr_a" "$rr_b" \
	"$(awk -v a="$rr_a" -v b="$rr_b" 'BEGIN {printf "%.2f", a / b}')"
