/* SPDX-License-Identifier: BSD-3-Clause */
/* /ewyk/... telemetry commands. Counters are summed over shards on read. */
#ifndef EWYKD_TELEMETRY_H
#define EWYKD_TELEMETRY_H

#include <stdint.h>

struct shard;
struct ewykd_config;
struct rte_mempool;
struct www;
struct net_if;

struct telemetry_view {
	const struct ewykd_config *cfg;
	struct shard *shards;
	uint16_t nb_shards;
	struct rte_mempool *pool;
	const struct www *www;
	const struct net_if *ifc;
	const char *port_name;
	uint64_t start_tsc;
};

int telemetry_register(const struct telemetry_view *view);

#endif /* EWYKD_TELEMETRY_H */
