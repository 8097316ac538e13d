/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/http's own route, registered like any other so that it is counted
 * per route and consumed under the execution strategy: GET, HEAD and
 * OPTIONS of anything, the static files preloaded by www_load(), with
 * their validators and preconditions (RFC 9110 13), single ranges,
 * Cache-Control, and the precompressed sibling Accept-Encoding asks for;
 * "/dir" is redirected to "/dir/"; 404 for a path that has none; OPTIONS *
 * speaks for the whole server. It is NON_BLOCKING and inline: everything
 * it answers is in memory already.
 */
#ifndef EWYK_HTTP_STATIC_H
#define EWYK_HTTP_STATIC_H

struct ewyk_router;
struct www;

/* What the static files' route answers from; the caller's, for as long
 * as the route may be called. */
struct http_static {
	const struct www *www;	/* NULL (no --www): every path is 404 */
	const struct ewyk_router *router;	/* OPTIONS *'s Allow: the
						 * methods of all its routes */
};

/* Adds the route, st->router being r. Returns 0 or the negative errno
 * of ewyk_route_add(). */
int http_static_route_add(struct ewyk_router *r, struct http_static *st);

#endif /* EWYK_HTTP_STATIC_H */
