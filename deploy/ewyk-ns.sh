# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# Sourced by deploy/demo.sh and app/bench/*.sh (from the project's root):
# ewykd in a namespace of its own on the medium $EWYK_MEDIUM, and a veth
# namespace for kernel servers, both with the contract's addresses
# (198.18.0.2 serves, 198.18.0.1 is the client; for IPv6 2001:2::2 and
# 2001:2::1, the client's without duplicate address detection). Removing
# what they create stays the caller's job, in its EXIT trap.
#
# EWYKD: the binary (default ./build/app/ewykd).
# EWYK_MEDIUM (default: ewyk_medium_default, af_xdp where the kernel can):
#   tap     net_tap; the client is the tap's kernel side, in ewykd's namespace
#   af_xdp  net_af_xdp on a veth end (copy mode, one queue); the client on
#           the other end, in namespace NSc, its TX checksum offload off
#   memif   net_memif (ewykd the server, socket /run/NS/memif.sock) and
#           dpdk-testpmd as the wire (io forwarding) to a net_tap whose
#           kernel side is the client, in NSc; the wire busy-polls CPU
#           $EWYK_WIRE_CPU (default 0)
# EWYK_MTU (af_xdp, and veth_ns): the veth pair's MTU (default 1500); give
#   ewykd the same --mtu. net_af_xdp takes up to about 3.5 KB.

# ewyk_medium_default: af_xdp where this kernel gives AF_XDP sockets and
# veth pairs and DPDK has the PMD, else tap.
ewyk_medium_default() {
	local probe="ewyk-probe-$$"

	if ! ls /usr/lib/*/dpdk/pmds-*/librte_net_af_xdp.so >/dev/null 2>&1 ||
	   ! /usr/bin/python3 -c 'import socket; socket.socket(44, socket.SOCK_RAW).close()' \
		2>/dev/null; then	# 44: AF_XDP
		echo tap
		return
	fi
	if ip netns add "$probe" 2>/dev/null &&
	   ip -n "$probe" link add p0 type veth peer name p1 2>/dev/null; then
		echo af_xdp
	else
		echo tap
	fi
	ip netns del "$probe" 2>/dev/null || true
}

# ewyk_medium_name MEDIUM: how a figure names it.
ewyk_medium_name() {
	case "$1" in
	tap) echo "net_tap" ;;
	af_xdp) echo "net_af_xdp (veth, copy mode)" ;;
	memif) echo "net_memif (testpmd wire to a tap)" ;;
	esac
}

# ewyk_ns_start NS LOG [EAL options...] -- [ewykd options...]
# Starts ewykd in a new namespace NS on $EWYK_MEDIUM (chosen and exported
# if unset; on CPU $EWYK_CPU if set), waits until it serves and gives the
# client side 198.18.0.1/24 and 2001:2::1/64 (give ewykd --ip6
# 2001:2::2/64 for IPv6). Sets EWYKD_PID, EWYK_WIRE_PID (memif) and
# EWYK_CLIENT_NS, the namespace to run clients in. On failure prints the
# log and returns 1.
ewyk_ns_start() {
	local ns=$1 log=$2 pin=() eal=() launcher=() vdev
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		eal+=("$1")
		shift
	done
	shift
	: "${EWYK_MEDIUM:=$(ewyk_medium_default)}"
	export EWYK_MEDIUM
	[ -n "${EWYK_CPU:-}" ] && pin=(taskset -c "$EWYK_CPU")
	: >"$log"
	ip netns add "$ns"
	EWYK_CLIENT_NS=$ns
	case "$EWYK_MEDIUM" in
	tap)
		vdev=net_tap0,iface=ewyk0 ;;
	af_xdp)
		EWYK_CLIENT_NS=${ns}c
		ip netns add "$EWYK_CLIENT_NS"
		ip -n "$ns" link add ewyk0 mtu "${EWYK_MTU:-1500}" type veth peer \
			name ewyk0 mtu "${EWYK_MTU:-1500}" netns "$EWYK_CLIENT_NS"
		ip -n "$ns" link set ewyk0 up
		ip netns exec "$EWYK_CLIENT_NS" ethtool -K ewyk0 tx off >/dev/null
		launcher=(./deploy/with-bpffs.sh)
		vdev=net_af_xdp0,iface=ewyk0,start_queue=0,queue_count=1 ;;
	memif)
		EWYK_CLIENT_NS=${ns}c
		ip netns add "$EWYK_CLIENT_NS"
		mkdir -p "/run/$ns"
		vdev=net_memif0,role=server,socket=/run/$ns/memif.sock,socket-abstract=no ;;
	*)
		echo "EWYK_MEDIUM=$EWYK_MEDIUM: tap, af_xdp or memif" >&2
		return 1 ;;
	esac
	# shellcheck disable=SC2046
	ip netns exec "$ns" "${pin[@]}" "${launcher[@]}" "${EWYKD:-./build/app/ewykd}" "${eal[@]}" \
		--no-pci --vdev "$vdev" --file-prefix "$ns" --log-level '*:warning' \
		$(./deploy/eal-mem.sh 512) -- "$@" >"$log" 2>&1 &
	EWYKD_PID=$!
	ewyk_wait_for serving "$log" "$EWYKD_PID" ewykd || return 1
	if [ "$EWYK_MEDIUM" = memif ]; then
		local cpu=${EWYK_WIRE_CPU:-0}
		# shellcheck disable=SC2046
		ip netns exec "$EWYK_CLIENT_NS" dpdk-testpmd --lcores "0@$cpu,1@$cpu" --no-pci \
			--file-prefix "${ns}w" --log-level '*:warning' $(./deploy/eal-mem.sh 128) \
			--vdev net_tap0,iface=ewyk0 \
			--vdev "net_memif0,role=client,socket=/run/$ns/memif.sock,socket-abstract=no" \
			-- --forward-mode=io --auto-start --no-lsc-interrupt --total-num-mbufs 8192 \
			--stats-period 3600 </dev/null >"$log.wire" 2>&1 &
		EWYK_WIRE_PID=$!
		EWYK_WIRE_LOG=$log.wire
		ewyk_wait_for "io packet forwarding" "$EWYK_WIRE_LOG" "$EWYK_WIRE_PID" dpdk-testpmd ||
			return 1
	fi
	if [ "$EWYK_MEDIUM" = tap ]; then
		# net_tap gives the kernel's side the port's MAC, and so its
		# link-local address: both sides' duplicate address detection
		# would find the other. The kernel's side takes another MAC, and
		# the link goes down and up for both to probe again.
		ip -n "$ns" link set ewyk0 address 02:00:00:00:00:fe
		ip -n "$ns" -6 addr flush dev ewyk0 scope link
		ip -n "$ns" link set ewyk0 down
		sleep 0.3	# ewykd looks at its link every 100 ms
	fi
	ip -n "$EWYK_CLIENT_NS" addr add 198.18.0.1/24 dev ewyk0
	ip -n "$EWYK_CLIENT_NS" addr add 2001:2::1/64 dev ewyk0 nodad
	ip -n "$EWYK_CLIENT_NS" link set ewyk0 up
	ip -n "$EWYK_CLIENT_NS" link set lo up
	ip -n "$ns" link set lo up
}

# ewyk_bridged_client NS CLIENT_NS: after ewyk_ns_start NS, moves the
# client one namespace further out, to CLIENT_NS (new; removing it is the
# caller's job), behind a bridge in the medium's client namespace: its
# ewyk0 and vb are the bridge's ports, vc (198.18.0.1/24) in CLIENT_NS the
# client. Frames between them are forwarded, so an nftables netdev
# ingress rule on vb (towards ewykd) or vc (towards the client) really
# loses them: neither stack learns of it but by TCP. Offloads are off on
# the pair: segments MTU-sized, checksums whole (af_xdp takes no partial
# ones). Sets EWYK_BRIDGE_NS (the bridge's namespace) and EWYK_CLIENT_NS.
ewyk_bridged_client() {
	local br=$EWYK_CLIENT_NS cl=$2 ns dev

	ip -n "$br" addr flush dev ewyk0
	# net_tap gives the kernel's side the port's own MAC; a bridge would
	# take frames to it as its own.
	ip -n "$br" link set ewyk0 address 02:00:00:00:00:fe
	ip -n "$br" link add br0 type bridge
	ip -n "$br" link set ewyk0 master br0
	ip netns add "$cl"
	ip -n "$br" link add vb type veth peer name vc netns "$cl"
	ip -n "$br" link set vb master br0
	ip -n "$br" link set br0 up
	ip -n "$br" link set vb up
	ip -n "$cl" addr add 198.18.0.1/24 dev vc
	ip -n "$cl" link set vc up
	ip -n "$cl" link set lo up
	for ns_dev in "$br vb" "$cl vc"; do
		read -r ns dev <<<"$ns_dev"
		ip netns exec "$ns" ethtool -K "$dev" tx off tso off gso off gro off \
			>/dev/null 2>&1 || true
	done
	EWYK_BRIDGE_NS=$br
	EWYK_CLIENT_NS=$cl
}

# netdev_loss NS DEV TABLE PERCENT in|both: PERCENT % of the IPv4 frames
# DEV receives (and, with both, sends) dropped at random by an nftables
# netdev table TABLE in NS (counted: chains "in" and "out"); 0 removes it.
netdev_loss() {
	local ns=$1 dev=$2 table=$3 pct=$4 out=""
	ip netns exec "$ns" nft delete table netdev "$table" 2>/dev/null || true
	[ "$pct" -eq 0 ] && return 0
	[ "$5" = both ] && out="
	chain out {
		type filter hook egress device \"$dev\" priority 0; policy accept;
		ether type ip numgen random mod 100 < $pct counter drop
	}"
	ip netns exec "$ns" nft -f - <<NFT
table netdev $table {
	chain in {
		type filter hook ingress device "$dev" priority 0; policy accept;
		ether type ip numgen random mod 100 < $pct counter drop
	}$out
}
NFT
}

# ewyk_wait_for TEXT LOG PID WHAT: waits up to 20 s for TEXT in LOG while
# PID lives; else prints LOG and returns 1.
ewyk_wait_for() {
	for _ in $(seq 200); do
		grep -q "$1" "$2" && return 0
		kill -0 "$3" 2>/dev/null || break
		sleep 0.1
	done
	cat "$2" >&2
	echo "$4 did not start" >&2
	return 1
}

# ewyk_ns_stop NS: the memif wire stopped first (a 22.11 memif client may
# crash when its server leaves while it forwards; ewykd takes its client's
# leaving in its stride), SIGTERM to ewykd, its status returned; NS, its
# client namespace and run directories removed.
ewyk_ns_stop() {
	local status=0

	if [ -n "${EWYK_WIRE_PID:-}" ]; then
		kill -INT "$EWYK_WIRE_PID" 2>/dev/null
		wait "$EWYK_WIRE_PID" 2>/dev/null || true
		EWYK_WIRE_PID=""
	fi
	if [ -n "${EWYKD_PID:-}" ]; then
		kill -TERM "$EWYKD_PID" 2>/dev/null
		wait "$EWYKD_PID" || status=$?
		EWYKD_PID=""
	fi
	ip netns del "$1" 2>/dev/null || true
	ip netns del "${1}c" 2>/dev/null || true
	rm -rf "/var/run/dpdk/$1" "/var/run/dpdk/${1}w" "/run/$1" "${EWYK_WIRE_LOG:-}"
	return "$status"
}

# veth_ns NS: a server namespace NS (198.18.0.2) and a client namespace
# NSc (198.18.0.1) joined by a veth pair, for a kernel server measured
# with the same addresses as ewykd. Two namespaces, so that traffic really
# crosses the pair instead of the loopback of one stack.
veth_ns() {
	ip netns add "$1"
	ip netns add "${1}c"
	ip -n "$1" link add veth1 mtu "${EWYK_MTU:-1500}" type veth peer name veth0 \
		mtu "${EWYK_MTU:-1500}" netns "${1}c"
	ip -n "$1" addr add 198.18.0.2/24 dev veth1
	ip -n "${1}c" addr add 198.18.0.1/24 dev veth0
	ip -n "$1" link set veth1 up
	ip -n "$1" link set lo up
	ip -n "${1}c" link set veth0 up
	ip -n "${1}c" link set lo up
}

# veth_ns_del NS: removes both namespaces of veth_ns.
veth_ns_del() {
	ip netns del "$1" 2>/dev/null || true
	ip netns del "${1}c" 2>/dev/null || true
}
