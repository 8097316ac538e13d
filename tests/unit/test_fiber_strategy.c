/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fibers through the execution strategy, as ewykd uses them: a million
 * fiber-capable requests, each started on a fiber of one pool, parked
 * once (a wait) and resumed by a later turn of the producer, 64 in flight.
 * Every stack must come back: none in use at the end, as many started as
 * finished, and no more stacks made than were ever in flight at once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "ewyk_exec.h"
#include "ewyk_fiber.h"

#define REQUESTS 1000000u
#define IN_FLIGHT 64u

struct req {
	struct ewyk_task t;	/* first */
	struct ewyk_fiber *f;
	struct req *next;
	unsigned int parks;
	bool parked;
};

static struct {
	struct ewyk_fiber_pool *pool;
	struct req reqs[IN_FLIGHT];
	struct req *ready, *ready_tail;	/* new, or woken */
	struct req *waiting;		/* parked: woken on the next turn */
	struct req *free;
	unsigned int made, answered, parked_now, max_parked;
} w;

static void
push_ready(struct req *r)
{
	r->next = NULL;
	if (w.ready_tail != NULL)
		w.ready_tail->next = r;
	else
		w.ready = r;
	w.ready_tail = r;
}

static void
body(struct ewyk_fiber *f, void *arg)
{
	struct req *r = arg;

	r->parked = true;	/* a wait: back to the producer */
	ewyk_fiber_park(f);
	r->parks++;
}

static int
run(struct ewyk_task *t)
{
	struct req *r = (struct req *)t;

	assert_int_equal(t->mode, EWYK_FIBER);
	r->parked = false;
	if (r->f == NULL)
		r->f = ewyk_fiber_start(w.pool, body, r);
	else if (!ewyk_fiber_resume(r->f))
		r->f = NULL;
	return 0;
}

static void
consumed(void *ctx, struct ewyk_task *t, int rc, bool owner)
{
	struct req *r = (struct req *)t;

	(void)ctx;
	(void)rc;
	assert_true(owner);
	if (r->parked) {
		r->next = w.waiting;
		w.waiting = r;
		if (++w.parked_now > w.max_parked)
			w.max_parked = w.parked_now;
		return;
	}
	assert_null(r->f);
	assert_int_equal(r->parks, 1);
	w.answered++;
	r->next = w.free;
	w.free = r;
}

static int
fiber_hook(void *ctx, struct ewyk_task *t)
{
	(void)ctx;
	if (((struct req *)t)->f != NULL)
		return 1;
	return ewyk_fiber_pool_available(w.pool) ? 0 : -1;
}

/* One turn: the waits of the last turn end, new requests arrive while
 * there is room, then the next ready one. */
static struct ewyk_task *
produce(void *ctx)
{
	struct req *r;

	(void)ctx;
	if (w.ready == NULL) {
		while ((r = w.waiting) != NULL) {
			w.waiting = r->next;
			w.parked_now--;
			push_ready(r);
		}
		while (w.made < REQUESTS && (r = w.free) != NULL) {
			w.free = r->next;
			memset(r, 0, sizeof(*r));
			r->t.type = EWYK_FIBER_CAPABLE;
			r->t.run = run;
			w.made++;
			push_ready(r);
		}
	}
	r = w.ready;
	if (r == NULL)
		return NULL;	/* all answered */
	w.ready = r->next;
	if (w.ready == NULL)
		w.ready_tail = NULL;
	return &r->t;
}

static void
million_requests_leave_no_stack_behind(void **state)
{
	struct ewyk_fiber_pool_conf pc = { .stack_size = 16384,
		.max = IN_FLIGHT };
	struct ewyk_strategy_conf sc = {
		.produce = produce,
		.consumed = consumed,
		.fiber = fiber_hook,
		.mode = EWYK_MODE_ADAPTIVE,
		.flags = EWYK_STRATEGY_STEALABLE,
	};
	struct ewyk_fiber_pool_stats ps;
	struct ewyk_strategy_stats ss;
	struct ewyk_strategy *s;
	unsigned int i;

	(void)state;
	memset(&w, 0, sizeof(w));
	w.pool = ewyk_fiber_pool_create(&pc);
	assert_non_null(w.pool);
	for (i = 0; i < IN_FLIGHT; i++) {
		w.reqs[i].next = w.free;
		w.free = &w.reqs[i];
	}
	s = ewyk_strategy_create(&sc);
	assert_non_null(s);
	ewyk_strategy_produce(s);
	assert_true(ewyk_strategy_quiescent(s));
	ewyk_strategy_stats(s, &ss);
	ewyk_fiber_pool_stats(w.pool, &ps);
	assert_int_equal(w.answered, REQUESTS);
	assert_int_equal(w.max_parked, IN_FLIGHT);
	/* A start and a resume per request, all as fibers. */
	assert_int_equal(ss.fiber, 2ull * REQUESTS);
	assert_int_equal(ss.pc + ss.pic + ss.pec + ss.epc, 0);
	assert_int_equal(ss.fiber_fallback, 0);
	assert_int_equal(ps.started, REQUESTS);
	assert_int_equal(ps.finished, REQUESTS);
	assert_int_equal(ps.in_use, 0);
	assert_true(ps.stacks <= IN_FLIGHT);
	assert_int_equal(ps.peak, IN_FLIGHT);
	assert_int_equal(ps.exhausted, 0);
	ewyk_strategy_free(s);
	ewyk_fiber_pool_free(w.pool);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(million_requests_leave_no_stack_behind),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
