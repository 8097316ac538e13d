/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * UDP on a real stack, in either family (TH_FAMILY=6): a datagram to a
 * bound port goes up whole with its addresses, ports and ECN bits, and an
 * answer goes back summed and unfragmented; one to a port not bound gets
 * ICMP's Port Unreachable quoting it, within the budget; malformed ones
 * (short, a length past the packet, a bad sum, IPv6 without a sum) are
 * counted by reason and answered with nothing.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cksum.h"
#include "tcp_harness.h"

#define BOUND 4433
#define PEER_PORT 50000

static const uint8_t peer_mac[6] = { 2, 0, 0, 0, 0, 1 };

/* What the bound port's upcall saw. */
static struct {
	int calls;
	struct net_udp_dgram d;
	uint8_t data[2048];
} got;

static void
on_dgram(void *ctx, struct net_stack *ns, const struct net_udp_dgram *d)
{
	(void)ctx;
	(void)ns;
	got.calls++;
	got.d = *d;
	memcpy(got.data, d->data, d->len);
	got.d.data = got.data;
}

/* How a test spoils the datagram it builds. */
enum spoil { NONE, BAD_SUM, NO_SUM, LEN_PAST, SHORT };

/* A UDP datagram from the peer to dport with payload (ECN bits ecn),
 * given to the stack on port 0. */
static void
inject(struct th *h, uint16_t dport, const void *payload, uint16_t len,
		uint8_t ecn, enum spoil spoil)
{
	bool v6 = th_family() == NET_AF_INET6;
	struct net_addr src = th_peer(h);
	union net_ip dst = th_local(h, 0);
	uint16_t ip_len = v6 ? 40 : 20, udp_len = (uint16_t)(8 + len), sum;
	uint16_t l4 = spoil == SHORT ? 6 : udp_len;
	uint8_t f[14 + 40 + 8 + 1500], *ip = f + 14, *u = f + 14 + ip_len;
	struct cksum c;

	memcpy(f, h->ifc.mac, 6);
	memcpy(f + 6, peer_mac, 6);
	memset(ip, 0, ip_len);
	if (v6) {
		f[12] = 0x86;
		f[13] = 0xdd;
		ip[0] = 0x60;
		ip[1] = (uint8_t)(ecn << 4);
		ip[4] = (uint8_t)(l4 >> 8);
		ip[5] = (uint8_t)l4;
		ip[6] = 17;
		ip[7] = 64;
		memcpy(ip + 8, src.ip.v6, 16);
		memcpy(ip + 24, dst.v6, 16);
	} else {
		f[12] = 0x08;
		f[13] = 0x00;
		ip[0] = 0x45;
		ip[1] = ecn;
		ip[2] = (uint8_t)((20 + l4) >> 8);
		ip[3] = (uint8_t)(20 + l4);
		ip[8] = 64;
		ip[9] = 17;
		memcpy(ip + 12, &src.ip.v4, 4);
		memcpy(ip + 16, &dst.v4, 4);
		sum = cksum_buf(ip, 20);
		memcpy(ip + 10, &sum, 2);
	}
	u[0] = PEER_PORT >> 8;
	u[1] = PEER_PORT & 0xff;
	u[2] = (uint8_t)(dport >> 8);
	u[3] = (uint8_t)dport;
	u[4] = (uint8_t)((udp_len + (spoil == LEN_PAST)) >> 8);
	u[5] = (uint8_t)(udp_len + (spoil == LEN_PAST));
	u[6] = u[7] = 0;
	memcpy(u + 8, payload, len);
	if (spoil != NO_SUM) {
		cksum_init(&c);
		cksum_pseudo(&c, src.family, &src.ip, &dst, 17, udp_len);
		cksum_feed(&c, u, udp_len);
		sum = cksum_finish(&c);
		if (spoil == BAD_SUM)
			sum ^= 0x0100;
		memcpy(u + 6, &sum, 2);
	}
	th_rx_frame(h, 0, f, (uint16_t)(14 + ip_len + l4));
}

/* The next frame the stack sent, into f (2 KB); 0 when none. */
static uint16_t
next_frame(struct th *h, uint8_t *f)
{
	uint8_t port;

	return th_next_frame(h, f, 2048, &port);
}

static struct th *
bound_stack(const struct tcp_config *cfg)
{
	struct th *h = th_new(cfg);

	th_drain(h);	/* IPv6's start: its announcements */
	assert_int_equal(net_udp_bind(h->ns, BOUND, on_dgram, NULL), 0);
	memset(&got, 0, sizeof(got));
	return h;
}

static uint16_t
rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* The frame's transport part, checked for the family's IP header to the
 * peer with protocol proto; its length in *len. */
static const uint8_t *
l4_of(const uint8_t *f, uint16_t flen, uint8_t proto, uint16_t *len)
{
	bool v6 = th_family() == NET_AF_INET6;

	assert_true(flen > 14 + (v6 ? 40 : 20));
	assert_int_equal(rd16(f + 12), v6 ? 0x86dd : 0x0800);
	assert_memory_equal(f, peer_mac, 6);
	assert_int_equal(f[14 + (v6 ? 6 : 9)], proto);
	if (!v6) {
		assert_int_equal(cksum_buf(f + 14, 20), 0);
		*len = (uint16_t)(rd16(f + 16) - 20);
		return f + 34;
	}
	*len = rd16(f + 18);
	return f + 54;
}

/* The sum of a transport message in frame f (pseudo-header included). */
static uint16_t
l4_sum(const uint8_t *f, uint8_t proto, const uint8_t *l4, uint16_t len)
{
	bool v6 = th_family() == NET_AF_INET6;
	struct cksum c;

	cksum_init(&c);
	if (v6)
		cksum_pseudo_ipv6(&c, f + 22, f + 38, proto, len);
	else if (proto == 17)
		cksum_pseudo_ipv4(&c, *(const uint32_t *)(f + 26),
				*(const uint32_t *)(f + 30), proto, len);
	cksum_feed(&c, l4, len);
	return cksum_finish(&c);
}

static void
test_bound_port_gets_the_datagram_and_answers(void **state)
{
	struct th *h = bound_stack(NULL);
	struct net_addr peer = th_peer(h);
	static const char hello[] = "hello over udp";
	uint8_t f[2048];
	const uint8_t *u;
	uint16_t n, len;
	struct net_udp_dgram ans;

	(void)state;
	inject(h, BOUND, hello, sizeof(hello), 2, NONE);
	assert_int_equal(got.calls, 1);
	assert_int_equal(got.d.len, sizeof(hello));
	assert_memory_equal(got.data, hello, sizeof(hello));
	assert_int_equal(got.d.local_port, BOUND);
	assert_int_equal(got.d.peer_port, PEER_PORT);
	assert_int_equal(got.d.ecn, 2);
	assert_int_equal(got.d.peer.family, peer.family);
	assert_true(net_ip_eq(&got.d.peer.ip, &peer.ip));
	assert_int_equal(h->ns->stats->udp.udp_in_dgrams, 1);
	assert_int_equal(th_pending(h), 0);	/* nothing said back */

	/* The answer: to the peer's port, summed, the ECN bits asked. */
	ans = got.d;
	ans.data = (const uint8_t *)"pong";
	ans.len = 4;
	ans.ecn = 1;
	th_learn(h, 0, &peer, peer_mac);
	assert_int_equal(net_udp_send(h->ns, &ans), 0);
	net_flush(h->ns);
	n = next_frame(h, f);
	u = l4_of(f, n, 17, &len);
	assert_int_equal(len, 12);
	assert_int_equal(rd16(u), BOUND);
	assert_int_equal(rd16(u + 2), PEER_PORT);
	assert_int_equal(rd16(u + 4), 12);
	assert_memory_equal(u + 8, "pong", 4);
	assert_int_equal(l4_sum(f, 17, u, len), 0);
	if (th_family() == NET_AF_INET6) {
		assert_int_equal((f[15] >> 4) & 3, 1);
	} else {
		assert_int_equal(f[15] & 3, 1);
		assert_int_equal(rd16(f + 20) & 0x4000, 0x4000);	/* DF */
	}
	assert_int_equal(h->ns->stats->udp.udp_out_dgrams, 1);
	th_free(h);
}

static void
test_send_refuses_what_cannot_go(void **state)
{
	struct th *h = bound_stack(NULL);
	static uint8_t big[1500];
	uint8_t f[2048];
	uint16_t n;
	struct net_udp_dgram d = {
		.port = 0, .local = th_local(h, 0), .local_port = BOUND,
		.peer = th_peer(h), .peer_port = PEER_PORT, .data = big,
	};

	(void)state;
	/* Past the MTU: refused, never fragmented. */
	d.len = (uint16_t)(1500 - (th_family() == NET_AF_INET6 ? 40 : 20) - 8 + 1);
	assert_int_equal(net_udp_send(h->ns, &d), -EMSGSIZE);
	/* A peer not yet resolved: a solicitation goes instead. */
	d.len = 100;
	assert_int_equal(net_udp_send(h->ns, &d), -EHOSTUNREACH);
	net_flush(h->ns);
	n = next_frame(h, f);
	assert_true(n > 0);
	assert_true(th_is_solicitation(h, f, 0, &d.peer));
	assert_int_equal(h->ns->stats->udp.udp_out_unresolved_dgrams, 1);
	assert_int_equal(h->ns->stats->udp.udp_out_dgrams, 0);
	/* Once known, the largest datagram goes in one frame. */
	th_learn(h, 0, &d.peer, peer_mac);
	d.len = (uint16_t)(1500 - (th_family() == NET_AF_INET6 ? 40 : 20) - 8);
	assert_int_equal(net_udp_send(h->ns, &d), 0);
	net_flush(h->ns);
	assert_int_equal(next_frame(h, f), 14 + 1500);
	th_free(h);
}

static void
test_closed_port_gets_port_unreachable(void **state)
{
	struct th *h = bound_stack(NULL);
	bool v6 = th_family() == NET_AF_INET6;
	uint8_t f[2048];
	const uint8_t *icmp;
	uint16_t n, len;

	(void)state;
	inject(h, BOUND + 1, "knock", 5, 0, NONE);
	assert_int_equal(got.calls, 0);
	assert_int_equal(h->ns->stats->drop[NET_DROP_UDP_NO_PORT], 1);
	n = next_frame(h, f);
	icmp = l4_of(f, n, v6 ? 58 : 1, &len);
	assert_int_equal(icmp[0], v6 ? 1 : 3);	/* destination unreachable */
	assert_int_equal(icmp[1], v6 ? 4 : 3);	/* port */
	if (v6)
		assert_int_equal(l4_sum(f, 58, icmp, len), 0);
	else
		assert_int_equal(cksum_buf(icmp, len), 0);
	/* It quotes the datagram: its IP header, then the UDP header. */
	assert_int_equal(len, 8 + (v6 ? 40 : 20) + 8 + 5);
	assert_int_equal(icmp[8] >> 4, v6 ? 6 : 4);
	assert_int_equal(rd16(icmp + 8 + (v6 ? 40 : 20) + 2), BOUND + 1);
	assert_int_equal(th_pending(h), 0);
	th_free(h);
}

static void
test_port_unreachables_keep_to_the_budget(void **state)
{
	struct tcp_config cfg;
	struct th *h;
	unsigned int i, sent = 0;
	uint8_t f[2048];

	(void)state;
	tcp_config_defaults(&cfg);
	cfg.icmp_error_limit = 4;
	cfg.icmp6_error_limit = 4;
	h = bound_stack(&cfg);
	for (i = 0; i < 50; i++)
		inject(h, BOUND + 1, "x", 1, 0, NONE);
	while (next_frame(h, f) > 0)
		sent++;
	/* A second's budget is between half and one and a half times it. */
	assert_in_range(sent, 2, 6);
	if (th_family() == NET_AF_INET6)
		assert_int_equal(h->ns->stats->nd.icmp6_errors_limited, 50 - sent);
	else
		assert_int_equal(h->ns->stats->udp.icmp_errors_limited_pkts,
				50 - sent);
	assert_int_equal(h->ns->stats->drop[NET_DROP_UDP_NO_PORT], 50);
	/* The next second has a budget again. */
	th_advance(h, 1000);
	inject(h, BOUND + 1, "x", 1, 0, NONE);
	assert_true(next_frame(h, f) > 0);
	th_free(h);
}

static void
test_malformed_datagrams_are_counted_and_not_answered(void **state)
{
	struct th *h = bound_stack(NULL);
	bool v6 = th_family() == NET_AF_INET6;

	(void)state;
	inject(h, BOUND, "abc", 3, 0, BAD_SUM);
	inject(h, BOUND + 1, "abc", 3, 0, BAD_SUM);	/* no answer either */
	assert_int_equal(h->ns->stats->drop[NET_DROP_UDP_CKSUM], 2);
	inject(h, BOUND, "abc", 3, 0, LEN_PAST);
	assert_int_equal(h->ns->stats->drop[NET_DROP_UDP_LEN], 1);
	inject(h, BOUND, "abc", 3, 0, SHORT);
	assert_int_equal(h->ns->stats->drop[NET_DROP_UDP_SHORT], 1);
	/* No sum at all: IPv4 allows it, IPv6 does not (RFC 8200 8.1). */
	inject(h, BOUND, "abc", 3, 0, NO_SUM);
	assert_int_equal(got.calls, v6 ? 0 : 1);
	assert_int_equal(h->ns->stats->drop[NET_DROP_UDP_CKSUM], v6 ? 3 : 2);
	assert_int_equal(th_pending(h), 0);
	th_free(h);
}

static void
test_bind_refuses_what_cannot_be(void **state)
{
	struct th *h = bound_stack(NULL);
	uint16_t p;

	(void)state;
	assert_int_equal(net_udp_bind(h->ns, BOUND, on_dgram, NULL), -EEXIST);
	assert_int_equal(net_udp_bind(h->ns, 0, on_dgram, NULL), -EINVAL);
	assert_int_equal(net_udp_bind(h->ns, 9, NULL, NULL), -EINVAL);
	for (p = 1; p < NET_MAX_UDP_BINDS; p++)
		assert_int_equal(net_udp_bind(h->ns, p, on_dgram, NULL), 0);
	assert_int_equal(net_udp_bind(h->ns, 999, on_dgram, NULL), -ENOSPC);
	th_free(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bound_port_gets_the_datagram_and_answers),
		cmocka_unit_test(test_send_refuses_what_cannot_go),
		cmocka_unit_test(test_closed_port_gets_port_unreachable),
		cmocka_unit_test(test_port_unreachables_keep_to_the_budget),
		cmocka_unit_test(test_malformed_datagrams_are_counted_and_not_answered),
		cmocka_unit_test(test_bind_refuses_what_cannot_be),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
