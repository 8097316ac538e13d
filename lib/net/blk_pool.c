/* SPDX-License-Identifier: BSD-3-Clause */
#include <rte_common.h>
#include <rte_malloc.h>

#include "blk_pool.h"

/* Where a free block keeps its link. */
struct blk_free {
	struct blk_free *next;
};

void
blk_pool_init(struct blk_pool *p, const char *name, size_t size,
		uint32_t per_chunk, uint32_t max)
{
	p->free = NULL;
	p->chunks = NULL;
	p->name = name;
	p->size = RTE_ALIGN_CEIL(RTE_MAX(size, sizeof(struct blk_free)),
			sizeof(void *));
	p->per_chunk = per_chunk;
	p->made = 0;
	p->max = max;
}

static int
grow(struct blk_pool *p)
{
	uint32_t n = p->per_chunk, i;
	uint8_t *ch;

	if (p->max > 0 && n > p->max - p->made)
		n = p->max - p->made;
	if (n == 0)
		return -1;
	ch = rte_zmalloc(p->name, RTE_CACHE_LINE_SIZE + p->size * n,
			RTE_CACHE_LINE_SIZE);
	if (ch == NULL)
		return -1;
	*(void **)ch = p->chunks;
	p->chunks = ch;
	for (i = n; i-- > 0;)
		blk_pool_put(p, ch + RTE_CACHE_LINE_SIZE + p->size * i);
	p->made += n;
	return 0;
}

void *
blk_pool_get(struct blk_pool *p)
{
	struct blk_free *b;

	if (p->free == NULL && grow(p) < 0)
		return NULL;
	b = p->free;
	p->free = b->next;
	return b;
}

bool
blk_pool_ready(struct blk_pool *p)
{
	return p->free != NULL || grow(p) == 0;
}

void
blk_pool_put(struct blk_pool *p, void *b)
{
	struct blk_free *f = b;

	f->next = p->free;
	p->free = f;
}

void
blk_pool_fini(struct blk_pool *p)
{
	while (p->chunks != NULL) {
		void *ch = p->chunks;

		p->chunks = *(void **)ch;
		rte_free(ch);
	}
	p->free = NULL;
	p->made = 0;
}
