/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP/1.1 as a protocol table of the connection layer: the glue between
 * the connection's events and its request intake (http1_intake.c) and
 * answers (http1_answer.c), its timeouts, drain and end.
 */
#include <string.h>

#include <rte_common.h>

#include "http1_conn.h"
#include "http_body_pool.h"

size_t
http1_state_size(uint32_t in_max)
{
	return RTE_ALIGN_CEIL(sizeof(struct h1) + in_max, RTE_CACHE_LINE_SIZE);
}

/* Protocol table ------------------------------------------------------------ */

/* The slot's state set up for a connection that is new (fresh) or wakes. */
static struct h1 *
h1_begin(struct http_conn *c, bool fresh)
{
	struct h1 *h = c->h1_mem;

	memset(h, 0, offsetof(struct h1, in));
	h->c = c;
	h->in_max = c->srv->conf.max_head_bytes;
	h->fresh = fresh;
	h->idle_since_ms = http_conn_now(c);
	c->p = h;
	return h;
}

void
http1_open(struct http_conn *c)
{
	struct h1 *h = h1_begin(c, true);

	h1_update_rcv_space(h);
	h1_schedule(h);
}

static void
h1_writable(struct http_conn *c)
{
	struct h1 *h = h1_of(c);

	if (h->in_serve)
		return;		/* its loop looks again */
	if (h1_serve(h))
		h1_update_rcv_space(h);
}

static void
h1_peer_closed(struct http_conn *c)
{
	h1_serve(h1_of(c));
}

static void
h1_resume(struct http_conn *c, struct http_origin o)
{
	(void)o;
	h1_writable(c);
}

static bool
h1_answer(struct http_conn *c, struct http_origin o, struct http_answer *a)
{
	struct h1 *h = h1_of(c);
	struct pipe_slot *ps;

	if (o.stream != 0 || o.seq - h->pipe_head >= h1_owed(h))
		return false;
	ps = &h->pipe[o.seq % HTTP1_PIPELINE];
	if (ps->state != PIPE_WAITING)
		return false;
	ps->state = PIPE_READY;
	ps->ans = a;
	if (o.seq == h->pipe_head)
		h1_writable(c);	/* inside h1_serve(): its loop writes it */
	return true;
}

/* A client that shut its side while an answer was owed has left: it
 * cannot send the next request, and most close outright (nginx's 499). */
static bool
h1_awaits(struct http_conn *c, struct http_origin o)
{
	struct h1 *h = h1_of(c);

	return o.stream == 0 && o.seq - h->pipe_head < h1_owed(h) &&
		h->pipe[o.seq % HTTP1_PIPELINE].state == PIPE_WAITING &&
		!c->peer_closed;
}

static bool
quiet(const struct h1 *h)
{
	return h1_owed(h) == 0 && h->writing == NULL && h->body_left == 0 &&
		!http1_body_reading(&h->req);
}

/* Only a body being skipped is left: nothing owed, written or read. */
static bool
skipping(const struct h1 *h)
{
	return h->skip_ms != 0 && !h->sink && h->gather == NULL &&
		h1_owed(h) == 0 && h->writing == NULL && h->body_left == 0 &&
		http1_body_reading(&h->req);
}

static void
h1_drain(struct http_conn *c)
{
	struct h1 *h = h1_of(c);

	if (quiet(h) && h->in_len == 0)
		h1_start_close(h);		/* idle keep-alive: close now */
	else
		h->close_after = true;	/* after the answer under way */
}

/* When the connection's keep-alive timeout falls due (0: none). */
static uint64_t
keepalive_end(const struct h1 *h)
{
	const struct http_server_conf *k = &h->c->srv->conf;

	return k->keepalive_timeout_ms != 0 ? h->idle_since_ms +
		k->keepalive_timeout_ms + 1 : 0;
}

/* When the connection's next timeout falls due (0: none): a request head
 * begun and not whole within header_timeout_ms, or, with nothing in,
 * nothing asked or owed: its state given back after idle_release_ms, the
 * connection closed after keepalive_timeout_ms, whichever comes first. A
 * connection that answers, writes or reads a body does not time out. */
static uint64_t
deadline(const struct h1 *h)
{
	const struct http_server_conf *k = &h->c->srv->conf;
	uint64_t at;

	/* A body gathered for its handler that stops coming holds one of
	 * the shard's few body slots: it has header_timeout_ms between its
	 * bytes (once no answer is going out before it). */
	if (h->gather != NULL)
		return k->header_timeout_ms != 0 && h->writing == NULL &&
			h->body_left == 0 ? h->gather_ms +
			k->header_timeout_ms + 1 : 0;
	/* A body skipped (its request answered without it, or its reader
	 * answered and left it) keeps the connection until it has all come:
	 * one that stops coming ends it the same way. */
	if (skipping(h))
		return k->header_timeout_ms != 0 ? h->skip_ms +
			k->header_timeout_ms + 1 : 0;
	if (!quiet(h))
		return 0;
	if (k->header_timeout_ms != 0 && h->in_len > 0 && h->head_start_ms != 0)
		return h->head_start_ms + k->header_timeout_ms + 1;
	if (h->in_len > 0)
		return 0;
	at = keepalive_end(h);
	if (k->idle_release_ms != 0 && !h->close_after && (at == 0 ||
			h->idle_since_ms + k->idle_release_ms + 1 < at))
		at = h->idle_since_ms + k->idle_release_ms + 1;
	return at;
}

void
h1_set_deadline(struct h1 *h)
{
	uint64_t at = deadline(h);

	if (at != 0)
		http_conn_deadline(h->c, at);
}

static const struct http_proto h1_idle_proto;

/* Idle long enough: the state goes (its pages given back), the idle
 * table stands in until the next byte. Returns the keep-alive deadline,
 * the one left. */
static uint64_t
h1_release(struct http_conn *c, struct h1 *h)
{
	uint64_t at = keepalive_end(h);

	c->h1_fresh = h->fresh;
	c->p = NULL;
	c->proto = &h1_idle_proto;
	http_conn_h1_drop(c);
	http_conn_stats(c)->h1_releases++;
	http_conn_stats(c)->h1_released++;
	return at;
}

static uint64_t
h1_timeout(struct http_conn *c, uint64_t now_ms)
{
	struct h1 *h = h1_of(c);
	uint64_t at = deadline(h);

	if (at == 0 || now_ms < at)
		return at;	/* none now, or not yet */
	if (h->gather != NULL) {
		http_conn_stats(c)->body_timeouts++;
		h1_gather_refuse(h, 408);	/* queued: owed was 0 */
		h1_write_owed(h);
		h1_start_close(h);
		return 0;
	}
	if (skipping(h)) {
		/* Its answer is out already: the close ends it. */
		http_conn_stats(c)->body_timeouts++;
		http1_body_stop(&h->req);
		h->in_len = 0;
		h1_start_close(h);
		return 0;
	}
	if (h->in_len == 0 && at != keepalive_end(h))
		return h1_release(c, h);
	if (h->in_len > 0) {
		/* Slowloris: a head trickling in holds a connection and its
		 * buffer; answer 408 and close. */
		http_conn_stats(c)->head_timeouts++;
		h->in_len = 0;
		h->close_after = true;
		if (http_conn_space(c) >= HEAD_RESERVE)
			h1_write_error(h, 408, false, NULL);
	} else {
		http_conn_stats(c)->idle_closes++;
	}
	h1_start_close(h);
	return 0;
}

static void
h1_free(struct http_conn *c)
{
	struct h1 *h = h1_of(c);
	uint32_t seq;

	/* Answers kept for their turn go back; those still with their
	 * handlers come back stale and are released then. */
	if (h->writing != NULL)
		h1_done_writing(h);
	http_body_slot_put(h->gather);	/* a body half gathered */
	h->gather = NULL;
	for (seq = h->pipe_head; seq != h->pipe_tail; seq++) {
		struct pipe_slot *ps = &h->pipe[seq % HTTP1_PIPELINE];

		if (ps->state == PIPE_READY)
			http_conn_release(c, ps->ans);
	}
	h->pipe_head = h->pipe_tail;
}

const struct http_proto http1_proto = {
	.name = "http/1.1",
	.recv = h1_recv,
	.writable = h1_writable,
	.peer_closed = h1_peer_closed,
	.answer = h1_answer,
	.awaits = h1_awaits,
	.resume = h1_resume,
	.body_read = h1_body_read,
	.drain = h1_drain,
	.timeout = h1_timeout,
	.free = h1_free,
};

/* An idle connection whose state went back (h1_release()). Its first
 * byte takes the state again; anything else it may hear closes it, as
 * HTTP/1.1 would close an idle connection. */

static struct h1 *
h1_wake(struct http_conn *c)
{
	struct h1 *h = h1_begin(c, c->h1_fresh);

	c->proto = &http1_proto;
	http_conn_stats(c)->h1_released--;
	return h;
}

static uint32_t
idle_recv(struct http_conn *c, const uint8_t *data, uint32_t len)
{
	h1_wake(c);
	return h1_recv(c, data, len);
}

static void
idle_writable(struct http_conn *c)
{
	(void)c;
}

static void
idle_close(struct http_conn *c)
{
	http_conn_close(c);
}

static bool
idle_answer(struct http_conn *c, struct http_origin o, struct http_answer *a)
{
	(void)c;
	(void)o;
	(void)a;
	return false;	/* nothing was asked */
}

static bool
idle_awaits(struct http_conn *c, struct http_origin o)
{
	(void)c;
	(void)o;
	return false;
}

/* Only the keep-alive deadline is armed while idle. */
static uint64_t
idle_timeout(struct http_conn *c, uint64_t now_ms)
{
	(void)now_ms;
	http_conn_stats(c)->idle_closes++;
	http_conn_close(c);
	return 0;
}

static void
idle_free(struct http_conn *c)
{
	http_conn_stats(c)->h1_released--;
}

static const struct http_proto h1_idle_proto = {
	.name = "http/1.1",
	.recv = idle_recv,
	.writable = idle_writable,
	.peer_closed = idle_close,
	.answer = idle_answer,
	.awaits = idle_awaits,
	.drain = idle_close,
	.timeout = idle_timeout,
	.free = idle_free,
};
