/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Parsing of received IPv6 (RFC 8200), ICMPv6 (RFC 4443) and neighbour
 * discovery (RFC 4861) headers: pure functions over bytes, as pkt.c's.
 */
#include <string.h>

#include "cksum.h"
#include "pkt.h"

/* A Parameter Problem owed for the byte at ptr (RFC 4443 3.4). */
static enum net_drop
refuse(struct ip_view *v, enum net_drop why, int8_t code, uint16_t ptr,
		bool mcast)
{
	v->pp_code = code;
	v->pp_ptr = ptr;
	v->pp_mcast = mcast;
	return why;
}

/* The TLV options of a hop-by-hop or destination options header at p,
 * hlen bytes, which sits at off in the packet (RFC 8200 4.2). Pad1 and
 * PadN are skipped, and so is every option we do not act on whose type
 * says skip; the others refuse the packet as their type's high bits say. */
static enum net_drop
options_walk(struct ip_view *v, const uint8_t *p, uint16_t hlen, uint16_t off)
{
	uint16_t i = 2;

	while (i < hlen) {
		uint8_t type = p[i];

		if (type == 0) {		/* Pad1 */
			i++;
			continue;
		}
		if (i + 2 > hlen || i + 2 + p[i + 1] > hlen)
			return NET_DROP_IP6_EXT_HDR;
		switch (type >> 6) {
		case 0:			/* skip over it */
			break;
		case 1:			/* discard */
			return NET_DROP_IP6_OPTION;
		case 2:			/* discard, Parameter Problem always */
			return refuse(v, NET_DROP_IP6_OPTION, 2, off + i, true);
		default:		/* discard, PP unless to multicast */
			return refuse(v, NET_DROP_IP6_OPTION, 2, off + i, false);
		}
		i = (uint16_t)(i + 2 + p[i + 1]);
	}
	return NET_OK;
}

enum net_drop
ipv6_parse(const uint8_t *p, size_t len, struct ip_view *v)
{
	uint16_t plen, end, off = IPV6_HDR_LEN, nh_at = 6;
	unsigned int n = 0;
	uint8_t nh;

	v->pp_code = -1;
	v->proto = 0;
	if (len < IPV6_HDR_LEN)
		return NET_DROP_IP6_SHORT;
	if ((p[0] >> 4) != 6)
		return NET_DROP_IP_VERSION;
	plen = pkt_rd16(p + 4);
	/* 0 is a jumbogram's (RFC 2675): no link of ours carries one. */
	if (plen == 0 || IPV6_HDR_LEN + (size_t)plen > len)
		return NET_DROP_IP6_PAYLOAD_LEN;
	end = (uint16_t)(IPV6_HDR_LEN + plen);	/* padding past it is ignored */
	v->hdr = p;
	v->family = NET_AF_INET6;
	v->ttl = p[7];
	v->local = NET_LOCAL_V6;
	memcpy(v->src.v6, p + 8, 16);
	memcpy(v->dst.v6, p + 24, 16);
	if (ip6_is_multicast(&v->src))	/* RFC 4291 2.7 */
		return NET_DROP_IP6_SRC_MULTICAST;
	for (nh = p[6];; n++) {
		const uint8_t *h = p + off;
		uint16_t hlen;

		if (nh == IPPROTO_TCP_ || nh == IPPROTO_ICMPV6_ ||
				nh == IPPROTO_UDP_)
			break;
		if (nh == IP6_NH_NONE)		/* nothing follows: nothing to do */
			return NET_DROP_IP6_NEXT_HEADER;
		if (nh == IP6_NH_FRAGMENT)
			return NET_DROP_IP6_FRAGMENT;
		if ((nh != IP6_NH_HOP_BY_HOP || n > 0) && nh != IP6_NH_DEST_OPTS &&
				nh != IP6_NH_ROUTING)
			/* Unknown, or a hop-by-hop header not first (RFC 8200
			 * 4.3): code 1 points at the next header field. */
			return refuse(v, NET_DROP_IP6_NEXT_HEADER, 1, nh_at, false);
		if (n == IP6_EXT_MAX)
			return NET_DROP_IP6_EXT_CHAIN;
		if (off + 8 > end)
			return NET_DROP_IP6_EXT_HDR;
		hlen = (uint16_t)((h[1] + 1) * 8);
		if (off + hlen > end)
			return NET_DROP_IP6_EXT_HDR;
		if (nh == IP6_NH_ROUTING) {
			/* RFC 5095: type 0 is refused outright; another type
			 * with segments left would have us route. */
			if (h[2] == 0)
				return NET_DROP_IP6_ROUTING_0;
			if (h[3] != 0)
				return refuse(v, NET_DROP_IP6_ROUTING, 0, off + 2,
						false);
		} else {
			enum net_drop why = options_walk(v, h, hlen, off);

			if (why != NET_OK)
				return why;
		}
		nh = h[0];
		nh_at = off;
		off = (uint16_t)(off + hlen);
	}
	v->proto = nh;
	v->hdr_len = off;
	v->payload = p + off;
	v->len = (uint16_t)(end - off);
	return NET_OK;
}

enum net_drop
icmp6_parse(const struct ip_view *ip)
{
	struct cksum c;

	if (ip->len < 8)	/* every message we read has 8 bytes at least */
		return NET_DROP_ICMP6_SHORT;
	cksum_init(&c);
	cksum_pseudo_ipv6(&c, ip->src.v6, ip->dst.v6, IPPROTO_ICMPV6_, ip->len);
	cksum_feed(&c, ip->payload, ip->len);
	if (cksum_finish(&c) != 0)
		return NET_DROP_ICMP6_CKSUM;
	return NET_OK;
}

enum net_drop
nd_parse(const struct ip_view *ip, struct nd_view *v)
{
	const uint8_t *m = ip->payload;
	uint16_t off = 24;

	/* RFC 4861 7.1.1, 7.1.2: only a neighbour on the link sends 255. */
	if (ip->ttl != 255 || m[1] != 0 || ip->len < 24)
		return NET_DROP_ND_INVALID;
	v->type = m[0];
	v->flags = m[4] & (ND_NA_ROUTER | ND_NA_SOLICITED | ND_NA_OVERRIDE);
	memcpy(v->target.v6, m + 8, 16);
	v->lladdr = NULL;
	v->nonce = NULL;
	if (ip6_is_multicast(&v->target))
		return NET_DROP_ND_INVALID;
	while (off < ip->len) {
		uint16_t olen;

		if (off + 2 > ip->len || m[off + 1] == 0)
			return NET_DROP_ND_INVALID;
		olen = (uint16_t)(m[off + 1] * 8);
		if (off + olen > ip->len)
			return NET_DROP_ND_INVALID;
		if (m[off] == (v->type == ICMP6_NS ? ND_OPT_SRC_LLADDR :
				ND_OPT_TGT_LLADDR))
			v->lladdr = m + off + 2;
		else if (m[off] == ND_OPT_NONCE && olen == 8)
			v->nonce = m + off + 2;
		off = (uint16_t)(off + olen);
	}
	if (v->type == ICMP6_NS) {
		/* A DAD probe comes from :: to a solicited-node group, and
		 * has no link-layer address to give. */
		if (net_ip_is_zero(&ip->src) && (v->lladdr != NULL ||
				ip->dst.v6[0] != 0xff || ip->dst.v6[11] != 1 ||
				ip->dst.v6[12] != 0xff))
			return NET_DROP_ND_INVALID;
	} else if (ip6_is_multicast(&ip->dst) && (v->flags & ND_NA_SOLICITED)) {
		return NET_DROP_ND_INVALID;
	}
	return NET_OK;
}
