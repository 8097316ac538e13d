/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Telemetry callbacks run on the telemetry threads, concurrently with the
 * lcores: they only read per-shard counters, with relaxed atomic loads.
 * Keys are [A-Za-z0-9_] and counters end in their unit.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_ether.h>
#include <rte_lcore.h>
#include <rte_mempool.h>
#include <rte_telemetry.h>
#include <rte_version.h>

#include "ewyk_fiber.h"
#include "ewykd.h"
#include "http_token.h"
#include "options.h"
#include "reload.h"
#include "shard.h"
#include "store.h"
#include "reload.h"
#include "telemetry.h"
#include "www.h"

static const struct ewykd *ew;	/* main()'s, alive until exit */

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
/* Routes in one reply: each takes about 300 bytes of the 16 KiB. */
#define ROUTES_PER_PAGE 32

static const char *
addr_state(const struct net_nd *nd, unsigned int i)
{
	static const char *const names[] = {
		[NET_ADDR_TENTATIVE] = "tentative",
		[NET_ADDR_PREFERRED] = "preferred",
		[NET_ADDR_DUPLICATE] = "duplicate",
	};

	return nd == NULL ? "" : names[net_nd_state(nd, i)];
}

/* A port's IPv6: its addresses (RFC 5952's form) with their state, and
 * how it takes its multicast groups; empty strings without IPv6. */
static void
add_port_ip6(struct rte_tel_data *d, uint16_t i)
{
	const struct ewykd_port *p = &ew->ports[i];
	char ip6[INET6_ADDRSTRLEN + 8], ll[INET6_ADDRSTRLEN] = "";
	uint8_t a[16];

	options_format_ip6(&ew->cfg, i, ip6, sizeof(ip6));
	if (p->nd != NULL) {
		net_ip6_link_local(p->ifc.mac, a);
		inet_ntop(AF_INET6, a, ll, sizeof(ll));
	}
	rte_tel_data_add_dict_string(d, "ip6", ip6);
	rte_tel_data_add_dict_string(d, "ip6_state", addr_state(p->nd, 0));
	rte_tel_data_add_dict_string(d, "ip6_link_local", ll);
	rte_tel_data_add_dict_string(d, "ip6_link_local_state",
			addr_state(p->nd, 1));
	rte_tel_data_add_dict_string(d, "ip6_multicast", p->nd != NULL &&
			p->mc != NULL ? p->mc : "");
}

/* What a port is: its ids, addresses and what its device offers. */
static void
add_port_identity(struct rte_tel_data *d, uint16_t i)
{
	const struct ewykd_port *p = &ew->ports[i];
	char ip[32], mac[RTE_ETHER_ADDR_FMT_SIZE], gw[INET6_ADDRSTRLEN];

	options_format_ip(&ew->cfg, i, ip, sizeof(ip));
	rte_tel_data_add_dict_string(d, "ip", ip);
	add_port_ip6(d, i);
	options_format_gateway(&ew->cfg, i, NET_AF_INET, gw, sizeof(gw));
	rte_tel_data_add_dict_string(d, "gateway", gw);
	options_format_gateway(&ew->cfg, i, NET_AF_INET6, gw, sizeof(gw));
	rte_tel_data_add_dict_string(d, "gateway6", gw);
	rte_tel_data_add_dict_int(d, "port_id", p->id);
	rte_tel_data_add_dict_string(d, "port_name", p->name);
	rte_ether_format_addr(mac, sizeof(mac),
			(const struct rte_ether_addr *)p->ifc.mac);
	rte_tel_data_add_dict_string(d, "mac", mac);
	rte_tel_data_add_dict_int(d, "mtu", p->ifc.mtu);
	rte_tel_data_add_dict_string(d, "tx_cksum", p->ifc.tx_cksum_offload ?
			"offload" : "software");
	rte_tel_data_add_dict_string(d, "rx_cksum", p->ifc.rx_cksum_offload ?
			"offload" : "software");
	rte_tel_data_add_dict_string(d, "tx_segments", p->ifc.tx_multiseg ?
			"chained" : "copied");
	rte_tel_data_add_dict_string(d, "tso", p->ifc.tx_tso ? "offload" : "off");
}

static int
tel_info(const char *cmd __rte_unused, const char *params __rte_unused,
		struct rte_tel_data *d)
{
	const struct ewykd_config *cfg = &ew->cfg;
	struct rte_tel_data *lcores, *www;
	uint16_t i;

	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "version", EWYK_VERSION);
	rte_tel_data_add_dict_string(d, "dpdk", rte_version());
	rte_tel_data_add_dict_int(d, "listen_port", cfg->listen_port);
	/* The first port's, as before there were several: /ewyk/ports has
	 * them all. */
	add_port_identity(d, 0);
	rte_tel_data_add_dict_int(d, "ports", ew->nb_ports);
	rte_tel_data_add_dict_int(d, "shards", ew->nb_shards);
	rte_tel_data_add_dict_int(d, "max_conns_per_shard", (int)cfg->max_conns);
	rte_tel_data_add_dict_string(d, "idle", cfg->idle == IDLE_POLL ?
			"poll" : "sleep");
	rte_tel_data_add_dict_u64(d, "uptime_ms", (rte_get_tsc_cycles() -
			ew->start_tsc) / (rte_get_tsc_hz() / 1000));
	lcores = rte_tel_data_alloc();
	if (lcores != NULL) {
		rte_tel_data_start_array(lcores, RTE_TEL_INT_VAL);
		for (i = 0; i < ew->nb_shards; i++)
			rte_tel_data_add_array_int(lcores,
					(int)ew->shards[i].lcore);
		rte_tel_data_add_dict_container(d, "shard_lcores", lcores, 0);
	}
	rte_tel_data_add_dict_int(d, "lcores", (int)rte_lcore_count());
	www = rte_tel_data_alloc();
	if (www != NULL) {
		rte_tel_data_start_dict(www);
		rte_tel_data_add_dict_string(www, "root", cfg->www);
		rte_tel_data_add_dict_int(www, "files",
				(int)LOAD(ew->reload.files));
		rte_tel_data_add_dict_int(www, "skipped_files",
				(int)LOAD(ew->reload.skipped));
		rte_tel_data_add_dict_u64(www, "size_bytes",
				LOAD(ew->reload.bytes));
		rte_tel_data_add_dict_u64(www, "reloads_count",
				LOAD(ew->reload.done));
		rte_tel_data_add_dict_u64(www, "reload_failures_count",
				LOAD(ew->reload.failed));
		/* A replaced tree kept for answers still going out of it. */
		rte_tel_data_add_dict_int(www, "retiring",
				LOAD(ew->reload.pending));
		rte_tel_data_add_dict_container(d, "www", www, 0);
	}
	return 0;
}

/* Sums a uint64_t field over shards. */
#define SUM(expr) ({ \
	uint64_t _t = 0; \
	for (uint16_t _i = 0; _i < ew->nb_shards; _i++) { \
		struct shard *s = &ew->shards[_i]; \
		_t += LOAD(expr); \
	} \
	_t; })

/* A figure of the shards summed over them: its key, and where its
 * uint64_t lies in struct shard. The replies below are mostly tables of
 * these; what is not a plain sum stays code. */
struct shard_sum {
	const char *key;
	size_t off;
};

/* The field must be a uint64_t: anything else fails to compile. */
#define SHARD_SUM(key, field) { key, offsetof(struct shard, field) + \
	0 * sizeof(char[__builtin_types_compatible_p( \
		__typeof__(((struct shard *)0)->field), uint64_t) ? 1 : -1]) }

static uint64_t
sum_at(size_t off)
{
	uint64_t t = 0;
	uint16_t i;

	for (i = 0; i < ew->nb_shards; i++)
		t += __atomic_load_n((const uint64_t *)(const void *)
				((const char *)&ew->shards[i] + off),
				__ATOMIC_RELAXED);
	return t;
}

static void
add_sums(struct rte_tel_data *d, const struct shard_sum *t, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		rte_tel_data_add_dict_u64(d, t[i].key, sum_at(t[i].off));
}

/* /ewyk/stats: the traffic, the drops, the connections, the requests. */
static const struct shard_sum stats_sums[] = {
	SHARD_SUM("rx_pkts", net_stats.rx_pkts),
	SHARD_SUM("tx_pkts", net_stats.tx_pkts),
	SHARD_SUM("rx_bytes", net_stats.rx_bytes),
	SHARD_SUM("tx_bytes", net_stats.tx_bytes),
	SHARD_SUM("arp_in_pkts", net_stats.arp_in),
	SHARD_SUM("arp_reply_pkts", net_stats.arp_replies),
	SHARD_SUM("arp_other_target_pkts", net_stats.arp_other_targets),
	SHARD_SUM("arp_reply_limited_pkts", net_stats.arp_replies_limited),
	SHARD_SUM("icmp_echo_pkts", net_stats.icmp_echo),
	SHARD_SUM("rx_ip4_pkts", net_stats.rx_ip4_pkts),
	SHARD_SUM("rx_ip6_pkts", net_stats.rx_ip6_pkts),
	SHARD_SUM("tx_ip4_pkts", net_stats.tx_ip4_pkts),
	SHARD_SUM("tx_ip6_pkts", net_stats.tx_ip6_pkts),
#define ND_COUNTER_SUM(n, unit) SHARD_SUM(#n "_" #unit, net_stats.nd.n),
	ND_COUNTERS(ND_COUNTER_SUM)
#undef ND_COUNTER_SUM
#define UDP_COUNTER_SUM(n, unit) \
	SHARD_SUM(#n "_" #unit, net_stats.udp.n##_##unit),
	UDP_COUNTERS(UDP_COUNTER_SUM)
#undef UDP_COUNTER_SUM
	SHARD_SUM("open_conns", net_stats.tcp_conns_open),
	SHARD_SUM("open_conns_ip6", net_stats.tcp_conns_open6),
	SHARD_SUM("total_conns", net_stats.tcp.passive_opens),
	SHARD_SUM("closed_conns", net_stats.tcp_conns_closed),
	SHARD_SUM("refused_conns", http_stats.conns_refused),
	SHARD_SUM("tcp_retransmit_segs", net_stats.tcp.retransmits),
	SHARD_SUM("tcp_reset_out_segs", net_stats.tcp.resets_out),
	SHARD_SUM("requests_reqs", http_stats.requests),
	SHARD_SUM("body_out_bytes", http_stats.body_bytes_out),
};

static int
tel_stats(const char *cmd __rte_unused, const char *params __rte_unused,
		struct rte_tel_data *d)
{
	struct rte_tel_data *drops, *status;
	uint64_t drop_total = 0;
	unsigned int r;

	rte_tel_data_start_dict(d);
	add_sums(d, stats_sums, RTE_DIM(stats_sums));
	drops = rte_tel_data_alloc();
	if (drops == NULL)
		return -ENOMEM;
	rte_tel_data_start_dict(drops);
	for (r = 1; r < NET_DROP__COUNT; r++) {
		uint64_t v = SUM(s->net_stats.drop[r]);

		drop_total += v;
		rte_tel_data_add_dict_u64(drops, net_drop_name(r), v);
	}
	rte_tel_data_add_dict_u64(d, "drop_pkts", drop_total);
	rte_tel_data_add_dict_container(d, "drop_by_reason_pkts", drops, 0);
	status = rte_tel_data_alloc();
	if (status == NULL)
		return -ENOMEM;
	rte_tel_data_start_dict(status);
	for (r = 0; r < HTTP_ST__COUNT; r++) {
		char key[16];
		int code = http_slot_status(r);

		if (code != 0)
			snprintf(key, sizeof(key), "%d", code);
		else
			snprintf(key, sizeof(key), "other");
		rte_tel_data_add_dict_u64(status, key, SUM(s->http_stats.by_status[r]));
	}
	rte_tel_data_add_dict_container(d, "requests_by_status_reqs", status, 0);
	rte_tel_data_add_dict_u64(d, "mbufs_in_use_mbufs",
			rte_mempool_in_use_count(ew->pool));
	rte_tel_data_add_dict_u64(d, "mbufs_total_mbufs", ew->pool->size);
	rte_tel_data_add_dict_int(d, "link_up", LOAD(ew->shards[0].link_up));
	rte_tel_data_add_dict_u64(d, "link_downs_count", LOAD(ew->shards[0].link_downs));
	rte_tel_data_add_dict_u64(d, "link_ups_count", LOAD(ew->shards[0].link_ups));
	return 0;
}

/* The ethdev's own statistics and extended statistics, by their names. */
static int
add_ethdev_stats(struct rte_tel_data *d, uint16_t port)
{
	struct rte_eth_xstat_name *names = NULL;
	struct rte_eth_xstat *values = NULL;
	struct rte_tel_data *xd;
	struct rte_eth_stats st;
	int n, i;

	if (rte_eth_stats_get(port, &st) == 0) {
		rte_tel_data_add_dict_u64(d, "eth_rx_pkts", st.ipackets);
		rte_tel_data_add_dict_u64(d, "eth_tx_pkts", st.opackets);
		rte_tel_data_add_dict_u64(d, "eth_rx_bytes", st.ibytes);
		rte_tel_data_add_dict_u64(d, "eth_tx_bytes", st.obytes);
		rte_tel_data_add_dict_u64(d, "eth_rx_missed_pkts", st.imissed);
		rte_tel_data_add_dict_u64(d, "eth_rx_errors_pkts", st.ierrors);
		rte_tel_data_add_dict_u64(d, "eth_tx_errors_pkts", st.oerrors);
		rte_tel_data_add_dict_u64(d, "eth_rx_nombuf_pkts", st.rx_nombuf);
	}
	n = rte_eth_xstats_get_names(port, NULL, 0);
	xd = rte_tel_data_alloc();
	if (xd == NULL)
		return -ENOMEM;
	rte_tel_data_start_dict(xd);
	if (n > 0) {
		names = calloc((size_t)n, sizeof(*names));
		values = calloc((size_t)n, sizeof(*values));
	}
	if (names != NULL && values != NULL &&
			rte_eth_xstats_get_names(port, names, n) == n &&
			rte_eth_xstats_get(port, values, n) == n)
		/* A telemetry dict holds 256 entries: a big NIC's first. */
		for (i = 0; i < n && i < RTE_TEL_MAX_DICT_ENTRIES; i++)
			rte_tel_data_add_dict_u64(xd, names[values[i].id].name,
					values[i].value);
	free(names);
	free(values);
	rte_tel_data_add_dict_container(d, "xstats", xd, 0);
	return 0;
}

/* Link state of a port, without waiting for it. */
static void
add_link(struct rte_tel_data *d, uint16_t port)
{
	struct rte_eth_link link;

	if (rte_eth_link_get_nowait(port, &link) != 0) {
		rte_tel_data_add_dict_string(d, "link", "unknown");
		return;
	}
	rte_tel_data_add_dict_string(d, "link", link.link_status ? "up" : "down");
	rte_tel_data_add_dict_u64(d, "link_speed_mbps", link.link_speed);
	rte_tel_data_add_dict_string(d, "link_duplex", link.link_duplex ?
			"full" : "half");
}

/* What the shards' stacks received, sent and dropped on port i; drops by
 * reason only for the reasons seen, to keep the reply short; the live
 * entries of its neighbour caches (the shards' clock: TSC milliseconds). */
static int
add_port_counters(struct rte_tel_data *d, uint16_t i)
{
	const struct ewykd_port *p = &ew->ports[i];
	uint64_t now = rte_get_tsc_cycles() / (rte_get_tsc_hz() / 1000);
	struct rte_tel_data *drops = rte_tel_data_alloc();
	uint64_t total = 0;
	unsigned int r;

	if (drops == NULL)
		return -ENOMEM;
	rte_tel_data_add_dict_u64(d, "arp_entries", arp_cache_count(p->arp, now));
	rte_tel_data_add_dict_u64(d, "nd_entries", p->nd != NULL ?
			arp_cache_count(&p->nd->cache, now) : 0);
	rte_tel_data_add_dict_u64(d, "rx_pkts", SUM(s->net_stats.port[i].rx_pkts));
	rte_tel_data_add_dict_u64(d, "rx_bytes", SUM(s->net_stats.port[i].rx_bytes));
	rte_tel_data_add_dict_u64(d, "tx_pkts", SUM(s->net_stats.port[i].tx_pkts));
	rte_tel_data_add_dict_u64(d, "tx_bytes", SUM(s->net_stats.port[i].tx_bytes));
	rte_tel_data_start_dict(drops);
	for (r = 1; r < NET_DROP__COUNT; r++) {
		uint64_t v = SUM(s->net_stats.port[i].drop[r]);

		total += v;
		if (v != 0)
			rte_tel_data_add_dict_u64(drops, net_drop_name(r), v);
	}
	rte_tel_data_add_dict_u64(d, "drop_pkts", total);
	rte_tel_data_add_dict_container(d, "drop_by_reason_pkts", drops, 0);
	return 0;
}

/* Per port, "port_<ethdev id>": what it is, its link, what the stack saw
 * on it, what the device counted. Parameter: one ethdev port id (a port
 * ewykd does not serve answers an empty dict; what is not a number, an
 * error). */
static int
tel_ports(const char *cmd __rte_unused, const char *params,
		struct rte_tel_data *d)
{
	unsigned long only = ULONG_MAX;
	uint16_t i;
	int rc;

	if (params != NULL && *params != '\0') {
		char *end;

		errno = 0;
		only = strtoul(params, &end, 10);
		if (*end != '\0' || errno != 0 || only >= RTE_MAX_ETHPORTS)
			return -EINVAL;
	}
	rte_tel_data_start_dict(d);
	for (i = 0; i < ew->nb_ports; i++) {
		uint16_t id = ew->ports[i].id;
		struct rte_tel_data *pd;
		char key[16];

		if (only != ULONG_MAX && only != id)
			continue;
		pd = rte_tel_data_alloc();
		if (pd == NULL)
			return -ENOMEM;
		rte_tel_data_start_dict(pd);
		add_port_identity(pd, i);
		add_link(pd, id);
		rc = add_port_counters(pd, i);
		if (rc == 0)
			rc = add_ethdev_stats(pd, id);
		snprintf(key, sizeof(key), "port_%u", id);
		rte_tel_data_add_dict_container(d, key, pd, 0);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* /ewyk/tcp: every TCP counter with its unit, and the gauges of the
 * connections and their memory. */
static const struct shard_sum tcp_sums[] = {
#define TCP_COUNTER_SUM(n) SHARD_SUM(#n "_count", net_stats.tcp.n),
	TCP_COUNTERS(TCP_COUNTER_SUM)
#undef TCP_COUNTER_SUM
	SHARD_SUM("open_conns", net_stats.tcp_conns_open),
	SHARD_SUM("open_conns_ip6", net_stats.tcp_conns_open6),
	SHARD_SUM("syn_received_conns", net_stats.tcp_syn_recv),
	SHARD_SUM("time_wait_conns", net_stats.tcp_time_wait),
	SHARD_SUM("send_queue_mbufs", net_stats.tcp_sndq_mbufs),
	SHARD_SUM("receive_queue_mbufs", net_stats.tcp_rcvq_mbufs),
	SHARD_SUM("receive_buffer_bytes", net_stats.tcp_rcv_buf_bytes),
	SHARD_SUM("rwnd_limited_us", net_stats.tcp_rwnd_limited_us),
	SHARD_SUM("zero_window_us", net_stats.tcp_zero_window_us),
	/* Connections' send-side blocks (the send queue's chain and the
	 * scoreboard's tree): made, and held by connections. */
	SHARD_SUM("conn_rings_made_count", net_stats.tcp_bufs_made),
	SHARD_SUM("conn_rings_used_count", net_stats.tcp_bufs_used),
	/* Send queues' chunks of mbuf pointers (1 KiB): made, and held. */
	SHARD_SUM("send_queue_chunks_made_count",
			net_stats.tcp_sndq_chunks_made),
	SHARD_SUM("send_queue_chunks_used_count",
			net_stats.tcp_sndq_chunks_used),
	/* Scoreboards' entries (80 bytes): made, and in use. */
	SHARD_SUM("scoreboard_entries_made_count",
			net_stats.tcp_sb_entries_made),
	SHARD_SUM("scoreboard_entries_used_count",
			net_stats.tcp_sb_entries_used),
	/* Blocks of static files' writes whose mbufs point into the file
	 * (64 bytes): made, and in use while any of those mbufs is. */
	SHARD_SUM("zero_copy_refs_made_count", net_stats.tcp_ext_refs_made),
	SHARD_SUM("zero_copy_refs_used_count", net_stats.tcp_ext_refs_used),
	/* Receive queues' blocks, chunks and runs made (their peak). */
	SHARD_SUM("receive_queue_memory_bytes", net_stats.tcp_rcvq_mem_bytes),
};

/* netstat -s in telemetry: every TCP counter, summed, with its unit. */
static int
tel_tcp(const char *cmd __rte_unused, const char *params __rte_unused,
		struct rte_tel_data *d)
{
	struct rte_tel_data *drops;
	unsigned int r;

	rte_tel_data_start_dict(d);
	add_sums(d, tcp_sums, RTE_DIM(tcp_sums));
	drops = rte_tel_data_alloc();
	if (drops == NULL)
		return -ENOMEM;
	rte_tel_data_start_dict(drops);
	for (r = 1; r < NET_DROP__COUNT; r++)
		if (strncmp(net_drop_name(r), "tcp_", 4) == 0)
			rte_tel_data_add_dict_u64(drops, net_drop_name(r) + 4,
					SUM(s->net_stats.drop[r]));
	rte_tel_data_add_dict_container(d, "drop_by_reason_pkts", drops, 0);
	return 0;
}

/* One dict per shard, "shard_N", each filled by fill(). */
static int
per_shard(struct rte_tel_data *d,
		void (*fill)(struct rte_tel_data *sd, struct shard *s))
{
	uint16_t i;

	rte_tel_data_start_dict(d);
	for (i = 0; i < ew->nb_shards; i++) {
		struct rte_tel_data *sd = rte_tel_data_alloc();
		char key[16];

		if (sd == NULL)
			return -ENOMEM;
		rte_tel_data_start_dict(sd);
		fill(sd, &ew->shards[i]);
		snprintf(key, sizeof(key), "shard_%u", i);
		rte_tel_data_add_dict_container(d, key, sd, 0);
	}
	return 0;
}

static void
fill_shard(struct rte_tel_data *sd, struct shard *s)
{
	rte_tel_data_add_dict_int(sd, "lcore", (int)LOAD(s->lcore));
	rte_tel_data_add_dict_int(sd, "queue", s->queue);
	rte_tel_data_add_dict_u64(sd, "rx_pkts", LOAD(s->net_stats.rx_pkts));
	rte_tel_data_add_dict_u64(sd, "tx_pkts", LOAD(s->net_stats.tx_pkts));
	rte_tel_data_add_dict_u64(sd, "open_conns", LOAD(s->net_stats.tcp_conns_open));
	rte_tel_data_add_dict_u64(sd, "total_conns",
			LOAD(s->net_stats.tcp.passive_opens));
	rte_tel_data_add_dict_u64(sd, "requests_reqs", LOAD(s->http_stats.requests));
	rte_tel_data_add_dict_u64(sd, "polls_count", LOAD(s->stats.polls));
	rte_tel_data_add_dict_u64(sd, "busy_polls_count", LOAD(s->stats.busy_polls));
	rte_tel_data_add_dict_u64(sd, "idle_sleeps_count", LOAD(s->stats.idle_sleeps));
}

static int
tel_shards(const char *cmd __rte_unused, const char *params __rte_unused,
		struct rte_tel_data *d)
{
	return per_shard(d, fill_shard);
}

/* A shard's counters of route rt (its id has a slot on every shard). */
static const struct serve_route_stats *
route_stats(const struct shard *s, const struct http_route *rt)
{
	return &serve_stats(s->serve)->routes[rt->id];
}

/* Requests of one shard that the route of path took. */
static uint64_t
route_reqs(struct shard *s, const char *path)
{
	const struct http_route *rt = http_route_find(&ew->router, path,
			(uint32_t)strlen(path));

	return rt != NULL ? LOAD(route_stats(s, rt)->lat.count) : 0;
}

/* The shard's fibers: the pool's stacks, and the waits of parked ones. */
static void
fill_fibers(struct rte_tel_data *sd, const struct shard *s)
{
	const struct serve_fiber_stats *fb = &serve_stats(s->serve)->fib;
	struct ewyk_fiber_pool *pool = serve_fibers(s->serve);
	struct ewyk_fiber_pool_stats ps = { 0 };

	if (pool != NULL)
		ewyk_fiber_pool_stats(pool, &ps);
	rte_tel_data_add_dict_u64(sd, "fiber_stacks_count", ps.stacks);
	rte_tel_data_add_dict_u64(sd, "fibers_in_use_count", ps.in_use);
	rte_tel_data_add_dict_u64(sd, "fibers_peak_count", ps.peak);
	rte_tel_data_add_dict_u64(sd, "fibers_started_count", ps.started);
	rte_tel_data_add_dict_u64(sd, "fibers_finished_count", ps.finished);
	rte_tel_data_add_dict_u64(sd, "fiber_switches_count", ps.switches);
	rte_tel_data_add_dict_u64(sd, "fibers_waiting_count", LOAD(fb->waiting));
	rte_tel_data_add_dict_u64(sd, "fiber_parks_count", LOAD(fb->parks));
	rte_tel_data_add_dict_u64(sd, "fiber_wakes_count", LOAD(fb->wakes));
	rte_tel_data_add_dict_u64(sd, "fiber_timeouts_count", LOAD(fb->timeouts));
	rte_tel_data_add_dict_u64(sd, "fibers_cancelled_count", LOAD(fb->cancelled));
	rte_tel_data_add_dict_u64(sd, "fiber_no_stack_count", LOAD(fb->no_stack));
}

static void
fill_strategy(struct rte_tel_data *sd, struct shard *s)
{
	const struct serve_stats *sv = serve_stats(s->serve);
	struct ewyk_strategy_stats st;

	ewyk_strategy_stats(serve_strategy(s->serve), &st);
	rte_tel_data_add_dict_string(sd, "mode", ewyk_mode_name(st.mode));
	rte_tel_data_add_dict_u64(sd, "pc_tasks", st.pc);
	rte_tel_data_add_dict_u64(sd, "pic_tasks", st.pic);
	rte_tel_data_add_dict_u64(sd, "pec_tasks", st.pec);
	rte_tel_data_add_dict_u64(sd, "epc_tasks", st.epc);
	rte_tel_data_add_dict_u64(sd, "fiber_tasks", st.fiber);
	rte_tel_data_add_dict_u64(sd, "fiber_fallback_tasks", st.fiber_fallback);
	fill_fibers(sd, s);
	rte_tel_data_add_dict_u64(sd, "failed_tasks", st.failed);
	rte_tel_data_add_dict_u64(sd, "rejected_tasks", st.rejected);
	rte_tel_data_add_dict_u64(sd, "steals_count", st.stolen);
	rte_tel_data_add_dict_u64(sd, "watched_tasks", st.watched);
	rte_tel_data_add_dict_u64(sd, "completions_count", LOAD(sv->completions));
	rte_tel_data_add_dict_u64(sd, "stale_answers_count", LOAD(sv->stale));
	rte_tel_data_add_dict_u64(sd, "overloaded_reqs", LOAD(sv->overloaded));
	rte_tel_data_add_dict_u64(sd, "deferred_reqs", LOAD(sv->deferred));
	/* --tls-offload auto: the pool's CPUs' room, as the main lcore last
	 * read it, and the handshakes kept inline for want of it. */
	rte_tel_data_add_dict_int(sd, "helper_cpu_room",
			atomic_load_explicit(&ew->cpu_room.spare,
			memory_order_relaxed));
	rte_tel_data_add_dict_u64(sd, "helper_cpu_others_pct",
			LOAD(ew->cpu_room.others_pct));
	rte_tel_data_add_dict_u64(sd, "tls_inline_no_room_count",
			LOAD(sv->tls_inline.inlined));
	rte_tel_data_add_dict_u64(sd, "tls_spilled_no_room_count",
			LOAD(sv->tls_inline.spilled));
	rte_tel_data_add_dict_u64(sd, "delay_reqs", route_reqs(s, "/delay"));
	rte_tel_data_add_dict_u64(sd, "blocking_delay_reqs",
			route_reqs(s, "/blocking-delay"));
	rte_tel_data_add_dict_u64(sd, "spin_reqs", route_reqs(s, "/spin"));
	rte_tel_data_add_dict_u64(sd, "either_reqs", route_reqs(s, "/either"));
	rte_tel_data_add_dict_int(sd, "owner_lcore", (int)LOAD(s->lcore));
	rte_tel_data_add_dict_string(sd, "state", st.state == 0 ? "idle" :
			st.state == 1 ? "producing" : "reproducing");
}

/* /ewyk/reload: as SIGHUP; done on the main lcore's next look. */
static int
tel_reload(const char *cmd __rte_unused, const char *params __rte_unused,
		struct rte_tel_data *d)
{
	reload_ask();
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "reload", "asked");
	return 0;
}

/* /ewyk/strategy[,MODE]: with a mode, switch every shard to it first. */
static int
tel_strategy(const char *cmd __rte_unused, const char *params,
		struct rte_tel_data *d)
{
	enum ewyk_mode mode;
	uint16_t i;

	if (params != NULL && *params != '\0') {
		if (ewyk_mode_parse(params, &mode) != 0)
			return -EINVAL;
		for (i = 0; i < ew->nb_shards; i++)
			ewyk_strategy_set_mode(serve_strategy(ew->shards[i].serve),
					mode);
	}
	return per_shard(d, fill_strategy);
}

static int
tel_reserved(const char *cmd __rte_unused, const char *params __rte_unused,
		struct rte_tel_data *d)
{
	struct ewyk_reserved_stats rs = { 0 };
	struct ewyk_bpool_stats bs = { 0 };

	if (ew->reserved != NULL)
		ewyk_reserved_stats(ew->reserved, &rs);
	if (ew->bpool != NULL)
		ewyk_bpool_stats(ew->bpool, &bs);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_int(d, "size_lcores", (int)rs.size);
	rte_tel_data_add_dict_int(d, "spare_lcores", ew->cfg.reserved);
	rte_tel_data_add_dict_int(d, "spinning_lcores", (int)rs.spinning);
	rte_tel_data_add_dict_int(d, "parked_lcores", (int)rs.parked);
	rte_tel_data_add_dict_u64(d, "claims_won_count", rs.claims_won);
	rte_tel_data_add_dict_u64(d, "claims_missed_count", rs.claims_missed);
	rte_tel_data_add_dict_u64(d, "claim_races_count", rs.claim_races);
	rte_tel_data_add_dict_int(d, "blocking_threads", (int)bs.threads);
	rte_tel_data_add_dict_int(d, "blocking_idle_threads", (int)bs.idle);
	rte_tel_data_add_dict_int(d, "blocking_queued_tasks", (int)bs.queued);
	rte_tel_data_add_dict_u64(d, "blocking_executed_tasks", bs.executed);
	rte_tel_data_add_dict_u64(d, "blocking_rejected_tasks", bs.rejected);
	rte_tel_data_add_dict_u64(d, "blocking_reaped_threads", bs.reaped);
	return 0;
}

/* A dict of one counter array summed over shards, keyed by name(i). */
static struct rte_tel_data *
counter_dict(size_t offset, unsigned int n, const char *(*name)(unsigned int))
{
	struct rte_tel_data *c = rte_tel_data_alloc();
	unsigned int i;
	uint16_t k;

	if (c == NULL)
		return NULL;
	rte_tel_data_start_dict(c);
	for (i = 0; i < n; i++) {
		uint64_t t = 0;

		for (k = 0; k < ew->nb_shards; k++)
			t += LOAD(((const uint64_t *)((const char *)
					&ew->shards[k].http_stats + offset))[i]);
		rte_tel_data_add_dict_u64(c, name(i), t);
	}
	return c;
}

static const char *
status_name(unsigned int slot)
{
	static char keys[HTTP_ST__COUNT][8];
	int code = http_slot_status(slot);

	snprintf(keys[slot], sizeof(keys[slot]), code ? "%d" : "other", code);
	return keys[slot];
}

static const char *
method_name(unsigned int m)
{
	return http_method_name(m);
}

static void
add_counters(struct rte_tel_data *d, const char *key, size_t offset,
		unsigned int n, const char *(*name)(unsigned int))
{
	struct rte_tel_data *c = counter_dict(offset, n, name);

	if (c != NULL)
		rte_tel_data_add_dict_container(d, key, c, 0);
}

/* "/v1/state/" -> "v1_state": keys are [A-Za-z0-9_]; "/" -> "root". */
static void
key_part(char *out, size_t cap, const char *path)
{
	size_t j;

	snprintf(out, cap, "%s", path[0] == '/' ? path + 1 : path);
	for (j = 0; out[j] != '\0'; j++)
		if (!((out[j] >= 'a' && out[j] <= 'z') ||
				(out[j] >= 'A' && out[j] <= 'Z') ||
				(out[j] >= '0' && out[j] <= '9')))
			out[j] = '_';
	while (j > 0 && out[j - 1] == '_')
		out[--j] = '\0';
	if (j == 0)	/* "/": the static files */
		snprintf(out, cap, "root");
}

/* One route: requests, 5xx answers, and latency percentiles from the
 * request parsed to its answer back on its shard, over all shards.
 * Every site's as "route_PATH", a site's own as "site_SITE_route_PATH". */
static void
add_route(struct rte_tel_data *d, const struct http_route *rt,
		const char *site)
{
	struct rte_tel_data *rd = rte_tel_data_alloc();
	struct lat_hist h = { 0 };
	uint64_t errors = 0;
	/* Parts cut short enough for the key to hold both. */
	char key[RTE_TEL_MAX_STRING_LEN], p[64], sk[40];
	uint16_t k;

	if (rd == NULL)
		return;
	for (k = 0; k < ew->nb_shards; k++) {
		const struct serve_route_stats *rs = route_stats(&ew->shards[k], rt);

		lat_merge(&h, &rs->lat);
		errors += LOAD(rs->errors);
	}
	rte_tel_data_start_dict(rd);
	rte_tel_data_add_dict_string(rd, "path", rt->path);
	rte_tel_data_add_dict_string(rd, "match", rt->match ==
			EWYK_MATCH_PREFIX ? "prefix" : "exact");
	rte_tel_data_add_dict_string(rd, "site", site);
	rte_tel_data_add_dict_u64(rd, "requests_reqs", h.count);
	rte_tel_data_add_dict_u64(rd, "server_errors_reqs", errors);
	rte_tel_data_add_dict_u64(rd, "p50_ns", lat_percentile(&h, 0.50));
	rte_tel_data_add_dict_u64(rd, "p90_ns", lat_percentile(&h, 0.90));
	rte_tel_data_add_dict_u64(rd, "p99_ns", lat_percentile(&h, 0.99));
	rte_tel_data_add_dict_u64(rd, "max_ns", h.max_ns);
	key_part(p, sizeof(p), rt->path);
	if (site[0] == '\0') {
		snprintf(key, sizeof(key), "route_%s", p);
	} else {
		key_part(sk, sizeof(sk), site);
		snprintf(key, sizeof(key), "site_%s_route_%s", sk, p);
	}
	rte_tel_data_add_dict_container(d, key, rd, 0);
}

/* Every route: the shared router's, then each site's own. */
static void
add_routes(struct rte_tel_data *d, uint32_t first, uint32_t count)
{
	uint32_t i, j, n = 0;

	for (i = 0; i < ew->router.n; i++, n++)
		if (n >= first && n - first < count)
			add_route(d, &ew->router.routes[i], "");
	for (i = 0; i < ew->sites.n; i++)
		for (j = 0; j < ew->sites.sites[i].router.n; j++, n++)
			if (n >= first && n - first < count)
				add_route(d,
					&ew->sites.sites[i].router.routes[j],
					ew->sites.sites[i].name);
}

static uint32_t
routes_total(void)
{
	uint32_t i, n = ew->router.n;

	for (i = 0; i < ew->sites.n; i++)
		n += ew->sites.sites[i].router.n;
	return n;
}

/* /ewyk/routes,PAGE: the routes' figures, ROUTES_PER_PAGE at a time (a
 * reply holds 16 KiB; /ewyk/http keeps the first page). */
static int
tel_routes(const char *cmd __rte_unused, const char *params,
		struct rte_tel_data *d)
{
	uint32_t total = routes_total(), page = 0,
		pages = (total + ROUTES_PER_PAGE - 1) / ROUTES_PER_PAGE;
	char *end;

	if (params != NULL && *params != '\0') {
		unsigned long v = strtoul(params, &end, 10);

		if (*end != '\0' || params[0] < '0' || params[0] > '9' ||
				(v >= pages && v != 0))
			return -EINVAL;
		page = (uint32_t)v;
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "routes_total", total);
	rte_tel_data_add_dict_u64(d, "page", page);
	rte_tel_data_add_dict_u64(d, "pages", pages);
	add_routes(d, page * ROUTES_PER_PAGE, ROUTES_PER_PAGE);
	return 0;
}

/* Counters of the shards' request runtimes (struct serve_stats), summed. */
struct serve_sum {
	const char *key;
	size_t off;
};
#define SERVE_SUM(key, field) { key, offsetof(struct serve_stats, field) }

static void
add_serve_sums(struct rte_tel_data *d, const struct serve_sum *t, size_t n)
{
	size_t i;
	uint16_t k;

	for (i = 0; i < n; i++) {
		uint64_t v = 0;

		for (k = 0; k < ew->nb_shards; k++)
			v += __atomic_load_n((const uint64_t *)(const void *)
					((const char *)serve_stats(
					ew->shards[k].serve) + t[i].off),
					__ATOMIC_RELAXED);
		rte_tel_data_add_dict_u64(d, t[i].key, v);
	}
}

/* /ewyk/http's: the routes' limits per client address ([route]
 * limit-*), and the answers gzipped for routes with compress = on. */
static const struct serve_sum http_serve_sums[] = {
	SERVE_SUM("limit_rate_refused_reqs", limits.rate_refused),
	SERVE_SUM("limit_conns_refused_reqs", limits.conns_refused),
	SERVE_SUM("limit_evicted_count", limits.evicted),
	SERVE_SUM("limit_untracked_reqs", limits.untracked),
	SERVE_SUM("compressed_answers_count", compress.answers),
	SERVE_SUM("compress_in_bytes", compress.in_bytes),
	SERVE_SUM("compress_out_bytes", compress.out_bytes),
	SERVE_SUM("compress_busy_count", compress.busy),
};

/* HTTP: by protocol, method and status; connections, HTTP/2 streams and
 * errors by kind; each route with its latency. */
/* /ewyk/http's plain sums; the rest of the reply is derived. */
static const struct shard_sum http_sums[] = {
	SHARD_SUM("accepted_conns", http_stats.conns_accepted),
	SHARD_SUM("http2_conns", http_stats.h2_conns),
	SHARD_SUM("refused_conns", http_stats.conns_refused),
	SHARD_SUM("body_out_bytes", http_stats.body_bytes_out),
	/* HTTP/2's memory: blocks handed out, of them new from the heap
	 * (growth: flat once warm), held, and the large ones. */
	SHARD_SUM("h2_mem_allocs_count", http_stats.mem_allocs),
	SHARD_SUM("h2_mem_grows_count", http_stats.mem_grows),
	SHARD_SUM("h2_mem_held_bytes", http_stats.mem_bytes),
	SHARD_SUM("h2_mem_huge_count", http_stats.mem_huge),
	/* HTTP/2's receive windows grown with the round trip, and the
	 * connections' the budget held back. */
	SHARD_SUM("h2_window_grows_count", http_stats.h2_window_grows),
	SHARD_SUM("h2_window_budget_limited_count",
			http_stats.h2_window_budget_limited),
	SHARD_SUM("chunked_body_errors_count", http_stats.body_errors),
	SHARD_SUM("head_timeouts_count", http_stats.head_timeouts),
	SHARD_SUM("idle_closes_count", http_stats.idle_closes),
	/* HTTP/1.1 connections idle long enough to give their state back. */
	SHARD_SUM("h1_idle_releases_count", http_stats.h1_releases),
	SHARD_SUM("pipeline_full_count", http_stats.pipeline_full),
	/* Bodies gathered whole past 4 KiB, in the shards' body buffers
	 * (--max-body, --body-buffers), and those refused. */
	SHARD_SUM("body_buffers_taken_count", http_stats.body_slots_taken),
	SHARD_SUM("body_buffers_short_count", http_stats.body_slots_short),
	SHARD_SUM("bodies_too_large_count", http_stats.bodies_too_large),
	SHARD_SUM("body_timeouts_count", http_stats.body_timeouts),
	SHARD_SUM("http2_streams_count", http_stats.h2_streams),
	SHARD_SUM("http2_resets_in_count", http_stats.h2_resets_in),
	SHARD_SUM("http2_reset_floods_count", http_stats.h2_reset_floods),
};

static int
tel_http(const char *cmd __rte_unused, const char *params __rte_unused,
		struct rte_tel_data *d)
{
	uint64_t all = SUM(s->http_stats.requests), h2 = SUM(s->http_stats.h2_requests);
	int64_t open = 0, released = 0;
	uint16_t k;

	for (k = 0; k < ew->nb_shards; k++) {
		open += (int64_t)LOAD(ew->shards[k].http_stats.h2_streams_open);
		released += (int64_t)LOAD(ew->shards[k].http_stats.h1_released);
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "requests_reqs", all);
	rte_tel_data_add_dict_u64(d, "http1_reqs", all - h2);
	rte_tel_data_add_dict_u64(d, "http2_reqs", h2);
	add_sums(d, http_sums, RTE_DIM(http_sums));
	add_serve_sums(d, http_serve_sums, RTE_DIM(http_serve_sums));
	rte_tel_data_add_dict_u64(d, "compress_streams",
			SUM(serve_stats(s->serve)->compress.streams));
	if (ew->access_log != NULL) {
		const struct serve_log_stats *ls = serve_log_stats(ew->access_log);

		rte_tel_data_add_dict_u64(d, "access_log_lines_count",
				LOAD(ls->lines));
		rte_tel_data_add_dict_u64(d, "access_log_drops_count",
				LOAD(ls->drops));
		rte_tel_data_add_dict_u64(d, "access_log_write_errors_count",
				LOAD(ls->write_errors));
		rte_tel_data_add_dict_u64(d, "access_log_reopens_count",
				LOAD(ls->reopens));
	}
	rte_tel_data_add_dict_int(d, "h1_released_conns", (int)released);
	rte_tel_data_add_dict_int(d, "body_buffers_busy",
			(int)SUM(s->http_stats.body_slots_in_use));
	rte_tel_data_add_dict_int(d, "http2_open_streams", (int)open);
	add_counters(d, "by_status_reqs", offsetof(struct http_stats, by_status),
			HTTP_ST__COUNT, status_name);
	add_counters(d, "by_method_reqs", offsetof(struct http_stats, by_method),
			HTTP_METHODS, method_name);
	add_counters(d, "http2_resets_out_by_error", offsetof(struct http_stats,
			h2_resets_out), H2_ERROR_CODES, h2_error_name);
	add_counters(d, "http2_goaways_out_by_error", offsetof(struct http_stats,
			h2_goaways_out), H2_ERROR_CODES, h2_error_name);
	rte_tel_data_add_dict_u64(d, "routes_total", routes_total());
	add_routes(d, 0, ROUTES_PER_PAGE);
	return 0;
}

/* The store's conflating write-behind. */
static int
tel_conflate(const char *cmd __rte_unused, const char *params __rte_unused,
		struct rte_tel_data *d)
{
	struct store_stats st;

	if (ew->state == NULL)
		return -1;
	store_stats(ew->state, &st);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "state_dir", ew->cfg.state_dir[0] ?
			ew->cfg.state_dir : "");
	rte_tel_data_add_dict_u64(d, "keys_count", st.keys);
	rte_tel_data_add_dict_u64(d, "puts_count", st.puts);
	rte_tel_data_add_dict_u64(d, "gets_count", st.gets);
	rte_tel_data_add_dict_u64(d, "offers_count", st.offers);
	rte_tel_data_add_dict_u64(d, "superseded_count", st.superseded);
	rte_tel_data_add_dict_u64(d, "applied_count", st.applied);
	rte_tel_data_add_dict_u64(d, "persist_batches_count", st.batches);
	rte_tel_data_add_dict_u64(d, "fsyncs_count", st.fsyncs);
	rte_tel_data_add_dict_u64(d, "compactions_count", st.compactions);
	rte_tel_data_add_dict_u64(d, "journal_bytes", st.journal_bytes);
	rte_tel_data_add_dict_u64(d, "version_count", st.version);
	rte_tel_data_add_dict_u64(d, "persisted_version_count", st.persisted);
	/* Versions handed out that no batch has carried to disk yet. */
	rte_tel_data_add_dict_u64(d, "lag_versions", st.version > st.persisted &&
			ew->cfg.state_dir[0] ? st.version - st.persisted : 0);
	rte_tel_data_add_dict_u64(d, "journal_errors_count", st.journal_errors);
	/* The errno of the last failed write while it is not mended (0). */
	rte_tel_data_add_dict_int(d, "journal_errno", st.journal_errno);
	rte_tel_data_add_dict_u64(d, "recovered_records", st.recovered);
	rte_tel_data_add_dict_int(d, "torn_offset_bytes", (int)st.torn_offset);
	return 0;
}

static int
tel_lcores(const char *cmd __rte_unused, const char *params __rte_unused,
		struct rte_tel_data *d)
{
	uint64_t per_us = rte_get_tsc_hz() / 1000000;
	unsigned int lcore;
	uint16_t i;

	rte_tel_data_start_dict(d);
	RTE_LCORE_FOREACH(lcore) {
		struct rte_tel_data *ld = rte_tel_data_alloc();
		const char *role = lcore == rte_get_main_lcore() ? "main" : "reserved";
		int owns = -1;
		char key[16];

		if (ld == NULL)
			return -ENOMEM;
		for (i = 0; i < ew->nb_shards; i++)
			if (LOAD(ew->shards[i].lcore) == lcore) {
				owns = i;
				role = "shard_owner";
			}
		rte_tel_data_start_dict(ld);
		rte_tel_data_add_dict_string(ld, "role", role);
		rte_tel_data_add_dict_int(ld, "owns_shard", owns);
		rte_tel_data_add_dict_u64(ld, "producing_us",
				LOAD(ew->lcore_time[lcore].producing) / per_us);
		rte_tel_data_add_dict_u64(ld, "consuming_us",
				LOAD(ew->lcore_time[lcore].consuming) / per_us);
		rte_tel_data_add_dict_u64(ld, "idle_us", LOAD(ew->lcore_time[lcore].idle) / per_us);
		rte_tel_data_add_dict_u64(ld, "inline_tasks", LOAD(ew->lcore_time[lcore].tasks));
		snprintf(key, sizeof(key), "lcore_%u", lcore);
		rte_tel_data_add_dict_container(d, key, ld, 0);
	}
	return 0;
}

/* The handles of ewyk_fetch(), over all shards (the fetches themselves
 * are counted with the upstreams'). */
static int
tel_fetch_handles(struct rte_tel_data *d)
{
	struct rte_tel_data *fd = rte_tel_data_alloc();
	struct serve_fetch_stats sum = { 0 };
	uint16_t k;

	if (fd == NULL)
		return -1;
	for (k = 0; k < ew->nb_shards; k++) {
		const struct serve_fetch_stats *st =
			&serve_stats(ew->shards[k].serve)->fetch;

		sum.size += st->size;
		sum.in_use += LOAD(st->in_use);
		sum.peak += LOAD(st->peak);
		sum.started += LOAD(st->started);
		sum.queued += LOAD(st->queued);
		sum.left_open += LOAD(st->left_open);
	}
	rte_tel_data_start_dict(fd);
	rte_tel_data_add_dict_u64(fd, "size", sum.size);
	rte_tel_data_add_dict_u64(fd, "in_use", sum.in_use);
	rte_tel_data_add_dict_u64(fd, "peak", sum.peak);
	rte_tel_data_add_dict_u64(fd, "started_reqs", sum.started);
	rte_tel_data_add_dict_u64(fd, "queued_reqs", sum.queued);
	rte_tel_data_add_dict_u64(fd, "left_open_reqs", sum.left_open);
	return rte_tel_data_add_dict_container(d, "fetch_handles", fd, 0);
}

/* Each upstream, over all shards: connections (open, idle, opened),
 * requests, keep-alive reuse and retries, errors by kind, and latency
 * from the fetch started to the answer head. */
static int
tel_upstreams(const char *cmd __rte_unused, const char *params __rte_unused,
		struct rte_tel_data *d)
{
	const struct ewykd_config *cfg = &ew->cfg;
	uint16_t i, k;

	rte_tel_data_start_dict(d);
	for (i = 0; i < cfg->nb_upstreams; i++) {
		const struct upstream_target *t = &cfg->upstreams[i];
		struct rte_tel_data *ud = rte_tel_data_alloc();
		struct lat_hist h = { 0 };
		char addr[INET6_ADDRSTRLEN + 8], key[RTE_TEL_MAX_STRING_LEN];
		unsigned int e;

		if (ud == NULL)
			return -1;
		for (k = 0; k < ew->nb_shards; k++)
			lat_merge(&h, &serve_stats(ew->shards[k].serve)->upstream[i].lat);
		rte_tel_data_start_dict(ud);
		net_addr_format(&t->addr, t->port, addr, sizeof(addr));
		rte_tel_data_add_dict_string(ud, "addr", addr);
		/* The way to it: the port whose subnet holds it, or whose
		 * gateway leads to it. */
		rte_tel_data_add_dict_u64(ud, "port_id", ew->ports[
				options_port_to(cfg, &t->addr)].id);
#define UP_SUM(f) SUM(serve_stats(s->serve)->upstream[i].f)
		rte_tel_data_add_dict_u64(ud, "open_conns", UP_SUM(conns_open));
		rte_tel_data_add_dict_u64(ud, "idle_conns", UP_SUM(conns_idle));
		rte_tel_data_add_dict_u64(ud, "opened_conns", UP_SUM(opened));
		rte_tel_data_add_dict_u64(ud, "reused_reqs", UP_SUM(reused));
		rte_tel_data_add_dict_u64(ud, "requests_reqs", UP_SUM(requests));
		rte_tel_data_add_dict_u64(ud, "retries_reqs", UP_SUM(retries));
		rte_tel_data_add_dict_u64(ud, "answers_reqs", UP_SUM(answers));
		rte_tel_data_add_dict_u64(ud, "cut_reqs", UP_SUM(cut));
		rte_tel_data_add_dict_u64(ud, "evicted_conns", UP_SUM(evicted));
		/* A pool's server: its share, and how its failures took it out
		 * (per shard: each shard judges by what it sees). */
		rte_tel_data_add_dict_u64(ud, "weight", t->weight > 1 ? t->weight : 1);
		rte_tel_data_add_dict_u64(ud, "backup", t->backup);
		rte_tel_data_add_dict_u64(ud, "out_shards", UP_SUM(down));
		rte_tel_data_add_dict_u64(ud, "taken_out_count", UP_SUM(downs));
		rte_tel_data_add_dict_u64(ud, "failovers_reqs", UP_SUM(failovers));
		rte_tel_data_add_dict_u64(ud, "health_checks_count", UP_SUM(checks));
		rte_tel_data_add_dict_u64(ud, "health_checks_failed_count",
				UP_SUM(checks_failed));
		/* Containers nest one level: the kinds are keys of their own. */
		for (e = 0; e < UPSTREAM_ERR__COUNT; e++) {
			snprintf(key, sizeof(key), "error_%s_reqs",
					upstream_err_name(e));
			rte_tel_data_add_dict_u64(ud, key, UP_SUM(errors[e]));
		}
#undef UP_SUM
		rte_tel_data_add_dict_u64(ud, "p50_ns", lat_percentile(&h, 0.50));
		rte_tel_data_add_dict_u64(ud, "p90_ns", lat_percentile(&h, 0.90));
		rte_tel_data_add_dict_u64(ud, "p99_ns", lat_percentile(&h, 0.99));
		rte_tel_data_add_dict_u64(ud, "max_ns", h.max_ns);
		/* The Nth server of a pool of several: upstream_NAME_N. */
		if ((i + 1 < cfg->nb_upstreams && strcmp(cfg->upstreams[i + 1].name,
				t->name) == 0) || (i > 0 && strcmp(
				cfg->upstreams[i - 1].name, t->name) == 0)) {
			uint16_t first = i;

			while (first > 0 && strcmp(cfg->upstreams[first - 1].name,
					t->name) == 0)
				first--;
			snprintf(key, sizeof(key), "upstream_%s_%u", t->name,
					i - first);
		} else {
			snprintf(key, sizeof(key), "upstream_%s", t->name);
		}
		for (e = 0; key[e] != '\0'; e++)
			if (key[e] == '-')
				key[e] = '_';
		rte_tel_data_add_dict_container(d, key, ud, 0);
	}
	if (cfg->nb_upstreams > 0)
		return tel_fetch_handles(d);
	return 0;
}

/* A dict of per-shard TLS counters summed, n of them from offset. */
static void
add_tls_counters(struct rte_tel_data *d, const char *key, size_t offset,
		unsigned int n, const char *const *names)
{
	struct rte_tel_data *c = rte_tel_data_alloc();
	unsigned int i;
	uint16_t k;

	if (c == NULL)
		return;
	rte_tel_data_start_dict(c);
	for (i = 0; i < n; i++) {
		uint64_t t = 0;

		for (k = 0; k < ew->nb_shards; k++)
			t += LOAD(((const uint64_t *)((const char *)
					&ew->shards[k].tls_stats + offset))[i]);
		rte_tel_data_add_dict_u64(c, names[i], t);
	}
	rte_tel_data_add_dict_container(d, key, c, 0);
}

/* The certificates served, by their pair's index ("0" the default):
 * name, key type, expiry (seconds since the epoch, and left), stapling. */
static void
add_tls_certs(struct rte_tel_data *d, const struct tls_config_info *info)
{
	struct rte_tel_data *list = rte_tel_data_alloc();
	int64_t now = (int64_t)time(NULL), soonest = INT64_MAX;
	unsigned int i;

	if (list == NULL)
		return;
	rte_tel_data_start_dict(list);
	for (i = 0; i < info->n_certs; i++) {
		const struct tls_cert_info *c = &info->certs[i];
		struct rte_tel_data *one = rte_tel_data_alloc();
		char key[8];

		if (one == NULL)
			break;
		snprintf(key, sizeof(key), "%u", i);
		rte_tel_data_start_dict(one);
		rte_tel_data_add_dict_string(one, "name", c->name);
		rte_tel_data_add_dict_string(one, "key_type", c->key_type);
		rte_tel_data_add_dict_u64(one, "not_after_s", (uint64_t)c->not_after);
		rte_tel_data_add_dict_int(one, "expires_in_s",
				(int)RTE_MIN(c->not_after - now, (int64_t)INT_MAX));
		rte_tel_data_add_dict_int(one, "ocsp_stapled", c->ocsp);
		rte_tel_data_add_dict_container(list, key, one, 0);
		soonest = RTE_MIN(soonest, c->not_after);
	}
	rte_tel_data_add_dict_container(d, "certs", list, 0);
	rte_tel_data_add_dict_int(d, "cert_expires_in_s",
			(int)RTE_MIN(soonest - now, (int64_t)INT_MAX));
}

/* /ewyk/tls's plain sums over the shards' TLS counters. */
static const struct shard_sum tls_sums[] = {
	SHARD_SUM("accepted_conns", tls_stats.accepted),
	SHARD_SUM("refused_conns", tls_stats.refused),
	SHARD_SUM("handshakes_resumed_count", tls_stats.handshakes_resumed),
	SHARD_SUM("tls12_conns", tls_stats.tls12),
	SHARD_SUM("tls13_conns", tls_stats.tls13),
	SHARD_SUM("alpn_h2_conns", tls_stats.alpn_h2),
	SHARD_SUM("alpn_http11_conns", tls_stats.alpn_http11),
	SHARD_SUM("alpn_none_conns", tls_stats.alpn_none),
	SHARD_SUM("hs_steps_offloaded_count", tls_stats.hs_steps_offloaded),
	SHARD_SUM("hs_steps_inline_count", tls_stats.hs_steps_inline),
	SHARD_SUM("hs_staging_waits_count", tls_stats.hs_waits),
	SHARD_SUM("renegotiations_refused_count",
			tls_stats.renegotiations_refused),
	SHARD_SUM("close_notify_sent_count", tls_stats.close_notify_sent),
	SHARD_SUM("close_notify_received_count",
			tls_stats.close_notify_received),
	SHARD_SUM("records_in_count", tls_stats.records_in),
	SHARD_SUM("records_out_count", tls_stats.records_out),
	SHARD_SUM("records_held_count", tls_stats.records_held),
	SHARD_SUM("plaintext_in_bytes", tls_stats.bytes_in),
	SHARD_SUM("plaintext_out_bytes", tls_stats.bytes_out),
	SHARD_SUM("record_errors_count", tls_stats.errors),
	SHARD_SUM("credential_switches_count", tls_stats.gen_switches),
};

static int
tel_tls(const char *cmd __rte_unused, const char *params __rte_unused,
		struct rte_tel_data *d)
{
	struct tls_config_info info;
	struct tls_mem_stats mem;
	uint64_t full = SUM(s->tls_stats.handshakes_full);
	uint64_t cpu_ns = SUM(s->tls_stats.hs_cpu_ns), failed = 0;
	int k;

	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_int(d, "enabled", ew->tls != NULL);
	if (ew->tls == NULL)
		return 0;
	tls_config_info(ew->tls, &info);
	rte_tel_data_add_dict_int(d, "port", ew->cfg.tls_port);
	/* A telemetry string holds 128 bytes: the default is named. */
	rte_tel_data_add_dict_string(d, "priority", ew->cfg.tls_priority[0] ?
			info.priority : "default");
	add_tls_certs(d, &info);
	rte_tel_data_add_dict_u64(d, "generation", info.generation);
	rte_tel_data_add_dict_u64(d, "reloads_count", info.reloads);
	rte_tel_data_add_dict_u64(d, "reload_failures_count", info.reload_failures);
	rte_tel_data_add_dict_u64(d, "ticket_rotations_count", info.ticket_rotations);
	rte_tel_data_add_dict_u64(d, "ticket_key_age_s", info.ticket_key_age_s);
	add_sums(d, tls_sums, RTE_DIM(tls_sums));
	/* gauges of 32 bits */
	rte_tel_data_add_dict_u64(d, "open_conns", SUM(s->tls_stats.conns));
	rte_tel_data_add_dict_u64(d, "handshaking_conns",
			SUM(s->tls_stats.handshaking));
	rte_tel_data_add_dict_u64(d, "handshakes_full_count", full);
	for (k = 0; k < TLS_FAIL__COUNT; k++)
		failed += SUM(s->tls_stats.failed[k]);
	rte_tel_data_add_dict_u64(d, "handshakes_failed_count", failed);
	add_tls_counters(d, "handshakes_failed_by_reason",
			offsetof(struct tls_stats, failed), TLS_FAIL__COUNT,
			tls_fail_names);
	add_tls_counters(d, "cipher_conns", offsetof(struct tls_stats, cipher),
			TLS_CIPHER__COUNT, tls_cipher_names);
	rte_tel_data_add_dict_u64(d, "hs_cpu_us", cpu_ns / 1000);
	tls_mem_stats(&mem);
	rte_tel_data_add_dict_u64(d, "mem_cache_hits_count", mem.hits);
	rte_tel_data_add_dict_u64(d, "mem_cache_grows_count", mem.grows);
	rte_tel_data_add_dict_u64(d, "mem_cache_too_large_count", mem.too_large);
	rte_tel_data_add_dict_u64(d, "mem_cache_remote_frees_count", mem.remote_frees);
	rte_tel_data_add_dict_u64(d, "mem_cache_bytes", mem.bytes);
	return 0;
}

/* /ewyk/quic: the shards' QUIC endpoints and their HTTP/3. */
static const struct shard_sum quic_sums[] = {
	SHARD_SUM("dgrams_in_count", quic_stats.dgrams_in),
	SHARD_SUM("dgrams_out_count", quic_stats.dgrams_out),
	SHARD_SUM("in_bytes", quic_stats.bytes_in),
	SHARD_SUM("out_bytes", quic_stats.bytes_out),
	SHARD_SUM("dropped_count", quic_stats.dropped),
	SHARD_SUM("version_negotiations_count",
			quic_stats.version_negotiations),
	SHARD_SUM("retries_count", quic_stats.retries),
	SHARD_SUM("bad_tokens_count", quic_stats.bad_tokens),
	SHARD_SUM("new_tokens_count", quic_stats.new_tokens),
	SHARD_SUM("tokens_accepted_count", quic_stats.tokens_accepted),
	SHARD_SUM("accepted_conns", quic_stats.accepted),
	SHARD_SUM("refused_conns", quic_stats.refused),
	SHARD_SUM("handshakes_count", quic_stats.handshakes),
	SHARD_SUM("handshakes_failed_count", quic_stats.failed),
	SHARD_SUM("closed_conns", quic_stats.closed),
	SHARD_SUM("idle_timeouts_count", quic_stats.idle_timeouts),
	SHARD_SUM("handshake_timeouts_count", quic_stats.handshake_timeouts),
	SHARD_SUM("send_errors_count", quic_stats.send_errors),
	SHARD_SUM("requests_reqs", quic_stats.requests),
	SHARD_SUM("streams_reset_count", quic_stats.streams_reset),
	SHARD_SUM("h3_errors_count", quic_stats.h3_errors),
	SHARD_SUM("mem_refused_count", quic_stats.mem_refused),
	SHARD_SUM("mem_bytes", quic_stats.mem_bytes),
};

static int
tel_quic(const char *cmd __rte_unused, const char *params __rte_unused,
		struct rte_tel_data *d)
{
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_int(d, "enabled", ew->cfg.http3);
	rte_tel_data_add_dict_int(d, "port", ew->cfg.quic_port);
	add_sums(d, quic_sums, RTE_DIM(quic_sums));
	/* gauges of 32 bits */
	rte_tel_data_add_dict_u64(d, "open_conns", SUM(s->quic_stats.conns));
	rte_tel_data_add_dict_u64(d, "handshaking_conns",
			SUM(s->quic_stats.handshaking));
	rte_tel_data_add_dict_u64(d, "token_key_rotations_count",
			ew->quic_tokens != NULL ?
			quic_tokens_rotations(ew->quic_tokens) : 0);
	return 0;
}

static int
tel_tls_reload(const char *cmd __rte_unused, const char *params __rte_unused,
		struct rte_tel_data *d)
{
	char msg[TLS_ERR_LEN];
	int rc;

	rte_tel_data_start_dict(d);
	if (ew->tls == NULL) {
		rte_tel_data_add_dict_string(d, "result", "no TLS port");
		return 0;
	}
	rc = reload_request_wait(msg, sizeof(msg), 10000);
	rte_tel_data_add_dict_string(d, "result", rc == 0 ? "reloaded" :
			rc == -1 ? "refused" : "timeout");
	rte_tel_data_add_dict_string(d, "message", msg);
	return 0;
}

/* One table serves the registration and ewykd --help. A help text must
 * be shorter than RTE_TEL_MAX_STRING_LEN, or 22.11 refuses the command. */
static const struct {
	const char *name;
	telemetry_cb fn;
	const char *help;
} commands[] = {
	{ "/ewyk/info", tel_info, "ewykd version, configuration, shards and "
		"lcores. No parameters" },
	{ "/ewyk/reload", tel_reload, "Reload the static tree, as SIGHUP does "
		"(the log says how it went). No parameters" },
	{ "/ewyk/stats", tel_stats, "Packets by family, drops by reason, ARP, "
		"ND, ICMPv6, connections, requests by status, mbufs. No "
		"parameters" },
	{ "/ewyk/ports", tel_ports, "Per port: name, addresses, link, packets, "
		"bytes, drops by reason, the ethdev's stats and xstats. "
		"Parameter: a port id" },
	{ "/ewyk/tcp", tel_tcp, "TCP counters in the manner of netstat -s, "
		"drops by reason. No parameters" },
	{ "/ewyk/http", tel_http, "Requests by protocol, method, status; HTTP/2 "
		"streams, errors by kind; per route: requests, latency. No "
		"parameters" },
	{ "/ewyk/shards", tel_shards, "Per shard: lcore, queue, packets, "
		"connections, requests, polls. No parameters" },
	{ "/ewyk/strategy", tel_strategy, "Per shard: mode, pc/pic/pec/epc "
		"tasks, steals, completions. Parameter: a mode to switch to" },
	{ "/ewyk/reserved", tel_reserved, "Reserved lcores (spinning, parked, "
		"claims) and the blocking pool. No parameters" },
	{ "/ewyk/lcores", tel_lcores, "Per lcore: role, shard owned, time "
		"producing, consuming and idle, tasks run. No parameters" },
	{ "/ewyk/upstreams", tel_upstreams, "Per upstream: connections, "
		"requests, reuse, errors by kind, latency. No parameters" },
	{ "/ewyk/conflate", tel_conflate, "The store's write-behind: offers, "
		"superseded, applied, batches, fsyncs, lag. No parameters" },
	{ "/ewyk/tls", tel_tls, "TLS: certificates, expiry, handshakes, "
		"failures by reason, versions, ALPN, ciphers, reloads. No "
		"parameters" },
	{ "/ewyk/quic", tel_quic, "QUIC and HTTP/3 (--http3): datagrams, "
		"connections, handshakes, requests, drops" },
	{ "/ewyk/routes", tel_routes, "Per route: requests, 5xx, latency, "
		"ROUTES_PER_PAGE (32) a reply. Parameter: the page, from 0" },
	{ "/ewyk/tls_reload", tel_tls_reload, "Reads the TLS certificates and "
		"keys again, as SIGHUP does. No parameters" },
};

int
telemetry_register(const struct ewykd *e)
{
	size_t i;

	ew = e;
	for (i = 0; i < RTE_DIM(commands); i++)
		if (rte_telemetry_register_cmd(commands[i].name, commands[i].fn,
				commands[i].help) != 0) {
			fprintf(stderr, "ewykd: telemetry command %s refused\n",
					commands[i].name);
			return -1;
		}
	return 0;
}

void
telemetry_usage(FILE *f)
{
	size_t i;

	for (i = 0; i < RTE_DIM(commands); i++)
		fprintf(f, "  %-16s %s\n", commands[i].name, commands[i].help);
}
