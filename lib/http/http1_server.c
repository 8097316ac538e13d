/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <rte_malloc.h>

#include "h2_server.h"
#include "http_cond.h"
#include "http1_chunked.h"
#include "http1_parse.h"
#include "http1_server.h"
#include "net_stack.h"
#include "tcp.h"

#define HEAD_RESERVE 2048	/* send space needed before starting an answer */
#define CHUNK_FRAMING 32	/* "%x\r\n" + "\r\n" around an echoed chunk */
#define DISCARD_MAX (1 << 20)	/* a refused body larger than this closes */
#define CHUNKED_LEN UINT64_MAX	/* write_head(): Transfer-Encoding: chunked */
#define NO_BODY_LEN (UINT64_MAX - 1)	/* write_head(): no framing (204; or
					 * HTTP/1.0, the close ends the body) */

/* A pipelined request's answer, in request order. */
enum pipe_state {
	PIPE_WAITING,	/* its handler is still at work */
	PIPE_READY,	/* ans is ready to go */
	PIPE_REFUSED,	/* answered with status at once, but not yet its turn */
};

struct pipe_slot {
	uint8_t state;
	bool head_only;
	bool http10;			/* no chunked coding for this client */
	uint16_t status;		/* PIPE_REFUSED */
	struct http_answer *ans;	/* PIPE_READY */
	char allow[48];			/* PIPE_REFUSED with 405 */
};

/* What answer() did with a request. */
enum took {
	TOOK_HEAD,		/* the head; the body (if any) is read after */
	TOOK_HEAD_AND_BODY,	/* both: a dispatched handler has the body */
	TOOK_NOTHING,		/* its turn has not come: answers keep order */
};

enum req_body {
	REQ_BODY_NONE,
	REQ_BODY_LENGTH,
	REQ_BODY_CHUNKED,
};

struct http1_conn {
	struct http1_conn *free_next;
	struct tcp_conn *tcp;
	const uint8_t *body;	/* answer body still to queue */
	uint64_t body_left;
	uint8_t req_body;	/* how the request body is framed */
	bool echo;		/* the request body is the answer's body */
	bool echo_chunked;	/* ... sent in chunks */
	uint64_t req_left;	/* REQ_BODY_LENGTH: bytes still to read */
	struct chunked chunk;	/* REQ_BODY_CHUNKED: decoder */
	bool close_after;	/* close once the answer is queued */
	uint32_t pipe_head;	/* seq of the oldest answer owed */
	uint32_t pipe_tail;	/* seq the next dispatched request gets */
	struct pipe_slot pipe[HTTP1_PIPELINE];
	struct http_answer *writing;	/* a dispatched answer going out */
	int64_t stream_left;	/* of a streamed body; -1: until its end */
	bool stream_raw;	/* HTTP/1.0: no chunks, the close ends it */
	bool continue_sent;	/* "100 Continue" went for the current request */
	bool fresh;		/* nothing parsed yet: may still become HTTP/2 */
	uint64_t head_start_ms;	/* first byte of a request head not yet whole */
	uint64_t idle_since_ms;	/* nothing asked, nothing owed, since */
	struct h2_conn *h2;	/* prior-knowledge HTTP/2 (h2c) session */
	bool peer_closed;
	bool closing;
	uint32_t in_len;
	char in[HTTP1_IN_MAX];
};

/* RFC 9110 6.6.1: an origin server with a clock sends Date. Formatted once
 * a second per shard. */
static const char *
date_now(struct http1_server *s)
{
	time_t now = time(NULL);
	struct tm tm;

	if ((uint64_t)now != s->date_sec) {
		s->date_sec = (uint64_t)now;
		gmtime_r(&now, &tm);
		strftime(s->date, sizeof(s->date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
	}
	return s->date;
}

static void
count_status(struct http1_server *s, int status)
{
	s->stats->requests++;
	s->stats->by_status[http_status_slot(status)]++;
}

/* Queues the status line and headers; the body follows from pump(). */
static void
write_head(struct http1_server *s, struct http1_conn *hc, int status,
		const char *ctype, uint64_t length, const char *extra)
{
	char head[HEAD_RESERVE];
	char framing[48];
	bool last = hc->close_after && hc->pipe_head == hc->pipe_tail;
	int n;

	if (length == NO_BODY_LEN)
		framing[0] = '\0';
	else if (length == CHUNKED_LEN)
		snprintf(framing, sizeof(framing), "Transfer-Encoding: chunked\r\n");
	else
		snprintf(framing, sizeof(framing), "Content-Length: %llu\r\n",
				(unsigned long long)length);
	n = snprintf(head, sizeof(head),
			"HTTP/1.1 %d %s\r\nServer: ewyk/" EWYK_VERSION "\r\n"
			"Date: %s\r\n%s%s%s%s%s%s\r\n",
			status, http_reason(status), date_now(s), framing,
			ctype != NULL ? "Content-Type: " : "",
			ctype != NULL ? ctype : "", ctype != NULL ? "\r\n" : "",
			extra != NULL ? extra : "",
			last ? "Connection: close\r\n" : "");
	if (n < 0 || n >= (int)sizeof(head))
		n = 0;	/* cannot happen with our header set */
	/* HEAD_RESERVE of space was checked before the request was taken. */
	tcp_write(s->ns, hc->tcp, head, (uint32_t)n);
	count_status(s, status);
}

static void
answer_error(struct http1_server *s, struct http1_conn *hc, int status,
		bool head_only, const char *extra)
{
	char body[64];
	int n = snprintf(body, sizeof(body), "%d %s\n", status,
			http_reason(status));

	/* Head and this body fit in the HEAD_RESERVE checked beforehand. */
	write_head(s, hc, status, "text/plain; charset=utf-8", (uint64_t)n, extra);
	if (!head_only)
		tcp_write(s->ns, hc->tcp, body, (uint32_t)n);
}


static void answer_static(struct http1_server *s, struct http1_conn *hc,
		const struct http1_request *r);

/* POST or PUT /echo: the request body comes back as the answer's body,
 * streamed as it arrives (Content-Length in, Content-Length out; chunked
 * in, chunked out). */
static void
answer_echo(struct http1_server *s, struct http1_conn *hc,
		const struct http1_request *r)
{
	static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";

	if (r->method != HTTP_POST && r->method != HTTP_PUT) {
		answer_error(s, hc, 405, r->method == HTTP_HEAD,
				"Allow: POST, PUT\r\n");
		return;
	}
	/* gather_body() may have sent it already, while the body came. */
	if (r->expect_continue && !hc->continue_sent)
		tcp_write(s->ns, hc->tcp, cont, sizeof(cont) - 1);
	hc->echo = true;
	hc->echo_chunked = r->chunked;
	write_head(s, hc, 200, "application/octet-stream", r->chunked ?
			CHUNKED_LEN : (uint64_t)RTE_MAX(r->content_length, 0), NULL);
}

static bool
path_is(const struct http1_request *r, const char *p)
{
	return r->path.len == strlen(p) && memcmp(r->path.p, p, r->path.len) == 0;
}

/* Tells TCP the room the input buffer has now: its receive window. */
static void
push_rcv_space(struct http1_server *s, struct http1_conn *hc)
{
	uint32_t room = hc->h2 != NULL ? H2_RCV_SPACE :
		hc->closing ? HTTP1_IN_MAX : HTTP1_IN_MAX - hc->in_len;

	if (hc->tcp != NULL)
		tcp_set_rcv_space(s->ns, hc->tcp, room);
}

/* "Upgrade: h2c" on a GET or HEAD without a body (RFC 7540 3.2): 101, then
 * the connection is an HTTP/2 session answering the request on stream 1. */
static bool
upgrade_h2c(struct http1_server *s, struct http1_conn *hc,
		const struct http1_request *r)
{
	static const char switching[] = "HTTP/1.1 101 Switching Protocols\r\n"
		"Connection: Upgrade\r\nUpgrade: h2c\r\n\r\n";
	const struct http_str *up = http1_header(r, "upgrade");
	const struct http_str *settings = http1_header(r, "http2-settings");

	if (up == NULL || settings == NULL || !http_str_eq_nocase(*up, "h2c") ||
			(r->method != HTTP_GET && r->method != HTTP_HEAD) ||
			r->chunked || r->content_length > 0)
		return false;
	hc->h2 = h2_open_upgrade(s, hc->tcp, settings->p, settings->len, r);
	if (hc->h2 == NULL)
		return false;	/* bad settings: answer in HTTP/1.1 */
	s->stats->h2_conns++;
	/* The 101 must precede the session's first frames in the queue:
	 * h2_open_upgrade only submitted them; h2_flush sends them later. */
	tcp_write(s->ns, hc->tcp, switching, sizeof(switching) - 1);
	push_rcv_space(s, hc);
	return true;
}

static struct http_origin
origin(const struct http1_conn *hc, uint32_t stream, uint32_t seq)
{
	struct http_origin o = { 0, 0, stream, seq };

	tcp_conn_id(hc->tcp, &o.index, &o.gen);
	return o;
}

static uint32_t
pipe_len(const struct http1_conn *hc)
{
	return hc->pipe_tail - hc->pipe_head;
}

static void
refusal_headers(int status, const char *allow, char *buf, size_t cap)
{
	buf[0] = '\0';
	if (status == 503)
		snprintf(buf, cap, "Retry-After: 1\r\n");
	else if (allow != NULL && allow[0] != '\0')
		snprintf(buf, cap, "Allow: %s\r\n", allow);
}

/* An answer decided at once: written now, or queued behind the answers
 * still owed to earlier requests. */
static void
refuse(struct http1_server *s, struct http1_conn *hc, int status,
		bool head_only, const char *allow)
{
	struct pipe_slot *ps;
	char extra[64];

	if (pipe_len(hc) == 0) {
		refusal_headers(status, allow, extra, sizeof(extra));
		answer_error(s, hc, status, head_only, extra);
		return;
	}
	ps = &hc->pipe[hc->pipe_tail++ % HTTP1_PIPELINE];
	ps->state = PIPE_REFUSED;
	ps->status = (uint16_t)status;
	ps->head_only = head_only;
	snprintf(ps->allow, sizeof(ps->allow), "%s", allow != NULL ? allow : "");
}

/* Answers, hands to a dispatched handler, or (while answers are owed)
 * leaves a request that is answered inline for later. */
static enum took
answer(struct http1_server *s, struct http1_conn *hc,
		const struct http1_request *r)
{
	bool has_body = r->chunked || r->content_length > 0;
	bool head_only = r->method == HTTP_HEAD;
	bool owed = pipe_len(hc) > 0;
	char allow[48] = "";
	int taken;

	if (!owed && upgrade_h2c(s, hc, r))
		return TOOK_HEAD;
	taken = s->dispatch != NULL ? s->dispatch(s->dispatch_ctx, r, 1,
			origin(hc, 0, hc->pipe_tail), allow, sizeof(allow)) : 0;
	if (taken == 1) {
		struct pipe_slot *ps = &hc->pipe[hc->pipe_tail++ % HTTP1_PIPELINE];

		ps->state = PIPE_WAITING;
		ps->head_only = head_only;
		/* An HTTP/1.0 client knows no chunks: a body of unknown
		 * length ends with the connection, so this is its last. */
		ps->http10 = r->minor == 0;
		if (ps->http10)
			hc->close_after = true;
		ps->ans = NULL;
		if (r->body != NULL)
			return TOOK_HEAD_AND_BODY;
		if (has_body)
			hc->close_after = true;	/* not reading a body it left */
		return TOOK_HEAD;
	}
	if (taken == 0 && owed)
		return TOOK_NOTHING;
	if (taken > 1) {
		if (has_body && r->body == NULL)
			hc->close_after = true;	/* not reading a refused body */
		refuse(s, hc, taken, head_only, allow);
	} else if (path_is(r, "/echo")) {
		answer_echo(s, hc, r);
	} else {
		/* A body nobody wants: skip a small one, but do not wait for
		 * a large one or for one the client holds back until
		 * "100 Continue": close after the answer instead. */
		if (has_body && (r->expect_continue || r->chunked ||
				r->content_length > DISCARD_MAX))
			hc->close_after = true;
		answer_static(s, hc, r);
	}
	if (!has_body || (hc->close_after && !hc->echo))
		return TOOK_HEAD;
	hc->req_body = r->chunked ? REQ_BODY_CHUNKED : REQ_BODY_LENGTH;
	hc->req_left = r->chunked ? 0 : (uint64_t)r->content_length;
	chunked_init(&hc->chunk);
	return TOOK_HEAD;
}

/* A small body for a dispatched handler is gathered whole in the buffer
 * first. Returns false while it is still arriving. */
static bool
gather_body(struct http1_server *s, struct http1_conn *hc,
		struct http1_request *r, int head_len)
{
	static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";

	if (s->dispatch == NULL || r->chunked || r->content_length <= 0 ||
			r->content_length > EWYK_REQUEST_BODY_MAX ||
			head_len + r->content_length > HTTP1_IN_MAX)
		return true;
	if (hc->in_len < head_len + r->content_length) {
		/* An interim answer amid owed ones would be taken for
		 * theirs: "100 Continue" waits for its turn. */
		if (r->expect_continue && !hc->continue_sent &&
				pipe_len(hc) == 0) {
			tcp_write(s->ns, hc->tcp, cont, sizeof(cont) - 1);
			hc->continue_sent = true;
		}
		return false;
	}
	r->body = hc->in + head_len;
	r->body_len = (uint32_t)r->content_length;
	return true;
}


static void
answer_static(struct http1_server *s, struct http1_conn *hc,
		const struct http1_request *r)
{
	bool head_only = r->method == HTTP_HEAD;
	const struct www_file *f;
	uint64_t from, to;
	char extra[160];
	int range;

	if (r->method != HTTP_GET && r->method != HTTP_HEAD) {
		answer_error(s, hc, 405, false, "Allow: GET, HEAD\r\n");
		return;
	}
	f = s->www != NULL ? www_find(s->www, r->path.p, r->path.len) : NULL;
	if (f == NULL) {
		answer_error(s, hc, 404, head_only, NULL);
		return;
	}
	snprintf(extra, sizeof(extra), "ETag: %s\r\nAccept-Ranges: bytes\r\n",
			f->etag);
	if (http_etag_matches(r, f)) {
		/* 304 carries no body but may not lie about its length. */
		write_head(s, hc, 304, NULL, f->size, extra);
		return;
	}
	range = http_parse_range(r, f->size, &from, &to);
	if (range < 0) {
		snprintf(extra, sizeof(extra), "Content-Range: bytes */%llu\r\n",
				(unsigned long long)f->size);
		answer_error(s, hc, 416, head_only, extra);
		return;
	}
	if (range == 0) {
		from = 0;
		to = f->size - 1;
		write_head(s, hc, 200, f->content_type, f->size, extra);
	} else {
		snprintf(extra, sizeof(extra), "ETag: %s\r\nContent-Range: bytes "
				"%llu-%llu/%llu\r\n", f->etag, (unsigned long long)from,
				(unsigned long long)to, (unsigned long long)f->size);
		write_head(s, hc, 206, f->content_type, to - from + 1, extra);
	}
	if (!head_only && f->size > 0) {
		hc->body = f->data + from;
		hc->body_left = to - from + 1;
	}
}

/* Queues as much of the pending body as the send queue takes. */
static void
pump(struct http1_server *s, struct http1_conn *hc)
{
	while (hc->body_left > 0) {
		uint32_t chunk = hc->body_left > UINT32_MAX ? UINT32_MAX :
			(uint32_t)hc->body_left;
		uint32_t n = tcp_write(s->ns, hc->tcp, hc->body, chunk);

		if (n == 0)
			return;
		hc->body += n;
		hc->body_left -= n;
		s->stats->body_bytes_out += n;
	}
}

void
http1_server_release(struct http1_server *s, struct http_answer *a)
{
	http_answer_release(a);
	if (s->released != NULL)
		s->released(s->dispatch_ctx, a);
}

/* Streams a dispatched answer's source into the send queue. Returns
 * true once the answer is all queued (and released). */
static bool
pump_answer(struct http1_server *s, struct http1_conn *hc)
{
	struct http_answer *a = hc->writing;
	bool chunked = hc->stream_left < 0 && !hc->stream_raw;
	char frame[24];
	int fl;

	while (a->kind == HTTP_BODY_STREAM && hc->stream_left != 0) {
		uint32_t room = tcp_send_space(s->ns, hc->tcp);
		size_t cap = sizeof(s->scratch);
		ssize_t n;

		if (room < CHUNK_FRAMING + 1024)
			return false;	/* resumed by the sent callback */
		cap = RTE_MIN(cap, (size_t)(room - CHUNK_FRAMING));
		if (!chunked)
			cap = RTE_MIN(cap, (size_t)hc->stream_left);
		n = a->src.read(a->src.arg, s->scratch, cap);
		/* The source failed, or ended short of its length: the client
		 * must not take a cut body for whole. */
		if (n < 0 || (size_t)n > cap || (n == 0 && hc->stream_left > 0))
			goto cut;
		if (n == 0) {
			if (chunked && tcp_write(s->ns, hc->tcp, "0\r\n\r\n", 5) != 5)
				goto cut;
			break;
		}
		fl = chunked ? snprintf(frame, sizeof(frame), "%zx\r\n",
				(size_t)n) : 0;
		/* A short write means the mbufs ran out: the framing is lost. */
		if (tcp_write(s->ns, hc->tcp, frame, (uint32_t)fl) != (uint32_t)fl ||
				tcp_write(s->ns, hc->tcp, s->scratch, (uint32_t)n) !=
				(uint32_t)n || (chunked && tcp_write(s->ns, hc->tcp,
				"\r\n", 2) != 2))
			goto cut;
		if (hc->stream_left > 0)
			hc->stream_left -= n;
		s->stats->body_bytes_out += (uint64_t)n;
	}
	hc->writing = NULL;
	http1_server_release(s, a);
	return true;
cut:
	s->stats->body_errors++;
	hc->writing = NULL;
	http1_server_release(s, a);
	hc->closing = true;
	tcp_abort(s->ns, hc->tcp);	/* may free hc */
	return false;
}

/* The answer owed to the oldest request is ready: its turn. The caller
 * checked HEAD_RESERVE of send space. */
static void
write_slot(struct http1_server *s, struct http1_conn *hc,
		struct pipe_slot *ps)
{
	struct http_answer *a = ps->ans;
	/* name ": " value "\r\n" for each, and the NUL */
	char extra[EWYK_RESPONSE_HEADERS_MAX + 4 * HTTP_ANSWER_HEADERS + 1];
	uint32_t used = 0, i;
	uint64_t length;

	hc->pipe_head++;
	if (ps->state == PIPE_REFUSED) {
		refusal_headers(ps->status, ps->allow, extra, sizeof(extra));
		answer_error(s, hc, ps->status, ps->head_only, extra);
		return;
	}
	ps->ans = NULL;
	for (i = 0; i < a->nheaders; i++) {
		const struct http_answer_header *h = &a->h[i];

		used += (uint32_t)snprintf(extra + used, sizeof(extra) - used,
				"%.*s: %.*s\r\n", h->name_len, a->hbuf + h->name,
				h->value_len, a->hbuf + h->value);
	}
	extra[used] = '\0';
	if (a->kind == HTTP_BODY_STREAM)
		length = a->src.length >= 0 ? (uint64_t)a->src.length :
			ps->http10 ? NO_BODY_LEN : CHUNKED_LEN;
	else
		length = a->len;
	/* 204 and 304 never carry a body (RFC 9110 15.3.5, 15.4.5). */
	if (a->status == 204 || a->status == 304)
		length = a->status == 204 ? NO_BODY_LEN : length;
	write_head(s, hc, a->status, NULL, length, extra);
	hc->writing = a;
	hc->stream_left = 0;
	hc->stream_raw = ps->http10;
	if (ps->head_only || a->status == 204 || a->status == 304)
		return;
	if (a->kind == HTTP_BODY_STREAM) {
		hc->stream_left = a->src.length;
	} else {
		hc->body = a->body;
		hc->body_left = a->len;
	}
}

static void
consume(struct http1_server *s, struct http1_conn *hc, uint32_t n)
{
	memmove(hc->in, hc->in + n, hc->in_len - n);
	hc->in_len -= n;
	push_rcv_space(s, hc);
}

/* Body bytes of the request: echoed or dropped. The caller checked the
 * send space for echoes. */
static void
body_data(struct http1_server *s, struct http1_conn *hc, const char *p,
		uint32_t n)
{
	char frame[24];
	int fl;

	if (!hc->echo || n == 0)
		return;
	if (hc->echo_chunked) {
		fl = snprintf(frame, sizeof(frame), "%x\r\n", n);
		tcp_write(s->ns, hc->tcp, frame, (uint32_t)fl);
	}
	tcp_write(s->ns, hc->tcp, p, n);
	if (hc->echo_chunked)
		tcp_write(s->ns, hc->tcp, "\r\n", 2);
	s->stats->body_bytes_out += n;
}

static void
body_done(struct http1_server *s, struct http1_conn *hc)
{
	if (hc->echo && hc->echo_chunked)
		tcp_write(s->ns, hc->tcp, "0\r\n\r\n", 5);
	hc->req_body = REQ_BODY_NONE;
	hc->echo = false;
}

/* Reads the request body from the buffer. Returns false when it must wait
 * for input or, echoing, for send space. */
static bool
read_body(struct http1_server *s, struct http1_conn *hc)
{
	while (hc->req_body != REQ_BODY_NONE) {
		uint32_t room = UINT32_MAX, n;

		if (hc->echo) {
			room = tcp_send_space(s->ns, hc->tcp);
			if (room <= CHUNK_FRAMING)
				return false;
			room -= CHUNK_FRAMING;
		}
		if (hc->req_body == REQ_BODY_LENGTH) {
			if (hc->req_left == 0) {
				body_done(s, hc);
				break;
			}
			n = (uint32_t)RTE_MIN((uint64_t)RTE_MIN(hc->in_len, room),
					hc->req_left);
			if (n == 0)
				return false;
			body_data(s, hc, hc->in, n);
			consume(s, hc, n);
			hc->req_left -= n;
		} else {
			const char *d;
			size_t dl;
			long used = chunked_decode(&hc->chunk, hc->in,
					RTE_MIN(hc->in_len, room), &d, &dl);

			if (used < 0) {
				/* Broken framing after the answer began: all
				 * that is left is to cut the connection. */
				s->stats->body_errors++;
				tcp_abort(s->ns, hc->tcp);
				hc->closing = true;
				return false;
			}
			body_data(s, hc, d, (uint32_t)dl);
			consume(s, hc, (uint32_t)used);
			if (hc->chunk.state == CHUNK_DONE)
				body_done(s, hc);
			else if (used == 0)
				return false;
		}
	}
	return true;
}

static void
start_close(struct http1_server *s, struct http1_conn *hc)
{
	hc->closing = true;
	hc->in_len = 0;
	push_rcv_space(s, hc);
	tcp_close(s->ns, hc->tcp);
}

/* The client spoke the HTTP/2 preface (RFC 9113 3.3, prior knowledge):
 * the connection belongs to an nghttp2 session from now on. */
static void
start_h2(struct http1_server *s, struct http1_conn *hc)
{
	hc->fresh = false;
	hc->h2 = h2_open(s, hc->tcp);
	if (hc->h2 == NULL) {
		start_close(s, hc);
		return;
	}
	s->stats->h2_conns++;
	if (!h2_recv(hc->h2, (const uint8_t *)hc->in, hc->in_len))
		start_close(s, hc);
	hc->in_len = 0;
	push_rcv_space(s, hc);
}

/* Serves requests from the buffer until it runs dry or the send queue
 * fills; called on new data and when acknowledgements free send space. */
static void
serve(struct http1_server *s, struct http1_conn *hc)
{
	struct http1_request req;
	bool close_before;
	enum took took;
	int rc;

	if (hc->fresh && !hc->closing && hc->in_len > 0) {
		size_t n = RTE_MIN((size_t)hc->in_len, (size_t)H2_PREFACE_LEN);

		if (memcmp(hc->in, H2_PREFACE, n) == 0) {
			if (n < H2_PREFACE_LEN)
				return;		/* the preface is still arriving */
			start_h2(s, hc);
			return;
		}
		hc->fresh = false;
	}
	while (!hc->closing) {
		pump(s, hc);
		if (hc->body_left > 0)
			return;		/* resumed by the sent callback */
		if (hc->writing != NULL && !pump_answer(s, hc))
			return;
		if (hc->req_body != REQ_BODY_NONE) {
			if (!read_body(s, hc)) {
				if (hc->peer_closed && !hc->closing)
					start_close(s, hc);	/* body cut short */
				return;
			}
			continue;
		}
		if (pipe_len(hc) > 0) {
			struct pipe_slot *ps = &hc->pipe[hc->pipe_head %
				HTTP1_PIPELINE];

			if (ps->state != PIPE_WAITING) {
				if (tcp_send_space(s->ns, hc->tcp) < HEAD_RESERVE)
					return;
				write_slot(s, hc, ps);
				continue;
			}
			/* Bounded read-ahead: a full pipeline reads no more
			 * until its oldest answer is out. */
			if (hc->close_after || pipe_len(hc) == HTTP1_PIPELINE) {
				if (pipe_len(hc) == HTTP1_PIPELINE)
					s->stats->pipeline_full++;
				return;
			}
		} else if (hc->close_after) {
			start_close(s, hc);
			return;
		}
		if (tcp_send_space(s->ns, hc->tcp) < HEAD_RESERVE)
			return;
		rc = hc->in_len > 0 ? http1_parse_request(hc->in, hc->in_len, &req) : 0;
		if (rc == 0 && hc->in_len == 0 && pipe_len(hc) == 0)
			hc->idle_since_ms = net_now_ms(s->ns);
		if (rc == 0) {
			if (hc->in_len == HTTP1_IN_MAX) {
				hc->close_after = true;
				refuse(s, hc, http1_overflow_status(hc->in,
						hc->in_len), false, NULL);
				hc->in_len = 0;
				push_rcv_space(s, hc);
				continue;
			}
			if (hc->peer_closed && pipe_len(hc) == 0)
				start_close(s, hc);
			return;
		}
		if (rc < 0) {
			/* The framing is lost: answer and close. */
			hc->close_after = true;
			refuse(s, hc, -rc, false, NULL);
			hc->in_len = 0;
			push_rcv_space(s, hc);
			continue;
		}
		if (!gather_body(s, hc, &req, rc)) {
			if (hc->peer_closed && pipe_len(hc) == 0)
				start_close(s, hc);	/* the body never came */
			return;
		}
		close_before = hc->close_after;
		if (!req.keep_alive || s->draining)
			hc->close_after = true;
		took = answer(s, hc, &req);
		if (took == TOOK_NOTHING) {
			hc->close_after = close_before;
			return;		/* resumed when the owed answers are out */
		}
		s->stats->by_method[req.method]++;
		hc->continue_sent = false;
		/* The head is whole; a pipelined one after it starts now. */
		hc->head_start_ms = hc->in_len > (uint32_t)rc ? net_now_ms(s->ns) : 0;
		consume(s, hc, (uint32_t)rc + (took == TOOK_HEAD_AND_BODY ?
				req.body_len : 0));
		if (hc->h2 != NULL) {
			/* Upgraded: what follows (the client's preface) is
			 * HTTP/2. Frames wait for it: a client holds only so
			 * much behind a 101 it has not yet acted on. */
			if (hc->in_len > 0 && !h2_recv(hc->h2,
					(const uint8_t *)hc->in, hc->in_len))
				start_close(s, hc);
			hc->in_len = 0;
			return;
		}
	}
}

/* TCP callbacks ---------------------------------------------------------- */

static int
on_accepted(void *ctx, struct tcp_conn *c)
{
	struct http1_server *s = ctx;
	struct http1_conn *hc = s->free_list;

	if (hc == NULL) {
		s->stats->conns_refused++;
		return -1;
	}
	s->free_list = hc->free_next;
	memset(hc, 0, offsetof(struct http1_conn, in));
	hc->tcp = c;
	hc->fresh = true;
	hc->idle_since_ms = net_now_ms(s->ns);
	tcp_set_app(c, hc);
	push_rcv_space(s, hc);
	s->stats->conns_accepted++;
	return 0;
}

static uint32_t
on_recv(void *ctx, struct tcp_conn *c, const uint8_t *data, uint32_t len)
{
	struct http1_server *s = ctx;
	struct http1_conn *hc = tcp_app(c);
	uint32_t n;

	if (hc->closing)
		return len;	/* after our close, input is dropped */
	if (hc->h2 != NULL) {
		if (!h2_recv(hc->h2, data, len))
			start_close(s, hc);
		return len;
	}
	if (hc->in_len == 0 && hc->head_start_ms == 0)
		hc->head_start_ms = net_now_ms(s->ns);	/* a request begins */
	n = RTE_MIN(len, (uint32_t)(HTTP1_IN_MAX - hc->in_len));
	memcpy(hc->in + hc->in_len, data, n);
	hc->in_len += n;
	push_rcv_space(s, hc);
	serve(s, hc);
	return n;
}

static void
on_sent(void *ctx, struct tcp_conn *c)
{
	struct http1_conn *hc = tcp_app(c);

	if (hc->h2 != NULL) {
		if (!hc->closing && !h2_flush(hc->h2))
			start_close(ctx, hc);
		return;
	}
	serve(ctx, hc);
}

static void
on_peer_closed(void *ctx, struct tcp_conn *c)
{
	struct http1_conn *hc = tcp_app(c);

	hc->peer_closed = true;
	if (hc->h2 != NULL) {
		if (!hc->closing)
			start_close(ctx, hc);
		return;
	}
	serve(ctx, hc);
}

static void
on_closed(void *ctx, struct tcp_conn *c)
{
	struct http1_server *s = ctx;
	struct http1_conn *hc = tcp_app(c);
	uint32_t seq;

	/* Answers kept for their turn go back; those still with their
	 * handlers come back stale and are released then. */
	if (hc->writing != NULL)
		http1_server_release(s, hc->writing);
	hc->writing = NULL;
	for (seq = hc->pipe_head; seq != hc->pipe_tail; seq++) {
		struct pipe_slot *ps = &hc->pipe[seq % HTTP1_PIPELINE];

		if (ps->state == PIPE_READY)
			http1_server_release(s, ps->ans);
	}
	hc->pipe_head = hc->pipe_tail;
	h2_free(hc->h2);
	hc->h2 = NULL;
	hc->tcp = NULL;
	hc->free_next = s->free_list;
	s->free_list = hc;
}

static const struct tcp_upcalls http1_upcalls = {
	.accepted = on_accepted,
	.recv = on_recv,
	.sent = on_sent,
	.peer_closed = on_peer_closed,
	.closed = on_closed,
};

int
http1_server_init(struct http1_server *s, struct net_stack *ns,
		const struct www *www, struct http_stats *stats,
		uint32_t max_conns)
{
	uint32_t i;

	memset(s, 0, sizeof(*s));
	s->ns = ns;
	s->www = www;
	s->stats = stats;
	s->nconns = max_conns;
	s->conns = rte_zmalloc("http1_conns", sizeof(*s->conns) * max_conns,
			RTE_CACHE_LINE_SIZE);
	if (s->conns == NULL)
		return -1;
	for (i = max_conns; i-- > 0;) {
		s->conns[i].free_next = s->free_list;
		s->free_list = &s->conns[i];
	}
	net_stack_set_upcalls(ns, &http1_upcalls, s);
	return 0;
}

void
http1_server_set_timeouts(struct http1_server *s, uint32_t header_ms,
		uint32_t keepalive_ms)
{
	s->header_timeout_ms = header_ms;
	s->keepalive_timeout_ms = keepalive_ms;
}

static bool
quiet(const struct http1_conn *hc)
{
	return pipe_len(hc) == 0 && hc->writing == NULL && hc->body_left == 0 &&
		hc->req_body == REQ_BODY_NONE && !hc->closing && hc->h2 == NULL;
}

void
http1_server_tick(struct http1_server *s, uint64_t now_ms)
{
	uint32_t i;

	if (now_ms - s->last_sweep_ms < 100)
		return;
	s->last_sweep_ms = now_ms;
	for (i = 0; i < s->nconns; i++) {
		struct http1_conn *hc = &s->conns[i];

		if (hc->tcp == NULL || !quiet(hc))
			continue;
		if (s->header_timeout_ms && hc->in_len > 0 && hc->head_start_ms &&
				now_ms - hc->head_start_ms > s->header_timeout_ms) {
			/* Slowloris: a head trickling in holds a connection
			 * and its buffer; answer 408 and close. */
			s->stats->head_timeouts++;
			hc->in_len = 0;
			hc->close_after = true;
			if (tcp_send_space(s->ns, hc->tcp) >= HEAD_RESERVE)
				answer_error(s, hc, 408, false, NULL);
			start_close(s, hc);
		} else if (s->keepalive_timeout_ms && hc->in_len == 0 &&
				now_ms - hc->idle_since_ms > s->keepalive_timeout_ms) {
			s->stats->idle_closes++;
			start_close(s, hc);
		} else {
			continue;
		}
		tcp_output(s->ns, hc->tcp);
	}
}

void
http1_server_drain(struct http1_server *s)
{
	uint32_t i;

	s->draining = true;
	for (i = 0; i < s->nconns; i++) {
		struct http1_conn *hc = &s->conns[i];

		if (hc->tcp == NULL || hc->closing)
			continue;
		if (hc->h2 != NULL) {
			if (!h2_goaway(hc->h2))
				start_close(s, hc);
		} else if (pipe_len(hc) == 0 && hc->writing == NULL &&
				hc->body_left == 0 && hc->req_body == REQ_BODY_NONE &&
				hc->in_len == 0) {
			start_close(s, hc);	/* idle keep-alive: close now */
		} else {
			hc->close_after = true;	/* after the answer under way */
		}
		tcp_output(s->ns, hc->tcp);
	}
}

uint32_t
http1_server_busy(const struct http1_server *s)
{
	uint32_t i, n = 0;

	for (i = 0; i < s->nconns; i++)
		if (s->conns[i].tcp != NULL && !s->conns[i].closing)
			n++;
	return n;
}

void
http1_server_set_dispatch(struct http1_server *s, http_dispatch_fn fn,
		http_released_fn released, void *ctx)
{
	s->dispatch = fn;
	s->released = released;
	s->dispatch_ctx = ctx;
}

bool
http1_server_answer(struct http1_server *s, struct http_origin o,
		struct http_answer *a)
{
	struct tcp_conn *c;
	struct http1_conn *hc;
	struct pipe_slot *ps;

	if (o.index >= s->nconns)
		return false;
	c = tcp_conn_get(s->ns, o.index, o.gen);
	hc = c != NULL ? tcp_app(c) : NULL;
	if (hc == NULL || hc->closing)
		return false;
	if (o.stream != 0) {
		if (hc->h2 == NULL || !h2_answer(hc->h2, o.stream, a))
			return false;
		if (!h2_flush(hc->h2))
			start_close(s, hc);
		tcp_output(s->ns, c);
		return true;
	}
	if (hc->h2 != NULL || o.seq - hc->pipe_head >= pipe_len(hc))
		return false;
	ps = &hc->pipe[o.seq % HTTP1_PIPELINE];
	if (ps->state != PIPE_WAITING)
		return false;
	ps->state = PIPE_READY;
	ps->ans = a;
	if (o.seq == hc->pipe_head) {
		serve(s, hc);
		tcp_output(s->ns, c);
	}
	return true;
}

void
http1_server_fini(struct http1_server *s)
{
	rte_free(s->conns);
	s->conns = NULL;
	s->free_list = NULL;
}
