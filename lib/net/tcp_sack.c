/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Both sides of SACK (RFC 2018): the scoreboard of what the peer holds
 * above snd_una, which drives loss recovery (RFC 6675); and our queue of
 * out-of-order segments, which the SACK blocks we send describe.
 */
#include <string.h>

#include <rte_mbuf.h>

#include "tcp_impl.h"

/* Scoreboard ------------------------------------------------------------ */

static void
sb_remove(struct tcp_conn *c, unsigned int i)
{
	memmove(&c->sacked[i], &c->sacked[i + 1],
			(c->nsacked - i - 1) * sizeof(c->sacked[0]));
	c->nsacked--;
}

/* Inserts [s, e) into the sorted, disjoint block list, merging. */
static void
sb_insert(struct tcp_conn *c, uint32_t s, uint32_t e)
{
	unsigned int i = 0;

	while (i < c->nsacked && SEQ_LT(c->sacked[i].end, s))
		i++;
	/* Merge every block that touches [s, e). */
	while (i < c->nsacked && SEQ_LEQ(c->sacked[i].start, e)) {
		if (SEQ_LT(c->sacked[i].start, s))
			s = c->sacked[i].start;
		if (SEQ_GT(c->sacked[i].end, e))
			e = c->sacked[i].end;
		sb_remove(c, i);
	}
	if (c->nsacked == TCP_SACK_HOLES) {
		/* Full: the highest block matters least for recovery. */
		if (i == c->nsacked)
			return;
		c->nsacked--;
	}
	memmove(&c->sacked[i + 1], &c->sacked[i],
			(c->nsacked - i) * sizeof(c->sacked[0]));
	c->sacked[i].start = s;
	c->sacked[i].end = e;
	c->nsacked++;
}

void
tcp_sack_update(struct net_stack *ns, struct tcp_conn *c,
		const struct tcp_options *o, uint32_t ack)
{
	unsigned int i;

	for (i = 0; i < o->nsack; i++) {
		uint32_t s = o->sack[i][0], e = o->sack[i][1];

		ns->stats->tcp.sack_blocks_in++;
		if (SEQ_LEQ(e, ack)) {	/* a D-SACK (RFC 2883) or stale */
			ns->stats->tcp.dsacks_in++;
			continue;
		}
		/* A block must lie in what we sent and above the ACK. */
		if (!SEQ_LT(s, e) || SEQ_GT(e, c->snd_max) ||
				SEQ_LT(s, c->snd_una))
			continue;
		sb_insert(c, SEQ_LT(s, ack) ? ack : s, e);
	}
	/* Forget what the cumulative ACK now covers. */
	while (c->nsacked > 0 && SEQ_LEQ(c->sacked[0].end, ack))
		sb_remove(c, 0);
	if (c->nsacked > 0 && SEQ_LT(c->sacked[0].start, ack))
		c->sacked[0].start = ack;
}

uint32_t
tcp_sack_bytes(const struct tcp_conn *c)
{
	uint32_t n = 0;
	unsigned int i;

	for (i = 0; i < c->nsacked; i++)
		n += c->sacked[i].end - c->sacked[i].start;
	return n;
}

uint32_t
tcp_sack_high(const struct tcp_conn *c)
{
	return c->nsacked > 0 ? c->sacked[c->nsacked - 1].end : c->snd_una;
}

bool
tcp_sack_hole(const struct tcp_conn *c, uint32_t from, uint32_t *start,
		uint32_t *len)
{
	uint32_t pos = SEQ_LT(from, c->snd_una) ? c->snd_una : from;
	unsigned int i;

	for (i = 0; i < c->nsacked; i++) {
		if (SEQ_LEQ(c->sacked[i].end, pos))
			continue;
		if (SEQ_LT(pos, c->sacked[i].start)) {
			*start = pos;
			*len = c->sacked[i].start - pos;
			return true;
		}
		pos = c->sacked[i].end;
	}
	return false;	/* nothing unSACKed below the highest block */
}

/* Moves *seq past a SACKed block it lies in; *limit gets the start of the
 * next SACKed block above it (true), if any. */
bool
tcp_sack_skip(const struct tcp_conn *c, uint32_t *seq, uint32_t *limit)
{
	unsigned int i;

	for (i = 0; i < c->nsacked; i++) {
		if (SEQ_LEQ(c->sacked[i].end, *seq))
			continue;
		if (SEQ_LEQ(c->sacked[i].start, *seq)) {
			*seq = c->sacked[i].end;
			continue;
		}
		*limit = c->sacked[i].start;
		return true;
	}
	return false;
}

/* RFC 6675 SetPipe, simplified: holes below the highest SACK count as lost
 * unless retransmitted (below high_rxt); what lies above it is in flight. */
uint32_t
tcp_sack_pipe(const struct tcp_conn *c)
{
	uint32_t high = tcp_sack_high(c), pipe = 0, start, len, pos;

	if (SEQ_GT(c->snd_max, high))
		pipe = c->snd_max - high;
	pos = c->snd_una;
	while (tcp_sack_hole(c, pos, &start, &len)) {
		if (SEQ_LT(start, c->high_rxt)) {
			uint32_t end = start + len;

			pipe += (SEQ_LT(end, c->high_rxt) ? end : c->high_rxt) - start;
		}
		pos = start + len;
	}
	return pipe;
}

/* Out-of-order queue ---------------------------------------------------- */

static void
ooo_remove(struct tcp_ooo *q, unsigned int i, bool free_mbuf)
{
	if (free_mbuf)
		rte_pktmbuf_free(q->m[i]);
	memmove(&q->m[i], &q->m[i + 1], (q->n - i - 1) * sizeof(q->m[0]));
	memmove(&q->seq[i], &q->seq[i + 1], (q->n - i - 1) * sizeof(q->seq[0]));
	memmove(&q->off[i], &q->off[i + 1], (q->n - i - 1) * sizeof(q->off[0]));
	memmove(&q->len[i], &q->len[i + 1], (q->n - i - 1) * sizeof(q->len[0]));
	q->n--;
}

bool
tcp_ooo_insert(struct tcp_conn *c, struct rte_mbuf *m, uint32_t seq,
		uint16_t off, uint16_t len)
{
	struct tcp_ooo *q = &c->ooo;
	uint32_t end = seq + len;
	unsigned int i = 0;

	/* Trim what a queued segment before it already holds. */
	while (i < q->n && SEQ_LEQ(q->seq[i] + q->len[i], seq))
		i++;
	if (i < q->n && SEQ_LEQ(q->seq[i], seq)) {
		uint32_t held = q->seq[i] + q->len[i];

		if (SEQ_GEQ(held, end))
			return false;	/* a duplicate */
		off = (uint16_t)(off + (held - seq));
		seq = held;
		i++;
	}
	/* Drop queued segments it covers entirely; trim its tail against
	 * the next one. */
	while (i < q->n && SEQ_LEQ(q->seq[i] + q->len[i], end))
		ooo_remove(q, i, true);
	if (i < q->n && SEQ_LT(q->seq[i], end))
		end = q->seq[i];
	if (!SEQ_LT(seq, end) || q->n == TCP_OOO_SEGS)
		return false;
	memmove(&q->m[i + 1], &q->m[i], (q->n - i) * sizeof(q->m[0]));
	memmove(&q->seq[i + 1], &q->seq[i], (q->n - i) * sizeof(q->seq[0]));
	memmove(&q->off[i + 1], &q->off[i], (q->n - i) * sizeof(q->off[0]));
	memmove(&q->len[i + 1], &q->len[i], (q->n - i) * sizeof(q->len[0]));
	q->m[i] = m;
	q->seq[i] = seq;
	q->off[i] = off;
	q->len[i] = (uint16_t)(end - seq);
	q->n++;
	q->last_seq = seq;
	return true;
}

/* Hands the queued segments that now follow rcv_nxt to the upper layer. */
void
tcp_ooo_deliver(struct net_stack *ns, struct tcp_conn *c)
{
	struct tcp_ooo *q = &c->ooo;

	while (q->n > 0 && SEQ_LEQ(q->seq[0], c->rcv_nxt) &&
			!(c->flags & TCP_F_DEAD)) {
		uint32_t skip = c->rcv_nxt - q->seq[0], taken;

		if (skip >= q->len[0]) {
			ooo_remove(q, 0, true);
			continue;
		}
		taken = c->app != NULL ? ns->up->recv(ns->up_ctx, c,
				rte_pktmbuf_mtod_offset(q->m[0], uint8_t *,
				q->off[0] + skip), q->len[0] - skip) :
			q->len[0] - skip;
		c->rcv_nxt += taken;
		if (taken < q->len[0] - skip)
			break;		/* the application is full */
		ooo_remove(q, 0, true);
	}
}

void
tcp_ooo_free(struct tcp_conn *c)
{
	while (c->ooo.n > 0)
		ooo_remove(&c->ooo, (unsigned int)(c->ooo.n - 1), true);
}

/* SACK blocks describing the queue: the most recent arrival first. */
int
tcp_ooo_blocks(const struct tcp_conn *c, struct tcp_block *out, int max)
{
	const struct tcp_ooo *q = &c->ooo;
	struct tcp_block all[TCP_OOO_SEGS];
	int n = 0, i, first = 0, k = 0;

	for (i = 0; i < q->n; i++) {
		if (n > 0 && all[n - 1].end == q->seq[i]) {
			all[n - 1].end += q->len[i];
		} else {
			all[n].start = q->seq[i];
			all[n].end = q->seq[i] + q->len[i];
			n++;
		}
	}
	for (i = 0; i < n; i++)
		if (SEQ_LEQ(all[i].start, q->last_seq) &&
				SEQ_LT(q->last_seq, all[i].end))
			first = i;
	if (n > 0 && max > 0)
		out[k++] = all[first];
	for (i = n - 1; i >= 0 && k < max; i--)
		if (i != first)
			out[k++] = all[i];
	return k;
}
