/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reserved pool: idle threads that take a task now, or a refusal.
 *
 * Each worker owns one cache-line slot holding a single word:
 *   0                  busy (running a task, or not started)
 *   ticket << 3 | 1    idle, spinning;  | 2 when parked on the futex
 *   4                  stop
 *   a task pointer     claimed: the task to run (8-aligned, low bits 0)
 * A claim is one CAS from an idle word to the task pointer: it picks the
 * worker and hands the task over in the same step, so a worker that left
 * the idle set (by the same CAS on its own slot) can never lose a task.
 * Tickets grow each time a worker goes idle; claimers take the highest, so
 * the most recently idle worker (hot cache) goes first (LIFO).
 */

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "ewyk_exec.h"
#include "exec_sys.h"

#define S_BUSY		UINT64_C(0)
#define S_IDLE		UINT64_C(1)
#define S_PARKED	UINT64_C(2)
#define S_STOP		UINT64_C(4)
#define S_LOW		UINT64_C(7)

/* PAUSEs between clock reads and idle_poll calls while spinning. */
#define SPIN_BATCH	64

struct rslot {
	_Atomic uint64_t word;
	_Atomic uint64_t runs;		/* written by the worker only */
	struct ewyk_reserved *pool;
	unsigned int idx;
	bool started;
	pthread_t tid;
} exec_aligned;

struct ewyk_reserved {
	_Atomic uint64_t ticket exec_aligned;	/* workers going idle */
	_Atomic unsigned int hint;		/* last worker to go idle */

	_Atomic uint64_t missed exec_aligned;	/* claimers, slow path */
	_Atomic uint64_t races;

	_Atomic bool stopping exec_aligned;
	bool joined;
	unsigned int size;
	uint64_t spin_ns;
	struct ewyk_reserved_ops ops;
	struct ewyk_task *(*idle_poll)(void *arg);
	void *idle_arg;
	struct rslot *slots;
};

static _Thread_local int self_idx = -1;

static inline bool
is_idle(uint64_t w)
{
	return (w & S_LOW) == S_IDLE || (w & S_LOW) == (S_IDLE | S_PARKED);
}

static inline bool
is_task(uint64_t w)
{
	return w != S_BUSY && (w & S_LOW) == 0;
}

static inline uint32_t *
slot_futex(struct rslot *sl)
{
	return exec_futex_word(&sl->word);
}

/* Leave the idle set. False if a task (or stop) got there first. */
static bool
withdraw(struct rslot *sl, uint64_t *w)
{
	return atomic_compare_exchange_strong_explicit(&sl->word, w, S_BUSY,
			memory_order_acquire, memory_order_acquire);
}

/* Take the task out of a claimed slot. */
static struct ewyk_task *
take(struct rslot *sl, uint64_t w)
{
	atomic_store_explicit(&sl->word, S_BUSY, memory_order_relaxed);
	atomic_store_explicit(&sl->runs,
			atomic_load_explicit(&sl->runs, memory_order_relaxed) + 1,
			memory_order_relaxed);
	return (struct ewyk_task *)(uintptr_t)w;
}

/*
 * Join the idle set and wait to be claimed: spin, then park.
 * Returns the task to run, or NULL to exit. *extra gets a task returned by
 * idle_poll, to run after the claimed one (if any).
 */
static struct ewyk_task *
wait_for_task(struct ewyk_reserved *rp, struct rslot *sl,
		struct ewyk_task **extra)
{
	uint64_t idle, w, deadline = 0;
	unsigned int n = 0;
	struct ewyk_task *t;

	idle = (atomic_fetch_add_explicit(&rp->ticket, 1,
			memory_order_relaxed) << 3) | S_IDLE;
	/* seq_cst store, then seq_cst load of stopping: pairs with stop(). */
	atomic_store(&sl->word, idle);
	atomic_store_explicit(&rp->hint, sl->idx, memory_order_relaxed);
	if (atomic_load(&rp->stopping)) {
		w = idle;
		if (withdraw(sl, &w))
			return NULL;
		return is_task(w) ? take(sl, w) : NULL;
	}

	if (rp->spin_ns != 0)
		deadline = rp->spin_ns == UINT64_MAX ? UINT64_MAX :
				exec_now_ns() + rp->spin_ns;
	while (deadline != 0) {
		w = atomic_load_explicit(&sl->word, memory_order_acquire);
		if (w != idle)
			return is_task(w) ? take(sl, w) : NULL;
		ewyk_cpu_pause();
		if (++n % SPIN_BATCH != 0)
			continue;
		if (rp->idle_poll != NULL) {
			t = rp->idle_poll(rp->idle_arg);
			if (t != NULL) {
				w = idle;
				if (withdraw(sl, &w))
					return t;
				*extra = t;
				return is_task(w) ? take(sl, w) : NULL;
			}
		}
		if (deadline != UINT64_MAX && exec_now_ns() >= deadline)
			break;
	}

	/* Park: announce it in the word so that a claimer knows to wake us. */
	w = idle;
	if (atomic_compare_exchange_strong_explicit(&sl->word, &w,
			idle | S_PARKED, memory_order_acquire,
			memory_order_acquire)) {
		idle |= S_PARKED;
		while ((w = atomic_load_explicit(&sl->word,
				memory_order_acquire)) == idle)
			exec_futex_wait(slot_futex(sl), (uint32_t)idle);
	}
	return is_task(w) ? take(sl, w) : NULL;
}

static int
worker_main(void *arg)
{
	struct rslot *sl = arg;
	struct ewyk_reserved *rp = sl->pool;
	struct ewyk_task *t, *extra;

	self_idx = (int)sl->idx;
	for (;;) {
		extra = NULL;
		t = wait_for_task(rp, sl, &extra);
		if (t != NULL)
			t->run(t);
		if (extra != NULL)
			extra->run(extra);
		if (t == NULL && extra == NULL)
			break;
	}
	self_idx = -1;
	return 0;
}

static void *
pthread_worker(void *arg)
{
	worker_main(arg);
	return NULL;
}

static int
pthread_start(void *ctx, unsigned int idx, int (*fn)(void *), void *arg)
{
	struct ewyk_reserved *rp = ctx;

	(void)fn;	/* always worker_main */
	return -pthread_create(&rp->slots[idx].tid, NULL, pthread_worker,
			arg);
}

static int
pthread_join_idx(void *ctx, unsigned int idx)
{
	struct ewyk_reserved *rp = ctx;

	return -pthread_join(rp->slots[idx].tid, NULL);
}

/* One CAS picks the worker and hands it the task. */
static bool
claim(struct rslot *sl, uint64_t w, struct ewyk_task *task)
{
	if (!is_idle(w) || !atomic_compare_exchange_strong_explicit(&sl->word,
			&w, (uintptr_t)task, memory_order_release,
			memory_order_relaxed))
		return false;
	if ((w & S_PARKED) != 0)
		exec_futex_wake(slot_futex(sl), 1);
	return true;
}

bool
ewyk_reserved_try_execute_on(struct ewyk_reserved *rp, unsigned int idx,
		struct ewyk_task *task)
{
	struct rslot *sl;

	if (idx < rp->size && !atomic_load_explicit(&rp->stopping,
			memory_order_relaxed)) {
		sl = &rp->slots[idx];
		if (claim(sl, atomic_load_explicit(&sl->word,
				memory_order_relaxed), task))
			return true;
	}
	atomic_fetch_add_explicit(&rp->missed, 1, memory_order_relaxed);
	return false;
}

bool
ewyk_reserved_try_execute(struct ewyk_reserved *rp, struct ewyk_task *task)
{
	struct rslot *sl;
	uint64_t w, best_w;
	unsigned int i, round;
	int best;

	if (rp->size == 0 ||
			atomic_load_explicit(&rp->stopping, memory_order_relaxed))
		goto missed;

	/* Usually the last worker to go idle is still idle: try it first. */
	sl = &rp->slots[atomic_load_explicit(&rp->hint, memory_order_relaxed)];
	if (claim(sl, atomic_load_explicit(&sl->word, memory_order_relaxed),
			task))
		return true;

	/* Bounded: every failed CAS means some other claimer progressed. */
	for (round = 0; round <= rp->size; round++) {
		best = -1;
		best_w = 0;
		for (i = 0; i < rp->size; i++) {
			w = atomic_load_explicit(&rp->slots[i].word,
					memory_order_relaxed);
			if (is_idle(w) && (best < 0 || (w >> 3) > (best_w >> 3))) {
				best = (int)i;
				best_w = w;
			}
		}
		if (best < 0)
			goto missed;
		if (claim(&rp->slots[best], best_w, task))
			return true;
		atomic_fetch_add_explicit(&rp->races, 1, memory_order_relaxed);
	}
missed:
	atomic_fetch_add_explicit(&rp->missed, 1, memory_order_relaxed);
	return false;
}

struct ewyk_reserved *
ewyk_reserved_create(const struct ewyk_reserved_conf *conf)
{
	struct ewyk_reserved *rp;
	unsigned int i;
	int rc;

	if (conf == NULL) {
		errno = EINVAL;
		return NULL;
	}
	rp = aligned_alloc(EXEC_CACHE_LINE, (sizeof(*rp) + EXEC_CACHE_LINE - 1)
			& ~(size_t)(EXEC_CACHE_LINE - 1));
	if (rp == NULL)
		return NULL;
	memset(rp, 0, sizeof(*rp));
	rp->size = conf->size;
	rp->spin_ns = conf->spin_ns;
	rp->idle_poll = conf->idle_poll;
	rp->idle_arg = conf->idle_arg;
	if (conf->ops != NULL) {
		rp->ops = *conf->ops;
	} else {
		rp->ops.start = pthread_start;
		rp->ops.join = pthread_join_idx;
		rp->ops.ctx = rp;
	}
	rp->slots = aligned_alloc(EXEC_CACHE_LINE,
			sizeof(*rp->slots) * (conf->size + 1));
	if (rp->slots == NULL) {
		free(rp);
		return NULL;
	}
	memset(rp->slots, 0, sizeof(*rp->slots) * (conf->size + 1));
	for (i = 0; i < rp->size; i++) {
		rp->slots[i].pool = rp;
		rp->slots[i].idx = i;
	}
	for (i = 0; i < rp->size; i++) {
		rc = rp->ops.start(rp->ops.ctx, i, worker_main, &rp->slots[i]);
		if (rc != 0) {
			ewyk_reserved_stop(rp);
			ewyk_reserved_free(rp);
			errno = rc < 0 ? -rc : rc;
			return NULL;
		}
		rp->slots[i].started = true;
	}
	return rp;
}

void
ewyk_reserved_stop(struct ewyk_reserved *rp)
{
	struct rslot *sl;
	unsigned int i;
	uint64_t w;

	if (rp == NULL || rp->joined)
		return;
	/* seq_cst: a worker going idle after this sees it and leaves. */
	atomic_store(&rp->stopping, true);
	for (i = 0; i < rp->size; i++) {
		sl = &rp->slots[i];
		w = atomic_load(&sl->word);
		while (is_idle(w)) {
			if (atomic_compare_exchange_weak(&sl->word, &w,
					S_STOP)) {
				if ((w & S_PARKED) != 0)
					exec_futex_wake(slot_futex(sl), 1);
				break;
			}
		}
	}
	for (i = 0; i < rp->size; i++)
		if (rp->slots[i].started)
			rp->ops.join(rp->ops.ctx, i);
	rp->joined = true;
}

void
ewyk_reserved_free(struct ewyk_reserved *rp)
{
	if (rp == NULL)
		return;
	ewyk_reserved_stop(rp);
	free(rp->slots);
	free(rp);
}

void
ewyk_reserved_stats(const struct ewyk_reserved *rp,
		struct ewyk_reserved_stats *st)
{
	unsigned int i;
	uint64_t w;

	memset(st, 0, sizeof(*st));
	st->size = rp->size;
	for (i = 0; i < rp->size; i++) {
		w = atomic_load_explicit(&rp->slots[i].word,
				memory_order_relaxed);
		if ((w & S_LOW) == S_IDLE)
			st->spinning++;
		else if ((w & S_LOW) == (S_IDLE | S_PARKED))
			st->parked++;
		st->claims_won += atomic_load_explicit(&rp->slots[i].runs,
				memory_order_relaxed);
	}
	st->claims_missed = atomic_load_explicit(&rp->missed,
			memory_order_relaxed);
	st->claim_races = atomic_load_explicit(&rp->races,
			memory_order_relaxed);
}

int
ewyk_reserved_self(void)
{
	return self_idx;
}
