/* SPDX-License-Identifier: BSD-3-Clause */
/* A stack with two ports: a connection answers by the port it came by,
 * from that port's MAC and address, its timers too; the same peer may
 * reach both ports at once; a frame for the other port's address is not
 * ours; counters split by port. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "tcp_harness.h"

#define IRS 5000000u

/* The SYN-ACK to a SYN on port, checked to leave by it. */
static uint32_t
open_on(struct th *h, uint8_t port, uint32_t dst, const struct net_if *ifc)
{
	struct th_seg s = th_seg_from(IRS, 0, TCP_SYN);
	struct th_out o;

	th_inject_on(h, port, dst, &s);
	assert_true(th_next(h, &o));
	assert_int_equal(o.t.flags, TCP_SYN | TCP_ACK);
	assert_int_equal(o.port, port);
	assert_memory_equal(o.src_mac, ifc->mac, 6);
	assert_int_equal(o.saddr, dst);
	s = th_seg_from(IRS + 1, o.t.seq + 1, TCP_ACK);
	th_inject_on(h, port, dst, &s);
	assert_int_equal(th_pending(h), 0);
	return o.t.seq + 1;
}

static void
test_answers_leave_by_their_port(void **state)
{
	struct th *h = th_new(NULL);
	struct th_seg s;
	struct th_out o;
	uint32_t snd;

	(void)state;
	th_add_port(h);
	snd = open_on(h, 1, TH_LOCAL_IP2, &h->ifc2);
	assert_int_equal(h->app.accepted, 1);
	assert_int_equal(h->app.conn->port, 1);
	assert_int_equal(h->app.conn->laddr, TH_LOCAL_IP2);
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
	th_inject_on(h, 1, TH_LOCAL_IP2, &s);
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

	(void)state;
	th_add_port(h);
	open_on(h, 0, TH_LOCAL_IP, &h->ifc);
	open_on(h, 1, TH_LOCAL_IP2, &h->ifc2);
	assert_int_equal(h->app.accepted, 2);
	assert_int_equal(h->stats.tcp_conns_open, 2);
	assert_non_null(tcp_lookup(h->ns, 0, TH_PEER_IP, 40000, TH_PORT));
	assert_non_null(tcp_lookup(h->ns, 1, TH_PEER_IP, 40000, TH_PORT));
	assert_ptr_not_equal(tcp_lookup(h->ns, 0, TH_PEER_IP, 40000, TH_PORT),
			tcp_lookup(h->ns, 1, TH_PEER_IP, 40000, TH_PORT));
	th_free(h);
}

static void
test_other_ports_address_is_not_ours(void **state)
{
	struct th *h = th_new(NULL);
	struct th_seg s = th_seg_from(IRS, 0, TCP_SYN);

	(void)state;
	th_add_port(h);
	th_inject_on(h, 1, TH_LOCAL_IP, &s);	/* port 0's address on port 1 */
	assert_int_equal(th_pending(h), 0);
	assert_int_equal(h->stats.port[1].drop[NET_DROP_IP_NOT_OURS], 1);
	assert_int_equal(h->stats.port[0].drop[NET_DROP_IP_NOT_OURS], 0);
	assert_int_equal(h->stats.drop[NET_DROP_IP_NOT_OURS], 1);
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_answers_leave_by_their_port),
		cmocka_unit_test(test_same_peer_on_both_ports),
		cmocka_unit_test(test_other_ports_address_is_not_ours),
		cmocka_unit_test(test_no_more_ports_than_the_stack_holds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
