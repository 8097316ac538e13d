/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * UDP (RFC 768) in either family: a datagram to a bound port goes up to
 * its upcall whole; one to a port not bound is counted, and the family's
 * input answers it with ICMP's Port Unreachable within its budget. What
 * goes out goes whole: never fragmented (DF over IPv4), within the port's
 * MTU, summed in software (a datagram is one mbuf, its checksum cheap
 * beside what sends one).
 */
#include <errno.h>
#include <string.h>

#include <rte_mbuf.h>

#include "cksum.h"
#include "net_priv.h"
#include "pkt.h"

static const struct net_udp_bind *
bound(const struct net_stack *ns, uint16_t port)
{
	uint8_t i;

	for (i = 0; i < ns->nb_udp_binds; i++)
		if (ns->udp_binds[i].port == port)
			return &ns->udp_binds[i];
	return NULL;
}

int
net_udp_bind(struct net_stack *ns, uint16_t port, net_udp_recv_fn recv,
		void *ctx)
{
	if (port == 0 || recv == NULL)
		return -EINVAL;
	if (bound(ns, port) != NULL)
		return -EEXIST;
	if (ns->nb_udp_binds == NET_MAX_UDP_BINDS)
		return -ENOSPC;
	ns->udp_binds[ns->nb_udp_binds++] = (struct net_udp_bind){
		.port = port, .recv = recv, .ctx = ctx,
	};
	return 0;
}

/* The ECN field of the IP header: IPv4's TOS, IPv6's traffic class. */
static uint8_t
ecn_of(const struct ip_view *ip)
{
	return ip->family == NET_AF_INET6 ? (uint8_t)((ip->hdr[1] >> 4) & 3) :
		(uint8_t)(ip->hdr[1] & 3);
}

enum net_drop
udp_input(struct net_stack *ns, const struct rte_mbuf *m,
		const struct ip_view *ip)
{
	const struct net_udp_bind *b;
	struct net_udp_dgram d;
	struct udp_view u;
	enum net_drop why;

	why = udp_parse(ip, net_l4_cksum(ns, m), &u);
	if (why != NET_OK)
		return why;
	b = bound(ns, u.dport);
	if (b == NULL)
		return NET_DROP_UDP_NO_PORT;
	d = (struct net_udp_dgram){
		.port = ns->cur_port, .local = ip->dst, .local_port = u.dport,
		.peer = { .ip = ip->src, .family = ip->family },
		.peer_port = u.sport, .ecn = ecn_of(ip), .data = u.payload,
		.len = u.len,
	};
	ns->stats->udp.udp_in_dgrams++;
	ns->stats->udp.udp_in_bytes += u.len;
	b->recv(b->ctx, ns, &d);
	return NET_OK;
}

/* The IP header of a datagram of udp_len bytes at ip. */
static void
ip_fill(struct net_stack *ns, uint8_t *ip, const struct net_udp_dgram *d,
		uint16_t udp_len)
{
	uint16_t sum;

	if (d->peer.family == NET_AF_INET6) {
		ip6_hdr_fill(ip, &d->local, &d->peer.ip, IPPROTO_UDP_, NET_TTL,
				udp_len);
		ip[1] |= (uint8_t)(d->ecn << 4);
		return;
	}
	ip[0] = 0x45;
	ip[1] = d->ecn;
	pkt_wr16(ip + 2, (uint16_t)(IPV4_HDR_MIN + udp_len));
	pkt_wr16(ip + 4, ns->ip_id++);
	pkt_wr16(ip + 6, 0x4000);	/* DF */
	ip[8] = NET_TTL;
	ip[9] = IPPROTO_UDP_;
	ip[10] = ip[11] = 0;
	memcpy(ip + 12, &d->local.v4, 4);
	memcpy(ip + 16, &d->peer.ip.v4, 4);
	sum = cksum_buf(ip, IPV4_HDR_MIN);
	memcpy(ip + 10, &sum, 2);
}

int
net_udp_send(struct net_stack *ns, const struct net_udp_dgram *d)
{
	bool v6 = d->peer.family == NET_AF_INET6;
	uint16_t ip_len = v6 ? IPV6_HDR_LEN : IPV4_HDR_MIN;
	uint16_t udp_len = (uint16_t)(UDP_HDR_LEN + d->len), sum;
	uint8_t mac[6], *p, *udp;
	struct rte_mbuf *m;
	struct cksum c;

	if ((uint32_t)ip_len + UDP_HDR_LEN + d->len > net_ifc(ns, d->port)->mtu)
		return -EMSGSIZE;
	if (!net_resolve(ns, d->port, &d->peer, mac)) {
		ns->stats->udp.udp_out_unresolved_dgrams++;
		return -EHOSTUNREACH;
	}
	m = net_alloc(ns);
	if (m == NULL)
		return -ENOBUFS;
	p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(ETH_HDR_LEN + ip_len +
			udp_len));
	if (p == NULL) {	/* a pool with tiny buffers */
		rte_pktmbuf_free(m);
		return -ENOBUFS;
	}
	memcpy(p, mac, 6);
	memcpy(p + 6, net_ifc(ns, d->port)->mac, 6);
	pkt_wr16(p + 12, v6 ? ETHERTYPE_IPV6 : ETHERTYPE_IPV4);
	ip_fill(ns, p + ETH_HDR_LEN, d, udp_len);
	udp = p + ETH_HDR_LEN + ip_len;
	pkt_wr16(udp, d->local_port);
	pkt_wr16(udp + 2, d->peer_port);
	pkt_wr16(udp + 4, udp_len);
	udp[6] = udp[7] = 0;
	memcpy(udp + UDP_HDR_LEN, d->data, d->len);
	cksum_init(&c);
	cksum_pseudo(&c, d->peer.family, &d->local, &d->peer.ip, IPPROTO_UDP_,
			udp_len);
	cksum_feed(&c, udp, udp_len);
	sum = cksum_finish(&c);
	if (sum == 0)
		sum = 0xffff;	/* 0 says "no checksum" (RFC 768) */
	memcpy(udp + 6, &sum, 2);
	ns->stats->udp.udp_out_dgrams++;
	ns->stats->udp.udp_out_bytes += d->len;
	net_tx(ns, d->port, m);
	return 0;
}
