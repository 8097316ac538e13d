/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP/2's connection: its start (prior knowledge, or an h2c upgrade), the
 * frame reader and the frames of the connection (SETTINGS, PING, GOAWAY,
 * WINDOW_UPDATE, RST_STREAM, PRIORITY; HEADERS and DATA go to the streams,
 * h2_intake.c), connection errors, the output buffer and the protocol
 * table the connection layer calls. RFC 9113; HPACK is nghttp2's.
 */
#include <string.h>

#include <rte_common.h>

#include "h2_conn.h"

/* Sessions ------------------------------------------------------------------ */

/* The HPACK tables' allocations come from the shard's memory. */
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

static void
session_free(struct h2_conn *h)
{
	struct http_mem *m = http_conn_mem(h->c);

	while (h->streams != NULL)
		h2_stream_free(h, h->streams);
	h2_window_release(h);
	if (h->inflater != NULL)
		nghttp2_hd_inflate_del(h->inflater);
	if (h->deflater != NULL)
		nghttp2_hd_deflate_del(h->deflater);
	http_mem_free(m, h->gbuf);
	http_mem_free(m, h->out);
	http_mem_free(m, h);
}

void *
h2_open(struct http_conn *c)
{
	/* RFC 9218: ewyk answers in the order it can and keeps no RFC 7540
	 * priority tree. */
	uint8_t settings[] = {
		0, H2_SET_MAX_CONCURRENT_STREAMS, 0, 0, 0, H2_MAX_STREAMS,
		0, H2_SET_INITIAL_WINDOW_SIZE, H2_INITIAL_WINDOW >> 24 & 0xff,
		H2_INITIAL_WINDOW >> 16 & 0xff, H2_INITIAL_WINDOW >> 8 & 0xff,
		H2_INITIAL_WINDOW & 0xff,
		0, H2_SET_MAX_HEADER_LIST_SIZE, 0, 0, 0, 0,	/* list_max */
		0, H2_SET_NO_RFC7540_PRIORITIES, 0, 0, 0, 1,
		/* RFC 8441: WebSockets, where a route passes them on */
		0, H2_SET_ENABLE_CONNECT_PROTOCOL, 0, 0, 0, 1,
	};
	struct http_mem *m = http_conn_mem(c);
	struct h2_conn *h = http_mem_calloc(m, 1, sizeof(*h));
	uint8_t wu[4];

	if (h == NULL)
		return NULL;
	h2_fields_init();
	h->c = c;
	h->list_max = c->srv->conf.max_head_bytes;
	h2_put32(settings + 14, h->list_max);
	h->mem = (nghttp2_mem){ m, mem_malloc, mem_free, mem_calloc,
		mem_realloc };
	h->goaway_last = -1;
	h->send_window = H2_DEFAULT_WINDOW;
	h->peer_window = H2_DEFAULT_WINDOW;
	h->peer_frame = H2_DEFAULT_FRAME;
	h->recv_window = H2_CONN_WINDOW;
	h->recv_size = H2_CONN_WINDOW;
	h->update_ms = http_conn_now(c);
	h->hq_tail = &h->hq_head;
	h->dq_tail = &h->dq_head;
	h->out = http_mem_alloc(m, H2_OUT_CAP);
	if (h->out == NULL ||
			nghttp2_hd_inflate_new2(&h->inflater, &h->mem) != 0 ||
			nghttp2_hd_deflate_new2(&h->deflater, H2_HEADER_TABLE,
			&h->mem) != 0) {
		session_free(h);
		return NULL;
	}
	h2_out_frame(h, H2_SETTINGS, 0, 0, settings, sizeof(settings), false);
	/* Past the protocol's 65535 bytes: one WINDOW_UPDATE after SETTINGS. */
	h2_put32(wu, H2_CONN_WINDOW - H2_DEFAULT_WINDOW);
	h2_out_frame(h, H2_WINDOW_UPDATE, 0, 0, wu, 4, false);
	h->idle_since_ms = http_conn_now(c);
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

static uint32_t apply_settings(struct h2_conn *h, const uint8_t *p,
		uint32_t len);

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
	/* The client's HTTP2-Settings, acknowledged by the 101 itself (RFC
	 * 7540 3.2.1); the upgraded request is stream 1's, half closed. */
	st = h2_stream_new(h, 1);
	if (apply_settings(h, settings, (uint32_t)n) != H2_NO_ERROR ||
			st == NULL) {
		session_free(h);
		return NULL;
	}
	h2_open_id(h, 1);
	h->hold = true;
	st->remote_closed = true;
	st->req.method = r->method;
	if (!h2_stash(st, &st->req.method_str, (const uint8_t *)r->method_str.p,
			r->method_str.len) || !h2_stash(st, &st->req.path,
			(const uint8_t *)r->path.p, r->path.len) ||
			!h2_stash(st, &st->req.query, (const uint8_t *)r->query.p,
			r->query.len))
		st->too_large = true;
	st->req.target = st->req.path;
	for (i = 0; i < r->nheaders; i++)
		h2_add_header(st, r->headers[i].name.p, r->headers[i].name.len,
				(const uint8_t *)r->headers[i].value.p,
				r->headers[i].value.len);
	h2_stats(h)->by_method[st->req.method]++;
	h2_handle(h, st, false);
	return h;
}

/* Output ---------------------------------------------------------------------- */

bool
h2_out_frame(struct h2_conn *h, uint8_t type, uint8_t flags, uint32_t id,
		const void *payload, uint32_t len, bool reserve)
{
	uint32_t need = H2_FRAME_HEADER + len;
	uint32_t room = H2_OUT_CAP - (reserve ? 0 : H2_OUT_RESERVE);
	uint8_t *p;

	if (h->out_len + need > room)
		return false;
	if (h->out_off + h->out_len + need > H2_OUT_CAP) {
		memmove(h->out, h->out + h->out_off, h->out_len);
		h->out_off = 0;
	}
	p = h->out + h->out_off + h->out_len;
	h2_put_header(p, len, type, flags, id);
	if (len > 0)
		memcpy(p + H2_FRAME_HEADER, payload, len);
	h->out_len += need;
	return true;
}

/* Queues a frame the client's input asks for; no room is a flood of them
 * (PING, SETTINGS) from a client that does not read. */
static void
out_reply(struct h2_conn *h, uint8_t type, uint8_t flags, const void *payload,
		uint32_t len)
{
	if (!h2_out_frame(h, type, flags, 0, payload, len, false))
		h2_conn_error(h, H2_ENHANCE_YOUR_CALM);
}

static void
count_out(struct h2_conn *h, uint64_t *by_code, uint32_t code)
{
	(void)h;
	by_code[code < H2_ERROR_CODES ? code : 0]++;
}

void
h2_conn_error(struct h2_conn *h, uint32_t code)
{
	uint8_t p[8];
	int32_t last = h->max_id;

	if (h->failed)
		return;
	h->failed = true;
	/* The last stream never grows past an earlier GOAWAY's (6.8). */
	if (h->goaway_last >= 0 && last > h->goaway_last)
		last = h->goaway_last;
	h->goaway_last = last;
	h2_put32(p, (uint32_t)last);
	h2_put32(p + 4, code);
	if (h2_out_frame(h, H2_GOAWAY, 0, 0, p, 8, true))
		count_out(h, h2_stats(h)->h2_goaways_out, code);
}

void
h2_reset(struct h2_conn *h, int32_t id, struct h2_stream *st, uint32_t code)
{
	uint8_t p[4];

	h2_put32(p, code);
	if (!h2_out_frame(h, H2_RST_STREAM, 0, (uint32_t)id, p, 4, false)) {
		h2_conn_error(h, H2_ENHANCE_YOUR_CALM);
		return;
	}
	count_out(h, h2_stats(h)->h2_resets_out, code);
	if (st != NULL)
		h2_stream_close(h, st, H2_CLOSED_BY_US);
	else
		h2_set_closed_how(h, id, H2_CLOSED_BY_US);
}

/* Writes what the buffer holds into the transport, as much as fits (a
 * byte stream: a frame may go in two writes). */
void
h2_out_drain(struct h2_conn *h)
{
	uint32_t n;

	if (h->out_len == 0)
		return;
	n = http_conn_write(h->c, h->out + h->out_off, h->out_len);
	h->out_off += n;
	h->out_len -= n;
	if (h->out_len == 0)
		h->out_off = 0;
}

/* Whether the session is done: after a connection error, or once a
 * GOAWAY either way left no stream, when the output is out. */
static bool
finished(const struct h2_conn *h)
{
	if (h->out_len > 0)
		return false;
	if (h->failed)
		return true;
	return (h->goaway_last >= 0 || h->peer_goaway) && h->open == 0 &&
		h->hq_head == NULL && h->dq_head == NULL;
}

bool
h2_flush(struct h2_conn *h)
{
	/* Inside recv or a flush (a reader or a source called from them),
	 * what was queued goes once they are done. */
	if (h->busy) {
		h->again = true;
		return true;
	}
	if (h->hold)
		return true;
	h->busy = true;
	do {
		h->again = false;
		h2_out_drain(h);
		if (h->updates_owed)
			h2_send_updates(h);
		if (!h->failed)
			h2_send_queued(h);
		h2_out_drain(h);
	} while (h->again && !h->c->closing);
	h->busy = false;
	h2_tell_readers(h);
	return !finished(h) && !h->c->closing;
}

/* The connection's frames ------------------------------------------------------ */

/* SETTINGS' values: checked all, then applied (RFC 9113 6.5.2). */
static uint32_t
apply_settings(struct h2_conn *h, const uint8_t *p, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < len; i += 6) {
		uint32_t v = h2_be32(p + i + 2);

		switch ((uint32_t)p[i] << 8 | p[i + 1]) {
		case H2_SET_ENABLE_PUSH:
		case H2_SET_ENABLE_CONNECT_PROTOCOL:
		case H2_SET_NO_RFC7540_PRIORITIES:
			if (v > 1)
				return H2_PROTOCOL_ERROR;
			break;
		case H2_SET_INITIAL_WINDOW_SIZE:
			if (v > H2_WINDOW_MAX)
				return H2_FLOW_CONTROL_ERROR;
			break;
		case H2_SET_MAX_FRAME_SIZE:
			if (v < H2_DEFAULT_FRAME || v > H2_MAX_FRAME_LIMIT)
				return H2_PROTOCOL_ERROR;
			break;
		}
	}
	for (i = 0; i < len; i += 6) {
		uint32_t v = h2_be32(p + i + 2);
		struct h2_stream *st;
		int64_t delta;

		switch ((uint32_t)p[i] << 8 | p[i + 1]) {
		case H2_SET_HEADER_TABLE_SIZE:
			if (nghttp2_hd_deflate_change_table_size(h->deflater,
					RTE_MIN(v, (uint32_t)H2_HEADER_TABLE)) != 0)
				return H2_INTERNAL_ERROR;
			h->table_resized = true;
			break;
		case H2_SET_INITIAL_WINDOW_SIZE:
			/* Every stream's window moves by the change, and may
			 * go below zero (6.9.2). */
			delta = (int64_t)v - h->peer_window;
			h->peer_window = v;
			for (st = h->streams; st != NULL; st = st->next) {
				if (st->closed)
					continue;
				st->send_window += delta;
				if (st->send_window > H2_WINDOW_MAX)
					return H2_FLOW_CONTROL_ERROR;
				if (st->blocked && st->send_window > 0)
					h2_unblock(h, st);
			}
			break;
		case H2_SET_MAX_FRAME_SIZE:
			h->peer_frame = v;
			break;
		}
	}
	return H2_NO_ERROR;
}

static void
on_settings(struct h2_conn *h, const uint8_t *p)
{
	uint32_t err;

	if (h->fid != 0) {
		h2_conn_error(h, H2_PROTOCOL_ERROR);
		return;
	}
	if (h->fflags & H2_FLAG_ACK) {
		if (h->flen != 0)
			h2_conn_error(h, H2_FRAME_SIZE_ERROR);
		return;
	}
	if (h->flen % 6 != 0) {
		h2_conn_error(h, H2_FRAME_SIZE_ERROR);
		return;
	}
	/* Each INITIAL_WINDOW_SIZE walks every stream: a frame of many
	 * is a flood (CVE-2020-11080), refused as nghttp2 refused it. */
	if (h->flen > 6 * H2_SETTINGS_MAX) {
		h2_conn_error(h, H2_ENHANCE_YOUR_CALM);
		return;
	}
	err = apply_settings(h, p, h->flen);
	if (err != H2_NO_ERROR) {
		h2_conn_error(h, err);
		return;
	}
	out_reply(h, H2_SETTINGS, H2_FLAG_ACK, NULL, 0);
	h->hold = false;	/* an upgraded client's preface is in */
}

/* Rapid reset (CVE-2023-44487): opening streams and cancelling them at
 * once costs the server work and the client nothing. Past a budget of
 * resets per second the session ends with ENHANCE_YOUR_CALM, the code
 * that tells the client why. */
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
		h2_conn_error(h, H2_ENHANCE_YOUR_CALM);
	}
}

/* A client stream id the client never opened: idle (RFC 9113 5.1). */
static bool
idle_id(const struct h2_conn *h, int32_t id)
{
	return id > h->max_id || !(id & 1);
}

static void
on_rst_stream(struct h2_conn *h, const uint8_t *p)
{
	struct h2_stream *st;

	(void)p;
	if (h->fid == 0 || idle_id(h, h->fid)) {
		h2_conn_error(h, H2_PROTOCOL_ERROR);
		return;
	}
	if (h->flen != 4) {
		h2_conn_error(h, H2_FRAME_SIZE_ERROR);
		return;
	}
	count_reset(h);
	st = h2_stream_of(h, h->fid);
	if (st != NULL)
		h2_stream_close(h, st, H2_CLOSED_BY_CLIENT);
	else if (h2_closed_how(h, h->fid) == H2_CLOSED_ENDED)
		h2_set_closed_how(h, h->fid, H2_CLOSED_BY_CLIENT);
}

static void
on_window_update(struct h2_conn *h, const uint8_t *p)
{
	uint32_t inc;
	struct h2_stream *st;

	if (h->flen != 4) {
		h2_conn_error(h, H2_FRAME_SIZE_ERROR);
		return;
	}
	inc = h2_be32(p) & H2_WINDOW_MAX;
	if (h->fid == 0) {
		if (inc == 0) {
			h2_conn_error(h, H2_PROTOCOL_ERROR);
			return;
		}
		h->send_window += inc;
		if (h->send_window > H2_WINDOW_MAX)
			h2_conn_error(h, H2_FLOW_CONTROL_ERROR);
		return;
	}
	if (idle_id(h, h->fid)) {
		h2_conn_error(h, H2_PROTOCOL_ERROR);
		return;
	}
	st = h2_stream_of(h, h->fid);
	if (st == NULL)
		return;		/* closed: it may still come (5.1) */
	if (inc == 0) {
		h2_reset(h, h->fid, st, H2_PROTOCOL_ERROR);
		return;
	}
	st->send_window += inc;
	if (st->send_window > H2_WINDOW_MAX)
		h2_reset(h, h->fid, st, H2_FLOW_CONTROL_ERROR);
	else if (st->blocked && st->send_window > 0)
		h2_unblock(h, st);
}

/* RFC 9218's setting is on: priorities are read for their errors only. */
static void
on_priority(struct h2_conn *h, const uint8_t *p)
{
	struct h2_stream *st;

	if (h->fid == 0) {
		h2_conn_error(h, H2_PROTOCOL_ERROR);
		return;
	}
	st = h2_stream_of(h, h->fid);
	if (h->flen != 5)
		h2_reset(h, h->fid, st, H2_FRAME_SIZE_ERROR);
	else if ((int32_t)(h2_be32(p) & H2_WINDOW_MAX) == h->fid)
		h2_reset(h, h->fid, st, H2_PROTOCOL_ERROR);	/* 5.3.1 */
}

static void
on_ping(struct h2_conn *h, const uint8_t *p)
{
	if (h->fid != 0) {
		h2_conn_error(h, H2_PROTOCOL_ERROR);
		return;
	}
	if (h->flen != 8) {
		h2_conn_error(h, H2_FRAME_SIZE_ERROR);
		return;
	}
	if (!(h->fflags & H2_FLAG_ACK))
		out_reply(h, H2_PING, H2_FLAG_ACK, p, 8);
}

static void
on_goaway(struct h2_conn *h, const uint8_t *p)
{
	(void)p;
	if (h->fid != 0)
		h2_conn_error(h, H2_PROTOCOL_ERROR);
	else if (h->flen < 8)
		h2_conn_error(h, H2_FRAME_SIZE_ERROR);
	else
		h->peer_goaway = true;
}

/* Header blocks --------------------------------------------------------------- */

/* A header block fragment; the block ends at END_HEADERS. */
static void
block_fragment(struct h2_conn *h, const uint8_t *p, uint32_t len)
{
	bool final = h->fflags & H2_FLAG_END_HEADERS;
	struct h2_stream *st = h->block_st;

	if (!h2_decode(h, st, p, len, final)) {
		h2_conn_error(h, H2_COMPRESSION_ERROR);
		return;
	}
	if (!final) {
		if (++h->block_frames > H2_CONTINUATIONS_MAX)
			h2_conn_error(h, H2_ENHANCE_YOUR_CALM);
		return;
	}
	h->block_id = 0;
	h->block_st = NULL;
	if (st != NULL)
		h2_request_head(h, st, h->block_end_stream);
}

/* HEADERS: a new request, or a request's trailers. Whatever the stream's
 * fate, its block is decoded: the HPACK tables are the connection's. */
static void
on_headers(struct h2_conn *h, const uint8_t *p)
{
	uint32_t len = h->flen, pad = 0;
	int32_t id = h->fid;
	struct h2_stream *st;
	uint32_t err = 0;	/* a stream error found before the block */
	uint8_t how;

	if (id == 0 || !(id & 1)) {
		h2_conn_error(h, H2_PROTOCOL_ERROR);
		return;
	}
	if (h->fflags & H2_FLAG_PADDED) {
		if (len < 1) {
			h2_conn_error(h, H2_FRAME_SIZE_ERROR);
			return;
		}
		pad = p[0];
		p++;
		len--;
	}
	if (h->fflags & H2_FLAG_PRIORITY) {
		if (len < 5) {
			h2_conn_error(h, H2_FRAME_SIZE_ERROR);
			return;
		}
		if ((int32_t)(h2_be32(p) & H2_WINDOW_MAX) == id)
			err = H2_PROTOCOL_ERROR;	/* 5.3.1 */
		p += 5;
		len -= 5;
	}
	if (pad > len) {
		h2_conn_error(h, H2_PROTOCOL_ERROR);
		return;
	}
	len -= pad;
	h->block_id = id;
	h->block_frames = 0;
	h->block_end_stream = h->fflags & H2_FLAG_END_STREAM;
	h->block_st = NULL;
	st = h2_stream_of(h, id);
	if (st != NULL) {
		/* Trailers end the body; anything after the client's end is
		 * on a half-closed (remote) stream: STREAM_CLOSED (5.1). */
		if (st->remote_closed)
			err = H2_STREAM_CLOSED;
		else if (!h->block_end_stream)
			err = H2_PROTOCOL_ERROR;	/* 8.1 */
		if (err != 0) {
			h2_reset(h, id, st, err);
		} else {
			st->trailers = true;
			h->block_st = st;
		}
	} else if (id <= h->max_id) {
		/* No HEADERS opens a stream below the highest one (5.1.1);
		 * one long closed takes none after so long either. */
		how = h2_closed_how(h, id);
		if (how == H2_NEVER_OPENED || how == H2_FORGOTTEN)
			h2_conn_error(h, H2_PROTOCOL_ERROR);
		else if (how == H2_CLOSED_BY_CLIENT)
			h2_reset(h, id, NULL, H2_STREAM_CLOSED);
		else if (how == H2_CLOSED_ENDED)
			h2_conn_error(h, H2_STREAM_CLOSED);
		/* H2_CLOSED_BY_US: in flight before our RST_STREAM */
	} else {
		h2_open_id(h, id);
		if (h->goaway_last >= 0)	/* after our GOAWAY: ignored (6.8) */
			h2_set_closed_how(h, id, H2_CLOSED_BY_US);
		else if (err != 0)
			h2_reset(h, id, NULL, err);
		else if (h->open >= H2_MAX_STREAMS)
			h2_reset(h, id, NULL, H2_REFUSED_STREAM);
		else if ((h->block_st = h2_stream_new(h, id)) == NULL)
			h2_reset(h, id, NULL, H2_INTERNAL_ERROR);
	}
	if (h->failed)
		return;
	block_fragment(h, p, len);
}

static void
on_continuation(struct h2_conn *h, const uint8_t *p)
{
	if (h->block_id == 0 || h->fid != h->block_id) {
		h2_conn_error(h, H2_PROTOCOL_ERROR);
		return;
	}
	if (h->block_st != NULL && h->block_st->closed)
		h->block_st = NULL;
	block_fragment(h, p, h->flen);
}

/* Frames ---------------------------------------------------------------------- */

static void
on_push_promise(struct h2_conn *h, const uint8_t *p)
{
	(void)p;
	h2_conn_error(h, H2_PROTOCOL_ERROR);	/* 8.4: servers push, not clients */
}

/* The frames read whole, by type (DATA is read as it comes). */
static void (*const on_frame[])(struct h2_conn *h, const uint8_t *p) = {
	[H2_HEADERS] = on_headers,
	[H2_PRIORITY] = on_priority,
	[H2_RST_STREAM] = on_rst_stream,
	[H2_SETTINGS] = on_settings,
	[H2_PUSH_PROMISE] = on_push_promise,
	[H2_PING] = on_ping,
	[H2_GOAWAY] = on_goaway,
	[H2_WINDOW_UPDATE] = on_window_update,
	[H2_CONTINUATION] = on_continuation,
};

/* DATA's header: its stream's state and both windows, before its bytes. */
static void
data_begin(struct h2_conn *h)
{
	int32_t id = h->fid;
	struct h2_stream *st;
	uint8_t how;

	h->data_st = NULL;
	if (id == 0 || idle_id(h, id)) {
		h2_conn_error(h, H2_PROTOCOL_ERROR);	/* 6.1 */
		return;
	}
	if (h->flen > h->recv_window) {
		h2_conn_error(h, H2_FLOW_CONTROL_ERROR);
		return;
	}
	/* The frame counts against the connection's window whatever its
	 * stream's fate (6.9): the bytes of a frame dropped here open it
	 * again as they are read, its padding at its end. */
	h->recv_window -= h->flen;
	st = h2_stream_of(h, id);
	if (st == NULL) {
		/* Closed (6.1): a stream skipped is closed too (5.1.1). */
		how = h2_closed_how(h, id);
		if (how == H2_CLOSED_ENDED)
			h2_conn_error(h, H2_STREAM_CLOSED);
		else if (how == H2_CLOSED_BY_CLIENT || how == H2_NEVER_OPENED)
			h2_reset(h, id, NULL, H2_STREAM_CLOSED);
		return;
	}
	if (st->remote_closed) {
		h2_reset(h, id, st, H2_STREAM_CLOSED);
		return;
	}
	if (h->flen > (uint32_t)st->recv_window) {
		h2_reset(h, id, st, H2_FLOW_CONTROL_ERROR);
		return;
	}
	st->recv_window -= (int32_t)h->flen;
	h->data_st = st;
}

/* DATA's bytes have come: its padding is taken at once, and END_STREAM
 * ends the body. */
static void
data_end(struct h2_conn *h)
{
	struct h2_stream *st = h->data_st;
	uint32_t padding = (h->fflags & H2_FLAG_PADDED) ? h->pad + 1 : 0;

	h->data_st = NULL;
	h->in = H2_IN_HEAD;
	if (padding > 0)
		h2_consumed(h, st, padding);
	if (st != NULL && (h->fflags & H2_FLAG_END_STREAM))
		h2_body_end(h, st);
}

/* A frame header: checks what it can before the payload. */
static void
frame_begin(struct h2_conn *h, const uint8_t *fh)
{
	h->flen = h2_be24(fh);
	h->ftype = fh[3];
	h->fflags = fh[4];
	h->fid = (int32_t)(h2_be32(fh + 5) & H2_WINDOW_MAX);
	h->left = h->flen;
	h->pad = 0;
	if (h->flen > H2_DEFAULT_FRAME) {
		h2_conn_error(h, H2_FRAME_SIZE_ERROR);
		return;
	}
	if (!h->settings_seen) {
		/* The client's preface ends with SETTINGS (3.4). */
		if (h->ftype != H2_SETTINGS || (h->fflags & H2_FLAG_ACK)) {
			h2_conn_error(h, H2_PROTOCOL_ERROR);
			return;
		}
		h->settings_seen = true;
	}
	/* A header block takes nothing but its CONTINUATIONs (4.3). */
	if (h->block_id != 0 && h->ftype != H2_CONTINUATION) {
		h2_conn_error(h, H2_PROTOCOL_ERROR);
		return;
	}
	if (h->ftype == H2_DATA) {
		if ((h->fflags & H2_FLAG_PADDED) && h->flen == 0) {
			h2_conn_error(h, H2_FRAME_SIZE_ERROR);
			return;
		}
		data_begin(h);
		if (h->failed)
			return;
		h->in = (h->fflags & H2_FLAG_PADDED) ? H2_IN_PADLEN :
			H2_IN_DATA;
		if (h->flen == 0)
			data_end(h);
		return;
	}
	if (h->ftype > H2_CONTINUATION) {
		/* Unknown types are ignored (5.5). */
		h->in = h->flen > 0 ? H2_IN_SKIP : H2_IN_HEAD;
		return;
	}
	h->in = H2_IN_GATHER;
	if (h->flen == 0) {
		h->in = H2_IN_HEAD;
		on_frame[h->ftype](h, fh);
	}
}

/* Once DATA's bytes are read, its padding is skipped, then its end. */
static void
data_bytes_read(struct h2_conn *h)
{
	if (h->left != h->pad)
		return;
	if (h->pad > 0)
		h->in = H2_IN_SKIP;
	else
		data_end(h);
}

static void
gathered(struct h2_conn *h, const uint8_t *p)
{
	h->in = H2_IN_HEAD;
	on_frame[h->ftype](h, p);
}

/* Reads frames from data, all of it unless the connection failed. */
static void
read_frames(struct h2_conn *h, const uint8_t *data, uint32_t len)
{
	const uint8_t *p = data, *end = data + len;
	struct http_mem *m = http_conn_mem(h->c);

	while (p < end && !h->failed) {
		uint32_t avail = (uint32_t)(end - p), n;

		switch (h->in) {
		case H2_IN_PREFACE:
			n = RTE_MIN(avail, (uint32_t)H2_PREFACE_LEN - h->left);
			if (memcmp(p, &H2_PREFACE[h->left], n) != 0) {
				h2_conn_error(h, H2_PROTOCOL_ERROR);
				break;
			}
			h->left += n;
			p += n;
			if (h->left == H2_PREFACE_LEN)
				h->in = H2_IN_HEAD;
			break;
		case H2_IN_HEAD:
			if (h->fh_got == 0 && avail >= H2_FRAME_HEADER) {
				frame_begin(h, p);
				p += H2_FRAME_HEADER;
				avail -= H2_FRAME_HEADER;
				/* A whole payload at hand is read in place. */
				if (h->in == H2_IN_GATHER && !h->failed &&
						avail >= h->flen) {
					gathered(h, p);
					p += h->flen;
				}
				break;
			}
			n = RTE_MIN(avail, (uint32_t)H2_FRAME_HEADER - h->fh_got);
			memcpy(h->fh + h->fh_got, p, n);
			h->fh_got = (uint8_t)(h->fh_got + n);
			p += n;
			if (h->fh_got == H2_FRAME_HEADER) {
				h->fh_got = 0;
				frame_begin(h, h->fh);
			}
			break;
		case H2_IN_GATHER:
			if (h->gbuf == NULL) {
				h->gbuf = http_mem_alloc(m, H2_DEFAULT_FRAME);
				if (h->gbuf == NULL) {
					h2_conn_error(h, H2_INTERNAL_ERROR);
					break;
				}
			}
			n = RTE_MIN(avail, h->left);
			memcpy(h->gbuf + (h->flen - h->left), p, n);
			h->left -= n;
			p += n;
			if (h->left == 0) {
				uint8_t *g = h->gbuf;

				h->gbuf = NULL;
				gathered(h, g);
				http_mem_free(m, g);
			}
			break;
		case H2_IN_PADLEN:
			h->pad = *p++;
			h->left--;
			if (h->pad > h->left) {
				h2_conn_error(h, H2_PROTOCOL_ERROR);	/* 6.1 */
				break;
			}
			h->in = H2_IN_DATA;
			data_bytes_read(h);
			break;
		case H2_IN_DATA:
			n = RTE_MIN(avail, h->left - h->pad);
			if (h->data_st != NULL)
				h2_data(h, h->data_st, p, n);
			else
				h2_consumed(h, NULL, n);
			h->left -= n;
			p += n;
			data_bytes_read(h);
			break;
		case H2_IN_SKIP:
			n = RTE_MIN(avail, h->left);
			h->left -= n;
			p += n;
			if (h->left > 0)
				break;
			if (h->ftype == H2_DATA)
				data_end(h);
			else
				h->in = H2_IN_HEAD;
			break;
		}
	}
}

/* Protocol table ------------------------------------------------------------ */

static uint32_t
h2_recv(struct http_conn *c, const uint8_t *data, uint32_t len)
{
	struct h2_conn *h = c->p;

	if (!h->failed) {
		h->busy = true;
		read_frames(h, data, len);
		h->busy = false;
	}
	if (!h2_flush(h))
		http_conn_close(c);
	return len;
}

/* Whether anything waits to go out that can: DATA the connection's
 * window holds back waits for a WINDOW_UPDATE, which a client that has
 * closed will never send. */
static bool
wants_write(const struct h2_conn *h)
{
	return h->out_len > 0 || h->hq_head != NULL ||
		(h->dq_head != NULL && h->send_window > 0);
}

/* Once the peer has closed, the connection closes when what is queued is
 * out: closing amid a frame the transport took only part of would leave
 * the client that part, a frame cut short. (Upgraded and still waiting
 * for the client's preface, it has nothing it may send.) */
static void
h2_writable(struct http_conn *c)
{
	struct h2_conn *h = c->p;

	if (!h2_flush(h) || (c->peer_closed && (h->hold || !wants_write(h))))
		http_conn_close(c);
}

static void
h2_peer_closed(struct http_conn *c)
{
	h2_writable(c);
}

/* Graceful shutdown: GOAWAY with the last stream taken; streams in flight
 * finish, new ones are refused, and the connection closes when the last
 * one ends. */
static void
h2_drain(struct http_conn *c)
{
	struct h2_conn *h = c->p;
	uint8_t p[8];

	if (h->goaway_last < 0 && !h->failed) {
		h->goaway_last = h->max_id;
		h2_put32(p, (uint32_t)h->max_id);
		h2_put32(p + 4, H2_NO_ERROR);
		if (h2_out_frame(h, H2_GOAWAY, 0, 0, p, 8, true))
			count_out(h, h2_stats(h)->h2_goaways_out, H2_NO_ERROR);
	}
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
	h->busy = true;		/* nothing more is sent */
	for (st = h->streams; st != NULL; st = st->next)
		if (h2_body_unfinished(st))
			h2_tell(h, st);
	h2_tell_readers(h);
	session_free(h);
}

void
h2_idle_from(struct h2_conn *h)
{
	uint32_t ka = h->c->srv->conf.keepalive_timeout_ms;

	if (ka == 0 || h->c->closing)
		return;		/* (closing: its streams go as it is freed) */
	h->idle_since_ms = http_conn_now(h->c);
	http_conn_deadline(h->c, h->idle_since_ms + ka + 1);
}

/* Stalled bodies are cut (408); a connection with no stream for
 * keepalive_timeout_ms is ended as a drain ends it (GOAWAY). */
static uint64_t
h2_timeout(struct http_conn *c, uint64_t now_ms)
{
	struct h2_conn *h = c->p;
	uint32_t ka = c->srv->conf.keepalive_timeout_ms;
	uint64_t next = h2_bodies_overdue(h, now_ms);

	if (ka != 0 && h->streams == NULL && h->goaway_last < 0) {
		uint64_t at = h->idle_since_ms + ka + 1;

		if (at <= now_ms) {
			http_conn_stats(c)->idle_closes++;
			h2_drain(c);
			return 0;
		}
		if (next == 0 || at < next)
			next = at;
	}
	if (!h2_flush(h))
		http_conn_close(c);
	return next;
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
	.timeout = h2_timeout,
	.free = h2_free,
};
