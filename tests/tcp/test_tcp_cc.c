/* SPDX-License-Identifier: BSD-3-Clause */
/* CUBIC (RFC 9438) as tcp_cc.c computes it, on a connection of its own:
 * the cut after a loss, the window's way back (concave up to W_max, a
 * plateau about it, convex beyond), and fast convergence. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "tcp_impl.h"

#define MSS 1000
#define RTT 100		/* ms */

/* One RTT of ACKs, one per segment of the window, at time *now. */
static void
one_rtt(struct tcp_conn *c, uint64_t *now)
{
	uint32_t segs = c->cwnd / MSS, i;
	struct tcp_ack_info ai;

	for (i = 0; i < segs; i++) {
		tcp_ack_info_init(&ai, NULL, (*now + (uint64_t)i * RTT / segs) *
				1000);
		ai.acked = MSS;
		tcp_cc_cubic.acked(c, &ai);
	}
	*now += RTT;
}

static void
loss_at(struct tcp_conn *c, uint32_t cwnd, uint64_t now)
{
	c->cwnd = cwnd;
	c->snd_una = 1;
	c->snd_max = 1 + cwnd;	/* a full window out */
	(void)now;
	tcp_cc_cubic.enter_recovery(c);
	c->snd_max = 1 + c->cwnd;
	tcp_cc_cubic.exit_recovery(c);
}

static void
test_cubic_growth_after_loss(void **state)
{
	struct tcp_conn c;
	uint32_t w[120], k, i;
	uint64_t now = 1000;

	(void)state;
	memset(&c, 0, sizeof(c));
	c.mss = MSS;
	c.srtt_us = RTT * 1000;
	tcp_cc_cubic.init(&c);
	loss_at(&c, 100 * MSS, now);
	assert_int_equal(c.cc_w_max, 100 * MSS);	/* W_max */
	assert_int_equal(c.ssthresh, 70 * MSS);		/* beta 0.7 */
	assert_int_equal(c.cwnd, 70 * MSS);
	for (i = 0; i < 120; i++) {
		one_rtt(&c, &now);
		w[i] = c.cwnd;
	}
	/* K = cbrt(W_max (1 - beta) / C) = cbrt(30 / 0.4) s = 4.2 s */
	k = c.cc_k_ms / RTT;
	assert_in_range(c.cc_k_ms, 4100, 4300);
	/* concave: fast at first, slowing as W_max nears */
	assert_true(w[5] - w[0] > 2 * (w[k - 8] - w[k - 13]));
	assert_true(w[k - 8] < 100 * MSS);
	/* a plateau about W_max at K */
	assert_in_range(w[k], 97 * MSS, 103 * MSS);
	/* convex: slow past it, then faster and faster */
	assert_true(w[k + 30] - w[k + 25] > 2 * (w[k + 13] - w[k + 8]));
	assert_true(w[k + 30] > 110 * MSS);
}

static void
test_cubic_fast_convergence(void **state)
{
	struct tcp_conn c;

	(void)state;
	memset(&c, 0, sizeof(c));
	c.mss = MSS;
	c.srtt_us = RTT * 1000;
	tcp_cc_cubic.init(&c);
	loss_at(&c, 100 * MSS, 1000);
	/* another loss before the window got back to W_max: give up
	 * bandwidth (W_max = cwnd (1 + beta) / 2) */
	loss_at(&c, 90 * MSS, 2000);
	assert_int_equal(c.cc_w_max, 76500);
	assert_int_equal(c.ssthresh, 63 * MSS);
	/* a loss above W_max takes the window as it is */
	loss_at(&c, 120 * MSS, 3000);
	assert_int_equal(c.cc_w_max, 120 * MSS);
	/* a timeout: the loss window, W_max kept */
	c.backoff = 1;
	tcp_cc_cubic.timeout(&c);
	assert_int_equal(c.cwnd, MSS);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cubic_growth_after_loss),
		cmocka_unit_test(test_cubic_fast_convergence),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
