/* SPDX-License-Identifier: BSD-3-Clause */
/* The receive queue at a window of 6 MiB: thousands of segments after
 * holes, the holes filled in a random order, the data delivered
 * byte-exact, the SACK blocks we send always the runs we hold; and under
 * a budget of mbufs too small for what comes, out-of-order data pruned
 * from the highest sequence down, never what was acknowledged, counted,
 * gone from the SACK blocks, and the transfer whole once the peer sends
 * it again. The peer's segments carry SEG bytes, with SACK and a window
 * scale. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "tcp_harness.h"

/* Receive queues of megabytes, held whole. */
unsigned int th_pool_mbufs = 16383;

#define IRS 7000000u
#define SEG 1400
#define MANY 4400		/* 6.16 MB: a window of 6 MiB at SEG */

static uint32_t iss;

/* The stream's byte at off. */
static uint8_t
stream_byte(uint32_t off)
{
	return (uint8_t)(off * 13 + off / 1021);
}

/* A connection whose receive buffer is rcv_buf from the start, the
 * shard's receive queues held to rcvq_mbufs_max (0: no limit); the
 * application takes everything at once and checks it against the
 * stream. */
static struct th *
open_conn(uint32_t rcv_buf, uint32_t rcvq_mbufs_max)
{
	struct tcp_config cfg;
	struct th_seg s = th_seg_from(IRS, 0, TCP_SYN);
	struct th_out o;
	struct th *h;

	tcp_config_defaults(&cfg);
	cfg.rcv_buf_init = rcv_buf;
	cfg.rcv_buf_max = rcv_buf;
	cfg.rcv_buf_budget = 1ull << 30;
	cfg.rcvq_mbufs_max = rcvq_mbufs_max;
	h = th_new(&cfg);
	h->app.pattern = stream_byte;
	th_opt_mss(&s, SEG);
	th_opt_wscale(&s, 7);
	th_opt_sack_ok(&s);
	th_inject(h, &s);
	assert_true(th_next(h, &o));
	iss = o.t.seq;
	s = th_seg_from(IRS + 1, iss + 1, TCP_ACK);
	th_inject(h, &s);
	assert_int_equal(h->app.accepted, 1);
	th_drain(h);
	return h;
}

/* The peer's segment i (SEG bytes at i * SEG). */
static void
send_seg(struct th *h, uint32_t i)
{
	static uint8_t buf[SEG];
	struct th_seg s = th_seg_from(IRS + 1 + i * SEG, iss + 1, TCP_ACK);
	uint32_t k;

	for (k = 0; k < SEG; k++)
		buf[k] = stream_byte(i * SEG + k);
	s.data = buf;
	s.len = SEG;
	th_inject(h, &s);
}

/*
 * The last ACK sent, checked against what the peer's segments reached
 * us (have[i]: segment i is held or delivered): it acknowledges the
 * first segment missing, and each SACK block is a run of segments held
 * whole, from a hole to a hole, above that; the first block holds the
 * most recent arrival, `last`, when it is out of order. Returns the
 * blocks.
 */
static int
check_ack(struct th *h, const bool *have, uint32_t nsegs, uint32_t last)
{
	struct th_out o;
	uint32_t first_missing = 0;
	bool any = false;
	int b;

	while (th_next(h, &o))
		any = true;
	assert_true(any);
	th_drain(h);
	while (first_missing < nsegs && have[first_missing])
		first_missing++;
	assert_int_equal(o.t.ack, IRS + 1 + first_missing * SEG);
	for (b = 0; b < o.t.opt.nsack; b++) {
		uint32_t lo = o.t.opt.sack[b][0] - IRS - 1;
		uint32_t hi = o.t.opt.sack[b][1] - IRS - 1, i;

		assert_int_equal(lo % SEG, 0);
		assert_int_equal(hi % SEG, 0);
		assert_true(lo / SEG > first_missing && hi > lo);
		assert_false(have[lo / SEG - 1]);
		assert_true(hi / SEG == nsegs || !have[hi / SEG]);
		for (i = lo / SEG; i < hi / SEG; i++)
			assert_true(have[i]);
	}
	if (last > first_missing) {
		assert_true(o.t.opt.nsack > 0);
		assert_true(o.t.opt.sack[0][0] <= IRS + 1 + last * SEG);
		assert_true(o.t.opt.sack[0][1] > IRS + 1 + last * SEG);
	}
	return o.t.opt.nsack;
}

/*
 * 4400 segments, every other one missing: 2200 runs and as many holes,
 * all held (a ring of 256 segments held no more than 256); then the
 * holes filled in a random order, the first one among the last. Every
 * ACK's SACK blocks are runs held; the data comes out whole and in
 * order, and the queue's memory goes back.
 */
static void
test_thousands_of_holes_filled_at_random(void **state)
{
	static uint32_t order[MANY / 2];
	static bool have[MANY];
	struct th *h = open_conn(6 << 20, 0);
	struct tcp_conn *c = h->app.conn;
	uint32_t i, seed = 12345;

	(void)state;
	memset(have, 0, sizeof(have));
	assert_int_equal(c->rcv_wscale, 7);
	assert_true(tcp_rcv_window(c) >= MANY * SEG);
	for (i = 1; i < MANY; i += 2) {
		send_seg(h, i);
		have[i] = true;
		check_ack(h, have, MANY, i);
	}
	assert_int_equal(c->rcvq.n, MANY / 2);
	assert_int_equal(h->stats.tcp_rcvq_mbufs, MANY / 2);
	assert_int_equal(h->app.got_len, 0);
	/* the holes in a random order (Fisher-Yates, a fixed seed) */
	for (i = 0; i < MANY / 2; i++)
		order[i] = 2 * i;
	for (i = MANY / 2 - 1; i > 0; i--) {
		uint32_t j, t;

		seed = seed * 1103515245u + 12345u;
		j = (seed >> 8) % (i + 1);
		t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (i = 0; i < MANY / 2; i++) {
		send_seg(h, order[i]);
		have[order[i]] = true;
		check_ack(h, have, MANY, order[i]);
	}
	assert_int_equal(h->app.got_len, MANY * SEG);
	assert_int_equal(c->rcv_nxt, IRS + 1 + MANY * SEG);
	assert_int_equal(c->rcvq.n, 0);
	assert_null(c->rcvq.blk);
	assert_int_equal(h->stats.tcp_rcvq_mbufs, 0);
	assert_int_equal(th_blocks_out(&h->ns->rcvq_chunks), 0);
	assert_int_equal(th_blocks_out(&h->ns->rcvq_runs), 0);
	/* what the pools made is counted, and kept for the next peak */
	assert_int_equal(h->stats.tcp_rcvq_mem_bytes,
			(uint64_t)h->ns->rcvq_blks.made * h->ns->rcvq_blks.size +
			(uint64_t)h->ns->rcvq_chunks.made * h->ns->rcvq_chunks.size +
			(uint64_t)h->ns->rcvq_runs.made * h->ns->rcvq_runs.size);
	assert_true(h->ns->rcvq_runs.made >= MANY / 2);
	assert_int_equal(h->stats.tcp.ooo_pruned, 0);
	th_free(h);
}

/*
 * A budget of 8 mbufs for the shard's receive queues. Segments 1-3, 5-7
 * and 9-10 fill it (holes at 0, 4 and 8); 11 finds no room and nothing
 * above it to drop: not kept, not SACKed. 4 comes: 10, the highest, is
 * pruned for it; 8 comes: 9 is. The SACK blocks then say 1-8, never 9 or
 * 10 again. 0 comes: 0-8 are delivered, and the peer's sending 9 on
 * again completes the transfer.
 */
static void
test_prune_highest_first_under_budget(void **state)
{
	static const uint32_t first[] = { 1, 2, 3, 5, 6, 7, 9, 10 };
	bool have[16] = { false };
	struct th *h = open_conn(64 * 1024, 8);
	struct tcp_conn *c = h->app.conn;
	struct th_out o;
	uint32_t i;

	(void)state;
	for (i = 0; i < RTE_DIM(first); i++) {
		send_seg(h, first[i]);
		have[first[i]] = true;
		check_ack(h, have, 16, first[i]);
	}
	assert_int_equal(h->stats.tcp_rcvq_mbufs, 8);
	send_seg(h, 11);
	assert_int_equal(check_ack(h, have, 16, 0), 3);
	assert_int_equal(h->stats.tcp.ooo_dropped, 1);
	assert_int_equal(h->stats.tcp.ooo_pruned, 0);
	send_seg(h, 4);
	have[4] = true;
	have[10] = false;	/* pruned */
	assert_int_equal(h->stats.tcp.ooo_pruned, 1);
	assert_int_equal(check_ack(h, have, 16, 4), 2);
	send_seg(h, 8);
	have[8] = true;
	have[9] = false;
	assert_int_equal(h->stats.tcp.ooo_pruned, 2);
	assert_int_equal(check_ack(h, have, 16, 8), 1);
	assert_int_equal(h->stats.tcp_rcvq_mbufs, 8);
	assert_int_equal(c->rcvq.n, 8);
	/* the first hole: all held data goes up */
	send_seg(h, 0);
	have[0] = true;
	assert_int_equal(h->app.got_len, 9 * SEG);
	assert_int_equal(check_ack(h, have, 16, 0), 0);
	assert_null(c->rcvq.blk);
	/* the peer sends again from the ACK */
	for (i = 9; i < 16; i++) {
		send_seg(h, i);
		have[i] = true;
	}
	assert_true(th_next(h, &o));
	th_drain(h);
	assert_int_equal(h->app.got_len, 16 * SEG);
	assert_int_equal(c->rcv_nxt, IRS + 1 + 16 * SEG);
	th_free(h);
}

/* What was acknowledged is never pruned: data held for an application
 * without room fills the budget, and a segment after a hole then finds
 * none (dropped, not SACKed) though held data is there to drop. Room
 * comes: the held data goes up whole. */
static void
test_held_data_never_pruned(void **state)
{
	bool have[16] = { false };
	struct th *h = open_conn(64 * 1024, 4);
	struct tcp_conn *c = h->app.conn;
	uint32_t i;

	(void)state;
	h->app.room_only = true;
	th_set_rcv_space(h, 0);
	for (i = 0; i < 4; i++) {
		send_seg(h, i);
		have[i] = true;
	}
	th_advance(h, 50);	/* the delayed ACK */
	check_ack(h, have, 16, 0);
	assert_int_equal(c->rcvq.held, 4);
	send_seg(h, 6);
	assert_int_equal(check_ack(h, have, 16, 0), 0);
	assert_int_equal(h->stats.tcp.ooo_dropped, 1);
	assert_int_equal(h->stats.tcp.ooo_pruned, 0);
	assert_int_equal(c->rcvq.held, 4);
	th_set_rcv_space(h, 1 << 20);
	net_flush(h->ns);
	assert_int_equal(h->app.got_len, 4 * SEG);
	assert_int_equal(c->rcvq.n, 0);
	th_free(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_thousands_of_holes_filled_at_random),
		cmocka_unit_test(test_prune_highest_first_under_budget),
		cmocka_unit_test(test_held_data_never_pruned),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
