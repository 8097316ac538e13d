/* SPDX-License-Identifier: BSD-3-Clause */
/* A stack with two ports: a connection answers by the port it came by,
 * from that port's MAC and address, its timers too; the same peer may
 * reach both ports at once; a frame for the other port's address is not
 * ours; counters split by port; an active open goes out of the port whose
 * subnet holds the peer, by that port's ARP cache and RSS; a port with
 * several IPv4 addresses takes them all in and opens from each in turn. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include <rte_mbuf.h>

#include "tcp_harness.h"

#define IRS 5000000u

/* The SYN-ACK to a SYN on port, checked to leave by it. */
static uint32_t
open_on(struct th *h, uint8_t port, const struct net_if *ifc)
{
	struct th_seg s = th_seg_from(IRS, 0, TCP_SYN);
	union net_ip dst = th_local(h, port);
	struct th_out o;

	th_inject_on(h, port, &dst, &s);
	assert_true(th_next(h, &o));
	assert_int_equal(o.t.flags, TCP_SYN | TCP_ACK);
	assert_int_equal(o.port, port);
	assert_memory_equal(o.src_mac, ifc->mac, 6);
	assert_true(net_ip_eq(&o.saddr, &dst));
	s = th_seg_from(IRS + 1, o.t.seq + 1, TCP_ACK);
	th_inject_on(h, port, &dst, &s);
	assert_int_equal(th_pending(h), 0);
	return o.t.seq + 1;
}

static void
test_answers_leave_by_their_port(void **state)
{
	struct th *h = th_new(NULL);
	union net_ip local2;
	struct th_seg s;
	struct th_out o;
	uint32_t snd;

	(void)state;
	th_add_port(h);
	local2 = th_local(h, 1);
	snd = open_on(h, 1, &h->ifc2);
	assert_int_equal(h->app.accepted, 1);
	assert_int_equal(h->app.conn->port, 1);
	assert_true(net_ip_eq(net_local_addr(h->ns, 1, h->app.conn->local),
			&local2));
	/* Data sent, unacknowledged: the retransmission leaves by port 1. */
	assert_int_equal(tcp_write(h->ns, h->app.conn, "hello", 5), 5);
	tcp_output(h->ns, h->app.conn);
	net_flush(h->ns);
	assert_true(th_next(h, &o));
	assert_int_equal(o.port, 1);
	assert_int_equal(o.t.len, 5);
	th_advance(h, 3000);
	assert_true(th_next(h, &o));
	assert_int_equal(o.port, 1);
	assert_int_equal(o.t.seq, snd);
	assert_memory_equal(o.src_mac, h->ifc2.mac, 6);
	th_drain(h);
	s = th_seg_from(IRS + 1, snd + 5, TCP_ACK);
	th_inject_on(h, 1, &local2, &s);
	/* What the stack counted went to port 1 only. */
	assert_int_equal(h->stats.port[0].rx_pkts, 0);
	assert_int_equal(h->stats.port[0].tx_pkts, 0);
	assert_int_equal(h->stats.port[1].rx_pkts, 3);
	assert_int_equal(h->stats.port[1].tx_pkts, h->stats.tx_pkts);
	th_free(h);
}

static void
test_same_peer_on_both_ports(void **state)
{
	struct th *h = th_new(NULL);
	struct net_addr peer = th_peer(h);
	uint8_t local = h->family == NET_AF_INET6 ? NET_LOCAL_V6 : NET_LOCAL_V4;

	(void)state;
	th_add_port(h);
	open_on(h, 0, &h->ifc);
	open_on(h, 1, &h->ifc2);
	assert_int_equal(h->app.accepted, 2);
	assert_int_equal(h->stats.tcp_conns_open, 2);
	assert_non_null(tcp_lookup(h->ns, 0, local, &peer.ip, 40000, TH_PORT));
	assert_non_null(tcp_lookup(h->ns, 1, local, &peer.ip, 40000, TH_PORT));
	assert_ptr_not_equal(tcp_lookup(h->ns, 0, local, &peer.ip, 40000,
			TH_PORT), tcp_lookup(h->ns, 1, local, &peer.ip, 40000,
			TH_PORT));
	/* Nor is the other family's connection of the same bytes. */
	assert_null(tcp_lookup(h->ns, 0, local == NET_LOCAL_V4 ? NET_LOCAL_V6 :
			NET_LOCAL_V4, &peer.ip, 40000, TH_PORT));
	th_free(h);
}

static void
test_other_ports_address_is_not_ours(void **state)
{
	struct th *h = th_new(NULL);
	struct th_seg s = th_seg_from(IRS, 0, TCP_SYN);
	union net_ip local0 = th_local(h, 0);
	enum net_drop why = th_not_ours(h);

	(void)state;
	th_add_port(h);
	th_inject_on(h, 1, &local0, &s);	/* port 0's address on port 1 */
	assert_int_equal(th_pending(h), 0);
	assert_int_equal(h->stats.port[1].drop[why], 1);
	assert_int_equal(h->stats.port[0].drop[why], 0);
	assert_int_equal(h->stats.drop[why], 1);
	th_free(h);
}

static void
test_no_more_ports_than_the_stack_holds(void **state)
{
	struct th *h = th_new(NULL);
	int i;

	(void)state;
	for (i = 1; i < NET_MAX_PORTS; i++)
		assert_int_equal(net_stack_add_port(h->ns, &h->ifc, h->arp, NULL,
				NULL), i);
	assert_int_equal(net_stack_add_port(h->ns, &h->ifc, h->arp, NULL, NULL), -1);
	th_free(h);
}

/* tcp_open() towards a peer on port 1's link: the ARP request (or
 * neighbour solicitation) leaves by port 1 from its MAC and address, the next hop comes from port 1's cache
 * only, the local port is chosen by port 1's RSS, and the connection (its
 * SYN first) is port 1's. Port 0's RSS, which gives no port to this
 * queue, makes an open towards port 0's peer fail instead. */
static void
test_open_goes_out_of_the_peers_port(void **state)
{
	static struct net_rss rss0, rss1;
	static const uint8_t mac[6] = { 2, 0, 0, 0, 1, 1 };
	struct th *h = th_new(NULL);
	struct net_addr peer = th_peer(h), peer2 = th_peer2(h);
	union net_ip local2;
	struct tcp_conn *c;
	struct th_out o;
	int err, i;

	(void)state;
	th_add_port(h);
	local2 = th_local(h, 1);
	assert_null(tcp_open_addr(h->ns, &peer2, 80, NULL, NULL, &err));
	assert_int_equal(err, -EAGAIN);
	net_flush(h->ns);
	assert_int_equal(h->n_out, 1);
	assert_int_equal(h->out_port[0], 1);
	assert_true(th_is_solicitation(h, rte_pktmbuf_mtod(h->out[0],
			const uint8_t *), 1, &peer2));
	th_drain(h);

	th_learn(h, 1, &peer2, mac);
	th_learn(h, 0, &peer, mac);
	rss0.key_len = rss1.key_len = 40;
	memset(rss0.key, 0x6d, 40);
	memset(rss1.key, 0x6d, 40);
	rss0.reta_size = rss1.reta_size = 4;
	for (i = 0; i < 4; i++) {
		rss0.reta[i] = 0;
		rss1.reta[i] = (uint16_t)(i & 1);
	}
	net_stack_set_rss(h->ns, 0, &rss0, 1);
	net_stack_set_rss(h->ns, 1, &rss1, 1);
	assert_null(tcp_open_addr(h->ns, &peer, 80, NULL, NULL, &err));
	assert_int_equal(err, -EADDRNOTAVAIL);
	c = tcp_open_addr(h->ns, &peer2, 80, NULL, NULL, &err);
	assert_non_null(c);
	assert_int_equal(c->port, 1);
	assert_true(net_ip_eq(net_local_addr(h->ns, 1, c->local), &local2));
	assert_int_equal(h->family == NET_AF_INET6 ?
			net_rss_queue6(&rss1, peer2.ip.v6, local2.v6, 80, c->lport) :
			net_rss_queue(&rss1, peer2.ip.v4, local2.v4, 80, c->lport), 1);
	net_flush(h->ns);
	assert_true(th_next(h, &o));
	assert_int_equal(o.t.flags, TCP_SYN);
	assert_int_equal(o.port, 1);
	assert_true(net_ip_eq(&o.saddr, &local2));
	assert_memory_equal(o.src_mac, h->ifc2.mac, 6);
	tcp_abort(h->ns, c);
	th_drain(h);
	th_free(h);
}

/* An address off every port's link: none without a gateway; with port
 * 0's, an ARP request (a neighbour solicitation) for the gateway, then
 * the SYN to the gateway's MAC with the far address as its destination. */
static void
test_open_off_the_link_goes_to_the_gateway(void **state)
{
	static const uint8_t gw_mac[6] = { 2, 0, 0, 0, 9, 9 };
	struct th *h = th_new(NULL);
	struct net_addr gw = th_peer(h), far = gw;
	struct tcp_conn *c;
	struct th_out o;
	int err;

	(void)state;
	if (far.family == NET_AF_INET6)
		far.ip.v6[3] ^= 0x40;	/* another /64 */
	else
		far.ip.v4 ^= 0x00400000u;	/* 198.18.64.1 */
	assert_null(tcp_open_addr(h->ns, &far, 80, NULL, NULL, &err));
	assert_int_equal(err, -ENETUNREACH);
	if (gw.family == NET_AF_INET6)
		memcpy(h->ifc.gateway6, gw.ip.v6, 16);
	else
		h->ifc.gateway = gw.ip.v4;
	assert_null(tcp_open_addr(h->ns, &far, 80, NULL, NULL, &err));
	assert_int_equal(err, -EAGAIN);
	net_flush(h->ns);
	assert_int_equal(h->n_out, 1);
	assert_true(th_is_solicitation(h, rte_pktmbuf_mtod(h->out[0],
			const uint8_t *), 0, &gw));
	th_drain(h);
	th_learn(h, 0, &gw, gw_mac);
	c = tcp_open_addr(h->ns, &far, 80, NULL, NULL, &err);
	assert_non_null(c);
	assert_int_equal(c->port, 0);
	net_flush(h->ns);
	assert_int_equal(h->n_out, 1);
	assert_memory_equal(rte_pktmbuf_mtod(h->out[0], const uint8_t *),
			gw_mac, 6);
	assert_true(th_next(h, &o));
	assert_int_equal(o.t.flags, TCP_SYN);
	tcp_abort(h->ns, c);
	th_drain(h);
	th_free(h);
}

/* 198.18.1.2 + off, network order. */
static union net_ip
ip4_plus(uint32_t off)
{
	return net_ip4(rte_cpu_to_be_32(rte_be_to_cpu_32(TH_LOCAL_IP2) + off));
}

/* Port 1 with three IPv4 addresses (198.18.1.2-4): active opens take them
 * in turn, each SYN from its own; the same peer port reaching two of them
 * is two connections, each answered from the address it reached; ARP is
 * answered for each; the address after them is not ours. IPv4's alone:
 * an IPv6 port has one global address. */
static void
test_port_with_several_ipv4_addresses(void **state)
{
	static const uint8_t mac[6] = { 2, 0, 0, 0, 1, 1 };
	struct th *h;
	struct net_addr peer2;
	struct tcp_conn *c[4], *a, *b;
	union net_ip third = ip4_plus(2), past = ip4_plus(3), second = ip4_plus(1);
	union net_ip want;
	struct th_seg s = th_seg_from(IRS, 0, TCP_SYN);
	struct th_out o;
	uint8_t f[128], port;
	uint16_t len;
	int err, i;

	(void)state;
	if (th_family() != NET_AF_INET)
		return;
	h = th_new(NULL);
	th_add_port_ips(h, 3);
	peer2 = th_peer2(h);
	th_learn(h, 1, &peer2, mac);
	for (i = 0; i < 4; i++) {
		c[i] = tcp_open_addr(h->ns, &peer2, 80, NULL, NULL, &err);
		assert_non_null(c[i]);
		want = ip4_plus((uint32_t)i % 3);
		assert_true(net_ip_eq(net_local_addr(h->ns, 1, c[i]->local),
				&want));
	}
	net_flush(h->ns);
	for (i = 0; i < 4; i++) {
		assert_true(th_next(h, &o));
		assert_int_equal(o.t.flags, TCP_SYN);
		assert_int_equal(o.t.sport, c[i]->lport);
		want = ip4_plus((uint32_t)i % 3);
		assert_true(net_ip_eq(&o.saddr, &want));
		tcp_abort(h->ns, c[i]);
	}
	th_drain(h);

	/* Passive: one peer port to the second and third addresses. */
	th_inject_from(h, 1, &peer2.ip, &third, &s);
	assert_true(th_next(h, &o));
	assert_int_equal(o.t.flags, TCP_SYN | TCP_ACK);
	assert_true(net_ip_eq(&o.saddr, &third));
	th_inject_from(h, 1, &peer2.ip, &second, &s);
	assert_true(th_next(h, &o));
	assert_int_equal(o.t.flags, TCP_SYN | TCP_ACK);
	assert_true(net_ip_eq(&o.saddr, &second));
	a = tcp_lookup(h->ns, 1, net_local_v4(2), &peer2.ip, 40000, TH_PORT);
	b = tcp_lookup(h->ns, 1, net_local_v4(1), &peer2.ip, 40000, TH_PORT);
	assert_non_null(a);
	assert_non_null(b);
	assert_ptr_not_equal(a, b);
	assert_null(tcp_lookup(h->ns, 1, NET_LOCAL_V4, &peer2.ip, 40000,
			TH_PORT));
	assert_int_equal(h->stats.tcp_conns_open6, 0);
	th_inject_from(h, 1, &peer2.ip, &past, &s);
	assert_int_equal(th_pending(h), 0);
	assert_int_equal(h->stats.port[1].drop[th_not_ours(h)], 1);

	/* ARP: a request for the third address is answered, from it. */
	memset(f, 0, sizeof(f));
	memset(f, 0xff, 6);
	memcpy(f + 6, mac, 6);
	f[12] = 0x08;
	f[13] = 0x06;
	f[15] = 1;		/* Ethernet */
	f[16] = 0x08;		/* IPv4 */
	f[18] = 6;
	f[19] = 4;
	f[21] = 1;		/* request */
	memcpy(f + 22, mac, 6);
	memcpy(f + 28, &peer2.ip.v4, 4);
	memcpy(f + 38, &third.v4, 4);
	th_rx_frame(h, 1, f, 60);
	len = th_next_frame(h, f, sizeof(f), &port);
	assert_true(len >= 42);
	assert_int_equal(port, 1);
	assert_int_equal(f[21], 2);	/* reply */
	assert_memory_equal(f + 22, h->ifc2.mac, 6);
	assert_memory_equal(f + 28, &third.v4, 4);
	memcpy(f + 38, &past.v4, 4);	/* not ours: no answer */
	f[21] = 1;
	memcpy(f + 22, mac, 6);
	memcpy(f + 28, &peer2.ip.v4, 4);
	memset(f + 32, 0, 6);
	th_rx_frame(h, 1, f, 60);
	assert_int_equal(th_next_frame(h, f, sizeof(f), &port), 0);
	th_free(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_answers_leave_by_their_port),
		cmocka_unit_test(test_same_peer_on_both_ports),
		cmocka_unit_test(test_other_ports_address_is_not_ours),
		cmocka_unit_test(test_no_more_ports_than_the_stack_holds),
		cmocka_unit_test(test_open_goes_out_of_the_peers_port),
		cmocka_unit_test(test_open_off_the_link_goes_to_the_gateway),
		cmocka_unit_test(test_port_with_several_ipv4_addresses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
