/* SPDX-License-Identifier: BSD-3-Clause */
/* HyStart++ (RFC 9406) in the initial slow start, on a 40 ms path whose
 * round trips the test stretches: a round whose least RTT is up by more
 * than the threshold (max(4 ms, min(40 ms / 8, 16 ms)) = 5 ms here) after
 * 8 samples turns slow start into Conservative Slow Start, growing a
 * quarter as fast; an RTT that falls back returns to slow start; five
 * rounds of CSS end slow start with ssthresh at cwnd. A steady RTT
 * doubles the window each round. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tcp_path.h"

#define MSS TP_MSS
#define RTT 40

static struct tp p;
static uint32_t next_seg;	/* the stream's next segment number */

static struct th *
warm_up(void)
{
	struct th *h = tp_open(&p, NULL, RTT * 1000, 10, false);

	assert_int_equal(h->app.conn->cwnd, 20 * MSS);
	assert_int_equal(h->app.conn->hs_state, TCP_HS_SS);
	next_seg = 10;
	return h;
}

/* One round: a window's worth of segments out (within the peer's
 * 64 KB), each acknowledged alone rtt_ms later. */
static void
round_trip(struct th *h, uint32_t rtt_ms)
{
	uint32_t n = RTE_MIN(h->app.conn->cwnd / MSS, 64u), i;

	tp_write(&p, n * MSS);
	assert_int_equal(tp_sent(&p, NULL), n);
	th_advance(h, rtt_ms);
	for (i = 1; i <= n; i++)
		tp_ack(&p, tp_seq(&p, next_seg + i), 0, 0);
	next_seg += n;
	tp_sent(&p, NULL);
}

static void
test_steady_rtt_doubles(void **state)
{
	struct th *h = warm_up();
	struct tcp_conn *c = h->app.conn;

	(void)state;
	round_trip(h, RTT);
	assert_int_equal(c->cwnd, 40 * MSS);
	round_trip(h, RTT + 3);		/* under the threshold */
	assert_int_equal(c->cwnd, 80 * MSS);	/* 40 + 40 */
	assert_int_equal(c->hs_state, TCP_HS_SS);
	assert_int_equal(h->stats.tcp.hystart_css_entries, 0);
	th_free(h);
}

/* A receiver whose reader lags acknowledges a round's 20 segments with
 * one ACK: slow start still doubles (Linux's sender grows by all an ACK
 * acknowledged; RFC 9406's L of 8 held it to 28). */
static void
test_stretch_ack_doubles(void **state)
{
	struct th *h = warm_up();
	struct tcp_conn *c = h->app.conn;

	(void)state;
	tp_write(&p, 20 * MSS);
	assert_int_equal(tp_sent(&p, NULL), 20);
	th_advance(h, RTT);
	tp_ack(&p, tp_seq(&p, next_seg + 20), 0, 0);
	assert_int_equal(c->cwnd, 40 * MSS);
	assert_int_equal(c->hs_state, TCP_HS_SS);
	th_free(h);
}

/* 10 ms more: CSS from the 8th ACK of the round, whose other 12 ACKs
 * add a quarter segment each (20 + 7 + 13 / 4 segments); five rounds of
 * CSS later, congestion avoidance. */
static void
test_rtt_rise_conservative_then_avoidance(void **state)
{
	struct th *h = warm_up();
	struct tcp_conn *c = h->app.conn;
	int i;

	(void)state;
	round_trip(h, RTT + 10);
	assert_int_equal(c->hs_state, TCP_HS_CSS);
	assert_int_equal(h->stats.tcp.hystart_css_entries, 1);
	assert_int_equal(c->cwnd, 27 * MSS + 13 * MSS / 4);
	assert_int_equal(c->ssthresh, UINT32_MAX);
	for (i = 0; i < 4; i++)
		round_trip(h, RTT + 10);
	assert_int_equal(c->hs_state, TCP_HS_CSS);
	round_trip(h, RTT + 10);
	assert_int_equal(c->hs_state, TCP_HS_OFF);
	assert_int_equal(h->stats.tcp.hystart_exits, 1);
	assert_in_range(c->ssthresh, 60 * MSS, 80 * MSS);
	assert_true(c->cwnd < c->ssthresh + 2 * MSS);
	th_free(h);
}

/* The rise passes: a round back at 40 ms returns to slow start. */
static void
test_rtt_fall_resumes_slow_start(void **state)
{
	struct th *h = warm_up();
	struct tcp_conn *c = h->app.conn;
	uint32_t before;

	(void)state;
	round_trip(h, RTT + 10);
	assert_int_equal(c->hs_state, TCP_HS_CSS);
	round_trip(h, RTT);
	assert_int_equal(c->hs_state, TCP_HS_SS);
	before = c->cwnd;
	round_trip(h, RTT);
	assert_int_equal(c->cwnd, 2 * before);
	th_free(h);
}

/* A slow start that meets neither a loss nor an RTT rise (a LAN, the
 * application the limit) grows its window with every ACK: it stops at
 * TCP_CWND_MAX, below where the send loop's int32 would read it as
 * negative and send nothing more, ever. (White-box: the window set near
 * 2^31, as some 2 GB of such ACKs would make it.) */
static void
test_window_bounded_in_endless_slow_start(void **state)
{
	struct th *h = warm_up();
	struct tcp_conn *c = h->app.conn;

	(void)state;
	c->cwnd = INT32_MAX - 4 * MSS;
	round_trip(h, RTT);
	assert_true(c->cwnd <= TCP_CWND_MAX);
	assert_int_equal(c->hs_state, TCP_HS_SS);
	tp_write(&p, 10 * MSS);
	assert_int_equal(tp_sent(&p, NULL), 10);
	th_free(h);
}

/* A connection born of a SYN cookie (the backlog full) starts its first
 * round at its first sequence number, as any other: not at 0, which lies
 * half the sequence space away and would keep HyStart++ from ever ending
 * a round. */
static void
test_cookie_connection_rounds_from_its_iss(void **state)
{
	struct tcp_config cfg;
	struct th *h;
	struct th_seg s;
	struct th_out o;
	struct tcp_conn *c;

	(void)state;
	tcp_config_defaults(&cfg);
	cfg.syn_backlog = 1;
	h = th_new(&cfg);
	s = th_seg_from(1, 0, TCP_SYN);
	s.sport = 50001;
	th_inject(h, &s);	/* fills the backlog */
	th_drain(h);
	s = th_seg_from(1000, 0, TCP_SYN);
	th_inject(h, &s);
	assert_true(th_next(h, &o));
	assert_int_equal(h->stats.tcp.syncookies_sent, 1);
	s = th_seg_from(1001, o.t.seq + 1, TCP_ACK);
	th_inject(h, &s);
	c = h->app.conn;
	assert_non_null(c);
	assert_true(c->flags & TCP_F_COOKIE);
	assert_int_equal(c->hs_state, TCP_HS_SS);
	assert_int_equal(c->hs_round_end, o.t.seq + 1);
	th_free(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_steady_rtt_doubles),
		cmocka_unit_test(test_stretch_ack_doubles),
		cmocka_unit_test(test_rtt_rise_conservative_then_avoidance),
		cmocka_unit_test(test_rtt_fall_resumes_slow_start),
		cmocka_unit_test(test_cookie_connection_rounds_from_its_iss),
		cmocka_unit_test(test_window_bounded_in_endless_slow_start),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
