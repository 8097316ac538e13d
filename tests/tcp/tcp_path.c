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
