/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP/2 answers: a handler's answer (or an error made here) encoded into
 * a HEADERS frame by nghttp2's HPACK deflater, its body sent in DATA
 * frames as the transport and the windows take them (bytes in memory
 * written straight into the transport, a source read as it goes).
 */
#include <stdio.h>
#include <string.h>

#include <rte_common.h>

#include "h2_conn.h"
#include "http_date.h"

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
	if (i + 4 <= n) {	/* the same on four bytes */
		uint32_t w, low;
		const uint32_t ones4 = 0x01010101u, high4 = ones4 * 0x80;

		memcpy(&w, p + i, 4);
		low = w & ~high4;
		w |= ((low + ones4 * 0x3f) & ~(low + ones4 * 0x25) & ~w &
				high4) >> 2;
		memcpy(p + i, &w, 4);
		i += 4;
	}
	for (; i < n; i++)
		if (p[i] >= 'A' && p[i] <= 'Z')
			p[i] = (char)(p[i] - 'A' + 'a');
}

static void
queue_push(struct h2_stream ***tail, struct h2_stream *st)
{
	st->qnext = NULL;
	**tail = st;
	*tail = &st->qnext;
}

static struct h2_stream *
queue_pop(struct h2_stream **head, struct h2_stream ***tail)
{
	struct h2_stream *st = *head;

	*head = st->qnext;
	if (*head == NULL)
		*tail = head;
	st->queue = H2_Q_NONE;
	return st;
}

void
h2_dequeue(struct h2_conn *h, struct h2_stream *st)
{
	struct h2_stream **head, ***tail, **p, *prev = NULL;

	if (st->queue == H2_Q_NONE)
		return;
	head = st->queue == H2_Q_HEADERS ? &h->hq_head : &h->dq_head;
	tail = st->queue == H2_Q_HEADERS ? &h->hq_tail : &h->dq_tail;
	for (p = head; *p != st; p = &(*p)->qnext)
		prev = *p;
	*p = st->qnext;
	if (*tail == &st->qnext)
		*tail = prev != NULL ? &prev->qnext : head;
	st->queue = H2_Q_NONE;
}

static void
data_push(struct h2_conn *h, struct h2_stream *st)
{
	if (st->queue != H2_Q_NONE || st->closed)
		return;
	st->queue = H2_Q_DATA;
	queue_push(&h->dq_tail, st);
}

void
h2_unblock(struct h2_conn *h, struct h2_stream *st)
{
	st->blocked = false;
	if (!st->deferred && !st->local_closed && st->queue == H2_Q_NONE &&
			(st->out_left > 0 || st->from_source || st->held_len > 0))
		data_push(h, st);
}

/* Our END_STREAM went: the stream is closed, or, the client's body still
 * coming, the client is asked to stop sending it (RFC 9113 8.1) and what
 * still comes is dropped. */
static void
local_end(struct h2_conn *h, struct h2_stream *st)
{
	st->local_closed = true;
	if (st->remote_closed)
		h2_stream_close(h, st, H2_CLOSED_ENDED);
	else
		h2_reset(h, st->id, st, H2_NO_ERROR);
}

/* Room in the output buffer for need bytes in one piece, once what it
 * holds went into the transport if need be; NULL when none. */
static uint8_t *
out_room(struct h2_conn *h, uint32_t need)
{
	if (h->out_len + need > H2_OUT_CAP - H2_OUT_RESERVE)
		h2_out_drain(h);
	if (h->out_len + need > H2_OUT_CAP - H2_OUT_RESERVE)
		return NULL;
	if (h->out_off + h->out_len + need > H2_OUT_CAP) {
		memmove(h->out, h->out + h->out_off, h->out_len);
		h->out_off = 0;
	}
	return h->out + h->out_off + h->out_len;
}

/* An HPACK integer of prefix bits after the first byte's flags (RFC 7541
 * 5.1); returns the bytes written. */
static uint32_t
hpack_int(uint8_t *p, uint8_t flags, unsigned int prefix, uint64_t v)
{
	uint32_t max = (1u << prefix) - 1, n = 1;

	if (v < max) {
		p[0] = (uint8_t)(flags | v);
		return 1;
	}
	p[0] = (uint8_t)(flags | max);
	for (v -= max; v >= 128; v >>= 7)
		p[n++] = (uint8_t)(v | 0x80);
	p[n++] = (uint8_t)v;
	return n;
}

/*
 * A field nghttp2's deflater never indexes (a file's ETag, a length, a
 * Location) goes out as a literal without indexing whose name is in the
 * static table (RFC 7541 6.2.2), its value as it is: no Huffman coding,
 * which costs more than the bytes it saves, and nothing the dynamic
 * table knows, so such fields follow the deflater's in any order.
 * Returns its static index, 0 for a field the deflater takes.
 */
static unsigned int
plain_index(const char *name, size_t nl)
{
	switch (nl) {
	case 3:
		return memcmp(name, "age", 3) == 0 ? 21 : 0;
	case 4:
		return memcmp(name, "etag", 4) == 0 ? 34 : 0;
	case 8:
		return memcmp(name, "location", 8) == 0 ? 46 : 0;
	case 10:
		return memcmp(name, "set-cookie", 10) == 0 ? 55 : 0;
	case 14:
		return memcmp(name, "content-length", 14) == 0 ? 28 : 0;
	}
	return 0;
}

static uint32_t
plain_field(uint8_t *p, unsigned int index, const char *value, size_t vl)
{
	uint32_t n = hpack_int(p, 0x00, 4, index);

	n += hpack_int(p + n, 0x00, 7, vl);
	memcpy(p + n, value, vl);
	return n + (uint32_t)vl;
}

/* :status first, as a pseudo-field must be (RFC 9113 8.3): one byte for
 * the codes of HPACK's static table (RFC 7541 A), a literal naming its
 * entry 8 for any other. Kept out of the deflater, whose search for a
 * field costs more than the field. */
static uint32_t
status_field(uint8_t *p, int status)
{
	static const int indexed[] = { 200, 204, 206, 304, 400, 404, 500 };
	char code[3];
	unsigned int i;

	for (i = 0; i < RTE_DIM(indexed); i++)
		if (status == indexed[i]) {
			p[0] = (uint8_t)(0x80 | (8 + i));
			return 1;
		}
	code[0] = (char)('0' + status / 100 % 10);
	code[1] = (char)('0' + status / 10 % 10);
	code[2] = (char)('0' + status % 10);
	return plain_field(p, 8, code, sizeof(code));
}

/* Date (RFC 9110 6.6.1), the shard's per-second value, as plain_field()
 * writes it: an IMF-fixdate's 29 bytes make it 32, copied whole. */
static uint32_t
date_field(struct h2_conn *h, uint8_t *p)
{
	uint32_t len;
	const char *date = http_conn_date(h->c, &len);

	if (len != HTTP_DATE_LEN)
		return plain_field(p, 33, date, len);
	p[0] = 0x0f;		/* 33: 15 in the prefix, then 18 */
	p[1] = 33 - 15;
	p[2] = HTTP_DATE_LEN;
	memcpy(p + 3, date, HTTP_DATE_LEN);
	return 3 + HTTP_DATE_LEN;
}

/* A dynamic table size update owed since the client's SETTINGS starts
 * the next block (RFC 7541 4.2), before :status: the deflater writes it
 * alone. Returns its length, or nghttp2's error. */
static ssize_t
size_update(struct h2_conn *h, uint8_t *p)
{
	ssize_t got;

	if (!h->table_resized)
		return 0;
	got = nghttp2_hd_deflate_hd(h->deflater, p, H2_BLOCK_BOUND, NULL, 0);
	h->table_resized = false;
	return got;
}

static void
encode_failed(struct h2_conn *h, struct h2_stream *st, struct http_answer *a,
		bool keep)
{
	h2_conn_error(h, H2_INTERNAL_ERROR);
	if (keep)
		st->ans = a;	/* released with the stream */
}

/* Encodes the answer's HEADERS into the output buffer: the header names
 * go lower case (RFC 9113 8.2.1), the server's fields first. */
static void
encode(struct h2_conn *h, struct h2_stream *st, struct http_answer *a,
		bool keep, uint8_t *at)
{
	static const char server[] = "ewyk/" EWYK_VERSION;
	nghttp2_nv v[HTTP_ANSWER_HEADERS + 3];
	const char *alt = http_conn_alt_svc(h->c);
	uint16_t plain[HTTP_ANSWER_HEADERS];
	bool no_body = a->status == 204 || a->status == 304;
	uint32_t i, np = 0, blen;
	char length[24];
	int64_t len = -1;
	size_t n = 0;
	ssize_t got;
	bool eos;

	got = size_update(h, at + H2_FRAME_HEADER);
	if (got < 0) {
		encode_failed(h, st, a, keep);
		return;
	}
	blen = (uint32_t)got;
	blen += status_field(at + H2_FRAME_HEADER + blen, a->status);
	v[n++] = (nghttp2_nv){ (uint8_t *)"server", (uint8_t *)server, 6,
		sizeof(server) - 1, 0 };
	if (alt != NULL)
		v[n++] = (nghttp2_nv){ (uint8_t *)"alt-svc", (uint8_t *)alt, 7,
			strnlen(alt, HTTP_ALT_SVC_MAX), 0 };
	for (i = 0; i < a->nheaders; i++) {
		char *name = a->hbuf + a->h[i].name;

		lower_case(name, a->h[i].name_len);
		if (plain_index(name, a->h[i].name_len) != 0) {
			plain[np++] = (uint16_t)i;
			continue;
		}
		v[n++] = (nghttp2_nv){ (uint8_t *)name,
			(uint8_t *)a->hbuf + a->h[i].value, a->h[i].name_len,
			a->h[i].value_len, 0 };
	}
	if (a->kind == HTTP_BODY_STREAM) {
		st->from_source = true;
		len = a->src.length;
		st->out_left = len >= 0 ? (uint64_t)len : 0;
	} else {
		st->out = a->body;
		st->out_left = a->len;
		len = (int64_t)a->len;
	}
	if (no_body) {
		len = -1;
		st->out_left = 0;
		st->from_source = false;
	}
	if (st->req.method == HTTP_HEAD) {
		st->out_left = 0;
		st->from_source = false;
	}
	eos = st->out_left == 0 && !st->from_source;
	got = nghttp2_hd_deflate_hd(h->deflater, at + H2_FRAME_HEADER + blen,
			H2_BLOCK_BOUND - blen, v, n);
	if (got < 0) {
		encode_failed(h, st, a, keep);
		return;
	}
	blen += (uint32_t)got;
	for (i = 0; i < np; i++) {
		const struct http_answer_header *f = &a->h[plain[i]];

		blen += plain_field(at + H2_FRAME_HEADER + blen,
				plain_index(a->hbuf + f->name, f->name_len),
				a->hbuf + f->value, f->value_len);
	}
	blen += date_field(h, at + H2_FRAME_HEADER + blen);
	if (len >= 0)
		blen += plain_field(at + H2_FRAME_HEADER + blen, 28, length,
				http_fmt_u64(length, (uint64_t)len));
	h2_put_header(at, blen, H2_HEADERS, H2_FLAG_END_HEADERS |
			(eos ? H2_FLAG_END_STREAM : 0), (uint32_t)st->id);
	h->out_len += H2_FRAME_HEADER + blen;
	http_conn_count_answer(h->c, a->status, 2);
	/* An answer whose body lives elsewhere goes back now that its
	 * fields are encoded; any other, with its stream. */
	if (keep) {
		if (http_answer_detachable(a))
			http_conn_release(h->c, a);
		else
			st->ans = a;
	}
	if (eos)
		local_end(h, st);
	else
		data_push(h, st);
}

static void
encode_refusal(struct h2_conn *h, struct h2_stream *st, uint8_t *at)
{
	struct http_answer a;

	http_answer_error(&a, st->refuse, st->allow[0] != '\0' ? st->allow :
			NULL);
	st->refuse = 0;
	encode(h, st, &a, false, at);
}

/*
 * Submits an answer: a handler's (kept while its body is sent, or until
 * its fields are encoded when its body lives elsewhere) or an error made
 * here (encoded at once, or its status kept until there is room).
 */
void
h2_submit_answer(struct h2_conn *h, struct h2_stream *st, struct http_answer *a,
		bool keep)
{
	uint8_t *at = h->hq_head == NULL ?
		out_room(h, H2_FRAME_HEADER + H2_BLOCK_BOUND) : NULL;

	if (at != NULL) {
		encode(h, st, a, keep, at);
		return;
	}
	/* No room now: the HEADERS wait their turn. */
	if (keep) {
		st->ans = a;
	} else {
		st->refuse = (int16_t)a->status;
		st->allow[0] = '\0';
	}
	st->queue = H2_Q_HEADERS;
	queue_push(&h->hq_tail, st);
}

void
h2_refuse(struct h2_conn *h, struct h2_stream *st, int status, const char *allow)
{
	struct http_answer a;

	http_answer_error(&a, status, allow);
	h2_submit_answer(h, st, &a, false);
	if (st->queue == H2_Q_HEADERS && allow != NULL)
		snprintf(st->allow, sizeof(st->allow), "%s", allow);
}

/* Writes a DATA frame into the transport; false when it did not take it
 * whole (mbufs ran out: the framing is lost). */
static bool
write_data(struct h2_conn *h, struct h2_stream *st, const uint8_t *p,
		uint32_t n, bool eos)
{
	uint8_t fh[H2_FRAME_HEADER];

	h2_put_header(fh, n, H2_DATA, eos ? H2_FLAG_END_STREAM : 0,
			(uint32_t)st->id);
	if (http_conn_write(h->c, fh, sizeof(fh)) != sizeof(fh) ||
			(n > 0 && http_conn_write(h->c, p, n) != n)) {
		h->failed = true;	/* nothing more is sent: close */
		h->out_len = 0;
		return false;
	}
	st->send_window -= n;
	h->send_window -= n;
	h2_stats(h)->body_bytes_out += n;
	return true;
}

enum { SENT, LEFT, FULL };

/* A source's next frame, of at most n bytes. A window nearly shut gives
 * a tiny n, but a source is read for H2_SOURCE_MIN at least (its promise
 * to handlers): the part the window does not take waits in held. */
static int
send_source(struct h2_conn *h, struct h2_stream *st, uint32_t n)
{
	const struct ewyk_source *sc = &st->ans->src;
	bool known = sc->length >= 0, eos;
	size_t cap, scap;
	uint8_t *to;
	long r;

	if (st->held_len == 0) {
		to = http_conn_scratch(h->c, &scap);
		cap = RTE_MIN((size_t)n, scap);
		if (known && st->out_left < cap)
			cap = (size_t)st->out_left;
		if (cap < H2_SOURCE_MIN && (!known || st->out_left > cap)) {
			cap = known ? RTE_MIN((uint64_t)H2_SOURCE_MIN,
					st->out_left) : H2_SOURCE_MIN;
			to = st->held;
		}
		r = cap > 0 ? sc->read(sc->arg, to, cap) : 0;
		if (r == HTTP_SOURCE_AGAIN) {
			st->deferred = true;	/* until resume() */
			return LEFT;
		}
		/* A failed source, or one that ends short of its length,
		 * resets the stream. */
		if (r < 0 || (size_t)r > cap || (r == 0 && known &&
				st->out_left > 0)) {
			h2_reset(h, st->id, st, H2_INTERNAL_ERROR);
			return LEFT;
		}
		if (known)
			st->out_left -= (uint64_t)r;
		if (r == 0 || to != st->held) {
			eos = r == 0 || (known && st->out_left == 0);
			if (!write_data(h, st, to, (uint32_t)r, eos))
				return LEFT;
			if (eos)
				local_end(h, st);
			return eos ? LEFT : SENT;
		}
		st->held_off = 0;
		st->held_len = (uint16_t)r;
	}
	n = RTE_MIN(n, (uint32_t)st->held_len);
	eos = known && st->out_left == 0 && st->held_len == n;
	if (!write_data(h, st, st->held + st->held_off, n, eos))
		return LEFT;
	st->held_off = (uint16_t)(st->held_off + n);
	st->held_len = (uint16_t)(st->held_len - n);
	if (eos)
		local_end(h, st);
	return eos ? LEFT : SENT;
}

/* The stream's next DATA frame: SENT (more may follow), LEFT (it leaves
 * the queue: done, blocked on its window, waiting for its source), or
 * FULL (the transport or the connection's window is). A small one goes
 * into the output buffer with the frames before it, to leave with them
 * in one write; a larger one straight into the transport behind them. */
static int
send_one(struct h2_conn *h, struct h2_stream *st)
{
	uint32_t space, n;
	uint8_t *at;
	bool eos;

	if (h->send_window <= 0)
		return FULL;
	if (st->send_window <= 0) {
		st->blocked = true;
		return LEFT;
	}
	n = (uint32_t)RTE_MIN(RTE_MIN(st->send_window, h->send_window),
			(int64_t)h->peer_frame);
	if (!st->from_source && st->out_left <= n &&
			st->out_left <= H2_SMALL_DATA) {
		n = (uint32_t)st->out_left;
		at = out_room(h, H2_FRAME_HEADER + n);
		if (at == NULL)
			return FULL;
		h2_put_header(at, n, H2_DATA, H2_FLAG_END_STREAM,
				(uint32_t)st->id);
		memcpy(at + H2_FRAME_HEADER, st->out, n);
		h->out_len += H2_FRAME_HEADER + n;
		st->send_window -= n;
		h->send_window -= n;
		h2_stats(h)->body_bytes_out += n;
		st->out_left = 0;
		local_end(h, st);
		return LEFT;
	}
	h2_out_drain(h);
	space = http_conn_space(h->c);
	if (h->out_len > 0 || space <= H2_FRAME_HEADER)
		return FULL;
	n = RTE_MIN(n, space - H2_FRAME_HEADER);
	if (st->from_source)
		return send_source(h, st, n);
	n = (uint32_t)RTE_MIN((uint64_t)n, st->out_left);
	eos = n == st->out_left;
	if (!write_data(h, st, st->out, n, eos))
		return LEFT;
	st->out += n;
	st->out_left -= n;
	if (eos) {
		local_end(h, st);
		return LEFT;
	}
	return SENT;
}

void
h2_send_queued(struct h2_conn *h)
{
	while (h->hq_head != NULL && !h->failed) {
		uint8_t *at = out_room(h, H2_FRAME_HEADER + H2_BLOCK_BOUND);
		struct h2_stream *st;

		if (at == NULL)
			return;		/* once the buffer drains */
		st = queue_pop(&h->hq_head, &h->hq_tail);
		if (st->refuse != 0) {
			encode_refusal(h, st, at);
		} else {
			struct http_answer *a = st->ans;

			st->ans = NULL;
			encode(h, st, a, true, at);
		}
	}
	/* Then DATA, round the streams. */
	while (h->dq_head != NULL && !h->failed) {
		struct h2_stream *st;
		int r;

		st = queue_pop(&h->dq_head, &h->dq_tail);
		r = send_one(h, st);
		if (r == FULL) {
			st->queue = H2_Q_DATA;
			st->qnext = h->dq_head;
			h->dq_head = st;
			if (h->dq_tail == &h->dq_head)
				h->dq_tail = &st->qnext;
			return;
		}
		if (r == SENT)
			data_push(h, st);
	}
}

bool
h2_answer(struct http_conn *c, struct http_origin o, struct http_answer *a)
{
	struct h2_conn *h = c->p;
	struct h2_stream *st = h2_stream_of(h, (int32_t)o.stream);

	if (st == NULL || !st->awaiting || h->failed)
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

void
h2_resume(struct http_conn *c, struct http_origin o)
{
	struct h2_conn *h = c->p;
	struct h2_stream *st = h2_stream_of(h, (int32_t)o.stream);

	if (st == NULL || !st->deferred)
		return;
	st->deferred = false;
	h2_unblock(h, st);
	if (!h2_flush(h))
		http_conn_close(c);
}
