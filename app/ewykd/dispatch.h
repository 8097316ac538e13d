/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Eat What You Kill in ewykd: each shard is a producer of lib/exec's
 * strategy. Polling the shard (RX, the stack, HTTP parsing, timers,
 * completions) is production; a request for a dispatched route becomes a
 * self-contained task that the strategy consumes inline (PC, PIC), hands
 * the shard over and consumes with a hot cache (EPC), or queues to the
 * blocking pool (PEC). Answers are written by the owner only: inline, or,
 * from any other thread, through the shard's completion ring, so that no
 * handler ever touches connection or shard state.
 */
#ifndef EWYKD_DISPATCH_H
#define EWYKD_DISPATCH_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>

#include "body_io.h"
#include "ewyk_exec.h"
#include "ilist.h"
#include "http_server.h"
#include "http_route.h"
#include "lat_hist.h"

struct ewykd;
struct shard;
struct rte_ring;
struct ewyk_fiber;
struct ewyk_fiber_pool;
struct ewyk_wait;

/* Where a request's fiber is (FIBER mode only). */
enum fiber_state {
	FIBER_NONE,	/* not on a fiber */
	FIBER_RUNNING,
	FIBER_PARKED,	/* parked, its wait not yet armed by the owner */
	FIBER_WAITING,	/* armed: a wake, its timer or a cancel ends it */
	FIBER_READY,	/* woken: queued to be resumed */
};

/* A dispatched request: all its handler needs, nothing of the shard's. */
struct route_task {
	struct ewyk_task base;	/* first: the strategy's view */
	struct route_task *free_next;
	struct shard *shard;
	const struct http_route *route;
	struct http_origin origin;
	uint64_t t0;		/* TSC when it was produced */
	uint16_t fallback;	/* 500 or 503 replaces the handler's answer */
	uint8_t fstate;		/* enum fiber_state */
	bool abandoned;		/* its client left while it waited */
	int frc;		/* the handler's outcome, on a fiber */
	struct ewyk_fiber *fiber;	/* parked or running on it */
	struct ewyk_wait *wait;	/* what the parked fiber waits for */
	uint64_t deadline;	/* TSC, or UINT64_MAX: none */
	uint32_t heap_pos;	/* in the shard's timer heap, from 1; 0: not */
	struct ilink wlink;	/* in the shard's waiting list */
	struct upstream_fetch *fetch;	/* the proxy's, while it runs */
	int64_t body_len;	/* its request body's: -1 chunked */
	bool body_over;		/* ewyk_body_read() saw its end */
	struct ilink body_link;	/* in the shard's body watch */
	body_watch_fn body_fn;
	struct early_answer early;	/* ewyk_respond_begin()'s */
	struct ilink *fetches;	/* its handler's open ones (fetch.c) */
	struct ewyk_request req;	/* and, after its handler, the answer */
};

/* Per route, per shard: requests and their latency from production to
 * the answer handed back to the owner. */
struct route_stats {
	struct lat_hist lat;
	uint64_t errors;	/* 5xx answers */
} __rte_cache_aligned;

#define SHARD_TASKS 512	/* dispatched requests in flight per shard,
			 * besides those on fibers (--fibers) */

/* A shard's fibers: the pool, the waits of its parked fibers, counters. */
struct shard_fibers {
	struct ewyk_fiber_pool *pool;	/* NULL: --fibers 0 */
	struct route_task **heap;	/* timers: a min-heap on deadline */
	uint32_t nheap;
	struct ilink *waiting;		/* every armed wait's task */
	uint32_t nwaiting;
	uint64_t next_scan_ms;		/* for clients gone */
	struct ilink *durable;		/* store writes waited for */
	uint64_t parks;
	uint64_t wakes;			/* by ewyk_wait_wake() */
	uint64_t timeouts;
	uint64_t cancelled;		/* the client left */
	uint64_t no_stack;		/* a stack could not be made: 503 */
};

struct shard_exec {
	struct ewykd *ew;		/* the router, the pools, lcore times */
	struct ewyk_strategy *strategy;
	struct rte_ring *done;		/* completions: multi-producer */
	struct route_task *tasks;
	struct route_task *free_tasks;	/* owner only */
	uint32_t ntasks;
	struct route_task **ready;	/* produced or woken, not yet consumed */
	uint32_t ready_head;
	uint32_t ready_n;
	struct ewyk_task start;		/* starts production on a reserved lcore */
	struct ewyk_task steal;		/* relieves a stuck owner */
	uint64_t steal_token;
	bool steal_pending;
	uint64_t watch_token;		/* main lcore: inline token seen */
	uint64_t watch_since_ms;	/* main lcore: seen since */
	struct shard_fibers fib;
	struct route_stats routes[HTTP_ROUTES_MAX];
	uint64_t overloaded;		/* no task free: 503 */
	uint64_t deferred;		/* handlers that asked for the pool */
	uint64_t completions;		/* answers through the ring */
	uint64_t stale;			/* answers for connections gone */
};

/* The reserved lcores (every worker lcore) and the blocking pool: their
 * threads start here. 0, or -1 with errno. */
int exec_create(struct ewykd *e);
/* A shard's strategy, completion ring and tasks, on e's pools. */
int shard_exec_init(struct shard *s, struct ewykd *e);
/* Starts shard i's production on reserved worker i. */
int shard_exec_start(struct shard *s, unsigned int worker);
/* Main lcore: an owner inside one inline task for longer than --stuck-ms
 * loses the shard to an idle reserved lcore. */
void exec_watchdog(struct ewykd *e, uint64_t now_ms);
/* After force_quit: wait for the producers to stop, then stop the pools
 * and write the answers they posted. */
void exec_stop(struct ewykd *e);
/* On the owner: a task's answer goes to its connection (or the task is
 * freed when the connection is gone). */
void dispatch_complete(struct shard *s, struct route_task *t);
/* Answers posted to the completion ring, written by the owner. */
unsigned int shard_drain_completions(struct shard *s);
/* On the owner: queues a task to be consumed (a new request, or a woken
 * fiber to resume). */
void shard_ready(struct shard *s, struct route_task *t);
/* How the request's handler is being consumed: the test routes say it. */
enum ewyk_consume dispatch_consume_mode(const struct ewyk_request *req);

#endif /* EWYKD_DISPATCH_H */
