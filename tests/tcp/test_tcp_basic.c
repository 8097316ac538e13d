/* SPDX-License-Identifier: BSD-3-Clause */
/* Scripted TCP conversations: handshake, data, retransmission, closes,
 * TIME-WAIT, resets and challenge ACKs. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include <rte_mbuf.h>

#include "tcp_harness.h"

#define IRS 1000000u

static void
test_handshake_options(void **state)
{
	struct th *h = th_new(NULL);
	struct th_seg s = th_seg_from(IRS, 0, TCP_SYN);
	struct th_out o;

	(void)state;
	th_opt_mss(&s, 1000);
	th_inject(h, &s);
	assert_true(th_next(h, &o));
	assert_int_equal(o.t.flags, TCP_SYN | TCP_ACK);
	assert_int_equal(o.t.ack, IRS + 1);
	assert_int_equal(o.t.opt.mss, th_mss(h));
	assert_true(o.t.win > 0);
	assert_int_equal(h->app.accepted, 0);	/* not before the ACK */
	s = th_seg_from(IRS + 1, o.t.seq + 1, TCP_ACK);
	th_inject(h, &s);
	assert_int_equal(h->app.accepted, 1);
	assert_int_equal(h->app.conn->state, TCP_ESTABLISHED);
	assert_int_equal(h->app.conn->mss, 1000);	/* the peer's limit */
	assert_int_equal(th_pending(h), 0);
	th_free(h);
}

static void
test_closed_port_and_stray_ack_get_rst(void **state)
{
	struct th *h = th_new(NULL);
	struct th_seg s = th_seg_from(IRS, 0, TCP_SYN);
	struct th_out o;

	(void)state;
	s.sport = 40001;
	/* stray ACK: RST with seq = its ack */
	s.flags = TCP_ACK;
	s.ack = 777;
	th_inject(h, &s);
	th_expect(h, &o, TCP_RST, 777, 0);
	/* a RST is never answered */
	s.flags = TCP_RST;
	th_inject(h, &s);
	assert_int_equal(th_pending(h), 0);
	assert_int_equal(h->stats.drop[NET_DROP_TCP_NO_CONN], 2);
	th_free(h);
}

static void
test_data_is_delivered_and_acked(void **state)
{
	struct th *h = th_new(NULL);
	uint32_t iss = th_handshake(h, 40000, IRS, NULL, 0, 65535);
	struct th_seg s = th_seg_from(IRS + 1, iss + 1, TCP_ACK | TCP_PSH);
	struct th_out o;

	(void)state;
	s.data = "GET / HTTP/1.1\r\n\r\n";
	s.len = 18;
	th_inject(h, &s);
	assert_int_equal(h->app.got_len, 18);
	assert_memory_equal(h->app.got, s.data, 18);
	th_advance(h, 50);	/* a delayed ACK goes within 40 ms at most */
	th_expect(h, &o, TCP_ACK, iss + 1, IRS + 19);
	assert_true(o.at - 1000 <= 40 + 1);
	/* duplicate: no second delivery, an immediate ACK */
	th_inject(h, &s);
	assert_int_equal(h->app.got_len, 18);
	th_expect(h, &o, TCP_ACK, iss + 1, IRS + 19);
	th_free(h);
}

static void
test_response_and_retransmission_backoff(void **state)
{
	struct th *h = th_new(NULL);
	uint32_t iss = th_handshake(h, 40000, IRS, NULL, 0, 65535);
	struct th_out o;
	uint64_t t0, prev_gap = 0;
	int i;

	(void)state;
	assert_int_equal(tcp_write(h->ns, h->app.conn, "hello", 5), 5);
	tcp_output(h->ns, h->app.conn);
	net_flush(h->ns);
	th_expect(h, &o, TCP_ACK | TCP_PSH, iss + 1, IRS + 1);
	assert_int_equal(o.t.len, 5);
	t0 = o.at;
	/* first a tail loss probe, 2 SRTT (+ the delayed-ACK allowance for a
	 * lone segment) later: the same segment */
	while (th_pending(h) == 0 && o.at - t0 < 1000)
		th_advance(h, 1);
	assert_true(th_next(h, &o));
	assert_int_equal(o.t.seq, iss + 1);
	assert_in_range(o.at - t0, 10, 100);
	assert_int_equal(h->stats.tcp.tail_loss_probes, 1);
	prev_gap = o.at - t0;
	t0 = o.at;
	/* unanswered: a second probe, the PTO doubled */
	while (th_pending(h) == 0 && o.at - t0 < 1000)
		th_advance(h, 1);
	assert_true(th_next(h, &o));
	assert_int_equal(o.t.seq, iss + 1);
	assert_in_range(o.at - t0, 2 * prev_gap - 1, 2 * prev_gap + 1);
	assert_int_equal(h->stats.tcp.tail_loss_probes, 2);
	prev_gap = 0;
	t0 = o.at;
	/* then resent after each RTO, the gap doubling */
	for (i = 0; i < 5; i++) {
		uint64_t gap;
		int guard = 0;

		while (th_pending(h) == 0 && guard++ < 200000)
			th_advance(h, 1);
		assert_true(th_next(h, &o));
		assert_int_equal(th_pending(h), 0);
		assert_int_equal(o.t.seq, iss + 1);
		assert_int_equal(o.t.len, 5);
		gap = o.at - t0;
		if (prev_gap != 0 && gap < 60000)
			assert_in_range(gap, 2 * prev_gap - 2, 2 * prev_gap + 2);
		else
			assert_in_range(gap, 150, 1002);	/* the first RTO */
		prev_gap = gap;
		t0 = o.at;
	}
	assert_true(h->stats.tcp.retransmits >= 4);
	/* the ACK stops it */
	{
		struct th_seg s = th_seg_from(IRS + 1, iss + 6, TCP_ACK);

		th_inject(h, &s);
	}
	th_advance(h, 130000);
	assert_int_equal(th_pending(h), 0);
	th_free(h);
}

/* The bytes counted sent are those of the frames the driver got, even
 * when it frees and reuses each mbuf as soon as it has it. */
static void
test_tx_bytes_of_a_driver_that_copies(void **state)
{
	static char data[3000];
	struct th *h = th_new(NULL);
	uint64_t before, frames = 0;
	unsigned int i;

	(void)state;
	h->copy_tx = true;
	th_handshake(h, 40000, IRS, NULL, 0, 65535);
	th_drain(h);
	before = h->stats.tx_bytes;
	assert_int_equal(tcp_write(h->ns, h->app.conn, data, sizeof(data)),
			sizeof(data));
	tcp_output(h->ns, h->app.conn);
	net_flush(h->ns);
	assert_true(h->n_out >= 3);	/* frames of unequal lengths */
	for (i = h->rd; i < h->n_out; i++)
		frames += rte_pktmbuf_pkt_len(h->out[i]);
	assert_int_equal(h->stats.tx_bytes - before, frames);
	th_free(h);
}

static void
test_gives_up_after_max_retries(void **state)
{
	struct tcp_config cfg;
	struct th *h;
	struct th_out o;
	bool rst = false;

	(void)state;
	tcp_config_defaults(&cfg);
	cfg.max_retries = 3;
	cfg.rto_max_ms = 2000;
	h = th_new(&cfg);
	th_handshake(h, 40000, IRS, NULL, 0, 65535);
	tcp_write(h->ns, h->app.conn, "x", 1);
	tcp_output(h->ns, h->app.conn);
	th_advance(h, 20000);
	while (th_next(h, &o))
		rst = rst || (o.t.flags & TCP_RST);
	assert_true(rst);
	assert_int_equal(h->app.closed, 1);
	assert_int_equal(h->stats.tcp_conns_open, 0);
	th_free(h);
}

static void
test_passive_close(void **state)
{
	struct th *h = th_new(NULL);
	uint32_t iss = th_handshake(h, 40000, IRS, NULL, 0, 65535);
	struct th_seg s = th_seg_from(IRS + 1, iss + 1, TCP_ACK | TCP_FIN);
	struct th_out o;

	(void)state;
	th_inject(h, &s);		/* FIN: the app closes too */
	assert_int_equal(h->app.peer_closed, 1);
	th_expect(h, &o, TCP_ACK | TCP_FIN, iss + 1, IRS + 2);
	s = th_seg_from(IRS + 2, iss + 2, TCP_ACK);
	th_inject(h, &s);		/* LAST-ACK -> CLOSED */
	assert_int_equal(h->app.closed, 1);
	assert_int_equal(h->stats.tcp_conns_open, 0);
	th_free(h);
}

static void
test_active_close_and_time_wait(void **state)
{
	struct tcp_config cfg;
	struct th *h;
	uint32_t iss;
	struct th_seg s;
	struct th_out o;

	(void)state;
	tcp_config_defaults(&cfg);
	cfg.time_wait_ms = 3000;
	h = th_new(&cfg);
	iss = th_handshake(h, 40000, IRS, NULL, 0, 65535);
	tcp_close(h->ns, h->app.conn);
	net_flush(h->ns);
	th_expect(h, &o, TCP_ACK | TCP_FIN, iss + 1, IRS + 1);
	s = th_seg_from(IRS + 1, iss + 2, TCP_ACK);
	th_inject(h, &s);		/* FIN-WAIT-2 */
	s = th_seg_from(IRS + 1, iss + 2, TCP_ACK | TCP_FIN);
	th_inject(h, &s);		/* TIME-WAIT */
	th_expect(h, &o, TCP_ACK, iss + 2, IRS + 2);
	assert_int_equal(h->app.closed, 1);	/* released at TIME-WAIT */
	assert_int_equal(h->stats.tcp_conns_open, 1);
	th_inject(h, &s);		/* retransmitted FIN: re-ACKed */
	th_expect(h, &o, TCP_ACK, iss + 2, IRS + 2);
	th_advance(h, 3100);
	assert_int_equal(h->stats.tcp_conns_open, 0);
	th_free(h);
}

static void
test_simultaneous_close(void **state)
{
	struct th *h = th_new(NULL);
	uint32_t iss = th_handshake(h, 40000, IRS, NULL, 0, 65535);
	struct th_seg s;
	struct th_out o;

	(void)state;
	h->app.close_on_fin = false;
	tcp_close(h->ns, h->app.conn);
	net_flush(h->ns);
	th_expect(h, &o, TCP_ACK | TCP_FIN, iss + 1, IRS + 1);
	s = th_seg_from(IRS + 1, iss + 1, TCP_ACK | TCP_FIN);	/* crossing FIN */
	th_inject(h, &s);
	th_expect(h, &o, TCP_ACK, iss + 2, IRS + 2);		/* CLOSING */
	assert_int_equal(h->app.conn->state, TCP_CLOSING);
	s = th_seg_from(IRS + 2, iss + 2, TCP_ACK);
	th_inject(h, &s);
	assert_int_equal(h->stats.tcp_conns_open, 1);	/* TIME-WAIT */
	th_advance(h, 10000);
	assert_int_equal(h->stats.tcp_conns_open, 0);
	th_free(h);
}

static void
test_rst_exact_resets_in_window_challenges(void **state)
{
	struct th *h = th_new(NULL);
	uint32_t iss = th_handshake(h, 40000, IRS, NULL, 0, 65535);
	struct th_seg s;
	struct th_out o;

	(void)state;
	s = th_seg_from(IRS + 100, 0, TCP_RST);		/* in window, not exact */
	th_inject(h, &s);
	th_expect(h, &o, TCP_ACK, iss + 1, IRS + 1);	/* challenge ACK */
	assert_int_equal(h->app.closed, 0);
	s = th_seg_from(IRS + 1 + 200000, 0, TCP_RST);	/* out of window: ignored */
	th_inject(h, &s);
	assert_int_equal(th_pending(h), 0);
	assert_int_equal(h->app.closed, 0);
	s = th_seg_from(IRS + 1, 0, TCP_RST);		/* exact */
	th_inject(h, &s);
	assert_int_equal(h->app.closed, 1);
	assert_int_equal(th_pending(h), 0);
	assert_int_equal(h->stats.tcp.resets_in, 1);
	th_free(h);
}

/* A flood of forged in-window RSTs and out-of-window ACKs: the shard
 * answers at most its budget of the second (1.5 x the limit at most), counts
 * the rest, keeps the connection, and has a budget again a second later.
 * The per-connection interval is off: the shard's budget alone is seen. */
static void
test_challenge_acks_are_rate_limited(void **state)
{
	struct tcp_config cfg;
	struct th *h;
	uint32_t iss, i, sent = 0;
	struct th_seg s;
	struct th_out o;

	(void)state;
	tcp_config_defaults(&cfg);
	cfg.challenge_ack_limit = 10;
	cfg.invalid_ack_interval_ms = 0;
	h = th_new(&cfg);
	iss = th_handshake(h, 40000, IRS, NULL, 0, 65535);
	for (i = 0; i < 100; i++) {
		s = i % 2 ? th_seg_from(IRS + 100 + i, 0, TCP_RST) :
			th_seg_from(IRS + 1 + 300000 + i, iss + 1, TCP_ACK);
		th_inject(h, &s);
		while (th_next(h, &o)) {
			assert_int_equal(o.t.flags, TCP_ACK);
			sent++;
		}
	}
	assert_in_range(sent, 5, 15);
	assert_int_equal(h->stats.tcp.challenge_acks, sent);
	assert_int_equal(h->stats.tcp.challenge_acks_limited, 100 - sent);
	assert_int_equal(h->app.closed, 0);
	assert_int_equal(h->app.conn->state, TCP_ESTABLISHED);
	th_advance(h, 1000);
	s = th_seg_from(IRS + 100, 0, TCP_RST);
	th_inject(h, &s);
	th_expect(h, &o, TCP_ACK, iss + 1, IRS + 1);
	/* The shard's budget is for segments without data: data out of the
	 * window is acknowledged each time (here, with no interval). */
	for (i = 0; i < 50; i++) {
		s = th_seg_from(IRS + 1 + 300000, iss + 1, TCP_ACK);
		s.data = "x";
		s.len = 1;
		th_inject(h, &s);
		th_expect(h, &o, TCP_ACK, iss + 1, IRS + 1);
	}
	th_free(h);
}

/* A segment out of the window, as Pktgen sends them (its smallest frame
 * leaves 6 bytes of data), or without data. */
static struct th_seg
out_of_window(uint16_t sport, uint32_t iss, bool data)
{
	struct th_seg s = th_seg_from(IRS + 1 + 300000, iss + 1, TCP_ACK);

	s.sport = sport;
	if (data) {
		s.data = "wxyz01";
		s.len = 6;
	}
	return s;
}

/* One more established connection beside th_handshake()'s. */
static uint32_t
handshake_another(struct th *h, uint16_t sport)
{
	struct th_seg s = th_seg_from(IRS, 0, TCP_SYN);
	struct th_out o;

	s.sport = sport;
	th_inject(h, &s);
	assert_true(th_next(h, &o));
	assert_int_equal(o.t.flags, TCP_SYN | TCP_ACK);
	s = th_seg_from(IRS + 1, o.t.seq + 1, TCP_ACK);
	s.sport = sport;
	th_inject(h, &s);
	return o.t.seq;
}

/* Counts the captured answers by the peer's port (ports[i] in n[i]); each
 * must be a bare ACK of what the stack expects on that connection. */
static void
count_answers(struct th *h, const uint16_t ports[2], const uint32_t iss[2],
		unsigned int n[2])
{
	struct th_out o;
	int i;

	while (th_next(h, &o)) {
		i = o.t.dport == ports[0] ? 0 : 1;
		assert_int_equal(o.t.dport, ports[i]);
		assert_int_equal(o.t.flags, TCP_ACK);
		assert_int_equal(o.t.seq, iss[i] + 1);
		assert_int_equal(o.t.ack, IRS + 1);
		assert_int_equal(o.t.len, 0);
		n[i]++;
	}
}

/* A flood of out-of-window segments into two connections, one every 2 ms
 * for 2 s each: into the first with data (the 6 bytes of Pktgen's smallest
 * frame) and without, into the second with data. Each connection answers
 * one per interval (Linux's tcp_invalid_ratelimit), whatever the other
 * does and whatever the shard's budget (large here); the rest are counted;
 * no forged byte is taken and the connection takes its next bytes. */
static void
test_out_of_window_answers_are_rate_limited_per_connection(void **state)
{
	static const uint32_t intervals[] = { 500, 100 };
	static const uint16_t ports[2] = { 40001, 40002 };
	unsigned int k;

	(void)state;
	for (k = 0; k < RTE_DIM(intervals); k++) {
		const uint32_t flood = 1000, step = 2;
		unsigned int n[2] = { 0, 0 }, want;
		struct tcp_config cfg;
		struct th_seg s;
		struct th_out o;
		uint32_t iss[2], i;
		struct th *h;

		tcp_config_defaults(&cfg);
		cfg.challenge_ack_limit = 1000000;
		cfg.invalid_ack_interval_ms = intervals[k];
		h = th_new(&cfg);
		iss[0] = th_handshake(h, ports[0], IRS, NULL, 0, 65535);
		iss[1] = handshake_another(h, ports[1]);
		for (i = 0; i < flood; i++) {
			s = out_of_window(ports[0], iss[0], i % 4 != 0);
			th_inject(h, &s);
			s = out_of_window(ports[1], iss[1], true);
			th_inject(h, &s);
			count_answers(h, ports, iss, n);
			th_advance(h, step);
		}
		want = flood * step / intervals[k];	/* intervals spanned */
		assert_int_equal(n[0], want);
		assert_int_equal(n[1], want);
		assert_int_equal(h->stats.tcp.invalid_acks_limited,
				2 * (flood - want));
		assert_int_equal(h->stats.drop[NET_DROP_TCP_OUT_OF_WINDOW],
				2 * flood);
		assert_int_equal(h->stats.tcp.challenge_acks_limited, 0);
		assert_int_equal(h->app.got_len, 0);
		s = th_seg_from(IRS + 1, iss[1] + 1, TCP_ACK | TCP_PSH);
		s.sport = ports[1];
		s.data = "GET";
		s.len = 3;
		th_inject(h, &s);
		th_advance(h, 100);
		assert_int_equal(h->app.got_len, 3);
		assert_true(th_next(h, &o));
		assert_int_equal(o.t.ack, IRS + 4);
		th_free(h);
	}
}

/* A zero-window probe lies past the window by definition, but its sender
 * knows the connection (it is at rcv_nxt exactly) and must learn when the
 * window opens: the interval does not hold its answers back. */
static void
test_zero_window_probes_are_always_answered(void **state)
{
	static uint8_t fill[1000];
	struct th *h = th_new(NULL);
	uint32_t iss, sent = 0, i;
	struct th_seg s;
	struct th_out o;

	(void)state;
	iss = th_handshake(h, 40000, IRS, NULL, 0, 65535);
	while (sent < 65535) {		/* the application takes it all */
		s = th_seg_from(IRS + 1 + sent, iss + 1, TCP_ACK);
		s.data = fill;
		s.len = (uint16_t)RTE_MIN(sizeof(fill), 65535 - sent);
		th_inject(h, &s);
		sent += s.len;
	}
	th_advance(h, 100);
	th_drain(h);
	assert_int_equal(h->app.got_len, 65535);
	for (i = 0; i < 5; i++) {
		s = th_seg_from(IRS + 1 + sent, iss + 1, TCP_ACK);
		s.data = "x";
		s.len = 1;
		th_inject(h, &s);
		th_expect(h, &o, TCP_ACK, iss + 1, IRS + 1 + sent);
		assert_int_equal(o.t.win, 0);
		th_advance(h, 10);
	}
	assert_int_equal(h->stats.tcp.invalid_acks_limited, 0);
	th_free(h);
}

static void
test_syn_on_established_gets_challenge_ack(void **state)
{
	struct th *h = th_new(NULL);
	uint32_t iss = th_handshake(h, 40000, IRS, NULL, 0, 65535);
	struct th_seg s = th_seg_from(IRS + 5000, 0, TCP_SYN);
	struct th_out o;

	(void)state;
	th_inject(h, &s);
	th_expect(h, &o, TCP_ACK, iss + 1, IRS + 1);
	assert_int_equal(h->app.conn->state, TCP_ESTABLISHED);
	th_free(h);
}

static void
test_zero_window_probe(void **state)
{
	struct th *h = th_new(NULL);
	uint32_t iss = th_handshake(h, 40000, IRS, NULL, 0, 0);
	struct th_seg s;
	struct th_out o;

	(void)state;
	tcp_write(h->ns, h->app.conn, "abc", 3);
	tcp_output(h->ns, h->app.conn);
	net_flush(h->ns);
	assert_int_equal(th_pending(h), 0);	/* window closed */
	th_advance(h, 1500);
	assert_true(th_next(h, &o));		/* one-byte probe */
	assert_int_equal(o.t.seq, iss + 1);
	assert_int_equal(o.t.len, 1);
	s = th_seg_from(IRS + 1, iss + 1, TCP_ACK);	/* still zero */
	s.win = 0;
	th_inject(h, &s);
	th_advance(h, 5000);
	assert_true(th_next(h, &o));		/* probes continue */
	s.win = 1000;				/* opens */
	th_drain(h);
	th_inject(h, &s);
	assert_true(th_next(h, &o));
	assert_int_equal(o.t.len, 3);
	assert_int_equal(o.t.seq, iss + 1);
	th_free(h);
}

static void
test_fin_wait_2_times_out(void **state)
{
	struct tcp_config cfg;
	struct th *h;
	uint32_t iss;
	struct th_seg s;
	struct th_out o;

	(void)state;
	tcp_config_defaults(&cfg);
	cfg.time_wait_ms = 2000;
	h = th_new(&cfg);
	iss = th_handshake(h, 40000, IRS, NULL, 0, 65535);
	tcp_close(h->ns, h->app.conn);
	net_flush(h->ns);
	th_expect(h, &o, TCP_ACK | TCP_FIN, iss + 1, IRS + 1);
	s = th_seg_from(IRS + 1, iss + 2, TCP_ACK);
	th_inject(h, &s);		/* FIN-WAIT-2; the peer never closes */
	assert_int_equal(h->app.conn->state, TCP_FIN_WAIT_2);
	th_advance(h, 1990);
	assert_int_equal(h->stats.tcp_conns_open, 1);
	th_advance(h, 20);
	assert_int_equal(h->stats.tcp_conns_open, 0);
	assert_int_equal(h->app.closed, 1);
	th_free(h);
}

static void
test_rst_in_syn_received_frees_quietly(void **state)
{
	struct th *h = th_new(NULL);
	struct th_seg s = th_seg_from(IRS, 0, TCP_SYN);
	struct th_out o;

	(void)state;
	th_inject(h, &s);
	assert_true(th_next(h, &o));
	assert_int_equal(h->stats.tcp_syn_recv, 1);
	s = th_seg_from(IRS + 1, 0, TCP_RST);
	th_inject(h, &s);
	assert_int_equal(h->stats.tcp_syn_recv, 0);
	assert_int_equal(h->stats.tcp_conns_open, 0);
	assert_int_equal(h->app.accepted, 0);
	assert_int_equal(th_pending(h), 0);
	th_free(h);
}

static void
test_lost_syn_ack_is_resent_then_given_up(void **state)
{
	struct th *h = th_new(NULL);
	struct th_seg s = th_seg_from(IRS, 0, TCP_SYN);
	struct th_out o;
	int synacks = 0;

	(void)state;
	th_inject(h, &s);
	th_inject(h, &s);		/* a retransmitted SYN: SYN-ACK again */
	th_advance(h, 200000);		/* never completed */
	while (th_next(h, &o)) {
		assert_int_equal(o.t.flags, TCP_SYN | TCP_ACK);
		synacks++;
	}
	assert_int_equal(synacks, 2 + 5);	/* two answers, five retries */
	assert_int_equal(h->stats.tcp_conns_open, 0);
	assert_int_equal(h->stats.tcp_syn_recv, 0);
	th_free(h);
}

struct fired {
	struct net_timer t;
	struct th *h;
	uint64_t at;	/* virtual time it fired, 0: not yet */
	int n;
};

static void
on_net_timer(struct net_timer *t)
{
	struct fired *f = container_of(t, struct fired, t);

	f->at = f->h->now;
	f->n++;
}

/* A layer above's timer shares the wheel with a connection's: each fires
 * its own way, at its own time. */
static void
test_upper_layer_timer_beside_tcp(void **state)
{
	struct th *h = th_new(NULL);
	struct th_seg s = th_seg_from(IRS, 0, TCP_SYN);
	struct fired a = { .h = h }, b = { .h = h };
	struct th_out o;

	(void)state;
	th_inject(h, &s);		/* its SYN-ACK's timer is armed */
	net_timer_init(&a.t, on_net_timer);
	net_timer_init(&b.t, on_net_timer);
	net_timer_arm(h->ns, &a.t, h->now + 50);
	net_timer_arm(h->ns, &b.t, h->now + 30);
	net_timer_cancel(h->ns, &b.t);
	assert_false(net_timer_armed(&b.t));
	th_advance(h, 49);
	assert_int_equal(a.n, 0);
	th_advance(h, 1);
	assert_int_equal(a.n, 1);
	assert_int_equal(a.at, h->now);
	assert_false(net_timer_armed(&a.t));
	th_advance(h, 2000);		/* the SYN-ACK goes again, by TCP's */
	assert_int_equal(a.n, 1);
	assert_int_equal(b.n, 0);
	assert_true(th_next(h, &o));
	assert_int_equal(o.t.flags, TCP_SYN | TCP_ACK);
	assert_true(th_next(h, &o));
	assert_int_equal(o.t.flags, TCP_SYN | TCP_ACK);
	th_free(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_handshake_options),
		cmocka_unit_test(test_closed_port_and_stray_ack_get_rst),
		cmocka_unit_test(test_data_is_delivered_and_acked),
		cmocka_unit_test(test_response_and_retransmission_backoff),
		cmocka_unit_test(test_tx_bytes_of_a_driver_that_copies),
		cmocka_unit_test(test_gives_up_after_max_retries),
		cmocka_unit_test(test_passive_close),
		cmocka_unit_test(test_active_close_and_time_wait),
		cmocka_unit_test(test_simultaneous_close),
		cmocka_unit_test(test_rst_exact_resets_in_window_challenges),
		cmocka_unit_test(test_syn_on_established_gets_challenge_ack),
		cmocka_unit_test(test_challenge_acks_are_rate_limited),
		cmocka_unit_test(test_out_of_window_answers_are_rate_limited_per_connection),
		cmocka_unit_test(test_zero_window_probes_are_always_answered),
		cmocka_unit_test(test_zero_window_probe),
		cmocka_unit_test(test_fin_wait_2_times_out),
		cmocka_unit_test(test_rst_in_syn_received_frees_quietly),
		cmocka_unit_test(test_lost_syn_ack_is_resent_then_given_up),
		cmocka_unit_test(test_upper_layer_timer_beside_tcp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
