/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An HTTP/1.1 connection's state, shared by the files of HTTP/1.1 alone:
 * its request intake (http1_intake.c: parse, route, dispatch, request
 * bodies), its answers (http1_answer.c: the pipeline, head serialization,
 * the body pump) and the glue that makes them a protocol table of the
 * connection layer (http1_proto.c).
 */
#ifndef EWYK_HTTP1_CONN_H
#define EWYK_HTTP1_CONN_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "http1_body.h"
#include "http1_proto.h"
#include "http_conn.h"

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

struct h1 {
	struct http_conn *c;
	const uint8_t *body;	/* answer body still to queue */
	uint64_t body_left;
	bool lend;		/* it goes by reference (pump()) */
	bool sink;		/* the request body goes to a reader */
	bool sink_writing;	/* the answer going out is the reader's */
	bool in_serve;		/* h1_serve() is on the stack */
	uint32_t sink_seq;	/* the reader's request */
	struct http1_body req;	/* the request body being read */
	bool close_after;	/* close once the answer is queued */
	uint32_t pipe_head;	/* seq of the oldest answer owed */
	uint32_t pipe_tail;	/* seq the next dispatched request gets */
	struct pipe_slot pipe[HTTP1_PIPELINE];
	struct http_answer *writing;	/* a dispatched answer going out */
	int64_t stream_left;	/* of a streamed body; -1: until its end */
	bool stream_raw;	/* HTTP/1.0: no chunks, the close ends it */
	bool continue_sent;	/* "100 Continue" went for the current request */
	bool fresh;		/* nothing parsed yet: may still become HTTP/2 */
	/* A body gathered whole for its handler past what the input buffer
	 * holds: the request's head copied first, then its body, in one of
	 * the server's body slots. */
	struct http_body_slot *gather;
	uint32_t gather_head;	/* the head's length in it */
	uint64_t gather_ms;	/* when bytes of it came last */
	uint64_t skip_ms;	/* a body skipped: when bytes of it came last
				 * (0: none being skipped) */
	uint64_t head_start_ms;	/* first byte of a request head not yet whole */
	uint64_t idle_since_ms;	/* nothing asked, nothing owed, since */
	uint32_t in_len;
	uint32_t in_max;	/* the server's max_head_bytes */
	char in[];
};

static inline struct h1 *
h1_of(const struct http_conn *c)
{
	return c->p;
}

/* Answers owed: requests taken, their answers not yet out. */
static inline uint32_t
h1_owed(const struct h1 *h)
{
	return h->pipe_tail - h->pipe_head;
}

/* The oldest answer owed, when it is ready to go. */
static inline struct pipe_slot *
h1_ready_slot(struct h1 *h)
{
	struct pipe_slot *ps = &h->pipe[h->pipe_head % HTTP1_PIPELINE];

	return h1_owed(h) > 0 && ps->state != PIPE_WAITING ? ps : NULL;
}

/* Drops n bytes read from the front of the input. */
static inline void
h1_consume(struct h1 *h, uint32_t n)
{
	memmove(h->in, h->in + n, h->in_len - n);
	h->in_len -= n;
}

/* The receive window follows the room left in the buffer. */
static inline void
h1_update_rcv_space(struct h1 *h)
{
	if (!h->c->closing)
		http_conn_set_rcv_space(h->c, h->in_max - h->in_len);
}

static inline void
h1_start_close(struct h1 *h)
{
	h->in_len = 0;
	http_conn_close(h->c);
}

/* The glue (http1_proto.c). */

/* Arms the connection's deadline for what it now waits for (a request
 * head to be whole, or the next request), when timeouts are configured:
 * after every turn of h1_serve(). */
void h1_set_deadline(struct h1 *h);

static inline void
h1_schedule(struct h1 *h)
{
	if (h->c->srv->timeouts)
		h1_set_deadline(h);
}

/* Request intake (http1_intake.c). */

/* Serves requests from the buffer until it runs dry or the send queue
 * fills; called on new data and when acknowledgements free send space.
 * Returns false when the connection changed protocol (h is gone). */
bool h1_serve(struct h1 *h);
/* What the request body under way needs now that no answer is ready:
 * its reader told, or its bytes skipped. True when that moved something
 * and the answers should be looked at again. */
bool h1_body_intake(struct h1 *h);
/* The body being gathered for its handler is refused (status) or cut
 * (408): answered, its slot given back, the connection closed after. */
void h1_gather_refuse(struct h1 *h, int status);
/* The reader of a body-stream request hears of what there is for it
 * (bytes, or the client's close); false when there is nothing. */
bool h1_tell_reader(struct h1 *h);
/* The table's recv and body_read. */
uint32_t h1_recv(struct http_conn *c, const uint8_t *data, uint32_t len);
long h1_body_read(struct http_conn *c, struct http_origin o, void *buf,
		size_t cap);

/* Answers (http1_answer.c). */

/* Writes what is owed and ready, in order, and moves the request body
 * under way. True when the connection may go on to read requests. */
bool h1_write_owed(struct h1 *h);
/* A refusal (status; 405 with allow): written now, or queued behind the
 * answers still owed to earlier requests. */
void h1_refuse(struct h1 *h, int status, bool head_only, const char *allow);
/* An answer decided here, written now: an error with its short body. The
 * caller checked HEAD_RESERVE of send space. */
void h1_write_error(struct h1 *h, int status, bool head_only,
		const char *allow);
/* The answer going out is let go (written, or the connection is cut). */
void h1_done_writing(struct h1 *h);

#endif /* EWYK_HTTP1_CONN_H */
