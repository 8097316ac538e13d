/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Private to lib/net: the stack's state and what its modules share. White-box
 * tests (tests/tcp, tests/fuzz, the unit tests) include it too; nothing else
 * does.
 */
#ifndef EWYK_NET_PRIV_H
#define EWYK_NET_PRIV_H

#include "net_stack.h"
#include "timer_wheel.h"

#define NET_OUT_LATER 64	/* connections whose output waits for the flush */
#define NET_TX_BATCH 32

struct tcp_cc_ops;

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
	uint64_t secret[2];	/* SipHash key: ISNs (RFC 6528), SYN cookies */
	bool refuse_new;	/* draining: new SYNs are answered with RST */
	uint32_t sndq_waiters;	/* connections with sndq_wait set */
	const struct tcp_cc_ops *cc;
	uint16_t ip_id;
	uint16_t tx_n;
	struct rte_mbuf *tx[NET_TX_BATCH];
	/* Connections that took input since the last flush and send then,
	 * once for all their segments of the burst (see tcp_output_later). */
	uint32_t out_epoch;
	uint16_t out_n;
	struct { uint32_t index, gen; } out[NET_OUT_LATER];
	struct timer_wheel wheel;
	/* connection table: slots, a free list and an open-addressing index */
	struct tcp_conn *conns;
	struct tcp_conn *free_list;
	uint32_t *index;	/* slot + 1, 0 = empty */
	uint32_t index_mask;
	struct net_stats *stats;
};

/* The two halves of net_poll(), which tests drive one at a time. */
/* Process one received frame; takes ownership of m. */
void net_input(struct net_stack *ns, struct rte_mbuf *m);
/* Advance the clock and run due timers. */
void net_timers(struct net_stack *ns, uint64_t now_ms);

/* Queue a frame on the TX batch (flushed when full). */
void net_tx(struct net_stack *ns, struct rte_mbuf *m);
/* An mbuf from the stack's pool, counted as a drop when there is none. */
struct rte_mbuf *net_alloc(struct net_stack *ns);

static inline void
net_count_drop(struct net_stack *ns, enum net_drop why)
{
	ns->stats->drop[why]++;
}

#endif /* EWYK_NET_PRIV_H */
