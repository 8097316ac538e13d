/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A shard: one RX/TX queue pair on each port (queue N of every port is
 * shard N's, as in DPDK's l3fwd) with its network stack, and the request
 * runtime (lib/serve: the HTTP server, tasks, fibers, upstreams) over it.
 * Whichever lcore owns it produces from it: receive a burst from each
 * port, run it through the stack up to the HTTP requests, run timers,
 * write answers that came back, flush the TX batches.
 */
#ifndef EWYKD_SHARD_H
#define EWYKD_SHARD_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_lcore.h>

#include "ewyk_quic.h"
#include "ewyk_serve.h"
#include "ewyk_tls.h"
#include "net_stack.h"
#include "options.h"

struct ewykd;
struct ewykd_port;

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
	struct serve *serve;	/* the request runtime: NULL until set up */
	struct serve_lcore_time *lcore_time;	/* the process's, by lcore */
	struct net_stats net_stats;
	struct http_stats http_stats;
	struct tls_stats tls_stats;
	struct quic_stats quic_stats;
	struct shard_stats stats;
	bool draining;		/* owner: drain started */
	bool drained;		/* owner: no connection left but TIME-WAIT */
	/* The port's link as this shard last saw it (atomic), and when it
	 * looks again; shard 0 counts the changes. */
	uint8_t link_up;
	uint64_t link_check_ms;
	uint64_t link_downs;
	uint64_t link_ups;
} __rte_cache_aligned;

/* The shard's network stack, on every port; its request runtime comes
 * with shard_serve_init(), once the executors run. */
int shard_init(struct shard *s, uint16_t id, const struct ewykd_config *cfg,
		const struct ewykd_port *ports, uint16_t nb_ports,
		struct rte_mempool *pool);
/* The request runtime over the shard's stack, on e's executors and
 * routes. */
int shard_serve_init(struct shard *s, struct ewykd *e);
/* After production stopped for good: reset connections, free tables. */
void shard_fini(struct shard *s);

extern volatile bool force_quit;	/* SIGTERM: drain, then stop */
extern volatile bool stop_now;		/* drained or out of time: stop */

#endif /* EWYKD_SHARD_H */
