/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A shard: one RX/TX queue pair with its network stack, its connections and
 * their HTTP state. The lcore that owns it polls it: receive a burst, run it
 * through the stack up to the HTTP answers, run timers, flush the TX batch.
 */
#ifndef EWYKD_SHARD_H
#define EWYKD_SHARD_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>

#include "http1_server.h"
#include "net_stack.h"

struct ewykd_config;

struct shard_stats {
	uint64_t polls;
	uint64_t busy_polls;	/* polls that received something */
	uint64_t idle_sleeps;
} __rte_cache_aligned;

struct shard {
	uint16_t id;
	uint16_t port;
	uint16_t queue;
	unsigned int lcore;
	const struct ewykd_config *cfg;
	struct net_stack ns;
	struct http1_server http;
	struct net_stats net_stats;
	struct http_stats http_stats;
	struct shard_stats stats;
} __rte_cache_aligned;

int shard_init(struct shard *s, uint16_t id, const struct ewykd_config *cfg,
		const struct net_if *ifc, struct arp_cache *arp,
		struct rte_mempool *pool, const struct www *www);
/* lcore entry point: polls until stop is set, then tears the shard down. */
int shard_main(void *arg);

extern volatile bool force_quit;

#endif /* EWYKD_SHARD_H */
