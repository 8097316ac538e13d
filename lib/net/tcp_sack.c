/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sender's side of SACK (RFC 2018): the scoreboard, one entry per
 * segment in flight with what the peer holds (SACK), what is lost and when
 * each was last sent, which drives loss recovery (RFC 6675, RFC 8985). The
 * receiver's side, the queue the SACK blocks we send describe, is
 * tcp_rcvq.c.
 */
#include <string.h>

#include "tcp_impl.h"

/* Scoreboard ------------------------------------------------------------ */

RB_GENERATE(tcp_sb_tree, tcp_seg, by_seq, tcp_seg_cmp)

/* Whether RACK times an entry: in flight as far as it knows, neither
 * SACKed nor marked lost and waiting to be resent. */
static bool
timed(uint8_t flags)
{
	return !(flags & TCP_SEG_SACKED) &&
		(flags & (TCP_SEG_LOST | TCP_SEG_RETRANS)) != TCP_SEG_LOST;
}

/* The send-order list ------------------------------------------------- */

static void
sent_unlink(struct tcp_sb *sb, struct tcp_seg *s)
{
	if (!s->timed)
		return;
	if (s->sent_prev != NULL)
		s->sent_prev->sent_next = s->sent_next;
	else
		sb->sent_first = s->sent_next;
	if (s->sent_next != NULL)
		s->sent_next->sent_prev = s->sent_prev;
	else
		sb->sent_last = s->sent_prev;
	s->timed = false;
}

/* After prev (NULL: first). */
static void
sent_link_after(struct tcp_sb *sb, struct tcp_seg *prev, struct tcp_seg *s)
{
	s->sent_prev = prev;
	s->sent_next = prev != NULL ? prev->sent_next : sb->sent_first;
	if (s->sent_next != NULL)
		s->sent_next->sent_prev = s;
	else
		sb->sent_last = s;
	if (prev != NULL)
		prev->sent_next = s;
	else
		sb->sent_first = s;
	s->timed = true;
}

/* Sent just now: the newest transmission. */
static void
sent_to_tail(struct tcp_sb *sb, struct tcp_seg *s)
{
	sent_unlink(sb, s);
	sent_link_after(sb, sb->sent_last, s);
}

/* The list again from the entries, in transmission order: after lost
 * marks are taken back (an undo), whose entries must return to the place
 * of their last transmission. A merge sort of the list, rare enough. */
static struct tcp_seg *
sent_merge(struct tcp_seg *a, struct tcp_seg *b)
{
	struct tcp_seg head = { .sent_next = NULL }, *t = &head;

	while (a != NULL && b != NULL) {
		struct tcp_seg **from =
			(int32_t)(b->xmit_no - a->xmit_no) < 0 ? &b : &a;

		t->sent_next = *from;
		t = *from;
		*from = (*from)->sent_next;
	}
	t->sent_next = a != NULL ? a : b;
	return head.sent_next;
}

static struct tcp_seg *
sent_sort(struct tcp_seg *l)
{
	struct tcp_seg *slow = l, *fast, *half;

	if (l == NULL || l->sent_next == NULL)
		return l;
	for (fast = l->sent_next; fast != NULL && fast->sent_next != NULL;
			fast = fast->sent_next->sent_next)
		slow = slow->sent_next;
	half = slow->sent_next;
	slow->sent_next = NULL;
	return sent_merge(sent_sort(l), sent_sort(half));
}

static void
sent_rebuild(struct tcp_conn *c)
{
	struct tcp_sb *sb = c->sb;
	struct tcp_seg *s, *list = NULL, *prev = NULL;

	for (s = sb->last; s != NULL; s = tcp_sb_prev(c, s)) {
		s->timed = timed(s->flags);
		if (s->timed) {
			s->sent_next = list;
			list = s;
		}
	}
	sb->sent_first = sent_sort(list);
	for (s = sb->sent_first; s != NULL; s = s->sent_next) {
		s->sent_prev = prev;
		prev = s;
	}
	sb->sent_last = prev;
}

/* Entries --------------------------------------------------------------- */

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

/* New flags for an entry: the tallies, RACK's list and the resend
 * walk's hint follow. */
static void
seg_set_flags(struct tcp_conn *c, struct tcp_seg *s, uint8_t flags)
{
	struct tcp_sb *sb = c->sb;
	uint32_t len = s->end - s->start;

	seg_tally(c, s->flags, len, false);
	s->flags = flags;
	seg_tally(c, flags, len, true);
	if (!timed(flags))
		sent_unlink(sb, s);
	else if (!s->timed)
		sent_to_tail(sb, s);
	if ((flags & (TCP_SEG_SACKED | TCP_SEG_LOST | TCP_SEG_RETRANS)) ==
			TCP_SEG_LOST && sb->lost_hint != NULL &&
			SEQ_LT(s->start, sb->lost_hint->start))
		sb->lost_hint = s;
}

static struct tcp_seg *
seg_new(struct net_stack *ns, struct tcp_conn *c)
{
	struct tcp_seg *s = blk_pool_get(&ns->sb_nodes);

	if (s == NULL)
		return NULL;
	c->nsegs++;
	ns->stats->tcp_sb_entries_made = ns->sb_nodes.made;
	ns->stats->tcp_sb_entries_used++;
	return s;
}

/* Takes the first entry out (acknowledged). */
static void
seg_free_first(struct net_stack *ns, struct tcp_conn *c)
{
	struct tcp_sb *sb = c->sb;
	struct tcp_seg *s = sb->first;

	sb->first = tcp_sb_next(c, s);
	if (sb->first == NULL)
		sb->last = NULL;
	if (sb->lost_hint == s)
		sb->lost_hint = NULL;
	sent_unlink(sb, s);
	RB_REMOVE(tcp_sb_tree, &sb->tree, s);
	blk_pool_put(&ns->sb_nodes, s);
	c->nsegs--;
	ns->stats->tcp_sb_entries_used--;
}

void
tcp_sb_clear(struct net_stack *ns, struct tcp_conn *c)
{
	while (c->sb != NULL && c->sb->first != NULL)
		seg_free_first(ns, c);
}

bool
tcp_seg_room(struct net_stack *ns, const struct tcp_conn *c)
{
	return c->nsegs < ns->cfg.sb_segs && blk_pool_ready(&ns->sb_nodes);
}

/* The entry holding seq, else the first after it; NULL if none: down the
 * tree to the last entry starting at or before seq. */
struct tcp_seg *
tcp_sb_find(const struct tcp_conn *c, uint32_t seq)
{
	struct tcp_seg *x, *best = NULL;

	if (c->sb == NULL)
		return NULL;
	for (x = RB_ROOT(&c->sb->tree); x != NULL;) {
		if (SEQ_LEQ(x->start, seq)) {
			best = x;
			x = RB_RIGHT(x, by_seq);
		} else {
			x = RB_LEFT(x, by_seq);
		}
	}
	if (best == NULL)
		return c->sb->first;
	return SEQ_GT(best->end, seq) ? best : tcp_sb_next(c, best);
}

/* Makes seq an entry boundary, splitting the entry it falls in (both
 * halves keep its record; the second follows the first in RACK's list).
 * false if there is no entry for the second half. */
static bool
seg_split(struct net_stack *ns, struct tcp_conn *c, uint32_t seq)
{
	struct tcp_seg *s = tcp_sb_find(c, seq), *t;

	if (s == NULL || !SEQ_GT(seq, s->start))
		return true;
	if (c->nsegs >= ns->cfg.sb_segs || (t = seg_new(ns, c)) == NULL)
		return false;
	*t = *s;
	t->start = seq;
	s->end = seq;
	t->timed = false;
	if (s->timed)
		sent_link_after(c->sb, s, t);
	RB_INSERT(tcp_sb_tree, &c->sb->tree, t);
	if (c->sb->last == s)
		c->sb->last = t;
	return true;
}

/* Records a transmission of the entry: now, the newest. */
static void
seg_stamp(struct net_stack *ns, struct tcp_conn *c, struct tcp_seg *s)
{
	s->xmit_us = (uint32_t)ns->now_us;
	s->xmit_no = c->xmit_no;
	sent_to_tail(c->sb, s);
}

void
tcp_seg_sent(struct net_stack *ns, struct tcp_conn *c, uint32_t seq,
		uint32_t end, uint16_t unit)
{
	struct tcp_sb *sb = c->sb;
	uint32_t sb_end = sb->last != NULL ? sb->last->end : c->snd_una;
	struct tcp_seg *s;

	c->xmit_no++;
	if (SEQ_LT(seq, c->snd_una))
		seq = c->snd_una;
	if (SEQ_LT(seq, sb_end)) {	/* a retransmission */
		uint32_t e = SEQ_LT(end, sb_end) ? end : sb_end;

		seg_split(ns, c, seq);
		seg_split(ns, c, e);
		for (s = tcp_sb_find(c, seq); s != NULL &&
				SEQ_LT(s->start, e); s = tcp_sb_next(c, s)) {
			if (s->flags & TCP_SEG_SACKED)
				continue;
			seg_set_flags(c, s, s->flags | TCP_SEG_RETRANS |
					TCP_SEG_EVER_RETRANS);
			seg_stamp(ns, c, s);
			tcp_rate_sent(ns, c, s, false);
		}
	}
	if (!SEQ_GT(end, sb_end))
		return;
	/* New data. tcp_seg_room() was asked before it went: an entry is
	 * there. Should one not be, the last covers it, so that the
	 * entries still cover the flight. */
	s = c->nsegs < ns->cfg.sb_segs ? seg_new(ns, c) : NULL;
	if (s == NULL) {
		seg_tally(c, sb->last->flags, end - sb->last->end, true);
		sb->last->end = end;
		return;
	}
	memset(s, 0, sizeof(*s));
	s->start = sb_end;
	s->end = end;
	s->unit = unit;
	RB_INSERT(tcp_sb_tree, &sb->tree, s);
	if (sb->first == NULL)
		sb->first = s;
	sb->last = s;
	seg_stamp(ns, c, s);
	tcp_rate_sent(ns, c, s, c->nsegs == 1);
}

void
tcp_seg_acked(struct net_stack *ns, struct tcp_conn *c, uint32_t ack,
		struct tcp_ack_info *ai)
{
	struct tcp_seg *s;

	while ((s = tcp_sb_first(c)) != NULL && SEQ_GT(ack, s->start)) {
		uint32_t upto = SEQ_LT(ack, s->end) ? ack : s->end;

		if (!(s->flags & TCP_SEG_SACKED)) {
			tcp_rack_delivered(ns, c, s, upto, ai, false);
			tcp_rate_delivered(c, s, upto - s->start, ai);
		}
		seg_tally(c, s->flags, upto - s->start, false);
		if (upto != s->end) {
			/* Partly acknowledged: the rest starts at ack (the
			 * tree's order stays). */
			s->start = upto;
			return;
		}
		seg_free_first(ns, c);
	}
}

uint32_t
tcp_seg_mark_lost(struct tcp_conn *c, struct tcp_seg *s)
{
	uint32_t len = s->end - s->start, was = s->flags;

	seg_set_flags(c, s, (uint8_t)((s->flags | TCP_SEG_LOST) &
			~TCP_SEG_RETRANS));
	return (!(was & TCP_SEG_LOST) || (was & TCP_SEG_RETRANS)) ? len : 0;
}

uint32_t
tcp_seg_mark_lost_above(struct tcp_conn *c, uint32_t max)
{
	struct tcp_seg *s;
	uint32_t marked = 0;

	for (s = tcp_sb_first(c); s != NULL; s = tcp_sb_next(c, s))
		if (!(s->flags & TCP_SEG_SACKED) && s->end - s->start > max)
			marked += tcp_seg_mark_lost(c, s);
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
	struct tcp_seg *s;

	for (s = tcp_sb_first(c); s != NULL && c->lost_bytes > 0;
			s = tcp_sb_next(c, s))
		if (s->flags & TCP_SEG_LOST)
			seg_set_flags(c, s, s->flags & (uint8_t)~TCP_SEG_LOST);
	if (c->sb != NULL)
		sent_rebuild(c);
}

/* Where a SACK block's edge splits the entry it falls in: at a whole
 * segment from the entry's start (of the size its TSO frame was cut
 * into, else a full one), up for a block's start, down for its end
 * (Linux's tcp_match_skb_to_sack()). A block that covers part of a
 * segment SACKs none of it, and a peer's blocks cannot cut the flight
 * into more entries than it has segments. */
static uint32_t
sack_edge(const struct tcp_conn *c, uint32_t seq, bool up)
{
	const struct tcp_seg *g = tcp_sb_find(c, seq);
	uint32_t unit, off, k;

	if (g == NULL || !SEQ_GT(seq, g->start))
		return seq;
	unit = g->unit != 0 ? g->unit : tcp_seg_full(c);
	off = seq - g->start;
	k = off / unit + (up && off % unit != 0);
	return k * unit < g->end - g->start ? g->start + k * unit :
		(up ? g->end : g->start);
}

/* Marks the entries inside [s, e), entry boundaries both, SACKed;
 * returns the bytes newly so. *whole false if an edge could not be made
 * (no entry for a split): part of the range is left unmarked. */
static uint32_t
sack_range(struct net_stack *ns, struct tcp_conn *c, uint32_t s, uint32_t e,
		struct tcp_ack_info *ai, bool *whole)
{
	struct tcp_seg *g;
	uint32_t n = 0;

	if (!seg_split(ns, c, s) || !seg_split(ns, c, e))
		*whole = false;
	for (g = tcp_sb_find(c, s); g != NULL; g = tcp_sb_next(c, g)) {
		if (SEQ_GT(g->end, e))
			break;		/* beyond, or only partly covered */
		if (SEQ_LT(g->start, s) || (g->flags & TCP_SEG_SACKED))
			continue;
		tcp_rack_delivered(ns, c, g, g->end, ai, true);
		tcp_rate_delivered(c, g, g->end - g->start, ai);
		seg_set_flags(c, g, TCP_SEG_SACKED |
				(g->flags & TCP_SEG_EVER_RETRANS));
		n += g->end - g->start;
	}
	return n;
}

/* [s, e) less what the last ACK's blocks covered (SACKed then, and SACKs
 * are never taken back): a receiver's block mostly grows at one end, and
 * only its new part is walked. */
static uint32_t
sack_new_parts(struct net_stack *ns, struct tcp_conn *c, uint32_t s,
		uint32_t e, struct tcp_ack_info *ai, bool *whole)
{
	const struct tcp_sb *sb = c->sb;
	uint32_t n = 0;

	while (SEQ_LT(s, e)) {
		uint32_t to = e;
		unsigned int k;

		for (k = 0; k < sb->n_sack_cache; k++) {
			const struct tcp_block *b = &sb->sack_cache[k];

			if (SEQ_LEQ(b->start, s) && SEQ_LT(s, b->end))
				break;		/* s is inside: skip to its end */
			if (SEQ_LT(s, b->start) && SEQ_LT(b->start, to))
				to = b->start;	/* new up to the next one */
		}
		if (k < sb->n_sack_cache) {
			s = sb->sack_cache[k].end;
			continue;
		}
		n += sack_range(ns, c, s, to, ai, whole);
		s = to;
	}
	return n;
}

uint32_t
tcp_sack_update(struct net_stack *ns, struct tcp_conn *c,
		const struct tcp_options *o, uint32_t ack, bool *dsack,
		struct tcp_ack_info *ai)
{
	struct tcp_block now[TCP_MAX_SACK];
	uint32_t newly = 0;
	unsigned int i, n = 0;

	for (i = 0; i < o->nsack; i++) {
		uint32_t s = o->sack[i][0], e = o->sack[i][1];
		bool whole = true;

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
		s = sack_edge(c, SEQ_LT(s, ack) ? ack : s, true);
		e = sack_edge(c, e, false);
		if (!SEQ_LT(s, e))
			continue;
		newly += sack_new_parts(ns, c, s, e, ai, &whole);
		if (whole) {	/* a block not marked whole is not skipped */
			now[n].start = s;
			now[n++].end = e;
		}
	}
	if (c->sb != NULL) {	/* none: nothing in flight, no block kept */
		memcpy(c->sb->sack_cache, now, sizeof(now));
		c->sb->n_sack_cache = (uint8_t)n;
	}
	return newly;
}

bool
tcp_seg_last_unsacked(struct tcp_conn *c, uint32_t *start, uint32_t *end)
{
	struct tcp_seg *s;

	for (s = tcp_sb_last(c); s != NULL; s = tcp_sb_prev(c, s)) {
		if (!(s->flags & TCP_SEG_SACKED)) {
			*start = s->start;
			*end = s->end;
			return true;
		}
	}
	return false;
}

bool
tcp_seg_next_lost(struct tcp_conn *c, struct tcp_seg **cur, uint32_t *start,
		uint32_t *end)
{
	struct tcp_sb *sb = c->sb;
	struct tcp_seg *s;

	if (*cur != NULL)
		s = tcp_sb_next(c, *cur);
	else
		s = sb->lost_hint != NULL ? sb->lost_hint : sb->first;
	for (; s != NULL; s = tcp_sb_next(c, s)) {
		if ((s->flags & (TCP_SEG_SACKED | TCP_SEG_LOST |
				TCP_SEG_RETRANS)) == TCP_SEG_LOST) {
			if (*cur == NULL)
				sb->lost_hint = s;	/* none below */
			*cur = s;
			*start = s->start;
			*end = s->end;
			return true;
		}
	}
	if (*cur == NULL)
		sb->lost_hint = sb->last;	/* none at all */
	return false;
}

/* Checks ------------------------------------------------------------------ */

const char *
tcp_sb_check(const struct tcp_conn *c)
{
	uint32_t sacked = 0, lost = 0, retrans = 0, start = c->snd_una, n = 0;
	const struct tcp_seg *prev = NULL;
	struct tcp_seg *s;

	if (c->sb == NULL)
		return c->nsegs == 0 ? NULL : "entries without a scoreboard";
	if (c->sb->first != RB_MIN(tcp_sb_tree, &c->sb->tree) ||
			c->sb->last != RB_MAX(tcp_sb_tree, &c->sb->tree))
		return "first or last is not the tree's";
	for (s = tcp_sb_first(c); s != NULL; s = tcp_sb_next(c, s)) {
		uint32_t len = s->end - s->start;

		if (s->start != start || !SEQ_GT(s->end, start))
			return "an entry empty, out of order or after a gap";
		if (SEQ_GT(s->end, c->snd_max))
			return "an entry beyond snd_max";
		if (s->timed != timed(s->flags))
			return "RACK's list and the flags disagree";
		if (s->flags & TCP_SEG_SACKED)
			sacked += len;
		else {
			lost += (s->flags & TCP_SEG_LOST) ? len : 0;
			retrans += (s->flags & TCP_SEG_RETRANS) ? len : 0;
		}
		if (c->sb->lost_hint != NULL && (s->flags & (TCP_SEG_SACKED |
				TCP_SEG_LOST | TCP_SEG_RETRANS)) == TCP_SEG_LOST &&
				SEQ_LT(s->start, c->sb->lost_hint->start))
			return "a lost entry below the resend walk's hint";
		start = s->end;
		n++;
	}
	if (n != c->nsegs)
		return "the count differs from the entries";
	/* Before the SYN is acknowledged it alone is in flight, unrecorded. */
	if (start != c->snd_max && c->snd_una != c->iss)
		return "entries not reaching snd_max";
	for (s = c->sb->sent_first; s != NULL; prev = s, s = s->sent_next) {
		if (!s->timed || s->sent_prev != prev)
			return "RACK's list is broken";
		if (prev != NULL && (int32_t)(s->xmit_no - prev->xmit_no) < 0)
			return "RACK's list is out of transmission order";
	}
	if (c->sb->sent_last != prev)
		return "RACK's list's last is not its end";
	if (sacked != c->sacked_bytes)
		return "sacked_bytes differs from the entries";
	if (lost != c->lost_bytes)
		return "lost_bytes differs from the entries";
	if (retrans != c->retrans_bytes)
		return "retrans_bytes differs from the entries";
	return NULL;
}
