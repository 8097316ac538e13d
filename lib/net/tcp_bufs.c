/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The connections' send rings (struct tcp_bufs: the ends of the send
 * queue's chain and the scoreboard; the receive queue's ring is
 * tcp_rcvq.c's, the chain's chunks a pool of their own),
 * held only while a connection has something in them, from a pool of the
 * shard's (blk_pool.h) that follows the peak of busy connections, not the
 * count of open ones. Up to cfg.bufs_keep connections keep theirs while
 * empty, so that a few busy ones do not give them back and take them
 * again between answers; past that, empty ones give them back after
 * input.
 */
#include <string.h>

#include "tcp_impl.h"

#define BUFS_PER_CHUNK 64

_Static_assert(sizeof(struct tcp_sndq_chunk) == 1024,
		"a send queue's chunk is 1 KiB");
/* The chain's ends live in struct tcp_bufs: an idle connection's slot is
 * no bigger than with the ring of 64 mbufs it replaced. */
_Static_assert(sizeof(struct tcp_conn) <= 736, "a connection's slot grew");

void
tcp_bufs_init(struct net_stack *ns)
{
	blk_pool_init(&ns->bufs, "tcp_bufs", sizeof(struct tcp_bufs),
			BUFS_PER_CHUNK, 0);
	blk_pool_init(&ns->sndq_chunks, "tcp_sndq", sizeof(struct tcp_sndq_chunk),
			BUFS_PER_CHUNK, 0);
}

bool
tcp_bufs_get(struct net_stack *ns, struct tcp_conn *c)
{
	struct tcp_bufs *b = blk_pool_get(&ns->bufs);

	if (b == NULL)
		return false;
	memset(&b->sndq, 0, sizeof(b->sndq));
	c->sndq.ch = &b->sndq;
	c->segs = b->segs;
	ns->stats->tcp_bufs_made = ns->bufs.made;
	ns->stats->tcp_bufs_used++;
	return true;
}

void
tcp_bufs_put(struct net_stack *ns, struct tcp_conn *c)
{
	if (c->segs == NULL)
		return;
	blk_pool_put(&ns->bufs, container_of(c->segs, struct tcp_bufs,
			segs[0]));
	c->sndq.ch = NULL;
	c->segs = NULL;
	tcp_sb_clear(c);
	ns->stats->tcp_bufs_used--;
}

void
tcp_bufs_fini(struct net_stack *ns)
{
	blk_pool_fini(&ns->bufs);
	blk_pool_fini(&ns->sndq_chunks);
}
