/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Private to the receive queue (tcp_rcvq.c) and its storage
 * (tcp_rcvq_runs.c). Each segment is an entry: its mbuf and the part of
 * it that is payload. Consecutive entries without a gap are a chain of
 * chunks (14 entries each, taken from the shard's pool as a chain grows,
 * given back as it drains): the data held in order is one chain, and each
 * run of out-of-order data (consecutive segments after a hole) is
 * another. The runs are ordered by sequence in a skip list, so that a
 * segment finds the run before it in O(log runs) and then touches only
 * its neighbours: it extends a run at either end, joins two runs (their
 * chains linked, nothing copied), or starts one. A run is a SACK block.
 */
#ifndef EWYK_TCP_RCVQ_H
#define EWYK_TCP_RCVQ_H

#include "tcp_impl.h"

#define RCVQ_CHUNK_ENTS 14	/* a chunk: 248 bytes */
#define RCVQ_LEVELS 8		/* the skip list's: 4^8 runs in O(log) */

struct rcvq_ent {
	struct rte_mbuf *m;
	uint32_t seq;
	uint16_t off;		/* payload offset in the mbuf */
	uint16_t len;
};

struct rcvq_chunk {
	struct rcvq_chunk *prev;
	struct rcvq_chunk *next;
	uint8_t lo;		/* entries [lo, hi) */
	uint8_t hi;
	struct rcvq_ent e[RCVQ_CHUNK_ENTS];
};

/* Entries in sequence order without gaps; NULL ends while empty. */
struct rcvq_chain {
	struct rcvq_chunk *first;
	struct rcvq_chunk *last;
};

/* Out-of-order data [start, end), n segments; linked to the lower run
 * and, level by level, to the higher ones. */
struct rcvq_run {
	uint32_t start;
	uint32_t end;
	uint32_t n;
	uint8_t levels;
	struct rcvq_chain segs;
	struct rcvq_run *prev;
	struct rcvq_run *next[RCVQ_LEVELS];
};

/* A connection's queue while it holds something: the data held in order,
 * and the runs (the skip list's head, the highest run). */
struct tcp_rcvq_blk {
	struct rcvq_chain held;
	struct rcvq_run *top;
	struct rcvq_run *next[RCVQ_LEVELS];
};

/* The pools of chunks and runs (tcp_rcvq_runs.c); a block of one of the
 * receive queues' pools, what they made counted again when it grew
 * (tcp_rcvq_mem_bytes). */
void rcvq_store_init(struct net_stack *ns);
void rcvq_store_fini(struct net_stack *ns);
void *rcvq_pool_get(struct net_stack *ns, struct blk_pool *p);

/* Chains: an entry in at either end (false: no chunk for it), out at
 * either end (its mbuf is the caller's), two chains joined (b's entries
 * follow a's; b is left empty). */
bool rcvq_chain_push_back(struct net_stack *ns, struct rcvq_chain *ch,
		const struct rcvq_ent *e);
bool rcvq_chain_push_front(struct net_stack *ns, struct rcvq_chain *ch,
		const struct rcvq_ent *e);
void rcvq_chain_pop_front(struct net_stack *ns, struct rcvq_chain *ch);
void rcvq_chain_pop_back(struct net_stack *ns, struct rcvq_chain *ch);
void rcvq_chain_join(struct rcvq_chain *a, struct rcvq_chain *b);

static inline struct rcvq_ent *
rcvq_chain_front(const struct rcvq_chain *ch)
{
	return ch->first == NULL ? NULL : &ch->first->e[ch->first->lo];
}

static inline struct rcvq_ent *
rcvq_chain_back(const struct rcvq_chain *ch)
{
	return ch->last == NULL ? NULL : &ch->last->e[ch->last->hi - 1];
}

/* Runs: the last one that starts at or before seq (NULL: none); a new
 * empty one at start (in a gap: no run holds start; NULL: no memory);
 * one taken out and given back (its chain already empty or moved). */
struct rcvq_run *rcvq_run_find(const struct tcp_rcvq_blk *b, uint32_t seq);
struct rcvq_run *rcvq_run_add(struct net_stack *ns, struct tcp_rcvq_blk *b,
		uint32_t start);
void rcvq_run_del(struct net_stack *ns, struct tcp_rcvq_blk *b,
		struct rcvq_run *r);

static inline struct rcvq_run *
rcvq_run_first(const struct tcp_rcvq_blk *b)
{
	return b->next[0];
}

#endif /* EWYK_TCP_RCVQ_H */
