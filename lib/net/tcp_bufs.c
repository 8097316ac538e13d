/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The connections' send-side state (struct tcp_bufs: the ends of the send
 * queue's chain and the scoreboard's tree and lists; the chain's chunks
 * and the scoreboard's entries are pools of their own, and so is the
 * receive queue, tcp_rcvq.c), held only while a connection has something
 * in them, from a pool of the shard's (blk_pool.h) that follows the peak
 * of busy connections, not the count of open ones. Up to cfg.bufs_keep
 * connections keep theirs while empty, so that a few busy ones do not
 * give them back and take them again between answers; past that, empty
 * ones give them back after input.
 */
#include <string.h>

#include "tcp_impl.h"

#define BUFS_PER_CHUNK 64
#define SB_NODES_PER_CHUNK 256	/* 20 KiB */

_Static_assert(sizeof(struct tcp_sndq_chunk) == 1024,
		"a send queue's chunk is 1 KiB");
_Static_assert(sizeof(struct tcp_seg) <= 80, "a scoreboard entry grew");
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
	blk_pool_init(&ns->sb_nodes, "tcp_sb", sizeof(struct tcp_seg),
			SB_NODES_PER_CHUNK, ns->cfg.sb_nodes);
	tcp_ext_init(ns);
}

bool
tcp_bufs_get(struct net_stack *ns, struct tcp_conn *c)
{
	struct tcp_bufs *b = blk_pool_get(&ns->bufs);

	if (b == NULL)
		return false;
	memset(b, 0, sizeof(*b));
	RB_INIT(&b->sb.tree);
	c->sndq.ch = &b->sndq;
	c->sb = &b->sb;
	ns->stats->tcp_bufs_made = ns->bufs.made;
	ns->stats->tcp_bufs_used++;
	return true;
}

void
tcp_bufs_put(struct net_stack *ns, struct tcp_conn *c)
{
	if (c->sb == NULL)
		return;
	tcp_sb_clear(ns, c);
	blk_pool_put(&ns->bufs, container_of(c->sb, struct tcp_bufs, sb));
	c->sndq.ch = NULL;
	c->sb = NULL;
	ns->stats->tcp_bufs_used--;
}

void
tcp_bufs_fini(struct net_stack *ns)
{
	blk_pool_fini(&ns->bufs);
	blk_pool_fini(&ns->sndq_chunks);
	blk_pool_fini(&ns->sb_nodes);
	tcp_ext_fini(ns);
}
