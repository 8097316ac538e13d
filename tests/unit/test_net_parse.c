/* SPDX-License-Identifier: BSD-3-Clause */
/* Checksums and the receive-path parsers, on hand-built frames; addresses
 * as text. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "cksum.h"
#include "net_addr.h"
#include "net_stack.h"
#include "pkt.h"

/* RFC 1071's worked example: 00 01 f2 03 f4 f5 f6 f7 sums to ddf2. */
static void
test_cksum_rfc1071_example(void **state)
{
	const uint8_t b[] = { 0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7 };
	struct cksum c;
	uint16_t r;

	(void)state;
	cksum_init(&c);
	cksum_feed(&c, b, sizeof(b));
	r = cksum_finish(&c);
	assert_int_equal(ntohs(r), (uint16_t)~0xddf2);
}

/* Feeding a buffer in pieces of odd length gives the one-shot result. */
static void
test_cksum_odd_pieces(void **state)
{
	uint8_t b[101];
	struct cksum c;
	size_t i, cut;

	(void)state;
	for (i = 0; i < sizeof(b); i++)
		b[i] = (uint8_t)(i * 37 + 11);
	for (cut = 0; cut <= sizeof(b); cut++) {
		cksum_init(&c);
		cksum_feed(&c, b, cut);
		cksum_feed(&c, b + cut, sizeof(b) - cut);
		assert_int_equal(cksum_finish(&c), cksum_buf(b, sizeof(b)));
	}
}

/* Every length and alignment, with bytes that make carries, sums as
 * RFC 1071 says: 16-bit big-endian words, the odd byte padded. */
static void
test_cksum_matches_word_sum(void **state)
{
	uint8_t b[300];
	size_t off, len, i;

	(void)state;
	for (i = 0; i < sizeof(b); i++)
		b[i] = (uint8_t)(i % 7 == 0 ? 0xff : i * 151 + 3);
	for (off = 0; off < 8; off++)
		for (len = 0; off + len <= sizeof(b); len++) {
			uint32_t sum = 0;

			for (i = 0; i < len; i++)
				sum += (i & 1) ? b[off + i] : b[off + i] << 8;
			while (sum >> 16)
				sum = (sum & 0xffff) + (sum >> 16);
			assert_int_equal(ntohs(cksum_buf(b + off, len)),
					(uint16_t)~sum);
		}
}

/* A valid IPv4 header from a capture: checksum b861 (RFC 1071 style). */
static const uint8_t ip_hdr[20] = {
	0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
	0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
};

static void
test_cksum_ipv4_header_verifies(void **state)
{
	uint8_t h[20];

	(void)state;
	assert_int_equal(cksum_buf(ip_hdr, sizeof(ip_hdr)), 0);
	memcpy(h, ip_hdr, sizeof(h));
	h[10] = h[11] = 0;
	assert_int_equal(ntohs(cksum_buf(h, sizeof(h))), 0xb861);
}

/* Builds IPv4 + TCP (+ options, + payload) with valid checksums. */
static size_t
build_tcp(uint8_t *p, const uint8_t *opts, size_t optlen, const char *payload)
{
	size_t plen = payload ? strlen(payload) : 0;
	size_t tcp_len = 20 + optlen + plen, total = 20 + tcp_len;
	uint32_t src = htonl(0xc6120001), dst = htonl(0xc6120002);
	struct cksum c;
	uint16_t s;

	memset(p, 0, total);
	p[0] = 0x45;
	p[2] = (uint8_t)(total >> 8);
	p[3] = (uint8_t)total;
	p[8] = 64;
	p[9] = 6;
	memcpy(p + 12, &src, 4);
	memcpy(p + 16, &dst, 4);
	s = cksum_buf(p, 20);
	memcpy(p + 10, &s, 2);
	p[20] = 0x30; p[21] = 0x39;		/* sport 12345 */
	p[22] = 0x00; p[23] = 0x50;		/* dport 80 */
	p[24] = 0x01; p[27] = 0x02;		/* seq 0x01000002 */
	p[32] = (uint8_t)(((20 + optlen) / 4) << 4);
	p[33] = TCP_SYN;
	p[34] = 0xff; p[35] = 0xff;
	memcpy(p + 40, opts, optlen);
	if (plen)
		memcpy(p + 40 + optlen, payload, plen);
	cksum_init(&c);
	cksum_pseudo_ipv4(&c, src, dst, 6, (uint16_t)tcp_len);
	cksum_feed(&c, p + 20, tcp_len);
	s = cksum_finish(&c);
	memcpy(p + 36, &s, 2);
	return total;
}

static void
test_ipv4_and_tcp_valid(void **state)
{
	const uint8_t opts[] = { 2, 4, 0x05, 0xb4, 1, 3, 3, 7, 4, 2, 1, 1,
		8, 10, 0, 0, 0, 9, 0, 0, 0, 0 , 0, 0};
	uint8_t p[200];
	struct ip_view ip;
	struct tcp_view t;
	size_t n = build_tcp(p, opts, sizeof(opts), "hi");

	(void)state;
	assert_int_equal(ipv4_parse(p, n + 6 /* link padding */, &ip), NET_OK);
	assert_int_equal(ip.len, n - 20);
	assert_int_equal(ip.proto, 6);
	assert_int_equal(tcp_parse(&ip, L4_CKSUM_UNKNOWN, &t), NET_OK);
	assert_int_equal(t.sport, 12345);
	assert_int_equal(t.dport, 80);
	assert_int_equal(t.seq, 0x01000002);
	assert_int_equal(t.len, 2);
	assert_memory_equal(t.payload, "hi", 2);
	assert_int_equal(t.opt.mss, 1460);
	assert_true(t.opt.has_wscale);
	assert_int_equal(t.opt.wscale, 7);
	assert_true(t.opt.sack_ok);
	assert_true(t.opt.has_ts);
	assert_int_equal(t.opt.ts_val, 9);
	assert_false(t.opt.malformed);
}

static void
test_ipv4_rejects(void **state)
{
	uint8_t p[200], q[200];
	struct ip_view ip;
	size_t n = build_tcp(p, NULL, 0, NULL);

	(void)state;
	assert_int_equal(ipv4_parse(p, 19, &ip), NET_DROP_IP_SHORT);
	memcpy(q, p, n);
	q[0] = 0x65;
	assert_int_equal(ipv4_parse(q, n, &ip), NET_DROP_IP_VERSION);
	memcpy(q, p, n);
	q[0] = 0x44;
	assert_int_equal(ipv4_parse(q, n, &ip), NET_DROP_IP_HDRLEN);
	memcpy(q, p, n);
	q[0] = 0x4f;		/* 60-byte header in a 40-byte packet */
	assert_int_equal(ipv4_parse(q, n, &ip), NET_DROP_IP_HDRLEN);
	memcpy(q, p, n);
	q[3] = (uint8_t)(n + 1);	/* total length past the frame */
	assert_int_equal(ipv4_parse(q, n, &ip), NET_DROP_IP_TOTLEN);
	memcpy(q, p, n);
	q[10] ^= 0x55;
	assert_int_equal(ipv4_parse(q, n, &ip), NET_DROP_IP_CKSUM);
}

static void
test_ipv4_fragment_dropped(void **state)
{
	uint8_t p[200];
	struct ip_view ip;
	size_t n = build_tcp(p, NULL, 0, NULL);
	uint16_t s;

	(void)state;
	p[6] = 0x20;		/* MF */
	p[10] = p[11] = 0;
	s = cksum_buf(p, 20);
	memcpy(p + 10, &s, 2);
	assert_int_equal(ipv4_parse(p, n, &ip), NET_DROP_IP_FRAGMENT);
	p[6] = 0x00;
	p[7] = 0x10;		/* offset, no MF: the last fragment */
	p[10] = p[11] = 0;
	s = cksum_buf(p, 20);
	memcpy(p + 10, &s, 2);
	assert_int_equal(ipv4_parse(p, n, &ip), NET_DROP_IP_FRAGMENT);
}

static void
test_tcp_rejects(void **state)
{
	uint8_t p[200];
	struct ip_view ip;
	struct tcp_view t;
	size_t n = build_tcp(p, NULL, 0, "data");

	(void)state;
	assert_int_equal(ipv4_parse(p, n, &ip), NET_OK);
	p[36] ^= 1;
	assert_int_equal(tcp_parse(&ip, L4_CKSUM_UNKNOWN, &t), NET_DROP_TCP_CKSUM);
	/* the NIC vouched for it: not verified again */
	assert_int_equal(tcp_parse(&ip, L4_CKSUM_GOOD, &t), NET_OK);
	assert_int_equal(tcp_parse(&ip, L4_CKSUM_BAD, &t), NET_DROP_TCP_CKSUM);
	p[32] = 0xf0;		/* data offset 60 > 24 bytes of segment */
	assert_int_equal(tcp_parse(&ip, L4_CKSUM_BAD, &t), NET_DROP_TCP_DOFF);
	p[32] = 0x40;		/* 16 bytes: less than a header */
	assert_int_equal(tcp_parse(&ip, L4_CKSUM_GOOD, &t), NET_DROP_TCP_DOFF);
	ip.len = 19;
	assert_int_equal(tcp_parse(&ip, L4_CKSUM_GOOD, &t), NET_DROP_TCP_SHORT);
}

static void
test_tcp_bad_options(void **state)
{
	struct tcp_options o;
	const uint8_t zero_len[] = { 2, 0, 5, 0xb4 };
	const uint8_t truncated[] = { 1, 1, 2, 4, 5 };
	const uint8_t huge_ws[] = { 3, 3, 200, 0 };
	const uint8_t eol_then_junk[] = { 2, 4, 1, 0, 0, 9, 9, 9 };

	(void)state;
	tcp_parse_options(zero_len, sizeof(zero_len), &o);
	assert_true(o.malformed);
	assert_int_equal(o.mss, 0);
	tcp_parse_options(truncated, sizeof(truncated), &o);
	assert_true(o.malformed);
	assert_int_equal(o.mss, 0);
	tcp_parse_options(huge_ws, sizeof(huge_ws), &o);
	assert_false(o.malformed);
	assert_int_equal(o.wscale, 14);	/* RFC 7323: clamp to 14 */
	tcp_parse_options(eol_then_junk, sizeof(eol_then_junk), &o);
	assert_false(o.malformed);
	assert_int_equal(o.mss, 256);
}

static void
test_eth_and_arp(void **state)
{
	uint8_t f[64] = { 0 };
	struct eth_view e;
	struct arp_view a;

	(void)state;
	assert_int_equal(eth_parse(f, 13, &e), NET_DROP_ETH_SHORT);
	f[12] = 0x81;		/* 802.1Q, tag cut short */
	assert_int_equal(eth_parse(f, 16, &e), NET_DROP_ETH_SHORT);
	f[15] = 7;
	f[16] = 0x08;
	assert_int_equal(eth_parse(f, 18, &e), NET_OK);
	assert_int_equal(e.vlan, 7);
	assert_int_equal(e.type, ETHERTYPE_IPV4);
	assert_int_equal(e.len, 0);

	memset(f, 0, sizeof(f));
	f[1] = 1; f[2] = 8; f[4] = 6; f[5] = 4; f[7] = 1;
	f[14] = 198; f[15] = 18; f[17] = 1;
	f[24] = 198; f[25] = 18; f[27] = 2;
	assert_int_equal(arp_parse(f, 28, &a), NET_OK);
	assert_int_equal(a.op, 1);
	assert_int_equal(ntohl(a.tpa), 0xc6120002);
	assert_int_equal(arp_parse(f, 27, &a), NET_DROP_ARP_MALFORMED);
	f[5] = 16;		/* IPv6-sized protocol address */
	assert_int_equal(arp_parse(f, 28, &a), NET_DROP_ARP_MALFORMED);
}

/* scapy's IPv6(src="2001:2::1", dst="2001:2::2") / TCP(sport=40000,
 * dport=80, flags="S", seq=1000, options=[("MSS", 1440)]): its checksum is
 * scapy's, not ours. */
static const uint8_t syn6[64] = {
	0x60, 0x00, 0x00, 0x00, 0x00, 0x18, 0x06, 0x40, 0x20, 0x01, 0x00, 0x02,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x20, 0x01, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x02, 0x9c, 0x40, 0x00, 0x50, 0x00, 0x00, 0x03, 0xe8,
	0x00, 0x00, 0x00, 0x00, 0x60, 0x02, 0xff, 0xff, 0xb7, 0xb9, 0x00, 0x00,
	0x02, 0x04, 0x05, 0xa0,
};

/* scapy's neighbour solicitation for 2001:2::2 from 2001:2::1 to its
 * solicited-node group, with a source link-layer address option. */
static const uint8_t ns6[72] = {
	0x60, 0x00, 0x00, 0x00, 0x00, 0x20, 0x3a, 0xff, 0x20, 0x01, 0x00, 0x02,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
	0xff, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
	0xff, 0x00, 0x00, 0x02, 0x87, 0x00, 0x37, 0x93, 0x00, 0x00, 0x00, 0x00,
	0x20, 0x01, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x02, 0x01, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
};

static void
test_ipv6_and_tcp_valid(void **state)
{
	uint8_t p[80];
	struct ip_view ip;
	struct tcp_view t;

	(void)state;
	memcpy(p, syn6, sizeof(syn6));
	assert_int_equal(ipv6_parse(p, sizeof(syn6) + 6 /* padding */, &ip),
			NET_OK);
	assert_int_equal(ip.family, NET_AF_INET6);
	assert_int_equal(ip.proto, 6);
	assert_int_equal(ip.hdr_len, 40);
	assert_int_equal(ip.len, 24);
	assert_int_equal(ip.ttl, 64);
	assert_int_equal(ip.src.v6[15], 1);
	assert_int_equal(ip.dst.v6[15], 2);
	assert_int_equal(tcp_parse(&ip, L4_CKSUM_UNKNOWN, &t), NET_OK);
	assert_int_equal(t.sport, 40000);
	assert_int_equal(t.seq, 1000);
	assert_int_equal(t.opt.mss, 1440);
	p[63] ^= 1;		/* the IPv6 pseudo header is in the sum */
	assert_int_equal(tcp_parse(&ip, L4_CKSUM_UNKNOWN, &t), NET_DROP_TCP_CKSUM);
	p[63] ^= 1;
	p[39] ^= 1;		/* so is the destination address */
	assert_int_equal(ipv6_parse(p, sizeof(syn6), &ip), NET_OK);
	assert_int_equal(tcp_parse(&ip, L4_CKSUM_UNKNOWN, &t), NET_DROP_TCP_CKSUM);
}

static void
test_ipv6_rejects(void **state)
{
	uint8_t p[80];
	struct ip_view ip;

	(void)state;
	memcpy(p, syn6, sizeof(syn6));
	assert_int_equal(ipv6_parse(p, 39, &ip), NET_DROP_IP6_SHORT);
	p[0] = 0x40;
	assert_int_equal(ipv6_parse(p, sizeof(syn6), &ip), NET_DROP_IP_VERSION);
	p[0] = 0x60;
	assert_int_equal(ipv6_parse(p, sizeof(syn6) - 1, &ip),
			NET_DROP_IP6_PAYLOAD_LEN);	/* beyond the frame */
	p[5] = 0;		/* a jumbogram's 0 */
	assert_int_equal(ipv6_parse(p, sizeof(syn6), &ip), NET_DROP_IP6_PAYLOAD_LEN);
	p[5] = 0x18;
	p[8] = 0xff;		/* a multicast source */
	assert_int_equal(ipv6_parse(p, sizeof(syn6), &ip),
			NET_DROP_IP6_SRC_MULTICAST);
	p[8] = 0x20;
	p[6] = 132;		/* SCTP: no upper layer of ours */
	assert_int_equal(ipv6_parse(p, sizeof(syn6), &ip), NET_DROP_IP6_NEXT_HEADER);
	assert_int_equal(ip.pp_code, 1);
	assert_int_equal(ip.pp_ptr, 6);	/* the fixed header's next header */
	p[6] = 59;		/* no next header: nothing to answer */
	assert_int_equal(ipv6_parse(p, sizeof(syn6), &ip), NET_DROP_IP6_NEXT_HEADER);
	assert_int_equal(ip.pp_code, -1);
}

/* The fixed header of syn6, then ext (n bytes of extension headers, the
 * first named by nh), then its TCP segment (not checked here). */
static size_t
with_ext(uint8_t *p, uint8_t nh, const uint8_t *ext, size_t n)
{
	memcpy(p, syn6, 40);
	memcpy(p + 40, ext, n);
	memcpy(p + 40 + n, syn6 + 40, 24);
	p[4] = (uint8_t)((n + 24) >> 8);
	p[5] = (uint8_t)(n + 24);
	p[6] = nh;
	return 40 + n + 24;
}

static void
test_ipv6_extension_headers(void **state)
{
	/* hop-by-hop (PadN), destination options (PadN), to TCP */
	const uint8_t hbh_dst[16] = { 60, 0, 1, 4, 0, 0, 0, 0,
		6, 0, 1, 4, 0, 0, 0, 0 };
	const uint8_t rt4[8] = { 6, 0, 4, 0 };		/* type 4, none left */
	const uint8_t rt4_left[8] = { 6, 0, 4, 1 };
	const uint8_t rt0[24] = { 6, 2, 0, 0 };		/* type 0, none left */
	const uint8_t frag[8] = { 6, 0, 0, 1 };		/* more fragments */
	const uint8_t dst_hbh[16] = { 0, 0, 1, 4, 0, 0, 0, 0,
		6, 0, 1, 4, 0, 0, 0, 0 };		/* hop-by-hop not first */
	uint8_t opt[8] = { 6, 0, 0x07, 2, 'a', 'b', 1, 0 };
	uint8_t p[200], chain[8 * (IP6_EXT_MAX + 1)];
	struct ip_view ip;
	size_t n, i;

	(void)state;
	n = with_ext(p, 0, hbh_dst, sizeof(hbh_dst));
	assert_int_equal(ipv6_parse(p, n, &ip), NET_OK);
	assert_int_equal(ip.hdr_len, 56);
	assert_int_equal(ip.proto, 6);
	assert_int_equal(ip.len, 24);
	n = with_ext(p, 43, rt4, sizeof(rt4));
	assert_int_equal(ipv6_parse(p, n, &ip), NET_OK);
	n = with_ext(p, 43, rt4_left, sizeof(rt4_left));
	assert_int_equal(ipv6_parse(p, n, &ip), NET_DROP_IP6_ROUTING);
	assert_int_equal(ip.pp_code, 0);
	assert_int_equal(ip.pp_ptr, 42);	/* its routing type */
	n = with_ext(p, 43, rt0, sizeof(rt0));
	assert_int_equal(ipv6_parse(p, n, &ip), NET_DROP_IP6_ROUTING_0);
	n = with_ext(p, 44, frag, sizeof(frag));
	assert_int_equal(ipv6_parse(p, n, &ip), NET_DROP_IP6_FRAGMENT);
	n = with_ext(p, 60, dst_hbh, sizeof(dst_hbh));
	assert_int_equal(ipv6_parse(p, n, &ip), NET_DROP_IP6_NEXT_HEADER);
	assert_int_equal(ip.pp_code, 1);
	assert_int_equal(ip.pp_ptr, 40);	/* the field that named it */
	/* An unknown option acts by its type's two high bits. */
	n = with_ext(p, 60, opt, sizeof(opt));
	assert_int_equal(ipv6_parse(p, n, &ip), NET_OK);	/* 00: skip */
	p[42] = 0x47;
	assert_int_equal(ipv6_parse(p, n, &ip), NET_DROP_IP6_OPTION);
	assert_int_equal(ip.pp_code, -1);			/* 01: discard */
	p[42] = 0x87;
	assert_int_equal(ipv6_parse(p, n, &ip), NET_DROP_IP6_OPTION);
	assert_int_equal(ip.pp_code, 2);			/* 10: and answer */
	assert_int_equal(ip.pp_ptr, 42);
	assert_true(ip.pp_mcast);
	p[42] = 0xc7;
	assert_int_equal(ipv6_parse(p, n, &ip), NET_DROP_IP6_OPTION);
	assert_false(ip.pp_mcast);		/* 11: not to a group */
	p[43] = 200;		/* an option past its header */
	assert_int_equal(ipv6_parse(p, n, &ip), NET_DROP_IP6_EXT_HDR);
	/* A header longer than the packet. */
	n = with_ext(p, 60, opt, sizeof(opt));
	p[41] = 9;
	assert_int_equal(ipv6_parse(p, n, &ip), NET_DROP_IP6_EXT_HDR);
	/* IP6_EXT_MAX destination options headers pass, one more does not. */
	for (i = 0; i <= IP6_EXT_MAX; i++) {
		memset(chain + 8 * i, 0, 8);
		chain[8 * i] = 60;
		chain[8 * i + 2] = 1;	/* PadN of 4 */
		chain[8 * i + 3] = 4;
	}
	chain[8 * (IP6_EXT_MAX - 1)] = 6;
	n = with_ext(p, 60, chain, 8 * IP6_EXT_MAX);
	assert_int_equal(ipv6_parse(p, n, &ip), NET_OK);
	chain[8 * (IP6_EXT_MAX - 1)] = 60;
	chain[8 * IP6_EXT_MAX] = 6;
	n = with_ext(p, 60, chain, 8 * (IP6_EXT_MAX + 1));
	assert_int_equal(ipv6_parse(p, n, &ip), NET_DROP_IP6_EXT_CHAIN);
}

static void
test_icmp6_and_nd(void **state)
{
	uint8_t p[80];
	struct ip_view ip;
	struct nd_view v;

	(void)state;
	memcpy(p, ns6, sizeof(ns6));
	assert_int_equal(ipv6_parse(p, sizeof(ns6), &ip), NET_OK);
	assert_int_equal(ip.proto, 58);
	assert_int_equal(icmp6_parse(&ip), NET_OK);
	assert_int_equal(nd_parse(&ip, &v), NET_OK);
	assert_int_equal(v.type, 135);
	assert_int_equal(v.target.v6[15], 2);
	assert_non_null(v.lladdr);
	assert_int_equal(v.lladdr[5], 1);
	p[60] ^= 1;		/* the checksum covers the message */
	assert_int_equal(icmp6_parse(&ip), NET_DROP_ICMP6_CKSUM);
	p[60] ^= 1;
	ip.ttl = 64;		/* from beyond the link */
	assert_int_equal(nd_parse(&ip, &v), NET_DROP_ND_INVALID);
	ip.ttl = 255;
	p[65] = 0;		/* an option of length 0 */
	assert_int_equal(nd_parse(&ip, &v), NET_DROP_ND_INVALID);
	p[65] = 1;
	/* A DAD probe comes from :: without a link-layer address. */
	memset(ip.src.v6, 0, 16);
	assert_int_equal(nd_parse(&ip, &v), NET_DROP_ND_INVALID);
	ip.len = 24;		/* the option gone */
	assert_int_equal(nd_parse(&ip, &v), NET_OK);
	assert_null(v.lladdr);
	p[48] = 0xff;		/* a multicast target */
	assert_int_equal(nd_parse(&ip, &v), NET_DROP_ND_INVALID);
}

static void
test_link_local_from_mac(void **state)
{
	static const uint8_t mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
	static const uint8_t want[16] = { 0xfe, 0x80, [8] = 0x50, 0x54, 0x00,
		0xff, 0xfe, 0x12, 0x34, 0x56 };	/* fe80::5054:ff:fe12:3456 */
	uint8_t ll[16];

	(void)state;
	net_ip6_link_local(mac, ll);
	assert_memory_equal(ll, want, 16);
}

static void
test_drop_names_are_telemetry_keys(void **state)
{
	unsigned int r;

	(void)state;
	assert_null(net_drop_name(NET_OK));
	for (r = 1; r < NET_DROP__COUNT; r++) {
		const char *n = net_drop_name(r);

		assert_non_null(n);
		assert_int_equal(strspn(n, "abcdefghijklmnopqrstuvwxyz0123456789_"),
				strlen(n));
	}
}

/* An address as text: an upstream's Host field and the access log's
 * client. IPv6 in RFC 5952's form, bracketed when a port follows (RFC
 * 3986 3.2.2); no family: "-". */
static void
test_addr_format(void **state)
{
	static const uint8_t six[16] = { 0x20, 0x01, 0, 2, [15] = 1 };
	static const uint8_t mapped[16] = { [10] = 0xff, [11] = 0xff, 198, 18,
		0, 1 };
	struct net_addr a = { .ip = net_ip4(htonl(0xc6120001)),
		.family = NET_AF_INET };
	char buf[64];

	(void)state;
	assert_int_equal(net_addr_format(&a, 8080, buf, sizeof(buf)), 15);
	assert_string_equal(buf, "198.18.0.1:8080");
	net_addr_format(&a, 0, buf, sizeof(buf));
	assert_string_equal(buf, "198.18.0.1");
	a = (struct net_addr){ .ip = net_ip6(six), .family = NET_AF_INET6 };
	assert_int_equal(net_addr_format(&a, 8086, buf, sizeof(buf)), 16);
	assert_string_equal(buf, "[2001:2::1]:8086");
	net_addr_format(&a, 0, buf, sizeof(buf));
	assert_string_equal(buf, "2001:2::1");
	a.ip = net_ip6(mapped);
	net_addr_format(&a, 80, buf, sizeof(buf));
	assert_string_equal(buf, "[::ffff:198.18.0.1]:80");
	a.family = 0;
	net_addr_format(&a, 0, buf, sizeof(buf));
	assert_string_equal(buf, "-");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cksum_rfc1071_example),
		cmocka_unit_test(test_cksum_odd_pieces),
		cmocka_unit_test(test_cksum_matches_word_sum),
		cmocka_unit_test(test_cksum_ipv4_header_verifies),
		cmocka_unit_test(test_ipv4_and_tcp_valid),
		cmocka_unit_test(test_ipv4_rejects),
		cmocka_unit_test(test_ipv4_fragment_dropped),
		cmocka_unit_test(test_tcp_rejects),
		cmocka_unit_test(test_tcp_bad_options),
		cmocka_unit_test(test_eth_and_arp),
		cmocka_unit_test(test_ipv6_and_tcp_valid),
		cmocka_unit_test(test_ipv6_rejects),
		cmocka_unit_test(test_ipv6_extension_headers),
		cmocka_unit_test(test_icmp6_and_nd),
		cmocka_unit_test(test_link_local_from_mac),
		cmocka_unit_test(test_drop_names_are_telemetry_keys),
		cmocka_unit_test(test_addr_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
