/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A shard's pool of same-size blocks, private to lib/net: a LIFO free list
 * (the block given back last is taken next, likely still in cache) grown
 * by chunks from DPDK's heap as more are needed at once, up to a limit,
 * and never shrunk: memory follows the peak of blocks in use, not what
 * could be. A free block's first bytes link it; a chunk's first line
 * links the chunks.
 */
#ifndef EWYK_BLK_POOL_H
#define EWYK_BLK_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct blk_pool {
	void *free;
	void *chunks;
	const char *name;	/* DPDK's heap's label */
	size_t size;		/* of a block */
	uint32_t per_chunk;
	uint32_t made;		/* blocks, in all chunks */
	uint32_t max;		/* blocks to make at most; 0: no limit */
};

void blk_pool_init(struct blk_pool *p, const char *name, size_t size,
		uint32_t per_chunk, uint32_t max);
/* A free block; NULL when the limit is reached or the heap has no room. */
void *blk_pool_get(struct blk_pool *p);
void blk_pool_put(struct blk_pool *p, void *b);
/* Whether blk_pool_get() would give a block now (a chunk is grown for it
 * if need be): a caller that must not fail halfway asks first. */
bool blk_pool_ready(struct blk_pool *p);
/* Frees every chunk: the blocks must not be used after. */
void blk_pool_fini(struct blk_pool *p);

#endif
