/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A request body read as it arrives over HTTP/3 (a route that streams its
 * body: the proxy, uploads). What nghttp3 hands over is kept in the
 * stream's chunks until the handler reads it, and only then given back
 * to the client's windows: the client can never send more than the stream
 * window ngtcp2 granted, so what is kept is bounded by it, and a handler
 * that reads slowly slows its client rather than filling memory.
 */
#include <stdlib.h>
#include <string.h>

#include "quic_priv.h"

void
quic_h3_consumed(struct quic_conn *c, int64_t id, uint64_t n)
{
	ngtcp2_conn_extend_max_stream_offset(c->qc, id, n);
	ngtcp2_conn_extend_max_offset(c->qc, n);
}

struct http_origin
quic_h3_origin(const struct h3_stream *st)
{
	return (struct http_origin){ st->c->slot | QUIC_ORIGIN, st->c->gen,
		(uint32_t)st->id, 0 };
}

static void
notify(struct h3_stream *st)
{
	struct quic_endpoint *e = st->c->e;

	if (e->conf.body_ready != NULL)
		e->conf.body_ready(e->conf.ctx, quic_h3_origin(st));
}

/* The unread bytes go; the connection's window gets them back (the
 * stream's no longer matters: it was reset, stopped or is closing). */
static void
drop_unread(struct h3_stream *st)
{
	while (st->in != NULL) {
		struct h3_chunk *k = st->in;

		st->in = k->next;
		free(k);
	}
	st->in_tail = &st->in;
	if (st->in_unread > 0 && st->c->qc != NULL)
		ngtcp2_conn_extend_max_offset(st->c->qc, st->in_unread);
	st->in_unread = 0;
}

void
quic_h3_body_start(struct h3_stream *st)
{
	st->streamed = true;
	st->in = NULL;
	st->in_tail = &st->in;
	st->in_unread = 0;
	/* No Content-Length: its end is the stream's (chunked upstream). */
	st->head.chunked = st->head.content_length < 0;
}

int
quic_h3_body_in(struct h3_stream *st, const uint8_t *data, size_t len)
{
	struct h3_chunk *k;

	if (st->in_stopped || st->in_failed) {
		quic_h3_consumed(st->c, st->id, len);
		return 0;
	}
	while (len > 0) {
		size_t n;

		k = st->in != NULL ? container_of(st->in_tail,
				struct h3_chunk, next) : NULL;
		if (k == NULL || k->len == H3_CHUNK) {
			k = malloc(sizeof(*k));
			if (k == NULL)
				return -1;
			k->next = NULL;
			k->len = k->acked = 0;
			*st->in_tail = k;
			st->in_tail = &k->next;
		}
		n = QUIC_MIN(len, (size_t)(H3_CHUNK - k->len));
		memcpy(k->data + k->len, data, n);
		k->len += (uint32_t)n;
		st->in_unread += n;
		data += n;
		len -= n;
	}
	notify(st);
	return 0;
}

void
quic_h3_body_end(struct h3_stream *st)
{
	st->in_end = true;
	notify(st);
}

void
quic_h3_body_failed(struct h3_stream *st)
{
	if (st->in_failed || st->in_end)
		return;
	st->in_failed = true;
	drop_unread(st);
	notify(st);
}

long
quic_h3_body_read(struct h3_stream *st, void *buf, size_t cap)
{
	uint8_t *out = buf;
	size_t n = 0;

	if (st->in_failed || st->in_stopped)
		return -1;
	while (n < cap && st->in != NULL) {
		struct h3_chunk *k = st->in;
		size_t take = QUIC_MIN(cap - n, (size_t)(k->len - k->acked));

		memcpy(out + n, k->data + k->acked, take);
		k->acked += (uint32_t)take;
		n += take;
		/* The tail chunk stays while it has room for more. */
		if (k->acked < k->len || (k->next == NULL && k->len < H3_CHUNK))
			break;
		st->in = k->next;
		if (st->in == NULL)
			st->in_tail = &st->in;
		free(k);
	}
	if (n > 0) {
		st->in_unread -= n;
		quic_h3_consumed(st->c, st->id, n);
		quic_conn_flush(st->c);	/* the window's update, now */
		return (long)n;
	}
	return st->in_end ? 0 : HTTP_SOURCE_AGAIN;
}

void
quic_h3_body_stop(struct h3_stream *st)
{
	if (!st->streamed || st->in_end || st->in_failed || st->in_stopped)
		return;
	st->in_stopped = true;
	drop_unread(st);
	ngtcp2_conn_shutdown_stream_read(st->c->qc, st->id,
			NGHTTP3_H3_NO_ERROR);
	quic_conn_flush(st->c);
}

void
quic_h3_body_free(struct h3_stream *st)
{
	if (!st->streamed)
		return;
	/* A reader still waiting hears that the stream is gone. */
	quic_h3_body_failed(st);
	drop_unread(st);
	st->streamed = false;
}
