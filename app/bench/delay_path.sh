# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# Sourced by tests and benchmarks (from the project's root): a path of
# tens of milliseconds, with loss and a bottleneck if asked, between a
# client namespace and a server, the same for a kernel server and for
# ewykd, on kernels without netem. ewyk-delay (build/app/ewyk-delay)
# bridges two interfaces of a namespace of its own:
#
#   CLIENT_NS              DELAY_NS                      server side
#   ewyk0 198.18.0.1/24 -- dc [ewyk-delay] ds ---------- ewyk0 198.18.0.2/24
#         2001:2::1/64                                   2001:2::2/64
#                                                        in SERVER_NS (veth)
#                                 or SERVER_IFACE -----> ewykd (tap, ...)
#
# delay_path_up DELAY_NS CLIENT_NS SERVER_NS SERVER_IFACE DELAY_MS LOSS_PCT
#               RATE_MBIT [SEED [EWYK_DELAY_OPTION...]]
#   DELAY_NS and CLIENT_NS are created (neither may exist). CLIENT_NS
#   gets a veth ewyk0, 198.18.0.1/24 and 2001:2::1/64 (nodad), its peer dc
#   in DELAY_NS. The server side:
#   - SERVER_IFACE "veth": a kernel server's namespace. SERVER_NS is
#     created, with a veth ewyk0, 198.18.0.2/24 and 2001:2::2/64 (nodad),
#     its peer ds in DELAY_NS; start the server in SERVER_NS.
#   - any other name: SERVER_NS exists (the caller's) and its interface
#     SERVER_IFACE leads to the server; it is moved into DELAY_NS, its
#     addresses gone. For ewykd on net_tap (ewyk_ns_start NS with
#     EWYK_MEDIUM=tap): SERVER_NS NS, SERVER_IFACE ewyk0, the tap's kernel
#     side (net_tap reads and writes it by its file descriptor wherever
#     it is; it asks for the link's state by name in its own namespace,
#     so ewykd sees the link down, which changes nothing for ewykd). For
#     af_xdp: SERVER_NS NSc, SERVER_IFACE ewyk0, the veth's client end
#     (memif's wire tap in NSc should do the same; not tried).
#     delay_path_down moves it back before it removes DELAY_NS.
#   ewyk-delay then runs in DELAY_NS with --a dc --b ds|SERVER_IFACE
#   --delay-ms DELAY_MS (one way: the RTT is twice that) --loss LOSS_PCT
#   (each direction) --rate RATE_MBIT (each direction; 0 unlimited) --seed
#   SEED (default 1) and the options after SEED (--queue BYTES, --frames
#   N). Returns once it forwards; on failure prints its log and returns 1
#   (what was made stays for delay_path_down).
#   TSO, GSO, GRO and TX checksum offload are off on every veth end, so
#   that frames are MTU-sized and whole; DELAY_NS has IPv6 off and no
#   address, so that it sends nothing of its own.
#   The namespaces of kernel ends it makes (CLIENT_NS, and SERVER_NS for
#   "veth") have TCP receive buffers that start at tcp_rmem's maximum
#   rather than its default (128 KB): see _delay_path_rcvbuf.
#   Sets DELAY_PATH_PID (ewyk-delay), DELAY_PATH_NS, DELAY_PATH_CLIENT_NS,
#   DELAY_PATH_SERVER_NS, DELAY_PATH_LOG (its output) and
#   DELAY_PATH_STATS (its counters: one line a direction, a>b from the
#   client, b>a from the server; see ewyk-delay --help).
# delay_path_counters: the counters as of now (SIGUSR1), on stdout.
# delay_path_stop: SIGTERM to ewyk-delay, by its pid; returns its status
#   (0 when it stopped cleanly); the counters stay in DELAY_PATH_STATS.
# delay_path_down: stops ewyk-delay, moves an adopted interface back,
#   removes the namespaces delay_path_up created and its files. Safe to
#   call at any point, more than once: call it from the EXIT trap.
# One path at a time per shell (the state is in these variables): to put
# ewykd and a kernel server behind the same path, bring it up, measure and
# take it down for each in turn.
#
# EWYK_DELAY: the binary (default ./build/app/ewyk-delay).
# EWYK_DELAY_CPU: the CPU to run ewyk-delay on (default: any).
# EWYK_MTU: the veths' MTU (default 1500).

. deploy/ewyk-ns.sh	# ewyk_wait_for

DELAY_PATH_PID=""
DELAY_PATH_NS=""
DELAY_PATH_CLIENT_NS=""
DELAY_PATH_SERVER_NS=""
DELAY_PATH_LOG=""
DELAY_PATH_STATS=""
_delay_path_made=()		# namespaces delay_path_up created
_delay_path_adopted=""		# "IFACE HOME_NS" moved into DELAY_NS
_delay_path_dir=""

# _delay_path_quiet NS DEV: offloads off (MTU-sized, whole frames), up.
_delay_path_quiet() {
	ip netns exec "$1" ethtool -K "$2" tx off tso off gso off gro off \
		>/dev/null 2>&1 || true
	ip -n "$1" link set "$2" up
}

# _delay_path_ns NS: a new namespace, recorded for delay_path_down.
_delay_path_ns() {
	ip netns add "$1" || return 1
	_delay_path_made+=("$1")
	ip -n "$1" link set lo up
}

# _delay_path_rcvbuf NS: TCP receive buffers in NS start at tcp_rmem's
# maximum. A kernel receiver's window otherwise opens only as far as its
# autotuning grows the buffer from tcp_rmem's default, and Linux 6.18's
# autotuning takes what the reader consumed in the last round trip less
# what still waits in its queue. A sender held to the window sends each
# round as one burst, which the medium delivers within a fraction of a
# millisecond: a reader that first reads a round once it is all in (curl,
# woken after the burst) is measured at one segment a round trip, and the
# buffer never grows again: 80 KB of window (1.5 MB/s at 50 ms), or the
# little more it had grown before, for the whole transfer, whatever the
# server. Memory is only charged as it is used.
_delay_path_rcvbuf() {
	local min max

	read -r min _ max < <(ip netns exec "$1" sysctl -n net.ipv4.tcp_rmem) ||
		return 1
	ip netns exec "$1" sysctl -qw net.ipv4.tcp_rmem="$min $max $max" >/dev/null
}

# _delay_path_veth NS DEV ADDR4 ADDR6: a veth from DELAY_NS's DEV to
# ewyk0 in NS (both ends' MTU $EWYK_MTU), with the addresses.
_delay_path_veth() {
	local ns=$1 dev=$2 mtu=${EWYK_MTU:-1500}

	ip -n "$DELAY_PATH_NS" link add "$dev" mtu "$mtu" type veth peer \
		name ewyk0 mtu "$mtu" netns "$ns" || return 1
	ip -n "$ns" addr add "$3" dev ewyk0
	ip -n "$ns" addr add "$4" dev ewyk0 nodad
	_delay_path_quiet "$ns" ewyk0
	_delay_path_quiet "$DELAY_PATH_NS" "$dev"
}

# _delay_path_adopt NS IFACE: the server's interface into DELAY_NS.
_delay_path_adopt() {
	ip -n "$1" link set "$2" netns "$DELAY_PATH_NS" || return 1
	_delay_path_adopted="$2 $1"
	ip -n "$DELAY_PATH_NS" addr flush dev "$2"
	_delay_path_quiet "$DELAY_PATH_NS" "$2"
}

delay_path_up() {
	local dns=$1 cns=$2 sns=$3 sif=$4 delay=$5 loss=$6 rate=$7 seed=${8:-1}
	local b=ds pin=()

	shift $(($# < 8 ? $# : 8))
	[ -n "${EWYK_DELAY_CPU:-}" ] && pin=(taskset -c "$EWYK_DELAY_CPU")
	DELAY_PATH_NS=$dns
	# shellcheck disable=SC2034	# for the caller
	DELAY_PATH_CLIENT_NS=$cns
	# shellcheck disable=SC2034
	DELAY_PATH_SERVER_NS=$sns
	_delay_path_dir=$(mktemp -d /tmp/ewyk-delay-path.XXXXXX) || return 1
	DELAY_PATH_LOG=$_delay_path_dir/ewyk-delay.log
	DELAY_PATH_STATS=$_delay_path_dir/stats
	_delay_path_ns "$dns" || return 1
	# Silent: no router solicitations, MLD or DAD of its own on the path.
	ip netns exec "$dns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
		net.ipv6.conf.default.disable_ipv6=1 >/dev/null
	_delay_path_ns "$cns" || return 1
	_delay_path_rcvbuf "$cns" || return 1
	_delay_path_veth "$cns" dc 198.18.0.1/24 2001:2::1/64 || return 1
	if [ "$sif" = veth ]; then
		_delay_path_ns "$sns" || return 1
		_delay_path_rcvbuf "$sns" || return 1
		_delay_path_veth "$sns" ds 198.18.0.2/24 2001:2::2/64 || return 1
	else
		_delay_path_adopt "$sns" "$sif" || return 1
		b=$sif
	fi
	ip netns exec "$dns" "${pin[@]}" "${EWYK_DELAY:-./build/app/ewyk-delay}" \
		--a dc --b "$b" --delay-ms "$delay" --loss "$loss" --rate "$rate" \
		--seed "$seed" --stats "$DELAY_PATH_STATS" "$@" \
		</dev/null >"$DELAY_PATH_LOG" 2>&1 &
	DELAY_PATH_PID=$!
	ewyk_wait_for forwarding "$DELAY_PATH_LOG" "$DELAY_PATH_PID" ewyk-delay
}

delay_path_counters() {
	[ -n "$DELAY_PATH_PID" ] || return 1
	rm -f "$DELAY_PATH_STATS"
	kill -USR1 "$DELAY_PATH_PID" || return 1
	for _ in $(seq 50); do
		[ -s "$DELAY_PATH_STATS" ] && cat "$DELAY_PATH_STATS" && return 0
		sleep 0.02
	done
	return 1
}

delay_path_stop() {
	local status=0

	[ -n "$DELAY_PATH_PID" ] || return 0
	kill -TERM "$DELAY_PATH_PID" 2>/dev/null
	for _ in $(seq 100); do		# it stops at once; SIGKILL after 5 s
		kill -0 "$DELAY_PATH_PID" 2>/dev/null || break
		sleep 0.05
	done
	kill -KILL "$DELAY_PATH_PID" 2>/dev/null || true
	wait "$DELAY_PATH_PID" 2>/dev/null || status=$?
	DELAY_PATH_PID=""
	return "$status"
}

delay_path_down() {
	local ns dev home

	delay_path_stop || true
	if [ -n "$_delay_path_adopted" ]; then
		read -r dev home <<<"$_delay_path_adopted"
		# home may be gone already (its owner stopped first)
		ip -n "$DELAY_PATH_NS" link set "$dev" netns "$home" 2>/dev/null || true
		_delay_path_adopted=""
	fi
	for ns in "${_delay_path_made[@]}"; do
		ip netns del "$ns" 2>/dev/null || true
	done
	_delay_path_made=()
	[ -n "$_delay_path_dir" ] && rm -rf "$_delay_path_dir"
	_delay_path_dir=""
}
