/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP/2 request intake: a stream per request, its header fields gathered
 * into the shape of an HTTP/1.1 head, its body gathered for a handler or
 * kept in segments for a body-stream route's reader (whose reads open the
 * windows), and the request handed to its route.
 */
#include <string.h>

#include <rte_common.h>

#include "h2_conn.h"

static const struct http_route *
route_of(struct h2_conn *h, struct h2_stream *st)
{
	if (!st->routed) {
		st->route = http_conn_route(h->c, &st->req.path);
		st->routed = true;
	}
	return st->route;
}

static bool
route_flag(struct h2_conn *h, struct h2_stream *st, uint32_t flag)
{
	const struct http_route *rt = route_of(h, st);

	return rt != NULL && (rt->flags & flag);
}

/* The request goes to its route, or is refused: once it is whole, or,
 * for a body-stream route, once its head is (more: its body follows,
 * for the route's reader). */
void
h2_handle(struct h2_conn *h, struct h2_stream *st, bool more)
{
	struct http_answer *ans = NULL;
	bool reads = route_flag(h, st, HTTP_ROUTE_BODY_STREAM);
	char allow[48] = "";
	int taken;

	st->handled = true;
	if (st->too_large || st->body_too_large || st->req.path.len == 0) {
		h2_refuse(h, st, st->too_large ? 431 : st->body_too_large ?
				413 : 400, NULL);
		return;
	}
	if (st->req.target.len > h->c->srv->conf.max_target) {
		h2_refuse(h, st, 414, NULL);	/* as HTTP/1.1 would */
		return;
	}
	if (reads) {
		/* Its reader takes the body; its length is the client's
		 * content-length (checked by nghttp2), unknown without. */
		st->req.chunked = more && st->req.content_length < 0;
		st->body_ended = !more;
	} else {
		/* The body (at most EWYK_REQUEST_BODY_MAX: see
		 * on_data_chunk) goes with the request. */
		st->req.body = st->body_len > 0 ? (const char *)st->body : NULL;
		st->req.body_len = st->body_len;
		st->req.content_length = st->body_len > 0 ?
			(int64_t)st->body_len : -1;
	}
	taken = http_conn_dispatch(h->c, route_of(h, st), &st->req, 2,
			(uint32_t)st->id, 0, allow, sizeof(allow), &ans);
	if (taken == HTTP_DISPATCH_TAKEN) {
		st->awaiting = true;
		st->streaming = reads;
	} else if (taken == HTTP_DISPATCH_ANSWERED) {
		h2_submit_answer(h, st, ans, true);
	} else {
		h2_refuse(h, st, taken, allow);
	}
}

bool
h2_stash(struct h2_stream *st, struct http_str *dst, const uint8_t *p, size_t n)
{
	if (n > sizeof(st->hbuf) - st->hused)
		return false;
	memcpy(st->hbuf + st->hused, p, n);
	*dst = (struct http_str){ st->hbuf + st->hused, (uint32_t)n };
	st->hused += (uint32_t)n;
	return true;
}

void
h2_add_header(struct h2_stream *st, const char *name, size_t nl,
		const uint8_t *value, size_t vl)
{
	struct http_head *r = &st->req;
	struct http_header *hd = &r->headers[r->nheaders];

	if (r->nheaders == HTTP_MAX_HEADERS ||
			!h2_stash(st, &hd->name, (const uint8_t *)name, nl) ||
			!h2_stash(st, &hd->value, value, vl)) {
		st->too_large = true;
		return;
	}
	r->nheaders++;
}

struct h2_stream *
h2_stream_new(struct h2_conn *h, int32_t id)
{
	struct h2_stream *st = http_mem_alloc(http_conn_mem(h->c), sizeof(*st));

	if (st == NULL)
		return NULL;
	memset(st, 0, offsetof(struct h2_stream, req));
	memset(&st->req, 0, offsetof(struct http_head, headers));
	st->id = id;
	st->req.content_length = -1;
	st->req.keep_alive = true;
	st->next = h->streams;
	if (st->next != NULL)
		st->next->pprev = &st->next;
	st->pprev = &h->streams;
	h->streams = st;
	h2_stats(h)->h2_streams++;
	h2_stats(h)->h2_streams_open++;
	return st;
}

/* Request bodies read as they come -------------------------------------------- */

/* Keeps DATA for the reader; false when out of memory. */
static bool
body_put(struct h2_conn *h, struct h2_stream *st, const uint8_t *p,
		size_t len)
{
	while (len > 0) {
		struct body_seg *s = st->seg_tail;
		size_t n;

		if (s == NULL || s->off + s->len == H2_SEG_DATA) {
			s = http_mem_alloc(http_conn_mem(h->c), H2_SEG_SIZE);
			if (s == NULL)
				return false;
			*s = (struct body_seg){ NULL, 0, 0 };
			if (st->seg_tail != NULL)
				st->seg_tail->next = s;
			else
				st->seg_head = s;
			st->seg_tail = s;
		}
		n = RTE_MIN(len, H2_SEG_DATA - (s->off + s->len));
		memcpy(s->data + s->off + s->len, p, n);
		s->len += (uint32_t)n;
		st->unread += (uint32_t)n;
		p += n;
		len -= n;
	}
	return true;
}

/* Moves up to cap bytes to the reader; a segment read through goes back
 * to the shard's memory at once. */
static size_t
body_take(struct h2_conn *h, struct h2_stream *st, uint8_t *to, size_t cap)
{
	size_t got = 0;

	while (got < cap && st->seg_head != NULL) {
		struct body_seg *s = st->seg_head;
		size_t n = RTE_MIN(cap - got, (size_t)s->len);

		memcpy(to + got, s->data + s->off, n);
		s->off += (uint32_t)n;
		s->len -= (uint32_t)n;
		got += n;
		if (s->len == 0) {
			st->seg_head = s->next;
			if (st->seg_head == NULL)
				st->seg_tail = NULL;
			http_mem_free(http_conn_mem(h->c), s);
		}
	}
	st->unread -= (uint32_t)got;
	return got;
}

/* What no reader will take: its bytes are counted consumed for the
 * connection, or its window would shrink for every other stream (the
 * stream's own window goes with it). */
static void
body_drop(struct h2_conn *h, struct h2_stream *st)
{
	while (st->seg_head != NULL) {
		struct body_seg *s = st->seg_head;

		st->seg_head = s->next;
		http_mem_free(http_conn_mem(h->c), s);
	}
	st->seg_tail = NULL;
	if (st->unread > 0 && h->ng != NULL)
		nghttp2_session_consume_connection(h->ng, st->unread);
	st->unread = 0;
}

/* A body-stream route's reader has not read its body to the end: it is
 * owed a last body_ready (bytes, the end or the break) before it goes. */
bool
h2_body_unfinished(const struct h2_stream *st)
{
	return st->streaming && !(st->body_ended && st->unread == 0);
}

static struct http_origin
origin_of(const struct h2_conn *h, const struct h2_stream *st)
{
	return (struct http_origin){ h->c->index, h->c->gen,
		(uint32_t)st->id, 0 };
}

/* body_ready is owed to st's reader (h2_tell_readers()). */
void
h2_tell(struct h2_conn *h, struct h2_stream *st)
{
	st->tell_reader = true;
	h->tell_any = true;
}

/* Calls body_ready for the streams owed it, outside nghttp2's callbacks
 * (a reader may read, and an answer be sent, from inside the hook). A
 * stream closed meanwhile was kept for this: it goes once told. */
void
h2_tell_readers(struct h2_conn *h)
{
	struct h2_stream *st, *next;

	if (h->telling || !h->tell_any)
		return;
	h->telling = true;
again:
	h->tell_any = false;
	/* The hook may end streams (its reader's read sends): walk again,
	 * st included. */
	for (st = h->streams; st != NULL; st = st->next) {
		if (!st->tell_reader)
			continue;
		st->tell_reader = false;
		http_conn_body_ready(h->c, origin_of(h, st));
		goto again;
	}
	for (st = h->streams; st != NULL; st = next) {
		next = st->next;
		if (st->gone)
			h2_stream_free(h, st);
	}
	h->telling = false;
}

void
h2_stream_free(struct h2_conn *h, struct h2_stream *st)
{
	if (h->hot == st)
		h->hot = NULL;
	*st->pprev = st->next;
	if (st->next != NULL)
		st->next->pprev = st->pprev;
	if (st->ans != NULL)
		http_conn_release(h->c, st->ans);
	body_drop(h, st);
	h2_stats(h)->h2_streams_open--;
	http_mem_free(http_conn_mem(h->c), st->body);
	http_mem_free(http_conn_mem(h->c), st);
}

int
h2_on_begin_headers(nghttp2_session *ng, const nghttp2_frame *frame, void *user)
{
	struct h2_stream *st;

	if (frame->hd.type != NGHTTP2_HEADERS ||
			frame->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	st = h2_stream_new(user, frame->hd.stream_id);
	if (st == NULL)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	nghttp2_session_set_stream_user_data(ng, st->id, st);
	((struct h2_conn *)user)->hot = st;
	return 0;
}

int
h2_on_header(nghttp2_session *ng, const nghttp2_frame *frame,
		const uint8_t *name, size_t namelen, const uint8_t *value,
		size_t valuelen, uint8_t flags, void *user)
{
	struct h2_stream *st = h2_stream_of(user, frame->hd.stream_id);
	struct http_head *r;

	(void)ng;
	(void)flags;
	if (st == NULL || frame->hd.type != NGHTTP2_HEADERS ||
			frame->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;	/* trailers are not kept */
	r = &st->req;
	if (namelen == 7 && memcmp(name, ":method", 7) == 0) {
		if (!h2_stash(st, &r->method_str, value, valuelen))
			st->too_large = true;
		r->method = http_method_parse(r->method_str);
	} else if (namelen == 5 && memcmp(name, ":path", 5) == 0) {
		const uint8_t *q = memchr(value, '?', valuelen);
		size_t pl = q != NULL ? (size_t)(q - value) : valuelen;

		if (!h2_stash(st, &r->target, value, valuelen)) {
			st->too_large = true;
			return 0;
		}
		r->path = (struct http_str){ r->target.p, (uint32_t)pl };
		r->query = q != NULL ? (struct http_str){ r->target.p + pl + 1,
			(uint32_t)(valuelen - pl - 1) } :
			(struct http_str){ r->target.p + pl, 0 };
	} else if (namelen == 10 && memcmp(name, ":authority", 10) == 0) {
		h2_add_header(st, "host", 4, value, valuelen);
	} else if (namelen > 0 && name[0] != ':') {
		/* nghttp2 has checked it is digits, and will check the DATA
		 * against it: a body-stream route's reader learns it. */
		if (namelen == 14 && memcmp(name, "content-length", 14) == 0)
			http_parse_length((struct http_str){ (const char *)value,
					(uint32_t)valuelen }, &r->content_length);
		h2_add_header(st, (const char *)name, namelen, value, valuelen);
	}
	return 0;
}

int
h2_on_data_chunk(nghttp2_session *ng, uint8_t flags, int32_t id,
		const uint8_t *data, size_t len, void *user)
{
	struct h2_stream *st = h2_stream_of(user, id);

	(void)flags;
	if (st != NULL && st->streaming) {
		/* Held for its reader: the windows open as it reads. */
		if (!body_put(user, st, data, len)) {
			nghttp2_session_consume(ng, id, len);
			nghttp2_submit_rst_stream(ng, NGHTTP2_FLAG_NONE, id,
					NGHTTP2_INTERNAL_ERROR);
		}
		h2_tell(user, st);
		return 0;
	}
	/* Any other stream's bytes are taken now: its window and the
	 * connection's open as the library's automatic updates would. */
	nghttp2_session_consume(ng, id, len);
	if (st == NULL || st->handled || st->body_too_large)
		return 0;	/* refused: dropped */
	if (len > EWYK_REQUEST_BODY_MAX - st->body_len) {
		st->body_too_large = true;	/* answered 413 at its end */
		return 0;
	}
	if (st->body_len + len > st->body_cap) {
		uint32_t want = st->body_cap ? st->body_cap : 4096;
		uint8_t *b;

		while (want < st->body_len + len)
			want *= 2;
		b = http_mem_realloc(http_conn_mem(((struct h2_conn *)user)->c),
				st->body, want);
		if (b == NULL)
			return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
		st->body = b;
		st->body_cap = want;
	}
	memcpy(st->body + st->body_len, data, len);
	st->body_len += (uint32_t)len;
	return 0;
}

/* Rapid reset (CVE-2023-44487): opening streams and cancelling them at
 * once costs the server work and the client nothing. Past a budget of
 * resets per second the session ends with ENHANCE_YOUR_CALM, the code
 * that tells the client why; nghttp2's own limit (INTERNAL_ERROR) stays
 * behind it as a backstop. */
static void
count_reset(struct h2_conn *h)
{
	uint64_t now = http_conn_now(h->c);

	h2_stats(h)->h2_resets_in++;
	if (now - h->resets_since_ms >= 1000) {
		h->resets_since_ms = now;
		h->resets = 0;
	}
	if (++h->resets == H2_RESET_BUDGET + 1) {
		h2_stats(h)->h2_reset_floods++;
		nghttp2_session_terminate_session(h->ng, NGHTTP2_ENHANCE_YOUR_CALM);
	}
}

int
h2_on_frame_recv(nghttp2_session *ng, const nghttp2_frame *frame, void *user)
{
	struct h2_conn *h = user;
	struct h2_stream *st;

	(void)ng;
	if (frame->hd.type == NGHTTP2_RST_STREAM)
		count_reset(h);
	if (frame->hd.type == NGHTTP2_SETTINGS)
		h->hold = false;	/* the preface is in */
	if (frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA)
		return 0;
	st = h2_stream_of(h, frame->hd.stream_id);
	if (st == NULL)
		return 0;
	if (!(frame->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
		/* A body-stream route's request goes at the end of its head:
		 * its body follows, for its reader. */
		if (frame->hd.type == NGHTTP2_HEADERS && !st->handled &&
				route_flag(h, st, HTTP_ROUTE_BODY_STREAM)) {
			h2_stats(h)->by_method[st->req.method]++;
			h2_handle(h, st, true);
		}
		return 0;
	}
	if (st->streaming) {
		st->body_ended = true;
		h2_tell(h, st);
	} else if (!st->handled) {
		h2_stats(h)->by_method[st->req.method]++;
		h2_handle(h, st, false);
	}
	return 0;
}

int
h2_on_stream_close(nghttp2_session *ng, int32_t id, uint32_t error, void *user)
{
	struct h2_conn *h = user;
	struct h2_stream *st = h2_stream_of(h, id);

	(void)error;
	if (st == NULL)
		return 0;
	nghttp2_session_set_stream_user_data(ng, id, NULL);
	if (h->hot == st)
		h->hot = NULL;
	if (h2_body_unfinished(st)) {
		/* A body cut short (RST_STREAM, a content-length the DATA
		 * did not match): its reader hears of it, then reads -1. */
		body_drop(user, st);
		st->gone = true;
		h2_tell(user, st);
		return 0;
	}
	h2_stream_free(user, st);
	return 0;
}

/* A body-stream route's body, as it came: the bytes taken open the
 * stream's and the connection's windows by as much. A stream gone (reset,
 * its length not matched, the connection lost) reads -1. */
long
h2_body_read(struct http_conn *c, struct http_origin o, void *buf,
		size_t cap)
{
	struct h2_conn *h = c->p;
	struct h2_stream *st = h2_stream_of(h, (int32_t)o.stream);
	size_t n;

	if (st == NULL || !st->streaming)
		return -1;
	n = body_take(h, st, buf, cap);
	if (n > 0) {
		nghttp2_session_consume(h->ng, st->id, n);
		if (!h2_flush(h))	/* the WINDOW_UPDATEs */
			http_conn_close(c);
		return (long)n;
	}
	return st->body_ended ? 0 : HTTP_SOURCE_AGAIN;
}
