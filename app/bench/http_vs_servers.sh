#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# ewykd against nghttpd, h2o and nginx (Debian's), serving the same small
# file, side by side: the servers take turns, ROUNDS times, and each figure
# is the median of the rounds. Three loads: h2c (h2load -c16 -m100), HTTP/1.1
# keep-alive (--h1 -c32) and HTTP/1.1 pipelined 16 deep (--h1 -c32 -m16).
#
# ewykd runs on $EWYK_MEDIUM (tap, af_xdp or memif; default af_xdp where the
# kernel supports it: deploy/ewyk-ns.sh), one lcore; the others, one worker
# each, in a namespace joined to the client's by a veth pair. Every server
# is pinned to CPU 1, h2load to CPU 0.
#
# Per server and load: requests/s; p50 and p99 of the per-request latency
# (h2load --log-file: µs from a request's start to the end of its
# response); server CPU µs per request (ewykd: its lcores' busy time from
# /ewyk/lcores, polling that found nothing excluded; the others:
# utime+stime of their processes) and the server core's (ewykd: the same;
# the others: all the time CPU 1 was not idle, from /proc/stat, which adds
# the softirq work the kernel does on the server's core and charges to no
# process: on a veth pair the receiving side's TCP runs in the sender's
# softirq, as it does in ewykd's own sends); packets in and out per request (ewykd:
# /ewyk/stats; the others: the veth's counters); how busy h2load's core
# was over the run (near 100 %: the client, not the server, set the
# rate, and the rate ratio says little); and ewykd's figures as
# ratios of each server's. Then where ewykd's time goes under h2c: a perf
# profile (software clock) by library and the top symbols. Figures, not a
# test; the machine's noise shows in the spread of the rounds.
#
# h2load's --log-file (for the percentiles) costs the client about a third
# of its core: with it, h2load's core is the limit near 450 k req/s on h2c
# and pipelined loads. LATENCY=0 leaves it out (p50 and p99 then "-"), so
# that the rates show the servers rather than the client's logging.
#
# EWYK_MTU (default 1500): the MTU of both veth pairs and ewykd's --mtu
# (net_af_xdp: 3438 at most).
#
# EWYK_FAMILY: the families ewykd is measured in: 4 (the default), 6, or
# "4 6": then ewykd has both addresses (2001:2::2/64 beside 198.18.0.2) and
# each round measures it over IPv4 and IPv6 in turn (the order alternating
# with the rounds), same medium, same load; its IPv6 rows ("ewykd6") have
# their ratios to ewykd over IPv4. SERVERS (default "ewykd nghttpd h2o
# nginx") chooses who runs: SERVERS=ewykd EWYK_FAMILY="4 6" LOADS="h1 h2c"
# compares the families alone.
#
# Usage: [EWYK_MEDIUM=...] [ROUNDS=3] [LATENCY=0] [EWYK_MTU=...]
#        [EWYK_FAMILY="4 6"] [SERVERS=...] [LOADS=...]
#        app/bench/http_vs_servers.sh [REQUESTS]
#        (as root, after a build; REQUESTS per run, default 100000)
set -euo pipefail
cd "$(dirname "$0")/../.."
. deploy/ewyk-ns.sh
N=${1:-100000}
ROUNDS=${ROUNDS:-3}
: "${EWYK_MEDIUM:=$(ewyk_medium_default)}"
export EWYK_MEDIUM
if [ "${EWYK_MTU:-1500}" != 1500 ] && [ "$EWYK_MEDIUM" != af_xdp ]; then
	echo "EWYK_MTU=$EWYK_MTU: only on af_xdp (the veth pair's MTU); $EWYK_MEDIUM keeps 1500" >&2
	exit 2
fi
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
for tool in nghttpd h2o nginx h2load perf; do
	command -v "$tool" >/dev/null || {
		echo "needs $tool (apt-get install nghttp2-server h2o nginx-light" \
			"nghttp2-client linux-perf)" >&2
		exit 1
	}
done
WWW=$(mktemp -d /tmp/ewyk-hbench-www.XXXXXX)
LOG=$(mktemp /tmp/ewyk-hbench-log.XXXXXX)
RUNS=$(mktemp -d /tmp/ewyk-hbench-runs.XXXXXX)
printf 'hello from a benchmark\n' > "$WWW/small.txt"
chmod 755 "$WWW"
chmod 644 "$WWW/small.txt"

read -ra LOADS <<<"${LOADS:-h2c h1 h1p}"
read -ra FAMILIES <<<"${EWYK_FAMILY:-4}"
SERVERS=" ${SERVERS:-ewykd nghttpd h2o nginx} "
runs() { [[ "$SERVERS" == *" $1 "* ]]; }
declare -A LOAD_ARGS=([h2c]="-c 16 -m 100" [h1]="--h1 -c 32" [h1p]="--h1 -c 32 -m 16")
declare -A LOAD_NAME=([h2c]="h2c -c16 -m100" [h1]="HTTP/1.1 -c32"
	[h1p]="HTTP/1.1 -c32 pipelined 16")

# h2load NS LOAD PORT LOGFILE [HOST] -> "req/s p50 p99", or "0 - -" unless
# every request got a 2xx. HOST: 198.18.0.2 unless given ([2001:2::2]).
h2load_run() {
	local out rate log=()
	[ "${LATENCY:-1}" = 0 ] || log=(--log-file="$4")
	# shellcheck disable=SC2086
	out=$(ip netns exec "$1" taskset -c 0 h2load -n "$N" ${LOAD_ARGS[$2]} \
		"${log[@]}" "http://${5:-198.18.0.2}:$3/small.txt" 2>&1) || true
	rate=$(awk -v n="$N" '/^finished in/ {r = $4}
		/^status codes:/ {ok = ($3 == n)}
		END {print (ok ? r : 0)}' <<<"$out")
	if [ "$rate" != 0 ] && [ "${LATENCY:-1}" = 0 ]; then
		echo "$rate - -"
		return
	fi
	if [ "$rate" = 0 ] || [ ! -s "$4" ]; then
		echo "0 - -"
		return
	fi
	# nearest-rank percentiles over the 2xx rows (all N of them)
	awk -F '\t' '$2 >= 200 && $2 < 300 {print $3}' "$4" | sort -n |
		awk -v n="$N" -v r="$rate" '{d[NR] = $1}
			function q(p,	k) {
				k = p * NR / 100
				k = (k == int(k)) ? k : int(k) + 1
				return d[k < 1 ? 1 : k]
			}
			END { if (NR != n) print 0, "-", "-"; else print r, q(50), q(99) }'
}

# What a server has spent and sent so far: "cpu_us pkts_in pkts_out core_us".
ewykd_counters() {
	echo "/ewyk/lcores
/ewyk/stats" | /usr/bin/python3 /usr/bin/dpdk-telemetry.py -f "$NS_A" 2>/dev/null |
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
print(busy, st["rx_pkts"], st["tx_pkts"], busy)'
}
kernel_counters() {	# PID: the server and its children
	local ticks=0 p hz
	hz=$(getconf CLK_TCK)
	for p in "$PID" $(ps -o pid= --ppid "$PID" 2>/dev/null); do
		[ -r "/proc/$p/stat" ] || continue
		ticks=$((ticks + $(awk '{print $14 + $15}' "/proc/$p/stat")))
	done
	echo "$((ticks * 1000000 / hz))" \
		"$(ip netns exec "$NS_B" cat /sys/class/net/veth1/statistics/rx_packets)" \
		"$(ip netns exec "$NS_B" cat /sys/class/net/veth1/statistics/tx_packets)" \
		"$(awk -v hz="$hz" '$1 == "cpu1" {
			printf "%.0f", ($2 + $3 + $4 + $7 + $8 + $9) * 1000000 / hz }' /proc/stat)"
}

# The client's core (CPU 0) so far: "busy_ticks all_ticks". A client core
# near 100 % busy means the rate is the client's limit, not the server's.
client_core() {	# user to steal: guest time is already in user and nice
	awk '$1 == "cpu0" { all = 0; for (i = 2; i <= 9; i++) all += $i
		print all - $5 - $6, all }' /proc/stat
}

# measure SERVER LOAD ROUND NS PORT COUNTERS_FN [HOST]: one run, kept in
# $RUNS
measure() {
	local c0 c1 fig u0 u1
	c0=$($6)
	u0=$(client_core)
	fig=$(h2load_run "$4" "$2" "$5" "$RUNS/$1.$2.$3.tsv" "${7:-}")
	u1=$(client_core)
	c1=$($6)
	# shellcheck disable=SC2086
	set -- "$1" "$2" "$3" $fig $c0 $c1 $u0 $u1
	awk -v n="$N" -v s="$1" -v l="$2" -v r="$3" -v rate="$4" -v p50="$5" \
		-v p99="$6" -v c0="$7" -v i0="$8" -v o0="$9" -v k0="${10}" \
		-v c1="${11}" -v i1="${12}" -v o1="${13}" -v k1="${14}" \
		-v ub0="${15}" -v ua0="${16}" -v ub1="${17}" -v ua1="${18}" 'BEGIN {
		ok = rate + 0 > 0
		printf "%s %s %s %s %s %s %s %s %s %s %s\n", s, l, r, rate, p50, p99,
			ok ? sprintf("%.2f", (c1 - c0) / n) : "-",
			ok ? sprintf("%.2f", (i1 - i0) / n) : "-",
			ok ? sprintf("%.2f", (o1 - o0) / n) : "-",
			ok ? sprintf("%.2f", (k1 - k0) / n) : "-",
			(ok && ua1 - ua0 > 0) ? sprintf("%.0f", 100 * (ub1 - ub0) / (ua1 - ua0)) : "-"
	}' >>"$RUNS/results"
}

profile() {	# while h2c runs against ewykd, and only then: where its time goes
	perf record -q -e cpu-clock -F 2000 -p "$EWYKD_PID" -o "$RUNS/perf.data" \
		>/dev/null 2>&1 &
	local perf_pid=$!
	sleep 0.3	# perf attaches
	h2load_run "$EWYK_CLIENT_NS" h2c 80 "$RUNS/profile.tsv" >/dev/null
	kill -INT "$perf_pid" 2>/dev/null || true
	wait "$perf_pid" || true
}

: >"$RUNS/results"
ADDRS=(--ip 198.18.0.2/24)
[[ " ${FAMILIES[*]} " == *" 6 "* ]] && ADDRS+=(--ip6 2001:2::2/64)
for round in $(seq "$ROUNDS"); do
	if runs ewykd; then
		EWYK_CPU=1 ewyk_ns_start "$NS_A" "$LOG" -l 1 -- "${ADDRS[@]}" --www "$WWW" \
			--idle poll --mtu "${EWYK_MTU:-1500}"
		# The families take turns, first the one the last round had second.
		order=("${FAMILIES[@]}")
		[ $((round % 2)) = 0 ] && [ "${#order[@]}" = 2 ] && order=("${order[1]}" "${order[0]}")
		for l in "${LOADS[@]}"; do
			for f in "${order[@]}"; do
				if [ "$f" = 6 ]; then
					measure ewykd6 "$l" "$round" "$EWYK_CLIENT_NS" 80 \
						ewykd_counters "[2001:2::2]"
				else
					measure ewykd "$l" "$round" "$EWYK_CLIENT_NS" 80 ewykd_counters
				fi
			done
		done
		[ "$round" = 1 ] && [[ " ${FAMILIES[*]} " == *" 4 "* ]] && profile
		ewyk_ns_stop "$NS_A"
	fi
	[ "$SERVERS" = " ewykd " ] && continue

	veth_ns "$NS_B"
	CLIENT="${NS_B}c"
	if runs nghttpd; then
		ip netns exec "$NS_B" taskset -c 1 nghttpd --no-tls -n 1 -d "$WWW" 80 \
			>/dev/null 2>&1 &
		PID=$!
		sleep 0.5
		measure nghttpd h2c "$round" "$CLIENT" 80 kernel_counters	# h2 only
		stop_server
	fi

	if runs h2o; then
		cat >"$WWW/.h2o.conf" <<CONF
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
		for l in "${LOADS[@]}"; do
			measure h2o "$l" "$round" "$CLIENT" 80 kernel_counters
		done
		stop_server
	fi

	if runs nginx; then
		cat >"$WWW/.nginx.conf" <<CONF
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
		measure nginx h2c "$round" "$CLIENT" 80 kernel_counters
		# nginx cannot speak HTTP/1.1 and h2c on one port: its HTTP/1.1 is on 81
		measure nginx h1 "$round" "$CLIENT" 81 kernel_counters
		measure nginx h1p "$round" "$CLIENT" 81 kernel_counters
		stop_server
	fi
	veth_ns_del "$NS_B"
done

echo "small file, $N requests per run, median of $ROUNDS rounds (servers in turn)"
echo "ewykd on $(ewyk_medium_name "$EWYK_MEDIUM"), one lcore; the others on veth," \
	"one worker; servers on CPU 1, h2load on CPU 0; MTU ${EWYK_MTU:-1500};" \
	"ewykd over IPv${EWYK_FAMILY:-4}"
/usr/bin/python3 - "$RUNS/results" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
runs = {}
for s, l, r, rate, p50, p99, cpu, pin, pout, core, client in rows:
    runs.setdefault((s, l), []).append((float(rate), p50, p99, cpu, pin, pout, core,
                                        client))
def med(xs):
    xs = [float(x) for x in xs if x not in ("-",)]
    return statistics.median(xs) if xs else None
fmt = "{:<8} {:<28} {:>9} {:>15} {:>7} {:>7} {:>7} {:>7} {:>9} {:>8} {:>7} {:>7} {:>7}"
print(fmt.format("server", "load", "req/s", "(range)", "p50 us", "p99 us", "cpu us",
                 "core us", "pkts i/o", "client %", "req/s x", "cpu x", "core x"))
names = {"h2c": "h2c -c16 -m100", "h1": "HTTP/1.1 -c32", "h1p": "HTTP/1.1 -c32 pipelined 16"}
for l in ("h2c", "h1", "h1p"):
    e = runs.get(("ewykd", l))
    for s in ("ewykd", "ewykd6", "nghttpd", "h2o", "nginx"):
        x = runs.get((s, l))
        if not x:
            continue
        rate = med(r[0] for r in x)
        cpu = med(r[3] for r in x)
        core = med(r[6] for r in x)
        ecore = med(r[6] for r in e) if e else None
        rx = lambda a, b: f"{a / b:.2f}" if a and b else "-"
        erate = med(r[0] for r in e) if e else None
        ecpu = med(r[3] for r in e) if e else None
        pin, pout = med(r[4] for r in x), med(r[5] for r in x)
        client = med(r[7] for r in x)
        print(fmt.format(s, names[l], f"{rate:,.0f}",
                         f"{min(r[0] for r in x):,.0f}-{max(r[0] for r in x):,.0f}",
                         str(med(r[1] for r in x) or "-"), str(med(r[2] for r in x) or "-"),
                         f"{cpu:.2f}" if cpu is not None else "-",
                         f"{core:.2f}" if core is not None else "-",
                         f"{pin:.2f}/{pout:.2f}" if pin is not None else "-",
                         f"{client:.0f}" if client is not None else "-",
                         rx(erate, rate), rx(cpu, ecpu), rx(core, ecore)))
PY
/usr/bin/python3 - "$RUNS/results" <<'PY'
import statistics, sys
# Each round measured both families back to back: their ratios, paired by
# round, cancel what the machine's load did to that round.
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
by = {(s, l, r): (float(rate), cpu) for s, l, r, rate, _, _, cpu, *_ in rows}
for l in ("h2c", "h1", "h1p"):
    pairs = [(by[("ewykd", l, r)], by[("ewykd6", l, r)]) for s, ll, r in by
             if s == "ewykd" and ll == l and ("ewykd6", l, r) in by]
    pairs = [(a, b) for a, b in pairs if a[0] > 0 and b[0] > 0 and "-" not in (a[1], b[1])]
    if pairs:
        rate = statistics.median(b[0] / a[0] for a, b in pairs)
        cpu = statistics.median(float(b[1]) / float(a[1]) for a, b in pairs)
        print(f"IPv6 over IPv4, {l}, paired by round ({len(pairs)}): req/s {rate:.3f}, "
              f"cpu per request {cpu:.3f}")
PY
echo "cpu us: server CPU per request; req/s x: ewykd's over the server's (above 1:"
echo "ewykd serves more); cpu x: the server's CPU per request over ewykd's (above 1:"
echo "ewykd spends less); core us, core x: the same for all the server core's"
echo "busy time (softirq included); pkts i/o: packets received and sent per request;"
echo "client %: how busy h2load's core was (near 100: the rate is the client's limit);"
echo "ewykd6: ewykd over IPv6, its ratios to ewykd over IPv4 (req/s x below 1 and"
echo "cpu x above 1: IPv6 does better)"
[ "$EWYK_MEDIUM" = memif ] &&
	echo "(on memif the testpmd wire busy-polls h2load's core: its client % is always near 100)"
echo
echo "ewykd under h2c, by library (perf record -e cpu-clock):"
# awk reads to the end: head would leave perf a broken pipe, which
# pipefail turns into the script's exit status.
perf report -i "$RUNS/perf.data" --sort dso --stdio 2>/dev/null |
	awk 'NF && !/^#/ && n++ < 6'
echo "top symbols:"
perf report -i "$RUNS/perf.data" --sort dso,sym --stdio 2>/dev/null |
	awk 'NF && !/^#/ && n++ < 12'
