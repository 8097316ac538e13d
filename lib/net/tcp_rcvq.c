/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The receive queue: segments the upper layer has not taken yet, kept as
 * the mbufs they arrived in. In order (acknowledged, waiting until the
 * upper layer has room: the receive buffer beyond the room it pushes) or
 * after a hole (out of order, in runs: the SACK blocks we send; the
 * storage is tcp_rcvq.h's). Past the shard's budget of mbufs, or a
 * connection's share of them, out-of-order data is pruned from the
 * highest sequence down, as Linux's tcp_prune_ofo_queue(): never what was
 * acknowledged, never at or below the segment that wants the room. The
 * upper layer is offered held data as it makes room; the peer's FIN
 * reaches it after the last byte. Input and the flush call in, with
 * TCP_F_IN_INPUT set: an upcall may end the connection, which is then
 * freed once the caller unwinds.
 */
#include <string.h>

#include <rte_mbuf.h>

#include "tcp_rcvq.h"

/* Queue blocks made 16 at a time */
#define RCVQ_BLKS_PER_CHUNK 16
/* A connection may hold twice the segments its window takes at full
 * size (small segments cost an mbuf each), and at least this many. */
#define RCVQ_SHARE_MIN 256

void
tcp_rcvq_init(struct net_stack *ns)
{
	uint32_t n = ns->cfg.rcvq_max;

	if (n == 0)
		n = RTE_MAX(ns->cfg.max_conns / 4, 1u);
	blk_pool_init(&ns->rcvq_blks, "tcp_rcvq", sizeof(struct tcp_rcvq_blk),
			RCVQ_BLKS_PER_CHUNK, n);
	rcvq_store_init(ns);
}

void
tcp_rcvq_fini(struct net_stack *ns)
{
	blk_pool_fini(&ns->rcvq_blks);
	rcvq_store_fini(ns);
}

/* The queue's block, taken as it first holds something. */
static bool
take_blk(struct net_stack *ns, struct tcp_rcvq *q)
{
	if (q->blk != NULL)
		return true;
	q->blk = rcvq_pool_get(ns, &ns->rcvq_blks);
	if (q->blk == NULL) {
		ns->stats->tcp.rcvq_exhausted++;
		return false;
	}
	memset(q->blk, 0, sizeof(*q->blk));
	return true;
}

/* The block goes back to the shard once the queue is empty. */
static void
put_if_empty(struct net_stack *ns, struct tcp_rcvq *q)
{
	if (q->n > 0 || q->blk == NULL)
		return;
	blk_pool_put(&ns->rcvq_blks, q->blk);
	q->blk = NULL;
}

/* The segment of entry e leaves the queue (its entry follows). */
static void
free_seg(struct net_stack *ns, struct tcp_rcvq *q, const struct rcvq_ent *e)
{
	rte_pktmbuf_free(e->m);
	ns->stats->tcp_rcvq_mbufs--;
	q->n--;
}

/* The first segment of ch leaves the queue. */
static void
drop_first(struct net_stack *ns, struct tcp_rcvq *q, struct rcvq_chain *ch)
{
	free_seg(ns, q, rcvq_chain_front(ch));
	rcvq_chain_pop_front(ns, ch);
}

/* A run and its segments go. */
static void
drop_run(struct net_stack *ns, struct tcp_rcvq *q, struct rcvq_run *r)
{
	while (r->segs.first != NULL)
		drop_first(ns, q, &r->segs);
	rcvq_run_del(ns, q->blk, r);
}

/* Whether one more segment would pass the shard's budget of mbufs or
 * the connection's share of them. */
static bool
no_room(const struct net_stack *ns, const struct tcp_conn *c)
{
	uint64_t share = 2 * ((uint64_t)c->rcv_space + c->rcvbuf) / c->mss;

	if (ns->cfg.rcvq_mbufs_max != 0 &&
			ns->stats->tcp_rcvq_mbufs >= ns->cfg.rcvq_mbufs_max)
		return true;
	return c->rcvq.n >= RTE_MAX(share, (uint64_t)RCVQ_SHARE_MIN);
}

/* Room for a segment that ends at end: out-of-order segments above it
 * are dropped, the highest first, until it fits. They were only SACKed:
 * the runs, and so the SACK blocks, no longer hold them, and the peer
 * sends them again. false: none left to drop, it does not fit. */
static bool
make_room(struct net_stack *ns, struct tcp_conn *c, uint32_t end)
{
	struct tcp_rcvq *q = &c->rcvq;

	while (no_room(ns, c)) {
		struct rcvq_run *top = q->blk != NULL ? q->blk->top : NULL;
		struct rcvq_ent *e = top != NULL ? rcvq_chain_back(&top->segs) :
			NULL;

		if (e == NULL || SEQ_LT(e->seq, end))
			return false;
		top->end = e->seq;
		top->n--;
		free_seg(ns, q, e);
		rcvq_chain_pop_back(ns, &top->segs);
		ns->stats->tcp.ooo_pruned++;
		if (top->n == 0)
			rcvq_run_del(ns, q->blk, top);
	}
	return true;
}

/* Puts e between run p (NULL: none before it) and run nx (NULL: none
 * after), gaps on neither side of it trimmed: at the end of p, at the
 * start of nx, both (the two runs become one), or in a run of its own. */
static bool
place(struct net_stack *ns, struct tcp_rcvq_blk *b, struct rcvq_run *p,
		struct rcvq_run *nx, const struct rcvq_ent *e)
{
	uint32_t end = e->seq + e->len;
	struct rcvq_run *r;

	if (p != NULL && p->end == e->seq) {
		if (!rcvq_chain_push_back(ns, &p->segs, e))
			return false;
		p->end = end;
		p->n++;
		if (nx != NULL && nx->start == end) {
			rcvq_chain_join(&p->segs, &nx->segs);
			p->end = nx->end;
			p->n += nx->n;
			rcvq_run_del(ns, b, nx);
		}
		return true;
	}
	if (nx != NULL && nx->start == end) {
		if (!rcvq_chain_push_front(ns, &nx->segs, e))
			return false;
		nx->start = e->seq;
		nx->n++;
		return true;
	}
	r = rcvq_run_add(ns, b, e->seq);
	if (r == NULL)
		return false;
	if (!rcvq_chain_push_back(ns, &r->segs, e)) {
		rcvq_run_del(ns, b, r);
		return false;
	}
	r->end = end;
	r->n = 1;
	return true;
}

bool
tcp_rcvq_insert(struct net_stack *ns, struct tcp_conn *c, struct rte_mbuf *m,
		uint32_t seq, uint16_t off, uint16_t len)
{
	struct tcp_rcvq *q = &c->rcvq;
	uint32_t end = seq + len;
	struct rcvq_run *p, *nx;
	struct rcvq_ent e;

	if (!take_blk(ns, q))
		return false;
	/* Trim what the run before it already holds. */
	p = rcvq_run_find(q->blk, seq);
	if (p != NULL && SEQ_GT(p->end, seq)) {
		if (SEQ_GEQ(p->end, end))
			goto refused;	/* a duplicate */
		off = (uint16_t)(off + (p->end - seq));
		seq = p->end;
	}
	/* Drop the runs it covers entirely; trim its tail against the
	 * next one. */
	nx = p != NULL ? p->next[0] : rcvq_run_first(q->blk);
	while (nx != NULL && SEQ_LEQ(nx->end, end)) {
		struct rcvq_run *after = nx->next[0];

		drop_run(ns, q, nx);
		nx = after;
	}
	if (nx != NULL && SEQ_LT(nx->start, end))
		end = nx->start;
	if (!SEQ_LT(seq, end) || !make_room(ns, c, end))
		goto refused;
	/* Pruning never reaches p, but may have taken the runs after it. */
	nx = p != NULL ? p->next[0] : rcvq_run_first(q->blk);
	e = (struct rcvq_ent){ m, seq, off, (uint16_t)(end - seq) };
	if (!place(ns, q->blk, p, nx, &e))
		goto refused;
	q->n++;
	ns->stats->tcp_rcvq_mbufs++;
	if (seq != c->rcv_nxt)
		q->last_seq = seq;
	return true;
refused:
	put_if_empty(ns, q);
	return false;
}

/* What rcv_nxt has passed leaves the front of run r. */
static void
trim_front(struct net_stack *ns, struct tcp_rcvq *q, struct rcvq_run *r,
		uint32_t rcv_nxt)
{
	struct rcvq_ent *e;

	while ((e = rcvq_chain_front(&r->segs)) != NULL &&
			SEQ_LT(e->seq, rcv_nxt)) {
		uint32_t skip = rcv_nxt - e->seq;

		if (skip < e->len) {
			e->seq = rcv_nxt;
			e->off = (uint16_t)(e->off + skip);
			e->len = (uint16_t)(e->len - skip);
			return;
		}
		r->n--;
		drop_first(ns, q, &r->segs);
	}
}

void
tcp_rcvq_advance(struct net_stack *ns, struct tcp_conn *c)
{
	struct tcp_rcvq *q = &c->rcvq;
	struct rcvq_run *r;

	while (q->blk != NULL && (r = rcvq_run_first(q->blk)) != NULL &&
			SEQ_LEQ(r->start, c->rcv_nxt)) {
		/* What came in order may have covered it, or a part. */
		trim_front(ns, q, r, c->rcv_nxt);
		if (r->n > 0) {
			rcvq_chain_join(&q->blk->held, &r->segs);
			q->held += r->n;
			c->rcv_nxt = r->end;
		}
		rcvq_run_del(ns, q->blk, r);
	}
	put_if_empty(ns, q);
}

void
tcp_rcvq_deliver(struct net_stack *ns, struct tcp_conn *c)
{
	struct tcp_rcvq *q = &c->rcvq;
	uint32_t before = c->rcv_read;

	c->flags &= ~TCP_F_DELIVER;
	while (q->held > 0 && !tcp_is_dead(c)) {
		struct rcvq_ent *e = rcvq_chain_front(&q->blk->held);
		/* Without an upper layer (released) nothing is wanted. */
		uint32_t taken = c->app == NULL ? e->len : c->up->recv(c->up_ctx,
				c, rte_pktmbuf_mtod_offset(e->m, uint8_t *,
				e->off), e->len);

		if (tcp_is_dead(c) || q->held == 0)
			break;
		c->rcv_read += taken;
		if (taken < e->len) {
			if (taken == 0)
				break;	/* the upper layer is full */
			/* It may have made room as it took (HTTP/1.1
			 * consumes the requests it parsed): offer the rest
			 * until it takes nothing. */
			e->seq += taken;
			e->off = (uint16_t)(e->off + taken);
			e->len = (uint16_t)(e->len - taken);
			continue;
		}
		q->held--;
		drop_first(ns, q, &q->blk->held);
	}
	put_if_empty(ns, q);
	if (c->rcv_read != before)
		tcp_rcvbuf_taken(ns, c);
	if (q->held == 0 && (c->flags & TCP_F_FIN_OWED) && !tcp_is_dead(c)) {
		c->flags &= ~TCP_F_FIN_OWED;
		c->rcv_read++;
		/* As fin_input() in ESTABLISHED, whatever we did since */
		if (c->app != NULL && (c->state == TCP_CLOSE_WAIT ||
				c->state == TCP_LAST_ACK))
			c->up->peer_closed(c->up_ctx, c);
	}
}

void
tcp_rcvq_free(struct net_stack *ns, struct tcp_conn *c)
{
	struct tcp_rcvq *q = &c->rcvq;
	struct rcvq_run *r;

	if (q->blk != NULL) {
		while (q->blk->held.first != NULL)
			drop_first(ns, q, &q->blk->held);
		while ((r = rcvq_run_first(q->blk)) != NULL)
			drop_run(ns, q, r);
	}
	put_if_empty(ns, q);
	q->held = 0;
	c->rcv_read = c->rcv_nxt;
}

int
tcp_rcvq_blocks(const struct tcp_conn *c, struct tcp_block *out, int max)
{
	const struct tcp_rcvq_blk *b = c->rcvq.blk;
	const struct rcvq_run *first, *r;
	int k = 0;

	if (max <= 0 || b == NULL)
		return 0;
	/* The run of the most recent arrival first (RFC 2018 4), then the
	 * others from the highest down. */
	first = rcvq_run_find(b, c->rcvq.last_seq);
	if (first != NULL && SEQ_LT(c->rcvq.last_seq, first->end))
		out[k++] = (struct tcp_block){ first->start, first->end };
	else
		first = NULL;
	for (r = b->top; r != NULL && k < max; r = r->prev)
		if (r != first)
			out[k++] = (struct tcp_block){ r->start, r->end };
	return k;
}

/* Checks ------------------------------------------------------------------ */

/* A chain's entries, consecutive from *seq on (moved past them), their
 * count added to *n; false on a gap, an overlap or a broken link. */
static bool
chain_walk(const struct rcvq_chain *ch, uint32_t *seq, uint32_t *n)
{
	const struct rcvq_chunk *k, *prev = NULL;
	uint32_t i;

	for (k = ch->first; k != NULL; prev = k, k = k->next) {
		if (k->prev != prev || k->lo >= k->hi ||
				k->hi > RCVQ_CHUNK_ENTS)
			return false;
		for (i = k->lo; i < k->hi; i++) {
			if (k->e[i].seq != *seq || k->e[i].len == 0)
				return false;
			*seq += k->e[i].len;
			(*n)++;
		}
	}
	return prev == ch->last;
}

/* Each level of the skip list holds, in order, the runs of the level
 * below that reach it. */
static const char *
levels_check(const struct tcp_rcvq_blk *b)
{
	const struct rcvq_run *r, *x;
	int l;

	for (l = 1; l < RCVQ_LEVELS; l++) {
		x = rcvq_run_first(b);
		for (r = b->next[l]; r != NULL; r = r->next[l]) {
			if (r->levels <= l)
				return "a run on a level above its own";
			for (; x != NULL && x != r; x = x->next[0])
				if (x->levels > l)
					return "a run missing from a level";
			if (x == NULL)
				return "a level out of order";
			x = x->next[0];
		}
		for (; x != NULL; x = x->next[0])
			if (x->levels > l)
				return "a run missing from a level";
	}
	return NULL;
}

const char *
tcp_rcvq_check(const struct tcp_conn *c)
{
	const struct tcp_rcvq *q = &c->rcvq;
	const struct tcp_rcvq_blk *b = q->blk;
	const struct rcvq_run *r, *prev = NULL;
	/* A FIN owed follows the held data; data the peer sent past its
	 * FIN may wait right after it, never taken. */
	uint32_t seq = c->rcv_read, held = 0, n = 0;
	uint32_t held_end = c->rcv_nxt - !!(c->flags & TCP_F_FIN_OWED);
	uint32_t floor = c->rcv_nxt - (c->state == TCP_CLOSE_WAIT ||
			c->state == TCP_CLOSING || c->state == TCP_LAST_ACK);

	if (b == NULL)
		return q->n == 0 && q->held == 0 ? NULL :
			"segments without a block";
	if (q->n == 0)
		return "an empty queue kept its block";
	if (!chain_walk(&b->held, &seq, &held) || held != q->held ||
			seq != held_end)
		return "held data is not [rcv_read, rcv_nxt)";
	for (r = rcvq_run_first(b); r != NULL; prev = r, r = r->next[0]) {
		uint32_t end = r->start, segs = 0;

		if (r->prev != prev)
			return "a run's link to the one below is wrong";
		if (!SEQ_GT(r->start, prev != NULL ? prev->end : floor))
			return "runs out of order, touching or overlapping";
		if (!chain_walk(&r->segs, &end, &segs) || end != r->end ||
				segs != r->n || segs == 0)
			return "a run's segments are not its range";
		if (r->levels < 1 || r->levels > RCVQ_LEVELS)
			return "a run's levels out of range";
		n += segs;
	}
	if (b->top != prev)
		return "top is not the highest run";
	if (n + held != q->n)
		return "the count differs from the segments";
	return levels_check(b);
}
