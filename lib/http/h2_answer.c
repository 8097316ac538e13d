/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP/2 answers: a handler's answer (or an error made here) submitted
 * with its header fields, its body through nghttp2's data provider (bytes
 * in memory written straight into the transport, a source read into the
 * frame buffer), and the frames nghttp2 sends.
 */
#include <string.h>

#include <rte_common.h>

#include "h2_conn.h"

static const uint8_t zeros[256];

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

/* Bytes go out without a copy into nghttp2's buffer: h2_send_data() writes
 * them straight into the connection's mbufs. A source is read into
 * nghttp2's frame buffer instead, since its bytes do not exist yet. */
static ssize_t
read_answer_data(nghttp2_session *ng, int32_t id, uint8_t *buf, size_t length,
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
		h2_stats(user)->body_bytes_out += n;
		return (ssize_t)n;
	}
	n = length < st->out_left ? length : (size_t)st->out_left;
	*flags |= NGHTTP2_DATA_FLAG_NO_COPY;
	if (n == st->out_left)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

int
h2_send_data(nghttp2_session *ng, nghttp2_frame *frame, const uint8_t *framehd,
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
	h2_stats(h)->body_bytes_out += length;
	return 0;
}

ssize_t
h2_send_bytes(nghttp2_session *ng, const uint8_t *data, size_t len, int flags,
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
	nghttp2_data_provider dp = { .source.ptr = st, .read_callback = read_answer_data };
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
void
h2_submit_answer(struct h2_conn *h, struct h2_stream *st, struct http_answer *a,
		bool keep)
{
	bool no_body = a->status == 204 || a->status == 304;
	struct nvs x;	/* not cleared: nv_add() fills what is used */
	int64_t length;
	uint32_t i;

	/* A kept answer stays until its HEADERS frame is out (see
	 * on_frame_send); an error made here lives on the caller's stack. */
	x.n = 0;
	x.flags = keep ? NGHTTP2_NV_FLAG_NO_COPY_NAME |
		NGHTTP2_NV_FLAG_NO_COPY_VALUE : NGHTTP2_NV_FLAG_NONE;

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

void
h2_refuse(struct h2_conn *h, struct h2_stream *st, int status, const char *allow)
{
	struct http_answer a;

	http_answer_error(&a, status, allow);
	h2_submit_answer(h, st, &a, false);
}

bool
h2_answer(struct http_conn *c, struct http_origin o, struct http_answer *a)
{
	struct h2_conn *h = c->p;
	struct h2_stream *st = h2_stream_of(h, (int32_t)o.stream);

	if (st == NULL || !st->awaiting)
		return false;	/* reset meanwhile: the caller releases */
	st->awaiting = false;
	h2_submit_answer(h, st, a, true);
	if (!h2_flush(h))
		http_conn_close(c);
	return true;
}

bool
h2_awaits(struct http_conn *c, struct http_origin o)
{
	struct h2_conn *h = c->p;
	struct h2_stream *st = h2_stream_of(h, (int32_t)o.stream);

	return st != NULL && st->awaiting;
}

/* After a GOAWAY (the drain's, say), one nghttp2 sends for a connection
 * error names the stream it failed on, which may be past the first's last:
 * the last stream must never grow (RFC 9113 6.8), so that one is not sent
 * and the session ends without it. */
int
h2_before_frame_send(nghttp2_session *ng, const nghttp2_frame *frame, void *user)
{
	const struct h2_conn *h = user;

	(void)ng;
	return frame->hd.type == NGHTTP2_GOAWAY && h->goaway_last >= 0 &&
		frame->goaway.last_stream_id > h->goaway_last ?
		NGHTTP2_ERR_CANCEL : 0;
}

int
h2_on_frame_send(nghttp2_session *ng, const nghttp2_frame *frame, void *user)
{
	struct http_stats *hs = h2_stats(user);
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
		struct h2_stream *st = h2_stream_of(user, frame->hd.stream_id);

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

void
h2_resume(struct http_conn *c, struct http_origin o)
{
	struct h2_conn *h = c->p;

	if (nghttp2_session_resume_data(h->ng, (int32_t)o.stream) == 0 &&
			!h2_flush(h))
		http_conn_close(c);
}
