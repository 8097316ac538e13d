/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One shard's network stack: Ethernet, ARP, IPv4, ICMP and TCP over one
 * RX/TX queue pair. Only the shard's owner calls into it. Frames come in
 * through net_input(); frames go out through a TX batch that the owner
 * flushes with a callback (rte_eth_tx_burst in ewykd, a capture in tests).
 */
#ifndef EWYK_NET_STACK_H
#define EWYK_NET_STACK_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>

#include "arp_cache.h"
#include "net_drop.h"
#include "tcp.h"
#include "timer_wheel.h"

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
};

struct tcp_config {
	uint32_t max_conns;	/* per shard */
	uint32_t snd_buf;	/* bytes queued per connection */
	uint32_t rto_min_ms;
	uint32_t rto_init_ms;
	uint32_t rto_max_ms;
	uint8_t max_retries;	/* timeouts in a row before giving up */
	uint8_t syn_retries;
	uint32_t time_wait_ms;
	uint16_t listen_port;	/* host order */
};

void tcp_config_defaults(struct tcp_config *cfg);

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
	uint64_t tcp_passive_opens;
	uint64_t tcp_conns_open;
	uint64_t tcp_conns_closed;
	uint64_t tcp_resets_in;
	uint64_t tcp_resets_out;
	uint64_t tcp_retransmits;
	uint64_t tcp_timeouts;
	uint64_t tcp_segs_in;
	uint64_t tcp_segs_out;
	uint64_t tcp_bad_options;
} __rte_cache_aligned;

typedef uint16_t (*net_tx_fn)(void *ctx, struct rte_mbuf **pkts, uint16_t n);

#define NET_TX_BATCH 32

struct net_stack {
	const struct net_if *ifc;
	struct arp_cache *arp;
	struct rte_mempool *pool;
	net_tx_fn tx_fn;
	void *tx_ctx;
	const struct tcp_upcalls *up;
	void *up_ctx;
	struct tcp_config cfg;
	uint64_t now_ms;
	uint64_t hash_seed;
	uint16_t ip_id;
	uint16_t tx_n;
	struct rte_mbuf *tx[NET_TX_BATCH];
	struct timer_wheel wheel;
	/* connection table: slots, a free list and an open-addressing index */
	struct tcp_conn *conns;
	struct tcp_conn *free_list;
	uint32_t *index;	/* slot + 1, 0 = empty */
	uint32_t index_mask;
	struct net_stats *stats;
};

/* Sets up the stack; allocates its tables (start-up only). */
int net_stack_init(struct net_stack *ns, const struct net_if *ifc,
		struct arp_cache *arp, struct rte_mempool *pool,
		const struct tcp_config *cfg, net_tx_fn tx_fn, void *tx_ctx,
		struct net_stats *stats, uint64_t now_ms);
/* Aborts every connection (RST to the peer) and frees the tables. */
void net_stack_fini(struct net_stack *ns);
void net_stack_set_upcalls(struct net_stack *ns, const struct tcp_upcalls *up,
		void *ctx);

/* Process one received frame; takes ownership of m. */
void net_input(struct net_stack *ns, struct rte_mbuf *m);
/* Advance the clock and run due timers. */
void net_timers(struct net_stack *ns, uint64_t now_ms);
/* Hand the TX batch to the device. */
void net_flush(struct net_stack *ns);

/* For the stack's own modules. */
void net_tx(struct net_stack *ns, struct rte_mbuf *m);
struct rte_mbuf *net_alloc(struct net_stack *ns);
static inline void
net_count_drop(struct net_stack *ns, enum net_drop why)
{
	ns->stats->drop[why]++;
}

#endif /* EWYK_NET_STACK_H */
