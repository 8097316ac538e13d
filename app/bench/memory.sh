#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# ewykd's memory per idle keep-alive connection. ewyk-load opens N
# connections to one ewykd, each answered once, and holds them idle (--hold)
# while SAMPLE requests a second go to them in turn (--sample): the
# sample's answers show the idle connections still serve. Over HTTP/1.1,
# then h2c, each against a fresh ewykd. Figures, not a test.
#
# ewykd (one shard, CPU 1) and ewyk-load (CPU 0) face each other over
# net_memif, ewyk-load the memif client: no kernel TCP, both sides ewyk's
# own. One client address reaches one server address and port from 28,232
# local ports (lib/net's ephemeral range): ewyk-load takes as many
# addresses as N needs (--ip-count).
#
# A process's memory is its VmRSS (/proc/PID/status) plus what DPDK's heap
# has handed out (telemetry /eal/heap_info, Alloc_size: the hugepages the
# process uses, not the -m it reserved). Printed per connection:
#   slot         what a connection slot costs before it is used: two idle
#                ewykd with --max-conns 1024 and N + 2048, the difference
#                per slot;
#   idle conn    what an open, idle connection adds to its slot;
#   all in       the memory of ewykd holding the N idle connections, less a
#                minimal idle ewykd's (1024 slots), per connection: the
#                figure to hold against a budget per connection.
#
# Usage: [HOLD=20] [SAMPLE=100] [PROTOS="h1 h2c"] [H2C_N=...]
#        app/bench/memory.sh [N]
#        (as root, after a build; N default 20000; 1000000 needs about
#        3 GiB of free hugepages; h2c opens H2C_N connections, by default N
#        up to 50000: an HTTP/2 session holds some 17 KB; the figures are
#        read RELEASE_WAIT=3 seconds after the last connection opened)
set -euo pipefail
cd "$(dirname "$0")/../.."
. deploy/ewyk-ns.sh
N=${1:-20000}
H2C_N=${H2C_N:-$((N < 50000 ? N : 50000))}
HOLD=${HOLD:-20}
SAMPLE=${SAMPLE:-100}
PROTOS=${PROTOS:-h1 h2c}
RELEASE_WAIT=${RELEASE_WAIT:-3}
EWYKD=${EWYKD:-./build/app/ewykd}
LOAD=${EWYK_LOAD:-./build/app/ewyk-load}
PORTS_PER_IP=28000
IPS=$(( (N + PORTS_PER_IP - 1) / PORTS_PER_IP ))
if [ "$IPS" -gt 64 ]; then
	echo "$N connections: ewyk-load has 64 addresses of 28,232 ports" >&2
	exit 2
fi
RUN=$(mktemp -d /tmp/ewyk-mem.XXXXXX)
P="ewyk-mem-$$"
SPID=""
CPID=""
HELD=0		# connections open and idle (hold())
cleanup() {
	[ -n "$CPID" ] && kill "$CPID" 2>/dev/null && wait "$CPID" 2>/dev/null
	stop
	rm -rf "$RUN" "/var/run/dpdk/$P" "/var/run/dpdk/${P}l"
}
# stop: ewykd ends; one whose many connections' client is gone (their
# FINs retransmitted to nobody) is not waited for past 10 s.
stop() {
	local i
	[ -n "$SPID" ] || return 0
	kill -TERM "$SPID" 2>/dev/null || true
	for i in $(seq 100); do
		kill -0 "$SPID" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$SPID" 2>/dev/null || true
	wait "$SPID" 2>/dev/null || true
	SPID=""
}
trap cleanup EXIT
mkdir -p "$RUN/www"
printf 'hello\n' >"$RUN/www/index.html"
chmod -R a+rX "$RUN"

tel() {	# PREFIX COMMAND: one telemetry answer, as JSON
	echo "$2" | /usr/bin/python3 /usr/bin/dpdk-telemetry.py -f "$1" 2>/dev/null |
		/usr/bin/python3 -c 'import json, sys
for line in sys.stdin:
    line = line.strip()
    if line.startswith("{"):
        print(json.dumps(next(iter(json.loads(line).values()))))
        break'
}

# mem PID PREFIX: VmRSS plus DPDK's heap in use, bytes (the telemetry
# socket asked again while it does not answer).
mem() {
	local rss heap="" i
	for i in 1 2 3 4 5; do
		heap=$(tel "$2" "/eal/heap_info,0" | /usr/bin/python3 -c \
			'import json, sys; print(json.load(sys.stdin)["Alloc_size"])' \
			2>/dev/null) && break
		sleep 1
	done
	[ -n "$heap" ] || { echo "no heap figure from $2" >&2; return 1; }
	rss=$(awk '$1 == "VmRSS:" {print $2 * 1024}' "/proc/$1/status")
	echo $((rss + heap))
}

# start MAX_CONNS: ewykd with that many slots, idle.
start() {
	local mb=$(( $1 / 1024 + 512 ))
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

# hold PROTO...: N connections from 198.18.0.10 on, each answered once,
# then held HOLD seconds with SAMPLE requests a second among them. Returns
# once they are all open and idle ("holding"); the client goes on.
hold() {
	local n=$1 mb=$(( $1 / 1024 + 512 ))
	shift
	: >"$RUN/load.out"
	# shellcheck disable=SC2046
	taskset -c 0 "$LOAD" -l 0 --no-pci --file-prefix "${P}l" --log-level '*:warning' \
		--vdev "net_memif0,role=client,socket=$RUN/memif.sock,socket-abstract=no" \
		$(./deploy/eal-mem.sh "$mb") -- --ip 198.18.0.10/24 --ip-count "$IPS" \
		"$@" -c "$n" -n "$n" --hold "$HOLD" --sample "$SAMPLE" --timeout 60 \
		http://198.18.0.2/index.html >"$RUN/load.out" 2>&1 &
	CPID=$!
	for _ in $(seq 6000); do
		# Holding once every connection was tried: figures per
		# connection held, if no more than one in 1,000 failed to
		# open (a SYN-ACK lost to a full ring under the ramp's burst
		# of SYNs can end an attempt; said below).
		HELD=$(awk '/^holding: / {n = $(NF - 2)} END {print n + 0}' "$RUN/load.out")
		[ "$HELD" -ge $((n - n / 1000)) ] && return 0
		[ "$HELD" -gt 0 ] && break
		kill -0 "$CPID" 2>/dev/null || break
		sleep 0.1
	done
	cat "$RUN/load.out" >&2
	echo "ewyk-load did not get its $n connections (held $HELD)" >&2
	return 1
}

# settle: the client's run ends; prints its sample's line.
settle() {
	wait "$CPID" || true
	CPID=""
	cp "$RUN/load.out" "${KEEP_LOG:-/dev/null}.$1" 2>/dev/null || true
	awk '/^requests:/ {
		printf "  sample: %d requests on the idle connections, %d succeeded, %d failed, %d errored\n",
			$4 - '"$2"', $8 - '"$2"', $10, $12 }' "$RUN/load.out"
}

per() {	# BYTES COUNT
	echo $(( $1 / $2 ))
}

slots_small=1024
start "$slots_small"
small=$(mem "$SPID" "$P")
stop
echo "ewykd (1 shard, CPU 1) and ewyk-load (CPU 0, $IPS addresses) over net_memif;"
echo "$N HTTP/1.1 and $H2C_N h2c connections, each answered once, then held idle"
echo "with $SAMPLE requests a second among them. Memory: VmRSS + DPDK heap in use."
printf '%-44s %14s %14s\n' "" "ewykd" "ewyk-load"
printf '%-44s %11s kB\n' "idle, --max-conns $slots_small" "$((small / 1024))"
for proto in $PROTOS; do
	n=$N
	[ "$proto" = h2c ] && n=$H2C_N
	slots=$((n + 2048))
	start "$slots"
	idle=$(mem "$SPID" "$P")
	printf '%-44s %11s kB\n' "idle, --max-conns $slots ($proto)" "$((idle / 1024))"
	if [ "$proto" = h1 ]; then hold "$n" --h1; else hold "$n"; fi
	sleep "$RELEASE_WAIT"
	held=$(mem "$SPID" "$P")
	printf '%-44s %11s kB %11s kB\n' "$HELD $proto connections open, idle" \
		"$((held / 1024))" "$(($(mem "$CPID" "${P}l") / 1024))"
	[ "$HELD" -lt "$n" ] && echo "  $((n - HELD)) of $n failed to open (the figures are per connection held)"
	tel "$P" /ewyk/http | /usr/bin/python3 -c 'import json, sys
h = json.load(sys.stdin)
print("  HTTP/1.1 connections holding no state:", h.get("h1_released_conns", 0))' || true
	tel "$P" /ewyk/tcp | /usr/bin/python3 -c 'import json, sys
t = json.load(sys.stdin)
print("  TCP rings (3 KiB) made", t["conn_rings_made_count"], "held", t["conn_rings_used_count"])' || true
	settle "$proto" "$n"
	eval "slot_$proto=$(per $((idle - small)) $((slots - slots_small)))"
	eval "conn_$proto=$(per $((held - idle)) "$HELD")"
	eval "all_$proto=$(per $((held - small)) "$HELD")"
	stop
done
echo
printf '%-8s %12s %12s %12s\n' "" "slot" "idle conn" "all in"
for proto in $PROTOS; do
	eval "printf '%-8s %8s B   %8s B   %8s B\n' $proto \$slot_$proto \$conn_$proto \$all_$proto"
done
