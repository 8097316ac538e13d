/* SPDX-License-Identifier: BSD-3-Clause */
/* Checksums and the receive-path parsers, on hand-built frames. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "cksum.h"
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
	struct ipv4_view ip;
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
	struct ipv4_view ip;
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
	struct ipv4_view ip;
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
	struct ipv4_view ip;
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
		cmocka_unit_test(test_drop_names_are_telemetry_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
