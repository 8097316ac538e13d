/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Adaptive execution strategy ("Eat What You Kill"), after Jetty 12's
 * AdaptiveExecutionStrategy, on one atomic 64-bit word per producer.
 *
 * Word layout:
 *   bits 0-1   state: IDLE, PRODUCING, REPRODUCING
 *   bit  2     INLINE: the owner is running one task inline (stealable only)
 *   bit  3     QUEUED: dispatch() queued a producer on the blocking pool
 *   bits 4-15  pending: helpers claimed on the reserved pool, not arrived
 *   bits 16-63 tick: bumped by each inline task and by each steal
 *
 * The thread that moves the word from IDLE to PRODUCING owns the producer
 * until it moves it back to IDLE (or a steal bumps the tick under it).
 * Every transition is a CAS on the whole word, so ownership moves with
 * acquire/release ordering and no transition can be lost.
 *
 * Only a claimed reserved thread counts as pending: it runs now, so EPC may
 * release production to it. A producer queued behind blocked tasks may take
 * long to arrive; EPC must not wait for it (Jetty's starvation, #547), so it
 * only has a bit of its own that keeps dispatch() from queueing twice.
 */

#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>

#include "ewyk_exec.h"
#include "exec_sys.h"

#define ST_IDLE		0u
#define ST_PRODUCING	1u
#define ST_REPRODUCING	2u
#define ST_MASK		UINT64_C(3)
#define W_INLINE	UINT64_C(4)
#define W_QUEUED	UINT64_C(8)
#define PEND_SHIFT	4
#define PEND_BITS	12
#define PEND_MASK	(((UINT64_C(1) << PEND_BITS) - 1) << PEND_SHIFT)
#define TICK_SHIFT	(PEND_SHIFT + PEND_BITS)
#define TICK_ONE	(UINT64_C(1) << TICK_SHIFT)

/* Bound for produce() called from inside a consumed task. */
#define MAX_DEPTH	8

enum { C_FAILED = EWYK_FIBER + 1, C_FIBER_FALLBACK, C_REJECTED, C_STOLEN, C_DISPATCH_FAILED, C_WATCHED,
	C_NUM };

/* A watcher that has seen no inline task for this long goes back to the
 * reserved pool. */
#define WATCH_IDLE_NS 200000
#define WATCH_PAUSES 32		/* between two looks at the owner */

struct ewyk_strategy {
	/* Written by every transition: alone on its line. */
	_Atomic uint64_t word exec_aligned;

	/* Read by the owner for every task, written at start-up only. */
	struct ewyk_task *(*produce)(void *ctx) exec_aligned;
	void (*consumed)(void *ctx, struct ewyk_task *task, int rc,
			bool owner);
	void (*rejected)(void *ctx, struct ewyk_task *task, int err);
	int (*fiber)(void *ctx, struct ewyk_task *task);
	void *ctx;
	struct ewyk_executor exec;
	unsigned int flags;
	_Atomic int mode;
	struct ewyk_task run_task;	/* what a pending helper runs */
	struct ewyk_task queued_task;	/* what a queued producer runs */
	struct ewyk_task watch_task;	/* what a watcher runs */
	uint64_t watch_ns;

	/* Reserved threads watching the owner's inline tasks. */
	_Atomic int watchers exec_aligned;

	/* pc, pic, pec, epc, then the others. */
	_Atomic uint64_t cnt[C_NUM] exec_aligned;
};

static _Thread_local unsigned int depth;

static inline unsigned int
w_state(uint64_t w)
{
	return (unsigned int)(w & ST_MASK);
}

static inline uint64_t
w_with_state(uint64_t w, unsigned int st)
{
	return (w & ~ST_MASK) | st;
}

static inline int
w_pending(uint64_t w)
{
	/* Sign-extend the 12-bit field. */
	return (int)((int64_t)(w << (64 - TICK_SHIFT)) >> (64 - PEND_BITS));
}

static inline uint64_t
w_with_pending(uint64_t w, int p)
{
	return (w & ~PEND_MASK) | (((uint64_t)p << PEND_SHIFT) & PEND_MASK);
}

static inline uint64_t
w_tick(uint64_t w)
{
	return w >> TICK_SHIFT;
}

static inline uint64_t
w_token(uint64_t w)
{
	return (w & W_INLINE) != 0 ? (w_tick(w) << 1) | 1 : 0;
}

static inline uint64_t
load(const struct ewyk_strategy *s)
{
	return atomic_load_explicit(&s->word, memory_order_acquire);
}

static inline bool
cas(struct ewyk_strategy *s, uint64_t *expected, uint64_t desired)
{
	return atomic_compare_exchange_weak_explicit(&s->word, expected,
			desired, memory_order_acq_rel, memory_order_acquire);
}

static inline void
cnt_inc(struct ewyk_strategy *s, unsigned int i)
{
	/* Not owner-only: EPC and steals count after ownership moved. */
	atomic_fetch_add_explicit(&s->cnt[i], 1, memory_order_relaxed);
}

static void produce_loop(struct ewyk_strategy *s);

/* Owner saw nothing to do: go idle unless someone asked to poll again. */
static bool
stop_producing(struct ewyk_strategy *s)
{
	uint64_t w = load(s);

	for (;;) {
		if (w_state(w) == ST_REPRODUCING) {
			if (cas(s, &w, w_with_state(w, ST_PRODUCING)))
				return false;
		} else if (cas(s, &w, w_with_state(w, ST_IDLE))) {
			return true;
		}
	}
}

/* EPC consumer after its task: take production back if nobody has. */
static bool
reacquire(struct ewyk_strategy *s)
{
	uint64_t w = load(s);

	while (w_state(w) == ST_IDLE) {
		if (cas(s, &w, w_with_state(w, ST_PRODUCING)))
			return true;
	}
	return false;
}

/*
 * Owner wants to consume its task while someone else produces. Returns true
 * if production was released (EPC), false if the caller still owns it.
 * Production is released before the helper is woken, so that a helper that
 * runs at once can take over instead of being spent for nothing.
 */
static bool
try_epc(struct ewyk_strategy *s)
{
	uint64_t w = load(s);
	int p;

	for (;;) {
		p = w_pending(w);
		if (p > 0) {
			/* A helper is on its way already: let it produce. */
			if (cas(s, &w, w_with_state(w, ST_IDLE)))
				return true;
			continue;
		}
		if (s->exec.try_execute == NULL)
			return false;
		if (cas(s, &w, w_with_state(w_with_pending(w, p + 1),
				ST_IDLE)))
			break;
	}
	if (s->exec.try_execute(s->exec.try_execute_ctx, &s->run_task))
		return true;

	/* Nobody free: withdraw the token and take production back. */
	w = load(s);
	for (;;) {
		uint64_t nw = w_with_pending(w, w_pending(w) - 1);

		if (w_state(w) == ST_IDLE) {
			if (cas(s, &w, w_with_state(nw, ST_PRODUCING)))
				return false;
		} else if (cas(s, &w, nw)) {
			/* Someone took over meanwhile: this is EPC after all. */
			return true;
		}
	}
}

static enum ewyk_consume
decide(struct ewyk_strategy *s, const struct ewyk_task *t, bool nb)
{
	enum ewyk_mode mode = atomic_load_explicit(&s->mode,
			memory_order_relaxed);
	unsigned int type = t->type <= EWYK_EITHER ? t->type : EWYK_BLOCKING;
	bool inline_ok = type == EWYK_NON_BLOCKING ||
			(type == EWYK_EITHER && nb);

	switch (mode) {
	case EWYK_MODE_PC:
		return EWYK_PC;
	case EWYK_MODE_PEC:
		return type == EWYK_NON_BLOCKING ? EWYK_PC : EWYK_PEC;
	case EWYK_MODE_EPC:
		/* Never run a blocking task on a thread flagged non-blocking. */
		if (type == EWYK_BLOCKING && nb)
			return EWYK_PEC;
		if (try_epc(s))
			return EWYK_EPC;
		break;
	default:
		if (inline_ok)
			return EWYK_PC;
		if (type == EWYK_BLOCKING && nb)
			return EWYK_PEC;
		if (try_epc(s))
			return EWYK_EPC;
		break;
	}
	/* No helper: keep producing. */
	if (inline_ok)
		return EWYK_PC;
	return type == EWYK_EITHER ? EWYK_PIC : EWYK_PEC;
}

/* Mark the owner as inside one inline task; returns its tick. */
static uint64_t
inline_begin(struct ewyk_strategy *s)
{
	uint64_t w = load(s);
	uint64_t nw;

	do {
		nw = (w | W_INLINE) + TICK_ONE;
	} while (!cas(s, &w, nw));
	return w_tick(nw);
}

/* False if production was stolen while the task ran. */
static bool
inline_end(struct ewyk_strategy *s, uint64_t tick)
{
	uint64_t w = load(s);

	for (;;) {
		if ((w & W_INLINE) == 0 || w_tick(w) != tick)
			return false;
		if (cas(s, &w, w & ~W_INLINE))
			return true;
	}
}

/*
 * A reserved thread watching the owner's inline tasks: one that runs
 * past watch_ns is stolen from (ewyk_strategy_steal), so the watcher
 * produces while the old owner finishes its task. The watcher leaves
 * after WATCH_IDLE_NS without an inline task, and never while one that
 * may have counted on it runs: it drops its count, then looks at the
 * word, while the owner marks INLINE, then looks at the count, all in
 * sequentially consistent operations, so one of the two always sees the
 * other.
 */
static int
run_watch(struct ewyk_task *task)
{
	struct ewyk_strategy *s = exec_container_of(task, struct ewyk_strategy,
			watch_task);
	uint64_t seen = 0, since = exec_now_ns(), idle = since;

	atomic_fetch_add(&s->watchers, 1);
	for (;;) {
		uint64_t w = load(s), now = exec_now_ns();

		if ((w & W_INLINE) != 0) {
			idle = now;
			if (w_tick(w) != seen) {
				seen = w_tick(w);
				since = now;
			} else if (now - since >= s->watch_ns) {
				atomic_fetch_sub(&s->watchers, 1);
				ewyk_strategy_steal(s, w_token(w));
				return 0;
			}
		} else if (now - idle >= WATCH_IDLE_NS) {
			atomic_fetch_sub(&s->watchers, 1);
			if ((atomic_load(&s->word) & W_INLINE) == 0)
				return 0;
			atomic_fetch_add(&s->watchers, 1);
		}
		/* Look every microsecond or so, not at every PAUSE: each look
		 * pulls the owner's word over to this core, and the owner's
		 * next transition must pull it back. */
		for (int i = 0; i < WATCH_PAUSES; i++)
			ewyk_cpu_pause();
	}
}

/*
 * EPC with a watched hand-off (watch_ns): the owner runs the task while a
 * watcher stands by. Returns -1, with nothing run and production still
 * the caller's, when no watcher could be had; else whether the caller
 * still owns production.
 */
static int
consume_watched(struct ewyk_strategy *s, struct ewyk_task *t)
{
	uint64_t tick = inline_begin(s);
	bool owner;
	int rc;

	/* The mark, again as a sequentially consistent write (it changes
	 * nothing), then the count: see run_watch(). */
	atomic_fetch_or(&s->word, 0);
	if (atomic_load(&s->watchers) == 0 && (s->exec.try_execute == NULL ||
			!s->exec.try_execute(s->exec.try_execute_ctx,
			&s->watch_task)) && inline_end(s, tick))
		return -1;
	/* Watched; or, when inline_end() above failed, a watcher that was
	 * leaving saw the mark and took production already: the task is
	 * this thread's to run all the same. */
	t->mode = EWYK_EPC;
	cnt_inc(s, EWYK_EPC);
	cnt_inc(s, C_WATCHED);
	rc = t->run(t);
	if (rc < 0)
		cnt_inc(s, C_FAILED);
	owner = inline_end(s, tick);
	if (s->consumed != NULL)
		s->consumed(s->ctx, t, rc, owner);
	return owner;
}

/* A task that adaptive mode would hand production over for, when a
 * watched hand-off is configured. */
static bool
watchable(const struct ewyk_strategy *s, const struct ewyk_task *t, bool nb)
{
	return s->watch_ns != 0 && !nb && t->type != EWYK_NON_BLOCKING &&
		(s->flags & EWYK_STRATEGY_STEALABLE) != 0 &&
		atomic_load_explicit(&s->mode, memory_order_relaxed) ==
		EWYK_MODE_ADAPTIVE;
}

/* PC or PIC: the owner runs the task itself and keeps producing. */
static bool
consume_inline(struct ewyk_strategy *s, struct ewyk_task *t, bool pic)
{
	bool stealable = (s->flags & EWYK_STRATEGY_STEALABLE) != 0;
	uint64_t tick = 0;
	bool old = false, owner = true;
	int rc;

	if (stealable)
		tick = inline_begin(s);
	if (pic)
		old = ewyk_nonblocking_set(true);
	rc = t->run(t);
	if (pic)
		ewyk_nonblocking_set(old);
	if (rc < 0)
		cnt_inc(s, C_FAILED);
	if (stealable)
		owner = inline_end(s, tick);
	if (s->consumed != NULL)
		s->consumed(s->ctx, t, rc, owner);
	return owner;
}

/*
 * EPC: production was released; run the task with a hot cache, then race
 * the helper for production. The race runs whatever run() returned: a
 * failing task must never leave its thread producing next to the helper
 * (Jetty #2468).
 */
static bool
consume_epc(struct ewyk_strategy *s, struct ewyk_task *t)
{
	int rc = t->run(t);
	bool owner;

	if (rc < 0)
		cnt_inc(s, C_FAILED);
	owner = reacquire(s);
	if (s->consumed != NULL)
		s->consumed(s->ctx, t, rc, owner);
	return owner;
}

static void
consume_pec(struct ewyk_strategy *s, struct ewyk_task *t)
{
	int rc = EWYK_REJECTED;

	if (s->exec.execute != NULL)
		rc = s->exec.execute(s->exec.execute_ctx, t);
	if (rc == 0)
		return;
	cnt_inc(s, C_REJECTED);
	if (s->rejected != NULL)
		s->rejected(s->ctx, t, rc);
}

/* A fiber-capable task that runs as a fiber: one resuming its parked
 * fiber always; a new one in adaptive mode when a fiber is free. */
static bool
as_fiber(struct ewyk_strategy *s, struct ewyk_task *t)
{
	int r;

	if (t->type != EWYK_FIBER_CAPABLE || s->fiber == NULL)
		return false;
	r = s->fiber(s->ctx, t);
	if (r > 0)
		return true;
	if (atomic_load_explicit(&s->mode, memory_order_relaxed) !=
			EWYK_MODE_ADAPTIVE)
		return false;
	if (r < 0)
		cnt_inc(s, C_FIBER_FALLBACK);
	return r == 0;
}

/* Called by the owner only. */
static void
produce_loop(struct ewyk_strategy *s)
{
	/* Sampled once: a PIC task restores it before the next decision. */
	const bool nb = ewyk_nonblocking();
	struct ewyk_task *t;
	enum ewyk_consume m;
	bool owner;

	for (;;) {
		t = s->produce(s->ctx);
		if (t == NULL) {
			if (stop_producing(s))
				return;
			continue;
		}
		if (as_fiber(s, t)) {
			t->mode = EWYK_FIBER;
			cnt_inc(s, EWYK_FIBER);
			if (!consume_inline(s, t, false))
				return;
			continue;
		}
		if (watchable(s, t, nb)) {
			int watched = consume_watched(s, t);

			if (watched > 0)
				continue;
			if (watched == 0)
				return;
		}
		m = decide(s, t, nb);
		t->mode = (uint8_t)m;
		cnt_inc(s, m);
		switch (m) {
		case EWYK_PC:
			owner = consume_inline(s, t, false);
			break;
		case EWYK_PIC:
			owner = consume_inline(s, t, true);
			break;
		case EWYK_PEC:
			consume_pec(s, t);
			owner = true;
			break;
		default:
			owner = consume_epc(s, t);
			break;
		}
		if (!owner)
			return;
	}
}

enum arrival { OUTSIDE, PENDING, QUEUED };

/* Become the owner, or leave the owner a reason to poll once more. */
static void
try_produce(struct ewyk_strategy *s, enum arrival how)
{
	uint64_t w = load(s);
	uint64_t nw;

	for (;;) {
		if (how == OUTSIDE && w_state(w) == ST_REPRODUCING)
			return;
		nw = w;
		if (how == PENDING)
			nw = w_with_pending(w, w_pending(w) - 1);
		else if (how == QUEUED)
			nw = w & ~W_QUEUED;
		nw = w_with_state(nw, w_state(w) == ST_IDLE ?
				ST_PRODUCING : ST_REPRODUCING);
		if (cas(s, &w, nw))
			break;
	}
	if (w_state(w) != ST_IDLE)
		return;
	depth++;
	produce_loop(s);
	depth--;
}

static int
run_pending(struct ewyk_task *task)
{
	try_produce(exec_container_of(task, struct ewyk_strategy, run_task),
			PENDING);
	return 0;
}

static int
run_queued(struct ewyk_task *task)
{
	try_produce(exec_container_of(task, struct ewyk_strategy,
			queued_task), QUEUED);
	return 0;
}

void
ewyk_strategy_produce(struct ewyk_strategy *s)
{
	/* A task that produces from inside a task: bound the recursion. */
	if (depth >= MAX_DEPTH && ewyk_strategy_dispatch(s) == 0)
		return;
	try_produce(s, OUTSIDE);
}

int
ewyk_strategy_dispatch(struct ewyk_strategy *s)
{
	uint64_t w = load(s);
	int rc;

	for (;;) {
		switch (w_state(w)) {
		case ST_IDLE:
			if (w_pending(w) > 0)
				return 0;	/* a helper will produce */
			if (s->exec.try_execute == NULL)
				goto queue;
			if (cas(s, &w, w_with_pending(w, w_pending(w) + 1)))
				goto claim;
			break;
		case ST_PRODUCING:
			if (cas(s, &w, w_with_state(w, ST_REPRODUCING)))
				return 0;
			break;
		default:
			return 0;
		}
	}
claim:
	/* Production is non-blocking work: a reserved thread first. */
	if (s->exec.try_execute(s->exec.try_execute_ctx, &s->run_task))
		return 0;
	w = load(s);
	while (!cas(s, &w, w_with_pending(w, w_pending(w) - 1)))
		;
queue:
	/* Then a queued producer, unless one is queued already. */
	do {
		if ((w & W_QUEUED) != 0)
			return 0;
	} while (!cas(s, &w, w | W_QUEUED));
	rc = s->exec.execute != NULL ?
			s->exec.execute(s->exec.execute_ctx, &s->queued_task) :
			EWYK_REJECTED;
	if (rc == 0)
		return 0;
	cnt_inc(s, C_DISPATCH_FAILED);
	w = load(s);
	while (!cas(s, &w, w & ~W_QUEUED))
		;
	return rc;
}

void
ewyk_strategy_consumed_in_produce(struct ewyk_strategy *s)
{
	cnt_inc(s, EWYK_PC);
}

uint64_t
ewyk_strategy_inline_token(const struct ewyk_strategy *s)
{
	return w_token(atomic_load_explicit(&s->word, memory_order_relaxed));
}

bool
ewyk_strategy_steal(struct ewyk_strategy *s, uint64_t token)
{
	uint64_t w;

	if ((s->flags & EWYK_STRATEGY_STEALABLE) == 0 || token == 0)
		return false;
	w = load(s);
	do {
		if (w_token(w) != token)
			return false;	/* the task finished meanwhile */
	} while (!cas(s, &w, (w & ~W_INLINE) + TICK_ONE));
	cnt_inc(s, C_STOLEN);
	depth++;
	produce_loop(s);
	depth--;
	return true;
}

struct ewyk_strategy *
ewyk_strategy_create(const struct ewyk_strategy_conf *conf)
{
	struct ewyk_strategy *s;
	size_t sz = (sizeof(*s) + EXEC_CACHE_LINE - 1) &
			~(size_t)(EXEC_CACHE_LINE - 1);

	if (conf == NULL || conf->produce == NULL ||
			(unsigned int)conf->mode > EWYK_MODE_EPC) {
		errno = EINVAL;
		return NULL;
	}
	s = aligned_alloc(EXEC_CACHE_LINE, sz);
	if (s == NULL)
		return NULL;
	memset(s, 0, sz);
	atomic_init(&s->word, 0);
	s->produce = conf->produce;
	s->consumed = conf->consumed;
	s->rejected = conf->rejected;
	s->fiber = conf->fiber;
	s->ctx = conf->ctx;
	s->exec = conf->exec;
	s->flags = conf->flags;
	atomic_init(&s->mode, conf->mode);
	s->run_task.run = run_pending;
	s->run_task.type = EWYK_BLOCKING;
	s->queued_task.run = run_queued;
	s->queued_task.type = EWYK_BLOCKING;
	s->watch_task.run = run_watch;
	s->watch_task.type = EWYK_NON_BLOCKING;
	s->watch_ns = conf->watch_ns;
	atomic_init(&s->watchers, 0);
	return s;
}

void
ewyk_strategy_free(struct ewyk_strategy *s)
{
	free(s);
}

void
ewyk_strategy_set_mode(struct ewyk_strategy *s, enum ewyk_mode mode)
{
	if ((unsigned int)mode <= EWYK_MODE_EPC)
		atomic_store_explicit(&s->mode, mode, memory_order_relaxed);
}

enum ewyk_mode
ewyk_strategy_get_mode(const struct ewyk_strategy *s)
{
	return atomic_load_explicit(&s->mode, memory_order_relaxed);
}

static uint64_t
cnt_get(const struct ewyk_strategy *s, unsigned int i)
{
	return atomic_load_explicit(&s->cnt[i], memory_order_relaxed);
}

void
ewyk_strategy_stats(const struct ewyk_strategy *s,
		struct ewyk_strategy_stats *st)
{
	uint64_t w = atomic_load_explicit(&s->word, memory_order_relaxed);

	st->pc = cnt_get(s, EWYK_PC);
	st->pic = cnt_get(s, EWYK_PIC);
	st->pec = cnt_get(s, EWYK_PEC);
	st->epc = cnt_get(s, EWYK_EPC);
	st->fiber = cnt_get(s, EWYK_FIBER);
	st->fiber_fallback = cnt_get(s, C_FIBER_FALLBACK);
	st->failed = cnt_get(s, C_FAILED);
	st->rejected = cnt_get(s, C_REJECTED);
	st->stolen = cnt_get(s, C_STOLEN);
	st->watched = cnt_get(s, C_WATCHED);
	st->dispatch_failed = cnt_get(s, C_DISPATCH_FAILED);
	st->state = w_state(w);
	st->pending = w_pending(w);
	st->inline_busy = (w & W_INLINE) != 0;
	st->queued = (w & W_QUEUED) != 0;
	st->mode = ewyk_strategy_get_mode(s);
}

bool
ewyk_strategy_quiescent(const struct ewyk_strategy *s)
{
	uint64_t w = load(s);

	return w_state(w) == ST_IDLE && w_pending(w) == 0 &&
			(w & W_QUEUED) == 0;
}
