/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ewyk-load's options: ewykd's port options for its own side, h2load's
 * for the load where they apply, and its own (--rate, --new-conn, the
 * checks). Every error is one line, and the exit status 2.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "http_client.h"
#include "load.h"

#define ERR(...) do { \
	fprintf(stderr, "ewyk-load: " __VA_ARGS__); \
	fputc('\n', stderr); \
	return 2; \
} while (0)

void
load_options_usage(FILE *out)
{
	fputs(
"Usage: ewyk-load [EAL options] -- [options] URL...\n"
"An HTTP/1.1, h2c and HTTPS load generator on ewyk's own TCP over a DPDK\n"
"port. Each worker lcore (EAL's -l) is a shard: its queue pair, its\n"
"connections.\n"
"URLs: http[s]://ADDR[:PORT]/PATH, ADDR IPv4 or [IPv6], all of one scheme\n"
"and authority; they are requested in turn. https: TLS 1.3 or 1.2 on\n"
"GnuTLS, ALPN offering h2 and http/1.1 (--h1: http/1.1 only), the\n"
"protocol the server picks used; the server's certificate is not\n"
"verified (as h2load); no session is resumed, so that --new-conn makes a\n"
"full handshake per request; a failed handshake counts as tls_handshake.\n"
"\n"
"Its own side (as ewykd's):\n"
"  --ip ADDR/PREFIX     IPv4 address of the port (default 198.18.0.1/24)\n"
"  --ip-count N         N IPv4 addresses from --ip's on (default 1, at most\n"
"                       64): connections spread over them, for more than\n"
"                       one address's 28,232 local ports to one server\n"
"  --ip6 ADDR/PREFIX    IPv6 address of the port (none by default)\n"
"  --port-id N          the DPDK port (default 0)\n"
"  --mtu N              the port's MTU (default 1500)\n"
"  --mbufs N            mbufs of the pool (default 32768 per worker)\n"
"The load (as h2load's):\n"
"  -n N                 requests in all (default 1); with -D: unbounded\n"
"  -c N                 connections (default 1), spread over the workers\n"
"  -m N                 streams per connection (h2c), or requests\n"
"                       pipelined on it (--h1) (default 1, at most 1024)\n"
"  -D SECONDS           run this long instead of until -n are done\n"
"  --h1                 HTTP/1.1 (default: h2c, HTTP/2 with prior knowledge;\n"
"                       https: as ALPN chooses)\n"
"  --sni NAME           https: send NAME as the server name (default: none,\n"
"                       as the URL's host is an address)\n"
"  --tls-priority STR   https: GnuTLS's priority string, as ewykd's (default:\n"
"                       TLS 1.3 and 1.2, AEAD suites, ECDHE on X25519 or\n"
"                       P-256)\n"
"  -d FILE              send FILE as the body of a POST\n"
"  -i FILE              requests from FILE, one a line: URL, or\n"
"                       METHOD URL [BODYFILE]\n"
"  --rate R             open loop: R requests per second in all, each due\n"
"                       at its time whatever the answers do; latencies are\n"
"                       from when a request was due (default: closed loop,\n"
"                       -c x -m in flight)\n"
"  --new-conn           a new connection for each request (connections per\n"
"                       second)\n"
"  --timeout SECONDS    a request without an answer this long times out and\n"
"                       its connection is reset (default 10)\n"
"  --hold SECONDS       after the requests, keep the connections open and\n"
"                       idle this long (memory per idle connection)\n"
"  --sample N           while holding, N requests a second on connections\n"
"                       picked in turn among the held ones\n"
"Checks (an answer that fails one is counted failed, by kind):\n"
"  --expect-status N    this status (default: any 2xx or 3xx)\n"
"  --expect-length N    a body of N bytes\n"
"  --expect-sha256 HEX  a body with this SHA-256\n"
"Output:\n"
"  --json FILE          the summary as JSON too\n"
"  --quiet              no progress line each second\n"
"  -h, --help           this text\n"
"\n"
"Prints h2load's summary lines (finished in, requests, status codes,\n"
"traffic) and a latency line: p50, p90, p99, p99.9 and max.\n", out);
}

static int
parse_u64(const char *opt, const char *val, uint64_t min, uint64_t max,
		uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(val, &end, 10);
	if (val[0] == '\0' || val[0] == '-' || *end != '\0' || errno != 0 ||
			v < min || v > max)
		ERR("%s '%s': not a number from %llu to %llu", opt, val,
				(unsigned long long)min,
				(unsigned long long)max);
	*out = v;
	return 0;
}

static int
parse_secs(const char *opt, const char *val, double min, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(val, &end);
	if (val[0] == '\0' || *end != '\0' || errno != 0 || !isfinite(v) ||
			v < min || v > 86400 * 365)
		ERR("%s '%s': not a number of seconds from %g", opt, val, min);
	*out = v;
	return 0;
}

static int
parse_prefix(const char *opt, const char *val, int af, void *addr,
		uint8_t *prefix)
{
	char buf[INET6_ADDRSTRLEN + 8], *slash, *end;
	long p;
	int maxp = af == AF_INET ? 32 : 128;

	if (strlen(val) >= sizeof(buf))
		ERR("%s '%s': not ADDR/PREFIX", opt, val);
	strcpy(buf, val);
	slash = strchr(buf, '/');
	if (slash == NULL)
		ERR("%s '%s': not ADDR/PREFIX (the prefix length is missing)",
				opt, val);
	*slash = '\0';
	p = strtol(slash + 1, &end, 10);
	if (inet_pton(af, buf, addr) != 1 || *end != '\0' || slash[1] == '\0' ||
			p < 1 || p > maxp)
		ERR("%s '%s': not ADDR/PREFIX with a prefix from 1 to %d", opt,
				val, maxp);
	*prefix = (uint8_t)p;
	return 0;
}

static int
read_file(const char *opt, const char *path, uint8_t **out, uint32_t *len)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	uint8_t *buf;

	if (f == NULL)
		ERR("%s %s: %s", opt, path, strerror(errno));
	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) ||
			st.st_size > (1 << 30)) {
		fclose(f);
		ERR("%s %s: not a regular file of at most 1 GiB", opt, path);
	}
	buf = malloc((size_t)st.st_size + 1);
	if (buf == NULL || fread(buf, 1, (size_t)st.st_size, f) !=
			(size_t)st.st_size) {
		free(buf);
		fclose(f);
		ERR("%s %s: cannot read it", opt, path);
	}
	fclose(f);
	*out = buf;
	*len = (uint32_t)st.st_size;
	return 0;
}

/* http[s]://ADDR[:PORT][/PATH]: the target of one request, its scheme
 * and authority checked against the first URL's. */
static int
parse_url(struct load_conf *conf, const char *url, struct load_url *u)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *p, *end, *path, *start;
	struct net_addr a = { 0 };
	unsigned long port;
	bool tls = strncmp(url, "https://", 8) == 0;
	size_t hl;

	if (!tls && strncmp(url, "http://", 7) != 0)
		ERR("URL '%s': not http[s]://ADDR[:PORT]/PATH", url);
	if (conf->nb_urls > 0 && tls != conf->tls)
		ERR("URL '%s': every URL has the first one's scheme (%s)", url,
				conf->tls ? "https" : "http");
	port = tls ? 443 : 80;
	start = p = url + (tls ? 8 : 7);
	path = strchr(p, '/');
	end = path != NULL ? path : p + strlen(p);
	if (*p == '[') {
		const char *rb = memchr(p, ']', (size_t)(end - p));

		hl = rb != NULL ? (size_t)(rb - p - 1) : sizeof(host);
		if (rb == NULL || hl >= sizeof(host))
			ERR("URL '%s': an IPv6 address goes in brackets", url);
		memcpy(host, p + 1, hl);
		host[hl] = '\0';
		if (inet_pton(AF_INET6, host, a.ip.v6) != 1)
			ERR("URL '%s': '%s' is not an IPv6 address", url, host);
		a.family = NET_AF_INET6;
		p = rb + 1;
	} else {
		const char *colon = memchr(p, ':', (size_t)(end - p));
		const char *he = colon != NULL ? colon : end;

		hl = (size_t)(he - p);
		if (hl == 0 || hl >= sizeof(host))
			ERR("URL '%s': no host", url);
		memcpy(host, p, hl);
		host[hl] = '\0';
		if (inet_pton(AF_INET, host, &a.ip.v4) != 1)
			ERR("URL '%s': '%s' is not an IPv4 address (ewyk-load "
					"resolves no names)", url, host);
		a.family = NET_AF_INET;
		p = he;
	}
	if (*p == ':') {
		char *pe;

		errno = 0;
		port = strtoul(p + 1, &pe, 10);
		if (pe != end || pe == p + 1 || port < 1 || port > 65535 ||
				errno != 0)
			ERR("URL '%s': the port is not a number from 1 to 65535",
					url);
	} else if (p != end) {
		ERR("URL '%s': not http[s]://ADDR[:PORT]/PATH", url);
	}
	if (path == NULL)
		path = "/";
	if (strlen(path) >= sizeof(u->path))
		ERR("URL '%s': a path of at most %zu bytes", url,
				sizeof(u->path) - 1);
	if (strpbrk(path, " \t\r\n#") != NULL)
		ERR("URL '%s': spaces, controls and '#' do not go in a path",
				url);
	strcpy(u->path, path);
	if (conf->nb_urls == 0) {
		conf->server = a;
		conf->server_port = (uint16_t)port;
		conf->tls = tls;
		snprintf(conf->authority, sizeof(conf->authority), "%.*s",
				(int)(end - start), start);
	} else if (conf->server.family != a.family ||
			!net_ip_eq(&conf->server.ip, &a.ip) ||
			conf->server_port != port) {
		ERR("URL '%s': every URL goes to the first one's address and "
				"port (%s)", url, conf->authority);
	}
	return 0;
}

static int
add_url(struct load_conf *conf, const char *method, const char *url,
		const char *body_file)
{
	struct load_url *u;
	int rc;

	if (conf->nb_urls == LOAD_URLS_MAX)
		ERR("more than %u URLs", LOAD_URLS_MAX);
	u = &conf->urls[conf->nb_urls];
	memset(u, 0, sizeof(*u));
	if (strlen(method) >= sizeof(u->method) ||
			strspn(method, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") !=
			strlen(method) || method[0] == '\0')
		ERR("method '%s': an upper-case token", method);
	strcpy(u->method, method);
	rc = parse_url(conf, url, u);
	if (rc != 0)
		return rc;
	if (body_file != NULL) {
		rc = read_file("body", body_file, &u->body, &u->body_len);
		if (rc != 0)
			return rc;
	}
	conf->nb_urls++;
	return 0;
}

/* -i FILE: "URL" or "METHOD URL [BODYFILE]" a line; # comments. */
static int
read_url_file(struct load_conf *conf, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[LOAD_PATH_MAX + 512];
	unsigned int lineno = 0;
	int rc = 0;

	if (f == NULL)
		ERR("-i %s: %s", path, strerror(errno));
	while (rc == 0 && fgets(line, sizeof(line), f) != NULL) {
		char *tok[4], *save = NULL;
		int n = 0;

		lineno++;
		for (char *t = strtok_r(line, " \t\r\n", &save); t != NULL &&
				n < 4; t = strtok_r(NULL, " \t\r\n", &save))
			tok[n++] = t;
		if (n == 0 || tok[0][0] == '#')
			continue;
		if (n == 1)
			rc = add_url(conf, "GET", tok[0], NULL);
		else if (n <= 3)
			rc = add_url(conf, tok[0], tok[1], n == 3 ? tok[2] : NULL);
		else {
			fclose(f);
			ERR("-i %s line %u: URL, or METHOD URL [BODYFILE]", path,
					lineno);
		}
	}
	fclose(f);
	if (rc == 0 && conf->nb_urls == 0)
		ERR("-i %s: no URL in it", path);
	return rc;
}

static int
parse_sha256(const char *hex, uint8_t out[32])
{
	unsigned int i, v;

	if (strlen(hex) != 64)
		ERR("--expect-sha256 '%s': 64 hexadecimal digits", hex);
	for (i = 0; i < 32; i++) {
		if (sscanf(hex + 2 * i, "%2x", &v) != 1 ||
				strspn(hex + 2 * i, "0123456789abcdefABCDEF") < 2)
			ERR("--expect-sha256 '%s': 64 hexadecimal digits", hex);
		out[i] = (uint8_t)v;
	}
	return 0;
}

/* A DNS name for TLS's server name: letters, digits, '-' and '.', as
 * RFC 6066 wants (no address, no trailing dot). */
static int
parse_sni(const char *val, char *out, size_t len)
{
	size_t n = strlen(val);
	struct in6_addr a6;
	struct in_addr a4;

	if (n == 0 || n >= len || n > 253 || val[0] == '.' || val[n - 1] == '.' ||
			strspn(val, "abcdefghijklmnopqrstuvwxyz"
				"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.") != n ||
			inet_pton(AF_INET, val, &a4) == 1 ||
			inet_pton(AF_INET6, val, &a6) == 1)
		ERR("--sni '%s': a DNS name (letters, digits, '-' and '.')",
				val);
	strcpy(out, val);
	return 0;
}

enum {
	OPT_IP = 256, OPT_IP_COUNT, OPT_IP6, OPT_PORT_ID, OPT_MTU, OPT_MBUFS, OPT_H1,
	OPT_RATE, OPT_NEW_CONN, OPT_TIMEOUT, OPT_HOLD, OPT_SAMPLE,
	OPT_EXPECT_STATUS, OPT_EXPECT_LENGTH, OPT_EXPECT_SHA256, OPT_JSON,
	OPT_QUIET, OPT_SNI, OPT_TLS_PRIORITY,
};

static const struct option long_opts[] = {
	{ "ip", required_argument, NULL, OPT_IP },
	{ "ip-count", required_argument, NULL, OPT_IP_COUNT },
	{ "ip6", required_argument, NULL, OPT_IP6 },
	{ "port-id", required_argument, NULL, OPT_PORT_ID },
	{ "mtu", required_argument, NULL, OPT_MTU },
	{ "mbufs", required_argument, NULL, OPT_MBUFS },
	{ "requests", required_argument, NULL, 'n' },
	{ "clients", required_argument, NULL, 'c' },
	{ "max-concurrent-streams", required_argument, NULL, 'm' },
	{ "duration", required_argument, NULL, 'D' },
	{ "data", required_argument, NULL, 'd' },
	{ "input-file", required_argument, NULL, 'i' },
	{ "h1", no_argument, NULL, OPT_H1 },
	{ "rate", required_argument, NULL, OPT_RATE },
	{ "new-conn", no_argument, NULL, OPT_NEW_CONN },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "hold", required_argument, NULL, OPT_HOLD },
	{ "sample", required_argument, NULL, OPT_SAMPLE },
	{ "expect-status", required_argument, NULL, OPT_EXPECT_STATUS },
	{ "expect-length", required_argument, NULL, OPT_EXPECT_LENGTH },
	{ "expect-sha256", required_argument, NULL, OPT_EXPECT_SHA256 },
	{ "json", required_argument, NULL, OPT_JSON },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ "sni", required_argument, NULL, OPT_SNI },
	{ "tls-priority", required_argument, NULL, OPT_TLS_PRIORITY },
	{ "threads", required_argument, NULL, 't' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void
defaults(struct load_conf *conf)
{
	memset(conf, 0, sizeof(*conf));
	inet_pton(AF_INET, "198.18.0.1", &conf->ip);
	conf->prefix = 24;
	conf->ip_count = 1;
	conf->mtu = 1500;
	conf->requests = 1;
	conf->clients = 1;
	conf->depth = 1;
	conf->proto = LOAD_H2C;
	conf->timeout_s = 10;
	conf->expect_length = -1;
}

/* Whether the IPv6 server is on this side's link: in --ip6's prefix, or
 * link-local. */
static bool
v6_on_link(const struct load_conf *conf)
{
	const uint8_t *a = conf->server.ip.v6, *b = conf->ip6;
	unsigned int whole = conf->prefix6 / 8, rest = conf->prefix6 % 8;

	if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80)
		return true;
	return memcmp(a, b, whole) == 0 && (rest == 0 ||
		((a[whole] ^ b[whole]) & (uint8_t)(0xff00 >> rest)) == 0);
}

/* Checks across options, and the HTTP/1.1 request heads built once. */
static int
finish(struct load_conf *conf, bool n_given, const char *data_file)
{
	uint32_t i;

	if (conf->nb_urls == 0)
		ERR("no URL: give at least one (http[s]://ADDR[:PORT]/PATH), or "
				"-i FILE");
	if ((conf->sni[0] != '\0' || conf->tls_priority != NULL) && !conf->tls)
		ERR("--sni and --tls-priority are for https:// URLs");
	if (conf->server.family == NET_AF_INET6 && conf->prefix6 == 0)
		ERR("an IPv6 URL needs --ip6 ADDR/PREFIX for this side");
	if (conf->server.family == NET_AF_INET && conf->ip == 0)
		ERR("an IPv4 URL needs --ip ADDR/PREFIX for this side");
	if (conf->server.family == NET_AF_INET && ((ntohl(conf->ip) ^
			ntohl(conf->server.ip.v4)) & (conf->prefix == 0 ? 0 :
			~0u << (32 - conf->prefix))) != 0)
		ERR("the server's address is off --ip's subnet: this side "
				"reaches its own link only");
	if (conf->server.family == NET_AF_INET6 && !v6_on_link(conf))
		ERR("the server's address is off --ip6's prefix: this side "
				"reaches its own link only");
	if (conf->ip_count > 1) {
		uint32_t first = ntohl(conf->ip), last = first +
			conf->ip_count - 1u, mask = conf->prefix == 0 ? 0 :
			~0u << (32 - conf->prefix), srv;

		if ((first & mask) != (last & mask) || (~mask & ~last) == 0)
			ERR("--ip-count %u: the addresses from --ip's on leave "
					"its subnet", conf->ip_count);
		srv = ntohl(conf->server.ip.v4);
		if (conf->server.family == NET_AF_INET && srv >= first &&
				srv <= last)
			ERR("--ip-count %u: the server's address is among "
					"this side's", conf->ip_count);
	}
	if (conf->duration_s > 0 && !n_given)
		conf->requests = 0;
	if (conf->duration_s == 0 && conf->requests == 0)
		ERR("-n 0 needs -D SECONDS");
	if (conf->requests > 0 && conf->requests < conf->clients &&
			conf->duration_s == 0 && conf->hold_s == 0)
		ERR("-n %llu is fewer than -c %u: every connection needs a "
				"request", (unsigned long long)conf->requests,
				conf->clients);
	if (conf->new_conn && conf->depth > 1)
		ERR("--new-conn sends one request per connection: -m must be 1");
	if (conf->sample > 0 && conf->hold_s == 0)
		ERR("--sample needs --hold SECONDS");
	if (data_file != NULL)
		for (i = 0; i < conf->nb_urls; i++) {
			int rc;

			if (conf->urls[i].body != NULL)
				continue;
			rc = read_file("-d", data_file, &conf->urls[i].body,
					&conf->urls[i].body_len);
			if (rc != 0)
				return rc;
			if (strcmp(conf->urls[i].method, "GET") == 0)
				strcpy(conf->urls[i].method, "POST");
		}
	for (i = 0; i < conf->nb_urls; i++) {
		struct load_url *u = &conf->urls[i];
		char head[LOAD_PATH_MAX + 512];
		size_t n = h1_request_head(head, sizeof(head), u->method,
				u->path, conf->authority, u->body_len,
				conf->new_conn, NULL);

		u->h1_head = malloc(n + 1);
		if (n == 0 || u->h1_head == NULL)
			ERR("URL %s: its request head does not fit", u->path);
		memcpy(u->h1_head, head, n + 1);
		u->h1_head_len = (uint32_t)n;
	}
	return 0;
}

int
load_options_parse(struct load_conf *conf, int argc, char **argv)
{
	const char *data_file = NULL, *url_file = NULL;
	bool n_given = false;
	uint64_t v;
	int opt, rc = 0, i;

	defaults(conf);
	optind = 1;
	opterr = 0;
	while (rc == 0 && (opt = getopt_long(argc, argv, ":n:c:m:D:d:i:t:h",
			long_opts, NULL)) != -1) {
		switch (opt) {
		case OPT_IP:
			rc = parse_prefix("--ip", optarg, AF_INET, &conf->ip,
					&conf->prefix);
			break;
		case OPT_IP_COUNT:
			rc = parse_u64("--ip-count", optarg, 1, NET_IP4_ADDRS_MAX,
					&v);
			conf->ip_count = (uint16_t)v;
			break;
		case OPT_IP6:
			rc = parse_prefix("--ip6", optarg, AF_INET6, conf->ip6,
					&conf->prefix6);
			break;
		case OPT_PORT_ID:
			rc = parse_u64("--port-id", optarg, 0, 1023, &v);
			conf->port_id = (uint16_t)v;
			break;
		case OPT_MTU:
			rc = parse_u64("--mtu", optarg, 576, 9000, &v);
			conf->mtu = (uint16_t)v;
			break;
		case OPT_MBUFS:
			rc = parse_u64("--mbufs", optarg, 4096, 16777216, &v);
			conf->mbufs = (uint32_t)v;
			break;
		case 'n':
			rc = parse_u64("-n", optarg, 0, UINT64_MAX / 2,
					&conf->requests);
			n_given = true;
			break;
		case 'c':
			rc = parse_u64("-c", optarg, 1, 16777216, &v);
			conf->clients = (uint32_t)v;
			break;
		case 'm':
			rc = parse_u64("-m", optarg, 1, LOAD_DEPTH_MAX, &v);
			conf->depth = (uint32_t)v;
			break;
		case 'D':
			rc = parse_secs("-D", optarg, 0.001, &conf->duration_s);
			break;
		case 'd':
			data_file = optarg;
			break;
		case 'i':
			url_file = optarg;
			break;
		case OPT_H1:
			conf->proto = LOAD_H1;
			break;
		case OPT_RATE:
			rc = parse_secs("--rate", optarg, 0.001, &conf->rate);
			break;
		case OPT_NEW_CONN:
			conf->new_conn = true;
			break;
		case OPT_TIMEOUT:
			rc = parse_secs("--timeout", optarg, 0.001,
					&conf->timeout_s);
			break;
		case OPT_HOLD:
			rc = parse_secs("--hold", optarg, 0.001, &conf->hold_s);
			break;
		case OPT_SAMPLE:
			rc = parse_u64("--sample", optarg, 1, 1000000, &v);
			conf->sample = (uint32_t)v;
			break;
		case OPT_EXPECT_STATUS:
			rc = parse_u64("--expect-status", optarg, 100, 599, &v);
			conf->expect_status = (int)v;
			break;
		case OPT_EXPECT_LENGTH:
			rc = parse_u64("--expect-length", optarg, 0,
					UINT64_MAX / 2, &v);
			conf->expect_length = (int64_t)v;
			break;
		case OPT_EXPECT_SHA256:
			rc = parse_sha256(optarg, conf->expect_sha256);
			conf->check_digest = true;
			break;
		case OPT_JSON:
			if (strlen(optarg) >= sizeof(conf->json))
				ERR("--json: the path is too long");
			strcpy(conf->json, optarg);
			break;
		case OPT_QUIET:
			conf->quiet = true;
			break;
		case OPT_SNI:
			rc = parse_sni(optarg, conf->sni, sizeof(conf->sni));
			break;
		case OPT_TLS_PRIORITY: {
			char err[TLS_ERR_LEN];

			if (tls_priority_check(optarg, err, sizeof(err)) != 0)
				ERR("%s", err);
			conf->tls_priority = optarg;
			break;
		}
		case 't':
			ERR("-t: ewyk-load's threads are its worker lcores: give "
					"them with the EAL's -l (before --)");
		case 'h':
			load_options_usage(stdout);
			return 1;
		case ':':
			ERR("option '%s' needs a value (see --help)",
					argv[optind - 1]);
		default:
			ERR("unknown option '%s' (see --help)", argv[optind - 1]);
		}
	}
	if (rc != 0)
		return rc;
	if (url_file != NULL && (rc = read_url_file(conf, url_file)) != 0)
		return rc;
	for (i = optind; i < argc && rc == 0; i++)
		rc = add_url(conf, "GET", argv[i], NULL);
	if (rc != 0)
		return rc;
	return finish(conf, n_given, data_file);
}
