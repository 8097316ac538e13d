/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP/2 streams and their requests: a stream per request, its header
 * fields decoded and checked (RFC 9113 8.2-8.3) into the shape of an
 * HTTP/1.1 head, its body gathered for a handler or kept in segments for
 * a body-stream route's reader (whose reads open the windows), and the
 * request handed to its route.
 */
#include <pthread.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>

#include "h2_conn.h"

/* Streams ----------------------------------------------------------------------- */

struct h2_stream *
h2_stream_new(struct h2_conn *h, int32_t id)
{
	struct h2_stream *st = http_mem_alloc(http_conn_mem(h->c),
			sizeof(*st) + h->list_max);
	struct h2_stream **b;

	if (st == NULL)
		return NULL;
	memset(st, 0, offsetof(struct h2_stream, allow));
	memset(&st->req, 0, offsetof(struct http_head, headers));
	st->id = id;
	st->hcap = h->list_max;
	st->recv_window = H2_INITIAL_WINDOW;
	st->recv_size = H2_INITIAL_WINDOW;
	st->update_ms = http_conn_now(h->c);
	st->send_window = h->peer_window;
	st->req.content_length = -1;
	st->req.keep_alive = true;
	st->next = h->streams;
	if (st->next != NULL)
		st->next->pprev = &st->next;
	st->pprev = &h->streams;
	h->streams = st;
	b = &h->bucket[(uint32_t)id >> 1 & (H2_BUCKETS - 1)];
	st->hnext = *b;
	*b = st;
	h->hot = st;
	h->open++;
	h2_stats(h)->h2_streams++;
	h2_stats(h)->h2_streams_open++;
	return st;
}

/* Whether id is one of the last H2_CLOSED_IDS client streams, whose
 * slots are theirs (an older one shares its slot with a newer one). */
static bool
remembered(const struct h2_conn *h, int32_t id)
{
	return (int64_t)id > (int64_t)h->max_id - 2 * H2_CLOSED_IDS;
}

uint8_t
h2_closed_how(const struct h2_conn *h, int32_t id)
{
	if (!remembered(h, id))
		return H2_FORGOTTEN;
	return h->closed_how[(uint32_t)id >> 1 & (H2_CLOSED_IDS - 1)];
}

void
h2_set_closed_how(struct h2_conn *h, int32_t id, uint8_t how)
{
	if (id <= h->max_id && remembered(h, id))
		h->closed_how[(uint32_t)id >> 1 & (H2_CLOSED_IDS - 1)] = how;
}

void
h2_open_id(struct h2_conn *h, int32_t id)
{
	int32_t i = h->max_id == 0 ? 1 : h->max_id + 2;
	unsigned int n = 0;

	for (; i <= id && n < H2_CLOSED_IDS; i += 2, n++)
		h->closed_how[(uint32_t)i >> 1 & (H2_CLOSED_IDS - 1)] =
			H2_NEVER_OPENED;
	h->max_id = id;
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

/* What no reader will take: its bytes are counted taken for the
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
	if (st->unread > 0 && !h->c->closing)
		h2_consumed(h, NULL, st->unread);
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

void
h2_tell(struct h2_conn *h, struct h2_stream *st)
{
	st->tell_reader = true;
	h->tell_any = true;
}

/* Calls body_ready for the streams owed it, outside the frame reader (a
 * reader may read, and an answer be sent, from inside the hook). A
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
		if (st->closed)
			h2_stream_free(h, st);
	}
	h->telling = false;
}

void
h2_stream_close(struct h2_conn *h, struct h2_stream *st, uint8_t how)
{
	struct h2_stream **b;

	if (st->closed)
		return;
	st->closed = true;
	h2_set_closed_how(h, st->id, how);
	for (b = &h->bucket[(uint32_t)st->id >> 1 & (H2_BUCKETS - 1)];
			*b != st; b = &(*b)->hnext)
		;
	*b = st->hnext;
	if (h->hot == st)
		h->hot = NULL;
	if (h->data_st == st)
		h->data_st = NULL;
	if (h->block_st == st)
		h->block_st = NULL;
	h2_dequeue(h, st);
	if (--h->open == 0)
		h2_idle_from(h);
	if (h2_body_unfinished(st)) {
		/* A body cut short (RST_STREAM, a content-length the DATA
		 * did not match): its reader hears of it, then reads -1. */
		body_drop(h, st);
		h2_tell(h, st);
		return;
	}
	h2_stream_free(h, st);
}

void
h2_stream_free(struct h2_conn *h, struct h2_stream *st)
{
	if (!st->closed) {
		st->streaming = false;
		h2_stream_close(h, st, H2_CLOSED_BY_US);
		return;
	}
	*st->pprev = st->next;
	if (st->next != NULL)
		st->next->pprev = st->pprev;
	if (st->ans != NULL)
		http_conn_release(h->c, st->ans);
	body_drop(h, st);
	h2_stats(h)->h2_streams_open--;
	http_body_slot_put(st->req.body_slot);	/* a body gathered past */
	http_mem_free(http_conn_mem(h->c), st->body);	/* the request's own */
	http_mem_free(http_conn_mem(h->c), st);
}

/* Header fields ---------------------------------------------------------------- */

enum {
	PS_METHOD = 1,
	PS_SCHEME = 2,
	PS_PATH = 4,
	PS_AUTHORITY = 8,
	PS_PROTOCOL = 16,	/* RFC 8441's extended CONNECT */
	PS_WEBSOCKET = 32,	/* and its :protocol is websocket */
};

bool
h2_stash(struct h2_stream *st, struct http_str *dst, const uint8_t *p, size_t n)
{
	if (n > st->hcap - st->hused)
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

/* HPACK's static table (RFC 7541 Appendix A), for the representations
 * that name one of its entries whole: they touch no dynamic table, and
 * are read here without a call into the inflater. */
static const struct {
	const char *name, *value;
	uint8_t nl, vl;
} hpack_static[62] = {
#define E(n, v) { n, v, sizeof(n) - 1, sizeof(v) - 1 }
	[1] = E(":authority", ""), E(":method", "GET"), E(":method", "POST"),
	E(":path", "/"), E(":path", "/index.html"), E(":scheme", "http"),
	E(":scheme", "https"), E(":status", "200"), E(":status", "204"),
	E(":status", "206"), E(":status", "304"), E(":status", "400"),
	E(":status", "404"), E(":status", "500"), E("accept-charset", ""),
	E("accept-encoding", "gzip, deflate"), E("accept-language", ""),
	E("accept-ranges", ""), E("accept", ""),
	E("access-control-allow-origin", ""), E("age", ""), E("allow", ""),
	E("authorization", ""), E("cache-control", ""),
	E("content-disposition", ""), E("content-encoding", ""),
	E("content-language", ""), E("content-length", ""),
	E("content-location", ""), E("content-range", ""),
	E("content-type", ""), E("cookie", ""), E("date", ""), E("etag", ""),
	E("expect", ""), E("expires", ""), E("from", ""), E("host", ""),
	E("if-match", ""), E("if-modified-since", ""), E("if-none-match", ""),
	E("if-range", ""), E("if-unmodified-since", ""),
	E("last-modified", ""), E("link", ""), E("location", ""),
	E("max-forwards", ""), E("proxy-authenticate", ""),
	E("proxy-authorization", ""), E("range", ""), E("referer", ""),
	E("refresh", ""), E("retry-after", ""), E("server", ""),
	E("set-cookie", ""), E("strict-transport-security", ""),
	E("transfer-encoding", ""), E("user-agent", ""), E("vary", ""),
	E("via", ""), E("www-authenticate", ""),
#undef E
};

/* What each byte may be part of, a bit each: the bits of a string are
 * those all its bytes have. */
enum {
	OK_VALUE = 1,	/* a field value: not NUL, CR or LF (RFC 9113 8.2.1) */
	OK_PATH = 2,	/* a :path: visible, no space (RFC 3986) */
	OK_TOKEN = 4,	/* a token (RFC 9110 5.6.2): a method, a scheme */
	OK_NAME = 8,	/* a field name: a token in lower case (8.2.1) */
};

#define OK_UNKNOWN 0x100	/* not yet read: on_field() reads them */

static uint8_t byte_ok[256];
static uint8_t static_ok[62];	/* value_ok() of each static entry */
static pthread_once_t byte_ok_once = PTHREAD_ONCE_INIT;

static unsigned int value_ok(const uint8_t *v, size_t n);

static void
byte_ok_init(void)
{
	unsigned int c, i;

	for (c = 0; c < 256; c++) {
		uint8_t b = 0;

		if (c != 0 && c != '\r' && c != '\n')
			b |= OK_VALUE;
		if (c > ' ' && c != 0x7f)
			b |= OK_PATH;
		if (http_is_tchar((unsigned char)c))
			b |= OK_TOKEN | (c - 'A' < 26 ? 0 : OK_NAME);
		byte_ok[c] = b;
	}
	for (i = 1; i < 62; i++)
		static_ok[i] = (uint8_t)value_ok(
				(const uint8_t *)hpack_static[i].value,
				hpack_static[i].vl);
}

void
h2_fields_init(void)
{
	pthread_once(&byte_ok_once, byte_ok_init);
}

/* The bits every byte of p[0, n) has. */
static unsigned int
bytes_ok(const uint8_t *p, size_t n)
{
	unsigned int all = 0xff;
	size_t i;

	for (i = 0; i < n; i++)
		all &= byte_ok[p[i]];
	return all;
}

/* A field value neither begins nor ends with white space (8.2.1). */
static bool
trimmed(const uint8_t *v, size_t n)
{
	return n == 0 || !((v[0] == ' ') | (v[0] == '\t') | (v[n - 1] == ' ') |
		(v[n - 1] == '\t'));
}

/* The bits of a field value's bytes; none if it is not trimmed. */
static unsigned int
value_ok(const uint8_t *v, size_t n)
{
	return trimmed(v, n) ? bytes_ok(v, n) : 0;
}

static bool
name_is(const uint8_t *name, size_t nl, const char *lit, size_t n)
{
	return nl == n && memcmp(name, lit, n) == 0;
}

/* RFC 8441's :protocol: PS_PROTOCOL, with PS_WEBSOCKET for the only
 * protocol ewyk passes on (another is refused 501 by takes_tunnel()); 0
 * for any other name, or a second :protocol. */
static __rte_noinline uint8_t
protocol_field(struct h2_stream *st, const uint8_t *name, size_t nl,
		const uint8_t *value, size_t vl)
{
	if (!name_is(name, nl, ":protocol", 9) || (st->pseudo & PS_PROTOCOL))
		return 0;
	if (name_is(value, vl, "websocket", 9))
		st->pseudo |= PS_WEBSOCKET;
	return PS_PROTOCOL;
}

/* A pseudo-header field; ok: the bits of its value's bytes. */
static void
pseudo_field(struct h2_stream *st, const uint8_t *name, size_t nl,
		const uint8_t *value, size_t vl, unsigned int ok)
{
	struct http_head *r = &st->req;
	uint8_t bit = 0;

	switch (nl) {
	case 5:
		bit = name_is(name, nl, ":path", 5) ? PS_PATH : 0;
		break;
	case 7:
		bit = name_is(name, nl, ":method", 7) ? PS_METHOD :
			name_is(name, nl, ":scheme", 7) ? PS_SCHEME : 0;
		break;
	case 10:
		bit = name_is(name, nl, ":authority", 10) ? PS_AUTHORITY : 0;
		break;
	}

	/* Unknown (:status), twice, after a regular field, or in
	 * trailers: malformed (8.3); RFC 8441's :protocol is the one more
	 * this server knows. */
	if (bit == 0 || (st->pseudo & bit) || st->regular_seen ||
			st->trailers) {
		if (bit != 0 || st->regular_seen || st->trailers ||
				(bit = protocol_field(st, name, nl, value,
				vl)) == 0) {
			st->malformed = true;
			return;
		}
	}
	st->pseudo |= bit;
	switch (bit) {
	case PS_METHOD:
		if (vl == 0 || !(ok & OK_TOKEN))
			st->malformed = true;
		else if (!h2_stash(st, &r->method_str, value, vl))
			st->too_large = true;
		r->method = http_method_parse(r->method_str);
		break;
	case PS_PATH: {
		const uint8_t *q = memchr(value, '?', vl);
		size_t pl = q != NULL ? (size_t)(q - value) : vl;

		if (!(ok & OK_PATH)) {
			st->malformed = true;
			return;
		}
		if (!h2_stash(st, &r->target, value, vl)) {
			st->too_large = true;
			return;
		}
		r->path = (struct http_str){ r->target.p, (uint32_t)pl };
		r->query = q != NULL ? (struct http_str){ r->target.p + pl + 1,
			(uint32_t)(vl - pl - 1) } :
			(struct http_str){ r->target.p + pl, 0 };
		break;
	}
	case PS_SCHEME:
		if (vl == 0 || !(ok & OK_TOKEN))
			st->malformed = true;
		break;
	case PS_AUTHORITY:
		h2_add_header(st, "host", 4, value, vl);
		break;
	}
}

/* A regular field: checked, then kept (but in trailers). */
static void
regular_field(struct h2_stream *st, const uint8_t *name, size_t nl,
		const uint8_t *value, size_t vl)
{
	st->regular_seen = true;
	if (nl == 0 || !(bytes_ok(name, nl) & OK_NAME)) {
		st->malformed = true;
		return;
	}
	/* Connection-specific fields have no place in HTTP/2 (8.2.2). */
	switch (nl) {
	case 2:
		if (name_is(name, nl, "te", 2) &&
				!name_is(value, vl, "trailers", 8))
			st->malformed = true;
		break;
	case 7:
		if (name_is(name, nl, "upgrade", 7))
			st->malformed = true;
		break;
	case 10:
		if (name_is(name, nl, "connection", 10) ||
				name_is(name, nl, "keep-alive", 10))
			st->malformed = true;
		break;
	case 14:
		/* Its DATA must add up to it (8.1.1). */
		if (name_is(name, nl, "content-length", 14) && !st->trailers &&
				(st->req.content_length >= 0 ||
				!http_parse_length((struct http_str){
				(const char *)value, (uint32_t)vl },
				&st->req.content_length)))
			st->malformed = true;
		break;
	case 16:
		if (name_is(name, nl, "proxy-connection", 16))
			st->malformed = true;
		break;
	case 17:
		if (name_is(name, nl, "transfer-encoding", 17))
			st->malformed = true;
		break;
	}
	if (!st->trailers)	/* trailers are checked, not kept */
		h2_add_header(st, (const char *)name, nl, value, vl);
}

/* A field of the request; ok: value_ok() of its value, or OK_UNKNOWN. */
static void
on_field(struct h2_stream *st, const nghttp2_nv *nv, unsigned int ok)
{
	bool past = st->list_size > st->hcap;

	/* A field's size is the RFC's (8.2.3: 32 bytes more than its name
	 * and value). Past the limit the request is answered 431; the
	 * fields still coming are counted, not read: HPACK may make a
	 * small block decode into many large fields. */
	st->list_size += (uint32_t)(nv->namelen + nv->valuelen + 32);
	if (st->list_size > st->hcap)
		st->too_large = true;
	if (past)
		return;
	if (ok == OK_UNKNOWN)
		ok = value_ok(nv->value, nv->valuelen);
	if (!(ok & OK_VALUE)) {
		st->malformed = true;
		return;
	}
	if (nv->namelen > 0 && nv->name[0] == ':')
		pseudo_field(st, nv->name, nv->namelen, nv->value, nv->valuelen,
				ok);
	else
		regular_field(st, nv->name, nv->namelen, nv->value,
				nv->valuelen);
}

bool
h2_decode(struct h2_conn *h, struct h2_stream *st, const uint8_t *p,
		size_t len, bool final)
{
	for (;;) {
		nghttp2_nv nv;
		int fl = 0;
		ssize_t n;

		/* Between representations, one byte naming a whole entry
		 * (6.1, an index of 1 to 126) is read here: it changes no
		 * table. The static table's are ewyk's, checked once. */
		if (!h->hd_partial && len > 0 && p[0] > 0x80 && p[0] < 0xff) {
			unsigned int i = p[0] & 0x7f;
			const nghttp2_nv *e;

			if (i < 62) {
				nv = (nghttp2_nv){
					(uint8_t *)(uintptr_t)hpack_static[i].name,
					(uint8_t *)(uintptr_t)hpack_static[i].value,
					hpack_static[i].nl, hpack_static[i].vl, 0 };
				if (st != NULL)
					on_field(st, &nv, static_ok[i]);
			} else {
				e = nghttp2_hd_inflate_get_table_entry(
						h->inflater, i);
				if (e == NULL)
					return false;	/* 2.3.3 */
				if (st != NULL)
					on_field(st, e, OK_UNKNOWN);
			}
			h->hd_fields = true;
			p++;
			len--;
			continue;
		}
		/* A table size update comes first in a block, or never
		 * (4.2): the inflater saw none of the fields read here. */
		if (!h->hd_partial && h->hd_fields && len > 0 &&
				(p[0] & 0xe0) == 0x20)
			return false;
		if (len == 0 && !final)
			return true;
		n = nghttp2_hd_inflate_hd2(h->inflater, &nv, &fl, p, len, final);
		if (n < 0)
			return false;
		p += n;
		len -= (size_t)n;
		h->hd_partial = !(fl & NGHTTP2_HD_INFLATE_EMIT) && len == 0;
		if (fl & NGHTTP2_HD_INFLATE_EMIT) {
			h->hd_fields = true;
			if (st != NULL)
				on_field(st, &nv, OK_UNKNOWN);
		}
		if (fl & NGHTTP2_HD_INFLATE_FINAL) {
			nghttp2_hd_inflate_end_headers(h->inflater);
			h->hd_partial = false;
			h->hd_fields = false;
			return true;
		}
		if (!(fl & NGHTTP2_HD_INFLATE_EMIT) && len == 0 && !final)
			return true;
	}
}

/* Routing ------------------------------------------------------------------------ */

static const struct http_route *
route_of(struct h2_conn *h, struct h2_stream *st)
{
	if (!st->routed) {
		st->route = http_conn_route(h->c, &st->req);
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

/* The request has what RFC 9113 8.3.1 asks of it. */
static bool
pseudo_complete(const struct h2_stream *st)
{
	const struct http_head *r = &st->req;
	/* RFC 8441 4: :protocol gives a CONNECT an ordinary request's
	 * shape, and is for CONNECT alone: on any other, malformed. */
	uint8_t shape = PS_METHOD | PS_SCHEME | PS_PATH;

	if (r->method == HTTP_CONNECT) {
		if (!(st->pseudo & PS_PROTOCOL))
			return (st->pseudo & (PS_AUTHORITY | PS_SCHEME |
				PS_PATH)) == PS_AUTHORITY &&
				(st->pseudo & PS_METHOD);
		shape |= PS_PROTOCOL;
	}
	if ((st->pseudo & (shape | PS_PROTOCOL)) != shape)
		return false;
	if (st->too_large)
		return true;	/* 431, whatever its path */
	return r->target.len > 0 && (r->target.p[0] == '/' ||
		(r->target.len == 1 && r->target.p[0] == '*' &&
		r->method == HTTP_OPTIONS));
}

/* A request whose handler takes its body whole, said (content-length)
 * to be past max_body: refused at its head, before its body comes. */
static bool
said_too_large(struct h2_conn *h, struct h2_stream *st)
{
	const struct http_route *rt = route_of(h, st);

	return st->req.content_length > (int64_t)h->c->srv->conf.max_body &&
		rt != NULL && !(rt->flags & HTTP_ROUTE_BODY_STREAM) &&
		(rt->methods & http_method_bit(st->req.method));
}

void
h2_request_head(struct h2_conn *h, struct h2_stream *st, bool end_stream)
{
	if (st->trailers) {
		if (st->malformed)
			h2_reset(h, st->id, st, H2_PROTOCOL_ERROR);
		else
			h2_body_end(h, st);
		return;
	}
	if (st->malformed || !pseudo_complete(st) ||
			(end_stream && st->req.content_length > 0)) {
		h2_reset(h, st->id, st, H2_PROTOCOL_ERROR);	/* 8.1.1 */
		return;
	}
	if (end_stream) {
		st->remote_closed = true;
		h2_stats(h)->by_method[st->req.method]++;
		h2_handle(h, st, false);
	} else if (route_flag(h, st, HTTP_ROUTE_BODY_STREAM)) {
		/* A body-stream route's request goes at the end of its
		 * head: its body follows, for its reader. */
		h2_stats(h)->by_method[st->req.method]++;
		h2_handle(h, st, true);
	} else if (said_too_large(h, st)) {
		/* Refused before its body comes (413), the body dropped. */
		h2_stats(h)->bodies_too_large++;
		h2_refuse_body(h, st, 413);
	} else if (h->c->srv->conf.header_timeout_ms != 0) {
		/* Gathered for its handler, in the shard's memory or one of
		 * its few body buffers: its DATA must keep coming. */
		st->gathering = true;
		st->gather_ms = http_conn_now(h->c);
		http_conn_deadline(h->c, st->gather_ms +
				h->c->srv->conf.header_timeout_ms + 1);
	}
}

uint64_t
h2_bodies_overdue(struct h2_conn *h, uint64_t now_ms)
{
	uint32_t t = h->c->srv->conf.header_timeout_ms;
	struct h2_stream *st, *after;
	uint64_t next = 0;

	for (st = h->streams; st != NULL; st = after) {
		uint64_t at = st->gather_ms + t + 1;

		after = st->next;	/* a refusal may free st */
		if (!st->gathering || st->handled || st->closed)
			continue;
		if (at <= now_ms) {
			/* As HTTP/1.1 does, but the connection goes on. */
			h2_stats(h)->body_timeouts++;
			h2_refuse_body(h, st, 408);
		} else if (next == 0 || at < next) {
			next = at;
		}
	}
	return next;
}

/* RFC 8441: an extended CONNECT to a route that reads its body is a
 * WebSocket taken as a tunnel when the route passes WebSockets on,
 * refused 501 otherwise (another protocol, or another route: one that
 * does not read bodies refuses its CONNECT 405). */
static __rte_noinline bool
takes_tunnel(struct h2_conn *h, struct h2_stream *st, bool more)
{
	if (!(st->pseudo & PS_WEBSOCKET) || !more ||
			!route_flag(h, st, HTTP_ROUTE_WEBSOCKET)) {
		h2_refuse(h, st, 501, NULL);
		return false;
	}
	st->req.tunnel = true;
	st->req.method = HTTP_GET;	/* HTTP/1.1's GET upgraded */
	return true;
}

void
h2_handle(struct h2_conn *h, struct h2_stream *st, bool more)
{
	struct http_answer *ans = NULL;
	bool reads = route_flag(h, st, HTTP_ROUTE_BODY_STREAM);
	char allow[48] = "";
	int taken;

	st->handled = true;
	if (st->too_large || st->req.path.len == 0) {
		h2_refuse(h, st, st->too_large ? 431 : 400, NULL);
		return;
	}
	if (st->req.target.len > h->c->srv->conf.max_target) {
		h2_refuse(h, st, 414, NULL);	/* as HTTP/1.1 would */
		return;
	}
	if (reads) {
		if (unlikely(st->pseudo & PS_PROTOCOL) &&
				!takes_tunnel(h, st, more))
			return;
		/* Its reader takes the body; its length is the client's
		 * content-length (checked against the DATA), unknown
		 * without. */
		st->req.chunked = more && st->req.content_length < 0 &&
			!st->req.tunnel;
		st->body_ended = !more;
	} else if (st->body_len == 0) {
		st->req.content_length = -1;
	} else {
		/* The body (at most max_body: see h2_data()) goes with the
		 * request, its slot with it when it has one. */
		st->req.body = st->req.body_slot != NULL ?
			(const char *)st->req.body_slot->data :
			(const char *)st->body;
		st->req.body_len = st->body_len;
		st->req.content_length = (int64_t)st->body_len;
	}
	taken = http_conn_dispatch(h->c, route_of(h, st), &st->req, 2,
			(uint32_t)st->id, 0, allow, sizeof(allow), &ans);
	if (taken == HTTP_DISPATCH_TAKEN) {
		st->req.body_slot = NULL;	/* the request holds it now */
		st->awaiting = true;
		st->streaming = reads;
	} else if (taken == HTTP_DISPATCH_ANSWERED) {
		h2_submit_answer(h, st, ans, true);
	} else {
		h2_refuse(h, st, taken, allow);
	}
}

/* Bodies ------------------------------------------------------------------------ */

void
h2_refuse_body(struct h2_conn *h, struct h2_stream *st, int status)
{
	st->handled = true;
	h2_stats(h)->by_method[st->req.method]++;
	http_conn_refused(h->c, &st->req, status, 2, (uint32_t)st->id, 0);
	http_body_slot_put(st->req.body_slot);
	st->req.body_slot = NULL;
	/* Last: an answer that goes out whole at once ends the stream, and
	 * st may be gone. */
	h2_refuse(h, st, status, NULL);
}

/* A body past what a request's own buffer holds goes into one of the
 * server's body slots, what came before it moved there; none free: 503. */
static void
body_to_slot(struct h2_conn *h, struct h2_stream *st, const uint8_t *p,
		uint32_t n)
{
	struct http_body_slot *s = st->req.body_slot;

	if (s == NULL) {
		s = http_body_slot_get(&h->c->srv->bodies);
		if (s == NULL) {
			h2_refuse_body(h, st, 503);
			return;
		}
		if (st->body_len > 0)
			memcpy(s->data, st->body, st->body_len);
		http_mem_free(http_conn_mem(h->c), st->body);
		st->body = NULL;
		st->body_cap = 0;
		st->req.body_slot = s;
	}
	memcpy(s->data + st->body_len, p, n);
	st->body_len += n;
}

void
h2_data(struct h2_conn *h, struct h2_stream *st, const uint8_t *p, uint32_t n)
{
	st->rx_body += n;
	if (st->req.content_length >= 0 &&
			st->rx_body > st->req.content_length) {
		h2_consumed(h, NULL, n);
		h2_reset(h, st->id, st, H2_PROTOCOL_ERROR);	/* 8.1.1 */
		return;
	}
	if (st->streaming) {
		/* Held for its reader: the windows open as it reads. */
		if (!body_put(h, st, p, n)) {
			h2_consumed(h, NULL, n);
			h2_reset(h, st->id, st, H2_INTERNAL_ERROR);
			return;
		}
		h2_tell(h, st);
		return;
	}
	/* Any other stream's bytes are taken now. */
	h2_consumed(h, st, n);
	if (st->handled)
		return;	/* refused: dropped */
	if (st->gathering)
		st->gather_ms = http_conn_now(h->c);
	if (n > h->c->srv->conf.max_body - st->body_len) {
		/* Past max_body: refused as it crosses, the rest dropped. */
		h2_stats(h)->bodies_too_large++;
		h2_refuse_body(h, st, 413);
		return;
	}
	/* Large (or said to be): straight to a slot, no step through the
	 * shard's memory. */
	if (st->req.body_slot != NULL ||
			st->body_len + n > EWYK_REQUEST_BODY_MAX ||
			st->req.content_length > EWYK_REQUEST_BODY_MAX) {
		body_to_slot(h, st, p, n);
		return;
	}
	if (st->body_len + n > st->body_cap) {
		uint32_t want = st->body_cap ? st->body_cap : 4096;
		uint8_t *b;

		while (want < st->body_len + n)
			want *= 2;
		b = http_mem_realloc(http_conn_mem(h->c), st->body, want);
		if (b == NULL) {
			h2_reset(h, st->id, st, H2_INTERNAL_ERROR);
			return;
		}
		st->body = b;
		st->body_cap = want;
	}
	memcpy(st->body + st->body_len, p, n);
	st->body_len += n;
}

void
h2_body_end(struct h2_conn *h, struct h2_stream *st)
{
	st->remote_closed = true;
	if (st->req.content_length >= 0 &&
			st->rx_body != st->req.content_length) {
		h2_reset(h, st->id, st, H2_PROTOCOL_ERROR);	/* 8.1.1 */
		return;
	}
	if (st->streaming) {
		st->body_ended = true;
		h2_tell(h, st);
	} else if (!st->handled) {
		h2_stats(h)->by_method[st->req.method]++;
		h2_handle(h, st, false);
		return;
	}
	if (st->local_closed && !st->closed)
		h2_stream_close(h, st, H2_CLOSED_ENDED);
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
		h2_consumed(h, st, (uint32_t)n);
		if (!h2_flush(h))	/* the WINDOW_UPDATEs */
			http_conn_close(c);
		return (long)n;
	}
	return st->body_ended ? 0 : HTTP_SOURCE_AGAIN;
}
