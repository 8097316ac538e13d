/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <rte_cfgfile.h>

#include "http_server.h"
#include "net_stack.h"
#include "options.h"

#define SECTION "ewykd"
#define EAL_SECTION "eal"
#define MAX_SECTIONS 16

typedef int (*opt_set_fn)(struct ewykd_config *cfg, const char *val,
		char *err, size_t errlen);

struct opt_def {
	const char *name;
	const char *arg;	/* metavariable; NULL for a flag */
	opt_set_fn set;
	const char *help;
};

static int
parse_u64(const char *val, uint64_t min, uint64_t max, uint64_t *out,
		char *err, size_t errlen)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(val, &end, 10);
	if (val[0] == '\0' || val[0] == '-' || *end != '\0' || errno != 0 ||
			v < min || v > max) {
		snprintf(err, errlen, "'%s' is not a number from %llu to %llu",
				val, (unsigned long long)min,
				(unsigned long long)max);
		return -1;
	}
	*out = v;
	return 0;
}

/* One setter per numeric field, generated: name, field, min, max. */
#define NUM_SETTER(fn, field, min, max) \
static int \
fn(struct ewykd_config *cfg, const char *val, char *err, size_t errlen) \
{ \
	uint64_t v; \
	if (parse_u64(val, min, max, &v, err, errlen) != 0) \
		return -1; \
	cfg->field = (__typeof__(cfg->field))v; \
	return 0; \
}

NUM_SETTER(set_www_max_mb, www_max_mb, 1, 65536)
NUM_SETTER(set_port_id, port_id, 0, 1023)
NUM_SETTER(set_shards, shards, 1, 128)
NUM_SETTER(set_listen_port, listen_port, 1, 65535)
NUM_SETTER(set_mtu, mtu, 576, 9000)
NUM_SETTER(set_rx_desc, rx_desc, 64, 16384)
NUM_SETTER(set_tx_desc, tx_desc, 64, 16384)
NUM_SETTER(set_mbufs, mbufs, 1024, 16777216)
NUM_SETTER(set_max_conns, max_conns, 16, 4194304)
NUM_SETTER(set_snd_buf, snd_buf, 32768, 16777216)
NUM_SETTER(set_rto_min_ms, rto_min_ms, 1, 60000)
NUM_SETTER(set_time_wait_ms, time_wait_ms, 0, 240000)
NUM_SETTER(set_idle_sleep_us, idle_sleep_us, 1, 100000)
NUM_SETTER(set_syn_backlog, syn_backlog, 1, 4194304)
NUM_SETTER(set_challenge_ack_limit, challenge_ack_limit, 0, 100000000)
NUM_SETTER(set_invalid_ack_ms, invalid_ack_ms, 0, 60000)
NUM_SETTER(set_arp_reply_limit, arp_reply_limit, 0, 100000000)
NUM_SETTER(set_nd_reply_limit, nd_reply_limit, 0, 100000000)
NUM_SETTER(set_max_time_wait, max_time_wait, 0, 4194304)
NUM_SETTER(set_rcv_win, rcv_win, 1024, 1 << 30)
NUM_SETTER(set_rcv_buf, rcv_buf, 0, 1 << 30)
NUM_SETTER(set_delack_ms, delack_ms, 0, 500)
NUM_SETTER(set_keepalive_ms, keepalive_ms, 0, 86400000)
NUM_SETTER(set_idle_timeout_ms, idle_timeout_ms, 0, 86400000)
NUM_SETTER(set_reserved_spin_us, reserved_spin_us, 0, 10000000)
NUM_SETTER(set_blocking_threads, blocking_threads, 1, 4096)
NUM_SETTER(set_blocking_queue, blocking_queue, 1, 1 << 20)
NUM_SETTER(set_stuck_ms, stuck_ms, 0, 60000)
NUM_SETTER(set_fibers, fibers, 0, 65536)
NUM_SETTER(set_fiber_stack_kb, fiber_stack_kb, 16, 8192)
NUM_SETTER(set_upstream_conns, upstream_conns, 1, 65536)
NUM_SETTER(set_upstream_connect_ms, upstream_connect_ms, 1, 600000)
NUM_SETTER(set_upstream_timeout_ms, upstream_timeout_ms, 1, 3600000)
NUM_SETTER(set_upstream_idle_ms, upstream_idle_ms, 1, 3600000)
static int
set_handoff_us(struct ewykd_config *cfg, const char *val, char *err,
		size_t errlen)
{
	uint64_t v;

	if (parse_u64(val, 0, 1000000, &v, err, errlen) != 0)
		return -1;
	cfg->handoff_us = (uint32_t)v;
	cfg->handoff_us_set = true;
	return 0;
}
NUM_SETTER(set_store_keys, store_keys, 16, 1 << 20)
NUM_SETTER(set_kv_keys, kv_keys, 16, 1 << 20)
NUM_SETTER(set_journal_max_mb, journal_max_mb, 1, 1 << 20)
NUM_SETTER(set_drain_ms, drain_ms, 0, 600000)
NUM_SETTER(set_header_timeout_ms, header_timeout_ms, 0, 3600000)
NUM_SETTER(set_keepalive_timeout_ms, keepalive_timeout_ms, 0, 86400000)
NUM_SETTER(set_max_header_bytes, max_header_bytes, 1024, 1 << 20)
NUM_SETTER(set_max_target, max_target, 64, 1 << 20)


static int
set_reserved(struct ewykd_config *cfg, const char *val, char *err,
		size_t errlen)
{
	uint64_t v;

	if (parse_u64(val, 0, 127, &v, err, errlen) != 0)
		return -1;
	cfg->reserved = (uint16_t)v;
	cfg->reserved_set = true;
	return 0;
}

/* "ADDR:PORT" or "[ADDR6]:PORT" into a and port. */
static int
parse_endpoint(const char *val, struct net_addr *a, uint16_t *port,
		char *err, size_t errlen)
{
	char buf[INET6_ADDRSTRLEN];
	const char *addr = val, *end, *colon;
	bool v6 = val[0] == '[';
	uint64_t p;

	if (v6) {
		addr++;
		end = strchr(addr, ']');
		colon = end != NULL && end[1] == ':' ? end + 1 : NULL;
	} else {
		colon = strrchr(val, ':');
		end = colon;
	}
	if (colon == NULL || end == addr || (size_t)(end - addr) >= sizeof(buf)) {
		snprintf(err, errlen, "'%s' is not ADDR:PORT or [ADDR6]:PORT", val);
		return -1;
	}
	memcpy(buf, addr, (size_t)(end - addr));
	buf[end - addr] = '\0';
	memset(a, 0, sizeof(*a));
	a->family = v6 ? NET_AF_INET6 : NET_AF_INET;
	if (inet_pton(v6 ? AF_INET6 : AF_INET, buf, &a->ip) != 1) {
		snprintf(err, errlen, v6 ? "'%s' is not an IPv6 address" :
				strchr(buf, ':') != NULL ? "'%s': an IPv6 address "
				"goes in brackets, [ADDR6]:PORT" :
				"'%s' is not an IPv4 address", buf);
		return -1;
	}
	if (parse_u64(colon + 1, 1, 65535, &p, err, errlen) != 0)
		return -1;
	*port = (uint16_t)p;
	return 0;
}

/* Repeatable: NAME=ADDR:PORT or NAME=[ADDR6]:PORT, an upstream
 * /proxy/NAME/ forwards to. */
static int
set_upstream(struct ewykd_config *cfg, const char *val, char *err,
		size_t errlen)
{
	struct upstream_target *t = &cfg->upstreams[cfg->nb_upstreams];
	const char *eq = strchr(val, '=');
	size_t n = eq != NULL ? (size_t)(eq - val) : 0, i;

	if (cfg->nb_upstreams == UPSTREAM_MAX) {
		snprintf(err, errlen, "at most %d upstreams", UPSTREAM_MAX);
		return -1;
	}
	if (eq == NULL || n == 0 || n >= UPSTREAM_NAME_MAX) {
		snprintf(err, errlen, "'%s' is not NAME=ADDR:PORT or "
				"NAME=[ADDR6]:PORT (a name of 1 to %d characters)",
				val, UPSTREAM_NAME_MAX - 1);
		return -1;
	}
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)val[i]) && val[i] != '-' &&
				val[i] != '_') {
			snprintf(err, errlen, "'%.*s': a name is letters, digits, "
					"'-' and '_'", (int)n, val);
			return -1;
		}
	for (i = 0; i < cfg->nb_upstreams; i++)
		if (strlen(cfg->upstreams[i].name) == n &&
				memcmp(cfg->upstreams[i].name, val, n) == 0) {
			snprintf(err, errlen, "upstream '%.*s' given twice",
					(int)n, val);
			return -1;
		}
	if (parse_endpoint(eq + 1, &t->addr, &t->port, err, errlen) != 0)
		return -1;
	memcpy(t->name, val, n);
	t->name[n] = '\0';
	cfg->nb_upstreams++;
	return 0;
}

/* Repeatable: "KEY=VALUE" rules into one of the config's tables, checked
 * by check(), each KEY once. */
static int
add_rule(char *rows, size_t width, uint16_t *n, uint16_t max,
		const char *what, const char *val,
		int (*check)(const char *, char *, size_t), char *err,
		size_t errlen)
{
	const char *eq = strchr(val, '=');
	uint16_t i;

	if (check(val, err, errlen) != 0)
		return -1;
	if (*n == max || strlen(val) >= width) {
		snprintf(err, errlen, "at most %u %s of %zu characters", max,
				what, width - 1);
		return -1;
	}
	for (i = 0; i < *n; i++)
		if (strncmp(rows + i * width, val, (size_t)(eq - val) + 1) == 0) {
			snprintf(err, errlen, "'%.*s' given twice",
					(int)(eq - val), val);
			return -1;
		}
	strcpy(rows + (*n)++ * width, val);
	return 0;
}

static int
cache_rule_check(const char *val, char *err, size_t errlen)
{
	const char *eq = strchr(val, '=');

	if (eq != NULL && eq - val > EWYKD_CACHE_PREFIX_MAX) {
		snprintf(err, errlen, "a prefix is at most %d characters",
				EWYKD_CACHE_PREFIX_MAX);
		return -1;
	}
	return www_cache_control_check(val, err, errlen);
}

static int
set_cache_control(struct ewykd_config *cfg, const char *val, char *err,
		size_t errlen)
{
	return add_rule(cfg->cache_control[0],
			sizeof(cfg->cache_control[0]), &cfg->nb_cache_control,
			EWYKD_CACHE_RULES_MAX, "Cache-Control rules", val,
			cache_rule_check, err, errlen);
}

static int
set_mime_type(struct ewykd_config *cfg, const char *val, char *err,
		size_t errlen)
{
	return add_rule(cfg->mime_types[0],
			sizeof(cfg->mime_types[0]), &cfg->nb_mime_types,
			EWYKD_MIME_TYPES_MAX, "media types", val,
			mime_override_check, err, errlen);
}

/* Repeatable: each one loads a plugin, in order. */
static int
set_plugin(struct ewykd_config *cfg, const char *val, char *err,
		size_t errlen)
{
	if (cfg->nb_plugins == EWYKD_PLUGINS_MAX) {
		snprintf(err, errlen, "at most %d plugins", EWYKD_PLUGINS_MAX);
		return -1;
	}
	if (val[0] == '\0' || val[0] == ':' ||
			strlen(val) >= sizeof(cfg->plugins[0])) {
		snprintf(err, errlen, "'%s' is not FILE.so[:ARG]", val);
		return -1;
	}
	snprintf(cfg->plugins[cfg->nb_plugins++], sizeof(cfg->plugins[0]),
			"%s", val);
	return 0;
}

/* on or off; a flag given on the command line (no value) is on. */
static int
parse_on_off(const char *val, bool *out, char *err, size_t errlen)
{
	if (val == NULL || strcmp(val, "on") == 0)
		*out = true;
	else if (strcmp(val, "off") == 0)
		*out = false;
	else {
		snprintf(err, errlen, "'%s' is neither on nor off", val);
		return -1;
	}
	return 0;
}

#define ON_OFF_SETTER(fn, field) \
static int \
fn(struct ewykd_config *cfg, const char *val, char *err, size_t errlen) \
{ \
	return parse_on_off(val, &cfg->field, err, errlen); \
}

ON_OFF_SETTER(set_syncookies, syncookies)
ON_OFF_SETTER(set_tcp_pacing, tcp_pacing)
ON_OFF_SETTER(set_demo_routes, demo_routes)
ON_OFF_SETTER(set_state_api, state_api)

static int
set_store_conflate(struct ewykd_config *cfg, const char *val, char *err,
		size_t errlen)
{
	bool on;

	if (parse_on_off(val, &on, err, errlen) != 0)
		return -1;
	cfg->store_no_conflate = !on;
	return 0;
}

static int
set_access_log(struct ewykd_config *cfg, const char *val, char *err,
		size_t errlen)
{
	if (val[0] == '\0' || strlen(val) >= sizeof(cfg->access_log)) {
		snprintf(err, errlen, "'%s' is not a file name, nor - (standard "
				"output)", val);
		return -1;
	}
	snprintf(cfg->access_log, sizeof(cfg->access_log), "%s", val);
	return 0;
}

static int
set_access_log_format(struct ewykd_config *cfg, const char *val, char *err,
		size_t errlen)
{
	if (strcmp(val, "combined") == 0)
		cfg->access_log_json = false;
	else if (strcmp(val, "json") == 0)
		cfg->access_log_json = true;
	else {
		snprintf(err, errlen, "'%s' is neither combined nor json", val);
		return -1;
	}
	return 0;
}

/* The token's file: its first line, of visible ASCII; readable by nobody
 * but its owner, as a secret should be. */
static int
set_state_api_token(struct ewykd_config *cfg, const char *val, char *err,
		size_t errlen)
{
	char buf[sizeof(cfg->state_api_token) + 2];
	struct stat st;
	size_t n, i;
	FILE *f = fopen(val, "r");

	if (f == NULL) {
		snprintf(err, errlen, "%s: %s", val, strerror(errno));
		return -1;
	}
	if (fstat(fileno(f), &st) != 0 || (st.st_mode & 077) != 0) {
		fclose(f);
		snprintf(err, errlen, "%s: readable by others than its owner "
				"(chmod 600 it)", val);
		return -1;
	}
	n = fgets(buf, sizeof(buf), f) != NULL ? strcspn(buf, "\r\n") : 0;
	fclose(f);
	for (i = 0; i < n && buf[i] > ' ' && buf[i] < 0x7f; i++)
		;
	if (n < 16 || i < n || n >= sizeof(cfg->state_api_token)) {
		snprintf(err, errlen, "%s: the token is a line of 16 to %zu "
				"visible characters", val,
				sizeof(cfg->state_api_token) - 1);
		return -1;
	}
	memcpy(cfg->state_api_token, buf, n);
	cfg->state_api_token[n] = '\0';
	cfg->state_api = true;
	return 0;
}

static int
set_strategy(struct ewykd_config *cfg, const char *val, char *err,
		size_t errlen)
{
	if (ewyk_mode_parse(val, &cfg->strategy) != 0) {
		snprintf(err, errlen, "'%s' is not a strategy (adaptive, pc, pec "
				"or epc)", val);
		return -1;
	}
	return 0;
}

static int
set_tx_cksum(struct ewykd_config *cfg, const char *val, char *err,
		size_t errlen)
{
	if (strcmp(val, "offload") == 0)
		cfg->sw_cksum = false;
	else if (strcmp(val, "software") == 0)
		cfg->sw_cksum = true;
	else {
		snprintf(err, errlen, "'%s' is neither offload nor software", val);
		return -1;
	}
	return 0;
}

/* One address with its prefix length, for the next port of its family:
 * af AF_INET (--ip) or AF_INET6 (--ip6). An IPv6 address is a global (or
 * unique local) unicast one: the link-local one comes from the port's
 * MAC. */
static int
add_addr(struct ewykd_config *cfg, const char *val, int af, char *err,
		size_t errlen)
{
	bool v6 = af == AF_INET6;
	uint16_t *n = v6 ? &cfg->nb_ip6s : &cfg->nb_ips;
	size_t alen = v6 ? 16 : 4;
	char buf[INET6_ADDRSTRLEN + 8], *slash;
	uint64_t prefix;
	struct in6_addr a;
	uint16_t i;

	if (strlen(val) >= sizeof(buf))
		goto bad;
	strcpy(buf, val);
	slash = strchr(buf, '/');
	if (slash == NULL)
		goto bad;
	*slash = '\0';
	if (inet_pton(af, buf, &a) != 1 ||
			parse_u64(slash + 1, 1, alen * 8, &prefix, err, errlen) != 0)
		goto bad;
	if (v6 && (IN6_IS_ADDR_UNSPECIFIED(&a) || IN6_IS_ADDR_LOOPBACK(&a) ||
			IN6_IS_ADDR_MULTICAST(&a) || IN6_IS_ADDR_LINKLOCAL(&a) ||
			IN6_IS_ADDR_V4MAPPED(&a))) {
		snprintf(err, errlen, "%s is not a unicast address a port can "
				"have (the link-local one comes from its MAC)", buf);
		return -1;
	}
	for (i = 0; i < *n; i++)
		if (memcmp(v6 ? cfg->ip6[i] : (uint8_t *)&cfg->ip[i], &a,
				alen) == 0) {
			snprintf(err, errlen, "%s is already the address of "
					"port %u: one address per port", buf, i);
			return -1;
		}
	if (*n == EWYKD_PORTS_MAX) {
		snprintf(err, errlen, "%s: at most %u ports, one %s each",
				val, EWYKD_PORTS_MAX, v6 ? "--ip6" : "--ip");
		return -1;
	}
	memcpy(v6 ? cfg->ip6[*n] : (uint8_t *)&cfg->ip[*n], &a, alen);
	(v6 ? cfg->prefix6 : cfg->prefix)[(*n)++] = (uint8_t)prefix;
	return 0;
bad:
	snprintf(err, errlen, "'%s' is not an IPv%c address with a prefix "
			"length (%s)", val, v6 ? '6' : '4',
			v6 ? "ADDR/N" : "A.B.C.D/N");
	return -1;
}

static int
add_ip(struct ewykd_config *cfg, const char *val, char *err, size_t errlen)
{
	return add_addr(cfg, val, AF_INET, err, errlen);
}

static int
add_ip6(struct ewykd_config *cfg, const char *val, char *err, size_t errlen)
{
	return add_addr(cfg, val, AF_INET6, err, errlen);
}

/* A list of addresses, one per port in order, split by commas or blanks:
 * "--ip A --ip B" on the command line, "ip = A, B" in the file (or the
 * key repeated). */
static int
add_list(struct ewykd_config *cfg, const char *val, char *err, size_t errlen,
		opt_set_fn add, const char *form)
{
	char buf[256], *tok, *save = NULL;
	int n = 0;

	if (strlen(val) >= sizeof(buf)) {
		snprintf(err, errlen, "too long a list of addresses");
		return -1;
	}
	strcpy(buf, val);
	for (tok = strtok_r(buf, ", \t", &save); tok != NULL;
			tok = strtok_r(NULL, ", \t", &save), n++)
		if (add(cfg, tok, err, errlen) != 0)
			return -1;
	if (n == 0) {
		snprintf(err, errlen, "no address (%s)", form);
		return -1;
	}
	return 0;
}

static int
set_ip(struct ewykd_config *cfg, const char *val, char *err, size_t errlen)
{
	return add_list(cfg, val, err, errlen, add_ip, "A.B.C.D/N");
}

static int
set_ip6(struct ewykd_config *cfg, const char *val, char *err, size_t errlen)
{
	return add_list(cfg, val, err, errlen, add_ip6, "ADDR/N");
}

static int
set_path(char *dst, const char *val, char *err, size_t errlen)
{
	if (val[0] == '\0' || strlen(val) >= PATH_MAX) {
		snprintf(err, errlen, "'%s' is not a usable path", val);
		return -1;
	}
	strcpy(dst, val);
	return 0;
}

static int
set_state_dir(struct ewykd_config *cfg, const char *val, char *err,
		size_t errlen)
{
	return set_path(cfg->state_dir, val, err, errlen);
}

static int
set_www(struct ewykd_config *cfg, const char *val, char *err, size_t errlen)
{
	return set_path(cfg->www, val, err, errlen);
}

static int
set_mime_types_file(struct ewykd_config *cfg, const char *val, char *err,
		size_t errlen)
{
	return set_path(cfg->mime_types_file, val, err, errlen);
}

static int
set_config(struct ewykd_config *cfg, const char *val, char *err, size_t errlen)
{
	return set_path(cfg->config_file, val, err, errlen);
}

static int
set_idle(struct ewykd_config *cfg, const char *val, char *err, size_t errlen)
{
	if (strcmp(val, "poll") == 0)
		cfg->idle = IDLE_POLL;
	else if (strcmp(val, "sleep") == 0)
		cfg->idle = IDLE_SLEEP;
	else {
		snprintf(err, errlen, "'%s' is not an idle mode (poll or sleep)",
				val);
		return -1;
	}
	return 0;
}

static int
set_tcp_cc(struct ewykd_config *cfg, const char *val, char *err,
		size_t errlen)
{
	if (strcmp(val, "newreno") == 0)
		cfg->tcp_cc = TCP_CC_NEWRENO;
	else if (strcmp(val, "cubic") == 0)
		cfg->tcp_cc = TCP_CC_CUBIC;
	else if (strcmp(val, "bbr") == 0)
		cfg->tcp_cc = TCP_CC_BBR;
	else {
		snprintf(err, errlen, "'%s' is not a congestion control "
				"(newreno, cubic or bbr)", val);
		return -1;
	}
	return 0;
}

static const struct opt_def opts[] = {
	{ "config", "FILE", set_config,
	  "INI file: [ewykd] takes these options as keys, [eal] args= the EAL options" },
	{ "ip", "ADDR/PREFIX", set_ip, "IPv4 address of a port (198.18.0.2/24 "
		"when neither --ip nor --ip6 is given); repeat it for the next "
		"ports (see below)" },
	{ "ip6", "ADDR/PREFIX", set_ip6, "IPv6 address of a port "
		"(2001:2::2/64), beside the link-local one its MAC gives; repeat "
		"it for the next ports (none)" },
	{ "www", "DIR", set_www, "static files, loaded into memory at start (none)" },
	{ "demo-routes", NULL, set_demo_routes, "serve the demonstration and test routes /echo, /kv/, /bytes, /spin, /delay, /blocking-delay, /either, /upload: unauthenticated, they store, reflect and burn CPU on request, never on a public address (off)" },
	{ "state-api", NULL, set_state_api, "serve the journaled store at /v1/state/KEY (off)" },
	{ "access-log", "FILE|-", set_access_log, "a line per exchange to FILE (appended; reopened on SIGUSR1) or standard output, written by a thread of its own; a shard never waits for it (none)" },
	{ "access-log-format", "FORMAT", set_access_log_format, "combined (as nginx's) or json (combined)" },
	{ "state-api-token", "FILE", set_state_api_token, "turns --state-api on, requiring 'Authorization: Bearer TOKEN' with the token on FILE's first line; FILE readable by its owner only (none)" },
	{ "state-dir", "DIR", set_state_dir, "journal of /v1/state (none: memory only, no durable PUT)" },
	{ "store-keys", "N", set_store_keys, "keys the store holds, 4 KiB each (4096)" },
	{ "journal-max-mb", "MB", set_journal_max_mb, "compact the journal past this size (64)" },
	{ "store-conflate", "on|off", set_store_conflate, "off: every PUT writes its own record, a baseline (on)" },
	{ "kv-keys", "N", set_kv_keys, "keys of the in-memory /kv store, 4 KiB each (4096)" },
	{ "plugin", "FILE.so[:ARG]", set_plugin, "load handlers from a plugin, ARG to its init; repeatable (none)" },
	{ "upstream", "NAME=ADDR:PORT", set_upstream, "an upstream on the link that /proxy/NAME/ forwards to, IPv4 or [IPv6]; repeatable (none)" },
	{ "upstream-conns", "N", set_upstream_conns, "upstream connections per shard, all upstreams, and as many ewyk_fetch() handles (64)" },
	{ "upstream-connect-timeout-ms", "MS", set_upstream_connect_ms, "504 when an upstream's handshake takes longer (1000)" },
	{ "upstream-timeout-ms", "MS", set_upstream_timeout_ms, "504 when an upstream's answer head takes longer; a body silent this long is cut (10000)" },
	{ "upstream-idle-ms", "MS", set_upstream_idle_ms, "close pooled upstream connections idle this long (30000)" },
	{ "strategy", "MODE", set_strategy, "adaptive, or force pc, pec or epc (adaptive)" },
	{ "reserved", "N", set_reserved, "worker lcores kept for hand-offs, beyond the shards' (0)" },
	{ "reserved-spin-us", "US", set_reserved_spin_us, "an idle reserved lcore spins this long, then parks (50)" },
	{ "blocking-threads", "N", set_blocking_threads, "blocking pool threads at most (16)" },
	{ "blocking-queue", "N", set_blocking_queue, "blocking pool queue; full answers 503 (256)" },
	{ "fibers", "N", set_fibers, "fibers per shard for fiber handlers; 0 = none, they run as BLOCKING (4096)" },
	{ "fiber-stack", "KB", set_fiber_stack_kb, "usable stack of each fiber, with a guard page below (64)" },
	{ "stuck-ms", "MS", set_stuck_ms, "hand a shard off when one inline request runs longer, 0 = off (10)" },
	{ "handoff-us", "US", set_handoff_us, "adaptive: run a BLOCKING request on the shard while a reserved lcore watches, and hand the shard over only once it has run this long; 0 = hand over before every one, as Jetty (20 where every worker lcore has a CPU of its own and one is spare, else 0)" },
	{ "www-max-mb", "N", set_www_max_mb, "refuse to start if --www holds more (1024); a file larger alone is left out, and said" },
	{ "cache-control", "PREFIX=VALUE", set_cache_control, "Cache-Control of the static files whose path starts with PREFIX, the longest PREFIX first; repeatable (none)" },
	{ "mime-type", "EXT=TYPE", set_mime_type, "media type of the static files ending in .EXT, before --mime-types' and the built-in ones; repeatable (none)" },
	{ "mime-types", "FILE|none", set_mime_types_file, "media types by extension, mime.types format; none: only the built-in table (" MIME_DEFAULT_FILE " when it exists)" },
	{ "listen-port", "N", set_listen_port, "TCP port served (80)" },
	{ "port-id", "N", set_port_id, "DPDK ethdev port of the first --ip (0)" },
	{ "shards", "N", set_shards, "RX/TX queue pairs, one lcore each (worker lcores)" },
	{ "mtu", "N", set_mtu, "MTU of the ports (1500); mbufs hold a whole frame" },
	{ "rx-desc", "N", set_rx_desc, "RX descriptors per queue (1024)" },
	{ "tx-desc", "N", set_tx_desc, "TX descriptors per queue (1024)" },
	{ "mbufs", "N", set_mbufs, "mbufs in the pool (32767)" },
	{ "max-conns", "N", set_max_conns, "TCP connections per shard (4096)" },
	{ "snd-buf", "BYTES", set_snd_buf, "send queue per connection, 32 KiB at least: an HTTP/2 DATA frame goes whole (262144)" },
	{ "rto-min-ms", "MS", set_rto_min_ms, "lower bound of the retransmission timeout (200)" },
	{ "time-wait-ms", "MS", set_time_wait_ms, "TIME-WAIT and FIN-WAIT-2 linger (4000)" },
	{ "max-time-wait", "N", set_max_time_wait, "TIME-WAIT connections kept per shard (2048)" },
	{ "syn-backlog", "N", set_syn_backlog, "half-open connections per shard before SYN cookies (1024)" },
	{ "syncookies", "on|off", set_syncookies, "answer SYNs past the backlog with cookies (on)" },
	{ "challenge-ack-limit", "N", set_challenge_ack_limit, "challenge ACKs and ACKs of out-of-window segments without data, per second per shard, 0 = no limit (1000)" },
	{ "invalid-ack-ms", "MS", set_invalid_ack_ms, "one ACK per MS per connection at most for out-of-window segments, data or not, and challenges (Linux's tcp_invalid_ratelimit), 0 = no limit (500)" },
	{ "arp-reply-limit", "N", set_arp_reply_limit, "ARP replies per second per shard, 0 = no limit (1000)" },
	{ "nd-reply-limit", "N", set_nd_reply_limit, "IPv6 neighbour advertisements answering solicitations, per second per shard, 0 = no limit (1000)" },
	{ "rcv-win", "BYTES", set_rcv_win, "largest TCP receive window, sets the window scale (1048576)" },
	{ "rcv-buf", "BYTES", set_rcv_buf, "largest TCP receive buffer of a connection, beyond what the application takes: from 64 KB it follows twice what the application takes per round trip (autotuning), at most 128 segments, the shard's buffers within half its mbufs; 0 = the window is the application's room alone (1048576)" },
	{ "delack-ms", "MS", set_delack_ms, "longest delay of an ACK, 0 = none (40)" },
	{ "tcp-cc", "ALGO", set_tcp_cc, "congestion control: newreno, cubic or bbr (BBR v1, as Linux's; paced) (cubic)" },
	{ "tcp-pacing", "on|off", set_tcp_pacing, "pace NewReno's and CUBIC's sending: twice cwnd per round trip in slow start, 1.2 times after, as Linux (off)" },
	{ "keepalive-ms", "MS", set_keepalive_ms, "idle time before keepalive probes, 0 = off (0)" },
	{ "idle-timeout-ms", "MS", set_idle_timeout_ms, "reset connections idle this long, 0 = off (0)" },
	{ "tx-cksum", "MODE", set_tx_cksum, "offload (when the NIC offers it) or software (offload)" },
	{ "header-timeout-ms", "MS", set_header_timeout_ms, "408 when a request head takes longer, 0 = off (10000)" },
	{ "keepalive-timeout-ms", "MS", set_keepalive_timeout_ms, "close keep-alive connections idle this long, 0 = off (60000)" },
	{ "max-target", "BYTES", set_max_target, "longest request target (URL) of either protocol, 414 past it (8192)" },
	{ "max-header-bytes", "BYTES", set_max_header_bytes, "longest HTTP/1.1 request head, 431 past it (414 when the request line is what does not fit); each connection's input buffer, so it costs this much per --max-conns (16384)" },
	{ "drain-ms", "MS", set_drain_ms, "on SIGTERM, finish in-flight requests this long (1000)" },
	{ "idle", "MODE", set_idle, "poll (busy) or sleep (back off when idle) (sleep)" },
	{ "idle-sleep-us", "US", set_idle_sleep_us, "longest idle sleep (100)" },
	{ "check-config", NULL, NULL, "check the options and the --config file, print what they say, start nothing: exit 0 if good, 2 if not" },
	{ "help", NULL, NULL, "this text" },
	{ "version", NULL, NULL, "print the version" },
};
#define NOPTS (sizeof(opts) / sizeof(opts[0]))

void
options_defaults(struct ewykd_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->www_max_mb = 1024;
	cfg->listen_port = 80;
	cfg->mtu = 1500;
	cfg->rx_desc = 1024;
	cfg->tx_desc = 1024;
	cfg->mbufs = 32767;
	cfg->max_conns = 4096;
	cfg->snd_buf = 262144;
	cfg->rto_min_ms = 200;
	cfg->time_wait_ms = 4000;
	cfg->syn_backlog = 1024;
	cfg->challenge_ack_limit = 1000;
	cfg->invalid_ack_ms = 500;
	cfg->arp_reply_limit = 1000;
	cfg->nd_reply_limit = 1000;
	cfg->max_time_wait = 2048;
	cfg->rcv_win = 1 << 20;
	cfg->rcv_buf = 1 << 20;
	cfg->delack_ms = 40;
	cfg->tcp_cc = TCP_CC_CUBIC;
	cfg->syncookies = true;
	cfg->strategy = EWYK_MODE_ADAPTIVE;
	cfg->reserved_spin_us = 50;
	cfg->blocking_threads = 16;
	cfg->blocking_queue = 256;
	cfg->stuck_ms = 10;
	cfg->fibers = 4096;
	cfg->fiber_stack_kb = 64;
	cfg->handoff_us = 0;
	cfg->store_keys = 4096;
	cfg->kv_keys = 4096;
	cfg->drain_ms = 1000;
	cfg->upstream_conns = 64;
	cfg->upstream_connect_ms = 1000;
	cfg->upstream_timeout_ms = 10000;
	cfg->upstream_idle_ms = 30000;
	cfg->header_timeout_ms = 10000;
	cfg->keepalive_timeout_ms = 60000;
	cfg->max_header_bytes = HTTP_MAX_HEAD_BYTES;
	cfg->max_target = HTTP_MAX_TARGET;
	cfg->journal_max_mb = 64;
	cfg->idle = IDLE_SLEEP;
	cfg->idle_sleep_us = 100;
}

void
options_usage(const char *prog)
{
	size_t i;

	printf("Usage: %s [EAL options] -- [ewykd options]\n"
	       "       %s --config FILE\n\n"
	       "ewyk: a kernel-bypass HTTP/1.1 and HTTP/2 (cleartext, by prior knowledge\n"
	       "or Upgrade) appliance on DPDK.\n\n"
	       "ewykd options:\n", prog, prog);
	for (i = 0; i < NOPTS; i++) {
		char left[40];

		snprintf(left, sizeof(left), "--%s%s%s", opts[i].name,
				opts[i].arg ? " " : "", opts[i].arg ? opts[i].arg : "");
		printf("  %-26s %s\n", left, opts[i].help);
	}
	printf("\nEAL options (before --), for example:\n"
	       "  -l 0-1 --vdev net_tap0,iface=ewyk0 --in-memory\n"
	       "  -l 0-2 -a 0000:3b:00.0 --huge-dir /dev/hugepages\n"
	       "Run with any EAL option and --help before -- for the EAL's own list.\n"
	       "Several ports: the Nth --ip is the address of the Nth DPDK port in\n"
	       "port-id order from --port-id (in a --config file: ip = A/N, B/N, or the\n"
	       "key repeated); every shard polls its queue on each. The Nth --ip6 is\n"
	       "the same port's IPv6 address: a port has IPv4, IPv6 or both, and there\n"
	       "are as many ports as the longer list gives. Ports beyond them stay\n"
	       "unused; more addresses than ports is an error.\n"
	       "Packet capture (dpdk-dumpcap --file-prefix PREFIX -i PORT -w FILE)\n"
	       "attaches to ewykd started with a shared configuration: hugepages, a\n"
	       "--file-prefix, and none of --in-memory, --no-shconf or --no-huge, which\n"
	       "leave nothing behind when ewykd is killed but let nothing attach.\n");
}

static const struct opt_def *
find_opt(const char *name)
{
	size_t i;

	for (i = 0; i < NOPTS; i++)
		if (strcmp(opts[i].name, name) == 0)
			return &opts[i];
	return NULL;
}

/* Line of the nth (from 0) "key" inside [section] of an INI file (of the
 * section header when key is NULL), for error messages; 0 if not found. */
static int
ini_line_of(const char *file, const char *section, const char *key, int nth)
{
	char line[4096], cur[128] = "";
	int no = 0;
	FILE *f = fopen(file, "r");

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		char *p = line, *e;

		no++;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '[') {
			e = strchr(p, ']');
			if (e != NULL) {
				*e = '\0';
				snprintf(cur, sizeof(cur), "%s", p + 1);
				if (key == NULL && strcmp(cur, section) == 0) {
					fclose(f);
					return no;
				}
			}
			continue;
		}
		e = p + strcspn(p, "= \t");
		if (key != NULL && strcmp(cur, section) == 0 && (size_t)(e - p) == strlen(key) &&
				strncmp(p, key, strlen(key)) == 0 && nth-- == 0) {
			fclose(f);
			return no;
		}
	}
	fclose(f);
	return 0;
}

/* rte_cfgfile says only "failed"; find the first line it cannot read. */
static int
ini_check_syntax(const char *file, char *err, size_t errlen)
{
	char line[4096];
	int no = 0;
	FILE *f = fopen(file, "r");

	if (f == NULL) {
		snprintf(err, errlen, "%s: %s", file, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		char *p = line;

		no++;
		while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
			p++;
		if (*p == '\0' || *p == ';' || *p == '#')
			continue;
		if (*p == '[' ? strchr(p, ']') == NULL : strchr(p, '=') == NULL ||
				*p == '=') {
			snprintf(err, errlen, "%s:%d: expected [section] or "
					"key = value", file, no);
			fclose(f);
			return -1;
		}
	}
	fclose(f);
	return 0;
}

static int
load_config(struct ewykd_config *cfg, char *err, size_t errlen)
{
	const char *file = cfg->config_file;
	char store[MAX_SECTIONS][CFG_NAME_LEN];
	char *names[MAX_SECTIONS];
	struct rte_cfgfile *ini;
	int i, n, rc = -1;
	char sub[256];

	if (ini_check_syntax(file, err, errlen) != 0)
		return -1;
	ini = rte_cfgfile_load(file, 0);
	if (ini == NULL) {
		snprintf(err, errlen, "%s: cannot be read as an INI file", file);
		return -1;
	}
	n = rte_cfgfile_num_sections(ini, NULL, 0);
	if (n > MAX_SECTIONS) {
		snprintf(err, errlen, "%s: more than %d sections", file, MAX_SECTIONS);
		goto out;
	}
	for (i = 0; i < n; i++)
		names[i] = store[i];
	rte_cfgfile_sections(ini, names, n);
	for (i = 0; i < n; i++) {
		if (strcmp(names[i], SECTION) != 0 &&
				strcmp(names[i], EAL_SECTION) != 0) {
			snprintf(err, errlen, "%s:%d: unknown section [%s] (expected "
					"[" SECTION "] or [" EAL_SECTION "])", file,
					ini_line_of(file, names[i], NULL, 0), names[i]);
			goto out;
		}
	}
	if (rte_cfgfile_has_section(ini, EAL_SECTION)) {
		const char *v = rte_cfgfile_get_entry(ini, EAL_SECTION, "args");

		if (v == NULL || rte_cfgfile_section_num_entries(ini, EAL_SECTION) != 1) {
			snprintf(err, errlen, "%s: [" EAL_SECTION "] takes one key, "
					"args = EAL options", file);
			goto out;
		}
		snprintf(cfg->eal_args, sizeof(cfg->eal_args), "%s", v);
	}
	if (rte_cfgfile_has_section(ini, SECTION)) {
		int ne = rte_cfgfile_section_num_entries(ini, SECTION);
		struct rte_cfgfile_entry *entries = calloc((size_t)ne + 1,
				sizeof(*entries));

		if (entries == NULL)
			goto out;
		rte_cfgfile_section_entries(ini, SECTION, entries, ne);
		for (i = 0; i < ne; i++) {
			const struct opt_def *o = find_opt(entries[i].name);
			int line, nth = 0, j;

			/* A repeated key (upstream, plugin): its own line. */
			for (j = 0; j < i; j++)
				nth += strcmp(entries[j].name, entries[i].name) == 0;
			line = ini_line_of(file, SECTION, entries[i].name, nth);

			if (o == NULL || o->set == NULL || o->set == set_config) {
				snprintf(err, errlen, "%s:%d: unknown key '%s'",
						file, line, entries[i].name);
				free(entries);
				goto out;
			}
			if (o->set(cfg, entries[i].value, sub, sizeof(sub)) != 0) {
				snprintf(err, errlen, "%s:%d: %s: %s", file, line,
						entries[i].name, sub);
				free(entries);
				goto out;
			}
		}
		free(entries);
	}
	rc = 0;
out:
	rte_cfgfile_close(ini);
	return rc;
}

/* --check-config: what the configuration resolves to. Devices, --www and
 * --state-dir are only checked when ewykd starts. */
static void
options_print(const struct ewykd_config *cfg)
{
	char ip[INET_ADDRSTRLEN + 4];
	uint16_t i;

	printf("ewykd: configuration good%s%s\n", cfg->config_file[0] ? ": " : "",
			cfg->config_file);
	printf("  eal args: %s\n", cfg->eal_args[0] ? cfg->eal_args :
			"(none in the file: the command line's, before --)");
	for (i = 0; i < cfg->nb_ips; i++) {
		options_format_ip(cfg, i, ip, sizeof(ip));
		printf("  ip %s (port %u)\n", ip, (unsigned int)i);
	}
	for (i = 0; i < cfg->nb_ip6s; i++) {
		char ip6[INET6_ADDRSTRLEN + 8];

		options_format_ip6(cfg, i, ip6, sizeof(ip6));
		printf("  ip6 %s (port %u)\n", ip6, (unsigned int)i);
	}
	printf("  port-id %u, listen-port %u, mtu %u\n", cfg->port_id,
			cfg->listen_port, cfg->mtu);
	if (cfg->shards == 0)
		printf("  shards: one per worker lcore");
	else
		printf("  shards: %u", cfg->shards);
	printf(", rx-desc %u, tx-desc %u, mbufs %u, max-conns %u\n", cfg->rx_desc,
			cfg->tx_desc, cfg->mbufs, cfg->max_conns);
	printf("  tx-cksum %s, idle %s, strategy %s\n",
			cfg->sw_cksum ? "software" : "offload",
			cfg->idle == IDLE_POLL ? "poll" : "sleep",
			ewyk_mode_name(cfg->strategy));
	for (i = 0; i < cfg->nb_cache_control; i++)
		printf("  cache-control %s\n", cfg->cache_control[i]);
	for (i = 0; i < cfg->nb_mime_types; i++)
		printf("  mime-type %s\n", cfg->mime_types[i]);
	if (cfg->mime_types_file[0] != '\0')
		printf("  mime-types %s\n", cfg->mime_types_file);
	for (i = 0; i < cfg->nb_upstreams; i++) {
		const struct upstream_target *t = &cfg->upstreams[i];
		char a[INET6_ADDRSTRLEN + 8];

		net_addr_format(&t->addr, t->port, a, sizeof(a));
		printf("  upstream %s %s (port %d)\n", t->name, a,
				options_addr_holding(cfg, &t->addr));
	}
}

/* Upstreams are reached on the link of one of the ports: there is no
 * gateway to route by. */
static int
check_upstreams(const struct ewykd_config *cfg)
{
	char a[INET6_ADDRSTRLEN + 8], ip[INET6_ADDRSTRLEN + 4];
	uint16_t i, j;

	for (i = 0; i < cfg->nb_upstreams; i++) {
		const struct upstream_target *t = &cfg->upstreams[i];
		bool v6 = t->addr.family == NET_AF_INET6;
		int port = options_addr_holding(cfg, &t->addr);
		uint16_t n = v6 ? cfg->nb_ip6s : cfg->nb_ips;

		if (port >= 0 && memcmp(&t->addr.ip, v6 ? (const void *)
				cfg->ip6[port] : (const void *)&cfg->ip[port],
				v6 ? 16 : 4) != 0)
			continue;
		net_addr_format(&t->addr, 0, a, sizeof(a));
		fprintf(stderr, "ewykd: --upstream %s: %s is not on the link of ",
				t->name, a);
		for (j = 0; j < n; j++) {
			if (v6)
				options_format_ip6(cfg, j, ip, sizeof(ip));
			else
				options_format_ip(cfg, j, ip, sizeof(ip));
			fprintf(stderr, "%s--ip%s %s", j > 0 ? " or " : "",
					v6 ? "6" : "", ip);
		}
		fprintf(stderr, "%s (no gateway is used)\n", n == 0 ?
				(v6 ? "any --ip6" : "any --ip") : "");
		return OPT_EXIT_USAGE;
	}
	return 0;
}

int
options_parse(struct ewykd_config *cfg, int argc, char **argv)
{
	struct option lopts[NOPTS + 1];
	char err[PATH_MAX + 1024], sub[256];
	size_t i;
	int c, idx;

	memset(lopts, 0, sizeof(lopts));
	for (i = 0; i < NOPTS; i++) {
		lopts[i].name = opts[i].name;
		lopts[i].has_arg = opts[i].arg ? required_argument : no_argument;
		lopts[i].val = 0;
	}
	/* First pass: --help, --version and --config. */
	for (i = 1; i < (size_t)argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return OPT_EXIT_HELP;
		if (strcmp(argv[i], "--version") == 0) {
			printf("ewykd %s\n", EWYK_VERSION);
			return OPT_EXIT_OK;
		}
	}
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", lopts, &idx)) != -1) {
		if (c == 0 && opts[idx].set == set_config &&
				set_config(cfg, optarg, sub, sizeof(sub)) != 0) {
			fprintf(stderr, "ewykd: --config: %s\n", sub);
			return OPT_EXIT_USAGE;
		}
	}
	if (cfg->config_file[0] != '\0' && load_config(cfg, err, sizeof(err)) != 0) {
		fprintf(stderr, "ewykd: %s\n", err);
		return OPT_EXIT_USAGE;
	}
	/* Second pass: the command line overrides the file. */
	optind = 1;
	while ((c = getopt_long(argc, argv, ":", lopts, &idx)) != -1) {
		switch (c) {
		case 0:
			if (opts[idx].set == NULL || opts[idx].set == set_config)
				break;
			if (opts[idx].set == set_ip && !cfg->ip_from_cli) {
				cfg->ip_from_cli = true;	/* not the file's */
				cfg->nb_ips = 0;
			}
			if (opts[idx].set == set_ip6 && !cfg->ip6_from_cli) {
				cfg->ip6_from_cli = true;
				cfg->nb_ip6s = 0;
			}
			/* A flag (no value) sets on. */
			if (opts[idx].set(cfg, optarg, sub, sizeof(sub)) != 0) {
				fprintf(stderr, "ewykd: --%s: %s\n", opts[idx].name, sub);
				return OPT_EXIT_USAGE;
			}
			break;
		case ':':
			fprintf(stderr, "ewykd: %s: needs a value\n", argv[optind - 1]);
			return OPT_EXIT_USAGE;
		default:
			fprintf(stderr, "ewykd: %s: unknown option (see --help)\n",
					argv[optind - 1]);
			return OPT_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ewykd: %s: unexpected argument (see --help)\n",
				argv[optind]);
		return OPT_EXIT_USAGE;
	}
	if (cfg->nb_ips == 0 && cfg->nb_ip6s == 0)
		add_ip(cfg, "198.18.0.2/24", sub, sizeof(sub));
	cfg->nb_ports = RTE_MAX(cfg->nb_ips, cfg->nb_ip6s);
	if (check_upstreams(cfg) != 0)
		return OPT_EXIT_USAGE;
	for (i = 1; i < (size_t)argc; i++) {
		if (strcmp(argv[i], "--check-config") == 0) {
			options_print(cfg);
			return OPT_EXIT_OK;
		}
	}
	return 0;
}

uint32_t
options_netmask(const struct ewykd_config *cfg, uint16_t i)
{
	return htonl(cfg->prefix[i] == 32 ? 0xffffffffu :
			~(0xffffffffu >> cfg->prefix[i]));
}

int
options_ip_holding(const struct ewykd_config *cfg, uint32_t addr)
{
	uint16_t i;

	for (i = 0; i < cfg->nb_ips; i++)
		if (((addr ^ cfg->ip[i]) & options_netmask(cfg, i)) == 0)
			return i;
	return -1;
}

/* The first bits bits of a and b are the same. */
static bool
same_prefix6(const uint8_t *a, const uint8_t *b, unsigned int bits)
{
	unsigned int whole = bits / 8, rest = bits % 8;

	return memcmp(a, b, whole) == 0 && (rest == 0 ||
			((a[whole] ^ b[whole]) & (0xff00 >> rest) & 0xff) == 0);
}

int
options_addr_holding(const struct ewykd_config *cfg, const struct net_addr *a)
{
	uint16_t i;

	if (a->family == NET_AF_INET)
		return options_ip_holding(cfg, a->ip.v4);
	for (i = 0; i < cfg->nb_ip6s; i++)
		if (same_prefix6(a->ip.v6, cfg->ip6[i], cfg->prefix6[i]))
			return i;
	return -1;
}

void
options_format_ip(const struct ewykd_config *cfg, uint16_t i, char *buf,
		size_t len)
{
	char a[INET_ADDRSTRLEN];

	if (i >= cfg->nb_ips) {
		snprintf(buf, len, "%s", "");
		return;
	}
	inet_ntop(AF_INET, &cfg->ip[i], a, sizeof(a));
	snprintf(buf, len, "%s/%u", a, cfg->prefix[i]);
}

void
options_format_ip6(const struct ewykd_config *cfg, uint16_t i, char *buf,
		size_t len)
{
	char a[INET6_ADDRSTRLEN];

	if (i >= cfg->nb_ip6s) {
		snprintf(buf, len, "%s", "");
		return;
	}
	inet_ntop(AF_INET6, cfg->ip6[i], a, sizeof(a));	/* RFC 5952 */
	snprintf(buf, len, "%s/%u", a, cfg->prefix6[i]);
}
