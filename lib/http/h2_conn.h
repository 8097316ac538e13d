/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An HTTP/2 connection's state, shared by the files of HTTP/2 alone: the
 * connection, its frames and its output (h2_session.c), its streams and
 * their requests (h2_intake.c: header fields, bodies, windows) and their
 * answers (h2_answer.c: HEADERS encoded, DATA sent as the windows allow).
 * The framing, the stream states and flow control are ewyk's own (RFC
 * 9113); HPACK (RFC 7541) is nghttp2's deflater and inflater.
 */
#ifndef EWYK_H2_CONN_H
#define EWYK_H2_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nghttp2/nghttp2.h>

#include "h2_frame.h"
#include "h2_proto.h"
#include "http_body_pool.h"
#include "http_conn.h"

#define H2_MAX_STREAMS 100
#define H2_INITIAL_WINDOW (256 * 1024)
/* The connection's receive window: what its streams' unread bodies may
 * hold at once. Four streams' windows: a reader that stops holds its
 * stream's 256 KiB, and the window opens again once half of it was
 * taken, so the other uploads go on past one or two stopped readers (a
 * third stops the connection's uploads, not its answers). */
#define H2_CONN_WINDOW (4 * H2_INITIAL_WINDOW)
#define H2_HEADER_TABLE 4096	/* HPACK's dynamic tables, both ways */
#define H2_RESET_BUDGET 200	/* RST_STREAMs a client may send per second */
#define H2_CONTINUATIONS_MAX 8
#define H2_SETTINGS_MAX 32	/* entries in one SETTINGS frame (as nghttp2) */
/* Bodies gathered for handlers are bounded per connection by its streams:
 * a stream past H2_MAX_STREAMS is refused even before the client has
 * acknowledged our SETTINGS. */
#define H2_CONN_BODY_MAX (1u << 20)
_Static_assert((uint64_t)H2_MAX_STREAMS * EWYK_REQUEST_BODY_MAX <=
		H2_CONN_BODY_MAX, "gathered bodies outgrew their bound");
#define H2_SOURCE_MIN 1024	/* a source is read for this much at least */
#define H2_SEG_SIZE 16384	/* one http_mem class: a DATA frame's worth */
/* Frames waiting for the transport: control frames and header blocks
 * (DATA goes straight into the transport). A client that does not read
 * fills it; past it, its PINGs and SETTINGS are a flood. */
#define H2_OUT_CAP 16384
#define H2_OUT_RESERVE 64	/* kept for a GOAWAY and a RST_STREAM */
/* DATA this small is copied into the buffer behind its HEADERS: one
 * transport write for many answers, rather than two each. */
#define H2_SMALL_DATA 512
/* An answer's header block always fits one frame, and the buffer. */
#define H2_BLOCK_BOUND (12 + 12 * (HTTP_ANSWER_HEADERS + 4) + \
	EWYK_RESPONSE_HEADERS_MAX + 128)
_Static_assert(H2_BLOCK_BOUND + H2_FRAME_HEADER < H2_DEFAULT_FRAME,
		"an answer's header block outgrew a frame");
#define H2_BUCKETS 128		/* the stream map: ids by (id >> 1) */
/* How the last H2_CLOSED_IDS client streams closed, by (id >> 1). */
#define H2_CLOSED_IDS 256

/* Part of a request body waiting for its reader: data[off, +len). */
struct body_seg {
	struct body_seg *next;
	uint32_t off;
	uint32_t len;
	uint8_t data[];
};

#define H2_SEG_DATA (H2_SEG_SIZE - offsetof(struct body_seg, data))

/* How a client stream ended, for the frames that still come on it. */
enum h2_closed {
	H2_NEVER_OPENED,	/* idle when a higher one opened */
	H2_CLOSED_ENDED,	/* both sides ended it */
	H2_CLOSED_BY_CLIENT,	/* its RST_STREAM */
	H2_CLOSED_BY_US,	/* ours: what it had in flight is dropped */
	H2_FORGOTTEN,		/* older than the last H2_CLOSED_IDS */
};

/* A stream's queue: its answer's HEADERS wait for room, or its DATA for
 * the transport. */
enum h2_queue {
	H2_Q_NONE,
	H2_Q_HEADERS,
	H2_Q_DATA,
};

/* One request stream: its request gathered into the shape of an HTTP/1.1
 * one (names lower case), then what goes back. */
struct h2_stream {
	struct h2_stream *next;		/* the session's streams */
	struct h2_stream **pprev;
	struct h2_stream *hnext;	/* its bucket in the map */
	struct h2_stream *qnext;	/* its queue */
	int32_t id;
	uint8_t queue;		/* enum h2_queue */
	bool remote_closed;	/* the client's END_STREAM came */
	bool local_closed;	/* ours went (HEADERS or DATA) */
	bool closed;		/* out of the map: freed once its reader knows */
	bool blocked;		/* its DATA waits for its window */
	bool deferred;		/* its source said HTTP_SOURCE_AGAIN */
	bool too_large;		/* headers past the limits: 431 */
	bool malformed;		/* RFC 9113 8.1.1: RST_STREAM PROTOCOL_ERROR */
	bool trailers;		/* the block being decoded is trailers */
	bool regular_seen;	/* a field not a pseudo-header came */
	uint8_t pseudo;		/* the pseudo-header fields that came */
	bool awaiting;		/* a handler has the request */
	bool from_source;	/* the body is read from ans->src */
	bool handled;		/* the request went to its route */
	bool routed;		/* route is set */
	bool release_on_headers;	/* ans goes back once HEADERS is out */
	bool body_ended;	/* END_STREAM came */
	bool streaming;		/* its reader takes the body */
	bool gathering;		/* its body is gathered for its handler,
				 * timed (h2_bodies_overdue()) */
	bool tell_reader;	/* body_ready is owed: bytes, the end, a break */
	uint16_t held_off;	/* source bytes read, not yet sent: */
	uint16_t held_len;	/* held[held_off, +held_len) */
	int16_t refuse;		/* an error answer waiting for room */
	uint32_t list_size;	/* the header list, as RFC 9113 counts it */
	uint32_t hcap;		/* hbuf's size: the header list's limit */
	int32_t recv_window;	/* what the client may still send */
	uint32_t unacked;	/* taken, not yet given back */
	uint32_t recv_size;	/* the window granted (h2_window.c) */
	uint64_t update_ms;	/* its last WINDOW_UPDATE, or its start */
	int64_t send_window;
	int64_t rx_body;	/* DATA bytes that came */
	uint64_t gather_ms;	/* when DATA of a gathered body came last */
	const struct http_route *route;
	uint8_t *body;
	uint32_t body_len;
	uint32_t body_cap;
	/* A body-stream route's body, read as it comes (http_server_body_read):
	 * what came and is not read yet, at most what the windows let the
	 * client send ahead of the reader. */
	struct body_seg *seg_head;
	struct body_seg *seg_tail;
	uint32_t unread;	/* bytes in the segments */
	struct http_answer *ans;	/* a handler's answer being sent */
	const uint8_t *out;		/* bytes still to send */
	uint64_t out_left;
	uint32_t hused;
	/* Not zeroed when a stream begins, from here on: */
	char allow[48];		/* refuse's Allow, for a 405 */
	struct http_head req;
	uint8_t held[H2_SOURCE_MIN];	/* a read the window did not take */
	char hbuf[];		/* the request's names and values (hcap) */
};

/* Where the connection's input is. */
enum h2_in {
	H2_IN_PREFACE,		/* the client's magic */
	H2_IN_HEAD,		/* a frame header */
	H2_IN_GATHER,		/* a payload read whole (in gbuf) */
	H2_IN_PADLEN,		/* a padded DATA frame's pad length */
	H2_IN_DATA,		/* DATA's bytes, as they come */
	H2_IN_SKIP,		/* bytes nobody reads: padding, ignored frames */
};

struct h2_conn {
	struct http_conn *c;
	nghttp2_hd_inflater *inflater;
	nghttp2_hd_deflater *deflater;
	nghttp2_mem mem;	/* the HPACK tables' (they keep a pointer) */
	uint32_t list_max;	/* a request's header list (the server's
				 * max_head_bytes): 431 past it */
	/* Input */
	uint8_t in;		/* enum h2_in */
	uint8_t fh[H2_FRAME_HEADER];	/* a frame header cut in two */
	uint8_t fh_got;
	uint8_t ftype;		/* the frame being read */
	uint8_t fflags;
	bool settings_seen;	/* the client's preface ends with SETTINGS */
	bool table_resized;	/* the deflater owes a size update, first */
	int32_t fid;
	uint32_t flen;
	uint32_t left;		/* of its payload (H2_IN_DATA, _SKIP, _GATHER) */
	uint32_t pad;		/* DATA's padding, after its bytes */
	uint8_t *gbuf;		/* H2_IN_GATHER's payload so far */
	struct h2_stream *data_st;	/* DATA's stream; NULL: dropped */
	/* A header block across HEADERS and CONTINUATION frames */
	int32_t block_id;	/* 0: none open */
	struct h2_stream *block_st;	/* NULL: decoded for nothing */
	uint8_t block_frames;
	bool block_end_stream;
	bool hd_partial;	/* the inflater is amid a representation */
	bool hd_fields;		/* the block has had a field */
	/* Streams */
	struct h2_stream *streams;
	struct h2_stream *hot;	/* the stream last looked up */
	struct h2_stream *bucket[H2_BUCKETS];
	uint32_t open;		/* streams that count against the limit */
	uint64_t idle_since_ms;	/* the last stream ended (or the session
				 * began): for the keep-alive timeout */
	int32_t max_id;		/* the highest the client opened */
	uint8_t closed_how[H2_CLOSED_IDS];
	/* Flow control */
	int64_t send_window;	/* the connection's, for our DATA */
	int64_t peer_window;	/* the client's SETTINGS_INITIAL_WINDOW_SIZE */
	uint32_t peer_frame;	/* its SETTINGS_MAX_FRAME_SIZE */
	int64_t recv_window;	/* what the client may still send */
	uint32_t unacked;	/* taken, not yet given back */
	uint32_t recv_size;	/* the window granted (h2_window.c) */
	uint64_t update_ms;	/* its last WINDOW_UPDATE, or its start */
	bool updates_owed;	/* a WINDOW_UPDATE found no room */
	/* Output */
	uint8_t *out;		/* H2_OUT_CAP bytes: out[out_off, +out_len) */
	uint32_t out_off;
	uint32_t out_len;
	struct h2_stream *hq_head, **hq_tail;	/* H2_Q_HEADERS */
	struct h2_stream *dq_head, **dq_tail;	/* H2_Q_DATA */
	/* State */
	bool busy;		/* inside recv or flush: a nested flush waits */
	bool again;		/* ... and is owed */
	bool telling;		/* telling readers (h2_tell_readers()) */
	bool tell_any;		/* a stream's tell_reader is set */
	bool hold;		/* upgraded: nothing is sent before the client's
				 * preface, a client keeps only so much behind
				 * a 101 it has not yet acted on */
	bool failed;		/* a connection error: GOAWAY, then the close */
	bool peer_goaway;	/* the client will open nothing more */
	int32_t goaway_last;	/* last stream of the GOAWAY sent; -1: none */
	uint64_t resets_since_ms;	/* start of the current one-second window */
	uint32_t resets;		/* RST_STREAM frames received in it */
};

static inline struct http_stats *
h2_stats(const struct h2_conn *h)
{
	return http_conn_stats(h->c);
}

/* A stream by its id, or NULL. A request's HEADERS, its answer and its
 * frames ask for the same stream over and over: the last one found is
 * kept. */
static inline struct h2_stream *
h2_stream_of(struct h2_conn *h, int32_t id)
{
	struct h2_stream *st = h->hot;

	if (st != NULL && st->id == id)
		return st;
	for (st = h->bucket[(uint32_t)id >> 1 & (H2_BUCKETS - 1)]; st != NULL;
			st = st->hnext)
		if (st->id == id) {
			h->hot = st;
			return st;
		}
	return NULL;
}

/* The session (h2_session.c). */

/* Moves frames into the transport while it has room; false when the
 * connection should close. */
bool h2_flush(struct h2_conn *h);
/* Queues a frame of len payload bytes (control frames: our SETTINGS,
 * WINDOW_UPDATE, RST_STREAM, PING and SETTINGS acknowledgements); false
 * when out of room (reserve: it may take H2_OUT_RESERVE). */
bool h2_out_frame(struct h2_conn *h, uint8_t type, uint8_t flags, uint32_t id,
		const void *payload, uint32_t len, bool reserve);
/* Writes what the output buffer holds into the transport, as much as it
 * takes. */
void h2_out_drain(struct h2_conn *h);
/* A connection error: GOAWAY with code, then the close (RFC 9113 5.4.1). */
void h2_conn_error(struct h2_conn *h, uint32_t code);
/* A stream error, or our end of a stream: RST_STREAM with code, and the
 * stream closes (st may be NULL: one not in the map). */
void h2_reset(struct h2_conn *h, int32_t id, struct h2_stream *st,
		uint32_t code);

/* Streams and requests (h2_intake.c). */

struct h2_stream *h2_stream_new(struct h2_conn *h, int32_t id);
/* The stream leaves the map (how: enum h2_closed); it is freed at once,
 * or once its body's reader was told. */
void h2_stream_close(struct h2_conn *h, struct h2_stream *st, uint8_t how);
/* The stream's memory goes back: its answer, its body segments. */
void h2_stream_free(struct h2_conn *h, struct h2_stream *st);
/* How a client stream no longer in the map closed (H2_FORGOTTEN for one
 * older than the last H2_CLOSED_IDS), and that it did so. */
uint8_t h2_closed_how(const struct h2_conn *h, int32_t id);
void h2_set_closed_how(struct h2_conn *h, int32_t id, uint8_t how);
/* A new stream id: the ids skipped are idle no more (RFC 9113 5.1.1). */
void h2_open_id(struct h2_conn *h, int32_t id);
/* Makes the tables the field checks read; once, before any session. */
void h2_fields_init(void);
/* A header block fragment for st (NULL: decoded and dropped); final at
 * END_HEADERS. False on a decoding error (COMPRESSION_ERROR). */
bool h2_decode(struct h2_conn *h, struct h2_stream *st, const uint8_t *p,
		size_t len, bool final);
/* A header field of the request (names lower case); past the limits the
 * request is marked too large (431). */
void h2_add_header(struct h2_stream *st, const char *name, size_t nl,
		const uint8_t *value, size_t vl);
/* Copies n bytes into the stream's own buffer; false when it is full. */
bool h2_stash(struct h2_stream *st, struct http_str *dst, const uint8_t *p,
		size_t n);
/* A request's header block ended (end_stream: no body follows). */
void h2_request_head(struct h2_conn *h, struct h2_stream *st, bool end_stream);
/* The request goes to its route, or is refused: once it is whole, or,
 * for a body-stream route, once its head is (more: its body follows). */
void h2_handle(struct h2_conn *h, struct h2_stream *st, bool more);
/* A request refused before its body is whole (413, 503): answered at
 * once, the rest of its body dropped as it comes. st may be gone after
 * (an answer that went out whole ended it). */
void h2_refuse_body(struct h2_conn *h, struct h2_stream *st, int status);
/* DATA bytes of st, and the end of its body. */
void h2_data(struct h2_conn *h, struct h2_stream *st, const uint8_t *p,
		uint32_t n);
void h2_body_end(struct h2_conn *h, struct h2_stream *st);
/* No stream is open from now: the keep-alive timeout runs. */
void h2_idle_from(struct h2_conn *h);
/* Bodies gathered for their handlers that stopped coming (no DATA for
 * header_timeout_ms) are answered 408; returns when the next falls due
 * (0: none is gathered). */
uint64_t h2_bodies_overdue(struct h2_conn *h, uint64_t now_ms);
/* Receive windows (h2_window.c). */

/* n bytes of DATA were taken: the windows open (WINDOW_UPDATE) once half
 * of them is, and grow when that came within a round trip; st NULL for
 * the connection alone. */
void h2_consumed(struct h2_conn *h, struct h2_stream *st, uint32_t n);
/* Sends the WINDOW_UPDATEs owed that found no room. */
void h2_send_updates(struct h2_conn *h);
/* The session ends: what its window grew by goes back to the budget. */
void h2_window_release(struct h2_conn *h);
/* A body-stream route's reader has not read its body to the end. */
bool h2_body_unfinished(const struct h2_stream *st);
/* body_ready is owed to st's reader; h2_tell_readers() calls it. */
void h2_tell(struct h2_conn *h, struct h2_stream *st);
void h2_tell_readers(struct h2_conn *h);
/* The table's body_read. */
long h2_body_read(struct http_conn *c, struct http_origin o, void *buf,
		size_t cap);

/* Answers (h2_answer.c). */

/* Submits an answer: a handler's (keep: kept until its HEADERS are
 * encoded, or the stream closes, then released) or an error made here. */
void h2_submit_answer(struct h2_conn *h, struct h2_stream *st,
		struct http_answer *a, bool keep);
/* The error answer of status (405 with allow). */
void h2_refuse(struct h2_conn *h, struct h2_stream *st, int status,
		const char *allow);
/* Encodes the header blocks waiting for room, then sends DATA while the
 * transport and the windows have room. */
void h2_send_queued(struct h2_conn *h);
/* A stream's window opened: its DATA may go again. */
void h2_unblock(struct h2_conn *h, struct h2_stream *st);
/* Takes the stream off its queue. */
void h2_dequeue(struct h2_conn *h, struct h2_stream *st);
/* The table's answer, awaits and resume. */
bool h2_answer(struct http_conn *c, struct http_origin o,
		struct http_answer *a);
bool h2_awaits(struct http_conn *c, struct http_origin o);
void h2_resume(struct http_conn *c, struct http_origin o);

#endif /* EWYK_H2_CONN_H */
