/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Active open for the upper layer: the port whose subnet holds the peer,
 * the next hop resolved through that port's ARP cache, a local port whose
 * answers that port's RSS steers back to this shard, the connection's own
 * upcalls. The handshake itself is tcp_connect()'s (tcp_user.c), which
 * routes by the same net_route().
 */
#include <errno.h>

#include <rte_byteorder.h>
#include <rte_random.h>
#include <rte_thash.h>

#include "tcp_impl.h"

uint16_t
net_rss_queue(const struct net_rss *rss, uint32_t raddr, uint32_t laddr,
		uint16_t rport, uint16_t lport)
{
	/* As the NIC hashes a received segment: source first (the peer),
	 * host-order words (rte_softrss's convention). */
	uint32_t tuple[3] = {
		rte_be_to_cpu_32(raddr),
		rte_be_to_cpu_32(laddr),
		((uint32_t)rport << 16) | lport,
	};

	if (rss == NULL || rss->reta_size == 0)
		return 0;
	return rss->reta[rte_softrss(tuple, 3, rss->key) &
			(uint32_t)(rss->reta_size - 1)];
}

/* A free local port towards raddr:rport out of port whose answers RSS
 * steers to this stack's queue; 0 when none is. The search resumes after
 * the last port given, from a random start, over the ephemeral range
 * once. */
static uint16_t
pick_lport(struct net_stack *ns, uint8_t port, uint32_t raddr,
		uint16_t rport)
{
	const uint32_t span = NET_EPHEMERAL_HI - NET_EPHEMERAL_LO + 1;
	const struct net_port *np = &ns->port[port];
	/* Without a table (one queue, or a device that does not say how
	 * it steers), every port is this stack's as far as it can tell. */
	bool rss_known = np->rss != NULL && np->rss->reta_size != 0;
	uint32_t i, p;

	if (ns->next_lport < NET_EPHEMERAL_LO || ns->next_lport > NET_EPHEMERAL_HI)
		ns->next_lport = (uint16_t)(NET_EPHEMERAL_LO +
				rte_rand_max(span));
	p = ns->next_lport;
	for (i = 0; i < span; i++, p = p == NET_EPHEMERAL_HI ?
			NET_EPHEMERAL_LO : p + 1) {
		if (rss_known && net_rss_queue(np->rss, raddr, np->ifc->ip,
				rport, (uint16_t)p) != np->queue) {
			ns->stats->tcp.rss_port_misses++;
			continue;
		}
		if (tcp_lookup(ns, port, raddr, rport, (uint16_t)p) != NULL)
			continue;
		ns->next_lport = (uint16_t)(p == NET_EPHEMERAL_HI ?
				NET_EPHEMERAL_LO : p + 1);
		return (uint16_t)p;
	}
	return 0;
}

struct tcp_conn *
tcp_open(struct net_stack *ns, uint32_t raddr, uint16_t rport,
		const struct tcp_upcalls *up, void *ctx, int *err)
{
	uint8_t port = net_route(ns, raddr);
	const struct net_if *ifc = net_ifc(ns, port);
	struct tcp_conn *c;
	uint8_t mac[6];
	uint16_t lport;

	/* net_route() falls back on port 0: no port's subnet holds raddr. */
	if (((raddr ^ ifc->ip) & ifc->netmask) != 0) {
		*err = -ENETUNREACH;
		return NULL;
	}
	if (!net_resolve(ns, port, raddr, mac)) {
		*err = -EAGAIN;
		return NULL;
	}
	lport = pick_lport(ns, port, raddr, rport);
	if (lport == 0) {
		*err = -EADDRNOTAVAIL;
		return NULL;
	}
	/* The SYN waits in the port's TX batch: the upcalls are in place
	 * before any answer can come. tcp_connect() routes raddr to the same
	 * port, which the connection records. */
	c = tcp_connect(ns, raddr, rport, lport, mac);
	if (c == NULL) {
		*err = -ENOMEM;
		return NULL;
	}
	c->up = up;
	c->up_ctx = ctx;
	*err = 0;
	return c;
}
