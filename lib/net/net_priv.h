/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Private to lib/net: the stack's state and what its modules share. White-box
 * tests (tests/tcp, tests/fuzz, the unit tests) include it too; nothing else
 * does.
 */
#ifndef EWYK_NET_PRIV_H
#define EWYK_NET_PRIV_H

#include "net_stack.h"
#include "rate_limit.h"
#include "timer_wheel.h"

#define NET_OUT_LATER 64	/* connections whose output waits for the flush */
#define NET_TX_BATCH 32

struct tcp_cc_ops;

/* One port of the stack: its interface, neighbours and TX batch. */
struct net_port {
	const struct net_if *ifc;
	struct arp_cache *arp;
	net_tx_fn tx_fn;
	void *tx_ctx;
	uint16_t tx_n;
	struct rte_mbuf *tx[NET_TX_BATCH];
	/* Active opens out of this port: how it steers answers over its
	 * queues (NULL: one queue), this stack's queue, the last ARP request
	 * (not repeated within NET_ARP_RETRY_MS). */
	const struct net_rss *rss;
	uint16_t queue;
	uint32_t arp_last_ip;
	uint64_t arp_last_ms;
};

struct net_stack {
	struct net_port port[NET_MAX_PORTS];
	uint8_t nb_ports;
	/* The port of the frame being received, or of the connection being
	 * served: where replies go and drops are counted. */
	uint8_t cur_port;
	struct rte_mempool *pool;
	/* The listening ports, each with the upcalls its connections get. */
	struct net_listener {
		uint16_t port;	/* host order */
		const struct tcp_upcalls *up;
		void *ctx;
	} listeners[NET_MAX_LISTENERS];
	uint8_t nb_listeners;
	struct tcp_config cfg;
	uint64_t now_ms;
	uint64_t hash_seed;
	uint64_t secret[2];	/* SipHash key: ISNs (RFC 6528), SYN cookies */
	bool refuse_new;	/* draining: new SYNs are answered with RST */
	struct rate_limit challenge_acks;
	struct rate_limit arp_replies;
	uint32_t sndq_waiters;	/* connections with sndq_wait set */
	const struct tcp_cc_ops *cc;
	uint16_t ip_id;
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
	uint16_t next_lport;	/* where active opens' port search resumes */
};

#define NET_ARP_RETRY_MS 100
#define NET_EPHEMERAL_LO 32768	/* local ports of active opens */
#define NET_EPHEMERAL_HI 60999

/* The listener of a local port (host order), or NULL. */
static inline const struct net_listener *
net_listener(const struct net_stack *ns, uint16_t lport)
{
	uint8_t i;

	for (i = 0; i < ns->nb_listeners; i++)
		if (ns->listeners[i].port == lport)
			return &ns->listeners[i];
	return NULL;
}

/* The MAC of ip on port's link: true from the port's cache; false after
 * sending an ARP request out of the port (at most one per
 * NET_ARP_RETRY_MS for the same address). */
bool net_resolve(struct net_stack *ns, uint8_t port, uint32_t ip,
		uint8_t mac[6]);

/* What net_rx() does per frame, which tests drive one at a time. Process one frame received on port 0; takes
 * ownership of m. */
void net_input(struct net_stack *ns, struct rte_mbuf *m);

/* The interface of a port. */
static inline const struct net_if *
net_ifc(const struct net_stack *ns, uint8_t port)
{
	return ns->port[port].ifc;
}

/* The port whose subnet holds addr (an active open's way out); port 0
 * when none does. */
uint8_t net_route(const struct net_stack *ns, uint32_t addr);

/* Queue a frame on a port's TX batch (flushed when full). */
void net_tx(struct net_stack *ns, uint8_t port, struct rte_mbuf *m);
/* An mbuf from the stack's pool, counted as a drop when there is none. */
struct rte_mbuf *net_alloc(struct net_stack *ns);

static inline void
net_count_drop(struct net_stack *ns, enum net_drop why)
{
	ns->stats->drop[why]++;
	ns->stats->port[ns->cur_port].drop[why]++;
}

#endif /* EWYK_NET_PRIV_H */
