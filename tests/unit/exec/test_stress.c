/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Strategy stress on the real pools, with random task types, random task
 * failures, nested produce/dispatch, run-time mode switches and (second
 * test) a monitor that steals from the owner. Checks:
 * - never two producers: an owner field set by CAS inside produce();
 * - no lost wake-up: every item is produced although the submitters stop
 *   calling produce()/dispatch() once they are done (REPRODUCING);
 * - pending stays within a tolerant range and ends at 0;
 * - pc + pic + pec + epc == tasks produced; failures counted;
 * - PIC never on a thread that was already flagged non-blocking.
 */

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ewyk_exec.h"
#include "exec_test.h"

#if defined(__SANITIZE_THREAD__)
#define TOTAL 100000
#else
#define TOTAL 400000
#endif
#define NSUB 3

struct stask {
	struct ewyk_task t;
	struct stask *next;
	bool fail;
	bool nested;
	bool sleeps;
	bool flagged_prod;	/* produced on a thread flagged non-blocking */
	unsigned int work;
	atomic_int runs;
};

static struct {
	struct ewyk_strategy *s;
	struct ewyk_reserved *rp;
	struct ewyk_bpool *bp;
	struct stask *tasks;
	_Atomic(struct stask *) inbox;	/* submitters push, owner takes all */
	struct stask *priv;		/* owner only */
	unsigned long owner_ops;	/* plain: a race here is a bug */
	_Atomic(void *) owner;
	atomic_uint violations, twice, pic_on_flagged;
	atomic_uint produced, finished, ran_failed, rejected;
	atomic_int pmin, pmax;
	atomic_bool stop_aux;
	atomic_uint lost;
} g;

static _Thread_local int owner_tag;

static void
note_pending(void)
{
	struct ewyk_strategy_stats st;
	int v;

	ewyk_strategy_stats(g.s, &st);
	v = atomic_load(&g.pmin);
	while (st.pending < v &&
			!atomic_compare_exchange_weak(&g.pmin, &v, st.pending))
		;
	v = atomic_load(&g.pmax);
	while (st.pending > v &&
			!atomic_compare_exchange_weak(&g.pmax, &v, st.pending))
		;
}

static struct ewyk_task *
produce(void *ctx)
{
	void *expected = NULL;
	struct stask *t;

	(void)ctx;
	if (!atomic_compare_exchange_strong(&g.owner, &expected, &owner_tag))
		atomic_fetch_add(&g.violations, 1);
	g.owner_ops++;
	if (g.priv == NULL)
		g.priv = atomic_exchange_explicit(&g.inbox, NULL,
				memory_order_acquire);
	t = g.priv;
	if (t != NULL) {
		g.priv = t->next;
		t->flagged_prod = ewyk_nonblocking();
		atomic_fetch_add(&g.produced, 1);
	}
	expected = &owner_tag;
	if (!atomic_compare_exchange_strong(&g.owner, &expected, NULL))
		atomic_fetch_add(&g.violations, 1);
	return t != NULL ? &t->t : NULL;
}

static int
stask_run(struct ewyk_task *t)
{
	struct stask *st = (struct stask *)t;
	volatile unsigned int i;

	if (atomic_fetch_add(&st->runs, 1) != 0)
		atomic_fetch_add(&g.twice, 1);
	/* PIC sets the flag; it must never be chosen on a flagged thread. */
	if (t->mode == EWYK_PIC && st->flagged_prod)
		atomic_fetch_add(&g.pic_on_flagged, 1);
	for (i = 0; i < st->work; i++)
		;
	if (st->sleeps)
		nanosleep(&(struct timespec){ 0, 20000 }, NULL);
	if (st->nested) {
		if (st->work & 1)
			ewyk_strategy_dispatch(g.s);
		else
			ewyk_strategy_produce(g.s);
	}
	/* The strategy sees the result of what it ran itself. */
	if (st->fail && t->mode != EWYK_PEC)
		atomic_fetch_add(&g.ran_failed, 1);
	atomic_fetch_add(&g.finished, 1);
	return st->fail ? -1 : 0;
}

static void
rejected(void *ctx, struct ewyk_task *t, int err)
{
	(void)ctx;
	(void)t;
	(void)err;
	/* The app would answer 503: the task is finished, not run. */
	atomic_fetch_add(&g.rejected, 1);
	atomic_fetch_add(&g.finished, 1);
}

static void
push(struct stask *t)
{
	struct stask *head = atomic_load_explicit(&g.inbox,
			memory_order_relaxed);

	do {
		t->next = head;
	} while (!atomic_compare_exchange_weak_explicit(&g.inbox, &head, t,
			memory_order_release, memory_order_relaxed));
}

static void *
submitter(void *arg)
{
	unsigned int id = (unsigned int)(uintptr_t)arg;
	uint64_t rnd = 0x9e3779b97f4a7c15ull * (id + 1);
	unsigned int i, r;
	struct stask *t;

	for (i = id; i < TOTAL; i += NSUB) {
		t = &g.tasks[i];
		r = (unsigned int)(test_rand(&rnd) % 100);
		t->t.run = stask_run;
		t->t.type = r < 40 ? EWYK_NON_BLOCKING :
				r < 70 ? EWYK_EITHER : EWYK_BLOCKING;
		t->fail = test_rand(&rnd) % 10 == 0;
		t->nested = test_rand(&rnd) % 100 == 0;
		t->sleeps = t->t.type == EWYK_BLOCKING &&
				test_rand(&rnd) % 200 == 0;
		t->work = (unsigned int)(test_rand(&rnd) % 400);
		push(t);
		/* Signal the new item, as an RX interrupt or a timer would. */
		r = (unsigned int)(test_rand(&rnd) % 10);
		if (r < 7) {
			ewyk_nonblocking_set(r < 2);
			ewyk_strategy_produce(g.s);
			ewyk_nonblocking_set(false);
		} else if (ewyk_strategy_dispatch(g.s) != 0) {
			ewyk_strategy_produce(g.s);
		}
		if (i % 64 == 0)
			note_pending();
	}
	return NULL;
}

/* Flips the mode at run time and samples pending. */
static void *
switcher(void *arg)
{
	uint64_t rnd = 12345;

	(void)arg;
	while (!atomic_load(&g.stop_aux)) {
		ewyk_strategy_set_mode(g.s,
				(enum ewyk_mode)(test_rand(&rnd) % 4));
		note_pending();
		test_sleep_ms(1);
	}
	ewyk_strategy_set_mode(g.s, EWYK_MODE_ADAPTIVE);
	return NULL;
}

/* Steals from an owner seen inside the same inline task twice. */
static void *
stealer(void *arg)
{
	uint64_t last = 0, tok;

	(void)arg;
	while (!atomic_load(&g.stop_aux)) {
		tok = ewyk_strategy_inline_token(g.s);
		if (tok != 0 && tok == last)
			ewyk_strategy_steal(g.s, tok);
		last = tok;
		sched_yield();
	}
	return NULL;
}

static bool
all_finished(void *arg)
{
	(void)arg;
	return atomic_load(&g.finished) == TOTAL &&
			ewyk_strategy_quiescent(g.s);
}

static void
run_stress(unsigned int flags, void *(*aux)(void *), uint64_t watch_ns)
{
	struct ewyk_reserved_conf rc = { .size = 2, .spin_ns = 50000 };
	struct ewyk_bpool_conf bc = { .max_threads = 3, .queue_size = 2048,
			.idle_timeout_ns = 20000000 };
	struct ewyk_strategy_conf sc = { .produce = produce,
			.rejected = rejected, .flags = flags,
			.watch_ns = watch_ns };
	struct ewyk_strategy_stats st;
	pthread_t sub[NSUB], aux_th;
	unsigned int i;
	uint64_t t0 = test_now_ms();

	memset(&g, 0, sizeof(g));
	g.tasks = calloc(TOTAL, sizeof(*g.tasks));
	assert_non_null(g.tasks);
	atomic_store(&g.pmin, 0);
	atomic_store(&g.pmax, 0);
	g.rp = ewyk_reserved_create(&rc);
	g.bp = ewyk_bpool_create(&bc);
	assert_non_null(g.rp);
	assert_non_null(g.bp);
	ewyk_executor_init(&sc.exec, g.bp, g.rp);
	g.s = ewyk_strategy_create(&sc);
	assert_non_null(g.s);

	assert_int_equal(pthread_create(&aux_th, NULL, aux, NULL), 0);
	for (i = 0; i < NSUB; i++)
		assert_int_equal(pthread_create(&sub[i], NULL, submitter,
				(void *)(uintptr_t)i), 0);
	for (i = 0; i < NSUB; i++)
		pthread_join(sub[i], NULL);
	/* Nobody signals from here on: whatever is left must be produced. */
	if (!test_wait_until(all_finished, NULL, 20000))
		fail_msg("lost wake-up: %u of %u finished, quiescent %d",
				atomic_load(&g.finished), TOTAL,
				ewyk_strategy_quiescent(g.s));
	atomic_store(&g.stop_aux, true);
	pthread_join(aux_th, NULL);

	ewyk_strategy_stats(g.s, &st);
	printf("# %llu ms: pc %llu pic %llu pec %llu epc %llu failed %llu "
			"rejected %llu stolen %llu pending [%d, %d]\n",
			(unsigned long long)(test_now_ms() - t0),
			(unsigned long long)st.pc, (unsigned long long)st.pic,
			(unsigned long long)st.pec, (unsigned long long)st.epc,
			(unsigned long long)st.failed,
			(unsigned long long)st.rejected,
			(unsigned long long)st.stolen,
			atomic_load(&g.pmin), atomic_load(&g.pmax));
	assert_int_equal(atomic_load(&g.violations), 0);
	assert_int_equal(atomic_load(&g.twice), 0);
	assert_int_equal(atomic_load(&g.pic_on_flagged), 0);
	assert_int_equal(atomic_load(&g.produced), TOTAL);
	assert_int_equal(st.pc + st.pic + st.pec + st.epc, TOTAL);
	assert_int_equal(st.rejected, atomic_load(&g.rejected));
	assert_int_equal(st.failed, atomic_load(&g.ran_failed));
	assert_true(atomic_load(&g.pmin) >= -1);
	assert_true(atomic_load(&g.pmax) <= 2);
	assert_int_equal(st.pending, 0);
	assert_int_equal(st.state, 0);

	ewyk_bpool_free(g.bp);
	ewyk_reserved_free(g.rp);
	ewyk_strategy_free(g.s);
	free(g.tasks);
}

/*
 * One submitter that waits for each item before the next: nobody else can
 * rescue an item stranded by an owner that went idle after missing the
 * signal, so a lost wake-up shows as a timeout.
 */
static void *
pingpong(void *arg)
{
	uint64_t rnd = 777, end;
	unsigned int i, r;
	struct stask *t;

	(void)arg;
	for (i = 0; i < TOTAL / 8; i++) {
		t = &g.tasks[i];
		r = (unsigned int)(test_rand(&rnd) % 3);
		t->t.run = stask_run;
		t->t.type = r == 0 ? EWYK_NON_BLOCKING :
				r == 1 ? EWYK_EITHER : EWYK_BLOCKING;
		t->work = (unsigned int)(test_rand(&rnd) % 2000);
		t->fail = test_rand(&rnd) % 10 == 0;
		push(t);
		if (test_rand(&rnd) % 4 != 0 || ewyk_strategy_dispatch(g.s) != 0)
			ewyk_strategy_produce(g.s);
		end = test_now_ms() + 5000;
		while (atomic_load(&g.finished) != i + 1) {
			if (test_now_ms() > end) {
				atomic_store(&g.lost, i + 1);
				return NULL;
			}
			ewyk_cpu_pause();
		}
	}
	return NULL;
}

static void
stress_pingpong(void **state)
{
	struct ewyk_reserved_conf rc = { .size = 2, .spin_ns = 20000 };
	struct ewyk_bpool_conf bc = { .max_threads = 2, .queue_size = 64,
			.idle_timeout_ns = 20000000 };
	struct ewyk_strategy_conf sc = { .produce = produce,
			.rejected = rejected };
	struct ewyk_strategy_stats st;
	pthread_t th;

	(void)state;
	memset(&g, 0, sizeof(g));
	g.tasks = calloc(TOTAL / 8, sizeof(*g.tasks));
	assert_non_null(g.tasks);
	g.rp = ewyk_reserved_create(&rc);
	g.bp = ewyk_bpool_create(&bc);
	ewyk_executor_init(&sc.exec, g.bp, g.rp);
	g.s = ewyk_strategy_create(&sc);
	assert_non_null(g.s);
	assert_int_equal(pthread_create(&th, NULL, pingpong, NULL), 0);
	pthread_join(th, NULL);
	if (atomic_load(&g.lost) != 0)
		fail_msg("lost wake-up: item %u never ran",
				atomic_load(&g.lost) - 1);
	while (!ewyk_strategy_quiescent(g.s))
		test_sleep_ms(1);
	ewyk_strategy_stats(g.s, &st);
	printf("# pingpong: pc %llu pic %llu pec %llu epc %llu\n",
			(unsigned long long)st.pc, (unsigned long long)st.pic,
			(unsigned long long)st.pec, (unsigned long long)st.epc);
	assert_int_equal(atomic_load(&g.violations), 0);
	assert_int_equal(st.pc + st.pic + st.pec + st.epc, TOTAL / 8);
	ewyk_bpool_free(g.bp);
	ewyk_reserved_free(g.rp);
	ewyk_strategy_free(g.s);
	free(g.tasks);
}

static void
stress_adaptive(void **state)
{
	(void)state;
	run_stress(0, switcher, 0);
}

static void
stress_steal(void **state)
{
	(void)state;
	run_stress(EWYK_STRATEGY_STEALABLE, stealer, 0);
}

/* Watched hand-offs (a short bound, so that watchers steal often) beside
 * a stealer and mode switches' absence: still one owner, every task once. */
static void
stress_watched(void **state)
{
	(void)state;
	run_stress(EWYK_STRATEGY_STEALABLE, stealer, 5000);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stress_adaptive),
		cmocka_unit_test(stress_steal),
		cmocka_unit_test(stress_watched),
		cmocka_unit_test(stress_pingpong),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
