/* SPDX-License-Identifier: BSD-3-Clause */
/* Scripted conversations for the options and loss recovery: window
 * scaling, timestamps and PAWS, SACK both ways, fast retransmit with and
 * without SACK, delayed ACKs, SYN cookies, keepalive, active open. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <string.h>
#include <cmocka.h>

#include <rte_byteorder.h>
#include <rte_mbuf.h>

#include "tcp_harness.h"

#define IRS 5000000u
#define PORT 41000

static struct th_seg
seg(uint32_t seq, uint32_t ack, uint8_t flags, uint16_t win)
{
	struct th_seg s = { .sport = PORT, .seq = seq, .ack = ack,
		.flags = flags, .win = win };

	return s;
}

/* SYN with MSS 1460, wscale 7, SACK-permitted and timestamps; returns the
 * SYN-ACK. */
static void
syn_all_options(struct th *h, struct th_out *o)
{
	struct th_seg s = seg(IRS, 0, TCP_SYN, 65535);

	th_opt_mss(&s, 1460);
	th_opt_sack_ok(&s);
	th_opt_ts(&s, 100, 0);
	th_opt_wscale(&s, 7);
	th_inject(h, &s);
	assert_true(th_next(h, o));
}

static uint32_t
establish_all_options(struct th *h)
{
	struct th_out o;
	struct th_seg s;

	syn_all_options(h, &o);
	s = seg(IRS + 1, o.t.seq + 1, TCP_ACK, 512);	/* 512 << 7 = 64 KiB */
	th_opt_ts(&s, 101, o.t.opt.ts_val);
	th_inject(h, &s);
	assert_int_equal(h->app.accepted, 1);
	return o.t.seq;
}

static void
test_syn_ack_echoes_options(void **state)
{
	struct th *h = th_new(NULL);
	struct th_out o;

	(void)state;
	syn_all_options(h, &o);
	assert_int_equal(o.t.flags, TCP_SYN | TCP_ACK);
	assert_true(o.t.opt.has_wscale);
	assert_int_equal(o.t.opt.wscale, 5);	/* 1 MiB window: 65535 << 5 */
	assert_true(o.t.opt.sack_ok);
	assert_true(o.t.opt.has_ts);
	assert_int_equal(o.t.opt.ts_ecr, 100);
	assert_true(o.t.win <= 65535);
	th_free(h);
}

static void
test_no_options_offered_none_used(void **state)
{
	struct th *h = th_new(NULL);
	struct th_seg s = seg(IRS, 0, TCP_SYN, 65535);
	struct th_out o;

	(void)state;
	th_inject(h, &s);
	assert_true(th_next(h, &o));
	assert_false(o.t.opt.has_wscale);
	assert_false(o.t.opt.sack_ok);
	assert_false(o.t.opt.has_ts);
	assert_int_equal(o.t.opt.mss, th_mss(h));
	th_free(h);
}

static void
test_window_scaling_both_ways(void **state)
{
	struct th *h = th_new(NULL);
	uint32_t iss = establish_all_options(h);
	static char big[200000];
	struct th_out o;
	uint32_t sent = 0;

	(void)state;
	/* The peer's 512 << 7 = 65536-byte window lets more than 64 KiB
	 * minus one go out only if its shift is applied; cwnd grows with
	 * ACKs, so ACK everything as it comes until the window is full. */
	th_set_rcv_space(h, 1 << 20);
	memset(big, 'x', sizeof(big));
	assert_int_equal(tcp_write(h->ns, h->app.conn, big, 100000), 100000);
	tcp_output(h->ns, h->app.conn);
	net_flush(h->ns);
	while (th_next(h, &o)) {
		sent += o.t.len;
		/* our window field is scaled by our shift of 5 */
		assert_true(((uint32_t)o.t.win << 5) >= 60000);
		assert_true(o.t.opt.has_ts);
	}
	assert_true(sent > 0);
	{
		struct th_seg s = seg(IRS + 1, iss + 1 + sent, TCP_ACK, 512);

		th_opt_ts(&s, 102, 0);
		h->app.conn->cwnd = 1 << 20;	/* only the peer's window limits */
		th_inject(h, &s);
	}
	sent = 0;
	while (th_next(h, &o))
		sent += o.t.len;
	/* unscaled, 512 bytes would have been the limit */
	assert_in_range(sent, 65536 - 2 * 1448, 65536);
	assert_int_equal(h->app.conn->snd_wnd, 512u << 7);
	th_free(h);
}

/* A long send queue's test: what a segment out carries must be the bytes
 * written at its place; returns its end. */
static uint32_t
check_payload(const struct th_out *o, const uint8_t *data, uint32_t iss)
{
	assert_memory_equal(o->payload, data + (o->t.seq - iss - 1), o->t.len);
	return o->t.seq + o->t.len;
}

/* The peer's ACK of everything to ack, with SACK blocks, and a window of
 * 8 MiB (65535 << 7). */
static void
ack_sack(struct th *h, uint32_t ack, const uint32_t (*b)[2], int n)
{
	static uint32_t tsval = 200;
	struct th_seg s = seg(IRS + 1, ack, TCP_ACK, 65535);

	th_opt_ts(&s, tsval++, 0);
	if (n > 0)
		th_opt_sack(&s, b, n);
	th_inject(h, &s);
}

/* Chunks of mbuf pointers the send queues hold. */
static uint32_t
sndq_chunks_held(const struct th *h)
{
	return th_blocks_out(&h->ns->sndq_chunks);
}

/* Mbuf of the queue (from its head chunk's first slot) holding seq. */
static uint32_t
sndq_mbuf_of(const struct tcp_conn *c, uint32_t seq)
{
	return c->sndq.first + (c->sndq.head_off + seq - c->snd_una) /
		RTE_MBUF_DEFAULT_BUF_SIZE;
}

/* A send queue of several chunks of mbuf pointers (a 1 MiB buffer, a
 * window of 8 MiB): what goes out is the bytes written, holes resent
 * from behind the cursor and from past the first chunk are byte-exact,
 * and chunks go back as they drain. */
static void
test_long_send_queue(void **state)
{
	static uint8_t big[1 << 20];
	struct tcp_config cfg;
	struct th_out o;
	struct tcp_conn *c;
	struct th *h;
	uint32_t iss, end, hole[2] = { 0, 0 }, hole_len[2] = { 0, 0 }, i, n;
	uint32_t resent[2];

	(void)state;
	for (i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 7 + i / 4099);
	tcp_config_defaults(&cfg);
	cfg.snd_buf = sizeof(big);
	cfg.sb_segs = 128;	/* a flight of a few chunks at a time */
	h = th_new(&cfg);
	iss = establish_all_options(h);
	c = h->app.conn;
	end = iss + 1;
	assert_int_equal(tcp_write(h->ns, c, big, sizeof(big)), sizeof(big));
	assert_true(c->sndq.count > 3 * TCP_SNDQ_CHUNK_MBUFS);
	/* Everything acknowledged as it comes, until a third of the way. */
	c->cwnd = 1 << 24;
	tcp_output(h->ns, c);
	net_flush(h->ns);
	while (end - iss - 1 < sizeof(big) / 3) {
		while (th_next(h, &o))
			end = RTE_MAX(end, check_payload(&o, big, iss));
		c->cwnd = 1 << 24;
		ack_sack(h, end, NULL, 0);
	}
	/* The first chunk drained went back at once. */
	assert_int_equal(sndq_chunks_held(h), (c->sndq.first + c->sndq.count +
			TCP_SNDQ_CHUNK_MBUFS - 1) / TCP_SNDQ_CHUNK_MBUFS);
	assert_int_equal(h->stats.tcp_sndq_chunks_used, sndq_chunks_held(h));
	/* Two segments lost, 10 and 100 segments on: in the queue's first
	 * chunk, behind the cursor where new data went, and in the next. */
	for (n = 0; th_next(h, &o); n++) {
		check_payload(&o, big, iss);
		if (n == 10 || n == 100) {
			hole[n == 100] = o.t.seq;
			hole_len[n == 100] = o.t.len;
		}
	}
	assert_true(n > 101);
	assert_true(sndq_mbuf_of(c, hole[0]) < TCP_SNDQ_CHUNK_MBUFS);
	assert_true(sndq_mbuf_of(c, hole[1]) >= TCP_SNDQ_CHUNK_MBUFS);
	{
		const uint32_t b[3][2] = {
			{ hole[1] + hole_len[1], c->snd_max },
			{ hole[0] + hole_len[0], hole[1] },
			{ end, hole[0] },
		};

		ack_sack(h, end, b, 3);
	}
	th_advance(h, 20);	/* RACK's reordering window */
	memset(resent, 0, sizeof(resent));
	while (th_next(h, &o)) {
		check_payload(&o, big, iss);
		for (i = 0; i < 2; i++)
			resent[i] += o.t.seq == hole[i] &&
				o.t.len == hole_len[i];
	}
	assert_true(resent[0] >= 1 && resent[1] >= 1);
	/* The rest acknowledged: every chunk back. */
	while (c->snd_una != iss + 1 + sizeof(big)) {
		c->cwnd = 1 << 24;
		ack_sack(h, c->snd_max, NULL, 0);
		while (th_next(h, &o))
			check_payload(&o, big, iss);
	}
	assert_int_equal(c->sndq.count, 0);
	assert_int_equal(h->stats.tcp_sndq_mbufs, 0);
	assert_int_equal(sndq_chunks_held(h), 0);
	/* the gauges say the same: the growth counted, all given back */
	assert_true(h->stats.tcp_sndq_chunks_made >= 4);
	assert_int_equal(h->stats.tcp_sndq_chunks_used, 0);
	th_free(h);
}

/* cfg.sb_segs bounds the segments in flight, whatever the windows. */
static void
test_scoreboard_size_bounds_flight(void **state)
{
	static char big[100000];
	struct tcp_config cfg;
	struct th_out o;
	struct th *h;
	uint32_t n = 0;

	(void)state;
	tcp_config_defaults(&cfg);
	cfg.sb_segs = 8;
	h = th_new(&cfg);
	establish_all_options(h);
	h->app.conn->cwnd = 1 << 20;
	assert_int_equal(tcp_write(h->ns, h->app.conn, big, sizeof(big)),
			sizeof(big));
	tcp_output(h->ns, h->app.conn);
	net_flush(h->ns);
	while (th_next(h, &o))
		n += o.t.len > 0;
	assert_int_equal(n, 8);
	assert_int_equal(tcp_sb_count(h->app.conn), 8);
	th_free(h);
}

static void
test_paws_drops_old_timestamp(void **state)
{
	struct th *h = th_new(NULL);
	uint32_t iss = establish_all_options(h);
	struct th_seg s = seg(IRS + 1, iss + 1, TCP_ACK | TCP_PSH, 512);
	struct th_out o;

	(void)state;
	s.data = "abc";
	s.len = 3;
	th_opt_ts(&s, 200, 0);
	th_inject(h, &s);
	assert_int_equal(h->app.got_len, 3);
	/* same bytes numbered further on, but an older TSval: a wrapped
	 * old duplicate; dropped and answered with an ACK */
	s = seg(IRS + 4, iss + 1, TCP_ACK | TCP_PSH, 512);
	s.data = "def";
	s.len = 3;
	th_opt_ts(&s, 150, 0);
	th_inject(h, &s);
	assert_int_equal(h->app.got_len, 3);
	assert_int_equal(h->stats.tcp.paws_drops, 1);
	assert_true(th_next(h, &o));
	assert_int_equal(o.t.ack, IRS + 4);
	assert_int_equal(o.t.opt.ts_ecr, 200);	/* ts_recent kept */
	th_free(h);
}

static void
test_out_of_order_queued_and_sacked(void **state)
{
	struct th *h = th_new(NULL);
	uint32_t iss = establish_all_options(h);
	struct th_seg s;
	struct th_out o;

	(void)state;
	th_set_rcv_space(h, 1 << 20);
	th_drain(h);		/* the window update it announced */
	/* bytes 1000..1999 and 3000..3999 arrive before 0..999 */
	s = seg(IRS + 1 + 1000, iss + 1, TCP_ACK, 512);
	s.data = h->app.got + 500000;	/* any bytes */
	s.len = 1000;
	th_inject(h, &s);
	assert_true(th_next(h, &o));	/* immediate dup ACK with SACK */
	assert_int_equal(o.t.ack, IRS + 1);
	assert_int_equal(o.t.opt.nsack, 1);
	assert_int_equal(o.t.opt.sack[0][0], IRS + 1001);
	assert_int_equal(o.t.opt.sack[0][1], IRS + 2001);
	s.seq = IRS + 1 + 3000;
	th_inject(h, &s);
	assert_true(th_next(h, &o));
	assert_int_equal(o.t.opt.nsack, 2);
	assert_int_equal(o.t.opt.sack[0][0], IRS + 3001);	/* newest first */
	assert_int_equal(o.t.opt.sack[1][0], IRS + 1001);
	assert_int_equal(h->app.got_len, 0);
	/* the hole fills: everything up to 2000 is delivered at once */
	s.seq = IRS + 1;
	th_inject(h, &s);
	assert_int_equal(h->app.got_len, 2000);
	assert_true(th_next(h, &o));
	assert_int_equal(o.t.ack, IRS + 2001);
	assert_int_equal(o.t.opt.nsack, 1);
	assert_int_equal(o.t.opt.sack[0][0], IRS + 3001);
	assert_int_equal(h->stats.tcp.ooo_segs, 2);
	th_free(h);		/* the queued segment's mbuf is freed too */
}

/* A connection's rings are held only while it has something in them:
 * none once established; the send side's taken by a write and given back
 * once the peer acknowledged everything; the receive queue's taken by a
 * segment out of order and given back once the hole filled. With
 * bufs_keep 1, the first connection to empty its send rings keeps them
 * while it is alone in holding some, a second gives its back. */
static void
test_rings_held_while_in_use(void **state)
{
	struct tcp_config cfg;
	struct tcp_conn *first;
	struct th_seg s;
	struct th *h;
	uint32_t iss, iss2;

	(void)state;
	tcp_config_defaults(&cfg);
	cfg.bufs_keep = 0;
	h = th_new(&cfg);
	iss = th_handshake(h, PORT, IRS, NULL, 0, 65535);
	assert_null(h->app.conn->sb);
	assert_int_equal(h->stats.tcp_bufs_used, 0);
	assert_int_equal(tcp_write(h->ns, h->app.conn, "hello", 5), 5);
	assert_non_null(h->app.conn->sb);
	assert_int_equal(h->stats.tcp_bufs_used, 1);
	tcp_output(h->ns, h->app.conn);
	net_flush(h->ns);
	th_drain(h);
	/* data out of order, and the ACK of ours: the receive queue's
	 * ring is taken, the send rings go back */
	s = seg(IRS + 1 + 10, iss + 6, TCP_ACK, 65535);
	s.data = "world";
	s.len = 5;
	th_inject(h, &s);
	assert_int_equal(h->app.conn->rcvq.n, 1);
	assert_non_null(h->app.conn->rcvq.blk);
	assert_null(h->app.conn->sb);
	/* the hole fills: all delivered, all acknowledged, none held */
	s = seg(IRS + 1, iss + 6, TCP_ACK, 65535);
	s.data = "0123456789";
	s.len = 10;
	th_inject(h, &s);
	assert_int_equal(h->app.got_len, 15);
	assert_null(h->app.conn->sb);
	assert_null(h->app.conn->rcvq.blk);
	assert_int_equal(h->stats.tcp_bufs_used, 0);
	assert_true(h->stats.tcp_bufs_made >= 1);
	th_drain(h);
	th_free(h);

	cfg.bufs_keep = 1;
	h = th_new(&cfg);
	iss = th_handshake(h, PORT, IRS, NULL, 0, 65535);
	first = h->app.conn;
	assert_int_equal(tcp_write(h->ns, first, "a", 1), 1);
	tcp_output(h->ns, first);
	s = seg(IRS + 1, iss + 2, TCP_ACK, 65535);
	th_inject(h, &s);
	assert_non_null(first->sb);	/* kept: one holder */
	net_flush(h->ns);
	th_drain(h);
	h->app.accepted = 0;
	iss2 = th_handshake(h, PORT + 1, IRS, NULL, 0, 65535);
	assert_int_equal(tcp_write(h->ns, h->app.conn, "b", 1), 1);
	tcp_output(h->ns, h->app.conn);
	assert_int_equal(h->stats.tcp_bufs_used, 2);
	s = seg(IRS + 1, iss2 + 2, TCP_ACK, 65535);
	s.sport = PORT + 1;
	th_inject(h, &s);
	assert_null(h->app.conn->sb);	/* past bufs_keep: given back */
	assert_int_equal(h->stats.tcp_bufs_used, 1);
	th_drain(h);
	th_free(h);
}

/* Data from the peer's port sport at seq, acknowledging ack. */
static void
inject_data(struct th *h, uint16_t sport, uint32_t seq, uint32_t ack,
		const char *data)
{
	struct th_seg s = seg(seq, ack, TCP_ACK, 65535);

	s.sport = sport;
	s.data = data;
	s.len = (uint16_t)strlen(data);
	th_inject(h, &s);
}

/* The receive queues' rings are made as connections need them, none at
 * start, up to rcvq_max: past that a segment out of order is dropped
 * (the peer sends it again) until a ring is given back. */
static void
test_rcvq_rings_made_as_needed(void **state)
{
	struct tcp_config cfg;
	struct tcp_conn *first, *second;
	struct th *h;
	uint32_t iss, iss2;

	(void)state;
	tcp_config_defaults(&cfg);
	cfg.rcvq_max = 1;
	h = th_new(&cfg);
	iss = th_handshake(h, PORT, IRS, NULL, 0, 65535);
	first = h->app.conn;
	assert_int_equal(h->ns->rcvq_blks.made, 0);
	inject_data(h, PORT, IRS + 1 + 10, iss + 1, "world");
	assert_int_equal(first->rcvq.n, 1);
	assert_int_equal(h->ns->rcvq_blks.made, 1);
	th_drain(h);
	h->app.accepted = 0;
	iss2 = th_handshake(h, PORT + 1, IRS, NULL, 0, 65535);
	second = h->app.conn;
	inject_data(h, PORT + 1, IRS + 1 + 10, iss2 + 1, "world");
	assert_int_equal(second->rcvq.n, 0);
	assert_null(second->rcvq.blk);
	assert_int_equal(h->stats.tcp.rcvq_exhausted, 1);
	assert_int_equal(h->ns->rcvq_blks.made, 1);
	/* the first's hole fills, its ring goes back, the second's
	 * segment is kept in it */
	inject_data(h, PORT, IRS + 1, iss + 1, "0123456789");
	assert_null(first->rcvq.blk);
	inject_data(h, PORT + 1, IRS + 1 + 10, iss2 + 1, "world");
	assert_int_equal(second->rcvq.n, 1);
	assert_int_equal(h->ns->rcvq_blks.made, 1);
	th_drain(h);
	th_free(h);
}

static void
test_ooo_overlaps_and_duplicates(void **state)
{
	struct th *h = th_new(NULL);
	uint32_t iss = th_handshake(h, PORT, IRS, NULL, 0, 65535);
	const char *text = "0123456789abcdefghijklmnopqrstuvwxyz";
	struct th_seg s = seg(0, iss + 1, TCP_ACK, 65535);

	(void)state;
	/* pieces in a bad order, overlapping, some twice */
	static const struct { int from, len; } pieces[] = {
		{ 10, 10 }, { 15, 10 }, { 30, 6 }, { 10, 10 }, { 5, 30 },
		{ 20, 3 }, { 0, 7 },
	};
	unsigned int i;

	for (i = 0; i < sizeof(pieces) / sizeof(pieces[0]); i++) {
		s.seq = IRS + 1 + (uint32_t)pieces[i].from;
		s.data = text + pieces[i].from;
		s.len = (uint16_t)pieces[i].len;
		th_inject(h, &s);
	}
	assert_int_equal(h->app.got_len, 36);
	assert_memory_equal(h->app.got, text, 36);
	th_free(h);
}

/* Sends 10 segments of 1000 bytes; returns their sequence numbers. */
static void
send_ten(struct th *h, uint32_t *seqs)
{
	static char buf[10000];
	struct th_out o;
	int i;

	memset(buf, 'y', sizeof(buf));
	assert_int_equal(tcp_write(h->ns, h->app.conn, buf, 10000), 10000);
	tcp_output(h->ns, h->app.conn);
	net_flush(h->ns);
	for (i = 0; i < 10; i++) {
		assert_true(th_next(h, &o));
		assert_int_equal(o.t.len, 1000);
		seqs[i] = o.t.seq;
	}
	assert_int_equal(th_pending(h), 0);
}

static void
test_newreno_fast_retransmit(void **state)
{
	struct th *h = th_new(NULL);
	uint8_t mss[4] = { 2, 4, 0x03, 0xe8 };	/* 1000 */
	uint32_t iss = th_handshake(h, PORT, IRS, mss, 4, 65535);
	uint32_t seqs[10];
	struct th_seg s;
	struct th_out o;
	int i;

	(void)state;
	send_ten(h, seqs);
	/* segment 2 is lost: the peer ACKs segment 1 once, then dups */
	s = seg(IRS + 1, seqs[1], TCP_ACK, 65535);
	th_inject(h, &s);
	for (i = 0; i < 3; i++)
		th_inject(h, &s);
	assert_true(th_next(h, &o));		/* fast retransmit, no RTO */
	assert_int_equal(o.t.seq, seqs[1]);
	assert_int_equal(o.t.len, 1000);
	assert_int_equal(h->stats.tcp.fast_retransmits, 1);
	assert_int_equal(h->stats.tcp.newreno_recoveries, 1);
	assert_int_equal(h->stats.tcp.timeouts, 0);
	/* partial ACK up to segment 5 (5 also lost): resent at once */
	th_drain(h);
	s.ack = seqs[4];
	th_inject(h, &s);
	assert_true(th_next(h, &o));
	assert_int_equal(o.t.seq, seqs[4]);
	/* full ACK ends recovery */
	th_drain(h);
	s.ack = iss + 1 + 10000;
	th_inject(h, &s);
	assert_false(h->app.conn->flags & TCP_F_RECOVERY);
	assert_true(h->app.conn->cwnd <= h->app.conn->ssthresh);
	th_free(h);
}

static void
test_sack_recovery_resends_only_holes(void **state)
{
	struct th *h = th_new(NULL);
	uint8_t opts[8] = { 2, 4, 0x03, 0xe8, 1, 1, 4, 2 };	/* MSS 1000, SACK */
	uint32_t iss = th_handshake(h, PORT, IRS, opts, 8, 65535);
	uint32_t seqs[10], blocks[2][2];
	struct th_seg s;
	struct th_out o;
	int resent = 0;

	(void)state;
	assert_true(h->app.conn->flags & TCP_F_OPT_SACK);
	send_ten(h, seqs);
	/* segments 3 and 6 lost (indexes 2 and 5); the rest SACKed */
	blocks[0][0] = seqs[3];
	blocks[0][1] = seqs[5];
	blocks[1][0] = seqs[6];
	blocks[1][1] = iss + 1 + 10000;
	s = seg(IRS + 1, seqs[2], TCP_ACK, 65535);
	th_opt_sack(&s, (const uint32_t (*)[2])blocks, 2);
	th_inject(h, &s);
	th_inject(h, &s);
	th_inject(h, &s);
	while (th_next(h, &o)) {
		assert_true(o.t.seq == seqs[2] || o.t.seq == seqs[5]);
		resent++;
	}
	assert_int_equal(resent, 2);		/* both holes, nothing else */
	assert_int_equal(h->stats.tcp.sack_recoveries, 1);
	assert_int_equal(h->stats.tcp.timeouts, 0);
	s = seg(IRS + 1, iss + 1 + 10000, TCP_ACK, 65535);
	th_inject(h, &s);
	assert_false(h->app.conn->flags & TCP_F_RECOVERY);
	assert_int_equal(h->app.conn->sacked_bytes, 0);
	assert_int_equal(tcp_sb_count(h->app.conn), 0);
	th_free(h);
}

static void
test_delayed_ack_every_second_segment(void **state)
{
	struct th *h = th_new(NULL);
	uint32_t iss = th_handshake(h, PORT, IRS, NULL, 0, 65535);
	static char data[1460];
	struct th_seg s = seg(IRS + 1, iss + 1, TCP_ACK, 65535);
	struct th_out o;

	(void)state;
	th_set_rcv_space(h, 1 << 20);
	h->app.conn->quick_acks = 0;	/* past the start (test_tcp_edges) */
	s.data = data;
	s.len = 536;		/* the default MSS: full-sized */
	th_inject(h, &s);
	assert_int_equal(th_pending(h), 0);	/* first one waits */
	s.seq += 536;
	th_inject(h, &s);
	assert_true(th_next(h, &o));		/* second: ACK now */
	assert_int_equal(o.t.ack, IRS + 1 + 1072);
	s.seq += 536;
	th_inject(h, &s);
	assert_int_equal(th_pending(h), 0);
	th_advance(h, 39);
	assert_int_equal(th_pending(h), 0);
	th_advance(h, 2);
	assert_true(th_next(h, &o));		/* the timer: 40 ms */
	assert_int_equal(o.t.ack, IRS + 1 + 1608);
	th_free(h);
}

static void
test_syn_cookies_when_backlog_full(void **state)
{
	struct tcp_config cfg;
	struct th *h;
	struct th_seg s;
	struct th_out o;
	uint32_t cookie;

	(void)state;
	tcp_config_defaults(&cfg);
	cfg.syn_backlog = 2;
	h = th_new(&cfg);
	/* two half-open connections fill the backlog */
	s = seg(1, 0, TCP_SYN, 65535);
	s.sport = 50001;
	th_inject(h, &s);
	s.sport = 50002;
	th_inject(h, &s);
	assert_int_equal(h->stats.tcp_syn_recv, 2);
	th_drain(h);
	/* the third gets a cookie and no state */
	s = seg(IRS, 0, TCP_SYN, 65535);
	th_opt_mss(&s, 1400);
	th_opt_wscale(&s, 7);
	th_inject(h, &s);
	assert_true(th_next(h, &o));
	assert_int_equal(o.t.flags, TCP_SYN | TCP_ACK);
	assert_false(o.t.opt.has_wscale);	/* not kept: not offered */
	cookie = o.t.seq;
	assert_int_equal(h->stats.tcp_conns_open, 2);
	assert_int_equal(h->stats.tcp.syncookies_sent, 1);
	/* a forged ACK fails */
	s = seg(IRS + 1, cookie + 2, TCP_ACK, 65535);
	th_inject(h, &s);
	assert_int_equal(h->stats.tcp.syncookies_failed, 1);
	assert_true(th_next(h, &o));
	assert_int_equal(o.t.flags, TCP_RST);
	/* the real one, with a request: established from the cookie */
	s = seg(IRS + 1, cookie + 1, TCP_ACK | TCP_PSH, 65535);
	s.data = "hi";
	s.len = 2;
	th_inject(h, &s);
	assert_int_equal(h->stats.tcp.syncookies_valid, 1);
	assert_int_equal(h->app.accepted, 1);
	assert_int_equal(h->app.got_len, 2);
	assert_int_equal(h->app.conn->mss, 1400);	/* table value <= 1400 */
	assert_int_equal(h->app.conn->state, TCP_ESTABLISHED);
	/* cookies expire: two periods (2 x 65.5 s) later the same is refused */
	h->app.conn = NULL;
	th_drain(h);
	th_advance(h, 140000);
	s = seg(IRS + 1, cookie + 1, TCP_ACK, 65535);
	s.sport = PORT + 1;		/* another flow, same cookie: invalid */
	th_inject(h, &s);
	assert_int_equal(h->stats.tcp.syncookies_failed, 2);
	th_free(h);
}

static void
test_keepalive_probes_then_abort(void **state)
{
	struct tcp_config cfg;
	struct th *h;
	struct th_out o;
	int probes = 0;
	bool rst = false;

	(void)state;
	tcp_config_defaults(&cfg);
	cfg.keepalive_ms = 1000;
	cfg.keepalive_intvl_ms = 200;
	cfg.keepalive_probes = 3;
	h = th_new(&cfg);
	th_handshake(h, PORT, IRS, NULL, 0, 65535);
	th_advance(h, 999);
	assert_int_equal(th_pending(h), 0);
	th_advance(h, 2000);
	while (th_next(h, &o)) {
		if (o.t.flags & TCP_RST)
			rst = true;
		else
			probes++;
	}
	assert_int_equal(probes, 3);
	assert_true(rst);
	assert_int_equal(h->stats.tcp.keepalive_timeouts, 1);
	assert_int_equal(h->app.closed, 1);
	th_free(h);
}

static void
test_keepalive_answered_keeps_connection(void **state)
{
	struct tcp_config cfg;
	struct th *h;
	uint32_t iss;
	struct th_out o;
	int i;

	(void)state;
	tcp_config_defaults(&cfg);
	cfg.keepalive_ms = 1000;
	cfg.keepalive_intvl_ms = 200;
	cfg.keepalive_probes = 2;
	h = th_new(&cfg);
	iss = th_handshake(h, PORT, IRS, NULL, 0, 65535);
	for (i = 0; i < 5; i++) {
		struct th_seg s = seg(IRS + 1, iss + 1, TCP_ACK, 65535);

		th_advance(h, 1001);
		assert_true(th_next(h, &o));
		assert_int_equal(o.t.seq, iss);	/* snd_una - 1 */
		th_inject(h, &s);		/* the peer answers */
	}
	assert_int_equal(h->app.closed, 0);
	assert_int_equal(h->stats.tcp.keepalive_timeouts, 0);
	th_free(h);
}

static void
test_time_wait_is_bounded(void **state)
{
	struct tcp_config cfg;
	struct th_out o;
	struct th *h;
	int i;

	(void)state;
	tcp_config_defaults(&cfg);
	cfg.max_time_wait = 3;
	h = th_new(&cfg);
	h->app.close_on_fin = false;
	for (i = 0; i < 5; i++) {
		uint16_t port = (uint16_t)(42000 + i);
		uint32_t iss;
		struct th_seg s;

		h->app.accepted = 0;
		iss = th_handshake(h, port, IRS, NULL, 0, 65535);
		tcp_close(h->ns, h->app.conn);
		net_flush(h->ns);
		th_drain(h);	/* our FIN */
		s = seg(IRS + 1, iss + 2, TCP_ACK | TCP_FIN, 65535);
		s.sport = port;
		th_inject(h, &s);
		/* The peer's FIN is acknowledged, TIME-WAIT kept or not. */
		net_flush(h->ns);
		assert_true(th_next(h, &o));
		assert_int_equal(o.t.flags, TCP_ACK);
		assert_int_equal(o.t.ack, IRS + 2);
		assert_int_equal(o.t.dport, port);
		th_drain(h);
	}
	assert_int_equal(h->stats.tcp_time_wait, 3);
	assert_int_equal(h->stats.tcp.time_wait_overflow, 2);
	assert_int_equal(h->stats.tcp_conns_open, 3);
	th_free(h);
}

static void
test_active_open(void **state)
{
	struct th *h = th_new(NULL);
	static const uint8_t mac[6] = { 2, 0, 0, 0, 0, 1 };
	struct tcp_conn *c;
	struct th_seg s;
	struct th_out o;

	(void)state;
	struct net_addr peer = th_peer(h);

	c = tcp_connect_addr(h->ns, &peer, PORT, 33000, mac);
	assert_non_null(c);
	net_flush(h->ns);
	assert_true(th_next(h, &o));
	assert_int_equal(o.t.flags, TCP_SYN);
	assert_true(o.t.opt.sack_ok && o.t.opt.has_ts && o.t.opt.has_wscale);
	assert_int_equal(o.t.dport, PORT);
	/* SYN-ACK from the peer (the harness injects towards port 80, so
	 * answer on the connection's own ports by hand) */
	s = seg(IRS, o.t.seq + 1, TCP_SYN | TCP_ACK, 65535);
	s.sport = PORT;
	th_opt_mss(&s, 1200);
	/* the harness always targets port 80: use a connection to 80 */
	tcp_abort(h->ns, c);
	th_drain(h);
	c = tcp_connect_addr(h->ns, &peer, PORT, TH_PORT, mac);
	assert_non_null(c);
	net_flush(h->ns);
	assert_true(th_next(h, &o));
	s.ack = o.t.seq + 1;
	th_inject(h, &s);
	assert_int_equal(c->state, TCP_ESTABLISHED);
	assert_int_equal(c->mss, 1200);
	assert_int_equal(h->app.accepted, 1);
	assert_true(th_next(h, &o));
	assert_int_equal(o.t.flags, TCP_ACK);
	assert_int_equal(o.t.ack, IRS + 1);
	assert_int_equal(h->stats.tcp.active_opens, 2);
	th_free(h);
}

/* The RSS verification suite's IPv4/TCP vector (Microsoft's "Verifying
 * the RSS hash calculation"): 66.9.149.187:2794 -> 161.142.100.80:1766
 * hashes to 0x51ccc178 under the default key. */
static const uint8_t rss_key[40] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d,
	0x43, 0xa3, 0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4,
	0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b,
	0xbe, 0xac, 0x01, 0xfa,
};

/* The default key, and a table whose queue is the hash's low bits. */
static void
rss_identity(struct net_rss *rss)
{
	uint32_t i;

	memcpy(rss->key, rss_key, sizeof(rss_key));
	rss->key_len = sizeof(rss_key);
	rss->reta_size = 512;
	for (i = 0; i < 512; i++)
		rss->reta[i] = (uint16_t)i;
}

static void
test_rss_queue_matches_toeplitz(void **state)
{
	static struct net_rss rss;

	(void)state;
	rss_identity(&rss);
	assert_int_equal(net_rss_queue(&rss, RTE_BE32(0x420995bb),
			RTE_BE32(0xa18e6450), 2794, 1766), 0x51ccc178 & 511);
	rss.reta_size = 0;
	assert_int_equal(net_rss_queue(&rss, RTE_BE32(0x420995bb),
			RTE_BE32(0xa18e6450), 2794, 1766), 0);
}

/* The suite's IPv6/TCP vectors: source first, as a received segment. */
static void
test_rss_queue6_matches_toeplitz(void **state)
{
	static const struct {
		uint8_t src[16], dst[16];
		uint16_t sport, dport;
		uint32_t hash;
	} v[] = {
		{ { 0x3f, 0xfe, 0x25, 0x01, 0x02, 0x00, 0x1f, 0xff, [15] = 7 },
		  { 0x3f, 0xfe, 0x25, 0x01, 0x02, 0x00, 0x00, 0x03, [15] = 1 },
		  2794, 1766, 0x40207d3d },
		{ { 0x3f, 0xfe, 0x05, 0x01, 0x00, 0x08, 0, 0, 0x02, 0x60, 0x97,
		    0xff, 0xfe, 0x40, 0xef, 0xab },
		  { 0xff, 0x02, [15] = 1 }, 14230, 4739, 0xdde51bbf },
		{ { 0x3f, 0xfe, 0x19, 0x00, 0x45, 0x45, 0x00, 0x03, 0x02, 0x00,
		    0xf8, 0xff, 0xfe, 0x21, 0x67, 0xcf },
		  { 0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x00, 0xf8, 0xff, 0xfe,
		    0x21, 0x67, 0xcf }, 44251, 38024, 0x02d1feef },
	};
	static struct net_rss rss;
	uint32_t i;

	(void)state;
	rss_identity(&rss);
	for (i = 0; i < RTE_DIM(v); i++)
		assert_int_equal(net_rss_queue6(&rss, v[i].src, v[i].dst,
				v[i].sport, v[i].dport), v[i].hash & 511);
}

struct open_app {
	int accepted, closed;
};

static int
open_accepted(void *ctx, struct tcp_conn *c)
{
	(void)c;
	((struct open_app *)ctx)->accepted++;
	return 0;
}

static uint32_t
open_recv(void *ctx, struct tcp_conn *c, const uint8_t *d, uint32_t n)
{
	(void)ctx, (void)c, (void)d;
	return n;
}

static void
open_nothing(void *ctx, struct tcp_conn *c)
{
	(void)ctx, (void)c;
}

static void
open_closed(void *ctx, struct tcp_conn *c)
{
	(void)c;
	((struct open_app *)ctx)->closed++;
}

static const struct tcp_upcalls open_upcalls = {
	.accepted = open_accepted, .recv = open_recv, .sent = open_nothing,
	.peer_closed = open_nothing, .closed = open_closed,
};

/* tcp_open(): ARP first (one request, not repeated at once), then a local
 * port whose answers RSS gives this stack's queue; the connection's own
 * upcalls hear of the handshake and of its failure. */
static void
test_open_resolves_and_picks_rss_port(void **state)
{
	static struct net_rss rss;
	static const uint8_t mac[6] = { 2, 0, 0, 0, 0, 1 };
	struct th *h = th_new(NULL);
	struct net_addr peer = th_peer(h), far = peer;
	union net_ip local = th_local(h, 0);
	struct open_app app = { 0, 0 };
	struct tcp_conn *c;
	struct th_out o;
	int err, i;

	(void)state;
	far.ip.v6[0] ^= 0x10;	/* 214.18.0.1 or 3001:2::1: on no link */
	assert_null(tcp_open_addr(h->ns, &far, 80, &open_upcalls, &app, &err));
	assert_int_equal(err, -ENETUNREACH);
	assert_null(tcp_open_addr(h->ns, &peer, 80, &open_upcalls, &app, &err));
	assert_int_equal(err, -EAGAIN);
	assert_null(tcp_open_addr(h->ns, &peer, 80, &open_upcalls, &app, &err));
	net_flush(h->ns);
	assert_int_equal(h->n_out, 1);		/* one request only */
	assert_true(th_is_solicitation(h, rte_pktmbuf_mtod(h->out[0],
			const uint8_t *), 0, &peer));
	th_drain(h);
	th_learn(h, 0, &peer, mac);

	memcpy(rss.key, rss_key, sizeof(rss_key));
	rss.key_len = sizeof(rss_key);
	rss.reta_size = 4;
	for (i = 0; i < 4; i++)
		rss.reta[i] = (uint16_t)(i & 1);
	net_stack_set_rss(h->ns, 0, &rss, 1);
	for (i = 0; i < 600; i++) {	/* ports run through 9 bits at least */
		c = tcp_open_addr(h->ns, &peer, 80, &open_upcalls, &app, &err);
		assert_non_null(c);
		assert_int_equal(h->family == NET_AF_INET6 ?
				net_rss_queue6(&rss, peer.ip.v6, local.v6, 80,
				c->lport) : net_rss_queue(&rss, peer.ip.v4,
				local.v4, 80, c->lport), 1);
		assert_true(c->lport >= 32768 && c->lport <= 60999);
		tcp_abort(h->ns, c);
	}
	assert_true(h->stats.tcp.rss_port_misses > 0);
	assert_int_equal(app.closed, 0);	/* never handed over */
	net_flush(h->ns);
	th_drain(h);

	/* The end of an attempt reaches the connection's own upcalls. */
	c = tcp_open_addr(h->ns, &peer, PORT, &open_upcalls, &app, &err);
	assert_non_null(c);
	tcp_set_app(c, &app);
	net_flush(h->ns);
	assert_true(th_next(h, &o));
	assert_int_equal(o.t.flags, TCP_SYN);
	assert_int_equal(o.t.dport, PORT);
	tcp_abort(h->ns, c);
	assert_int_equal(app.closed, 1);
	assert_int_equal(h->app.closed, 0);	/* not the stack's upcalls */
	th_free(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rss_queue_matches_toeplitz),
		cmocka_unit_test(test_rss_queue6_matches_toeplitz),
		cmocka_unit_test(test_open_resolves_and_picks_rss_port),
		cmocka_unit_test(test_syn_ack_echoes_options),
		cmocka_unit_test(test_scoreboard_size_bounds_flight),
		cmocka_unit_test(test_long_send_queue),
		cmocka_unit_test(test_no_options_offered_none_used),
		cmocka_unit_test(test_window_scaling_both_ways),
		cmocka_unit_test(test_paws_drops_old_timestamp),
		cmocka_unit_test(test_out_of_order_queued_and_sacked),
		cmocka_unit_test(test_rings_held_while_in_use),
		cmocka_unit_test(test_rcvq_rings_made_as_needed),
		cmocka_unit_test(test_ooo_overlaps_and_duplicates),
		cmocka_unit_test(test_newreno_fast_retransmit),
		cmocka_unit_test(test_sack_recovery_resends_only_holes),
		cmocka_unit_test(test_delayed_ack_every_second_segment),
		cmocka_unit_test(test_syn_cookies_when_backlog_full),
		cmocka_unit_test(test_keepalive_probes_then_abort),
		cmocka_unit_test(test_keepalive_answered_keeps_connection),
		cmocka_unit_test(test_time_wait_is_bounded),
		cmocka_unit_test(test_active_open),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
