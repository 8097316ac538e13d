#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# ewykd's memory: resident memory and hugepages at idle, then with N open
# HTTP/1.1 keep-alive connections, then with N open HTTP/2 (h2c)
# connections, each having answered one request; and what one connection
# costs: the slot every connection has from the start (the difference
# between two idle ewykd with different --max-conns, per slot), and what an
# open HTTP/1.1 or HTTP/2 connection adds to it. Figures, not a test.
#
# ewykd runs on $EWYK_MEDIUM (tap, af_xdp or memif; default af_xdp where
# the kernel supports it) in its own namespace (deploy/ewyk-ns.sh), one
# shard; the clients are Python in its client namespace (python3-h2 for
# HTTP/2). Resident memory is VmRSS; hugepages are HugetlbPages, both from
# /proc/PID/status (DPDK's memory with --in-memory and hugepages is not in
# VmRSS).
#
# Usage: app/bench/memory.sh [CONNECTIONS]     (as root, after a build;
#        default 10000)
set -euo pipefail
cd "$(dirname "$0")/../.."
. deploy/ewyk-ns.sh
N=${1:-10000}
NS="ewyk-mem-$$"
WWW=$(mktemp -d /tmp/ewyk-mem-www.XXXXXX)
LOG=$(mktemp /tmp/ewyk-mem-log.XXXXXX)
CLIENT=""
EWYKD_PID=""
cleanup() {
	[ -n "$CLIENT" ] && kill "$CLIENT" 2>/dev/null && wait "$CLIENT" 2>/dev/null
	ewyk_ns_stop "$NS" || true
	rm -rf "$WWW" "$LOG" "$WWW.client"
}
trap cleanup EXIT
printf 'hello\n' >"$WWW/index.html"
chmod -R a+rX "$WWW"

# status_kb PID FIELD -> kB
status_kb() {
	awk -v f="$2:" '$1 == f {print $2}' "/proc/$1/status"
}

# start MAX_CONNS: ewykd with that many connection slots, idle.
start() {
	ewyk_ns_start "$NS" "$LOG" -l 0-1 -- --www "$WWW" --shards 1 \
		--max-conns "$1" >/dev/null
	sleep 1
}

# hold PROTO: N connections that each asked for / once and stay open,
# until the client is killed. Prints "ready" once they are all answered.
hold() {
	cat >"$WWW.client" <<EOF
import resource, socket, sys, time
resource.setrlimit(resource.RLIMIT_NOFILE, ($N + 1000, $N + 1000))
proto = "$1"
socks = []
if proto == "h2":
    import h2.config, h2.connection
for i in range($N):
    s = socket.create_connection(("198.18.0.2", 80), timeout=10)
    if proto == "h1":
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        got = b""
        while not got.endswith(b"hello\n"):
            got += s.recv(4096)
    else:
        c = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
        c.initiate_connection()
        c.send_headers(1, [(":method", "GET"), (":path", "/"), (":scheme", "http"),
                           (":authority", "x")], end_stream=True)
        s.sendall(c.data_to_send())
        done = False
        while not done:
            for ev in c.receive_data(s.recv(65536)):
                done = done or type(ev).__name__ == "StreamEnded"
            s.sendall(c.data_to_send())
    socks.append(s)
print("ready", flush=True)
time.sleep(600)
EOF
	ip netns exec "$EWYK_CLIENT_NS" /usr/bin/python3 "$WWW.client" >"$WWW.ready" 2>&1 &
	CLIENT=$!
	for _ in $(seq 1200); do
		grep -q ready "$WWW.ready" 2>/dev/null && return 0
		kill -0 "$CLIENT" 2>/dev/null || break
		sleep 0.1
	done
	cat "$WWW.ready" >&2
	echo "the client did not get its $N connections" >&2
	return 1
}

release() {
	kill "$CLIENT" 2>/dev/null && wait "$CLIENT" 2>/dev/null || true
	CLIENT=""
	sleep 2
}

row() {	# row LABEL
	printf '%-34s %10s kB %10s kB\n' "$1" "$(status_kb "$EWYKD_PID" VmRSS)" \
		"$(status_kb "$EWYKD_PID" HugetlbPages)"
}

slots_small=64
slots=$((N + 2048))
start "$slots_small"
rss_small=$(status_kb "$EWYKD_PID" VmRSS)
ewyk_ns_stop "$NS"
start "$slots"
echo "ewykd on $(ewyk_medium_name "$EWYK_MEDIUM"), 1 shard, --max-conns $slots; $N client connections"
printf '%-34s %13s %13s\n' "" "VmRSS" "HugetlbPages"
row "idle"
rss_idle=$(status_kb "$EWYKD_PID" VmRSS)
hold h1
row "$N HTTP/1.1 connections open"
rss_h1=$(status_kb "$EWYKD_PID" VmRSS)
release
hold h2
row "$N HTTP/2 connections open"
rss_h2=$(status_kb "$EWYKD_PID" VmRSS)
release
row "idle again"
echo
echo "per connection slot (TCP + HTTP, held from the start): $(( (rss_idle - rss_small) * 1024 / (slots - slots_small) )) bytes"
echo "added by an open HTTP/1.1 connection: $(( (rss_h1 - rss_idle) * 1024 / N )) bytes"
echo "added by an open HTTP/2 connection: $(( (rss_h2 - rss_idle) * 1024 / N )) bytes"
