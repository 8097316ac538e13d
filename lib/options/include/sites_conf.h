/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sites and routes as the configuration file gives them ("[site NAME]",
 * "[route NAME]"): read, checked key by key (an error names the file,
 * the line and the key) and checked as a whole (a route's site exists,
 * no two routes of one site on one path). What serves them is the
 * serving side's; this is the model alone.
 */
#ifndef EWYK_SITES_CONF_H
#define EWYK_SITES_CONF_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SITE_NAME_MAX 33	/* a section's NAME with its NUL */
#define SITE_HOST_MAX 254	/* a DNS name, with its NUL */
#define ROUTE_PATH_MAX 128	/* HTTP_ROUTE_PATH_MAX */
#define ROUTE_HEADERS_MAX 8	/* add-header per route */
#define ROUTE_HEADER_MAX 256	/* "NAME: VALUE" with its NUL */

struct site_conf {
	char name[SITE_NAME_MAX];
	char (*hosts)[SITE_HOST_MAX];	/* lower case; "*.a.b" a wildcard */
	uint16_t nb_hosts;
	char root[PATH_MAX];	/* "": none */
	char tls_cert[PATH_MAX];	/* "": none; with tls_key */
	char tls_key[PATH_MAX];
	int line;
};

enum route_kind {
	ROUTE_NONE,
	ROUTE_ROOT,		/* static files under a directory */
	ROUTE_UPSTREAM,		/* forwarded to an --upstream */
	ROUTE_REDIRECT,		/* CODE URL, {host} and {uri} substituted */
	ROUTE_STATUS,		/* a fixed status */
	ROUTE_PLUGIN,		/* a handler a --plugin registered by name */
};

struct route_conf {
	char name[SITE_NAME_MAX];
	int site;		/* index in sites; -1: every site */
	char site_name[SITE_NAME_MAX];	/* as given; "" for every site */
	char path[ROUTE_PATH_MAX];
	bool exact;		/* exact = PATH, else prefix = PATH */
	enum route_kind kind;
	char target[PATH_MAX];	/* the root, upstream, URL or handler */
	uint16_t code;		/* redirect's or status's */
	bool strip_prefix;
	bool compress;		/* an upstream's text answers gzipped */
	bool websocket;		/* WebSockets passed on to the upstream */
	char headers[ROUTE_HEADERS_MAX][ROUTE_HEADER_MAX];	/* "NAME: VALUE" */
	uint16_t nb_headers;
	uint32_t limit_rps;	/* per client address; 0: no limit */
	uint32_t limit_burst;	/* requests beyond the rate at once */
	uint32_t limit_conns;	/* requests at once; 0: no limit */
	int line;
};

#define POOL_SERVERS_MAX 16
#define POOL_SERVER_MAX 96	/* "ADDR:PORT weight=N backup", NUL */

/* [upstream NAME]: a pool of servers. Its addresses are parsed where the
 * --upstream ones are (options.c); the rest here. */
struct pool_conf {
	char name[SITE_NAME_MAX];
	char servers[POOL_SERVERS_MAX][POOL_SERVER_MAX];	/* as given */
	uint16_t nb_servers;
	uint8_t balance;	/* enum upstream_balance */
	char hash_field[32];	/* "hash-key = header NAME"; "": client */
	bool hash_key_set;
	char health_uri[128];	/* "": no active checks */
	uint32_t health_fails;	/* 3 unless set */
	uint32_t health_interval_ms;	/* 10000 unless set */
	uint32_t connect_timeout_ms;	/* 0: --upstream-connect-timeout-ms */
	uint32_t timeout_ms;	/* 0: --upstream-timeout-ms */
	int line;
};

struct sites_conf {
	struct site_conf *sites;	/* the first is the default */
	int nsites;
	struct route_conf *routes;	/* in the file's order */
	int nroutes;
	struct pool_conf *pools;
	int npools;
};

/* A new section: "site", "route" or "upstream" (kind) named name. 0, or -1 with the
 * reason in err (out of memory). */
int sites_conf_section(struct sites_conf *s, const char *kind,
		const char *name, int line, char *err, size_t errlen);
/* key = value of the last section of that kind. 0, or -1 with "KEY:
 * what is wrong" in err. */
int sites_conf_key(struct sites_conf *s, const char *kind, const char *key,
		const char *value, char *err, size_t errlen);
/* After the file: every route's site found, its path and what it does
 * given, a site's certificate with its key, no host named twice. 0, or
 * -1 with "LINE: [KIND NAME]: what is wrong" in err. */
int sites_conf_finish(struct sites_conf *s, char *err, size_t errlen);
void sites_conf_free(struct sites_conf *s);
/* The sites and routes as the file's sections, read back the same. */
void sites_conf_write(const struct sites_conf *s, FILE *f);

#endif /* EWYK_SITES_CONF_H */
