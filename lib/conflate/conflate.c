/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Conflating executor: offers, card marks, consumer rounds and parking.
 * The mark protocol is model-checked in tests/unit/conflate/conflate_marks.pml;
 * keep the two in step.
 */

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "conflate_priv.h"

#define DEFAULT_CAPACITY 64
#define DEFAULT_SPIN 2048
#define DEFAULT_YIELDS 16

static inline void
cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield" ::: "memory");
#else
	atomic_signal_fence(memory_order_seq_cst);
#endif
}

#ifdef CONFLATE_CHAOS
/*
 * Test builds only (tests/unit/conflate): yield or stall at random at the
 * protocol's race windows, marked CHAOS(), so that the stress tests reach
 * interleavings that otherwise need a very unlucky preemption.
 */
static __thread uint64_t chaos_state;

static void
chaos(void)
{
	uint64_t x = chaos_state;
	unsigned int i;

	if (x == 0)
		x = (uintptr_t)&x | 1;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	chaos_state = x;
	if ((x & 63) == 0)
		sched_yield();
	else if ((x & 63) < 8)
		for (i = 0; i < (x >> 57); i++)
			cpu_relax();
}
#define CHAOS() chaos()
#else
#define CHAOS() do { } while (0)
#endif

static void
futex_wait(_Atomic uint32_t *addr, uint32_t val)
{
	syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT_PRIVATE, val,
			NULL, NULL, 0);
}

static void
futex_wake(_Atomic uint32_t *addr, int n)
{
	syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE_PRIVATE, n,
			NULL, NULL, 0);
}

static inline bool
stopped(const struct conflate *c)
{
	return atomic_load_explicit(&c->stop, memory_order_seq_cst) != 0;
}

#define WAITER 1ULL
#define CLAIMED (1ULL << 32)

/*
 * Called by whoever turned the top word from 0 to non-0. No wake while a
 * consumer spins: it sees the mark itself (Go's rule). Otherwise claim one
 * unclaimed waiter, so that a consumer slow to be scheduled is woken once,
 * not once per mark. The seq_cst loads pair with the consumer's waiters++,
 * nspinning-- and last look at the top word: either that look sees the
 * mark or this sees the waiter.
 */
static void
wake_one(struct conflate *c, struct conflate_pcpu *self)
{
	uint64_t w;

	if (atomic_load_explicit(&c->nspinning, memory_order_seq_cst) != 0)
		return;
	CHAOS();
	w = atomic_load_explicit(&c->waiters, memory_order_seq_cst);
	do {
		if ((uint32_t)w == 0)
			return;
	} while (!atomic_compare_exchange_weak_explicit(&c->waiters, &w,
			w - WAITER + CLAIMED, memory_order_seq_cst,
			memory_order_seq_cst));
	atomic_fetch_add_explicit(&c->futex_seq, 1, memory_order_seq_cst);
	futex_wake(&c->futex_seq, 1);
	conflate_count(c, self, &self->wakes, 1);
}

/* Leaving the parked state: use up a claim if any, else our own entry. */
static void
waiter_leave(struct conflate *c)
{
	uint64_t w = atomic_load_explicit(&c->waiters, memory_order_relaxed);
	uint64_t next;

	do {
		next = (w >> 32) != 0 ? w - CLAIMED : w - WAITER;
	} while (!atomic_compare_exchange_weak_explicit(&c->waiters, &w, next,
			memory_order_seq_cst, memory_order_relaxed));
}

/*
 * Card-mark a segment. Called by a producer that turned a slot from empty to
 * pending, and by a consumer handing a key back. Each level is tested before
 * its read-modify-write so that busy mark lines stay shared, and a level is
 * set only by whoever turned the level below from 0 to non-0: the one who
 * clears that parent later clears the child too (parents first).
 */
static void
mark_segment(struct conflate *c, struct conflate_pcpu *self, uint32_t seg)
{
	uint64_t bit = 1ULL << (seg & 63);
	_Atomic uint64_t *w;

	if (c->depth == 2) {
		w = &c->child[seg >> 6].bits;
		if ((atomic_load_explicit(w, memory_order_seq_cst) & bit) != 0)
			return;
		if (atomic_fetch_or_explicit(w, bit, memory_order_seq_cst) != 0)
			return;
		CHAOS();
		bit = 1ULL << (seg >> 6);
	}
	w = &c->top.bits;
	if ((atomic_load_explicit(w, memory_order_seq_cst) & bit) != 0)
		return;
	if (atomic_fetch_or_explicit(w, bit, memory_order_seq_cst) != 0)
		return;
	CHAOS();
	wake_one(c, self);
}

static void *
offer_reject(struct conflate *c, struct conflate_pcpu *self, void *value,
		int err)
{
	conflate_count(c, self, &self->rejected, 1);
	errno = err;
	return value;
}

void *
conflate_offer(struct conflate *c, const void *key, size_t key_len,
		void *value)
{
	struct conflate_pcpu *self = conflate_self(c);
	uint64_t h;
	uint32_t id;
	void *old;
	int rc;

	if (unlikely(value == NULL || key_len > CONFLATE_KEY_MAX ||
			(key == NULL && key_len != 0)))
		return offer_reject(c, self, value, EINVAL);
	h = conflate_hash(key, key_len);
	if (unlikely(conflate_key_lookup(c, h, key, key_len, &id) != 0)) {
		rc = conflate_key_insert(c, h, key, key_len, &id);
		if (rc != 0)
			return offer_reject(c, self, value, -rc);
	}
	CHAOS();
	/* seq_cst: ordered before the mark tests below (StoreLoad) */
	old = atomic_exchange_explicit(&conflate_slot_of(c, id)->value, value,
			memory_order_seq_cst);
	conflate_count(c, self, &self->offers, 1);
	if (old != NULL) {
		/* still pending, so still marked: no mark traffic at all */
		conflate_count(c, self, &self->superseded, 1);
		return old;
	}
	CHAOS();
	mark_segment(c, self, id >> c->seg_shift);
	return NULL;
}

/*
 * Run one slot. The run flag keeps a key on one consumer; a consumer that
 * finds it taken leaves the value, and the owner re-checks after releasing
 * and re-marks, since the producer saw a pending value and did not mark.
 */
static unsigned int
slot_run(struct conflate *c, struct conflate_pcpu *self, uint32_t seg,
		struct conflate_slot *s, const struct conflate_key *kr)
{
	uint32_t idle = 0;
	void *v;

	if (atomic_load_explicit(&s->value, memory_order_seq_cst) == NULL)
		return 0;
	if (!atomic_compare_exchange_strong_explicit(&s->run, &idle, 1,
			memory_order_seq_cst, memory_order_seq_cst))
		return 0;
	CHAOS();
	v = atomic_exchange_explicit(&s->value, NULL, memory_order_seq_cst);
	if (v != NULL)
		c->fn(c->arg, kr->bytes, kr->len, v);
	CHAOS();
	atomic_store_explicit(&s->run, 0, memory_order_seq_cst);
	CHAOS();
	if (atomic_load_explicit(&s->value, memory_order_seq_cst) != NULL)
		mark_segment(c, self, seg);
	return v != NULL;
}

static unsigned int
segment_run(struct conflate *c, struct conflate_pcpu *self, uint32_t seg)
{
	uint32_t first = seg << c->seg_shift;
	uint32_t n = 1u << c->seg_shift;
	uint32_t off, k, i;
	struct conflate_slot *blk;
	const struct conflate_key *keys;
	unsigned int ran = 0;

	/* segments never straddle blocks: blocks are multiples of segments */
	k = conflate_block_of(c, first, &off);
	blk = conflate_block(c, k);
	keys = conflate_block_keys(c, blk, k);
	for (i = off; i < off + n; i++)
		ran += slot_run(c, self, seg, &blk[i], &keys[i]);
	return ran;
}

/* Claim one top bit, then its child word: parent before child. */
static unsigned int
top_bit_run(struct conflate *c, struct conflate_pcpu *self, unsigned int b)
{
	uint64_t bit = 1ULL << b;
	unsigned int ran = 0;
	uint64_t w;

	if ((atomic_fetch_and_explicit(&c->top.bits, ~bit,
			memory_order_seq_cst) & bit) == 0)
		return 0;	/* another consumer claimed it */
	CHAOS();
	if (c->depth == 1)
		return segment_run(c, self, b);
	w = atomic_exchange_explicit(&c->child[b].bits, 0, memory_order_seq_cst);
	for (; w != 0; w &= w - 1)
		ran += segment_run(c, self, b * 64 + __builtin_ctzll(w));
	return ran;
}

unsigned int
conflate_poll(struct conflate *c)
{
	struct conflate_pcpu *self = conflate_self(c);
	uint64_t top = atomic_load_explicit(&c->top.bits, memory_order_seq_cst);
	unsigned int ran = 0;

	for (; top != 0; top &= top - 1)
		ran += top_bit_run(c, self, __builtin_ctzll(top));
	if (ran != 0)
		conflate_count(c, self, &self->applied, ran);
	return ran;
}

/*
 * Spin, then yield: a consumer woken onto its producer's CPU (wake-affine)
 * must not keep spinning there, or the producer cannot mark anything and
 * every offer round-trips through a park and a wake.
 */
static bool
spin_for_work(struct conflate *c)
{
	unsigned int i;

	for (i = 0; i < c->spin + c->yields; i++) {
		if (atomic_load_explicit(&c->top.bits, memory_order_relaxed) != 0 ||
				stopped(c))
			return true;
		if (i < c->spin)
			cpu_relax();
		else
			sched_yield();
	}
	return false;
}

int
conflate_wait(struct conflate *c)
{
	struct conflate_pcpu *self;
	uint32_t seq;

	atomic_fetch_add_explicit(&c->nspinning, 1, memory_order_seq_cst);
	if (spin_for_work(c)) {
		atomic_fetch_sub_explicit(&c->nspinning, 1, memory_order_seq_cst);
		return stopped(c) ? -ESHUTDOWN : 0;
	}
	CHAOS();
	seq = atomic_load_explicit(&c->futex_seq, memory_order_seq_cst);
	atomic_fetch_add_explicit(&c->waiters, WAITER, memory_order_seq_cst);
	CHAOS();
	atomic_fetch_sub_explicit(&c->nspinning, 1, memory_order_seq_cst);
	CHAOS();
	/* a mark made before this look is seen here; one made after sees
	 * the waiter (and no spinner) and bumps futex_seq before waking */
	if (atomic_load_explicit(&c->top.bits, memory_order_seq_cst) == 0 &&
			!stopped(c)) {
		self = conflate_self(c);
		conflate_count(c, self, &self->parks, 1);
		CHAOS();
		futex_wait(&c->futex_seq, seq);
	}
	waiter_leave(c);
	return stopped(c) ? -ESHUTDOWN : 0;
}

void
conflate_consume(struct conflate *c)
{
	while (!stopped(c)) {
		if (conflate_poll(c) == 0)
			(void)conflate_wait(c);
	}
	/* a round that ran something may have re-marked keys it held */
	while (conflate_poll(c) != 0)
		;
}

void
conflate_stop(struct conflate *c)
{
	atomic_store_explicit(&c->stop, 1, memory_order_seq_cst);
	atomic_fetch_add_explicit(&c->futex_seq, 1, memory_order_seq_cst);
	futex_wake(&c->futex_seq, INT_MAX);
}

void
conflate_stats(const struct conflate *c, struct conflate_stats *out)
{
	const struct conflate_pcpu *p;
	unsigned int i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i <= CONFLATE_MAX_THREADS; i++) {
		p = &c->cnt[i];
		out->offers += atomic_load_explicit(&p->offers, memory_order_relaxed);
		out->superseded += atomic_load_explicit(&p->superseded,
				memory_order_relaxed);
		out->applied += atomic_load_explicit(&p->applied,
				memory_order_relaxed);
		out->rejected += atomic_load_explicit(&p->rejected,
				memory_order_relaxed);
		out->parks += atomic_load_explicit(&p->parks, memory_order_relaxed);
		out->wakes += atomic_load_explicit(&p->wakes, memory_order_relaxed);
	}
	out->growths = atomic_load_explicit(&c->growths, memory_order_relaxed);
	out->allocs = atomic_load_explicit(&c->allocs, memory_order_relaxed);
	out->keys = atomic_load_explicit(&c->nkeys, memory_order_relaxed);
	out->slots = atomic_load_explicit(&c->nslots, memory_order_relaxed);
}

static size_t
pow2_ceil(size_t n)
{
	size_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

/* Segment size and mark depth are fixed for max_keys at creation. */
static void
geometry(struct conflate *c, size_t capacity, size_t max_keys)
{
	uint32_t nseg;

	c->seg_shift = CONFLATE_SEG_SHIFT;
	while ((max_keys >> c->seg_shift) > CONFLATE_MAX_SEGS)
		c->seg_shift++;
	if (max_keys < (1u << c->seg_shift))
		max_keys = 1u << c->seg_shift;
	if (capacity < (1u << c->seg_shift))
		capacity = 1u << c->seg_shift;
	if (capacity > max_keys)
		capacity = max_keys;
	nseg = (uint32_t)(max_keys >> c->seg_shift);
	c->depth = nseg <= 64 ? 1 : 2;
	c->nchild = c->depth == 2 ? nseg / 64 : 0;
	c->max_keys = (uint32_t)max_keys;
	c->blk0_shift = (uint8_t)__builtin_ctzll(capacity);
}

struct conflate *
conflate_create(const struct conflate_params *params)
{
	struct conflate *c;
	size_t capacity, max_keys;

	if (params == NULL || params->fn == NULL ||
			params->capacity > CONFLATE_MAX_KEYS ||
			params->max_keys > CONFLATE_MAX_KEYS) {
		errno = EINVAL;
		return NULL;
	}
	capacity = pow2_ceil(params->capacity != 0 ? params->capacity :
			DEFAULT_CAPACITY);
	max_keys = params->max_keys != 0 ? pow2_ceil(params->max_keys) :
			16 * capacity;
	if (max_keys > CONFLATE_MAX_KEYS)
		max_keys = CONFLATE_MAX_KEYS;

	c = aligned_alloc(CONFLATE_CACHE_LINE, sizeof(*c));
	if (c == NULL)
		return NULL;
	memset(c, 0, sizeof(*c));
	atomic_store_explicit(&c->allocs, 1, memory_order_relaxed);
	c->fn = params->fn;
	c->arg = params->arg;
	c->spin = params->spin != 0 ? params->spin : DEFAULT_SPIN;
	c->yields = params->yields != 0 ? params->yields : DEFAULT_YIELDS;
	geometry(c, capacity, max_keys);
	if (pthread_mutex_init(&c->lock, NULL) != 0) {
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	if (c->depth == 2) {
		c->child = conflate_alloc(c, c->nchild * sizeof(*c->child));
		if (c->child == NULL)
			goto fail;
	}
	if (conflate_keys_init(c, 1u << c->blk0_shift) != 0)
		goto fail;
	return c;
fail:
	conflate_destroy(c);
	errno = ENOMEM;
	return NULL;
}

void
conflate_destroy(struct conflate *c)
{
	if (c == NULL)
		return;
	conflate_keys_free(c);
	free(c->child);
	pthread_mutex_destroy(&c->lock);
	free(c);
}
