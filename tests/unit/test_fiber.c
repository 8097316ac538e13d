/* SPDX-License-Identifier: BSD-3-Clause */
/* Fibers: park and resume, what a switch keeps, stacks reused and
 * guarded, a pool that runs out, a fiber resumed on another thread. */
#include <errno.h>
#include <fenv.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "ewyk_fiber.h"

static struct ewyk_fiber_pool *
pool(unsigned int max)
{
	struct ewyk_fiber_pool_conf c = { .stack_size = 64 * 1024, .max = max };
	struct ewyk_fiber_pool *p = ewyk_fiber_pool_create(&c);

	assert_non_null(p);
	return p;
}

struct steps {
	int n;
	int seen[8];
	int step;
};

static void
counter(struct ewyk_fiber *f, void *arg)
{
	struct steps *s = arg;
	volatile int local = 1000;	/* lives on the fiber's stack */
	int i;

	assert_ptr_equal(ewyk_fiber_self(), f);
	for (i = 0; i < s->n; i++) {
		s->seen[i] = local + i;
		s->step = i;
		ewyk_fiber_park(f);
	}
}

static void
park_and_resume(void **state)
{
	struct ewyk_fiber_pool *p = pool(4);
	struct ewyk_fiber_pool_stats st;
	struct steps s = { .n = 3 };
	volatile int mine = 7;	/* the resumer's own frame survives */
	struct ewyk_fiber *f;
	int i;

	(void)state;
	assert_null(ewyk_fiber_self());
	f = ewyk_fiber_start(p, counter, &s);
	assert_non_null(f);
	assert_int_equal(s.step, 0);
	assert_null(ewyk_fiber_self());
	for (i = 1; i < 3; i++) {
		assert_true(ewyk_fiber_resume(f));
		assert_int_equal(s.step, i);
	}
	assert_false(ewyk_fiber_resume(f));	/* returned: gone */
	for (i = 0; i < 3; i++)
		assert_int_equal(s.seen[i], 1000 + i);
	assert_int_equal(mine, 7);
	ewyk_fiber_pool_stats(p, &st);
	assert_int_equal(st.started, 1);
	assert_int_equal(st.finished, 1);
	assert_int_equal(st.in_use, 0);
	assert_int_equal(st.switches, 4);
	ewyk_fiber_pool_free(p);
}

static void
rounding(struct ewyk_fiber *f, void *arg)
{
	int *mode = arg;

	fesetround(FE_UPWARD);
	ewyk_fiber_park(f);
	*mode = fegetround();	/* its own, after the resumer's changes */
}

/* The floating-point control word is the fiber's, as across a call. */
static void
floating_point_mode_is_per_context(void **state)
{
	struct ewyk_fiber_pool *p = pool(1);
	struct ewyk_fiber *f;
	int mode = -1;

	(void)state;
	fesetround(FE_TONEAREST);
	f = ewyk_fiber_start(p, rounding, &mode);
	assert_non_null(f);
	assert_int_equal(fegetround(), FE_TONEAREST);
	fesetround(FE_DOWNWARD);
	assert_false(ewyk_fiber_resume(f));
	assert_int_equal(mode, FE_UPWARD);
	assert_int_equal(fegetround(), FE_DOWNWARD);
	fesetround(FE_TONEAREST);
	ewyk_fiber_pool_free(p);
}

static void
nothing(struct ewyk_fiber *f, void *arg)
{
	(void)f;
	++*(long *)arg;
}

/* A million fibers one after another: one stack, used again each time. */
static void
stacks_are_reused(void **state)
{
	struct ewyk_fiber_pool *p = pool(8);
	struct ewyk_fiber_pool_stats st;
	long runs = 0, i;

	(void)state;
	for (i = 0; i < 1000000; i++)
		assert_null(ewyk_fiber_start(p, nothing, &runs));
	ewyk_fiber_pool_stats(p, &st);
	assert_int_equal(runs, 1000000);
	assert_int_equal(st.stacks, 1);
	assert_int_equal(st.in_use, 0);
	assert_int_equal(st.finished, 1000000);
	ewyk_fiber_pool_free(p);
}

static void
park_once(struct ewyk_fiber *f, void *arg)
{
	(void)arg;
	ewyk_fiber_park(f);
}

static void
pool_runs_out(void **state)
{
	struct ewyk_fiber_pool *p = pool(2);
	struct ewyk_fiber_pool_stats st;
	struct ewyk_fiber *a, *b;

	(void)state;
	a = ewyk_fiber_start(p, park_once, NULL);
	b = ewyk_fiber_start(p, park_once, NULL);
	assert_non_null(a);
	assert_non_null(b);
	errno = 0;
	assert_null(ewyk_fiber_start(p, park_once, NULL));
	assert_int_equal(errno, EAGAIN);
	assert_false(ewyk_fiber_resume(a));
	assert_non_null(a = ewyk_fiber_start(p, park_once, NULL));
	assert_false(ewyk_fiber_resume(a));
	assert_false(ewyk_fiber_resume(b));
	ewyk_fiber_pool_stats(p, &st);
	assert_int_equal(st.exhausted, 1);
	assert_int_equal(st.peak, 2);
	assert_int_equal(st.stacks, 2);
	ewyk_fiber_pool_free(p);
}

static int
deep(int n)
{
	volatile char pad[512];

	pad[0] = (char)n;
	return n == 0 ? pad[0] : deep(n - 1) + pad[0];
}

static void
overflow(struct ewyk_fiber *f, void *arg)
{
	(void)f;
	*(int *)arg = deep(100000);	/* 50 MB of frames: past the stack */
}

/* Running off the stack hits the guard page: a fault, not a neighbour's
 * memory. In a child, which must die of SIGSEGV. */
static void
guard_page_stops_an_overflow(void **state)
{
	int status, out = 0;
	pid_t pid;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct ewyk_fiber_pool *p = pool(1);

		ewyk_fiber_start(p, overflow, &out);
		_exit(0);	/* not reached */
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGSEGV);
}

/* The mappings of this process around addr: the one holding it, and the
 * one right below it; false if none holds it. */
struct mapping {
	uintptr_t lo, hi;
	char perms[5];
};

static bool
mappings_at(uintptr_t addr, struct mapping *at, struct mapping *below)
{
	FILE *f = fopen("/proc/self/maps", "r");
	struct mapping m, prev = { 0 };
	char line[512];
	bool found = false;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%lx-%lx %4s", &m.lo, &m.hi, m.perms) != 3)
			continue;
		if (addr >= m.lo && addr < m.hi) {
			*at = m;
			*below = prev;
			found = true;
			break;
		}
		prev = m;
	}
	fclose(f);
	return found;
}

static void
where_am_i(struct ewyk_fiber *f, void *arg)
{
	volatile int local = 0;

	(void)f;
	*(uintptr_t *)arg = (uintptr_t)&local;
}

/* The page right below a fiber's stack is mapped with no access: the
 * stack's own guard, not whatever else the kernel put there. */
static void
guard_page_lies_below_the_stack(void **state)
{
	struct ewyk_fiber_pool *p = pool(1);
	long page = sysconf(_SC_PAGESIZE);
	struct mapping at, below;
	uintptr_t local = 0;

	(void)state;
	assert_null(ewyk_fiber_start(p, where_am_i, &local));
	assert_true(mappings_at(local, &at, &below));
	assert_string_equal(at.perms, "rw-p");
	/* the stack begins where the guard ends (a neighbour above may
	 * share the mapping: only its lower end is the stack's) */
	assert_true(local - at.lo < 64 * 1024);
	assert_int_equal(below.hi, at.lo);
	assert_int_equal(below.hi - below.lo, page);
	assert_string_equal(below.perms, "---p");
	ewyk_fiber_pool_free(p);
}

/* The kernel's thread id, asked each time: pthread_self() is declared
 * const, so a compiler may reuse its first answer across a park. */
static long
tid(void)
{
	return syscall(SYS_gettid);
}

static void
where(struct ewyk_fiber *f, void *arg)
{
	long *ran = arg;

	ran[0] = tid();
	ewyk_fiber_park(f);
	assert_ptr_equal(ewyk_fiber_self(), f);
	ran[1] = tid();
}

static void *
resume_thread(void *arg)
{
	long *ran = arg;

	ran[2] = tid();
	return (void *)(uintptr_t)ewyk_fiber_resume((struct ewyk_fiber *)ran[3]);
}

/* A fiber belongs to its owner, not to a thread: parked on one, it goes
 * on on whichever resumes it. */
static void
resumed_on_another_thread(void **state)
{
	struct ewyk_fiber_pool *p = pool(1);
	long ran[4];	/* fiber's first tid, second tid, resumer's tid, f */
	struct ewyk_fiber *f;
	void *again;
	pthread_t th;

	(void)state;
	f = ewyk_fiber_start(p, where, ran);
	assert_non_null(f);
	assert_int_equal(ran[0], tid());
	ran[3] = (long)(uintptr_t)f;
	assert_int_equal(pthread_create(&th, NULL, resume_thread, ran), 0);
	pthread_join(th, &again);
	assert_null(again);	/* it finished there */
	assert_int_equal(ran[1], ran[2]);
	assert_int_not_equal(ran[1], ran[0]);
	ewyk_fiber_pool_free(p);
}

static void
pingpong(struct ewyk_fiber *f, void *arg)
{
	long n = *(long *)arg;

	while (n-- > 0)
		ewyk_fiber_park(f);
}

/* Not a timed assertion: the figure, for the record. */
static void
switch_cost(void **state)
{
	struct ewyk_fiber_pool *p = pool(1);
	long n = 2000000, i;
	struct timespec a, b;
	struct ewyk_fiber *f;

	(void)state;
	f = ewyk_fiber_start(p, pingpong, &n);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 1; i < n; i++)		/* start ran to the first park */
		assert_true(ewyk_fiber_resume(f));
	clock_gettime(CLOCK_MONOTONIC, &b);
	assert_false(ewyk_fiber_resume(f));
	printf("# resume + park: %.1f ns\n", ((b.tv_sec - a.tv_sec) * 1e9 +
			(b.tv_nsec - a.tv_nsec)) / n);
	ewyk_fiber_pool_free(p);
}

static void
bad_conf(void **state)
{
	struct ewyk_fiber_pool_conf c = { .stack_size = 64 * 1024, .max = 0 };

	(void)state;
	assert_null(ewyk_fiber_pool_create(&c));
	assert_int_equal(errno, EINVAL);
	c.max = 1;
	c.stack_size = 100;
	assert_null(ewyk_fiber_pool_create(&c));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(park_and_resume),
		cmocka_unit_test(floating_point_mode_is_per_context),
		cmocka_unit_test(stacks_are_reused),
		cmocka_unit_test(pool_runs_out),
		cmocka_unit_test(guard_page_stops_an_overflow),
		cmocka_unit_test(guard_page_lies_below_the_stack),
		cmocka_unit_test(resumed_on_another_thread),
		cmocka_unit_test(switch_cost),
		cmocka_unit_test(bad_conf),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
