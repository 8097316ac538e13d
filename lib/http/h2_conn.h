/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An HTTP/2 connection's state, shared by the files of HTTP/2 alone: its
 * nghttp2 session and the protocol table (h2_session.c), its request
 * intake (h2_intake.c: header fields, body segments, windows) and its
 * answers (h2_answer.c: the responses submitted, their data provider).
 */
#ifndef EWYK_H2_CONN_H
#define EWYK_H2_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nghttp2/nghttp2.h>

#include "h2_proto.h"
#include "http_conn.h"

#define H2_MAX_STREAMS 100
#define H2_INITIAL_WINDOW (256 * 1024)
/* The connection's receive window: what its streams' unread bodies may
 * hold at once. Four streams' windows: a reader that stops holds its
 * stream's 256 KiB, and nghttp2 opens the window again once half of it
 * was taken, so the other uploads go on past one or two stopped readers
 * (a third stops the connection's uploads, not its answers). */
#define H2_CONN_WINDOW (4 * H2_INITIAL_WINDOW)
#define H2_HEADER_LIST_MAX HTTP_REQ_HEAD_MAX
#define H2_RESET_BUDGET 200	/* RST_STREAMs a client may send per second */
#define H2_RESET_BURST 1000	/* the library's backstop: a token bucket */
#define H2_RESET_RATE 33
#define H2_CONTINUATIONS_MAX 8
/* Bodies gathered for handlers are bounded per connection by its streams:
 * nghttp2 refuses a stream past H2_MAX_STREAMS even before the client has
 * acknowledged our SETTINGS. */
#define H2_CONN_BODY_MAX (1u << 20)
_Static_assert((uint64_t)H2_MAX_STREAMS * EWYK_REQUEST_BODY_MAX <=
		H2_CONN_BODY_MAX, "gathered bodies outgrew their bound");
#define H2_SOURCE_MIN 1024	/* a source is read for this much at least */
#define H2_SEG_SIZE 16384	/* one http_mem class: a DATA frame's worth */

/* Part of a request body waiting for its reader: data[off, +len). */
struct body_seg {
	struct body_seg *next;
	uint32_t off;
	uint32_t len;
	uint8_t data[];
};

#define H2_SEG_DATA (H2_SEG_SIZE - offsetof(struct body_seg, data))

/* One request stream: its request gathered into the shape of an HTTP/1.1
 * one (names lower case), then what goes back. */
struct h2_stream {
	struct h2_stream *next;		/* the session's streams */
	struct h2_stream **pprev;
	int32_t id;
	bool too_large;		/* headers past the limits: 431 */
	bool body_too_large;	/* 413 */
	bool awaiting;		/* a handler has the request */
	bool from_source;	/* the body is read from ans->src */
	uint16_t held_off;	/* source bytes read, not yet sent: */
	uint16_t held_len;	/* held[held_off, +held_len) */
	bool handled;		/* the request went to its route */
	bool routed;		/* route is set */
	const struct http_route *route;
	uint8_t *body;
	uint32_t body_len;
	uint32_t body_cap;
	/* A body-stream route's body, read as it comes (http_server_body_read):
	 * what came and is not read yet, at most what the windows let the
	 * client send ahead of the reader. */
	bool streaming;		/* its reader takes the body */
	bool body_ended;	/* END_STREAM came */
	bool tell_reader;	/* body_ready is owed: bytes, the end, a break */
	bool gone;		/* closed: freed once its reader is told */
	struct body_seg *seg_head;
	struct body_seg *seg_tail;
	uint32_t unread;	/* bytes in the segments */
	struct http_answer *ans;	/* a handler's answer being sent */
	const uint8_t *out;		/* bytes still to send */
	uint64_t out_left;
	uint32_t hused;
	bool release_on_headers;	/* ans goes back once HEADERS is out */
	char status_txt[4];		/* :status and content-length, which */
	char length_txt[24];		/* nghttp2 reads until HEADERS is out */
	/* Not zeroed when a stream begins, from here on: */
	struct http_head req;
	uint8_t held[H2_SOURCE_MIN];	/* a read the window did not take */
	char hbuf[H2_HEADER_LIST_MAX];
};

struct h2_conn {
	nghttp2_session *ng;
	struct http_conn *c;
	struct h2_stream *streams;
	struct h2_stream *hot;	/* the stream last looked up (h2_stream_of()) */
	bool in_ng;		/* inside nghttp2's recv or send */
	bool telling;		/* telling readers (h2_tell_readers()) */
	bool tell_any;		/* a stream's tell_reader is set */
	bool hold;		/* upgraded: nothing is sent before the client's
				 * preface, a client keeps only so much behind
				 * a 101 it has not yet acted on */
	int32_t goaway_last;	/* last stream of the GOAWAY sent; -1: none */
	uint64_t resets_since_ms;	/* start of the current one-second window */
	uint32_t resets;		/* RST_STREAM frames received in it */
};

static inline struct http_stats *
h2_stats(const struct h2_conn *h)
{
	return http_conn_stats(h->c);
}

/* A stream's state by its id, or NULL. A request's HEADERS, its answer and
 * its frames' callbacks ask for the same stream over and over: the last
 * one found is kept, which spares nghttp2's map most of its look-ups. It
 * is forgotten when its stream leaves the session (on_stream_close()). */
static inline struct h2_stream *
h2_stream_of(struct h2_conn *h, int32_t id)
{
	struct h2_stream *st = h->hot;

	if (st != NULL && st->id == id)
		return st;
	st = nghttp2_session_get_stream_user_data(h->ng, id);
	if (st != NULL)
		h->hot = st;
	return st;
}

/* The session (h2_session.c). */

/* Moves frames into the transport while it has room; false when the
 * session has nothing more to do and the connection should close. */
bool h2_flush(struct h2_conn *h);

/* Request intake (h2_intake.c). */

struct h2_stream *h2_stream_new(struct h2_conn *h, int32_t id);
/* The stream leaves: its answer, its body segments, its memory go back. */
void h2_stream_free(struct h2_conn *h, struct h2_stream *st);
/* A header field of the request (names lower case); past the limits the
 * request is marked too large (431). */
void h2_add_header(struct h2_stream *st, const char *name, size_t nl,
		const uint8_t *value, size_t vl);
/* Copies n bytes into the stream's own buffer; false when it is full. */
bool h2_stash(struct h2_stream *st, struct http_str *dst, const uint8_t *p,
		size_t n);
/* The request goes to its route, or is refused: once it is whole, or,
 * for a body-stream route, once its head is (more: its body follows). */
void h2_handle(struct h2_conn *h, struct h2_stream *st, bool more);
/* A body-stream route's reader has not read its body to the end. */
bool h2_body_unfinished(const struct h2_stream *st);
/* body_ready is owed to st's reader; h2_tell_readers() calls it. */
void h2_tell(struct h2_conn *h, struct h2_stream *st);
void h2_tell_readers(struct h2_conn *h);
/* nghttp2's callbacks of what comes in. */
int h2_on_begin_headers(nghttp2_session *ng, const nghttp2_frame *frame,
		void *user);
int h2_on_header(nghttp2_session *ng, const nghttp2_frame *frame,
		const uint8_t *name, size_t namelen, const uint8_t *value,
		size_t valuelen, uint8_t flags, void *user);
int h2_on_data_chunk(nghttp2_session *ng, uint8_t flags, int32_t id,
		const uint8_t *data, size_t len, void *user);
int h2_on_frame_recv(nghttp2_session *ng, const nghttp2_frame *frame,
		void *user);
int h2_on_stream_close(nghttp2_session *ng, int32_t id, uint32_t error,
		void *user);
/* The table's body_read. */
long h2_body_read(struct http_conn *c, struct http_origin o, void *buf,
		size_t cap);

/* Answers (h2_answer.c). */

/* Submits an answer: a handler's (keep: kept until its HEADERS frame is
 * out, or the stream closes, then released) or an error made here. */
void h2_submit_answer(struct h2_conn *h, struct h2_stream *st,
		struct http_answer *a, bool keep);
/* The error answer of status (405 with allow). */
void h2_refuse(struct h2_conn *h, struct h2_stream *st, int status,
		const char *allow);
/* nghttp2's callbacks of what goes out. */
ssize_t h2_send_bytes(nghttp2_session *ng, const uint8_t *data, size_t len,
		int flags, void *user);
int h2_send_data(nghttp2_session *ng, nghttp2_frame *frame,
		const uint8_t *framehd, size_t length, nghttp2_data_source *src,
		void *user);
int h2_before_frame_send(nghttp2_session *ng, const nghttp2_frame *frame,
		void *user);
int h2_on_frame_send(nghttp2_session *ng, const nghttp2_frame *frame,
		void *user);
/* The table's answer, awaits and resume. */
bool h2_answer(struct http_conn *c, struct http_origin o,
		struct http_answer *a);
bool h2_awaits(struct http_conn *c, struct http_origin o);
void h2_resume(struct http_conn *c, struct http_origin o);

#endif /* EWYK_H2_CONN_H */
