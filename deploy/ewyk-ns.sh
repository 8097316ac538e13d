# SPDX-License-Identifier: BSD-3-Clause
# Sourced by deploy/demo.sh and app/bench/*.sh (from the project's root):
# ewykd on net_tap in a namespace of its own, and a veth namespace for
# kernel servers, both with the contract's addresses (198.18.0.2 serves,
# 198.18.0.1 is the client). Removing what they create stays the caller's
# job, in its EXIT trap.

# ewyk_ns_start NS LOG [EAL options...] -- [ewykd options...]
# Starts ewykd in a new namespace NS (on CPU $EWYK_CPU if set), waits until
# it serves and gives the kernel side of its tap 198.18.0.1/24. Sets
# EWYKD_PID. On failure prints the log and returns 1.
ewyk_ns_start() {
	local ns=$1 log=$2 pin=()
	local eal=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		eal+=("$1")
		shift
	done
	shift
	[ -n "${EWYK_CPU:-}" ] && pin=(taskset -c "$EWYK_CPU")
	: >"$log"
	ip netns add "$ns"
	# shellcheck disable=SC2046
	ip netns exec "$ns" "${pin[@]}" ./build/app/ewykd "${eal[@]}" --no-pci \
		--vdev net_tap0,iface=ewyk0 --file-prefix "$ns" --log-level '*:warning' \
		$(./deploy/eal-mem.sh 512) -- "$@" >"$log" 2>&1 &
	EWYKD_PID=$!
	for _ in $(seq 200); do
		grep -q serving "$log" && break
		kill -0 "$EWYKD_PID" 2>/dev/null || break
		sleep 0.1
	done
	if ! grep -q serving "$log"; then
		cat "$log" >&2
		echo "ewykd did not start" >&2
		return 1
	fi
	ip -n "$ns" addr add 198.18.0.1/24 dev ewyk0
	ip -n "$ns" link set ewyk0 up
	ip -n "$ns" link set lo up
}

# ewyk_ns_stop NS: SIGTERM to ewykd, its status returned; NS removed.
ewyk_ns_stop() {
	local status=0

	if [ -n "${EWYKD_PID:-}" ]; then
		kill -TERM "$EWYKD_PID" 2>/dev/null
		wait "$EWYKD_PID" || status=$?
		EWYKD_PID=""
	fi
	ip netns del "$1" 2>/dev/null || true
	rm -rf "/var/run/dpdk/$1"
	return "$status"
}

# veth_ns NS: a server namespace NS (198.18.0.2) and a client namespace
# NSc (198.18.0.1) joined by a veth pair, for a kernel server measured
# with the same addresses as ewykd. Two namespaces, so that traffic really
# crosses the pair instead of the loopback of one stack.
veth_ns() {
	ip netns add "$1"
	ip netns add "${1}c"
	ip -n "$1" link add veth1 type veth peer name veth0 netns "${1}c"
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
