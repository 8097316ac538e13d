/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP/2 on a client connection (h2c with prior knowledge, or h2 as TLS's
 * ALPN chose), with nghttp2's client session: up to -m streams at once,
 * each a request whose answer is checked when its stream closes. Frames go out through
 * the connection's transport from nghttp2's send callback.
 */
#include <stdlib.h>
#include <string.h>

#include <nghttp2/nghttp2.h>

#include "digest.h"
#include "load.h"

#define H2_WINDOW (16u << 20)		/* per stream */
#define H2_CONN_WINDOW (1u << 30)

/* A stream: one request. */
struct h2_stream {
	uint64_t due_tsc;
	uint32_t url;
	uint32_t body_sent;
	int status;
	int64_t content_length;
	uint64_t body_len;
	bool in_use;
};

struct h2_state {
	nghttp2_session *session;
	uint32_t nb_free;
	uint32_t *free;		/* free stream slots */
	struct digest **digests;	/* --expect-sha256: a context per slot */
	struct h2_stream streams[];
};

static nghttp2_session_callbacks *callbacks;
/* No HTTP messaging checks in nghttp2 (field names and values, lengths):
 * they were a tenth of the client's time, and the answer's status, length
 * and digest are checked here, against what the run expects. */
static nghttp2_option *options;

static ssize_t
send_cb(nghttp2_session *session, const uint8_t *data, size_t len, int flags,
		void *user_data)
{
	struct load_conn *c = user_data;
	uint32_t n = c->tr->write(c, data, (uint32_t)RTE_MIN(len,
			(size_t)UINT32_MAX));

	(void)session;
	(void)flags;
	return n == 0 ? NGHTTP2_ERR_WOULDBLOCK : (ssize_t)n;
}

static struct h2_stream *
stream_of(nghttp2_session *session, int32_t id)
{
	return nghttp2_session_get_stream_user_data(session, id);
}

static int
on_header(nghttp2_session *session, const nghttp2_frame *frame,
		const uint8_t *name, size_t namelen, const uint8_t *value,
		size_t valuelen, uint8_t flags, void *user_data)
{
	struct h2_stream *st = stream_of(session, frame->hd.stream_id);
	char num[24];

	(void)flags;
	(void)user_data;
	if (st == NULL || frame->hd.type != NGHTTP2_HEADERS || valuelen >=
			sizeof(num))
		return 0;
	memcpy(num, value, valuelen);
	num[valuelen] = '\0';
	if (namelen == 7 && memcmp(name, ":status", 7) == 0)
		st->status = atoi(num);
	else if (namelen == 14 && memcmp(name, "content-length", 14) == 0)
		st->content_length = strtoll(num, NULL, 10);
	return 0;
}

static int
on_data(nghttp2_session *session, uint8_t flags, int32_t stream_id,
		const uint8_t *data, size_t len, void *user_data)
{
	struct load_conn *c = user_data;
	struct h2_state *s = c->pstate;
	struct h2_stream *st = stream_of(session, stream_id);

	(void)flags;
	c->w->stats.body_bytes += len;
	if (st == NULL)
		return 0;
	st->body_len += len;
	if (s->digests != NULL)
		digest_update(s->digests[st - s->streams], data, len);
	return 0;
}

static int
on_stream_close(nghttp2_session *session, int32_t stream_id,
		uint32_t error_code, void *user_data)
{
	struct load_conn *c = user_data;
	struct h2_state *s = c->pstate;
	struct h2_stream *st = stream_of(session, stream_id);
	uint8_t sum[32];

	if (st == NULL || !st->in_use)
		return 0;
	st->in_use = false;
	s->free[s->nb_free++] = (uint32_t)(st - s->streams);
	if (error_code != NGHTTP2_NO_ERROR || st->status == 0) {
		conn_request_lost(c, LOAD_ERR_reset);
	} else {
		struct load_req_end e = {
			.due_tsc = st->due_tsc,
			.status = st->status,
			.body_len = st->body_len,
			.content_length = st->content_length,
		};

		if (s->digests != NULL && digest_end(s->digests[st -
				s->streams], sum) == 0)
			e.digest = sum;
		conn_answered(c, &e);
	}
	return 0;
}

static int
on_frame_recv(nghttp2_session *session, const nghttp2_frame *frame,
		void *user_data)
{
	struct load_conn *c = user_data;

	(void)session;
	/* The server goes away: its streams end, nothing new goes there. */
	if (frame->hd.type == NGHTTP2_GOAWAY)
		c->retire = true;
	return 0;
}

static int
callbacks_init(void)
{
	if (callbacks != NULL)
		return 0;
	if (nghttp2_option_new(&options) != 0)
		return -1;
	nghttp2_option_set_no_http_messaging(options, 1);
	if (nghttp2_session_callbacks_new(&callbacks) != 0)
		return -1;
	nghttp2_session_callbacks_set_send_callback(callbacks, send_cb);
	nghttp2_session_callbacks_set_on_header_callback(callbacks, on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks,
			on_data);
	nghttp2_session_callbacks_set_on_stream_close_callback(callbacks,
			on_stream_close);
	nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks,
			on_frame_recv);
	return 0;
}

static void h2_fini(struct load_conn *c);

static int
h2_start(struct load_conn *c)
{
	const struct load_conf *conf = conn_conf(c);
	nghttp2_settings_entry iv[] = {
		{ NGHTTP2_SETTINGS_ENABLE_PUSH, 0 },
		{ NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, H2_WINDOW },
		{ NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 0 },
	};
	struct h2_state *s;
	uint32_t i;

	if (callbacks_init() != 0)
		return -1;
	s = calloc(1, sizeof(*s) + conf->depth * sizeof(s->streams[0]));
	if (s == NULL)
		return -1;
	c->pstate = s;
	s->free = calloc(conf->depth, sizeof(*s->free));
	if (s->free == NULL ||
			nghttp2_session_client_new2(&s->session, callbacks, c,
				options) != 0)
		goto fail;
	for (i = conf->depth; i > 0; i--)
		s->free[s->nb_free++] = i - 1;
	if (conf->check_digest) {
		s->digests = calloc(conf->depth, sizeof(*s->digests));
		if (s->digests == NULL)
			goto fail;
		for (i = 0; i < conf->depth; i++)
			if ((s->digests[i] = digest_new()) == NULL)
				goto fail;
	}
	if (nghttp2_submit_settings(s->session, NGHTTP2_FLAG_NONE, iv,
			RTE_DIM(iv)) != 0 ||
			nghttp2_session_set_local_window_size(s->session,
			NGHTTP2_FLAG_NONE, 0, H2_CONN_WINDOW) != 0)
		goto fail;
	return 0;
fail:
	h2_fini(c);
	return -1;
}

/* A request body from its URL's, as the windows take it. */
static ssize_t
body_read(nghttp2_session *session, int32_t stream_id, uint8_t *buf,
		size_t len, uint32_t *flags, nghttp2_data_source *source,
		void *user_data)
{
	struct load_conn *c = user_data;
	struct h2_stream *st = source->ptr;
	const struct load_url *u = &conn_conf(c)->urls[st->url];
	size_t n = RTE_MIN(len, (size_t)(u->body_len - st->body_sent));

	(void)session;
	(void)stream_id;
	memcpy(buf, u->body + st->body_sent, n);
	st->body_sent += (uint32_t)n;
	if (st->body_sent == u->body_len)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

#define NV(n, v, vl) { (uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, (vl), \
	NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE }

static int
h2_send(struct load_conn *c, uint64_t seq, uint64_t due_tsc)
{
	const struct load_conf *conf = conn_conf(c);
	struct h2_state *s = c->pstate;
	uint32_t url = (uint32_t)(seq % conf->nb_urls);
	const struct load_url *u = &conf->urls[url];
	char clen[24];
	nghttp2_nv nva[5] = {
		NV(":method", u->method, strlen(u->method)),
		NV(":scheme", conf->tls ? "https" : "http", conf->tls ? 5 : 4),
		NV(":authority", conf->authority, strlen(conf->authority)),
		NV(":path", u->path, strlen(u->path)),
		/* clen is gone by the time the frame is written: copied */
		{ (uint8_t *)"content-length", (uint8_t *)clen, 14, 0,
			NGHTTP2_NV_FLAG_NO_COPY_NAME },
	};
	nghttp2_data_provider prd;
	struct h2_stream *st;
	int32_t id;

	if (s->nb_free == 0)
		return -1;
	st = &s->streams[s->free[s->nb_free - 1]];
	*st = (struct h2_stream){ .due_tsc = due_tsc, .url = url,
		.content_length = -1, .in_use = true };
	if (s->digests != NULL)
		digest_begin(s->digests[st - s->streams]);
	nva[4].valuelen = (size_t)snprintf(clen, sizeof(clen), "%u",
			u->body_len);
	prd.source.ptr = st;
	prd.read_callback = body_read;
	id = nghttp2_submit_request(s->session, NULL, nva,
			u->body != NULL ? 5 : 4, u->body != NULL ? &prd : NULL,
			st);
	if (id < 0) {
		st->in_use = false;
		return -1;
	}
	s->nb_free--;
	return 0;
}

static int
h2_recv(struct load_conn *c, const uint8_t *p, uint32_t n)
{
	struct h2_state *s = c->pstate;
	ssize_t rc = nghttp2_session_mem_recv(s->session, p, n);

	return rc < 0 ? -1 : 0;
}

static void
h2_flush(struct load_conn *c)
{
	struct h2_state *s = c->pstate;

	if (nghttp2_session_send(s->session) != 0)
		conn_fail(c, LOAD_ERR_protocol);
}

static int
h2_peer_closed(struct load_conn *c)
{
	(void)c;
	return 0;	/* streams still open are lost: the caller counts */
}

static void
h2_fini(struct load_conn *c)
{
	const struct load_conf *conf = conn_conf(c);
	struct h2_state *s = c->pstate;
	uint32_t i;

	if (s == NULL)
		return;
	nghttp2_session_del(s->session);
	if (s->digests != NULL)
		for (i = 0; i < conf->depth; i++)
			digest_free(s->digests[i]);
	free(s->digests);
	free(s->free);
	free(s);
	c->pstate = NULL;
}

const struct load_proto load_h2 = {
	.start = h2_start,
	.send = h2_send,
	.recv = h2_recv,
	.flush = h2_flush,
	.peer_closed = h2_peer_closed,
	.fini = h2_fini,
};
