/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP/1.1 answers: the pipeline that keeps them in request order, the
 * head serialization, and the pump that queues their bodies (bytes in
 * memory, or a source read as the send queue has room).
 */
#include <stdio.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>

#include "http1_conn.h"
#include "tcp.h"

#define CHUNKED_LEN UINT64_MAX	/* write_head(): Transfer-Encoding: chunked */
#define NO_BODY_LEN (UINT64_MAX - 1)	/* write_head(): no framing (204; or
					 * HTTP/1.0, the close ends the body) */

static void
put(char *buf, size_t *n, const char *p, size_t len)
{
	memcpy(buf + *n, p, len);
	*n += len;
}

/* Queues the status line and headers; the body follows from pump(). The
 * caller checked HEAD_RESERVE of send space. */
static void
write_head(struct h1 *h, const struct http_answer *a, uint64_t length)
{
#define SERVER_DATE "Server: ewyk/" EWYK_VERSION "\r\nDate: "
	static const char server[] = SERVER_DATE;
	/* most answers: their first lines in one piece */
	static const char ok[] = "HTTP/1.1 200 OK\r\n" SERVER_DATE;
	bool last = h->close_after && h->pipe_head == h->pipe_tail;
	const char *reason, *date;
	char head[HEAD_MAX];
	size_t n = 0;
	uint32_t date_len;

	/* status line (reasons are under 40), Server and Date, framing */
	const char *alt = http_conn_alt_svc(h->c);

	_Static_assert(16 + 40 + sizeof(server) + 40 + 40 + 11 +
			HTTP_ALT_SVC_MAX + 41 + 2 <= HEAD_FIXED_MAX,
			"the fixed part of a head outgrew HEAD_FIXED_MAX");
	if (a->status == 200) {
		put(head, &n, ok, sizeof(ok) - 1);
	} else {
		reason = http_reason(a->status);
		put(head, &n, "HTTP/1.1 ", 9);
		n += http_fmt_u64(head + n, (uint64_t)a->status % 1000);
		put(head, &n, " ", 1);
		put(head, &n, reason, RTE_MIN(strlen(reason), (size_t)39));
		put(head, &n, "\r\n", 2);
		put(head, &n, server, sizeof(server) - 1);
	}
	date = http_conn_date(h->c, &date_len);
	put(head, &n, date, RTE_MIN(date_len, 39u));
	put(head, &n, "\r\n", 2);
	if (length == CHUNKED_LEN) {
		put(head, &n, "Transfer-Encoding: chunked\r\n", 28);
	} else if (length != NO_BODY_LEN) {
		put(head, &n, "Content-Length: ", 16);
		n += http_fmt_u64(head + n, length);
		put(head, &n, "\r\n", 2);
	}
	if (alt != NULL) {
		put(head, &n, "Alt-Svc: ", 9);
		put(head, &n, alt, strnlen(alt, HTTP_ALT_SVC_MAX));
		put(head, &n, "\r\n", 2);
	}
	put(head, &n, a->hbuf, a->hused);	/* the fields, framed */
	/* A tunnel's 101 is its connection's last answer: the connection
	 * is the tunnel's from now. */
	if (last && a->status == 101)
		put(head, &n, "Connection: Upgrade\r\nUpgrade: websocket\r\n",
				41);
	else if (last)
		put(head, &n, "Connection: close\r\n", 19);
	put(head, &n, "\r\n", 2);
	http_conn_write(h->c, head, (uint32_t)n);
	http_conn_count_answer(h->c, a->status, 1);
}

void
h1_write_error(struct h1 *h, int status, bool head_only, const char *allow)
{
	struct http_answer a;

	http_answer_error(&a, status, allow);
	write_head(h, &a, a.len);
	if (!head_only)
		http_conn_stats(h->c)->body_bytes_out +=
			http_conn_write(h->c, a.body, (uint32_t)a.len);
}

void
h1_refuse(struct h1 *h, int status, bool head_only, const char *allow)
{
	struct pipe_slot *ps;

	/* Written now when it is its turn and the head fits (else queued,
	 * written once the send queue has room). */
	if (h1_owed(h) == 0 && http_conn_space(h->c) >= HEAD_RESERVE) {
		h1_write_error(h, status, head_only, allow);
		return;
	}
	ps = &h->pipe[h->pipe_tail++ % HTTP1_PIPELINE];
	ps->state = PIPE_REFUSED;
	ps->status = (uint16_t)status;
	ps->head_only = head_only;
	snprintf(ps->allow, sizeof(ps->allow), "%s", allow != NULL ? allow : "");
}

/* Queues as much of the pending body as the send queue takes: lent to
 * the transport where the answer can hold its bytes for it (a static
 * file's, large enough to be worth it: h1_start_answer()), else copied. */
static void
pump(struct h1 *h)
{
	const struct http_answer *a = h->writing;

	while (h->body_left > 0) {
		uint32_t chunk = h->body_left > UINT32_MAX ? UINT32_MAX :
			(uint32_t)h->body_left;
		uint32_t n = h->lend ?
			http_conn_write_ref(h->c, h->body, chunk,
			&(struct tcp_ref){ a->hold, a->done, a->done_arg }) :
			http_conn_write(h->c, h->body, chunk);

		if (n == 0)
			return;
		h->body += n;
		h->body_left -= n;
		http_conn_stats(h->c)->body_bytes_out += n;
	}
}

/* The reader's answer is out: a body it left unread is skipped, and the
 * connection ends after it; a tunnel's client bytes have nobody to go
 * to, and the close follows now, not after the client's own. */
static __rte_noinline void
reader_answered(struct h1 *h)
{
	h->sink_writing = false;
	if (h->sink && http1_body_reading(&h->req))
		h->close_after = true;
	if (h->sink && h->req.framing == HTTP1_BODY_CLOSE) {
		http1_body_stop(&h->req);
		h->in_len = 0;
	}
	h->sink = false;
}

void
h1_done_writing(struct h1 *h)
{
	struct http_answer *a = h->writing;

	h->writing = NULL;
	if (unlikely(h->sink_writing))
		reader_answered(h);
	http_conn_release(h->c, a);
}

enum pumped {
	PUMP_CUT = -1,		/* the connection is aborted: h is gone */
	PUMP_WAIT,		/* for send space, or for the source */
	PUMP_DONE,		/* all queued, and released */
};

/* Streams a dispatched answer's source into the send queue. */
static enum pumped
pump_answer(struct h1 *h)
{
	struct http_answer *a = h->writing;
	bool chunked = h->stream_left < 0 && !h->stream_raw;
	/* A chunk is framed in place, around the bytes read. */
	size_t framing = chunked ? HTTP1_CHUNK_FRAMING : 0;

	while (a->kind == HTTP_BODY_STREAM && h->stream_left != 0) {
		uint32_t room = http_conn_space(h->c);
		size_t cap, len;
		uint8_t *buf = http_conn_scratch(h->c, &cap), *out;
		ssize_t n;

		if (room < framing + 1024)
			return PUMP_WAIT;	/* resumed when space is freed */
		cap = RTE_MIN(cap, (size_t)room) - framing;
		if (chunked)
			buf += HTTP1_CHUNK_HEAD_MAX;
		else
			cap = RTE_MIN(cap, (size_t)h->stream_left);
		n = a->src.read(a->src.arg, buf, cap);
		if (n == HTTP_SOURCE_AGAIN)
			return PUMP_WAIT;	/* resumed by http_server_resume() */
		/* The source failed, or ended short of its length: the client
		 * must not take a cut body for whole. */
		if (n < 0 || (size_t)n > cap || (n == 0 && h->stream_left > 0))
			goto cut;
		if (n == 0) {
			if (chunked && http_conn_write(h->c, HTTP1_LAST_CHUNK,
					HTTP1_LAST_CHUNK_LEN) != HTTP1_LAST_CHUNK_LEN)
				goto cut;
			break;
		}
		out = buf;
		len = (size_t)n;
		if (chunked)
			out = http1_chunk_frame(buf, len, &len);
		/* A short write means the mbufs ran out: the framing is lost. */
		if (http_conn_write(h->c, out, (uint32_t)len) != len)
			goto cut;
		if (h->stream_left > 0)
			h->stream_left -= n;
		http_conn_stats(h->c)->body_bytes_out += (uint64_t)n;
	}
	h1_done_writing(h);
	return PUMP_DONE;
cut:
	/* Not a malformed body of the client's (body_errors): a request
	 * body that broke was counted where it was read. */
	h1_done_writing(h);
	http_conn_abort(h->c);	/* frees h */
	return PUMP_CUT;
}

/* The answer owed to the oldest request is ready: its turn. The caller
 * checked HEAD_RESERVE of send space. */
static void
write_slot(struct h1 *h, struct pipe_slot *ps)
{
	struct http_answer *a = ps->ans;
	uint64_t length;

	h->pipe_head++;
	if (ps->state == PIPE_REFUSED) {
		h1_write_error(h, ps->status, ps->head_only, ps->allow);
		return;
	}
	ps->ans = NULL;
	if (a->kind == HTTP_BODY_STREAM)
		length = a->src.length >= 0 ? (uint64_t)a->src.length :
			ps->http10 ? NO_BODY_LEN : CHUNKED_LEN;
	else
		length = a->len;
	/* 204 and 304 never carry a body (RFC 9110 15.3.5, 15.4.5); a 304
	 * may still say the length a 200 would have. */
	if (a->status == 204)
		length = NO_BODY_LEN;
	write_head(h, a, length);
	h->sink_writing = h->sink && h->pipe_head - 1 == h->sink_seq;
	h->stream_left = 0;
	h->lend = false;
	h->stream_raw = ps->http10;
	if (!ps->head_only && a->status != 204 && a->status != 304) {
		if (a->kind == HTTP_BODY_STREAM) {
			h->stream_left = a->src.length;
		} else if (a->kind == HTTP_BODY_BYTES) {
			h->body = a->body;
			h->body_left = a->len;
			/* Below TCP_REF_MIN the transport would copy it anyway. */
			h->lend = a->hold != NULL && a->len >= TCP_REF_MIN;
		}
	}
	h->writing = a;
	if (a->kind != HTTP_BODY_STREAM && http_answer_detachable(a))
		h1_done_writing(h);	/* the body alone is still needed */
}

/* The body under way is the request intake's (h1_body_intake()): it may
 * end the body, or ready an answer, and then this loop looks again. */
bool
h1_write_owed(struct h1 *h)
{
	for (;;) {
		struct pipe_slot *ps;

		pump(h);
		if (h->body_left > 0)
			return false;	/* resumed when space is freed */
		if (h->writing != NULL) {
			enum pumped p = pump_answer(h);

			if (p == PUMP_CUT)
				return false;
			if (p == PUMP_WAIT) {
				/* A handler that writes its answer as it reads
				 * its body (a fiber doing both) may wait for
				 * the body: its reader must hear of it. */
				if (h->sink_writing)
					h1_tell_reader(h);
				return false;
			}
		}
		/* A request body under way (skipped after its refusal, or
		 * read by its reader) does not hold back the answers owed. */
		ps = h1_ready_slot(h);
		if (ps != NULL) {
			if (http_conn_space(h->c) < HEAD_RESERVE)
				return false;
			write_slot(h, ps);
			continue;
		}
		if (!http1_body_reading(&h->req))
			return true;
		if (!h1_body_intake(h))
			return false;
	}
}
