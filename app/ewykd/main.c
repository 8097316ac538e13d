/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ewykd: the ewyk appliance. Sets up the EAL, one port with a queue pair per
 * shard, one lcore per shard, and serves HTTP until SIGINT or SIGTERM.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "dispatch.h"
#include "options.h"
#include "port.h"
#include "shard.h"
#include "telemetry.h"
#include "www.h"

#define MBUF_CACHE 256
#define MAX_EAL_ARGS 64

volatile bool force_quit;
volatile bool stop_now;

static void
on_signal(int sig)
{
	RTE_SET_USED(sig);
	__atomic_store_n(&force_quit, true, __ATOMIC_RELAXED);
}

static void
die(int status, const char *msg)
{
	fprintf(stderr, "ewykd: %s\n", msg);
	exit(status);
}

/* Without "--", the arguments are ewykd's own if they ask for help, the
 * version or a config file, and the EAL's otherwise. */
static int
find_split(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0)
			return i;
	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--config") == 0 ||
				strncmp(argv[i], "--config=", 9) == 0 ||
				strcmp(argv[i], "--help") == 0 ||
				strcmp(argv[i], "-h") == 0 ||
				strcmp(argv[i], "--version") == 0)
			return 0;
	return argc;
}

/* EAL arguments: the command line's, else the config file's [eal] args. */
static int
eal_argv(int argc, char **argv, int split, char *args, char **out)
{
	int n = 0, i;
	char *tok, *save = NULL;

	out[n++] = argv[0];
	for (i = 1; i < split && n < MAX_EAL_ARGS - 1; i++)
		out[n++] = argv[i];
	if (n == 1)
		for (tok = strtok_r(args, " \t", &save); tok != NULL &&
				n < MAX_EAL_ARGS - 1; tok = strtok_r(NULL, " \t", &save))
			out[n++] = tok;
	out[n] = NULL;
	RTE_SET_USED(argc);
	return n;
}

int
main(int argc, char **argv)
{
	static struct ewykd_config cfg;
	static struct www www;
	char *eal_args[MAX_EAL_ARGS];
	char err[512], ipbuf[32], port_name[RTE_ETH_NAME_MAX_LEN] = "";
	struct telemetry_view view;
	struct rte_mempool *pool;
	struct arp_cache *arp;
	struct shard *shards;
	struct net_if ifc;
	uint16_t nb_shards, i;
	unsigned int workers, lcore;
	int split, app_argc, eal_argc, rc;
	char **app_argv;
	static unsigned int worker_lcores[RTE_MAX_LCORE];

	split = find_split(argc, argv);
	app_argc = split < argc ? argc - split : 1;
	app_argv = split < argc ? argv + split : argv;
	if (split < argc)
		app_argv[0] = argv[0];
	options_defaults(&cfg);
	rc = options_parse(&cfg, app_argc, app_argv);
	if (rc == OPT_EXIT_OK)
		return 0;
	if (rc != 0)
		return 2;

	eal_argc = eal_argv(argc, argv, split, cfg.eal_args, eal_args);
	if (rte_eal_init(eal_argc, eal_args) < 0) {
		snprintf(err, sizeof(err), "EAL initialisation failed: %s "
				"(check the EAL options before --)",
				rte_strerror(rte_errno));
		die(2, err);
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	workers = rte_lcore_count() - 1;
	if (cfg.reserved_set && cfg.reserved >= workers && workers > 0) {
		snprintf(err, sizeof(err), "--reserved %u leaves no worker lcore for "
				"a shard (the EAL has %u workers; use -l)", cfg.reserved,
				workers);
		die(2, err);
	}
	nb_shards = cfg.shards ? cfg.shards :
		(uint16_t)RTE_MAX(workers - cfg.reserved, 1u);
	if (nb_shards > RTE_MAX(workers, 1u) ||
			(workers > 0 && nb_shards + cfg.reserved > workers)) {
		snprintf(err, sizeof(err), "--shards %u with --reserved %u needs %u "
				"worker lcores, the EAL has %u (use -l)", nb_shards,
				cfg.reserved, nb_shards + cfg.reserved, workers);
		die(2, err);
	}
	cfg.reserved = (uint16_t)(workers > nb_shards ? workers - nb_shards : 0);
	{
		unsigned int k = 0;

		RTE_LCORE_FOREACH_WORKER(lcore)
			worker_lcores[k++] = lcore;
	}
	rc = exec_init(&cfg, &www, worker_lcores, workers);
	if (rc == -2) {
		rte_eal_cleanup();
		return 2;	/* the store's directory or journal: said already */
	}
	if (rc != 0)
		die(1, "cannot start the reserved lcores or the blocking pool");
	cfg.shards = nb_shards;
	if (cfg.mbufs < (uint32_t)nb_shards * (cfg.rx_desc + cfg.tx_desc) + 1024) {
		snprintf(err, sizeof(err), "--mbufs %u is too few for %u shards of "
				"%u RX + %u TX descriptors", cfg.mbufs, nb_shards,
				cfg.rx_desc, cfg.tx_desc);
		die(2, err);
	}
	if (cfg.www[0] != '\0' && www_load(&www, cfg.www,
			cfg.www_max_mb << 20, err, sizeof(err)) != 0) {
		fprintf(stderr, "ewykd: --www: %s\n", err);
		rte_eal_cleanup();
		return 2;
	}

	pool = rte_pktmbuf_pool_create("ewyk_mbufs", cfg.mbufs, MBUF_CACHE, 0,
			RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id());
	if (pool == NULL) {
		snprintf(err, sizeof(err), "cannot create %u mbufs: %s (more "
				"memory with -m, or fewer --mbufs)", cfg.mbufs,
				rte_strerror(rte_errno));
		die(1, err);
	}
	memset(&ifc, 0, sizeof(ifc));
	ifc.ip = cfg.ip;
	ifc.netmask = htonl(cfg.prefix == 32 ? 0xffffffffu :
			~(0xffffffffu >> cfg.prefix));
	if (port_start(&cfg, nb_shards, pool, &ifc, err, sizeof(err)) != 0)
		die(1, err);
	rte_eth_dev_get_name_by_port(cfg.port_id, port_name);

	arp = rte_zmalloc("arp_cache", sizeof(*arp), RTE_CACHE_LINE_SIZE);
	/* Process memory: telemetry threads may read it until exit. */
	shards = aligned_alloc(RTE_CACHE_LINE_SIZE, sizeof(*shards) * nb_shards);
	if (arp == NULL || shards == NULL)
		die(1, "out of memory");
	memset(shards, 0, sizeof(*shards) * nb_shards);
	arp_cache_init(arp, 60000);
	for (i = 0; i < nb_shards; i++)
		if (shard_init(&shards[i], i, &cfg, &ifc, arp, pool, &www) != 0)
			die(1, "cannot allocate the shard tables (more memory "
					"with -m, or fewer --max-conns)");

	view = (struct telemetry_view){ .cfg = &cfg, .shards = shards,
		.nb_shards = nb_shards, .pool = pool, .www = &www, .ifc = &ifc,
		.port_name = port_name, .start_tsc = rte_get_tsc_cycles() };
	if (telemetry_register(&view) != 0)
		fprintf(stderr, "ewykd: telemetry commands not registered\n");

	options_format_ip(&cfg, ipbuf, sizeof(ipbuf));
	printf("ewykd %s: serving %s port %u on %s, %u shard(s), %u static "
			"file(s)\n", EWYK_VERSION, ipbuf, cfg.listen_port, port_name,
			nb_shards, www.n);
	fflush(stdout);

	if (workers == 0) {
		/* One lcore: it produces, and drains without a deadline
		 * keeper beyond its own connections. */
		__atomic_store_n(&stop_now, true, __ATOMIC_RELAXED);
		ewyk_strategy_produce(shards[0].exec.strategy);
	} else {
		uint64_t hz_ms = rte_get_tsc_hz() / 1000;

		for (i = 0; i < nb_shards; i++)
			if (shard_exec_start(&shards[i], i) != 0)
				die(1, "cannot start a shard on its lcore");
		/* The main lcore watches for owners stuck in one request. */
		uint64_t deadline = UINT64_MAX;

		/* The main lcore watches for owners stuck in one request,
		 * and times the drain after SIGTERM. */
		while (!__atomic_load_n(&stop_now, __ATOMIC_RELAXED)) {
			uint64_t now = rte_get_tsc_cycles() / hz_ms;
			bool drained = true;

			usleep(1000);
			exec_watchdog(shards, nb_shards, now);
			if (!__atomic_load_n(&force_quit, __ATOMIC_RELAXED))
				continue;
			if (deadline == UINT64_MAX)
				deadline = now + cfg.drain_ms;
			for (i = 0; i < nb_shards; i++)
				drained = drained && __atomic_load_n(&shards[i].drained,
						__ATOMIC_ACQUIRE);
			if (drained || now >= deadline)
				__atomic_store_n(&stop_now, true, __ATOMIC_RELAXED);
		}
	}
	exec_stop(shards, nb_shards);
	for (i = 0; i < nb_shards; i++)
		shard_fini(&shards[i]);

	port_stop(cfg.port_id);
	www_free(&www);
	rte_eal_cleanup();
	printf("ewykd: stopped\n");
	return 0;
}
