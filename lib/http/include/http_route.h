/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The route table behind ewyk_route_add(): filled at start-up (built-in
 * routes and plugins), read-only afterwards, so every lcore reads it
 * without locks.
 */
#ifndef EWYK_HTTP_ROUTE_H
#define EWYK_HTTP_ROUTE_H

#include <stddef.h>
#include <stdint.h>

#include "ewyk_http.h"
#include "http_head.h"
#include "http_token.h"

#define HTTP_ROUTES_MAX 64
#define HTTP_ROUTE_PATH_MAX 128

/* Limits per client address that a route asks of its dispatcher (an
 * IPv6 client counted per /64): limit-rps with limit-burst, limit-conns.
 * lib/http only carries them; the serving side keeps the counts. */
struct http_limit {
	uint32_t rps;		/* requests per second; 0: no rate */
	uint32_t burst;		/* beyond the rate at once */
	uint32_t conns;		/* requests in progress; 0: no bound */
};

struct http_route {
	char path[HTTP_ROUTE_PATH_MAX];
	uint32_t path_len;
	enum ewyk_match match;
	uint32_t methods;
	enum ewyk_handler_type type;
	ewyk_handler_fn handler;
	void *ctx;
	uint32_t flags;		/* HTTP_ROUTE_* */
	uint16_t id;		/* per-route counters' slot: its index, a
				 * site's numbered after (http_site.h) */
	const struct http_limit *limit;	/* the adder's, or NULL */
};

/* The handler is short and bounded by construction (it answers from
 * memory): the producer runs it at once, inside parsing, and its answer
 * is written without a trip through the task queue. Never for plugins:
 * such a run cannot be relieved by the watchdog. */
#define HTTP_ROUTE_INLINE 0x2

/* The request's body is not gathered for the handler: the route's own
 * code reads it as it arrives, with http_server_body_read(), under the
 * client's window (HTTP/2: the stream's and the connection's, opened as
 * the reader takes), on the owner: the proxy's upstream client, or a
 * fiber's ewyk_body_read() (EWYK_ROUTE_BODY_STREAM). */
#define HTTP_ROUTE_BODY_STREAM 0x4

/* A prefix that matches at a '/' boundary only, as a configured route's:
 * "/api" takes "/api" and "/api/x", not "/apix". */
#define HTTP_ROUTE_BOUNDARY 0x8

/* A WebSocket opening handshake (http_head.websocket) is passed on as a
 * tunnel: its body is what the client sends until it closes, and a 101
 * answer's body what the other side sends until it does (a
 * configuration's websocket = on, on an upstream route). */
#define HTTP_ROUTE_WEBSOCKET 0x10
/* A handler a plugin registered by name (ewyk_route_named()), for the
 * configuration's routes to put at their paths (plugin = NAME). */
#define HTTP_NAMED_MAX 32
#define HTTP_NAME_MAX 33	/* 32 of [A-Za-z0-9_-], and the NUL */

struct http_named {
	char name[HTTP_NAME_MAX];
	uint32_t methods;
	enum ewyk_handler_type type;
	ewyk_handler_fn handler;
	void *ctx;
	uint32_t flags;		/* HTTP_ROUTE_BODY_STREAM */
};

struct ewyk_router {
	uint32_t n;
	struct http_route routes[HTTP_ROUTES_MAX];
	uint32_t nnamed;
	struct http_named named[HTTP_NAMED_MAX];
};

/* The handler registered as name; NULL when none was. */
const struct http_named *http_route_named(const struct ewyk_router *r,
		const char *name);

/* The longest route whose path matches; NULL when none does. "*" (the
 * target of OPTIONS *) is the root's: the route of "/", if any. */
const struct http_route *http_route_find(const struct ewyk_router *r,
		const char *path, uint32_t len);

struct http_head;

/* ewyk_route_add() with HTTP_ROUTE_* flags, for the routes of lib/http
 * and lib/serve themselves (static files, the configuration's). */
int http_route_add(struct ewyk_router *r, const struct ewyk_route *route,
		uint32_t flags);

/* "GET, HEAD, ..." for an Allow header. */
void http_route_allow(const struct http_route *rt, char *buf, size_t cap);

/* The EWYK_METHOD_* bit of a method, 0 for one no route can take. */
static inline uint32_t
http_method_bit(enum http_method m)
{
	return m <= HTTP_PATCH ? 1u << m : 0;
}

/* Whether route rt takes request r, by either protocol: 0, or the status
 * to refuse it with: 404 (no route), 405 (the method not taken: allow
 * then lists those that are), 413 (a body that was not gathered whole,
 * for a route that does not read bodies itself). Inline: every request
 * passes it. */
static inline int
http_route_admit(const struct http_route *rt, const struct http_head *r,
		char *allow, size_t allow_cap)
{
	if (rt == NULL)
		return 404;
	if (!(rt->methods & http_method_bit(r->method))) {
		http_route_allow(rt, allow, allow_cap);
		return 405;
	}
	/* A body is handed whole (up to max_body: the intake gathers no
	 * larger one), or read by the route's reader. */
	if (!(rt->flags & HTTP_ROUTE_BODY_STREAM) && r->body == NULL &&
			(r->chunked || r->content_length > 0))
		return 413;
	return 0;
}

#endif /* EWYK_HTTP_ROUTE_H */
