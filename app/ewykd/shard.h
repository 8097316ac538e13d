/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A shard: one RX/TX queue pair on each port (queue N of every port is
 * shard N's, as in DPDK's l3fwd) with its network stack, its connections
 * and their HTTP state. Whichever lcore owns it produces from it: receive
 * a burst from each port, run it through the stack up to the HTTP
 * requests, run timers, write answers that came back, flush the TX
 * batches.
 */
#ifndef EWYKD_SHARD_H
#define EWYKD_SHARD_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_lcore.h>

#include "dispatch.h"
#include "http_server.h"
#include "http_upstream.h"
#include "net_stack.h"
#include "options.h"

struct ewykd_port;
struct fetch_pool;

struct shard_stats {
	uint64_t polls;
	uint64_t busy_polls;	/* polls that received something */
	uint64_t idle_sleeps;
} __rte_cache_aligned;

/* Every port ewykd may serve is one of each shard's stack. */
_Static_assert(EWYKD_PORTS_MAX <= NET_MAX_PORTS, "a stack holds every port");

/* The shard's queue pair on one port: its TX callback's context. */
struct shard_queue {
	uint16_t port;		/* ethdev port id */
	uint16_t queue;
};

struct shard {
	uint16_t id;
	uint16_t queue;		/* the same on every port */
	uint16_t nb_ports;
	struct shard_queue q[EWYKD_PORTS_MAX];	/* by the stack's port index */
	unsigned int lcore;	/* the current owner */
	const struct ewykd_config *cfg;
	struct net_stack *ns;
	struct http_server *http;
	struct net_stats net_stats;
	struct http_stats http_stats;
	struct shard_stats stats;
	struct shard_exec exec;
	struct upstream_client *upstream;	/* NULL: no --upstream */
	struct fetch_pool *fetches;	/* ewyk_fetch()'s handles, with it */
	struct ilink **body_watch;	/* per connection slot: requests
					 * whose body is read as it arrives
					 * (body_io.h) */
	uint32_t body_watch_n;
	struct upstream_stats upstream_stats[UPSTREAM_MAX];
	bool draining;		/* owner: drain started */
	bool drained;		/* owner: no connection left but TIME-WAIT */
	/* The port's link as this shard last saw it (atomic), and when it
	 * looks again; shard 0 counts the changes. */
	uint8_t link_up;
	uint64_t link_check_ms;
	uint64_t link_downs;
	uint64_t link_ups;
} __rte_cache_aligned;

/* The shard's network stack, on every port; its dispatch and HTTP server
 * come with shard_exec_init(), once the executors run. */
int shard_init(struct shard *s, uint16_t id, const struct ewykd_config *cfg,
		const struct ewykd_port *ports, uint16_t nb_ports,
		struct rte_mempool *pool);
/* The strategy's produce(): polls until a task is ready or ewykd stops. */
struct ewyk_task *shard_produce(void *ctx);
/* Next produced task, or NULL. */
struct ewyk_task *shard_next_task(struct shard *s);
/* After production stopped for good: reset connections, free tables. */
void shard_fini(struct shard *s);

extern volatile bool force_quit;	/* SIGTERM: drain, then stop */
extern volatile bool stop_now;		/* drained or out of time: stop */

#endif /* EWYKD_SHARD_H */
