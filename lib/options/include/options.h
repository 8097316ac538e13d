/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ewykd's configuration, its model and its parsing: one table serves the
 * command line, the INI file (--config, ini.c) and --help, so the three
 * never drift. A library, so that what the configuration describes grows
 * here and not in the process's code.
 */
#ifndef EWYK_OPTIONS_H
#define EWYK_OPTIONS_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ewyk_exec.h"
#include "ewyk_tls.h"
#include "http_upstream.h"
#include "net_addr.h"
#include "sites_conf.h"
#include "www.h"

enum idle_mode {
	IDLE_POLL,	/* spin: lowest latency, a full core per shard */
	IDLE_SLEEP,	/* back off to short sleeps when no packets come */
};

#define EWYKD_PLUGINS_MAX 8
#define EWYKD_TRUSTED_MAX 16		/* --trusted-forwarder */
#define EWYKD_CACHE_RULES_MAX 32	/* --cache-control */
#define EWYKD_CACHE_PREFIX_MAX 255
#define EWYKD_MIME_TYPES_MAX 64		/* --mime-type */
#define EWYKD_PORTS_MAX 4	/* the stack's NET_MAX_PORTS */

/* --tls-offload: where a full handshake runs. */
enum tls_offload {
	TLS_OFFLOAD_OFF,	/* inline where it arrives: a baseline */
	TLS_OFFLOAD_ON,		/* a helper always (reserved lcore, pool) */
	TLS_OFFLOAD_AUTO,	/* a helper while its CPUs have room */
};

struct ewykd_config {
	char config_file[PATH_MAX];
	/* The addresses of each port served: the Nth --ip is the Nth DPDK
	 * port's in port-id order from --port-id, and so is the Nth --ip6.
	 * A port has IPv4, IPv6 or both: there are as many ports as the
	 * longer list. */
	uint32_t ip[EWYKD_PORTS_MAX];	/* network order */
	uint8_t prefix[EWYKD_PORTS_MAX];
	uint16_t nb_ips;
	uint8_t ip6[EWYKD_PORTS_MAX][16];
	uint8_t prefix6[EWYKD_PORTS_MAX];
	uint16_t nb_ip6s;
	uint16_t nb_ports;	/* the larger of nb_ips and nb_ip6s */
	/* The Nth --gateway (--gateway6) is the Nth port's next hop for
	 * addresses off its link; 0 (all zeros): "none". */
	uint32_t gateway[EWYKD_PORTS_MAX];	/* network order */
	uint16_t nb_gateways;
	uint8_t gateway6[EWYKD_PORTS_MAX][16];
	uint16_t nb_gateway6s;
	bool ip_from_cli;	/* parsing: the command line's replace the file's */
	bool ip6_from_cli;
	bool gateway_from_cli;
	bool gateway6_from_cli;
	char www[PATH_MAX];	/* empty: no static files */
	uint64_t www_max_mb;
	/* "PREFIX=VALUE": Cache-Control of the files under PREFIX */
	char cache_control[EWYKD_CACHE_RULES_MAX][EWYKD_CACHE_PREFIX_MAX +
		WWW_CACHE_CONTROL_MAX + 2];
	uint16_t nb_cache_control;
	/* "EXT=TYPE": a media type before the mime.types file's */
	char mime_types[EWYKD_MIME_TYPES_MAX][MIME_EXT_MAX + MIME_TYPE_MAX + 2];
	uint16_t nb_mime_types;
	char mime_types_file[PATH_MAX];	/* empty: MIME_DEFAULT_FILE if there;
					 * "none": the built-in table */
	uint16_t port_id;
	uint16_t shards;	/* 0: one per worker lcore */
	uint16_t listen_port;
	uint16_t mtu;
	uint16_t rx_desc;
	uint16_t tx_desc;
	uint32_t mbufs;
	uint32_t max_conns;	/* per shard */
	uint32_t snd_buf;	/* bytes per connection, at first */
	uint32_t snd_buf_max;	/* autotuning's ceiling */
	uint32_t rto_min_ms;
	uint32_t time_wait_ms;
	uint32_t syn_backlog;	/* per shard */
	uint32_t challenge_ack_limit;	/* per second per shard; 0 = none */
	uint32_t invalid_ack_ms;	/* per connection; 0 = none */
	uint32_t arp_reply_limit;	/* per second per shard; 0 = none */
	uint32_t nd_reply_limit;	/* per second per shard; 0 = none */
	uint32_t max_time_wait;	/* per shard */
	uint32_t rcv_win;	/* largest receive window, bytes */
	uint32_t rcv_buf;	/* largest receive buffer, bytes; 0: none */
	uint32_t delack_ms;
	uint8_t tcp_cc;		/* enum tcp_cc_algo */
	bool tcp_pacing;	/* NewReno and CUBIC pace too */
	uint32_t keepalive_ms;	/* 0: off */
	uint32_t idle_timeout_ms;	/* 0: off */
	bool syncookies;
	bool sw_cksum;		/* compute TX checksums even if the NIC could */
	bool no_tso;		/* segment TCP ourselves even if the NIC could */
	enum ewyk_mode strategy;
	uint16_t reserved;	/* worker lcores beyond the shards' */
	bool reserved_set;
	uint32_t reserved_spin_us;	/* spin before parking */
	uint32_t blocking_threads;
	uint32_t blocking_queue;
	uint32_t fibers;	/* per shard; 0: fiber handlers run BLOCKING */
	uint32_t fiber_stack_kb;
	uint32_t stuck_ms;	/* relieve an owner inline this long; 0 = off */
	uint32_t handoff_us;	/* watched hand-off after; 0 = EPC as Jetty */
	bool handoff_us_set;	/* given: else chosen by the lcore layout */
	char state_dir[PATH_MAX];	/* the store's journal; empty: memory */
	uint32_t store_keys;
	uint32_t journal_max_mb;
	bool store_no_conflate;
	bool demo_routes;	/* --demo-routes */
	bool state_api;		/* --state-api */
	char state_api_token[128];	/* --state-api-token's, or "" */
	char state_api_token_file[PATH_MAX];	/* where it was read */
	char access_log[PATH_MAX];	/* --access-log FILE, "-", or "" */
	bool access_log_json;		/* --access-log-format json */
	uint32_t kv_keys;	/* /kv: keys of the in-memory store */
	uint16_t nb_plugins;
	char plugins[EWYKD_PLUGINS_MAX][PATH_MAX];	/* FILE.so[:ARG] */
	uint16_t nb_upstreams;
	uint16_t nb_cli_upstreams;	/* of them --upstream's; the rest are
					 * [upstream] pools' servers */
	struct upstream_target upstreams[UPSTREAM_MAX];	/* --upstream */
	/* --trusted-forwarder: clients (proxies in front) whose forwarded
	 * fields are passed on, ours after them */
	struct net_prefix trusted[EWYKD_TRUSTED_MAX];
	uint16_t nb_trusted;
	uint32_t upstream_conns;	/* per shard, all upstreams */
	uint32_t upstream_connect_ms;
	uint32_t upstream_timeout_ms;
	uint32_t upstream_idle_ms;
	uint32_t drain_ms;	/* SIGTERM: finish in-flight work this long */
	uint32_t header_timeout_ms;
	uint32_t keepalive_timeout_ms;
	uint32_t max_header_bytes;	/* an HTTP/1.1 request head (431) */
	uint32_t max_target;	/* a request target (414) */
	uint32_t max_body;	/* a body a plain handler takes whole (413) */
	uint32_t body_buffers;	/* per shard: such bodies past 4 KiB at once */
	enum idle_mode idle;
	uint32_t idle_sleep_us;
	/* TLS: pairs of --tls-cert and --tls-key, the Nth --tls-ocsp for
	 * the pair it follows. */
	uint16_t nb_tls_certs;
	uint16_t nb_tls_keys;
	char tls_cert[TLS_PAIRS_MAX][PATH_MAX];
	char tls_key[TLS_PAIRS_MAX][PATH_MAX];
	char tls_ocsp[TLS_PAIRS_MAX][PATH_MAX];	/* "" : none */
	uint16_t tls_port;	/* 0: 443 once a certificate is given */
	char tls_priority[1024];	/* "": TLS_PRIORITY_DEFAULT */
	uint32_t tls_handshake_timeout_ms;
	uint32_t tls_ticket_rotate_s;	/* 0: never */
	uint8_t tls_offload;	/* enum tls_offload */
	bool http3;		/* HTTP/3 over QUIC (needs a certificate) */
	uint16_t quic_port;	/* UDP; 0: --tls-port */
	uint32_t quic_conn_mem;		/* bytes, ngtcp2's and nghttp3's */
	uint32_t quic_retry_threshold;	/* handshakes under way per shard
					 * before Retry; 0: always */
	struct sites_conf sites;	/* [site] and [route] of the file */
	char eal_args[1024];	/* [eal] args= of the config file */
	bool check_only;	/* --check-config: check, print, start nothing */
};

#define OPT_EXIT_OK 1		/* --version was served */
#define OPT_EXIT_USAGE 2	/* bad option: exit status 2 */
#define OPT_EXIT_HELP 3		/* --help: print options_usage() */

void options_defaults(struct ewykd_config *cfg);
/* The certificate and key pairs of --tls-cert and of the sites: the
 * command line's first, then each site's in the file's order. */
unsigned int options_tls_pairs(const struct ewykd_config *cfg);
/* Gives back what parsing took (the sites and routes). */
void options_free(struct ewykd_config *cfg);
/* --help's list of ewykd's options. */
void options_usage(const char *prog);
/* Parses ewykd's own arguments (after "--"), loading --config first so the
 * command line overrides the file. Returns 0 (cfg->check_only with
 * --check-config), OPT_EXIT_OK, OPT_EXIT_HELP or OPT_EXIT_USAGE (the error
 * line is printed). */
int options_parse(struct ewykd_config *cfg, int argc, char **argv);
/* The configuration as a file ewykd reads back: [eal] args = eal_args,
 * then every option of [ewykd] with its value, those without one as
 * comments saying what that means, then the sites and routes. */
void options_write(const struct ewykd_config *cfg, const char *eal_args,
		FILE *f);
/* "A.B.C.D/N" of port i, for the log and telemetry ("" without IPv4). */
void options_format_ip(const struct ewykd_config *cfg, uint16_t i, char *buf,
		size_t len);
/* Its IPv6 address "ADDR/N" in RFC 5952's form ("" without IPv6). */
/* Whether port i has a gateway for the family (NET_AF_INET or
 * NET_AF_INET6). */
bool options_has_gateway(const struct ewykd_config *cfg, uint16_t i,
		uint8_t family);
/* Port i's gateway for the family, or "none". */
void options_format_gateway(const struct ewykd_config *cfg, uint16_t i,
		uint8_t family, char *buf, size_t len);
void options_format_ip6(const struct ewykd_config *cfg, uint16_t i, char *buf,
		size_t len);
/* The netmask (network order) of port i's --ip. */
uint32_t options_netmask(const struct ewykd_config *cfg, uint16_t i);
/* The port whose --ip subnet holds addr (network order), or -1. */
int options_ip_holding(const struct ewykd_config *cfg, uint32_t addr);
/* The port whose --ip subnet or --ip6 prefix holds a, or -1. */
int options_addr_holding(const struct ewykd_config *cfg, const struct net_addr *a);
/* The port an active open to a goes by: the one whose link holds it,
 * else the first with a gateway for its family (as lib/net's
 * net_route()); -1 when none does. */
int options_port_to(const struct ewykd_config *cfg, const struct net_addr *a);

#endif /* EWYK_OPTIONS_H */
