/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Validation and parsing of received Ethernet, ARP, IPv4, IPv6 (with its
 * extension headers), ICMP, ICMPv6, neighbour discovery and TCP headers. Pure functions over bytes: no mbufs, no state, so that the unit
 * tests and the fuzzer drive them directly. Each returns NET_OK or the drop
 * reason; views point into the caller's buffer.
 */
#ifndef EWYK_PKT_H
#define EWYK_PKT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net_addr.h"
#include "net_drop.h"

#define ETH_HDR_LEN 14
#define VLAN_HDR_LEN 4
#define IPV4_HDR_MIN 20
#define IPV6_HDR_LEN 40
#define TCP_HDR_MIN 20
#define UDP_HDR_LEN 8
#define ETHERTYPE_IPV4 0x0800
#define ETHERTYPE_ARP 0x0806
#define ETHERTYPE_IPV6 0x86dd
#define ETHERTYPE_VLAN 0x8100
#define ETHERTYPE_QINQ 0x88a8
#define IPPROTO_ICMP_ 1
#define IPPROTO_TCP_ 6
#define IPPROTO_UDP_ 17
#define IPPROTO_ICMPV6_ 58
/* IPv6 extension headers (RFC 8200 4) that the walk knows. */
#define IP6_NH_HOP_BY_HOP 0
#define IP6_NH_ROUTING 43
#define IP6_NH_FRAGMENT 44
#define IP6_NH_NONE 59
#define IP6_NH_DEST_OPTS 60
/* Extension headers walked before the transport header: more is dropped
 * (a chain long enough to cost the walk something is no host's). */
#define IP6_EXT_MAX 8

struct eth_view {
	const uint8_t *dst;	/* 6 bytes */
	const uint8_t *src;
	uint16_t type;		/* host order; the inner type of a tagged frame */
	uint16_t vlan;		/* VLAN id of a tagged frame, 0 if untagged */
	const uint8_t *payload;
	size_t len;
};

struct arp_view {
	uint16_t op;		/* 1 request, 2 reply */
	const uint8_t *sha;	/* sender hardware address */
	uint32_t spa;		/* network order */
	const uint8_t *tha;
	uint32_t tpa;
};

/* Which of its port's addresses a packet is for (and a connection's
 * local end): the port's IPv4 address, its global IPv6 address or its
 * link-local one. */
enum net_local {
	NET_LOCAL_V4,
	NET_LOCAL_V6,
	NET_LOCAL_V6_LL,
	NET_LOCAL__COUNT
};

/* An IPv4 or IPv6 header (with its extension headers) as parsed. */
struct ip_view {
	const uint8_t *hdr;
	uint16_t hdr_len;	/* to the transport header */
	uint8_t family;		/* NET_AF_INET or NET_AF_INET6 */
	uint8_t proto;		/* the transport protocol (IPv6: the last next header) */
	uint8_t ttl;		/* TTL or hop limit */
	uint8_t local;		/* enum net_local of dst: set by the stack */
	union net_ip src;
	union net_ip dst;
	const uint8_t *payload;	/* transport header */
	uint16_t len;		/* transport length */
	/* IPv6 refused for RFC 8200's reasons: the ICMPv6 Parameter Problem
	 * owed (code, pointer into the packet), pp_code < 0 when none is;
	 * pp_mcast: owed even to a multicast destination. */
	int8_t pp_code;
	bool pp_mcast;
	uint16_t pp_ptr;
};

/* Neighbour solicitations and advertisements (RFC 4861 4.3, 4.4), valid by
 * RFC 4861 7.1.1 and 7.1.2 but for what needs the stack's state. */
struct nd_view {
	uint8_t type;		/* ICMP6_NS or ICMP6_NA */
	uint8_t flags;		/* NA: ND_NA_ROUTER, _SOLICITED, _OVERRIDE */
	union net_ip target;
	const uint8_t *lladdr;	/* source (NS) or target (NA) link-layer
				 * address option, NULL when absent */
	const uint8_t *nonce;	/* NS: RFC 7527's nonce (6 bytes) or NULL */
};

#define ICMP6_DEST_UNREACH 1
#define ICMP6_PACKET_TOO_BIG 2
#define ICMP6_TIME_EXCEEDED 3
#define ICMP6_PARAM_PROBLEM 4
#define ICMP6_ECHO_REQUEST 128
#define ICMP6_ECHO_REPLY 129
#define ICMP6_MLD_QUERY 130
#define ICMP6_RS 133
#define ICMP6_RA 134
#define ICMP6_NS 135
#define ICMP6_NA 136
#define ICMP6_REDIRECT 137
#define ICMP6_MLD2_REPORT 143
#define ND_NA_ROUTER 0x80
#define ND_NA_SOLICITED 0x40
#define ND_NA_OVERRIDE 0x20
#define ND_OPT_SRC_LLADDR 1
#define ND_OPT_TGT_LLADDR 2
#define ND_OPT_NONCE 14

static inline bool
ip6_is_multicast(const union net_ip *a)
{
	return a->v6[0] == 0xff;
}

/* fe80::/10 */
static inline bool
ip6_is_link_local(const union net_ip *a)
{
	return a->v6[0] == 0xfe && (a->v6[1] & 0xc0) == 0x80;
}

#define TCP_FIN 0x01
#define TCP_SYN 0x02
#define TCP_RST 0x04
#define TCP_PSH 0x08
#define TCP_ACK 0x10
#define TCP_URG 0x20

#define TCP_MAX_SACK 4

struct tcp_options {
	uint16_t mss;		/* 0: absent */
	uint8_t wscale;
	bool has_wscale;
	bool sack_ok;
	bool has_ts;
	bool malformed;		/* parsing stopped at a bad option */
	uint32_t ts_val;
	uint32_t ts_ecr;
	uint8_t nsack;
	uint32_t sack[TCP_MAX_SACK][2];	/* left, right edges, host order */
};

struct tcp_view {
	uint16_t sport;		/* host order */
	uint16_t dport;
	uint32_t seq;
	uint32_t ack;
	uint8_t flags;
	uint16_t win;		/* raw, unscaled */
	uint16_t hdr_len;
	const uint8_t *payload;
	uint16_t len;
	struct tcp_options opt;
};

/* Big-endian fields of a frame. */
static inline uint16_t
pkt_rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t
pkt_rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
		(uint32_t)p[2] << 8 | p[3];
}

static inline void
pkt_wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void
pkt_wr32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

enum net_drop eth_parse(const uint8_t *frame, size_t len, struct eth_view *v);
enum net_drop arp_parse(const uint8_t *p, size_t len, struct arp_view *v);
/* Fragments are refused (NET_DROP_IP_FRAGMENT); link padding is trimmed. */
enum net_drop ipv4_parse(const uint8_t *p, size_t len, struct ip_view *v);
enum net_drop icmp_parse(const struct ip_view *ip);
/* The fixed header, then the extension headers up to the transport header
 * (RFC 8200 4), at most IP6_EXT_MAX of them: hop-by-hop options (first
 * only) and destination options with their unknown options acted on by
 * their type's two high bits; a routing header of type 0 refused, of
 * another type refused unless its segments are all left behind; a
 * fragment header refused (TCP never needs one); an unknown next header
 * refused. Multicast sources are refused, link padding trimmed. Sets
 * v->pp_code where RFC 8200 owes a Parameter Problem. */
enum net_drop ipv6_parse(const uint8_t *p, size_t len, struct ip_view *v);
/* Length and checksum (with the IPv6 pseudo header). */
enum net_drop icmp6_parse(const struct ip_view *ip);
/* A neighbour solicitation or advertisement of a valid ICMPv6 message. */
enum net_drop nd_parse(const struct ip_view *ip, struct nd_view *v);
/* What the NIC said of the L4 checksum; UNKNOWN means verify it here. */
enum l4_cksum {
	L4_CKSUM_UNKNOWN,
	L4_CKSUM_GOOD,
	L4_CKSUM_BAD,
};

/* Structure first (length, data offset), then the checksum, so a segment
 * is dropped for the first thing wrong with it. */
enum net_drop tcp_parse(const struct ip_view *ip, enum l4_cksum nic,
		struct tcp_view *v);
void tcp_parse_options(const uint8_t *p, size_t len, struct tcp_options *o);

/* A UDP header and what it carries (its length field's worth; bytes past
 * it in the IP payload are ignored, as RFC 768 has it). */
struct udp_view {
	uint16_t sport;
	uint16_t dport;
	const uint8_t *payload;
	uint16_t len;
};

/* The length, then the checksum: IPv4's may be absent (0), IPv6's may
 * not (RFC 8200 8.1). */
enum net_drop udp_parse(const struct ip_view *ip, enum l4_cksum nic,
		struct udp_view *v);

#endif /* EWYK_PKT_H */
