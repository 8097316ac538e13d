/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP/3 over one connection, on nghttp3: a request stream's head is
 * gathered into lib/http's shape (":authority" becomes Host, as over
 * HTTP/2) and offered to the embedder once the stream ends, or once the
 * head ends when its route reads the body as it comes (quic_h3_body.c);
 * the answer it gives, lib/http's, goes out as HEADERS and DATA, its
 * bytes lent to nghttp3 until acknowledged, then given back through the
 * released hook when the stream closes. Any other request body is
 * gathered whole: in the stream up to EWYK_REQUEST_BODY_MAX, past it in
 * one of the shard's body buffers (the HTTP server's, as HTTP/1.1's and
 * HTTP/2's large bodies) up to max_body (413 past it, 503 with none
 * free). A streamed answer's
 * source is read a piece at a time as nghttp3 asks, each piece kept until
 * the client acknowledges it.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_body_pool.h"
#include "quic_priv.h"

#define QPACK_TABLE 4096
#define QPACK_BLOCKED 100

static struct quic_conn *
conn_of(void *user_data)
{
	return user_data;
}

static void
stream_free(struct h3_stream *st)
{
	struct quic_conn *c = st->c;

	/* What the answer borrowed goes back (a static file's lend, a
	 * source's done), then the answer itself, as the HTTP server does
	 * (http_conn_release()). */
	if (st->ans != NULL) {
		http_answer_release(st->ans);
		c->e->conf.released(c->e->conf.ctx, st->ans);
	}
	quic_h3_body_free(st);
	http_body_slot_put(st->slot);	/* a body no request took */
	while (st->chunks != NULL) {
		struct h3_chunk *k = st->chunks;

		st->chunks = k->next;
		free(k);
	}
	if (st->own != NULL) {
		http_answer_release(st->own);
		free(st->own);
	}
	*st->pprev = st->next;
	if (st->next != NULL)
		st->next->pprev = st->pprev;
	if (c->e->nspare == QUIC_STREAMS_KEPT) {
		free(st);
		return;
	}
	st->next = c->e->spare;
	c->e->spare = st;
	c->e->nspare++;
}

void
quic_h3_spares_free(struct quic_endpoint *e)
{
	while (e->spare != NULL) {
		struct h3_stream *st = e->spare;

		e->spare = st->next;
		free(st);
	}
	e->nspare = 0;
}

/* A stream as new: a spare one when there is. */
static struct h3_stream *
stream_new(struct quic_endpoint *e)
{
	struct h3_stream *st = e->spare;

	if (st == NULL)
		return malloc(sizeof(*st));
	e->spare = st->next;
	e->nspare--;
	return st;
}

static int
begin_headers(nghttp3_conn *h3, int64_t id, void *cud, void *sud)
{
	struct quic_conn *c = conn_of(cud);
	struct h3_stream *st;

	(void)sud;
	st = stream_new(c->e);
	if (st == NULL)
		return NGHTTP3_ERR_CALLBACK_FAILURE;
	/* All but the buffers, which hused and body_len bound. */
	memset(st, 0, offsetof(struct h3_stream, hbuf));
	st->id = id;
	st->c = c;
	st->head.content_length = -1;
	st->next = c->streams;
	if (c->streams != NULL)
		c->streams->pprev = &st->next;
	st->pprev = &c->streams;
	c->streams = st;
	nghttp3_conn_set_stream_user_data(h3, id, st);
	return 0;
}

/* A copy of bytes into the stream's head buffer; NULL when full. */
static const char *
keep(struct h3_stream *st, const uint8_t *p, size_t n)
{
	char *at;

	if (n > sizeof(st->hbuf) - st->hused) {
		st->head_over = true;
		return NULL;
	}
	at = st->hbuf + st->hused;
	memcpy(at, p, n);
	st->hused += (uint32_t)n;
	return at;
}

static void
add_header(struct h3_stream *st, const char *name, uint32_t nl,
		const char *value, uint32_t vl)
{
	struct http_head *r = &st->head;

	if (r->nheaders == HTTP_MAX_HEADERS) {
		st->head_over = true;
		return;
	}
	r->headers[r->nheaders++] = (struct http_header){
		{ name, nl }, { value, vl } };
}

static void
set_target(struct h3_stream *st, const char *v, uint32_t vl)
{
	struct http_head *r = &st->head;
	const char *q = memchr(v, '?', vl);

	r->target = (struct http_str){ v, vl };
	r->path = (struct http_str){ v, q != NULL ? (uint32_t)(q - v) : vl };
	r->query = q != NULL ? (struct http_str){ q + 1,
		(uint32_t)(vl - (uint32_t)(q - v) - 1) } :
		(struct http_str){ v + vl, 0 };
	if (vl == 0 || (v[0] != '/' && !(vl == 1 && v[0] == '*')))
		st->pseudo_bad = true;
}

static int
recv_header(nghttp3_conn *h3, int64_t id, int32_t token, nghttp3_rcbuf *name,
		nghttp3_rcbuf *value, uint8_t flags, void *cud, void *sud)
{
	struct h3_stream *st = sud;
	nghttp3_vec n = nghttp3_rcbuf_get_buf(name);
	nghttp3_vec v = nghttp3_rcbuf_get_buf(value);
	const char *np, *vp;
	uint32_t vl = (uint32_t)v.len;

	(void)h3;
	(void)id;
	(void)flags;
	(void)cud;
	if (st == NULL || st->head_over)
		return 0;
	vp = keep(st, v.base, v.len);
	if (vp == NULL)
		return 0;
	switch (token) {
	case NGHTTP3_QPACK_TOKEN__METHOD:
		st->head.method_str = (struct http_str){ vp, vl };
		st->head.method = http_method_parse(st->head.method_str);
		return 0;
	case NGHTTP3_QPACK_TOKEN__PATH:
		set_target(st, vp, vl);
		return 0;
	case NGHTTP3_QPACK_TOKEN__AUTHORITY:
		st->head.authority = (struct http_str){ vp, vl };
		add_header(st, "host", 4, vp, vl);
		return 0;
	case NGHTTP3_QPACK_TOKEN__SCHEME:
		return 0;
	default:
		if (n.len > 0 && n.base[0] == ':') {
			st->pseudo_bad = true;	/* :protocol and others */
			return 0;
		}
	}
	np = keep(st, n.base, n.len);
	if (np != NULL)
		add_header(st, np, (uint32_t)n.len, vp, vl);
	return 0;
}

/* A body fits the stream's own buffer, or goes whole into one of the
 * shard's body buffers (what came before moved there), up to max_body:
 * past it 413, no buffer free 503, the rest of the body dropped. */
static void
gather(struct quic_endpoint *e, struct h3_stream *st, const uint8_t *data,
		size_t len)
{
	if (st->body_over || st->body_busy)
		return;
	if (st->slot == NULL && len <= sizeof(st->body) - st->body_len) {
		memcpy(st->body + st->body_len, data, len);
		st->body_len += (uint32_t)len;
		return;
	}
	if (e->conf.bodies == NULL ||
			len > e->conf.max_body - st->body_len) {
		st->body_over = true;
		return;
	}
	if (st->slot == NULL) {
		st->slot = http_body_slot_get(e->conf.bodies);
		if (st->slot == NULL) {
			st->body_busy = true;
			return;
		}
		memcpy(st->slot->data, st->body, st->body_len);
	}
	memcpy(st->slot->data + st->body_len, data, len);
	st->body_len += (uint32_t)len;
	st->slot->len = st->body_len;
}

static int
recv_data(nghttp3_conn *h3, int64_t id, const uint8_t *data, size_t len,
		void *cud, void *sud)
{
	struct h3_stream *st = sud;

	(void)h3;
	if (st != NULL && st->streamed)	/* given back as it is read */
		return quic_h3_body_in(st, data, len) == 0 ? 0 :
			NGHTTP3_ERR_CALLBACK_FAILURE;
	if (st != NULL)
		gather(conn_of(cud)->e, st, data, len);
	quic_h3_consumed(conn_of(cud), id, len);
	return 0;
}

static int
deferred_consume(nghttp3_conn *h3, int64_t id, size_t n, void *cud, void *sud)
{
	(void)h3;
	(void)sud;
	quic_h3_consumed(conn_of(cud), id, n);
	return 0;
}

static nghttp3_ssize
read_body(nghttp3_conn *h3, int64_t id, nghttp3_vec *vec, size_t veccnt,
		uint32_t *pflags, void *cud, void *sud)
{
	struct h3_stream *st = sud;

	(void)h3;
	(void)id;
	(void)cud;
	*pflags |= NGHTTP3_DATA_FLAG_EOF;
	if (st == NULL || st->out_left == 0 || veccnt == 0)
		return 0;
	vec[0].base = (uint8_t *)st->out;
	vec[0].len = (size_t)st->out_left;
	st->out += st->out_left;
	st->out_left = 0;
	return 1;
}

/* A source that failed, or ended short of its length: the stream is
 * reset, as over HTTP/2. */
static void
source_failed(struct h3_stream *st)
{
	ngtcp2_conn_shutdown_stream(st->c->qc, st->id, NGHTTP3_H3_INTERNAL_ERROR);
}

/* A streamed answer's next piece: read from its source into a chunk
 * that nghttp3 holds until the client acknowledges it. A source with
 * nothing now, or H3_SOURCE_HELD bytes unacknowledged, blocks the
 * stream (quic_resume(), acked()). */
static nghttp3_ssize
read_source(nghttp3_conn *h3, int64_t id, nghttp3_vec *vec, size_t veccnt,
		uint32_t *pflags, void *cud, void *sud)
{
	struct h3_stream *st = sud;
	const struct ewyk_source *sc;
	struct h3_chunk *k;
	size_t cap = H3_CHUNK;
	bool known;
	ssize_t r;

	(void)h3;
	(void)id;
	(void)cud;
	if (st == NULL || veccnt == 0)
		return NGHTTP3_ERR_WOULDBLOCK;
	sc = &st->ans->src;
	known = sc->length >= 0;
	if (known && st->out_left == 0) {
		*pflags |= NGHTTP3_DATA_FLAG_EOF;
		return 0;
	}
	if (st->unacked >= H3_SOURCE_HELD) {
		st->src_held = true;
		return NGHTTP3_ERR_WOULDBLOCK;
	}
	k = malloc(sizeof(*k));
	if (k == NULL) {
		source_failed(st);
		return NGHTTP3_ERR_WOULDBLOCK;
	}
	if (known && st->out_left < cap)
		cap = (size_t)st->out_left;
	r = sc->read(sc->arg, k->data, cap);
	if (r == HTTP_SOURCE_AGAIN) {
		free(k);
		st->src_deferred = true;
		return NGHTTP3_ERR_WOULDBLOCK;
	}
	if (r < 0 || (size_t)r > cap || (r == 0 && known)) {
		free(k);
		source_failed(st);
		return NGHTTP3_ERR_WOULDBLOCK;
	}
	if (r == 0) {
		free(k);
		*pflags |= NGHTTP3_DATA_FLAG_EOF;
		return 0;
	}
	k->next = NULL;
	k->len = (uint32_t)r;
	k->acked = 0;
	*st->chunks_tail = k;
	st->chunks_tail = &k->next;
	st->unacked += (uint32_t)r;
	if (known) {
		st->out_left -= (uint64_t)r;
		if (st->out_left == 0)
			*pflags |= NGHTTP3_DATA_FLAG_EOF;
	}
	vec[0].base = k->data;
	vec[0].len = (size_t)r;
	return 1;
}

/* Fields HTTP/3 forbids (RFC 9114 4.2), and the length this layer says. */
static bool
left_out(const char *name, uint16_t len)
{
#define NAME(s) { s, sizeof(s) - 1 }
	static const struct {
		const char *s;
		uint16_t len;
	} names[] = {
		NAME("connection"), NAME("keep-alive"), NAME("proxy-connection"),
		NAME("transfer-encoding"), NAME("upgrade"), NAME("content-length"),
	};
#undef NAME
	size_t i;

	for (i = 0; i < QUIC_DIM(names); i++)
		if (names[i].len == len && memcmp(names[i].s, name, len) == 0)
			return true;
	return false;
}

static nghttp3_nv
nv(const char *name, size_t nl, const char *value, size_t vl)
{
	return (nghttp3_nv){ (uint8_t *)name, (uint8_t *)value, nl, vl,
		NGHTTP3_NV_FLAG_NONE };
}

/* The answer's HEADERS, its body lent to nghttp3. */
static int
submit(struct h3_stream *st, struct http_answer *a)
{
	static const char server[] = "ewyk/" EWYK_VERSION;
	static const nghttp3_data_reader reader = { read_body };
	static const nghttp3_data_reader source_reader = { read_source };
	nghttp3_nv v[HTTP_ANSWER_HEADERS + 4];
	bool no_body = a->status == 204 || a->status == 304 ||
		(a->status >= 100 && a->status < 200);
	bool stream = a->kind == HTTP_BODY_STREAM;
	/* A source's length when it knows it, else none: the stream's end
	 * ends the body. */
	int64_t length = stream ? a->src.length : (int64_t)a->len;
	bool body = !no_body && st->head.method != HTTP_HEAD &&
		(stream || a->len > 0);
	size_t n = 0, date_len;
	const char *date = quic_date(st->c->e, &date_len);
	uint32_t i;

	st->code[0] = (char)('0' + a->status / 100 % 10);
	st->code[1] = (char)('0' + a->status / 10 % 10);
	st->code[2] = (char)('0' + a->status % 10);
	v[n++] = nv(":status", 7, st->code, 3);
	v[n++] = nv("server", 6, server, sizeof(server) - 1);
	v[n++] = nv("date", 4, date, date_len);
	for (i = 0; i < a->nheaders; i++) {
		char *name = a->hbuf + a->h[i].name;
		uint16_t k;

		for (k = 0; k < a->h[i].name_len; k++)
			if (name[k] >= 'A' && name[k] <= 'Z')
				name[k] = (char)(name[k] - 'A' + 'a');
		if (left_out(name, a->h[i].name_len))
			continue;
		v[n++] = nv(name, a->h[i].name_len, a->hbuf + a->h[i].value,
				a->h[i].value_len);
	}
	if (!no_body && length >= 0)
		v[n++] = nv("content-length", 14, st->length,
				(size_t)snprintf(st->length, sizeof(st->length),
						"%lld", (long long)length));
	st->out = a->body;
	st->out_left = body && length > 0 ? (uint64_t)length : 0;
	st->chunks_tail = &st->chunks;
	st->answered = true;
	return nghttp3_conn_submit_response(st->c->h3, st->id, v, n,
			!body ? NULL : stream ? &source_reader : &reader);
}

/* An answer made here: errors. */
static int
submit_error(struct h3_stream *st, int status, const char *allow)
{
	st->own = malloc(sizeof(*st->own));
	if (st->own == NULL)
		return NGHTTP3_ERR_NOMEM;
	http_answer_init(st->own);
	http_answer_error(st->own, status, allow);
	return submit(st, st->own);
}

/* The body gathered, as the head tells a handler (Content-Length: what
 * came, whatever the field said: nghttp3 checked they agree). */
static void
with_body(struct h3_stream *st)
{
	struct http_head *r = &st->head;

	if (st->body_len == 0)
		return;
	r->body = st->slot != NULL ? (const char *)st->slot->data : st->body;
	r->body_slot = st->slot;
	r->body_len = st->body_len;
	r->content_length = st->body_len;
}

/* The request goes to the embedder: its head checked first, its body
 * gathered whole or (streamed) still to come. */
static int
offer(struct quic_conn *c, struct h3_stream *st)
{
	struct quic_endpoint *e = c->e;
	struct http_answer *ans = NULL;
	char allow[128] = "";
	int rc;

	st->dispatched = true;
	e->conf.stats->requests++;
	if (st->pseudo_bad || st->head.method_str.len == 0 ||
			st->head.path.len == 0)
		rc = 400;
	else if (st->head_over)
		rc = 431;
	else if (st->body_over)
		rc = 413;
	else if (st->body_busy)
		rc = 503;
	else {
		with_body(st);
		rc = e->conf.request(e->conf.ctx, &st->head,
				quic_h3_origin(st), allow, sizeof(allow), &ans);
	}
	if (rc == HTTP_DISPATCH_TAKEN) {
		st->slot = NULL;	/* the request holds it now */
		return 0;
	}
	if (rc == HTTP_DISPATCH_ANSWERED)
		return quic_h3_answer(st, ans) ? 0 : NGHTTP3_ERR_CALLBACK_FAILURE;
	return submit_error(st, rc, allow[0] != '\0' ? allow : NULL) == 0 ?
		0 : NGHTTP3_ERR_CALLBACK_FAILURE;
}

/* A head followed by a body: offered now when its route reads the body
 * as it arrives, else once the body is gathered (end_stream()). */
static int
end_headers(nghttp3_conn *h3, int64_t id, int fin, void *cud, void *sud)
{
	struct quic_conn *c = conn_of(cud);
	struct h3_stream *st = sud;

	(void)h3;
	(void)id;
	if (fin || st == NULL || st->dispatched ||
			c->e->conf.streams_body == NULL || st->pseudo_bad ||
			st->head_over || st->head.method_str.len == 0 ||
			st->head.path.len == 0 ||
			!c->e->conf.streams_body(c->e->conf.ctx, &st->head,
			quic_h3_origin(st)))
		return 0;
	quic_h3_body_start(st);
	return offer(c, st);
}

static int
end_stream(nghttp3_conn *h3, int64_t id, void *cud, void *sud)
{
	struct h3_stream *st = sud;

	(void)h3;
	(void)id;
	if (st != NULL && st->streamed)
		quic_h3_body_end(st);
	if (st == NULL || st->dispatched)
		return 0;
	return offer(conn_of(cud), st);
}

bool
quic_h3_answer(struct h3_stream *st, struct http_answer *a)
{
	int rc;

	if (st->answered)
		return false;
	st->ans = a;
	rc = submit(st, a);
	if (rc != 0)
		ngtcp2_conn_shutdown_stream(st->c->qc, st->id,
				NGHTTP3_H3_INTERNAL_ERROR);
	return true;
}

static int
stream_closed(nghttp3_conn *h3, int64_t id, uint64_t code, void *cud,
		void *sud)
{
	(void)h3;
	(void)id;
	(void)code;
	(void)cud;
	if (sud != NULL)
		stream_free(sud);
	return 0;
}

static int
reset_stream(nghttp3_conn *h3, int64_t id, uint64_t code, void *cud, void *sud)
{
	struct quic_conn *c = conn_of(cud);

	(void)h3;
	(void)sud;
	c->e->conf.stats->streams_reset++;
	return ngtcp2_conn_shutdown_stream_write(c->qc, id, code) == 0 ? 0 :
		NGHTTP3_ERR_CALLBACK_FAILURE;
}

static int
stop_sending(nghttp3_conn *h3, int64_t id, uint64_t code, void *cud, void *sud)
{
	struct quic_conn *c = conn_of(cud);

	(void)h3;
	(void)sud;
	return ngtcp2_conn_shutdown_stream_read(c->qc, id, code) == 0 ? 0 :
		NGHTTP3_ERR_CALLBACK_FAILURE;
}

/* Body bytes the client acknowledged: a streamed answer's chunks go,
 * and a source held back for them may go on. (A lent body is the
 * answer's until the stream closes.) */
static int
acked(nghttp3_conn *h3, int64_t id, uint64_t len, void *cud, void *sud)
{
	struct h3_stream *st = sud;

	(void)cud;
	while (st != NULL && len > 0 && st->chunks != NULL) {
		struct h3_chunk *k = st->chunks;
		uint32_t take = (uint32_t)QUIC_MIN(len, (uint64_t)(k->len - k->acked));

		k->acked += take;
		st->unacked -= take;
		len -= take;
		if (k->acked < k->len)
			break;
		st->chunks = k->next;
		if (st->chunks == NULL)
			st->chunks_tail = &st->chunks;
		free(k);
	}
	if (st != NULL && st->src_held && st->unacked < H3_SOURCE_HELD) {
		st->src_held = false;
		return nghttp3_conn_resume_stream(h3, id) == 0 ? 0 :
			NGHTTP3_ERR_CALLBACK_FAILURE;
	}
	return 0;
}

bool
quic_h3_resume(struct h3_stream *st)
{
	if (!st->src_deferred)
		return true;
	st->src_deferred = false;
	return nghttp3_conn_resume_stream(st->c->h3, st->id) == 0;
}

static const nghttp3_callbacks h3_callbacks = {
	.acked_stream_data = acked,
	.stream_close = stream_closed,
	.recv_data = recv_data,
	.deferred_consume = deferred_consume,
	.begin_headers = begin_headers,
	.recv_header = recv_header,
	.end_headers = end_headers,
	.stop_sending = stop_sending,
	.end_stream = end_stream,
	.reset_stream = reset_stream,
};

int
quic_h3_start(struct quic_conn *c)
{
	int64_t ctrl, enc, dec;
	nghttp3_settings s;

	nghttp3_settings_default(&s);
	s.max_field_section_size = H3_HEAD_BUF;
	s.qpack_max_dtable_capacity = QPACK_TABLE;
	s.qpack_blocked_streams = QPACK_BLOCKED;
	if (nghttp3_conn_server_new(&c->h3, &h3_callbacks, &s, &c->nghttp3_mem,
			c) != 0)
		return NGTCP2_ERR_CALLBACK_FAILURE;
	nghttp3_conn_set_max_client_streams_bidi(c->h3, QUIC_STREAMS_BIDI);
	if (ngtcp2_conn_open_uni_stream(c->qc, &ctrl, NULL) != 0 ||
			nghttp3_conn_bind_control_stream(c->h3, ctrl) != 0 ||
			ngtcp2_conn_open_uni_stream(c->qc, &enc, NULL) != 0 ||
			ngtcp2_conn_open_uni_stream(c->qc, &dec, NULL) != 0 ||
			nghttp3_conn_bind_qpack_streams(c->h3, enc, dec) != 0)
		return NGTCP2_ERR_CALLBACK_FAILURE;
	return 0;
}

/* An error of nghttp3's closes the connection with its HTTP/3 code. */
static int
h3_failed(struct quic_conn *c, int rv)
{
	c->h3err = nghttp3_err_infer_quic_app_error_code(rv);
	c->e->conf.stats->h3_errors++;
	return NGTCP2_ERR_CALLBACK_FAILURE;
}

int
quic_h3_recv(struct quic_conn *c, int64_t id, const uint8_t *data, size_t len,
		bool fin)
{
	nghttp3_ssize n;

	if (c->h3 == NULL)
		return NGTCP2_ERR_CALLBACK_FAILURE;
	n = nghttp3_conn_read_stream(c->h3, id, data, len, fin);
	if (n < 0)
		return h3_failed(c, (int)n);
	quic_h3_consumed(c, id, (uint64_t)n);
	return 0;
}

int
quic_h3_acked(struct quic_conn *c, int64_t id, uint64_t len)
{
	int rv;

	if (c->h3 == NULL)
		return 0;
	rv = nghttp3_conn_add_ack_offset(c->h3, id, len);
	return rv == 0 ? 0 : h3_failed(c, rv);
}

int
quic_h3_stream_close(struct quic_conn *c, int64_t id, uint64_t code,
		bool has_code)
{
	int rv;

	if (!has_code)
		code = NGHTTP3_H3_NO_ERROR;
	if (c->h3 != NULL) {
		rv = nghttp3_conn_close_stream(c->h3, id, code);
		if (rv != 0 && rv != NGHTTP3_ERR_STREAM_NOT_FOUND)
			return h3_failed(c, rv);
	}
	if ((id & 0x3) == 0)	/* a client's request stream */
		ngtcp2_conn_extend_max_streams_bidi(c->qc, 1);
	return 0;
}

/* A stream event passed on to nghttp3, once HTTP/3 runs. */
static int
pass_on(struct quic_conn *c, int64_t id, int (*fn)(nghttp3_conn *, int64_t))
{
	int rv;

	if (c->h3 == NULL)
		return 0;
	rv = fn(c->h3, id);
	return rv == 0 ? 0 : h3_failed(c, rv);
}

int
quic_h3_stream_reset(struct quic_conn *c, int64_t id)
{
	struct h3_stream *st = quic_h3_stream_find(c, id);

	if (st != NULL && st->streamed)
		quic_h3_body_failed(st);	/* its reader hears it */
	return pass_on(c, id, nghttp3_conn_shutdown_stream_read);
}

int
quic_h3_unblock(struct quic_conn *c, int64_t id)
{
	return pass_on(c, id, nghttp3_conn_unblock_stream);
}

void
quic_h3_streams_end(struct quic_conn *c)
{
	while (c->streams != NULL)
		stream_free(c->streams);
}

struct h3_stream *
quic_h3_stream_find(struct quic_conn *c, int64_t id)
{
	struct h3_stream *st;

	for (st = c->streams; st != NULL; st = st->next)
		if (st->id == id)
			return st;
	return NULL;
}
