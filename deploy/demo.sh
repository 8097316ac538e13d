#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# ewyk demo: from a fresh Debian 12 machine (as root) it installs what is
# missing, builds, starts ewykd on the fastest virtual medium this host has
# (net_af_xdp on a veth pair where the kernel supports it, else net_tap;
# EWYK_MEDIUM=tap|af_xdp|memif chooses) in a private network namespace
# with the example plugin loaded, fetches pages over IPv4 and IPv6 and
# calls /kv and the plugin with curl (HTTP/1.1 and HTTP/2), serves HTTPS
# with a certificate it makes (curl --http2 over TLS, verified against it),
# drives it with h2load --h1, prints the results and the telemetry, and
# stops everything cleanly.
set -euo pipefail
cd "$(dirname "$0")/.."
. deploy/ewyk-ns.sh

if [ "$(id -u)" -ne 0 ]; then
	echo "demo.sh: run as root (namespaces, tap devices, hugepages)" >&2
	exit 1
fi

NS="ewyk-demo-$$"
WWW=$(mktemp -d /tmp/ewyk-demo-www.XXXXXX)
LOG=$(mktemp /tmp/ewyk-demo-log.XXXXXX)
EWYKD_PID=""
DURATION=${EWYK_DEMO_SECONDS:-5}

cleanup() {
	ewyk_ns_stop "$NS" || true
	rm -rf "$WWW" "$LOG"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step() { printf '\n== %s\n' "$*"; }
in_ns() { ip netns exec "$EWYK_CLIENT_NS" "$@"; }

step "set-up"
./deploy/setup.sh

step "build"
[ -d build ] || meson setup build >/dev/null
ninja -C build >/dev/null
echo "built build/app/ewykd"

step "a certificate for HTTPS (ECDSA P-256, self-signed, for ewyk.demo and 198.18.0.2)"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=ewyk.demo \
	-addext subjectAltName=DNS:ewyk.demo,IP:198.18.0.2 -days 7 \
	-keyout "$WWW/.key.pem" -out "$WWW/.cert.pem" 2>/dev/null
chmod 600 "$WWW/.key.pem"	# ewykd refuses a key others may read
openssl x509 -in "$WWW/.cert.pem" -noout -subject -enddate

step "static files"
cat > "$WWW/index.html" <<'HTML'
<!doctype html><title>ewyk</title><h1>Hello from ewyk</h1>
<p>Served by a kernel-bypass TCP/HTTP stack on DPDK.</p>
HTML
head -c $((1 << 20)) /dev/urandom > "$WWW/1mb.bin"
ls -l "$WWW"

step "medium"
if [ -n "${EWYK_MEDIUM:-}" ]; then
	echo "EWYK_MEDIUM=$EWYK_MEDIUM, as asked"
else
	EWYK_MEDIUM=$(ewyk_medium_default)
	if [ "$EWYK_MEDIUM" = af_xdp ]; then
		echo "af_xdp: this kernel has AF_XDP sockets and veth, the fastest medium here"
	else
		echo "tap: no AF_XDP here (kernel or DPDK), net_tap instead"
	fi
fi
MEDIUM_NAME=$(ewyk_medium_name "$EWYK_MEDIUM")

step "start ewykd in namespace $NS on $MEDIUM_NAME (appliance 198.18.0.2 and 2001:2::2, kernel 198.18.0.1 and 2001:2::1)"
ewyk_ns_start "$NS" "$LOG" -l 0-1 -- --ip 198.18.0.2/24 --ip6 2001:2::2/64 \
	--www "$WWW" --demo-routes --plugin build/app/plugins/ewyk-hello.so:Hello \
	--tls-cert "$WWW/.cert.pem" --tls-key "$WWW/.key.pem"
grep serving "$LOG"
echo "client namespace: $EWYK_CLIENT_NS"
in_ns ping -c 3 -i 0.2 198.18.0.2
in_ns ping -6 -c 3 -i 0.2 2001:2::2

step "curl http://198.18.0.2/"
in_ns curl -sS -m 10 -D - http://198.18.0.2/

step "curl -6 'http://[2001:2::2]/' (IPv6)"
in_ns curl -6 -sS -m 10 -w 'HTTP %{http_code} from %{remote_ip}\n' -o /dev/null 'http://[2001:2::2]/'

step "curl a 1 MB file, checksum compared"
in_ns curl -sS -m 30 -o "$WWW/.download" -w 'HTTP %{http_code}, %{size_download} bytes in %{time_total}s\n' \
	http://198.18.0.2/1mb.bin
if cmp -s "$WWW/.download" "$WWW/1mb.bin"; then echo "byte-exact: yes"; else echo "byte-exact: NO"; exit 1; fi

step "handlers: /kv over HTTP/1.1 and HTTP/2, the example plugin"
in_ns curl -sS -m 10 -X PUT --data-binary 'blue' http://198.18.0.2/kv/colour
in_ns curl -sS -m 10 --http2-prior-knowledge -w '  <- GET /kv/colour over HTTP/%{http_version}\n' \
	http://198.18.0.2/kv/colour
in_ns curl -sS -m 10 --http2-prior-knowledge 'http://198.18.0.2/hello?name=demo'

step "HTTPS: curl --http2 over TLS, the certificate verified"
in_ns curl -sS -m 10 --http2 --cacert "$WWW/.cert.pem" \
	-w '  <- HTTP/%{http_version} %{http_code}, TLS verified (%{ssl_verify_result} = ok)\n' \
	-o /dev/null https://198.18.0.2/
in_ns curl -sS -m 10 -v --http2 --cacert "$WWW/.cert.pem" -o /dev/null https://198.18.0.2/ 2>&1 |
	grep -E '^\* (SSL connection using|ALPN: server accepted|using HTTP/2)'
in_ns h2load -n 2000 -c 4 -m 16 https://198.18.0.2/ |
	grep -E '^(TLS Protocol|Cipher|Server Temp Key|Application protocol|finished in|status codes)'
printf '/ewyk/tls\n' | /usr/bin/python3 /usr/bin/dpdk-telemetry.py -f "$NS" |
	/usr/bin/python3 -c 'import json, sys
for line in sys.stdin:
    if line.strip().startswith("{"):
        t = json.loads(line)["/ewyk/tls"]
        print(" ", {k: t[k] for k in ("handshakes_full_count", "tls13_conns",
              "alpn_h2_conns", "cipher_conns", "cert_expires_in_s")})'

step "h2load --h1 for ${DURATION}s, 16 connections, on $MEDIUM_NAME"
in_ns h2load --h1 -D "$DURATION" -c 16 -t 1 http://198.18.0.2/ | grep -vE '^(starting|spawning|progress|Application protocol)'

step "telemetry: /ewyk/stats, /ewyk/http and /ewyk/info (dpdk-telemetry.py -f $NS)"
printf '/ewyk/stats\n/ewyk/http\n/ewyk/info\n' | /usr/bin/python3 /usr/bin/dpdk-telemetry.py -f "$NS" |
	/usr/bin/python3 -c 'import json, sys
for line in sys.stdin:
    line = line.strip()
    if line.startswith("{"):
        print(json.dumps(json.loads(line), indent=1))'

# --- operations: the exporter and its dashboard ---
step "ewyk-exporter: metrics and the dashboard"
EXPORTER_LISTEN=${EWYK_EXPORTER_LISTEN:-127.0.0.1:9110}
build/app/ewyk-exporter --file-prefix "$NS" --listen "$EXPORTER_LISTEN" >/dev/null 2>&1 &
EXPORTER_PID=$!
trap 'kill "$EXPORTER_PID" 2>/dev/null || true; cleanup' EXIT
for _ in $(seq 50); do
	curl -sf -o /dev/null "http://$EXPORTER_LISTEN/healthz" && break
	sleep 0.1
done
echo "dashboard: http://$EXPORTER_LISTEN/  (from a laptop: ssh -L 9110:$EXPORTER_LISTEN this-host)"
echo "metrics:   http://$EXPORTER_LISTEN/metrics"
curl -sf "http://$EXPORTER_LISTEN/metrics" | grep -E '^ewyk_(up |http_requests_total|http_responses_total\{status="200"|mbufs_in_use|tcp_open_connections|strategy_tasks_total)' || true
kill "$EXPORTER_PID" 2>/dev/null || true
wait "$EXPORTER_PID" 2>/dev/null || true
# --- end of operations ---

step "stop (SIGTERM)"
status=0
ewyk_ns_stop "$NS" || status=$?
tail -n 1 "$LOG"
echo "ewykd exit status: $status (medium: $MEDIUM_NAME)"
exit "$status"
