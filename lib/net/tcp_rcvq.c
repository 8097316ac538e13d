/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The receive queue: segments the upper layer has not taken yet, kept as
 * the mbufs they arrived in. Called with TCP_F_IN_INPUT set: an upcall
 * may end the connection, which is then freed once the caller unwinds. In order (acknowledged, waiting until the
 * upper layer has room: the receive buffer beyond the room it pushes) or
 * after a hole (out of order, described by the SACK blocks we send). The
 * upper layer is offered held data as it makes room; the peer's FIN
 * reaches it after the last byte. Input and the flush call in.
 */
#include <rte_mbuf.h>

#include "tcp_impl.h"

/* Rings made 16 at a time (64 KiB) */
#define RCVQ_BLKS_PER_CHUNK 16

void
tcp_rcvq_init(struct net_stack *ns)
{
	uint32_t n = ns->cfg.rcvq_max;

	if (n == 0)
		n = RTE_MAX(ns->cfg.max_conns / 4, 1u);
	blk_pool_init(&ns->rcvq_blks, "tcp_rcvq", sizeof(struct tcp_rcvq_blk),
			RCVQ_BLKS_PER_CHUNK, n);
}

void
tcp_rcvq_fini(struct net_stack *ns)
{
	blk_pool_fini(&ns->rcvq_blks);
}

static struct tcp_rcvq_ent *
ent(struct tcp_rcvq *q, uint32_t i)
{
	return &q->blk->e[(q->head + i) & (TCP_RCVQ_SEGS - 1)];
}

static const struct tcp_rcvq_ent *
ent_c(const struct tcp_rcvq *q, uint32_t i)
{
	return &q->blk->e[(q->head + i) & (TCP_RCVQ_SEGS - 1)];
}

/* The ring goes back to the shard once the queue is empty. */
static void
put_if_empty(struct net_stack *ns, struct tcp_rcvq *q)
{
	if (q->n > 0 || q->blk == NULL)
		return;
	blk_pool_put(&ns->rcvq_blks, q->blk);
	q->blk = NULL;
	q->head = 0;
}

static uint32_t
ent_end(const struct tcp_rcvq_ent *e)
{
	return e->seq + e->len;
}

/* Removes entry i, moving the ones after it down. */
static void
remove_at(struct net_stack *ns, struct tcp_rcvq *q, uint32_t i)
{
	rte_pktmbuf_free(ent(q, i)->m);
	ns->stats->tcp_rcvq_mbufs--;
	if (i == 0) {
		q->head = (uint16_t)((q->head + 1) & (TCP_RCVQ_SEGS - 1));
	} else {
		for (; i + 1 < q->n; i++)
			*ent(q, i) = *ent(q, i + 1);
	}
	q->n--;
}

bool
tcp_rcvq_insert(struct net_stack *ns, struct tcp_conn *c, struct rte_mbuf *m,
		uint32_t seq, uint16_t off, uint16_t len)
{
	struct tcp_rcvq *q = &c->rcvq;
	uint32_t end = seq + len, i = q->held, j;
	struct tcp_rcvq_ent *e;

	if (q->blk == NULL) {
		q->blk = blk_pool_get(&ns->rcvq_blks);
		if (q->blk == NULL) {
			ns->stats->tcp.rcvq_exhausted++;
			return false;
		}
		q->head = 0;
	}

	/* Trim what a queued segment before it already holds. */
	while (i < q->n && SEQ_LEQ(ent_end(ent(q, i)), seq))
		i++;
	if (i < q->n && SEQ_LEQ(ent(q, i)->seq, seq)) {
		uint32_t held = ent_end(ent(q, i));

		if (SEQ_GEQ(held, end))
			goto refused;	/* a duplicate */
		off = (uint16_t)(off + (held - seq));
		seq = held;
		i++;
	}
	/* Drop queued segments it covers entirely; trim its tail against
	 * the next one. */
	while (i < q->n && SEQ_LEQ(ent_end(ent(q, i)), end))
		remove_at(ns, q, i);
	if (i < q->n && SEQ_LT(ent(q, i)->seq, end))
		end = ent(q, i)->seq;
	if (!SEQ_LT(seq, end) || q->n == TCP_RCVQ_SEGS)
		goto refused;
	for (j = q->n; j > i; j--)
		*ent(q, j) = *ent(q, j - 1);
	e = ent(q, i);
	e->m = m;
	e->seq = seq;
	e->off = off;
	e->len = (uint16_t)(end - seq);
	q->n++;
	ns->stats->tcp_rcvq_mbufs++;
	if (seq != c->rcv_nxt)
		q->last_seq = seq;
	return true;
refused:
	put_if_empty(ns, q);
	return false;
}

void
tcp_rcvq_advance(struct net_stack *ns, struct tcp_conn *c)
{
	struct tcp_rcvq *q = &c->rcvq;

	while (q->held < q->n && SEQ_LEQ(ent(q, q->held)->seq, c->rcv_nxt)) {
		struct tcp_rcvq_ent *e = ent(q, q->held);
		uint32_t skip = c->rcv_nxt - e->seq;

		/* What came in order may have covered it, or a part. */
		if (skip >= e->len) {
			remove_at(ns, q, q->held);
			continue;
		}
		e->seq += skip;
		e->off = (uint16_t)(e->off + skip);
		e->len = (uint16_t)(e->len - skip);
		c->rcv_nxt = ent_end(e);
		q->held++;
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
		struct tcp_rcvq_ent *e = ent(q, 0);
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
			e->off = (uint16_t)(e->off + taken);
			e->len = (uint16_t)(e->len - taken);
			continue;
		}
		q->held--;
		remove_at(ns, q, 0);
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

	while (q->n > 0)
		remove_at(ns, q, q->n - 1);
	put_if_empty(ns, q);
	q->held = 0;
	c->rcv_read = c->rcv_nxt;
}

int
tcp_rcvq_blocks(const struct tcp_conn *c, struct tcp_block *out, int max)
{
	const struct tcp_rcvq *q = &c->rcvq;
	int k = 0, first = -1;
	uint32_t i;

	if (max <= 0)
		return 0;
	/* The block of the most recent arrival first (RFC 2018 4), then
	 * the others from the highest down. */
	for (i = q->held; i < q->n; i++) {
		const struct tcp_rcvq_ent *e = ent_c(q, i);
		uint32_t s = e->seq, end = ent_end(e);

		while (i + 1 < q->n && ent_c(q, i + 1)->seq == end)
			end = ent_end(ent_c(q, ++i));
		if (SEQ_LEQ(s, q->last_seq) && SEQ_LT(q->last_seq, end)) {
			out[0].start = s;
			out[0].end = end;
			first = 0;
			k = 1;
		}
	}
	for (i = q->n; i-- > q->held && k < max;) {
		const struct tcp_rcvq_ent *e = ent_c(q, i);
		uint32_t s = e->seq, end = ent_end(e);

		while (i > q->held && ent_end(ent_c(q, i - 1)) == s)
			s = ent_c(q, --i)->seq;
		if (first == 0 && s == out[0].start)
			continue;
		out[k].start = s;
		out[k].end = end;
		k++;
	}
	return k;
}
