/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Requests become tasks of the strategy, handlers run, answers go back.
 *
 * The HTTP server offers each routed request to dispatch_hook() on the
 * owner while it parses: a task from the shard's free list gets a copy
 * of the request (or, for lib/http's inline routes, borrows the parsed
 * head and runs at once) and waits in the ready queue for the strategy.
 * Wherever the strategy consumes it, its handler sees only the request.
 * The answer is written by the owner only: at once when the handler ran
 * there, else through the completion ring.
 */
#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_ring.h>

#include "access_log.h"
#include "ewyk_fiber.h"
#include "body.h"
#include "dispatch.h"
#include "fetch.h"
#include "ewyk_quic.h"
#include "h3.h"
#include "tls_offload.h"
#include "wait.h"

/* What running a handler asks of its task's end. */
#define HANDLER_TO_POOL 3	/* run it again on the blocking pool */
#define TASK_ON_POOL 1		/* the blocking pool has it now */

/* The route's latency, from the request produced to now; returns it in
 * TSC cycles. */
static uint64_t
record(struct serve *sv, struct serve_task *t)
{
	struct serve_route_stats *rs = &sv->st.routes[t->route->id];
	uint64_t cycles = rte_get_tsc_cycles() - t->t0;

	lat_record(&rs->lat, lat_cycles_ns(cycles, sv->ns_mult));
	if (t->req.ans.status >= 500)
		rs->errors++;
	return cycles;
}

/* A task this lcore ran, and for how long: a shard's owner, a reserved
 * lcore; not a blocking-pool thread, which is no lcore. */
static inline void
lcore_count(struct serve *sv, uint64_t cycles)
{
	struct serve_lcore_time *lt = sv->conf.lcore_time;
	unsigned int lcore = rte_lcore_id();

	if (lt != NULL && lcore < RTE_MAX_LCORE) {
		lt[lcore].consuming += cycles;
		lt[lcore].tasks++;
	}
}

/* What the access log says of the answer's body, as it is handed over:
 * an answer begun early says it at its end. */
static void
log_answer(struct serve_task *t)
{
	const struct http_answer *a = &t->req.ans;

	if (t->log == NULL)
		return;
	t->log->bytes_known = a->kind == HTTP_BODY_BYTES ||
		(a->kind == HTTP_BODY_STREAM && a->src.length >= 0);
	t->log->bytes = a->kind == HTTP_BODY_BYTES ? a->len :
		a->kind == HTTP_BODY_STREAM && a->src.length >= 0 ?
		(uint64_t)a->src.length : 0;
	if (t->req.method == HTTP_HEAD || a->status == 304 || a->status == 204)
		t->log->bytes = 0;
}

/* The exchange is over for the client: its log line goes out. A task
 * whose client left before its answer is 499, as nginx says it. */
static void
log_done(struct serve *sv, struct serve_task *t, int status)
{
	if (t->log == NULL)
		return;
	if (t->early.begun) {
		t->log->bytes = (uint64_t)t->early.written;
		t->log->bytes_known = true;
	}
	access_rec_done(sv->log, t->log, status);
	t->log = NULL;
}

/* A task whose handler could not answer gets the server's answer in its
 * place. On the owner, so that what the handler borrowed goes back on the
 * connection's lcore, as the API promises. */
static void
answer_fallback(struct serve_task *t)
{
	if (t->fallback == 503)
		http_answer_text(&t->req.ans, 503, "503 blocking pool full\n");
	else if (t->fallback != 0)
		http_answer_text(&t->req.ans, 500, "500 the handler gave no "
				"answer\n");
}

/* On the owner: the answer goes to its connection, which keeps it until
 * written (then dispatch_released() frees the task), or is gone. */
void
dispatch_complete(struct serve *sv, struct serve_task *t)
{
	if (t->wait.state == WAIT_PARKED) {
		wait_arm(t);	/* parked where the owner could not arm it */
		return;
	}
	fetch_task_end(t);
	serve_body_done(sv, t->origin);
	if (t->early.begun) {
		/* Its answer is out: the body ends now. */
		record(sv, t);
		if (early_answer_end(t)) {
			log_done(sv, t, t->req.ans.status);
			task_free(sv, t);
		}
		return;
	}
	answer_fallback(t);
	record(sv, t);
	log_answer(t);
	if (t->abandoned && !quic_origin(t->origin))
		http_server_abandon(sv->http, t->origin);
	if (t->abandoned || !serve_answer(sv, t->origin, &t->req.ans)) {
		sv->st.stale++;
		log_done(sv, t, 499);
		http_answer_release(&t->req.ans);
		task_free(sv, t);
	}
}

void
dispatch_released(void *ctx, struct http_answer *a)
{
	struct serve_task *t = container_of(a, struct serve_task, req.ans);

	/* An answer begun early may be let go while its handler runs. */
	if (t->early.begun && !early_answer_released(t))
		return;
	log_done(ctx, t, t->req.ans.status);
	task_free(ctx, t);
}

unsigned int
dispatch_drain_completions(struct serve *sv)
{
	struct ewyk_task *done[32];
	unsigned int n, i, total = 0;

	do {
		n = rte_ring_sc_dequeue_burst(sv->done, (void **)done, 32, NULL);
		for (i = 0; i < n; i++)
			if (done[i]->kind == SERVE_TASK_REQUEST)
				dispatch_complete(sv, (struct serve_task *)done[i]);
			else
				tls_offload_complete(sv, done[i]);
		sv->st.completions += n;
		total += n;
	} while (n == 32);
	return total;
}

/* Runs a handler. It sees only the request: no connection, no shard. */
int
dispatch_handle(struct serve_task *t)
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
		return HANDLER_TO_POOL;
	}
	if (res != EWYK_ANSWERED || t->req.ans.kind == HTTP_BODY_UNSET)
		t->fallback = 500;
	return 0;
}

/* The handler must block, and may not where it ran: again, on the pool
 * (after its fiber, if any, has ended: the pool may finish it at once). */
static int
to_pool(struct serve_task *t)
{
	struct ewyk_task *bt = &t->base;
	uint8_t mode = bt->mode;

	const struct ewyk_executor *ex = &t->sv->conf.exec;

	__atomic_fetch_add(&t->sv->st.deferred, 1, __ATOMIC_RELAXED);
	bt->mode = EWYK_PEC;
	if (ex->execute != NULL && ex->execute(ex->execute_ctx, bt) == 0)
		return TASK_ON_POOL;
	bt->mode = mode;
	t->fallback = 503;
	return 0;
}

int
dispatch_run(struct ewyk_task *bt)
{
	struct serve_task *t = (struct serve_task *)bt;
	uint64_t t0 = rte_get_tsc_cycles();
	int rc = bt->mode == EWYK_FIBER ? wait_fiber_run(t) :
		dispatch_handle(t);

	lcore_count(t->sv, rte_get_tsc_cycles() - t0);
	if (rc == HANDLER_TO_POOL)
		rc = to_pool(t);
	if (rc == 0 && bt->mode == EWYK_PEC)
		task_post(t);	/* a pool thread never writes to the shard */
	return rc;
}

void
dispatch_consumed(void *ctx, struct ewyk_task *task, int rc, bool owner)
{
	struct serve_task *t = (struct serve_task *)task;

	if (task->kind == SERVE_TASK_TLS) {
		tls_offload_consumed(ctx, task, owner);
		return;
	}
	if (rc == TASK_ON_POOL)
		return;		/* the pool has it now: do not touch it */
	if (owner && rc == TASK_PARKED)
		wait_arm(t);
	else if (owner)
		dispatch_complete(t->sv, t);
	else
		task_post(t);	/* the shard moved on meanwhile */
}

void
dispatch_rejected(void *ctx, struct ewyk_task *task, int err)
{
	struct serve_task *t = (struct serve_task *)task;

	RTE_SET_USED(err);
	if (task->kind == SERVE_TASK_TLS) {
		tls_offload_rejected(ctx, task);
		return;
	}
	/* The blocking pool is full: the RX lcore never waits for it. */
	t->fallback = 503;
	dispatch_complete(t->sv, t);
}

/* An HTTP_ROUTE_INLINE handler, run by the producer right away. */
static void
run_inline(struct serve *sv, struct serve_task *t)
{
	const struct http_route *rt = t->route;

	t->base.mode = EWYK_PC;
	t->req.may_block = false;
	t->fallback = rt->handler(&t->req, rt->ctx) != EWYK_ANSWERED ||
		t->req.ans.kind == HTTP_BODY_UNSET ? 500 : 0;
	answer_fallback(t);
	/* Consumed on the producer, inside its poll: the lcore's task
	 * count and its time consuming include it (the embedder takes the
	 * time out of its production), as the mode mix counts it PC. */
	lcore_count(sv, record(sv, t));
	log_answer(t);
	ewyk_strategy_consumed_in_produce(sv->strategy);
}

/* An exchange the server answers at once (no task free, too large, a
 * refusal of lib/http's own): its log line, done. */
static void
log_now(struct serve *sv, const struct http_head *r, int version,
		struct http_origin o, int status)
{
	struct net_addr peer = { .family = 0 };
	struct access_rec *rec;
	uint16_t port = 0;

	serve_peer(sv, o, &peer, &port);
	rec = access_rec_take(sv->log, r, version, &peer, port);
	if (rec != NULL)
		access_rec_done(sv->log, rec, status);
}

void
dispatch_refused(void *ctx, const struct http_head *r, int status,
		int version, struct http_origin o)
{
	struct serve *sv = ctx;

	if (sv->log != NULL)
		log_now(sv, r, version, o, status);
}

static const uint8_t invocation_of[] = {
	[EWYK_HANDLER_NON_BLOCKING] = EWYK_NON_BLOCKING,
	[EWYK_HANDLER_BLOCKING] = EWYK_BLOCKING,
	[EWYK_HANDLER_EITHER] = EWYK_EITHER,
	[EWYK_HANDLER_FIBER] = EWYK_FIBER_CAPABLE,
};

/* Whether route rt's limits let client peer's request through now: 0
 * (its hold, if any, in t), or 429. */
static int
limit_check(struct serve *sv, struct serve_task *t, const struct http_route *rt,
		const struct net_addr *peer)
{
	if (rt->limit == NULL || peer->family == 0)
		return 0;
	return limit_admit(sv->limits, rt->limit, rt, peer,
			rte_get_tsc_cycles(), rte_get_tsc_hz(), &t->limit) ==
		LIMIT_PASS ? 0 : 429;
}

/* http_dispatch_fn: on the owner, while it parses (either protocol). */
int
dispatch_hook(void *ctx, const struct http_route *rt,
		const struct http_head *r, int version, struct http_origin o,
		struct http_answer **ans)
{
	struct serve *sv = ctx;
	struct net_addr peer = { .family = 0 };
	struct serve_task *t;
	uint16_t port = 0;
	int refused;

	t = task_alloc(sv);
	if (t == NULL) {
		sv->st.overloaded++;
		dispatch_refused(sv, r, 503, version, o);
		return 503;
	}
	if (sv->log != NULL || rt->limit != NULL)
		serve_peer(sv, o, &peer, &port);
	refused = http_req_fill(&t->req, r, rt, version) != 0 ? 431 :
		limit_check(sv, t, rt, &peer);
	if (refused != 0) {
		task_free(sv, t);
		dispatch_refused(sv, r, refused, version, o);
		return refused;
	}
	t->log = sv->log != NULL ? access_rec_take(sv->log, r, version, &peer,
			port) : NULL;
	t->route = rt;
	t->origin = o;
	t->t0 = rte_get_tsc_cycles();
	t->abandoned = false;
	t->compress = false;
	t->wait.state = WAIT_NONE;
	t->wait.on_fiber = false;
	t->wait.fiber = NULL;
	body_reset(t, r);
	t->fetches = NULL;
	t->fetch_failure = -1;
	if (rt->flags & HTTP_ROUTE_INLINE) {
		run_inline(sv, t);
		*ans = &t->req.ans;
		return HTTP_DISPATCH_ANSWERED;
	}
	t->base.type = invocation_of[rt->type];
	task_ready(sv, t);
	return HTTP_DISPATCH_TAKEN;
}

enum ewyk_consume
serve_consume_mode(const struct ewyk_request *req)
{
	return (enum ewyk_consume)task_of(req)->base.mode;
}
