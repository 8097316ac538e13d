/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <nghttp2/nghttp2.h>

#include <rte_common.h>

#include "h2_proto.h"
#include "http1_parse.h"
#include "http_conn.h"

#define H2_MAX_STREAMS 100
#define H2_INITIAL_WINDOW (256 * 1024)
/* The connection's receive window: what its streams' unread bodies may
 * hold at once. Four streams' windows: a reader that stops holds its
 * stream's 256 KiB, and nghttp2 opens the window again once half of it
 * was taken, so the other uploads go on past one or two stopped readers
 * (a third stops the connection's uploads, not its answers). */
#define H2_CONN_WINDOW (4 * H2_INITIAL_WINDOW)
#define H2_HEADER_LIST_MAX HTTP_REQ_HEAD_MAX
#define H2_RESET_BUDGET 200	/* RST_STREAMs a client may send per second */
#define H2_RESET_BURST 1000	/* the library's backstop: a token bucket */
#define H2_RESET_RATE 33
#define H2_CONTINUATIONS_MAX 8
#define H2_ECHO_MAX (1u << 20)	/* bodies of echo routes are gathered whole */
#define H2_CONN_BODY_MAX (1u << 20)	/* gathered at once per connection */
#define H2_SOURCE_MIN 1024	/* a source is read for this much at least */
#define H2_SEG_SIZE 16384	/* one http_mem class: a DATA frame's worth */

/* Part of a request body waiting for its reader: data[off, +len). */
struct body_seg {
	struct body_seg *next;
	uint32_t off;
	uint32_t len;
	uint8_t data[];
};

#define H2_SEG_DATA (H2_SEG_SIZE - offsetof(struct body_seg, data))

/* One request stream: its request gathered into the shape of an HTTP/1.1
 * one (names lower case), then what goes back. */
struct h2_stream {
	struct h2_stream *next;		/* the session's streams */
	struct h2_stream **pprev;
	int32_t id;
	bool too_large;		/* headers past the limits: 431 */
	bool body_too_large;	/* 413 */
	bool awaiting;		/* a handler has the request */
	bool from_source;	/* the body is read from ans->src */
	uint16_t held_off;	/* source bytes read, not yet sent: */
	uint16_t held_len;	/* held[held_off, +held_len) */
	bool body_refused;	/* the shard's budget for bodies is spent */
	bool handled;		/* the request went to its route */
	bool routed;		/* route is set */
	const struct http_route *route;
	uint8_t *body;
	uint32_t body_len;
	uint32_t body_cap;
	/* A body-stream route's body, read as it comes (http_server_body_read):
	 * what came and is not read yet, at most what the windows let the
	 * client send ahead of the reader. */
	bool streaming;		/* its reader takes the body */
	bool body_ended;	/* END_STREAM came */
	bool tell_reader;	/* body_ready is owed: bytes, the end, a break */
	bool gone;		/* closed: freed once its reader is told */
	struct body_seg *seg_head;
	struct body_seg *seg_tail;
	uint32_t unread;	/* bytes in the segments */
	struct http_answer *ans;	/* a handler's answer being sent */
	const uint8_t *out;		/* bytes still to send */
	uint64_t out_left;
	uint32_t hused;
	bool release_on_headers;	/* ans goes back once HEADERS is out */
	char status_txt[4];		/* :status and content-length, which */
	char length_txt[24];		/* nghttp2 reads until HEADERS is out */
	/* Not zeroed when a stream begins, from here on: */
	struct http_head req;
	uint8_t held[H2_SOURCE_MIN];	/* a read the window did not take */
	char hbuf[H2_HEADER_LIST_MAX];
};

struct h2_conn {
	nghttp2_session *ng;
	struct http_conn *c;
	struct h2_stream *streams;
	struct h2_stream *hot;	/* the stream last looked up (stream_of()) */
	uint32_t gathered;	/* request body bytes held by its streams */
	bool in_ng;		/* inside nghttp2's recv or send */
	bool telling;		/* telling readers (tell_readers()) */
	bool tell_any;		/* a stream's tell_reader is set */
	bool hold;		/* upgraded: nothing is sent before the client's
				 * preface, a client keeps only so much behind
				 * a 101 it has not yet acted on */
	int32_t goaway_last;	/* last stream of the GOAWAY sent; -1: none */
	uint64_t resets_since_ms;	/* start of the current one-second window */
	uint32_t resets;		/* RST_STREAM frames received in it */
};

static const uint8_t zeros[256];

static bool h2_flush(struct h2_conn *h);
static void h2_free(struct h2_conn *h);

static struct http_stats *
stats(const struct h2_conn *h)
{
	return http_conn_stats(h->c);
}

/* A stream's state by its id, or NULL. A request's HEADERS, its answer and
 * its frames' callbacks ask for the same stream over and over: the last
 * one found is kept, which spares nghttp2's map most of its look-ups. It
 * is forgotten when its stream leaves the session (on_stream_close()). */
static struct h2_stream *
stream_of(struct h2_conn *h, int32_t id)
{
	struct h2_stream *st = h->hot;

	if (st != NULL && st->id == id)
		return st;
	st = nghttp2_session_get_stream_user_data(h->ng, id);
	if (st != NULL)
		h->hot = st;
	return st;
}

/* Responses ---------------------------------------------------------------- */

/* An answer's header fields. When every name and value outlives the
 * HEADERS frame (a kept answer, the stream's own buffers, literals),
 * nghttp2 is told not to copy them (NO_COPY): one allocation and one copy
 * less per answer. */
struct nvs {
	nghttp2_nv v[HTTP_ANSWER_HEADERS + 8];
	size_t n;
	uint8_t flags;
};

static void
nv_add(struct nvs *x, const char *name, size_t nl, const char *value,
		size_t vl)
{
	if (x->n == sizeof(x->v) / sizeof(x->v[0]))
		return;
	x->v[x->n++] = (nghttp2_nv){ (uint8_t *)(uintptr_t)name,
		(uint8_t *)(uintptr_t)value, nl, vl, x->flags };
}

/* Bytes go out without a copy into nghttp2's buffer: send_data() writes
 * them straight into the connection's mbufs. A source is read into
 * nghttp2's frame buffer instead, since its bytes do not exist yet. */
static ssize_t
read_body(nghttp2_session *ng, int32_t id, uint8_t *buf, size_t length,
		uint32_t *flags, nghttp2_data_source *src, void *user)
{
	struct h2_stream *st = src->ptr;
	size_t n;

	(void)ng;
	(void)id;
	if (st->from_source) {
		const struct ewyk_source *sc = &st->ans->src;
		bool known = sc->length >= 0;
		size_t cap = length;
		uint8_t *to = buf;
		ssize_t r;

		if (known && st->out_left < cap)
			cap = (size_t)st->out_left;
		/* A window nearly shut gives a tiny cap, but a source is read
		 * for H2_SOURCE_MIN at least (its promise to handlers): the
		 * part the window does not take waits in held. */
		if (st->held_len == 0 && cap < H2_SOURCE_MIN &&
				(!known || st->out_left > cap)) {
			cap = known ? RTE_MIN((uint64_t)H2_SOURCE_MIN,
					st->out_left) : H2_SOURCE_MIN;
			to = st->held;
		}
		if (st->held_len == 0) {
			r = cap > 0 ? sc->read(sc->arg, to, cap) : 0;
			if (r == HTTP_SOURCE_AGAIN)
				return NGHTTP2_ERR_DEFERRED;	/* resume() */
			/* A failed source, or one that ends short of its
			 * length, resets the stream (INTERNAL_ERROR). */
			if (r < 0 || (size_t)r > cap ||
					(r == 0 && known && st->out_left > 0))
				return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
			if (known)
				st->out_left -= (uint64_t)r;
			if (r == 0) {
				*flags |= NGHTTP2_DATA_FLAG_EOF;
				return 0;
			}
			if (to == buf) {
				n = (size_t)r;
				goto sent;
			}
			st->held_off = 0;
			st->held_len = (uint16_t)r;
		}
		n = RTE_MIN(length, (size_t)st->held_len);
		memcpy(buf, st->held + st->held_off, n);
		st->held_off = (uint16_t)(st->held_off + n);
		st->held_len = (uint16_t)(st->held_len - n);
sent:
		if (known && st->out_left == 0 && st->held_len == 0)
			*flags |= NGHTTP2_DATA_FLAG_EOF;
		stats(user)->body_bytes_out += n;
		return (ssize_t)n;
	}
	n = length < st->out_left ? length : (size_t)st->out_left;
	*flags |= NGHTTP2_DATA_FLAG_NO_COPY;
	if (n == st->out_left)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

static int
send_data(nghttp2_session *ng, nghttp2_frame *frame, const uint8_t *framehd,
		size_t length, nghttp2_data_source *src, void *user)
{
	struct h2_conn *h = user;
	struct h2_stream *st = src->ptr;
	size_t pad = frame->data.padlen;
	uint8_t padlen = (uint8_t)(pad > 0 ? pad - 1 : 0);

	(void)ng;
	/* A whole frame or nothing: a cut frame could not be finished. */
	if (http_conn_space(h->c) < 9 + length + pad)
		return NGHTTP2_ERR_WOULDBLOCK;
	/* Short only when mbufs ran out: the framing is lost, end it. */
	if (http_conn_write(h->c, framehd, 9) != 9 ||
			(pad > 0 && http_conn_write(h->c, &padlen, 1) != 1) ||
			http_conn_write(h->c, st->out, (uint32_t)length) != length ||
			(pad > 1 && http_conn_write(h->c, zeros, padlen) != padlen))
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	st->out += length;
	st->out_left -= length;
	stats(h)->body_bytes_out += length;
	return 0;
}

static ssize_t
send_bytes(nghttp2_session *ng, const uint8_t *data, size_t len, int flags,
		void *user)
{
	struct h2_conn *h = user;
	uint32_t w;

	(void)ng;
	(void)flags;
	w = http_conn_write(h->c, data,
			len > UINT32_MAX ? UINT32_MAX : (uint32_t)len);
	return w == 0 ? NGHTTP2_ERR_WOULDBLOCK : (ssize_t)w;
}

/* Submits the answer of a stream whose body (if any) is set in st. */
static void
submit(struct h2_conn *h, struct h2_stream *st, int status,
		struct nvs *x, int64_t length, bool head_only)
{
	static const char server[] = "ewyk/" EWYK_VERSION;
	nghttp2_data_provider dp = { .source.ptr = st, .read_callback = read_body };
	char *code = st->status_txt;
	size_t n = x->n;

	code[0] = (char)('0' + status / 100 % 10);
	code[1] = (char)('0' + status / 10 % 10);
	code[2] = (char)('0' + status % 10);
	code[3] = '\0';
	memmove(&x->v[2], &x->v[0], n * sizeof(x->v[0]));
	x->n = 0;
	nv_add(x, ":status", 7, code, 3);
	nv_add(x, "server", 6, server, sizeof(server) - 1);
	x->n = n + 2;
	if (length >= 0) {
		nv_add(x, "content-length", 14, st->length_txt,
				http_fmt_u64(st->length_txt, (uint64_t)length));
	}
	http_conn_count_answer(h->c, status, 2);
	if (head_only || (st->out_left == 0 && !st->from_source))
		nghttp2_submit_response(h->ng, st->id, x->v, x->n, NULL);
	else
		nghttp2_submit_response(h->ng, st->id, x->v, x->n, &dp);
}

/* Lower-cases ASCII letters in place, a word at a time: for each byte
 * below 0x80, bit 7 of (b & 0x7f) + 0x3f says b >= 'A', of + 0x25 that
 * b > 'Z' (no carry crosses a byte), and an upper-case byte gets 0x20. */
static void
lower_case(char *p, size_t n)
{
	const uint64_t ones = 0x0101010101010101ull, high = ones * 0x80;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t w, low;

		memcpy(&w, p + i, 8);
		low = w & ~high;
		w |= ((low + ones * 0x3f) & ~(low + ones * 0x25) & ~w & high) >> 2;
		memcpy(p + i, &w, 8);
	}
	for (; i < n; i++)
		if (p[i] >= 'A' && p[i] <= 'Z')
			p[i] = (char)(p[i] - 'A' + 'a');
}

/*
 * Submits an answer: a handler's (kept until the stream closes, then
 * released) or an error made here (whose body is static: nothing to keep).
 * Header names go lower case (RFC 9113 8.2.1).
 */
static void
submit_answer(struct h2_conn *h, struct h2_stream *st, struct http_answer *a,
		bool keep)
{
	bool no_body = a->status == 204 || a->status == 304;
	/* A kept answer stays until its HEADERS frame is out (see
	 * on_frame_send); an error made here lives on the caller's stack. */
	struct nvs x = { .n = 0, .flags = keep ? NGHTTP2_NV_FLAG_NO_COPY_NAME |
		NGHTTP2_NV_FLAG_NO_COPY_VALUE : NGHTTP2_NV_FLAG_NONE };
	int64_t length;
	uint32_t i;

	for (i = 0; i < a->nheaders; i++) {
		char *name = a->hbuf + a->h[i].name;

		lower_case(name, a->h[i].name_len);
		nv_add(&x, name, a->h[i].name_len, a->hbuf + a->h[i].value,
				a->h[i].value_len);
	}
	if (a->kind == HTTP_BODY_STREAM) {
		st->from_source = true;
		length = a->src.length;
		st->out_left = length >= 0 ? (uint64_t)length : 0;
	} else if (a->kind == HTTP_BODY_ECHO) {
		st->out = st->body;
		st->out_left = st->body_len;
		length = (int64_t)st->body_len;
	} else {
		st->out = a->body;
		st->out_left = a->len;
		length = (int64_t)a->len;
	}
	if (no_body) {
		length = -1;
		st->out_left = 0;
		st->from_source = false;
	}
	submit(h, st, a->status, &x, length, no_body ||
			st->req.method == HTTP_HEAD);
	/* An answer whose body lives elsewhere goes back as soon as nghttp2
	 * has encoded its header fields, not when the stream closes. */
	if (keep) {
		st->ans = a;
		st->release_on_headers = http_answer_detachable(a);
	}
}

static void
refuse(struct h2_conn *h, struct h2_stream *st, int status, const char *allow)
{
	struct http_answer a;

	http_answer_error(&a, status, allow);
	submit_answer(h, st, &a, false);
}

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
static void
handle(struct h2_conn *h, struct h2_stream *st, bool more)
{
	struct http_answer *ans = NULL;
	bool echo = route_flag(h, st, HTTP_ROUTE_ECHO);
	bool reads = route_flag(h, st, HTTP_ROUTE_BODY_STREAM);
	char allow[48] = "";
	int taken;

	st->handled = true;
	if (st->too_large || st->body_too_large || st->body_refused ||
			st->req.path.len == 0) {
		refuse(h, st, st->too_large ? 431 : st->body_too_large ?
				413 : st->body_refused ? 503 : 400, NULL);
		return;
	}
	if (st->req.target.len > h->c->srv->conf.max_target) {
		refuse(h, st, 414, NULL);	/* as HTTP/1.1 would */
		return;
	}
	if (reads) {
		/* Its reader takes the body; its length is the client's
		 * content-length (checked by nghttp2), unknown without. */
		st->req.chunked = more && st->req.content_length < 0;
		st->body_ended = !more;
	} else {
		/* An echo route's body stays here, for its answer; any
		 * other's (at most EWYK_REQUEST_BODY_MAX: see on_data_chunk)
		 * goes with the request. */
		st->req.body = st->body_len > 0 && !echo ?
			(const char *)st->body : NULL;
		st->req.body_len = echo ? 0 : st->body_len;
		st->req.content_length = st->body_len > 0 ?
			(int64_t)st->body_len : -1;
	}
	taken = http_conn_dispatch(h->c, route_of(h, st), &st->req, 2,
			(uint32_t)st->id, 0, allow, sizeof(allow), &ans);
	if (taken == HTTP_DISPATCH_TAKEN) {
		st->awaiting = true;
		st->streaming = reads;
	} else if (taken == HTTP_DISPATCH_ANSWERED) {
		submit_answer(h, st, ans, true);
	} else {
		refuse(h, st, taken, allow);
	}
}

static bool
h2_answer(struct http_conn *c, struct http_origin o, struct http_answer *a)
{
	struct h2_conn *h = c->p;
	struct h2_stream *st = stream_of(h, (int32_t)o.stream);

	if (st == NULL || !st->awaiting)
		return false;	/* reset meanwhile: the caller releases */
	st->awaiting = false;
	submit_answer(h, st, a, true);
	if (!h2_flush(h))
		http_conn_close(c);
	return true;
}

static bool
h2_awaits(struct http_conn *c, struct http_origin o)
{
	struct h2_conn *h = c->p;
	struct h2_stream *st = stream_of(h, (int32_t)o.stream);

	return st != NULL && st->awaiting;
}

/* Requests ------------------------------------------------------------------ */

static bool
stash(struct h2_stream *st, struct http_str *dst, const uint8_t *p, size_t n)
{
	if (n > sizeof(st->hbuf) - st->hused)
		return false;
	memcpy(st->hbuf + st->hused, p, n);
	*dst = (struct http_str){ st->hbuf + st->hused, (uint32_t)n };
	st->hused += (uint32_t)n;
	return true;
}

static void
add_header(struct h2_stream *st, const char *name, size_t nl,
		const uint8_t *value, size_t vl)
{
	struct http_head *r = &st->req;
	struct http_header *hd = &r->headers[r->nheaders];

	if (r->nheaders == HTTP_MAX_HEADERS ||
			!stash(st, &hd->name, (const uint8_t *)name, nl) ||
			!stash(st, &hd->value, value, vl)) {
		st->too_large = true;
		return;
	}
	r->nheaders++;
}

static struct h2_stream *
stream_new(struct h2_conn *h, int32_t id)
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
	stats(h)->h2_streams++;
	stats(h)->h2_streams_open++;
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

static void stream_free(struct h2_conn *h, struct h2_stream *st);

/* A body-stream route's reader has not read its body to the end: it is
 * owed a last body_ready (bytes, the end or the break) before it goes. */
static bool
body_unfinished(const struct h2_stream *st)
{
	return st->streaming && !(st->body_ended && st->unread == 0);
}

static struct http_origin
origin_of(const struct h2_conn *h, const struct h2_stream *st)
{
	return (struct http_origin){ h->c->index, h->c->gen,
		(uint32_t)st->id, 0 };
}

/* body_ready is owed to st's reader (tell_readers()). */
static void
tell(struct h2_conn *h, struct h2_stream *st)
{
	st->tell_reader = true;
	h->tell_any = true;
}

/* Calls body_ready for the streams owed it, outside nghttp2's callbacks
 * (a reader may read, and an answer be sent, from inside the hook). A
 * stream closed meanwhile was kept for this: it goes once told. */
static void
tell_readers(struct h2_conn *h)
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
			stream_free(h, st);
	}
	h->telling = false;
}

static void
stream_free(struct h2_conn *h, struct h2_stream *st)
{
	if (h->hot == st)
		h->hot = NULL;
	*st->pprev = st->next;
	if (st->next != NULL)
		st->next->pprev = st->pprev;
	if (st->ans != NULL)
		http_conn_release(h->c, st->ans);
	body_drop(h, st);
	h->gathered -= st->body_len;
	stats(h)->h2_streams_open--;
	http_mem_free(http_conn_mem(h->c), st->body);
	http_mem_free(http_conn_mem(h->c), st);
}

static int
on_begin_headers(nghttp2_session *ng, const nghttp2_frame *frame, void *user)
{
	struct h2_stream *st;

	if (frame->hd.type != NGHTTP2_HEADERS ||
			frame->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	st = stream_new(user, frame->hd.stream_id);
	if (st == NULL)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	nghttp2_session_set_stream_user_data(ng, st->id, st);
	((struct h2_conn *)user)->hot = st;
	return 0;
}

static int
on_header(nghttp2_session *ng, const nghttp2_frame *frame,
		const uint8_t *name, size_t namelen, const uint8_t *value,
		size_t valuelen, uint8_t flags, void *user)
{
	struct h2_stream *st = stream_of(user, frame->hd.stream_id);
	struct http_head *r;

	(void)ng;
	(void)flags;
	if (st == NULL || frame->hd.type != NGHTTP2_HEADERS ||
			frame->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;	/* trailers are not kept */
	r = &st->req;
	if (namelen == 7 && memcmp(name, ":method", 7) == 0) {
		if (!stash(st, &r->method_str, value, valuelen))
			st->too_large = true;
		r->method = http_method_parse(r->method_str);
	} else if (namelen == 5 && memcmp(name, ":path", 5) == 0) {
		const uint8_t *q = memchr(value, '?', valuelen);
		size_t pl = q != NULL ? (size_t)(q - value) : valuelen;

		if (!stash(st, &r->target, value, valuelen)) {
			st->too_large = true;
			return 0;
		}
		r->path = (struct http_str){ r->target.p, (uint32_t)pl };
		r->query = q != NULL ? (struct http_str){ r->target.p + pl + 1,
			(uint32_t)(valuelen - pl - 1) } :
			(struct http_str){ r->target.p + pl, 0 };
	} else if (namelen == 10 && memcmp(name, ":authority", 10) == 0) {
		add_header(st, "host", 4, value, valuelen);
	} else if (namelen > 0 && name[0] != ':') {
		/* nghttp2 has checked it is digits, and will check the DATA
		 * against it: a body-stream route's reader learns it. */
		if (namelen == 14 && memcmp(name, "content-length", 14) == 0)
			http_parse_length((struct http_str){ (const char *)value,
					(uint32_t)valuelen }, &r->content_length);
		add_header(st, (const char *)name, namelen, value, valuelen);
	}
	return 0;
}

static int
on_data_chunk(nghttp2_session *ng, uint8_t flags, int32_t id,
		const uint8_t *data, size_t len, void *user)
{
	struct h2_stream *st = stream_of(user, id);
	uint32_t cap;

	(void)flags;
	if (st != NULL && st->streaming) {
		/* Held for its reader: the windows open as it reads. */
		if (!body_put(user, st, data, len)) {
			nghttp2_session_consume(ng, id, len);
			nghttp2_submit_rst_stream(ng, NGHTTP2_FLAG_NONE, id,
					NGHTTP2_INTERNAL_ERROR);
		}
		tell(user, st);
		return 0;
	}
	/* Any other stream's bytes are taken now: its window and the
	 * connection's open as the library's automatic updates would. */
	nghttp2_session_consume(ng, id, len);
	if (st == NULL || st->handled || st->body_too_large ||
			st->body_refused)
		return 0;	/* refused: dropped */
	cap = route_flag(user, st, HTTP_ROUTE_ECHO) ? H2_ECHO_MAX :
		EWYK_REQUEST_BODY_MAX;
	if (len > cap - st->body_len) {
		st->body_too_large = true;	/* answered 413 at its end */
		return 0;
	}
	/* Bounded: 100 streams of 1 MiB each are not kept at once. */
	if (len > H2_CONN_BODY_MAX - ((struct h2_conn *)user)->gathered) {
		st->body_refused = true;	/* answered 503 at its end */
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
	((struct h2_conn *)user)->gathered += (uint32_t)len;
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

	stats(h)->h2_resets_in++;
	if (now - h->resets_since_ms >= 1000) {
		h->resets_since_ms = now;
		h->resets = 0;
	}
	if (++h->resets == H2_RESET_BUDGET + 1) {
		stats(h)->h2_reset_floods++;
		nghttp2_session_terminate_session(h->ng, NGHTTP2_ENHANCE_YOUR_CALM);
	}
}

static int
on_frame_recv(nghttp2_session *ng, const nghttp2_frame *frame, void *user)
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
	st = stream_of(h, frame->hd.stream_id);
	if (st == NULL)
		return 0;
	if (!(frame->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
		/* A body-stream route's request goes at the end of its head:
		 * its body follows, for its reader. */
		if (frame->hd.type == NGHTTP2_HEADERS && !st->handled &&
				route_flag(h, st, HTTP_ROUTE_BODY_STREAM)) {
			stats(h)->by_method[st->req.method]++;
			handle(h, st, true);
		}
		return 0;
	}
	if (st->streaming) {
		st->body_ended = true;
		tell(h, st);
	} else if (!st->handled) {
		stats(h)->by_method[st->req.method]++;
		handle(h, st, false);
	}
	return 0;
}

/* After a GOAWAY (the drain's, say), one nghttp2 sends for a connection
 * error names the stream it failed on, which may be past the first's last:
 * the last stream must never grow (RFC 9113 6.8), so that one is not sent
 * and the session ends without it. */
static int
before_frame_send(nghttp2_session *ng, const nghttp2_frame *frame, void *user)
{
	const struct h2_conn *h = user;

	(void)ng;
	return frame->hd.type == NGHTTP2_GOAWAY && h->goaway_last >= 0 &&
		frame->goaway.last_stream_id > h->goaway_last ?
		NGHTTP2_ERR_CANCEL : 0;
}

static int
on_frame_send(nghttp2_session *ng, const nghttp2_frame *frame, void *user)
{
	struct http_stats *hs = stats(user);
	uint32_t code;

	/* The answer is out before the request's body ended (its reader
	 * stopped, or it was refused): the client is asked to stop sending
	 * it (RFC 9113 8.1), and what still comes is dropped. */
	if ((frame->hd.type == NGHTTP2_HEADERS || frame->hd.type ==
			NGHTTP2_DATA) && (frame->hd.flags &
			NGHTTP2_FLAG_END_STREAM) &&
			!nghttp2_session_get_stream_remote_close(ng,
			frame->hd.stream_id))
		nghttp2_submit_rst_stream(ng, NGHTTP2_FLAG_NONE,
				frame->hd.stream_id, NGHTTP2_NO_ERROR);
	if (frame->hd.type == NGHTTP2_HEADERS) {
		struct h2_stream *st = stream_of(user, frame->hd.stream_id);

		if (st != NULL && st->release_on_headers) {
			st->release_on_headers = false;
			http_conn_release(((struct h2_conn *)user)->c, st->ans);
			st->ans = NULL;
		}
	} else if (frame->hd.type == NGHTTP2_RST_STREAM) {
		code = frame->rst_stream.error_code;
		hs->h2_resets_out[code < H2_ERROR_CODES ? code : 0]++;
	} else if (frame->hd.type == NGHTTP2_GOAWAY) {
		code = frame->goaway.error_code;
		((struct h2_conn *)user)->goaway_last = frame->goaway.last_stream_id;
		hs->h2_goaways_out[code < H2_ERROR_CODES ? code : 0]++;
	}
	return 0;
}

static int
on_stream_close(nghttp2_session *ng, int32_t id, uint32_t error, void *user)
{
	struct h2_conn *h = user;
	struct h2_stream *st = stream_of(h, id);

	(void)error;
	if (st == NULL)
		return 0;
	nghttp2_session_set_stream_user_data(ng, id, NULL);
	if (h->hot == st)
		h->hot = NULL;
	if (body_unfinished(st)) {
		/* A body cut short (RST_STREAM, a content-length the DATA
		 * did not match): its reader hears of it, then reads -1. */
		body_drop(user, st);
		st->gone = true;
		tell(user, st);
		return 0;
	}
	stream_free(user, st);
	return 0;
}

/* Sessions ------------------------------------------------------------------ */

/* nghttp2's allocations come from the shard's memory. */
static void *
mem_malloc(size_t size, void *m)
{
	return http_mem_alloc(m, size);
}

static void
mem_free(void *p, void *m)
{
	http_mem_free(m, p);
}

static void *
mem_calloc(size_t n, size_t size, void *m)
{
	return http_mem_calloc(m, n, size);
}

static void *
mem_realloc(void *p, size_t size, void *m)
{
	return http_mem_realloc(m, p, size);
}

/* Callbacks and options are the same for every session: made once, read
 * by every session's creation (nghttp2 copies them). */
static nghttp2_session_callbacks *callbacks;
static nghttp2_option *options;
static pthread_once_t setup_once = PTHREAD_ONCE_INIT;

static void
setup(void)
{
	nghttp2_session_callbacks *cb;
	nghttp2_option *opt;

	if (nghttp2_session_callbacks_new(&cb) != 0)
		return;
	if (nghttp2_option_new(&opt) != 0) {
		nghttp2_session_callbacks_del(cb);
		return;
	}
	nghttp2_session_callbacks_set_send_callback(cb, send_bytes);
	nghttp2_session_callbacks_set_send_data_callback(cb, send_data);
	nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data_chunk);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
	nghttp2_session_callbacks_set_before_frame_send_callback(cb,
			before_frame_send);
	nghttp2_session_callbacks_set_on_frame_send_callback(cb, on_frame_send);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
	/* The library's own defences: rapid reset (CVE-2023-44487, behind
	 * count_reset()) and CONTINUATION floods (CVE-2024-27316) end the
	 * session; the rest bound what a peer can make us queue or decode. */
	nghttp2_option_set_stream_reset_rate_limit(opt, H2_RESET_BURST,
			H2_RESET_RATE);
	nghttp2_option_set_max_continuations(opt, H2_CONTINUATIONS_MAX);
	nghttp2_option_set_max_outbound_ack(opt, 1000);
	nghttp2_option_set_max_settings(opt, 32);
	nghttp2_option_set_max_deflate_dynamic_table_size(opt, 4096);
	/* Windows open as bytes are taken: at once for most streams, as
	 * its reader takes them for a body-stream route's (on_data_chunk). */
	nghttp2_option_set_no_auto_window_update(opt, 1);
	callbacks = cb;
	options = opt;
}

void *
h2_open(struct http_conn *c)
{
	static const nghttp2_settings_entry settings[] = {
		{ NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, H2_MAX_STREAMS },
		{ NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, H2_INITIAL_WINDOW },
		{ NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, H2_HEADER_LIST_MAX },
		/* RFC 9218: ewyk answers in the order it can and keeps no
		 * RFC 7540 priority tree, nor closed streams to shape it. */
		{ NGHTTP2_SETTINGS_NO_RFC7540_PRIORITIES, 1 },
	};
	struct http_mem *m = http_conn_mem(c);
	nghttp2_mem mem = { m, mem_malloc, mem_free, mem_calloc, mem_realloc };
	struct h2_conn *h;

	pthread_once(&setup_once, setup);
	if (callbacks == NULL)
		return NULL;
	h = http_mem_calloc(m, 1, sizeof(*h));
	if (h == NULL)
		return NULL;
	h->c = c;
	h->goaway_last = -1;
	if (nghttp2_session_server_new3(&h->ng, callbacks, h, options,
			&mem) != 0) {
		http_mem_free(m, h);
		return NULL;
	}
	nghttp2_submit_settings(h->ng, NGHTTP2_FLAG_NONE, settings,
			sizeof(settings) / sizeof(settings[0]));
	/* Past the protocol's 65535 bytes: one WINDOW_UPDATE after SETTINGS. */
	nghttp2_session_set_local_window_size(h->ng, NGHTTP2_FLAG_NONE, 0,
			H2_CONN_WINDOW);
	return h;
}

/* base64url without padding (RFC 4648 5), as HTTP2-Settings uses it. */
static long
b64url_decode(const char *in, size_t n, uint8_t *out, size_t cap)
{
	uint32_t acc = 0;
	size_t o = 0, i;
	int bits = 0;

	for (i = 0; i < n; i++) {
		char ch = in[i];
		int v;

		if (ch >= 'A' && ch <= 'Z')
			v = ch - 'A';
		else if (ch >= 'a' && ch <= 'z')
			v = ch - 'a' + 26;
		else if (ch >= '0' && ch <= '9')
			v = ch - '0' + 52;
		else if (ch == '-')
			v = 62;
		else if (ch == '_')
			v = 63;
		else if (ch == '=')
			break;
		else
			return -1;
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (o == cap)
				return -1;
			out[o++] = (uint8_t)(acc >> bits);
		}
	}
	return (long)o;
}

void *
h2_open_upgrade(struct http_conn *c, const char *settings_b64,
		size_t settings_len, const struct http_head *r)
{
	uint8_t settings[256];
	long n = b64url_decode(settings_b64, settings_len, settings,
			sizeof(settings));
	struct h2_stream *st;
	struct h2_conn *h;
	uint32_t i;

	if (n < 0 || n % 6 != 0)
		return NULL;
	h = h2_open(c);
	if (h == NULL)
		return NULL;
	st = stream_new(h, 1);
	if (st == NULL || nghttp2_session_upgrade2(h->ng, settings, (size_t)n,
			r->method == HTTP_HEAD, st) != 0) {
		h2_free(h);
		return NULL;
	}
	/* The upgraded request is stream 1's (RFC 7540 3.2). A server's
	 * session ignores upgrade2's user data: set it. */
	nghttp2_session_set_stream_user_data(h->ng, 1, st);
	h->hold = true;
	st->req.method = r->method;
	if (!stash(st, &st->req.method_str, (const uint8_t *)r->method_str.p,
			r->method_str.len) || !stash(st, &st->req.path,
			(const uint8_t *)r->path.p, r->path.len) ||
			!stash(st, &st->req.query, (const uint8_t *)r->query.p,
			r->query.len))
		st->too_large = true;
	for (i = 0; i < r->nheaders; i++)
		add_header(st, r->headers[i].name.p, r->headers[i].name.len,
				(const uint8_t *)r->headers[i].value.p,
				r->headers[i].value.len);
	handle(h, st, false);
	return h;
}

static bool
h2_recv(struct h2_conn *h, const uint8_t *data, uint32_t len)
{
	ssize_t n;

	h->in_ng = true;
	n = nghttp2_session_mem_recv(h->ng, data, len);
	h->in_ng = false;

	/* A protocol error: nghttp2 queued a GOAWAY; flush it, then end. */
	if (n < 0 || (size_t)n != len)
		nghttp2_session_terminate_session(h->ng, NGHTTP2_PROTOCOL_ERROR);
	return h2_flush(h);
}

/* Moves frames into the transport while it has room; false when the
 * session has nothing more to do and the connection should close. */
static bool
h2_flush(struct h2_conn *h)
{
	int rv;

	/* Inside nghttp2 (a reader or a source called from its callbacks),
	 * what was queued goes with the send under way, or after the recv. */
	if (h->hold || h->in_ng)
		return true;
	h->in_ng = true;
	rv = nghttp2_session_send(h->ng);
	h->in_ng = false;
	if (rv != 0)
		return false;
	tell_readers(h);
	return nghttp2_session_want_read(h->ng) || nghttp2_session_want_write(h->ng);
}

static void
h2_free(struct h2_conn *h)
{
	if (h == NULL)
		return;
	nghttp2_session_del(h->ng);
	h->ng = NULL;
	/* nghttp2 drops its streams without the close callback. */
	while (h->streams != NULL)
		stream_free(h, h->streams);
	http_mem_free(http_conn_mem(h->c), h);
}

/* Protocol table ------------------------------------------------------------ */

static uint32_t
proto_recv(struct http_conn *c, const uint8_t *data, uint32_t len)
{
	if (!h2_recv(c->p, data, len))
		http_conn_close(c);
	return len;
}

/* Once the peer has closed, the connection closes when what is queued is
 * out: closing amid a frame the transport took only part of would leave
 * the client that part, a frame cut short. (Upgraded and still waiting
 * for the client's preface, it has nothing it may send.) */
static void
proto_writable(struct http_conn *c)
{
	struct h2_conn *h = c->p;

	if (!h2_flush(h) || (c->peer_closed && (h->hold ||
			!nghttp2_session_want_write(h->ng))))
		http_conn_close(c);
}

static void
proto_peer_closed(struct http_conn *c)
{
	proto_writable(c);
}

/* Graceful shutdown: GOAWAY with the last stream taken; streams in flight
 * finish, new ones are refused. */
static void
proto_drain(struct http_conn *c)
{
	struct h2_conn *h = c->p;

	/* Not terminate_session(): that stops every stream in flight. After
	 * a plain GOAWAY, nghttp2 refuses new streams, and once those in
	 * flight end it wants neither to read nor to write: then we close. */
	nghttp2_submit_goaway(h->ng, NGHTTP2_FLAG_NONE,
			nghttp2_session_get_last_proc_stream_id(h->ng),
			NGHTTP2_NO_ERROR, NULL, 0);
	if (!h2_flush(h))
		http_conn_close(c);
}

static void
proto_resume(struct http_conn *c, struct http_origin o)
{
	struct h2_conn *h = c->p;

	if (nghttp2_session_resume_data(h->ng, (int32_t)o.stream) == 0 &&
			!h2_flush(h))
		http_conn_close(c);
}

/* A body-stream route's body, as it came: the bytes taken open the
 * stream's and the connection's windows by as much. A stream gone (reset,
 * its length not matched, the connection lost) reads -1. */
static long
proto_body_read(struct http_conn *c, struct http_origin o, void *buf,
		size_t cap)
{
	struct h2_conn *h = c->p;
	struct h2_stream *st = stream_of(h, (int32_t)o.stream);
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

/* The connection is gone: readers of bodies still coming hear of it,
 * and read -1 (closing: nothing reaches the protocol any more). */
static void
proto_free(struct http_conn *c)
{
	struct h2_conn *h = c->p;
	struct h2_stream *st;

	c->closing = true;
	for (st = h->streams; st != NULL; st = st->next)
		if (body_unfinished(st))
			tell(h, st);
	tell_readers(h);
	h2_free(h);
}

const struct http_proto h2_proto = {
	.name = "h2c",
	.recv = proto_recv,
	.writable = proto_writable,
	.peer_closed = proto_peer_closed,
	.answer = h2_answer,
	.awaits = h2_awaits,
	.resume = proto_resume,
	.body_read = proto_body_read,
	.drain = proto_drain,
	.free = proto_free,
};
