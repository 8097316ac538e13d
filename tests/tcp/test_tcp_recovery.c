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

#include "tcp_harness.h"

#define IRS 7000000u
#define PORT 42000
#define MSS 1000
#define RTT 40

static uint32_t iss;

static struct th_seg
ack_seg(uint32_t ack)
{
	struct th_seg s = { .sport = PORT, .seq = IRS + 1, .ack = ack,
		.flags = TCP_ACK, .win = 65535 };

	return s;
}

/* The peer's ACK of ack, SACKing [from, to) (segment numbers from the
 * first data byte, whole segments of MSS), if to > from. */
static void
ack_sack(struct th *h, uint32_t ack, uint32_t from, uint32_t to)
{
	struct th_seg s = ack_seg(ack);
	uint32_t b[1][2] = { { iss + 1 + from * MSS, iss + 1 + to * MSS } };

	if (to > from)
		th_opt_sack(&s, (const uint32_t (*)[2])b, 1);
	th_inject(h, &s);
}

/* Byte offset of segment i in the stream (after the warm-up's 10). */
static uint32_t
seq_of(uint32_t i)
{
	return iss + 1 + i * MSS;
}

static void
write_bytes(struct th *h, uint32_t n)
{
	static char buf[64 * 1024];

	memset(buf, 'r', sizeof(buf));
	assert_int_equal(tcp_write(h->ns, h->app.conn, buf, n), n);
	tcp_output(h->ns, h->app.conn);
	net_flush(h->ns);
}

/* MSS 1000 and SACK; ten segments out and acknowledged one RTT later, so
 * that SRTT and RACK's min_RTT are 40 ms and cwnd is 20 segments. The
 * stream's segments 0-9 are then behind us. */
static struct th *
warm_up(void)
{
	struct th_seg s = { .sport = PORT, .seq = IRS, .flags = TCP_SYN,
		.win = 65535 };
	struct th *h = th_new(NULL);
	struct th_out o;
	uint32_t i;

	/* the handshake, one RTT long */
	th_opt_mss(&s, MSS);
	th_opt_sack_ok(&s);
	th_inject(h, &s);
	assert_true(th_next(h, &o));
	iss = o.t.seq;
	th_advance(h, RTT);
	s = ack_seg(iss + 1);
	th_inject(h, &s);
	assert_int_equal(h->app.accepted, 1);
	assert_true(h->app.conn->flags & TCP_F_OPT_SACK);
	write_bytes(h, 10 * MSS);
	assert_int_equal(th_pending(h), 10);
	th_drain(h);
	th_advance(h, RTT);
	for (i = 1; i <= 10; i++)	/* one ACK per segment */
		ack_sack(h, seq_of(i), 0, 0);
	assert_int_equal(h->app.conn->srtt, RTT);
	assert_int_equal(h->app.conn->min_rtt, RTT);
	assert_int_equal(h->app.conn->cwnd, 20 * MSS);
	assert_int_equal(th_pending(h), 0);
	return h;
}

/* Reads what was sent; counts the segments, checks each lies in
 * [lo, hi) when hi != 0; returns the count. */
static unsigned int
sent(struct th *h, uint32_t *last_seq)
{
	struct th_out o;
	unsigned int n = 0;

	while (th_next(h, &o)) {
		if (o.t.len == 0)
			continue;
		if (last_seq != NULL)
			*last_seq = o.t.seq;
		n++;
	}
	return n;
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
	write_bytes(h, 10 * MSS);
	assert_int_equal(sent(h, NULL), 10);
	th_advance(h, RTT);
	/* three SACKed above it: RACK marks 10 lost at once, resends it */
	ack_sack(h, seq_of(10), 11, 12);
	ack_sack(h, seq_of(10), 11, 13);
	assert_int_equal(sent(h, NULL), 0);	/* reordering window */
	ack_sack(h, seq_of(10), 11, 14);
	assert_int_equal(sent(h, &last), 1);
	assert_int_equal(last, seq_of(10));
	assert_true(h->app.conn->flags & TCP_F_RECOVERY);
	/* new data after the retransmission; the retransmission is lost */
	write_bytes(h, 4 * MSS);
	th_advance(h, 1);
	ack_sack(h, seq_of(10), 11, 20);
	assert_true(sent(h, NULL) >= 1);	/* segment 20 at least */
	/* one RTT later segment 20 is SACKed but 10 is not: the
	 * retransmission was lost, and goes again, long before an RTO */
	th_advance(h, RTT);
	ack_sack(h, seq_of(10), 11, 21);
	assert_int_equal(h->stats.tcp.lost_retransmits, 1);
	last = 0;
	while (th_pending(h) > 0) {
		struct th_out o;

		assert_true(th_next(h, &o));
		if (o.t.seq == seq_of(10))
			last = o.t.seq;
	}
	assert_int_equal(last, seq_of(10));
	assert_int_equal(h->stats.tcp.timeouts, 0);
	assert_true(h->stats.tcp.rack_losses >= 2);
	/* everything arrives: recovery ends */
	ack_sack(h, seq_of(24), 0, 0);
	assert_false(h->app.conn->flags & TCP_F_RECOVERY);
	assert_int_equal(h->app.conn->nsegs, 0);
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

	write_bytes(h, 5 * MSS);
	assert_int_equal(sent(h, NULL), 5);
	th_advance(h, RTT);
	ack_sack(h, seq_of(13), 0, 0);
	for (i = 0; i <= lost_probes; i++, pto *= 2) {
		assert_int_equal(quiet_for(h), pto);
		assert_int_equal(sent(h, &last), 1);
		assert_int_equal(last, seq_of(14));
		assert_int_equal(h->stats.tcp.tail_loss_probes, i + 1);
	}
	th_advance(h, RTT);
	ack_sack(h, seq_of(13), 14, 15);
	th_advance(h, RTT / 4);
	assert_int_equal(sent(h, &last), 1);
	assert_int_equal(last, seq_of(13));
	assert_int_equal(h->stats.tcp.tlp_recoveries, 1);
	ack_sack(h, seq_of(15), 0, 0);
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
	write_bytes(h, 5 * MSS);
	assert_int_equal(sent(h, NULL), 5);
	th_advance(h, RTT);
	/* 12 overtakes 11 by 5 ms: inside min_RTT / 4 = 10 ms */
	ack_sack(h, seq_of(11), 0, 0);
	ack_sack(h, seq_of(11), 12, 13);
	th_advance(h, 5);
	ack_sack(h, seq_of(13), 0, 0);
	assert_int_equal(th_pending(h), 0);
	assert_true(h->app.conn->rack_reord);
	ack_sack(h, seq_of(15), 0, 0);
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
	write_bytes(h, 40 * MSS);
	assert_int_equal(sent(h, NULL), 20);
	th_advance(h, RTT);
	/* the first SACKs let new data out in their place (the pipe) */
	ack_sack(h, seq_of(10), 11, 12);
	ack_sack(h, seq_of(10), 11, 13);
	assert_int_equal(sent(h, NULL), 2);
	/* the third SACKed segment starts recovery: ssthresh is half the
	 * 22 segments out, and the fast retransmit goes at once */
	ack_sack(h, seq_of(10), 11, 14);
	assert_true(c->flags & TCP_F_RECOVERY);
	ssthresh = c->ssthresh;
	recover_fs = c->recover_fs;
	assert_int_equal(recover_fs, 22 * MSS);
	assert_int_equal(ssthresh, 11 * MSS);
	total = sent(h, NULL);
	assert_int_equal(total, 1);
	/* then each ACK delivering one segment lets out delivered *
	 * ssthresh / RecoverFS: one segment every other ACK, never a
	 * burst, while the pipe is above ssthresh */
	for (i = 2; i <= 10; i++) {
		unsigned int n;
		uint32_t expect = (i * MSS * ssthresh + recover_fs - 1) /
			recover_fs;

		ack_sack(h, seq_of(10), 11, 13 + i);
		n = sent(h, NULL);
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
	write_bytes(h, 10 * MSS);
	assert_int_equal(sent(h, NULL), 10);
	th_advance(h, RTT);
	ack_sack(h, seq_of(10), 11, 20);
	assert_true(c->flags & TCP_F_RECOVERY);
	ssthresh = c->ssthresh;
	assert_true(ssthresh >= 4 * MSS);
	assert_true(sent(h, NULL) >= 1);	/* 10 again */
	/* its ACK covers everything: nothing is in flight */
	th_advance(h, RTT);
	ack_sack(h, seq_of(20), 0, 0);
	assert_false(c->flags & TCP_F_RECOVERY);
	assert_int_equal(c->snd_una, c->snd_max);
	assert_int_equal(c->cwnd, ssthresh);
	/* and the window is there to use at once */
	write_bytes(h, 20 * MSS);
	assert_int_equal(sent(h, NULL), ssthresh / MSS);
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
	write_bytes(h, 5 * MSS);
	assert_int_equal(sent(h, NULL), 5);
	th_advance(h, RTT);
	ack_sack(h, seq_of(10), 11, 15);
	assert_true(h->app.conn->flags & TCP_F_RECOVERY);
	assert_int_equal(sent(h, &last), 1);
	assert_int_equal(last, seq_of(10));
	/* that retransmission is lost: silence */
	assert_int_equal(quiet_for(h), 2 * RTT + 2);
	assert_int_equal(sent(h, &last), 1);
	assert_int_equal(last, seq_of(10));
	assert_int_equal(h->stats.tcp.tail_loss_probes, 1);
	th_advance(h, RTT);
	ack_sack(h, seq_of(15), 0, 0);
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
	write_bytes(h, 3 * MSS);
	assert_int_equal(sent(h, &last), 1);
	assert_int_equal(last, seq_of(10));
	assert_int_equal(quiet_for(h), 2 * RTT + 2);
	assert_int_equal(sent(h, &last), 1);
	assert_int_equal(last, seq_of(11));
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
