/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ini.h"
#include "sites_conf.h"

static int
fail(char *err, size_t errlen, const char *key, const char *why)
{
	snprintf(err, errlen, "%s: %s", key, why);
	return -1;
}

static int
copy(char *dst, size_t cap, const char *value, const char *key, char *err,
		size_t errlen)
{
	if (value[0] == '\0')
		return fail(err, errlen, key, "needs a value");
	if (strlen(value) >= cap) {
		snprintf(err, errlen, "%s: longer than %zu bytes", key, cap - 1);
		return -1;
	}
	memcpy(dst, value, strlen(value) + 1);
	return 0;
}

/* A host name as a site names it: DNS labels of letters, digits and '-',
 * or "*." and such a name; kept in lower case. */
static int
host_add(struct site_conf *site, const char *value, char *err, size_t errlen)
{
	const char *name = strncmp(value, "*.", 2) == 0 ? value + 2 : value;
	size_t len = strlen(value), i, label = 0;
	char (*hosts)[SITE_HOST_MAX];

	if (len == 0 || len >= SITE_HOST_MAX)
		return fail(err, errlen, "host", "a DNS name of 1 to 253 bytes");
	for (i = 0; name[i] != '\0'; i++) {
		char ch = name[i];

		if (ch == '.') {
			if (label == 0 || name[i + 1] == '\0')
				break;
			label = 0;
		} else if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
				(ch >= '0' && ch <= '9') || ch == '-') {
			if (++label > 63)
				break;
		} else {
			break;
		}
	}
	if (name[i] != '\0' || label == 0) {
		snprintf(err, errlen, "host: '%s' is not a host name (labels of "
				"letters, digits and '-', or '*.' before one)", value);
		return -1;
	}
	hosts = realloc(site->hosts, sizeof(*hosts) * (site->nb_hosts + 1u));
	if (hosts == NULL)
		return fail(err, errlen, "host", strerror(ENOMEM));
	site->hosts = hosts;
	for (i = 0; i <= len; i++)
		hosts[site->nb_hosts][i] = (char)(value[i] >= 'A' &&
				value[i] <= 'Z' ? value[i] - 'A' + 'a' : value[i]);
	site->nb_hosts++;
	return 0;
}

static int
site_key(struct site_conf *site, const char *key, const char *value,
		char *err, size_t errlen)
{
	if (strcmp(key, "host") == 0)
		return host_add(site, value, err, errlen);
	if (strcmp(key, "root") == 0)
		return copy(site->root, sizeof(site->root), value, key, err,
				errlen);
	if (strcmp(key, "tls-cert") == 0)
		return copy(site->tls_cert, sizeof(site->tls_cert), value, key,
				err, errlen);
	if (strcmp(key, "tls-key") == 0)
		return copy(site->tls_key, sizeof(site->tls_key), value, key,
				err, errlen);
	snprintf(err, errlen, "unknown key '%s' (a [site] takes host, root, "
			"tls-cert, tls-key)", key);
	return -1;
}

/* A route's path: '/' first, then visible bytes but '?' and '#'. */
static int
path_set(struct route_conf *rt, const char *key, const char *value,
		char *err, size_t errlen)
{
	size_t i, len = strlen(value);

	if (rt->path[0] != '\0')
		return fail(err, errlen, key, "a route has one prefix or exact "
				"path");
	if (value[0] != '/' || len >= sizeof(rt->path))
		return fail(err, errlen, key, "a path that begins with '/', up "
				"to 127 bytes");
	for (i = 0; i < len; i++)
		if ((unsigned char)value[i] <= ' ' || value[i] == '?' ||
				value[i] == '#' || value[i] == 0x7f)
			return fail(err, errlen, key, "a path without blanks, "
					"controls, '?' or '#'");
	memcpy(rt->path, value, len + 1);
	rt->exact = key[0] == 'e';
	return 0;
}

/* "CODE" alone, or "CODE URL" for a redirect. */
static int
code_set(struct route_conf *rt, const char *key, const char *value,
		enum route_kind kind, char *err, size_t errlen)
{
	char *end;
	long code = strtol(value, &end, 10);

	if (kind == ROUTE_REDIRECT) {
		if (end == value || *end != ' ' || (code != 301 && code != 302 &&
				code != 303 && code != 307 && code != 308))
			return fail(err, errlen, key, "CODE URL: a code of 301, 302, "
					"303, 307 or 308, a space, then the URL");
		while (*end == ' ')
			end++;
		if (copy(rt->target, sizeof(rt->target), end, key, err, errlen))
			return -1;
		if (strpbrk(rt->target, " \t\r\n") != NULL)
			return fail(err, errlen, key, "a URL without blanks");
	} else if (end == value || *end != '\0' || code < 200 || code > 599) {
		return fail(err, errlen, key, "a status code from 200 to 599");
	}
	rt->code = (uint16_t)code;
	return 0;
}

/* Fields the server writes itself (framing, the connection's, its own
 * name and date): never a route's to add. */
static const char *const own[] = {
	"content-length", "transfer-encoding", "connection", "keep-alive",
	"upgrade", "te", "trailer", "proxy-connection", "date", "server",
};

/* "NAME: VALUE": a field name of token bytes, a value of visible bytes
 * and blanks. */
static int
header_add(struct route_conf *rt, const char *value, char *err,
		size_t errlen)
{
	const char *colon = strchr(value, ':');
	size_t i;

	if (rt->nb_headers == ROUTE_HEADERS_MAX)
		return fail(err, errlen, "add-header", "at most 8 per route");
	if (colon == NULL || colon == value || colon[1] != ' ' ||
			colon[2] == '\0')
		return fail(err, errlen, "add-header", "NAME: VALUE");
	for (i = 0; value + i < colon; i++)
		if (strchr("!#$%&'*+-.^_`|~", value[i]) == NULL &&
				!((value[i] >= 'a' && value[i] <= 'z') ||
				(value[i] >= 'A' && value[i] <= 'Z') ||
				(value[i] >= '0' && value[i] <= '9')))
			return fail(err, errlen, "add-header", "a field name of "
					"letters, digits and !#$%&'*+-.^_`|~");
	for (i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (strlen(own[i]) == (size_t)(colon - value) &&
				strncasecmp(value, own[i], strlen(own[i])) == 0) {
			snprintf(err, errlen, "add-header: %s is the server's own "
					"field", own[i]);
			return -1;
		}
	for (i = (size_t)(colon - value) + 2; value[i] != '\0'; i++)
		if (((unsigned char)value[i] < ' ' && value[i] != '\t') ||
				value[i] == 0x7f)
			return fail(err, errlen, "add-header", "a value without "
					"controls");
	return copy(rt->headers[rt->nb_headers++], ROUTE_HEADER_MAX, value,
			"add-header", err, errlen);
}

static int
route_target(struct route_conf *rt, enum route_kind kind, const char *key,
		const char *value, char *err, size_t errlen)
{
	if (rt->kind != ROUTE_NONE)
		return fail(err, errlen, key, "a route does one thing: root, "
				"upstream, redirect, status or plugin");
	rt->kind = kind;
	if (kind == ROUTE_REDIRECT || kind == ROUTE_STATUS)
		return code_set(rt, key, value, kind, err, errlen);
	return copy(rt->target, sizeof(rt->target), value, key, err, errlen);
}

/* A number of milliseconds or a count: digits, 1 to 2^31 - 1 (or 0 when
 * zero is). */
static int
number(const char *key, const char *value, bool zero, uint32_t *out,
		char *err, size_t errlen)
{
	char *end;
	unsigned long n = strtoul(value, &end, 10);

	if (value[0] < '0' || value[0] > '9' || *end != '\0' || n > INT32_MAX ||
			(n == 0 && !zero))
		return fail(err, errlen, key, zero ? "a number from 0" :
				"a number from 1");
	*out = (uint32_t)n;
	return 0;
}

/* The limits' bound: a rate or count beyond it limits nothing. */
#define LIMIT_MAX 1000000u

static int
limit_set(const char *key, const char *value, bool zero, uint32_t *out,
		char *err, size_t errlen)
{
	if (number(key, value, zero, out, err, errlen) != 0)
		return -1;
	if (*out > LIMIT_MAX)
		return fail(err, errlen, key, zero ? "a number from 0 to 1000000" :
				"a number from 1 to 1000000");
	return 0;
}

static int
route_key(struct route_conf *rt, const char *key, const char *value,
		char *err, size_t errlen)
{
	if (strcmp(key, "site") == 0)
		return copy(rt->site_name, sizeof(rt->site_name), value, key,
				err, errlen);
	if (strcmp(key, "prefix") == 0 || strcmp(key, "exact") == 0)
		return path_set(rt, key, value, err, errlen);
	if (strcmp(key, "root") == 0)
		return route_target(rt, ROUTE_ROOT, key, value, err, errlen);
	if (strcmp(key, "upstream") == 0)
		return route_target(rt, ROUTE_UPSTREAM, key, value, err, errlen);
	if (strcmp(key, "redirect") == 0)
		return route_target(rt, ROUTE_REDIRECT, key, value, err, errlen);
	if (strcmp(key, "status") == 0)
		return route_target(rt, ROUTE_STATUS, key, value, err, errlen);
	if (strcmp(key, "plugin") == 0)
		return route_target(rt, ROUTE_PLUGIN, key, value, err, errlen);
	if (strcmp(key, "strip-prefix") == 0 || strcmp(key, "compress") == 0 ||
			strcmp(key, "websocket") == 0) {
		bool *b = key[0] == 's' ? &rt->strip_prefix : key[0] == 'c' ?
			&rt->compress : &rt->websocket;

		if (strcmp(value, "on") != 0 && strcmp(value, "off") != 0)
			return fail(err, errlen, key, "on or off");
		*b = value[1] == 'n';
		return 0;
	}
	if (strcmp(key, "add-header") == 0)
		return header_add(rt, value, err, errlen);
	if (strcmp(key, "limit-rps") == 0)
		return limit_set(key, value, false, &rt->limit_rps, err, errlen);
	if (strcmp(key, "limit-burst") == 0)
		return limit_set(key, value, true, &rt->limit_burst, err, errlen);
	if (strcmp(key, "limit-conns") == 0)
		return limit_set(key, value, false, &rt->limit_conns, err,
				errlen);
	snprintf(err, errlen, "unknown key '%s' (a [route] takes site, prefix "
			"or exact, one of root, upstream, redirect, status and "
			"plugin, "
			"strip-prefix, websocket, compress, add-header, limit-rps, "
			"limit-burst, limit-conns)", key);
	return -1;
}

static int
pool_key(struct pool_conf *pl, const char *key, const char *value,
		char *err, size_t errlen)
{
	if (strcmp(key, "server") == 0) {
		if (pl->nb_servers == POOL_SERVERS_MAX)
			return fail(err, errlen, key, "at most 16 per upstream");
		return copy(pl->servers[pl->nb_servers++], POOL_SERVER_MAX, value,
				key, err, errlen);
	}
	if (strcmp(key, "balance") == 0) {
		static const char *const ways[] = { "round-robin", "least-conn",
			"hash" };
		uint8_t i;

		for (i = 0; i < 3; i++)
			if (strcmp(value, ways[i]) == 0) {
				pl->balance = i;
				return 0;
			}
		return fail(err, errlen, key, "round-robin, least-conn or hash");
	}
	if (strcmp(key, "hash-key") == 0) {
		pl->hash_key_set = true;
		if (strcmp(value, "client") == 0)
			return 0;
		if (strncmp(value, "header ", 7) == 0 && value[7] != '\0' &&
				strlen(value + 7) < sizeof(pl->hash_field) &&
				strpbrk(value + 7, " \t:") == NULL) {
			memcpy(pl->hash_field, value + 7, strlen(value + 7) + 1);
			return 0;
		}
		return fail(err, errlen, key, "client, or header NAME");
	}
	if (strcmp(key, "protocol") == 0) {
		if (strcmp(value, "http1") == 0)
			return 0;
		if (strcmp(value, "h2c") == 0 || strcmp(value, "https") == 0 ||
				strcmp(value, "h2") == 0)
			return fail(err, errlen, key, "only http1 is served by this "
					"version of ewykd yet");
		return fail(err, errlen, key, "http1, h2c, https or h2");
	}
	if (strcmp(key, "health-uri") == 0) {
		size_t i, len = strlen(value);

		if (value[0] != '/' || len >= sizeof(pl->health_uri))
			return fail(err, errlen, key, "a path that begins with "
					"'/', up to 127 bytes");
		for (i = 0; i < len; i++)
			if ((unsigned char)value[i] <= ' ' || value[i] == '#' ||
					value[i] == 0x7f)
				return fail(err, errlen, key, "a path (and query) "
						"without blanks, controls or '#'");
		memcpy(pl->health_uri, value, len + 1);
		return 0;
	}
	if (strcmp(key, "health-fails") == 0)
		return number(key, value, true, &pl->health_fails, err, errlen);
	if (strcmp(key, "health-interval-ms") == 0)
		return number(key, value, false, &pl->health_interval_ms, err,
				errlen);
	if (strcmp(key, "connect-timeout-ms") == 0)
		return number(key, value, false, &pl->connect_timeout_ms, err,
				errlen);
	if (strcmp(key, "timeout-ms") == 0)
		return number(key, value, false, &pl->timeout_ms, err, errlen);
	snprintf(err, errlen, "unknown key '%s' (an [upstream] takes server, "
			"balance, hash-key, protocol, health-uri, health-fails, "
			"health-interval-ms, connect-timeout-ms, timeout-ms)", key);
	return -1;
}

int
sites_conf_section(struct sites_conf *s, const char *kind, const char *name,
		int line, char *err, size_t errlen)
{
	bool site = strcmp(kind, "site") == 0;

	if (strcmp(kind, "upstream") == 0) {
		struct pool_conf *pl;

		if (options_grow((void **)&s->pools, s->npools,
				sizeof(*s->pools)) == NULL)
			return fail(err, errlen, kind, strerror(ENOMEM));
		pl = &s->pools[s->npools++];
		*pl = (struct pool_conf){ .line = line, .health_fails = 3,
			.health_interval_ms = 10000 };
		snprintf(pl->name, sizeof(pl->name), "%s", name);
		return 0;
	}

	if (site ? options_grow((void **)&s->sites, s->nsites,
			sizeof(*s->sites)) == NULL : options_grow((void **)&s->routes,
			s->nroutes, sizeof(*s->routes)) == NULL)
		return fail(err, errlen, kind, strerror(ENOMEM));
	if (site) {
		struct site_conf *a = &s->sites[s->nsites++];

		*a = (struct site_conf){ .line = line };
		snprintf(a->name, sizeof(a->name), "%s", name);
	} else {
		struct route_conf *a = &s->routes[s->nroutes++];

		*a = (struct route_conf){ .line = line, .site = -1 };
		snprintf(a->name, sizeof(a->name), "%s", name);
	}
	return 0;
}

int
sites_conf_key(struct sites_conf *s, const char *kind, const char *key,
		const char *value, char *err, size_t errlen)
{
	if (strcmp(kind, "site") == 0)
		return site_key(&s->sites[s->nsites - 1], key, value, err,
				errlen);
	if (strcmp(kind, "upstream") == 0)
		return pool_key(&s->pools[s->npools - 1], key, value, err,
				errlen);
	return route_key(&s->routes[s->nroutes - 1], key, value, err, errlen);
}

static int
site_index(const struct sites_conf *s, const char *name)
{
	int i;

	for (i = 0; i < s->nsites; i++)
		if (strcmp(s->sites[i].name, name) == 0)
			return i;
	return -1;
}

static int
finish_site(const struct sites_conf *s, int i, char *err, size_t errlen)
{
	const struct site_conf *site = &s->sites[i];
	int j, k, h;

	if ((site->tls_cert[0] == '\0') != (site->tls_key[0] == '\0')) {
		snprintf(err, errlen, "%d: [site %s]: tls-cert and tls-key come "
				"together", site->line, site->name);
		return -1;
	}
	if (i > 0 && site->nb_hosts == 0) {
		snprintf(err, errlen, "%d: [site %s]: no host (only the first "
				"site, the default, may have none)", site->line,
				site->name);
		return -1;
	}
	for (h = 0; h < site->nb_hosts; h++)
		for (j = 0; j <= i; j++)
			for (k = 0; k < (j == i ? h : s->sites[j].nb_hosts); k++)
				if (strcmp(s->sites[j].hosts[k], site->hosts[h]) == 0) {
					snprintf(err, errlen, "%d: [site %s]: host %s "
							"is [site %s]'s already",
							site->line, site->name,
							site->hosts[h], s->sites[j].name);
					return -1;
				}
	return 0;
}

static int
finish_route(struct sites_conf *s, int i, char *err, size_t errlen)
{
	struct route_conf *rt = &s->routes[i];
	int j;

	if (rt->site_name[0] != '\0') {
		rt->site = site_index(s, rt->site_name);
		if (rt->site < 0) {
			snprintf(err, errlen, "%d: [route %s]: site %s: no such "
					"[site]", rt->line, rt->name, rt->site_name);
			return -1;
		}
	}
	if (rt->path[0] == '\0' || rt->kind == ROUTE_NONE) {
		snprintf(err, errlen, "%d: [route %s]: needs prefix or exact, and "
				"one of root, upstream, redirect, status and "
				"plugin",
				rt->line, rt->name);
		return -1;
	}
	if (rt->limit_burst != 0 && rt->limit_rps == 0) {
		snprintf(err, errlen, "%d: [route %s]: limit-burst is a burst "
				"beyond limit-rps, which is not given", rt->line,
				rt->name);
		return -1;
	}
	if (rt->compress && rt->kind != ROUTE_UPSTREAM &&
			rt->kind != ROUTE_PLUGIN) {
		snprintf(err, errlen, "%d: [route %s]: compress is for an "
				"upstream's or a plugin's answers in this version (a "
				"root's files go as they are stored)", rt->line,
				rt->name);
		return -1;
	}
	if (rt->websocket && rt->kind != ROUTE_UPSTREAM) {
		snprintf(err, errlen, "%d: [route %s]: websocket is for an "
				"upstream (the WebSocket is passed on to it)",
				rt->line, rt->name);
		return -1;
	}
	if (rt->strip_prefix && rt->kind != ROUTE_UPSTREAM) {
		snprintf(err, errlen, "%d: [route %s]: strip-prefix is for an "
				"upstream (a root always looks up the path after "
				"the prefix)", rt->line, rt->name);
		return -1;
	}
	for (j = 0; j < i; j++) {
		const struct route_conf *o = &s->routes[j];

		if (o->site == rt->site && o->exact == rt->exact &&
				strcmp(o->path, rt->path) == 0) {
			snprintf(err, errlen, "%d: [route %s]: %s %s is [route %s]'s "
					"already", rt->line, rt->name,
					rt->exact ? "exact" : "prefix", rt->path,
					o->name);
			return -1;
		}
	}
	return 0;
}

int
sites_conf_finish(struct sites_conf *s, char *err, size_t errlen)
{
	int i;

	if (s->nroutes > 0 && s->nsites == 0) {
		snprintf(err, errlen, "%d: [route %s]: routes belong to sites: "
				"give a [site] first", s->routes[0].line,
				s->routes[0].name);
		return -1;
	}
	for (i = 0; i < s->nsites; i++)
		if (finish_site(s, i, err, errlen) != 0)
			return -1;
	for (i = 0; i < s->nroutes; i++)
		if (finish_route(s, i, err, errlen) != 0)
			return -1;
	for (i = 0; i < s->npools; i++) {
		const struct pool_conf *pl = &s->pools[i];

		if (pl->nb_servers == 0) {
			snprintf(err, errlen, "%d: [upstream %s]: no server",
					pl->line, pl->name);
			return -1;
		}
		if (pl->hash_key_set && pl->balance != 2) {
			snprintf(err, errlen, "%d: [upstream %s]: hash-key is for "
					"balance = hash", pl->line, pl->name);
			return -1;
		}
	}
	return 0;
}

void
sites_conf_free(struct sites_conf *s)
{
	int i;

	for (i = 0; i < s->nsites; i++)
		free(s->sites[i].hosts);
	free(s->sites);
	free(s->routes);
	free(s->pools);
	*s = (struct sites_conf){ 0 };
}

void
sites_conf_write(const struct sites_conf *s, FILE *f)
{
	static const char *const kinds[] = { "", "root", "upstream",
		"redirect", "status", "plugin" };
	int i, j;

	for (i = 0; i < s->nsites; i++) {
		const struct site_conf *site = &s->sites[i];

		fprintf(f, "\n[site %s]\n", site->name);
		if (i == 0)
			fprintf(f, "; the default site: hosts no site names\n");
		for (j = 0; j < site->nb_hosts; j++)
			fprintf(f, "host = %s\n", site->hosts[j]);
		if (site->root[0] != '\0')
			fprintf(f, "root = %s\n", site->root);
		if (site->tls_cert[0] != '\0')
			fprintf(f, "tls-cert = %s\ntls-key = %s\n",
					site->tls_cert, site->tls_key);
	}
	for (i = 0; i < s->npools; i++) {
		static const char *const ways[] = { "round-robin", "least-conn",
			"hash" };
		const struct pool_conf *pl = &s->pools[i];

		fprintf(f, "\n[upstream %s]\n", pl->name);
		for (j = 0; j < pl->nb_servers; j++)
			fprintf(f, "server = %s\n", pl->servers[j]);
		fprintf(f, "balance = %s\n", ways[pl->balance]);
		if (pl->balance == 2)
			fprintf(f, "hash-key = %s%s\n", pl->hash_field[0] ?
					"header " : "client", pl->hash_field);
		if (pl->health_uri[0] != '\0')
			fprintf(f, "health-uri = %s\n", pl->health_uri);
		fprintf(f, "health-fails = %u\nhealth-interval-ms = %u\n",
				pl->health_fails, pl->health_interval_ms);
		if (pl->connect_timeout_ms != 0)
			fprintf(f, "connect-timeout-ms = %u\n",
					pl->connect_timeout_ms);
		if (pl->timeout_ms != 0)
			fprintf(f, "timeout-ms = %u\n", pl->timeout_ms);
	}
	for (i = 0; i < s->nroutes; i++) {
		const struct route_conf *rt = &s->routes[i];

		fprintf(f, "\n[route %s]\n", rt->name);
		if (rt->site >= 0)
			fprintf(f, "site = %s\n", s->sites[rt->site].name);
		fprintf(f, "%s = %s\n%s = ", rt->exact ? "exact" : "prefix",
				rt->path, kinds[rt->kind]);
		if (rt->kind == ROUTE_REDIRECT)
			fprintf(f, "%u %s\n", rt->code, rt->target);
		else if (rt->kind == ROUTE_STATUS)
			fprintf(f, "%u\n", rt->code);
		else
			fprintf(f, "%s\n", rt->target);
		if (rt->strip_prefix)
			fprintf(f, "strip-prefix = on\n");
		if (rt->websocket)
			fprintf(f, "websocket = on\n");
		if (rt->compress)
			fprintf(f, "compress = on\n");
		for (j = 0; j < rt->nb_headers; j++)
			fprintf(f, "add-header = %s\n", rt->headers[j]);
		if (rt->limit_rps != 0)
			fprintf(f, "limit-rps = %u\n", rt->limit_rps);
		if (rt->limit_burst != 0)
			fprintf(f, "limit-burst = %u\n", rt->limit_burst);
		if (rt->limit_conns != 0)
			fprintf(f, "limit-conns = %u\n", rt->limit_conns);
	}
}
