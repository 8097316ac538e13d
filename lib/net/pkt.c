/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>
#include <arpa/inet.h>

#include "cksum.h"
#include "pkt.h"

static const char *const drop_names[NET_DROP__COUNT] = {
	[NET_OK] = NULL,
#define NET_DROP_NAME(e, s) [NET_DROP_##e] = s,
	NET_DROP_REASONS(NET_DROP_NAME)
#undef NET_DROP_NAME
};

const char *
net_drop_name(enum net_drop reason)
{
	if ((unsigned int)reason >= NET_DROP__COUNT)
		return NULL;
	return drop_names[reason];
}

static inline uint32_t
rd32_be(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

enum net_drop
eth_parse(const uint8_t *frame, size_t len, struct eth_view *v)
{
	if (len < ETH_HDR_LEN)
		return NET_DROP_ETH_SHORT;
	v->dst = frame;
	v->src = frame + 6;
	v->type = pkt_rd16(frame + 12);
	v->vlan = 0;
	v->payload = frame + ETH_HDR_LEN;
	v->len = len - ETH_HDR_LEN;
	if (v->type == ETHERTYPE_VLAN || v->type == ETHERTYPE_QINQ) {
		/* An 802.1Q header is part of the Ethernet header. */
		if (len < ETH_HDR_LEN + VLAN_HDR_LEN)
			return NET_DROP_ETH_SHORT;
		v->vlan = pkt_rd16(frame + 14) & 0x0fff;
		v->type = pkt_rd16(frame + 16);
		v->payload += VLAN_HDR_LEN;
		v->len -= VLAN_HDR_LEN;
	}
	return NET_OK;
}

enum net_drop
arp_parse(const uint8_t *p, size_t len, struct arp_view *v)
{
	/* Ethernet/IPv4 ARP only: htype 1, ptype 0x0800, hlen 6, plen 4. */
	if (len < 28 || pkt_rd16(p) != 1 || pkt_rd16(p + 2) != ETHERTYPE_IPV4 ||
			p[4] != 6 || p[5] != 4)
		return NET_DROP_ARP_MALFORMED;
	v->op = pkt_rd16(p + 6);
	if (v->op != 1 && v->op != 2)
		return NET_DROP_ARP_MALFORMED;
	v->sha = p + 8;
	v->spa = rd32_be(p + 14);
	v->tha = p + 18;
	v->tpa = rd32_be(p + 24);
	return NET_OK;
}

enum net_drop
ipv4_parse(const uint8_t *p, size_t len, struct ip_view *v)
{
	uint16_t hlen, total, frag;

	if (len < IPV4_HDR_MIN)
		return NET_DROP_IP_SHORT;
	if ((p[0] >> 4) != 4)
		return NET_DROP_IP_VERSION;
	hlen = (uint16_t)((p[0] & 0x0f) * 4);
	if (hlen < IPV4_HDR_MIN || hlen > len)
		return NET_DROP_IP_HDRLEN;
	total = pkt_rd16(p + 2);
	if (total < hlen || total > len)
		return NET_DROP_IP_TOTLEN;
	if (cksum_buf(p, hlen) != 0)
		return NET_DROP_IP_CKSUM;
	frag = pkt_rd16(p + 6);
	if (frag & 0x3fff)	/* MF set or a non-zero offset */
		return NET_DROP_IP_FRAGMENT;
	v->hdr = p;
	v->hdr_len = hlen;
	v->family = NET_AF_INET;
	v->ttl = p[8];
	v->proto = p[9];
	v->local = NET_LOCAL_V4;
	v->src = net_ip4(rd32_be(p + 12));
	v->dst = net_ip4(rd32_be(p + 16));
	v->payload = p + hlen;
	v->len = (uint16_t)(total - hlen);	/* padding past total is ignored */
	return NET_OK;
}

enum net_drop
icmp_parse(const struct ip_view *ip)
{
	if (ip->len < 8)
		return NET_DROP_ICMP_SHORT;
	if (cksum_buf(ip->payload, ip->len) != 0)
		return NET_DROP_ICMP_CKSUM;
	return NET_OK;
}

void
tcp_parse_options(const uint8_t *p, size_t len, struct tcp_options *o)
{
	size_t i = 0;

	memset(o, 0, sizeof(*o));
	while (i < len) {
		uint8_t kind = p[i], olen;

		if (kind == 0)		/* end of option list */
			break;
		if (kind == 1) {	/* no-op */
			i++;
			continue;
		}
		/* Like Linux, stop at the first option whose length is bad. */
		if (i + 1 >= len || p[i + 1] < 2 || i + p[i + 1] > len) {
			o->malformed = true;
			break;
		}
		olen = p[i + 1];
		switch (kind) {
		case 2:
			if (olen == 4)
				o->mss = pkt_rd16(p + i + 2);
			break;
		case 3:
			if (olen == 3) {
				o->has_wscale = true;
				o->wscale = p[i + 2] > 14 ? 14 : p[i + 2]; /* RFC 7323 2.3 */
			}
			break;
		case 4:
			if (olen == 2)
				o->sack_ok = true;
			break;
		case 5:
			if (olen >= 10 && (olen - 2) % 8 == 0) {
				unsigned int n = (olen - 2) / 8, k;

				for (k = 0; k < n && k < TCP_MAX_SACK; k++) {
					o->sack[k][0] = pkt_rd32(p + i + 2 + 8 * k);
					o->sack[k][1] = pkt_rd32(p + i + 6 + 8 * k);
				}
				o->nsack = (uint8_t)k;
			}
			break;
		case 8:
			if (olen == 10) {
				o->has_ts = true;
				o->ts_val = pkt_rd32(p + i + 2);
				o->ts_ecr = pkt_rd32(p + i + 6);
			}
			break;
		default:
			break;
		}
		i += olen;
	}
}

enum net_drop
tcp_parse(const struct ip_view *ip, enum l4_cksum nic, struct tcp_view *v)
{
	const uint8_t *p = ip->payload;
	uint16_t doff;

	if (ip->len < TCP_HDR_MIN)
		return NET_DROP_TCP_SHORT;
	doff = (uint16_t)((p[12] >> 4) * 4);
	if (doff < TCP_HDR_MIN || doff > ip->len)
		return NET_DROP_TCP_DOFF;
	if (nic == L4_CKSUM_BAD)
		return NET_DROP_TCP_CKSUM;
	if (nic == L4_CKSUM_UNKNOWN) {
		struct cksum c;

		cksum_init(&c);
		cksum_pseudo(&c, ip->family, &ip->src, &ip->dst, IPPROTO_TCP_,
				ip->len);
		cksum_feed(&c, p, ip->len);
		if (cksum_finish(&c) != 0)
			return NET_DROP_TCP_CKSUM;
	}
	v->sport = pkt_rd16(p);
	v->dport = pkt_rd16(p + 2);
	v->seq = pkt_rd32(p + 4);
	v->ack = pkt_rd32(p + 8);
	v->flags = p[13] & 0x3f;
	v->win = pkt_rd16(p + 14);
	v->hdr_len = doff;
	v->payload = p + doff;
	v->len = (uint16_t)(ip->len - doff);
	/* SYN with FIN or RST is never legitimate: drop scanner probes early. */
	if ((v->flags & TCP_SYN) && (v->flags & (TCP_FIN | TCP_RST)))
		return NET_DROP_TCP_FLAGS;
	tcp_parse_options(p + TCP_HDR_MIN, doff - TCP_HDR_MIN, &v->opt);
	return NET_OK;
}

enum net_drop
udp_parse(const struct ip_view *ip, enum l4_cksum nic, struct udp_view *v)
{
	const uint8_t *p = ip->payload;
	uint16_t len, sum;

	if (ip->len < UDP_HDR_LEN)
		return NET_DROP_UDP_SHORT;
	len = pkt_rd16(p + 4);
	if (len < UDP_HDR_LEN || len > ip->len)
		return NET_DROP_UDP_LEN;
	sum = pkt_rd16(p + 6);
	if (sum == 0) {
		if (ip->family == NET_AF_INET6)
			return NET_DROP_UDP_CKSUM;
	} else if (nic == L4_CKSUM_BAD) {
		return NET_DROP_UDP_CKSUM;
	} else if (nic == L4_CKSUM_UNKNOWN || len != ip->len) {
		struct cksum c;

		cksum_init(&c);
		cksum_pseudo(&c, ip->family, &ip->src, &ip->dst, IPPROTO_UDP_,
				len);
		cksum_feed(&c, p, len);
		if (cksum_finish(&c) != 0)
			return NET_DROP_UDP_CKSUM;
	}
	v->sport = pkt_rd16(p);
	v->dport = pkt_rd16(p + 2);
	v->payload = p + UDP_HDR_LEN;
	v->len = (uint16_t)(len - UDP_HDR_LEN);
	return NET_OK;
}
