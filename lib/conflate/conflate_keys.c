/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Key index and slot storage. Lookups are lock-free; a key seen for the first
 * time is added under the mutex, which is also the only place that grows
 * anything. Slots never move (their id is their address), so growth only adds
 * a block and republishes a larger index; an old index stays readable by
 * producers that still hold it and is freed at destroy. A producer that
 * misses a key in an old index simply takes the slow path and finds it.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "conflate_priv.h"

static inline uint64_t
index_entry(uint64_t h, uint32_t id)
{
	return (h & 0xffffffff00000000ULL) | (uint64_t)(id + 1);
}

void *
conflate_alloc(struct conflate *c, size_t size)
{
	void *p;

	size = (size + CONFLATE_CACHE_LINE - 1) & ~(size_t)(CONFLATE_CACHE_LINE - 1);
	p = aligned_alloc(CONFLATE_CACHE_LINE, size);
	if (p == NULL)
		return NULL;
	memset(p, 0, size);
	atomic_fetch_add_explicit(&c->allocs, 1, memory_order_relaxed);
	return p;
}

static void
index_put(struct conflate_index *ix, uint64_t h, uint32_t id)
{
	uint64_t i = h & ix->mask;

	while (atomic_load_explicit(&ix->entry[i], memory_order_relaxed) !=
			CONFLATE_INDEX_EMPTY)
		i = (i + 1) & ix->mask;
	/* release: the key record is written before it can be found */
	atomic_store_explicit(&ix->entry[i], index_entry(h, id),
			memory_order_release);
}

static struct conflate_index *
index_new(struct conflate *c, uint64_t size)
{
	struct conflate_index *ix;

	ix = conflate_alloc(c, sizeof(*ix) + size * sizeof(ix->entry[0]));
	if (ix == NULL)
		return NULL;
	ix->mask = size - 1;
	return ix;
}

/* Double the index; readers of the old one keep a valid, frozen view. */
static int
index_grow(struct conflate *c)
{
	struct conflate_index *old = atomic_load_explicit(&c->index,
			memory_order_relaxed);
	struct conflate_index *ix = index_new(c, (old->mask + 1) * 2);
	uint32_t n = atomic_load_explicit(&c->nkeys, memory_order_relaxed);
	uint32_t id;

	if (ix == NULL)
		return -ENOMEM;
	for (id = 0; id < n; id++)
		index_put(ix, conflate_key_record(c, id)->hash, id);
	ix->retired = old;
	atomic_store_explicit(&c->index, ix, memory_order_release);
	atomic_fetch_add_explicit(&c->growths, 1, memory_order_relaxed);
	return 0;
}

static int
block_add(struct conflate *c)
{
	uint32_t k = c->nblocks;
	uint32_t n = conflate_block_size(c, k);
	struct conflate_slot *blk;

	if (k == CONFLATE_MAX_BLOCKS)
		return -ENOSPC;
	blk = conflate_alloc(c, n * (sizeof(*blk) + sizeof(struct conflate_key)));
	if (blk == NULL)
		return -ENOMEM;
	atomic_store_explicit(&c->block[k], blk, memory_order_release);
	c->nblocks = k + 1;
	atomic_store_explicit(&c->nslots,
			atomic_load_explicit(&c->nslots, memory_order_relaxed) + n,
			memory_order_relaxed);
	if (k != 0)
		atomic_fetch_add_explicit(&c->growths, 1, memory_order_relaxed);
	return 0;
}

static int
key_add(struct conflate *c, uint64_t h, const void *key, size_t len,
		uint32_t *id)
{
	uint32_t n = atomic_load_explicit(&c->nkeys, memory_order_relaxed);
	struct conflate_index *ix = atomic_load_explicit(&c->index,
			memory_order_relaxed);
	struct conflate_key *kr;
	uint32_t off, k;
	int rc;

	if (n >= c->max_keys)
		return -ENOSPC;
	if (n == atomic_load_explicit(&c->nslots, memory_order_relaxed)) {
		rc = block_add(c);
		if (rc != 0)
			return rc;
	}
	if (2 * ((uint64_t)n + 1) > ix->mask + 1) {
		rc = index_grow(c);
		if (rc != 0)
			return rc;
		ix = atomic_load_explicit(&c->index, memory_order_relaxed);
	}
	k = conflate_block_of(c, n, &off);
	kr = &conflate_block_keys(c, atomic_load_explicit(&c->block[k],
			memory_order_relaxed), k)[off];
	kr->hash = h;
	kr->len = (uint8_t)len;
	memcpy(kr->bytes, key, len);
	atomic_store_explicit(&c->nkeys, n + 1, memory_order_relaxed);
	index_put(ix, h, n);
	*id = n;
	return 0;
}

int
conflate_key_insert(struct conflate *c, uint64_t h, const void *key,
		size_t len, uint32_t *id)
{
	int rc;

	pthread_mutex_lock(&c->lock);
	/* another producer may have added it since our lock-free miss */
	rc = conflate_key_lookup(c, h, key, len, id);
	if (rc != 0)
		rc = key_add(c, h, key, len, id);
	pthread_mutex_unlock(&c->lock);
	return rc;
}

int
conflate_keys_init(struct conflate *c, uint32_t capacity)
{
	struct conflate_index *ix;

	c->blk0_shift = (uint8_t)__builtin_ctz(capacity);
	if (block_add(c) != 0)
		return -ENOMEM;
	ix = index_new(c, 2 * (uint64_t)capacity);
	if (ix == NULL)
		return -ENOMEM;
	atomic_store_explicit(&c->index, ix, memory_order_relaxed);
	return 0;
}

void
conflate_keys_free(struct conflate *c)
{
	struct conflate_index *ix = atomic_load_explicit(&c->index,
			memory_order_relaxed);
	struct conflate_index *next;
	uint32_t k;

	for (; ix != NULL; ix = next) {
		next = ix->retired;
		free(ix);
	}
	for (k = 0; k < c->nblocks; k++)
		free(atomic_load_explicit(&c->block[k], memory_order_relaxed));
}
