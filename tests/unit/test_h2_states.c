/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP/2's stream states and frame rules (RFC 9113 5.1, 5.1.1, 5.3.1, 6,
 * 8.1, 8.3) against the connection layer, a case a test. The client is
 * written by hand, frame by frame, its header blocks from HPACK's static
 * table and literals that touch no dynamic table (RFC 7541 6.1, 6.2.2),
 * so that the server gets exactly what the case says, however wrong. What
 * the server writes is read frame by frame, its header blocks decoded by
 * nghttp2's HPACK inflater.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "h2_frame.h"
#include "http_date.h"
#include "http_harness.h"

#define IDS 2048	/* the stream ids a case may use */

/* A connection, and what the server sent on it. */
struct raw {
	struct hh *h;
	struct hh_conn *k;
	nghttp2_hd_inflater *inflater;
	uint32_t at;		/* of k->out: the frames read */
	int status[IDS];	/* of the HEADERS on a stream; 0: none */
	bool ended[IDS];	/* END_STREAM came on it */
	uint64_t data[IDS];	/* DATA bytes on it */
	long rst[IDS];		/* RST_STREAM's code on it; -1: none */
	unsigned int resets;	/* RST_STREAM frames */
	long goaway;		/* GOAWAY's code; -1: none */
	int32_t goaway_last;
	unsigned int acks;	/* SETTINGS acknowledgements */
	uint64_t conn_update;	/* WINDOW_UPDATE increments on stream 0 */
	uint32_t list_max;	/* its SETTINGS_MAX_HEADER_LIST_SIZE */
	char date[64];		/* the last date field */
};

/* A header block's :status (and date): every block is decoded, in order,
 * as the server's dynamic table needs. */
static int
block_status(struct raw *r, const uint8_t *p, size_t len)
{
	int status = 0;

	for (;;) {
		nghttp2_nv nv;
		int fl = 0;
		ssize_t n = nghttp2_hd_inflate_hd2(r->inflater, &nv, &fl,
				(uint8_t *)(uintptr_t)p, len, 1);

		assert_true(n >= 0);
		p += n;
		len -= (size_t)n;
		if ((fl & NGHTTP2_HD_INFLATE_EMIT) && nv.namelen == 7 &&
				memcmp(nv.name, ":status", 7) == 0)
			status = atoi((const char *)nv.value);
		if ((fl & NGHTTP2_HD_INFLATE_EMIT) && nv.namelen == 4 &&
				memcmp(nv.name, "date", 4) == 0)
			snprintf(r->date, sizeof(r->date), "%.*s",
					(int)nv.valuelen, nv.value);
		if (fl & NGHTTP2_HD_INFLATE_FINAL) {
			nghttp2_hd_inflate_end_headers(r->inflater);
			return status;
		}
	}
}

/* Reads the whole frames the server wrote since the last call. */
static void
raw_read(struct raw *r)
{
	const struct hh_conn *k = r->k;

	while (k->out_len - r->at >= H2_FRAME_HEADER) {
		const uint8_t *f = k->out + r->at, *p = f + H2_FRAME_HEADER;
		uint32_t len = h2_be24(f), id = h2_be32(f + 5) & H2_WINDOW_MAX;
		uint32_t i;

		if (k->out_len - r->at - H2_FRAME_HEADER < len)
			return;
		r->at += H2_FRAME_HEADER + len;
		assert_true(id < IDS);
		switch (f[3]) {
		case H2_HEADERS:
			assert_true(f[4] & H2_FLAG_END_HEADERS);
			r->status[id] = block_status(r, p, len);
			r->ended[id] = f[4] & H2_FLAG_END_STREAM;
			break;
		case H2_DATA:
			r->data[id] += len;
			r->ended[id] = f[4] & H2_FLAG_END_STREAM;
			break;
		case H2_RST_STREAM:
			r->rst[id] = h2_be32(p);
			r->resets++;
			break;
		case H2_GOAWAY:
			r->goaway_last = (int32_t)h2_be32(p);
			r->goaway = h2_be32(p + 4);
			break;
		case H2_SETTINGS:
			if (f[4] & H2_FLAG_ACK)
				r->acks++;
			for (i = 0; i + 6 <= len; i += 6)
				if ((p[i] << 8 | p[i + 1]) ==
						H2_SET_MAX_HEADER_LIST_SIZE)
					r->list_max = h2_be32(p + i + 2);
			break;
		case H2_WINDOW_UPDATE:
			if (id == 0)
				r->conn_update += h2_be32(p);
			break;
		}
	}
}

/* A frame, sent whole. */
static void
raw_frame(struct raw *r, uint8_t type, uint8_t flags, uint32_t id,
		const void *payload, uint32_t len)
{
	static uint8_t f[H2_FRAME_HEADER + H2_DEFAULT_FRAME];

	assert_true(len <= H2_DEFAULT_FRAME);
	h2_put_header(f, len, type, flags, id);
	if (len > 0)
		memcpy(f + H2_FRAME_HEADER, payload, len);
	hh_send(r->k, f, H2_FRAME_HEADER + len);
	raw_read(r);
}

/* A fresh connection: the preface and empty SETTINGS sent. */
static struct raw *
raw_open(struct hh *h)
{
	static const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
	struct raw *r = calloc(1, sizeof(*r));
	unsigned int i;

	assert_non_null(r);
	r->h = h;
	r->k = hh_connect(h);
	r->goaway = -1;
	for (i = 0; i < IDS; i++)
		r->rst[i] = -1;
	assert_int_equal(nghttp2_hd_inflate_new(&r->inflater), 0);
	hh_send(r->k, preface, sizeof(preface) - 1);
	raw_frame(r, H2_SETTINGS, 0, 0, NULL, 0);
	return r;
}

static void
raw_close(struct raw *r)
{
	if (r->k->c != NULL)
		hh_finish(r->k);
	nghttp2_hd_inflate_del(r->inflater);
	free(r);
}

/* Header blocks ------------------------------------------------------------ */

struct block {
	uint8_t b[1024];
	uint32_t n;
};

/* An HPACK integer of a prefix of bits, after the first byte's flags. */
static void
hb_int(struct block *b, uint8_t flags, unsigned int bits, uint32_t v)
{
	uint32_t max = (1u << bits) - 1;

	assert_true(b->n + 6 <= sizeof(b->b));
	if (v < max) {
		b->b[b->n++] = (uint8_t)(flags | v);
		return;
	}
	b->b[b->n++] = (uint8_t)(flags | max);
	for (v -= max; v >= 128; v >>= 7)
		b->b[b->n++] = (uint8_t)(v | 0x80);
	b->b[b->n++] = (uint8_t)v;
}

static void
hb_string(struct block *b, const char *s, size_t len)
{
	hb_int(b, 0x00, 7, (uint32_t)len);	/* not Huffman-coded */
	assert_true(b->n + len <= sizeof(b->b));
	memcpy(b->b + b->n, s, len);
	b->n += (uint32_t)len;
}

/* A static table entry, whole (RFC 7541 6.1). */
static void
hb_index(struct block *b, unsigned int index)
{
	hb_int(b, 0x80, 7, index);
}

/* A literal without indexing (6.2.2), its name a static entry's
 * (name_index > 0) or name. */
static void
hb_literal(struct block *b, unsigned int name_index, const char *name,
		const char *value)
{
	hb_int(b, 0x00, 4, name_index);
	if (name_index == 0)
		hb_string(b, name, strlen(name));
	hb_string(b, value, strlen(value));
}

/* :method, :scheme http, :path, :authority h. */
static void
hb_request(struct block *b, const char *method, const char *path)
{
	b->n = 0;
	if (strcmp(method, "GET") == 0)
		hb_index(b, 2);
	else if (strcmp(method, "POST") == 0)
		hb_index(b, 3);
	else
		hb_literal(b, 2, NULL, method);
	hb_index(b, 6);
	hb_literal(b, 4, NULL, path);
	hb_literal(b, 1, NULL, "h");
}

static void
raw_headers(struct raw *r, uint32_t id, uint8_t flags, const struct block *b)
{
	raw_frame(r, H2_HEADERS, flags | H2_FLAG_END_HEADERS, id, b->b, b->n);
}

/* A GET, its request whole. */
static void
raw_get(struct raw *r, uint32_t id, const char *path)
{
	struct block b;

	hb_request(&b, "GET", path);
	raw_headers(r, id, H2_FLAG_END_STREAM, &b);
}

/* A POST whose body follows, with a content-length unless NULL. */
static void
raw_post(struct raw *r, uint32_t id, const char *path, const char *length)
{
	struct block b;

	hb_request(&b, "POST", path);
	if (length != NULL)
		hb_literal(&b, 28, NULL, length);
	raw_headers(r, id, 0, &b);
}

static void
raw_data(struct raw *r, uint32_t id, uint8_t flags, uint32_t len)
{
	static const uint8_t zeros[H2_DEFAULT_FRAME];

	raw_frame(r, H2_DATA, flags, id, zeros, len);
}

static void
raw_u32(struct raw *r, uint8_t type, uint32_t id, uint32_t v)
{
	uint8_t p[4];

	h2_put32(p, v);
	raw_frame(r, type, 0, id, p, 4);
}

/* PRIORITY: stream id depends on dep. */
static void
raw_priority(struct raw *r, uint32_t id, uint32_t dep, uint32_t len)
{
	uint8_t p[6] = { 0 };

	h2_put32(p, dep);
	raw_frame(r, H2_PRIORITY, 0, id, p, len);
}

static void
raw_settings(struct raw *r, uint16_t setting, uint32_t value)
{
	uint8_t p[6] = { (uint8_t)(setting >> 8), (uint8_t)setting };

	h2_put32(p + 2, value);
	raw_frame(r, H2_SETTINGS, 0, 0, p, 6);
}

/* Outcomes ----------------------------------------------------------------- */

/* A stream error: RST_STREAM with code on id, and the connection goes on
 * (a request on next is served). */
static void
expect_reset(struct raw *r, uint32_t id, uint32_t code, uint32_t next)
{
	if (r->rst[id] != (long)code || r->goaway != -1)
		fail_msg("stream %u: RST_STREAM %ld, GOAWAY %ld; want "
				"RST_STREAM %u", id, r->rst[id], r->goaway,
				code);
	raw_get(r, next, "/a.txt");
	assert_int_equal(r->status[next], 200);
	assert_false(r->k->closed);
}

/* A connection error: GOAWAY with code, then the close. */
static void
expect_goaway(struct raw *r, uint32_t code)
{
	if (r->goaway != (long)code)
		fail_msg("GOAWAY %ld, want %u", r->goaway, code);
	assert_true(r->k->closed);
}

/* Nothing wrong: no RST_STREAM, no GOAWAY, and next is served. */
static void
expect_served(struct raw *r, uint32_t next)
{
	if (r->resets != 0 || r->goaway != -1)
		fail_msg("%u RST_STREAM, GOAWAY %ld", r->resets, r->goaway);
	raw_get(r, next, "/a.txt");
	assert_int_equal(r->status[next], 200);
	assert_true(r->ended[next]);
}

/* 5.1: half-closed (remote) ------------------------------------------------ */

/* /q/ answers once the test runs its handler: its stream stays half
 * closed (remote) until then. DATA on it is a stream error; its answer,
 * once made, finds it gone. */
static void
test_data_on_half_closed_stream(void **state)
{
	struct raw *r = raw_open(*state);

	raw_get(r, 1, "/q/held");
	raw_data(r, 1, H2_FLAG_END_STREAM, 3);
	expect_reset(r, 1, H2_STREAM_CLOSED, 3);
	assert_false(hh_run(r->h, 0));
	raw_close(r);
}

static void
test_headers_on_half_closed_stream(void **state)
{
	struct raw *r = raw_open(*state);
	struct block b = { .n = 0 };

	raw_get(r, 1, "/q/held");
	hb_literal(&b, 0, "x-trailer", "1");
	raw_headers(r, 1, H2_FLAG_END_STREAM, &b);
	expect_reset(r, 1, H2_STREAM_CLOSED, 3);
	assert_false(hh_run(r->h, 0));
	raw_close(r);
}

/* WINDOW_UPDATE, PRIORITY and RST_STREAM may come on it (5.1). */
static void
test_half_closed_stream_takes_window_update_and_priority(void **state)
{
	struct raw *r = raw_open(*state);

	raw_get(r, 1, "/q/held");
	raw_u32(r, H2_WINDOW_UPDATE, 1, 1000);
	raw_priority(r, 1, 0, 5);
	assert_true(hh_run(r->h, 0));
	raw_read(r);
	assert_int_equal(r->status[1], 200);
	assert_true(r->ended[1]);
	raw_u32(r, H2_WINDOW_UPDATE, 1, 1000);	/* closed: may still come */
	expect_served(r, 3);
	raw_close(r);
}

/* 5.1: closed -------------------------------------------------------------- */

/* A stream both sides ended: DATA or HEADERS on it is a connection
 * error of type STREAM_CLOSED. */
static void
test_data_on_closed_stream(void **state)
{
	struct raw *r = raw_open(*state);

	raw_get(r, 1, "/a.txt");
	assert_true(r->ended[1]);
	raw_data(r, 1, H2_FLAG_END_STREAM, 3);
	expect_goaway(r, H2_STREAM_CLOSED);
	raw_close(r);
}

static void
test_headers_on_closed_stream(void **state)
{
	struct raw *r = raw_open(*state);

	raw_get(r, 1, "/a.txt");
	assert_true(r->ended[1]);
	raw_get(r, 1, "/a.txt");
	expect_goaway(r, H2_STREAM_CLOSED);
	raw_close(r);
}

/* A stream the client reset: what still comes on it is a stream error of
 * type STREAM_CLOSED, once; then it is ignored. */
static void
test_data_on_stream_reset_by_client(void **state)
{
	struct raw *r = raw_open(*state);

	raw_post(r, 1, "/q/upload", NULL);
	raw_u32(r, H2_RST_STREAM, 1, H2_CANCEL);
	raw_data(r, 1, 0, 100);
	assert_int_equal(r->rst[1], H2_STREAM_CLOSED);
	raw_data(r, 1, 0, 100);
	assert_int_equal(r->resets, 1);
	expect_reset(r, 1, H2_STREAM_CLOSED, 3);
	raw_close(r);
}

static void
test_headers_on_stream_reset_by_client(void **state)
{
	struct raw *r = raw_open(*state);

	raw_get(r, 1, "/q/held");
	raw_u32(r, H2_RST_STREAM, 1, H2_CANCEL);
	raw_get(r, 1, "/a.txt");
	expect_reset(r, 1, H2_STREAM_CLOSED, 3);
	assert_int_equal(r->status[1], 0);
	assert_false(hh_run(r->h, 0));
	raw_close(r);
}

/* The DATA a client had in flight when it reset its upload: more than
 * the connection's window (1 MiB) comes after the reset. Its bytes count
 * against the connection's window, which opens again as they are
 * dropped (6.9): the connection is not stalled, and not failed for
 * overflowing a window it never got back. */
static void
test_data_after_client_reset_keeps_the_connection_window(void **state)
{
	struct raw *r = raw_open(*state);
	uint64_t updated = r->conn_update;
	unsigned int i;

	raw_post(r, 1, "/q/upload", NULL);
	raw_data(r, 1, 0, H2_DEFAULT_FRAME);
	raw_u32(r, H2_RST_STREAM, 1, H2_CANCEL);
	for (i = 0; i < 80; i++)	/* 1.25 MiB, half of it padded */
		raw_data(r, 1, i % 2 ? H2_FLAG_PADDED : 0, H2_DEFAULT_FRAME);
	/* given back: once half the window was, never more than came */
	assert_true(r->conn_update - updated >= 1u << 20);
	assert_true(r->conn_update - updated <= 81 * H2_DEFAULT_FRAME);
	raw_post(r, 3, "/q/next", "1000");
	raw_data(r, 3, H2_FLAG_END_STREAM, 1000);
	assert_int_equal(r->goaway, -1);
	assert_int_equal(r->h->nqueued, 1);
	assert_true(hh_run(r->h, 0));
	raw_read(r);
	assert_int_equal(r->status[3], 200);
	raw_close(r);
}

/* Our RST_STREAM closed it: frames the client sent before it saw ours
 * are ignored (5.1), their DATA counted for the connection's window. */
static void
test_frames_after_our_reset_are_ignored(void **state)
{
	struct raw *r = raw_open(*state);
	unsigned int i;

	raw_post(r, 1, "/q/upload", NULL);
	raw_u32(r, H2_WINDOW_UPDATE, 1, 0);	/* a stream error */
	assert_int_equal(r->rst[1], H2_PROTOCOL_ERROR);
	for (i = 0; i < 80; i++)
		raw_data(r, 1, 0, H2_DEFAULT_FRAME);
	raw_data(r, 1, H2_FLAG_END_STREAM, 0);
	raw_u32(r, H2_WINDOW_UPDATE, 1, 100);
	raw_u32(r, H2_RST_STREAM, 1, H2_CANCEL);
	assert_int_equal(r->resets, 1);
	assert_int_equal(r->goaway, -1);
	r->resets = 0;
	expect_served(r, 3);
	raw_close(r);
}

/* 6.1, 6.2: padding. A padded DATA frame's bytes are its body, less
 * its padding (all of it counted against the windows); padding as long
 * as what it pads is a connection error. */
static void
test_padded_frames(void **state)
{
	static const uint8_t abc[] = { 10, 'a', 'b', 'c', 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0 };
	static const uint8_t def[] = { 0, 'd', 'e', 'f' };
	static const uint8_t too_long[] = { 4, 'a', 0, 0 };
	struct raw *r = raw_open(*state);
	const struct ewyk_request *q;
	struct block b;
	uint8_t f[64];

	raw_post(r, 1, "/q/x", "6");
	raw_frame(r, H2_DATA, H2_FLAG_PADDED, 1, abc, sizeof(abc));
	raw_frame(r, H2_DATA, H2_FLAG_PADDED | H2_FLAG_END_STREAM, 1, def,
			sizeof(def));
	assert_int_equal(r->h->nqueued, 1);
	q = &r->h->queue[0]->req;
	assert_int_equal(q->body.len, 6);
	assert_memory_equal(q->body.p, "abcdef", 6);
	hb_request(&b, "GET", "/a.txt");
	f[0] = 5;
	memcpy(f + 1, b.b, b.n);
	memset(f + 1 + b.n, 0, 5);
	raw_frame(r, H2_HEADERS, H2_FLAG_PADDED | H2_FLAG_END_HEADERS |
			H2_FLAG_END_STREAM, 3, f, 1 + b.n + 5);
	assert_int_equal(r->status[3], 200);
	raw_post(r, 5, "/q/x", NULL);
	raw_frame(r, H2_DATA, H2_FLAG_PADDED, 5, too_long, sizeof(too_long));
	expect_goaway(r, H2_PROTOCOL_ERROR);
	raw_close(r);
	r = raw_open(*state);
	f[0] = (uint8_t)(b.n + 1);	/* past the block */
	raw_frame(r, H2_HEADERS, H2_FLAG_PADDED | H2_FLAG_END_HEADERS |
			H2_FLAG_END_STREAM, 1, f, 1 + b.n);
	expect_goaway(r, H2_PROTOCOL_ERROR);
	raw_close(r);
}

/* A client that closes while an answer waits for the connection's
 * window (it never opened it past 65535 bytes) will never open it: the
 * connection closes rather than wait for a WINDOW_UPDATE. */
static void
test_peer_close_with_data_held_by_the_connection_window(void **state)
{
	struct raw *r = raw_open(*state);
	uint64_t got;

	raw_get(r, 1, "/stream/x");	/* HH_BIG_SIZE bytes */
	assert_true(hh_run(r->h, 0));
	raw_read(r);
	got = r->data[1];
	assert_int_equal(got, H2_DEFAULT_WINDOW);
	assert_false(r->ended[1]);
	hh_peer_close(r->k);
	assert_true(r->k->closed);
	raw_read(r);
	assert_int_equal(r->data[1], got);
	raw_close(r);
}

/* 5.1.1: stream identifiers ------------------------------------------------ */

/* A new stream's id must be above every id the client used: 3 after 5
 * is a connection error, though 3 was never opened. */
static void
test_stream_id_below_one_opened(void **state)
{
	struct raw *r = raw_open(*state);

	raw_get(r, 5, "/a.txt");
	assert_int_equal(r->status[5], 200);
	raw_get(r, 3, "/a.txt");
	expect_goaway(r, H2_PROTOCOL_ERROR);
	assert_int_equal(r->status[3], 0);
	raw_close(r);
}

/* The same below a stream still open. */
static void
test_stream_id_below_one_open(void **state)
{
	struct raw *r = raw_open(*state);

	raw_get(r, 7, "/q/held");
	raw_get(r, 1, "/a.txt");
	expect_goaway(r, H2_PROTOCOL_ERROR);
	assert_int_equal(r->status[1], 0);
	raw_close(r);
}

/* An id far below the highest: whether it was opened and closed or
 * never opened is forgotten (only the last 256 client streams are
 * kept), but no HEADERS may open it (5.1.1) and none may come on a
 * stream so long closed: a connection error. DATA on it is dropped, its
 * bytes given back. */
static void
test_stream_id_far_below_one_opened(void **state)
{
	struct raw *r = raw_open(*state);
	uint32_t id;

	raw_get(r, 1025, "/a.txt");
	assert_int_equal(r->status[1025], 200);
	raw_get(r, 1, "/a.txt");
	expect_goaway(r, H2_PROTOCOL_ERROR);
	raw_close(r);
	r = raw_open(*state);
	for (id = 1; id <= 1027; id += 2)
		raw_get(r, id, "/a.txt");
	raw_data(r, 1, 0, 100);
	assert_int_equal(r->resets, 0);
	expect_served(r, 1029);
	raw_get(r, 1, "/a.txt");
	expect_goaway(r, H2_PROTOCOL_ERROR);
	raw_close(r);
}

/* DATA on an id the client skipped: that stream is closed (5.1.1), and
 * DATA on a closed stream is a stream error (6.1). */
static void
test_data_on_skipped_stream(void **state)
{
	struct raw *r = raw_open(*state);

	raw_get(r, 5, "/a.txt");
	raw_data(r, 3, 0, 10);
	expect_reset(r, 3, H2_STREAM_CLOSED, 7);
	raw_data(r, 3, 0, 10);		/* once */
	assert_int_equal(r->resets, 1);
	raw_close(r);
}

/* Streams still open long after: how the newer ones ended is what the
 * frames on those are judged by, whenever the old one closes. */
static void
test_closed_streams_remembered_past_an_old_one(void **state)
{
	struct raw *r = raw_open(*state);
	uint32_t id;

	raw_get(r, 1, "/q/held");
	for (id = 3; id <= 513; id += 2)
		raw_get(r, id, "/a.txt");
	assert_true(r->ended[513]);
	raw_u32(r, H2_RST_STREAM, 513, H2_CANCEL);	/* may still come */
	assert_true(hh_run(r->h, 0));	/* stream 1 ends: 513's slot */
	raw_read(r);
	assert_int_equal(r->status[1], 200);
	raw_data(r, 513, 0, 10);	/* after the client's reset */
	expect_reset(r, 513, H2_STREAM_CLOSED, 515);
	raw_close(r);
}

/* 5.3.1, 6.3: PRIORITY ----------------------------------------------------- */

static void
test_priority_on_stream_zero(void **state)
{
	struct raw *r = raw_open(*state);

	raw_priority(r, 0, 1, 5);
	expect_goaway(r, H2_PROTOCOL_ERROR);
	raw_close(r);
}

/* A stream depending on itself is a stream error, open or idle. */
static void
test_priority_on_itself(void **state)
{
	struct raw *r = raw_open(*state);

	raw_get(r, 1, "/q/held");
	raw_priority(r, 1, 1, 5);
	expect_reset(r, 1, H2_PROTOCOL_ERROR, 3);
	assert_false(hh_run(r->h, 0));
	raw_priority(r, 9, 9, 5);
	expect_reset(r, 9, H2_PROTOCOL_ERROR, 11);
	raw_close(r);
}

/* HEADERS whose priority names its own stream: the request is refused
 * before it is served. */
static void
test_headers_depending_on_itself(void **state)
{
	struct raw *r = raw_open(*state);
	struct block b;
	uint8_t f[5 + 64];

	hb_request(&b, "GET", "/a.txt");
	h2_put32(f, 1);		/* depends on stream 1 */
	f[4] = 15;		/* weight */
	memcpy(f + 5, b.b, b.n);
	raw_frame(r, H2_HEADERS, H2_FLAG_END_STREAM | H2_FLAG_END_HEADERS |
			H2_FLAG_PRIORITY, 1, f, 5 + b.n);
	assert_int_equal(r->status[1], 0);
	expect_reset(r, 1, H2_PROTOCOL_ERROR, 3);
	raw_close(r);
}

static void
test_priority_of_wrong_length(void **state)
{
	struct raw *r = raw_open(*state);

	raw_priority(r, 1, 0, 4);
	expect_reset(r, 1, H2_FRAME_SIZE_ERROR, 3);
	raw_close(r);
}

/* PRIORITY may name a stream not yet opened (idle): that opens nothing. */
static void
test_priority_on_idle_stream(void **state)
{
	struct raw *r = raw_open(*state);

	raw_priority(r, 7, 0, 5);
	raw_get(r, 1, "/a.txt");
	assert_int_equal(r->status[1], 200);
	expect_served(r, 7);
	raw_close(r);
}

/* Idle streams (5.1, 6.4, 6.9) --------------------------------------------- */

static void
test_window_update_on_idle_stream(void **state)
{
	struct raw *r = raw_open(*state);

	raw_get(r, 1, "/a.txt");
	raw_u32(r, H2_WINDOW_UPDATE, 3, 100);
	expect_goaway(r, H2_PROTOCOL_ERROR);
	raw_close(r);
}

static void
test_rst_stream_on_idle_stream(void **state)
{
	struct raw *r = raw_open(*state);

	raw_get(r, 1, "/a.txt");
	raw_u32(r, H2_RST_STREAM, 3, H2_CANCEL);
	expect_goaway(r, H2_PROTOCOL_ERROR);
	raw_close(r);
}

static void
test_data_on_idle_stream(void **state)
{
	struct raw *r = raw_open(*state);

	raw_get(r, 1, "/a.txt");
	raw_data(r, 3, H2_FLAG_END_STREAM, 10);
	expect_goaway(r, H2_PROTOCOL_ERROR);
	raw_close(r);
}

/* Stream 0 is the connection's: no DATA or RST_STREAM on it. */
static void
test_stream_frames_on_stream_zero(void **state)
{
	struct raw *r = raw_open(*state);

	raw_data(r, 0, 0, 10);
	expect_goaway(r, H2_PROTOCOL_ERROR);
	raw_close(r);
	r = raw_open(*state);
	raw_u32(r, H2_RST_STREAM, 0, H2_CANCEL);
	expect_goaway(r, H2_PROTOCOL_ERROR);
	raw_close(r);
}

/* 4.3, 6.10: header blocks and CONTINUATION -------------------------------- */

/* A block in three pieces, cut inside representations and between
 * them: served as if whole. A value's bytes may look like an indexed
 * field (0x85: index 5), and are not one. */
static void
test_header_block_in_continuations(void **state)
{
	struct raw *r = raw_open(*state);
	struct block b;
	unsigned int cut;

	hb_request(&b, "GET", "/a.txt");
	hb_literal(&b, 0, "x-long-field-name", "a value, in two frames");
	hb_literal(&b, 0, "x-bytes", "\x85\x85\x90");
	for (cut = 1; cut + 1 < b.n; cut++) {
		uint32_t id = 2 * cut + 1;
		uint32_t mid = cut + (b.n - cut) / 2;

		raw_frame(r, H2_HEADERS, H2_FLAG_END_STREAM, id, b.b, cut);
		raw_frame(r, H2_CONTINUATION, 0, id, b.b + cut, mid - cut);
		raw_frame(r, H2_CONTINUATION, H2_FLAG_END_HEADERS, id,
				b.b + mid, b.n - mid);
		if (r->status[id] != 200)
			fail_msg("cut at %u and %u: status %d", cut, mid,
					r->status[id]);
	}
	expect_served(r, 2 * cut + 1);
	raw_close(r);
}

/* Inside a block, nothing but its CONTINUATION. */
static void
test_frame_inside_header_block(void **state)
{
	static const uint8_t ping[8];
	struct raw *r = raw_open(*state);
	struct block b;

	hb_request(&b, "GET", "/a.txt");
	raw_frame(r, H2_HEADERS, H2_FLAG_END_STREAM, 1, b.b, 4);
	raw_frame(r, H2_PING, 0, 0, ping, 8);
	expect_goaway(r, H2_PROTOCOL_ERROR);
	raw_close(r);
}

static void
test_continuation_on_another_stream(void **state)
{
	struct raw *r = raw_open(*state);
	struct block b;

	hb_request(&b, "GET", "/a.txt");
	raw_frame(r, H2_HEADERS, H2_FLAG_END_STREAM, 1, b.b, 4);
	raw_frame(r, H2_CONTINUATION, H2_FLAG_END_HEADERS, 3, b.b + 4,
			b.n - 4);
	expect_goaway(r, H2_PROTOCOL_ERROR);
	raw_close(r);
}

static void
test_continuation_after_end_headers(void **state)
{
	struct raw *r = raw_open(*state);
	struct block b = { .n = 0 };

	raw_get(r, 1, "/q/held");
	hb_literal(&b, 0, "x-more", "1");
	raw_frame(r, H2_CONTINUATION, H2_FLAG_END_HEADERS, 1, b.b, b.n);
	expect_goaway(r, H2_PROTOCOL_ERROR);
	raw_close(r);
}

/* A block of the HEADERS and eight CONTINUATIONs is taken; an eighth
 * that does not end it is a flood (CVE-2024-27316; a ninth could not
 * end it either): ENHANCE_YOUR_CALM. */
static void
test_continuation_flood(void **state)
{
	struct raw *r = raw_open(*state);
	struct block b, pad = { .n = 0 };
	unsigned int i;

	hb_request(&b, "GET", "/a.txt");
	hb_literal(&pad, 0, "x-pad", "0123456789");
	raw_frame(r, H2_HEADERS, H2_FLAG_END_STREAM, 1, b.b, b.n);
	for (i = 0; i < 7; i++)
		raw_frame(r, H2_CONTINUATION, 0, 1, pad.b, pad.n);
	raw_frame(r, H2_CONTINUATION, H2_FLAG_END_HEADERS, 1, pad.b, pad.n);
	assert_int_equal(r->status[1], 200);
	raw_frame(r, H2_HEADERS, H2_FLAG_END_STREAM, 3, b.b, b.n);
	for (i = 0; i < 7; i++)
		raw_frame(r, H2_CONTINUATION, 0, 3, pad.b, pad.n);
	assert_int_equal(r->goaway, -1);
	raw_frame(r, H2_CONTINUATION, 0, 3, pad.b, pad.n);
	expect_goaway(r, H2_ENHANCE_YOUR_CALM);
	raw_close(r);
}

/* RFC 7541 4.2: a dynamic table size update opens a block, or is an
 * error, also after fields of the static table (which ewyk reads
 * itself) and across a CONTINUATION. */
static void
test_table_size_update_placement(void **state)
{
	struct raw *r = raw_open(*state);
	struct block b = { .n = 0 };

	hb_int(&b, 0x20, 5, 0);		/* size 0, first: fine */
	hb_index(&b, 2);
	hb_index(&b, 6);
	hb_literal(&b, 4, NULL, "/a.txt");
	hb_literal(&b, 1, NULL, "h");
	raw_headers(r, 1, H2_FLAG_END_STREAM, &b);
	assert_int_equal(r->status[1], 200);
	b.n = 0;
	hb_index(&b, 2);
	hb_index(&b, 6);
	raw_frame(r, H2_HEADERS, H2_FLAG_END_STREAM, 3, b.b, b.n);
	b.n = 0;
	hb_int(&b, 0x20, 5, 0);		/* after two fields */
	hb_literal(&b, 4, NULL, "/a.txt");
	raw_frame(r, H2_CONTINUATION, H2_FLAG_END_HEADERS, 3, b.b, b.n);
	expect_goaway(r, H2_COMPRESSION_ERROR);
	raw_close(r);
}

/* 6.5: SETTINGS ------------------------------------------------------------ */

struct settings_case {
	const char *what;
	uint16_t setting;
	uint32_t value;
	long error;	/* GOAWAY's code; -1: taken (acknowledged) */
};

static void
test_settings_values(void **state)
{
	static const struct settings_case cases[] = {
		{ "ENABLE_PUSH 2", H2_SET_ENABLE_PUSH, 2, H2_PROTOCOL_ERROR },
		{ "ENABLE_PUSH 1", H2_SET_ENABLE_PUSH, 1, -1 },
		{ "ENABLE_PUSH 0", H2_SET_ENABLE_PUSH, 0, -1 },
		{ "INITIAL_WINDOW_SIZE 2^31", H2_SET_INITIAL_WINDOW_SIZE,
			1u << 31, H2_FLOW_CONTROL_ERROR },
		{ "INITIAL_WINDOW_SIZE 2^31-1", H2_SET_INITIAL_WINDOW_SIZE,
			H2_WINDOW_MAX, -1 },
		{ "MAX_FRAME_SIZE 16383", H2_SET_MAX_FRAME_SIZE, 16383,
			H2_PROTOCOL_ERROR },
		{ "MAX_FRAME_SIZE 16384", H2_SET_MAX_FRAME_SIZE, 16384, -1 },
		{ "MAX_FRAME_SIZE 2^24-1", H2_SET_MAX_FRAME_SIZE,
			H2_MAX_FRAME_LIMIT, -1 },
		{ "MAX_FRAME_SIZE 2^24", H2_SET_MAX_FRAME_SIZE, 1u << 24,
			H2_PROTOCOL_ERROR },
		{ "NO_RFC7540_PRIORITIES 2", H2_SET_NO_RFC7540_PRIORITIES, 2,
			H2_PROTOCOL_ERROR },
		{ "an unknown setting", 0x7777, 12345, -1 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct settings_case *sc = &cases[i];
		struct raw *r = raw_open(*state);
		unsigned int acks = r->acks;

		raw_settings(r, sc->setting, sc->value);
		if (r->goaway != sc->error ||
				(sc->error == -1 && r->acks != acks + 1))
			fail_msg("%s: GOAWAY %ld, %u acknowledged; want %ld",
					sc->what, r->goaway, r->acks - acks,
					sc->error);
		if (sc->error == -1)
			expect_served(r, 1);
		else
			expect_goaway(r, (uint32_t)sc->error);
		raw_close(r);
	}
}

static void
test_settings_frames(void **state)
{
	uint8_t many[6 * 33] = { 0 };
	struct raw *r = raw_open(*state);
	unsigned int i;

	raw_frame(r, H2_SETTINGS, 0, 1, NULL, 0);	/* on a stream */
	expect_goaway(r, H2_PROTOCOL_ERROR);
	raw_close(r);
	r = raw_open(*state);
	raw_frame(r, H2_SETTINGS, H2_FLAG_ACK, 0, many, 6);
	expect_goaway(r, H2_FRAME_SIZE_ERROR);	/* an ACK with a payload */
	raw_close(r);
	r = raw_open(*state);
	raw_frame(r, H2_SETTINGS, 0, 0, many, 5);
	expect_goaway(r, H2_FRAME_SIZE_ERROR);
	raw_close(r);
	/* Thirty-two entries are taken, thirty-three are a flood. */
	for (i = 0; i < 33; i++) {
		many[6 * i + 1] = H2_SET_INITIAL_WINDOW_SIZE;
		h2_put32(many + 6 * i + 2, 70000 + i);
	}
	r = raw_open(*state);
	raw_frame(r, H2_SETTINGS, 0, 0, many, 6 * 32);
	expect_served(r, 1);
	raw_frame(r, H2_SETTINGS, 0, 0, many, 6 * 33);
	expect_goaway(r, H2_ENHANCE_YOUR_CALM);
	raw_close(r);
}

/* 6.9: windows ------------------------------------------------------------- */

static void
test_connection_window_overflow(void **state)
{
	struct raw *r = raw_open(*state);

	raw_u32(r, H2_WINDOW_UPDATE, 0, H2_WINDOW_MAX - H2_DEFAULT_WINDOW);
	assert_int_equal(r->goaway, -1);
	raw_u32(r, H2_WINDOW_UPDATE, 0, 1);
	expect_goaway(r, H2_FLOW_CONTROL_ERROR);
	raw_close(r);
}

static void
test_stream_window_overflow(void **state)
{
	struct raw *r = raw_open(*state);

	raw_get(r, 1, "/q/held");
	raw_u32(r, H2_WINDOW_UPDATE, 1, H2_WINDOW_MAX - H2_DEFAULT_WINDOW);
	assert_int_equal(r->resets, 0);
	raw_u32(r, H2_WINDOW_UPDATE, 1, 1);
	expect_reset(r, 1, H2_FLOW_CONTROL_ERROR, 3);
	assert_false(hh_run(r->h, 0));
	raw_close(r);
}

/* A new SETTINGS_INITIAL_WINDOW_SIZE that takes an open stream's window
 * past 2^31-1 is a connection error (6.9.2). */
static void
test_initial_window_change_overflows_a_stream(void **state)
{
	struct raw *r = raw_open(*state);

	raw_get(r, 1, "/q/held");
	raw_u32(r, H2_WINDOW_UPDATE, 1, H2_WINDOW_MAX - H2_DEFAULT_WINDOW);
	raw_settings(r, H2_SET_INITIAL_WINDOW_SIZE, H2_DEFAULT_WINDOW + 1);
	expect_goaway(r, H2_FLOW_CONTROL_ERROR);
	raw_close(r);
}

static void
test_stream_window_update_of_zero(void **state)
{
	struct raw *r = raw_open(*state);

	raw_get(r, 1, "/q/held");
	raw_u32(r, H2_WINDOW_UPDATE, 1, 0);
	expect_reset(r, 1, H2_PROTOCOL_ERROR, 3);
	raw_close(r);
}

/* DATA past a stream's window (256 KiB) is a stream error; past the
 * connection's (1 MiB), a connection error. /sink/'s reader reads
 * nothing here, so no window opens. */
static void
test_data_past_the_windows(void **state)
{
	struct raw *r = raw_open(*state);
	uint32_t id;
	unsigned int i;

	raw_post(r, 1, "/sink/a", NULL);
	for (i = 0; i < 16; i++)
		raw_data(r, 1, 0, H2_DEFAULT_FRAME);
	assert_int_equal(r->resets, 0);
	raw_data(r, 1, 0, 1);
	expect_reset(r, 1, H2_FLOW_CONTROL_ERROR, 3);
	raw_close(r);
	r = raw_open(*state);
	for (id = 1; id <= 7; id += 2) {
		raw_post(r, id, "/sink/a", NULL);
		for (i = 0; i < 16; i++)
			raw_data(r, id, 0, H2_DEFAULT_FRAME);
	}
	assert_int_equal(r->resets, 0);
	assert_int_equal(r->goaway, -1);
	raw_post(r, 9, "/sink/a", NULL);
	raw_data(r, 9, 0, 1);
	expect_goaway(r, H2_FLOW_CONTROL_ERROR);
	raw_close(r);
}

/* 8.1.1: content-length ---------------------------------------------------- */

static void
test_content_length_mismatch(void **state)
{
	struct raw *r = raw_open(*state);
	struct block b;

	raw_post(r, 1, "/q/x", "10");		/* short */
	raw_data(r, 1, H2_FLAG_END_STREAM, 9);
	expect_reset(r, 1, H2_PROTOCOL_ERROR, 3);
	raw_post(r, 5, "/q/x", "10");		/* past */
	raw_data(r, 5, 0, 11);
	expect_reset(r, 5, H2_PROTOCOL_ERROR, 7);
	assert_int_equal(r->h->nqueued, 0);
	raw_post(r, 9, "/sink/a", "10");	/* streamed, past */
	raw_data(r, 9, 0, 5);
	raw_data(r, 9, 0, 6);
	expect_reset(r, 9, H2_PROTOCOL_ERROR, 11);
	assert_int_equal(r->h->nqueued, 1);	/* /sink/ is taken early */
	hb_request(&b, "POST", "/q/x");		/* no DATA at all */
	hb_literal(&b, 28, NULL, "1");
	raw_headers(r, 13, H2_FLAG_END_STREAM, &b);
	expect_reset(r, 13, H2_PROTOCOL_ERROR, 15);
	raw_post(r, 17, "/q/x", "10");		/* short, ended by trailers */
	raw_data(r, 17, 0, 4);
	b.n = 0;
	hb_literal(&b, 0, "x-trailer", "1");
	raw_headers(r, 17, H2_FLAG_END_STREAM, &b);
	expect_reset(r, 17, H2_PROTOCOL_ERROR, 19);
	assert_int_equal(r->h->nqueued, 1);
	raw_post(r, 21, "/q/x", "10");		/* exact */
	raw_data(r, 21, 0, 4);
	raw_data(r, 21, H2_FLAG_END_STREAM, 6);
	assert_int_equal(r->h->nqueued, 2);
	assert_int_equal(r->rst[21], -1);
	assert_int_equal(r->goaway, -1);
	raw_close(r);
}

/* 8.2, 8.3: fields --------------------------------------------------------- */

/* Each a malformed request (8.1.1): a stream error PROTOCOL_ERROR, the
 * request never reaches its route, the connection goes on. */
static void
test_malformed_fields(void **state)
{
	static const struct {
		const char *what;
		const char *fields[12];	/* name, value, ..., NULL */
	} cases[] = {
		{ "no :method", { ":scheme", "http", ":path", "/q/x", NULL } },
		{ "no :scheme", { ":method", "GET", ":path", "/q/x", NULL } },
		{ "no :path", { ":method", "GET", ":scheme", "http", NULL } },
		{ "an empty :path", { ":method", "GET", ":scheme", "http",
			":path", "", NULL } },
		{ "a :path not from the root", { ":method", "GET", ":scheme",
			"http", ":path", "q/x", NULL } },
		{ ":path twice", { ":method", "GET", ":scheme", "http",
			":path", "/q/x", ":path", "/q/y", NULL } },
		{ ":method twice", { ":method", "GET", ":method", "GET",
			":scheme", "http", ":path", "/q/x", NULL } },
		{ "a pseudo-header after a field", { ":method", "GET",
			":scheme", "http", "x-a", "1", ":path", "/q/x", NULL } },
		{ "an unknown pseudo-header", { ":method", "GET", ":scheme",
			"http", ":path", "/q/x", ":foo", "1", NULL } },
		{ ":status in a request", { ":status", "200", ":method", "GET",
			":scheme", "http", ":path", "/q/x", NULL } },
		{ "CONNECT with :path", { ":method", "CONNECT", ":authority",
			"h:1", ":scheme", "http", ":path", "/q/x", NULL } },
		{ "an upper-case name", { ":method", "GET", ":scheme", "http",
			":path", "/q/x", "X-Up", "1", NULL } },
		{ "an empty name", { ":method", "GET", ":scheme", "http",
			":path", "/q/x", "", "1", NULL } },
		{ "a space in a name", { ":method", "GET", ":scheme", "http",
			":path", "/q/x", "x a", "1", NULL } },
		{ "a value that begins with a space", { ":method", "GET",
			":scheme", "http", ":path", "/q/x", "x-a", " 1", NULL } },
		{ "a value with a line feed", { ":method", "GET", ":scheme",
			"http", ":path", "/q/x", "x-a", "1\n2", NULL } },
		{ "connection", { ":method", "GET", ":scheme", "http", ":path",
			"/q/x", "connection", "close", NULL } },
		{ "keep-alive", { ":method", "GET", ":scheme", "http", ":path",
			"/q/x", "keep-alive", "1", NULL } },
		{ "proxy-connection", { ":method", "GET", ":scheme", "http",
			":path", "/q/x", "proxy-connection", "1", NULL } },
		{ "upgrade", { ":method", "GET", ":scheme", "http", ":path",
			"/q/x", "upgrade", "h2c", NULL } },
		{ "transfer-encoding", { ":method", "GET", ":scheme", "http",
			":path", "/q/x", "transfer-encoding", "chunked", NULL } },
		{ "te other than trailers", { ":method", "GET", ":scheme",
			"http", ":path", "/q/x", "te", "gzip", NULL } },
		{ "two content-lengths", { ":method", "GET", ":scheme", "http",
			":path", "/q/x", "content-length", "0",
			"content-length", "0", NULL } },
		{ "a content-length not a number", { ":method", "GET",
			":scheme", "http", ":path", "/q/x", "content-length",
			"1x", NULL } },
	};
	struct raw *r = raw_open(*state);
	uint32_t id = 1;
	size_t i, f;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++, id += 4) {
		const char *const *fl = cases[i].fields;
		struct block b = { .n = 0 };

		for (f = 0; fl[f] != NULL; f += 2)
			hb_literal(&b, 0, fl[f], fl[f + 1]);
		r->resets = 0;
		raw_headers(r, id, H2_FLAG_END_STREAM, &b);
		if (r->rst[id] != H2_PROTOCOL_ERROR || r->status[id] != 0)
			fail_msg("%s: RST_STREAM %ld, status %d", cases[i].what,
					r->rst[id], r->status[id]);
		expect_reset(r, id, H2_PROTOCOL_ERROR, id + 2);
	}
	assert_int_equal(r->h->nqueued, 0);
	raw_close(r);
}

/* Trailers: checked as fields, never pseudo-headers; a second HEADERS
 * without END_STREAM is not trailers (8.1). */
static void
test_trailers(void **state)
{
	struct raw *r = raw_open(*state);
	struct block b = { .n = 0 };

	raw_post(r, 1, "/q/x", NULL);
	raw_data(r, 1, 0, 3);
	hb_literal(&b, 0, "x-checksum", "abc");
	raw_headers(r, 1, H2_FLAG_END_STREAM, &b);
	assert_int_equal(r->h->nqueued, 1);	/* taken */
	raw_post(r, 3, "/q/x", NULL);
	b.n = 0;
	hb_literal(&b, 4, NULL, "/q/y");
	raw_headers(r, 3, H2_FLAG_END_STREAM, &b);
	expect_reset(r, 3, H2_PROTOCOL_ERROR, 5);
	raw_post(r, 7, "/q/x", NULL);
	b.n = 0;
	hb_literal(&b, 0, "x-checksum", "abc");
	raw_headers(r, 7, 0, &b);
	expect_reset(r, 7, H2_PROTOCOL_ERROR, 9);
	assert_int_equal(r->h->nqueued, 1);
	raw_close(r);
}

/* What may be: te: trailers, OPTIONS *, an empty value, a value with a
 * tab inside. */
static void
test_fields_that_pass(void **state)
{
	struct raw *r = raw_open(*state);
	struct block b;

	hb_request(&b, "GET", "/q/x");
	hb_literal(&b, 0, "te", "trailers");
	hb_literal(&b, 0, "x-empty", "");
	hb_literal(&b, 0, "x-tab", "a\tb");
	raw_headers(r, 1, H2_FLAG_END_STREAM, &b);
	assert_int_equal(r->h->nqueued, 1);
	hb_request(&b, "OPTIONS", "*");
	raw_headers(r, 3, H2_FLAG_END_STREAM, &b);
	assert_int_equal(r->status[3], 200);	/* what the server takes */
	assert_int_equal(r->resets, 0);
	expect_served(r, 5);
	raw_close(r);
}

/* HPACK's static table, read without the inflater for a whole entry
 * (index 1 to 61): each field a handler gets is the one nghttp2's own
 * inflater reads from the same bytes. */
static void
test_static_table_entries(void **state)
{
	struct raw *r = raw_open(*state);
	nghttp2_hd_inflater *ref;
	unsigned int i;
	uint32_t id = 1;

	assert_int_equal(nghttp2_hd_inflate_new(&ref), 0);
	for (i = 15; i <= 61; i++) {
		const struct ewyk_request *q;
		struct block b;
		nghttp2_nv nv;
		int fl = 0;
		uint8_t one = (uint8_t)(0x80 | i);

		if (i == 28 || i == 57)	/* content-length "", transfer-
					 * encoding: malformed */
			continue;
		hb_request(&b, "GET", "/q/x");
		hb_index(&b, i);
		raw_headers(r, id, H2_FLAG_END_STREAM, &b);
		assert_int_equal(r->h->nqueued, 1);
		q = &r->h->queue[0]->req;
		assert_true(nghttp2_hd_inflate_hd2(ref, &nv, &fl, &one, 1, 1)
				== 1);
		assert_true(fl & NGHTTP2_HD_INFLATE_EMIT);
		nghttp2_hd_inflate_end_headers(ref);
		/* headers[0] is :authority's host */
		assert_int_equal(q->nheaders, 2);
		assert_int_equal(q->headers[1].name.len, nv.namelen);
		assert_memory_equal(q->headers[1].name.p, nv.name, nv.namelen);
		assert_int_equal(q->headers[1].value.len, nv.valuelen);
		assert_memory_equal(q->headers[1].value.p, nv.value,
				nv.valuelen);
		assert_true(hh_run(r->h, 0));
		raw_read(r);
		assert_int_equal(r->status[id], 200);
		id += 2;
	}
	nghttp2_hd_inflate_del(ref);
	/* The pseudo-headers' entries: GET, https and http, / and
	 * /index.html (the same file), an empty :authority. */
	raw_frame(r, H2_HEADERS, H2_FLAG_END_STREAM | H2_FLAG_END_HEADERS, id,
			(const uint8_t []){ 0x82, 0x87, 0x84, 0x81 }, 4);
	raw_frame(r, H2_HEADERS, H2_FLAG_END_STREAM | H2_FLAG_END_HEADERS,
			id + 2, (const uint8_t []){ 0x82, 0x86, 0x85, 0x81 }, 4);
	assert_int_equal(r->status[id], 200);
	assert_int_equal(r->data[id], 14);
	assert_int_equal(r->status[id + 2], 200);
	assert_int_equal(r->data[id + 2], 14);
	raw_close(r);
}

/* The value of the handler's field of that name; NULL: none. */
static const char *
field_of(const struct ewyk_request *q, const char *name, char *buf,
		size_t cap)
{
	uint32_t i;

	for (i = 0; i < q->nheaders; i++)
		if (q->headers[i].name.len == strlen(name) &&
				memcmp(q->headers[i].name.p, name,
				strlen(name)) == 0) {
			snprintf(buf, cap, "%.*s", (int)q->headers[i].value.len,
					q->headers[i].value.p);
			return buf;
		}
	return NULL;
}

/* Fields of the dynamic table named whole by one byte (indexes 62 to
 * 126), read without the inflater: the entries the client's literals
 * with incremental indexing made, newest first (RFC 7541 2.3.3); one
 * past the table is a decoding error. */
static void
test_dynamic_table_entries(void **state)
{
	struct raw *r = raw_open(*state);
	struct block b;
	char v[16];

	hb_request(&b, "GET", "/q/x");
	hb_int(&b, 0x40, 6, 0);		/* x-a: 1, indexed: 62 */
	hb_string(&b, "x-a", 3);
	hb_string(&b, "1", 1);
	raw_headers(r, 1, H2_FLAG_END_STREAM, &b);
	hb_request(&b, "GET", "/q/x");
	hb_index(&b, 62);
	hb_int(&b, 0x40, 6, 0);		/* x-b: 2: 62, x-a: 63 */
	hb_string(&b, "x-b", 3);
	hb_string(&b, "2", 1);
	raw_headers(r, 3, H2_FLAG_END_STREAM, &b);
	hb_request(&b, "GET", "/q/x");
	hb_index(&b, 62);
	hb_index(&b, 63);
	raw_headers(r, 5, H2_FLAG_END_STREAM, &b);
	assert_int_equal(r->h->nqueued, 3);
	assert_string_equal(field_of(&r->h->queue[0]->req, "x-a", v, 16), "1");
	assert_string_equal(field_of(&r->h->queue[1]->req, "x-a", v, 16), "1");
	assert_string_equal(field_of(&r->h->queue[1]->req, "x-b", v, 16), "2");
	assert_string_equal(field_of(&r->h->queue[2]->req, "x-a", v, 16), "1");
	assert_string_equal(field_of(&r->h->queue[2]->req, "x-b", v, 16), "2");
	assert_int_equal(r->h->queue[2]->req.nheaders, 3);
	hb_request(&b, "GET", "/q/x");
	hb_index(&b, 64);
	raw_headers(r, 7, H2_FLAG_END_STREAM, &b);
	expect_goaway(r, H2_COMPRESSION_ERROR);
	raw_close(r);
}

/* RFC 9110 6.6.1: the answers carry Date, the present. */
static void
test_answers_carry_date(void **state)
{
	struct raw *r = raw_open(*state);
	int64_t t;

	raw_get(r, 1, "/a.txt");
	assert_int_equal(r->status[1], 200);
	assert_int_equal(strlen(r->date), 29);
	assert_true(http_date_parse(r->date, 29, time(NULL), &t));
	assert_true(llabs(t - (int64_t)time(NULL)) <= 2);
	r->date[0] = '\0';
	raw_get(r, 3, "/none.txt");
	assert_int_equal(r->status[3], 404);
	assert_int_equal(strlen(r->date), 29);
	raw_close(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		HH_TEST(test_data_on_half_closed_stream),
		HH_TEST(test_headers_on_half_closed_stream),
		HH_TEST(test_half_closed_stream_takes_window_update_and_priority),
		HH_TEST(test_data_on_closed_stream),
		HH_TEST(test_headers_on_closed_stream),
		HH_TEST(test_data_on_stream_reset_by_client),
		HH_TEST(test_headers_on_stream_reset_by_client),
		HH_TEST(test_data_after_client_reset_keeps_the_connection_window),
		HH_TEST(test_frames_after_our_reset_are_ignored),
		HH_TEST(test_padded_frames),
		HH_TEST(test_peer_close_with_data_held_by_the_connection_window),
		HH_TEST(test_stream_id_below_one_opened),
		HH_TEST(test_stream_id_below_one_open),
		HH_TEST(test_stream_id_far_below_one_opened),
		HH_TEST(test_data_on_skipped_stream),
		HH_TEST(test_closed_streams_remembered_past_an_old_one),
		HH_TEST(test_priority_on_stream_zero),
		HH_TEST(test_priority_on_itself),
		HH_TEST(test_headers_depending_on_itself),
		HH_TEST(test_priority_of_wrong_length),
		HH_TEST(test_priority_on_idle_stream),
		HH_TEST(test_window_update_on_idle_stream),
		HH_TEST(test_rst_stream_on_idle_stream),
		HH_TEST(test_data_on_idle_stream),
		HH_TEST(test_stream_frames_on_stream_zero),
		HH_TEST(test_header_block_in_continuations),
		HH_TEST(test_frame_inside_header_block),
		HH_TEST(test_continuation_on_another_stream),
		HH_TEST(test_continuation_after_end_headers),
		HH_TEST(test_continuation_flood),
		HH_TEST(test_table_size_update_placement),
		HH_TEST(test_settings_values),
		HH_TEST(test_settings_frames),
		HH_TEST(test_connection_window_overflow),
		HH_TEST(test_stream_window_overflow),
		HH_TEST(test_initial_window_change_overflows_a_stream),
		HH_TEST(test_stream_window_update_of_zero),
		HH_TEST(test_data_past_the_windows),
		HH_TEST(test_content_length_mismatch),
		HH_TEST(test_malformed_fields),
		HH_TEST(test_trailers),
		HH_TEST(test_fields_that_pass),
		HH_TEST(test_static_table_entries),
		HH_TEST(test_dynamic_table_entries),
		HH_TEST(test_answers_carry_date),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
