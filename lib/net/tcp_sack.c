/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sender's side of SACK (RFC 2018): the scoreboard, one entry per
 * segment in flight with what the peer holds (SACK), what is lost and when
 * each was last sent, which drives loss recovery (RFC 6675, RFC 8985). The
 * receiver's side, the queue the SACK blocks we send describe, is
 * tcp_rcvq.c.
 */
#include "tcp_impl.h"

/* Scoreboard ------------------------------------------------------------ */

/* Start of entry i: the previous entry's end, or snd_una. */
static uint32_t
tcp_seg_start(const struct tcp_conn *c, uint32_t i)
{
	return i == 0 ? c->snd_una : tcp_seg_at(c, i - 1)->end;
}

/* Keeps the tallies in step with an entry of len bytes changing flags. */
static void
seg_tally(struct tcp_conn *c, uint8_t flags, uint32_t len, bool add)
{
	uint32_t *t[3] = { NULL, NULL, NULL };
	int k;

	if (flags & TCP_SEG_SACKED) {
		t[0] = &c->sacked_bytes;
	} else {
		if (flags & TCP_SEG_LOST)
			t[1] = &c->lost_bytes;
		if (flags & TCP_SEG_RETRANS)
			t[2] = &c->retrans_bytes;
	}
	for (k = 0; k < 3; k++)
		if (t[k] != NULL)
			*t[k] = add ? *t[k] + len : *t[k] - len;
}

static void
seg_set_flags(struct tcp_conn *c, uint32_t i, uint8_t flags)
{
	struct tcp_seg *s = tcp_seg_at(c, i);
	uint32_t len = s->end - tcp_seg_start(c, i);

	seg_tally(c, s->flags, len, false);
	s->flags = flags;
	seg_tally(c, flags, len, true);
}

/* The first entry ending after seq (nsegs if none): a binary search, the
 * entries being in sequence order. */
static uint32_t
seg_find(const struct tcp_conn *c, uint32_t seq)
{
	uint32_t lo = 0, hi = c->nsegs;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (SEQ_GT(tcp_seg_at(c, mid)->end, seq))
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

struct tcp_seg *
tcp_sb_find(const struct tcp_conn *c, uint32_t seq)
{
	uint32_t i = seg_find(c, seq);

	return i == c->nsegs ? NULL : tcp_seg_at(c, i);
}

/* Makes seq an entry boundary, splitting the entry it falls in (both
 * halves keep its record). false if the scoreboard has no room. */
static bool
seg_split(const struct net_stack *ns, struct tcp_conn *c, uint32_t seq)
{
	uint32_t i = seg_find(c, seq), j;

	if (i == c->nsegs || !SEQ_GT(seq, tcp_seg_start(c, i)))
		return true;
	if (c->nsegs >= ns->cfg.sb_segs)
		return false;
	for (j = c->nsegs; j > i; j--)
		*tcp_seg_at(c, j) = *tcp_seg_at(c, j - 1);
	c->nsegs++;
	tcp_seg_at(c, i)->end = seq;
	return true;
}

void
tcp_seg_sent(struct net_stack *ns, struct tcp_conn *c, uint32_t seq,
		uint32_t end)
{
	uint32_t ring_end = c->nsegs > 0 ?
		tcp_seg_at(c, c->nsegs - 1)->end : c->snd_una;
	uint32_t now = (uint32_t)ns->now_us, i;

	c->xmit_no++;
	if (SEQ_LT(seq, c->snd_una))
		seq = c->snd_una;
	if (SEQ_LT(seq, ring_end)) {	/* a retransmission */
		uint32_t e = SEQ_LT(end, ring_end) ? end : ring_end;

		seg_split(ns, c, seq);
		seg_split(ns, c, e);
		for (i = seg_find(c, seq); i < c->nsegs &&
				SEQ_LT(tcp_seg_start(c, i), e); i++) {
			struct tcp_seg *s = tcp_seg_at(c, i);

			if (s->flags & TCP_SEG_SACKED)
				continue;
			seg_set_flags(c, i, s->flags | TCP_SEG_RETRANS |
					TCP_SEG_EVER_RETRANS);
			s->xmit_us = now;
			s->xmit_no = c->xmit_no;
			tcp_rate_sent(ns, c, s, false);
		}
	}
	if (SEQ_GT(end, ring_end)) {	/* new data */
		struct tcp_seg *s;

		if (c->nsegs >= ns->cfg.sb_segs) {
			/* Never expected (the sender checks for room): keep
			 * the entries covering the flight all the same. */
			tcp_seg_at(c, c->nsegs - 1)->end = end;
			return;
		}
		s = tcp_seg_at(c, c->nsegs++);
		s->end = end;
		s->xmit_us = now;
		s->xmit_no = c->xmit_no;
		s->flags = 0;
		tcp_rate_sent(ns, c, s, c->nsegs == 1);
	}
}

void
tcp_seg_acked(struct net_stack *ns, struct tcp_conn *c, uint32_t ack,
		struct tcp_ack_info *ai)
{
	uint32_t start = c->snd_una;

	while (c->nsegs > 0) {
		struct tcp_seg *s = tcp_seg_at(c, 0);

		if (SEQ_GT(s->end, ack)) {
			/* Partly acknowledged: the rest starts at ack. */
			if (SEQ_GT(ack, start))
				seg_tally(c, s->flags, ack - start, false);
			return;
		}
		if (!(s->flags & TCP_SEG_SACKED)) {
			tcp_rack_delivered(ns, c, s, ai, false);
			tcp_rate_delivered(c, s, s->end - start, ai);
		}
		seg_tally(c, s->flags, s->end - start, false);
		start = s->end;
		c->seg_head = (uint16_t)((c->seg_head + 1) & (TCP_SEG_RING - 1));
		c->nsegs--;
	}
}

uint32_t
tcp_seg_mark_lost_above(struct tcp_conn *c, uint32_t max)
{
	uint32_t i, marked = 0;

	for (i = 0; i < c->nsegs; i++) {
		uint8_t f = tcp_seg_at(c, i)->flags;
		uint32_t len = tcp_seg_at(c, i)->end - tcp_seg_start(c, i);

		if ((f & TCP_SEG_SACKED) || len <= max)
			continue;
		if (!(f & TCP_SEG_LOST) || (f & TCP_SEG_RETRANS))
			marked += len;
		seg_set_flags(c, i, (uint8_t)((f | TCP_SEG_LOST) &
				~TCP_SEG_RETRANS));
	}
	return marked;
}

void
tcp_seg_mark_all_lost(struct tcp_conn *c)
{
	tcp_seg_mark_lost_above(c, 0);
}

void
tcp_seg_unmark_lost(struct tcp_conn *c)
{
	uint32_t i;

	for (i = 0; i < c->nsegs && c->lost_bytes > 0; i++) {
		uint8_t f = tcp_seg_at(c, i)->flags;

		if (f & TCP_SEG_LOST)
			seg_set_flags(c, i, f & (uint8_t)~TCP_SEG_LOST);
	}
}

/* Marks the entries inside [s, e) SACKed; returns the bytes newly so. */
static uint32_t
sack_range(struct net_stack *ns, struct tcp_conn *c, uint32_t s, uint32_t e,
		struct tcp_ack_info *ai)
{
	uint32_t i, n = 0;

	seg_split(ns, c, s);
	seg_split(ns, c, e);
	for (i = seg_find(c, s); i < c->nsegs; i++) {
		struct tcp_seg *g = tcp_seg_at(c, i);
		uint32_t start = tcp_seg_start(c, i);

		if (SEQ_GT(g->end, e))
			break;		/* beyond, or only partly covered */
		if (SEQ_LT(start, s) || (g->flags & TCP_SEG_SACKED))
			continue;
		tcp_rack_delivered(ns, c, g, ai, true);
		tcp_rate_delivered(c, g, g->end - start, ai);
		seg_set_flags(c, i, TCP_SEG_SACKED |
				(g->flags & TCP_SEG_EVER_RETRANS));
		n += g->end - start;
	}
	return n;
}

uint32_t
tcp_sack_update(struct net_stack *ns, struct tcp_conn *c,
		const struct tcp_options *o, uint32_t ack, bool *dsack,
		struct tcp_ack_info *ai)
{
	uint32_t newly = 0;
	unsigned int i;

	for (i = 0; i < o->nsack; i++) {
		uint32_t s = o->sack[i][0], e = o->sack[i][1];

		ns->stats->tcp.sack_blocks_in++;
		/* Not a block of ours: reversed, or longer than any window
		 * the peer offered (Linux's tcp_is_sackblock_valid()). */
		if (!SEQ_LT(s, e) || e - s > c->max_sndwnd)
			continue;
		/* A D-SACK (RFC 2883): below the ACK, or the first block
		 * inside the second. */
		if (SEQ_LEQ(e, ack) || (i == 0 && o->nsack > 1 &&
				SEQ_GEQ(s, o->sack[1][0]) &&
				SEQ_LEQ(e, o->sack[1][1]))) {
			ns->stats->tcp.dsacks_in++;
			*dsack = true;
			tcp_undo_dsack(c, s, e);
			continue;
		}
		/* A block must lie in what we sent and above the ACK. */
		if (SEQ_GT(e, c->snd_max) || SEQ_LT(s, c->snd_una))
			continue;
		newly += sack_range(ns, c, SEQ_LT(s, ack) ? ack : s, e, ai);
	}
	return newly;
}

bool
tcp_seg_last_unsacked(struct tcp_conn *c, uint32_t *start, uint32_t *end)
{
	uint32_t i = c->nsegs;

	while (i-- > 0) {
		if (!(tcp_seg_at(c, i)->flags & TCP_SEG_SACKED)) {
			*start = tcp_seg_start(c, i);
			*end = tcp_seg_at(c, i)->end;
			return true;
		}
	}
	return false;
}

bool
tcp_seg_next_lost(struct tcp_conn *c, struct tcp_seg **cur, uint32_t *start,
		uint32_t *end)
{
	struct tcp_seg *s = *cur == NULL ? tcp_sb_first(c) :
		tcp_sb_next(c, *cur);

	for (; s != NULL; s = tcp_sb_next(c, s)) {
		if ((s->flags & (TCP_SEG_SACKED | TCP_SEG_LOST |
				TCP_SEG_RETRANS)) == TCP_SEG_LOST) {
			*cur = s;
			*start = tcp_sb_start(c, s);
			*end = s->end;
			return true;
		}
	}
	return false;
}

/* Checks ------------------------------------------------------------------ */

const char *
tcp_sb_check(const struct tcp_conn *c)
{
	uint32_t sacked = 0, lost = 0, retrans = 0, start = c->snd_una;
	const struct tcp_seg *s;

	if (tcp_sb_count(c) > TCP_SEG_RING)
		return "more entries than the ring holds";
	if (tcp_sb_count(c) > 0 && c->segs == NULL)
		return "entries without a ring";
	for (s = tcp_sb_first(c); s != NULL; s = tcp_sb_next(c, s)) {
		uint32_t len = s->end - start;

		if (!SEQ_GT(s->end, start))
			return "an entry empty or out of order";
		if (SEQ_GT(s->end, c->snd_max))
			return "an entry beyond snd_max";
		if (s->flags & TCP_SEG_SACKED)
			sacked += len;
		else {
			lost += (s->flags & TCP_SEG_LOST) ? len : 0;
			retrans += (s->flags & TCP_SEG_RETRANS) ? len : 0;
		}
		start = s->end;
	}
	/* Before the SYN is acknowledged it alone is in flight, unrecorded. */
	if (start != c->snd_max && c->snd_una != c->iss)
		return "entries not reaching snd_max";
	if (sacked != c->sacked_bytes)
		return "sacked_bytes differs from the entries";
	if (lost != c->lost_bytes)
		return "lost_bytes differs from the entries";
	if (retrans != c->retrans_bytes)
		return "retrans_bytes differs from the entries";
	return NULL;
}
