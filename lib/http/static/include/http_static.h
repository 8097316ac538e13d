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
 *
 * The tree can be replaced while ewykd serves (a reload): the new one
 * answers every request from then on, and an answer begun on the old one
 * keeps it until its body is written. Each answer lent from a tree is
 * counted by the lcore that lends it and the one that takes it back, so
 * that the old tree can be let go exactly when the last is done; only a
 * reload pays for more than two counter updates per request.
 */
#ifndef EWYK_HTTP_STATIC_H
#define EWYK_HTTP_STATIC_H

#include <stdbool.h>
#include <stdint.h>

#include "ewyk_http.h"

struct www;

/* What the static files' route answers from; the caller's, for as long
 * as the route may be called. */
struct http_static {
	const struct www *www;	/* the tree answered from (read atomically);
				 * NULL (no --www): every path is 404 */
	const struct ewyk_router *router;	/* OPTIONS *'s Allow: the
						 * methods of all its routes */
	const struct www *retiring;	/* replaced, answers still lent */
	bool swapping;		/* retiring is set (it may be NULL) */
	uint32_t gen;		/* the tree's, counted per lend: its parity
				 * names the counters of the tree */
};

/* Adds the route, st->router being r. Returns 0 or the negative errno
 * of ewyk_route_add(). */
int http_static_route_add(struct ewyk_router *r, struct http_static *st);
/* The answer from st's tree to q for path, looked up under the tree (a
 * configured route's path after its prefix); a directory's redirect and
 * OPTIONS' answer are for the request's own path. For a route of the
 * caller's own; the caller's router stands for OPTIONS * then. */
enum ewyk_result http_static_answer(struct ewyk_request *q,
		const struct http_static *st, struct ewyk_str path);
/* Answers from next from now on. The tree it replaces must be kept until
 * http_static_retired() says so; -EBUSY while an earlier one is still
 * retiring (nothing changed), else 0. */
int http_static_swap(struct http_static *st, const struct www *next);
/* Once every thread that may run the route has gone through a point where
 * it holds no tree (a shard's turn of its poll loop after the swap): true
 * when the replaced tree has no answer left in flight, and it may be
 * freed (the caller's; *old is it). False while answers remain, or when
 * nothing is retiring. */
bool http_static_retired(struct http_static *st, const struct www **old);

#endif /* EWYK_HTTP_STATIC_H */
