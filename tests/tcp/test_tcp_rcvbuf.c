/* SPDX-License-Identifier: BSD-3-Clause */
/* The receive buffer: what the application does not take is held and
 * acknowledged within a window of its room and the buffer, offered again
 * when it pushes room (the window update going at once), and the FIN told
 * after it; a closed window's probes answered; the buffer autotuned to
 * twice what the application takes per round trip, up to its bound and
 * the shard's budget, and back to its first size when idle; the times of
 * window limits counted. The peer's segments carry 1000 bytes. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "tcp_harness.h"

#define IRS 3000000u
#define SEG 1000
#define RTT 10		/* ms */

static uint8_t stream[4 << 20];
static uint32_t iss, sent;	/* ours; the peer's bytes sent */

/* The stream's byte at off (the application checks what it takes
 * against it when the transfer outgrows its buffer). */
static uint8_t
stream_byte(uint32_t off)
{
	return (uint8_t)(off * 7 + off / 251);
}

static struct th *
open_with(uint32_t init, uint32_t max, uint64_t budget, uint32_t room)
{
	struct tcp_config cfg;
	struct th_seg s = th_seg_from(IRS, 0, TCP_SYN);
	struct th_out o;
	struct th *h;
	uint32_t i;

	for (i = 0; i < sizeof(stream); i++)
		stream[i] = stream_byte(i);
	tcp_config_defaults(&cfg);
	cfg.rcv_buf_init = init;
	cfg.rcv_buf_max = max;
	cfg.rcv_buf_budget = budget;
	/* Windows to the byte where they fit the field unscaled. */
	cfg.rcv_win_max = room + max <= 65535 ? 65535 : 1 << 20;
	h = th_new(&cfg);
	h->app.rcv_space = room;
	h->app.room_only = true;
	h->ns->cfg.rcv_space = room;	/* the SYN-ACK's window too */
	th_opt_mss(&s, SEG);
	th_opt_wscale(&s, 7);
	th_inject(h, &s);
	assert_true(th_next(h, &o));
	iss = o.t.seq;
	th_advance(h, RTT);	/* the handshake's RTT */
	s = th_seg_from(IRS + 1, iss + 1, TCP_ACK);
	s.win = 1024;
	th_inject(h, &s);
	assert_int_equal(h->app.accepted, 1);
	th_drain(h);
	sent = 0;
	return h;
}

/* The peer's next n bytes, in segments of SEG. */
static void
peer_sends(struct th *h, uint32_t n, bool fin)
{
	while (n > 0) {
		struct th_seg s = th_seg_from(IRS + 1 + sent, iss + 1, TCP_ACK);

		s.win = 1024;
		s.data = stream + sent;
		s.len = (uint16_t)RTE_MIN(n, (uint32_t)SEG);
		n -= s.len;
		if (n == 0 && fin)
			s.flags |= TCP_FIN;
		th_inject(h, &s);
		sent += s.len;
	}
}

/* The last segment sent: its ACK and window, scaled. */
static bool
last_ack(struct th *h, uint32_t *ack, uint32_t *win)
{
	struct th_out o;
	bool any = false;

	while (th_next(h, &o)) {
		*ack = o.t.ack - IRS - 1;
		*win = (uint32_t)o.t.win << h->app.conn->rcv_wscale;
		any = true;
	}
	return any;
}

static void
test_held_beyond_room_then_delivered(void **state)
{
	struct th *h = open_with(8000, 60000, 1 << 20, 3200);
	struct tcp_conn *c = h->app.conn;
	uint32_t ack = 0, win = 0;
	struct th_seg s;

	(void)state;
	/* the window is the room and the buffer */
	assert_int_equal(tcp_rcv_window(c), 3200 + 8000);
	peer_sends(h, 11200, false);
	th_advance(h, 50);	/* the delayed ACK */
	assert_int_equal(h->app.got_len, 3200);
	assert_true(last_ack(h, &ack, &win));
	assert_int_equal(ack, 11200);	/* all of it, held or taken */
	assert_int_equal(win, 0);
	/* the rest of the fourth segment, seven more, a piece */
	assert_int_equal(h->stats.tcp_rcvq_mbufs, 9);
	/* a probe into the closed window is answered, and not taken */
	s = th_seg_from(IRS + 1 + sent, iss + 1, TCP_ACK);
	s.data = "x";
	s.len = 1;
	th_inject(h, &s);
	assert_true(last_ack(h, &ack, &win));
	assert_int_equal(ack, 11200);
	assert_int_equal(win, 0);
	/* room: held data goes first, and the window it frees is
	 * announced at once */
	th_set_rcv_space(h, 5000);
	assert_int_equal(h->app.got_len, 8200);
	assert_true(last_ack(h, &ack, &win));
	assert_int_equal(win, 5000);
	th_set_rcv_space(h, 100000);
	assert_int_equal(h->app.got_len, 11200);
	assert_memory_equal(h->app.got, stream, 11200);
	assert_int_equal(h->stats.tcp_rcvq_mbufs, 0);
	assert_true(h->stats.tcp_zero_window_us > 0);
	th_free(h);
}

/* The peer's FIN reaches the application after the bytes held before
 * it, though it is acknowledged at once. */
static void
test_fin_after_held_data(void **state)
{
	struct th *h = open_with(8000, 60000, 1 << 20, 2000);
	uint32_t ack = 0, win = 0;

	(void)state;
	peer_sends(h, 5000, true);
	assert_true(last_ack(h, &ack, &win));
	assert_int_equal(ack, 5001);
	assert_int_equal(h->app.got_len, 2000);
	assert_int_equal(h->app.peer_closed, 0);
	assert_int_equal(h->app.conn->state, TCP_CLOSE_WAIT);
	th_set_rcv_space(h, 1000);
	assert_int_equal(h->app.got_len, 3000);
	assert_int_equal(h->app.peer_closed, 0);
	th_set_rcv_space(h, 10000);
	assert_int_equal(h->app.got_len, 5000);
	assert_int_equal(h->app.peer_closed, 1);
	assert_memory_equal(h->app.got, stream, 5000);
	th_free(h);
}

/* An application that, as HTTP/1.1, takes what fits its buffer and
 * parses it in the same call: a request made whole there is consumed
 * and its bytes are room again, though the segment offered was only
 * partly taken. Held data goes on to it while it takes some, or the
 * requests held would wait for a segment the peer, waiting for their
 * answers, never sends. */
static void
test_held_offered_while_taken(void **state)
{
	struct th *h = open_with(8000, 60000, 1 << 20, 0);
	uint32_t ack = 0, win = 0;

	(void)state;
	h->app.serve_unit = 1200;
	/* five requests arrive while the application has no room: held */
	peer_sends(h, 5 * 1200, false);
	assert_int_equal(h->app.got_len, 0);
	assert_int_equal(h->app.conn->rcvq.held, 6);
	/* room for 1500: it takes 1500 bytes of the first two segments,
	 * serves one request, and has room again */
	th_set_rcv_space(h, 1500);
	assert_int_equal(h->app.served, 5);
	assert_int_equal(h->app.got_len, 6000);
	assert_memory_equal(h->app.got, stream, 6000);
	assert_int_equal(h->app.conn->rcvq.held, 0);
	assert_int_equal(h->stats.tcp_rcvq_mbufs, 0);
	assert_true(last_ack(h, &ack, &win));
	assert_int_equal(ack, 6000);
	th_free(h);
}

/* An application that takes a large buffer's data a few kilobytes at a
 * time (an upload read 8 KB at a time) is not answered with a window
 * update for each: one goes when the window at least doubles what is
 * left of it, and the ACKs of the data still coming carry the rest. */
static void
test_window_update_when_it_doubles(void **state)
{
	struct th *h = open_with(60000, 60000, 1 << 20, 0);
	uint32_t ack = 0, win = 0;

	(void)state;
	peer_sends(h, 20000, false);
	assert_true(last_ack(h, &ack, &win));
	assert_int_equal(ack, 20000);
	assert_int_equal(win, 40000);
	/* 8000 taken: 48000 against the 40000 left, no update */
	th_set_rcv_space(h, 8000);
	assert_int_equal(h->app.got_len, 8000);
	assert_int_equal(th_pending(h), 0);
	/* the data's ACKs carry it */
	peer_sends(h, 30000, false);
	assert_true(last_ack(h, &ack, &win));
	assert_int_equal(ack, 50000);
	assert_int_equal(win, 18000);
	/* 18000 left: 26000 and 34000 do not double it, 42000 does */
	th_set_rcv_space(h, 8000);
	th_set_rcv_space(h, 8000);
	assert_int_equal(th_pending(h), 0);
	th_set_rcv_space(h, 8000);
	assert_true(last_ack(h, &ack, &win));
	assert_int_equal(ack, 50000);
	assert_int_equal(win, 42000);
	assert_int_equal(h->app.got_len, 32000);
	assert_memory_equal(h->app.got, stream, 32000);
	th_free(h);
}

/* We closed first and the peer still sends: in FIN-WAIT-2 held data
 * taken opens the window, and the update goes out as in any other state
 * that receives. */
static void
test_window_reopens_in_fin_wait_2(void **state)
{
	struct th *h = open_with(8000, 60000, 1 << 20, 2000);
	struct tcp_conn *c = h->app.conn;
	struct th_seg s;
	struct th_out o;
	uint32_t ack = 0, win = 1;

	(void)state;
	peer_sends(h, 10000, false);
	th_advance(h, 50);
	assert_true(last_ack(h, &ack, &win));
	assert_int_equal(win, 0);	/* 2000 taken, 8000 held */
	tcp_close(h->ns, c);
	net_flush(h->ns);
	th_expect(h, &o, TCP_FIN | TCP_ACK, iss + 1, IRS + 1 + 10000);
	s = th_seg_from(IRS + 1 + sent, iss + 2, TCP_ACK);
	s.win = 1024;
	th_inject(h, &s);
	assert_int_equal(c->state, TCP_FIN_WAIT_2);
	th_drain(h);
	th_set_rcv_space(h, 20000);
	assert_int_equal(h->app.got_len, 10000);
	assert_true(last_ack(h, &ack, &win));
	assert_true(win >= 20000 - 10000 + 8000);
	th_free(h);
}

/* With neither room nor buffer at first (rcv_buf_init 0), autotuning
 * measures from one segment: the first round trip's taking grows the
 * buffer, and nothing divides by zero. */
static void
test_autotuning_from_no_buffer(void **state)
{
	struct th *h = open_with(0, 60000, 1 << 20, 0);
	struct tcp_conn *c = h->app.conn;

	(void)state;
	assert_int_equal(tcp_rcv_window(c), 0);
	th_advance(h, RTT + 1);
	th_set_rcv_space(h, 3000);
	peer_sends(h, 3000, false);
	th_advance(h, RTT + 1);
	th_set_rcv_space(h, 3000);
	peer_sends(h, 1000, false);	/* 3000 taken in the round trip */
	assert_int_equal(h->app.got_len, 4000);
	assert_true(c->rcvbuf > 0);
	assert_true(h->stats.tcp.rcv_buf_grows >= 1);
	th_free(h);
}

/* Several connections above one stack, each with its own room: taking
 * data on one, the upper layer may push room on others (a proxy
 * answering from what another connection brought). */
struct peer_conn {
	struct th *h;
	struct tcp_conn *c;
	uint32_t room, got;
	struct peer_conn *push[2];	/* given room when this one takes */
};

static uint32_t
peer_conn_recv(void *ctx, struct tcp_conn *c, const uint8_t *data,
		uint32_t len)
{
	struct peer_conn *p = c->app;
	uint32_t take = RTE_MIN(len, p->room);
	int i;

	(void)ctx;
	(void)data;
	p->room -= take;
	p->got += take;
	for (i = 0; i < 2 && take > 0; i++) {
		if (p->push[i] == NULL)
			continue;
		p->push[i]->room = 10000;
		tcp_set_rcv_space(p->h->ns, p->push[i]->c, 10000);
	}
	tcp_set_rcv_space(p->h->ns, c, p->room);
	return take;
}

static void
peer_conn_closed(void *ctx, struct tcp_conn *c)
{
	(void)ctx;
	(void)c;
}

static const struct tcp_upcalls peer_conn_upcalls = {
	.recv = peer_conn_recv,
	.closed = peer_conn_closed,
};

/* Room pushed on two connections lists them for the flush; taking the
 * first one's held data pushes room on two more. All four get their
 * data in that flush: the two listed while it runs go on the list's end,
 * and the second of the first two is not lost under them. */
static void
test_room_pushed_during_the_flush_is_listed(void **state)
{
	struct th *h = th_new(NULL);
	struct peer_conn p[4];
	int i;

	(void)state;
	h->app.room_only = true;
	for (i = 0; i < 4; i++) {
		struct th_seg s = th_seg_from(IRS + 1, 0, TCP_ACK);

		h->app.accepted = 0;
		s.ack = th_handshake(h, (uint16_t)(41000 + i), IRS, NULL, 0,
				65535) + 1;
		p[i] = (struct peer_conn){ .h = h, .c = h->app.conn };
		tcp_set_app(p[i].c, &p[i]);
		p[i].c->up = &peer_conn_upcalls;
		tcp_set_rcv_space(h->ns, p[i].c, 0);
		/* 1000 bytes the upper layer has no room for: held */
		s.sport = (uint16_t)(41000 + i);
		s.data = stream;
		s.len = SEG;
		th_inject(h, &s);
		assert_int_equal(p[i].c->rcvq.held, 1);
		th_drain(h);	/* its ACK, before the next handshake */
	}
	th_drain(h);
	p[0].push[0] = &p[2];
	p[0].push[1] = &p[3];
	p[0].room = p[1].room = 10000;
	tcp_set_rcv_space(h->ns, p[0].c, 10000);
	tcp_set_rcv_space(h->ns, p[1].c, 10000);
	assert_int_equal(p[0].got + p[1].got, 0);	/* at the flush */
	net_flush(h->ns);
	for (i = 0; i < 4; i++) {
		assert_int_equal(p[i].got, SEG);
		assert_int_equal(p[i].c->rcvq.held, 0);
	}
	th_free(h);
}

/* Rounds of an RTT: the peer sends the window it was offered, which the
 * application takes at once into a room of 4000 bytes, as HTTP/1.1 into
 * its buffer. Returns the window offered after the round. */
static uint32_t
round_trip(struct th *h)
{
	uint32_t win = tcp_rcv_window(h->app.conn), i;

	for (i = 0; i < win / SEG; i++) {
		peer_sends(h, SEG, false);
		th_set_rcv_space(h, 4000);
	}
	th_advance(h, RTT);
	th_drain(h);
	return tcp_rcv_window(h->app.conn);
}

static void
test_autotuning_follows_what_is_taken(void **state)
{
	struct th *h = open_with(10000, 120000, 1 << 20, 4000);
	struct tcp_conn *c = h->app.conn;
	uint32_t w0 = tcp_rcv_window(c), w2, i;

	(void)state;
	assert_int_equal(tcp_rtt_us(c), RTT * 1000);	/* the handshake's */
	assert_int_equal(w0, 14000);
	round_trip(h);
	/* 14000 taken in a round trip: at least twice that */
	w2 = round_trip(h);
	assert_true(c->rcvbuf >= 2 * 14000);
	assert_true(w2 > 2 * w0);
	for (i = 0; i < 4; i++)
		round_trip(h);
	assert_int_equal(c->rcvbuf, 120000);	/* its bound */
	assert_int_equal(h->stats.tcp_rcv_buf_bytes, 120000);
	assert_true(h->stats.tcp.rcv_buf_grows >= 2);
	assert_int_equal(h->stats.tcp.rcv_buf_budget_limited, 0);
	assert_int_equal(h->app.got_len, sent);
	assert_memory_equal(h->app.got, stream, sent);
	/* idle for a second: back to its first size; the edge already
	 * advertised stays */
	th_advance(h, TCP_RCVBUF_IDLE_MS + 10);
	assert_int_equal(c->rcvbuf, 10000);
	assert_int_equal(h->stats.tcp.rcv_buf_shrinks, 1);
	assert_int_equal(h->stats.tcp_rcv_buf_bytes, 10000);
	assert_true(SEQ_GEQ(c->rcv_nxt + tcp_rcv_window(c), c->rcv_adv));
	th_free(h);
}

/* An application that drains at once: the buffer grows past 128
 * segments (the old receive queue's half) towards its ceiling, as far as
 * the round trips need, and back to its first size once idle. */
static void
test_autotuning_past_128_segments(void **state)
{
	struct th *h = open_with(10000, 6 << 20, 1ull << 30, 4000);
	struct tcp_conn *c = h->app.conn;
	uint32_t i;

	(void)state;
	h->app.pattern = stream_byte;
	for (i = 0; i < 12 && c->rcvbuf <= 400u * SEG; i++)
		round_trip(h);
	assert_true(c->rcvbuf > 400u * SEG);
	assert_true(tcp_rcv_window(c) > 128u * SEG);
	assert_int_equal(h->stats.tcp.rcv_buf_budget_limited, 0);
	assert_int_equal(h->app.got_len, sent);
	/* idle: back to its first size */
	th_advance(h, TCP_RCVBUF_IDLE_MS + 10);
	assert_int_equal(c->rcvbuf, 10000);
	assert_int_equal(h->stats.tcp_rcv_buf_bytes, 10000);
	th_free(h);
}

/* The window scale is chosen for the buffer's ceiling where it is past
 * rcv_win_max (6 MiB and 1 MiB: 7, not 5), so that a buffer of 3 MiB is
 * offered whole rather than cut at 65535 << 5. */
static void
test_window_past_rcv_win_max(void **state)
{
	struct th *h = open_with(3 << 20, 6 << 20, 1ull << 30, 4000);
	struct tcp_conn *c = h->app.conn;
	uint32_t ack = 0, win = 0;

	(void)state;
	assert_int_equal(h->ns->cfg.rcv_win_max, 1 << 20);
	assert_int_equal(c->rcv_wscale, 7);
	peer_sends(h, 2 * SEG, false);
	assert_true(last_ack(h, &ack, &win));
	assert_int_equal(ack, 2 * SEG);
	assert_true(win >= (3u << 20) + 4000 - 2 * SEG - 128);
	assert_true(win > 65535u << 5);
	th_free(h);
}

/* A window closed (the buffer full) starts no measure of the round trip:
 * what it covers is in flight already, and a segment that comes right
 * after the room would say the round trip takes a microsecond
 * (autotuning would then measure at every taking). */
static void
test_closed_window_measures_no_round_trip(void **state)
{
	struct th *h = open_with(8000, 60000, 1 << 20, 3200);
	struct tcp_conn *c = h->app.conn;

	(void)state;
	peer_sends(h, 3200 + 8000, false);
	assert_int_equal(tcp_rcv_window(c), 0);
	th_set_rcv_space(h, 5000);
	peer_sends(h, SEG, false);	/* at once */
	assert_int_equal(tcp_rtt_us(c), RTT * 1000);
	th_free(h);
}

/* An application that takes at its own pace, much slower than the round
 * trip: what it took over that time grows the buffer to twice as much,
 * no more. The faster-than-doubling bonus is for a sender in slow start,
 * seen within a round trip. */
static void
test_slow_taker_grows_no_faster_than_it_takes(void **state)
{
	struct th *h = open_with(30000, 1 << 20, 1ull << 30, 0);
	struct tcp_conn *c = h->app.conn;

	(void)state;
	peer_sends(h, 20000, false);	/* held: no room */
	th_advance(h, 10 * RTT);
	th_set_rcv_space(h, 20000);
	assert_int_equal(h->app.got_len, 20000);
	assert_int_equal(c->rcvbuf, 2 * 20000 + 16 * SEG);
	th_free(h);
}

/* The shard's budget bounds what the buffers grow by. */
static void
test_autotuning_within_budget(void **state)
{
	struct th *h = open_with(10000, 120000, 30000, 4000);
	struct tcp_conn *c = h->app.conn;
	uint32_t i;

	(void)state;
	for (i = 0; i < 6; i++)
		round_trip(h);
	assert_int_equal(c->rcvbuf, 10000 + 30000);
	assert_true(h->stats.tcp.rcv_buf_budget_limited >= 1);
	th_free(h);
}

/* Our sending held by the peer's window is timed. */
static void
test_rwnd_limited_time(void **state)
{
	struct th *h = open_with(0, 0, 0, 65535);
	struct th_seg s;
	static char big[20000];

	(void)state;
	/* a window of 4000 bytes: most of a 20000-byte answer waits */
	assert_true(tcp_write(h->ns, h->app.conn, big, sizeof(big)) > 0);
	h->app.conn->snd_wnd = 4000;
	tcp_output(h->ns, h->app.conn);
	net_flush(h->ns);
	th_drain(h);
	assert_true(h->app.conn->rwnd_limited_since_us != 0);
	th_advance(h, 5);
	s = th_seg_from(IRS + 1, iss + 1 + 4000, TCP_ACK);
	s.win = 1024;
	th_inject(h, &s);
	assert_in_range(h->stats.tcp_rwnd_limited_us, 5000, 6000);
	th_free(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_held_beyond_room_then_delivered),
		cmocka_unit_test(test_fin_after_held_data),
		cmocka_unit_test(test_held_offered_while_taken),
		cmocka_unit_test(test_room_pushed_during_the_flush_is_listed),
		cmocka_unit_test(test_window_update_when_it_doubles),
		cmocka_unit_test(test_window_reopens_in_fin_wait_2),
		cmocka_unit_test(test_autotuning_from_no_buffer),
		cmocka_unit_test(test_autotuning_follows_what_is_taken),
		cmocka_unit_test(test_autotuning_within_budget),
		cmocka_unit_test(test_autotuning_past_128_segments),
		cmocka_unit_test(test_window_past_rcv_win_max),
		cmocka_unit_test(test_closed_window_measures_no_round_trip),
		cmocka_unit_test(test_slow_taker_grows_no_faster_than_it_takes),
		cmocka_unit_test(test_rwnd_limited_time),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
