/* SPDX-License-Identifier: BSD-3-Clause */
/* Scripted conversations for loss recovery with SACK: RACK finding a lost
 * retransmission without a timeout, a tail loss repaired by a tail loss
 * probe, reordering inside RACK's window not taken for loss, PRR's
 * sending rate during fast recovery and the window it leaves, a lost
 * last retransmission and a lost probe repaired by probes, not the RTO.
 * The path has a 40 ms RTT. */
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

/* Ten segments out and acknowledged one RTT later, so that SRTT and
 * RACK's min_RTT are 40 ms and cwnd is 20 segments. The stream's
 * segments 0-9 are then behind us. */
static struct th *
warm_up(void)
{
	struct th *h = tp_open(&p, NULL, RTT * 1000, 10, false);

	assert_int_equal(h->app.conn->srtt_us, RTT * 1000);
	assert_int_equal(h->app.conn->min_rtt_us, RTT * 1000);
	assert_int_equal(h->app.conn->cwnd, 20 * MSS);
	return h;
}

/* Advances the clock until something is sent (up to a second); returns
 * how long that took. */
static uint64_t
quiet_for(struct th *h)
{
	uint64_t t0 = h->now;

	while (th_pending(h) == 0 && h->now - t0 < 1000)
		th_advance(h, 1);
	return h->now - t0;
}

static void
test_rack_finds_lost_retransmission(void **state)
{
	struct th *h = warm_up();
	uint32_t last = 0;

	(void)state;
	/* segments 10-19; 10 is lost */
	tp_write(&p, 10 * MSS);
	assert_int_equal(tp_sent(&p, NULL), 10);
	th_advance(h, RTT);
	/* three SACKed above it: RACK marks 10 lost at once, resends it */
	tp_ack(&p, tp_seq(&p, 10), 11, 12);
	tp_ack(&p, tp_seq(&p, 10), 11, 13);
	assert_int_equal(tp_sent(&p, NULL), 0);	/* reordering window */
	tp_ack(&p, tp_seq(&p, 10), 11, 14);
	assert_int_equal(tp_sent(&p, &last), 1);
	assert_int_equal(last, tp_seq(&p, 10));
	assert_true(h->app.conn->flags & TCP_F_RECOVERY);
	/* new data after the retransmission; the retransmission is lost */
	tp_write(&p, 4 * MSS);
	th_advance(h, 1);
	tp_ack(&p, tp_seq(&p, 10), 11, 20);
	assert_true(tp_sent(&p, NULL) >= 1);	/* segment 20 at least */
	/* one RTT later segment 20 is SACKed but 10 is not: the
	 * retransmission was lost, and goes again, long before an RTO */
	th_advance(h, RTT);
	tp_ack(&p, tp_seq(&p, 10), 11, 21);
	assert_int_equal(h->stats.tcp.lost_retransmits, 1);
	last = 0;
	while (th_pending(h) > 0) {
		struct th_out o;

		assert_true(th_next(h, &o));
		if (o.t.seq == tp_seq(&p, 10))
			last = o.t.seq;
	}
	assert_int_equal(last, tp_seq(&p, 10));
	assert_int_equal(h->stats.tcp.timeouts, 0);
	assert_true(h->stats.tcp.rack_losses >= 2);
	/* everything arrives: recovery ends */
	tp_ack(&p, tp_seq(&p, 24), 0, 0);
	assert_false(h->app.conn->flags & TCP_F_RECOVERY);
	assert_int_equal(tcp_sb_count(h->app.conn), 0);
	assert_int_equal(h->app.conn->lost_bytes, 0);
	assert_int_equal(h->app.conn->retrans_bytes, 0);
	th_free(h);
}

/* Segments 10-14 out, 13 and 14 lost. The probe, 2 SRTT + 2 ms after the
 * last ACK, resends 14; the first lost_probes probes get no answer, each
 * next one coming a doubled PTO later, before any RTO. The answered one's
 * SACK shows 13 missing: RACK repairs it, no timeout. */
static void
tail_loss_probed(unsigned int lost_probes)
{
	struct th *h = warm_up();
	uint64_t pto = 2 * RTT + 2;
	uint32_t last = 0;
	unsigned int i;

	tp_write(&p, 5 * MSS);
	assert_int_equal(tp_sent(&p, NULL), 5);
	th_advance(h, RTT);
	tp_ack(&p, tp_seq(&p, 13), 0, 0);
	for (i = 0; i <= lost_probes; i++, pto *= 2) {
		assert_int_equal(quiet_for(h), pto);
		assert_int_equal(tp_sent(&p, &last), 1);
		assert_int_equal(last, tp_seq(&p, 14));
		assert_int_equal(h->stats.tcp.tail_loss_probes, i + 1);
	}
	th_advance(h, RTT);
	tp_ack(&p, tp_seq(&p, 13), 14, 15);
	th_advance(h, RTT / 4);
	assert_int_equal(tp_sent(&p, &last), 1);
	assert_int_equal(last, tp_seq(&p, 13));
	assert_int_equal(h->stats.tcp.tlp_recoveries, 1);
	tp_ack(&p, tp_seq(&p, 15), 0, 0);
	th_advance(h, 1000);
	assert_int_equal(th_pending(h), 0);
	assert_int_equal(h->stats.tcp.timeouts, 0);
	th_free(h);
}

static void
test_tail_loss_repaired_by_probe(void **state)
{
	(void)state;
	tail_loss_probed(0);
}

/* A probe lost too: a second probe, before the RTO (whose floor is
 * hundreds of round trips on a fast path). */
static void
test_second_probe_before_rto(void **state)
{
	(void)state;
	tail_loss_probed(1);
}

static void
test_reordering_inside_window_is_no_loss(void **state)
{
	struct th *h = warm_up();

	(void)state;
	tp_write(&p, 5 * MSS);
	assert_int_equal(tp_sent(&p, NULL), 5);
	th_advance(h, RTT);
	/* 12 overtakes 11 by 5 ms: inside min_RTT / 4 = 10 ms */
	tp_ack(&p, tp_seq(&p, 11), 0, 0);
	tp_ack(&p, tp_seq(&p, 11), 12, 13);
	th_advance(h, 5);
	tp_ack(&p, tp_seq(&p, 13), 0, 0);
	assert_int_equal(th_pending(h), 0);
	assert_true(h->app.conn->rack_reord);
	tp_ack(&p, tp_seq(&p, 15), 0, 0);
	th_advance(h, 1000);
	assert_int_equal(h->stats.tcp.retransmits, 0);
	assert_int_equal(h->stats.tcp.rack_losses, 0);
	assert_false(h->app.conn->flags & TCP_F_RECOVERY);
	th_free(h);
}

static void
test_prr_paces_recovery(void **state)
{
	struct th *h = warm_up();
	struct tcp_conn *c = h->app.conn;
	uint32_t ssthresh, recover_fs, i, total = 0;

	(void)state;
	/* 20 segments out (10-29), 20 more waiting; 10 is lost */
	tp_write(&p, 40 * MSS);
	assert_int_equal(tp_sent(&p, NULL), 20);
	th_advance(h, RTT);
	/* the first SACKs let new data out in their place (the pipe) */
	tp_ack(&p, tp_seq(&p, 10), 11, 12);
	tp_ack(&p, tp_seq(&p, 10), 11, 13);
	assert_int_equal(tp_sent(&p, NULL), 2);
	/* the third SACKed segment starts recovery: ssthresh is half the
	 * 22 segments out, and the fast retransmit goes at once */
	tp_ack(&p, tp_seq(&p, 10), 11, 14);
	assert_true(c->flags & TCP_F_RECOVERY);
	ssthresh = c->ssthresh;
	recover_fs = c->recover_fs;
	assert_int_equal(recover_fs, 22 * MSS);
	assert_int_equal(ssthresh, 11 * MSS);
	total = tp_sent(&p, NULL);
	assert_int_equal(total, 1);
	/* then each ACK delivering one segment lets out delivered *
	 * ssthresh / RecoverFS: one segment every other ACK, never a
	 * burst, while the pipe is above ssthresh */
	for (i = 2; i <= 10; i++) {
		unsigned int n;
		uint32_t expect = (i * MSS * ssthresh + recover_fs - 1) /
			recover_fs;

		tp_ack(&p, tp_seq(&p, 10), 11, 13 + i);
		n = tp_sent(&p, NULL);
		assert_true(n <= 1);
		total += n;
		assert_in_range(total * MSS, expect - MSS, expect + MSS);
	}
	assert_int_equal(h->stats.tcp.prr_sends, total);
	assert_int_equal(h->stats.tcp.timeouts, 0);
	th_free(h);
}

/* Recovery ends with cwnd at ssthresh (RFC 6937), not at the flight plus
 * one segment, which is next to nothing once the last hole fills. */
static void
test_recovery_ends_at_ssthresh(void **state)
{
	struct th *h = warm_up();
	struct tcp_conn *c = h->app.conn;
	uint32_t ssthresh;

	(void)state;
	/* segments 10-19; 10 is lost, the rest SACKed: recovery */
	tp_write(&p, 10 * MSS);
	assert_int_equal(tp_sent(&p, NULL), 10);
	th_advance(h, RTT);
	tp_ack(&p, tp_seq(&p, 10), 11, 20);
	assert_true(c->flags & TCP_F_RECOVERY);
	ssthresh = c->ssthresh;
	assert_true(ssthresh >= 4 * MSS);
	assert_true(tp_sent(&p, NULL) >= 1);	/* 10 again */
	/* its ACK covers everything: nothing is in flight */
	th_advance(h, RTT);
	tp_ack(&p, tp_seq(&p, 20), 0, 0);
	assert_false(c->flags & TCP_F_RECOVERY);
	assert_int_equal(c->snd_una, c->snd_max);
	assert_int_equal(c->cwnd, ssthresh);
	/* and the window is there to use at once */
	tp_write(&p, 20 * MSS);
	assert_int_equal(tp_sent(&p, NULL), ssthresh / MSS);
	th_free(h);
}

/* In recovery, the last hole's retransmission is lost and nothing was
 * sent after it: a probe (the highest segment not SACKed, the
 * retransmission itself) repairs it a PTO later, not the RTO. */
static void
test_lost_last_retransmission_probed(void **state)
{
	struct th *h = warm_up();
	uint32_t last = 0;

	(void)state;
	tp_write(&p, 5 * MSS);
	assert_int_equal(tp_sent(&p, NULL), 5);
	th_advance(h, RTT);
	tp_ack(&p, tp_seq(&p, 10), 11, 15);
	assert_true(h->app.conn->flags & TCP_F_RECOVERY);
	assert_int_equal(tp_sent(&p, &last), 1);
	assert_int_equal(last, tp_seq(&p, 10));
	/* that retransmission is lost: silence */
	assert_int_equal(quiet_for(h), 2 * RTT + 2);
	assert_int_equal(tp_sent(&p, &last), 1);
	assert_int_equal(last, tp_seq(&p, 10));
	assert_int_equal(h->stats.tcp.tail_loss_probes, 1);
	th_advance(h, RTT);
	tp_ack(&p, tp_seq(&p, 15), 0, 0);
	assert_false(h->app.conn->flags & TCP_F_RECOVERY);
	th_advance(h, 1000);
	assert_int_equal(th_pending(h), 0);
	assert_int_equal(h->stats.tcp.timeouts, 0);
	th_free(h);
}

/* One segment out, more queued, cwnd full: the peer may hold its ACK for
 * its delayed-ACK time, but the probe is new data, never spurious, so it
 * goes 2 SRTT + 2 ms later rather than after that allowance. */
static void
test_lone_segment_probe_of_new_data(void **state)
{
	struct th *h = warm_up();
	uint32_t last = 0;

	(void)state;
	h->app.conn->cwnd = MSS;
	tp_write(&p, 3 * MSS);
	assert_int_equal(tp_sent(&p, &last), 1);
	assert_int_equal(last, tp_seq(&p, 10));
	assert_int_equal(quiet_for(h), 2 * RTT + 2);
	assert_int_equal(tp_sent(&p, &last), 1);
	assert_int_equal(last, tp_seq(&p, 11));
	assert_int_equal(h->stats.tcp.tail_loss_probes, 1);
	th_free(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rack_finds_lost_retransmission),
		cmocka_unit_test(test_tail_loss_repaired_by_probe),
		cmocka_unit_test(test_reordering_inside_window_is_no_loss),
		cmocka_unit_test(test_prr_paces_recovery),
		cmocka_unit_test(test_recovery_ends_at_ssthresh),
		cmocka_unit_test(test_lost_last_retransmission_probed),
		cmocka_unit_test(test_second_probe_before_rto),
		cmocka_unit_test(test_lone_segment_probe_of_new_data),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
