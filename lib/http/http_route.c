/* SPDX-License-Identifier: BSD-3-Clause */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "http_priv.h"

/* EWYK_METHOD_* follow enum http_method from GET to PATCH. */
_Static_assert(EWYK_METHOD_GET == 1u << HTTP_GET &&
		EWYK_METHOD_HEAD == 1u << HTTP_HEAD &&
		EWYK_METHOD_POST == 1u << HTTP_POST &&
		EWYK_METHOD_PUT == 1u << HTTP_PUT &&
		EWYK_METHOD_DELETE == 1u << HTTP_DELETE &&
		EWYK_METHOD_OPTIONS == 1u << HTTP_OPTIONS &&
		EWYK_METHOD_PATCH == 1u << HTTP_PATCH,
		"method bits and enum http_method disagree");

void
http_route_allow(const struct http_route *rt, char *buf, size_t cap)
{
	size_t i, used = 0;

	buf[0] = '\0';
	for (i = HTTP_GET; i <= HTTP_PATCH; i++) {
		int n;

		if (!(rt->methods & http_method_bit(i)))
			continue;
		n = snprintf(buf + used, cap - used, "%s%s", used ? ", " : "",
				http_method_name(i));
		if (n < 0 || (size_t)n >= cap - used)
			return;
		used += (size_t)n;
	}
}

static bool
path_ok(const char *p, size_t len)
{
	size_t i;

	if (len == 0 || len >= HTTP_ROUTE_PATH_MAX || p[0] != '/')
		return false;
	for (i = 0; i < len; i++)
		if (p[i] <= ' ' || p[i] == '?' || p[i] == '#' || p[i] == 0x7f)
			return false;
	return true;
}

int
ewyk_route_add(struct ewyk_router *r, const struct ewyk_route *route)
{
	return http_route_add(r, route, 0);
}

int
ewyk_route_add_flags(struct ewyk_router *r, const struct ewyk_route *route,
		uint32_t flags)
{
	/* A body read as it arrives is read by parking: fibers only. */
	if ((flags & ~EWYK_ROUTE_BODY_STREAM) != 0 || (route != NULL &&
			(flags & EWYK_ROUTE_BODY_STREAM) &&
			route->type != EWYK_HANDLER_FIBER))
		return -EINVAL;
	return http_route_add(r, route, flags & EWYK_ROUTE_BODY_STREAM ?
			HTTP_ROUTE_BODY_STREAM : 0);
}

static bool
name_ok(const char *name)
{
	size_t i, n = name != NULL ? strlen(name) : 0;

	if (n == 0 || n >= HTTP_NAME_MAX)
		return false;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)name[i]) && name[i] != '_' &&
				name[i] != '-')
			return false;
	return true;
}

const struct http_named *
http_route_named(const struct ewyk_router *r, const char *name)
{
	uint32_t i;

	for (i = 0; r != NULL && i < r->nnamed; i++)
		if (strcmp(r->named[i].name, name) == 0)
			return &r->named[i];
	return NULL;
}

int
ewyk_route_named(struct ewyk_router *r, const char *name,
		const struct ewyk_route *route, uint32_t flags)
{
	struct http_named *h;

	if (r == NULL || route == NULL || !name_ok(name) ||
			route->handler == NULL || route->methods == 0 ||
			(route->methods & ~EWYK_METHOD_ANY) != 0 ||
			route->type > EWYK_HANDLER_FIBER ||
			(flags & ~EWYK_ROUTE_BODY_STREAM) != 0 ||
			((flags & EWYK_ROUTE_BODY_STREAM) &&
			 route->type != EWYK_HANDLER_FIBER))
		return -EINVAL;
	if (http_route_named(r, name) != NULL)
		return -EEXIST;
	if (r->nnamed == HTTP_NAMED_MAX)
		return -ENOSPC;
	h = &r->named[r->nnamed++];
	memcpy(h->name, name, strlen(name) + 1);
	h->methods = route->methods & EWYK_METHOD_GET ?
		route->methods | EWYK_METHOD_HEAD : route->methods;
	h->type = route->type;
	h->handler = route->handler;
	h->ctx = route->ctx;
	h->flags = flags & EWYK_ROUTE_BODY_STREAM ? HTTP_ROUTE_BODY_STREAM : 0;
	return 0;
}

int
http_route_add(struct ewyk_router *r, const struct ewyk_route *route,
		uint32_t flags)
{
	struct http_route *rt;
	uint32_t i;
	size_t len;

	if (r == NULL || route == NULL || route->path == NULL ||
			route->handler == NULL || route->methods == 0 ||
			(route->methods & ~EWYK_METHOD_ANY) != 0 ||
			route->type > EWYK_HANDLER_FIBER ||
			route->match > EWYK_MATCH_PREFIX)
		return -EINVAL;
	len = strlen(route->path);
	if (!path_ok(route->path, len))
		return -EINVAL;
	for (i = 0; i < r->n; i++)
		if (r->routes[i].path_len == len && r->routes[i].match ==
				route->match && memcmp(r->routes[i].path,
				route->path, len) == 0)
			return -EEXIST;
	if (r->n == HTTP_ROUTES_MAX)
		return -ENOSPC;
	rt = &r->routes[r->n];
	memcpy(rt->path, route->path, len + 1);
	rt->path_len = (uint32_t)len;
	rt->match = route->match;
	/* HEAD is GET without the body (RFC 9110 9.3.2): where one goes,
	 * the other does. */
	rt->methods = route->methods & EWYK_METHOD_GET ?
		route->methods | EWYK_METHOD_HEAD : route->methods;
	rt->type = route->type;
	rt->handler = route->handler;
	rt->ctx = route->ctx;
	rt->flags = flags;
	rt->limit = NULL;
	rt->id = (uint16_t)r->n++;
	return 0;
}

/* Whether path (at least as long) begins with rt's path: its last byte
 * first, where routes sharing a start differ, and no call for "/". */
static inline bool
route_prefix_of(const struct http_route *rt, const char *path)
{
	uint32_t n = rt->path_len;

	return path[n - 1] == rt->path[n - 1] &&
		(n == 1 || memcmp(rt->path, path, n - 1) == 0);
}

const struct http_route *
http_route_find(const struct ewyk_router *r, const char *path, uint32_t len)
{
	const struct http_route *best = NULL;
	uint32_t i;

	if (r == NULL)
		return NULL;
	if (len == 1 && path[0] == '*') {
		/* OPTIONS * (the only method with that target) speaks for
		 * the whole server: the root's route answers it. */
		path = "/";
	}
	for (i = 0; i < r->n; i++) {
		const struct http_route *rt = &r->routes[i];

		if (rt->path_len > len || (rt->match == EWYK_MATCH_EXACT &&
				rt->path_len != len) || !route_prefix_of(rt, path))
			continue;
		if ((rt->flags & HTTP_ROUTE_BOUNDARY) && len > rt->path_len &&
				path[rt->path_len] != '/' &&
				rt->path[rt->path_len - 1] != '/')
			continue;
		if (best == NULL || rt->path_len > best->path_len ||
				(rt->path_len == best->path_len &&
				 rt->match == EWYK_MATCH_EXACT))
			best = rt;
	}
	return best;
}
