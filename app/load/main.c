/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ewyk-load: reads its options (before the EAL starts, so a bad one ends
 * it at once), starts the EAL and the port as ewykd does (app/ewykd's
 * eal.c and port.c), a worker per worker lcore (or the main lcore alone),
 * runs the load, prints the summary.
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

#include "digest.h"
#include "load.h"
#include "port.h"
#include "port_eal.h"

#define MBUF_CACHE 256
#define RING_DESC 1024

static void
on_signal(int sig)
{
	(void)sig;
	__atomic_store_n(&load_quit, true, __ATOMIC_RELAXED);
}

struct load {
	struct load_conf conf;
	uint16_t port;
	bool port_started;
	struct rte_mempool *pool;
	struct net_if ifc;
	struct net_rss rss;
	struct arp_cache *arp;
	struct net_nd *nd;
	struct load_worker *workers;
	uint16_t nb_workers;
	uint16_t ready;
	bool eal_ready;
};

static void
teardown(struct load *l)
{
	uint16_t i;

	for (i = 0; i < l->ready; i++)
		worker_fini(&l->workers[i]);
	if (l->port_started)
		port_stop(l->port);
	if (l->eal_ready)
		rte_eal_cleanup();
}

static void
die(struct load *l, int status, const char *fmt, const char *what)
{
	fprintf(stderr, "ewyk-load: ");
	fprintf(stderr, fmt, what);
	fputc('\n', stderr);
	teardown(l);
	exit(status);
}

static uint32_t
netmask(uint8_t prefix)
{
	return rte_cpu_to_be_32(prefix == 0 ? 0 : ~0u << (32 - prefix));
}

/* The port and its pool (lib/port, as ewykd's). */
static void
port_open(struct load *l)
{
	const struct load_conf *conf = &l->conf;
	const struct port_config pc = {
		.first_id = conf->port_id, .nb_ports = 1,
		.addr_option = conf->ip != 0 ? "--ip" : "--ip6",
		.mtu = conf->mtu, .rx_desc = RING_DESC, .tx_desc = RING_DESC,
	};
	char err[512];
	const char *mc;
	uint16_t ids[1];
	uint32_t mbufs;

	if (port_assign(&pc, ids, err, sizeof(err)) != 0 ||
			port_check(&pc, ids[0], l->nb_workers, err,
			sizeof(err)) != 0)
		die(l, 2, "%s", err);
	l->port = ids[0];
	mbufs = conf->mbufs != 0 ? conf->mbufs : RTE_MAX(32768u,
			(uint32_t)l->nb_workers * 4 * RING_DESC + 8192);
	l->pool = port_mbuf_pool("load_mbufs", mbufs, MBUF_CACHE, conf->mtu,
			ids, 1);
	if (l->pool == NULL)
		die(l, 1, "cannot create the mbufs: %s (more memory with -m, "
				"or fewer --mbufs)", rte_strerror(rte_errno));
	l->ifc.ip = conf->ip;
	l->ifc.ip_count = conf->ip_count;
	l->ifc.netmask = netmask(conf->prefix);
	memcpy(l->ifc.ip6, conf->ip6, 16);
	l->ifc.prefix6 = conf->prefix6;
	if (port_start(&pc, l->port, l->nb_workers, l->pool, &l->ifc, &l->rss,
			&mc, err, sizeof(err)) != 0)
		die(l, 1, "%s", err);
	l->port_started = true;
	l->arp = rte_zmalloc("load_arp", sizeof(*l->arp), RTE_CACHE_LINE_SIZE);
	if (l->arp == NULL)
		die(l, 1, "%s", "out of memory");
	arp_cache_init(l->arp, 60000);
	if (conf->prefix6 != 0) {
		l->nd = rte_zmalloc("load_nd", sizeof(*l->nd),
				RTE_CACHE_LINE_SIZE);
		if (l->nd == NULL)
			die(l, 1, "%s", "out of memory");
		net_nd_init(l->nd, 60000);
	}
}

static void
workers_create(struct load *l)
{
	l->workers = rte_zmalloc("load_workers", sizeof(*l->workers) *
			l->nb_workers, RTE_CACHE_LINE_SIZE);
	if (l->workers == NULL)
		die(l, 1, "%s", "out of memory");
	for (; l->ready < l->nb_workers; l->ready++) {
		struct load_worker *w = &l->workers[l->ready];

		w->port = l->port;
		w->transport = l->conf.tls ? &load_tls_transport : NULL;
		w->all = l->workers;
		w->nb_all = l->nb_workers;
		if (worker_init(w, l->ready, l->nb_workers, &l->conf, &l->ifc,
				l->arp, l->nd, &l->rss, l->pool) != 0) {
			l->ready++;
			die(l, 1, "%s", "cannot allocate a worker's connections "
					"(fewer -c, or more memory with -m)");
		}
	}
}

/* Runs the workers: on the worker lcores, or the main lcore alone. The
 * main lcore, when free, prints the progress lines. */
static double
run(struct load *l)
{
	unsigned int lcore;
	uint64_t start = rte_get_tsc_cycles(), end = UINT64_MAX, last;
	uint16_t i = 0, done;

	if (l->conf.duration_s > 0)
		end = start + (uint64_t)(l->conf.duration_s *
				(double)load_tsc_hz);
	for (i = 0; i < l->nb_workers; i++) {
		l->workers[i].start_tsc = start;
		l->workers[i].end_tsc = end;
	}
	if (rte_lcore_count() == 1) {
		l->workers[0].report_self = true;
		worker_run(&l->workers[0]);
	} else {
		i = 0;
		RTE_LCORE_FOREACH_WORKER(lcore)
			if (i < l->nb_workers)
				rte_eal_remote_launch(worker_run,
						&l->workers[i++], lcore);
		last = start;
		do {
			usleep(10000);
			for (done = 0, i = 0; i < l->nb_workers; i++)
				done += __atomic_load_n(&l->workers[i].finished,
						__ATOMIC_ACQUIRE);
			if (!l->conf.quiet && rte_get_tsc_cycles() - last >=
					load_tsc_hz && done < l->nb_workers) {
				last += load_tsc_hz;
				report_progress(l->workers, l->nb_workers,
						(double)(last - start) /
						(double)load_tsc_hz);
			}
		} while (done < l->nb_workers);
		rte_eal_mp_wait_lcore();
	}
	last = start;
	for (i = 0; i < l->nb_workers; i++)
		last = RTE_MAX(last, l->workers[i].end_run_tsc);
	return (double)(last - start) / (double)load_tsc_hz;
}

int
main(int argc, char **argv)
{
	static struct load l;
	/* Its own arguments follow "--"; without it, all are its own when
	 * they ask for help, else the EAL's. */
	static const char *const own[] = { "--help", "-h", NULL };
	int split = port_eal_split(argc, argv, own), app_argc, rc;
	char **app_argv, err[1024];
	enum port_eal_status erc;
	double elapsed;

	app_argc = split < argc ? argc - split : 1;
	app_argv = split < argc ? argv + split : argv;
	if (split < argc)
		app_argv[0] = argv[0];
	rc = load_options_parse(&l.conf, app_argc, app_argv);
	if (rc != 0)
		return rc == 1 ? 0 : rc;
	if (l.conf.check_digest && !digest_available()) {
		fprintf(stderr, "ewyk-load: --expect-sha256: this build has no "
				"SHA-256 (libcrypto was not found)\n");
		return 2;
	}
	erc = port_eal_init(split, argv, err, sizeof(err));
	if (erc != PORT_EAL_OK) {
		fprintf(stderr, "ewyk-load: %s\n", err);
		return port_eal_exit_status(erc);
	}
	l.eal_ready = true;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	load_tsc_hz = rte_get_tsc_hz();
	l.nb_workers = (uint16_t)RTE_MAX(rte_lcore_count() - 1, 1u);
	if (l.nb_workers > LOAD_WORKERS_MAX)
		die(&l, 2, "%s", "too many worker lcores (at most 64)");
	if (l.conf.clients < l.nb_workers)
		die(&l, 2, "%s", "-c is fewer than the worker lcores: each "
				"worker needs a connection");
	port_open(&l);
	workers_create(&l);
	elapsed = run(&l);
	rc = report_summary(&l.conf, l.workers, l.nb_workers, elapsed);
	if (rc != 0)
		fprintf(stderr, "ewyk-load: --json %s: cannot write it\n",
				l.conf.json);
	teardown(&l);
	return rc != 0 ? 1 : 0;
}
