/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Eat What You Kill in ewykd: each shard is a producer of lib/exec's
 * strategy. Polling the shard (RX, the stack, HTTP parsing, timers,
 * completions) is production; a request for a dispatched route becomes a
 * self-contained task that the strategy consumes inline (PC, PIC), hands
 * the shard over and consumes with a hot cache (EPC), or queues to the
 * blocking pool (PEC). Answers are written by the owner: inline, or
 * through the shard's completion ring; a handler never touches connection
 * or shard state.
 */
#ifndef EWYKD_DISPATCH_H
#define EWYKD_DISPATCH_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>

#include "ewyk_exec.h"
#include "http_server.h"
#include "http_route.h"
#include "lat_hist.h"
#include "store.h"

struct shard;
struct ewykd_config;
struct rte_ring;
struct www;

/* A dispatched request: all its handler needs, nothing of the shard's. */
struct route_task {
	struct ewyk_task base;	/* first: the strategy's view */
	struct route_task *free_next;
	struct shard *shard;
	const struct http_route *route;
	struct http_origin origin;
	uint64_t t0;		/* TSC when it was produced */
	uint16_t fallback;	/* 500 or 503 replaces the handler's answer */
	struct ewyk_request req;	/* and, after its handler, the answer */
};

/* Per route, per shard: requests and their latency from production to
 * the answer handed back to the owner. */
struct route_stats {
	struct lat_hist lat;
	uint64_t errors;	/* 5xx answers */
} __rte_cache_aligned;

#define SHARD_TASKS 512	/* dispatched requests in flight per shard */

struct shard_exec {
	struct ewyk_strategy *strategy;
	struct rte_ring *done;		/* completions: multi-producer */
	struct route_task *tasks;
	struct route_task *free_tasks;	/* owner only */
	struct route_task *ready[SHARD_TASKS];	/* produced, not yet consumed */
	uint32_t ready_head;
	uint32_t ready_n;
	struct ewyk_task start;		/* starts production on a reserved lcore */
	struct ewyk_task steal;		/* relieves a stuck owner */
	uint64_t steal_token;
	bool steal_pending;
	struct route_stats routes[HTTP_ROUTES_MAX];
	uint64_t overloaded;		/* no task free: 503 */
	uint64_t deferred;		/* handlers that asked for the pool */
	uint64_t completions;		/* answers through the ring */
	uint64_t stale;			/* answers for connections gone */
};

/* Process-wide: the reserved lcores and the blocking pool. */
int exec_init(const struct ewykd_config *cfg, const struct www *www,
		unsigned int *worker_lcores, unsigned int nb_workers);
int shard_exec_init(struct shard *s, const struct ewykd_config *cfg);
/* Starts shard i's production on reserved worker i. */
int shard_exec_start(struct shard *s, unsigned int worker);
/* Main lcore: relieve owners stuck in one inline task (the shard is stolen
 * with a CAS; see ewyk_strategy_steal in ewyk_exec.h). */
void exec_watchdog(struct shard *shards, uint16_t n, uint64_t now_ms);
/* After force_quit: wait for producers to stop, then stop the pools. */
void exec_stop(struct shard *shards, uint16_t n);
/* Answers posted to the completion ring, written by the owner. */
unsigned int shard_drain_completions(struct shard *s);

struct ewyk_reserved *exec_reserved(void);
struct store *exec_store(void);		/* /v1/state: journaled */
struct store *exec_kv(void);		/* /kv: memory */
const struct ewyk_router *exec_router(void);
struct ewyk_bpool *exec_bpool(void);

#endif /* EWYKD_DISPATCH_H */
