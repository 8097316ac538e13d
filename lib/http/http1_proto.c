/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <string.h>

#include <rte_common.h>

#include "http1_chunked.h"
#include "http1_parse.h"
#include "http1_proto.h"
#include "http_conn.h"

#define H2_PREFACE "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#define H2_PREFACE_LEN 24
#define CHUNK_FRAMING 32	/* "%x\r\n" + "\r\n" around an echoed chunk */
#define DISCARD_MAX (1 << 20)	/* a refused body larger than this closes */
#define CHUNKED_LEN UINT64_MAX	/* write_head(): Transfer-Encoding: chunked */
#define NO_BODY_LEN (UINT64_MAX - 1)	/* write_head(): no framing (204; or
					 * HTTP/1.0, the close ends the body) */

/* The longest head write_head() makes: a status line, Server, Date and
 * framing, the answer's own headers with ": " and CRLF each, Connection
 * and the blank line. */
#define HEAD_FIXED_MAX 256
#define HEAD_MAX (HEAD_FIXED_MAX + EWYK_RESPONSE_HEADERS_MAX + \
		4 * HTTP_ANSWER_HEADERS)
/* Send space needed before an answer starts, so that a head always fits
 * whole (and, for an error answer, its short body too). */
#define HEAD_RESERVE 2048
_Static_assert(HEAD_MAX + 64 <= HEAD_RESERVE, "an answer head must fit the "
		"send space checked before it");

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
	TOOK_UPGRADE,		/* an h2c upgrade: the connection is HTTP/2 */
};

enum req_body {
	REQ_BODY_NONE,
	REQ_BODY_LENGTH,
	REQ_BODY_CHUNKED,
};

struct h1 {
	struct http_conn *c;
	const uint8_t *body;	/* answer body still to queue */
	uint64_t body_left;
	uint8_t req_body;	/* how the request body is framed */
	bool echo;		/* the request body is the answer's body */
	bool echo_wait;		/* ... once that answer's head is out */
	bool echo_chunked;	/* ... sent in chunks */
	bool sink;		/* the request body goes to a reader */
	bool sink_writing;	/* the answer going out is the reader's */
	bool in_serve;		/* serve() is on the stack */
	uint32_t sink_seq;	/* the reader's request */
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
	uint32_t in_len;
	uint32_t in_max;	/* the server's max_head_bytes */
	char in[];
};

static const char continue_100[] = "HTTP/1.1 100 Continue\r\n\r\n";

size_t
http1_state_size(uint32_t in_max)
{
	return RTE_ALIGN_CEIL(sizeof(struct h1) + in_max, RTE_CACHE_LINE_SIZE);
}

static struct h1 *
state(const struct http_conn *c)
{
	return c->p;
}

static uint32_t
pipe_len(const struct h1 *h)
{
	return h->pipe_tail - h->pipe_head;
}

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
	uint32_t i, date_len;

	/* status line (reasons are under 40), Server and Date, framing */
	_Static_assert(16 + 40 + sizeof(server) + 40 + 40 <= HEAD_FIXED_MAX,
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
	for (i = 0; i < a->nheaders; i++) {
		const struct http_answer_header *x = &a->h[i];

		put(head, &n, a->hbuf + x->name, x->name_len);
		put(head, &n, ": ", 2);
		put(head, &n, a->hbuf + x->value, x->value_len);
		put(head, &n, "\r\n", 2);
	}
	if (last)
		put(head, &n, "Connection: close\r\n", 19);
	put(head, &n, "\r\n", 2);
	http_conn_write(h->c, head, (uint32_t)n);
	http_conn_count_answer(h->c, a->status, 1);
}

/* An answer decided here, at once: an error with its short body. */
static void
write_error(struct h1 *h, int status, bool head_only, const char *allow)
{
	struct http_answer a;

	http_answer_error(&a, status, allow);
	write_head(h, &a, a.len);
	if (!head_only)
		http_conn_stats(h->c)->body_bytes_out +=
			http_conn_write(h->c, a.body, (uint32_t)a.len);
}

/* A refusal: written now, or queued behind the answers still owed to
 * earlier requests. */
static void
refuse(struct h1 *h, int status, bool head_only, const char *allow)
{
	struct pipe_slot *ps;

	if (pipe_len(h) == 0) {
		write_error(h, status, head_only, allow);
		return;
	}
	ps = &h->pipe[h->pipe_tail++ % HTTP1_PIPELINE];
	ps->state = PIPE_REFUSED;
	ps->status = (uint16_t)status;
	ps->head_only = head_only;
	snprintf(ps->allow, sizeof(ps->allow), "%s", allow != NULL ? allow : "");
}

/* "Upgrade: h2c" on a GET or HEAD without a body (RFC 7540 3.2). */
static const struct http_str *
h2c_settings(const struct http_head *r)
{
	const struct http_str *up = http_head_find(r, "upgrade");
	const struct http_str *settings = http_head_find(r, "http2-settings");

	if (up == NULL || settings == NULL || !http_str_eq_nocase(*up, "h2c") ||
			(r->method != HTTP_GET && r->method != HTTP_HEAD) ||
			r->chunked || r->content_length > 0)
		return NULL;
	return settings;
}

static void
start_req_body(struct h1 *h, const struct http_head *r)
{
	h->req_body = r->chunked ? REQ_BODY_CHUNKED : REQ_BODY_LENGTH;
	h->req_left = r->chunked ? 0 : (uint64_t)r->content_length;
	chunked_init(&h->chunk);
}

/* Hands a request to its handler (route rt; NULL: none), or refuses it;
 * while answers are owed, an echo waits for its turn (its answer streams
 * the body, which must not start amid earlier answers). */
static enum took
answer(struct h1 *h, const struct http_head *r, const struct http_route *rt,
		int head_len)
{
	bool has_body = r->chunked || r->content_length > 0;
	bool head_only = r->method == HTTP_HEAD;
	bool owed = pipe_len(h) > 0;
	bool echo = rt != NULL && (rt->flags & HTTP_ROUTE_ECHO);
	bool sink = rt != NULL && (rt->flags & HTTP_ROUTE_BODY_STREAM) &&
		(rt->methods & http_method_bit(r->method));
	const struct http_str *settings = owed || !r->upgrade ? NULL :
		h2c_settings(r);
	struct http_answer *ans = NULL;
	char allow[48] = "";
	struct pipe_slot *ps;
	int taken;

	if (settings != NULL && http_conn_upgrade_h2(h->c, r, settings,
			(const uint8_t *)h->in + head_len,
			h->in_len - (uint32_t)head_len))
		return TOOK_UPGRADE;
	if ((echo || sink) && owed)
		return TOOK_NOTHING;
	taken = http_conn_dispatch(h->c, rt, r, 1, 0, h->pipe_tail, allow,
			sizeof(allow), &ans);
	if (taken != HTTP_DISPATCH_TAKEN && taken != HTTP_DISPATCH_ANSWERED) {
		/* A body nobody takes: skip a small one, but do not wait for
		 * a large one or for one the client holds back until
		 * "100 Continue": close after the answer instead. */
		if (has_body && r->body == NULL && (taken == 413 ||
				r->expect_continue || r->chunked ||
				r->content_length > DISCARD_MAX))
			h->close_after = true;
		refuse(h, taken, head_only, allow);
		if (has_body && !h->close_after && r->body == NULL)
			start_req_body(h, r);
		return r->body != NULL ? TOOK_HEAD_AND_BODY : TOOK_HEAD;
	}
	ps = &h->pipe[h->pipe_tail++ % HTTP1_PIPELINE];
	ps->state = ans != NULL ? PIPE_READY : PIPE_WAITING;
	ps->head_only = head_only;
	/* An HTTP/1.0 client knows no chunks: a body of unknown length ends
	 * with the connection, so this is its last. */
	ps->http10 = r->minor == 0;
	if (ps->http10)
		h->close_after = true;
	ps->ans = ans;
	if (echo && has_body) {
		/* Nothing is owed: the interim answer goes now, the body
		 * comes while the handler answers. */
		if (r->expect_continue && !h->continue_sent)
			http_conn_write(h->c, continue_100,
					sizeof(continue_100) - 1);
		start_req_body(h, r);
		h->echo_wait = true;
		h->echo_chunked = r->chunked;
		return TOOK_HEAD;
	}
	if (sink && has_body) {
		/* Its reader takes the body as it comes (body_read()). */
		if (r->expect_continue && !h->continue_sent)
			http_conn_write(h->c, continue_100,
					sizeof(continue_100) - 1);
		start_req_body(h, r);
		h->sink = true;
		h->sink_seq = h->pipe_tail - 1;
		return TOOK_HEAD;
	}
	if (r->body != NULL)
		return TOOK_HEAD_AND_BODY;
	if (has_body)
		h->close_after = true;	/* not reading a body it left */
	return TOOK_HEAD;
}

/* A small body for a handler (route rt) that takes it whole is gathered
 * in the buffer first. Returns false while it is still arriving. */
static bool
gather_body(struct h1 *h, struct http_head *r, const struct http_route *rt,
		int head_len)
{
	if (r->chunked || r->content_length <= 0 ||
			r->content_length > EWYK_REQUEST_BODY_MAX ||
			head_len + r->content_length > h->in_max)
		return true;
	/* A request that will be refused (404, 405) is refused now: its
	 * body is not waited for, and not invited by "100 Continue". */
	if (rt == NULL || !(rt->methods & http_method_bit(r->method)))
		return true;
	if (rt->flags & (HTTP_ROUTE_ECHO | HTTP_ROUTE_BODY_STREAM))
		return true;	/* it streams through the answer, or a reader */
	if (h->in_len < head_len + r->content_length) {
		/* An interim answer amid owed ones would be taken for
		 * theirs: "100 Continue" waits for its turn. */
		if (r->expect_continue && !h->continue_sent &&
				pipe_len(h) == 0) {
			http_conn_write(h->c, continue_100,
					sizeof(continue_100) - 1);
			h->continue_sent = true;
		}
		return false;
	}
	r->body = h->in + head_len;
	r->body_len = (uint32_t)r->content_length;
	return true;
}

/* Queues as much of the pending body as the send queue takes. */
static void
pump(struct h1 *h)
{
	while (h->body_left > 0) {
		uint32_t chunk = h->body_left > UINT32_MAX ? UINT32_MAX :
			(uint32_t)h->body_left;
		uint32_t n = http_conn_write(h->c, h->body, chunk);

		if (n == 0)
			return;
		h->body += n;
		h->body_left -= n;
		http_conn_stats(h->c)->body_bytes_out += n;
	}
}

/* The answer is out, or the connection is cut: it goes back. */
static void
done_writing(struct h1 *h)
{
	struct http_answer *a = h->writing;

	h->writing = NULL;
	if (h->sink_writing) {
		/* The reader's answer is out: a body it left unread is
		 * skipped, and the connection ends after it. */
		h->sink_writing = false;
		if (h->sink && h->req_body != REQ_BODY_NONE)
			h->close_after = true;
		h->sink = false;
	}
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
	char frame[24];
	int fl;

	while (a->kind == HTTP_BODY_STREAM && h->stream_left != 0) {
		uint32_t room = http_conn_space(h->c);
		size_t cap;
		uint8_t *buf = http_conn_scratch(h->c, &cap);
		ssize_t n;

		if (room < CHUNK_FRAMING + 1024)
			return PUMP_WAIT;	/* resumed when space is freed */
		cap = RTE_MIN(cap, (size_t)(room - CHUNK_FRAMING));
		if (!chunked)
			cap = RTE_MIN(cap, (size_t)h->stream_left);
		n = a->src.read(a->src.arg, buf, cap);
		if (n == HTTP_SOURCE_AGAIN)
			return PUMP_WAIT;	/* resumed by http_server_resume() */
		/* The source failed, or ended short of its length: the client
		 * must not take a cut body for whole. */
		if (n < 0 || (size_t)n > cap || (n == 0 && h->stream_left > 0))
			goto cut;
		if (n == 0) {
			if (chunked && http_conn_write(h->c, "0\r\n\r\n", 5) != 5)
				goto cut;
			break;
		}
		fl = chunked ? snprintf(frame, sizeof(frame), "%zx\r\n",
				(size_t)n) : 0;
		/* A short write means the mbufs ran out: the framing is lost. */
		if (http_conn_write(h->c, frame, (uint32_t)fl) != (uint32_t)fl ||
				http_conn_write(h->c, buf, (uint32_t)n) !=
				(uint32_t)n || (chunked &&
				http_conn_write(h->c, "\r\n", 2) != 2))
			goto cut;
		if (h->stream_left > 0)
			h->stream_left -= n;
		http_conn_stats(h->c)->body_bytes_out += (uint64_t)n;
	}
	done_writing(h);
	return PUMP_DONE;
cut:
	http_conn_stats(h->c)->body_errors++;
	done_writing(h);
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
		write_error(h, ps->status, ps->head_only, ps->allow);
		return;
	}
	ps->ans = NULL;
	if (a->kind == HTTP_BODY_ECHO && h->echo_wait) {
		/* The body streams back as it arrives, framed as it came. */
		write_head(h, a, h->echo_chunked ? CHUNKED_LEN : h->req_left);
		http_conn_release(h->c, a);
		h->echo_wait = false;
		h->echo = !ps->head_only;
		return;
	}
	if (h->echo_wait) {
		/* Not the echo it expected (a failed handler): the body is
		 * not read, and the connection ends after this answer. */
		h->echo_wait = false;
		h->req_body = REQ_BODY_NONE;
		h->close_after = true;
	}
	if (a->kind == HTTP_BODY_STREAM)
		length = a->src.length >= 0 ? (uint64_t)a->src.length :
			ps->http10 ? NO_BODY_LEN : CHUNKED_LEN;
	else
		length = a->kind == HTTP_BODY_ECHO ? 0 : a->len;
	/* 204 and 304 never carry a body (RFC 9110 15.3.5, 15.4.5); a 304
	 * may still say the length a 200 would have. */
	if (a->status == 204)
		length = NO_BODY_LEN;
	write_head(h, a, length);
	h->sink_writing = h->sink && h->pipe_head - 1 == h->sink_seq;
	h->stream_left = 0;
	h->stream_raw = ps->http10;
	if (!ps->head_only && a->status != 204 && a->status != 304) {
		if (a->kind == HTTP_BODY_STREAM) {
			h->stream_left = a->src.length;
		} else if (a->kind == HTTP_BODY_BYTES) {
			h->body = a->body;
			h->body_left = a->len;
		}
	}
	h->writing = a;
	if (a->kind != HTTP_BODY_STREAM && http_answer_detachable(a))
		done_writing(h);	/* the body alone is still needed */
}

static void
consume(struct h1 *h, uint32_t n)
{
	memmove(h->in, h->in + n, h->in_len - n);
	h->in_len -= n;
}

/* Body bytes of the request: echoed or dropped. The caller checked the
 * send space for echoes. */
static void
body_data(struct h1 *h, const char *p, uint32_t n)
{
	char frame[24];
	int fl;

	if (!h->echo || n == 0)
		return;
	if (h->echo_chunked) {
		fl = snprintf(frame, sizeof(frame), "%x\r\n", n);
		http_conn_write(h->c, frame, (uint32_t)fl);
	}
	http_conn_write(h->c, p, n);
	if (h->echo_chunked)
		http_conn_write(h->c, "\r\n", 2);
	http_conn_stats(h->c)->body_bytes_out += n;
}

static void
body_done(struct h1 *h)
{
	if (h->echo && h->echo_chunked)
		http_conn_write(h->c, "0\r\n\r\n", 5);
	h->req_body = REQ_BODY_NONE;
	h->echo = false;
}

/* Reads the request body from the buffer. Returns false when it must wait
 * for input or, echoing, for send space. */
static bool
read_body(struct h1 *h)
{
	while (h->req_body != REQ_BODY_NONE) {
		uint32_t room = UINT32_MAX, n;

		if (h->echo) {
			room = http_conn_space(h->c);
			if (room <= CHUNK_FRAMING)
				return false;
			room -= CHUNK_FRAMING;
		}
		if (h->req_body == REQ_BODY_LENGTH) {
			if (h->req_left == 0) {
				body_done(h);
				break;
			}
			n = (uint32_t)RTE_MIN((uint64_t)RTE_MIN(h->in_len, room),
					h->req_left);
			if (n == 0)
				return false;
			body_data(h, h->in, n);
			consume(h, n);
			h->req_left -= n;
		} else {
			const char *d;
			size_t dl;
			long used = chunked_decode(&h->chunk, h->in,
					RTE_MIN(h->in_len, room), &d, &dl);

			if (used < 0) {
				http_conn_stats(h->c)->body_errors++;
				if (!h->echo) {
					/* A body skipped (its reader's answer
					 * is out): what is owed is answered,
					 * then the close. */
					h->req_body = REQ_BODY_NONE;
					h->in_len = 0;
					h->close_after = true;
					return true;
				}
				/* Broken framing after the echo began: all
				 * that is left is to cut the connection. */
				http_conn_abort(h->c);
				return false;
			}
			body_data(h, d, (uint32_t)dl);
			consume(h, (uint32_t)used);
			if (h->chunk.state == CHUNK_DONE)
				body_done(h);
			else if (used == 0)
				return false;
		}
	}
	return true;
}

static void
start_close(struct h1 *h)
{
	h->in_len = 0;
	http_conn_close(h->c);
}

/* Whether an echoed body has begun: 1 when its first bytes (for a chunked
 * one, its first chunk's size line) are in, 0 while they are still on
 * their way, -1 when the chunked framing is broken in what is in. */
static int
body_begun(struct h1 *h)
{
	struct chunked probe = h->chunk;
	const char *p = h->in, *d;
	size_t left = h->in_len, dl;

	if (h->in_len == 0)
		return 0;
	if (h->req_body != REQ_BODY_CHUNKED)
		return 1;
	/* A dry run of the decoder over all that is in. */
	while (left > 0 && probe.state != CHUNK_DONE) {
		long used = chunked_decode(&probe, p, left, &d, &dl);

		if (used < 0)
			return -1;
		if (used == 0)
			break;
		p += used;
		left -= (size_t)used;
	}
	return probe.total > 0 || (probe.state != CHUNK_SIZE &&
			probe.state != CHUNK_EXT && probe.state != CHUNK_SIZE_LF);
}

/* An echo whose body is broken before its answer began: 400 in its
 * place, and the connection ends (the rest of the body cannot be found). */
static void
refuse_echo(struct h1 *h, struct pipe_slot *ps)
{
	struct http_answer *a = ps->ans;

	h->pipe_head++;
	ps->ans = NULL;
	http_conn_release(h->c, a);
	http_conn_stats(h->c)->body_errors++;
	h->echo_wait = false;
	h->req_body = REQ_BODY_NONE;
	h->in_len = 0;
	h->close_after = true;
	write_error(h, 400, ps->head_only, NULL);
}

/* The oldest answer owed, when it is ready to go. */
static struct pipe_slot *
ready_slot(struct h1 *h)
{
	struct pipe_slot *ps = &h->pipe[h->pipe_head % HTTP1_PIPELINE];

	return pipe_len(h) > 0 && ps->state != PIPE_WAITING ? ps : NULL;
}

/* A body-stream request's reader is told of what there is for it (bytes,
 * or the client's close); false when there is nothing. */
static bool
tell_reader(struct h1 *h)
{
	if (!h->sink || (h->in_len == 0 && !h->c->peer_closed))
		return false;
	http_conn_body_ready(h->c, (struct http_origin){ h->c->index,
			h->c->gen, 0, h->sink_seq });
	return true;
}

/* Writes what is owed and ready, in order, and the bodies under way.
 * Returns true when the connection may go on to read requests. */
static bool
write_owed(struct h1 *h)
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
					tell_reader(h);
				return false;
			}
		}
		if (h->req_body != REQ_BODY_NONE) {
			if (h->echo_wait) {
				/* The echo's answer goes first, then its body;
				 * it waits for the body to begin, so that it
				 * never runs into a "100 Continue" just sent,
				 * and so that a body whose framing is broken
				 * from the start is answered 400, not cut. */
				int begun = body_begun(h);

				ps = ready_slot(h);
				if (ps == NULL || (begun == 0 &&
						!h->c->peer_closed) ||
						http_conn_space(h->c) < HEAD_RESERVE)
					return false;
				if (begun < 0)
					refuse_echo(h, ps);
				else
					write_slot(h, ps);
				continue;
			}
			/* A body skipped after its refusal, or read by its
			 * reader, does not hold back the answers owed. */
			if (!h->echo && (ps = ready_slot(h)) != NULL) {
				if (http_conn_space(h->c) < HEAD_RESERVE)
					return false;
				write_slot(h, ps);
				continue;
			}
			if (h->sink) {
				/* Its reader pulls it (body_read()); what the
				 * reader does may end the body or ready an
				 * answer: look again then. */
				if (!tell_reader(h))
					return false;
				if (h->c->closing || (h->sink &&
						ready_slot(h) == NULL))
					return false;
				continue;
			}
			if (!read_body(h)) {
				if (!h->c->peer_closed || h->c->closing)
					return false;
				if (h->echo) {
					start_close(h);	/* body cut short */
					return false;
				}
				/* A skipped body that will not come: what is
				 * owed is still answered, then the close. */
				h->req_body = REQ_BODY_NONE;
				h->in_len = 0;
				h->close_after = true;
			}
			continue;
		}
		ps = ready_slot(h);
		if (ps == NULL)
			return true;
		if (http_conn_space(h->c) < HEAD_RESERVE)
			return false;
		write_slot(h, ps);
	}
}

/* Serves requests from the buffer until it runs dry or the send queue
 * fills; called on new data and when acknowledgements free send space.
 * Returns false when the connection changed protocol (h is gone). */
static bool serve_in(struct h1 *h, struct http_conn *c);

static bool
serve(struct h1 *h)
{
	struct http_conn *c = h->c;
	bool more;

	h->in_serve = true;
	more = serve_in(h, c);
	h->in_serve = false;
	return more;
}

/* serve()'s body: it must not run inside itself (a body reader or an
 * answer arriving from within it only leaves work for its loop). */
static bool
serve_in(struct h1 *h, struct http_conn *c)
{
	const struct http_route *rt;
	struct http_head req;
	bool close_before;
	enum took took;
	int rc;

	if (h->fresh && h->in_len > 0) {
		size_t n = RTE_MIN((size_t)h->in_len, (size_t)H2_PREFACE_LEN);

		/* A preface cut short by the peer's close is no preface: it
		 * is read as HTTP/1.1, which ends the connection. */
		if (memcmp(h->in, H2_PREFACE, n) == 0 &&
				(n == H2_PREFACE_LEN || !c->peer_closed)) {
			if (n < H2_PREFACE_LEN)
				return true;	/* the preface is still arriving */
			http_conn_start_h2(c, (const uint8_t *)h->in, h->in_len);
			return false;
		}
		h->fresh = false;
	}
	while (!c->closing && write_owed(h)) {
		if (pipe_len(h) > 0) {
			/* Bounded read-ahead: a full pipeline reads no more
			 * until its oldest answer is out. */
			if (h->close_after || pipe_len(h) == HTTP1_PIPELINE) {
				if (pipe_len(h) == HTTP1_PIPELINE)
					http_conn_stats(c)->pipeline_full++;
				break;
			}
		} else if (h->close_after) {
			start_close(h);
			break;
		}
		if (http_conn_space(c) < HEAD_RESERVE)
			break;
		rc = h->in_len > 0 ? http1_parse_request_max(h->in, h->in_len,
				&req, c->srv->conf.max_target) : 0;
		if (rc == 0 && h->in_len == 0 && pipe_len(h) == 0)
			h->idle_since_ms = http_conn_now(c);
		if (rc == 0) {
			if (h->in_len == h->in_max) {
				h->close_after = true;
				refuse(h, http1_overflow_status(h->in, h->in_len),
						false, NULL);
				h->in_len = 0;
				continue;
			}
			if (c->peer_closed && pipe_len(h) == 0)
				start_close(h);
			break;
		}
		if (rc < 0) {
			/* The framing is lost: answer and close. */
			h->close_after = true;
			refuse(h, -rc, false, NULL);
			h->in_len = 0;
			continue;
		}
		/* One lookup serves the body's gathering and the dispatch. */
		rt = http_conn_route(c, &req.path);
		if (!gather_body(h, &req, rt, rc)) {
			if (c->peer_closed && pipe_len(h) == 0)
				start_close(h);	/* the body never came */
			break;
		}
		close_before = h->close_after;
		if (!req.keep_alive || http_conn_draining(c))
			h->close_after = true;
		took = answer(h, &req, rt, rc);
		if (took == TOOK_NOTHING) {
			h->close_after = close_before;
			break;		/* resumed when the owed answers are out */
		}
		http_conn_stats(c)->by_method[req.method]++;
		if (took == TOOK_UPGRADE)
			return false;
		h->continue_sent = false;
		/* The head is whole; a pipelined one after it starts now. */
		h->head_start_ms = h->in_len > (uint32_t)rc ? http_conn_now(c) : 0;
		consume(h, (uint32_t)rc + (took == TOOK_HEAD_AND_BODY ?
				req.body_len : 0));
	}
	return true;
}

/* The receive window follows the room left in the buffer. */
static void
update_rcv_space(struct h1 *h)
{
	if (!h->c->closing)
		http_conn_set_rcv_space(h->c, h->in_max - h->in_len);
}

/* Protocol table ------------------------------------------------------------ */

void
http1_open(struct http_conn *c)
{
	struct h1 *h = c->h1_mem;

	memset(h, 0, offsetof(struct h1, in));
	h->c = c;
	h->in_max = c->srv->conf.max_head_bytes;
	h->fresh = true;
	h->idle_since_ms = http_conn_now(c);
	c->p = h;
	update_rcv_space(h);
}

static uint32_t
h1_recv(struct http_conn *c, const uint8_t *data, uint32_t len)
{
	struct h1 *h = state(c);
	uint32_t n;

	if (h->in_len == 0 && h->head_start_ms == 0)
		h->head_start_ms = http_conn_now(c);	/* a request begins */
	n = RTE_MIN(len, h->in_max - h->in_len);
	memcpy(h->in + h->in_len, data, n);
	h->in_len += n;
	if (serve(h))
		update_rcv_space(h);
	return n;
}

static void
h1_writable(struct http_conn *c)
{
	struct h1 *h = state(c);

	if (h->in_serve)
		return;		/* its loop looks again */
	if (serve(h))
		update_rcv_space(h);
}

static void
h1_peer_closed(struct http_conn *c)
{
	serve(state(c));
}

static void
h1_resume(struct http_conn *c, struct http_origin o)
{
	(void)o;
	h1_writable(c);
}

/* The reader's request body ended or broke: it is no longer read. */
static void
sink_end(struct h1 *h)
{
	h->req_body = REQ_BODY_NONE;
	h->sink = false;
}

/* Body bytes of a HTTP_ROUTE_BODY_STREAM request, for its reader. */
static long
h1_body_read(struct http_conn *c, struct http_origin o, void *buf, size_t cap)
{
	struct h1 *h = state(c);
	uint8_t *to = buf;
	size_t got = 0;
	bool ended = false;

	if (o.stream != 0 || o.seq != h->sink_seq)
		return -1;
	if (!h->sink)
		return h->req_body == REQ_BODY_NONE ? 0 : -1;
	while (got < cap && !ended) {
		uint32_t n;

		if (h->req_body == REQ_BODY_LENGTH) {
			n = (uint32_t)RTE_MIN((uint64_t)RTE_MIN((size_t)h->in_len,
					cap - got), h->req_left);
			memcpy(to + got, h->in, n);
			consume(h, n);
			h->req_left -= n;
			got += n;
			ended = h->req_left == 0;
			if (n == 0)
				break;
		} else {
			const char *d;
			size_t dl;
			long used = chunked_decode(&h->chunk, h->in,
					RTE_MIN((size_t)h->in_len, cap - got), &d,
					&dl);

			if (used < 0) {
				http_conn_stats(c)->body_errors++;
				sink_end(h);
				h->close_after = true;
				return -1;
			}
			if (dl > 0)	/* a size line or trailer alone: d is NULL */
				memmove(to + got, d, dl);
			consume(h, (uint32_t)used);
			got += dl;
			ended = h->chunk.state == CHUNK_DONE;
			if (used == 0)
				break;
		}
	}
	if (ended)
		sink_end(h);
	if (!h->in_serve) {
		/* Room was made, or the next request may be parsed. */
		if (!ended || serve(h))
			update_rcv_space(h);
	}
	if (got > 0)
		return (long)got;
	if (ended)
		return 0;
	if (c->peer_closed) {
		sink_end(h);
		h->close_after = true;
		return -1;	/* the client left amid its body */
	}
	return HTTP_SOURCE_AGAIN;
}

static bool
h1_answer(struct http_conn *c, struct http_origin o, struct http_answer *a)
{
	struct h1 *h = state(c);
	struct pipe_slot *ps;

	if (o.stream != 0 || o.seq - h->pipe_head >= pipe_len(h))
		return false;
	ps = &h->pipe[o.seq % HTTP1_PIPELINE];
	if (ps->state != PIPE_WAITING)
		return false;
	ps->state = PIPE_READY;
	ps->ans = a;
	if (o.seq == h->pipe_head)
		h1_writable(c);	/* inside serve(): its loop writes it */
	return true;
}

/* A client that shut its side while an answer was owed has left: it
 * cannot send the next request, and most close outright (nginx's 499). */
static bool
h1_awaits(struct http_conn *c, struct http_origin o)
{
	struct h1 *h = state(c);

	return o.stream == 0 && o.seq - h->pipe_head < pipe_len(h) &&
		h->pipe[o.seq % HTTP1_PIPELINE].state == PIPE_WAITING &&
		!c->peer_closed;
}

static bool
quiet(const struct h1 *h)
{
	return pipe_len(h) == 0 && h->writing == NULL && h->body_left == 0 &&
		h->req_body == REQ_BODY_NONE;
}

static void
h1_drain(struct http_conn *c)
{
	struct h1 *h = state(c);

	if (quiet(h) && h->in_len == 0)
		start_close(h);		/* idle keep-alive: close now */
	else
		h->close_after = true;	/* after the answer under way */
}

static void
h1_tick(struct http_conn *c, uint64_t now_ms)
{
	const struct http_server_conf *k = &c->srv->conf;
	struct h1 *h = state(c);

	if (!quiet(h))
		return;
	if (k->header_timeout_ms && h->in_len > 0 && h->head_start_ms &&
			now_ms - h->head_start_ms > k->header_timeout_ms) {
		/* Slowloris: a head trickling in holds a connection and its
		 * buffer; answer 408 and close. */
		http_conn_stats(c)->head_timeouts++;
		h->in_len = 0;
		h->close_after = true;
		if (http_conn_space(c) >= HEAD_RESERVE)
			write_error(h, 408, false, NULL);
		start_close(h);
	} else if (k->keepalive_timeout_ms && h->in_len == 0 &&
			now_ms - h->idle_since_ms > k->keepalive_timeout_ms) {
		http_conn_stats(c)->idle_closes++;
		start_close(h);
	}
}

static void
h1_free(struct http_conn *c)
{
	struct h1 *h = state(c);
	uint32_t seq;

	/* Answers kept for their turn go back; those still with their
	 * handlers come back stale and are released then. */
	if (h->writing != NULL)
		done_writing(h);
	for (seq = h->pipe_head; seq != h->pipe_tail; seq++) {
		struct pipe_slot *ps = &h->pipe[seq % HTTP1_PIPELINE];

		if (ps->state == PIPE_READY)
			http_conn_release(c, ps->ans);
	}
	h->pipe_head = h->pipe_tail;
}

const struct http_proto http1_proto = {
	.name = "http/1.1",
	.recv = h1_recv,
	.writable = h1_writable,
	.peer_closed = h1_peer_closed,
	.answer = h1_answer,
	.awaits = h1_awaits,
	.resume = h1_resume,
	.body_read = h1_body_read,
	.drain = h1_drain,
	.tick = h1_tick,
	.free = h1_free,
};
