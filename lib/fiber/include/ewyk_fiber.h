/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fibers: a function run on a small stack of its own that can park in the
 * middle (ewyk_fiber_park) and be resumed later, by whichever thread
 * resumes it, with a user-space context switch (callee-saved registers and
 * the stack pointer; no signal mask, so no system call per switch).
 *
 * Stacks come from a pool made for one owner (a shard): fixed size, a
 * guard page below each, reused LIFO (the most recently used stack is the
 * one still in cache), counted. The pool, its fibers and every resume and
 * park belong to one owner at a time; a fiber resumed on another thread
 * after ownership moved (with acquire/release ordering) runs there.
 */
#ifndef EWYK_FIBER_H
#define EWYK_FIBER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ewyk_fiber;
struct ewyk_fiber_pool;

typedef void (*ewyk_fiber_fn)(struct ewyk_fiber *f, void *arg);

struct ewyk_fiber_pool_conf {
	size_t stack_size;	/* usable bytes, rounded up to pages (64 KiB) */
	unsigned int max;	/* fibers alive at once (stacks made lazily) */
};

struct ewyk_fiber_pool_stats {
	unsigned int stacks;	/* made so far (each a mapping) */
	unsigned int in_use;	/* fibers started, not yet finished */
	unsigned int peak;
	uint64_t started;
	uint64_t finished;
	uint64_t exhausted;	/* ewyk_fiber_start() found none free */
	uint64_t switches;	/* into a fiber */
};

/* NULL with errno set: EINVAL (bad conf), ENOMEM. */
struct ewyk_fiber_pool *ewyk_fiber_pool_create(
		const struct ewyk_fiber_pool_conf *conf);
/* Only with no fiber alive. */
void ewyk_fiber_pool_free(struct ewyk_fiber_pool *p);
/* From any thread. */
void ewyk_fiber_pool_stats(struct ewyk_fiber_pool *p,
		struct ewyk_fiber_pool_stats *st);

/* Whether a fiber could start now (a stack free or still to be made). */
bool ewyk_fiber_pool_available(struct ewyk_fiber_pool *p);

/*
 * Starts fn(f, arg) on a fiber of the pool and runs it until it parks or
 * returns. Returns the fiber (parked: resume it later), or NULL when it
 * already returned (its stack is back in the pool) -- or when no stack was
 * free: then errno is EAGAIN and fn did not run.
 */
struct ewyk_fiber *ewyk_fiber_start(struct ewyk_fiber_pool *p,
		ewyk_fiber_fn fn, void *arg);
/* Runs a parked fiber until it parks again (returns true) or returns
 * (false: it is gone, its stack back in the pool). */
bool ewyk_fiber_resume(struct ewyk_fiber *f);
/* From inside a fiber: back to whoever resumed it, until resumed. */
void ewyk_fiber_park(struct ewyk_fiber *f);
/* The fiber running on this thread, or NULL outside any. */
struct ewyk_fiber *ewyk_fiber_self(void);

#endif /* EWYK_FIBER_H */
