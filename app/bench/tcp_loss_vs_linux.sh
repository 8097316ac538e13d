#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# ewyk's TCP against the Linux stack under random loss, side by side in one
# run, each of ewykd's congestion controls against Linux with the same one
# (CUBIC against CUBIC, BBR against BBR): downloads of 1 MB and 8 MB and
# /echo uploads of the same sizes, with P % of the frames dropped at random
# in each direction, for each P; and of 100 MB at the loss levels of
# BIG_LOSSES.
#
#   ewykd: its own TCP (198.18.0.2) in namespace A on $EWYK_MEDIUM, the
#          client in namespace Ac (198.18.0.1):
#          tap     the tap bridged to Ac by a veth pair
#          af_xdp  net_af_xdp on a veth end, the other end in Ac (as
#                  deploy/ewyk-ns.sh sets it up)
#   Linux: nginx (one worker; /echo by its echo module, bodies up to
#          128 MB in memory) in namespace B,
#          client in Bc, joined by a veth pair
#
# Loss is a pair of nftables netdev rules on the client's end of each path,
# one on its ingress (frames from the server) and one on its egress (frames
# to the server), so that neither stack learns of a drop but by TCP, and
# the same on every medium (net_af_xdp's frames meet the XDP program before
# any hook on the server's side could drop them). TSO, GSO and GRO are off
# on the veths: both stacks send MTU-sized segments. For each controller
# CC of CCS, ewykd runs with --tcp-cc CC and every kernel TCP of the run
# (nginx's and both clients') with the same, set on its route, whatever
# the host's default. Servers on CPU 1, clients on CPU 0. Each figure is
# the median of TRANSFERS transfers (curl, bounded in time); a failed or
# truncated one counts as its time bound. After each loss level, ewykd's
# recovery counters (from /ewyk/tcp, read with dpdk-telemetry.py) and
# Linux's timeouts and loss probes (TcpExt of the server's namespace) over
# that level; at the end, the table with the ratios. Figures, not a test.
#
# Usage: [EWYK_MEDIUM=tap|af_xdp] [CCS="cubic bbr"] [BIG_LOSSES="0 1"]
#        app/bench/tcp_loss_vs_linux.sh [TRANSFERS] [LOSSES]
#        (as root, after a build; TRANSFERS 5, LOSSES "0 1 5 10"; EWYK_MEDIUM
#        tap; CCS the controllers, each of cubic, bbr and newreno (Linux's
#        reno); BIG_LOSSES the levels with 100 MB transfers too, none: "")
set -euo pipefail
cd "$(dirname "$0")/../.."
. deploy/ewyk-ns.sh
. app/bench/bench_lib.sh	# median, in_group, nginx_echo_conf
N=${1:-5}
LOSSES=${2:-"0 1 5 10"}
CCS=${CCS:-"cubic bbr"}
BIG_LOSSES=${BIG_LOSSES-"0 1"}
export EWYK_MEDIUM=${EWYK_MEDIUM:-tap}
NS_A="ewyk-loss-a-$$"
NS_B="ewyk-loss-b-$$"
WWW=$(mktemp -d /tmp/ewyk-loss-www.XXXXXX)
LOG=$(mktemp /tmp/ewyk-loss-log.XXXXXX)
EWYKD_PID=""
NFT_TABLE=ewyk_bench_loss

cleanup() {
	bench_group_stop	# the transfers under way (in_group)
	[ -f "$WWW/.nginx.pid" ] && kill -TERM "$(cat "$WWW/.nginx.pid")" 2>/dev/null
	ewyk_ns_stop "$NS_A" || true
	ip netns del "${NS_A}c" 2>/dev/null || true
	sleep 0.2
	veth_ns_del "$NS_B"
	rm -rf "$WWW" "$LOG"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$NGINX" ] && [ -f /usr/lib/nginx/modules/ngx_http_echo_module.so ] ||
	{ echo "needs nginx and its echo module (apt-get install nginx-light)" >&2; exit 1; }
case "$EWYK_MEDIUM" in tap|af_xdp) ;; *) echo "EWYK_MEDIUM: tap or af_xdp" >&2; exit 2;; esac
# linux_cc CC: Linux's name of ewykd's controller CC
linux_cc() {
	[ "$1" = newreno ] && echo reno || echo "$1"
}
for cc in $CCS; do
	case "$cc" in newreno|cubic|bbr) ;; *) echo "CCS: newreno, cubic, bbr" >&2; exit 2;; esac
	modprobe "tcp_$(linux_cc "$cc")" 2>/dev/null || true
	grep -qw "$(linux_cc "$cc")" /proc/sys/net/ipv4/tcp_available_congestion_control ||
		{ echo "$(linux_cc "$cc"): not in this kernel" >&2; exit 2; }
done

head -c $((1 << 20)) /dev/urandom > "$WWW/1m.bin"
head -c $((8 << 20)) /dev/urandom > "$WWW/8m.bin"
[ -n "$BIG_LOSSES" ] && head -c $((100 << 20)) /dev/urandom > "$WWW/100m.bin"
chmod 755 "$WWW"	# nginx's worker runs as www-data
chmod 644 "$WWW"/*.bin

no_offloads() {	# no_offloads NS DEV
	ip netns exec "$1" ethtool -K "$2" tso off gso off gro off >/dev/null 2>&1 || true
}

# cc_route NS DEV CC: the kernel TCP of NS uses CC on the test network.
cc_route() {
	ip -n "$1" route replace 198.18.0.0/24 dev "$2" congctl "$(linux_cc "$3")"
}

# start_ewykd CC: ewykd with --tcp-cc CC and its client's namespace Ac,
# whose end of the path is A_DEV. On net_tap the tap is bridged to Ac (as
# the integration tests' Appliance(client_ns=True) does); on net_af_xdp,
# ewyk-ns.sh gives Ac the veth's other end.
start_ewykd() {
	EWYK_CPU=1 ewyk_ns_start "$NS_A" "$LOG" -l 1 -- --www "$WWW" --idle poll \
		--demo-routes --tcp-cc "$1"
	if [ "$EWYK_MEDIUM" = tap ]; then
		A_DEV=vc
		ewyk_bridged_client "$NS_A" "${NS_A}c"
	else
		A_DEV=ewyk0
	fi
	no_offloads "${NS_A}c" "$A_DEV"
	cc_route "${NS_A}c" "$A_DEV" "$1"
	for _ in $(seq 50); do
		ip netns exec "${NS_A}c" ping -c 1 -W 1 198.18.0.2 >/dev/null 2>&1 && break
		sleep 0.1
	done
}

veth_ns "$NS_B"
no_offloads "$NS_B" veth1
no_offloads "${NS_B}c" veth0
nginx_echo_conf "$WWW" /echo 128m 128m echo_request_body
ip netns exec "$NS_B" "$NGINX" -c "$WWW/.nginx.conf"

# set_loss P: P % dropped each way on the client's end of each path.
set_loss() {
	netdev_loss "${NS_A}c" "$A_DEV" "$NFT_TABLE" "$1" both
	netdev_loss "${NS_B}c" veth0 "$NFT_TABLE" "$1" both
}

drops() {	# drops NS in|out: frames the loss rule of that chain dropped
	{ ip netns exec "$1" nft list chain netdev "$NFT_TABLE" "$2" 2>/dev/null || true; } |
		awk '/counter packets/ {for (i = 1; i < NF; i++) if ($i == "packets") s += $(i + 1)}
		END {print s + 0}'
}

# one CLIENT_NS URL SIZE_FILE(or -) BOUND -> seconds, or BOUND on failure
one() {
	local ns=$1 url=$2 body=$3 bound=$4 r
	if [ "$body" = - ]; then
		r=$(ip netns exec "$ns" taskset -c 0 curl -sS -m "$bound" -o /dev/null \
			-w '%{http_code} %{size_download} %{time_total}' "$url" 2>/dev/null || true)
	else
		r=$(ip netns exec "$ns" taskset -c 0 curl -sS -m "$bound" -o /dev/null \
			-H 'Expect:' --data-binary "@$body" \
			-w '%{http_code} %{size_download} %{time_total}' "$url" 2>/dev/null || true)
	fi
	awk -v r="$r" -v want="$5" -v bound="$bound" 'BEGIN {
		split(r, f, " "); print ((f[1] == 200 && f[2] == want) ? f[3] : bound) }'
}

# series CLIENT_NS BASE_URL KIND SIZE: median seconds of N transfers
series() {
	local ns=$1 base=$2 kind=$3 size=$4 bytes bound
	bytes=$(stat -c %s "$WWW/$size.bin")
	bound=$(( bytes >> 20 > 8 ? 600 : bytes >> 20 > 1 ? 120 : 60 ))
	for _ in $(seq "$N"); do
		if [ "$kind" = download ]; then
			one "$ns" "$base/$size.bin" - "$bound" "$bytes"
		else
			one "$ns" "$base" "$WWW/$size.bin" "$bound" "$bytes"
		fi
		echo
	done | median 5
}

tcp_counters() {	# ewykd's /ewyk/tcp as "name value" lines
	echo /ewyk/tcp | /usr/bin/python3 /usr/bin/dpdk-telemetry.py -f "$NS_A" 2>/dev/null |
		/usr/bin/python3 -c 'import json, sys
d = json.loads(sys.stdin.read())["/ewyk/tcp"]
for k, v in d.items():
    print(k, v)'
}

linux_tcpext() {	# linux_tcpext NAME: a TcpExt counter of the server's namespace
	ip netns exec "$NS_B" awk -v want="$1" '/^TcpExt:/ {if (!h) {split($0, k); h = 1}
		else {for (i = 2; i <= NF; i++) if (k[i] == want) print $i}}' \
		/proc/net/netstat
}

COUNTERS="timeouts_count rack_losses_count tail_loss_probes_count tlp_recoveries_count
lost_retransmits_count spurious_retransmits_count sack_recoveries_count retransmits_count
dsack_undos_count eifel_undos_count loss_undos_count frto_undos_count hystart_exits_count
bbr_full_bw_count bbr_probe_rtts_count pacing_waits_count rcv_buf_grows_count
rcvq_dropped_count rwnd_limited_us zero_window_us"

# sizes LOSS: the transfers' sizes at that loss level
sizes() {
	local s="1m 8m" b
	for b in $BIG_LOSSES; do if [ "$b" = "$1" ]; then s+=" 100m"; fi; done
	echo "$s"
}

TABLE=""
declare -A before
for cc in $CCS; do
	start_ewykd "$cc"
	cc_route "$NS_B" veth1 "$cc"
	cc_route "${NS_B}c" veth0 "$cc"
	sleep 0.5
	echo "ewyk TCP ($cc, $(ewyk_medium_name "$EWYK_MEDIUM")) vs Linux TCP ($(linux_cc "$cc"), veth)"
	echo "under random loss each way; median of $N transfers each, seconds (a failed"
	echo "transfer counts as its bound); ratio = ewykd / Linux"
	printf '%-6s %-6s %-14s %9s %9s %7s\n' cc loss transfer ewykd Linux ratio
	for loss in $LOSSES; do
		set_loss "$loss"
		while read -r k v; do before[$k]=$v; done < <(tcp_counters)
		lt0=$(linux_tcpext TCPTimeouts)
		lp0=$(linux_tcpext TCPLossProbes)
		for kind in download upload; do
			for size in $(sizes "$loss"); do
				if [ "$kind" = download ]; then
					in_group "$WWW/.a" series "${NS_A}c" http://198.18.0.2 download "$size"
					in_group "$WWW/.b" series "${NS_B}c" http://198.18.0.2 download "$size"
				else
					in_group "$WWW/.a" series "${NS_A}c" http://198.18.0.2/echo upload "$size"
					in_group "$WWW/.b" series "${NS_B}c" http://198.18.0.2/echo upload "$size"
				fi
				a=$(cat "$WWW/.a")
				b=$(cat "$WWW/.b")
				row=$(printf '%-6s %-6s %-14s %9s %9s %7s' "$cc" "$loss %" \
					"$kind $(echo "$size" | tr m M)B" "$a" "$b" \
					"$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.2f", (b > 0) ? a / b : 0}')")
				echo "$row"
				TABLE+="$row"$'\n'
			done
		done
		lost_out=$(drops "${NS_A}c" in)	# frames from ewykd dropped
		lost_in=$(drops "${NS_A}c" out)	# frames to ewykd dropped
		printf '  ewykd at %s %%: frames dropped from it %s, to it %s;' "$loss" "$lost_out" "$lost_in"
		declare -A after=()
		while read -r k v; do after[$k]=$v; done < <(tcp_counters)
		for k in $COUNTERS; do
			d=$(( ${after[$k]:-0} - ${before[$k]:-0} ))
			if [ "$d" -ne 0 ]; then printf ' %s %s' "${k%_count}" "$d"; fi
		done
		to=$(( ${after[timeouts_count]:-0} - ${before[timeouts_count]:-0} ))
		printf '; RTOs per 100 frames lost from it %s\n' \
			"$(awk -v t="$to" -v l="$lost_out" 'BEGIN {printf "%.2f", l ? 100 * t / l : 0}')"
		printf '  Linux at %s %%: TCPTimeouts %s, TCPLossProbes %s, frames dropped from it %s, to it %s\n' \
			"$loss" $(( $(linux_tcpext TCPTimeouts) - lt0 )) $(( $(linux_tcpext TCPLossProbes) - lp0 )) \
			"$(drops "${NS_B}c" in)" "$(drops "${NS_B}c" out)"
	done
	set_loss 0
	ewyk_ns_stop "$NS_A" || true
done
echo
echo "ewykd on $(ewyk_medium_name "$EWYK_MEDIUM") vs Linux with the same congestion control,"
echo "medians of $N, seconds:"
printf '%-6s %-6s %-14s %9s %9s %7s\n' cc loss transfer ewykd Linux ratio
printf '%s' "$TABLE"
for cc in $CCS; do
	printf '%s' "$TABLE" | awk -v cc="$cc" '$1 == cc && $2 + 0 > 0 && ($5 == "1MB" || $5 == "8MB") {
		n++; if ($NF <= 1.5) ok++ }
		$1 == cc && $2 + 0 == 0 && $4 == "upload" && $5 == "1MB" { up = $NF }
		END { printf "%s: within 1.5x of Linux at 1-10 %% loss, 1 and 8 MB: %d of %d", cc, ok, n
		      if (up != "") printf "; 1 MB upload without loss: %s (goal 1.2)", up
		      printf "\n" }'
done
