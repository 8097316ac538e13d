/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ewykd: the ewyk appliance. main() reads its options, sets up the EAL,
 * opens the services (static files, stores, routes, plugins), finds and
 * starts a port per --ip (or --ip6) with a queue pair per shard on each, launches each
 * shard on its worker lcore, serves HTTP/1.1 and HTTP/2 until SIGINT or
 * SIGTERM, drains and stops.
 *
 * Whatever can fail on the configuration is checked before the first lcore
 * or thread starts. A start-up error prints one line and exits with 2 (the
 * configuration) or 1 (resources), after stopping what already runs.
 */
#include <arpa/inet.h>
#include <errno.h>
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
#include <rte_pdump.h>

#include "check.h"
#include "executors.h"
#include "lcores.h"
#include "reload.h"
#include "ewykd.h"
#include "options.h"
#include "port.h"
#include "port_eal.h"
#include "reload.h"
#include "services.h"
#include "shard.h"
#include "telemetry.h"

#define MBUF_CACHE 256
#define MAX_EAL_ARGS 64

volatile bool force_quit;
volatile bool stop_now;

static struct serve_log *access_log;	/* for SIGUSR1 */

static void
on_signal(int sig)
{
	if (sig == SIGHUP)
		reload_ask();
	else if (sig == SIGUSR1)
		serve_log_reopen(access_log);	/* sets a flag */
	else
		__atomic_store_n(&force_quit, true, __ATOMIC_RELAXED);
}

/* Without "--", the arguments are ewykd's own if they ask for help, the
 * version, a config file or its check, and the EAL's otherwise. */
static const char *const own_options[] = {
	"--config", "--config=", "--check-config", "--help", "-h", "--version",
	NULL,
};

/* How many arguments at argv[i] are ewykd's although they stand before
 * "--": --config FILE (--config=FILE) and --check-config, which the EAL
 * does not have; 0 for the EAL's. */
static int
own_before_split(int argc, char **argv, int i)
{
	if (strcmp(argv[i], "--config") == 0)
		return i + 1 < argc ? 2 : 1;
	return strncmp(argv[i], "--config=", 9) == 0 ||
		strcmp(argv[i], "--check-config") == 0;
}

/* Splits the command line: the EAL's arguments before "--" into eal[]
 * (argv[0] first), ewykd's after it into app[], and --config and
 * --check-config moved to ewykd's (last) from wherever they stand. */
static void
split_args(int argc, char **argv, int split, char **eal, int *neal,
		char **app, int *napp)
{
	int i, k, own;

	*neal = *napp = 1;
	eal[0] = app[0] = argv[0];
	if (split == 0) {	/* no "--": all are ewykd's */
		for (i = 1; i < argc; i++)
			app[(*napp)++] = argv[i];
	}
	for (i = split + 1; split > 0 && i < argc; i++)
		app[(*napp)++] = argv[i];
	for (i = 1; i < split; i += own > 0 ? own : 1) {
		own = own_before_split(split, argv, i);
		if (own == 0 && *neal < MAX_EAL_ARGS - 1)
			eal[(*neal)++] = argv[i];
		for (k = 0; k < own; k++)
			app[(*napp)++] = argv[i + k];
	}
	eal[*neal] = NULL;
	app[*napp] = NULL;
}

/* EAL arguments: the command line's, else the config file's [eal] args. */
static int
eal_argv(char **cli, int ncli, char *args, char **out)
{
	int n = 0, i;
	char *tok, *save = NULL;

	for (i = 0; i < ncli; i++)
		out[n++] = cli[i];
	if (n == 1)
		for (tok = strtok_r(args, " \t", &save); tok != NULL &&
				n < MAX_EAL_ARGS - 1; tok = strtok_r(NULL, " \t", &save))
			out[n++] = tok;
	out[n] = NULL;
	return n;
}

/* ewykd's options after "--" (or all of them, see own_options), then the
 * EAL's. 0, OPT_EXIT_OK or OPT_EXIT_USAGE (its line printed). */
static int
parse_args(struct ewykd *e, int argc, char **argv, char **eal_args,
		int *eal_argc)
{
	int split = port_eal_split(argc, argv, own_options), app_argc, cli_argc,
	    rc;
	char **app_argv = calloc((size_t)argc + 1, sizeof(*app_argv));
	char *cli[MAX_EAL_ARGS];

	if (app_argv == NULL) {
		fprintf(stderr, "ewykd: out of memory\n");
		return OPT_EXIT_USAGE;
	}
	split_args(argc, argv, split, cli, &cli_argc, app_argv, &app_argc);
	options_defaults(&e->cfg);
	rc = options_parse(&e->cfg, app_argc, app_argv);
	free(app_argv);
	if (rc == OPT_EXIT_HELP) {
		options_usage("ewykd");
		printf("\nTelemetry commands, read with dpdk-telemetry.py -f PREFIX:\n");
		telemetry_usage(stdout);
		return OPT_EXIT_OK;
	}
	if (rc != 0)
		return rc;
	*eal_argc = eal_argv(cli, cli_argc, e->cfg.eal_args, eal_args);
	return 0;
}

static enum ewykd_err
eal_start(struct ewykd *e, int argc, char **argv, char *err, size_t errlen)
{
	enum ewykd_err rc = ewykd_err_of_eal(port_eal_init(argc, argv, err,
			errlen));

	if (rc != EWYKD_OK)
		return rc;
	e->eal_ready = true;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	signal(SIGUSR1, on_signal);
	/* dpdk-dumpcap and dpdk-pdump attach as secondary processes; they
	 * can only when the EAL keeps a shared configuration (no
	 * --in-memory, --no-shconf or --no-huge). Harmless otherwise. */
	if (rte_pdump_init() != 0)
		fprintf(stderr, "ewykd: packet capture unavailable: %s\n",
				rte_strerror(rte_errno));
	return EWYKD_OK;
}

/* Shards and reserved lcores out of the EAL's worker lcores (lcores.c),
 * and the worker lcores they start on. */
static enum ewykd_err
lcores_assign(struct ewykd *e, char *err, size_t errlen)
{
	struct ewykd_config *cfg = &e->cfg;
	unsigned int workers = rte_lcore_count() - 1, lcore;
	enum ewykd_err rc = lcores_plan(cfg, workers, &e->nb_shards, err,
			errlen);

	if (rc != EWYKD_OK)
		return rc;
	cfg->shards = e->nb_shards;
	cfg->reserved = (uint16_t)(workers > e->nb_shards ?
			workers - e->nb_shards : 0);
	RTE_LCORE_FOREACH_WORKER(lcore)
		e->workers[e->nb_workers++] = lcore;
	return EWYKD_OK;
}

/* What lib/port reads of ewykd's configuration. */
static struct port_config
port_config_of(const struct ewykd_config *cfg)
{
	return (struct port_config){
		.first_id = cfg->port_id, .nb_ports = cfg->nb_ports,
		.addr_option = cfg->nb_ips >= cfg->nb_ip6s ? "--ip" : "--ip6",
		.mtu = cfg->mtu, .rx_desc = cfg->rx_desc, .tx_desc = cfg->tx_desc,
		.sw_cksum = cfg->sw_cksum, .no_tso = cfg->no_tso,
		/* a whole receive buffer of full segments: one upload's
		 * window may arrive as one burst */
		.tap_queue = (cfg->rcv_buf + cfg->mtu - 53u) / (cfg->mtu - 52u),
	};
}

/* A port for each --ip (or --ip6), each able to serve every shard. */
static enum ewykd_err
port_find(struct ewykd *e, char *err, size_t errlen)
{
	const struct ewykd_config *cfg = &e->cfg;
	const struct port_config pc = port_config_of(cfg);
	uint16_t ids[EWYKD_PORTS_MAX], i;

	if (port_assign(&pc, ids, err, errlen) != 0)
		return EWYKD_ERR_PORT;
	for (i = 0; i < cfg->nb_ports; i++) {
		struct ewykd_port *p = &e->ports[i];

		if (port_check(&pc, ids[i], e->nb_shards, err, errlen) != 0)
			return EWYKD_ERR_PORT;
		p->id = ids[i];
		rte_eth_dev_get_name_by_port(p->id, p->name);
		if (i < cfg->nb_ips) {
			p->ifc.ip = cfg->ip[i];
			p->ifc.netmask = options_netmask(cfg, i);
		}
		if (i < cfg->nb_ip6s) {
			memcpy(p->ifc.ip6, cfg->ip6[i], 16);
			p->ifc.prefix6 = cfg->prefix6[i];
		}
		if (options_has_gateway(cfg, i, NET_AF_INET))
			p->ifc.gateway = cfg->gateway[i];
		if (options_has_gateway(cfg, i, NET_AF_INET6))
			memcpy(p->ifc.gateway6, cfg->gateway6[i], 16);
	}
	e->nb_ports = cfg->nb_ports;
	return EWYKD_OK;
}

/* The mbuf pool, then the ports on it. */
static enum ewykd_err
port_open(struct ewykd *e, char *err, size_t errlen)
{
	const struct ewykd_config *cfg = &e->cfg;
	const struct port_config pc = port_config_of(cfg);
	uint16_t ids[EWYKD_PORTS_MAX], i;

	for (i = 0; i < e->nb_ports; i++)
		ids[i] = e->ports[i].id;
	e->pool = port_mbuf_pool("ewyk_mbufs", cfg->mbufs, MBUF_CACHE,
			cfg->mtu, ids, e->nb_ports);
	if (e->pool == NULL) {
		snprintf(err, errlen, "cannot create %u mbufs: %s (more memory "
				"with -m, or fewer --mbufs)", cfg->mbufs,
				rte_strerror(rte_errno));
		return EWYKD_ERR_NOMEM;
	}
	for (i = 0; i < e->nb_ports; i++) {
		struct ewykd_port *p = &e->ports[i];

		if (port_start(&pc, p->id, e->nb_shards, e->pool, &p->ifc,
				&p->rss, &p->mc, err, errlen) != 0)
			return EWYKD_ERR_DEVICE;
		p->started = true;
	}
	/* An upstream's answers must come back to the shard that opened the
	 * connection: with several shards, only a device that says how it
	 * hashes (a key and a table covering every queue) lets the opener
	 * choose its port for that. net_tap does not: the kernel's tun picks
	 * the queue with a hash of its own. Each upstream is reached by the
	 * port whose subnet holds it, or by a gateway (options.c made sure
	 * one does). */
	for (i = 0; i < cfg->nb_upstreams && e->nb_shards > 1; i++) {
		const struct ewykd_port *p = &e->ports[options_port_to(cfg,
				&cfg->upstreams[i].addr)];

		if (p->rss.reta_size != 0)
			continue;
		snprintf(err, errlen, "--upstream with %u shards: port %u (%s), "
				"the way to upstream %s, does not say how it "
				"spreads flows over its queues (RSS key and "
				"table), so upstream answers could reach the "
				"wrong shard; use --shards 1",
				e->nb_shards, p->id, p->name, cfg->upstreams[i].name);
		return EWYKD_ERR_CONFIG;
	}
	return EWYKD_OK;
}

/* Each shard's stack and HTTP state, on the neighbour caches they share
 * (one per port and family: each port is a network of its own). */
static enum ewykd_err
shards_create(struct ewykd *e, char *err, size_t errlen)
{
	uint16_t i, p;

	for (i = 0; i < e->nb_ports; i++) {
		struct ewykd_port *p = &e->ports[i];

		p->arp = rte_zmalloc("arp_cache", sizeof(*p->arp),
				RTE_CACHE_LINE_SIZE);
		if (p->ifc.prefix6 != 0)
			p->nd = rte_zmalloc("nd_state", sizeof(*p->nd),
					RTE_CACHE_LINE_SIZE);
		if (p->arp == NULL || (p->ifc.prefix6 != 0 && p->nd == NULL)) {
			snprintf(err, errlen, "out of memory");
			return EWYKD_ERR_NOMEM;
		}
		arp_cache_init(p->arp, 60000);
		if (p->nd != NULL)
			net_nd_init(p->nd, 60000);
	}
	/* Process memory: telemetry threads may read it until exit. */
	e->shards = aligned_alloc(RTE_CACHE_LINE_SIZE,
			sizeof(*e->shards) * e->nb_shards);
	if (e->shards == NULL) {
		snprintf(err, errlen, "out of memory");
		return EWYKD_ERR_NOMEM;
	}
	memset(e->shards, 0, sizeof(*e->shards) * e->nb_shards);
	for (i = 0; i < e->nb_shards; i++) {
		if (shard_init(&e->shards[i], i, &e->cfg, e->ports, e->nb_ports,
				e->pool) != 0) {
			snprintf(err, errlen, "cannot allocate the shard tables "
					"(more memory with -m, or fewer "
					"--max-conns)");
			return EWYKD_ERR_NOMEM;
		}
		/* Shard i polls queue i of every port. */
		for (p = 0; p < e->nb_ports; p++)
			net_stack_set_rss(e->shards[i].ns, (uint8_t)p,
					&e->ports[p].rss, i);
	}
	return EWYKD_OK;
}

/* Lcores and threads run from here on: the reserved lcores and the
 * blocking pool, then each shard's production on its worker lcore. */
static enum ewykd_err
shards_launch(struct ewykd *e, char *err, size_t errlen)
{
	uint16_t i;

	if (executors_create(e) != 0) {
		snprintf(err, errlen, "cannot start the reserved lcores or the "
				"blocking pool: %s", strerror(errno));
		return EWYKD_ERR_THREADS;
	}
	for (; e->shards_ready < e->nb_shards; e->shards_ready++)
		if (shard_serve_init(&e->shards[e->shards_ready], e) != 0) {
			snprintf(err, errlen, "cannot allocate the request "
					"runtime of shard %u (more memory with -m)",
					e->shards_ready);
			return EWYKD_ERR_NOMEM;
		}
	if (e->nb_workers == 0)
		return EWYKD_OK;	/* the main lcore produces: run() */
	for (i = 0; i < e->nb_shards; i++)
		if (serve_start(e->shards[i].serve, e->reserved, i) != 0) {
			snprintf(err, errlen, "cannot start shard %u on lcore %u",
					i, e->workers[i]);
			return EWYKD_ERR_THREADS;
		}
	return EWYKD_OK;
}

/* Stops whatever runs, then undoes the rest in reverse: the way back from
 * any point of start-up, and the end of a run. */
static void
teardown(struct ewykd *e)
{
	uint16_t i;

	__atomic_store_n(&force_quit, true, __ATOMIC_RELAXED);
	__atomic_store_n(&stop_now, true, __ATOMIC_RELAXED);
	executors_stop(e);
	for (i = 0; i < e->shards_ready; i++)
		shard_fini(&e->shards[i]);
	for (i = 0; i < e->nb_ports; i++)
		if (e->ports[i].started)
			port_stop(e->ports[i].id);
	services_close(e);	/* what the stores hold goes to disk */
	if (e->eal_ready) {
		rte_pdump_uninit();
		rte_eal_cleanup();
	}
	options_free(&e->cfg);
}

/* A start-up error: one line, everything stopped, its exit status. */
static void
check(struct ewykd *e, enum ewykd_err rc, const char *err)
{
	if (rc == EWYKD_OK)
		return;
	fprintf(stderr, "ewykd: %s\n", err);
	teardown(e);
	exit(ewykd_err_status(rc));
}

/* A port's addresses, "A/N" and "[ADDR]/N" (RFC 5952's form), as many as
 * it has. */
static void
port_addrs(const struct ewykd_config *cfg, uint16_t i, char *buf, size_t len)
{
	char ip[32], ip6[INET6_ADDRSTRLEN + 8];

	options_format_ip(cfg, i, ip, sizeof(ip));
	options_format_ip6(cfg, i, ip6, sizeof(ip6));
	snprintf(buf, len, "%s%s%s", ip, ip[0] && ip6[0] ? " and " : "", ip6);
}

/* "A/N port 80 on net_tap0, B/N on net_memif0, 1 shard(s)": the first
 * port as ewykd always said it, then the others; ports left unused after. */
static void
announce(struct ewykd *e)
{
	char ip[96], line[1024];
	size_t len = 0;
	uint16_t i, port;

	e->start_tsc = rte_get_tsc_cycles();
	if (telemetry_register(e) != 0)
		fprintf(stderr, "ewykd: telemetry commands not registered\n");
	for (i = 0; i < e->nb_ports && len < sizeof(line); i++) {
		port_addrs(&e->cfg, i, ip, sizeof(ip));
		if (i == 0)
			len += (size_t)snprintf(line, sizeof(line), "%s port %u on %s",
					ip, e->cfg.listen_port, e->ports[i].name);
		else
			len += (size_t)snprintf(line + len, sizeof(line) - len,
					", %s on %s", ip, e->ports[i].name);
	}
	if (e->tls != NULL && len < sizeof(line))
		len += (size_t)snprintf(line + len, sizeof(line) - len,
				", TLS port %u (%u certificate%s)",
				e->cfg.tls_port, options_tls_pairs(&e->cfg),
				options_tls_pairs(&e->cfg) == 1 ? "" : "s");
	printf("ewykd %s: serving %s, %u shard(s), %u static file(s)\n",
			EWYK_VERSION, line, e->nb_shards,
			(unsigned int)__atomic_load_n(&e->reload.files,
			__ATOMIC_RELAXED));
	RTE_ETH_FOREACH_DEV(port) {
		char name[RTE_ETH_NAME_MAX_LEN];

		if (port < e->cfg.port_id || port <= e->ports[e->nb_ports - 1].id)
			continue;
		rte_eth_dev_get_name_by_port(port, name);
		printf("ewykd: port %u (%s) unused: no --ip for it\n", port, name);
	}
	fflush(stdout);
}

static uint64_t
now_ms(void)
{
	return rte_get_tsc_cycles() / (rte_get_tsc_hz() / 1000);
}

/* How long the main lcore sleeps between two looks at the shards: a
 * quarter of --stuck-ms, so that a stuck owner is relieved within 25 % of
 * its promise, and the main lcore (which may share a CPU with a shard)
 * wakes no more often than that; 100 ms with the watchdog off. */
static unsigned int
watch_period_us(const struct ewykd *e)
{
	uint32_t us = e->cfg.stuck_ms * 1000 / 4;

	return e->cfg.stuck_ms == 0 ? 100000 : RTE_MAX(us, 1000u);
}

/* Connections still open, but those only lingering in TIME-WAIT. */
static uint64_t
open_conns(const struct ewykd *e)
{
	uint64_t n = 0;
	uint16_t i;

	for (i = 0; i < e->nb_shards; i++) {
		const struct net_stats *st = &e->shards[i].net_stats;
		uint64_t o = __atomic_load_n(&st->tcp_conns_open, __ATOMIC_RELAXED);
		uint64_t tw = __atomic_load_n(&st->tcp_time_wait, __ATOMIC_RELAXED);

		n += o > tw ? o - tw : 0;
	}
	return n;
}

/* A port's link that went down or came back: a line each time. */
static void
watch_links(struct ewykd *e)
{
	const struct shard *s0 = &e->shards[0];
	uint64_t downs = __atomic_load_n(&s0->link_downs, __ATOMIC_RELAXED);
	uint64_t ups = __atomic_load_n(&s0->link_ups, __ATOMIC_RELAXED);

	if (downs != e->links_seen_down) {
		printf("ewykd: link down (a port's link; /ewyk/ports says which): "
				"connections wait, TCP retransmits into the outage\n");
		e->links_seen_down = downs;
	}
	if (ups != e->links_seen_up) {
		printf("ewykd: link up again: the outage's segments retransmitted "
				"at once\n");
		e->links_seen_up = ups;
	}
	fflush(stdout);
}

/* Until SIGINT or SIGTERM the main lcore relieves owners stuck in one
 * request. With no worker lcore it is the one shard's producer instead,
 * and stops at once: no other lcore is there to time a drain. */
static void
run(struct ewykd *e)
{
	if (e->nb_workers == 0) {
		__atomic_store_n(&stop_now, true, __ATOMIC_RELAXED);
		ewyk_strategy_produce(serve_strategy(e->shards[0].serve));
		return;
	}
	while (!__atomic_load_n(&force_quit, __ATOMIC_RELAXED)) {
		usleep(watch_period_us(e));
		executors_watch(e, now_ms());
		reload_step(e);
		watch_links(e);
	}
}

/* After SIGTERM the shards refuse new connections and finish what they
 * were asked; production stops once all are drained or --drain-ms is up. */
static void
drain(struct ewykd *e)
{
	uint64_t t0 = now_ms(), deadline = t0 + e->cfg.drain_ms;
	uint64_t open = open_conns(e), left;
	uint16_t i;

	printf("ewykd: draining: %llu connection(s) open, new ones refused, "
			"--drain-ms %u\n", (unsigned long long)open, e->cfg.drain_ms);
	fflush(stdout);
	while (!__atomic_load_n(&stop_now, __ATOMIC_RELAXED)) {
		bool drained = true;

		usleep(1000);
		executors_watch(e, now_ms());
		for (i = 0; i < e->nb_shards; i++)
			drained = drained && __atomic_load_n(&e->shards[i].drained,
					__ATOMIC_ACQUIRE);
		if (drained)
			break;
		if (now_ms() >= deadline) {
			/* What is left is cut: handlers asleep on threads too. */
			for (i = 0; i < e->nb_shards; i++)
				serve_cut_sleeps(e->shards[i].serve);
			break;
		}
	}
	left = open_conns(e);
	printf("ewykd: drained in %llu ms: %llu connection(s) finished, %llu "
			"cut at the deadline\n", (unsigned long long)(now_ms() - t0),
			(unsigned long long)(open > left ? open - left : 0),
			(unsigned long long)left);
	fflush(stdout);
	__atomic_store_n(&stop_now, true, __ATOMIC_RELAXED);
}

int
main(int argc, char **argv)
{
	static struct ewykd ew;	/* telemetry threads read it until exit */
	struct ewykd *e = &ew;
	char *eal_args[MAX_EAL_ARGS], err[EWYKD_ERR_LEN] = "";
	int eal_argc, rc;

	rc = parse_args(e, argc, argv, eal_args, &eal_argc);
	if (rc != 0)
		return rc == OPT_EXIT_OK ? 0 : EWYKD_EXIT_CONFIG;
	if (e->cfg.check_only)
		return check_config(e, eal_argc, eal_args);
	check(e, eal_start(e, eal_argc, eal_args, err, sizeof(err)), err);
	check(e, lcores_assign(e, err, sizeof(err)), err);
	check(e, services_open(e, err, sizeof(err)), err);
	access_log = e->access_log;
	check(e, port_find(e, err, sizeof(err)), err);
	check(e, port_open(e, err, sizeof(err)), err);
	check(e, shards_create(e, err, sizeof(err)), err);
	check(e, shards_launch(e, err, sizeof(err)), err);
	announce(e);
	run(e);
	drain(e);
	teardown(e);
	printf("ewykd: stopped\n");
	return 0;
}
