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

#include "http_req.h"
#include "http_stats.h"
#include "www.h"

struct net_stack;
struct http1_conn;
struct http1_request;

#define HTTP1_IN_MAX 8192	/* request head limit, and receive buffer */

/* Where a dispatched request's answer goes: the connection (a stale
 * reference, its slot reused, is detected by the generation), and the
 * HTTP/2 stream or the HTTP/1.1 pipeline position. */
struct http_origin {
	uint32_t index;
	uint32_t gen;
	uint32_t stream;	/* HTTP/2 stream id; 0 for HTTP/1.1 */
	uint32_t seq;		/* HTTP/1.1: place in the pipeline */
};

/*
 * Offered every request (both protocols) before the built-in answers,
 * with r->body set when the whole body (up to EWYK_REQUEST_BODY_MAX) is at
 * hand. Returns 0 when no route takes it (nothing happened), 1 when a
 * handler took it (its answer comes through http1_server_answer), or a
 * status to answer at once: 503 when no handler can take it, 405 (with
 * the methods written to allow), 413, 400.
 */
typedef int (*http_dispatch_fn)(void *ctx, const struct http1_request *r,
		int http_version, struct http_origin o, char *allow,
		size_t allow_cap);
/* The server is done with a dispatched answer (written, or its
 * connection gone): its borrowings are already returned. */
typedef void (*http_released_fn)(void *ctx, struct http_answer *a);

#define HTTP1_PIPELINE 16	/* requests read ahead of their answers */

struct http1_server {
	struct net_stack *ns;
	http_dispatch_fn dispatch;
	http_released_fn released;
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
	uint8_t scratch[16384];	/* streamed answer bodies pass through */
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
void http1_server_set_dispatch(struct http1_server *s, http_dispatch_fn fn,
		http_released_fn released, void *ctx);

/*
 * Takes the answer of a dispatched request, on the shard's owner: written
 * now, or kept until the answers before it in the pipeline are out; the
 * released callback follows. Returns false (and keeps nothing) when the
 * connection or stream is gone.
 */
bool http1_server_answer(struct http1_server *s, struct http_origin o,
		struct http_answer *a);
/* Gives a held answer back: its borrowings, then the released callback. */
void http1_server_release(struct http1_server *s, struct http_answer *a);

#endif /* EWYK_HTTP1_SERVER_H */
