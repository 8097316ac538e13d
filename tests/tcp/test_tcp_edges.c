/* SPDX-License-Identifier: BSD-3-Clause */
/* Scripted TCP conversations at the edges the stack must hold by itself:
 * the receive window's right edge, ACKs of what was never sent, malformed
 * options, the mbuf reserve and shutdown, a FIN past a hole, cwnd, the
 * send buffer and the shard's send budget, the timers' bounds, link up. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include <rte_mbuf.h>

#include "tcp_harness.h"

#define IRS 1000000u
#define MSS 1460u

static uint8_t payload[64 * 1024];

/* A handshake with an MSS of 1460 offered; returns the stack's ISS. */
static uint32_t
handshake_mss(struct th *h, uint16_t sport)
{
	uint8_t mss[4] = { 2, 4, MSS >> 8, MSS & 0xff };

	return th_handshake(h, sport, IRS, mss, sizeof(mss), 65535);
}

/* Data from the peer: len bytes at IRS + 1 + off. */
static void
send_data(struct th *h, uint32_t iss, uint32_t off, uint16_t len,
		uint8_t flags)
{
	struct th_seg s = th_seg_from(IRS + 1 + off, iss + 1, TCP_ACK | flags);

	s.data = payload + off;
	s.len = len;
	th_inject(h, &s);
}

/* Sends bytes of data in full segments from the start of the stream. */
static void
send_stream(struct th *h, uint32_t iss, uint32_t bytes)
{
	uint32_t off;

	for (off = 0; off < bytes; off += MSS)
		send_data(h, iss, off, (uint16_t)RTE_MIN(MSS, bytes - off), 0);
}

/* The window's right edge is the stack's to hold: a segment reaching past
 * it is cut there, whatever the application above would take. */
static void
test_data_past_the_window_is_clamped(void **state)
{
	struct th *h = th_new(NULL);
	uint32_t iss = handshake_mss(h, 40000), off = 65535 - 1000;
	struct th_out o;

	(void)state;
	send_stream(h, iss, off);	/* all but 1000 bytes of the window */
	assert_int_equal(h->app.got_len, off);
	th_drain(h);
	/* A full segment where 1000 bytes are left: 1000 taken, acked. */
	send_data(h, iss, off, MSS, TCP_PSH);
	assert_int_equal(h->app.got_len, 65535);
	assert_memory_equal(h->app.got + off, payload + off, 1000);
	th_advance(h, 50);
	while (th_next(h, &o))
		assert_true(SEQ_LEQ(o.t.ack, IRS + 1 + 65535));
	assert_int_equal(h->app.conn->rcv_nxt, IRS + 1 + 65535);
	th_free(h);
}

/* The application lowering its space does not move an edge already
 * advertised back (RFC 9293 3.8.6.2.1): data up to it is taken. */
static void
test_an_advertised_edge_holds(void **state)
{
	struct th *h = th_new(NULL);
	uint32_t iss = handshake_mss(h, 40000);

	(void)state;
	th_set_rcv_space(h, 100);
	assert_int_equal(th_pending(h), 0);	/* a shrink is not announced */
	send_data(h, iss, 0, 1000, TCP_PSH);
	assert_int_equal(h->app.got_len, 1000);
	assert_int_equal(h->app.conn->rcv_nxt, IRS + 1 + 1000);
	th_free(h);
}

/* RFC 9293 3.10.7.4: an ACK of data never sent is answered with an ACK
 * and the segment dropped, data and all. */
static void
test_ack_of_unsent_data_is_dropped(void **state)
{
	struct th *h = th_new(NULL);
	uint32_t iss = handshake_mss(h, 40000);
	struct th_seg s = th_seg_from(IRS + 1, iss + 1 + 1000,
			TCP_ACK | TCP_PSH);
	struct th_out o;

	(void)state;
	s.data = payload;
	s.len = 100;
	th_inject(h, &s);
	assert_int_equal(h->app.got_len, 0);
	assert_int_equal(h->stats.drop[NET_DROP_TCP_BAD_ACK], 1);
	assert_int_equal(h->stats.tcp.challenge_acks, 1);
	th_expect(h, &o, TCP_ACK, iss + 1, IRS + 1);
	assert_int_equal(o.t.len, 0);
	assert_int_equal(th_pending(h), 0);
	assert_int_equal(h->app.conn->snd_una, iss + 1);
	/* The same data with a right ACK is taken. */
	s.ack = iss + 1;
	th_inject(h, &s);
	assert_int_equal(h->app.got_len, 100);
	th_free(h);
}

/* Malformed options: parsing stops at the fault, as Linux does; what came
 * before counts, the SYN is answered, and each such segment is counted
 * once. A window scale beyond 14 is not malformed: it is taken as 14. */
static void
test_malformed_options_are_counted(void **state)
{
	static const uint8_t zero_len[] = { 2, 4, 0x05, 0x78, 8, 0,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
	static const uint8_t truncated[] = { 1, 1, 1, 1, 2, 8, 0x05, 0x78 };
	static const uint8_t wscale_200[] = { 2, 4, 0x05, 0x78, 1, 3, 3, 200 };
	struct th *h = th_new(NULL);

	(void)state;
	th_handshake(h, 40000, IRS, zero_len, sizeof(zero_len), 65535);
	assert_int_equal(h->stats.tcp.bad_options, 1);
	assert_int_equal(h->app.conn->mss, 1400);	/* before the fault */
	h->app.accepted = 0;
	th_handshake(h, 40001, IRS, truncated, sizeof(truncated), 65535);
	assert_int_equal(h->stats.tcp.bad_options, 2);
	assert_int_equal(h->app.conn->mss, 536);	/* RFC 9293 3.7.1 */
	h->app.accepted = 0;
	th_handshake(h, 40002, IRS, wscale_200, sizeof(wscale_200), 65535);
	assert_int_equal(h->stats.tcp.bad_options, 2);
	assert_int_equal(h->app.conn->snd_wscale, 14);
	assert_int_equal(h->stats.tcp_conns_open, 3);
	th_free(h);
}

/* Below the mbuf reserve, a new SYN is dropped unanswered (and counted),
 * so that the mbufs left serve the connections already open. */
static void
test_syns_are_refused_below_the_mbuf_reserve(void **state)
{
	struct tcp_config cfg;
	struct th *h;
	struct th_seg s = th_seg_from(IRS, 0, TCP_SYN);
	unsigned int avail;

	(void)state;
	tcp_config_defaults(&cfg);
	h = th_new(&cfg);
	avail = rte_mempool_avail_count(th_pool());
	h->ns->cfg.mbuf_reserve = avail + 1;
	th_inject(h, &s);
	assert_int_equal(th_pending(h), 0);
	assert_int_equal(h->stats.tcp.syn_dropped, 1);
	assert_int_equal(h->stats.tcp.passive_opens, 0);
	/* At the reserve exactly, the SYN is answered. */
	h->ns->cfg.mbuf_reserve = avail - 1;
	th_inject(h, &s);
	assert_int_equal(th_pending(h), 1);
	assert_int_equal(h->stats.tcp.syn_dropped, 1);
	assert_int_equal(h->stats.tcp.passive_opens, 1);
	th_free(h);
}

/* Shutting down, a SYN is told at once with a RST rather than left to
 * retry. */
static void
test_shutting_down_refuses_syns_with_rst(void **state)
{
	struct th *h = th_new(NULL);
	struct th_seg s = th_seg_from(IRS, 0, TCP_SYN);
	struct th_out o;

	(void)state;
	net_stack_refuse_new(h->ns, true);
	th_inject(h, &s);
	th_expect(h, &o, TCP_RST | TCP_ACK, 0, IRS + 1);
	assert_int_equal(h->stats.tcp.syn_dropped, 1);
	assert_int_equal(h->stats.tcp.passive_opens, 0);
	th_free(h);
}

/* A FIN after a hole ends nothing: the stream is whole first. */
static void
test_fin_after_a_hole_waits(void **state)
{
	struct th *h = th_new(NULL);
	uint32_t iss = handshake_mss(h, 40000);
	struct th_out o;

	(void)state;
	send_data(h, iss, 100, 100, TCP_FIN);
	assert_int_equal(h->app.peer_closed, 0);
	assert_int_equal(h->app.conn->state, TCP_ESTABLISHED);
	th_expect(h, &o, TCP_ACK, iss + 1, IRS + 1);	/* asks for the hole */
	send_data(h, iss, 0, 100, 0);
	assert_int_equal(h->app.got_len, 200);
	assert_int_equal(h->app.peer_closed, 0);
	/* the FIN again, now in order */
	send_data(h, iss, 100, 100, TCP_FIN);
	assert_int_equal(h->app.peer_closed, 1);
	assert_int_equal(h->app.got_len, 200);
	th_free(h);
}

/* Without SACK (NewReno), what leaves before the first ACK is the initial
 * window, RFC 6928's 10 segments, however much is queued. */
static void
test_newreno_sends_one_initial_window(void **state)
{
	struct th *h = th_new(NULL);
	uint32_t sent = 0;
	struct th_out o;

	(void)state;
	handshake_mss(h, 40000);
	th_drain(h);
	assert_int_equal(tcp_write(h->ns, h->app.conn, payload, 50000), 50000);
	tcp_output(h->ns, h->app.conn);
	net_flush(h->ns);
	while (th_next(h, &o))
		sent += o.t.len;
	/* the peer's 1460, or IPv6's smaller segments (th_mss()) */
	assert_int_equal(h->app.conn->mss, RTE_MIN(MSS, th_mss(h)));
	assert_int_equal(sent, 10 * h->app.conn->mss);
	th_free(h);
}

/* A window that fell to zero and reopens by one segment is announced at
 * once: the peer is waiting for it. */
static void
test_reopened_window_is_announced(void **state)
{
	struct th *h = th_new(NULL);
	uint32_t iss = handshake_mss(h, 40000);
	struct th_out o;

	(void)state;
	send_stream(h, iss, 65535);
	th_advance(h, 50);
	th_drain(h);
	assert_int_equal(h->app.rcv_space, 0);
	th_set_rcv_space(h, MSS);
	th_expect(h, &o, TCP_ACK, iss + 1, IRS + 1 + 65535);
	assert_int_equal(o.t.win, MSS);
	th_free(h);
}

/* Sends one byte and lets it go unanswered until the timer has backed off
 * `backoff` times; returns the stack's ISS. */
static uint32_t
unanswered(struct th *h, unsigned int backoff)
{
	uint32_t iss = handshake_mss(h, 40000);
	int guard = 0;

	assert_int_equal(tcp_write(h->ns, h->app.conn, "x", 1), 1);
	tcp_output(h->ns, h->app.conn);
	net_flush(h->ns);
	while (h->app.conn->backoff < backoff && guard++ < 600000)
		th_advance(h, 1);
	assert_int_equal(h->app.conn->backoff, backoff);
	th_drain(h);
	return iss;
}

/* Link up: a retransmission the timer backed off goes at once, not after
 * the backed-off RTO. */
static void
test_link_up_retransmits_at_once(void **state)
{
	struct th *h = th_new(NULL);
	uint32_t iss = unanswered(h, 4);
	struct th_out o;

	(void)state;
	net_link_up(h->ns);
	th_advance(h, 2);
	th_expect(h, &o, TCP_ACK | TCP_PSH, iss + 1, IRS + 1);
	assert_int_equal(o.t.len, 1);
	assert_int_equal(h->app.conn->backoff, 1);
	th_free(h);
}

/* The backed-off RTO stops at rto_max_ms. */
static void
test_backed_off_rto_is_capped(void **state)
{
	struct tcp_config cfg;
	struct th *h;
	struct th_out o;
	uint64_t last = 0;
	int n = 0;

	(void)state;
	tcp_config_defaults(&cfg);
	cfg.rto_max_ms = 1500;
	cfg.max_retries = 12;
	h = th_new(&cfg);
	unanswered(h, 1);
	th_advance(h, 12000);
	while (th_next(h, &o)) {
		if (last != 0)
			assert_in_range(o.at - last, 1, cfg.rto_max_ms);
		last = o.at;
		n++;
	}
	/* 12 s at 1.5 s at most each */
	assert_in_range(n, 12000 / 1500, 12000 / 1500 + 1);
	th_free(h);
}

/* A connection quiet for idle_timeout_ms is reset, and counted. */
static void
test_idle_timeout_resets_a_quiet_connection(void **state)
{
	struct tcp_config cfg;
	struct th *h;
	struct th_out o;

	(void)state;
	tcp_config_defaults(&cfg);
	cfg.idle_timeout_ms = 5000;
	h = th_new(&cfg);
	handshake_mss(h, 40000);
	th_drain(h);
	th_advance(h, 4990);
	assert_int_equal(h->app.closed, 0);
	assert_int_equal(th_pending(h), 0);
	th_advance(h, 20);
	assert_true(th_next(h, &o));
	assert_true(o.t.flags & TCP_RST);
	assert_int_equal(h->app.closed, 1);
	assert_int_equal(h->stats.tcp.idle_timeouts, 1);
	th_free(h);
}

/* A full segment and another: the second is acknowledged at once, both
 * in one ACK (RFC 9293 3.8.6.3, every second full segment). */
static void
test_second_full_segment_is_acked_at_once(void **state)
{
	struct th *h = th_new(NULL);
	uint32_t iss = handshake_mss(h, 40000);
	struct th_out o;

	(void)state;
	th_drain(h);
	h->app.conn->quick_acks = 0;	/* past the start (below) */
	send_data(h, iss, 0, MSS, 0);
	assert_int_equal(th_pending(h), 0);	/* delayed */
	send_data(h, iss, MSS, MSS, 0);
	th_expect(h, &o, TCP_ACK, iss + 1, IRS + 1 + 2 * MSS);
	assert_int_equal(th_pending(h), 0);
	th_free(h);
}

/* The first TCP_QUICK_ACKS data segments of a connection are acknowledged
 * at once, small ones too: a peer whose Nagle holds its next small write
 * for our ACK (a TLS Finished, then its request) does not wait 40 ms.
 * Then ACKs are delayed again, until the peer has been silent for longer
 * than an RTO. */
static void
test_quick_acks_at_the_start_and_after_silence(void **state)
{
	struct th *h = th_new(NULL);
	uint32_t iss = handshake_mss(h, 40000);
	uint32_t off = 0;
	struct th_out o;
	int i;

	(void)state;
	th_drain(h);
	for (i = 0; i < TCP_QUICK_ACKS; i++, off += 10) {
		send_data(h, iss, off, 10, TCP_PSH);
		th_expect(h, &o, TCP_ACK, iss + 1, IRS + 1 + off + 10);
		assert_int_equal(th_pending(h), 0);
	}
	assert_int_equal(h->stats.tcp.quick_acks, TCP_QUICK_ACKS);
	send_data(h, iss, off, 10, TCP_PSH);
	off += 10;
	assert_int_equal(th_pending(h), 0);	/* delayed from now on */
	th_advance(h, 40);
	th_expect(h, &o, TCP_ACK, iss + 1, IRS + 1 + off);
	/* Silent longer than the RTO (1 s before any RTT sample): afresh. */
	th_advance(h, 1100);
	th_drain(h);
	send_data(h, iss, off, 10, TCP_PSH);
	off += 10;
	th_expect(h, &o, TCP_ACK, iss + 1, IRS + 1 + off);
	assert_int_equal(h->stats.tcp.quick_acks, TCP_QUICK_ACKS + 1);
	th_free(h);
}

/* A quick ACK waits for the flush after the burst: an answer the upper
 * layer writes by then carries it, and no bare ACK goes before it. */
static void
test_quick_ack_rides_on_the_answer(void **state)
{
	struct th *h = th_new(NULL);
	uint32_t iss = handshake_mss(h, 40000);
	struct th_out o;

	(void)state;
	th_drain(h);
	h->hold_flush = true;
	send_data(h, iss, 0, 100, TCP_PSH);
	h->hold_flush = false;
	assert_int_equal(tcp_write(h->ns, h->app.conn, "answer", 6), 6);
	net_flush(h->ns);
	th_expect(h, &o, TCP_ACK | TCP_PSH, iss + 1, IRS + 1 + 100);
	assert_int_equal(o.t.len, 6);
	assert_int_equal(th_pending(h), 0);
	th_free(h);
}

/* An old SYN (below what TIME-WAIT has received) does not recycle it. */
static void
test_old_syn_does_not_recycle_time_wait(void **state)
{
	struct th *h = th_new(NULL);
	uint32_t iss = handshake_mss(h, 40000);
	struct th_seg s;
	struct th_out o;

	(void)state;
	tcp_close(h->ns, h->app.conn);
	net_flush(h->ns);
	th_drain(h);
	s = th_seg_from(IRS + 1, iss + 2, TCP_ACK | TCP_FIN);
	th_inject(h, &s);
	assert_int_equal(h->stats.tcp_conns_open, 1);	/* in TIME-WAIT */
	th_drain(h);
	s = th_seg_from(IRS - 5000, 0, TCP_SYN);
	th_inject(h, &s);
	while (th_next(h, &o))
		assert_false(o.t.flags & TCP_SYN);
	assert_int_equal(h->stats.tcp.passive_opens, 1);
	/* A newer one does. */
	s = th_seg_from(IRS + 5000, 0, TCP_SYN);
	th_inject(h, &s);
	assert_true(th_next(h, &o));
	assert_int_equal(o.t.flags, TCP_SYN | TCP_ACK);
	assert_int_equal(o.t.ack, IRS + 5001);
	assert_int_equal(h->stats.tcp.passive_opens, 2);
	th_free(h);
}

/* The send buffer bounds what one connection queues; once its FIN is
 * queued, it takes nothing more. */
static void
test_send_buffer_bounds_writes(void **state)
{
	struct tcp_config cfg;
	struct th *h;

	(void)state;
	tcp_config_defaults(&cfg);
	cfg.snd_buf = 4000;
	h = th_new(&cfg);
	handshake_mss(h, 40000);
	assert_int_equal(tcp_write(h->ns, h->app.conn, payload, 10000), 4000);
	assert_int_equal(tcp_send_space(h->ns, h->app.conn), 0);
	assert_int_equal(tcp_write(h->ns, h->app.conn, payload, 1), 0);
	th_free(h);
	h = th_new(&cfg);
	handshake_mss(h, 40000);
	assert_int_equal(tcp_write(h->ns, h->app.conn, payload, 10), 10);
	h->app.close_on_fin = false;
	tcp_close(h->ns, h->app.conn);
	assert_int_equal(tcp_send_space(h->ns, h->app.conn), 0);
	assert_int_equal(tcp_write(h->ns, h->app.conn, payload, 10), 0);
	assert_int_equal(h->app.conn->sndq.bytes, 10);
	th_free(h);
}

/* The shard's send budget bounds the mbufs all queues hold. A connection
 * held back by another's queues has no ACK of its own to wait for: it is
 * called back once acknowledgements free a quarter of the budget. */
static void
test_send_budget_bounds_queues_and_wakes(void **state)
{
	struct tcp_config cfg;
	struct th *h;
	struct tcp_conn *a, *b;
	uint32_t iss_a, taken, sent = 0;
	struct th_out o;
	struct th_seg s;

	(void)state;
	tcp_config_defaults(&cfg);
	cfg.sndq_mbufs_max = 8;
	h = th_new(&cfg);
	handshake_mss(h, 40001);
	b = h->app.conn;
	h->app.accepted = 0;
	iss_a = handshake_mss(h, 40000);
	a = h->app.conn;
	assert_int_equal(tcp_write(h->ns, b, payload, 10), 10);
	taken = tcp_write(h->ns, a, payload, sizeof(payload));
	assert_true(taken > 0 && taken < sizeof(payload));
	assert_int_equal(h->stats.tcp_sndq_mbufs, 8);
	/* b may fill its one chunk, no more: it waits */
	taken = tcp_write(h->ns, b, payload, sizeof(payload));
	assert_true(taken < sizeof(payload));
	assert_int_equal(h->stats.tcp_sndq_mbufs, 8);
	assert_int_equal(tcp_write(h->ns, b, payload, 1), 0);
	assert_int_equal(h->stats.tcp.sndq_budget_waits, 2);	/* a, b */
	tcp_output(h->ns, a);
	net_flush(h->ns);
	while (th_next(h, &o))
		if (o.t.dport == 40000)
			sent += o.t.len;
	/* All of a's acknowledged: its mbufs go back to the budget, and
	 * both waiters (b, and a for what it could not queue) are told at
	 * the next poll that they may write again. */
	s = th_seg_from(IRS + 1, iss_a + 1 + sent, TCP_ACK);
	th_inject(h, &s);
	assert_true(h->stats.tcp_sndq_mbufs <= 8 - 8 / 4);
	h->app.sent_calls = 0;
	th_advance(h, 1);
	assert_int_equal(h->app.sent_calls, 2);
	assert_int_equal(tcp_write(h->ns, b, payload, 1000), 1000);
	th_free(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_data_past_the_window_is_clamped),
		cmocka_unit_test(test_an_advertised_edge_holds),
		cmocka_unit_test(test_ack_of_unsent_data_is_dropped),
		cmocka_unit_test(test_malformed_options_are_counted),
		cmocka_unit_test(test_syns_are_refused_below_the_mbuf_reserve),
		cmocka_unit_test(test_shutting_down_refuses_syns_with_rst),
		cmocka_unit_test(test_fin_after_a_hole_waits),
		cmocka_unit_test(test_newreno_sends_one_initial_window),
		cmocka_unit_test(test_reopened_window_is_announced),
		cmocka_unit_test(test_link_up_retransmits_at_once),
		cmocka_unit_test(test_backed_off_rto_is_capped),
		cmocka_unit_test(test_idle_timeout_resets_a_quiet_connection),
		cmocka_unit_test(test_second_full_segment_is_acked_at_once),
		cmocka_unit_test(test_quick_acks_at_the_start_and_after_silence),
		cmocka_unit_test(test_quick_ack_rides_on_the_answer),
		cmocka_unit_test(test_old_syn_does_not_recycle_time_wait),
		cmocka_unit_test(test_send_buffer_bounds_writes),
		cmocka_unit_test(test_send_budget_bounds_queues_and_wakes),
	};
	unsigned int i;

	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + i / 251);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
