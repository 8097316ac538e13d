# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# Sourced by the benchmarks (from the project's root): what a server and a
# core have spent so far, read the same way for every server, and the
# median of a series.

# ewykd_counters PREFIX: "busy_us rx_pkts tx_pkts" of the ewykd with that
# file prefix: its lcores' busy time from /ewyk/lcores (polling that found
# nothing excluded) and its packets from /ewyk/stats; asked again while the
# telemetry socket does not answer.
ewykd_counters() {
	local i
	for i in 1 2 3 4 5; do
		ewykd_counters_once "$1" && return 0
		sleep 0.5
	done
	return 1
}

ewykd_counters_once() {
	echo "/ewyk/lcores
/ewyk/stats" | /usr/bin/python3 /usr/bin/dpdk-telemetry.py -f "$1" 2>/dev/null |
		/usr/bin/python3 -c '
import json, sys
d = {}
for line in sys.stdin:
    line = line.strip()
    if line.startswith("{"):
        d.update(json.loads(line))
lc = d["/ewyk/lcores"]
busy = sum(v.get("producing_us", 0) + v.get("consuming_us", 0)
           for v in lc.values() if isinstance(v, dict))
st = d["/ewyk/stats"]
print(busy, st["rx_pkts"], st["tx_pkts"])'
}

# proc_cpu_us PID: utime+stime of PID and its children, in µs.
proc_cpu_us() {
	local ticks=0 p hz
	hz=$(getconf CLK_TCK)
	for p in "$1" $(ps -o pid= --ppid "$1" 2>/dev/null); do
		[ -r "/proc/$p/stat" ] || continue
		ticks=$((ticks + $(awk '{print $14 + $15}' "/proc/$p/stat")))
	done
	echo $((ticks * 1000000 / hz))
}

# cpu_busy_us CPU: all the time CPU was not idle so far, in µs (softirq
# included: on a veth pair the receiving side's TCP runs in the sender's
# softirq, charged to no process).
cpu_busy_us() {
	awk -v hz="$(getconf CLK_TCK)" -v cpu="cpu$1" '$1 == cpu {
		printf "%.0f\n", ($2 + $3 + $4 + $7 + $8 + $9) * 1000000 / hz }' /proc/stat
}

# cpu_share CPU: "busy_ticks all_ticks" so far (user to steal; guest time
# is already in user and nice).
cpu_share() {
	awk -v cpu="cpu$1" '$1 == cpu { all = 0; for (i = 2; i <= 9; i++) all += $i
		print all - $5 - $6, all }' /proc/stat
}

# median [DECIMALS]: the median of the numbers on stdin, one a line (the
# mean of the middle two for an even count), with DECIMALS places (3).
# Blank lines are no numbers: the benchmarks end each transfer's figure
# with one, and counted as zeros (sorted first) they made the "median" of
# N transfers half the fastest one.
median() {
	sort -n | awk -v d="${1:-3}" 'NF {v[++n] = $1}
	END {m = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
		printf "%.*f", d, m}'
}

# in_group OUT FUNCTION [ARG...]: FUNCTION's output into the file OUT, run
# as a job of its own (a process group) and waited for. bash runs a trap
# only once a foreground command has ended, a command substitution's
# whole pipeline included: waited for this way, a signal reaches the
# script's trap at once, and bench_group_stop (from the clean-up) ends
# what the job still runs (its curl, say).
BENCH_GROUP=""
in_group() {
	local out=$1

	shift
	set -m
	"$@" >"$out" &
	BENCH_GROUP=$!
	set +m
	wait "$BENCH_GROUP"
	BENCH_GROUP=""
}

bench_group_stop() {
	[ -z "${BENCH_GROUP:-}" ] || kill -TERM -- "-$BENCH_GROUP" 2>/dev/null || true
}

# nginx_echo_conf WWW LOCATION MAX_BODY BUFFER ANSWER [SERVER_LINES]:
# WWW/.nginx.conf for the TCP benchmarks' Linux side: one worker on CPU 1,
# sendfile, WWW served on 198.18.0.2:80, and at LOCATION a body read whole
# (up to MAX_BODY, held in a BUFFER-sized buffer) then answered with the
# echo module's ANSWER directive ("echo ok", "echo_request_body");
# SERVER_LINES go into the server block (more listeners, a certificate).
nginx_echo_conf() {
	cat > "$1/.nginx.conf" <<CONF
load_module /usr/lib/nginx/modules/ngx_http_echo_module.so;
worker_processes 1;
worker_cpu_affinity 10;
daemon on;
pid $1/.nginx.pid;
error_log /dev/null crit;
events { worker_connections 64; }
http {
	access_log off;
	sendfile on;
	server {
		listen 198.18.0.2:80;
		${6:-}
		root $1;
		location $2 {
			client_max_body_size $3;
			client_body_buffer_size $4;
			echo_read_request_body;
			$5;
		}
	}
}
CONF
}
