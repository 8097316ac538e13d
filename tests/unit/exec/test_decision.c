/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The strategy's decision table (docs/strategy.md), one test per row, plus the
 * transitions around it: EPC re-acquire after a failing task, an early
 * helper, REPRODUCING, dispatch, forced modes, rejection, steal.
 * Executors are mocks, so every hand-off is visible.
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

#define MAX_SCRIPT 8

struct ttask {
	struct ewyk_task t;
	int ret;
	int runs;
	pthread_t ran_on;
	bool nb_during;
	sem_t *gate;		/* wait on it inside run() */
	uint64_t token_during;	/* the strategy's inline token in run() */
	struct ttask *after;	/* wait until that one is running */
	atomic_bool inside;
};

static struct {
	struct ewyk_strategy *s;
	struct ttask *script[MAX_SCRIPT];
	unsigned int n, next;
	unsigned int produce_calls;
	_Atomic(pthread_t *) owner;	/* who is inside produce() */
	int owner_violations;
	bool try_ret;
	bool try_runs_helper;	/* run the helper before returning */
	bool try_spawns_helper;	/* start the helper, return at once */
	pthread_t helper;
	unsigned int try_calls, exec_calls;
	struct ewyk_task *tried, *executed[MAX_SCRIPT];
	int exec_ret;
	unsigned int rejected_calls;
	struct ewyk_task *rejected_task;
	unsigned int consumed_calls, consumed_not_owner;
	bool fibers;		/* the strategy has a fiber hook */
	int fiber_ret;		/* what it answers */
	unsigned int fiber_calls;
	bool dispatch_in_produce;
	struct ttask *late;	/* appended by that dispatch */
} m;

static _Thread_local pthread_t me;

static int
ttask_run(struct ewyk_task *t)
{
	struct ttask *tt = (struct ttask *)t;

	atomic_store(&tt->inside, true);
	tt->runs++;
	tt->ran_on = pthread_self();
	tt->nb_during = ewyk_nonblocking();
	tt->token_during = ewyk_strategy_inline_token(m.s);
	if (tt->gate != NULL)
		sem_wait(tt->gate);
	while (tt->after != NULL && !atomic_load(&tt->after->inside))
		sched_yield();
	atomic_store(&tt->inside, false);
	return tt->ret;
}

static void
ttask_init(struct ttask *tt, enum ewyk_invocation type)
{
	memset(tt, 0, sizeof(*tt));
	tt->t.run = ttask_run;
	tt->t.type = type;
}

static struct ewyk_task *
mock_produce(void *ctx)
{
	struct ewyk_strategy_stats st;
	pthread_t *expected = NULL;
	struct ewyk_task *t = NULL;

	(void)ctx;
	me = pthread_self();
	/* Only the owner of a PRODUCING word may be in here, and alone. */
	if (!atomic_compare_exchange_strong(&m.owner, &expected, &me))
		m.owner_violations++;
	ewyk_strategy_stats(m.s, &st);
	if (st.state == 0)
		m.owner_violations++;
	m.produce_calls++;
	if (m.next < m.n) {
		t = &m.script[m.next++]->t;
	} else if (m.dispatch_in_produce) {
		/* New work arrives just as the owner is about to go idle. */
		m.dispatch_in_produce = false;
		m.script[m.n++] = m.late;
		assert_int_equal(ewyk_strategy_dispatch(m.s), 0);
	}
	expected = &me;
	atomic_compare_exchange_strong(&m.owner, &expected, NULL);
	return t;
}

static void
mock_consumed(void *ctx, struct ewyk_task *t, int rc, bool owner)
{
	(void)ctx;
	(void)t;
	(void)rc;
	m.consumed_calls++;
	if (!owner)
		m.consumed_not_owner++;
}

static void
mock_rejected(void *ctx, struct ewyk_task *t, int err)
{
	(void)ctx;
	assert_int_equal(err, EWYK_REJECTED);
	m.rejected_calls++;
	m.rejected_task = t;
}

static int
mock_fiber(void *ctx, struct ewyk_task *t)
{
	(void)ctx;
	assert_int_equal(t->type, EWYK_FIBER_CAPABLE);
	m.fiber_calls++;
	return m.fiber_ret;
}

static int
mock_execute(void *ctx, struct ewyk_task *t)
{
	(void)ctx;
	if (m.exec_ret != 0)
		return m.exec_ret;
	m.executed[m.exec_calls++] = t;
	return 0;
}

static void *
helper_thread(void *arg)
{
	struct ewyk_task *t = arg;

	t->run(t);
	return NULL;
}

static bool
mock_try_execute(void *ctx, struct ewyk_task *t)
{
	pthread_t th;

	(void)ctx;
	m.try_calls++;
	if (!m.try_ret)
		return false;
	m.tried = t;
	if (m.try_spawns_helper) {
		assert_int_equal(pthread_create(&m.helper, NULL, helper_thread,
				t), 0);
		m.tried = NULL;
	}
	if (m.try_runs_helper) {
		/* The helper arrives and finishes before we return. */
		assert_int_equal(pthread_create(&th, NULL, helper_thread, t), 0);
		pthread_join(th, NULL);
		m.tried = NULL;
	}
	return true;
}

static void *
produce_thread(void *arg)
{
	ewyk_strategy_produce(arg);
	return NULL;
}

static struct ewyk_strategy *
make_watched(enum ewyk_mode mode, unsigned int flags, uint64_t watch_ns)
{
	struct ewyk_strategy_conf c = {
		.produce = mock_produce,
		.consumed = mock_consumed,
		.rejected = mock_rejected,
		.exec = {
			.execute = mock_execute,
			.try_execute = mock_try_execute,
		},
		.mode = mode,
		.flags = flags,
		.watch_ns = watch_ns,
		.fiber = m.fibers ? mock_fiber : NULL,
	};

	m.s = ewyk_strategy_create(&c);
	assert_non_null(m.s);
	return m.s;
}

static struct ewyk_strategy *
make(enum ewyk_mode mode, unsigned int flags)
{
	return make_watched(mode, flags, 0);
}

static int
setup(void **state)
{
	(void)state;
	memset(&m, 0, sizeof(m));
	ewyk_nonblocking_set(false);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	assert_int_equal(m.owner_violations, 0);
	ewyk_strategy_free(m.s);
	ewyk_nonblocking_set(false);
	return 0;
}

static void
script(struct ttask *tt)
{
	m.script[m.n++] = tt;
}

/* Produce one task; check the mode counters moved by exactly one. */
static struct ewyk_strategy_stats
run_one(struct ttask *tt, bool flagged, enum ewyk_consume want)
{
	struct ewyk_strategy_stats st;
	uint64_t *cnt[5] = { &st.pc, &st.pic, &st.pec, &st.epc, &st.fiber };
	int i;

	script(tt);
	ewyk_nonblocking_set(flagged);
	ewyk_strategy_produce(m.s);
	assert_int_equal(ewyk_nonblocking(), flagged);
	ewyk_nonblocking_set(false);
	ewyk_strategy_stats(m.s, &st);
	for (i = 0; i < 5; i++)
		assert_int_equal(*cnt[i], i == (int)want ? 1 : 0);
	assert_int_equal(tt->t.mode, want);
	assert_int_equal(st.state, 0);
	return st;
}

static void
assert_inline(struct ttask *tt, bool nb)
{
	assert_int_equal(tt->runs, 1);
	assert_true(pthread_equal(tt->ran_on, pthread_self()));
	assert_int_equal(tt->nb_during, nb);
}

/* The helper started by EPC arrives: it produces, finds nothing, leaves. */
static void
helper_arrives(void)
{
	unsigned int calls = m.produce_calls;

	assert_non_null(m.tried);
	m.tried->run(m.tried);
	assert_int_equal(m.produce_calls, calls + 1);
	assert_true(ewyk_strategy_quiescent(m.s));
}

/* Same with a queued producer still to come: run it, then all is idle. */
static void
helper_arrives_queued(void)
{
	assert_non_null(m.tried);
	m.tried->run(m.tried);
	assert_false(ewyk_strategy_quiescent(m.s));
	m.executed[0]->run(m.executed[0]);
	assert_true(ewyk_strategy_quiescent(m.s));
}

/* Row 1: NON_BLOCKING, any flag -> PC, helper not consulted. */
static void
row1_nonblocking_pc(void **state)
{
	struct ttask a, b;

	(void)state;
	make(EWYK_MODE_ADAPTIVE, 0);
	m.try_ret = true;
	ttask_init(&a, EWYK_NON_BLOCKING);
	run_one(&a, false, EWYK_PC);
	assert_inline(&a, false);
	ttask_init(&b, EWYK_NON_BLOCKING);
	script(&b);
	ewyk_nonblocking_set(true);
	ewyk_strategy_produce(m.s);
	ewyk_nonblocking_set(false);
	assert_inline(&b, true);
	assert_int_equal(b.t.mode, EWYK_PC);
	assert_int_equal(m.try_calls, 0);
	assert_int_equal(m.exec_calls, 0);
	assert_true(ewyk_strategy_quiescent(m.s));
}

/* Row 2: EITHER on a flagged thread -> PC (never PIC), not consulted. */
static void
row2_either_flagged_pc(void **state)
{
	struct ttask a;

	(void)state;
	make(EWYK_MODE_ADAPTIVE, 0);
	m.try_ret = true;
	ttask_init(&a, EWYK_EITHER);
	run_one(&a, true, EWYK_PC);
	assert_inline(&a, true);
	assert_int_equal(m.try_calls, 0);
	assert_true(ewyk_strategy_quiescent(m.s));
}

/* Row 3: EITHER, not flagged, helper -> EPC: inline, hot, unflagged. */
static void
row3_either_helper_epc(void **state)
{
	struct ewyk_strategy_stats st;
	struct ttask a;

	(void)state;
	make(EWYK_MODE_ADAPTIVE, 0);
	m.try_ret = true;
	ttask_init(&a, EWYK_EITHER);
	st = run_one(&a, false, EWYK_EPC);
	assert_inline(&a, false);
	assert_int_equal(m.try_calls, 1);
	assert_int_equal(m.exec_calls, 0);
	/* We won production back; the helper is still on its way. */
	assert_int_equal(st.pending, 1);
	assert_int_equal(m.consumed_not_owner, 0);
	helper_arrives();
}

/* Row 4: EITHER, not flagged, no helper -> PIC under the flag. */
static void
row4_either_nohelper_pic(void **state)
{
	struct ttask a;

	(void)state;
	make(EWYK_MODE_ADAPTIVE, 0);
	ttask_init(&a, EWYK_EITHER);
	run_one(&a, false, EWYK_PIC);
	assert_inline(&a, true);
	assert_int_equal(m.try_calls, 1);
	assert_int_equal(m.exec_calls, 0);
	assert_true(ewyk_strategy_quiescent(m.s));
}

/* Row 5: BLOCKING on a flagged thread -> PEC, helper not consulted. */
static void
row5_blocking_flagged_pec(void **state)
{
	struct ttask a;

	(void)state;
	make(EWYK_MODE_ADAPTIVE, 0);
	m.try_ret = true;
	ttask_init(&a, EWYK_BLOCKING);
	run_one(&a, true, EWYK_PEC);
	assert_int_equal(a.runs, 0);
	assert_int_equal(m.try_calls, 0);
	assert_int_equal(m.exec_calls, 1);
	assert_ptr_equal(m.executed[0], &a.t);
	assert_true(ewyk_strategy_quiescent(m.s));
}

/* Row 6: BLOCKING, not flagged, helper -> EPC. */
static void
row6_blocking_helper_epc(void **state)
{
	struct ewyk_strategy_stats st;
	struct ttask a;

	(void)state;
	make(EWYK_MODE_ADAPTIVE, 0);
	m.try_ret = true;
	ttask_init(&a, EWYK_BLOCKING);
	st = run_one(&a, false, EWYK_EPC);
	assert_inline(&a, false);
	assert_int_equal(m.try_calls, 1);
	assert_int_equal(m.exec_calls, 0);
	assert_int_equal(st.pending, 1);
	helper_arrives();
}

/* Row 7: BLOCKING, not flagged, no helper -> PEC, production goes on. */
static void
row7_blocking_nohelper_pec(void **state)
{
	struct ewyk_strategy_stats st;
	struct ttask a, b;

	(void)state;
	make(EWYK_MODE_ADAPTIVE, 0);
	ttask_init(&a, EWYK_BLOCKING);
	ttask_init(&b, EWYK_NON_BLOCKING);
	script(&a);
	script(&b);
	ewyk_strategy_produce(m.s);
	ewyk_strategy_stats(m.s, &st);
	assert_int_equal(st.pec, 1);
	assert_int_equal(st.pc + st.pic + st.epc, 1);
	assert_int_equal(a.t.mode, EWYK_PEC);
	assert_int_equal(a.runs, 0);
	assert_inline(&b, false);	/* production went on */
	assert_int_equal(m.try_calls, 1);
	assert_int_equal(m.exec_calls, 1);
	assert_ptr_equal(m.executed[0], &a.t);
	assert_true(ewyk_strategy_quiescent(m.s));
}

/* A failing EPC task still races for production, and wins it back. */
static void
epc_failure_reacquires(void **state)
{
	struct ewyk_strategy_stats st;
	struct ttask a, b;

	(void)state;
	make(EWYK_MODE_ADAPTIVE, 0);
	m.try_ret = true;
	ttask_init(&a, EWYK_BLOCKING);
	a.ret = -1;
	ttask_init(&b, EWYK_NON_BLOCKING);
	script(&a);
	script(&b);
	ewyk_strategy_produce(m.s);
	ewyk_strategy_stats(m.s, &st);
	assert_int_equal(st.epc, 1);
	assert_int_equal(st.pc, 1);
	assert_int_equal(st.failed, 1);
	assert_inline(&b, false);	/* produced here: we were owner again */
	assert_int_equal(m.consumed_calls, 2);
	assert_int_equal(m.consumed_not_owner, 0);
	helper_arrives();
}

/* A helper that runs before try_execute returns takes over production. */
static void
epc_early_helper(void **state)
{
	struct ewyk_strategy_stats st;
	struct ttask a, b;

	(void)state;
	make(EWYK_MODE_ADAPTIVE, 0);
	m.try_ret = true;
	m.try_runs_helper = true;	/* helper takes b before a runs */
	ttask_init(&a, EWYK_BLOCKING);
	ttask_init(&b, EWYK_NON_BLOCKING);
	script(&a);
	script(&b);
	ewyk_strategy_produce(m.s);
	ewyk_strategy_stats(m.s, &st);
	assert_int_equal(st.epc, 1);
	assert_int_equal(st.pc, 1);
	assert_inline(&a, false);
	/* Production was released before the hand-off, so the early helper
	 * produced b instead of being turned away. */
	assert_int_equal(b.runs, 1);
	assert_false(pthread_equal(b.ran_on, pthread_self()));
	assert_true(ewyk_strategy_quiescent(m.s));
	assert_int_equal(st.pending, 0);
}

/* EPC consumer finds the helper producing: it leaves, one producer. */
static void
epc_consumer_loses_race(void **state)
{
	struct ewyk_strategy_stats st;
	struct ttask a, b;
	sem_t gate;

	(void)state;
	make(EWYK_MODE_ADAPTIVE, 0);
	sem_init(&gate, 0, 0);
	m.try_ret = true;
	m.try_spawns_helper = true;
	ttask_init(&a, EWYK_BLOCKING);
	ttask_init(&b, EWYK_NON_BLOCKING);
	b.gate = &gate;		/* the helper is busy in b while a ends */
	a.after = &b;
	script(&a);
	script(&b);
	ewyk_strategy_produce(m.s);
	/* We returned: a ran here, the helper owns production. */
	assert_inline(&a, false);
	assert_int_equal(m.consumed_not_owner, 1);
	ewyk_strategy_stats(m.s, &st);
	assert_int_not_equal(st.state, 0);
	sem_post(&gate);
	pthread_join(m.helper, NULL);
	assert_int_equal(b.runs, 1);
	assert_false(pthread_equal(b.ran_on, pthread_self()));
	assert_true(ewyk_strategy_quiescent(m.s));
	sem_destroy(&gate);
}

/* Work signalled while the owner goes idle is produced (REPRODUCING). */
static void
reproducing_no_lost_wakeup(void **state)
{
	struct ttask late;

	(void)state;
	make(EWYK_MODE_ADAPTIVE, 0);
	ttask_init(&late, EWYK_NON_BLOCKING);
	m.late = &late;
	m.dispatch_in_produce = true;
	ewyk_strategy_produce(m.s);
	assert_inline(&late, false);
	assert_int_equal(m.exec_calls, 0);	/* the owner polled again */
	assert_true(ewyk_strategy_quiescent(m.s));
}

/* produce() while another thread produces returns at once. */
static void
produce_while_producing_returns(void **state)
{
	struct ewyk_strategy_stats st;
	struct ttask a;
	sem_t gate;
	pthread_t th;

	(void)state;
	make(EWYK_MODE_ADAPTIVE, 0);
	sem_init(&gate, 0, 0);
	ttask_init(&a, EWYK_NON_BLOCKING);
	a.gate = &gate;
	script(&a);
	assert_int_equal(pthread_create(&th, NULL, produce_thread, m.s), 0);
	while (!atomic_load(&a.inside))
		sched_yield();
	ewyk_strategy_produce(m.s);	/* must not block or produce */
	ewyk_strategy_stats(m.s, &st);
	assert_int_equal(st.state, 2);	/* REPRODUCING */
	sem_post(&gate);
	pthread_join(th, NULL);
	assert_int_equal(m.produce_calls, 3);	/* a, NULL, NULL again */
	assert_true(ewyk_strategy_quiescent(m.s));
	sem_destroy(&gate);
}

/* dispatch() from idle starts production elsewhere, never here. */
static void
dispatch_starts_elsewhere(void **state)
{
	unsigned int calls;
	struct ttask a;

	(void)state;
	make(EWYK_MODE_ADAPTIVE, 0);
	ttask_init(&a, EWYK_NON_BLOCKING);
	script(&a);
	assert_int_equal(ewyk_strategy_dispatch(m.s), 0);
	assert_int_equal(ewyk_strategy_dispatch(m.s), 0);	/* one only */
	assert_int_equal(m.produce_calls, 0);
	assert_int_equal(m.try_calls, 2);	/* a reserved thread first */
	assert_int_equal(m.exec_calls, 1);	/* then queued, once */
	m.executed[0]->run(m.executed[0]);
	assert_int_equal(a.runs, 1);
	assert_true(ewyk_strategy_quiescent(m.s));

	/* With a reserved thread free, nothing is queued. */
	m.try_ret = true;
	calls = m.produce_calls;
	assert_int_equal(ewyk_strategy_dispatch(m.s), 0);
	assert_int_equal(m.exec_calls, 1);
	assert_int_equal(m.produce_calls, calls);
	helper_arrives();
	m.try_ret = false;

	/* A refused dispatch withdraws its token and says so. */
	m.exec_ret = EWYK_REJECTED;
	assert_int_equal(ewyk_strategy_dispatch(m.s), EWYK_REJECTED);
	assert_true(ewyk_strategy_quiescent(m.s));
}

/*
 * A producer queued by dispatch() may sit behind blocked tasks: EPC must
 * not release production to it, but claim a reserved thread of its own.
 */
static void
epc_ignores_queued_producer(void **state)
{
	struct ewyk_strategy_stats st;
	struct ttask a;

	(void)state;
	make(EWYK_MODE_ADAPTIVE, 0);
	assert_int_equal(ewyk_strategy_dispatch(m.s), 0);
	assert_int_equal(m.exec_calls, 1);	/* queued, not run yet */
	ewyk_strategy_stats(m.s, &st);
	assert_true(st.queued);
	assert_int_equal(st.pending, 0);
	m.try_ret = true;
	m.try_calls = 0;
	ttask_init(&a, EWYK_BLOCKING);
	run_one(&a, false, EWYK_EPC);
	assert_int_equal(m.try_calls, 1);
	helper_arrives_queued();
}

/* The runtime switch forces one mode. */
static void
forced_modes(void **state)
{
	struct ttask a, b, c, d, e;

	(void)state;
	make(EWYK_MODE_PC, 0);
	m.try_ret = true;
	ttask_init(&a, EWYK_BLOCKING);
	run_one(&a, false, EWYK_PC);
	assert_inline(&a, false);
	assert_int_equal(m.try_calls + m.exec_calls, 0);
	ewyk_strategy_free(m.s);

	make(EWYK_MODE_PEC, 0);
	ttask_init(&b, EWYK_EITHER);
	run_one(&b, false, EWYK_PEC);
	assert_int_equal(m.try_calls, 0);
	assert_int_equal(m.exec_calls, 1);
	ttask_init(&c, EWYK_NON_BLOCKING);
	script(&c);
	ewyk_strategy_produce(m.s);
	assert_int_equal(c.t.mode, EWYK_PC);

	/* Switch at run time: EPC even for NON_BLOCKING when a helper is free. */
	ewyk_strategy_set_mode(m.s, EWYK_MODE_EPC);
	assert_int_equal(ewyk_strategy_get_mode(m.s), EWYK_MODE_EPC);
	ttask_init(&d, EWYK_NON_BLOCKING);
	script(&d);
	ewyk_strategy_produce(m.s);
	assert_int_equal(d.t.mode, EWYK_EPC);
	helper_arrives();
	/* ...and as adaptive without one; never blocking a flagged thread. */
	m.try_ret = false;
	ttask_init(&e, EWYK_BLOCKING);
	script(&e);
	ewyk_nonblocking_set(true);
	m.try_calls = 0;
	ewyk_strategy_produce(m.s);
	ewyk_nonblocking_set(false);
	assert_int_equal(e.t.mode, EWYK_PEC);
	assert_int_equal(m.try_calls, 0);
}

/* A full blocking pool: rejected hook, counter, production continues. */
static void
pec_rejected(void **state)
{
	struct ewyk_strategy_stats st;
	struct ttask a, b;

	(void)state;
	make(EWYK_MODE_ADAPTIVE, 0);
	m.exec_ret = EWYK_REJECTED;
	ttask_init(&a, EWYK_BLOCKING);
	ttask_init(&b, EWYK_NON_BLOCKING);
	script(&a);
	script(&b);
	ewyk_strategy_produce(m.s);
	ewyk_strategy_stats(m.s, &st);
	assert_int_equal(st.rejected, 1);
	assert_int_equal(st.pec, 1);
	assert_int_equal(m.rejected_calls, 1);
	assert_ptr_equal(m.rejected_task, &a.t);
	assert_int_equal(a.runs, 0);
	assert_inline(&b, false);
}

/* A monitor steals production from an owner stuck in an inline task. */
static void
steal_stuck_owner(void **state)
{
	struct ewyk_strategy_stats st;
	struct ttask a, b;
	uint64_t tok;
	sem_t gate;
	pthread_t th;

	(void)state;
	make(EWYK_MODE_ADAPTIVE, EWYK_STRATEGY_STEALABLE);
	sem_init(&gate, 0, 0);
	ttask_init(&a, EWYK_NON_BLOCKING);
	a.gate = &gate;
	ttask_init(&b, EWYK_NON_BLOCKING);
	script(&a);
	script(&b);
	assert_int_equal(ewyk_strategy_inline_token(m.s), 0);
	assert_int_equal(pthread_create(&th, NULL, produce_thread, m.s), 0);
	while (!atomic_load(&a.inside))
		sched_yield();
	tok = ewyk_strategy_inline_token(m.s);
	assert_int_not_equal(tok, 0);
	assert_false(ewyk_strategy_steal(m.s, tok + 2));	/* stale token */
	assert_true(ewyk_strategy_steal(m.s, tok));
	assert_inline(&b, false);	/* we produced while a still ran */
	assert_int_equal(ewyk_strategy_inline_token(m.s), 0);
	sem_post(&gate);
	pthread_join(th, NULL);
	ewyk_strategy_stats(m.s, &st);
	assert_int_equal(st.stolen, 1);
	assert_int_equal(st.pc, 2);
	assert_int_equal(m.consumed_not_owner, 1);	/* a's owner left */
	assert_true(ewyk_strategy_quiescent(m.s));
	assert_false(ewyk_strategy_steal(m.s, tok));
	sem_destroy(&gate);
}

/* Watched hand-off: a BLOCKING task that does not block runs on the
 * owner, with a watcher recruited beside it; production never moves. */
static void
watched_fast_task_stays_inline(void **state)
{
	struct ewyk_strategy_stats st;
	struct ttask a;

	(void)state;
	make_watched(EWYK_MODE_ADAPTIVE, EWYK_STRATEGY_STEALABLE, 60000000000ull);
	m.try_ret = true;
	m.try_spawns_helper = true;	/* the watcher: a thread of its own */
	ttask_init(&a, EWYK_BLOCKING);
	script(&a);
	ewyk_strategy_produce(m.s);
	assert_inline(&a, false);
	pthread_join(m.helper, NULL);	/* it leaves once nothing runs */
	ewyk_strategy_stats(m.s, &st);
	assert_int_equal(st.epc, 1);
	assert_int_equal(st.watched, 1);
	assert_int_equal(st.stolen, 0);
	assert_int_equal(st.pec + st.pc + st.pic, 0);
	assert_int_equal(m.try_calls, 1);
	assert_int_equal(m.consumed_not_owner, 0);
	assert_true(ewyk_strategy_quiescent(m.s));
}

static bool
has_run(void *arg)
{
	return ((struct ttask *)arg)->runs > 0;
}

static bool
is_inside(void *arg)
{
	return atomic_load(&((struct ttask *)arg)->inside);
}

/* Watched hand-off: a task that blocks past watch_ns loses production to
 * the watcher, which produces the next task while it still blocks. */
static void
watched_blocking_task_is_handed_over(void **state)
{
	struct ewyk_strategy_stats st;
	struct ttask a, b;
	pthread_t th;
	sem_t gate;

	(void)state;
	make_watched(EWYK_MODE_ADAPTIVE, EWYK_STRATEGY_STEALABLE, 1000000);
	m.try_ret = true;
	m.try_spawns_helper = true;
	sem_init(&gate, 0, 0);
	ttask_init(&a, EWYK_BLOCKING);
	a.gate = &gate;
	ttask_init(&b, EWYK_NON_BLOCKING);
	script(&a);
	script(&b);
	assert_int_equal(pthread_create(&th, NULL, produce_thread, m.s), 0);
	assert_true(test_wait_until(has_run, &b, 5000));
	/* a blocks still: inside, or about to be (the watch counts from
	 * its hand-over, and a preempted thread may not have reached its
	 * first line yet; it cannot leave before the gate opens). */
	assert_true(test_wait_until(is_inside, &a, 5000));
	assert_true(pthread_equal(b.ran_on, m.helper));	/* the watcher's */
	sem_post(&gate);
	pthread_join(th, NULL);
	pthread_join(m.helper, NULL);
	ewyk_strategy_stats(m.s, &st);
	assert_int_equal(st.stolen, 1);
	assert_int_equal(st.watched, 1);
	assert_int_equal(st.epc, 1);
	assert_int_equal(st.pc, 1);
	assert_int_equal(m.consumed_not_owner, 1);	/* a's owner left */
	assert_true(ewyk_strategy_quiescent(m.s));
	sem_destroy(&gate);
}

static void
names(void **state)
{
	enum ewyk_mode md;

	(void)state;
	make(EWYK_MODE_ADAPTIVE, 0);
	assert_int_equal(ewyk_mode_parse("pec", &md), 0);
	assert_int_equal(md, EWYK_MODE_PEC);
	assert_string_equal(ewyk_mode_name(EWYK_MODE_EPC), "epc");
	assert_int_equal(ewyk_mode_parse("fifo", &md), -EINVAL);
	assert_string_equal(ewyk_consume_name(EWYK_PIC), "pic");
}

/* FIBER_CAPABLE with a fiber free: FIBER, inline on the owner, marked
 * inline (the watchdog can relieve it), no helper, no pool. */
static void
fiber_free_runs_as_fiber(void **state)
{
	struct ewyk_strategy_stats st;
	struct ttask a;

	(void)state;
	m.fibers = true;
	make(EWYK_MODE_ADAPTIVE, EWYK_STRATEGY_STEALABLE);
	m.try_ret = true;
	ttask_init(&a, EWYK_FIBER_CAPABLE);
	st = run_one(&a, false, EWYK_FIBER);
	assert_inline(&a, false);
	assert_int_not_equal(a.token_during, 0);
	assert_int_equal(st.fiber_fallback, 0);
	assert_int_equal(m.fiber_calls, 1);
	assert_int_equal(m.try_calls, 0);
	assert_int_equal(m.exec_calls, 0);
	assert_int_equal(m.consumed_calls, 1);
}

/* No fiber free: counted, then as BLOCKING: EPC with a helper, PEC
 * without. */
static void
fiber_exhausted_falls_back(void **state)
{
	struct ewyk_strategy_stats st;
	struct ttask a;

	(void)state;
	m.fibers = true;
	m.fiber_ret = -1;
	make(EWYK_MODE_ADAPTIVE, 0);
	ttask_init(&a, EWYK_FIBER_CAPABLE);
	st = run_one(&a, false, EWYK_PEC);
	assert_int_equal(st.fiber_fallback, 1);
	assert_int_equal(m.exec_calls, 1);
	assert_ptr_equal(m.executed[0], &a.t);
	assert_int_equal(a.runs, 0);
}

/* A parked fiber is resumed as a fiber whatever the mode; a new one
 * follows a forced mode as BLOCKING; without a hook, BLOCKING. */
static void
fiber_resume_and_forced_modes(void **state)
{
	struct ewyk_strategy_stats st;
	struct ttask a, b, c;

	(void)state;
	m.fibers = true;
	m.fiber_ret = 1;
	make(EWYK_MODE_PEC, 0);
	ttask_init(&a, EWYK_FIBER_CAPABLE);
	run_one(&a, false, EWYK_FIBER);
	assert_inline(&a, false);
	ewyk_strategy_free(m.s);
	memset(&m, 0, sizeof(m));
	m.fibers = true;
	m.fiber_ret = 0;
	make(EWYK_MODE_PEC, 0);
	ttask_init(&b, EWYK_FIBER_CAPABLE);
	st = run_one(&b, false, EWYK_PEC);
	assert_int_equal(st.fiber_fallback, 0);
	ewyk_strategy_free(m.s);
	memset(&m, 0, sizeof(m));
	make(EWYK_MODE_ADAPTIVE, 0);
	ttask_init(&c, EWYK_FIBER_CAPABLE);
	run_one(&c, false, EWYK_PEC);
	assert_string_equal(ewyk_consume_name(EWYK_FIBER), "fiber");
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(row1_nonblocking_pc),
		T(row2_either_flagged_pc),
		T(row3_either_helper_epc),
		T(row4_either_nohelper_pic),
		T(row5_blocking_flagged_pec),
		T(row6_blocking_helper_epc),
		T(row7_blocking_nohelper_pec),
		T(epc_failure_reacquires),
		T(epc_early_helper),
		T(epc_consumer_loses_race),
		T(reproducing_no_lost_wakeup),
		T(produce_while_producing_returns),
		T(dispatch_starts_elsewhere),
		T(epc_ignores_queued_producer),
		T(forced_modes),
		T(pec_rejected),
		T(steal_stuck_owner),
		T(watched_fast_task_stays_inline),
		T(watched_blocking_task_is_handed_over),
		T(fiber_free_runs_as_fiber),
		T(fiber_exhausted_falls_back),
		T(fiber_resume_and_forced_modes),
		T(names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
