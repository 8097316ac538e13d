/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where the receive queue keeps its segments (tcp_rcvq.h): chains of
 * chunks of entries, and the runs' skip list. Chunks and runs come from
 * pools of the shard's (blk_pool.h), bounded by the mbufs they describe:
 * an entry is a segment the queue holds, a run holds at least one.
 */
#include <rte_random.h>

#include "tcp_rcvq.h"

#define CHUNKS_PER_CHUNK 64	/* of the pools: blocks made at once */
#define RUNS_PER_CHUNK 64

_Static_assert(sizeof(struct rcvq_chunk) <= 256, "a chunk outgrew 256 bytes");

void
rcvq_store_init(struct net_stack *ns)
{
	blk_pool_init(&ns->rcvq_chunks, "tcp_rcvq_chunk",
			sizeof(struct rcvq_chunk), CHUNKS_PER_CHUNK, 0);
	blk_pool_init(&ns->rcvq_runs, "tcp_rcvq_run", sizeof(struct rcvq_run),
			RUNS_PER_CHUNK, 0);
}

void *
rcvq_pool_get(struct net_stack *ns, struct blk_pool *p)
{
	uint32_t made = p->made;
	void *b = blk_pool_get(p);

	if (p->made != made)
		ns->stats->tcp_rcvq_mem_bytes =
			(uint64_t)ns->rcvq_blks.made * ns->rcvq_blks.size +
			(uint64_t)ns->rcvq_chunks.made * ns->rcvq_chunks.size +
			(uint64_t)ns->rcvq_runs.made * ns->rcvq_runs.size;
	return b;
}

void
rcvq_store_fini(struct net_stack *ns)
{
	blk_pool_fini(&ns->rcvq_chunks);
	blk_pool_fini(&ns->rcvq_runs);
}

/* Chains ------------------------------------------------------------------ */

/* An empty chunk whose entries will start at slot at (0: filled upwards,
 * RCVQ_CHUNK_ENTS: downwards). */
static struct rcvq_chunk *
chunk_new(struct net_stack *ns, uint8_t at)
{
	struct rcvq_chunk *k = rcvq_pool_get(ns, &ns->rcvq_chunks);

	if (k != NULL) {
		k->prev = k->next = NULL;
		k->lo = k->hi = at;
	}
	return k;
}

bool
rcvq_chain_push_back(struct net_stack *ns, struct rcvq_chain *ch,
		const struct rcvq_ent *e)
{
	struct rcvq_chunk *k = ch->last;

	if (k == NULL || k->hi == RCVQ_CHUNK_ENTS) {
		k = chunk_new(ns, 0);
		if (k == NULL)
			return false;
		k->prev = ch->last;
		if (ch->last != NULL)
			ch->last->next = k;
		else
			ch->first = k;
		ch->last = k;
	}
	k->e[k->hi++] = *e;
	return true;
}

bool
rcvq_chain_push_front(struct net_stack *ns, struct rcvq_chain *ch,
		const struct rcvq_ent *e)
{
	struct rcvq_chunk *k = ch->first;

	if (k == NULL || k->lo == 0) {
		k = chunk_new(ns, RCVQ_CHUNK_ENTS);
		if (k == NULL)
			return false;
		k->next = ch->first;
		if (ch->first != NULL)
			ch->first->prev = k;
		else
			ch->last = k;
		ch->first = k;
	}
	k->e[--k->lo] = *e;
	return true;
}

/* A chunk emptied at either end leaves the chain. */
static void
unlink_empty(struct net_stack *ns, struct rcvq_chain *ch, struct rcvq_chunk *k)
{
	if (k->lo != k->hi)
		return;
	if (k->prev != NULL)
		k->prev->next = k->next;
	else
		ch->first = k->next;
	if (k->next != NULL)
		k->next->prev = k->prev;
	else
		ch->last = k->prev;
	blk_pool_put(&ns->rcvq_chunks, k);
}

void
rcvq_chain_pop_front(struct net_stack *ns, struct rcvq_chain *ch)
{
	ch->first->lo++;
	unlink_empty(ns, ch, ch->first);
}

void
rcvq_chain_pop_back(struct net_stack *ns, struct rcvq_chain *ch)
{
	ch->last->hi--;
	unlink_empty(ns, ch, ch->last);
}

void
rcvq_chain_join(struct rcvq_chain *a, struct rcvq_chain *b)
{
	if (b->first == NULL)
		return;
	if (a->first == NULL) {
		*a = *b;
	} else {
		a->last->next = b->first;
		b->first->prev = a->last;
		a->last = b->last;
	}
	b->first = b->last = NULL;
}

/* Runs -------------------------------------------------------------------- */

struct rcvq_run *
rcvq_run_find(const struct tcp_rcvq_blk *b, uint32_t seq)
{
	struct rcvq_run *const *fwd = b->next;
	struct rcvq_run *r = NULL;
	int l;

	/* Most arrivals extend the highest run. */
	if (b->top == NULL || SEQ_LEQ(b->top->start, seq))
		return b->top;
	for (l = RCVQ_LEVELS; l-- > 0;)
		while (fwd[l] != NULL && SEQ_LEQ(fwd[l]->start, seq)) {
			r = fwd[l];
			fwd = r->next;
		}
	return r;
}

/* The link of each level that leads to the first run starting at or
 * after seq. */
static void
path_to(struct tcp_rcvq_blk *b, uint32_t seq,
		struct rcvq_run **link[RCVQ_LEVELS])
{
	struct rcvq_run **fwd = b->next;
	int l;

	for (l = RCVQ_LEVELS; l-- > 0;) {
		while (fwd[l] != NULL && SEQ_LT(fwd[l]->start, seq))
			fwd = fwd[l]->next;
		link[l] = &fwd[l];
	}
}

/* A run is on each level above the first with chance 1/4. */
static uint8_t
random_levels(void)
{
	uint64_t r = rte_rand() | 1ull << (2 * (RCVQ_LEVELS - 1));

	return (uint8_t)(1 + __builtin_ctzll(r) / 2);
}

struct rcvq_run *
rcvq_run_add(struct net_stack *ns, struct tcp_rcvq_blk *b, uint32_t start)
{
	struct rcvq_run **link[RCVQ_LEVELS];
	struct rcvq_run *r = rcvq_pool_get(ns, &ns->rcvq_runs), *after;
	int l;

	if (r == NULL)
		return NULL;
	r->start = r->end = start;
	r->n = 0;
	r->segs.first = r->segs.last = NULL;
	r->levels = random_levels();
	path_to(b, start, link);
	after = *link[0];
	r->prev = after != NULL ? after->prev : b->top;
	if (after != NULL)
		after->prev = r;
	else
		b->top = r;
	for (l = 0; l < r->levels; l++) {
		r->next[l] = *link[l];
		*link[l] = r;
	}
	return r;
}

void
rcvq_run_del(struct net_stack *ns, struct tcp_rcvq_blk *b, struct rcvq_run *r)
{
	struct rcvq_run **link[RCVQ_LEVELS];
	int l;

	path_to(b, r->start, link);
	for (l = 0; l < r->levels; l++)
		*link[l] = r->next[l];
	if (r->next[0] != NULL)
		r->next[0]->prev = r->prev;
	else
		b->top = r->prev;
	blk_pool_put(&ns->rcvq_runs, r);
}
