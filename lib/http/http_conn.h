/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The protocol-neutral connection layer, as the protocols see it. It owns
 * the transport upcalls, the connection slots, timeouts, drain and the
 * origin-to-connection lookup; each connection speaks through a small
 * protocol table, HTTP/1.1 (http1_proto.c) or HTTP/2 (h2_session.c). Seeing
 * the HTTP/2 preface or "Upgrade: h2c" swaps the table (as h2o does): the
 * protocols never name each other, they ask this layer to switch.
 */
#ifndef EWYK_HTTP_CONN_H
#define EWYK_HTTP_CONN_H

#include <stdbool.h>
#include <stdint.h>

#include "http_body_pool.h"
#include "http_mem.h"
#include "http_priv.h"
#include "http_server.h"
#include "net_stack.h"

struct http_proto {
	const char *name;
	/* In-order bytes; returns how many were taken. */
	uint32_t (*recv)(struct http_conn *c, const uint8_t *data, uint32_t len);
	/* Send space was freed. */
	void (*writable)(struct http_conn *c);
	void (*peer_closed)(struct http_conn *c);
	/* A dispatched request's answer; false when its stream or pipeline
	 * place is gone (the caller releases it). */
	bool (*answer)(struct http_conn *c, struct http_origin o,
			struct http_answer *a);
	/* Whether a dispatched request's stream still waits for its answer
	 * (the connection is known live). */
	bool (*awaits)(struct http_conn *c, struct http_origin o);
	/* A streamed answer's source that said HTTP_SOURCE_AGAIN has more
	 * (http_server_resume()); may be NULL. */
	void (*resume)(struct http_conn *c, struct http_origin o);
	/* Reads the body of a HTTP_ROUTE_BODY_STREAM request
	 * (http_server_body_read()); may be NULL. */
	long (*body_read)(struct http_conn *c, struct http_origin o, void *buf,
			size_t cap);
	/* Graceful drain: finish what was asked, refuse more, close. */
	void (*drain)(struct http_conn *c);
	/* The connection's deadline came (http_conn_deadline()): acts on
	 * what is overdue, and returns the next deadline (0: none). May be
	 * NULL. */
	uint64_t (*timeout)(struct http_conn *c, uint64_t now_ms);
	/* The connection is gone: give back what the protocol holds. */
	void (*free)(struct http_conn *c);
};

struct http_conn {
	struct http_server *srv;
	void *t;		/* the transport's handle; NULL: slot free */
	/* Its transport: the server's, or its own (TLS's). */
	const struct http_transport *tr;
	void *tr_ctx;
	const struct http_proto *proto;
	void *p;		/* the protocol's state */
	void *h1_mem;		/* this slot's HTTP/1.1 state */
	struct http_conn *free_next;
	struct net_timer timer;	/* the deadline's, on the transport's wheel */
	uint64_t timer_at;	/* when it fires; 0: not armed */
	uint32_t index;
	uint32_t gen;		/* bumped when the slot is freed */
	bool closing;		/* we closed or aborted: input is dropped */
	bool peer_closed;
	bool h1_fresh;		/* its HTTP/1.1 state, given back idle, had
				 * read nothing yet (may still see h2c) */
};

struct http_server {
	struct http_server_conf conf;
	struct http_conn *conns;
	struct http_conn *free_list;
	void *h1_mem;		/* HTTP/1.1 state of every slot */
	size_t h1_stride;	/* a slot's, whole pages */
	struct http_mem mem;	/* HTTP/2's sessions and streams */
	bool draining;		/* answer what is asked, then close */
	bool timeouts;		/* header or keep-alive timeout configured */
	uint64_t date_sec;
	char date[40];		/* IMF-fixdate of date_sec */
	uint32_t date_len;
	/* HTTP/2's connection windows grown past H2_CONN_WINDOW, bytes:
	 * within conf.h2_window_budget (h2_window.c) */
	uint64_t h2_window_grown;
	uint8_t scratch[16384];	/* streamed answer bodies pass through */
	struct http_body_pool bodies;	/* large request bodies */
};

/* The transport, for the protocols. */
static inline uint32_t
http_conn_write(struct http_conn *c, const void *data, uint32_t len)
{
	return len == 0 ? 0 : c->tr->write(c->tr_ctx, c->t, data, len);
}

/* The same for bytes that stay unchanged until ref's done: lent to the
 * transport where it takes them so. */
static inline uint32_t
http_conn_write_ref(struct http_conn *c, const void *data, uint32_t len,
		const struct tcp_ref *ref)
{
	if (c->tr->write_ref == NULL)
		return http_conn_write(c, data, len);
	return len == 0 ? 0 : c->tr->write_ref(c->tr_ctx, c->t, data, len, ref);
}

static inline uint32_t
http_conn_space(const struct http_conn *c)
{
	return c->tr->space(c->tr_ctx, c->t);
}

static inline void
http_conn_set_rcv_space(struct http_conn *c, uint32_t bytes)
{
	c->tr->rcv_space(c->tr_ctx, c->t, bytes);
}

static inline uint64_t
http_conn_now(const struct http_conn *c)
{
	return c->tr->now_ms(c->tr_ctx);
}

/* The transport's round trip, microseconds; 0: not known. */
static inline uint32_t
http_conn_rtt_us(const struct http_conn *c)
{
	return c->tr->rtt_us != NULL ? c->tr->rtt_us(c->tr_ctx, c->t) : 0;
}

static inline struct http_stats *
http_conn_stats(const struct http_conn *c)
{
	return c->srv->conf.stats;
}

static inline struct http_mem *
http_conn_mem(const struct http_conn *c)
{
	return &c->srv->mem;
}

static inline bool
http_conn_draining(const struct http_conn *c)
{
	return c->srv->draining;
}

/* Writes v in decimal at buf (20 bytes are enough); returns its length.
 * The answer path formats numbers with this, not with printf. */
static inline uint32_t
http_fmt_u64(char *buf, uint64_t v)
{
	char tmp[20];
	uint32_t n = 0, i;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	for (i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	return n;
}

/* The protocol's timeout() is owed at at_ms. An earlier deadline moves
 * the timer; a later one waits for the timer armed, whose timeout()
 * returns it: a deadline that only moves on costs no timer call. */
static inline void
http_conn_deadline(struct http_conn *c, uint64_t at_ms)
{
	if (c->timer_at != 0 && c->timer_at <= at_ms)
		return;
	c->timer_at = at_ms;
	c->tr->timer_arm(c->tr_ctx, &c->timer, at_ms);
}

/* The slot's HTTP/1.1 state is not needed until the connection's next
 * byte: its pages go back to the system (and read as zeros after). */
void http_conn_h1_drop(struct http_conn *c);

/* Ends the connection after what is queued; input is dropped from now. */
void http_conn_close(struct http_conn *c);
/* Resets it; the protocol's free() may run before this returns. */
void http_conn_abort(struct http_conn *c);

/* The route a request goes to (by its Host too, with sites); NULL when
 * none does. */
const struct http_route *http_conn_route(const struct http_conn *c,
		const struct http_head *r);
/*
 * Routes a request and offers it to the dispatch hook. Returns
 * HTTP_DISPATCH_TAKEN, HTTP_DISPATCH_ANSWERED with *ans, or the status to
 * answer at once (404: no route, 405 with allow filled, 413: a body the
 * route wanted whole is not at hand, 431, 503).
 */
int http_conn_dispatch(struct http_conn *c, const struct http_route *rt,
		const struct http_head *r, int http_version,
		uint32_t stream, uint32_t seq, char *allow, size_t allow_cap,
		struct http_answer **ans);
/* A request the server answers itself, before or instead of routing it
 * (a head that cannot be parsed: r NULL): told to the refused hook, for
 * the access log. */
void http_conn_refused(struct http_conn *c, const struct http_head *r,
		int status, int http_version, uint32_t stream, uint32_t seq);
/* More of a HTTP_ROUTE_BODY_STREAM request's body is at hand (or it
 * ended, or broke): tells the embedder's body_ready hook. */
void http_conn_body_ready(struct http_conn *c, struct http_origin o);
/* Counts an answer as it is serialized: requests, by status, by protocol. */
void http_conn_count_answer(struct http_conn *c, int status, int http_version);
/* Gives back a dispatched answer the protocol held: its borrowings, then
 * the released hook. */
void http_conn_release(struct http_conn *c, struct http_answer *a);
/* RFC 9110 6.6.1: an origin server with a clock sends Date. Formatted at
 * most once a second per shard. */
const char *http_conn_date(struct http_conn *c, uint32_t *len);
/* The Alt-Svc value c's answers carry, NULL when none (not over TLS, or
 * no HTTP/3). */
static inline const char *
http_conn_alt_svc(const struct http_conn *c)
{
	return c->tr->secure ? c->srv->conf.alt_svc : NULL;
}
/* Bytes a streamed answer body passes through. */
static inline uint8_t *
http_conn_scratch(struct http_conn *c, size_t *cap)
{
	*cap = sizeof(c->srv->scratch);
	return c->srv->scratch;
}

/* HTTP/2's connection preface (RFC 9113 3.4): what HTTP/2 begins with,
 * and what tells the HTTP/1.1 intake to switch (prior knowledge). */
#define H2_PREFACE "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#define H2_PREFACE_LEN 24

/*
 * Protocol switches, called by HTTP/1.1 as the last thing it does: the
 * HTTP/1.1 state is gone when they return true.
 */
/* The client sent the HTTP/2 preface (RFC 9113 3.3): data (the preface
 * and what followed) goes to a new HTTP/2 session. */
void http_conn_start_h2(struct http_conn *c, const uint8_t *data,
		uint32_t len);
/* "Upgrade: h2c" (RFC 7540 3.2): 101, then an HTTP/2 session that answers
 * r on stream 1; rest (what followed the head) goes to it. False, with
 * nothing changed, when the settings are bad or there is no memory: the
 * request is then answered in HTTP/1.1. */
bool http_conn_upgrade_h2(struct http_conn *c, const struct http_head *r,
		const struct http_str *settings, const uint8_t *rest,
		uint32_t rest_len);

#endif /* EWYK_HTTP_CONN_H */
