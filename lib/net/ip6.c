/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPv6 input (RFC 8200) and ICMPv6 (RFC 4443): a packet is checked and its
 * extension headers walked (pkt6.c), then it goes to TCP, to neighbour
 * discovery (nd.c) or to ICMPv6 here: echo, Packet Too Big (TCP lowers the
 * path MTU of the connection it names), other errors counted. The
 * Parameter Problems RFC 8200 owes are sent within a budget a second.
 */
#include <string.h>

#include <rte_mbuf.h>

#include "cksum.h"
#include "net_priv.h"
#include "tcp_impl.h"

#define IP6_HOP_LIMIT NET_TTL
/* An error quotes as much of the packet as fits the minimum MTU. */
#define ICMP6_ERR_QUOTE (NET_IP6_MIN_MTU - IPV6_HDR_LEN - 8)

void
ip6_hdr_fill(uint8_t *ip, const union net_ip *src, const union net_ip *dst,
		uint8_t proto, uint8_t hop_limit, uint16_t payload_len)
{
	ip[0] = 0x60;		/* version 6, traffic class and flow label 0 */
	ip[1] = ip[2] = ip[3] = 0;
	pkt_wr16(ip + 4, payload_len);
	ip[6] = proto;
	ip[7] = hop_limit;
	memcpy(ip + 8, src->v6, 16);
	memcpy(ip + 24, dst->v6, 16);
}

struct rte_mbuf *
ip6_start(struct net_stack *ns, uint8_t port, const uint8_t *dmac,
		const union net_ip *src, const union net_ip *dst, uint8_t proto,
		uint8_t hop_limit, uint16_t len)
{
	struct rte_mbuf *m = net_alloc(ns);
	uint8_t *p;

	if (m == NULL)
		return NULL;
	p = (uint8_t *)rte_pktmbuf_append(m, ETH_HDR_LEN + IPV6_HDR_LEN);
	if (p == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memcpy(p, dmac, 6);
	memcpy(p + 6, net_ifc(ns, port)->mac, 6);
	pkt_wr16(p + 12, ETHERTYPE_IPV6);
	ip6_hdr_fill(p + ETH_HDR_LEN, src, dst, proto, hop_limit, len);
	return m;
}

void
icmp6_send(struct net_stack *ns, uint8_t port, struct rte_mbuf *m,
		uint16_t hbh_len)
{
	uint8_t *ip = rte_pktmbuf_mtod_offset(m, uint8_t *, ETH_HDR_LEN);
	uint8_t *icmp = ip + IPV6_HDR_LEN + hbh_len;
	uint16_t len = (uint16_t)(rte_pktmbuf_pkt_len(m) - ETH_HDR_LEN -
			IPV6_HDR_LEN - hbh_len), sum;
	struct cksum c;

	icmp[2] = icmp[3] = 0;
	cksum_init(&c);
	cksum_pseudo_ipv6(&c, ip + 8, ip + 24, IPPROTO_ICMPV6_, len);
	cksum_feed(&c, icmp, len);
	sum = cksum_finish(&c);
	memcpy(icmp + 2, &sum, 2);
	net_tx(ns, port, m);
}

/* The address an answer to ip comes from: the one it was sent to when
 * that is ours, else ours of the sender's scope. */
static const union net_ip *
answer_src(const struct net_stack *ns, const struct ip_view *ip)
{
	const struct net_port *p = &ns->port[ns->cur_port];

	if (!ip6_is_multicast(&ip->dst))
		return &p->addr[ip->local];
	return &p->addr[ip6_is_link_local(&ip->src) ? NET_LOCAL_V6_LL :
		NET_LOCAL_V6];
}

/* An ICMPv6 error about the packet of m (RFC 4443 2.4): never about an
 * error or to a source that is not unicast, to a multicast destination
 * only where the error allows it; within the shard's budget a second. */
static void
icmp6_error(struct net_stack *ns, const struct eth_view *eth,
		const struct ip_view *ip, uint8_t type, uint8_t code,
		uint32_t param)
{
	uint16_t quote = (uint16_t)RTE_MIN((size_t)ICMP6_ERR_QUOTE, eth->len);
	struct rte_mbuf *m;
	uint8_t *icmp;

	if (net_ip_is_zero(&ip->src) ||
			(ip6_is_multicast(&ip->dst) && !ip->pp_mcast) ||
			(ip->proto == IPPROTO_ICMPV6_ && ip->len > 0 &&
			 ip->payload[0] < 128))
		return;
	if (!rate_limit_take(&ns->icmp6_errors, ns->now_ms)) {
		ns->stats->nd.icmp6_errors_limited++;
		return;
	}
	m = ip6_start(ns, ns->cur_port, eth->src, answer_src(ns, ip), &ip->src,
			IPPROTO_ICMPV6_, IP6_HOP_LIMIT, (uint16_t)(8 + quote));
	if (m == NULL)
		return;
	icmp = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(8 + quote));
	if (icmp == NULL) {
		rte_pktmbuf_free(m);
		return;
	}
	icmp[0] = type;
	icmp[1] = code;
	pkt_wr32(icmp + 4, param);
	memcpy(icmp + 8, eth->payload, quote);
	ns->stats->nd.icmp6_errors_out++;
	icmp6_send(ns, ns->cur_port, m, 0);
}

/* Echo reply in place (RFC 4443 4.2): the message moved up to the fixed
 * header if extension headers came before it. */
static void
echo_input(struct net_stack *ns, struct rte_mbuf *m, const struct eth_view *eth,
		const struct ip_view *ip)
{
	uint8_t *frame = rte_pktmbuf_mtod(m, uint8_t *);
	uint8_t *iph = frame + ETH_HDR_LEN;
	uint8_t *icmp = iph + IPV6_HDR_LEN;

	memcpy(frame, eth->src, 6);
	memcpy(frame + 6, net_ifc(ns, ns->cur_port)->mac, 6);
	memmove(icmp, ip->payload, ip->len);
	ip6_hdr_fill(iph, answer_src(ns, ip), &ip->src, IPPROTO_ICMPV6_,
			IP6_HOP_LIMIT, ip->len);
	icmp[0] = ICMP6_ECHO_REPLY;
	rte_pktmbuf_trim(m, (uint16_t)(rte_pktmbuf_pkt_len(m) -
			(ETH_HDR_LEN + IPV6_HDR_LEN + ip->len)));
	ns->stats->nd.icmp6_echo++;
	icmp6_send(ns, ns->cur_port, m, 0);
}

/* ICMPv6 to us; takes m. */
static void
icmp6_input(struct net_stack *ns, struct rte_mbuf *m, const struct eth_view *eth,
		const struct ip_view *ip, bool to_group)
{
	enum net_drop why = icmp6_parse(ip);

	if (why != NET_OK)
		goto drop;
	switch (ip->payload[0]) {
	case ICMP6_ECHO_REQUEST:
		if (to_group)
			break;		/* no echo from a whole group */
		echo_input(ns, m, eth, ip);
		return;
	case ICMP6_NS:
	case ICMP6_NA:
		nd_input(ns, m, eth, ip);
		return;
	case ICMP6_MLD_QUERY:
		/* RFC 3810 5.1.14: from a link-local address, one hop. */
		if (!ip6_is_link_local(&ip->src) || ip->ttl != 1)
			break;
		nd_mld_query(ns, ns->cur_port);
		rte_pktmbuf_free(m);
		return;
	case ICMP6_RS:
	case ICMP6_RA:
	case ICMP6_REDIRECT:
		/* Addresses are configured, routes are the links': a host
		 * that takes none of them. */
		why = NET_DROP_ND_ROUTER;
		goto drop;
	case ICMP6_PACKET_TOO_BIG:
		ns->stats->nd.icmp6_ptb_in++;
		why = tcp_ptb_input(ns, ip);
		if (why != NET_OK)
			goto drop;
		rte_pktmbuf_free(m);
		return;
	case ICMP6_DEST_UNREACH:
	case ICMP6_TIME_EXCEEDED:
	case ICMP6_PARAM_PROBLEM:
		ns->stats->nd.icmp6_errors_in++;
		rte_pktmbuf_free(m);
		return;
	default:
		break;
	}
	why = NET_DROP_ICMP6_TYPE;
drop:
	net_count_drop(ns, why);
	rte_pktmbuf_free(m);
}

void
ipv6_input(struct net_stack *ns, struct rte_mbuf *m, const struct eth_view *eth)
{
	struct ip_view ip;
	struct tcp_view t;
	enum net_drop why;
	bool group = false;

	why = ipv6_parse(eth->payload, eth->len, &ip);
	if (why != NET_OK && ip.pp_code < 0)
		goto drop;
	/* Ours: one of the port's addresses in use, or a group it joined. */
	if (!nd_addr_ours(ns, ns->cur_port, &ip.dst, &ip.local)) {
		group = nd_group_ours(ns, ns->cur_port, &ip.dst);
		if (!group) {
			why = NET_DROP_IP6_NOT_OURS;
			goto drop;
		}
	}
	if (why != NET_OK) {
		icmp6_error(ns, eth, &ip, ICMP6_PARAM_PROBLEM,
				(uint8_t)ip.pp_code, ip.pp_ptr);
		goto drop;
	}
	if (ip.proto == IPPROTO_ICMPV6_) {
		icmp6_input(ns, m, eth, &ip, group);
		return;
	}
	/* TCP and UDP: from a unicast address to a unicast one. */
	why = NET_DROP_IP6_SRC_INVALID;
	if (net_ip_is_zero(&ip.src) || (ip.src.w[0] | ip.src.w[1] |
			ip.src.w[2]) == 0)	/* :: and ::1, ::/96 */
		goto drop;
	why = NET_DROP_IP6_NOT_OURS;
	if (group)
		goto drop;
	if (ip.proto == IPPROTO_UDP_) {
		why = udp_input(ns, m, &ip);
		if (why == NET_DROP_UDP_NO_PORT)	/* code 4: port */
			icmp6_error(ns, eth, &ip, ICMP6_DEST_UNREACH, 4, 0);
		if (why != NET_OK)
			goto drop;
		rte_pktmbuf_free(m);
		return;
	}
	why = tcp_parse(&ip, net_l4_cksum(ns, m), &t);
	if (why != NET_OK)
		goto drop;
	ns->stats->tcp.segs_in++;
	ns->stats->tcp.ip6_segs_in++;
	if (!tcp_input(ns, m, &ip, &t, eth->src))
		rte_pktmbuf_free(m);
	return;
drop:
	net_count_drop(ns, why);
	rte_pktmbuf_free(m);
}
