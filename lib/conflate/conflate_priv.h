/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EWYK_CONFLATE_PRIV_H
#define EWYK_CONFLATE_PRIV_H

/*
 * Layout (all sizes are powers of two):
 *
 *   key index : open addressing over atomic 64-bit entries, hash tag << 32 |
 *               (id + 1); linear probing, load <= 1/2, never deleted. Growth
 *               publishes a new index; old ones stay readable until destroy.
 *   slots     : one per key id, in geometric blocks that never move: block 0
 *               holds blk0 slots, block k >= 1 holds blk0 << (k - 1).
 *               A slot is { value, run }: value NULL means empty, run means
 *               a consumer holds the key.
 *   marks     : one bit per segment of 1 << seg_shift slots (4 slots, one
 *               cache line, unless max_keys is very large). Up to 64
 *               segments the top word is the only mark; beyond, the top word
 *               has one bit per child word of 64 segment bits.
 *
 * Producer: xchg(value); only on empty -> pending it sets the segment bit,
 * and only on a child word's 0 -> non-0 it sets the top bit, testing before
 * each read-modify-write; on the top word's 0 -> non-0 it may wake a
 * consumer. Consumer: clear the top bit, then the child word, then take
 * slots. Either the consumer's clear is ordered before the producer's test
 * (the producer re-marks) or the producer's exchange is ordered before the
 * consumer's take (the consumer sees the value); every access on this path
 * is seq_cst so the single total order decides.
 *
 * Parking: a consumer counts itself in nspinning while it spins, then in
 * the low half of waiters before its last look at the top word. A producer
 * that set the top word wakes only if nobody spins, and claims a waiter
 * (low half -> high half) so a slow-to-run waiter is woken once.
 *
 * tests/unit/conflate/conflate_marks.pml models all of this; keep in step.
 */

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "conflate.h"

#define CONFLATE_CACHE_LINE 64
#define CONFLATE_SEG_SHIFT 2		/* 4 slots of 16 bytes per card */
#define CONFLATE_MAX_SEGS 4096		/* 64 child words of 64 bits */
#define CONFLATE_MAX_BLOCKS 32
#define CONFLATE_MAX_THREADS 128	/* counter cells; one more is shared */
#define CONFLATE_INDEX_EMPTY 0

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

struct conflate_slot {
	_Atomic(void *) value;
	_Atomic uint32_t run;	/* a consumer is running this key */
	uint32_t pad;
};

struct conflate_key {
	uint64_t hash;
	uint8_t len;
	uint8_t bytes[CONFLATE_KEY_MAX];
};

struct conflate_index {
	struct conflate_index *retired;	/* previous, smaller index */
	uint64_t mask;
	_Atomic uint64_t entry[];
};

struct conflate_mark {
	_Atomic uint64_t bits;
} __attribute__((aligned(CONFLATE_CACHE_LINE)));

/* Per-thread counters: one writer each, so no shared hot line. */
struct conflate_pcpu {
	_Atomic uint64_t offers;
	_Atomic uint64_t superseded;
	_Atomic uint64_t applied;
	_Atomic uint64_t rejected;
	_Atomic uint64_t parks;
	_Atomic uint64_t wakes;
} __attribute__((aligned(CONFLATE_CACHE_LINE)));

struct conflate {
	/* read-mostly */
	conflate_fn_t fn;
	void *arg;
	unsigned int spin;
	unsigned int yields;
	_Atomic uint32_t stop;	/* written once */
	uint8_t depth;		/* 1: top word only; 2: top + child words */
	uint8_t seg_shift;
	uint8_t blk0_shift;
	uint32_t max_keys;
	uint32_t nchild;
	struct conflate_mark *child;
	_Atomic(struct conflate_index *) index;
	_Atomic(struct conflate_slot *) block[CONFLATE_MAX_BLOCKS];

	struct conflate_mark top;

	/* parking: read by a producer only after a top 0 -> non-0 */
	_Atomic uint32_t nspinning __attribute__((aligned(CONFLATE_CACHE_LINE)));
	_Atomic uint32_t futex_seq;
	/* consumers parking or parked: unclaimed | claimed by a wake << 32 */
	_Atomic uint64_t waiters;

	/* slow path: new keys and growth, under lock */
	pthread_mutex_t lock __attribute__((aligned(CONFLATE_CACHE_LINE)));
	uint32_t nblocks;
	_Atomic uint32_t nkeys;
	_Atomic uint32_t nslots;
	_Atomic uint64_t growths;
	_Atomic uint64_t allocs;

	struct conflate_pcpu cnt[CONFLATE_MAX_THREADS + 1];
};

/* conflate_tid.c: small per-thread index, recycled at thread exit */
extern __thread int conflate_tid_self;
int
conflate_tid_register(void);

static inline struct conflate_pcpu *
conflate_self(struct conflate *c)
{
	int t = conflate_tid_self;

	if (unlikely(t < 0))
		t = conflate_tid_register();
	return &c->cnt[t];
}

/* Add to a counter of the calling thread's cell (the last cell is shared). */
static inline void
conflate_count(const struct conflate *c, const struct conflate_pcpu *p,
		_Atomic uint64_t *v, uint64_t n)
{
	if (likely(p != &c->cnt[CONFLATE_MAX_THREADS]))
		atomic_store_explicit(v, atomic_load_explicit(v,
				memory_order_relaxed) + n, memory_order_relaxed);
	else
		atomic_fetch_add_explicit(v, n, memory_order_relaxed);
}

/* Slot and key record of id: block k >= 1 starts at blk0 << (k - 1). */
static inline uint32_t
conflate_block_of(const struct conflate *c, uint32_t id, uint32_t *off)
{
	uint32_t q = id >> c->blk0_shift;
	uint32_t k;

	if (q == 0) {
		*off = id;
		return 0;
	}
	k = 32 - __builtin_clz(q);
	*off = id - (1u << (c->blk0_shift + k - 1));
	return k;
}

static inline uint32_t
conflate_block_size(const struct conflate *c, uint32_t k)
{
	return 1u << (c->blk0_shift + (k == 0 ? 0 : k - 1));
}

static inline struct conflate_key *
conflate_block_keys(const struct conflate *c, struct conflate_slot *blk,
		uint32_t k)
{
	return (struct conflate_key *)(blk + conflate_block_size(c, k));
}

static inline struct conflate_slot *
conflate_block(const struct conflate *c, uint32_t k)
{
	return atomic_load_explicit(&c->block[k], memory_order_acquire);
}

static inline struct conflate_slot *
conflate_slot_of(const struct conflate *c, uint32_t id)
{
	uint32_t off;
	uint32_t k = conflate_block_of(c, id, &off);

	return &conflate_block(c, k)[off];
}

static inline const struct conflate_key *
conflate_key_record(const struct conflate *c, uint32_t id)
{
	uint32_t off;
	uint32_t k = conflate_block_of(c, id, &off);

	return &conflate_block_keys(c, conflate_block(c, k), k)[off];
}

static inline uint64_t
conflate_mix(uint64_t h, uint64_t w)
{
	h = (h ^ w) * 0xbf58476d1ce4e5b9ULL;
	return h ^ (h >> 31);
}

/*
 * 8 bytes at a time; the tail is read with overlapping loads rather than
 * copied byte by byte (no store-forwarding stall). The length is mixed in,
 * so overlap does not make two keys equal. murmur3 finaliser.
 */
static inline uint64_t
conflate_hash(const void *key, size_t len)
{
	const uint8_t *p = key;
	const uint8_t *end = p + len;
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ (len * 0xff51afd7ed558ccdULL);
	uint64_t w;
	uint32_t a, b;

	if (len > 8) {
		for (; end - p > 8; p += 8) {
			memcpy(&w, p, 8);
			h = conflate_mix(h, w);
		}
		memcpy(&w, end - 8, 8);
		h = conflate_mix(h, w);
	} else if (len >= 4) {
		memcpy(&a, p, 4);
		memcpy(&b, end - 4, 4);
		h = conflate_mix(h, (uint64_t)a << 32 | b);
	} else if (len != 0) {
		h = conflate_mix(h, (uint64_t)p[0] << 16 |
				(uint64_t)p[len >> 1] << 8 | end[-1]);
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

/* Lock-free: entries are published with release after the key record. */
static inline int
conflate_key_lookup(const struct conflate *c, uint64_t h, const void *key,
		size_t len, uint32_t *id)
{
	const struct conflate_index *ix = atomic_load_explicit(&c->index,
			memory_order_acquire);
	const struct conflate_key *kr;
	uint64_t i = h & ix->mask;
	uint64_t e;

	for (;; i = (i + 1) & ix->mask) {
		e = atomic_load_explicit(&ix->entry[i], memory_order_acquire);
		if (e == CONFLATE_INDEX_EMPTY)
			return -ENOENT;
		if ((e ^ h) >> 32 != 0)
			continue;
		kr = conflate_key_record(c, (uint32_t)e - 1);
		if (kr->len == len && memcmp(kr->bytes, key, len) == 0) {
			*id = (uint32_t)e - 1;
			return 0;
		}
	}
}

/* conflate_keys.c: slow path, under c->lock */
int
conflate_key_insert(struct conflate *c, uint64_t h, const void *key,
		size_t len, uint32_t *id);
int
conflate_keys_init(struct conflate *c, uint32_t capacity);
void
conflate_keys_free(struct conflate *c);
void *
conflate_alloc(struct conflate *c, size_t size);

#endif /* EWYK_CONFLATE_PRIV_H */
