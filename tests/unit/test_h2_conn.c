/* SPDX-License-Identifier: BSD-3-Clause */
/* HTTP/2 conversations with the connection layer: an nghttp2 client
 * session is the peer, over the scripted transport of http_harness.h. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "http_harness.h"

static void
expect_stream(struct hh_h2 *c, int32_t id, int status, const void *body,
		size_t len)
{
	struct hh_stream *st = hh_h2_stream(c, id);

	if (!st->closed || st->status != status || st->error != 0)
		fail_msg("stream %d: closed %d, status %d, error %u; want %d",
				id, st->closed, st->status, st->error, status);
	assert_int_equal(st->len, len);
	assert_memory_equal(st->body, body, len);
}

static void
test_static(void **state)
{
	struct hh_h2 *c = hh_h2_new(hh_connect(*state), NULL, 0, 0);
	int32_t a = hh_h2_request(c, "GET", "/a.txt", NULL, 0);
	int32_t none = hh_h2_request(c, "GET", "/none.txt", NULL, 0);
	int32_t idx = hh_h2_request(c, "GET", "/", NULL, 0);
	int32_t head = hh_h2_request(c, "HEAD", "/a.txt", NULL, 0);

	hh_h2_pump(c);	/* four streams at once */
	expect_stream(c, a, 200, HH_A_TXT, strlen(HH_A_TXT));
	assert_non_null(strstr(hh_h2_stream(c, a)->headers,
			"content-length: 27\n"));
	assert_non_null(strstr(hh_h2_stream(c, a)->headers, "etag: \""));
	expect_stream(c, none, 404, "404 Not Found\n", 14);
	expect_stream(c, idx, 200, "<h1>ewyk</h1>\n", 14);
	expect_stream(c, head, 200, "", 0);
	assert_non_null(strstr(hh_h2_stream(c, head)->headers,
			"content-length: 27\n"));
	hh_h2_free(c);
}

/* :status is written ahead of the deflater's fields: a table size the
 * client's SETTINGS changed must still start the block (nghttp2's client
 * refuses the block otherwise), for a status of HPACK's static table and
 * for one written as a literal. */
static void
test_status_after_table_resize(void **state)
{
	nghttp2_settings_entry iv = { NGHTTP2_SETTINGS_HEADER_TABLE_SIZE, 256 };
	struct hh_h2 *c = hh_h2_new(hh_connect(*state), &iv, 1, 0);
	int32_t a = hh_h2_request(c, "GET", "/a.txt", NULL, 0);
	int32_t del = hh_h2_request(c, "DELETE", "/a.txt", NULL, 0);
	int32_t again = hh_h2_request(c, "GET", "/a.txt", NULL, 0);
	struct hh_stream *st;

	hh_h2_pump(c);
	expect_stream(c, a, 200, HH_A_TXT, strlen(HH_A_TXT));
	st = hh_h2_stream(c, del);
	assert_true(st->closed);
	assert_int_equal(st->status, 405);
	assert_int_equal(st->error, 0);
	expect_stream(c, again, 200, HH_A_TXT, strlen(HH_A_TXT));
	assert_non_null(strstr(hh_h2_stream(c, again)->headers,
			"server: ewyk/"));
	hh_h2_free(c);
}

/* A body past 4 KiB is gathered in a body buffer, given whole to its
 * handler, and the buffer comes back when the handler is done. */
static void
test_gathered_body(void **state)
{
	struct hh *h = *state;
	struct hh_h2 *c = hh_h2_new(hh_connect(h), NULL, 0, 0);
	int32_t id = hh_h2_request(c, "POST", "/q/big", hh_big(), 30000);
	struct ewyk_str body;

	hh_h2_pump(c);
	assert_int_equal(h->nqueued, 1);
	assert_int_equal(h->stats.body_slots_in_use, 1);
	body = ewyk_request_body(&h->queue[0]->req);
	assert_int_equal(body.len, 30000);
	assert_memory_equal(body.p, hh_big(), 30000);
	assert_true(hh_run(h, 0));
	hh_h2_pump(c);
	expect_stream(c, id, 200, "q /q/big\n", 9);
	assert_int_equal(h->stats.body_slots_in_use, 0);
	hh_h2_free(c);
}

/* Two streams whose bodies stop coming half way, one in a body buffer
 * (50,000 of 100,000 bytes), one small (100 of 200, in the shard's
 * memory): each is answered 408 once the header timeout passes without
 * DATA, at once (no other event on the connection), its buffer comes
 * back, and the connection serves a whole body after. */
static void
test_stalled_bodies_cut(void **state)
{
	struct hh *h = hh_new(2000, 0);
	struct hh_h2 *c = hh_h2_new(hh_connect(h), NULL, 0, 0);
	const char *const big[] = { "content-length", "100000", NULL };
	const char *const small[] = { "content-length", "200", NULL };
	int32_t a, b, d;
	uint32_t out;

	(void)state;
	a = hh_h2_request_with(c, "POST", "/q/a", big, hh_big(), 100000);
	hh_h2_stream(c, a)->req_held = 50000;
	b = hh_h2_request_with(c, "POST", "/q/b", small, hh_big(), 200);
	hh_h2_stream(c, b)->req_held = 100;
	hh_h2_pump(c);
	assert_int_equal(h->stats.body_slots_in_use, 1);
	assert_int_equal(h->nqueued, 0);	/* neither body is whole */
	hh_advance(h, 1900);
	hh_h2_pump(c);
	assert_false(hh_h2_stream(c, a)->closed || hh_h2_stream(c, b)->closed);
	out = c->k->out_len;
	hh_advance(h, 200);
	/* The timeout wrote, and told the transport to send it. */
	assert_true(c->k->out_len > out);
	assert_int_equal(c->k->pushed, c->k->out_len);
	hh_h2_pump(c);
	assert_int_equal(hh_h2_stream(c, a)->status, 408);
	assert_int_equal(hh_h2_stream(c, b)->status, 408);
	assert_int_equal(h->stats.body_timeouts, 2);
	assert_int_equal(h->stats.body_slots_in_use, 0);
	assert_false(c->goaway);
	d = hh_h2_request(c, "POST", "/q/d", hh_big(), 30000);
	hh_h2_pump(c);
	assert_true(hh_run(h, 0));
	hh_h2_pump(c);
	expect_stream(c, d, 200, "q /q/d\n", 7);
	hh_h2_free(c);
	hh_free(h);
}

/* Queued handlers answered in reverse: each stream ends when its own
 * answer comes, whatever the order. */
static void
test_queued_out_of_order(void **state)
{
	struct hh *h = *state;
	struct hh_h2 *c = hh_h2_new(hh_connect(h), NULL, 0, 0);
	int32_t id[3];
	char want[16];
	int i;

	for (i = 0; i < 3; i++) {
		snprintf(want, sizeof(want), "/q/%d", i);
		id[i] = hh_h2_request(c, "GET", want, NULL, 0);
	}
	hh_h2_pump(c);
	assert_int_equal(h->nqueued, 3);
	for (i = 2; i >= 0; i--) {
		int n = snprintf(want, sizeof(want), "q /q/%d\n", i);

		assert_true(hh_run(h, (unsigned int)i));
		hh_h2_pump(c);
		expect_stream(c, id[i], 200, want, (size_t)n);
		if (i > 0)
			assert_false(hh_h2_stream(c, id[i - 1])->closed);
	}
	hh_h2_free(c);
}

/* The harness's /echo, a body-stream route whose answer streams the body
 * back as it is read: the content-length the request said, or none; and a
 * body larger than the connection's window, which only flows as the
 * answer takes it. */
static void
test_echo(void **state)
{
	struct hh *h = *state;
	struct hh_h2 *c = hh_h2_new(hh_connect(h), NULL, 0, 0);
	static uint8_t body[3 << 20];
	static char big_len[24];
	static const char *const known_fields[] = { "content-length", "50000",
		NULL };
	const char *const big_fields[] = { "content-length", big_len, NULL };
	int32_t id, known, big;
	size_t i;

	for (i = 0; i < sizeof(body); i++)
		body[i] = (uint8_t)(i * 7 + (i >> 12));
	id = hh_h2_request(c, "POST", "/echo", body, 50000);
	snprintf(big_len, sizeof(big_len), "%zu", sizeof(body));
	known = hh_h2_request_with(c, "PUT", "/echo", known_fields, body,
			50000);
	big = hh_h2_request_with(c, "POST", "/echo", big_fields, body,
			sizeof(body));
	hh_h2_pump(c);
	expect_stream(c, id, 200, body, 50000);
	assert_null(strstr(hh_h2_stream(c, id)->headers, "content-length"));
	expect_stream(c, known, 200, body, 50000);
	assert_non_null(strstr(hh_h2_stream(c, known)->headers,
			"content-length: 50000\n"));
	expect_stream(c, big, 200, body, sizeof(body));
	assert_int_equal(h->released, h->dispatched);
	hh_h2_free(c);
}

/*
 * A client with a 1024-byte window, giving it back only when the test says:
 * first bytes, then the rest of what it read, in two WINDOW_UPDATEs. The
 * server sends no byte past the window, and goes on after the updates.
 */
static void
fetch_windowed(struct hh *h, const char *path, size_t first)
{
	nghttp2_settings_entry iv = { NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 1024 };
	struct hh_h2 *c = hh_h2_new(hh_connect(h), &iv, 1, HH_H2_MANUAL_WINDOW);
	int32_t id = hh_h2_request(c, "GET", path, NULL, 0);
	struct hh_stream *st;
	size_t acked = 0;
	int rounds = 0;

	hh_h2_pump(c);
	if (h->nqueued > 0) {
		assert_true(hh_run(h, 0));
		hh_h2_pump(c);
	}
	st = hh_h2_stream(c, id);
	assert_int_equal(st->status, 200);
	assert_int_equal(st->len, 1024);
	hh_h2_pump(c);
	assert_int_equal(st->len, 1024);	/* nothing without an update */
	while (!st->closed) {
		size_t got = st->len;

		if (++rounds > 2 * HH_BIG_SIZE / 1024)
			fail_msg("%s stalled at %zu of %d bytes", path, st->len,
					HH_BIG_SIZE);
		assert_int_equal(nghttp2_session_consume_connection(c->ng,
				got - acked), 0);
		assert_int_equal(nghttp2_submit_window_update(c->ng,
				NGHTTP2_FLAG_NONE, id, (int32_t)first), 0);
		hh_h2_pump(c);
		assert_true(st->len <= acked + 1024 + first);
		assert_int_equal(nghttp2_submit_window_update(c->ng,
				NGHTTP2_FLAG_NONE, id, (int32_t)(got - acked - first)),
				0);
		acked = got;
		hh_h2_pump(c);
		assert_true(st->len <= acked + 1024);
	}
	expect_stream(c, id, 200, hh_big(), HH_BIG_SIZE);
	hh_h2_free(c);
}

static void
test_flow_control_file(void **state)
{
	fetch_windowed(*state, "/big.bin", 1024);
}

/* A source waits for a window of at least 1024 bytes (its cap): an
 * update of 600 leaves it waiting, the next one of 424 must wake it. */
static void
test_flow_control_source(void **state)
{
	fetch_windowed(*state, "/stream/x", 600);
}

/*
 * The same source, for a client that gives back its window as its
 * application reads (nghttp2_session_consume): 600 bytes, then the rest,
 * which nghttp2 holds back while it is less than half its window. The
 * server, with only 600 bytes of window, must send what the window takes
 * (the rest of its 1024-byte read waits in the stream) rather than wait
 * for a window the client will never open: the stream finishes.
 */
static void
test_source_with_small_updates(void **state)
{
	nghttp2_settings_entry iv = { NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 1024 };
	struct hh *h = *state;
	struct hh_h2 *c = hh_h2_new(hh_connect(h), &iv, 1, HH_H2_MANUAL_WINDOW);
	int32_t id = hh_h2_request(c, "GET", "/stream/x", NULL, 0);
	struct hh_stream *st = hh_h2_stream(c, id);
	size_t consumed = 0;
	int rounds = 0;

	hh_h2_pump(c);
	assert_true(hh_run(h, 0));
	hh_h2_pump(c);
	assert_int_equal(st->len, 1024);
	while (!st->closed) {
		size_t part = st->len - consumed < 600 ? st->len - consumed : 600;

		if (++rounds > 4 * HH_BIG_SIZE / 600)
			fail_msg("stalled at %zu of %d bytes", st->len, HH_BIG_SIZE);
		assert_int_equal(nghttp2_session_consume(c->ng, id, part), 0);
		hh_h2_pump(c);
		assert_int_equal(nghttp2_session_consume(c->ng, id,
				st->len - consumed - part), 0);
		consumed = st->len;
		hh_h2_pump(c);
	}
	expect_stream(c, id, 200, hh_big(), HH_BIG_SIZE);
	hh_h2_free(c);
}

/* Drain: GOAWAY NO_ERROR naming the stream in flight, which still gets its
 * answer; a stream opened after it is refused; then the close. */
static void
test_goaway_on_drain(void **state)
{
	struct hh *h = *state;
	struct hh_conn *k = hh_connect(h);
	struct hh_h2 *c = hh_h2_new(k, NULL, 0, 0);
	int32_t id = hh_h2_request(c, "GET", "/q/inflight", NULL, 0), late;
	unsigned int dispatched;
	const uint8_t *d;
	ssize_t n;

	hh_h2_pump(c);
	assert_int_equal(h->nqueued, 1);
	dispatched = h->dispatched;
	http_server_drain(h->srv);
	/* The client opens another before it reads the GOAWAY. */
	late = hh_h2_request(c, "GET", "/a.txt", NULL, 0);
	while ((n = nghttp2_session_mem_send(c->ng, &d)) > 0)
		hh_send(k, d, (size_t)n);
	assert_int_equal(h->dispatched, dispatched);
	hh_h2_pump(c);
	assert_true(c->goaway);
	assert_int_equal(c->goaway_error, NGHTTP2_NO_ERROR);
	assert_int_equal(c->goaway_last, id);
	assert_true(hh_h2_stream(c, late)->closed);
	assert_int_equal(hh_h2_stream(c, late)->error, NGHTTP2_REFUSED_STREAM);
	assert_int_equal(hh_h2_stream(c, late)->status, 0);
	assert_false(k->closed);
	assert_true(hh_run(h, 0));
	hh_h2_pump(c);
	expect_stream(c, id, 200, "q /q/inflight\n", 14);
	assert_true(k->closed);
	assert_false(k->aborted);
	hh_h2_free(c);
}

/* DATA on a stream never opened: a connection error (RFC 9113 6.1). */
static void
test_data_on_idle_stream(void **state)
{
	static const uint8_t data[] = { 0, 0, 3, NGHTTP2_DATA,
		NGHTTP2_FLAG_END_STREAM, 0, 0, 0, 5, 'a', 'b', 'c' };
	struct hh_conn *k = hh_connect(*state);
	struct hh_h2 *c = hh_h2_new(k, NULL, 0, 0);

	hh_h2_pump(c);
	assert_false(c->goaway);
	hh_send(k, data, sizeof(data));
	hh_h2_pump(c);
	assert_true(c->goaway);
	assert_int_equal(c->goaway_error, NGHTTP2_PROTOCOL_ERROR);
	assert_true(k->closed);
	hh_h2_free(c);
}

/* HEADERS without :path: that stream fails, the connection goes on. */
static void
test_headers_without_path(void **state)
{
	static const nghttp2_nv nv[] = {
		{ (uint8_t *)":method", (uint8_t *)"GET", 7, 3, 0 },
		{ (uint8_t *)":scheme", (uint8_t *)"http", 7, 4, 0 },
		{ (uint8_t *)":authority", (uint8_t *)"h", 10, 1, 0 },
	};
	struct hh_conn *k = hh_connect(*state);
	struct hh_h2 *c = hh_h2_new(k, NULL, 0, 0);
	int32_t bad = nghttp2_submit_request(c->ng, NULL, nv, 3, NULL, NULL);
	int32_t good = hh_h2_request(c, "GET", "/a.txt", NULL, 0);
	struct hh_stream *st;

	hh_h2_pump(c);
	st = hh_h2_stream(c, bad);
	assert_true(st->closed);
	if (!(st->status == 400 || st->error == NGHTTP2_PROTOCOL_ERROR))
		fail_msg("no :path: status %d, error %u", st->status, st->error);
	expect_stream(c, good, 200, HH_A_TXT, strlen(HH_A_TXT));
	assert_false(c->goaway);
	assert_false(k->closed);
	hh_h2_free(c);
}

/* More streams than SETTINGS_MAX_CONCURRENT_STREAMS (100), sent before
 * the client has read that setting: the one past the limit is refused. */
static void
test_too_many_streams(void **state)
{
	struct hh *h = *state;
	struct hh_conn *k = hh_connect(h);
	struct hh_h2 *c = hh_h2_new(k, NULL, 0, HH_H2_NO_PEER_LIMIT);
	int32_t id[101];
	char path[16];
	int i;

	for (i = 0; i < 101; i++) {
		snprintf(path, sizeof(path), "/q/%d", i);
		id[i] = hh_h2_request(c, "GET", path, NULL, 0);
	}
	hh_h2_pump(c);
	assert_int_equal(h->nqueued, 100);
	for (i = 0; i < 100; i++)
		assert_false(hh_h2_stream(c, id[i])->closed);
	assert_true(hh_h2_stream(c, id[100])->closed);
	if (hh_h2_stream(c, id[100])->error != NGHTTP2_REFUSED_STREAM &&
			hh_h2_stream(c, id[100])->error != NGHTTP2_PROTOCOL_ERROR)
		fail_msg("stream 101 closed with %u",
				hh_h2_stream(c, id[100])->error);
	/* The hundred in flight are answered. */
	while (h->nqueued > 0)
		assert_true(hh_run(h, 0));
	hh_h2_pump(c);
	for (i = 0; i < 100; i++)
		assert_int_equal(hh_h2_stream(c, id[i])->status, 200);
	assert_false(k->closed);
	hh_h2_free(c);
}

/* Rapid reset: 200 cancelled streams a second are tolerated, the 201st
 * ends the session with ENHANCE_YOUR_CALM. */
static void
test_reset_flood(void **state)
{
	struct hh *h = *state;
	struct hh_conn *k = hh_connect(h);
	struct hh_h2 *c = hh_h2_new(k, NULL, 0, 0);
	int i;

	for (i = 0; i < 201; i++) {
		int32_t id = hh_h2_request(c, "GET", "/q/reset", NULL, 0);

		hh_h2_pump(c);
		assert_int_equal(nghttp2_submit_rst_stream(c->ng,
				NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL), 0);
		hh_h2_pump(c);
		if (i < 200)
			assert_false(c->goaway);
	}
	assert_true(c->goaway);
	assert_int_equal(c->goaway_error, NGHTTP2_ENHANCE_YOUR_CALM);
	assert_int_equal(h->stats.h2_reset_floods, 1);
	assert_true(k->closed);
	hh_h2_free(c);
}

/* Malformed input over HTTP/2, sent raw after the preface: each answered
 * by the protocol's own means, never by a reset of the connection. A
 * stream's error (RFC 9113 8.1.1: a content-length that the DATA belie)
 * is its RST_STREAM, and the connection goes on; a connection's error is
 * GOAWAY, then the close. */

#define FR(len, type, flags, id) (len) >> 16 & 0xff, (len) >> 8 & 0xff, \
	(len) & 0xff, type, flags, 0, 0, 0, id
#define POST_Q(cl) 0x83, 0x86, 0x04, 4, '/', 'q', '/', 'x', 0x01, 1, 'h', \
	0x0f, 0x0d, 2, cl[0], cl[1]	/* HPACK: POST /q/x, content-length */
#define GET_A 0x82, 0x86, 0x04, 6, '/', 'a', '.', 't', 'x', 't', 0x01, 1, 'h'

struct raw_case {
	const char *what;
	uint8_t bytes[64];
	size_t len;
	uint8_t type;		/* of the answer: RST_STREAM or GOAWAY */
	uint32_t error;
};

/* The error code of the last frame of type the server wrote; -1: none. */
static long
last_error(const struct hh_conn *k, uint8_t type)
{
	uint32_t at = 0;
	long err = -1;

	while (k->out_len - at >= 9) {
		const uint8_t *f = k->out + at;
		uint32_t len = (uint32_t)f[0] << 16 | f[1] << 8 | f[2];

		/* GOAWAY: the last stream, then the code */
		const uint8_t *e = f + 9 + (type == NGHTTP2_GOAWAY ? 4 : 0);

		assert_true(k->out_len - at - 9 >= len);
		if (f[3] == type)
			err = (long)((uint32_t)e[0] << 24 | e[1] << 16 |
				e[2] << 8 | e[3]);
		at += 9 + len;
	}
	return err;
}

/* Whether the server wrote a HEADERS frame on stream id. */
static bool
answered(const struct hh_conn *k, uint8_t id)
{
	uint32_t at = 0;

	while (k->out_len - at >= 9) {
		const uint8_t *f = k->out + at;

		if (f[3] == NGHTTP2_HEADERS && f[8] == id)
			return true;
		at += 9 + ((uint32_t)f[0] << 16 | f[1] << 8 | f[2]);
	}
	return false;
}

static void
test_malformed_frames(void **state)
{
	static const char preface[] = NGHTTP2_CLIENT_MAGIC;
	static const uint8_t settings[] = { FR(0, NGHTTP2_SETTINGS, 0, 0) };
	static const uint8_t get3[] = { FR(13, NGHTTP2_HEADERS, 5, 3), GET_A };
	static const struct raw_case cases[] = {
		{ "DATA short of content-length", {
			FR(16, NGHTTP2_HEADERS, 4, 1), POST_Q("10"),
			FR(3, NGHTTP2_DATA, 1, 1), 'a', 'b', 'c' }, 37,
			NGHTTP2_RST_STREAM, NGHTTP2_PROTOCOL_ERROR },
		{ "DATA past content-length", {
			FR(16, NGHTTP2_HEADERS, 4, 1), POST_Q("01"),
			FR(3, NGHTTP2_DATA, 1, 1), 'a', 'b', 'c' }, 37,
			NGHTTP2_RST_STREAM, NGHTTP2_PROTOCOL_ERROR },
		{ "SETTINGS of 3 bytes", { FR(3, NGHTTP2_SETTINGS, 0, 0),
			0, 0, 0 }, 12, NGHTTP2_GOAWAY, NGHTTP2_FRAME_SIZE_ERROR },
		{ "PING of 7 bytes", { FR(7, NGHTTP2_PING, 0, 0) }, 16,
			NGHTTP2_GOAWAY, NGHTTP2_FRAME_SIZE_ERROR },
		{ "HPACK that does not decode", { FR(4, NGHTTP2_HEADERS, 5, 1),
			0xff, 0xff, 0xff, 0xff }, 13, NGHTTP2_GOAWAY,
			NGHTTP2_COMPRESSION_ERROR },
		{ "CONTINUATION with no HEADERS", {
			FR(13, NGHTTP2_CONTINUATION, 4, 1), GET_A }, 22,
			NGHTTP2_GOAWAY, NGHTTP2_PROTOCOL_ERROR },
		{ "HEADERS on a server's stream", { FR(13, NGHTTP2_HEADERS, 5, 2),
			GET_A }, 22, NGHTTP2_GOAWAY, NGHTTP2_PROTOCOL_ERROR },
		{ "WINDOW_UPDATE of 0", { FR(4, NGHTTP2_WINDOW_UPDATE, 0, 0),
			0, 0, 0, 0 }, 13, NGHTTP2_GOAWAY, NGHTTP2_PROTOCOL_ERROR },
		{ "a frame over SETTINGS_MAX_FRAME_SIZE", {
			FR(16385, NGHTTP2_DATA, 0, 1) }, 9, NGHTTP2_GOAWAY,
			NGHTTP2_FRAME_SIZE_ERROR },
	};
	struct hh *h = *state;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct raw_case *rc = &cases[i];
		struct hh_conn *k = hh_connect(h);
		long err;

		hh_send(k, preface, sizeof(preface) - 1);
		hh_send(k, settings, sizeof(settings));
		hh_send(k, rc->bytes, rc->len);
		if (rc->type == NGHTTP2_RST_STREAM)
			hh_send(k, get3, sizeof(get3));	/* the next stream */
		err = last_error(k, rc->type);
		if (err != (long)rc->error || k->aborted)
			fail_msg("%s: %s error %ld, want %u", rc->what,
					k->aborted ? "a reset," : "", err,
					rc->error);
		if (rc->type == NGHTTP2_RST_STREAM) {
			assert_true(answered(k, 3));
			assert_false(k->closed);
		} else {
			assert_true(k->closed);
		}
		if (k->c != NULL)
			hh_finish(k);
	}
}

/* Reads what a body-stream request has at hand: returns the bytes read
 * into *to (advanced), *last the final read's result. */
static size_t
sink_read(struct hh *h, struct http_origin o, uint8_t **to, long *last)
{
	size_t got = 0;
	long n;

	while ((n = http_server_body_read(h->srv, o, *to, 3000)) > 0) {
		*to += n;
		got += (size_t)n;
	}
	*last = n;
	return got;
}

/* Reads a body-stream request's body to its end, the client sending as
 * the windows open; fails when nothing more comes. */
static size_t
sink_read_all(struct hh *h, struct hh_h2 *c, struct http_origin o,
		uint8_t *got)
{
	uint8_t *to = got;
	long last;

	sink_read(h, o, &to, &last);
	while (last != 0) {
		assert_int_equal(last, HTTP_SOURCE_AGAIN);
		hh_h2_pump(c);
		if (sink_read(h, o, &to, &last) == 0 && last != 0)
			fail_msg("stalled at %zu", (size_t)(to - got));
	}
	return (size_t)(to - got);
}

/* A client, a body of len bytes to send and room for what is read. */
static struct hh_h2 *
sink_client(struct hh *h, size_t len, unsigned int seed, uint8_t **body,
		uint8_t **got)
{
	size_t i;

	*body = malloc(len);
	*got = malloc(len + 3000);
	assert_non_null(*body);
	assert_non_null(*got);
	for (i = 0; i < len; i++)
		(*body)[i] = (uint8_t)(i * 13 + seed + (i >> 11));
	return hh_h2_new(hh_connect(h), NULL, 0, 0);
}

/* The body read is the one sent; the handler's answer ends the stream. */
static void
sink_done(struct hh *h, struct hh_h2 *c, int32_t id, uint8_t *got,
		uint8_t *body, size_t len)
{
	assert_memory_equal(got, body, len);
	assert_true(hh_run(h, 0));
	hh_h2_pump(c);
	expect_stream(c, id, 200, "sink\n", 5);
	free(body);
	free(got);
	hh_h2_free(c);
}

/* Sends an upload to a body-stream route: its request goes to the route
 * with its head, before its body ends, the only one queued. */
static int32_t
upload_queued(struct hh *h, struct hh_h2 *c, const char *method,
		const char *path, uint8_t *body, size_t len)
{
	int32_t id = hh_h2_request(c, method, path, body, len);

	hh_h2_pump(c);
	assert_int_equal(h->nqueued, 1);
	return id;
}

/* After a body left unread: a next upload on the connection is not
 * stalled, its bytes still count as taken for the connection's window. */
static void
next_upload_flows(struct hh *h, struct hh_h2 *c, uint8_t *body, uint8_t *got,
		size_t len)
{
	int32_t id = upload_queued(h, c, "PUT", "/sink/next", body, len);

	assert_int_equal(sink_read_all(h, c, h->queue[0]->o, got), len);
	sink_done(h, c, id, got, body, len);
}

/*
 * A body-stream route's request goes to its handler with its head; its
 * body comes as the reader takes it: never more at hand than the
 * stream's window (256 KiB: the reader has given nothing back yet),
 * "again" when none is, 0 at the end, and body_ready each time.
 */
static void
test_body_stream(void **state)
{
	struct hh *h = *state;
	size_t len = 300000, total = 0;
	uint8_t *body, *got;
	struct hh_h2 *c = sink_client(h, len, 1, &body, &got);
	uint8_t *to = got;
	struct http_origin o;
	unsigned int rounds = 0, ready;
	int32_t id = upload_queued(h, c, "POST", "/sink/up", body, len);
	long last = 1;

	o = h->queue[0]->o;
	assert_true(h->body_ready > 0);
	while (last != 0) {
		size_t n;

		ready = h->body_ready;
		n = sink_read(h, o, &to, &last);
		assert_true(n <= 256 * 1024);	/* held: the window, no more */
		total += n;
		if (last == HTTP_SOURCE_AGAIN) {
			hh_h2_pump(c);
			assert_true(h->body_ready > ready);
		}
		if (++rounds > 100)
			fail_msg("stalled at %zu of %zu", total, len);
	}
	assert_int_equal(total, len);
	assert_int_equal(http_server_body_read(h->srv, o, to, 10), 0);
	sink_done(h, c, id, got, body, len);
}

/* An upload of len bytes to a body-stream route with the windows growing
 * up to window_max (a stream's) within budget, on a path of 50 ms; the
 * reader takes what is at hand after wait_ms each time. Returns the most
 * it found at hand at once: what the windows let the client send ahead. */
#define WINDOW_RTT_US 50000

static size_t
upload_through_windows(struct hh *h, size_t len, uint32_t window_max,
		uint64_t budget, uint64_t wait_ms)
{
	uint8_t *body, *got, *to;
	struct hh_h2 *c;
	struct http_origin o;
	size_t most = 0;
	long last = 1;
	int32_t id;

	hh_h2_windows(h, window_max, budget, WINDOW_RTT_US);
	c = sink_client(h, len, 4, &body, &got);
	id = upload_queued(h, c, "PUT", "/sink/far", body, len);
	o = h->queue[0]->o;
	to = got;
	while (last != 0) {
		hh_advance(h, wait_ms);
		most = RTE_MAX(most, sink_read(h, o, &to, &last));
		if (last == HTTP_SOURCE_AGAIN)
			hh_h2_pump(c);
		if ((size_t)(to - got) > len)
			fail_msg("more than was sent");
	}
	assert_int_equal(to - got, len);
	sink_done(h, c, id, got, body, len);
	return most;
}

/*
 * HTTP/2's windows follow the bandwidth-delay product. A reader that
 * takes the body as it comes (half a window within a round trip each
 * time) makes the stream's window grow past its first 256 KiB, and the
 * connection's past its 1 MiB, up to the ceiling (4 MiB for the stream):
 * the client then has more than a first window at hand at once, never
 * more than the ceiling.
 */
static void
test_window_grows_with_the_round_trip(void **state)
{
	struct hh *h = *state;
	size_t most = upload_through_windows(h, 12u << 20, 4u << 20,
			1ull << 30, 0);

	assert_true(most > 1u << 20);
	assert_true(most <= 4u << 20);
	assert_true(h->stats.h2_window_grows >= 4);
	assert_int_equal(h->stats.h2_window_budget_limited, 0);
}

/* A client the window holds back gets its updates about a round trip
 * apart (its next half takes that long to come): between one and two
 * round trips apart, the windows still grow. */
static void
test_window_grows_for_a_client_held_by_it(void **state)
{
	struct hh *h = *state;
	size_t most = upload_through_windows(h, 12u << 20, 4u << 20,
			1ull << 30, WINDOW_RTT_US * 3 / 2000);

	assert_true(most > 1u << 20);
	assert_true(h->stats.h2_window_grows >= 4);
}

/* Updates two round trips apart or more: the reader, not the window,
 * sets the pace, and the windows keep their first sizes. */
static void
test_window_kept_for_a_slow_reader(void **state)
{
	struct hh *h = *state;
	size_t most = upload_through_windows(h, 2u << 20, 4u << 20,
			1ull << 30, 2 * WINDOW_RTT_US / 1000 + 10);

	assert_true(most <= 256u * 1024);
	assert_int_equal(h->stats.h2_window_grows, 0);
}

/* The shard's budget spent: the connection's window stays at 1 MiB (the
 * refusal counted), and a stream's grows no further than it. */
static void
test_window_within_budget(void **state)
{
	struct hh *h = *state;
	size_t most = upload_through_windows(h, 8u << 20, 4u << 20, 0, 0);

	assert_true(most > 256u * 1024);
	assert_true(most <= 1u << 20);
	assert_true(h->stats.h2_window_budget_limited > 0);
}

/* Bodies larger than a stream's window (256 KiB), so that each such
 * stream left unread holds a whole window, and more of them than the
 * connection's window (1 MiB) has room for: were their bytes not counted
 * taken when they close, the connection would stall. */
#define UNREAD_BODY 300000
#define UNREAD_STREAMS 5

/*
 * A client that resets its stream amid the body: the reader hears of it
 * and reads -1. What it had sent and nobody read still counts as taken
 * for the connection: a next upload on it is not stalled.
 */
static void
test_body_stream_reset(void **state)
{
	struct hh *h = *state;
	size_t len = UNREAD_BODY;
	uint8_t *body, *got;
	struct hh_h2 *c = sink_client(h, len, 2, &body, &got);
	struct http_origin o;
	unsigned int ready, i;

	for (i = 0; i < UNREAD_STREAMS; i++) {
		int32_t id = upload_queued(h, c, "PUT", "/sink/a", body, len);

		o = h->queue[0]->o;
		assert_true(http_server_body_read(h->srv, o, got, 1000) == 1000);
		ready = h->body_ready;
		assert_int_equal(nghttp2_submit_rst_stream(c->ng,
				NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL), 0);
		hh_h2_pump(c);
		assert_true(h->body_ready > ready);
		assert_int_equal(h->ready_o.stream, o.stream);
		assert_int_equal(http_server_body_read(h->srv, o, got, 100), -1);
		assert_false(hh_run(h, 0));	/* its answer finds no stream */
	}
	next_upload_flows(h, c, body, got, len);
}

/* 3000 bytes, then the end. */
static ssize_t
send_3000(nghttp2_session *ng, int32_t id, uint8_t *buf, size_t length,
		uint32_t *flags, nghttp2_data_source *src, void *user)
{
	(void)ng;
	(void)id;
	(void)src;
	(void)user;
	assert_true(length >= 3000);
	memset(buf, 'x', 3000);
	*flags |= NGHTTP2_DATA_FLAG_EOF;
	return 3000;
}

/*
 * The handler answers before reading the body: the answer goes whole, the
 * client is asked to stop sending (RST_STREAM NO_ERROR) and what it had
 * sent unread no longer holds the connection's window.
 */
static void
test_body_stream_answered_early(void **state)
{
	struct hh *h = *state;
	size_t len = UNREAD_BODY;
	uint8_t *body, *got;
	struct hh_h2 *c = sink_client(h, len, 3, &body, &got);
	unsigned int i;

	for (i = 0; i < UNREAD_STREAMS; i++) {
		int32_t id = upload_queued(h, c, "POST", "/sink/early", body,
				len);
		struct hh_stream *st;

		assert_true(hh_run(h, 0));
		hh_h2_pump(c);
		st = hh_h2_stream(c, id);
		assert_true(st->closed);
		assert_int_equal(st->status, 200);
		assert_int_equal(st->error, NGHTTP2_NO_ERROR);
		assert_int_equal(c->rst_recv, i + 1);
		assert_int_equal(st->len, 5);
	}
	next_upload_flows(h, c, body, got, len);
}

/* A content-length the DATA does not reach: the stream is reset
 * (PROTOCOL_ERROR) and its reader reads -1, not a short body's end. */
static void
test_body_stream_length_mismatch(void **state)
{
	struct hh *h = *state;
	struct hh_h2 *c = hh_h2_new(hh_connect(h), NULL, 0, 0);
	nghttp2_nv nv[] = {
		{ (uint8_t *)":method", (uint8_t *)"PUT", 7, 3, 0 },
		{ (uint8_t *)":scheme", (uint8_t *)"http", 7, 4, 0 },
		{ (uint8_t *)":authority", (uint8_t *)"h", 10, 1, 0 },
		{ (uint8_t *)":path", (uint8_t *)"/sink/short", 5, 11, 0 },
		{ (uint8_t *)"content-length", (uint8_t *)"5000", 14, 4, 0 },
	};
	nghttp2_data_provider dp = { .read_callback = send_3000 };
	uint8_t buf[8192];
	struct http_origin o;
	unsigned int ready;
	int32_t id = nghttp2_submit_request(c->ng, NULL, nv, 5, &dp, NULL);

	assert_true(id > 0);
	hh_h2_pump(c);
	assert_int_equal(hh_h2_stream(c, id)->error, NGHTTP2_PROTOCOL_ERROR);
	assert_int_equal(h->nqueued, 1);
	o = h->queue[0]->o;
	ready = h->body_ready;
	assert_true(ready > 0);
	assert_int_equal(http_server_body_read(h->srv, o, buf, sizeof(buf)),
			-1);
	assert_false(hh_run(h, 0));
	hh_h2_free(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		HH_TEST(test_static),
		HH_TEST(test_queued_out_of_order),
		HH_TEST(test_echo),
		HH_TEST(test_flow_control_file),
		HH_TEST(test_flow_control_source),
		HH_TEST(test_source_with_small_updates),
		HH_TEST(test_goaway_on_drain),
		HH_TEST(test_data_on_idle_stream),
		HH_TEST(test_headers_without_path),
		HH_TEST(test_too_many_streams),
		HH_TEST(test_reset_flood),
		HH_TEST(test_malformed_frames),
		HH_TEST(test_body_stream),
		HH_TEST(test_window_grows_with_the_round_trip),
		HH_TEST(test_window_grows_for_a_client_held_by_it),
		HH_TEST(test_window_kept_for_a_slow_reader),
		HH_TEST(test_window_within_budget),
		HH_TEST(test_body_stream_reset),
		HH_TEST(test_body_stream_answered_early),
		HH_TEST(test_body_stream_length_mismatch),
		HH_TEST(test_gathered_body),
		HH_TEST(test_status_after_table_resize),
		cmocka_unit_test(test_stalled_bodies_cut),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
