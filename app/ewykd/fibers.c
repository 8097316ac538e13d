/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include <rte_cycles.h>

#include "ewyk_fiber.h"
#include "ewykd.h"
#include "fibers.h"
#include "options.h"
#include "shard.h"
#include "store.h"

/* How often the waits are checked for clients that left. */
#define CANCEL_SCAN_MS 10

static struct route_task *
task_of(const struct ewyk_request *req)
{
	return container_of(req, struct route_task, req);
}

int
shard_fibers_init(struct shard *s, const struct ewykd_config *cfg,
		uint32_t ntasks)
{
	struct shard_fibers *fb = &s->exec.fib;
	struct ewyk_fiber_pool_conf pc = {
		.stack_size = (size_t)cfg->fiber_stack_kb * 1024,
		.max = cfg->fibers,
	};

	if (cfg->fibers == 0)
		return 0;
	fb->pool = ewyk_fiber_pool_create(&pc);
	fb->heap = calloc(ntasks, sizeof(*fb->heap));
	return fb->pool != NULL && fb->heap != NULL ? 0 : -1;
}

void
shard_fibers_fini(struct shard *s)
{
	struct shard_fibers *fb = &s->exec.fib;

	ewyk_fiber_pool_free(fb->pool);
	fb->pool = NULL;
	free(fb->heap);
	fb->heap = NULL;
}

int
fibers_hook(void *ctx, struct ewyk_task *task)
{
	const struct shard *s = ctx;
	const struct route_task *t = (const struct route_task *)task;

	if (t->fiber != NULL)
		return 1;
	return s->exec.fib.pool != NULL &&
		ewyk_fiber_pool_available(s->exec.fib.pool) ? 0 : -1;
}

/* The timers: a binary min-heap on deadline, each task knowing its place. */

static void
heap_set(struct shard_fibers *fb, uint32_t i, struct route_task *t)
{
	fb->heap[i] = t;
	t->heap_pos = i + 1;
}

static void
sift_up(struct shard_fibers *fb, uint32_t i)
{
	struct route_task *t = fb->heap[i];

	while (i > 0 && t->deadline < fb->heap[(i - 1) / 2]->deadline) {
		heap_set(fb, i, fb->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	heap_set(fb, i, t);
}

static void
sift_down(struct shard_fibers *fb, uint32_t i)
{
	struct route_task *t = fb->heap[i];

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= fb->nheap)
			break;
		if (c + 1 < fb->nheap &&
				fb->heap[c + 1]->deadline < fb->heap[c]->deadline)
			c++;
		if (t->deadline <= fb->heap[c]->deadline)
			break;
		heap_set(fb, i, fb->heap[c]);
		i = c;
	}
	heap_set(fb, i, t);
}

static void
heap_remove(struct shard_fibers *fb, struct route_task *t)
{
	uint32_t i = t->heap_pos - 1;
	struct route_task *last = fb->heap[--fb->nheap];

	t->heap_pos = 0;
	if (i == fb->nheap)
		return;
	heap_set(fb, i, last);
	sift_up(fb, i);
	sift_down(fb, last->heap_pos - 1);
}

void
fiber_arm(struct shard *s, struct route_task *t)
{
	struct shard_fibers *fb = &s->exec.fib;

	t->fstate = FIBER_WAITING;
	ilist_push(&fb->waiting, &t->wlink);
	fb->nwaiting++;
	fb->parks++;
	if (t->deadline != UINT64_MAX) {
		heap_set(fb, fb->nheap++, t);
		sift_up(fb, fb->nheap - 1);
	}
	if (t->wait->arm != NULL)
		t->wait->arm(t->wait);
}

/* The wait is over: the fiber is queued to be resumed with result. */
static void
end_wait(struct shard *s, struct route_task *t, int result)
{
	struct shard_fibers *fb = &s->exec.fib;
	struct ewyk_wait *w = t->wait;

	if (t->fstate != FIBER_WAITING)
		return;
	ilist_remove(&t->wlink);
	fb->nwaiting--;
	if (t->heap_pos != 0)
		heap_remove(fb, t);
	w->result = result;
	if (result != 0 && w->disarm != NULL)
		w->disarm(w);
	t->fstate = FIBER_READY;
	shard_ready(s, t);
}

void
fiber_wait_end(struct ewyk_wait *w, int result)
{
	struct route_task *t = w->task;

	if (t == NULL || t->wait != w || t->fstate != FIBER_WAITING)
		return;
	if (result == 0)
		t->shard->exec.fib.wakes++;
	else if (result == -ECANCELED)
		t->shard->exec.fib.cancelled++;
	end_wait(t->shard, t, result);
}

void
ewyk_wait_wake(struct ewyk_wait *w)
{
	fiber_wait_end(w, 0);
}

static uint64_t
deadline_after(uint32_t timeout_ms)
{
	return timeout_ms == EWYK_WAIT_FOREVER ? UINT64_MAX :
		rte_get_tsc_cycles() + (uint64_t)timeout_ms * rte_get_tsc_hz() /
		1000;
}

void
fiber_wait_renew(struct ewyk_wait *w, uint32_t timeout_ms)
{
	struct route_task *t = w->task;

	if (t == NULL || t->wait != w || t->fstate != FIBER_WAITING ||
			t->heap_pos == 0)
		return;
	/* Later than it was: the task can only move down the heap. */
	t->deadline = deadline_after(timeout_ms);
	sift_down(&t->shard->exec.fib, t->heap_pos - 1);
}

int
ewyk_wait_park(struct ewyk_request *req, struct ewyk_wait *w,
		uint32_t timeout_ms)
{
	struct route_task *t = task_of(req);
	struct ewyk_fiber *f = ewyk_fiber_self();

	if (t->fstate != FIBER_RUNNING || f == NULL)
		return -EPERM;
	w->task = t;
	w->result = -EINPROGRESS;
	t->wait = w;
	t->deadline = deadline_after(timeout_ms);
	/* Parked until the owner (perhaps another lcore by then) arms the
	 * wait, ends it and resumes the fiber. */
	t->fstate = FIBER_PARKED;
	ewyk_fiber_park(f);
	t->wait = NULL;
	w->task = NULL;
	return w->result;
}

bool
ewyk_request_on_fiber(const struct ewyk_request *req)
{
	return task_of(req)->fstate == FIBER_RUNNING;
}

struct shard *
fiber_wait_shard(const struct ewyk_wait *w)
{
	return ((const struct route_task *)w->task)->shard;
}

int
ewyk_sleep(struct ewyk_request *req, uint32_t ms)
{
	struct ewyk_wait w = { 0 };
	int rc;

	if (!ewyk_request_on_fiber(req)) {
		struct timespec ts = { (time_t)(ms / 1000),
			(long)(ms % 1000) * 1000000 };

		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
		return 0;
	}
	rc = ewyk_wait_park(req, &w, ms);
	return rc == -ETIMEDOUT ? 0 : rc;
}

/* Durable store writes: the waits of a shard are looked at again each
 * time the store's persisted epoch moves. */

struct durable_wait {
	struct ewyk_wait w;
	struct store *store;
	const char *key;
	size_t klen;
	uint64_t version;
	uint64_t epoch;		/* store_persist_epoch() last looked at */
	uint64_t failures;	/* store_journal_failures() when it began */
	int err;		/* a journal write failed meanwhile: its errno */
	struct ilink link;	/* in the shard's durable waits */
};

static void
durable_disarm(struct ewyk_wait *w)
{
	ilist_remove(&container_of(w, struct durable_wait, w)->link);
}

/* Looks at the key if the epoch moved; wakes its fiber once the version
 * is on disk (or the key cannot be: the fiber looks again). */
static bool
durable_check(struct durable_wait *dw)
{
	uint64_t e = store_persist_epoch(dw->store);

	if (e == dw->epoch)
		return false;
	dw->epoch = e;
	if (store_durable_state(dw->store, dw->key, dw->klen, dw->version) == 0) {
		int err;

		/* A failure before the wait began may be mended by the
		 * sink's next try; one after it is this version's. */
		if (store_journal_failures(dw->store, &err) == dw->failures)
			return false;
		dw->err = err != 0 ? err : EIO;
	}
	ilist_remove(&dw->link);
	ewyk_wait_wake(&dw->w);
	return true;
}

static void
durable_arm(struct ewyk_wait *w)
{
	struct durable_wait *dw = container_of(w, struct durable_wait, w);
	struct shard_fibers *fb = &fiber_wait_shard(w)->exec.fib;

	ilist_push(&fb->durable, &dw->link);
	dw->epoch = store_persist_epoch(dw->store) - 1;	/* look now */
	durable_check(dw);
}

static unsigned int
durable_poll(struct shard_fibers *fb)
{
	struct ilink *l, *next;
	unsigned int n = 0;

	for (l = fb->durable; l != NULL; l = next) {
		next = l->next;
		n += durable_check(container_of(l, struct durable_wait, link));
	}
	return n;
}

int
fiber_wait_durable(struct ewyk_request *req, struct store *st,
		const char *key, size_t klen, uint64_t version,
		uint32_t timeout_ms)
{
	struct durable_wait dw = {
		.w = { .arm = durable_arm, .disarm = durable_disarm },
		.store = st, .key = key, .klen = klen, .version = version,
	};
	int rc = store_durable_state(st, key, klen, version), err;

	dw.failures = store_journal_failures(st, &err);
	if (rc == 1)
		return 0;
	if (rc == -EAGAIN || (rc == 0 && !ewyk_request_on_fiber(req)))
		return store_wait_durable(st, key, klen, version, timeout_ms);
	if (rc < 0)
		return rc;
	rc = ewyk_wait_park(req, &dw.w, timeout_ms);
	if (rc != 0)
		return rc;
	rc = store_durable_state(st, key, klen, version);
	return rc == 1 ? 0 : rc != 0 ? rc : dw.err != 0 ? -dw.err : -ETIMEDOUT;
}

unsigned int
fibers_poll(struct shard *s)
{
	struct shard_fibers *fb = &s->exec.fib;
	struct ilink *l, *next;
	struct route_task *t;
	unsigned int n = 0;
	uint64_t now, now_ms;

	/* Most polls find no fiber waiting: then not even the clock. */
	if (fb->nwaiting == 0)
		return 0;
	now = rte_get_tsc_cycles();
	while (fb->nheap > 0 && fb->heap[0]->deadline <= now) {
		fb->timeouts++;
		end_wait(s, fb->heap[0], -ETIMEDOUT);
		n++;
	}
	now_ms = net_now_ms(s->ns);
	if (now_ms >= fb->next_scan_ms) {
		fb->next_scan_ms = now_ms + CANCEL_SCAN_MS;
		for (l = fb->waiting; l != NULL; l = next) {
			next = l->next;
			t = container_of(l, struct route_task, wlink);
			/* An answer begun is the connection's: its release
			 * before the body was whole tells of a client gone
			 * (body_io.c), for waits begun after it too. */
			if (t->early.begun ? early_answer_client_gone(t) :
					!http_server_awaits(s->http, t->origin)) {
				fb->cancelled++;
				t->abandoned = true;	/* no answer: see dispatch_complete() */
				end_wait(s, t, -ECANCELED);
				n++;
			}
		}
	}
	return n + durable_poll(fb);
}
