/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sites: name-based virtual hosts. A request's Host (HTTP/2's
 * :authority) chooses a site, by its exact name first, then by a
 * "*.NAME" wildcard one label above it, else the default (the first
 * site); the request's path, normalised, then chooses a route in that
 * site's own router and in the shared one (built-in routes, plugins):
 * longer beats shorter, exact beats prefix, the site's own beats the
 * shared one's. Built at start-up, read-only afterwards.
 */
#ifndef EWYK_HTTP_SITE_H
#define EWYK_HTTP_SITE_H

#include <stddef.h>
#include <stdint.h>

#include "http_head.h"
#include "http_route.h"

#define HTTP_SITE_NAME_MAX 33

struct http_site {
	char name[HTTP_SITE_NAME_MAX];
	struct ewyk_router router;	/* its own routes */
};

struct http_site_host;

struct http_sites {
	struct http_site *sites;	/* the first: the default */
	uint32_t n;
	const struct ewyk_router *shared;	/* every site's; may be NULL */
	struct http_site_host *index;	/* open addressing, by name */
	uint32_t mask;
	uint32_t nhosts;
};

/* n sites named names[i], with no host yet. 0, or -ENOMEM. */
int http_sites_init(struct http_sites *s, uint32_t n,
		const char *const *names, const struct ewyk_router *shared);
/* Host name (lower case; "*.NAME" a wildcard) for site i. 0, -EEXIST
 * (another site's), -EINVAL or -ENOMEM. */
int http_sites_host_add(struct http_sites *s, const char *host, uint32_t i);
void http_sites_free(struct http_sites *s);
/* Once every router is filled: each site's routes numbered after the
 * shared router's (whose keep theirs, 0 on), one site after another, so
 * that per-route figures have a slot each. Returns how many ids there
 * are, or -ENOSPC past what a route's id holds. */
int32_t http_sites_number_routes(struct http_sites *s);

/* The site a Host value names (a port and a final dot ignored, letters
 * compared in any case); the default when none does. */
const struct http_site *http_sites_find(const struct http_sites *s,
		const char *host, size_t len);

/* The request's route: by its Host's site when sites is given, else in
 * router alone. With sites, a Host of another site than the connection's
 * SNI (sni, sni_len; 0 without) takes a route that answers 421 (as
 * http_sites_misdirected()), and a path not in normal form one that
 * answers 308 to its normal form. NULL when none takes it. */
const struct http_route *http_route_lookup(const struct ewyk_router *router,
		const struct http_sites *sites, const struct http_head *r,
		const char *sni, size_t sni_len);

/* Over TLS, the route of a request whose Host names another site than
 * the connection's SNI (sni, len) did: one that answers 421 (RFC 9110
 * 15.5.20: the client may try again on a connection of its own for that
 * name). NULL when both name one site, or without sites or SNI. */
const struct http_route *http_sites_misdirected(const struct http_sites *s,
		const char *sni, size_t sni_len, const struct http_head *r);

/* RFC 3986's normal form of a path, in place: percent-encoded unreserved
 * bytes decoded, "." and ".." segments removed (never above the root),
 * runs of '/' made one. Returns the new length (at most len). */
size_t http_path_normalize(char *p, size_t len);

#endif /* EWYK_HTTP_SITE_H */
