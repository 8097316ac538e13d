/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The connections' rings (struct tcp_bufs: the send queue's chunk slots,
 * the out-of-order queue, the scoreboard, 3 KiB together), held only
 * while a connection has something in them. A shard keeps a LIFO free
 * list (the block given back last is taken next, likely still in cache)
 * grown by chunks from DPDK's heap as connections need more at once, and
 * never shrunk: memory follows the peak of busy connections, not the count
 * of open ones. Up to cfg.bufs_keep connections keep theirs while empty,
 * so that a few busy ones do not give them back and take them again
 * between answers; past that, empty ones give them back after input.
 */
#include <rte_malloc.h>

#include "tcp_impl.h"

#define BUFS_PER_CHUNK 64

/* A chunk: the link to the one made before, then its blocks. */
struct bufs_chunk {
	struct bufs_chunk *next;
	struct tcp_bufs b[BUFS_PER_CHUNK] __rte_cache_aligned;
};

static bool
grow(struct net_stack *ns)
{
	struct bufs_chunk *ch = rte_zmalloc("tcp_bufs", sizeof(*ch),
			RTE_CACHE_LINE_SIZE);
	unsigned int i;

	if (ch == NULL)
		return false;
	ch->next = ns->bufs_chunks;
	ns->bufs_chunks = ch;
	for (i = BUFS_PER_CHUNK; i-- > 0;) {
		ch->b[i].free_next = ns->bufs_free;
		ns->bufs_free = &ch->b[i];
	}
	ns->stats->tcp_bufs_made += BUFS_PER_CHUNK;
	return true;
}

bool
tcp_bufs_get(struct net_stack *ns, struct tcp_conn *c)
{
	struct tcp_bufs *b;

	if (ns->bufs_free == NULL && !grow(ns))
		return false;
	b = ns->bufs_free;
	ns->bufs_free = b->free_next;
	c->sndq.chunk = b->chunk;
	c->ooo.a = &b->ooo;
	c->segs = b->segs;
	ns->stats->tcp_bufs_used++;
	return true;
}

void
tcp_bufs_put(struct net_stack *ns, struct tcp_conn *c)
{
	struct tcp_bufs *b;

	if (c->segs == NULL)
		return;
	b = container_of(c->segs, struct tcp_bufs, segs[0]);
	b->free_next = ns->bufs_free;
	ns->bufs_free = b;
	c->sndq.chunk = NULL;
	c->ooo.a = NULL;
	c->segs = NULL;
	c->nsegs = 0;
	ns->stats->tcp_bufs_used--;
}

void
tcp_bufs_fini(struct net_stack *ns)
{
	while (ns->bufs_chunks != NULL) {
		struct bufs_chunk *ch = ns->bufs_chunks;

		ns->bufs_chunks = ch->next;
		rte_free(ch);
	}
	ns->bufs_free = NULL;
}
