/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <rte_common.h>

#include "http_server.h"
#include "ini.h"
#include "net_stack.h"
#include "options.h"

#define SECTION "ewykd"
#define EAL_SECTION "eal"

typedef int (*opt_set_fn)(struct ewykd_config *cfg, const char *val,
		char *err, size_t errlen);
/* Writes the option's value as configuration-file lines "key = value"
 * (one per item of a repeatable option), or a comment saying what its
 * absence means, so that what --check-config prints can be read back. */
typedef void (*opt_show_fn)(const struct ewykd_config *cfg, const char *key,
		FILE *f);

struct opt_def {
	const char *name;
	const char *arg;	/* metavariable; NULL for a flag */
	opt_set_fn set;
	opt_show_fn show;	/* NULL: an action, not a setting */
	const char *help;
};

/* An option without a value: what that means, as a comment. */
static void
show_unset(const char *key, const char *meaning, FILE *f)
{
	fprintf(f, "; %s = (%s)\n", key, meaning);
}

static void
show_str(const char *key, const char *val, const char *unset, FILE *f)
{
	if (val[0] == '\0')
		show_unset(key, unset, f);
	else
		fprintf(f, "%s = %s\n", key, val);
}

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

/* A setter and a show per numeric field, generated: set_NAME and
 * show_NAME of field, from min to max. */
#define NUM_SET(name, field, min, max) \
static int \
set_##name(struct ewykd_config *cfg, const char *val, char *err, \
		size_t errlen) \
{ \
	uint64_t v; \
	if (parse_u64(val, min, max, &v, err, errlen) != 0) \
		return -1; \
	cfg->field = (__typeof__(cfg->field))v; \
	return 0; \
}
#define NUM_SHOW(name, field) \
static void \
show_##name(const struct ewykd_config *cfg, const char *key, FILE *f) \
{ \
	fprintf(f, "%s = %llu\n", key, (unsigned long long)cfg->field); \
}
#define NUM_OPTION(name, field, min, max) \
	NUM_SET(name, field, min, max) \
	NUM_SHOW(name, field)

NUM_OPTION(www_max_mb, www_max_mb, 1, 65536)
NUM_OPTION(port_id, port_id, 0, 1023)
NUM_SET(shards, shards, 1, 128)
NUM_OPTION(listen_port, listen_port, 1, 65535)
NUM_OPTION(mtu, mtu, 576, 9000)
NUM_OPTION(rx_desc, rx_desc, 64, 16384)
NUM_OPTION(tx_desc, tx_desc, 64, 16384)
NUM_OPTION(mbufs, mbufs, 1024, 16777216)
NUM_OPTION(max_conns, max_conns, 16, 4194304)
NUM_OPTION(snd_buf, snd_buf, 32768, 16777216)
NUM_OPTION(snd_buf_max, snd_buf_max, 32768, 1 << 28)
NUM_OPTION(rto_min_ms, rto_min_ms, 1, 60000)
NUM_OPTION(time_wait_ms, time_wait_ms, 0, 240000)
NUM_OPTION(idle_sleep_us, idle_sleep_us, 1, 100000)
NUM_OPTION(syn_backlog, syn_backlog, 1, 4194304)
NUM_OPTION(challenge_ack_limit, challenge_ack_limit, 0, 100000000)
NUM_OPTION(invalid_ack_ms, invalid_ack_ms, 0, 60000)
NUM_OPTION(arp_reply_limit, arp_reply_limit, 0, 100000000)
NUM_OPTION(nd_reply_limit, nd_reply_limit, 0, 100000000)
NUM_OPTION(max_time_wait, max_time_wait, 0, 4194304)
NUM_OPTION(rcv_win, rcv_win, 1024, 1 << 30)
NUM_OPTION(rcv_buf, rcv_buf, 0, 1 << 30)
NUM_OPTION(delack_ms, delack_ms, 0, 500)
NUM_OPTION(keepalive_ms, keepalive_ms, 0, 86400000)
NUM_OPTION(idle_timeout_ms, idle_timeout_ms, 0, 86400000)
NUM_OPTION(reserved_spin_us, reserved_spin_us, 0, 10000000)
NUM_OPTION(blocking_threads, blocking_threads, 1, 4096)
NUM_OPTION(blocking_queue, blocking_queue, 1, 1 << 20)
NUM_OPTION(stuck_ms, stuck_ms, 0, 60000)
NUM_OPTION(fibers, fibers, 0, 65536)
NUM_OPTION(fiber_stack_kb, fiber_stack_kb, 16, 8192)
NUM_OPTION(upstream_conns, upstream_conns, 1, 65536)
NUM_OPTION(upstream_connect_ms, upstream_connect_ms, 1, 600000)
NUM_OPTION(upstream_timeout_ms, upstream_timeout_ms, 1, 3600000)
NUM_OPTION(upstream_idle_ms, upstream_idle_ms, 1, 3600000)
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
NUM_OPTION(store_keys, store_keys, 16, 1 << 20)
NUM_OPTION(kv_keys, kv_keys, 16, 1 << 20)
NUM_OPTION(journal_max_mb, journal_max_mb, 1, 1 << 20)
NUM_OPTION(drain_ms, drain_ms, 0, 600000)
NUM_OPTION(header_timeout_ms, header_timeout_ms, 0, 3600000)
NUM_OPTION(keepalive_timeout_ms, keepalive_timeout_ms, 0, 86400000)
NUM_OPTION(max_header_bytes, max_header_bytes, 1024, 1 << 20)
NUM_OPTION(max_target, max_target, 64, 1 << 20)
NUM_OPTION(max_body, max_body, EWYK_REQUEST_BODY_MAX, 1 << 30)
NUM_OPTION(body_buffers, body_buffers, 1, 65536)
NUM_OPTION(tls_handshake_timeout_ms, tls_handshake_timeout_ms, 100, 600000)
NUM_OPTION(tls_ticket_rotate_s, tls_ticket_rotate_s, 0, 604800)
NUM_SET(tls_port, tls_port, 1, 65535)
NUM_SET(quic_port, quic_port, 1, 65535)
NUM_OPTION(quic_retry_threshold, quic_retry_threshold, 0, 1 << 20)
NUM_OPTION(quic_conn_mem, quic_conn_mem, 65536, 1u << 30)


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

/* Repeatable: a block of addresses (ADDR or ADDR/LEN, either family)
 * whose clients' forwarded fields are passed on. */
static int
set_trusted_forwarder(struct ewykd_config *cfg, const char *val, char *err,
		size_t errlen)
{
	if (cfg->nb_trusted == EWYKD_TRUSTED_MAX) {
		snprintf(err, errlen, "at most %d blocks", EWYKD_TRUSTED_MAX);
		return -1;
	}
	if (net_prefix_parse(val, &cfg->trusted[cfg->nb_trusted]) != 0) {
		snprintf(err, errlen, "'%s' is not an address or ADDR/LEN, "
				"IPv4 (LEN to 32) or IPv6 (LEN to 128)", val);
		return -1;
	}
	cfg->nb_trusted++;
	return 0;
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

static int set_path(char *dst, const char *val, char *err, size_t errlen);

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

static void
show_on_off(const char *key, bool on, FILE *f)
{
	fprintf(f, "%s = %s\n", key, on ? "on" : "off");
}

#define ON_OFF_OPTION(name, field) \
static int \
set_##name(struct ewykd_config *cfg, const char *val, char *err, \
		size_t errlen) \
{ \
	return parse_on_off(val, &cfg->field, err, errlen); \
} \
static void \
show_##name(const struct ewykd_config *cfg, const char *key, FILE *f) \
{ \
	show_on_off(key, cfg->field, f); \
}

ON_OFF_OPTION(syncookies, syncookies)
ON_OFF_OPTION(tcp_pacing, tcp_pacing)
ON_OFF_OPTION(demo_routes, demo_routes)
ON_OFF_OPTION(state_api, state_api)
static int
set_tls_offload(struct ewykd_config *cfg, const char *val, char *err,
		size_t errlen)
{
	static const char *const names[] = { "off", "on", "auto" };
	uint8_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (val != NULL && strcmp(val, names[i]) == 0) {
			cfg->tls_offload = i;
			return 0;
		}
	snprintf(err, errlen, "'%s' is none of auto, on and off",
			val != NULL ? val : "");
	return -1;
}

static void
show_tls_offload(const struct ewykd_config *cfg, const char *key, FILE *f)
{
	static const char *const names[] = { "off", "on", "auto" };

	fprintf(f, "%s = %s\n", key, names[cfg->tls_offload]);
}
ON_OFF_OPTION(http3, http3)

/* Repeatable: --tls-cert and --tls-key come in pairs, in order; the
 * first pair is the default certificate. */
static int
add_tls_file(char (*list)[PATH_MAX], uint16_t *n, const char *val,
		char *err, size_t errlen)
{
	if (*n == TLS_PAIRS_MAX) {
		snprintf(err, errlen, "at most %d certificate and key pairs",
				TLS_PAIRS_MAX);
		return -1;
	}
	if (set_path(list[*n], val, err, errlen) != 0)
		return -1;
	(*n)++;
	return 0;
}

static int
set_tls_cert(struct ewykd_config *cfg, const char *val, char *err,
		size_t errlen)
{
	return add_tls_file(cfg->tls_cert, &cfg->nb_tls_certs, val, err,
			errlen);
}

static int
set_tls_key(struct ewykd_config *cfg, const char *val, char *err,
		size_t errlen)
{
	return add_tls_file(cfg->tls_key, &cfg->nb_tls_keys, val, err,
			errlen);
}

/* The OCSP response of the pair whose --tls-cert came last. */
static int
set_tls_ocsp(struct ewykd_config *cfg, const char *val, char *err,
		size_t errlen)
{
	if (cfg->nb_tls_certs == 0) {
		snprintf(err, errlen, "comes after the --tls-cert it staples");
		return -1;
	}
	return set_path(cfg->tls_ocsp[cfg->nb_tls_certs - 1], val, err, errlen);
}

static int
set_tls_priority(struct ewykd_config *cfg, const char *val, char *err,
		size_t errlen)
{
	if (val[0] == '\0' || strlen(val) >= sizeof(cfg->tls_priority)) {
		snprintf(err, errlen, "a GnuTLS priority string of 1 to %zu "
				"characters", sizeof(cfg->tls_priority) - 1);
		return -1;
	}
	strcpy(cfg->tls_priority, val);
	return 0;
}

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
	snprintf(cfg->state_api_token_file, sizeof(cfg->state_api_token_file),
			"%s", val);
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

/* A port's next hop (--gateway, --gateway6): an address, or "none" for
 * a port without one; checked against the ports' links once all are
 * read (check_gateways()). */
static int
add_gateway(struct ewykd_config *cfg, const char *val, int af, char *err,
		size_t errlen)
{
	bool v6 = af == AF_INET6;
	uint16_t *n = v6 ? &cfg->nb_gateway6s : &cfg->nb_gateways;
	struct in6_addr a = { 0 };

	if (*n == EWYKD_PORTS_MAX) {
		snprintf(err, errlen, "%s: at most %u ports, one gateway each",
				val, EWYKD_PORTS_MAX);
		return -1;
	}
	if (strcmp(val, "none") != 0 && (inet_pton(af, val, &a) != 1 ||
			(v6 ? IN6_IS_ADDR_UNSPECIFIED(&a) ||
			 IN6_IS_ADDR_MULTICAST(&a) : a.s6_addr32[0] == 0))) {
		snprintf(err, errlen, "'%s' is not a unicast IPv%c address (or "
				"none)", val, v6 ? '6' : '4');
		return -1;
	}
	memcpy(v6 ? cfg->gateway6[*n] : (uint8_t *)&cfg->gateway[*n], &a,
			v6 ? 16 : 4);
	(*n)++;
	return 0;
}

static int
add_gateway4(struct ewykd_config *cfg, const char *val, char *err,
		size_t errlen)
{
	return add_gateway(cfg, val, AF_INET, err, errlen);
}

static int
add_gateway6(struct ewykd_config *cfg, const char *val, char *err,
		size_t errlen)
{
	return add_gateway(cfg, val, AF_INET6, err, errlen);
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
set_gateway(struct ewykd_config *cfg, const char *val, char *err, size_t errlen)
{
	return add_list(cfg, val, err, errlen, add_gateway4, "A.B.C.D");
}

static int
set_gateway6(struct ewykd_config *cfg, const char *val, char *err,
		size_t errlen)
{
	return add_list(cfg, val, err, errlen, add_gateway6, "ADDR");
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

/* The shows of the options whose value is not a plain number. */

static void
show_list(const char *key, const char *rows, size_t width, uint16_t n,
		const char *unset, FILE *f)
{
	uint16_t i;

	if (n == 0)
		show_unset(key, unset, f);
	for (i = 0; i < n; i++)
		fprintf(f, "%s = %s\n", key, rows + i * width);
}

/* Each port's address of a family, formatted by fmt. */
static void
show_addrs(const struct ewykd_config *cfg, const char *key, uint16_t n,
		void (*fmt)(const struct ewykd_config *, uint16_t, char *,
		size_t), const char *unset, FILE *f)
{
	char a[INET6_ADDRSTRLEN + 8];
	uint16_t i;

	if (n == 0)
		show_unset(key, unset, f);
	for (i = 0; i < n; i++) {
		fmt(cfg, i, a, sizeof(a));
		fprintf(f, "%s = %s\n", key, a);
	}
}

static void
show_ip(const struct ewykd_config *cfg, const char *key, FILE *f)
{
	show_addrs(cfg, key, cfg->nb_ips, options_format_ip, "none: IPv6 only", f);
}

static void
show_ip6(const struct ewykd_config *cfg, const char *key, FILE *f)
{
	show_addrs(cfg, key, cfg->nb_ip6s, options_format_ip6, "none", f);
}

void
options_format_gateway(const struct ewykd_config *cfg, uint16_t i,
		uint8_t family, char *buf, size_t len)
{
	bool v6 = family == NET_AF_INET6;

	if (!options_has_gateway(cfg, i, family))
		snprintf(buf, len, "none");
	else
		inet_ntop(v6 ? AF_INET6 : AF_INET, v6 ? (const void *)
				cfg->gateway6[i] : (const void *)&cfg->gateway[i],
				buf, (socklen_t)len);
}

static void
format_gateway(const struct ewykd_config *cfg, uint16_t i, char *buf,
		size_t len)
{
	options_format_gateway(cfg, i, NET_AF_INET, buf, len);
}

static void
format_gateway6(const struct ewykd_config *cfg, uint16_t i, char *buf,
		size_t len)
{
	options_format_gateway(cfg, i, NET_AF_INET6, buf, len);
}

static void
show_gateway(const struct ewykd_config *cfg, const char *key, FILE *f)
{
	show_addrs(cfg, key, cfg->nb_gateways, format_gateway,
			"none: upstreams on the ports' links only", f);
}

static void
show_gateway6(const struct ewykd_config *cfg, const char *key, FILE *f)
{
	show_addrs(cfg, key, cfg->nb_gateway6s, format_gateway6,
			"none: upstreams on the ports' links only", f);
}

static void
format_trusted(const struct ewykd_config *cfg, uint16_t i, char *buf,
		size_t len)
{
	net_prefix_format(&cfg->trusted[i], buf, len);
}

static void
show_trusted_forwarder(const struct ewykd_config *cfg, const char *key,
		FILE *f)
{
	show_addrs(cfg, key, cfg->nb_trusted, format_trusted,
			"none: no client's forwarded fields are taken", f);
}

static void
show_www(const struct ewykd_config *cfg, const char *key, FILE *f)
{
	show_str(key, cfg->www, "none: no static files", f);
}

static void
show_access_log(const struct ewykd_config *cfg, const char *key, FILE *f)
{
	show_str(key, cfg->access_log, "none", f);
}

static void
show_access_log_format(const struct ewykd_config *cfg, const char *key,
		FILE *f)
{
	fprintf(f, "%s = %s\n", key, cfg->access_log_json ? "json" : "combined");
}

static void
show_state_api_token(const struct ewykd_config *cfg, const char *key,
		FILE *f)
{
	/* The file, never the token: this output may be saved or shown. */
	show_str(key, cfg->state_api_token_file, "none: no token asked", f);
}

static void
show_state_dir(const struct ewykd_config *cfg, const char *key, FILE *f)
{
	show_str(key, cfg->state_dir, "none: memory only, no durable PUT", f);
}

static void
show_store_conflate(const struct ewykd_config *cfg, const char *key, FILE *f)
{
	show_on_off(key, !cfg->store_no_conflate, f);
}

static void
show_plugin(const struct ewykd_config *cfg, const char *key, FILE *f)
{
	show_list(key, cfg->plugins[0], sizeof(cfg->plugins[0]),
			cfg->nb_plugins, "none", f);
}

static void
show_upstream(const struct ewykd_config *cfg, const char *key, FILE *f)
{
	char a[INET6_ADDRSTRLEN + 8];
	uint16_t i;

	/* The pools' servers are their sections'. */
	if (cfg->nb_cli_upstreams == 0)
		show_unset(key, "none", f);
	for (i = 0; i < cfg->nb_cli_upstreams; i++) {
		const struct upstream_target *t = &cfg->upstreams[i];

		net_addr_format(&t->addr, t->port, a, sizeof(a));
		fprintf(f, "%s = %s=%s\n", key, t->name, a);
	}
}

static void
show_strategy(const struct ewykd_config *cfg, const char *key, FILE *f)
{
	fprintf(f, "%s = %s\n", key, ewyk_mode_name(cfg->strategy));
}

NUM_SHOW(reserved, reserved)

static void
show_handoff_us(const struct ewykd_config *cfg, const char *key, FILE *f)
{
	if (cfg->handoff_us_set)
		fprintf(f, "%s = %u\n", key, cfg->handoff_us);
	else
		show_unset(key, "chosen by the lcore layout", f);
}

static void
show_cache_control(const struct ewykd_config *cfg, const char *key, FILE *f)
{
	show_list(key, cfg->cache_control[0], sizeof(cfg->cache_control[0]),
			cfg->nb_cache_control, "none", f);
}

static void
show_mime_type(const struct ewykd_config *cfg, const char *key, FILE *f)
{
	show_list(key, cfg->mime_types[0], sizeof(cfg->mime_types[0]),
			cfg->nb_mime_types, "none", f);
}

static void
show_mime_types_file(const struct ewykd_config *cfg, const char *key,
		FILE *f)
{
	show_str(key, cfg->mime_types_file, MIME_DEFAULT_FILE
			" if it exists, else the built-in table", f);
}

static void
show_shards(const struct ewykd_config *cfg, const char *key, FILE *f)
{
	if (cfg->shards == 0)
		show_unset(key, "one per worker lcore not --reserved", f);
	else
		fprintf(f, "%s = %u\n", key, cfg->shards);
}

static void
show_tcp_cc(const struct ewykd_config *cfg, const char *key, FILE *f)
{
	fprintf(f, "%s = %s\n", key, cfg->tcp_cc == TCP_CC_NEWRENO ? "newreno" :
			cfg->tcp_cc == TCP_CC_BBR ? "bbr" : "cubic");
}

static void
show_tx_cksum(const struct ewykd_config *cfg, const char *key, FILE *f)
{
	fprintf(f, "%s = %s\n", key, cfg->sw_cksum ? "software" : "offload");
}

static int
set_tso(struct ewykd_config *cfg, const char *val, char *err, size_t errlen)
{
	if (strcmp(val, "offload") == 0)
		cfg->no_tso = false;
	else if (strcmp(val, "off") == 0)
		cfg->no_tso = true;
	else {
		snprintf(err, errlen, "'%s' is neither offload nor off", val);
		return -1;
	}
	return 0;
}

static void
show_tso(const struct ewykd_config *cfg, const char *key, FILE *f)
{
	fprintf(f, "%s = %s\n", key, cfg->no_tso ? "off" : "offload");
}

static void
show_idle(const struct ewykd_config *cfg, const char *key, FILE *f)
{
	fprintf(f, "%s = %s\n", key, cfg->idle == IDLE_POLL ? "poll" : "sleep");
}

/* The pairs in order, each certificate with its key and OCSP response
 * (--tls-ocsp staples the --tls-cert before it): --tls-key's and
 * --tls-ocsp's own shows say something only when there is no pair. */
static void
show_tls_cert(const struct ewykd_config *cfg, const char *key, FILE *f)
{
	uint16_t i;

	if (cfg->nb_tls_certs == 0)
		show_unset(key, "none: no TLS", f);
	for (i = 0; i < cfg->nb_tls_certs; i++) {
		fprintf(f, "%s = %s\ntls-key = %s\n", key, cfg->tls_cert[i],
				cfg->tls_key[i]);
		if (cfg->tls_ocsp[i][0] != '\0')
			fprintf(f, "tls-ocsp = %s\n", cfg->tls_ocsp[i]);
	}
}

static void
show_tls_key(const struct ewykd_config *cfg, const char *key, FILE *f)
{
	if (cfg->nb_tls_certs == 0)
		show_unset(key, "none", f);
}

static void
show_tls_ocsp(const struct ewykd_config *cfg, const char *key, FILE *f)
{
	if (cfg->nb_tls_certs == 0)
		show_unset(key, "none", f);
}

static void
show_quic_port(const struct ewykd_config *cfg, const char *key, FILE *f)
{
	if (cfg->quic_port == 0)
		show_unset(key, "--tls-port's, with --http3", f);
	else
		fprintf(f, "%s = %u\n", key, cfg->quic_port);
}

static void
show_tls_port(const struct ewykd_config *cfg, const char *key, FILE *f)
{
	if (cfg->tls_port == 0)
		show_unset(key, "none: no TLS", f);
	else
		fprintf(f, "%s = %u\n", key, cfg->tls_port);
}

static void
show_tls_priority(const struct ewykd_config *cfg, const char *key, FILE *f)
{
	show_str(key, cfg->tls_priority, "the default of docs/tls.md", f);
}

static const struct opt_def opts[] = {
	{ "config", "FILE", set_config, NULL,
	  "INI file: [ewykd] takes these options as keys, each once but the repeatable ones, [eal] args= the EAL options (used when none stand before --); on either side of --" },
	{ "ip", "ADDR/PREFIX", set_ip, show_ip, "IPv4 address of a port (198.18.0.2/24 "
		"when neither --ip nor --ip6 is given); repeat it for the next "
		"ports (see below)" },
	{ "ip6", "ADDR/PREFIX", set_ip6, show_ip6, "IPv6 address of a port "
		"(2001:2::2/64), beside the link-local one its MAC gives; repeat "
		"it for the next ports (none)" },
	{ "gateway", "ADDR", set_gateway, show_gateway, "next hop for IPv4 "
		"addresses off a port's link (upstreams elsewhere), on the port's "
		"subnet; repeat it for the next ports, 'none' for a port without "
		"one (none)" },
	{ "gateway6", "ADDR", set_gateway6, show_gateway6, "next hop for IPv6 "
		"addresses off a port's link, on its prefix or link-local; repeat "
		"it for the next ports (none)" },
	{ "www", "DIR", set_www, show_www, "static files, loaded into memory at start (none)" },
	{ "demo-routes", NULL, set_demo_routes, show_demo_routes, "serve the demonstration and test routes /echo, /kv/, /bytes, /spin, /delay, /blocking-delay, /either, /upload: unauthenticated, they store, reflect and burn CPU on request, never on a public address (off)" },
	{ "state-api", NULL, set_state_api, show_state_api, "serve the journaled store at /v1/state/KEY (off)" },
	{ "access-log", "FILE|-", set_access_log, show_access_log, "a line per exchange to FILE (appended; reopened on SIGUSR1) or standard output, written by a thread of its own; a shard never waits for it (none)" },
	{ "access-log-format", "FORMAT", set_access_log_format, show_access_log_format, "combined (as nginx's) or json (combined)" },
	{ "state-api-token", "FILE", set_state_api_token, show_state_api_token, "turns --state-api on, requiring 'Authorization: Bearer TOKEN' with the token on FILE's first line; FILE readable by its owner only (none)" },
	{ "state-dir", "DIR", set_state_dir, show_state_dir, "journal of /v1/state (none: memory only, no durable PUT)" },
	{ "store-keys", "N", set_store_keys, show_store_keys, "keys the store holds, 4 KiB each (4096)" },
	{ "journal-max-mb", "MB", set_journal_max_mb, show_journal_max_mb, "compact the journal past this size (64)" },
	{ "store-conflate", "on|off", set_store_conflate, show_store_conflate, "off: every PUT writes its own record, a baseline (on)" },
	{ "kv-keys", "N", set_kv_keys, show_kv_keys, "keys of the in-memory /kv store, 4 KiB each (4096)" },
	{ "plugin", "FILE.so[:ARG]", set_plugin, show_plugin, "load handlers from a plugin, ARG to its init; repeatable (none)" },
	{ "upstream", "NAME=ADDR:PORT", set_upstream, show_upstream, "an upstream on the link that /proxy/NAME/ forwards to, IPv4 or [IPv6]; repeatable (none)" },
	{ "trusted-forwarder", "ADDR[/LEN]", set_trusted_forwarder, show_trusted_forwarder, "clients (a proxy or load balancer in front) whose X-Forwarded-For, X-Forwarded-Proto, X-Forwarded-Host and Forwarded a proxied request passes on, ewykd's own after them; from any other client they are dropped; IPv4 or IPv6, repeatable (none)" },
	{ "upstream-conns", "N", set_upstream_conns, show_upstream_conns, "upstream connections per shard, all upstreams, and as many ewyk_fetch() handles (64)" },
	{ "upstream-connect-timeout-ms", "MS", set_upstream_connect_ms, show_upstream_connect_ms, "504 when an upstream's handshake takes longer (1000)" },
	{ "upstream-timeout-ms", "MS", set_upstream_timeout_ms, show_upstream_timeout_ms, "504 when an upstream's answer head takes longer; a body silent this long is cut (10000)" },
	{ "upstream-idle-ms", "MS", set_upstream_idle_ms, show_upstream_idle_ms, "close pooled upstream connections idle this long (30000)" },
	{ "strategy", "MODE", set_strategy, show_strategy, "adaptive, or force pc, pec or epc (adaptive)" },
	{ "reserved", "N", set_reserved, show_reserved, "worker lcores kept for hand-offs, beyond the shards' (0)" },
	{ "reserved-spin-us", "US", set_reserved_spin_us, show_reserved_spin_us, "an idle reserved lcore spins this long, then parks (50)" },
	{ "blocking-threads", "N", set_blocking_threads, show_blocking_threads, "blocking pool threads at most (16)" },
	{ "blocking-queue", "N", set_blocking_queue, show_blocking_queue, "blocking pool queue; full answers 503 (256)" },
	{ "fibers", "N", set_fibers, show_fibers, "fibers per shard for fiber handlers; 0 = none, they run as BLOCKING (4096)" },
	{ "fiber-stack", "KB", set_fiber_stack_kb, show_fiber_stack_kb, "usable stack of each fiber, with a guard page below (64)" },
	{ "stuck-ms", "MS", set_stuck_ms, show_stuck_ms, "hand a shard off when one inline request runs longer, 0 = off (10)" },
	{ "handoff-us", "US", set_handoff_us, show_handoff_us, "adaptive: run a BLOCKING request on the shard while a reserved lcore watches, and hand the shard over only once it has run this long; 0 = hand over before every one, as Jetty (20 where every worker lcore has a CPU of its own and one is spare, else 0)" },
	{ "www-max-mb", "N", set_www_max_mb, show_www_max_mb, "refuse to start if --www holds more (1024); a file larger alone is left out, and said" },
	{ "cache-control", "PREFIX=VALUE", set_cache_control, show_cache_control, "Cache-Control of the static files whose path starts with PREFIX, the longest PREFIX first; repeatable (none)" },
	{ "mime-type", "EXT=TYPE", set_mime_type, show_mime_type, "media type of the static files ending in .EXT, before --mime-types' and the built-in ones; repeatable (none)" },
	{ "mime-types", "FILE|none", set_mime_types_file, show_mime_types_file, "media types by extension, mime.types format; none: only the built-in table (" MIME_DEFAULT_FILE " when it exists)" },
	{ "listen-port", "N", set_listen_port, show_listen_port, "TCP port served in cleartext (80)" },
	{ "tls-cert", "FILE", set_tls_cert, show_tls_cert, "a PEM certificate (its chain after it) served over TLS on --tls-port; repeatable, each with the --tls-key that follows: the first pair is the default, the others are chosen by the name the client asks for (SNI) and the signature algorithms it offers, so an ECDSA and an RSA certificate may serve one name (none: no TLS)" },
	{ "tls-key", "FILE", set_tls_key, show_tls_key, "the PEM private key of the --tls-cert before it, unencrypted, owned by the user ewykd runs as and readable by it alone (chmod 600); never logged" },
	{ "tls-ocsp", "FILE", set_tls_ocsp, show_tls_ocsp, "a DER OCSP response stapled with the --tls-cert before it; read again on reload (none)" },
	{ "tls-port", "N", set_tls_port, show_tls_port, "TCP port served over TLS (443 once a certificate is given)" },
	{ "tls-priority", "STRING", set_tls_priority, show_tls_priority, "GnuTLS priority string, checked at start: no protocol older than TLS 1.2 (TLS 1.3 and 1.2, AES-GCM and ChaCha20-Poly1305, ECDHE on X25519 or P-256, the server's order: see docs/tls.md)" },
	{ "tls-handshake-timeout-ms", "MS", set_tls_handshake_timeout_ms, show_tls_handshake_timeout_ms, "reset a connection whose TLS handshake takes longer, counted (10000)" },
	{ "tls-ticket-rotate-s", "S", set_tls_ticket_rotate_s, show_tls_ticket_rotate_s, "a new session ticket key, shared by every shard, this often; tickets under the old one then resume no more, 0 = never (43200)" },
	{ "http3", NULL, set_http3, show_http3, "serve HTTP/3 over QUIC on UDP --quic-port with the TLS certificates (refused without one); answers over TLS then carry Alt-Svc: h3=\":PORT\" (off)" },
	{ "quic-port", "N", set_quic_port, show_quic_port, "UDP port of HTTP/3 (--tls-port)" },
	{ "quic-conn-mem", "BYTES", set_quic_conn_mem, show_quic_conn_mem, "memory ngtcp2 and nghttp3 may hold for one QUIC connection; past it the connection is closed (33554432: its largest windows and the state beside them)" },
	{ "quic-retry-threshold", "N", set_quic_retry_threshold, show_quic_retry_threshold, "QUIC handshakes under way on a shard past which a new client must first prove its address with a Retry; 0: every client (64)" },
	{ "tls-offload", "auto|on|off", set_tls_offload, show_tls_offload, "where a full handshake runs. on: a task of the strategy, handed to a reserved lcore or the blocking pool so that polling goes on; off: inline where it arrives, a baseline; auto: handed over while the pool's CPUs have half a CPU free of other processes' work (read from /proc/stat), else inline (auto)" },
	{ "port-id", "N", set_port_id, show_port_id, "DPDK ethdev port of the first --ip (0)" },
	{ "shards", "N", set_shards, show_shards, "RX/TX queue pairs, one lcore each (worker lcores)" },
	{ "mtu", "N", set_mtu, show_mtu, "MTU of the ports (1500); mbufs hold a whole frame" },
	{ "rx-desc", "N", set_rx_desc, show_rx_desc, "RX descriptors per queue (1024)" },
	{ "tx-desc", "N", set_tx_desc, show_tx_desc, "TX descriptors per queue (1024)" },
	{ "mbufs", "N", set_mbufs, show_mbufs, "mbufs in the pool (32767)" },
	{ "max-conns", "N", set_max_conns, show_max_conns, "TCP connections per shard (4096)" },
	{ "snd-buf", "BYTES", set_snd_buf, show_snd_buf, "send buffer a TCP connection starts with, 32 KiB at least: an HTTP/2 DATA frame goes whole (262144)" },
	{ "snd-buf-max", "BYTES", set_snd_buf_max, show_snd_buf_max, "send-buffer autotuning's ceiling: a connection's send buffer follows twice its congestion window from --snd-buf up to this (as Linux's tcp_wmem); equal to --snd-buf: no autotuning; the send queues' share of the mbufs still holds them back together (4194304, or --snd-buf if more)" },
	{ "rto-min-ms", "MS", set_rto_min_ms, show_rto_min_ms, "lower bound of the retransmission timeout (200)" },
	{ "time-wait-ms", "MS", set_time_wait_ms, show_time_wait_ms, "TIME-WAIT and FIN-WAIT-2 linger (4000)" },
	{ "max-time-wait", "N", set_max_time_wait, show_max_time_wait, "TIME-WAIT connections kept per shard (2048)" },
	{ "syn-backlog", "N", set_syn_backlog, show_syn_backlog, "half-open connections per shard before SYN cookies (1024)" },
	{ "syncookies", "on|off", set_syncookies, show_syncookies, "answer SYNs past the backlog with cookies (on)" },
	{ "challenge-ack-limit", "N", set_challenge_ack_limit, show_challenge_ack_limit, "challenge ACKs and ACKs of out-of-window segments without data, per second per shard, 0 = no limit (1000)" },
	{ "invalid-ack-ms", "MS", set_invalid_ack_ms, show_invalid_ack_ms, "one ACK per MS per connection at most for out-of-window segments, data or not, and challenges (Linux's tcp_invalid_ratelimit), 0 = no limit (500)" },
	{ "arp-reply-limit", "N", set_arp_reply_limit, show_arp_reply_limit, "ARP replies per second per shard, 0 = no limit (1000)" },
	{ "nd-reply-limit", "N", set_nd_reply_limit, show_nd_reply_limit, "IPv6 neighbour advertisements answering solicitations, per second per shard, 0 = no limit (1000)" },
	{ "rcv-win", "BYTES", set_rcv_win, show_rcv_win, "largest TCP receive window; the window scale is chosen for the larger of it and --rcv-buf (1048576)" },
	{ "rcv-buf", "BYTES", set_rcv_buf, show_rcv_buf, "largest TCP receive buffer of a connection, beyond what the application takes: from 64 KB it follows twice what the application takes per round trip (autotuning); the shard's receive queues hold half its mbufs at most, and its buffers grow by as many full segments together; also the ceiling of HTTP/2's receive windows (a stream's; its connection's four times it); 0 = the window is the application's room alone (6291456)" },
	{ "delack-ms", "MS", set_delack_ms, show_delack_ms, "longest delay of an ACK, 0 = none (40)" },
	{ "tcp-cc", "ALGO", set_tcp_cc, show_tcp_cc, "congestion control: newreno, cubic or bbr (BBR v1, as Linux's; paced) (cubic)" },
	{ "tcp-pacing", "on|off", set_tcp_pacing, show_tcp_pacing, "pace NewReno's and CUBIC's sending: twice cwnd per round trip in slow start, 1.2 times after, as Linux (off)" },
	{ "keepalive-ms", "MS", set_keepalive_ms, show_keepalive_ms, "idle time before keepalive probes, 0 = off (0)" },
	{ "idle-timeout-ms", "MS", set_idle_timeout_ms, show_idle_timeout_ms, "reset connections idle this long, 0 = off (0)" },
	{ "tx-cksum", "MODE", set_tx_cksum, show_tx_cksum, "offload (when the NIC offers it) or software (offload)" },
	{ "tso", "MODE", set_tso, show_tso, "offload: a large answer leaves in frames of up to 64 KB that the NIC cuts into segments (TSO, when it offers it with checksum offload and chained mbufs); off: every segment built here (offload)" },
	{ "header-timeout-ms", "MS", set_header_timeout_ms, show_header_timeout_ms, "408 when a request head takes longer, 0 = off (10000)" },
	{ "keepalive-timeout-ms", "MS", set_keepalive_timeout_ms, show_keepalive_timeout_ms, "close keep-alive connections idle this long, 0 = off (60000)" },
	{ "max-target", "BYTES", set_max_target, show_max_target, "longest request target (URL) of either protocol, 414 past it (8192)" },
	{ "max-header-bytes", "BYTES", set_max_header_bytes, show_max_header_bytes, "longest HTTP/1.1 request head and HTTP/2 header list, 431 past it (414 when the request line is what does not fit); each connection's HTTP/1.1 input buffer, held while it reads or answers and given back after a second idle (16384)" },
	{ "max-body", "BYTES", set_max_body, show_max_body, "largest request body a plain handler (not one that reads its body as it comes) is given whole, HTTP/1.1, HTTP/2 and HTTP/3; 413 past it, on the Content-Length before the body is read (HTTP/1.1, HTTP/2), or as the body crosses it; at least 4096 (1048576)" },
	{ "body-buffers", "N", set_body_buffers, show_body_buffers, "request bodies over 4 KiB a shard gathers at once for plain handlers, each in a buffer of --max-body (with --max-header-bytes), reserved at start but in memory only once used; 503 when all are busy (16)" },
	{ "drain-ms", "MS", set_drain_ms, show_drain_ms, "on SIGTERM, finish in-flight requests this long (1000)" },
	{ "idle", "MODE", set_idle, show_idle, "poll (busy) or sleep (back off when idle) (sleep)" },
	{ "idle-sleep-us", "US", set_idle_sleep_us, show_idle_sleep_us, "longest idle sleep (100)" },
	{ "check-config", NULL, NULL, NULL, "check what a start would but the ports, memory and the file prefix (the EAL options by the EAL's parser, the lcores, --www loaded, the TLS certificates and keys, plugins opened, --state-dir and --access-log writable), start nothing, and print the configuration resolved as a --config file; exit 0 if good, 2 for the configuration, 1 for resources; on either side of --" },
	{ "help", NULL, NULL, NULL, "this text" },
	{ "version", NULL, NULL, NULL, "print the version" },
};
#define NOPTS (sizeof(opts) / sizeof(opts[0]))

void
options_defaults(struct ewykd_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->www_max_mb = 1024;
	cfg->listen_port = 80;
	cfg->tls_handshake_timeout_ms = 10000;
	cfg->tls_ticket_rotate_s = 43200;
	cfg->tls_offload = TLS_OFFLOAD_AUTO;
	cfg->quic_retry_threshold = 64;
	cfg->quic_conn_mem = 32u << 20;
	cfg->mtu = 1500;
	cfg->rx_desc = 1024;
	cfg->tx_desc = 1024;
	cfg->mbufs = 32767;
	cfg->max_conns = 4096;
	cfg->snd_buf = 262144;
	cfg->snd_buf_max = 0;	/* 4 MiB, or --snd-buf if more: check_buffers() */
	cfg->rto_min_ms = 200;
	cfg->time_wait_ms = 4000;
	cfg->syn_backlog = 1024;
	cfg->challenge_ack_limit = 1000;
	cfg->invalid_ack_ms = 500;
	cfg->arp_reply_limit = 1000;
	cfg->nd_reply_limit = 1000;
	cfg->max_time_wait = 2048;
	cfg->rcv_win = 1 << 20;
	cfg->rcv_buf = 6 << 20;	/* Linux's tcp_rmem ceiling */
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
	cfg->max_body = HTTP_MAX_BODY;
	cfg->body_buffers = HTTP_BODY_BUFFERS;
	cfg->journal_max_mb = 64;
	cfg->idle = IDLE_SLEEP;
	cfg->idle_sleep_us = 100;
}

void
options_usage(const char *prog)
{
	size_t i;

	printf("Usage: %s [EAL options] -- [ewykd options]\n"
	       "       %s --config FILE [ewykd options]\n\n"
	       "ewyk: a kernel-bypass HTTP/1.1 and HTTP/2 appliance on DPDK: cleartext\n"
	       "(HTTP/2 by prior knowledge or Upgrade) on --listen-port, and TLS 1.3 and\n"
	       "1.2 (HTTP/2 by ALPN) on --tls-port once --tls-cert and --tls-key are given.\n"
	       "SIGHUP reloads the TLS certificates and keys.\n\n"
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

/* A key the file may give more than once: each adds an item. */
static bool
repeatable(const struct opt_def *o)
{
	return o != NULL && (o->set == set_ip || o->set == set_ip6 ||
			o->set == set_plugin || o->set == set_upstream ||
			o->set == set_trusted_forwarder ||
			o->set == set_cache_control || o->set == set_mime_type ||
			o->set == set_tls_cert || o->set == set_tls_key ||
			o->set == set_tls_ocsp);
}

/* The first entry of the same key in the same section before entries[i],
 * or -1. */
static int
earlier_entry(const struct ini *ini, int i)
{
	int j;

	for (j = i - 1; j >= 0 && ini->entries[j].section ==
			ini->entries[i].section; j--)
		;
	for (j++; j < i; j++)
		if (strcmp(ini->entries[j].key, ini->entries[i].key) == 0)
			return j;
	return -1;
}

/* "[eal] args = EAL options". */
static int
load_eal(struct ewykd_config *cfg, const struct ini_entry *en,
		const char *file, char *err, size_t errlen)
{
	if (strcmp(en->key, "args") != 0) {
		snprintf(err, errlen, "%s:%d: unknown key '%s' ([" EAL_SECTION
				"] takes one key, args = EAL options)",
				file, en->line, en->key);
		return -1;
	}
	if (strlen(en->value) >= sizeof(cfg->eal_args)) {
		snprintf(err, errlen, "%s:%d: args: longer than %zu bytes",
				file, en->line, sizeof(cfg->eal_args) - 1);
		return -1;
	}
	snprintf(cfg->eal_args, sizeof(cfg->eal_args), "%s", en->value);
	return 0;
}

/* Keys of [site], [route] and [upstream] that may come more than once. */
static bool
site_key_repeatable(const char *key)
{
	return strcmp(key, "host") == 0 || strcmp(key, "add-header") == 0 ||
		strcmp(key, "server") == 0;
}

/* One entry of the file into cfg: each key known, given once unless it
 * is repeatable (a second value would silently replace the first). */
static int
load_entry(struct ewykd_config *cfg, const struct ini *ini, int i,
		const char *file, char *err, size_t errlen)
{
	const struct ini_entry *en = &ini->entries[i];
	const struct ini_section *sec = &ini->sections[en->section];
	bool ours = strcmp(sec->kind, SECTION) == 0;
	const struct opt_def *o = ours ? find_opt(en->key) : NULL;
	int first = earlier_entry(ini, i);
	char sub[512];

	if (ours && (o == NULL || o->set == NULL || o->set == set_config)) {
		snprintf(err, errlen, "%s:%d: unknown key '%s'", file, en->line,
				en->key);
		return -1;
	}
	if (first >= 0 && (ours ? !repeatable(o) :
			!site_key_repeatable(en->key))) {
		snprintf(err, errlen, "%s:%d: %s given twice (first on line %d)",
				file, en->line, en->key, ini->entries[first].line);
		return -1;
	}
	if (strcmp(sec->kind, EAL_SECTION) == 0)
		return load_eal(cfg, en, file, err, errlen);
	if (!ours) {
		if (sites_conf_key(&cfg->sites, sec->kind, en->key, en->value,
				sub, sizeof(sub)) != 0) {
			snprintf(err, errlen, "%s:%d: [%s %s] %s", file, en->line,
					sec->kind, sec->name, sub);
			return -1;
		}
		return 0;
	}
	if (o->set(cfg, en->value, sub, sizeof(sub)) != 0) {
		snprintf(err, errlen, "%s:%d: %s: %s", file, en->line, en->key, sub);
		return -1;
	}
	return 0;
}

/* A section of a kind this file takes: [ewykd] and [eal] once, unnamed;
 * [site NAME] and [route NAME], each NAME once. */
static int
load_section(struct ewykd_config *cfg, const struct ini_section *sec,
		const char *file, char *err, size_t errlen)
{
	bool named = strcmp(sec->kind, "site") == 0 ||
		strcmp(sec->kind, "route") == 0 ||
		strcmp(sec->kind, "upstream") == 0;
	char sub[256];

	if (!named && (strcmp(sec->kind, SECTION) == 0 ||
			strcmp(sec->kind, EAL_SECTION) == 0)) {
		if (sec->name[0] == '\0')
			return 0;
		snprintf(err, errlen, "%s:%d: [%s %s]: [%s] has no name", file,
				sec->line, sec->kind, sec->name, sec->kind);
		return -1;
	}
	if (!named) {
		snprintf(err, errlen, "%s:%d: unknown section [%s%s%s] (expected ["
				SECTION "], [" EAL_SECTION "], [site NAME], [route "
				"NAME] or [upstream NAME])", file, sec->line, sec->kind,
				sec->name[0] ? " " : "", sec->name);
		return -1;
	}
	if (sec->name[0] == '\0') {
		snprintf(err, errlen, "%s:%d: [%s] needs a name: [%s NAME]", file,
				sec->line, sec->kind, sec->kind);
		return -1;
	}
	if (sites_conf_section(&cfg->sites, sec->kind, sec->name, sec->line,
			sub, sizeof(sub)) != 0) {
		snprintf(err, errlen, "%s:%d: %s", file, sec->line, sub);
		return -1;
	}
	return 0;
}

static int
load_config(struct ewykd_config *cfg, char *err, size_t errlen)
{
	const char *file = cfg->config_file;
	char sub[512];
	struct ini ini;
	int i, s = 0, rc = 0;

	if (options_ini_load(&ini, file, err, errlen) != 0)
		return -1;
	/* Entries follow their sections: each section is opened before its
	 * keys are read into it. */
	for (i = 0; i < ini.n && rc == 0; i++) {
		while (rc == 0 && s <= ini.entries[i].section)
			rc = load_section(cfg, &ini.sections[s++], file, err, errlen);
		if (rc == 0)
			rc = load_entry(cfg, &ini, i, file, err, errlen);
	}
	while (rc == 0 && s < ini.nsections)
		rc = load_section(cfg, &ini.sections[s++], file, err, errlen);
	if (rc == 0 && sites_conf_finish(&cfg->sites, sub, sizeof(sub)) != 0) {
		snprintf(err, errlen, "%s:%s", file, sub);
		rc = -1;
	}
	options_ini_free(&ini);
	return rc;
}

void
options_write(const struct ewykd_config *cfg, const char *eal_args, FILE *f)
{
	size_t i;

	fprintf(f, "[" EAL_SECTION "]\n");
	if (eal_args[0] != '\0')
		fprintf(f, "args = %s\n", eal_args);
	else
		show_unset("args", "none: the EAL's defaults", f);
	fprintf(f, "\n[" SECTION "]\n");
	for (i = 0; i < NOPTS; i++)
		if (opts[i].show != NULL)
			opts[i].show(cfg, opts[i].name, f);
	sites_conf_write(&cfg->sites, f);
}

void
options_free(struct ewykd_config *cfg)
{
	sites_conf_free(&cfg->sites);
}

/* "ADDR:PORT", then "weight=N" and "backup" in any order. */
static int
pool_server(struct upstream_target *t, const struct pool_conf *pl,
		const char *spec, char *err, size_t errlen)
{
	char buf[POOL_SERVER_MAX], *save = NULL, *word;
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", spec);
	for (word = strtok_r(buf, " \t", &save); word != NULL;
			word = strtok_r(NULL, " \t", &save), n++) {
		char *end;
		unsigned long w;

		if (n == 0) {
			if (parse_endpoint(word, &t->addr, &t->port, err,
					errlen) != 0)
				return -1;
		} else if (strcmp(word, "backup") == 0) {
			t->backup = true;
		} else if (strncmp(word, "weight=", 7) == 0) {
			w = strtoul(word + 7, &end, 10);
			if (word[7] < '0' || word[7] > '9' || *end != '\0' ||
					w == 0 || w > 1000) {
				snprintf(err, errlen, "%s: a weight from 1 to 1000",
						word);
				return -1;
			}
			t->weight = (uint16_t)w;
		} else {
			snprintf(err, errlen, "'%s': ADDR:PORT, then weight=N or "
					"backup", word);
			return -1;
		}
	}
	if (strlen(pl->name) >= sizeof(t->name)) {
		snprintf(err, errlen, "the upstream's name: at most %zu "
				"characters", sizeof(t->name) - 1);
		return -1;
	}
	memcpy(t->name, pl->name, strlen(pl->name) + 1);
	t->balance = pl->balance;
	snprintf(t->hash_field, sizeof(t->hash_field), "%s", pl->hash_field);
	t->health_fails = pl->health_fails;
	t->health_interval_ms = pl->health_interval_ms;
	memcpy(t->health_uri, pl->health_uri, sizeof(t->health_uri));
	t->connect_timeout_ms = pl->connect_timeout_ms;
	t->answer_timeout_ms = pl->timeout_ms;
	return n > 0 ? 0 : (snprintf(err, errlen, "needs ADDR:PORT"), -1);
}

/* Each [upstream]'s servers after the --upstream ones, as consecutive
 * targets of its name: a pool, to lib/http. */
static int
pools_into_upstreams(struct ewykd_config *cfg)
{
	const struct sites_conf *s = &cfg->sites;
	char err[256];
	int i, j;
	uint16_t k;

	cfg->nb_cli_upstreams = cfg->nb_upstreams;
	for (i = 0; i < s->npools; i++) {
		const struct pool_conf *pl = &s->pools[i];

		for (k = 0; k < cfg->nb_upstreams; k++)
			if (strcmp(cfg->upstreams[k].name, pl->name) == 0) {
				fprintf(stderr, "ewykd: %s:%d: [upstream %s]: an "
						"--upstream has that name\n",
						cfg->config_file, pl->line, pl->name);
				return OPT_EXIT_USAGE;
			}
		for (j = 0; j < pl->nb_servers; j++) {
			struct upstream_target *t;

			if (cfg->nb_upstreams == UPSTREAM_MAX) {
				fprintf(stderr, "ewykd: %s:%d: [upstream %s]: more "
						"than %d servers in all\n",
						cfg->config_file, pl->line, pl->name,
						UPSTREAM_MAX);
				return OPT_EXIT_USAGE;
			}
			t = &cfg->upstreams[cfg->nb_upstreams];
			*t = (struct upstream_target){ 0 };
			if (pool_server(t, pl, pl->servers[j], err,
					sizeof(err)) != 0) {
				fprintf(stderr, "ewykd: %s:%d: [upstream %s] server "
						"%s: %s\n", cfg->config_file, pl->line,
						pl->name, pl->servers[j], err);
				return OPT_EXIT_USAGE;
			}
			cfg->nb_upstreams++;
		}
	}
	return 0;
}

unsigned int
options_tls_pairs(const struct ewykd_config *cfg)
{
	unsigned int n = cfg->nb_tls_certs;
	int i;

	for (i = 0; i < cfg->sites.nsites; i++)
		n += cfg->sites.sites[i].tls_cert[0] != '\0';
	return n;
}

/* With sites, --www is refused (each site has its root), a route's
 * upstream is an --upstream, and the certificates fit the TLS layer. */
static int
check_sites(struct ewykd_config *cfg)
{
	const struct sites_conf *s = &cfg->sites;
	int i;
	uint16_t j;

	if (s->nsites == 0)
		return 0;
	if (cfg->www[0] != '\0') {
		fprintf(stderr, "ewykd: --www %s with [site] sections: each site "
				"names its own root\n", cfg->www);
		return OPT_EXIT_USAGE;
	}
	for (i = 0; i < s->nroutes; i++) {
		const struct route_conf *rt = &s->routes[i];

		if (rt->kind != ROUTE_UPSTREAM)
			continue;
		for (j = 0; j < cfg->nb_upstreams; j++)
			if (strcmp(cfg->upstreams[j].name, rt->target) == 0)
				break;
		if (j == cfg->nb_upstreams) {
			fprintf(stderr, "ewykd: %s:%d: [route %s] upstream: %s: no "
					"such --upstream\n", cfg->config_file,
					rt->line, rt->name, rt->target);
			return OPT_EXIT_USAGE;
		}
	}
	if (options_tls_pairs(cfg) > TLS_PAIRS_MAX) {
		fprintf(stderr, "ewykd: %u certificates of --tls-cert and the "
				"sites' tls-cert: at most %d in all\n",
				options_tls_pairs(cfg), TLS_PAIRS_MAX);
		return OPT_EXIT_USAGE;
	}
	return 0;
}

/* Each gateway belongs to a port of its family and lies on that port's
 * link (an IPv6 one may be link-local), not one of its addresses. */
static int
check_gateways(const struct ewykd_config *cfg)
{
	char a[INET6_ADDRSTRLEN + 8], ip[INET6_ADDRSTRLEN + 8];
	uint16_t i;

	for (i = 0; i < cfg->nb_gateways + cfg->nb_gateway6s; i++) {
		bool v6 = i >= cfg->nb_gateways;
		uint16_t p = v6 ? (uint16_t)(i - cfg->nb_gateways) : i;
		struct net_addr g = { .family = v6 ? NET_AF_INET6 : NET_AF_INET };
		bool ll = v6 && IN6_IS_ADDR_LINKLOCAL(
				(const struct in6_addr *)cfg->gateway6[p]);

		if (!options_has_gateway(cfg, p, g.family))
			continue;
		if (v6)
			memcpy(g.ip.v6, cfg->gateway6[p], 16);
		else
			g.ip = net_ip4(cfg->gateway[p]);
		net_addr_format(&g, 0, a, sizeof(a));
		if (p >= (v6 ? cfg->nb_ip6s : cfg->nb_ips)) {
			fprintf(stderr, "ewykd: --gateway%s %s: port %u has no "
					"--ip%s\n", v6 ? "6" : "", a, p,
					v6 ? "6" : "");
			return OPT_EXIT_USAGE;
		}
		if (v6)
			options_format_ip6(cfg, p, ip, sizeof(ip));
		else
			options_format_ip(cfg, p, ip, sizeof(ip));
		if ((!ll && options_addr_holding(cfg, &g) != p) ||
				memcmp(&g.ip, v6 ? (const void *)cfg->ip6[p] :
				(const void *)&cfg->ip[p], v6 ? 16 : 4) == 0) {
			fprintf(stderr, "ewykd: --gateway%s %s: not another "
					"address on the link of port %u's --ip%s "
					"%s\n", v6 ? "6" : "", a, p, v6 ? "6" : "",
					ip);
			return OPT_EXIT_USAGE;
		}
	}
	return 0;
}

int
options_port_to(const struct ewykd_config *cfg, const struct net_addr *a)
{
	int port = options_addr_holding(cfg, a);
	uint16_t i;

	for (i = 0; port < 0 && i < cfg->nb_ports; i++)
		if (options_has_gateway(cfg, i, a->family))
			port = i;
	return port;
}

bool
options_has_gateway(const struct ewykd_config *cfg, uint16_t i,
		uint8_t family)
{
	static const uint8_t none[16];

	if (family == NET_AF_INET)
		return i < cfg->nb_gateways && cfg->gateway[i] != 0;
	return i < cfg->nb_gateway6s && memcmp(cfg->gateway6[i], none, 16) != 0;
}

/* Upstreams are reached on the link of one of the ports, or through a
 * port's gateway for their family. */
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
		if (port < 0 && options_port_to(cfg, &t->addr) >= 0)
			continue;	/* through a gateway */
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
		fprintf(stderr, "%s, and no --gateway%s is given\n", n == 0 ?
				(v6 ? "any --ip6" : "any --ip") : "",
				v6 ? "6" : "");
		return OPT_EXIT_USAGE;
	}
	return 0;
}

/* Certificates and keys in pairs; the TLS port defaults to 443 and is not
 * the cleartext one. */
static int
check_tls(struct ewykd_config *cfg)
{
	if (cfg->nb_tls_certs != cfg->nb_tls_keys) {
		fprintf(stderr, "ewykd: %u --tls-cert and %u --tls-key: they "
				"come in pairs\n", cfg->nb_tls_certs,
				cfg->nb_tls_keys);
		return OPT_EXIT_USAGE;
	}
	if (options_tls_pairs(cfg) == 0) {
		if (cfg->http3) {
			fprintf(stderr, "ewykd: --http3 without --tls-cert and "
					"--tls-key: QUIC needs a certificate\n");
			return OPT_EXIT_USAGE;
		}
		if (cfg->quic_port != 0) {
			fprintf(stderr, "ewykd: --quic-port %u without "
					"--http3\n", cfg->quic_port);
			return OPT_EXIT_USAGE;
		}
		if (cfg->tls_port == 0)
			return 0;
		fprintf(stderr, "ewykd: --tls-port %u without --tls-cert and "
				"--tls-key\n", cfg->tls_port);
		return OPT_EXIT_USAGE;
	}
	if (cfg->tls_port == 0)
		cfg->tls_port = 443;
	if (cfg->quic_port != 0 && !cfg->http3) {
		fprintf(stderr, "ewykd: --quic-port %u without --http3\n",
				cfg->quic_port);
		return OPT_EXIT_USAGE;
	}
	if (cfg->http3 && cfg->quic_port == 0)
		cfg->quic_port = cfg->tls_port;
	if (cfg->tls_port == cfg->listen_port) {
		fprintf(stderr, "ewykd: --tls-port %u is --listen-port too\n",
				cfg->tls_port);
		return OPT_EXIT_USAGE;
	}
	return 0;
}

/* Autotuning's ceiling is not below where the buffer starts; unset, it
 * is 4 MiB, or --snd-buf if that is more. */
static int
check_buffers(struct ewykd_config *cfg)
{
	if (cfg->snd_buf_max == 0)
		cfg->snd_buf_max = RTE_MAX(cfg->snd_buf, 4u << 20);
	if (cfg->snd_buf_max < cfg->snd_buf) {
		fprintf(stderr, "ewykd: --snd-buf-max %u is below --snd-buf %u\n",
				cfg->snd_buf_max, cfg->snd_buf);
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
		if (c != 0 || opts[idx].set != set_config)
			continue;
		if (cfg->config_file[0] != '\0') {
			fprintf(stderr, "ewykd: --config given twice (%s and %s): "
					"one file holds the configuration\n",
					cfg->config_file, optarg);
			return OPT_EXIT_USAGE;
		}
		if (set_config(cfg, optarg, sub, sizeof(sub)) != 0) {
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
			if (opts[idx].set == set_gateway &&
					!cfg->gateway_from_cli) {
				cfg->gateway_from_cli = true;
				cfg->nb_gateways = 0;
			}
			if (opts[idx].set == set_gateway6 &&
					!cfg->gateway6_from_cli) {
				cfg->gateway6_from_cli = true;
				cfg->nb_gateway6s = 0;
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
	if (check_gateways(cfg) != 0 || pools_into_upstreams(cfg) != 0 ||
			check_upstreams(cfg) != 0 || check_sites(cfg) != 0 ||
			check_tls(cfg) != 0 ||
			check_buffers(cfg) != 0)
		return OPT_EXIT_USAGE;
	for (i = 1; i < (size_t)argc; i++)
		if (strcmp(argv[i], "--check-config") == 0)
			cfg->check_only = true;
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
