/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One shard's network stack: Ethernet, ARP, IPv4, ICMP and TCP over one
 * RX/TX queue pair. Only the shard's owner calls into it. Frames come in
 * through net_poll(); frames go out through a TX batch that the owner
 * flushes with a callback (rte_eth_tx_burst in ewykd, a capture in tests).
 * The stack is opaque: its state is lib/net's own (net_priv.h).
 */
#ifndef EWYK_NET_STACK_H
#define EWYK_NET_STACK_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>

#include "arp_cache.h"
#include "net_drop.h"
#include "tcp.h"

struct net_stack;
struct rte_mbuf;
struct rte_mempool;

/* Interface settings, shared read-only by the shards of a port. */
struct net_if {
	uint8_t mac[6];
	uint32_t ip;		/* network order */
	uint32_t netmask;	/* network order */
	uint16_t mtu;
	bool tx_multiseg;	/* the device takes chained mbufs */
	bool rx_cksum_offload;	/* the device flags L3/L4 checksums */
	bool tx_cksum_offload;	/* the device fills IPv4 and TCP checksums */
};

/* Congestion control of new connections. */
enum tcp_cc_algo {
	TCP_CC_NEWRENO,		/* RFC 5681, RFC 6582 */
	TCP_CC_CUBIC,		/* RFC 9438 */
};

struct tcp_config {
	uint32_t max_conns;	/* per shard */
	uint32_t syn_backlog;	/* half-open connections before SYN cookies */
	uint32_t max_time_wait;	/* TIME-WAIT connections kept; more are freed */
	uint32_t mbuf_reserve;	/* free mbufs below which new SYNs are refused */
	uint32_t sndq_mbufs_max; /* mbufs all send queues may hold, 0 = no limit */
	uint32_t snd_buf;	/* bytes queued per connection */
	uint32_t rcv_win_max;	/* largest window advertised (sets our shift) */
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
	uint16_t listen_port;	/* host order */
	/* Receive space of a new connection until the upper layer sets its
	 * own with tcp_set_rcv_space(): what the SYN-ACK offers. */
	uint32_t rcv_space;
	uint8_t cc;		/* enum tcp_cc_algo */
};

void tcp_config_defaults(struct tcp_config *cfg);

/* TCP counters in the manner of netstat -s; names are telemetry keys. */
#define TCP_COUNTERS(X) \
	X(active_opens) X(passive_opens) X(attempt_fails) X(estab_resets) \
	X(resets_in) X(resets_out) X(segs_in) X(segs_out) X(retransmits) \
	X(timeouts) X(fast_retransmits) X(sack_recoveries) X(newreno_recoveries) \
	X(ooo_segs) X(ooo_dropped) X(syncookies_sent) X(syncookies_valid) \
	X(syncookies_failed) X(syn_dropped) X(challenge_acks) X(paws_drops) \
	X(delayed_acks) X(window_probes) X(keepalive_probes) \
	X(tail_loss_probes) X(lost_retransmits) \
	X(keepalive_timeouts) X(idle_timeouts) X(time_wait_overflow) \
	X(bad_options) X(sack_blocks_in) X(dsacks_in) \
	X(rack_losses) X(tlp_recoveries) X(spurious_retransmits) X(prr_sends) \
	X(sndq_budget_waits)

struct tcp_counters {
#define TCP_COUNTER_FIELD(n) uint64_t n;
	TCP_COUNTERS(TCP_COUNTER_FIELD)
#undef TCP_COUNTER_FIELD
};

/* Counters of one shard, written by the owner only, read by telemetry. */
struct net_stats {
	uint64_t rx_pkts;
	uint64_t rx_bytes;
	uint64_t tx_pkts;
	uint64_t tx_bytes;
	uint64_t drop[NET_DROP__COUNT];
	uint64_t arp_in;
	uint64_t arp_replies;
	uint64_t icmp_echo;
	uint64_t tcp_conns_open;	/* gauge, all states */
	uint64_t tcp_sndq_mbufs;	/* gauge: mbufs the send queues hold */
	uint64_t tcp_conns_closed;
	uint64_t tcp_syn_recv;		/* gauge */
	uint64_t tcp_time_wait;		/* gauge */
	struct tcp_counters tcp;
} __rte_cache_aligned;

typedef uint16_t (*net_tx_fn)(void *ctx, struct rte_mbuf **pkts, uint16_t n);

/* Allocates and sets up a stack (start-up only); NULL on failure. */
struct net_stack *net_stack_create(const struct net_if *ifc,
		struct arp_cache *arp, struct rte_mempool *pool,
		const struct tcp_config *cfg, net_tx_fn tx_fn, void *tx_ctx,
		struct net_stats *stats, uint64_t now_ms);
/* Aborts every connection (RST to the peer) and frees the stack. */
void net_stack_destroy(struct net_stack *ns);
void net_stack_set_upcalls(struct net_stack *ns, const struct tcp_upcalls *up,
		void *ctx);
/* Draining: new SYNs are answered with RST. */
void net_stack_refuse_new(struct net_stack *ns, bool refuse);
/* The link came back: connections whose retransmission timer backed off
 * while it was down retransmit at the next poll, their back-off undone,
 * instead of waiting out a timer grown to seconds. */
void net_link_up(struct net_stack *ns);

/* The poll entry point: sets the clock, runs the received burst through
 * the stack (taking ownership of the mbufs), runs due timers. */
void net_poll(struct net_stack *ns, struct rte_mbuf **pkts, uint16_t n,
		uint64_t now_ms);
/* Hand the TX batch to the device. */
void net_flush(struct net_stack *ns);
/* The stack's clock, milliseconds, as of the last poll. */
uint64_t net_now_ms(const struct net_stack *ns);

#endif /* EWYK_NET_STACK_H */
