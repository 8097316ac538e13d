/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ewyk_quic: QUIC v1 (RFC 9000, 9001, 9002) on ngtcp2 with GnuTLS, and
 * HTTP/3 (RFC 9114) on nghttp3, over lib/net's UDP: one endpoint per
 * shard, touched by its owner only (docs/http3.md).
 *
 * Towards lib/net an endpoint is a bound UDP port and the shard's timers;
 * towards TLS it takes the process's certificates from lib/tls (the same
 * generations, so a reload reaches QUIC too); towards the embedder it is
 * a source of requests in lib/http's shape (struct http_head), each named
 * by an origin with QUIC_ORIGIN set in its index, answered with lib/http's
 * struct http_answer, which the endpoint gives back through the released
 * hook once its stream is done.
 */
#ifndef EWYK_QUIC_H
#define EWYK_QUIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "http_server.h"

struct net_addr;
struct net_stack;
struct tls_config;
struct quic_endpoint;

/* In an origin's index: the request came over HTTP/3 (the rest of the
 * index is the endpoint's connection slot, stream its stream id). */
#define QUIC_ORIGIN 0x80000000u

static inline bool
quic_origin(struct http_origin o)
{
	return (o.index & QUIC_ORIGIN) != 0;
}

/* The keys of address tokens (Retry's, NEW_TOKEN's), shared by every
 * shard's endpoint: made once, rotated on reload (on any one thread at a
 * time), read by the endpoints. A token stays good across one rotation. */
struct quic_tokens;
struct quic_tokens *quic_tokens_new(void);
void quic_tokens_free(struct quic_tokens *t);
int quic_tokens_rotate(struct quic_tokens *t);
uint64_t quic_tokens_rotations(const struct quic_tokens *t);

/* A connection's bound by default: its largest windows (24 MiB of data
 * out of order at most) and the state beside them. */
#define QUIC_CONN_MEM_DEFAULT (32u << 20)

/* Counters of one shard's endpoint, written by its owner. */
struct quic_stats {
	uint64_t dgrams_in;
	uint64_t dgrams_out;
	uint64_t bytes_in;		/* UDP payload */
	uint64_t bytes_out;
	uint64_t dropped;		/* not QUIC, or for no connection */
	uint64_t version_negotiations;	/* sent: a version not spoken */
	uint64_t retries;		/* Retry sent: the address to prove */
	uint64_t bad_tokens;		/* Initials with a token not ours, or
					 * stale: a Retry's dropped, a
					 * NEW_TOKEN's taken as no token */
	uint64_t new_tokens;		/* NEW_TOKEN sent, after a handshake */
	uint64_t tokens_accepted;	/* Initials whose NEW_TOKEN proved the
					 * address: no Retry, no 3x limit */
	uint64_t accepted;		/* connections begun */
	uint64_t refused;		/* no slot free: dropped */
	uint64_t handshakes;		/* completed */
	uint64_t failed;		/* closed before their handshake ended */
	uint64_t closed;		/* connections ended, every way */
	uint64_t idle_timeouts;
	uint64_t handshake_timeouts;
	uint64_t send_errors;		/* a datagram lib/net did not take */
	uint64_t requests;		/* HTTP/3 requests begun */
	uint64_t streams_reset;		/* by the client */
	uint64_t h3_errors;		/* HTTP/3 or QPACK errors: closed */
	uint64_t mem_refused;		/* allocations past a connection's
					 * bound: its connection closed */
	uint64_t mem_bytes;		/* ngtcp2's and nghttp3's, held now */
	uint32_t conns;			/* gauge */
	uint32_t handshaking;		/* gauge */
} __attribute__((aligned(64)));

/*
 * Offered each HTTP/3 request once its head is complete: returns
 * HTTP_DISPATCH_TAKEN (the answer comes back through quic_answer()),
 * HTTP_DISPATCH_ANSWERED with *ans set, or a status to answer at once
 * (405 with allow filled: the methods the route takes).
 */
typedef int (*quic_request_fn)(void *ctx, const struct http_head *r,
		struct http_origin o, char *allow, size_t allow_cap,
		struct http_answer **ans);

struct quic_conf {
	uint16_t id;			/* the shard's: its credentials */
	struct net_stack *ns;
	struct tls_config *tls;		/* certificates; required */
	uint16_t port;			/* UDP, host order */
	uint32_t max_conns;		/* connections at once */
	uint32_t idle_timeout_ms;	/* QUIC's max_idle_timeout */
	uint32_t handshake_timeout_ms;	/* a handshake not done by then is
					 * dropped silently */
	/* Handshakes in progress on the endpoint past which a new client
	 * must prove its address first (a Retry, RFC 9000 8.1.2); 0: every
	 * client does. */
	uint32_t retry_threshold;
	/* What ngtcp2 and nghttp3 may hold for one connection; 0:
	 * QUIC_CONN_MEM_DEFAULT. */
	size_t conn_mem;
	/* The token keys; NULL: the endpoint's own, never rotated. */
	struct quic_tokens *tokens;
	/* Bodies past a stream's own EWYK_REQUEST_BODY_MAX are gathered in
	 * these buffers (the shard's HTTP server's), up to max_body; NULL:
	 * 413 past it. */
	struct http_body_pool *bodies;
	uint32_t max_body;
	quic_request_fn request;
	/* Whether the request's route reads its body as it arrives: asked
	 * when a head is complete and a body follows. When true the request
	 * is offered at once, its body read with quic_body_read() (body_ready
	 * says when more is at hand); else the body is gathered and the
	 * request offered when it ends. NULL: every body gathered. */
	bool (*streams_body)(void *ctx, const struct http_head *r,
			struct http_origin o);
	void (*body_ready)(void *ctx, struct http_origin o);
	http_released_fn released;	/* a taken or inline answer is done */
	void *ctx;
	struct quic_stats *stats;
};

/* Binds the port; NULL with the reason on stderr. */
struct quic_endpoint *quic_endpoint_create(const struct quic_conf *conf);
/* Closes every connection (silently) and gives back their answers. */
void quic_endpoint_destroy(struct quic_endpoint *e);
/* Drain: each connection gets HTTP/3's GOAWAY and closes once its
 * streams are done. */
void quic_endpoint_drain(struct quic_endpoint *e);
/* Connections open now (drain waits for 0). */
uint32_t quic_endpoint_conns(const struct quic_endpoint *e);

/* Takes the answer of a request of o: false (nothing kept) when its
 * connection or stream is gone. The released hook follows when done. */
bool quic_answer(struct quic_endpoint *e, struct http_origin o,
		struct http_answer *a);
/* The source of o's streamed answer has more to read (after it said
 * HTTP_SOURCE_AGAIN): false when the stream is gone. */
bool quic_resume(struct quic_endpoint *e, struct http_origin o);
/* Reads the body of o as it arrives (conf.streams_body said so): bytes,
 * HTTP_SOURCE_AGAIN when none is at hand yet, 0 at its end, -1 when the
 * client reset the stream or it is gone. What is read opens the client's
 * window again. */
long quic_body_read(struct quic_endpoint *e, struct http_origin o, void *buf,
		size_t cap);
/* Nothing more of o's body is wanted (its handler is done): the rest is
 * refused with STOP_SENDING (H3_NO_ERROR, RFC 9114 4.1.1). */
void quic_body_done(struct quic_endpoint *e, struct http_origin o);
/* Whether the client of o still waits for its answer. */
bool quic_awaits(struct quic_endpoint *e, struct http_origin o);
/* The name the handshake of o's connection asked for (SNI), into buf
 * (NUL-terminated): its length, 0 when none or gone. Which site its
 * requests may name, as over TLS. */
size_t quic_server_name(struct quic_endpoint *e, struct http_origin o,
		char *buf, size_t cap);
/* The client's address and port, for the access log. */
bool quic_peer(struct quic_endpoint *e, struct http_origin o,
		struct net_addr *addr, uint16_t *port);

#endif /* EWYK_QUIC_H */
