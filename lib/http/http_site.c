/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "http_fields.h"
#include "http_priv.h"
#include "http_site.h"

struct http_site_host {
	char *name;		/* NULL: an empty slot; without "*." */
	uint32_t len;
	uint32_t site;
	bool wildcard;
};

static inline char
lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static uint32_t
hash_name(const char *p, size_t len, bool wildcard)
{
	uint32_t h = wildcard ? 0x9e3779b9u : 2166136261u;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ (uint8_t)lower(p[i])) * 16777619u;
	return h;
}

static struct http_site_host *
slot_of(const struct http_sites *s, const char *p, size_t len, bool wildcard)
{
	uint32_t i = hash_name(p, len, wildcard) & s->mask;
	struct http_site_host *h;

	for (;; i = (i + 1) & s->mask) {
		h = &s->index[i];
		if (h->name == NULL || (h->wildcard == wildcard &&
				h->len == len && strncasecmp(h->name, p, len) == 0))
			return h;
	}
}

static int
grow_index(struct http_sites *s)
{
	struct http_sites bigger = *s;
	uint32_t i;

	bigger.mask = s->mask != 0 ? s->mask * 2 + 1 : 15;
	bigger.index = calloc(bigger.mask + 1, sizeof(*bigger.index));
	if (bigger.index == NULL)
		return -ENOMEM;
	for (i = 0; s->index != NULL && i <= s->mask; i++)
		if (s->index[i].name != NULL)
			*slot_of(&bigger, s->index[i].name, s->index[i].len,
					s->index[i].wildcard) = s->index[i];
	free(s->index);
	s->index = bigger.index;
	s->mask = bigger.mask;
	return 0;
}

int
http_sites_init(struct http_sites *s, uint32_t n, const char *const *names,
		const struct ewyk_router *shared)
{
	uint32_t i;

	*s = (struct http_sites){ .shared = shared };
	s->sites = calloc(n, sizeof(*s->sites));
	if (s->sites == NULL)
		return -ENOMEM;
	s->n = n;
	for (i = 0; i < n; i++)
		snprintf(s->sites[i].name, sizeof(s->sites[i].name), "%s",
				names[i]);
	return grow_index(s);
}

int
http_sites_host_add(struct http_sites *s, const char *host, uint32_t i)
{
	bool wildcard = strncmp(host, "*.", 2) == 0;
	const char *name = wildcard ? host + 2 : host;
	size_t len = strlen(name);
	struct http_site_host *h;

	if (i >= s->n || len == 0 || len > 253)
		return -EINVAL;
	if ((s->nhosts + 1) * 2 > s->mask + 1 && grow_index(s) != 0)
		return -ENOMEM;
	h = slot_of(s, name, len, wildcard);
	if (h->name != NULL)
		return -EEXIST;
	h->name = strdup(name);
	if (h->name == NULL)
		return -ENOMEM;
	h->len = (uint32_t)len;
	h->site = i;
	h->wildcard = wildcard;
	s->nhosts++;
	return 0;
}

void
http_sites_free(struct http_sites *s)
{
	uint32_t i;

	for (i = 0; s->index != NULL && i <= s->mask; i++)
		free(s->index[i].name);
	free(s->index);
	free(s->sites);
	*s = (struct http_sites){ 0 };
}

int32_t
http_sites_number_routes(struct http_sites *s)
{
	uint32_t next = s->shared != NULL ? s->shared->n : 0, i, j;

	for (i = 0; i < s->n; i++) {
		struct ewyk_router *r = &s->sites[i].router;

		if (next + r->n > UINT16_MAX + 1u)
			return -ENOSPC;
		for (j = 0; j < r->n; j++)
			r->routes[j].id = (uint16_t)next++;
	}
	return (int32_t)next;
}

const struct http_site *
http_sites_find(const struct http_sites *s, const char *host, size_t len)
{
	const struct http_site_host *h;
	const char *dot;

	/* "[v6]:port" or "name:port": the port is not the site's. */
	if (len > 0 && host[0] == '[') {
		const char *end = memchr(host, ']', len);

		len = end != NULL ? (size_t)(end - host) + 1 : len;
	} else {
		const char *colon = memchr(host, ':', len);

		if (colon != NULL)
			len = (size_t)(colon - host);
	}
	if (len > 0 && host[len - 1] == '.')
		len--;
	if (len == 0 || len > 253)
		return &s->sites[0];
	h = slot_of(s, host, len, false);
	if (h->name != NULL)
		return &s->sites[h->site];
	/* "*.example.test" takes one label before "example.test". */
	dot = memchr(host, '.', len);
	if (dot != NULL && dot > host) {
		h = slot_of(s, dot + 1, len - (size_t)(dot + 1 - host), true);
		if (h->name != NULL)
			return &s->sites[h->site];
	}
	return &s->sites[0];
}

/* The better of two routes for one path: longer, then exact; a on ties. */
static const struct http_route *
better(const struct http_route *a, const struct http_route *b)
{
	if (a == NULL)
		return b;
	if (b == NULL || a->path_len > b->path_len)
		return a;
	if (b->path_len > a->path_len)
		return b;
	return b->match == EWYK_MATCH_EXACT && a->match != EWYK_MATCH_EXACT ?
		b : a;
}

static bool
unreserved(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		(c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
		c == '~';
}

static int
hex(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ?
		c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* "%XX" at p encodes an unreserved byte (RFC 3986 2.3: the same as the
 * byte itself). */
static bool
escaped_unreserved(const char *p, size_t left)
{
	return left >= 3 && hex(p[1]) >= 0 && hex(p[2]) >= 0 &&
		unreserved((char)(hex(p[1]) << 4 | hex(p[2])));
}

size_t
http_path_normalize(char *p, size_t len)
{
	size_t in = 0, out = 0;

	while (in < len) {
		char c = p[in];

		if (c == '%' && escaped_unreserved(p + in, len - in)) {
			p[out++] = (char)(hex(p[in + 1]) << 4 | hex(p[in + 2]));
			in += 3;
		} else {
			p[out++] = c;
			in++;
		}
	}
	len = out;
	/* Segments now: each begins after a '/'. */
	for (in = 0, out = 0; in < len;) {
		size_t end = in + 1, seg;

		while (end < len && p[end] != '/')
			end++;
		seg = end - in - 1;	/* the bytes after the '/' */
		if (p[in] != '/') {	/* a relative start: kept */
			memmove(p + out, p + in, end - in);
			out += end - in;
		} else if (seg == 0 && end < len) {
			/* "//": the first '/' stands for both */
		} else if (seg == 1 && p[in + 1] == '.') {
			if (end == len)
				p[out++] = '/';
		} else if (seg == 2 && p[in + 1] == '.' && p[in + 2] == '.') {
			while (out > 0 && p[--out] != '/')
				;
			if (end == len)
				p[out++] = '/';
		} else {
			memmove(p + out, p + in, end - in);
			out += end - in;
		}
		in = end;
	}
	return out;
}

/* Whether path is in the normal form http_path_normalize() makes. */
static bool
normal(const char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (p[i] == '%' && escaped_unreserved(p + i, len - i))
			return false;
		if (p[i] != '/')
			continue;
		if (i + 1 < len && p[i + 1] == '/')
			return false;
		if (i + 1 < len && p[i + 1] == '.' && (i + 2 == len ||
				p[i + 2] == '/' || (p[i + 2] == '.' &&
				(i + 3 == len || p[i + 3] == '/'))))
			return false;
	}
	return true;
}

/* A path not in normal form is sent to its normal form (308, the method
 * kept), so that the route chosen and the path a handler or an upstream
 * reads are one. */
static enum ewyk_result
to_normal_form(struct ewyk_request *q, void *ctx)
{
	struct ewyk_str path = ewyk_request_path(q), query = ewyk_request_query(q);
	char loc[HTTP_MAX_TARGET + 2];
	size_t n;

	(void)ctx;
	if (path.len + 1 + query.len >= sizeof(loc)) {
		http_answer_error(&q->ans, 414, NULL);
		return EWYK_ANSWERED;
	}
	memcpy(loc, path.p, path.len);
	n = http_path_normalize(loc, path.len);
	if (query.len > 0) {
		loc[n++] = '?';
		memcpy(loc + n, query.p, query.len);
		n += query.len;
	}
	http_answer_error(&q->ans, 308, NULL);
	http_answer_add_field(&q->ans, "Location", 8, loc, n);
	return EWYK_ANSWERED;
}

/* A route of lib/http's own that answers any request at once. */
#define ANSWERING_ROUTE(fn) { .path = "/", .path_len = 1, \
	.match = EWYK_MATCH_PREFIX, .methods = EWYK_METHOD_ANY, \
	.type = EWYK_HANDLER_NON_BLOCKING, .handler = fn, \
	.flags = HTTP_ROUTE_INLINE }

static const struct http_route normal_form_route =
	ANSWERING_ROUTE(to_normal_form);

static enum ewyk_result
misdirected(struct ewyk_request *q, void *ctx)
{
	(void)ctx;
	http_answer_error(&q->ans, 421, NULL);
	return EWYK_ANSWERED;
}

static const struct http_route misdirected_route =
	ANSWERING_ROUTE(misdirected);

/* The request's Host (HTTP/2's :authority is one by now); "" without. */
static struct ewyk_str
host_of(const struct http_head *r)
{
	uint32_t i;

	for (i = 0; i < r->nheaders; i++)
		if (r->headers[i].name.len == 4 && strncasecmp(
				r->headers[i].name.p, "host", 4) == 0)
			return (struct ewyk_str){ r->headers[i].value.p,
				r->headers[i].value.len };
	return (struct ewyk_str){ "", 0 };
}

/* Whether a request whose Host (host; "" without) chose site came on a
 * connection whose SNI named another site. */
static bool
is_misdirected(const struct http_sites *s, const struct http_site *site,
		struct ewyk_str host, const char *sni, size_t sni_len)
{
	return sni_len > 0 && host.len > 0 &&
		site != http_sites_find(s, sni, sni_len);
}

const struct http_route *
http_sites_misdirected(const struct http_sites *s, const char *sni,
		size_t sni_len, const struct http_head *r)
{
	struct ewyk_str host;

	if (s == NULL)
		return NULL;
	host = host_of(r);
	return is_misdirected(s, http_sites_find(s, host.p, host.len), host, sni,
			sni_len) ? &misdirected_route : NULL;
}

const struct http_route *
http_route_lookup(const struct ewyk_router *router,
		const struct http_sites *sites, const struct http_head *r,
		const char *sni, size_t sni_len)
{
	const struct http_site *site;
	struct ewyk_str host;

	if (sites == NULL)
		return http_route_find(router, r->path.p, r->path.len);
	host = host_of(r);
	site = http_sites_find(sites, host.p, host.len);
	if (is_misdirected(sites, site, host, sni, sni_len))
		return &misdirected_route;
	if (!normal(r->path.p, r->path.len))
		return &normal_form_route;
	return better(http_route_find(&site->router, r->path.p, r->path.len),
			http_route_find(sites->shared, r->path.p, r->path.len));
}
