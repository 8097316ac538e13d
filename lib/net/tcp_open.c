/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Active open for the upper layer: the port whose subnet (IPv6: prefix)
 * holds the peer, the next hop resolved through that port's ARP cache or
 * by neighbour discovery, a local port whose answers that port's RSS
 * steers back to this shard, the connection's own upcalls. The handshake itself is tcp_connect()'s (tcp_user.c), which
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

uint16_t
net_rss_queue6(const struct net_rss *rss, const uint8_t raddr[16],
		const uint8_t laddr[16], uint16_t rport, uint16_t lport)
{
	/* rte_thash's IPv6 tuple: both addresses, then the ports, in
	 * host-order words. */
	uint32_t tuple[9];
	unsigned int i;

	if (rss == NULL || rss->reta_size == 0)
		return 0;
	for (i = 0; i < 4; i++) {
		tuple[i] = pkt_rd32(raddr + 4 * i);
		tuple[4 + i] = pkt_rd32(laddr + 4 * i);
	}
	tuple[8] = ((uint32_t)rport << 16) | lport;
	return rss->reta[rte_softrss(tuple, 9, rss->key) &
			(uint32_t)(rss->reta_size - 1)];
}

/* The queue RSS gives answers from raddr:rport to local:lport on port. */
static uint16_t
rss_queue_of(const struct net_port *np, const struct net_addr *raddr,
		const union net_ip *local, uint16_t rport, uint16_t lport)
{
	if (raddr->family == NET_AF_INET6)
		return net_rss_queue6(np->rss, raddr->ip.v6, local->v6, rport,
				lport);
	return net_rss_queue(np->rss, raddr->ip.v4, local->v4, rport, lport);
}

/* A free local port of address local towards raddr:rport out of port
 * whose answers RSS steers to this stack's queue; 0 when none is. The
 * search resumes after the last port given from that address, from a
 * random start, over the ephemeral range once. */
static uint16_t
pick_lport(struct net_stack *ns, uint8_t port, uint8_t local,
		const struct net_addr *raddr, uint16_t rport)
{
	const uint32_t span = NET_EPHEMERAL_HI - NET_EPHEMERAL_LO + 1;
	const struct net_port *np = &ns->port[port];
	/* Without a table (one queue, or a device that does not say how
	 * it steers), every port is this stack's as far as it can tell. */
	bool rss_known = np->rss != NULL && np->rss->reta_size != 0;
	uint32_t i, p;

	uint16_t *next = &ns->next_lport[local];

	if (*next < NET_EPHEMERAL_LO || *next > NET_EPHEMERAL_HI)
		*next = (uint16_t)(NET_EPHEMERAL_LO + rte_rand_max(span));
	p = *next;
	for (i = 0; i < span; i++, p = p == NET_EPHEMERAL_HI ?
			NET_EPHEMERAL_LO : p + 1) {
		if (rss_known && rss_queue_of(np, raddr, &np->addr[local],
				rport, (uint16_t)p) != np->queue) {
			ns->stats->tcp.rss_port_misses++;
			continue;
		}
		if (tcp_lookup(ns, port, local, &raddr->ip, rport,
				(uint16_t)p) != NULL)
			continue;
		*next = (uint16_t)(p == NET_EPHEMERAL_HI ? NET_EPHEMERAL_LO :
				p + 1);
		return (uint16_t)p;
	}
	return 0;
}

/* A local address and port: over IPv4, the port's addresses in turn (the
 * next open tries the next address first), each until its ports run out;
 * *local is set to the address taken. 0 when none is free. */
static uint16_t
pick_local(struct net_stack *ns, uint8_t port, uint8_t *local,
		const struct net_addr *raddr, uint16_t rport)
{
	uint32_t n = raddr->family == NET_AF_INET ?
		net_if_ip_count(ns->port[port].ifc) : 1;
	uint32_t i, off;
	uint16_t lport;

	if (n == 1)
		return pick_lport(ns, port, *local, raddr, rport);
	for (i = 0; i < n; i++) {
		off = (ns->next_local4 + i) % n;
		lport = pick_lport(ns, port, net_local_v4(off), raddr, rport);
		if (lport != 0) {
			*local = net_local_v4(off);
			ns->next_local4 = (uint16_t)((off + 1) % n);
			return lport;
		}
	}
	return 0;
}

struct tcp_conn *
tcp_open_addr(struct net_stack *ns, const struct net_addr *raddr,
		uint16_t rport, const struct tcp_upcalls *up, void *ctx, int *err)
{
	uint8_t local;
	int route = net_route(ns, raddr, &local);
	struct tcp_conn *c;
	uint8_t mac[6];
	uint16_t lport;

	if (route < 0) {
		*err = -ENETUNREACH;
		return NULL;
	}
	if (!net_resolve(ns, (uint8_t)route, raddr, mac)) {
		*err = -EAGAIN;
		return NULL;
	}
	lport = pick_local(ns, (uint8_t)route, &local, raddr, rport);
	if (lport == 0) {
		*err = -EADDRNOTAVAIL;
		return NULL;
	}
	/* The SYN waits in the port's TX batch: the upcalls are in place
	 * before any answer can come. */
	c = tcp_connect_from(ns, (uint8_t)route, local, raddr, rport, lport,
			mac);
	if (c == NULL) {
		*err = -ENOMEM;
		return NULL;
	}
	c->up = up;
	c->up_ctx = ctx;
	*err = 0;
	return c;
}

struct tcp_conn *
tcp_open(struct net_stack *ns, uint32_t raddr, uint16_t rport,
		const struct tcp_upcalls *up, void *ctx, int *err)
{
	struct net_addr a = { net_ip4(raddr), NET_AF_INET };

	return tcp_open_addr(ns, &a, rport, up, ctx, err);
}
