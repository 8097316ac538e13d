/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "tcp_path.h"

#define TP_IRS 7000000u
#define TP_PORT 42000

static void
peer_options(struct tp *p, struct th_seg *s)
{
	if (p->ts)
		th_opt_ts(s, p->ts_val++, p->ts_ecr);
}

struct th *
tp_open(struct tp *p, const struct tcp_config *cfg, uint64_t rtt_us,
		uint32_t warm, bool ts)
{
	struct th_seg s = { .sport = TP_PORT, .seq = TP_IRS, .flags = TCP_SYN,
		.win = 65535 };
	struct th_out o;
	uint32_t i;

	memset(p, 0, sizeof(*p));
	p->h = th_new(cfg);
	p->irs = TP_IRS;
	p->port = TP_PORT;
	p->ts = ts;
	p->ts_val = 1;
	/* With timestamps, room for the option: segments of TP_MSS all
	 * the same. */
	th_opt_mss(&s, ts ? TP_MSS + TCP_TS_LEN : TP_MSS);
	th_opt_sack_ok(&s);
	if (ts)
		th_opt_ts(&s, p->ts_val++, 0);
	th_inject(p->h, &s);
	assert_true(th_next(p->h, &o));
	p->iss = o.t.seq;
	if (ts)
		p->ts_ecr = o.t.opt.ts_val;
	th_advance_us(p->h, rtt_us);
	tp_ack(p, p->iss + 1, 0, 0);
	assert_int_equal(p->h->app.accepted, 1);
	p->c = p->h->app.conn;
	assert_true(p->c->flags & TCP_F_OPT_SACK);
	if (warm == 0)
		return p->h;
	tp_write(p, warm * TP_MSS);
	assert_int_equal(tp_sent(p, NULL), warm);
	th_advance_us(p->h, rtt_us);
	for (i = 1; i <= warm; i++)
		tp_ack(p, tp_seq(p, i), 0, 0);
	assert_int_equal(th_pending(p->h), 0);
	return p->h;
}

uint32_t
tp_seq(const struct tp *p, uint32_t i)
{
	return p->iss + 1 + i * TP_MSS;
}

void
tp_ack_blocks(struct tp *p, uint32_t ack, const uint32_t (*blocks)[2], int n)
{
	struct th_seg s = { .sport = p->port, .seq = p->irs + 1, .ack = ack,
		.flags = TCP_ACK, .win = 65535 };
	uint32_t b[4][2];
	int i;

	peer_options(p, &s);
	for (i = 0; i < n; i++) {
		b[i][0] = tp_seq(p, blocks[i][0]);
		b[i][1] = tp_seq(p, blocks[i][1]);
	}
	if (n > 0)
		th_opt_sack(&s, (const uint32_t (*)[2])b, n);
	th_inject(p->h, &s);
}

void
tp_ack(struct tp *p, uint32_t ack, uint32_t from, uint32_t to)
{
	uint32_t b[1][2] = { { from, to } };

	tp_ack_blocks(p, ack, (const uint32_t (*)[2])b, to > from ? 1 : 0);
}

void
tp_write(struct tp *p, uint32_t n)
{
	static char buf[256 * 1024];

	assert_true(n <= sizeof(buf));
	assert_int_equal(tcp_write(p->h->ns, p->h->app.conn, buf, n), n);
	tcp_output(p->h->ns, p->h->app.conn);
	net_flush(p->h->ns);
}

unsigned int
tp_sent(struct tp *p, uint32_t *last)
{
	struct th_out o;
	unsigned int n = 0;

	while (th_next(p->h, &o)) {
		if (p->ts && o.t.opt.has_ts)
			p->ts_ecr = o.t.opt.ts_val;
		if (o.t.len == 0)
			continue;
		if (last != NULL)
			*last = o.t.seq;
		n++;
	}
	return n;
}

uint64_t
tp_quiet_for_us(struct tp *p)
{
	uint64_t t0 = p->h->now_us;

	while (th_pending(p->h) == 0 && p->h->now_us - t0 < 1000000)
		th_advance_us(p->h, 1);
	return p->h->now_us - t0;
}

/* The path simulator ------------------------------------------------- */

void
tp_sim_init(struct tp_sim *s, struct tp *p, uint64_t rate, uint32_t rtt_us,
		uint32_t first)
{
	memset(s, 0, sizeof(*s));
	s->p = p;
	s->rate = rate;
	s->rtt_us = rtt_us;
	s->rcv_next = first;
	s->rcv_hi = first;
}

uint64_t
tp_sim_delivered(const struct tp_sim *s)
{
	return (uint64_t)s->rcv_next * TP_MSS;
}

/* The receiver takes segment seg; its ACK leaves (and arrives at_us). */
static void
sim_receive(struct tp_sim *s, uint32_t seg, uint64_t at_us)
{
	struct tp_sim_ack *a;
	bool dup = seg < s->rcv_next || s->got[seg];
	uint32_t i;

	assert_true(s->ack_n < TP_SIM_ACKS);
	a = &s->acks[(s->ack_head + s->ack_n++) % TP_SIM_ACKS];
	a->at_us = at_us;
	a->n = 0;
	if (dup) {		/* RFC 2883 */
		a->blocks[0][0] = seg;
		a->blocks[0][1] = seg + 1;
		a->n = 1;
	} else {
		s->got[seg] = 1;
		if (seg + 1 > s->rcv_hi)
			s->rcv_hi = seg + 1;
		while (s->rcv_next < s->rcv_hi && s->got[s->rcv_next])
			s->rcv_next++;
	}
	a->ack = s->rcv_next;
	/* SACK blocks (RFC 2018 4): the D-SACK, else the block holding the
	 * segment that came, first; then the others from the highest. */
	for (i = s->rcv_hi; i > s->rcv_next && a->n < 4;) {
		uint32_t start, end;

		while (i > s->rcv_next && !s->got[i - 1])
			i--;
		end = i;
		while (i > s->rcv_next && s->got[i - 1])
			i--;
		start = i;
		if (start == end)
			break;
		if (!dup && seg >= start && seg < end) {
			/* the newest arrival's block goes first */
			memmove(a->blocks[1], a->blocks[0], a->n * sizeof(a->blocks[0]));
			a->blocks[0][0] = start;
			a->blocks[0][1] = end;
		} else {
			a->blocks[a->n][0] = start;
			a->blocks[a->n][1] = end;
		}
		a->n++;
	}
}

/* The segments the stack sent: through the bottleneck, or dropped. */
static void
sim_capture(struct tp_sim *s)
{
	struct th *h = s->p->h;
	struct th_out o;

	while (th_next(h, &o)) {
		uint32_t seg, tx;
		uint64_t depart;

		if (o.t.len == 0)
			continue;
		seg = (o.t.seq - s->p->iss - 1) / TP_MSS;
		assert_true(seg + 1 < TP_SIM_SEGS);
		tx = s->sent[seg] < UINT8_MAX ? s->sent[seg]++ : s->sent[seg];
		if (s->last_send_us != 0 && o.at_us > s->last_send_us)
			s->gaps++;
		s->last_send_us = o.at_us;
		if (s->drop != NULL && s->drop(s, seg, tx)) {
			s->dropped++;
			continue;
		}
		depart = RTE_MAX(o.at_us, s->link_free_us) +
			(uint64_t)o.t.len * 1000000 / s->rate;
		s->link_free_us = depart;
		if ((depart - o.at_us) * s->rate / 1000000 > s->max_queue)
			s->max_queue = (depart - o.at_us) * s->rate / 1000000;
		sim_receive(s, seg, depart + s->rtt_us);
	}
	th_drain(h);
}

/* Keeps a few hundred KB queued at the sender. */
static void
sim_supply(struct tp_sim *s)
{
	static char buf[64 * 1024];
	struct tcp_conn *c = s->p->h->app.conn;
	uint32_t room = tcp_send_space(s->p->h->ns, c);

	if (room < sizeof(buf))
		return;
	tcp_write(s->p->h->ns, c, buf, sizeof(buf));
	tcp_output(s->p->h->ns, c);
}

void
tp_sim_run(struct tp_sim *s, uint64_t us)
{
	struct th *h = s->p->h;
	uint64_t end = h->now_us + us;

	while (h->now_us < end) {
		uint64_t next = (h->now_us / 1000 + 1) * 1000;

		if (s->ack_n > 0)
			next = RTE_MIN(next, s->acks[s->ack_head].at_us);
		if (h->ns->pace_n > 0)
			next = RTE_MIN(next, h->ns->pace[0].at_us);
		next = RTE_MAX(RTE_MIN(next, end), h->now_us + 1);
		h->now_us = next;
		h->now = next / 1000;
		net_timers_us(h->ns, next);
		net_flush(h->ns);
		while (s->ack_n > 0 && s->acks[s->ack_head].at_us <= h->now_us) {
			struct tp_sim_ack *a = &s->acks[s->ack_head];

			tp_ack_blocks(s->p, tp_seq(s->p, a->ack),
					(const uint32_t (*)[2])a->blocks, a->n);
			s->ack_head = (s->ack_head + 1) % TP_SIM_ACKS;
			s->ack_n--;
		}
		sim_supply(s);
		net_flush(h->ns);
		sim_capture(s);
	}
}
