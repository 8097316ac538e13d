#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# ewykd's memory per connection: what a connection slot costs from the
# start (two idle ewykd with different --max-conns, the difference per
# slot), and what N open, idle keep-alive connections add to it, over
# HTTP/1.1 and over h2c, each having answered one request, while a sample
# of them keeps asking (ewyk-load --hold --sample): the sample's answers
# show the idle connections still serve. Figures, not a test.
#
# ewykd (one shard, CPU 1) and ewyk-load (CPU 0) face each other over
# net_memif, ewyk-load the memif client: no kernel TCP, so its connections
# are ewyk's own on both sides. Memory is VmRSS plus HugetlbPages from
# /proc/PID/status (DPDK's memory with --in-memory and hugepages is not in
# VmRSS): both sides' figures are printed.
#
# One client address reaches one server address and port from at most
# 28,232 local ports (lib/net's ephemeral range), so N is at most that.
#
# Usage: [HOLD=10] [SAMPLE=100] app/bench/memory.sh [CONNECTIONS]
#        (as root, after a build; default 20000)
set -euo pipefail
cd "$(dirname "$0")/../.."
. deploy/ewyk-ns.sh
N=${1:-20000}
HOLD=${HOLD:-10}
SAMPLE=${SAMPLE:-100}
EWYKD=${EWYKD:-./build/app/ewykd}
LOAD=${EWYK_LOAD:-./build/app/ewyk-load}
if [ "$N" -gt 28232 ]; then
	echo "$N connections: one client address has 28232 local ports" >&2
	exit 2
fi
RUN=$(mktemp -d /tmp/ewyk-mem.XXXXXX)
P="ewyk-mem-$$"
SPID=""
CPID=""
cleanup() {
	[ -n "$CPID" ] && kill "$CPID" 2>/dev/null && wait "$CPID" 2>/dev/null
	stop
	rm -rf "$RUN" "/var/run/dpdk/$P" "/var/run/dpdk/${P}l"
}
stop() {
	[ -n "$SPID" ] && kill -TERM "$SPID" 2>/dev/null && wait "$SPID" 2>/dev/null || true
	SPID=""
}
trap cleanup EXIT
mkdir -p "$RUN/www"
printf 'hello\n' >"$RUN/www/index.html"
chmod -R a+rX "$RUN"

kb() {	# PID: VmRSS + HugetlbPages, kB
	awk '$1 == "VmRSS:" || $1 == "HugetlbPages:" {s += $2} END {print s}' \
		"/proc/$1/status"
}

# start MAX_CONNS: ewykd with that many slots, idle; the same hugepage
# memory whatever the slots (HugetlbPages counts what the EAL reserved).
start() {
	local mb=$(( (N + 2048) * 40 / 1024 + 512 ))
	# shellcheck disable=SC2046
	taskset -c 1 "$EWYKD" -l 1 --no-pci --file-prefix "$P" --log-level '*:warning' \
		--vdev "net_memif0,role=server,socket=$RUN/memif.sock,socket-abstract=no" \
		$(./deploy/eal-mem.sh "$mb") -- --ip 198.18.0.2/24 --www "$RUN/www" \
		--shards 1 --max-conns "$1" --keepalive-timeout-ms 600000 \
		>"$RUN/ewykd.log" 2>&1 &
	SPID=$!
	ewyk_wait_for serving "$RUN/ewykd.log" "$SPID" ewykd
	sleep 1
}

# hold PROTO...: N connections, each answers one request, then held
# HOLD seconds with SAMPLE requests a second among them. Returns once
# they are all open and idle ("holding"); the client goes on.
hold() {
	local mb=$(( N * 24 / 1024 + 512 ))
	: >"$RUN/load.out"
	# shellcheck disable=SC2046
	taskset -c 0 "$LOAD" -l 0 --no-pci --file-prefix "${P}l" --log-level '*:warning' \
		--vdev "net_memif0,role=client,socket=$RUN/memif.sock,socket-abstract=no" \
		$(./deploy/eal-mem.sh "$mb") -- --ip 198.18.0.1/24 "$@" -c "$N" -n "$N" \
		--hold "$HOLD" --sample "$SAMPLE" --timeout 30 \
		http://198.18.0.2/index.html >"$RUN/load.out" 2>&1 &
	CPID=$!
	for _ in $(seq 1200); do
		grep -q "^holding: .* $N connections open" "$RUN/load.out" && return 0
		kill -0 "$CPID" 2>/dev/null || break
		sleep 0.1
	done
	cat "$RUN/load.out" >&2
	echo "ewyk-load did not get its $N connections" >&2
	return 1
}

# settle: the client's run ends; prints its sample's line.
settle() {
	wait "$CPID" || true
	CPID=""
	cp "$RUN/load.out" "${KEEP_LOG:-/dev/null}.$1" 2>/dev/null || true
	awk '/^requests:/ {
		printf "  sample: %d requests on the idle connections, %d succeeded, %d failed, %d errored\n",
			$4 - '"$N"', $8 - '"$N"', $10, $12 }' "$RUN/load.out"
	sleep 2
}

slots_small=1024
slots=$((N + 2048))
start "$slots_small"
small=$(kb "$SPID")
stop
start "$slots"
idle=$(kb "$SPID")
echo "ewykd (1 shard, --max-conns $slots) and ewyk-load over net_memif; $N connections;"
echo "memory: VmRSS + HugetlbPages"
printf '%-40s %12s %12s\n' "" "ewykd" "ewyk-load"
printf '%-40s %9s kB %12s\n' "idle" "$idle" "-"
hold --h1
h1=$(kb "$SPID")
printf '%-40s %9s kB %9s kB\n' "$N HTTP/1.1 connections open, idle" "$h1" "$(kb "$CPID")"
settle h1
printf '%-40s %9s kB\n' "after them" "$(kb "$SPID")"
# A fresh ewykd for h2c: memory once touched stays resident.
stop
start "$slots"
idle2=$(kb "$SPID")
hold
h2=$(kb "$SPID")
printf '%-40s %9s kB %9s kB\n' "$N h2c connections open, idle" "$h2" "$(kb "$CPID")"
settle h2c
printf '%-40s %9s kB\n' "after them" "$(kb "$SPID")"
echo
echo "slots never used (--max-conns $slots_small against $slots): $(( (idle - small) * 1024 / (slots - slots_small) )) bytes each"
echo "an open idle HTTP/1.1 connection: $(( (h1 - idle) * 1024 / N )) bytes"
echo "an open idle h2c connection: $(( (h2 - idle2) * 1024 / N )) bytes"
