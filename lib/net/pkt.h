/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Validation and parsing of received Ethernet, ARP, IPv4, ICMP and TCP
 * headers. Pure functions over bytes: no mbufs, no state, so that the unit
 * tests and the fuzzer drive them directly. Each returns NET_OK or the drop
 * reason; views point into the caller's buffer.
 */
#ifndef EWYK_PKT_H
#define EWYK_PKT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net_drop.h"

#define ETH_HDR_LEN 14
#define VLAN_HDR_LEN 4
#define IPV4_HDR_MIN 20
#define TCP_HDR_MIN 20
#define ETHERTYPE_IPV4 0x0800
#define ETHERTYPE_ARP 0x0806
#define ETHERTYPE_VLAN 0x8100
#define ETHERTYPE_QINQ 0x88a8
#define IPPROTO_ICMP_ 1
#define IPPROTO_TCP_ 6

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

struct ipv4_view {
	const uint8_t *hdr;
	uint16_t hdr_len;
	uint32_t src;		/* network order */
	uint32_t dst;
	uint8_t proto;
	uint8_t ttl;
	const uint8_t *payload;	/* transport header */
	uint16_t len;		/* transport length (total length - header) */
};

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

enum net_drop eth_parse(const uint8_t *frame, size_t len, struct eth_view *v);
enum net_drop arp_parse(const uint8_t *p, size_t len, struct arp_view *v);
/* Fragments are refused (NET_DROP_IP_FRAGMENT); link padding is trimmed. */
enum net_drop ipv4_parse(const uint8_t *p, size_t len, struct ipv4_view *v);
enum net_drop icmp_parse(const struct ipv4_view *ip);
/* What the NIC said of the L4 checksum; UNKNOWN means verify it here. */
enum l4_cksum {
	L4_CKSUM_UNKNOWN,
	L4_CKSUM_GOOD,
	L4_CKSUM_BAD,
};

/* Structure first (length, data offset), then the checksum, so a segment
 * is dropped for the first thing wrong with it. */
enum net_drop tcp_parse(const struct ipv4_view *ip, enum l4_cksum nic,
		struct tcp_view *v);
void tcp_parse_options(const uint8_t *p, size_t len, struct tcp_options *o);

#endif /* EWYK_PKT_H */
