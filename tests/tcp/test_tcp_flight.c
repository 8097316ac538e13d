/* SPDX-License-Identifier: BSD-3-Clause */
/* Large flights: the scoreboard without a fixed size. 8 MB in flight with
 * scattered losses (SACK, RACK, retransmissions of exactly the holes, the
 * entries given back), SACK blocks that cut segments, and the shard's
 * pool of entries running out. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <rte_mbuf.h>

#include "tcp_harness.h"

/* Flights and send queues of megabytes. */
unsigned int th_pool_mbufs = 16383;

#define IRS 7000000u
#define PORT 42000
#define FLIGHT 8000000u		/* bytes: the goal's 8 MB */
#define MAX_SEGS 8192
#define RTT_MS 50

static uint8_t data[FLIGHT];

static struct th_seg
seg(uint32_t seq, uint32_t ack, uint8_t flags)
{
	struct th_seg s = { .sport = PORT, .seq = seq, .ack = ack,
		.flags = flags, .win = 65535 };	/* << 7: 8 MiB */

	return s;
}

/* MSS 1460, window scale 7, SACK and timestamps, over a path of 50 ms
 * (the handshake's RTT sets the timers); returns our ISS. */
static uint32_t
establish(struct th *h)
{
	struct th_seg s = seg(IRS, 0, TCP_SYN);
	struct th_out o;

	th_opt_mss(&s, 1460);
	th_opt_sack_ok(&s);
	th_opt_ts(&s, 100, 0);
	th_opt_wscale(&s, 7);
	th_inject(h, &s);
	assert_true(th_next(h, &o));
	assert_int_equal(o.t.flags, TCP_SYN | TCP_ACK);
	th_advance(h, RTT_MS);
	s = seg(IRS + 1, o.t.seq + 1, TCP_ACK);
	th_opt_ts(&s, 101, o.t.opt.ts_val);
	th_inject(h, &s);
	assert_int_equal(h->app.accepted, 1);
	return o.t.seq;
}

/* The peer's ACK, with up to three SACK blocks. */
static void
ack(struct th *h, uint32_t to, const uint32_t (*b)[2], int n)
{
	static uint32_t tsval = 200;
	struct th_seg s = seg(IRS + 1, to, TCP_ACK);

	th_opt_ts(&s, tsval++, 0);
	if (n > 0)
		th_opt_sack(&s, b, n);
	th_inject(h, &s);
}

/* What a flight's segments were: their starts and lengths, in order. */
struct flight {
	uint32_t seq[MAX_SEGS];
	uint32_t len[MAX_SEGS];
	uint32_t n;
};

/* Reads what went out: new segments recorded, each byte-exact; returns
 * how many were retransmissions, and their starts in resent[]. */
static uint32_t
read_out(struct th *h, uint32_t iss, struct flight *f, uint32_t *resent)
{
	uint32_t again = 0;
	struct th_out o;

	while (th_next(h, &o)) {
		if (o.t.len == 0)
			continue;
		assert_memory_equal(o.payload, data + (o.t.seq - iss - 1),
				o.t.len);
		if (f->n > 0 && SEQ_LT(o.t.seq, f->seq[f->n - 1] +
				f->len[f->n - 1])) {
			resent[again++] = o.t.seq;
			continue;
		}
		assert_true(f->n < MAX_SEGS);
		f->seq[f->n] = o.t.seq;
		f->len[f->n++] = o.t.len;
	}
	return again;
}

static struct th *
sender(const struct tcp_config *cfg, uint32_t *iss)
{
	uint32_t i;
	struct th *h;

	for (i = 0; i < FLIGHT; i++)
		data[i] = (uint8_t)(i * 13 + i / 7919);
	h = th_new(cfg);
	*iss = establish(h);
	return h;
}

/* All FLIGHT bytes written at once; f, for what goes out, cleared. */
static struct th *
bulk_sender(uint32_t sb_nodes, struct flight *f, uint32_t *iss)
{
	struct tcp_config cfg;
	struct th *h;

	memset(f, 0, sizeof(*f));
	tcp_config_defaults(&cfg);
	cfg.snd_buf = FLIGHT;
	cfg.sb_nodes = sb_nodes;
	h = sender(&cfg, iss);
	assert_int_equal(tcp_write(h->ns, h->app.conn, data, FLIGHT), FLIGHT);
	return h;
}

/* n segments out (the congestion window lets exactly them go), recorded
 * in f. */
static void
send_segments(struct th *h, uint32_t iss, uint32_t n, struct flight *f)
{
	static uint32_t resent[MAX_SEGS];
	struct tcp_conn *c = h->app.conn;

	c->cwnd = n * tcp_seg_max(c, TCP_TS_LEN);
	tcp_output(h->ns, c);
	net_flush(h->ns);
	assert_int_equal(read_out(h, iss, f, resent), 0);
	assert_int_equal(f->n, n);
}

/* A bulk sender with its first n segments out, recorded in f. */
static struct th *
opened_flight(uint32_t n, struct flight *f, uint32_t *iss)
{
	struct th *h = bulk_sender(0, f, iss);

	send_segments(h, *iss, n, f);
	return h;
}

enum tso { NO_TSO, TSO, TSO_L2_IN_MTU };

/* 8 MB in flight: thousands of entries, no ring's bound. Every 97th
 * segment is lost; the peer SACKs the rest as they arrive (its three
 * most recent blocks, as a receiver does); RACK finds the holes, and
 * exactly they are resent. Then all is acknowledged and every entry
 * goes back to the shard's pool. With TSO, the new data leaves in frames
 * of many segments, an entry each, which the SACK blocks split at the
 * segments the device cut them into: the same holes, resent alone. */
static void
scattered_losses(enum tso tso)
{
	static struct flight f;
	static uint32_t resent[MAX_SEGS];
	struct tcp_conn *c;
	struct th *h;
	uint32_t iss, cw, i, una, holes = 0, again = 0, blocks[3][2], entries;
	int nb = 0;

	h = bulk_sender(0, &f, &iss);
	if (tso != NO_TSO)
		th_tso(h, tso == TSO_L2_IN_MTU);
	c = h->app.conn;
	/* The flight opened in steps: the harness captures 4096 frames.
	 * Each step must send more (a flight held at some size fails here,
	 * not at the test's timeout). */
	for (cw = 2u << 20; c->snd_max - c->snd_una < FLIGHT; cw += 2u << 20) {
		uint32_t before = c->snd_max;

		c->cwnd = cw;
		tcp_output(h->ns, c);
		net_flush(h->ns);
		assert_int_equal(read_out(h, iss, &f, resent), 0);
		assert_true(SEQ_GT(c->snd_max, before));
	}
	assert_int_equal(c->snd_max - c->snd_una, FLIGHT);
	assert_true(f.n > 5000);
	entries = tso == NO_TSO ? f.n : h->tso_frames;
	assert_int_equal(tcp_sb_count(c), entries);
	assert_int_equal(h->stats.tcp_sb_entries_used, entries);
	if (tso != NO_TSO) {
		/* Frames of many segments, each but the last whole. */
		uint16_t unit = (uint16_t)(tcp_seg_max(c, TCP_TS_LEN) -
				(tso == TSO_L2_IN_MTU ? 14 : 0));

		assert_int_equal(h->tso_segsz, unit);
		assert_true(h->tso_frames < f.n / 20);
		assert_int_equal(h->stats.tcp.tso_frames, h->tso_frames);
		for (i = 0; i + 1 < f.n; i++)
			assert_int_equal(f.len[i], unit);
	}
	th_advance(h, RTT_MS);
	una = f.seq[0];
	for (i = 0; i < f.n; i++) {
		uint32_t s = f.seq[i], e = s + f.len[i];

		if (i > 0 && i % 97 == 0) {
			holes++;
			continue;
		}
		c->cwnd = 1u << 20;	/* room: recovery's resends go */
		if (holes == 0) {
			una = e;	/* in order: cumulative */
		} else if (nb > 0 && blocks[0][1] == s) {
			blocks[0][1] = e;	/* the newest block grows */
		} else {
			memmove(blocks[1], blocks[0], sizeof(blocks[0]) * 2);
			blocks[0][0] = s;
			blocks[0][1] = e;
			nb = nb < 3 ? nb + 1 : 3;
		}
		ack(h, una, blocks, nb);
		again += read_out(h, iss, &f, resent + again);
	}
	/* RACK's reordering window passes (a quarter of the RTT), not a
	 * probe's timeout (two RTTs). */
	th_advance(h, RTT_MS / 2);
	ack(h, una, blocks, nb);
	again += read_out(h, iss, &f, resent + again);
	/* Exactly the holes, each once. */
	assert_int_equal(again, holes);
	for (i = 0; i < again; i++)
		assert_int_equal(resent[i], f.seq[97 * (i + 1)]);
	assert_int_equal(h->stats.tcp.retransmits, holes);
	assert_true(c->sacked_bytes > FLIGHT - (holes + 98) * f.len[0]);
	/* Everything acknowledged: every entry back. */
	ack(h, c->snd_max, NULL, 0);
	assert_int_equal(c->snd_una, iss + 1 + FLIGHT);
	assert_int_equal(tcp_sb_count(c), 0);
	assert_int_equal(h->stats.tcp_sb_entries_used, 0);
	assert_int_equal(c->sacked_bytes + c->lost_bytes + c->retrans_bytes, 0);
	th_free(h);
}

static void
test_flight_of_8_mb_with_scattered_losses(void **state)
{
	(void)state;
	scattered_losses(NO_TSO);
}

static void
test_tso_flight_of_8_mb_with_scattered_losses(void **state)
{
	(void)state;
	scattered_losses(TSO);
}

/* net_tap's TSO: segments 14 bytes short of a full one. */
static void
test_tso_short_segments_flight_with_scattered_losses(void **state)
{
	(void)state;
	scattered_losses(TSO_L2_IN_MTU);
}

/* What is queued goes, the windows open wide. */
static void
send_with_open_windows(struct th *h, struct tcp_conn *c)
{
	c->cwnd = 1u << 20;
	c->snd_wnd = 1u << 20;
	tcp_output(h->ns, c);
	net_flush(h->ns);
}

/* TSO: an answer and its FIN leave in frames of many segments that end
 * on whole segments; the FIN rides the last segment alone. */
static void
test_tso_frames_end_on_whole_segments_with_fin_last(void **state)
{
	const uint32_t n = 100000;
	struct tcp_conn *c;
	struct th_out o;
	struct th *h;
	uint32_t iss, fins = 0, bytes = 0, seg;
	uint64_t segs_before;

	(void)state;
	h = sender(NULL, &iss);
	th_tso(h, false);
	c = h->app.conn;
	seg = tcp_seg_max(c, TCP_TS_LEN);
	segs_before = h->stats.tcp.segs_out;
	assert_int_equal(tcp_write(h->ns, c, data, n), n);
	tcp_close(h->ns, c);
	send_with_open_windows(h, c);
	while (th_next(h, &o)) {
		assert_memory_equal(o.payload, data + (o.t.seq - iss - 1), o.t.len);
		assert_int_equal(o.t.seq, iss + 1 + bytes);
		bytes += o.t.len;
		if (o.t.flags & TCP_FIN) {
			fins++;
			assert_int_equal(bytes, n);
		} else {
			assert_int_equal(o.t.len, seg);
		}
	}
	assert_int_equal(fins, 1);
	assert_int_equal(bytes, n);
	/* Frames of up to 44 segments (fewer as pacing sizes bursts), an
	 * entry each; the counter counts segments, not frames. */
	assert_true(h->tso_frames >= 2 && h->tso_frames <= 10);
	assert_int_equal(h->stats.tcp.tso_frames, h->tso_frames);
	assert_int_equal(tcp_sb_count(c), h->tso_frames);
	assert_int_equal(h->tso_segsz, seg);
	assert_int_equal(h->stats.tcp.segs_out - segs_before, (n + seg - 1) / seg);
	th_free(h);
}

/* A device whose TSO cuts TCP over IPv4 only (net_tap's, DPDK's GSO
 * library): IPv6 answers go segment by segment, IPv4 ones in frames. */
static void
test_tso_over_ipv4_only_where_the_device_says(void **state)
{
	const uint32_t n = 100000;
	struct tcp_conn *c;
	struct th_out o;
	struct th *h;
	uint32_t iss, bytes = 0;

	(void)state;
	h = sender(NULL, &iss);
	th_tso(h, true);
	h->ifc.tso_ipv6 = false;
	c = h->app.conn;
	assert_int_equal(tcp_write(h->ns, c, data, n), n);
	send_with_open_windows(h, c);
	while (th_next(h, &o)) {
		assert_memory_equal(o.payload, data + (o.t.seq - iss - 1), o.t.len);
		bytes += o.t.len;
	}
	assert_int_equal(bytes, n);
	if (th_family() == NET_AF_INET6)
		assert_int_equal(h->tso_frames, 0);
	else
		assert_true(h->tso_frames > 0);
	th_free(h);
}

/* The pool empty when an answer is written: nothing goes, nothing is in
 * flight to time, yet the retransmission timer tries again and the
 * answer leaves once mbufs are back. */
static void
test_send_without_mbufs_is_tried_again(void **state)
{
	static struct rte_mbuf *held[16384];
	const uint32_t n = 5000;
	struct tcp_conn *c;
	struct th_out o;
	struct th *h;
	uint32_t iss, bytes = 0, k = 0;

	(void)state;
	h = sender(NULL, &iss);
	c = h->app.conn;
	assert_int_equal(tcp_write(h->ns, c, data, n), n);	/* queued */
	while (k < RTE_DIM(held) && (held[k] = rte_pktmbuf_alloc(h->ns->pool)) != NULL)
		k++;
	assert_true(k < RTE_DIM(held));
	tcp_output(h->ns, c);
	net_flush(h->ns);
	assert_int_equal(c->snd_max, iss + 1);
	assert_int_equal(th_pending(h), 0);
	while (k > 0)
		rte_pktmbuf_free(held[--k]);
	th_advance(h, 2000);
	while (th_next(h, &o)) {	/* the answer, and resent once unACKed */
		assert_memory_equal(o.payload, data + (o.t.seq - iss - 1), o.t.len);
		bytes = RTE_MAX(bytes, o.t.seq + o.t.len - iss - 1);
	}
	assert_int_equal(bytes, n);
	th_free(h);
}

/* SACK blocks whose edges cut segments: only whole segments are SACKed,
 * and however many such blocks come, the entries never outnumber the
 * segments sent. */
static void
test_sack_blocks_that_cut_segments_split_no_further(void **state)
{
	static struct flight f;
	static uint32_t resent[MAX_SEGS];
	struct tcp_conn *c;
	struct th *h;
	uint32_t iss, i, sacked;

	(void)state;
	h = opened_flight(100, &f, &iss);
	c = h->app.conn;
	th_advance(h, RTT_MS);
	/* A block inside one segment: nothing. */
	{
		const uint32_t b[1][2] = { { f.seq[10] + 1, f.seq[10] + 700 } };

		ack(h, f.seq[0], b, 1);
		assert_int_equal(c->sacked_bytes, 0);
		assert_int_equal(tcp_sb_count(c), 100);
	}
	/* Blocks from the middle of one segment to the middle of another,
	 * byte by byte further: the whole segments between, no more. */
	for (i = 0; i < 200; i++) {
		const uint32_t b[1][2] = { { f.seq[20] + 1 + i,
			f.seq[23] + 1 + i } };

		ack(h, f.seq[0], b, 1);
		read_out(h, iss, &f, resent);	/* what the SACKs let out */
		assert_int_equal(tcp_sb_count(c), f.n);
	}
	sacked = c->sacked_bytes;
	assert_int_equal(sacked, f.len[21] + f.len[22]);
	/* All acknowledged: only what that ACK let out is left. */
	i = f.n;
	ack(h, c->snd_max, NULL, 0);
	read_out(h, iss, &f, resent);
	assert_int_equal(tcp_sb_count(c), f.n - i);
	assert_int_equal(c->sacked_bytes, 0);
	th_free(h);
}

/* The shard's pool of entries runs out (tcp_config.sb_nodes): new data
 * waits, counted, and goes as ACKs give entries back; the transfer
 * completes byte-exact. */
static void
test_entries_run_out_new_data_waits(void **state)
{
	static struct flight f;
	static uint32_t resent[MAX_SEGS];
	struct tcp_conn *c;
	struct th *h;
	uint32_t iss;

	(void)state;
	h = bulk_sender(300, &f, &iss);
	c = h->app.conn;
	c->cwnd = 1u << 24;
	tcp_output(h->ns, c);
	net_flush(h->ns);
	assert_int_equal(read_out(h, iss, &f, resent), 0);
	assert_int_equal(tcp_sb_count(c), 300);
	assert_true(h->stats.tcp.sb_full_waits > 0);
	assert_true(h->ns->sb_nodes.made <= 300);
	th_advance(h, RTT_MS);
	while (c->snd_una != iss + 1 + FLIGHT) {
		c->cwnd = 1u << 24;
		ack(h, c->snd_max, NULL, 0);
		assert_int_equal(read_out(h, iss, &f, resent), 0);
		assert_true(tcp_sb_count(c) <= 300);
	}
	assert_int_equal(h->stats.tcp_sb_entries_used, 0);
	th_free(h);
}

/* An ACK that covers part of a segment delivers that part: the delivery
 * rate's count and RACK see it now, not when the rest comes, and RACK
 * sees that part alone: the rest, SACKed later, is no reordering (a TSO
 * frame is one entry, ACKed a few segments at a time). */
static void
test_partial_ack_delivers_its_part(void **state)
{
	static struct flight f;
	struct tcp_conn *c;
	struct th *h;
	uint32_t iss, before;

	(void)state;
	h = opened_flight(2, &f, &iss);
	c = h->app.conn;
	th_advance(h, RTT_MS);
	before = c->delivered;
	c->cwnd = 0;	/* nothing new: the entries stay as they are */
	ack(h, f.seq[0] + 700, NULL, 0);
	assert_int_equal(c->delivered - before, 700);
	assert_int_equal(tcp_sb_first(c)->start, f.seq[0] + 700);
	assert_int_equal(c->rack_end, f.seq[0] + 700);
	assert_int_equal(c->rack_fack, f.seq[0] + 700);
	ack(h, f.seq[1] + f.len[1], NULL, 0);
	assert_int_equal(c->delivered - before, f.len[0] + f.len[1]);
	th_free(h);
}

/* Lost marks taken back (an undo) after a resend from the middle of the
 * flight: RACK's list is in transmission order again, the resent entry
 * last, the others in their first order before it. */
static void
test_undo_puts_entries_back_in_send_order(void **state)
{
	static struct flight f;
	struct tcp_conn *c;
	struct tcp_seg *s;
	struct th *h;
	uint32_t iss, i;

	(void)state;
	h = opened_flight(20, &f, &iss);
	c = h->app.conn;
	tcp_seg_mark_all_lost(c);	/* as a timeout does */
	assert_null(tcp_sb_sent_first(c));
	assert_int_equal(tcp_send_range(h->ns, c, f.seq[15], f.len[15]),
			f.len[15]);
	tcp_seg_unmark_lost(c);		/* as an undo does */
	assert_null(tcp_sb_check(c));
	for (i = 0, s = tcp_sb_sent_first(c); s != NULL; s = s->sent_next, i++)
		assert_int_equal(s->start, f.seq[i < 15 ? i : i == 19 ? 15 :
				i + 1]);
	assert_int_equal(i, 20);
	th_free(h);
}

/* The largest flight a sender that writes what the send buffer takes
 * reaches in rounds of one RTT, each acknowledged whole (slow start):
 * the buffer starts at 64 KiB, its ceiling as given. */
static uint32_t
flight_with_send_buffer(uint32_t ceiling, uint32_t *sndbuf)
{
	static struct flight f;
	static uint32_t resent[MAX_SEGS];
	struct tcp_config cfg;
	struct tcp_conn *c;
	struct th *h;
	uint32_t iss, written = 0, most = 0, round, seg, end, to;

	memset(&f, 0, sizeof(f));
	tcp_config_defaults(&cfg);
	cfg.snd_buf = 64 * 1024;
	cfg.snd_buf_max = ceiling;
	h = sender(&cfg, &iss);
	c = h->app.conn;
	seg = tcp_seg_max(c, TCP_TS_LEN);
	for (round = 0; round < 10 && written < FLIGHT; round++) {
		written += tcp_write(h->ns, c, data + written, RTE_MIN(
				tcp_send_space(h->ns, c), FLIGHT - written));
		tcp_output(h->ns, c);
		net_flush(h->ns);
		read_out(h, iss, &f, resent);
		most = RTE_MAX(most, c->snd_max - c->snd_una);
		th_advance(h, RTT_MS);
		/* An ACK every two segments, as a receiver sends them. */
		for (end = c->snd_max, to = c->snd_una; to != end;) {
			to = SEQ_LT(to + 2 * seg, end) ? to + 2 * seg : end;
			ack(h, to, NULL, 0);
		}
		read_out(h, iss, &f, resent);
	}
	*sndbuf = tcp_sndbuf(h->ns, c);
	assert_true(*sndbuf <= RTE_MAX(ceiling, cfg.snd_buf));
	th_free(h);
	return most;
}

/* The send buffer follows twice the congestion window up to its
 * ceiling (send-buffer autotuning): a flight of megabytes where a fixed
 * buffer of 64 KiB holds it to 64 KiB. */
static void
test_send_buffer_follows_the_window(void **state)
{
	uint32_t fixed, tuned, buf_fixed, buf_tuned;

	(void)state;
	fixed = flight_with_send_buffer(64 * 1024, &buf_fixed);
	tuned = flight_with_send_buffer(4u << 20, &buf_tuned);
	assert_true(fixed <= 64 * 1024);
	assert_int_equal(buf_fixed, 64 * 1024);
	assert_true(tuned > 1u << 20);
	assert_true(buf_tuned > 2u << 20);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flight_of_8_mb_with_scattered_losses),
		cmocka_unit_test(test_tso_flight_of_8_mb_with_scattered_losses),
		cmocka_unit_test(test_tso_short_segments_flight_with_scattered_losses),
		cmocka_unit_test(test_tso_frames_end_on_whole_segments_with_fin_last),
		cmocka_unit_test(test_tso_over_ipv4_only_where_the_device_says),
		cmocka_unit_test(test_send_without_mbufs_is_tried_again),
		cmocka_unit_test(test_sack_blocks_that_cut_segments_split_no_further),
		cmocka_unit_test(test_entries_run_out_new_data_waits),
		cmocka_unit_test(test_partial_ack_delivers_its_part),
		cmocka_unit_test(test_undo_puts_entries_back_in_send_order),
		cmocka_unit_test(test_send_buffer_follows_the_window),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
