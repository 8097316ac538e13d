/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP/1.1 on a client connection: requests written whole (pipelined up
 * to -m deep), answers read in order by lib/http's client reader
 * (h1_answers_feed()), each matched with the oldest request.
 */
#include <stdlib.h>
#include <string.h>

#include "digest.h"
#include "http_client.h"
#include "load.h"

/* A request on the wire, in the order sent. */
struct h1_sent {
	uint64_t due_tsc;
	uint32_t url;
};

struct h1_state {
	struct h1_answers rd;
	struct digest *digest;	/* --expect-sha256: the body's */
	int status;		/* of the answer being read */
	int64_t content_length;
	uint32_t head, count;	/* the ring of requests sent */
	struct h1_sent sent[];
};

static int
h1_start(struct load_conn *c)
{
	const struct load_conf *conf = conn_conf(c);
	struct h1_state *s = calloc(1, sizeof(*s) +
			conf->depth * sizeof(s->sent[0]));

	if (s == NULL)
		return -1;
	h1_answers_init(&s->rd);
	if (conf->check_digest && (s->digest = digest_new()) == NULL) {
		free(s);
		return -1;
	}
	c->pstate = s;
	return 0;
}

static int
h1_send(struct load_conn *c, uint64_t seq, uint64_t due_tsc)
{
	const struct load_conf *conf = conn_conf(c);
	struct h1_state *s = c->pstate;
	uint32_t url = (uint32_t)(seq % conf->nb_urls);
	const struct load_url *u = &conf->urls[url];

	/* Whole or not at all: a request never waits half written. */
	if (c->tr->space(c) < u->h1_head_len + u->body_len)
		return -1;
	c->tr->write(c, u->h1_head, u->h1_head_len);
	if (u->body_len > 0)
		c->tr->write(c, u->body, u->body_len);
	s->sent[(s->head + s->count++) % conf->depth] =
		(struct h1_sent){ due_tsc, url };
	return 0;
}

static int
on_head(void *ctx, const struct http_head *h)
{
	struct load_conn *c = ctx;
	const struct load_conf *conf = conn_conf(c);
	struct h1_state *s = c->pstate;
	const struct h1_sent *r;

	if (s->count == 0)
		return H1_ANSWER_STOP;	/* an answer nobody asked for */
	r = &s->sent[s->head];
	s->status = h->status;
	s->content_length = h->content_length;
	if (s->digest != NULL)
		digest_begin(s->digest);
	return strcmp(conf->urls[r->url].method, "HEAD") == 0 ?
		H1_ANSWER_NO_BODY : H1_ANSWER_BODY;
}

static void
on_data(void *ctx, const uint8_t *p, size_t n)
{
	struct load_conn *c = ctx;
	struct h1_state *s = c->pstate;

	c->w->stats.body_bytes += n;
	if (s->digest != NULL)
		digest_update(s->digest, p, n);
}

static void
on_done(void *ctx, uint64_t body_len, bool keep_alive)
{
	struct load_conn *c = ctx;
	struct h1_state *s = c->pstate;
	const struct h1_sent *r = &s->sent[s->head];
	uint8_t sum[32];
	struct load_req_end e = {
		.due_tsc = r->due_tsc,
		.status = s->status,
		.body_len = body_len,
		/* a HEAD's Content-Length is not its body's */
		.content_length = strcmp(conn_conf(c)->urls[r->url].method,
				"HEAD") == 0 ? -1 : s->content_length,
	};

	if (s->digest != NULL && digest_end(s->digest, sum) == 0)
		e.digest = sum;
	s->head = (s->head + 1) % conn_conf(c)->depth;
	s->count--;
	if (!keep_alive)
		c->retire = true;
	conn_answered(c, &e);
}

static const struct h1_answer_cb answer_cb = { on_head, on_data, on_done };

static int
h1_recv(struct load_conn *c, const uint8_t *p, uint32_t n)
{
	struct h1_state *s = c->pstate;

	return h1_answers_feed(&s->rd, p, n, &answer_cb, c);
}

static void
h1_flush(struct load_conn *c)
{
	(void)c;	/* requests are written as they are sent */
}

static int
h1_peer_closed(struct load_conn *c)
{
	struct h1_state *s = c->pstate;

	return h1_answers_closed(&s->rd, &answer_cb, c);
}

static void
h1_fini(struct load_conn *c)
{
	struct h1_state *s = c->pstate;

	if (s == NULL)
		return;
	h1_answers_fini(&s->rd);
	digest_free(s->digest);
	free(s);
}

const struct load_proto load_h1 = {
	.start = h1_start,
	.send = h1_send,
	.recv = h1_recv,
	.flush = h1_flush,
	.peer_closed = h1_peer_closed,
	.fini = h1_fini,
};
