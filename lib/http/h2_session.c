/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP/2's session: one nghttp2 server session per connection, its
 * callbacks and options, its start (prior knowledge, or an h2c upgrade),
 * its input and output through the transport, and the protocol table the
 * connection layer calls.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "h2_conn.h"

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
	nghttp2_session_callbacks_set_send_callback(cb, h2_send_bytes);
	nghttp2_session_callbacks_set_send_data_callback(cb, h2_send_data);
	nghttp2_session_callbacks_set_on_begin_headers_callback(cb, h2_on_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(cb, h2_on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, h2_on_data_chunk);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, h2_on_frame_recv);
	nghttp2_session_callbacks_set_before_frame_send_callback(cb,
			h2_before_frame_send);
	nghttp2_session_callbacks_set_on_frame_send_callback(cb, h2_on_frame_send);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, h2_on_stream_close);
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

static void
session_free(struct h2_conn *h)
{
	if (h == NULL)
		return;
	nghttp2_session_del(h->ng);
	h->ng = NULL;
	/* nghttp2 drops its streams without the close callback. */
	while (h->streams != NULL)
		h2_stream_free(h, h->streams);
	http_mem_free(http_conn_mem(h->c), h);
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
	st = h2_stream_new(h, 1);
	if (st == NULL || nghttp2_session_upgrade2(h->ng, settings, (size_t)n,
			r->method == HTTP_HEAD, st) != 0) {
		session_free(h);
		return NULL;
	}
	/* The upgraded request is stream 1's (RFC 7540 3.2). A server's
	 * session ignores upgrade2's user data: set it. */
	nghttp2_session_set_stream_user_data(h->ng, 1, st);
	h->hold = true;
	st->req.method = r->method;
	if (!h2_stash(st, &st->req.method_str, (const uint8_t *)r->method_str.p,
			r->method_str.len) || !h2_stash(st, &st->req.path,
			(const uint8_t *)r->path.p, r->path.len) ||
			!h2_stash(st, &st->req.query, (const uint8_t *)r->query.p,
			r->query.len))
		st->too_large = true;
	for (i = 0; i < r->nheaders; i++)
		h2_add_header(st, r->headers[i].name.p, r->headers[i].name.len,
				(const uint8_t *)r->headers[i].value.p,
				r->headers[i].value.len);
	h2_handle(h, st, false);
	return h;
}

bool
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
	h2_tell_readers(h);
	return nghttp2_session_want_read(h->ng) || nghttp2_session_want_write(h->ng);
}

/* Protocol table ------------------------------------------------------------ */

static uint32_t
h2_recv(struct http_conn *c, const uint8_t *data, uint32_t len)
{
	struct h2_conn *h = c->p;
	ssize_t n;

	h->in_ng = true;
	n = nghttp2_session_mem_recv(h->ng, data, len);
	h->in_ng = false;
	/* A protocol error: nghttp2 queued a GOAWAY; flush it, then end. */
	if (n < 0 || (size_t)n != len)
		nghttp2_session_terminate_session(h->ng, NGHTTP2_PROTOCOL_ERROR);
	if (!h2_flush(h))
		http_conn_close(c);
	return len;
}

/* Once the peer has closed, the connection closes when what is queued is
 * out: closing amid a frame the transport took only part of would leave
 * the client that part, a frame cut short. (Upgraded and still waiting
 * for the client's preface, it has nothing it may send.) */
static void
h2_writable(struct http_conn *c)
{
	struct h2_conn *h = c->p;

	if (!h2_flush(h) || (c->peer_closed && (h->hold ||
			!nghttp2_session_want_write(h->ng))))
		http_conn_close(c);
}

static void
h2_peer_closed(struct http_conn *c)
{
	h2_writable(c);
}

/* Graceful shutdown: GOAWAY with the last stream taken; streams in flight
 * finish, new ones are refused. */
static void
h2_drain(struct http_conn *c)
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

/* The connection is gone: readers of bodies still coming hear of it,
 * and read -1 (closing: nothing reaches the protocol any more). */
static void
h2_free(struct http_conn *c)
{
	struct h2_conn *h = c->p;
	struct h2_stream *st;

	c->closing = true;
	for (st = h->streams; st != NULL; st = st->next)
		if (h2_body_unfinished(st))
			h2_tell(h, st);
	h2_tell_readers(h);
	session_free(h);
}

const struct http_proto h2_proto = {
	.name = "h2c",
	.recv = h2_recv,
	.writable = h2_writable,
	.peer_closed = h2_peer_closed,
	.answer = h2_answer,
	.awaits = h2_awaits,
	.resume = h2_resume,
	.body_read = h2_body_read,
	.drain = h2_drain,
	.free = h2_free,
};
