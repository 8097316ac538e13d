/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The HTTP server of one shard, as its embedder sees it: connections over
 * a byte-stream transport, each speaking HTTP/1.1 or HTTP/2; requests
 * routed, then handed to the embedder's dispatch hook to run; answers
 * taken back and written on the shard's owner. Only the owner calls in.
 *
 * The transport is a table of calls (TCP from lib/net in ewykd, see
 * http_tcp.h; a script in the unit tests), and it calls back through
 * http_conn_accept() and the other http_conn_*() upcalls below. No I/O
 * happens anywhere else.
 */
#ifndef EWYK_HTTP_SERVER_H
#define EWYK_HTTP_SERVER_H

#include <stdbool.h>
#include <stdint.h>

#include "http_req.h"
#include "http_route.h"
#include "http_stats.h"

struct http_server;
struct http_sites;
struct net_addr;
struct http_conn;
struct net_timer;

/* Where a dispatched request's answer goes: the connection (a stale
 * reference, its slot reused, is detected by the generation), and the
 * HTTP/2 stream or the HTTP/1.1 pipeline position. */
struct http_origin {
	uint32_t index;
	uint32_t gen;
	uint32_t stream;	/* HTTP/2 stream id; 0 for HTTP/1.1 */
	uint32_t seq;		/* HTTP/1.1: place in the pipeline */
};

/* The byte stream under the connections; t is one connection's handle. */
struct tcp_ref;

struct http_transport {
	/* Queues bytes (copied); returns how many fit. */
	uint32_t (*write)(void *ctx, void *t, const void *data, uint32_t len);
	/* Queues bytes that stay unchanged until ref's done (a preloaded
	 * file's): the transport may point at them rather than copy them
	 * (tcp_write_ref(), whose rules it follows). May be NULL: write. */
	uint32_t (*write_ref)(void *ctx, void *t, const void *data,
			uint32_t len, const struct tcp_ref *ref);
	/* Room in the send queue, in bytes. */
	uint32_t (*space)(void *ctx, void *t);
	/* Ends the stream after the queued bytes. */
	void (*close)(void *ctx, void *t);
	/* Ends it now (a reset); http_conn_closed() follows. */
	void (*abort)(void *ctx, void *t);
	/* Sends what was queued outside an upcall. */
	void (*output)(void *ctx, void *t);
	/* How many bytes the connection can take now (its receive window). */
	void (*rcv_space)(void *ctx, void *t, uint32_t bytes);
	uint64_t (*now_ms)(void *ctx);
	/* A connection's deadline, on the shard's one timer wheel: tm (the
	 * connection's, initialised with net_timer_init()) fires at the
	 * first moment at or after at_ms of now_ms()'s clock, its fire
	 * called on the owner; arming an armed timer moves it, cancelling
	 * one not armed does nothing. */
	void (*timer_arm)(void *ctx, struct net_timer *tm, uint64_t at_ms);
	void (*timer_cancel)(void *ctx, struct net_timer *tm);
	/* The peer's address and port (the access log's); may be NULL. */
	void (*peer)(void *ctx, void *t, struct net_addr *addr,
			uint16_t *port);
	/* The connection's round trip, microseconds (0: not known yet);
	 * HTTP/2's receive windows grow with it. May be NULL: they do not. */
	uint32_t (*rtt_us)(void *ctx, void *t);
	/* The server name the client asked for in its TLS handshake (SNI):
	 * its length (at most cap - 1, NUL-terminated in buf), 0 without
	 * one. May be NULL: never one. */
	size_t (*server_name)(void *ctx, void *t, char *buf, size_t cap);
	/* Encrypted (TLS): answers carry the server's alt_svc. */
	bool secure;
};

/* The longest Alt-Svc value http_server_conf takes. */
#define HTTP_ALT_SVC_MAX 32

/* The default of max_head_bytes (http_server_conf); max_target's is
 * HTTP_MAX_TARGET. */
#define HTTP_MAX_HEAD_BYTES 16384
/* What ewyk's servers give idle_release_ms: long after a keep-alive
 * client's next request usually comes, short beside its timeout. */
#define HTTP_IDLE_RELEASE_MS 1000
/* The defaults of max_body and body_buffers. */
#define HTTP_MAX_BODY (1u << 20)
#define HTTP_BODY_BUFFERS 16

/* What the dispatch hook did with a request, when not a status. */
#define HTTP_DISPATCH_TAKEN 1	/* a handler has it: the answer comes back
				 * through http_server_answer() */
#define HTTP_DISPATCH_ANSWERED 2	/* answered already (an
					 * HTTP_ROUTE_INLINE route): *ans */

/*
 * Offered every routed request of either protocol, on the owner while it
 * parses, with r->body set when the route gathers bodies and the whole
 * body (up to max_body) is at hand; r->body_slot too when it lies in one
 * of the server's body buffers, which HTTP_DISPATCH_TAKEN takes with the
 * request (http_req_fill()). Returns HTTP_DISPATCH_TAKEN,
 * HTTP_DISPATCH_ANSWERED with *ans set (released like any other answer),
 * or the status to answer at once (503: no room for another task; 431:
 * too large to copy).
 */
typedef int (*http_dispatch_fn)(void *ctx, const struct http_route *rt,
		const struct http_head *r, int http_version,
		struct http_origin o, struct http_answer **ans);
/* The server is done with a dispatched answer (written, or its
 * connection gone): its borrowings are already returned. */
typedef void (*http_released_fn)(void *ctx, struct http_answer *a);

/* A HTTP_ROUTE_BODY_STREAM request's body has more bytes at hand, its
 * end, or an error: read it with http_server_body_read(). On the owner,
 * possibly inside the connection's input: the hook may read, not close. */
typedef void (*http_body_ready_fn)(void *ctx, struct http_origin o);

struct http_server_conf {
	const struct http_transport *transport;
	void *transport_ctx;
	const struct ewyk_router *router;
	/* Sites: the route by the request's Host, router the shared one;
	 * NULL: router alone, for every host. */
	const struct http_sites *sites;
	http_dispatch_fn dispatch;
	http_released_fn released;
	http_body_ready_fn body_ready;	/* may be NULL */
	void *dispatch_ctx;
	struct http_stats *stats;
	uint32_t max_conns;
	uint32_t header_timeout_ms;	/* a request head must arrive within,
					 * or 408 (slowloris defence); 0: no
					 * limit */
	uint32_t keepalive_timeout_ms;	/* an idle HTTP/1.1 connection is
					 * closed after; 0: never. Both are
					 * deadlines on the transport's timer
					 * calls. */
	uint32_t max_head_bytes;	/* an HTTP/1.1 request head, the
					 * size of each connection's input
					 * buffer (431; 414 when the request
					 * line is what does not fit); 0:
					 * HTTP_MAX_HEAD_BYTES */
	uint32_t max_target;	/* a request target, both protocols
				 * (414); 0: HTTP_MAX_TARGET */
	uint32_t idle_release_ms;	/* an HTTP/1.1 connection idle this
					 * long (nothing asked, owed or read)
					 * gives its state and input buffer
					 * back until its next byte; 0: never */
	uint32_t max_body;	/* the largest body gathered for a handler
				 * that takes it whole (413 past it), at
				 * least EWYK_REQUEST_BODY_MAX; 0:
				 * HTTP_MAX_BODY */
	uint32_t body_buffers;	/* bodies past EWYK_REQUEST_BODY_MAX
				 * gathered at once (503 past them), each
				 * in a buffer of max_body (and a head);
				 * 0: HTTP_BODY_BUFFERS */
	/* HTTP/2's receive windows grow with the transport's round trip
	 * (h2_window.c) up to h2_window_max for a stream (TCP's receive
	 * buffer ceiling: no more is in flight) and four times that for
	 * its connection, the connections' windows by h2_window_budget
	 * bytes at most in all (TCP's receive budget); 0: they keep
	 * their first sizes. */
	uint32_t h2_window_max;
	uint64_t h2_window_budget;
	/* A routed request the server answered itself, never offered to
	 * the dispatch hook (404 no route, 405, 413): what the access log
	 * hears of it. May be NULL. */
	void (*refused)(void *ctx, const struct http_head *r, int status,
			int http_version, struct http_origin o);
	/* An Alt-Svc value for every answer over a secure transport (HTTP/3
	 * offered: h3=":443"), at most HTTP_ALT_SVC_MAX characters; NULL:
	 * none. */
	const char *alt_svc;
};

/* Allocates the connection slots (start-up only); NULL when out of
 * memory or the configuration lacks a transport, router or dispatch. */
struct http_server *http_server_create(const struct http_server_conf *conf);
void http_server_destroy(struct http_server *s);

/* Graceful drain: idle connections close now, busy ones after their
 * current answer, HTTP/2 sessions get GOAWAY. */
void http_server_drain(struct http_server *s);
/*
 * Takes the answer of a dispatched request, on the owner: written now,
 * or kept until the answers before it in the pipeline are out; the
 * released hook follows. Returns false (and keeps nothing) when the
 * connection or stream is gone.
 */
bool http_server_answer(struct http_server *s, struct http_origin o,
		struct http_answer *a);
/* The address and port of the client of o's connection: false when the
 * connection is gone or the transport cannot say. */
bool http_server_peer(struct http_server *s, struct http_origin o,
		struct net_addr *addr, uint16_t *port);
/* Whether o's connection is over a secure transport (TLS). */
bool http_server_secure(struct http_server *s, struct http_origin o);
/* The server's buffers for bodies gathered whole, and the largest such
 * body: another protocol's intake (HTTP/3's) gathers in the same ones. */
struct http_body_pool *http_server_bodies(struct http_server *s);
uint32_t http_server_max_body(const struct http_server *s);
/* Whether the client still waits for that answer, on the owner: false
 * once the connection is gone or closing, the HTTP/2 stream reset, or an
 * HTTP/1.1 client has shut its side (it left: nginx's 499). */
bool http_server_awaits(struct http_server *s, struct http_origin o);
/* The answer to o will never come (its handler gave up: the client left):
 * an HTTP/1.1 connection is reset, as its pipeline cannot skip a place;
 * an HTTP/2 stream that no longer awaits is gone already. */
void http_server_abandon(struct http_server *s, struct http_origin o);

/*
 * A streamed answer (HTTP_BODY_STREAM) whose source returned
 * HTTP_SOURCE_AGAIN has more: its connection reads the source again as it
 * has room. False when the connection or stream is gone.
 */
bool http_server_resume(struct http_server *s, struct http_origin o);
/*
 * Reads the body of a request to a HTTP_ROUTE_BODY_STREAM route, decoded
 * (no chunk framing), as the client sends it: returns the bytes copied
 * (up to cap), 0 at its end, HTTP_SOURCE_AGAIN when none is at hand now
 * (body_ready follows when some is), or -1 when the body broke (framing,
 * the client left) or the request is gone. Reading makes room: the
 * client's window opens as the reader takes, and not before.
 */
long http_server_body_read(struct http_server *s, struct http_origin o,
		void *buf, size_t cap);

/* Upcalls of the transport. */

/* A new connection over the server's transport; NULL to refuse it (no
 * slot free: counted). */
struct http_conn *http_conn_accept(struct http_server *s, void *t);
/* The same over a transport of its own (tr with tr_ctx: TLS over TCP),
 * speaking HTTP/2 from the first byte when h2 (ALPN chose it), else
 * HTTP/1.1 with HTTP/2's preface and Upgrade recognised as over TCP. */
struct http_conn *http_conn_accept_via(struct http_server *s, void *t,
		const struct http_transport *tr, void *tr_ctx, bool h2);
/* In-order bytes; returns how many were taken (all, unless the receive
 * space given was ignored). */
uint32_t http_conn_recv(struct http_conn *c, const uint8_t *data,
		uint32_t len);
/* Acknowledged data freed send space. */
void http_conn_writable(struct http_conn *c);
/* The peer will send nothing more. */
void http_conn_peer_closed(struct http_conn *c);
/* The stream is gone; the connection's slot is free again. */
void http_conn_closed(struct http_conn *c);

#endif /* EWYK_HTTP_SERVER_H */
