/* SPDX-License-Identifier: BSD-3-Clause */
/* BBR v1 and pacing on a simulated path (tcp_path.c): a bottleneck of
 * 2.5 MB/s (20 Mbit/s) and a base RTT of 10 ms, so a BDP of 26 segments
 * of 1000 bytes (each adds 400 us at the bottleneck). BBR finds the
 * bottleneck's rate and the path's RTT, leaves STARTUP and drains the
 * queue it made, then keeps it small while it runs at the link's rate;
 * its gain cycle probes and drains; random loss of 5 % costs it little,
 * where it cuts CUBIC to a third; PROBE_RTT comes 10 s after the min RTT
 * was last seen, at 4 segments for 200 ms. Pacing spreads the initial
 * window (BBR's, and CUBIC's when asked) instead of sending it at once. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tcp_path.h"

#define MSS TP_MSS
#define RATE 2500000u		/* bytes a second */
#define RTT_US 10000u
#define BASE_RTT_US (RTT_US + MSS * 1000000ull / RATE)	/* 10.4 ms */
#define BDP ((uint32_t)(RATE * BASE_RTT_US / 1000000))	/* 26000 */

static struct tp p;
static struct tp_sim sim;

/* 5 % of the transmissions, spread by a hash of the segment and the
 * transmission's number (the same on every run). */
static bool
drop_5_percent(const struct tp_sim *s, uint32_t seg, uint32_t tx)
{
	(void)s;
	return ((seg * 2654435761u + tx * 40503u) >> 7) % 100 < 5;
}

/* A connection with cc and pacing as asked, its handshake one RTT long,
 * on the path; nothing sent yet. */
static struct th *
start(uint8_t cc, bool pacing, bool lossy)
{
	struct tcp_config cfg;
	struct th *h;

	tcp_config_defaults(&cfg);
	cfg.cc = cc;
	cfg.pacing = pacing;
	h = tp_open(&p, &cfg, RTT_US, 0, false);
	tp_sim_init(&sim, &p, RATE, RTT_US, 0);
	if (lossy)
		sim.drop = drop_5_percent;
	return h;
}

/* Bytes the receiver got in order over us microseconds. */
static uint64_t
goodput(uint64_t us)
{
	uint64_t before = tp_sim_delivered(&sim);

	tp_sim_run(&sim, us);
	return tp_sim_delivered(&sim) - before;
}

static void
test_bbr_finds_the_bottleneck(void **state)
{
	struct th *h = start(TCP_CC_BBR, false, false);
	struct tcp_conn *c = h->app.conn;
	uint64_t got;

	(void)state;
	tp_sim_run(&sim, 1000000);
	/* STARTUP found the pipe full, DRAIN emptied the queue */
	assert_int_equal(h->stats.tcp.bbr_full_bw, 1);
	assert_int_equal(c->bbr.mode, TCP_BBR_PROBE_BW);
	assert_in_range(c->bbr.bw[0].v, RATE - RATE / 50, RATE + RATE / 50);
	assert_int_equal(c->bbr.min_rtt_us, BASE_RTT_US);
	/* cwnd: twice the BDP, and the quantization budget: three pacing
	 * bursts of a millisecond (2 segments at the link's rate, 3 at the
	 * probing phase's 5/4 of it, and 2 more then). The gain cycle
	 * starts at a random phase, as Linux's. */
	if (c->bbr.cycle_idx == 0)
		assert_in_range(c->cwnd, 2 * BDP + 10 * MSS,
				2 * BDP + 12 * MSS);
	else
		assert_in_range(c->cwnd, 2 * BDP + 6 * MSS, 2 * BDP + 8 * MSS);
	/* then the link's rate, the queue never past what the probing
	 * phase adds: 5/4 of the BDP and the budget of 8 segments, less
	 * the BDP, and a pacing burst of 2 (STARTUP's queue was 1.6 BDP) */
	sim.max_queue = 0;
	got = goodput(2000000);
	assert_true(got >= 2 * (uint64_t)RATE * 97 / 100);
	assert_true(sim.max_queue <= BDP / 4 + 12 * MSS);
	assert_int_equal(h->stats.tcp.retransmits, 0);
	th_free(h);
}

/* The pacing rate BBR sets for a gain (in 1/256), less its 1 % margin. */
static uint64_t
paced_at(const struct tcp_conn *c, uint32_t gain)
{
	return (c->bbr.bw[0].v * gain >> 8) * 99 / 100;
}

/* The pacing rate over a second of PROBE_BW: 5/4, 3/4 and 1 of the
 * bandwidth, each phase about a min RTT long. */
static void
test_bbr_gain_cycle(void **state)
{
	struct th *h = start(TCP_CC_BBR, false, false);
	struct tcp_conn *c = h->app.conn;
	bool up = false, down = false, level = false;
	uint64_t cycles;
	int i;

	(void)state;
	tp_sim_run(&sim, 1000000);
	cycles = h->stats.tcp.bbr_cycles;
	for (i = 0; i < 1000; i++) {
		tp_sim_run(&sim, 1000);
		up |= c->pacing_rate == paced_at(c, 320);
		down |= c->pacing_rate == paced_at(c, 192);
		level |= c->pacing_rate == paced_at(c, 256);
	}
	assert_true(up && down && level);
	/* a phase per min RTT, about: 96 in a second */
	assert_in_range(h->stats.tcp.bbr_cycles - cycles, 80, 100);
	th_free(h);
}

/* 5 % of the segments lost: BBR keeps 90 % of the link's rate; CUBIC,
 * which answers each loss by cutting its window, not a third. */
static void
test_bbr_keeps_its_rate_under_random_loss(void **state)
{
	struct th *h = start(TCP_CC_BBR, false, true);
	uint64_t bbr, cubic;

	(void)state;
	tp_sim_run(&sim, 1000000);
	bbr = goodput(2000000);
	assert_true(sim.dropped > 100);
	assert_true(bbr >= 2 * (uint64_t)RATE * 90 / 100);
	assert_int_equal(h->stats.tcp.timeouts, 0);
	th_free(h);

	h = start(TCP_CC_CUBIC, false, true);
	tp_sim_run(&sim, 1000000);
	cubic = goodput(2000000);
	assert_true(cubic < 2 * (uint64_t)RATE / 3);
	th_free(h);
}

/* The path's RTT never falls below what was seen first: 10 s later the
 * min RTT has expired, and PROBE_RTT holds 4 segments for 200 ms and a
 * round trip, then PROBE_BW again with cwnd as it was. */
static void
test_bbr_probe_rtt(void **state)
{
	struct th *h = start(TCP_CC_BBR, false, false);
	struct tcp_conn *c = h->app.conn;
	uint64_t since = 0, stamp;
	uint32_t cwnd_before = 0;
	int ms;

	(void)state;
	tp_sim_run(&sim, 1000000);
	stamp = c->bbr.min_rtt_stamp_ms;
	for (ms = 0; ms < 10000 && c->bbr.mode != TCP_BBR_PROBE_RTT; ms++) {
		cwnd_before = c->cwnd;
		tp_sim_run(&sim, 1000);
	}
	assert_int_equal(c->bbr.mode, TCP_BBR_PROBE_RTT);
	assert_in_range(h->now - stamp, 10000, 10002);
	assert_int_equal(h->stats.tcp.bbr_probe_rtts, 1);
	since = h->now;
	while (c->bbr.mode == TCP_BBR_PROBE_RTT && h->now - since < 1000) {
		assert_true(c->cwnd <= 4 * MSS);
		tp_sim_run(&sim, 100);
	}
	assert_int_equal(c->bbr.mode, TCP_BBR_PROBE_BW);
	assert_in_range(h->now - since, 200, 200 + 3 * BASE_RTT_US / 1000);
	assert_true(c->bbr.min_rtt_stamp_ms > stamp);
	assert_true(c->cwnd >= cwnd_before - 2 * MSS);
	th_free(h);
}

/* The first ten segments' departures, microseconds after the first. */
static void
first_window_times(struct th *h, uint64_t *t)
{
	uint64_t t0 = 0, end = h->now_us + 100000;
	struct th_out o;
	unsigned int n = 0;

	tp_write(&p, 20 * MSS);
	while (n < 10 && h->now_us < end) {
		while (n < 10 && th_next(h, &o)) {
			if (o.t.len == 0)
				continue;
			if (n == 0)
				t0 = o.at_us;
			t[n++] = o.at_us - t0;
		}
		th_advance_us(h, 1);
	}
	assert_int_equal(n, 10);
}

/* BBR paces from the start: the initial window of 10 segments at
 * 2/ln 2 x 10 segments per SRTT (10 ms), one every 347 us, after a
 * burst of two; without pacing they all go at once. */
static void
test_bbr_paces_the_initial_window(void **state)
{
	struct th *h = start(TCP_CC_BBR, false, false);
	uint64_t t[10];

	(void)state;
	first_window_times(h, t);
	assert_int_equal(t[1], 0);
	assert_in_range(t[9] - t[2], 7 * 340, 7 * 350);
	assert_true(h->stats.tcp.pacing_waits >= 7);
	th_free(h);
}

/* A first segment and its ACK one RTT later, so that SRTT is known. */
static void
first_round_trip(struct th *h)
{
	tp_write(&p, MSS);
	tp_sent(&p, NULL);
	th_advance_us(h, RTT_US);
	tp_ack(&p, tp_seq(&p, 1), 0, 0);
	tp_sent(&p, NULL);
}

/* CUBIC paces only when asked: twice cwnd per SRTT in slow start, a
 * segment every 500 us. */
static void
test_cubic_paced_when_asked(void **state)
{
	struct th *h = start(TCP_CC_CUBIC, true, false);
	uint64_t t[10];

	(void)state;
	first_round_trip(h);	/* its rate comes with an ACK */
	first_window_times(h, t);
	assert_in_range(t[9] - t[2], 7 * 450, 7 * 520);
	th_free(h);

	h = start(TCP_CC_CUBIC, false, false);
	first_round_trip(h);
	first_window_times(h, t);
	assert_int_equal(t[9], 0);
	assert_int_equal(h->stats.tcp.pacing_waits, 0);
	th_free(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bbr_finds_the_bottleneck),
		cmocka_unit_test(test_bbr_gain_cycle),
		cmocka_unit_test(test_bbr_keeps_its_rate_under_random_loss),
		cmocka_unit_test(test_bbr_probe_rtt),
		cmocka_unit_test(test_bbr_paces_the_initial_window),
		cmocka_unit_test(test_cubic_paced_when_asked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
