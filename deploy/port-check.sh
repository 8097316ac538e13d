#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Does a port give ewykd what it needs? Runs dpdk-testpmd on it with
# pktgen-scripts/testpmd/port-check.cmd and answers yes or no per need:
# link up, queue pairs for the shards, RSS over the TCP 4-tuple (each
# connection on one shard), IPv4/TCP checksum offloads; then the EAL and
# ewykd options that fit the port.
#
# Usage: port-check.sh [--shards N] PORT-OR-VDEV
#   PORT-OR-VDEV  a PCI address (0000:01:00.0 or 01:00.0) bound to a DPDK
#                 driver (deploy/bind.sh) or left on mlx5_core, or a vdev
#                 (net_tap0,iface=x  net_memif0,role=server,socket=/run/x.sock
#                 net_af_xdp0,iface=eth1 ...), probed in this namespace.
#   --shards N    shards wanted (default: CPUs - 1, at least 1)
# Exit status: 0 every need met, 1 some need not met, 2 bad argument or a
# port that cannot be opened, 3 dpdk-testpmd failed. Stop ewykd on the port
# first: a port has one owner.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CMD_FILE=${PORT_CHECK_CMD:-$HERE/../pktgen-scripts/testpmd/port-check.cmd}
TESTPMD=${TESTPMD:-dpdk-testpmd}

usage() {
	echo "usage: port-check.sh [--shards N] PORT-OR-VDEV" >&2
	echo "  a PCI address (0000:01:00.0) or a vdev (net_tap0,iface=x)" >&2
	exit 2
}
fail() {
	echo "port-check: $*" >&2
	exit 2
}

shards=$(( $(nproc) > 1 ? $(nproc) - 1 : 1 ))
port=
while [ $# -gt 0 ]; do
	case $1 in
	--shards)
		[ $# -ge 2 ] || usage
		[[ $2 =~ ^[1-9][0-9]*$ ]] || fail "--shards $2: a number of shards, 1 or more"
		shards=$2
		shift 2 ;;
	-h|--help) usage ;;
	-*) fail "$1: unknown option" ;;
	*)
		[ -z "$port" ] || fail "one port at a time ($port, then $1)"
		port=$1
		shift ;;
	esac
done
[ -n "$port" ] || usage
command -v "$TESTPMD" >/dev/null || fail "$TESTPMD not found (apt-get install dpdk)"
[ -r "$CMD_FILE" ] || fail "$CMD_FILE: missing"

# The port: EAL options to probe it, or a clear refusal.
pci_re='^([0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$'
vdev_re='^net_[a-z0-9_]+[0-9]+(,[^[:space:]]*)?$'
if [[ $port =~ $pci_re ]]; then
	[[ $port == ????:* ]] || port=0000:$port
	port=${port,,}
	dev=/sys/bus/pci/devices/$port
	[ -e "$dev" ] || fail "$port: no such PCI device (lspci -D lists them)"
	driver=$(basename "$(readlink "$dev/driver" 2>/dev/null)" 2>/dev/null)
	case $driver in
	vfio-pci|uio_pci_generic|igb_uio|mlx5_core) ;;	# mlx5: bifurcated
	"") fail "$port: bound to no driver: deploy/bind.sh $port" ;;
	*) fail "$port: on the kernel driver $driver, which DPDK cannot use: deploy/bind.sh $port" ;;
	esac
	eal_port=(-a "$port")
elif [[ $port =~ $vdev_re ]]; then
	eal_port=(--no-pci --vdev "$port")
else
	fail "'$port' is neither a PCI address (0000:01:00.0) nor a vdev (net_tap0,iface=x)"
fi

out=$(mktemp /tmp/port-check.XXXXXX)
trap 'rm -f "$out"' EXIT
prefix=portcheck$$
# Two queues, for testpmd enables RSS only with more than one; one if the
# port has no more.
run_testpmd() {
	timeout 60 "$TESTPMD" -l 0-1 "${eal_port[@]}" --file-prefix "$prefix" \
		--log-level '*:notice' $("$HERE/eal-mem.sh" 64) -- \
		-i --rxq="$1" --txq="$1" --total-num-mbufs=2048 --cmdline-file="$CMD_FILE" \
		</dev/null >"$out" 2>&1
}
run_testpmd 2
rc=$?
if grep -q "can't be greater than max_" "$out"; then
	run_testpmd 1
	rc=$?
fi
if [ $rc -ne 0 ] || ! grep -q "Infos for port 0" "$out"; then
	echo "port-check: dpdk-testpmd could not open $port (status $rc):" >&2
	grep -v '^\s*$' "$out" | tail -n 15 >&2
	exit 3
fi

# --- what testpmd said ---
field() { sed -n "s/^$1: *//p" "$out" | head -n 1; }
# The lines indented under a heading (RSS types, offloads), joined.
block() { awk -v h="$1" 'index($0, h) == 1 { on = 1; next }
	on && /^  / { sub(/^ *(Per (Queue|Port) *:)?/, ""); printf "%s ", $0; next }
	on { exit }' "$out"; }
has() { [[ " $1 " == *" $2 "* ]]; }

name=$(field "Device name")
driver=$(field "Driver name")
link=$(field "Link status")
speed=$(field "Link speed")
max_rxq=$(field "Max possible RX queues")
max_txq=$(field "Max possible TX queues")
max_pkt=$(field "Maximum configurable length of RX packet")
rss_types=$(block "Supported RSS offload flow types:")
rss_applied=$(block "RSS functions:")
rx_offloads=$(block "Rx Offloading Capabilities of port 0")
tx_offloads=$(block "Tx Offloading Capabilities of port 0")

declare -i missing=0
answer() {	# need, yes|no, detail
	printf '  %-32s %-3s  %s\n' "$1" "$2" "$3"
	[ "$2" = yes ] || missing+=1
}

echo "port-check: $port: $name (driver $driver), as dpdk-testpmd sees it"
if [ "$link" = up ]; then
	answer "link up" yes "$speed"
else
	answer "link up" no "link ${link:-unknown}: plug the cable, start the peer (memif: a client on the socket)"
fi
queues=$(( max_rxq < max_txq ? max_rxq : max_txq ))
if [ "$queues" -ge "$shards" ]; then
	answer "queue pairs for $shards shards" yes "$max_rxq RX, $max_txq TX at most"
else
	answer "queue pairs for $shards shards" no "$max_rxq RX, $max_txq TX at most: $queues shards"
fi
if has "$rss_applied" ipv4-tcp; then
	answer "RSS over the TCP 4-tuple" yes "applies: $rss_applied"
elif has "$rss_types" ipv4-tcp; then
	answer "RSS over the TCP 4-tuple" no "ipv4-tcp offered, but the port shows no hash applied"
else
	answer "RSS over the TCP 4-tuple" no "the port offers no TCP hash"
fi
for dir in RX TX; do
	offloads=$rx_offloads
	[ $dir = TX ] && offloads=$tx_offloads
	if has "$offloads" IPV4_CKSUM && has "$offloads" TCP_CKSUM; then
		answer "IPv4/TCP $dir checksum offload" yes ""
	else
		answer "IPv4/TCP $dir checksum offload" no "ewykd computes them in software (more CPU per packet)"
	fi
done

# --- what to run ---
use=$shards
[ "$queues" -lt "$use" ] && use=$queues
# Without RSS, more than one shard only where the medium keeps each flow
# on one queue itself: the kernel's tap queue selection (net_tap: its RSS
# is rte_flow rules only), the NIC's RSS behind an AF_XDP socket.
flow_steered=no
case $driver in net_tap|net_af_xdp) flow_steered=yes ;; esac
has "$rss_applied" ipv4-tcp || [ $flow_steered = yes ] || use=1
mtu=1500
[ -n "$max_pkt" ] && [ "$((max_pkt - 18))" -lt "$mtu" ] && mtu=$((max_pkt - 18))
echo "EAL options:   -l 0-$use ${eal_port[*]} --file-prefix ewyk -m 1024"
echo "ewykd options: --shards $use --mtu $mtu --ip ADDR/PREFIX --www DIR"
if [ "$use" -lt "$shards" ]; then
	if has "$rss_applied" ipv4-tcp || [ $flow_steered = yes ]; then
		echo "note: $use shards, as many as the port has queue pairs"
	else
		echo "note: one shard: without RSS a connection's segments could reach" \
			"another shard than the one that holds it"
	fi
fi
if ! has "$rss_applied" ipv4-tcp && [ $flow_steered = yes ] && [ "$use" -gt 1 ]; then
	echo "note: no RSS, but $driver keeps each flow on one queue: $use shards work"
fi
if [ "$link" != up ]; then
	echo "note: ewykd starts on a port whose link is down, and serves once it comes up"
fi
[ $missing -eq 0 ]
