/* SPDX-License-Identifier: BSD-3-Clause */
/* Listeners by port: each listened port hands its connections to its own
 * upcalls and context (ewykd's cleartext port to HTTP, its TLS port to
 * the TLS layer), a port nobody listens on answers RST, and the SYN
 * backlog's cookies complete on the listener the cookie's port names. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "tcp_harness.h"
#include "tcp_impl.h"

#define TLS_PORT 443
#define IRS 7000000u

/* The second listener's application: what it was handed. */
struct other_app {
	int accepted;
	int closed;
	uint32_t got;
	struct tcp_conn *conn;
};

static int
other_accepted(void *ctx, struct tcp_conn *c)
{
	struct other_app *a = ctx;

	a->accepted++;
	a->conn = c;
	tcp_set_app(c, a);
	return 0;
}

static uint32_t
other_recv(void *ctx, struct tcp_conn *c, const uint8_t *data, uint32_t len)
{
	struct other_app *a = ctx;

	(void)c;
	(void)data;
	a->got += len;
	return len;
}

static void
other_sent(void *ctx, struct tcp_conn *c)
{
	(void)ctx;
	(void)c;
}

static void
other_closed(void *ctx, struct tcp_conn *c)
{
	struct other_app *a = ctx;

	(void)c;
	a->closed++;
	a->conn = NULL;
}

static const struct tcp_upcalls other_upcalls = {
	.accepted = other_accepted,
	.recv = other_recv,
	.sent = other_sent,
	.peer_closed = other_sent,
	.closed = other_closed,
};

/* SYN, SYN-ACK, ACK with 5 bytes to dport from sport. */
static void
open_to(struct th *h, uint16_t dport, uint16_t sport)
{
	struct th_seg s = th_seg_from(IRS, 0, TCP_SYN);
	struct th_out o;

	s.dport = dport;
	s.sport = sport;
	th_inject(h, &s);
	assert_true(th_next(h, &o));
	assert_int_equal(o.t.flags, TCP_SYN | TCP_ACK);
	assert_int_equal(o.t.sport, dport);
	s = th_seg_from(IRS + 1, o.t.seq + 1, TCP_ACK | TCP_PSH);
	s.dport = dport;
	s.sport = sport;
	s.data = "hello";
	s.len = 5;
	th_inject(h, &s);
	th_drain(h);
}

static void
test_each_port_has_its_upcalls(void **state)
{
	struct other_app other = { 0 };
	struct th *h = th_new(NULL);

	(void)state;
	assert_int_equal(net_stack_listen(h->ns, TLS_PORT, &other_upcalls,
			&other), 0);
	open_to(h, TLS_PORT, 41000);
	assert_int_equal(other.accepted, 1);
	assert_int_equal(other.got, 5);
	assert_int_equal(h->app.accepted, 0);
	open_to(h, TH_PORT, 41001);
	assert_int_equal(h->app.accepted, 1);
	assert_int_equal(h->app.got_len, 5);
	assert_int_equal(other.accepted, 1);
	/* Each closes through its own. */
	tcp_abort(h->ns, other.conn);
	assert_int_equal(other.closed, 1);
	assert_int_equal(h->app.closed, 0);
	th_drain(h);
	th_free(h);
}

static void
test_unlistened_port_is_refused(void **state)
{
	struct th *h = th_new(NULL);
	struct th_seg s = th_seg_from(IRS, 0, TCP_SYN);
	struct th_out o;

	(void)state;
	s.dport = TLS_PORT;
	th_inject(h, &s);
	assert_true(th_next(h, &o));
	assert_true(o.t.flags & TCP_RST);
	assert_int_equal(h->stats.tcp_conns_open, 0);
	th_free(h);
}

static void
test_listen_errors(void **state)
{
	struct other_app other = { 0 };
	struct th *h = th_new(NULL);
	uint16_t p;

	(void)state;
	assert_int_equal(net_stack_listen(h->ns, TH_PORT, &other_upcalls,
			&other), -EEXIST);
	for (p = 1; p < NET_MAX_LISTENERS; p++)
		assert_int_equal(net_stack_listen(h->ns, (uint16_t)(1000 + p),
				&other_upcalls, &other), 0);
	assert_int_equal(net_stack_listen(h->ns, 2000, &other_upcalls,
			&other), -ENOSPC);
	th_free(h);
}

/* With the backlog full, a cookie's ACK to the TLS port is handed to the
 * TLS listener, and one to an unlistened port completes nothing. */
static void
test_cookie_completes_on_its_listener(void **state)
{
	struct other_app other = { 0 };
	struct tcp_config cfg;
	struct th *h;
	struct th_seg s;
	struct th_out o;
	struct tcp_tuple k;
	struct net_addr peer;
	union net_ip local;
	uint32_t cookie;
	uint16_t mss;

	(void)state;
	tcp_config_defaults(&cfg);
	cfg.syn_backlog = 1;
	h = th_new(&cfg);
	assert_int_equal(net_stack_listen(h->ns, TLS_PORT, &other_upcalls,
			&other), 0);
	s = th_seg_from(1, 0, TCP_SYN);
	s.sport = 50001;
	th_inject(h, &s);	/* fills the backlog */
	th_drain(h);
	s = th_seg_from(IRS, 0, TCP_SYN);
	s.dport = TLS_PORT;
	th_inject(h, &s);
	assert_true(th_next(h, &o));
	assert_int_equal(o.t.flags, TCP_SYN | TCP_ACK);
	assert_int_equal(h->stats.tcp.syncookies_sent, 1);
	cookie = o.t.seq;
	s = th_seg_from(IRS + 1, cookie + 1, TCP_ACK | TCP_PSH);
	s.dport = TLS_PORT;
	s.data = "hi";
	s.len = 2;
	th_inject(h, &s);
	assert_int_equal(h->stats.tcp.syncookies_valid, 1);
	assert_int_equal(other.accepted, 1);
	assert_int_equal(other.got, 2);
	assert_int_equal(h->app.accepted, 0);
	th_drain(h);
	/* An ACK to a port nobody listens on, its cookie one the stack
	 * would have made there (white-box): a RST, and no connection. */
	local = th_local(h, 0);
	peer = th_peer(h);
	k = (struct tcp_tuple){ h->family, &local, &peer.ip, 8443, 40001 };
	cookie = tcp_cookie_make(h->ns, &k, IRS, th_mss(h), &mss);
	assert_true(tcp_cookie_check(h->ns, &k, IRS, cookie) > 0);
	s = th_seg_from(IRS + 1, cookie + 1, TCP_ACK);
	s.dport = 8443;
	s.sport = 40001;
	th_inject(h, &s);
	assert_true(th_next(h, &o));
	assert_true(o.t.flags & TCP_RST);
	assert_int_equal(h->stats.tcp.syncookies_valid, 1);
	assert_int_equal(h->app.accepted, 0);
	assert_int_equal(other.accepted, 1);
	th_drain(h);
	th_free(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_port_has_its_upcalls),
		cmocka_unit_test(test_unlistened_port_is_refused),
		cmocka_unit_test(test_listen_errors),
		cmocka_unit_test(test_cookie_completes_on_its_listener),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
