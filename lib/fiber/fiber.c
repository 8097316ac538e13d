/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ewyk_fiber.h"
#include "fiber_switch.h"

#define STACK_DEFAULT (64 * 1024)

struct ewyk_fiber {
	struct ewyk_fiber *next_free;
	struct ewyk_fiber_pool *pool;
	void *sp;		/* saved when not running */
	void *caller_sp;	/* whoever resumed it, while it runs */
	uint8_t *stack;		/* lowest usable byte; the guard page below */
	ewyk_fiber_fn fn;
	void *arg;
	bool done;
};

struct ewyk_fiber_pool {
	/* Guards the free list and the counters. Only the owner starts
	 * fibers, but a fiber whose owner lost the pool's shard (a steal)
	 * finishes on the old owner's thread, beside the new owner. */
	bool lock;
	size_t stack_size;
	size_t page;
	unsigned int max;
	struct ewyk_fiber *free;	/* LIFO: the warmest stack first */
	struct ewyk_fiber_pool_stats st;
	struct ewyk_fiber fibers[];
};

/* The fiber running on this thread. Read through a function that is not
 * inlined: a fiber may park on one thread and resume on another, so no
 * caller may keep this thread-local's address across a park. */
static __thread struct ewyk_fiber *current;

__attribute__((noinline)) struct ewyk_fiber *
ewyk_fiber_self(void)
{
	return current;
}

struct ewyk_fiber_pool *
ewyk_fiber_pool_create(const struct ewyk_fiber_pool_conf *conf)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t size = conf->stack_size ? conf->stack_size : STACK_DEFAULT;
	struct ewyk_fiber_pool *p;
	unsigned int i;

	if (conf->max == 0 || size < 4 * page || size > (64u << 20)) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p) + sizeof(p->fibers[0]) * conf->max);
	if (p == NULL)
		return NULL;
	p->page = page;
	p->stack_size = (size + page - 1) & ~(page - 1);
	p->max = conf->max;
	for (i = conf->max; i-- > 0;) {
		p->fibers[i].pool = p;
		p->fibers[i].next_free = p->free;
		p->free = &p->fibers[i];
	}
	return p;
}

static void
pool_lock(struct ewyk_fiber_pool *p)
{
	while (__atomic_test_and_set(&p->lock, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&p->lock, __ATOMIC_RELAXED))
			__builtin_ia32_pause();
}

static void
pool_unlock(struct ewyk_fiber_pool *p)
{
	__atomic_clear(&p->lock, __ATOMIC_RELEASE);
}

void
ewyk_fiber_pool_free(struct ewyk_fiber_pool *p)
{
	unsigned int i;

	if (p == NULL)
		return;
	for (i = 0; i < p->max; i++)
		if (p->fibers[i].stack != NULL)
			munmap(p->fibers[i].stack - p->page,
					p->stack_size + p->page);
	free(p);
}

void
ewyk_fiber_pool_stats(struct ewyk_fiber_pool *p,
		struct ewyk_fiber_pool_stats *st)
{
	pool_lock(p);	/* read from another thread (telemetry) */
	*st = p->st;
	pool_unlock(p);
	st->switches = __atomic_load_n(&p->st.switches, __ATOMIC_RELAXED);
}

bool
ewyk_fiber_pool_available(struct ewyk_fiber_pool *p)
{
	return __atomic_load_n(&p->free, __ATOMIC_RELAXED) != NULL;
}

/* A stack with a guard page below it: an overflow faults at once instead
 * of writing over a neighbour. */
static int
map_stack(struct ewyk_fiber_pool *p, struct ewyk_fiber *f)
{
	uint8_t *m = mmap(NULL, p->stack_size + p->page, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);

	if (m == MAP_FAILED)
		return -1;
	if (mprotect(m, p->page, PROT_NONE) != 0) {
		munmap(m, p->stack_size + p->page);
		return -1;
	}
	f->stack = m + p->page;
	p->st.stacks++;
	return 0;
}

/* Where every fiber begins (from fiber_entry): runs its function, then
 * leaves for good. */
void
ewyk_fiber_main(struct ewyk_fiber *f)
{
	f->fn(f, f->arg);
	f->done = true;
	fiber_switch(&f->sp, f->caller_sp);
	abort();	/* a finished fiber is never resumed */
}

static void
finish(struct ewyk_fiber *f)
{
	struct ewyk_fiber_pool *p = f->pool;

	pool_lock(p);
	p->st.in_use--;
	p->st.finished++;
	f->next_free = p->free;
	p->free = f;
	pool_unlock(p);
}

bool
ewyk_fiber_resume(struct ewyk_fiber *f)
{
	struct ewyk_fiber *prev = current;

	current = f;
	__atomic_fetch_add(&f->pool->st.switches, 1, __ATOMIC_RELAXED);
	fiber_switch(&f->caller_sp, f->sp);
	current = prev;
	if (!f->done)
		return true;
	finish(f);
	return false;
}

void
ewyk_fiber_park(struct ewyk_fiber *f)
{
	fiber_switch(&f->sp, f->caller_sp);
}

struct ewyk_fiber *
ewyk_fiber_start(struct ewyk_fiber_pool *p, ewyk_fiber_fn fn, void *arg)
{
	struct ewyk_fiber *f;

	pool_lock(p);
	f = p->free;
	if (f == NULL || (f->stack == NULL && map_stack(p, f) != 0)) {
		p->st.exhausted++;
		pool_unlock(p);
		errno = EAGAIN;
		return NULL;
	}
	p->free = f->next_free;
	p->st.started++;
	if (++p->st.in_use > p->st.peak)
		p->st.peak = p->st.in_use;
	pool_unlock(p);
	f->fn = fn;
	f->arg = arg;
	f->done = false;
	f->sp = fiber_stack_init(f->stack + p->stack_size, f);
	return ewyk_fiber_resume(f) ? f : NULL;
}
