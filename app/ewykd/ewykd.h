/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ewykd context: everything that is process-wide, built once by main()
 * at start-up and handed to what needs it (the services, the shards through
 * their dispatch state, the executors, telemetry). Nothing in it changes
 * after the shards start but the counters, the shards themselves and the
 * strategy modes.
 */
#ifndef EWYKD_EWYKD_H
#define EWYKD_EWYKD_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#include "ewyk_exec.h"
#include "ewyk_serve.h"
#include "http_route.h"
#include "http_site.h"
#include "http_static.h"
#include "net_stack.h"
#include "options.h"
#include "port_eal.h"
#include "www.h"

struct arp_cache;
struct ewyk_bpool;
struct ewyk_reserved;
struct rte_mempool;
struct shard;
struct store;
struct tls_config;

/* A port served: an ethdev with an address of its own. */
struct ewykd_port {
	uint16_t id;			/* ethdev port id */
	char name[RTE_ETH_NAME_MAX_LEN];
	struct net_if ifc;		/* shared read-only by the shards */
	struct arp_cache *arp;		/* its neighbours, for all shards */
	struct net_nd *nd;		/* IPv6's, for all shards; NULL without */
	const char *mc;			/* how it takes IPv6's groups (port.h) */
	struct net_rss rss;		/* active opens out of it pick ports by it */
	bool started;
};

struct site_tree;

struct ewykd {
	struct ewykd_config cfg;

	/* Lcores: shard i starts on workers[i]; the workers beyond the
	 * shards (cfg.reserved) only take hand-offs. */
	unsigned int workers[RTE_MAX_LCORE];
	unsigned int nb_workers;
	uint16_t nb_shards;

	/* Services, opened before any thread starts (services.c). */
	struct www *www;		/* static files: the tree served (NULL:
					 * no --www); swapped by a reload */
	struct www *www_retiring;	/* replaced, answers still lent */
	struct http_static statics;	/* their route's context */
	struct store *state;		/* /v1/state: journaled */
	struct store *kv;		/* /kv: memory */
	struct serve_log *access_log;	/* --access-log; NULL: none */
	struct ewyk_router router;	/* read-only once shards run; with
					 * sites, every site's */
	/* Sites and the configuration's routes (sites.c): sites.n == 0
	 * without [site] sections. Each distinct root is one tree. */
	struct http_sites sites;
	struct site_tree *trees;
	uint16_t ntrees;
	struct serve_route *conf_routes;	/* one per [route], per site */
	uint32_t nconf_routes;
	uint32_t route_ids;	/* per-route counters' slots, sites' included */
	const char **conf_headers;	/* their add-header values */
	struct tls_config *tls;		/* NULL: no TLS port */
	struct quic_tokens *quic_tokens;	/* with --http3: rotated on
						 * reload */

	/* The ports (one per --ip or --ip6) and the mbufs their queues share. */
	struct rte_mempool *pool;
	struct ewykd_port ports[EWYKD_PORTS_MAX];
	uint16_t nb_ports;
	struct shard *shards;		/* nb_shards of them */
	uint16_t shards_ready;		/* with dispatch and HTTP server */

	/* Executors (executors.c): the reserved lcores and the blocking pool. */
	struct ewyk_reserved *reserved;
	struct ewyk_bpool *bpool;
	/* Room on the pool's CPUs (--tls-offload auto), sampled by the
	 * main lcore. */
	struct ewyk_cpu_watch cpu_room;
	uint64_t cpu_room_next_ms;

	/* A reload (reload.c): the swap whose old tree still has answers
	 * out, and what each shard had polled then; counts for telemetry. */
	struct {
		bool pending;
		uint64_t polls_at_swap[RTE_MAX_LCORE];
		uint64_t done;
		uint64_t failed;
		/* the tree served, for telemetry */
		uint64_t files, skipped, bytes;
	} reload;

	/* The link changes the log has told of (main.c). */
	uint64_t links_seen_down, links_seen_up;

	/* Read by telemetry. */
	struct serve_lcore_time lcore_time[RTE_MAX_LCORE];
	uint64_t start_tsc;

	/* What start-up has done, for the way back. */
	bool eal_ready;
};

/*
 * Start-up errors. Each ends ewykd with one line on stderr and the exit
 * status of its kind: 2 for the configuration, 1 for resources.
 */
enum ewykd_err {
	EWYKD_OK = 0,
	EWYKD_ERR_EAL,		/* the EAL refused its options */
	EWYKD_ERR_EAL_BUSY,	/* another process uses the file prefix */
	EWYKD_ERR_LCORES,	/* too few lcores for --shards and --reserved */
	EWYKD_ERR_CONFIG,	/* settings that cannot work together */
	EWYKD_ERR_PORT,		/* no such port, more --ip (--ip6) than ports,
				 * too few queues */
	EWYKD_ERR_WWW,		/* --www missing, not a directory, unreadable */
	EWYKD_ERR_STATE_DIR,	/* --state-dir unusable, journal unreadable */
	EWYKD_ERR_PLUGIN,	/* --plugin missing, without init, refused */
	EWYKD_ERR_TLS,		/* a certificate or key missing, unreadable,
				 * readable by others, mismatched, expired;
				 * a priority string refused */
	EWYKD_ERR_NOMEM,	/* out of memory (hugepages, -m) */
	EWYKD_ERR_DEVICE,	/* the port would not configure or start */
	EWYKD_ERR_THREADS,	/* an lcore or a pool thread would not start */
};

#define EWYKD_EXIT_CONFIG 2
#define EWYKD_EXIT_RESOURCE 1

static inline int
ewykd_err_status(enum ewykd_err err)
{
	return err == EWYKD_ERR_NOMEM || err == EWYKD_ERR_DEVICE ||
		err == EWYKD_ERR_THREADS || err == EWYKD_ERR_EAL_BUSY ?
		EWYKD_EXIT_RESOURCE : EWYKD_EXIT_CONFIG;
}

/* What the EAL's start said, as ewykd's start-up error. */
static inline enum ewykd_err
ewykd_err_of_eal(enum port_eal_status status)
{
	static const enum ewykd_err kinds[] = {
		[PORT_EAL_OK] = EWYKD_OK,
		[PORT_EAL_REFUSED] = EWYKD_ERR_EAL,
		[PORT_EAL_BUSY] = EWYKD_ERR_EAL_BUSY,
		[PORT_EAL_NOMEM] = EWYKD_ERR_NOMEM,
		[PORT_EAL_NO_CHECK] = EWYKD_ERR_THREADS,
	};

	return kinds[status];
}

/* Large enough for a path and what is said about it. */
#define EWYKD_ERR_LEN (PATH_MAX + 512)

#endif /* EWYKD_EWYKD_H */
