/* SPDX-License-Identifier: BSD-3-Clause */
/* Reserved pool: LIFO claims, wake-up of parked workers, shutdown. */

#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>
#include <string.h>
#include <cmocka.h>

#include "ewyk_exec.h"
#include "exec_test.h"

struct gtask {
	struct ewyk_task t;
	sem_t gate;
	bool gated;
	atomic_bool inside;
	atomic_int runs;
	int worker;		/* ewyk_reserved_self() when it ran */
};

static int
gtask_run(struct ewyk_task *t)
{
	struct gtask *g = (struct gtask *)t;

	g->worker = ewyk_reserved_self();
	atomic_store(&g->inside, true);
	if (g->gated)
		sem_wait(&g->gate);
	atomic_fetch_add(&g->runs, 1);
	atomic_store(&g->inside, false);
	return 0;
}

static void
gtask_init(struct gtask *g, bool gated)
{
	memset(g, 0, sizeof(*g));
	g->t.run = gtask_run;
	g->t.type = EWYK_BLOCKING;
	g->gated = gated;
	sem_init(&g->gate, 0, 0);
}

struct want {
	struct ewyk_reserved *rp;
	unsigned int spinning, parked, idle;
};

static bool
stats_match(void *arg)
{
	struct want *w = arg;
	struct ewyk_reserved_stats st;

	ewyk_reserved_stats(w->rp, &st);
	if (w->idle != 0)
		return st.spinning + st.parked == w->idle;
	return st.spinning == w->spinning && st.parked == w->parked;
}

static bool
idle_count(struct ewyk_reserved *rp, unsigned int n)
{
	struct want w = { .rp = rp, .idle = n };

	return test_wait_until(stats_match, &w, 3000);
}

static bool
is_inside(void *arg)
{
	return atomic_load(&((struct gtask *)arg)->inside);
}

static bool
has_run(void *arg)
{
	return atomic_load(&((struct gtask *)arg)->runs) > 0;
}

static struct ewyk_reserved *
make(unsigned int size, uint64_t spin_ns)
{
	struct ewyk_reserved_conf c = { .size = size, .spin_ns = spin_ns };
	struct ewyk_reserved *rp = ewyk_reserved_create(&c);

	assert_non_null(rp);
	return rp;
}

/* The most recently idle worker is claimed first. */
static void
lifo_order(void **state)
{
	struct ewyk_reserved *rp = make(3, 2000000);
	struct ewyk_reserved_stats st;
	struct gtask a[3], b[3], extra;
	int by_idx[3], i;
	/* Neither ascending, descending nor FIFO order: 1, 2, then 0. */
	const int release[3] = { 1, 2, 0 };

	(void)state;
	assert_true(idle_count(rp, 3));
	for (i = 0; i < 3; i++) {
		gtask_init(&a[i], true);
		assert_true(ewyk_reserved_try_execute(rp, &a[i].t));
	}
	gtask_init(&extra, false);
	assert_false(ewyk_reserved_try_execute(rp, &extra.t));
	for (i = 0; i < 3; i++) {
		assert_true(test_wait_until(is_inside, &a[i], 3000));
		by_idx[a[i].worker] = i;
	}
	/* Make the workers idle one at a time in a known order. */
	for (i = 0; i < 3; i++) {
		sem_post(&a[by_idx[release[i]]].gate);
		assert_true(idle_count(rp, (unsigned int)i + 1));
	}
	for (i = 0; i < 3; i++) {
		gtask_init(&b[i], true);
		assert_true(ewyk_reserved_try_execute(rp, &b[i].t));
	}
	for (i = 0; i < 3; i++) {
		assert_true(test_wait_until(is_inside, &b[i], 3000));
		assert_int_equal(b[i].worker, release[2 - i]);
	}
	for (i = 0; i < 3; i++)
		sem_post(&b[i].gate);
	assert_true(idle_count(rp, 3));
	ewyk_reserved_stats(rp, &st);
	assert_int_equal(st.size, 3);
	assert_int_equal(st.claims_won, 6);
	assert_int_equal(st.claims_missed, 1);
	ewyk_reserved_free(rp);
}

/* try_execute_on() claims the worker asked for, not the LIFO top. */
static void
execute_on(void **state)
{
	struct ewyk_reserved *rp = make(2, 1000000);
	struct gtask top, g, again;
	int other;

	(void)state;
	assert_true(idle_count(rp, 2));
	gtask_init(&top, false);
	assert_true(ewyk_reserved_try_execute(rp, &top.t));
	assert_true(test_wait_until(has_run, &top, 3000));
	assert_true(idle_count(rp, 2));
	/* top.worker is now the most recently idle: ask for the other. */
	other = 1 - top.worker;
	gtask_init(&g, true);
	assert_true(ewyk_reserved_try_execute_on(rp, (unsigned int)other,
			&g.t));
	assert_true(test_wait_until(is_inside, &g, 3000));
	assert_int_equal(g.worker, other);
	gtask_init(&again, false);
	assert_false(ewyk_reserved_try_execute_on(rp, (unsigned int)other,
			&again.t));
	assert_false(ewyk_reserved_try_execute_on(rp, 7, &again.t));
	sem_post(&g.gate);
	ewyk_reserved_free(rp);
}

/* A parked worker is woken by the claim itself. */
static void
parked_worker_woken(void **state)
{
	struct ewyk_reserved *rp = make(1, 0);	/* park at once */
	struct want w = { .rp = rp, .parked = 1 };
	struct gtask g;

	(void)state;
	assert_true(test_wait_until(stats_match, &w, 3000));
	gtask_init(&g, false);
	assert_true(ewyk_reserved_try_execute(rp, &g.t));
	assert_true(test_wait_until(has_run, &g, 3000));
	ewyk_reserved_free(rp);
}

struct stopper {
	struct ewyk_reserved *rp;
	pthread_t th;
};

static void *
stop_thread(void *arg)
{
	ewyk_reserved_stop(((struct stopper *)arg)->rp);
	return NULL;
}

/* stop() in a thread of its own, so that a hang fails instead of hanging. */
static void
stop_within(struct ewyk_reserved *rp, unsigned int ms)
{
	struct stopper s = { .rp = rp };
	struct timespec dl;

	assert_int_equal(pthread_create(&s.th, NULL, stop_thread, &s), 0);
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += ms / 1000;
	dl.tv_nsec += (long)(ms % 1000) * 1000000;
	if (dl.tv_nsec >= 1000000000) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000;
	}
	if (pthread_timedjoin_np(s.th, NULL, &dl) != 0)
		fail_msg("ewyk_reserved_stop() hung");
}

/* Shutdown with two spinning and two parked workers terminates. */
static void
stop_spinning_and_parked(void **state)
{
	/* Long enough to see both states at once, short enough to wait. */
	struct ewyk_reserved *rp = make(4, 400000000);
	struct want both = { .rp = rp, .spinning = 2, .parked = 2 };
	struct want two_parked = { .rp = rp, .spinning = 0, .parked = 2 };
	struct gtask g[2], late;
	uint64_t t0;
	int i;

	(void)state;
	assert_true(idle_count(rp, 4));
	for (i = 0; i < 2; i++) {
		gtask_init(&g[i], true);
		assert_true(ewyk_reserved_try_execute(rp, &g[i].t));
		assert_true(test_wait_until(is_inside, &g[i], 3000));
	}
	assert_true(test_wait_until(stats_match, &two_parked, 3000));
	for (i = 0; i < 2; i++)
		sem_post(&g[i].gate);
	assert_true(test_wait_until(stats_match, &both, 300));
	t0 = test_now_ms();
	stop_within(rp, 3000);
	assert_true(test_now_ms() - t0 < 1000);
	gtask_init(&late, false);
	assert_false(ewyk_reserved_try_execute(rp, &late.t));
	ewyk_reserved_stop(rp);		/* idempotent */
	ewyk_reserved_free(rp);
}

/* Shutdown waits for a running task, and every claimed task runs. */
static void
stop_with_busy_worker(void **state)
{
	struct ewyk_reserved *rp = make(2, 1000000);
	struct gtask g;

	(void)state;
	assert_true(idle_count(rp, 2));
	gtask_init(&g, true);
	assert_true(ewyk_reserved_try_execute(rp, &g.t));
	assert_true(test_wait_until(is_inside, &g, 3000));
	sem_post(&g.gate);
	stop_within(rp, 3000);
	assert_int_equal(atomic_load(&g.runs), 1);
	ewyk_reserved_free(rp);
}

static void
zero_size(void **state)
{
	struct ewyk_reserved *rp = make(0, 0);
	struct ewyk_reserved_stats st;
	struct gtask g;

	(void)state;
	gtask_init(&g, false);
	assert_false(ewyk_reserved_try_execute(rp, &g.t));
	ewyk_reserved_stats(rp, &st);
	assert_int_equal(st.size, 0);
	assert_int_equal(st.claims_missed, 1);
	ewyk_reserved_free(rp);
}

/* Pluggable start/join: the loop runs on threads the caller provides. */
static struct {
	pthread_t th[4];
	int starts, joins;
	int (*fn[4])(void *);
	void *arg[4];
} ext;

static void *
ext_main(void *arg)
{
	unsigned int idx = (unsigned int)(uintptr_t)arg;

	ext.fn[idx](ext.arg[idx]);
	return NULL;
}

static int
ext_start(void *ctx, unsigned int idx, int (*fn)(void *), void *arg)
{
	(void)ctx;
	ext.starts++;
	ext.fn[idx] = fn;
	ext.arg[idx] = arg;
	return -pthread_create(&ext.th[idx], NULL, ext_main,
			(void *)(uintptr_t)idx);
}

static int
ext_join(void *ctx, unsigned int idx)
{
	(void)ctx;
	ext.joins++;
	return -pthread_join(ext.th[idx], NULL);
}

static void
external_threads(void **state)
{
	const struct ewyk_reserved_ops ops = {
		.start = ext_start,
		.join = ext_join,
	};
	struct ewyk_reserved_conf c = { .size = 2, .spin_ns = 1000000,
			.ops = &ops };
	struct ewyk_reserved *rp;
	struct gtask g;

	(void)state;
	memset(&ext, 0, sizeof(ext));
	rp = ewyk_reserved_create(&c);
	assert_non_null(rp);
	assert_int_equal(ext.starts, 2);
	assert_true(idle_count(rp, 2));
	gtask_init(&g, false);
	assert_true(ewyk_reserved_try_execute(rp, &g.t));
	assert_true(test_wait_until(has_run, &g, 3000));
	assert_true(g.worker == 0 || g.worker == 1);
	ewyk_reserved_free(rp);
	assert_int_equal(ext.joins, 2);
}

/* idle_poll may hand a spinning worker a task of its own. */
static struct gtask polled;
static atomic_int polls;

static struct ewyk_task *
poll_once(void *arg)
{
	(void)arg;
	if (atomic_fetch_add(&polls, 1) == 10)
		return &polled.t;
	return NULL;
}

static void
idle_poll_task(void **state)
{
	struct ewyk_reserved_conf c = { .size = 1, .spin_ns = UINT64_MAX,
			.idle_poll = poll_once };
	struct ewyk_reserved *rp;
	struct gtask g;

	(void)state;
	gtask_init(&polled, false);
	atomic_store(&polls, 0);
	rp = ewyk_reserved_create(&c);
	assert_non_null(rp);
	assert_true(test_wait_until(has_run, &polled, 3000));
	assert_int_equal(polled.worker, 0);
	/* Back in the idle set afterwards. */
	assert_true(idle_count(rp, 1));
	gtask_init(&g, false);
	assert_true(ewyk_reserved_try_execute(rp, &g.t));
	assert_true(test_wait_until(has_run, &g, 3000));
	ewyk_reserved_free(rp);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lifo_order),
		cmocka_unit_test(execute_on),
		cmocka_unit_test(parked_worker_woken),
		cmocka_unit_test(stop_spinning_and_parked),
		cmocka_unit_test(stop_with_busy_worker),
		cmocka_unit_test(zero_size),
		cmocka_unit_test(external_threads),
		cmocka_unit_test(idle_poll_task),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
