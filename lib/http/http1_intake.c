/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP/1.1 request intake: the input buffer, the request heads parsed
 * from it, each routed and taken by its handler or refused, "100
 * Continue", and the request bodies: gathered for a handler that takes
 * them whole, read as they come by a body-stream route's reader, or
 * skipped.
 */
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>

#include "http1_conn.h"
#include "http_body_pool.h"
#include "http1_parse.h"

#define DISCARD_MAX (1 << 20)	/* a refused body larger than this closes */

/* What take_request() did with a request. */
enum took {
	TOOK_HEAD,		/* the head; the body (if any) is read after */
	TOOK_HEAD_AND_BODY,	/* both: a dispatched handler has the body */
	TOOK_NOTHING,		/* its turn has not come: answers keep order */
	TOOK_UPGRADE,		/* an h2c upgrade: the connection is HTTP/2 */
};

static const char continue_100[] = "HTTP/1.1 100 Continue\r\n\r\n";

/* "Upgrade: h2c" on a GET or HEAD without a body (RFC 7540 3.2). */
static const struct http_str *
h2c_settings(const struct http_head *r)
{
	const struct http_str *up = http_head_find(r, "upgrade");
	const struct http_str *settings = http_head_find(r, "http2-settings");

	if (up == NULL || settings == NULL || !http_str_eq_nocase(*up, "h2c") ||
			(r->method != HTTP_GET && r->method != HTTP_HEAD) ||
			r->chunked || r->content_length > 0)
		return NULL;
	return settings;
}

static void
start_req_body(struct h1 *h, const struct http_head *r)
{
	if (r->tunnel)
		http1_body_start(&h->req, HTTP1_BODY_CLOSE, 0);
	else
		http1_body_start(&h->req, r->chunked ? HTTP1_BODY_CHUNKED :
				HTTP1_BODY_LENGTH, r->chunked ? 0 :
				(uint64_t)r->content_length);
}

/* A WebSocket opening handshake (RFC 6455 4.1: a GET of HTTP/1.1 asking
 * for websocket in Upgrade, naming upgrade in Connection, without a
 * body) on a route that passes WebSockets on. */
static __rte_noinline bool
takes_tunnel(const struct http_head *r, const struct http_route *rt)
{
	const struct http_str *up = http_head_find(r, "upgrade");

	return r->conn_upgrade && r->method == HTTP_GET && r->minor >= 1 &&
		!r->chunked && r->content_length <= 0 && rt != NULL &&
		(rt->flags & (HTTP_ROUTE_WEBSOCKET | HTTP_ROUTE_BODY_STREAM)) ==
		(HTTP_ROUTE_WEBSOCKET | HTTP_ROUTE_BODY_STREAM) &&
		up != NULL && http1_list_has(*up, "websocket");
}

/* Hands a request to its handler (route rt; NULL: none), or refuses it;
 * while answers are owed, a request whose body a reader takes waits for
 * its turn (the reader may answer as it reads, which must not start amid
 * earlier answers). */
static __rte_always_inline enum took
take_request(struct h1 *h, const struct http_head *r,
		const struct http_route *rt, int head_len)
{
	bool has_body = r->chunked || r->content_length > 0;
	bool head_only = r->method == HTTP_HEAD;
	bool owed = h1_owed(h) > 0;
	bool sink = rt != NULL && (rt->flags & HTTP_ROUTE_BODY_STREAM) &&
		(rt->methods & http_method_bit(r->method));
	const struct http_str *settings = owed || !r->upgrade ? NULL :
		h2c_settings(r);
	struct http_answer *ans = NULL;
	char allow[48] = "";
	struct pipe_slot *ps;
	int taken;

	if (settings != NULL && http_conn_upgrade_h2(h->c, r, settings,
			(const uint8_t *)h->in + head_len,
			h->in_len - (uint32_t)head_len))
		return TOOK_UPGRADE;
	if (sink && owed)
		return TOOK_NOTHING;
	taken = http_conn_dispatch(h->c, rt, r, 1, 0, h->pipe_tail, allow,
			sizeof(allow), &ans);
	if (taken != HTTP_DISPATCH_TAKEN && taken != HTTP_DISPATCH_ANSWERED) {
		/* A body nobody takes: skip a small one, but do not wait for
		 * a large one or for one the client holds back until
		 * "100 Continue": close after the answer instead. */
		if ((has_body && r->body == NULL && (taken == 413 ||
				r->expect_continue || r->chunked ||
				r->content_length > DISCARD_MAX)) || r->tunnel)
			h->close_after = true;
		h1_refuse(h, taken, head_only, allow);
		if (has_body && !h->close_after && r->body == NULL)
			start_req_body(h, r);
		return r->body != NULL ? TOOK_HEAD_AND_BODY : TOOK_HEAD;
	}
	ps = &h->pipe[h->pipe_tail++ % HTTP1_PIPELINE];
	ps->state = ans != NULL ? PIPE_READY : PIPE_WAITING;
	ps->head_only = head_only;
	/* An HTTP/1.0 client knows no chunks: a body of unknown length ends
	 * with the connection, so this is its last. */
	ps->http10 = r->minor == 0;
	if (ps->http10)
		h->close_after = true;
	ps->ans = ans;
	if (sink && (has_body || r->tunnel)) {
		/* A tunnel's answer ends with the connection too. */
		if (r->tunnel) {
			ps->http10 = true;
			h->close_after = true;
		}
		/* Its reader takes the body as it comes (h1_body_read()). */
		if (r->expect_continue && !h->continue_sent)
			http_conn_write(h->c, continue_100,
					sizeof(continue_100) - 1);
		start_req_body(h, r);
		h->sink = true;
		h->sink_seq = h->pipe_tail - 1;
		return TOOK_HEAD;
	}
	if (r->body != NULL) {
		if (ans == NULL)
			h->gather = NULL;	/* a gathered body's slot is
						 * the request's now */
		return TOOK_HEAD_AND_BODY;
	}
	if (has_body)
		h->close_after = true;	/* not reading a body it left */
	return TOOK_HEAD;
}

/* A head that cannot be parsed: its answer, and the access log told. */
static void
refuse_unparsed(struct h1 *h, int status)
{
	http_conn_refused(h->c, NULL, status, 1, 0, h->pipe_tail);
	h1_refuse(h, status, false, NULL);
}

/* A request refused before its body is read: its answer, and the access
 * log told. The connection ends after it (the body is not read). */
static void
refuse_unread(struct h1 *h, const struct http_head *r, int status)
{
	h->close_after = true;
	http_conn_refused(h->c, r, status, 1, 0, h->pipe_tail);
	h1_refuse(h, status, r->method == HTTP_HEAD, NULL);
}

/* What gather_body() did with a request's body. */
enum gather {
	GATHER_NONE,	/* not gathered: none, a reader's, or to be refused */
	GATHER_WHOLE,	/* in the input buffer: r->body is set */
	GATHER_WAIT,	/* more input first, or the answers owed */
	GATHER_SLOT,	/* the head went into a body slot, the body follows
			 * it there (gather_more()) */
	GATHER_REFUSED,	/* answered unread (503: no slot free) */
};

/* A body larger than the input buffer keeps (chunked, or past
 * EWYK_REQUEST_BODY_MAX) goes into one of the server's body slots, with
 * its head copied in front so that the input buffer is free for it. */
static enum gather
gather_start(struct h1 *h, const struct http_head *r, int head_len)
{
	struct http_body_slot *g;

	/* Its "100 Continue" and its slot wait for the answers owed: an
	 * interim answer amid them would be taken for theirs. */
	if (h1_owed(h) > 0)
		return GATHER_WAIT;
	g = http_body_slot_get(&h->c->srv->bodies);
	if (g == NULL) {
		refuse_unread(h, r, 503);
		return GATHER_REFUSED;
	}
	memcpy(g->data, h->in, (size_t)head_len);
	g->len = (uint32_t)head_len;
	h->gather = g;
	h->gather_head = (uint32_t)head_len;
	h->gather_ms = http_conn_now(h->c);
	start_req_body(h, r);
	if (r->expect_continue && !h->continue_sent) {
		http_conn_write(h->c, continue_100, sizeof(continue_100) - 1);
		h->continue_sent = true;
	}
	return GATHER_SLOT;
}

/* The body of a request whose handler (route rt) takes it whole: small
 * ones are gathered in the input buffer, larger ones in a body slot, and
 * one said to be past max_body is left to the dispatch to refuse (413),
 * unread. */
static enum gather
gather_body(struct h1 *h, struct http_head *r, const struct http_route *rt,
		int head_len)
{
	if (!r->chunked && r->content_length <= 0)
		return GATHER_NONE;
	/* A request that will be refused (404, 405) is refused now: its
	 * body is not waited for, and not invited by "100 Continue". A
	 * body-stream route's reader takes its body as it comes. */
	if (rt == NULL || !(rt->methods & http_method_bit(r->method)) ||
			(rt->flags & HTTP_ROUTE_BODY_STREAM) ||
			(!r->chunked && r->content_length >
			h->c->srv->conf.max_body))
		return GATHER_NONE;
	if (r->chunked || r->content_length > EWYK_REQUEST_BODY_MAX ||
			head_len + r->content_length > h->in_max)
		return gather_start(h, r, head_len);
	if (h->in_len < head_len + r->content_length) {
		/* An interim answer amid owed ones would be taken for
		 * theirs: "100 Continue" waits for its turn. */
		if (r->expect_continue && !h->continue_sent &&
				h1_owed(h) == 0) {
			http_conn_write(h->c, continue_100,
					sizeof(continue_100) - 1);
			h->continue_sent = true;
		}
		return GATHER_WAIT;
	}
	r->body = h->in + head_len;
	r->body_len = (uint32_t)r->content_length;
	return GATHER_WHOLE;
}

/* The gathered request's head, parsed again from its slot. */
static void
gathered_head(const struct h1 *h, struct http_head *r)
{
	http1_parse_request_max((const char *)h->gather->data, h->gather_head,
			r, h->c->srv->conf.max_target);
}

static void
gather_drop(struct h1 *h)
{
	http_body_slot_put(h->gather);
	h->gather = NULL;
}

void
h1_gather_refuse(struct h1 *h, int status)
{
	struct http_head r;

	gathered_head(h, &r);
	http1_body_stop(&h->req);
	refuse_unread(h, &r, status);
	gather_drop(h);
	h->in_len = 0;
}

/* The gathered body is whole: its request goes to its handler, which
 * takes the slot with it (or the slot goes back). */
static void
gather_dispatch(struct h1 *h)
{
	struct http_body_slot *g = h->gather;
	struct http_head req;

	gathered_head(h, &req);
	req.body = (const char *)g->data + h->gather_head;
	req.body_len = g->len - h->gather_head;
	req.body_slot = g;
	if (!req.keep_alive || http_conn_draining(h->c))
		h->close_after = true;
	take_request(h, &req, http_conn_route(h->c, &req),
			(int)h->gather_head);
	gather_drop(h);		/* refused, or answered already */
	http_conn_stats(h->c)->by_method[req.method]++;
	h->continue_sent = false;
	h->head_start_ms = h->in_len > 0 ? http_conn_now(h->c) : 0;
}

/* Moves body bytes from the input into the slot, up to max_body. False
 * while it waits for more input. */
static bool
gather_more(struct h1 *h)
{
	struct http_body_slot *g = h->gather;
	uint32_t max = h->gather_head + h->c->srv->conf.max_body;
	size_t off = 0;

	while (http1_body_reading(&h->req)) {
		const uint8_t *d;
		size_t dl;
		long used = http1_body_decode(&h->req, (const uint8_t *)h->in +
				off, h->in_len - off, &d, &dl);

		if (used < 0) {
			http_conn_stats(h->c)->body_errors++;
			h1_gather_refuse(h, 400);
			return true;
		}
		if (dl > max - g->len) {
			/* Chunked past max_body: refused as it crosses. */
			http_conn_stats(h->c)->bodies_too_large++;
			h1_gather_refuse(h, 413);
			return true;
		}
		if (dl > 0) {	/* else only framing: d is not set */
			memcpy(g->data + g->len, d, dl);
			g->len += (uint32_t)dl;
		}
		off += (size_t)used;
		if (used == 0)
			break;
	}
	if (off > 0) {
		h1_consume(h, (uint32_t)off);
		h->gather_ms = http_conn_now(h->c);
	}
	if (!http1_body_reading(&h->req)) {
		gather_dispatch(h);
		return true;
	}
	if (h->c->peer_closed) {
		/* The client left amid its body: nobody to answer. */
		http1_body_stop(&h->req);
		gather_drop(h);
		h->in_len = 0;
		h->close_after = true;
		return true;
	}
	return false;
}

/* Skips the body of a request no reader takes (a refused one, or one its
 * reader left when its answer went). Returns false when it must wait for
 * input; a body whose framing is bad ends the connection after what is
 * owed. */
static bool
skip_body(struct h1 *h)
{
	while (http1_body_reading(&h->req)) {
		const uint8_t *d;
		size_t dl;
		long used = http1_body_decode(&h->req, (const uint8_t *)h->in,
				h->in_len, &d, &dl);

		if (used < 0) {
			http_conn_stats(h->c)->body_errors++;
			http1_body_stop(&h->req);
			h->in_len = 0;
			h->close_after = true;
			h->skip_ms = 0;
			return true;
		}
		h1_consume(h, (uint32_t)used);
		/* The wait for more of it is timed from its last bytes, or
		 * from the first wait (h1_timeout()). */
		if (used > 0 || h->skip_ms == 0)
			h->skip_ms = http_conn_now(h->c);
		if (used == 0)
			return false;
	}
	h->skip_ms = 0;
	return true;
}

bool
h1_body_intake(struct h1 *h)
{
	if (h->sink) {
		/* Its reader pulls it (h1_body_read()); what the reader does
		 * may end the body or ready an answer: look again then. */
		return h1_tell_reader(h) && !h->c->closing &&
			!(h->sink && h1_ready_slot(h) == NULL);
	}
	if (h->gather != NULL)
		return gather_more(h);
	if (!skip_body(h)) {
		if (!h->c->peer_closed || h->c->closing)
			return false;
		/* A skipped body that will not come: what is owed is still
		 * answered, then the close. */
		http1_body_stop(&h->req);
		h->in_len = 0;
		h->close_after = true;
	}
	return true;
}

bool
h1_tell_reader(struct h1 *h)
{
	if (!h->sink || (h->in_len == 0 && !h->c->peer_closed))
		return false;
	http_conn_body_ready(h->c, (struct http_origin){ h->c->index,
			h->c->gen, 0, h->sink_seq });
	return true;
}

/* h1_serve()'s body: it must not run inside itself (a body reader or an
 * answer arriving from within it only leaves work for its loop). */
static bool
serve_in(struct h1 *h, struct http_conn *c)
{
	const struct http_route *rt;
	struct http_head req;
	bool close_before;
	enum gather g;
	enum took took;
	int rc;

	if (h->fresh && h->in_len > 0) {
		size_t n = RTE_MIN((size_t)h->in_len, (size_t)H2_PREFACE_LEN);

		/* A preface cut short by the peer's close is no preface: it
		 * is read as HTTP/1.1, which ends the connection. */
		if (memcmp(h->in, H2_PREFACE, n) == 0 &&
				(n == H2_PREFACE_LEN || !c->peer_closed)) {
			if (n < H2_PREFACE_LEN)
				return true;	/* the preface is still arriving */
			http_conn_start_h2(c, (const uint8_t *)h->in, h->in_len);
			return false;
		}
		h->fresh = false;
	}
	while (!c->closing && h1_write_owed(h)) {
		if (h1_owed(h) > 0) {
			/* Bounded read-ahead: a full pipeline reads no more
			 * until its oldest answer is out. */
			if (h->close_after || h1_owed(h) == HTTP1_PIPELINE) {
				if (h1_owed(h) == HTTP1_PIPELINE)
					http_conn_stats(c)->pipeline_full++;
				break;
			}
		} else if (h->close_after) {
			h1_start_close(h);
			break;
		}
		if (http_conn_space(c) < HEAD_RESERVE)
			break;
		rc = h->in_len > 0 ? http1_parse_request_max(h->in, h->in_len,
				&req, c->srv->conf.max_target) : 0;
		if (rc == 0 && h->in_len == 0 && h1_owed(h) == 0)
			h->idle_since_ms = http_conn_now(c);
		if (rc == 0) {
			if (h->in_len == h->in_max) {
				h->close_after = true;
				refuse_unparsed(h, http1_overflow_status(h->in,
						h->in_len));
				h->in_len = 0;
				continue;
			}
			if (c->peer_closed && h1_owed(h) == 0)
				h1_start_close(h);
			break;
		}
		if (rc < 0) {
			/* The framing is lost: answer and close. */
			h->close_after = true;
			refuse_unparsed(h, -rc);
			h->in_len = 0;
			continue;
		}
		/* One lookup serves the body's gathering and the dispatch. */
		rt = http_conn_route(c, &req);
		if (unlikely(req.upgrade))
			req.tunnel = takes_tunnel(&req, rt);
		g = gather_body(h, &req, rt, rc);
		if (g == GATHER_WAIT) {
			if (c->peer_closed && h1_owed(h) == 0)
				h1_start_close(h);	/* the body never came */
			break;
		}
		if (g == GATHER_SLOT || g == GATHER_REFUSED) {
			/* The head is taken (with its body to come, or
			 * answered): what follows it is the body. */
			if (g == GATHER_REFUSED)
				http_conn_stats(c)->by_method[req.method]++;
			h->head_start_ms = 0;
			h1_consume(h, (uint32_t)rc);
			continue;
		}
		close_before = h->close_after;
		if (!req.keep_alive || http_conn_draining(c))
			h->close_after = true;
		took = take_request(h, &req, rt, rc);
		if (took == TOOK_NOTHING) {
			h->close_after = close_before;
			break;		/* resumed when the owed answers are out */
		}
		http_conn_stats(c)->by_method[req.method]++;
		if (took == TOOK_UPGRADE)
			return false;
		h->continue_sent = false;
		/* The head is whole; a pipelined one after it starts now. */
		h->head_start_ms = h->in_len > (uint32_t)rc ? http_conn_now(c) : 0;
		h1_consume(h, (uint32_t)rc + (took == TOOK_HEAD_AND_BODY ?
				req.body_len : 0));
	}
	return true;
}

bool
h1_serve(struct h1 *h)
{
	struct http_conn *c = h->c;
	bool more;

	h->in_serve = true;
	more = serve_in(h, c);
	h->in_serve = false;
	if (more)
		h1_schedule(h);
	return more;
}

uint32_t
h1_recv(struct http_conn *c, const uint8_t *data, uint32_t len)
{
	struct h1 *h = h1_of(c);
	uint32_t n;

	if (h->in_len == 0 && h->head_start_ms == 0)
		h->head_start_ms = http_conn_now(c);	/* a request begins */
	n = RTE_MIN(len, h->in_max - h->in_len);
	memcpy(h->in + h->in_len, data, n);
	h->in_len += n;
	if (h1_serve(h))
		h1_update_rcv_space(h);
	return n;
}

/* The reader's request body ended or broke: it is no longer read. */
static void
sink_end(struct h1 *h)
{
	http1_body_stop(&h->req);
	h->sink = false;
}

/* Body bytes of a HTTP_ROUTE_BODY_STREAM request, for its reader. */
long
h1_body_read(struct http_conn *c, struct http_origin o, void *buf, size_t cap)
{
	struct h1 *h = h1_of(c);
	bool ended;
	size_t used;
	long got;

	if (o.stream != 0 || o.seq != h->sink_seq)
		return -1;
	if (!h->sink)
		return http1_body_reading(&h->req) ? -1 : 0;
	got = http1_body_read(&h->req, (const uint8_t *)h->in, h->in_len, &used,
			buf, cap);
	if (got < 0) {
		http_conn_stats(c)->body_errors++;
		sink_end(h);
		h->close_after = true;
		return -1;
	}
	h1_consume(h, (uint32_t)used);
	ended = !http1_body_reading(&h->req);
	if (ended)
		sink_end(h);
	if (!h->in_serve) {
		/* Room was made, or the next request may be parsed. */
		if (!ended || h1_serve(h))
			h1_update_rcv_space(h);
	}
	if (got > 0)
		return (long)got;
	if (ended)
		return 0;
	if (c->peer_closed) {
		sink_end(h);
		h->close_after = true;
		return -1;	/* the client left amid its body */
	}
	return HTTP_SOURCE_AGAIN;
}
