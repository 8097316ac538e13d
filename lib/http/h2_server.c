/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nghttp2/nghttp2.h>

#include "h2_server.h"
#include "http1_server.h"
#include "net_stack.h"
#include "tcp.h"
#include "www.h"

#define H2_FRAME_ROOM (16384 + 64)	/* one DATA frame and its header */
#define H2_MAX_STREAMS 100
#define H2_RESET_BUDGET 200	/* stream resets a client may send per second */

struct h2_stream {
	int32_t id;
	bool head;
	bool get;
	char path[1024];
	uint32_t path_len;
	const uint8_t *body;	/* what the data provider still sends */
	uint64_t left;
	char length[24];
	char status_body[64];
};

struct h2_conn {
	nghttp2_session *ng;
	struct http1_server *srv;
	struct tcp_conn *tcp;
	uint64_t resets_since_ms;	/* start of the current one-second window */
	uint32_t resets;		/* RST_STREAM frames received in it */
	/* what mem_send produced but the send queue could not take yet */
	uint32_t pend_len;
	uint8_t pend[H2_FRAME_ROOM];
};

static ssize_t
read_body(nghttp2_session *ng, int32_t id, uint8_t *buf, size_t length,
		uint32_t *flags, nghttp2_data_source *src, void *user)
{
	struct h2_stream *st = src->ptr;
	size_t n = length < st->left ? length : (size_t)st->left;

	(void)ng;
	(void)id;
	(void)user;
	memcpy(buf, st->body, n);
	st->body += n;
	st->left -= n;
	if (st->left == 0)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

#define NV(n, v, vl) { (uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, (vl), \
	NGHTTP2_NV_FLAG_NO_COPY_NAME }

static void
respond(struct h2_conn *h, struct h2_stream *st)
{
	struct http1_server *s = h->srv;
	const struct www_file *f = NULL;
	const char *status = "200", *ctype = "text/plain; charset=utf-8";
	const char *etag = "";
	nghttp2_data_provider dp = { .source.ptr = st, .read_callback = read_body };
	nghttp2_nv nv[6];
	size_t n = 0;

	if (!st->get && !st->head) {
		status = "405";
		snprintf(st->status_body, sizeof(st->status_body),
				"405 Method Not Allowed\n");
	} else if (s->www != NULL && (f = www_find(s->www, st->path,
			st->path_len)) != NULL) {
		ctype = f->content_type;
		etag = f->etag;
		st->body = f->data;
		st->left = f->size;
	} else {
		status = "404";
		snprintf(st->status_body, sizeof(st->status_body),
				"404 Not Found\n");
	}
	if (f == NULL) {
		st->body = (const uint8_t *)st->status_body;
		st->left = strlen(st->status_body);
	}
	snprintf(st->length, sizeof(st->length), "%llu",
			(unsigned long long)st->left);
	nv[n++] = (nghttp2_nv)NV(":status", status, 3);
	nv[n++] = (nghttp2_nv)NV("server", "ewyk/" EWYK_VERSION,
			strlen("ewyk/" EWYK_VERSION));
	nv[n++] = (nghttp2_nv)NV("content-type", ctype, strlen(ctype));
	nv[n++] = (nghttp2_nv)NV("content-length", st->length,
			strlen(st->length));
	if (etag[0])
		nv[n++] = (nghttp2_nv)NV("etag", etag, strlen(etag));
	s->stats->requests++;
	s->stats->h2_requests++;
	s->stats->by_status[http_status_slot(atoi(status))]++;
	if (st->head)
		st->left = 0;
	nghttp2_submit_response(h->ng, st->id, nv, n, st->left ? &dp : NULL);
}

static int
on_begin_headers(nghttp2_session *ng, const nghttp2_frame *frame, void *user)
{
	struct h2_stream *st;

	(void)user;
	if (frame->hd.type != NGHTTP2_HEADERS ||
			frame->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	st = calloc(1, sizeof(*st));
	if (st == NULL)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	st->id = frame->hd.stream_id;
	nghttp2_session_set_stream_user_data(ng, st->id, st);
	return 0;
}

static int
on_header(nghttp2_session *ng, const nghttp2_frame *frame,
		const uint8_t *name, size_t namelen, const uint8_t *value,
		size_t valuelen, uint8_t flags, void *user)
{
	struct h2_stream *st = nghttp2_session_get_stream_user_data(ng,
			frame->hd.stream_id);

	(void)flags;
	(void)user;
	if (st == NULL || frame->hd.type != NGHTTP2_HEADERS)
		return 0;
	if (namelen == 7 && memcmp(name, ":method", 7) == 0) {
		st->get = valuelen == 3 && memcmp(value, "GET", 3) == 0;
		st->head = valuelen == 4 && memcmp(value, "HEAD", 4) == 0;
	} else if (namelen == 5 && memcmp(name, ":path", 5) == 0) {
		const uint8_t *q = memchr(value, '?', valuelen);

		if (q != NULL)
			valuelen = (size_t)(q - value);	/* the query is not a file */
		if (valuelen >= sizeof(st->path))
			return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
		memcpy(st->path, value, valuelen);
		st->path_len = (uint32_t)valuelen;
	}
	return 0;
}

/* Rapid reset (CVE-2023-44487): opening streams and cancelling them at
 * once costs the server work and the client nothing. Past a budget of
 * resets per second the session ends with ENHANCE_YOUR_CALM. */
static void
count_reset(struct h2_conn *h)
{
	uint64_t now = h->srv->ns->now_ms;

	if (now - h->resets_since_ms >= 1000) {
		h->resets_since_ms = now;
		h->resets = 0;
	}
	if (++h->resets > H2_RESET_BUDGET) {
		h->srv->stats->h2_reset_floods++;
		nghttp2_session_terminate_session(h->ng, NGHTTP2_ENHANCE_YOUR_CALM);
	}
}

static int
on_frame_recv(nghttp2_session *ng, const nghttp2_frame *frame, void *user)
{
	struct h2_conn *h = user;
	struct h2_stream *st;

	if (frame->hd.type == NGHTTP2_RST_STREAM)
		count_reset(h);
	if ((frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA) ||
			!(frame->hd.flags & NGHTTP2_FLAG_END_STREAM))
		return 0;
	st = nghttp2_session_get_stream_user_data(ng, frame->hd.stream_id);
	if (st != NULL)
		respond(h, st);
	return 0;
}

static int
on_stream_close(nghttp2_session *ng, int32_t id, uint32_t error, void *user)
{
	struct h2_stream *st = nghttp2_session_get_stream_user_data(ng, id);

	(void)error;
	(void)user;
	if (st != NULL) {
		nghttp2_session_set_stream_user_data(ng, id, NULL);
		free(st);
	}
	return 0;
}

struct h2_conn *
h2_open(struct http1_server *s, struct tcp_conn *c)
{
	nghttp2_settings_entry settings[] = {
		{ NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, H2_MAX_STREAMS },
		{ NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, 16384 },
	};
	nghttp2_session_callbacks *cb;
	struct h2_conn *h = calloc(1, sizeof(*h));

	if (h == NULL || nghttp2_session_callbacks_new(&cb) != 0) {
		free(h);
		return NULL;
	}
	nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
	h->srv = s;
	h->tcp = c;
	if (nghttp2_session_server_new(&h->ng, cb, h) != 0) {
		nghttp2_session_callbacks_del(cb);
		free(h);
		return NULL;
	}
	nghttp2_session_callbacks_del(cb);
	nghttp2_submit_settings(h->ng, NGHTTP2_FLAG_NONE, settings,
			sizeof(settings) / sizeof(settings[0]));
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

struct h2_conn *
h2_open_upgrade(struct http1_server *s, struct tcp_conn *c,
		const char *settings_b64, size_t settings_len, bool head,
		const char *path, size_t path_len)
{
	uint8_t settings[256];
	long n = b64url_decode(settings_b64, settings_len, settings,
			sizeof(settings));
	struct h2_stream *st;
	struct h2_conn *h;

	if (n < 0 || n % 6 != 0 || path_len >= sizeof(st->path))
		return NULL;
	st = calloc(1, sizeof(*st));
	h = st != NULL ? h2_open(s, c) : NULL;
	if (h == NULL) {
		free(st);
		return NULL;
	}
	st->id = 1;
	st->head = head;
	st->get = !head;
	memcpy(st->path, path, path_len);
	st->path_len = (uint32_t)path_len;
	if (nghttp2_session_upgrade2(h->ng, settings, (size_t)n, head, st) != 0) {
		free(st);
		h2_free(h);
		return NULL;
	}
	respond(h, st);
	return h;
}

bool
h2_recv(struct h2_conn *h, const uint8_t *data, uint32_t len)
{
	ssize_t n = nghttp2_session_mem_recv(h->ng, data, len);

	/* A protocol error: nghttp2 queued a GOAWAY; flush it, then end. */
	if (n < 0 || (size_t)n != len)
		nghttp2_session_terminate_session(h->ng, NGHTTP2_PROTOCOL_ERROR);
	return h2_flush(h);
}

bool
h2_flush(struct h2_conn *h)
{
	struct net_stack *ns = h->srv->ns;

	for (;;) {
		const uint8_t *p;
		ssize_t n;
		uint32_t w;

		if (h->pend_len > 0) {
			w = tcp_write(ns, h->tcp, h->pend, h->pend_len);
			memmove(h->pend, h->pend + w, h->pend_len - w);
			h->pend_len -= w;
			if (h->pend_len > 0)
				return true;	/* resumed when ACKs free room */
		}
		if (tcp_send_space(ns, h->tcp) < H2_FRAME_ROOM)
			return true;
		n = nghttp2_session_mem_send(h->ng, &p);
		if (n < 0)
			return false;
		if (n == 0)
			break;
		w = tcp_write(ns, h->tcp, p, (uint32_t)n);
		if (w < (uint32_t)n) {
			if ((size_t)n - w > sizeof(h->pend))
				return false;	/* a frame larger than we allow */
			memcpy(h->pend, p + w, (size_t)n - w);
			h->pend_len = (uint32_t)((size_t)n - w);
		}
	}
	return nghttp2_session_want_read(h->ng) || nghttp2_session_want_write(h->ng);
}

bool
h2_goaway(struct h2_conn *h)
{
	nghttp2_submit_goaway(h->ng, NGHTTP2_FLAG_NONE,
			nghttp2_session_get_last_proc_stream_id(h->ng),
			NGHTTP2_NO_ERROR, NULL, 0);
	/* After its streams end, the session has nothing more to read. */
	nghttp2_session_terminate_session2(h->ng,
			nghttp2_session_get_last_proc_stream_id(h->ng),
			NGHTTP2_NO_ERROR);
	return h2_flush(h);
}

void
h2_free(struct h2_conn *h)
{
	if (h == NULL)
		return;
	nghttp2_session_del(h->ng);
	free(h);
}
