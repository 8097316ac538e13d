#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# HTTPS: ewykd against nginx and h2o (Debian's, on OpenSSL 3.0), one worker
# each, the same ECDSA P-256 certificate, TLS 1.3 with X25519 and
# TLS_AES_128_GCM_SHA256 everywhere (the client asks for that suite only:
# h2load --tls13-ciphers, curl --tls13-ciphers). The servers take turns,
# ROUNDS times; each figure is the median of the rounds. Four loads:
#   newconn  new TLS connections, one request each: h2load --h1 with
#            NEWCONN_C clients of one request, again and again for
#            NEWCONN_S seconds; handshakes per second, and the server's CPU
#            per new connection, whose inverse is new connections per
#            second per core (the figure compared: the client, on the other
#            core, may not keep up with a server)
#   h2tls    HTTP/2 over TLS, h2load -c16 -m100: req/s, CPU us per request
#   h1tls    HTTP/1.1 over TLS keep-alive, h2load --h1 -c32: the same
#   bulk     one 1 GB file over HTTP/1.1 and TLS with curl: MB/s, and the
#            server's CPU per MB
#   bulk80   the same file over HTTP/1.1 in the clear (port 80)
#
# ewykd runs on $EWYK_MEDIUM (default af_xdp where the kernel supports it:
# deploy/ewyk-ns.sh) on one lcore (-l 1: the main lcore produces) with
# --tls-offload off, so that its handshakes run on that core too, the same
# work nginx's and h2o's one worker does; the others in a namespace joined
# to the client's by a veth pair. Every server is pinned to CPU 1, the
# clients to CPU 0. A server's CPU is the utime+stime of its process (its
# threads, its children), measured alike for the three: ewykd with --idle
# sleep, so that the polling it does when there is nothing to do costs
# what it costs (a few hundred polls before each sleep) and no more. Not
# its lcore's busy time (/ewyk/lcores, TSC): on a machine that runs other
# work, that wall-clock time includes the lcore's preemptions. On a veth
# pair the receiving side's kernel TCP runs in the sender's softirq: part
# of nginx's and h2o's TCP work is charged to the client's core, none of
# it to them (ewykd's TCP is in its process). Then ewykd's figures as
# ratios of each server's, and where ewykd's time goes under h2tls (perf,
# software clock). Beside the processes' CPU, each run's core figure: all
# the time CPU 1 was not idle (/proc/stat, softirq included: the kernel's
# TCP and the veth's work that no process is charged for), and the
# client's core's busy share (CPU 0): where it is near 100 %, the client,
# not the server, sets the rate.
#
# Usage: [EWYK_MEDIUM=...] [ROUNDS=3] [NEWCONN_C=64] [NEWCONN_S=8]
#        [BULK_MB=1024] [LOADS="newconn h2tls h1tls bulk bulk80"]
#        app/bench/tls_vs_servers.sh [REQUESTS]
#        (as root, after a build; REQUESTS per h2load run, default 200000)
set -euo pipefail
cd "$(dirname "$0")/../.."
. deploy/ewyk-ns.sh
. app/bench/bench_lib.sh	# cpu_busy_us, cpu_share
N=${1:-200000}
ROUNDS=${ROUNDS:-3}
NEWCONN_C=${NEWCONN_C:-64}
NEWCONN_S=${NEWCONN_S:-8}
BULK_MB=${BULK_MB:-1024}
: "${EWYK_MEDIUM:=$(ewyk_medium_default)}"
export EWYK_MEDIUM
NS_A="ewyk-tbench-a-$$"
NS_B="ewyk-tbench-b-$$"
WORK=$(mktemp -d /tmp/ewyk-tbench.XXXXXX)
WWW=$WORK/www
LOG=$WORK/ewykd.log
RUNS=$WORK/runs
PID=""
SUITE=TLS_AES_128_GCM_SHA256

cleanup() {
	ewyk_ns_stop "$NS_A" || true
	stop_server
	veth_ns_del "$NS_B"
	rm -rf "$WORK"
}
stop_server() {
	[ -n "$PID" ] && kill -TERM "$PID" 2>/dev/null && wait "$PID" 2>/dev/null || true
	PID=""
}
trap cleanup EXIT
for tool in h2o nginx h2load curl openssl perf; do
	command -v "$tool" >/dev/null || {
		echo "needs $tool (apt-get install h2o nginx-light nghttp2-client curl" \
			"openssl linux-perf)" >&2
		exit 1
	}
done
mkdir -p "$WWW" "$RUNS"
printf 'hello from a benchmark\n' >"$WWW/small.txt"
head -c $((BULK_MB << 20)) /dev/urandom >"$WWW/bulk.bin"
chmod -R a+rX "$WORK"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=ewyk.test \
	-addext subjectAltName=DNS:ewyk.test,IP:198.18.0.2 -days 2 \
	-keyout "$WORK/key.pem" -out "$WORK/cert.pem" 2>/dev/null
chmod 600 "$WORK/key.pem"
# h2o 2.2 has no TLS 1.3 suite setting: OpenSSL's system configuration pins
# it (docs/tls.md).
cat >"$WORK/aes128.cnf" <<CNF
openssl_conf = default_conf
[default_conf]
ssl_conf = ssl_sect
[ssl_sect]
system_default = system_default_sect
[system_default_sect]
Ciphersuites = $SUITE
CNF

read -ra LOADS <<<"${LOADS:-newconn h2tls h1tls bulk bulk80}"
for l in "${LOADS[@]}"; do
	case "$l" in newconn|h2tls|h1tls|bulk|bulk80) ;;
	*) echo "LOADS: newconn, h2tls, h1tls, bulk, bulk80" >&2; exit 2;; esac
done
declare -A H2LOAD_ARGS=([h2tls]="-c 16 -m 100" [h1tls]="--h1 -c 32")
declare -A LOAD_NAME=([newconn]="new TLS connection per request"
	[h2tls]="HTTP/2 over TLS -c16 -m100" [h1tls]="HTTP/1.1 over TLS -c32"
	[bulk]="1 GB over TLS" [bulk80]="1 GB in the clear")
URL=https://198.18.0.2

# CPU so far, microseconds: utime+stime of the server's process and its
# children ($PID; ewykd's: $EWYKD_PID).
ewykd_cpu() {
	PID=$EWYKD_PID kernel_cpu
}
kernel_cpu() {
	local ticks=0 p hz
	hz=$(getconf CLK_TCK)
	for p in "$PID" $(ps -o pid= --ppid "$PID" 2>/dev/null); do
		[ -r "/proc/$p/stat" ] || continue
		ticks=$((ticks + $(awk '{print $14 + $15}' "/proc/$p/stat")))
	done
	echo "$((ticks * 1000000 / hz))"
}

# run_load SERVER LOAD ROUND NS CPU_FN: one measurement, a line of
# "server load round rate units cpu_us_per_unit core_us_per_unit
# client_busy_pct" in $RUNS/results.
run_load() {
	local s=$1 l=$2 r=$3 ns=$4 cpu=$5 c0 c1 t0 t1 units out k0 k1 cl0 cl1
	c0=$($cpu)
	k0=$(cpu_busy_us 1)
	cl0=$(cpu_share 0)
	t0=$(date +%s%6N)
	case "$l" in
	newconn)
		units=0
		local end=$(($(date +%s) + NEWCONN_S))
		while [ "$(date +%s)" -lt "$end" ]; do
			out=$(ip netns exec "$ns" taskset -c 0 h2load --h1 -c "$NEWCONN_C" \
				-n "$NEWCONN_C" --tls13-ciphers="$SUITE" "$URL/small.txt" 2>&1) || true
			units=$((units + $(awk '/^status codes:/ {n = $3} END {print n + 0}' <<<"$out")))
		done
		;;
	bulk)
		out=$(ip netns exec "$ns" taskset -c 0 curl -sS --http1.1 -k \
			--tls13-ciphers "$SUITE" -o /dev/null -w '%{size_download}' \
			"$URL/bulk.bin" 2>&1) || true
		units=$(( ${out:-0} >> 20 ))
		;;
	bulk80)
		out=$(ip netns exec "$ns" taskset -c 0 curl -sS --http1.1 \
			-o /dev/null -w '%{size_download}' \
			"http://198.18.0.2/bulk.bin" 2>&1) || true
		units=$(( ${out:-0} >> 20 ))
		;;
	*)
		# shellcheck disable=SC2086
		out=$(ip netns exec "$ns" taskset -c 0 h2load -n "$N" ${H2LOAD_ARGS[$l]} \
			--tls13-ciphers="$SUITE" "$URL/small.txt" 2>&1) || true
		units=$(awk '/^status codes:/ {n = $3} END {print n + 0}' <<<"$out")
		;;
	esac
	t1=$(date +%s%6N)
	c1=$($cpu)
	k1=$(cpu_busy_us 1)
	cl1=$(cpu_share 0)
	awk -v s="$s" -v l="$l" -v r="$r" -v u="${units:-0}" -v dt=$((t1 - t0)) \
		-v c=$((c1 - c0)) -v k=$((k1 - k0)) -v cl0="$cl0" -v cl1="$cl1" 'BEGIN {
		split(cl0, a, " "); split(cl1, b, " ")
		printf "%s %s %s %.1f %d %s %s %.0f\n", s, l, r, u * 1e6 / dt, u,
			(u > 0 ? sprintf("%.2f", c / u) : "-"),
			(u > 0 ? sprintf("%.2f", k / u) : "-"),
			(b[2] > a[2] ? 100 * (b[1] - a[1]) / (b[2] - a[2]) : 0) }' |
		tee -a "$RUNS/results" >&2
	[ "${units:-0}" -gt 0 ] || echo "$s $l: nothing measured: $out" | tail -n 5 >&2
}

profile() {	# ewykd under h2tls: where its time goes
	perf record -q -e cpu-clock -F 2000 -p "$EWYKD_PID" -o "$RUNS/perf.data" \
		>/dev/null 2>&1 &
	local perf_pid=$!
	sleep 0.3
	ip netns exec "$EWYK_CLIENT_NS" taskset -c 0 h2load -n "$N" -c 16 -m 100 \
		--tls13-ciphers="$SUITE" "$URL/small.txt" >/dev/null 2>&1 || true
	kill -INT "$perf_pid" 2>/dev/null || true
	wait "$perf_pid" || true
}

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
: >"$RUNS/results"
for round in $(seq "$ROUNDS"); do
	EWYK_CPU=1 ewyk_ns_start "$NS_A" "$LOG" -l 1 -- --www "$WWW" --idle sleep \
		--www-max-mb $((BULK_MB + 64)) --tls-cert "$WORK/cert.pem" \
		--tls-key "$WORK/key.pem" --tls-offload off
	for l in "${LOADS[@]}"; do
		run_load ewykd "$l" "$round" "$EWYK_CLIENT_NS" ewykd_cpu
	done
	[ "$round" = 1 ] && [[ " ${LOADS[*]} " == *" h2tls "* ]] && profile
	ewyk_ns_stop "$NS_A"

	veth_ns "$NS_B"
	CLIENT="${NS_B}c"
	cat >"$WORK/h2o.conf" <<CONF
num-threads: 1
user: root
error-log: /dev/null
listen:
  host: 198.18.0.2
  port: 80
listen:
  host: 198.18.0.2
  port: 443
  ssl:
    certificate-file: $WORK/cert.pem
    key-file: $WORK/key.pem
    minimum-version: TLSv1.2
    ocsp-update-interval: 0
hosts:
  default:
    paths:
      /:
        file.dir: $WWW
CONF
	ip netns exec "$NS_B" env OPENSSL_CONF="$WORK/aes128.cnf" taskset -c 1 \
		h2o -c "$WORK/h2o.conf" >/dev/null 2>&1 &
	PID=$!
	sleep 1
	for l in "${LOADS[@]}"; do
		run_load h2o "$l" "$round" "$CLIENT" kernel_cpu
	done
	stop_server

	cat >"$WORK/nginx.conf" <<CONF
worker_processes 1;
worker_cpu_affinity 10;
daemon off;
pid $WORK/nginx.pid;
error_log /dev/null crit;
events { worker_connections 4096; }
http {
	access_log off;
	keepalive_requests 1000000;
	server {
		listen 198.18.0.2:80;
		listen 198.18.0.2:443 ssl http2;
		ssl_certificate $WORK/cert.pem;
		ssl_certificate_key $WORK/key.pem;
		ssl_protocols TLSv1.2 TLSv1.3;
		ssl_ciphers ECDHE-ECDSA-AES128-GCM-SHA256;
		ssl_conf_command Ciphersuites $SUITE;
		ssl_ecdh_curve X25519:prime256v1;
		ssl_session_tickets on;
		root $WWW;
	}
}
CONF
	ip netns exec "$NS_B" nginx -c "$WORK/nginx.conf" &
	PID=$!
	sleep 0.5
	for l in "${LOADS[@]}"; do
		run_load nginx "$l" "$round" "$CLIENT" kernel_cpu
	done
	stop_server
	veth_ns_del "$NS_B"
done

echo "HTTPS, TLS 1.3 $SUITE X25519, ECDSA P-256; median of $ROUNDS rounds (servers in turn)"
echo "ewykd on $(ewyk_medium_name "$EWYK_MEDIUM"), one lcore, --tls-offload off," \
	"--idle sleep; nginx and h2o on veth, one worker; servers on CPU 1, clients on" \
	"CPU 0; CPU: utime+stime of each server's process"
echo "load average before: $LOAD_BEFORE, after: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 - "$RUNS/results" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
runs = {}
for s, l, r, rate, units, cpu, core, client in rows:
    runs.setdefault((s, l), []).append((float(rate), cpu, core, float(client)))
def med(xs):
    xs = [float(x) for x in xs if x != "-"]
    return statistics.median(xs) if xs else None
names = {"newconn": "new TLS connection per request", "h2tls": "HTTP/2 over TLS -c16 -m100",
         "h1tls": "HTTP/1.1 over TLS -c32", "bulk": "1 GB over TLS (HTTP/1.1)",
         "bulk80": "1 GB in the clear (HTTP/1.1)"}
units = {"newconn": ("conn/s", "us/conn"), "h2tls": ("req/s", "us/req"),
         "h1tls": ("req/s", "us/req"), "bulk": ("MB/s", "us/MB"),
         "bulk80": ("MB/s", "us/MB")}
fmt = "{:<7} {:<30} {:>11} {:>7} {:>14} {:>10} {:>7} {:>14} {:>7} {:>8}"
print(fmt.format("server", "load", "rate", "unit", "cpu per unit", "per core/s",
                 "cpu x", "core per unit", "core x", "client %"))
for l in ("newconn", "h2tls", "h1tls", "bulk", "bulk80"):
    e = runs.get(("ewykd", l))
    ecpu = med(x[1] for x in e) if e else None
    ecore = med(x[2] for x in e) if e else None
    for s in ("ewykd", "nginx", "h2o"):
        x = runs.get((s, l))
        if not x:
            continue
        rate, cpu = med(r[0] for r in x), med(r[1] for r in x)
        core, client = med(r[2] for r in x), med(r[3] for r in x)
        per_core = 1e6 / cpu if cpu else None
        print(fmt.format(s, names[l], f"{rate:,.0f}", units[l][0],
                         f"{cpu:,.1f}" if cpu else "-",
                         f"{per_core:,.0f}" if per_core else "-",
                         f"{cpu / ecpu:.2f}" if cpu and ecpu else "-",
                         f"{core:,.1f}" if core else "-",
                         f"{core / ecore:.2f}" if core and ecore else "-",
                         f"{client:.0f}"))
PY
echo "cpu per unit: the server's process CPU time (us) per connection, request or MB;"
echo "per core/s: its inverse, what one core of that server would do; cpu x: the"
echo "server's CPU per unit over ewykd's (above 1: ewykd spends less); core per unit:"
echo "CPU 1's busy time (us, /proc/stat, softirq included) per unit, core x the same"
echo "ratio; client %: CPU 0's busy share during the run (near 100: the client limits)"
[ -s "$RUNS/perf.data" ] || exit 0
echo
echo "ewykd under h2tls, by library (perf record -e cpu-clock):"
perf report -i "$RUNS/perf.data" --sort dso --stdio 2>/dev/null |
	awk 'NF && !/^#/ && n++ < 6'
echo "top symbols:"
perf report -i "$RUNS/perf.data" --sort dso,sym --stdio 2>/dev/null |
	awk 'NF && !/^#/ && n++ < 14'
