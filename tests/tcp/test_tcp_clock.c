/* SPDX-License-Identifier: BSD-3-Clause */
/* The microsecond clock on a path of 250 microseconds, shorter than the
 * timers' tick: SRTT and RACK's min_RTT are what the path is, not a
 * millisecond; the probe timeout is 2 SRTT + 2 ms, not 4 ms; RACK's
 * reordering window (min_RTT / 4) lets a segment overtaken by 30
 * microseconds through; an RTO without a floor is SRTT + 1 ms. On a
 * millisecond clock SRTT reads 1 ms and every one of these fails. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tcp_path.h"

#define MSS TP_MSS
#define RTT_US 250

static struct tp p;

/* Ten segments out, each acknowledged 250 us later. */
static struct th *
warm_up(const struct tcp_config *cfg)
{
	return tp_open(&p, cfg, RTT_US, 10, false);
}

static void
test_rtt_in_microseconds(void **state)
{
	struct th *h = warm_up(NULL);

	(void)state;
	assert_int_equal(h->app.conn->srtt_us, RTT_US);
	assert_int_equal(h->app.conn->min_rtt_us, RTT_US);
	assert_int_equal(tcp_rack_reo_wnd(h->app.conn), RTT_US / 4);
	th_free(h);
}

/* A tail of two segments, neither acknowledged: the probe comes
 * 2 SRTT + 2 ms later (rounded up to the timers' tick), not the 4 ms a
 * millisecond SRTT gives. */
static void
test_probe_timeout_from_microseconds(void **state)
{
	struct th *h = warm_up(NULL);
	uint32_t last = 0;
	uint64_t waited;

	(void)state;
	th_advance_us(h, 100);	/* off the tick */
	tp_write(&p, 2 * MSS);
	assert_int_equal(tp_sent(&p, NULL), 2);
	waited = tp_quiet_for_us(&p);
	assert_in_range(waited, 2 * RTT_US + 2000, 2 * RTT_US + 2000 + 1000);
	assert_int_equal(tp_sent(&p, &last), 1);
	assert_int_equal(last, tp_seq(&p, 11));
	assert_int_equal(h->stats.tcp.tail_loss_probes, 1);
	th_free(h);
}

/* Four segments; the peer's SACK of segment 11 comes before its ACK of
 * 10, which follows 30 us later: inside the reordering window of
 * min_RTT / 4 = 62 us, so 10 is not taken for lost. */
static void
test_reordering_window_in_microseconds(void **state)
{
	struct th *h = warm_up(NULL);

	(void)state;
	tp_write(&p, 4 * MSS);
	assert_int_equal(tp_sent(&p, NULL), 4);
	th_advance_us(h, RTT_US);
	tp_ack(&p, tp_seq(&p, 10), 11, 12);
	assert_int_equal(tp_sent(&p, NULL), 0);
	th_advance_us(h, 30);
	tp_ack(&p, tp_seq(&p, 12), 0, 0);
	th_advance_us(h, 2000);
	assert_int_equal(tp_sent(&p, NULL), 0);
	assert_int_equal(h->stats.tcp.retransmits, 0);
	assert_int_equal(h->stats.tcp.rack_losses, 0);
	th_free(h);
}

/* With no floor on the RTO (--rto-min-ms 0), it is SRTT + max(G, 4
 * RTTVAR), G the tick: about 1.25 ms here. A millisecond clock makes it
 * 3 ms. */
static void
test_rto_from_microseconds(void **state)
{
	struct tcp_config cfg;
	struct th *h;
	uint32_t last = 0;
	uint64_t waited;

	(void)state;
	tcp_config_defaults(&cfg);
	cfg.rto_min_ms = 0;
	h = warm_up(&cfg);
	assert_in_range(h->app.conn->rto_us, RTT_US + 1000, RTT_US + 1100);
	tp_write(&p, 2 * MSS);
	assert_int_equal(tp_sent(&p, NULL), 2);
	waited = tp_quiet_for_us(&p);
	assert_in_range(waited, RTT_US + 1000, RTT_US + 1000 + 1000);
	assert_int_equal(tp_sent(&p, &last), 1);
	assert_int_equal(last, tp_seq(&p, 10));
	assert_int_equal(h->stats.tcp.timeouts, 1);
	th_free(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rtt_in_microseconds),
		cmocka_unit_test(test_probe_timeout_from_microseconds),
		cmocka_unit_test(test_reordering_window_in_microseconds),
		cmocka_unit_test(test_rto_from_microseconds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
