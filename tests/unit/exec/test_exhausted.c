/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reserve exhausted, on the real pools: with no reserved thread free,
 * BLOCKING goes PEC, EITHER goes PIC, and production never stops.
 */

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

#define NTASKS 100

struct xtask {
	struct ewyk_task t;
	pthread_t ran_on;
	bool nb_during;
	atomic_int runs;
};

static struct {
	struct xtask tasks[NTASKS];
	unsigned int n, next;
	pthread_t producer;
	struct ewyk_strategy *s;
	struct ewyk_reserved *rp;
	struct ewyk_bpool *bp;
} x;

static sem_t gate;
static atomic_bool blocker_inside;
static atomic_int done;

static int
xtask_run(struct ewyk_task *t)
{
	struct xtask *xt = (struct xtask *)t;

	xt->ran_on = pthread_self();
	xt->nb_during = ewyk_nonblocking();
	atomic_fetch_add(&xt->runs, 1);
	atomic_fetch_add(&done, 1);
	return 0;
}

static int
blocker_run(struct ewyk_task *t)
{
	(void)t;
	atomic_store(&blocker_inside, true);
	sem_wait(&gate);
	return 0;
}

static struct ewyk_task *
produce(void *ctx)
{
	(void)ctx;
	if (x.next == x.n)
		return NULL;
	return &x.tasks[x.next++].t;
}

/* Tasks alternate BLOCKING, EITHER. */
static void
load(unsigned int n)
{
	unsigned int i;

	memset(x.tasks, 0, sizeof(x.tasks));
	for (i = 0; i < n; i++) {
		x.tasks[i].t.run = xtask_run;
		x.tasks[i].t.type = i % 2 == 0 ? EWYK_BLOCKING : EWYK_EITHER;
	}
	x.n = n;
	x.next = 0;
	atomic_store(&done, 0);
}

static void
setup_pools(unsigned int reserved)
{
	struct ewyk_reserved_conf rc = { .size = reserved,
			.spin_ns = 1000000 };
	struct ewyk_bpool_conf bc = { .max_threads = 2, .queue_size = 256,
			.idle_timeout_ns = 100000000 };
	struct ewyk_strategy_conf sc = { .produce = produce };

	sem_init(&gate, 0, 0);
	atomic_store(&blocker_inside, false);
	x.rp = ewyk_reserved_create(&rc);
	x.bp = ewyk_bpool_create(&bc);
	assert_non_null(x.rp);
	assert_non_null(x.bp);
	ewyk_executor_init(&sc.exec, x.bp, x.rp);
	x.s = ewyk_strategy_create(&sc);
	assert_non_null(x.s);
}

static bool
all_done(void *arg)
{
	return atomic_load(&done) == (int)(intptr_t)arg;
}

static bool
blocker_in(void *arg)
{
	(void)arg;
	return atomic_load(&blocker_inside);
}

static void
check_exhausted(void)
{
	struct ewyk_strategy_stats st;
	unsigned int i;

	load(NTASKS);
	ewyk_strategy_produce(x.s);
	/* One produce() call produced everything: production never stopped. */
	assert_int_equal(x.next, NTASKS);
	ewyk_strategy_stats(x.s, &st);
	assert_int_equal(st.pec, NTASKS / 2);
	assert_int_equal(st.pic, NTASKS / 2);
	assert_int_equal(st.epc, 0);
	assert_int_equal(st.pc, 0);
	assert_true(ewyk_strategy_quiescent(x.s));
	assert_true(test_wait_until(all_done, (void *)NTASKS, 3000));
	for (i = 0; i < NTASKS; i++) {
		struct xtask *xt = &x.tasks[i];

		assert_int_equal(atomic_load(&xt->runs), 1);
		if (xt->t.type == EWYK_EITHER) {
			assert_int_equal(xt->t.mode, EWYK_PIC);
			assert_true(pthread_equal(xt->ran_on, pthread_self()));
			assert_true(xt->nb_during);
		} else {
			assert_int_equal(xt->t.mode, EWYK_PEC);
			assert_false(pthread_equal(xt->ran_on,
					pthread_self()));
			assert_false(xt->nb_during);
		}
	}
}

static void
teardown_pools(void)
{
	ewyk_bpool_free(x.bp);
	ewyk_reserved_free(x.rp);
	assert_true(ewyk_strategy_quiescent(x.s));
	ewyk_strategy_free(x.s);
	sem_destroy(&gate);
}

/* The only reserved thread is busy: no EPC, nothing stops. */
static void
reserve_busy(void **state)
{
	struct ewyk_reserved_stats rs;
	struct ewyk_strategy_stats st;
	struct ewyk_task blocker = { .run = blocker_run,
			.type = EWYK_BLOCKING };

	(void)state;
	setup_pools(1);
	while (!ewyk_reserved_try_execute(x.rp, &blocker))
		test_sleep_ms(1);
	assert_true(test_wait_until(blocker_in, NULL, 3000));
	check_exhausted();
	ewyk_reserved_stats(x.rp, &rs);
	assert_true(rs.claims_missed >= NTASKS);

	/* Free it again: the next BLOCKING task is consumed as EPC. */
	sem_post(&gate);
	do {
		test_sleep_ms(1);
		ewyk_reserved_stats(x.rp, &rs);
	} while (rs.spinning + rs.parked == 0);
	load(1);
	ewyk_strategy_produce(x.s);
	ewyk_strategy_stats(x.s, &st);
	assert_int_equal(st.epc, 1);
	assert_true(pthread_equal(x.tasks[0].ran_on, pthread_self()));
	while (!ewyk_strategy_quiescent(x.s))
		test_sleep_ms(1);	/* the helper arrives and leaves */
	teardown_pools();
}

/* A reserve of size 0 behaves the same. */
static void
reserve_zero(void **state)
{
	(void)state;
	setup_pools(0);
	check_exhausted();
	teardown_pools();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reserve_busy),
		cmocka_unit_test(reserve_zero),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
