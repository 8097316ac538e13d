/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One shard's network stack: Ethernet, ARP, IPv4, ICMP, IPv6, ICMPv6,
 * neighbour discovery and TCP over one RX/TX queue pair on each of its
 * ports (as many as NET_MAX_PORTS, each its own interface, addresses and
 * neighbour caches). Only the shard's owner calls
 * into it. Frames come in through net_rx(), tagged with
 * their port; a connection belongs to the port its first segment came
 * by and answers leave by that port only. Frames go out through a TX
 * batch per port that the owner flushes with that port's callback
 * (rte_eth_tx_burst in ewykd, a capture in tests).
 * The stack is opaque: its state is lib/net's own (net_priv.h).
 */
#ifndef EWYK_NET_STACK_H
#define EWYK_NET_STACK_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>

#include "arp_cache.h"
#include "net_addr.h"
#include "net_drop.h"
#include "tcp.h"
#include "timer_wheel.h"

struct net_stack;
struct rte_mbuf;
struct rte_mempool;

#define NET_MAX_PORTS 4
#define NET_MAX_LISTENERS 8	/* TCP ports listened on */
#define NET_MAX_UDP_BINDS 4	/* UDP ports bound */

/* Interface settings, shared read-only by the shards of a port. A port
 * runs IPv4 with an ip, IPv6 with a prefix6 (and then also the link-local
 * address its MAC gives, net_ip6_link_local()), or both. */
#define NET_IP4_ADDRS_MAX 64

struct net_if {
	uint8_t mac[6];
	uint32_t ip;		/* network order; 0: no IPv4 on the port */
	uint32_t netmask;	/* network order */
	/* The port also owns the addresses after ip, ip_count in all (0 or
	 * 1: ip alone; at most NET_IP4_ADDRS_MAX), all in its subnet: a
	 * client's active opens spread over them, for more connections to
	 * one server address and port than one address has local ports. */
	uint16_t ip_count;
	uint8_t ip6[16];	/* the global IPv6 address */
	uint8_t prefix6;	/* its prefix length; 0: no IPv6 on the port */
	/* The next hops for addresses off the port's link (--gateway,
	 * --gateway6): 0, and all zeros, for none. */
	uint32_t gateway;	/* network order, on the port's subnet */
	uint8_t gateway6[16];	/* on its prefix, or link-local */
	uint16_t mtu;
	bool tx_multiseg;	/* the device takes chained mbufs */
	bool tx_any_memory;	/* it reads payloads with the CPU (a virtual
				 * device): an mbuf may point anywhere */
	bool rx_cksum_offload;	/* the device flags L3/L4 checksums */
	bool tx_cksum_offload;	/* the device fills IPv4 and TCP checksums
				 * (TCP's over IPv6 too) */
	/* The device cuts a TCP frame of up to 64 KB into segments (TSO):
	 * over IPv6 too with tso_ipv6; a frame's chain has at most
	 * tso_segs_max mbufs; tso_l2_in_mtu: it counts a segment's
	 * Ethernet header against the MTU. */
	bool tx_tso;
	bool tso_ipv6;
	bool tso_l2_in_mtu;
	uint16_t tso_segs_max;
};

/* The link-local address (fe80::/64) of a MAC: its modified EUI-64
 * (RFC 4291 2.5.1, appendix A). */
void net_ip6_link_local(const uint8_t mac[6], uint8_t out[16]);

/* The multicast MACs a port with IPv6 must receive (RFC 2464 7): the
 * all-nodes group's and the solicited-node groups' of its addresses.
 * Returns how many (at most NET_MC_MACS), 0 without IPv6. */
#define NET_MC_MACS 3
unsigned int net_if_mc_macs(const struct net_if *ifc,
		uint8_t macs[NET_MC_MACS][6]);

/* What a port's IPv6 addresses are (RFC 4862 5.5): tentative while
 * duplicate address detection runs (in use meanwhile, as RFC 4429's
 * optimistic addresses), preferred after it, duplicate if another node
 * had it: then it is not used until the link comes back up and it is
 * probed again. */
enum net_addr_state {
	NET_ADDR_TENTATIVE,
	NET_ADDR_PREFERRED,
	NET_ADDR_DUPLICATE,
};

/* A port's IPv6 state that its shards share: the neighbour cache (the
 * ARP cache's twin) and the duplicate address detection of its global
 * (0) and link-local (1) addresses, run by whichever shard claims each
 * round. */
struct net_nd {
	struct arp_cache cache;
	uint32_t dad_round;	/* rounds asked for: start-up, each link up */
	uint32_t dad_claimed;	/* the last round a shard took on */
	uint64_t dad_nonce;	/* its probes' (RFC 7527): ours looped back */
	uint8_t state[2];	/* enum net_addr_state */
};

void net_nd_init(struct net_nd *nd, uint64_t ttl_ms);
/* The state of a port's address i (0 global, 1 link-local). */
enum net_addr_state net_nd_state(const struct net_nd *nd, unsigned int i);

/* How the port spreads received flows over its queues (RSS): Toeplitz
 * over the IPv4 addresses and TCP ports with this key, the hash's low bits
 * indexing the redirection table. reta_size 0: one queue takes all. An
 * active open picks its local port so that the peer's answers land on the
 * opening shard's queue. */
#define NET_RSS_KEY_MAX 52
#define NET_RSS_RETA_MAX 512

struct net_rss {
	uint16_t reta_size;	/* a power of two, or 0 */
	uint8_t key_len;
	uint8_t key[NET_RSS_KEY_MAX];
	uint16_t reta[NET_RSS_RETA_MAX];
};

/* The queue RSS gives a segment from raddr:rport to laddr:lport
 * (addresses network order, ports host order); 0 with one queue. */
uint16_t net_rss_queue(const struct net_rss *rss, uint32_t raddr,
		uint32_t laddr, uint16_t rport, uint16_t lport);
/* The same over IPv6's 4-tuple (RFC 8200's addresses, 16 bytes each). */
uint16_t net_rss_queue6(const struct net_rss *rss, const uint8_t raddr[16],
		const uint8_t laddr[16], uint16_t rport, uint16_t lport);

/* Congestion control of new connections. */
enum tcp_cc_algo {
	TCP_CC_NEWRENO,		/* RFC 5681, RFC 6582 */
	TCP_CC_CUBIC,		/* RFC 9438 */
	TCP_CC_BBR,		/* BBR v1, as Linux's tcp_bbr.c */
};

struct tcp_config {
	uint32_t max_conns;	/* per shard */
	uint32_t syn_backlog;	/* half-open connections before SYN cookies */
	uint32_t max_time_wait;	/* TIME-WAIT connections kept; more are freed */
	uint32_t mbuf_reserve;	/* free mbufs below which new SYNs are refused */
	uint32_t sndq_mbufs_max; /* mbufs all send queues may hold, 0 = no limit */
	/* The send buffer: bytes a connection may queue, from snd_buf; it
	 * follows twice the congestion window up to snd_buf_max (Linux's
	 * tcp_wmem autotuning; at or below snd_buf: fixed). */
	uint32_t snd_buf;
	uint32_t snd_buf_max;
	/* The scoreboard: entries (segments in flight, or parts of them) a
	 * connection may have, and the shard's pool of them (80 bytes
	 * each, made as needed). */
	uint32_t sb_segs;
	uint32_t sb_nodes;
	/* Writes that lend their bytes (tcp_write_ref()) the shard may have
	 * queued at once (64 bytes each, made as needed); past it they are
	 * copied. */
	uint32_t ext_refs;
	/* Connections that may keep their rings (3 KiB) while they are empty;
	 * past this many taken, an empty one gives them back at once. Below
	 * it, a busy connection does not give them back and take them again
	 * between its answers. */
	uint32_t bufs_keep;
	/* Largest window advertised; our window scale is chosen for the
	 * larger of it and rcv_buf_max, so that a grown buffer is offered
	 * whole. */
	uint32_t rcv_win_max;
	uint32_t rto_min_ms;
	uint32_t rto_init_ms;
	uint32_t rto_max_ms;
	uint32_t delack_ms;	/* at most this long for a delayed ACK */
	uint32_t time_wait_ms;
	uint32_t keepalive_ms;	/* idle time before probing; 0 = off */
	uint32_t keepalive_intvl_ms;
	uint32_t idle_timeout_ms;	/* abort after this long idle; 0 = off */
	uint8_t keepalive_probes;
	uint8_t max_retries;	/* timeouts in a row before giving up */
	uint8_t syn_retries;
	bool syncookies;	/* false: a full backlog drops SYNs */
	/* Receive space of a new connection until the upper layer sets its
	 * own with tcp_set_rcv_space(): what the SYN-ACK offers. */
	uint32_t rcv_space;
	/* The receive buffer: what TCP holds that the upper layer has not
	 * taken yet, beyond the room it pushes. Each connection's starts at
	 * rcv_buf_init and grows with what the upper layer takes per round
	 * trip (Linux's receive buffer autotuning) up to rcv_buf_max, while
	 * the shard's buffers together stay within rcv_buf_budget; an idle
	 * connection's falls back to rcv_buf_init. 0, 0: the window is the
	 * upper layer's room alone. */
	uint32_t rcv_buf_init;
	uint32_t rcv_buf_max;
	uint64_t rcv_buf_budget;
	/* Connections that may hold received segments at once (out of
	 * order, or waiting for the upper layer), a block of 88 bytes each
	 * beside the chunks and runs that keep the segments; 0: a quarter
	 * of max_conns. */
	uint32_t rcvq_max;
	/* The mbufs all receive queues may hold, in order and out of
	 * order; 0 = no limit. Past it (or past a connection's share: twice
	 * the segments its window takes at full size, 256 at least),
	 * out-of-order data above an arriving segment is pruned, the highest
	 * first (ooo_pruned), and what still does not fit is dropped
	 * unacknowledged. */
	uint32_t rcvq_mbufs_max;
	uint8_t cc;		/* enum tcp_cc_algo */
	/* NewReno and CUBIC pace their sending too (BBR always does). */
	bool pacing;
	/* Answers to unacceptable segments (RFC 5961 challenge ACKs, ACKs of
	 * out-of-window segments without data) per second; 0 = no limit. */
	uint32_t challenge_ack_limit;
	/* At most one answer to an unacceptable segment (out of the window,
	 * data or not, or a challenge) per connection per this many ms, as
	 * Linux's tcp_invalid_ratelimit; 0 = no limit. */
	uint32_t invalid_ack_interval_ms;
	uint32_t arp_reply_limit;	/* ARP replies per second; 0 = no limit */
	/* Neighbour advertisements answering solicitations, per second;
	 * 0 = no limit. */
	uint32_t nd_reply_limit;
	/* ICMPv6 errors of our own (Parameter Problem, Port Unreachable)
	 * per second. */
	uint32_t icmp6_error_limit;
	/* ICMP (IPv4) errors of our own (Port Unreachable) per second. */
	uint32_t icmp_error_limit;
};

void tcp_config_defaults(struct tcp_config *cfg);

/* TCP counters in the manner of netstat -s; names are telemetry keys. */
#define TCP_COUNTERS(X) \
	X(active_opens) X(passive_opens) X(attempt_fails) X(estab_resets) \
	X(resets_in) X(resets_out) X(segs_in) X(segs_out) X(retransmits) \
	X(timeouts) X(fast_retransmits) X(sack_recoveries) X(newreno_recoveries) \
	X(ooo_segs) X(ooo_dropped) X(syncookies_sent) X(syncookies_valid) \
	X(syncookies_failed) X(syn_dropped) X(challenge_acks) X(challenge_acks_limited) \
	X(invalid_acks_limited) X(paws_drops) \
	X(delayed_acks) X(quick_acks) X(window_probes) X(keepalive_probes) \
	X(tail_loss_probes) X(lost_retransmits) \
	X(keepalive_timeouts) X(idle_timeouts) X(time_wait_overflow) \
	X(bad_options) X(sack_blocks_in) X(dsacks_in) \
	X(rack_losses) X(tlp_recoveries) X(spurious_retransmits) X(prr_sends) \
	X(arp_requests) X(rss_port_misses) X(sndq_budget_waits) X(sb_full_waits) \
	X(snd_buf_grows) X(zero_copy_mbufs) X(zero_copy_refs_full) \
	X(ip6_passive_opens) X(ip6_active_opens) X(ip6_segs_in) X(ip6_segs_out) \
	X(pmtu_lowered) X(hystart_css_entries) X(hystart_exits) \
	X(dsack_undos) X(eifel_undos) X(loss_undos) X(frto_undos) \
	X(rcv_buf_grows) X(rcv_buf_shrinks) X(rcv_buf_budget_limited) \
	X(rcvq_dropped) X(rcvq_exhausted) X(ooo_pruned) X(pacing_waits) X(bbr_full_bw) X(bbr_probe_rtts) \
	X(bbr_cycles) X(tso_frames) X(tso_odd_chains)

/* Neighbour discovery and ICMPv6, in the same manner. */
/* Neighbour discovery and ICMPv6, with the unit of each (a telemetry
 * key's suffix): solicitations and advertisements in and out, solicitations
 * for our addresses not answered (over nd_reply_limit), solicitations of
 * other addresses (not answered, nothing learned), neighbours learned,
 * DAD probes sent, our addresses found duplicate, other nodes claiming a
 * preferred address of ours, MLD reports, echo requests answered, ICMPv6
 * errors received (Packet Too Big apart), our own errors sent and not
 * sent (over icmp6_error_limit). */
#define ND_COUNTERS(X) \
	X(nd_ns_in, pkts) X(nd_na_in, pkts) X(nd_na_out, pkts) \
	X(nd_ns_out, pkts) X(nd_replies_limited, pkts) \
	X(nd_other_targets, pkts) X(nd_learned, count) \
	X(nd_dad_probes, pkts) X(nd_dad_duplicates, count) \
	X(nd_addr_conflicts, count) X(mld_reports, pkts) X(icmp6_echo, pkts) \
	X(icmp6_errors_in, pkts) X(icmp6_ptb_in, pkts) \
	X(icmp6_errors_out, pkts) X(icmp6_errors_limited, pkts)

struct nd_counters {
#define ND_COUNTER_FIELD(n, unit) uint64_t n;
	ND_COUNTERS(ND_COUNTER_FIELD)
#undef ND_COUNTER_FIELD
};

/* UDP, either family, and IPv4's ICMP errors (each name with its
 * telemetry key's suffix): datagrams handed to a bound port and sent,
 * datagrams not sent for want of the peer's MAC (a solicitation went
 * instead), ICMP Port Unreachables sent over IPv4 and those over the
 * budget (icmp_error_limit; IPv6's count as icmp6_errors_*). */
#define UDP_COUNTERS(X) \
	X(udp_in, dgrams) X(udp_in, bytes) X(udp_out, dgrams) X(udp_out, bytes) \
	X(udp_out_unresolved, dgrams) \
	X(icmp_unreachable_out, pkts) X(icmp_errors_limited, pkts)

struct udp_counters {
#define UDP_COUNTER_FIELD(n, unit) uint64_t n##_##unit;
	UDP_COUNTERS(UDP_COUNTER_FIELD)
#undef UDP_COUNTER_FIELD
};

struct tcp_counters {
#define TCP_COUNTER_FIELD(n) uint64_t n;
	TCP_COUNTERS(TCP_COUNTER_FIELD)
#undef TCP_COUNTER_FIELD
};

/* What one port of one shard received, sent and dropped. */
struct net_port_stats {
	uint64_t rx_pkts;
	uint64_t rx_bytes;
	uint64_t tx_pkts;
	uint64_t tx_bytes;
	uint64_t drop[NET_DROP__COUNT];
};

/* Counters of one shard, written by the owner only, read by telemetry:
 * the shard's totals, then the same split by port. */
struct net_stats {
	uint64_t rx_pkts;
	uint64_t rx_bytes;
	uint64_t tx_pkts;
	uint64_t tx_bytes;
	uint64_t drop[NET_DROP__COUNT];
	uint64_t arp_in;
	uint64_t arp_replies;
	uint64_t arp_other_targets;	/* requests for another address */
	uint64_t arp_replies_limited;	/* requests for ours, over the limit */
	uint64_t icmp_echo;
	uint64_t rx_ip4_pkts;		/* by family, before any check */
	uint64_t rx_ip6_pkts;
	uint64_t tx_ip4_pkts;
	uint64_t tx_ip6_pkts;
	uint64_t tcp_conns_open;	/* gauge, all states */
	uint64_t tcp_conns_open6;	/* gauge: of them, over IPv6 */
	uint64_t tcp_sndq_mbufs;	/* gauge: mbufs the send queues hold */
	uint64_t tcp_rcvq_mbufs;	/* gauge: mbufs the receive queues hold */
	uint64_t tcp_rcv_buf_bytes;	/* gauge: the receive buffers' sizes */
	/* Time, microseconds: our sending held back by the peer's window
	 * with data waiting; our window advertised closed. */
	uint64_t tcp_rwnd_limited_us;
	uint64_t tcp_zero_window_us;
	/* gauges: blocks of connection rings (a send queue's chunks, an
	 * out-of-order queue, a scoreboard) the shard has made, and of them
	 * those connections hold; an idle connection holds none */
	uint64_t tcp_bufs_made;
	uint64_t tcp_bufs_used;
	/* gauges: 1 KiB chunks of send queues' mbuf pointers made (growth
	 * follows the peak of bytes queued), and of them those queues hold */
	uint64_t tcp_sndq_chunks_made;
	uint64_t tcp_sndq_chunks_used;
	uint64_t tcp_sb_entries_made;	/* gauges: the scoreboards' entries */
	uint64_t tcp_sb_entries_used;
	/* gauges: blocks of writes that lend their bytes (tcp_write_ref()),
	 * made and in use: those whose mbufs are still queued or in flight */
	uint64_t tcp_ext_refs_made;
	uint64_t tcp_ext_refs_used;
	/* gauge: bytes the receive queues' pools (their blocks, chunks and
	 * runs) have made: the peak of what they held, never given back */
	uint64_t tcp_rcvq_mem_bytes;
	uint64_t tcp_conns_closed;
	uint64_t tcp_syn_recv;		/* gauge */
	uint64_t tcp_time_wait;		/* gauge */
	struct tcp_counters tcp;
	struct nd_counters nd;
	struct udp_counters udp;
	struct net_port_stats port[NET_MAX_PORTS];
} __rte_cache_aligned;

typedef uint16_t (*net_tx_fn)(void *ctx, struct rte_mbuf **pkts, uint16_t n);

/* Allocates and sets up a stack with its port 0 (start-up only); NULL on
 * failure. */
struct net_stack *net_stack_create(const struct net_if *ifc,
		struct arp_cache *arp, struct rte_mempool *pool,
		const struct tcp_config *cfg, net_tx_fn tx_fn, void *tx_ctx,
		struct net_stats *stats, uint64_t now_ms);
/* Adds the next port (start-up only): its interface, ARP cache and TX.
 * Returns its index, or -1 when the stack has NET_MAX_PORTS already. */
int net_stack_add_port(struct net_stack *ns, const struct net_if *ifc,
		struct arp_cache *arp, net_tx_fn tx_fn, void *tx_ctx);
/* A port's IPv6 state (start-up only, after net_stack_add_port): needed
 * for IPv6 on a port whose ifc has a prefix6; shared by its shards. */
void net_stack_set_nd(struct net_stack *ns, uint8_t port, struct net_nd *nd);
/* Aborts every connection (RST to the peer) and frees the stack. */
void net_stack_destroy(struct net_stack *ns);
/*
 * Listens on a TCP port (host order) of every address of the stack (start-up
 * only): its connections get up with ctx (the cleartext HTTP port goes to
 * the HTTP server, the TLS port to the TLS layer). The SYN backlog, the SYN
 * cookies and the other defences apply to each listener as to one. An
 * active open by tcp_connect() gets the first listener's upcalls, one by
 * tcp_open() its own. 0, or -EEXIST (the port is listened on already) or
 * -ENOSPC (NET_MAX_LISTENERS).
 */
int net_stack_listen(struct net_stack *ns, uint16_t port,
		const struct tcp_upcalls *up, void *ctx);
/*
 * UDP (udp.c). A datagram as it came in, or as it goes out: the stack's
 * port and address on one end, the peer on the other; the ECN bits of
 * its IP header; the payload (valid during the upcall only).
 */
struct net_udp_dgram {
	uint8_t port;
	union net_ip local;
	uint16_t local_port;	/* host order */
	struct net_addr peer;
	uint16_t peer_port;	/* host order */
	uint8_t ecn;		/* IP's ECN field, 0 to 3 */
	const uint8_t *data;
	uint16_t len;
};

/* A datagram for a bound port, on the shard's lcore. */
typedef void (*net_udp_recv_fn)(void *ctx, struct net_stack *ns,
		const struct net_udp_dgram *d);
/* Binds a UDP port (host order) of every address of the stack (start-up
 * only); datagrams to a port not bound are counted (udp_no_port) and
 * answered with ICMP's Port Unreachable within the budget. 0, or -EINVAL,
 * -EEXIST (bound already) or -ENOSPC (NET_MAX_UDP_BINDS). */
int net_udp_bind(struct net_stack *ns, uint16_t port, net_udp_recv_fn recv,
		void *ctx);
/* Sends d's payload from its local end to its peer, whole (never
 * fragmented: IPv4's DF set), with d's ECN bits. 0; -EMSGSIZE past the
 * port's MTU; -EHOSTUNREACH while the peer's MAC is unknown (a
 * solicitation goes out, udp_out_unresolved counts it); -ENOBUFS without
 * an mbuf. */
int net_udp_send(struct net_stack *ns, const struct net_udp_dgram *d);

/* A port's RSS (shared, read-only; NULL: one queue) and this stack's
 * queue on it: where active opens out of that port want their answers. */
void net_stack_set_rss(struct net_stack *ns, uint8_t port,
		const struct net_rss *rss, uint16_t queue);
/* The stack's TCP configuration, as it was created with (read-only):
 * the layers above size what they grant from its receive buffer's
 * ceiling and budget. */
const struct tcp_config *net_stack_tcp_config(const struct net_stack *ns);
/* Draining: new SYNs are answered with RST. */
void net_stack_refuse_new(struct net_stack *ns, bool refuse);
/* The link came back: connections whose retransmission timer backed off
 * while it was down retransmit at the next poll, their back-off undone,
 * instead of waiting out a timer grown to seconds; IPv6 ports detect
 * duplicate addresses again (RFC 4862 5.4) and announce theirs. */
void net_link_up(struct net_stack *ns);

/*
 * The poll entry point: each port's burst (the stack takes the mbufs)
 * through net_rx_us(), then net_timers_us() once. The clock is in
 * microseconds (ewykd's TSC): TCP times its segments, its round trips,
 * RACK's reordering window, its probes and its pacing with it; the
 * timestamp option on the wire stays in milliseconds. It never goes
 * back: an earlier time is taken as the last one.
 */
void net_rx_us(struct net_stack *ns, uint8_t port, struct rte_mbuf **pkts,
		uint16_t n, uint64_t now_us);
/* Advance the clock, run due timers (TCP's, the layers' above, pacing),
 * and let connections the send budget held back go on. */
void net_timers_us(struct net_stack *ns, uint64_t now_us);
/* The same with a clock in milliseconds, for callers without a finer
 * one: RTTs under a millisecond then read as 0 or 1 ms. */
void net_rx(struct net_stack *ns, uint8_t port, struct rte_mbuf **pkts,
		uint16_t n, uint64_t now_ms);
void net_timers(struct net_stack *ns, uint64_t now_ms);
/* Hand the TX batches to the devices. */
void net_flush(struct net_stack *ns);
/* Connections wait for their pacing time: net_timers_us() is wanted
 * again within microseconds, the shard should not sleep. */
bool net_pacing_pending(const struct net_stack *ns);
/* The stack's clock as of the last poll, in milliseconds and in
 * microseconds. */
uint64_t net_now_ms(const struct net_stack *ns);
uint64_t net_now_us(const struct net_stack *ns);

/*
 * A timer of a layer above TCP (HTTP, the request runtime, the upstream
 * client) on the shard's one timer wheel, the one TCP's timers run on: a
 * shard has a single deadline mechanism, advanced by net_timers(). fire
 * runs on the shard's owner, inside net_timers(); it may arm any timer.
 * Intrusive: the caller embeds it, nothing is allocated.
 */
struct net_timer {
	struct tw_timer tw;
	void (*fire)(struct net_timer *t);
};

static inline void
net_timer_init(struct net_timer *t, void (*fire)(struct net_timer *t))
{
	tw_timer_init(&t->tw);
	t->fire = fire;
}

static inline bool
net_timer_armed(const struct net_timer *t)
{
	return tw_is_armed(&t->tw);
}

/* Fires at the first poll at or after at_ms (the stack's clock); arming an
 * armed timer moves it. */
void net_timer_arm(struct net_stack *ns, struct net_timer *t, uint64_t at_ms);
/* Nothing if it is not armed. */
/* Fire at the next net_timers_us(), within the same millisecond: work put
 * off only until the current upcall has returned, with no tick's wait. */
void net_timer_soon(struct net_stack *ns, struct net_timer *t);
void net_timer_cancel(struct net_stack *ns, struct net_timer *t);

#endif /* EWYK_NET_STACK_H */
