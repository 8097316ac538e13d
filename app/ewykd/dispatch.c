/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_ring.h>

#include "dispatch.h"
#include "ewyk_fiber.h"
#include "ewykd.h"
#include "fetch.h"
#include "fibers.h"
#include "http1_parse.h"
#include "http_tcp.h"
#include "options.h"
#include "proxy.h"
#include "shard.h"

/* Reserved workers are EAL lcores, launched like any lcore function. */
static int
lcore_start(void *ctx, unsigned int idx, int (*fn)(void *), void *arg)
{
	const struct ewykd *e = ctx;

	return rte_eal_remote_launch(fn, arg, e->workers[idx]);
}

static int
lcore_join(void *ctx, unsigned int idx)
{
	const struct ewykd *e = ctx;

	return rte_eal_wait_lcore(e->workers[idx]);
}

int
exec_create(struct ewykd *e)
{
	const struct ewykd_config *cfg = &e->cfg;
	const struct ewyk_reserved_ops ops = {
		.start = lcore_start,
		.join = lcore_join,
		.ctx = e,
	};
	struct ewyk_reserved_conf rc = {
		.size = e->nb_workers,
		.spin_ns = (uint64_t)cfg->reserved_spin_us * 1000,
		.ops = &ops,
	};
	struct ewyk_bpool_conf bc = {
		.max_threads = cfg->blocking_threads,
		.min_threads = 1,
		.queue_size = cfg->blocking_queue,
		.idle_timeout_ns = 5ull * 1000 * 1000 * 1000,
	};

	e->bpool = ewyk_bpool_create(&bc);
	if (e->bpool == NULL)
		return -1;
	if (e->nb_workers > 0) {
		e->reserved = ewyk_reserved_create(&rc);
		if (e->reserved == NULL)
			return -1;
	}
	return 0;
}

static struct route_task *
task_alloc(struct shard_exec *x)
{
	struct route_task *t = x->free_tasks;

	if (t != NULL)
		x->free_tasks = t->free_next;
	return t;
}

static void
task_free(struct shard_exec *x, struct route_task *t)
{
	t->free_next = x->free_tasks;
	x->free_tasks = t;
}

static uint64_t
elapsed_us(uint64_t t0)
{
	return (rte_get_tsc_cycles() - t0) * 1000000 / rte_get_tsc_hz();
}

static void
record(struct shard *s, struct route_task *t)
{
	struct route_stats *rs = &s->exec.routes[t->route->id];

	lat_record(&rs->lat, elapsed_us(t->t0));
	if (t->req.ans.status >= 500)
		rs->errors++;
}

/* A task whose handler could not answer gets the server's answer in its
 * place. On the owner, so that what the handler borrowed goes back on the
 * connection's lcore, as the API promises. */
static void
answer_fallback(struct route_task *t)
{
	if (t->fallback == 503)
		http_answer_text(&t->req.ans, 503, "503 blocking pool full\n");
	else if (t->fallback != 0)
		http_answer_text(&t->req.ans, 500, "500 the handler gave no "
				"answer\n");
}

/* On the owner: the answer goes to its connection, which keeps it until
 * written (then on_released frees the task), or is gone. */
void
dispatch_complete(struct shard *s, struct route_task *t)
{
	if (t->fstate == FIBER_PARKED) {
		fiber_arm(s, t);	/* it parked on an lcore that lost the shard */
		return;
	}
	fetch_task_end(s, t);
	if (t->early.begun) {
		/* Its answer is out: the body ends now. */
		record(s, t);
		if (early_answer_end(s, t))
			task_free(&s->exec, t);
		return;
	}
	answer_fallback(t);
	record(s, t);
	if (t->abandoned)
		http_server_abandon(s->http, t->origin);
	if (t->abandoned ||
			!http_server_answer(s->http, t->origin, &t->req.ans)) {
		s->exec.stale++;
		http_answer_release(&t->req.ans);
		task_free(&s->exec, t);
	}
}

static void
on_released(void *ctx, struct http_answer *a)
{
	struct route_task *t = container_of(a, struct route_task, req.ans);

	/* An answer begun early may be let go while its handler runs. */
	if (t->early.begun && !early_answer_released(t))
		return;
	task_free(&((struct shard *)ctx)->exec, t);
}

/* Anywhere else: hand the answer to the owner. */
static void
post(struct route_task *t)
{
	/* The ring holds every task of the shard: it cannot be full. */
	while (rte_ring_enqueue(t->shard->exec.done, t) != 0)
		ewyk_cpu_pause();
}

unsigned int
shard_drain_completions(struct shard *s)
{
	void *done[32];
	unsigned int n, i, total = 0;

	do {
		n = rte_ring_sc_dequeue_burst(s->exec.done, done, 32, NULL);
		for (i = 0; i < n; i++)
			dispatch_complete(s, done[i]);
		s->exec.completions += n;
		total += n;
	} while (n == 32);
	return total;
}

#define TASK_DEFERRED 1		/* route_run(): now the blocking pool's */
#define TASK_PARKED 2		/* route_run(): its fiber waits */
#define TASK_DEFER 3		/* handle(): run it again on the pool */

/* Runs a handler. It sees only the request: no connection, no shard. */
static int
handle(struct route_task *t)
{
	struct ewyk_task *bt = &t->base;
	const struct http_route *rt = t->route;
	enum ewyk_result res;

	/* A NON_BLOCKING handler never may; the others may unless this
	 * thread runs under the non-blocking flag, or is a fiber's lcore. */
	t->req.may_block = rt->type != EWYK_HANDLER_NON_BLOCKING &&
		!ewyk_nonblocking() && bt->mode != EWYK_FIBER;
	if (rt->type == EWYK_HANDLER_NON_BLOCKING && bt->mode == EWYK_PEC)
		t->req.may_block = true;	/* deferred: on the pool */
	t->fallback = 0;
	res = rt->handler(&t->req, rt->ctx);
	if (res == EWYK_DEFER && !t->req.may_block &&
			t->req.ans.kind == HTTP_BODY_UNSET) {
		http_answer_init(&t->req.ans);	/* headers it set: gone */
		return TASK_DEFER;
	}
	if (res != EWYK_ANSWERED || t->req.ans.kind == HTTP_BODY_UNSET)
		t->fallback = 500;
	return 0;
}

/* The handler must block, and may not where it ran: again, on the pool
 * (after its fiber, if any, has ended: the pool may finish it at once). */
static int
defer(struct route_task *t)
{
	struct ewyk_task *bt = &t->base;
	uint8_t mode = bt->mode;

	__atomic_fetch_add(&t->shard->exec.deferred, 1, __ATOMIC_RELAXED);
	bt->mode = EWYK_PEC;
	if (ewyk_bpool_execute(t->shard->exec.ew->bpool, bt) == 0)
		return TASK_DEFERRED;
	bt->mode = mode;
	t->fallback = 503;
	return 0;
}

static void
fiber_main(struct ewyk_fiber *f, void *arg)
{
	struct route_task *t = arg;

	RTE_SET_USED(f);
	t->frc = handle(t);
	t->fstate = FIBER_NONE;
}

/* FIBER mode: the handler starts on a fiber of the shard, or goes on
 * from where it parked; it returns here when it parks again or ends. */
static int
fiber_run(struct route_task *t)
{
	struct shard_exec *x = &t->shard->exec;

	t->fstate = FIBER_RUNNING;
	if (t->fiber == NULL) {
		t->fiber = ewyk_fiber_start(x->fib.pool, fiber_main, t);
		if (t->fiber == NULL && t->fstate == FIBER_RUNNING) {
			/* No stack could be made (mmap failed). */
			t->fstate = FIBER_NONE;
			x->fib.no_stack++;
			t->fallback = 503;
			return 0;
		}
	} else if (!ewyk_fiber_resume(t->fiber)) {
		t->fiber = NULL;
	}
	if (t->fstate == FIBER_PARKED)
		return TASK_PARKED;
	t->fiber = NULL;
	return t->frc;
}

static int
route_run(struct ewyk_task *bt)
{
	struct route_task *t = (struct route_task *)bt;
	unsigned int lcore = rte_lcore_id();
	uint64_t t0 = rte_get_tsc_cycles();
	int rc = bt->mode == EWYK_FIBER ? fiber_run(t) : handle(t);

	if (lcore < RTE_MAX_LCORE) {
		t->shard->exec.ew->lcore_time[lcore].consuming +=
			rte_get_tsc_cycles() - t0;
		t->shard->exec.ew->lcore_time[lcore].tasks++;
	}
	if (rc == TASK_DEFER)
		rc = defer(t);
	if (rc == 0 && bt->mode == EWYK_PEC)
		post(t);	/* a pool thread never writes to the shard */
	return rc;
}

static void
on_consumed(void *ctx, struct ewyk_task *task, int rc, bool owner)
{
	struct route_task *t = (struct route_task *)task;

	RTE_SET_USED(ctx);
	if (rc == TASK_DEFERRED)
		return;		/* the pool has it now: do not touch it */
	if (owner && rc == TASK_PARKED)
		fiber_arm(t->shard, t);
	else if (owner)
		dispatch_complete(t->shard, t);
	else
		post(t);	/* the shard moved on meanwhile */
}

static void
on_rejected(void *ctx, struct ewyk_task *task, int err)
{
	struct route_task *t = (struct route_task *)task;

	RTE_SET_USED(ctx);
	RTE_SET_USED(err);
	/* The blocking pool is full: the RX lcore never waits for it. */
	t->fallback = 503;
	dispatch_complete(t->shard, t);
}

/* http_dispatch_fn: on the owner, while it parses (either protocol). */
/* An HTTP_ROUTE_INLINE handler, run by the producer right away. */
static void
run_inline(struct shard *s, struct route_task *t)
{
	const struct http_route *rt = t->route;

	t->base.mode = EWYK_PC;
	t->req.may_block = false;
	t->fallback = rt->handler(&t->req, rt->ctx) != EWYK_ANSWERED ||
		t->req.ans.kind == HTTP_BODY_UNSET ? 500 : 0;
	answer_fallback(t);
	record(s, t);
	ewyk_strategy_consumed_in_produce(s->exec.strategy);
}

static int
shard_dispatch(void *ctx, const struct http_route *rt,
		const struct http_head *r, int version, struct http_origin o,
		struct http_answer **ans)
{
	struct shard *s = ctx;
	struct shard_exec *x = &s->exec;
	struct route_task *t;

	t = task_alloc(x);
	if (t == NULL) {
		x->overloaded++;
		return 503;
	}
	if (http_req_fill(&t->req, r, rt, version) != 0) {
		task_free(x, t);
		return 431;
	}
	t->route = rt;
	t->origin = o;
	t->t0 = rte_get_tsc_cycles();
	t->fstate = FIBER_NONE;
	t->abandoned = false;
	t->fiber = NULL;
	body_io_reset(t, r);
	t->fetches = NULL;
	if (rt->flags & HTTP_ROUTE_INLINE) {
		run_inline(s, t);
		*ans = &t->req.ans;
		return HTTP_DISPATCH_ANSWERED;
	}
	if (proxy_route(rt) && !proxy_takes_fiber(s, t)) {
		/* On the owner, as events: the answer comes with the
		 * upstream's head (dispatch_complete()). */
		int rc = proxy_dispatch(s, t);

		if (rc != HTTP_DISPATCH_TAKEN)
			task_free(x, t);
		return rc;
	}
	t->base.type = rt->type == EWYK_HANDLER_BLOCKING ? EWYK_BLOCKING :
		rt->type == EWYK_HANDLER_EITHER ? EWYK_EITHER :
		rt->type == EWYK_HANDLER_FIBER ? EWYK_FIBER_CAPABLE :
		EWYK_NON_BLOCKING;
	shard_ready(s, t);
	return HTTP_DISPATCH_TAKEN;
}

void
shard_ready(struct shard *s, struct route_task *t)
{
	struct shard_exec *x = &s->exec;

	/* Each task is in it once at most: it cannot overflow. */
	x->ready[(x->ready_head + x->ready_n++) % x->ntasks] = t;
}

struct ewyk_task *
shard_next_task(struct shard *s)
{
	struct shard_exec *x = &s->exec;
	struct route_task *t;

	if (x->ready_n == 0)
		return NULL;
	t = x->ready[x->ready_head];
	x->ready_head = (x->ready_head + 1) % x->ntasks;
	x->ready_n--;
	return &t->base;
}

static int
start_production(struct ewyk_task *task)
{
	struct shard_exec *x = container_of(task, struct shard_exec, start);

	ewyk_strategy_produce(x->strategy);
	return 0;
}

static int
steal_production(struct ewyk_task *task)
{
	struct shard_exec *x = container_of(task, struct shard_exec, steal);
	uint64_t token = x->steal_token;

	/* A successful steal keeps this lcore producing until the shard
	 * moves on: let the watchdog act again meanwhile. The task holds no
	 * state of its own, so a second run of it may overlap this one. */
	__atomic_store_n(&x->steal_pending, false, __ATOMIC_RELEASE);
	ewyk_strategy_steal(x->strategy, token);
	return 0;
}

enum ewyk_consume
dispatch_consume_mode(const struct ewyk_request *req)
{
	const struct route_task *t = container_of(req, const struct route_task,
			req);

	return (enum ewyk_consume)t->base.mode;
}

#define HANDOFF_AUTO_US 20

/* --handoff-us, or by default a watched hand-off where it pays: a spare
 * worker lcore exists and no two worker lcores share a CPU. A watcher that
 * shares its CPU with the owner it watches takes turns with it, sees every
 * task run long, and steals from each: there, Jetty's EPC. */
static uint64_t
handoff_ns(const struct ewykd *e)
{
	unsigned int i, j;

	if (e->cfg.handoff_us_set)
		return (uint64_t)e->cfg.handoff_us * 1000;
	if (e->nb_workers <= e->nb_shards)
		return 0;
	for (i = 0; i < e->nb_workers; i++)
		for (j = i + 1; j < e->nb_workers; j++) {
			rte_cpuset_t a = rte_lcore_cpuset(e->workers[i]);
			rte_cpuset_t b = rte_lcore_cpuset(e->workers[j]);
			rte_cpuset_t both;

			CPU_AND(&both, &a, &b);
			if (CPU_COUNT(&both) > 0)
				return 0;
		}
	return (uint64_t)HANDOFF_AUTO_US * 1000;
}

int
shard_exec_init(struct shard *s, struct ewykd *e)
{
	const struct ewykd_config *cfg = &e->cfg;
	struct shard_exec *x = &s->exec;
	struct ewyk_strategy_conf sc = {
		.produce = shard_produce,
		.consumed = on_consumed,
		.rejected = on_rejected,
		.ctx = s,
		.mode = cfg->strategy,
		.flags = EWYK_STRATEGY_STEALABLE,
		.watch_ns = handoff_ns(e),
		.fiber = fibers_hook,
	};
	struct http_server_conf hc;
	char name[RTE_RING_NAMESIZE];
	unsigned int i;

	x->ew = e;
	x->ntasks = SHARD_TASKS + cfg->fibers;
	ewyk_executor_init(&sc.exec, e->bpool, e->reserved);
	x->strategy = ewyk_strategy_create(&sc);
	snprintf(name, sizeof(name), "ewyk_done_%u", s->id);
	/* RTS enqueue: producers may be preempted pool threads. */
	x->done = rte_ring_create(name, x->ntasks, rte_socket_id(),
			RING_F_MP_RTS_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
	/* Ordinary memory: a task is large (a whole request) and, with
	 * thousands of fibers, mostly untouched; pages come when used. */
	x->tasks = calloc(x->ntasks, sizeof(*x->tasks));
	x->ready = calloc(x->ntasks, sizeof(*x->ready));
	if (x->strategy == NULL || x->done == NULL || x->tasks == NULL ||
			x->ready == NULL || shard_fibers_init(s, cfg, x->ntasks) != 0)
		return -1;
	for (i = x->ntasks; i-- > 0;) {
		x->tasks[i].base.run = route_run;
		x->tasks[i].shard = s;
		task_free(x, &x->tasks[i]);
	}
	x->start.run = start_production;
	x->start.type = EWYK_NON_BLOCKING;
	x->steal.run = steal_production;
	x->steal.type = EWYK_NON_BLOCKING;
	hc = (struct http_server_conf){
		.transport = &http_tcp_transport,
		.transport_ctx = s->ns,
		.router = &e->router,
		.dispatch = shard_dispatch,
		.released = on_released,
		.body_ready = body_watch_ready,
		.dispatch_ctx = s,
		.stats = &s->http_stats,
		.max_conns = cfg->max_conns,
		.header_timeout_ms = cfg->header_timeout_ms,
		.keepalive_timeout_ms = cfg->keepalive_timeout_ms,
		.max_head_bytes = cfg->max_header_bytes,
		.max_target = cfg->max_target,
	};
	s->http = http_server_create(&hc);
	if (s->http == NULL || body_watch_init(s, cfg->max_conns) != 0)
		return -1;
	http_tcp_attach(s->http, s->ns);
	if (cfg->nb_upstreams > 0) {
		const struct upstream_conf uc = {
			.targets = cfg->upstreams,
			.n = cfg->nb_upstreams,
			.max_conns = cfg->upstream_conns,
			.connect_timeout_ms = cfg->upstream_connect_ms,
			.answer_timeout_ms = cfg->upstream_timeout_ms,
			.idle_timeout_ms = cfg->upstream_idle_ms,
		};

		s->upstream = upstream_client_create(s->ns, &uc,
				s->upstream_stats);
		/* A fetch handle per connection: a handler's fetch holds one. */
		s->fetches = fetch_pool_create(uc.max_conns);
		if (s->upstream == NULL || s->fetches == NULL)
			return -1;
	}
	return 0;
}

int
shard_exec_start(struct shard *s, unsigned int worker)
{
	struct ewyk_reserved *reserved = s->exec.ew->reserved;

	if (reserved == NULL || !ewyk_reserved_try_execute_on(reserved, worker,
			&s->exec.start))
		return -1;
	return 0;
}

void
exec_watchdog(struct ewykd *e, uint64_t now_ms)
{
	uint32_t stuck_ms = e->cfg.stuck_ms;
	uint16_t i;

	if (stuck_ms == 0 || e->reserved == NULL)
		return;
	for (i = 0; i < e->nb_shards; i++) {
		struct shard_exec *x = &e->shards[i].exec;
		uint64_t tok = ewyk_strategy_inline_token(x->strategy);

		if (tok == 0 || tok != x->watch_token) {
			x->watch_token = tok;
			x->watch_since_ms = now_ms;
			continue;
		}
		if (now_ms - x->watch_since_ms < stuck_ms ||
				__atomic_load_n(&x->steal_pending, __ATOMIC_ACQUIRE))
			continue;
		/* One inline task for too long: an idle lcore takes the shard
		 * with a CAS, the old owner leaves when its task ends. */
		x->steal_token = tok;
		__atomic_store_n(&x->steal_pending, true, __ATOMIC_RELEASE);
		if (!ewyk_reserved_try_execute(e->reserved, &x->steal))
			__atomic_store_n(&x->steal_pending, false, __ATOMIC_RELEASE);
		x->watch_since_ms = now_ms;
	}
}

void
exec_stop(struct ewykd *e)
{
	uint16_t i;

	/* Producers see force_quit and return NULL; helpers on their way
	 * arrive, find nothing to do and go idle. A shard whose set-up
	 * failed has no strategy, and one never started is quiescent. */
	for (i = 0; i < e->shards_ready; i++)
		while (!ewyk_strategy_quiescent(e->shards[i].exec.strategy))
			usleep(1000);
	if (e->bpool != NULL)
		ewyk_bpool_stop(e->bpool);	/* queued tasks run and post */
	if (e->reserved != NULL)
		ewyk_reserved_stop(e->reserved);
	for (i = 0; i < e->shards_ready; i++)
		shard_drain_completions(&e->shards[i]);
}
