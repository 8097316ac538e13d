/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP/1.1 over a shard's TCP: the callbacks table that net_stack calls,
 * per-connection request buffers from a per-shard free list, keep-alive and
 * static files. One instance per shard, touched only by its owner.
 */
#ifndef EWYK_HTTP1_SERVER_H
#define EWYK_HTTP1_SERVER_H

#include <stdbool.h>
#include <stdint.h>

#include "http_stats.h"
#include "www.h"

struct net_stack;
struct http1_conn;
struct http1_request;

#define HTTP1_IN_MAX 8192	/* request head limit, and receive buffer */
#define HTTP1_DISPATCH_BODY_MAX 4096	/* bodies handed whole to handlers */

/* Which connection a dispatched request came from: a stale reference (the
 * connection closed, its slot reused) is detected by the generation. */
struct http1_ref {
	uint32_t index;
	uint32_t gen;
};

/*
 * Offered every request before the static files, with r->body set when the
 * whole body (up to HTTP1_DISPATCH_BODY_MAX) is at hand, NULL when there
 * is none or it is larger or chunked. Returns 0 when the route
 * is not dispatched (served inline), 1 when a handler took it (its answer
 * comes later through http1_server_answer; the connection waits), or a
 * status to answer at once: 503 (with Retry-After) when no handler can
 * take it, 400 for bad parameters.
 */
typedef int (*http1_dispatch_fn)(void *ctx, const struct http1_request *r,
		struct http1_ref ref);

struct http1_server {
	struct net_stack *ns;
	http1_dispatch_fn dispatch;
	void *dispatch_ctx;
	const struct www *www;
	struct http_stats *stats;
	struct http1_conn *conns;	/* one per TCP connection slot */
	struct http1_conn *free_list;
	uint32_t nconns;
	bool draining;		/* answer what is asked, then close */
	uint32_t header_timeout_ms;	/* a request head must arrive within */
	uint32_t keepalive_timeout_ms;	/* an idle connection is closed after */
	uint64_t last_sweep_ms;
	uint64_t date_sec;
	char date[40];		/* IMF-fixdate of date_sec */
};

int http1_server_init(struct http1_server *s, struct net_stack *ns,
		const struct www *www, struct http_stats *stats,
		uint32_t max_conns);
void http1_server_fini(struct http1_server *s);
/* Slowloris defence and keep-alive bound, HTTP/1.1 only; 0 disables. */
void http1_server_set_timeouts(struct http1_server *s, uint32_t header_ms,
		uint32_t keepalive_ms);
/* Called on every poll: every 100 ms, answers 408 to connections whose
 * request head is overdue and closes those idle too long. */
void http1_server_tick(struct http1_server *s, uint64_t now_ms);

/* Graceful drain: idle connections close now, busy ones after their
 * current answer, HTTP/2 sessions get GOAWAY. */
void http1_server_drain(struct http1_server *s);
/* Connections still doing HTTP (not yet closing). */
uint32_t http1_server_busy(const struct http1_server *s);
void http1_server_set_dispatch(struct http1_server *s, http1_dispatch_fn fn,
		void *ctx);

/*
 * Writes the answer of a dispatched request, on the shard's owner. Returns
 * false (and writes nothing) when the connection is gone.
 */
bool http1_server_answer(struct http1_server *s, struct http1_ref ref,
		int status, const char *ctype, const void *body, uint32_t len,
		const char *extra_headers);

#endif /* EWYK_HTTP1_SERVER_H */
