/* SPDX-License-Identifier: BSD-3-Clause */
/* Window reductions proven spurious are undone, as Linux undoes them
 * (tcp_undo.c): a fast recovery whose one retransmission comes back as a
 * D-SACK after the recovery ended (RFC 3708); one whose hole an original
 * filled, as the echoed timestamp shows (RFC 3522, Eifel), and not when
 * the retransmission filled it; a timeout that F-RTO (RFC 5682, with
 * SACK) finds spurious when an original is acknowledged after it, and
 * real when the new data it sent instead of retransmissions is SACKed
 * over a hole. The path has a 40 ms RTT; NewReno halves the flight. */
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

/* Ten segments out and acknowledged: cwnd 20 segments (of 1012 bytes
 * with timestamps: the initial window is in MSS, growth in bytes). */
static struct th *
warm_up(bool ts)
{
	struct th *h = tp_open(&p, NULL, RTT * 1000, 10, ts);

	assert_int_equal(h->app.conn->cwnd, ts ? 20120 : 20 * MSS);
	return h;
}

/* Segments 10-19 out; 10 is late, the four after it SACKed (more than
 * three MSS, with or without timestamps): RACK takes it for lost, fast
 * recovery halves the flight (5 segments) and 10 goes again. */
static void
recovery_on_late_segment(struct th *h)
{
	struct tcp_conn *c = h->app.conn;
	uint32_t last = 0;

	tp_write(&p, 10 * MSS);
	assert_int_equal(tp_sent(&p, NULL), 10);
	th_advance(h, RTT);
	tp_ack(&p, tp_seq(&p, 10), 11, 15);
	assert_true(c->flags & TCP_F_RECOVERY);
	assert_int_equal(c->ssthresh, 5 * MSS);
	assert_int_equal(tp_sent(&p, &last), 1);
	assert_int_equal(last, tp_seq(&p, 10));
	th_advance(h, 5);
}

/* The recovery above, then the original arrives: everything
 * acknowledged, the recovery ends at ssthresh. */
static struct th *
recovery_ended_by_original(void)
{
	struct th *h = warm_up(false);
	struct tcp_conn *c = h->app.conn;

	recovery_on_late_segment(h);
	tp_ack(&p, tp_seq(&p, 20), 0, 0);
	assert_false(c->flags & TCP_F_RECOVERY);
	assert_int_equal(c->cwnd, 5 * MSS);
	return h;
}

static void
test_dsack_undoes_recovery(void **state)
{
	struct th *h = recovery_ended_by_original();
	struct tcp_conn *c = h->app.conn;

	(void)state;
	/* then the retransmission, a duplicate: the window as before */
	tp_ack(&p, tp_seq(&p, 20), 10, 11);
	assert_int_equal(h->stats.tcp.dsack_undos, 1);
	assert_int_equal(c->cwnd, 20 * MSS);
	assert_int_equal(c->ssthresh, UINT32_MAX);
	tp_write(&p, 20 * MSS);
	assert_int_equal(tp_sent(&p, NULL), 20);
	th_free(h);
}

/* A D-SACK block that is no block (its edges reversed: as a length, four
 * billion bytes) proves nothing: the reduction stays. */
static void
test_reversed_dsack_block_undoes_nothing(void **state)
{
	static const uint32_t reversed[1][2] = { { 12, 11 } };
	struct th *h = recovery_ended_by_original();
	struct tcp_conn *c = h->app.conn;

	(void)state;
	tp_ack_blocks(&p, tp_seq(&p, 20), reversed, 1);
	assert_int_equal(h->stats.tcp.dsack_undos, 0);
	assert_int_equal(c->cwnd, 5 * MSS);
	assert_int_equal(c->ssthresh, 5 * MSS);
	th_free(h);
}

/* The ACK that ends the recovery echoes the TSval of the original
 * (orig) or of the retransmission: an original filled the hole only in
 * the first case. */
static void
eifel(bool echo_original)
{
	struct th *h = warm_up(true);
	struct tcp_conn *c = h->app.conn;
	uint32_t orig, prior = c->cwnd;

	tp_write(&p, 10 * MSS);
	assert_int_equal(tp_sent(&p, NULL), 10);
	orig = p.ts_ecr;
	th_advance(h, RTT);
	tp_ack(&p, tp_seq(&p, 10), 11, 15);
	assert_true(c->flags & TCP_F_RECOVERY);
	assert_int_equal(tp_sent(&p, NULL), 1);
	assert_true(p.ts_ecr != orig);
	th_advance(h, 5);
	if (echo_original)
		p.ts_ecr = orig;
	tp_ack(&p, tp_seq(&p, 20), 0, 0);
	assert_false(c->flags & TCP_F_RECOVERY);
	assert_int_equal(h->stats.tcp.eifel_undos, echo_original);
	assert_int_equal(c->cwnd, echo_original ? prior : 5 * MSS);
	th_free(h);
}

static void
test_timestamps_undo_recovery(void **state)
{
	(void)state;
	eifel(true);
}

static void
test_timestamps_keep_real_loss(void **state)
{
	(void)state;
	eifel(false);
}

/* Segments 10-29 out (cwnd 20), ten more queued, and no answer: a
 * probe of new data (30), a second that resends it, then the RTO, which
 * resends 10 alone. */
static void
timeout(struct th *h)
{
	struct tcp_conn *c = h->app.conn;
	uint32_t last = 0;

	tp_write(&p, 30 * MSS);
	assert_int_equal(tp_sent(&p, NULL), 20);
	while (h->stats.tcp.timeouts == 0)
		th_advance(h, 1);
	assert_int_equal(h->stats.tcp.tail_loss_probes, 2);
	assert_true(c->flags & TCP_F_LOSS);
	assert_true(c->flags & TCP_F_FRTO);
	assert_int_equal(c->cwnd, MSS);
	assert_int_equal(tp_sent(&p, &last), 3);
	assert_int_equal(last, tp_seq(&p, 10));
	assert_int_equal(h->stats.tcp.retransmits, 2);
}

/* The ACKs were only late: the first acknowledges 10 and 11, and 11 was
 * never resent: the timeout was spurious, the window comes back, and
 * nothing more is resent. */
static void
test_frto_undoes_spurious_timeout(void **state)
{
	struct th *h = warm_up(false);
	struct tcp_conn *c = h->app.conn;
	struct th_out o;

	(void)state;
	timeout(h);
	th_advance(h, 5);
	tp_ack(&p, tp_seq(&p, 12), 0, 0);
	assert_int_equal(h->stats.tcp.frto_undos, 1);
	assert_false(c->flags & (TCP_F_LOSS | TCP_F_FRTO));
	assert_int_equal(c->cwnd, 20 * MSS);
	assert_int_equal(c->lost_bytes, 0);
	assert_int_equal(c->backoff, 0);
	/* what goes now is new data: the queue's last nine segments */
	while (th_next(h, &o))
		if (o.t.len > 0)
			assert_true(SEQ_GEQ(o.t.seq, tp_seq(&p, 31)));
	assert_int_equal(h->stats.tcp.retransmits, 2);
	th_free(h);
}

/* The timeout was real: the retransmission of 10 is acknowledged alone,
 * F-RTO sends two new segments (31, 32) rather than resend 11, and the
 * peer SACKs them over the hole at 11: the loss is confirmed, nothing is
 * undone, and the retransmissions resume with 11. */
static void
test_frto_confirms_real_timeout(void **state)
{
	struct th *h = warm_up(false);
	struct tcp_conn *c = h->app.conn;
	struct th_out o;
	unsigned int n = 0;

	(void)state;
	timeout(h);
	th_advance(h, RTT);
	tp_ack(&p, tp_seq(&p, 11), 0, 0);
	assert_true(c->flags & TCP_F_FRTO_NEW);
	while (th_next(h, &o)) {
		if (o.t.len == 0)
			continue;
		assert_int_equal(o.t.seq, tp_seq(&p, 31 + n));
		n++;
	}
	assert_int_equal(n, 2);
	th_advance(h, RTT);
	tp_ack(&p, tp_seq(&p, 11), 31, 33);
	assert_false(c->flags & (TCP_F_FRTO | TCP_F_FRTO_NEW));
	assert_true(c->flags & TCP_F_LOSS);
	assert_int_equal(h->stats.tcp.frto_undos, 0);
	assert_int_equal(h->stats.tcp.loss_undos, 0);
	assert_true(c->cwnd < 5 * MSS);
	assert_true(th_next(h, &o));
	assert_int_equal(o.t.seq, tp_seq(&p, 11));
	th_free(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dsack_undoes_recovery),
		cmocka_unit_test(test_reversed_dsack_block_undoes_nothing),
		cmocka_unit_test(test_timestamps_undo_recovery),
		cmocka_unit_test(test_timestamps_keep_real_loss),
		cmocka_unit_test(test_frto_undoes_spurious_timeout),
		cmocka_unit_test(test_frto_confirms_real_timeout),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
