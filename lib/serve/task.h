/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The task core: the runtime's own view of a shard and of a task. The
 * runtime's modules call one way, from the task core up, each with its
 * own header:
 *
 *   task.c      the task core: the pool, the ready queue, the completion
 *               ring, what a task knows of its client
 *   wait.c      waits: a fiber parks, a pool thread blocks; the owner arms
 *               them, times them on the shard's wheel, ends them
 *   body.c      streamed bodies: the body watch, ewyk_body_read(), the
 *               answer begun early (ewyk_respond_begin/ewyk_body_write)
 *   fetch.c     ewyk_fetch() and ewyk_respond_fetch() on the upstream client
 *   state.c     ewyk_state_*() and the waits for durable writes
 *   dispatch.c  requests become tasks; handlers run; answers go back
 *   serve.c     the public calls (ewyk_serve.h)
 *
 * Each module keeps its part of a task in a member of its own (wait,
 * body, early, fetches) and touches no other's; the core's members are
 * everyone's to read.
 */
#ifndef EWYK_SERVE_TASK_H
#define EWYK_SERVE_TASK_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>

#include "ewyk_serve.h"
#include "http_req.h"
#include "http_route.h"
#include "ilist.h"
#include "limit.h"
#include "net_stack.h"

struct ewyk_fiber;
struct ewyk_fiber_pool;
struct access_rec;
struct access_ring;
struct fetch_pool;
struct rte_ring;
struct serve_task;
struct tls_shard;
struct tls_task;

/* What a task of the runtime's is (struct ewyk_task's kind). */
enum serve_task_kind {
	SERVE_TASK_REQUEST,	/* a request's handler (struct serve_task) */
	SERVE_TASK_TLS,		/* a TLS handshake step (struct tls_task) */
};

/* dispatched requests in flight per shard, besides those on fibers */
#define SERVE_TASKS 512
#define TASK_PARKED 2	/* consuming a task left its handler parked */

/* Where a task's handler is, as far as waits go (wait.c). */
enum wait_state {
	WAIT_NONE,	/* running, or not started */
	WAIT_PARKED,	/* parked, its wait not yet armed by the owner */
	WAIT_ARMED,	/* armed: a wake, its timer or a cancel ends it */
	WAIT_READY,	/* a fiber's, ended: queued to be resumed */
};

/* wait.c's part of a task. */
struct task_wait {
	uint8_t state;		/* enum wait_state */
	bool on_fiber;		/* the handler runs on a fiber */
	bool thread;		/* parked is a thread, not a fiber */
	uint32_t woken;		/* a parked thread's futex word */
	int frc;		/* the fiber's handler outcome */
	struct ewyk_fiber *fiber;	/* parked or running on it */
	struct ewyk_wait *w;	/* what the handler waits for */
	uint32_t timeout_ms;	/* EWYK_WAIT_FOREVER: none */
	struct net_timer timer;	/* its deadline on the shard's wheel */
	struct ilink link;	/* in the shard's armed waits */
};

/*
 * An answer handed to its connection while its handler still runs
 * (body.c). The task then ends when both are done with it: the handler
 * returned (handler_over) and the connection let the answer go
 * (released).
 */
struct early_answer {
	const uint8_t *buf;	/* the write being taken */
	size_t len, off;
	int64_t length;		/* the body's, or -1 */
	int64_t written;
	bool begun;		/* the answer is the connection's */
	bool discard;		/* HEAD, 204, 304: no body goes out */
	bool pending;		/* buf waits to be taken */
	int failed;		/* a write's error: the body is cut */
	bool handler_over;
	bool released;
};

/* body.c's part: the request body read as it arrives. */
typedef void (*body_watch_fn)(struct serve_task *t);
/* A tunnel's body (http_head.tunnel): the client's bytes until it
 * closes. */
#define TASK_BODY_TUNNEL (-2)

struct task_body {
	int64_t len;		/* the request body's: -1 chunked, or
				 * TASK_BODY_TUNNEL */
	bool over;		/* ewyk_body_read() saw its end */
	struct ilink link;	/* in the shard's body watch */
	body_watch_fn fn;
};

/* A dispatched request: all its handler needs, nothing of the shard's. */
struct serve_task {
	struct ewyk_task base;	/* first: the strategy's view */
	struct serve_task *free_next;
	struct serve *sv;
	const struct http_route *route;
	struct http_origin origin;
	uint64_t t0;		/* TSC when it was produced */
	uint16_t fallback;	/* 500 or 503 replaces the handler's answer */
	bool abandoned;		/* its client left while it waited */
	bool compress;		/* its route's compress = on */
	struct task_wait wait;
	struct task_body body;
	struct early_answer early;
	struct ilink *fetches;	/* its handler's open ones (fetch.c) */
	/* The fetch that forwards the client's body as it comes, also once
	 * its answer is the connection's (a tunnel's both flow at once);
	 * NULL otherwise (tasks start zeroed, fetch_let_go() clears it). */
	struct ewyk_fetch *body_fetch;
	int fetch_failure;	/* the last failed fetch's enum
				 * upstream_err, or -1 */
	struct access_rec *log;	/* its access log line, or NULL */
	struct limit_hold limit;	/* its place under limit-conns */
	struct ewyk_request req;	/* and, after its handler, the answer */
};

struct serve {
	struct serve_conf conf;
	struct net_stack *ns;
	uint64_t ns_mult;		/* TSC cycles to ns (lat_ns_mult) */
	struct http_server *http;
	struct upstream_client *upstream;	/* NULL: no upstreams */
	struct ewyk_strategy *strategy;
	int (*handle)(struct serve_task *t);	/* runs a handler (dispatch.c) */
	/* The task core (task.c). */
	struct rte_ring *done;		/* completions: multi-producer */
	struct serve_task *tasks;
	struct serve_task *free_tasks;	/* owner only */
	uint32_t ntasks;
	/* Produced or woken, not consumed: requests, and TLS handshake
	 * steps (tls_offload.c); room for every task of the shard. */
	struct ewyk_task **ready;
	uint32_t ready_cap;
	uint32_t ready_head;
	uint32_t ready_n;
	/* Waits (wait.c). */
	struct ewyk_fiber_pool *fibers;	/* NULL: --fibers 0 */
	struct ilink *waiting;		/* every armed wait's task */
	struct net_timer gone_scan;	/* looks for clients gone */
	uint32_t sleeps_cut;		/* futex: threads' sleeps end (stop) */
	/* The body watch (body.c): per connection slot, the requests whose
	 * body is read as it arrives. */
	struct ilink **body_watch;
	uint32_t body_watch_n;
	struct fetch_pool *fetches;	/* fetch.c; NULL: no upstreams */
	struct tls_shard *tls;		/* NULL: no TLS port */
	struct quic_endpoint *quic;	/* h3.c; NULL: no HTTP/3 */
	char alt_svc[HTTP_ALT_SVC_MAX + 1];	/* what TLS answers offer */
	struct tls_task *tls_tasks;	/* tls_offload.c */
	struct tls_task *free_tls_tasks;
	struct ilink *durable;		/* state.c: durable writes waited for */
	struct access_ring *log;	/* the access log's rings; NULL: none */
	struct limit_table *limits;	/* the routes' limits (limit.c) */
	/* The strategy's own tasks (dispatch.c). */
	struct ewyk_task start;		/* starts production on a reserved lcore */
	struct ewyk_task steal;		/* relieves a stuck owner */
	uint64_t steal_token;
	bool steal_pending;
	uint64_t watch_token;		/* main lcore: inline token seen */
	uint64_t watch_since_ms;	/* main lcore: seen since */
	struct serve_stats st;
};

/* The task core (task.c). */

static inline struct serve_task *
task_of(const struct ewyk_request *req)
{
	return container_of(req, struct serve_task, req);
}

/* The task pool, the ready queue and the ring for n tasks, and room in
 * both for extra tasks of other kinds; run is what the strategy calls to
 * consume one of the n. */
int tasks_init(struct serve *sv, uint32_t n, uint32_t extra,
		int (*run)(struct ewyk_task *));
void tasks_fini(struct serve *sv);
struct serve_task *task_alloc(struct serve *sv);
void task_free(struct serve *sv, struct serve_task *t);
/* On the owner: queued to be consumed (a new request, a woken fiber). */
void task_ready(struct serve *sv, struct serve_task *t);
/* The same for a task of any kind (a TLS handshake step). */
void task_queue(struct serve *sv, struct ewyk_task *bt);
/* Anywhere but the owner: to the completion ring, which the owner
 * drains on its next turn (dispatch.c). */
void task_post(struct serve_task *t);
void task_post_any(struct serve *sv, struct ewyk_task *bt);
/* An answer begun early that the client has whole, or never gets (HEAD,
 * 204, 304): its release is no client gone. */
bool early_answer_whole(const struct early_answer *e);
/* On the owner: the task's client will never see its answer (gone,
 * closing, its stream reset, or the answer begun early let go short). */
bool task_client_gone(const struct serve_task *t);

#endif /* EWYK_SERVE_TASK_H */
