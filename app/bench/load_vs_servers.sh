#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# ewykd, h2o and nginx, each on one core, driven by the same client on one
# core: ewyk-load, on ewyk's own TCP. ewykd over net_memif (ewyk-load the
# memif client: no kernel between them); h2o and nginx behind a veth pair,
# ewyk-load on its other end over net_af_xdp (copy mode). And ewykd over
# net_memif driven by h2load through a testpmd wire (the tests' memif
# medium), to show where a kernel client on one core stops. The servers
# take turns, ROUNDS times; each figure is the median of the rounds.
#
# Loads (each DURATION seconds, closed loop): h2c -c16 -m100; HTTP/1.1
# keep-alive -c32; HTTP/1.1 -c32 pipelined 16; HTTP/1.1 -c32 with a new
# connection per request (connections per second); the same over HTTPS, a
# full TLS 1.3 handshake per request (new TLS connections per second: the
# servers share one ECDSA P-256 certificate; ewykd runs its handshakes on
# its own core, --tls-offload off, as nginx and h2o do); and one download
# of a BIG_MB file over HTTP/1.1 (MB/s).
#
# Per server and load: requests/s; p99 latency (µs, from when a request was
# sent); server CPU µs per request (ewykd: its lcore's busy time from
# /ewyk/lcores, polls that found nothing excluded; h2o and nginx: utime +
# stime of their processes) and its core's (ewykd: the same; the others:
# all the time CPU 1 was not idle, softirq included); the server core's
# busy share and the client's (ewyk-load: the share of its polls that
# found work; h2load: its CPU's non-idle share, which the testpmd wire on
# the same CPU keeps near 100 %). Then the goals as ratios, and where
# ewykd's and ewyk-load's time goes under h2c (perf record -e cpu-clock).
#
# Servers on CPU 1, clients on CPU 0. Figures, not a test.
#
# Usage: [ROUNDS=3] [DURATION=5] [BIG_MB=1024] [SERVERS="ewykd h2o nginx h2load"]
#        [LOADS="h2c h1 h1p cps tcps dl"] app/bench/load_vs_servers.sh
#        (as root, after a build)
set -euo pipefail
cd "$(dirname "$0")/../.."
. deploy/ewyk-ns.sh
. app/bench/bench_lib.sh
ROUNDS=${ROUNDS:-3}
DUR=${DURATION:-5}
BIG_MB=${BIG_MB:-1024}
EWYKD=${EWYKD:-./build/app/ewykd}
LOAD=${EWYK_LOAD:-./build/app/ewyk-load}
SERVERS=" ${SERVERS:-ewykd h2o nginx h2load} "
read -ra LOADS <<<"${LOADS:-h2c h1 h1p cps tcps dl}"
runs() { [[ "$SERVERS" == *" $1 "* ]]; }
for tool in h2o nginx h2load perf openssl; do
	command -v "$tool" >/dev/null || {
		echo "needs $tool (apt-get install h2o nginx-light nghttp2-client linux-perf)" >&2
		exit 1
	}
done
[ -x "$LOAD" ] && [ -x "$EWYKD" ] || { echo "build first: ninja -C build" >&2; exit 1; }

RUN=$(mktemp -d /tmp/ewyk-lbench.XXXXXX)
WWW=$RUN/www
NS_M="ewyk-lb-m-$$"	# ewykd on memif: its file prefix and socket
NS_A="ewyk-lb-a-$$"	# ewykd behind the testpmd wire, for h2load
NS_B="ewyk-lb-b-$$"	# the veth pair of the kernel servers
SPID=""
EWYKD_PID=""
cleanup() {
	stop_server
	ewyk_ns_stop "$NS_A" 2>/dev/null || true
	veth_ns_del "$NS_B"
	rm -rf "$RUN" "/var/run/dpdk/$NS_M" "/var/run/dpdk/${NS_M}l" \
		"/var/run/dpdk/${NS_B}l"
}
stop_server() {
	[ -n "$SPID" ] && kill -TERM "$SPID" 2>/dev/null && wait "$SPID" 2>/dev/null || true
	SPID=""
}
trap cleanup EXIT
mkdir -p "$WWW"
chmod 755 "$RUN" "$WWW"
printf 'hello from a benchmark\n' >"$WWW/small.txt"
truncate -s "${BIG_MB}M" "$WWW/big.bin"	# sparse: no disk, all zeros
chmod 644 "$WWW"/*
# The servers' certificate for HTTPS: ECDSA P-256, the key its owner's only.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
	-subj /CN=ewyk.test -addext subjectAltName=DNS:ewyk.test \
	-keyout "$RUN/key.pem" -out "$RUN/cert.pem" 2>/dev/null
chmod 600 "$RUN/key.pem"

declare -A LOAD_ARGS=([h2c]="-c 16 -m 100" [h1]="--h1 -c 32" [h1p]="--h1 -c 32 -m 16"
	[cps]="--h1 -c 32 --new-conn" [tcps]="--h1 -c 32 --new-conn" [dl]="--h1 -c 1 -n 1")
declare -A LOAD_NAME=([h2c]="h2c -c16 -m100" [h1]="HTTP/1.1 -c32"
	[h1p]="HTTP/1.1 -c32 pipelined 16" [cps]="HTTP/1.1 -c32 new conn each"
	[tcps]="HTTPS/1.1 -c32 new TLS conn each"
	[dl]="HTTP/1.1 ${BIG_MB} MB download")

# ewyk-load on CPU 0 over the given EAL device: "req/s p99_us busy mb/s".
# NETNS: where it runs ("" for none); PREFIX: its file prefix.
load_run() {
	local netns=$1 prefix=$2 load=$3 host=$4 port=$5 vdev=$6 path=small.txt
	local wrap=() timing=(-D "$DUR") scheme=http
	[ "$load" = tcps ] && scheme=https port=443
	[ -n "$netns" ] && wrap=(ip netns exec "$netns" ./deploy/with-bpffs.sh)
	[ "$load" = dl ] && path=big.bin timing=(--expect-length $((BIG_MB << 20)) \
		--timeout 600)
	# shellcheck disable=SC2086
	"${wrap[@]}" "$LOAD" -l 0 --no-pci --vdev "$vdev" --file-prefix "$prefix" \
		--log-level '*:warning' $(./deploy/eal-mem.sh 512) -- \
		--ip 198.18.0.1/24 --quiet --json "$RUN/load.json" ${LOAD_ARGS[$load]} \
		"${timing[@]}" "$scheme://$host:$port/$path" >"$RUN/load.out" 2>&1 || true
	[ -n "${KEEP:-}" ] && cp "$RUN/load.out" "$KEEP.$load.$(date +%s%N)"
	/usr/bin/python3 - "$RUN/load.json" <<'PY' 2>/dev/null || echo "0 - - -"
import json, sys
d = json.load(open(sys.argv[1]))
r = d["requests"]
# every answer right; a few failed attempts allowed (--new-conn: a SYN that
# met a TIME-WAIT of the last run's), not more than 1 %
ok = r["succeeded"] > 0 and r["failed"] == 0 and r["errored"] <= r["done"] / 100
print(f'{d["req_per_s"] if ok else 0} {d["latency_us"]["p99"]:.0f} '
      f'{100 * d["client_busy"]:.0f} {d["bytes"]["data"] / d["elapsed_s"] / 1e6:.0f}')
PY
}

# h2load on CPU 0 from namespace NS: "req/s - busy -" (the CPU's share).
h2load_run() {
	local out rate c0 c1
	c0=$(cpu_share 0)
	# shellcheck disable=SC2086
	out=$(ip netns exec "$1" taskset -c 0 h2load -D "$DUR" ${LOAD_ARGS[$2]} \
		"http://198.18.0.2/small.txt" 2>&1) || true
	c1=$(cpu_share 0)
	rate=$(awk '/^finished in/ {r = $4} /^requests:/ {bad = $14 + $16}
		END {print (bad == 0 ? r : 0)}' <<<"$out")
	# shellcheck disable=SC2086
	set -- $c0 $c1
	echo "$rate - $(( 100 * ($3 - $1) / ($4 - $2 + 1) )) -"
}

# measure SERVER LOAD ROUND COUNTERS_FN RUNNER...: one run, kept in results.
# COUNTERS_FN prints "cpu_us core_us"; the runner prints "rate p99 busy mbs".
measure() {
	local s=$1 l=$2 r=$3 fn=$4 c0 c1 t0 t1 fig
	shift 4
	c0=$($fn) || true
	t0=$(date +%s%N)
	fig=$("$@") || true
	t1=$(date +%s%N)
	c1=$($fn) || true
	# shellcheck disable=SC2086
	set -- $fig $c0 $c1
	if [ $# -ne 8 ]; then
		echo "$s $l round $r: no figures (a server or its counters did not answer)" >&2
		return 0
	fi
	echo "$s $l $r $1 $2 $3 $4 $5 $6 $7 $8 $(( (t1 - t0) / 1000 ))" >>"$RUN/results"
}

ewykd_cpu() {	# "busy_us busy_us": ewykd is all its core does
	local b
	b=$(ewykd_counters "$1" | awk '{print $1}')
	echo "$b $b"
}
m_cpu() { ewykd_cpu "$NS_M"; }
a_cpu() { ewykd_cpu "$NS_A"; }
k_cpu() { echo "$(proc_cpu_us "$SPID") $(cpu_busy_us 1)"; }

MEMIF_SOCK=$RUN/memif.sock
memif_client() { echo "net_memif0,role=client,socket=$MEMIF_SOCK,socket-abstract=no"; }
AFXDP=net_af_xdp0,iface=veth0,start_queue=0,queue_count=1

ewykd_memif_start() {
	# shellcheck disable=SC2046
	taskset -c 1 "$EWYKD" -l 1 --no-pci --file-prefix "$NS_M" --log-level '*:warning' \
		--vdev "net_memif0,role=server,socket=$MEMIF_SOCK,socket-abstract=no" \
		$(./deploy/eal-mem.sh 512) -- --ip 198.18.0.2/24 --www "$WWW" \
		--www-max-mb $((BIG_MB + 64)) --idle poll --tls-cert "$RUN/cert.pem" \
		--tls-key "$RUN/key.pem" --tls-offload off >"$RUN/ewykd.log" 2>&1 &
	SPID=$!
	ewyk_wait_for serving "$RUN/ewykd.log" "$SPID" ewykd
}

profile() {	# PID LOAD_FN...: perf of PID while the load runs
	local pid=$1 out=$2
	shift 2
	perf record -q -e cpu-clock -F 2000 -p "$pid" -o "$out" >/dev/null 2>&1 &
	local perf_pid=$!
	sleep 0.3
	"$@" >/dev/null
	kill -INT "$perf_pid" 2>/dev/null || true
	wait "$perf_pid" || true
}

: >"$RUN/results"
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
for round in $(seq "$ROUNDS"); do
	if runs ewykd; then
		ewykd_memif_start
		for l in "${LOADS[@]}"; do
			measure ewykd "$l" "$round" m_cpu load_run "" "${NS_M}l" "$l" \
				198.18.0.2 80 "$(memif_client)"
		done
		if [ "$round" = 1 ]; then
			profile "$SPID" "$RUN/perf.ewykd" load_run "" "${NS_M}l" h2c \
				198.18.0.2 80 "$(memif_client)"
			# ewyk-load's own profile, once its EAL and port are up
			# (their start-up is not the load's cost)
			"$LOAD" -l 0 --no-pci --vdev "$(memif_client)" --file-prefix \
				"${NS_M}l" --log-level '*:warning' $(./deploy/eal-mem.sh 512) -- \
				--ip 198.18.0.1/24 --quiet -c 16 -m 100 -D $((DUR + 2)) \
				http://198.18.0.2/small.txt >/dev/null 2>&1 &
			lpid=$!
			sleep 1.5
			perf record -q -e cpu-clock -F 2000 -p "$lpid" -o "$RUN/perf.load" \
				-- sleep "$DUR" >/dev/null 2>&1 || true
			wait "$lpid" || true
		fi
		stop_server
	fi
	if runs h2load; then
		EWYK_CPU=1 EWYK_WIRE_CPU=0 ewyk_ns_start "$NS_A" "$RUN/ewykd-a.log" -l 1 -- \
			--ip 198.18.0.2/24 --www "$WWW" --www-max-mb $((BIG_MB + 64)) \
			--idle poll
		for l in h2c h1; do
			measure h2load "$l" "$round" a_cpu h2load_run "$EWYK_CLIENT_NS" "$l"
		done
		ewyk_ns_stop "$NS_A"
	fi
	if runs h2o || runs nginx; then
		veth_ns "$NS_B"
		# ewyk-load's end of the pair has no kernel address; the
		# server's sends whole checksums (af_xdp takes no partial ones).
		ip -n "${NS_B}c" addr flush dev veth0
		ip netns exec "$NS_B" ethtool -K veth1 tx off >/dev/null
	fi
	if runs h2o; then
		cat >"$RUN/h2o.conf" <<CONF
num-threads: 1
listen:
  host: 198.18.0.2
  port: 80
listen:
  host: 198.18.0.2
  port: 443
  ssl:
    certificate-file: $RUN/cert.pem
    key-file: $RUN/key.pem
    minimum-version: TLSv1.2
    ocsp-update-interval: 0
error-log: /dev/null
hosts:
  default:
    paths:
      /:
        file.dir: $WWW
CONF
		ip netns exec "$NS_B" taskset -c 1 h2o -c "$RUN/h2o.conf" >/dev/null 2>&1 &
		SPID=$!
		sleep 0.8
		for l in "${LOADS[@]}"; do
			measure h2o "$l" "$round" k_cpu load_run "${NS_B}c" "${NS_B}l" "$l" \
				198.18.0.2 80 "$AFXDP"
		done
		stop_server
	fi
	if runs nginx; then
		cat >"$RUN/nginx.conf" <<CONF
user root;
worker_processes 1;
worker_cpu_affinity 10;
daemon off;
pid $RUN/nginx.pid;
error_log /dev/null crit;
events { worker_connections 4096; }
http {
	access_log off;
	keepalive_requests 1000000;
	sendfile on;
	server { listen 198.18.0.2:80 http2; root $WWW; }
	server { listen 198.18.0.2:81; root $WWW; }
	server {
		listen 198.18.0.2:443 ssl;
		ssl_certificate $RUN/cert.pem;
		ssl_certificate_key $RUN/key.pem;
		ssl_protocols TLSv1.2 TLSv1.3;
		root $WWW;
	}
}
CONF
		ip netns exec "$NS_B" nginx -c "$RUN/nginx.conf" &
		SPID=$!
		sleep 0.5
		for l in "${LOADS[@]}"; do
			port=81
			[ "$l" = h2c ] && port=80
			measure nginx "$l" "$round" k_cpu load_run "${NS_B}c" "${NS_B}l" "$l" \
				198.18.0.2 "$port" "$AFXDP"
		done
		stop_server
	fi
	veth_ns_del "$NS_B"
done

echo "load average before: $LOAD_BEFORE, after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "ewyk-load on CPU 0 (one lcore); servers on CPU 1, one core each; ${DUR} s a run,"
echo "median of $ROUNDS rounds. ewykd: net_memif, ewyk-load its memif client."
echo "h2o, nginx: kernel TCP on a veth pair, ewyk-load on net_af_xdp (veth, copy mode)."
echo "h2load: ewykd over net_memif through a dpdk-testpmd wire to a net_tap (h2load's"
echo "and the wire's CPU 0)."
/usr/bin/python3 - "$RUN/results" "$BIG_MB" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
runs = {}
for s, l, r, rate, p99, busy, mbs, c0, k0, c1, k1, us in rows:
    rate = float(rate)
    n = rate * int(us) / 1e6
    ok = rate > 0 and n > 0
    cpu = (int(c1) - int(c0)) / n if ok else None
    core = (int(k1) - int(k0)) / n if ok else None
    sbusy = 100 * (int(k1) - int(k0)) / int(us) if ok else None
    runs.setdefault((s, l), []).append((rate, p99, busy, mbs, cpu, core, sbusy))
def med(xs):
    xs = [float(x) for x in xs if x not in (None, "-")]
    return statistics.median(xs) if xs else None
def f(x, fmt="{:,.0f}"):
    return fmt.format(x) if x is not None else "-"
names = {"h2c": "h2c -c16 -m100", "h1": "HTTP/1.1 -c32", "h1p": "HTTP/1.1 -c32 -m16",
         "cps": "HTTP/1.1 -c32 --new-conn", "tcps": "HTTPS/1.1 -c32 --new-conn",
         "dl": f"HTTP/1.1 {sys.argv[2]} MB download"}
fmt = "{:<8} {:<26} {:>11} {:>17} {:>8} {:>8} {:>8} {:>9} {:>9} {:>7}"
print(fmt.format("server", "load", "req/s", "(range)", "p99 us", "cpu us", "core us",
                 "server %", "client %", "MB/s"))
meds = {}
for l in names:
    for s in ("ewykd", "h2load", "h2o", "nginx"):
        x = runs.get((s, l))
        if not x:
            continue
        m = [med(r[i] for r in x) for i in range(7)]
        meds[(s, l)] = m
        label = "ewykd*" if s == "h2load" else s
        print(fmt.format(label, names[l], f(m[0]),
                         f"{min(r[0] for r in x):,.0f}-{max(r[0] for r in x):,.0f}",
                         f(m[1]), f(m[4], "{:.2f}"), f(m[5], "{:.2f}"), f(m[6]),
                         f(m[2]), f(m[3])))
print("ewykd*: ewykd driven by h2load through the testpmd wire (client % is CPU 0's")
print("busy share, the wire's polling included)")
print()
print("Goals (ratios of medians):")
def ratio(a, b):
    return a / b if a and b else None
def goal(text, r, want):
    print(f"  {text}: {f(r, '{:.2f}')}x (goal >= {want}x: "
          f"{'met' if r and r >= want else 'not met'})")
for l in ("h2c", "h1"):
    e, h = meds.get(("ewykd", l)), meds.get(("h2load", l))
    goal(f"ewyk-load over h2load driving ewykd, {names[l]}",
         ratio(e and e[0], h and h[0]), 3)
for l, want in (("h2c", 2), ("h1", 3)):
    e, o = meds.get(("ewykd", l)), meds.get(("h2o", l))
    goal(f"ewykd over h2o, requests per core-second, {names[l]}",
         ratio(o and o[5], e and e[5]), want)
    print(f"    (per CPU-second of the processes: {f(ratio(o and o[4], e and e[4]), '{:.2f}')}x;"
          f" requests per second: {f(ratio(e and e[0], o and o[0]), '{:.2f}')}x)")
e, n = meds.get(("ewykd", "cps")), meds.get(("nginx", "cps"))
goal("ewykd over nginx, new connections per second", ratio(e and e[0], n and n[0]), 3)
print(f"    (per core-second: {f(ratio(n and n[5], e and e[5]), '{:.2f}')}x;"
      f" per CPU-second of the processes: {f(ratio(n and n[4], e and e[4]), '{:.2f}')}x)")
e, n = meds.get(("ewykd", "tcps")), meds.get(("nginx", "tcps"))
goal("ewykd over nginx, new TLS connections per core-second (issue 21)",
     ratio(n and n[5], e and e[5]), 1.2)
print(f"    (per second: {f(ratio(e and e[0], n and n[0]), '{:.2f}')}x;"
      f" per CPU-second of the processes: {f(ratio(n and n[4], e and e[4]), '{:.2f}')}x)")
PY
for p in ewykd load; do
	[ -s "$RUN/perf.$p" ] || continue
	echo
	echo "ewyk$([ $p = load ] && echo -load || echo d) under h2c, by library (perf record -e cpu-clock):"
	perf report -i "$RUN/perf.$p" --sort dso --stdio 2>/dev/null | awk 'NF && !/^#/ && n++ < 6'
	echo "top symbols:"
	perf report -i "$RUN/perf.$p" --sort dso,sym --stdio 2>/dev/null |
		awk 'NF && !/^#/ && n++ < 14'
done
