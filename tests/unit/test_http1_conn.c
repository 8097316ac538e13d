/* SPDX-License-Identifier: BSD-3-Clause */
/* HTTP/1.1 conversations with the connection layer, through the scripted
 * transport of http_harness.h: the bytes on the wire that matter. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "http1_bad_requests.h"
#include "http1_conn.h"
#include "http1_proto.h"
#include "http_harness.h"

#define GET(path) "GET " path " HTTP/1.1\r\nHost: h\r\n\r\n"

/* The next response, which must be complete. */
static void
next(struct hh_conn *k, struct hh_resp *r, bool head_only)
{
	if (!hh_resp_next(k, r, head_only))
		fail_msg("no whole response in \"%s\"", k->out + k->rd);
}

static void
expect_body(const struct hh_resp *r, int status, const void *body, size_t len)
{
	char v[32];

	assert_int_equal(r->status, status);
	assert_int_equal(r->body_len, len);
	assert_memory_equal(r->body, body, len);
	if (!r->chunked) {
		assert_non_null(hh_resp_header(r, "Content-Length", v, sizeof(v)));
		assert_int_equal(strtoull(v, NULL, 10), len);
	}
}

static void
test_static_file(void **state)
{
	struct hh_conn *k = hh_connect(*state);
	char etag[32], req[128], v[64];
	struct hh_resp r;

	hh_sends(k, GET("/a.txt"));
	next(k, &r, false);
	assert_memory_equal(r.head, "HTTP/1.1 200 OK\r\n", 17);
	expect_body(&r, 200, HH_A_TXT, strlen(HH_A_TXT));
	assert_non_null(hh_resp_header(&r, "ETag", etag, sizeof(etag)));
	assert_int_equal(strlen(etag), 18);	/* strong, quoted */
	assert_string_equal(hh_resp_header(&r, "Content-Type", v, sizeof(v)),
			"text/plain; charset=utf-8");

	/* HEAD: the same head, nothing after it. */
	hh_sends(k, "HEAD /a.txt HTTP/1.1\r\nHost: h\r\n\r\n");
	next(k, &r, true);
	assert_int_equal(r.status, 200);
	assert_string_equal(hh_resp_header(&r, "Content-Length", v, sizeof(v)),
			"27");
	assert_int_equal(k->rd, k->out_len);

	snprintf(req, sizeof(req), "GET /a.txt HTTP/1.1\r\nHost: h\r\n"
			"If-None-Match: %s\r\n\r\n", etag);
	hh_sends(k, req);
	next(k, &r, false);
	assert_memory_equal(r.head, "HTTP/1.1 304 Not Modified\r\n", 27);
	assert_int_equal(k->rd, k->out_len);	/* no body */

	hh_sends(k, "GET /a.txt HTTP/1.1\r\nHost: h\r\nRange: bytes=2-5\r\n\r\n");
	next(k, &r, false);
	assert_memory_equal(r.head, "HTTP/1.1 206 Partial Content\r\n", 30);
	expect_body(&r, 206, "cdef", 4);
	assert_string_equal(hh_resp_header(&r, "Content-Range", v, sizeof(v)),
			"bytes 2-5/27");

	hh_sends(k, GET("/nothing.txt"));
	next(k, &r, false);
	assert_memory_equal(r.head, "HTTP/1.1 404 Not Found\r\n", 24);
	expect_body(&r, 404, "404 Not Found\n", 14);
	assert_false(k->closed);
	assert_int_equal(k->rd, k->out_len);
}

/* Queued handlers answered in reverse: the answers leave in request order,
 * and an inline answer between them waits its turn. */
static void
test_pipeline_order(void **state)
{
	struct hh *h = *state;
	struct hh_conn *k = hh_connect(h);
	struct hh_resp r;

	hh_sends(k, GET("/q/1") GET("/q/2") GET("/a.txt") GET("/q/3"));
	assert_int_equal(h->nqueued, 3);
	assert_true(hh_run(h, 2));
	assert_true(hh_run(h, 1));
	assert_int_equal(k->out_len, 0);	/* /q/1 is owed first */
	hh_give_space(k, 0);	/* room to write (an ACK): still its turn */
	assert_int_equal(k->out_len, 0);
	assert_true(hh_run(h, 0));
	next(k, &r, false);
	expect_body(&r, 200, "q /q/1\n", 7);
	next(k, &r, false);
	expect_body(&r, 200, "q /q/2\n", 7);
	next(k, &r, false);
	expect_body(&r, 200, HH_A_TXT, strlen(HH_A_TXT));
	next(k, &r, false);
	expect_body(&r, 200, "q /q/3\n", 7);
	assert_int_equal(k->rd, k->out_len);
}

/* Read-ahead is bounded: the request past HTTP1_PIPELINE waits in the
 * buffer until the oldest answer is out. */
static void
test_pipeline_full(void **state)
{
	struct hh *h = *state;
	struct hh_conn *k = hh_connect(h);
	char reqs[HTTP1_PIPELINE + 1][40], want[16];
	struct hh_resp r;
	int i;

	for (i = 0; i <= HTTP1_PIPELINE; i++) {
		snprintf(reqs[i], sizeof(reqs[i]), GET("/q/%d"), i);
		hh_sends(k, reqs[i]);
	}
	assert_int_equal(h->nqueued, HTTP1_PIPELINE);
	assert_true(h->stats.pipeline_full > 0);
	assert_true(hh_run(h, 0));
	assert_int_equal(h->nqueued, HTTP1_PIPELINE);	/* the 17th is in */
	while (h->nqueued > 0)
		assert_true(hh_run(h, h->nqueued - 1));
	for (i = 0; i <= HTTP1_PIPELINE; i++) {
		int n = snprintf(want, sizeof(want), "q /q/%d\n", i);

		next(k, &r, false);
		expect_body(&r, 200, want, (size_t)n);
	}
}

static void
test_echo_length(void **state)
{
	struct hh_conn *k = hh_connect(*state);
	struct hh_resp r;

	hh_sends(k, "POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\nhel");
	hh_sends(k, "lo w");
	hh_sends(k, "orld");
	next(k, &r, false);
	expect_body(&r, 200, "hello world", 11);
	assert_false(r.chunked);
	assert_int_equal(k->rd, k->out_len);
}

static void
test_echo_chunked(void **state)
{
	struct hh_conn *k = hh_connect(*state);
	struct hh_resp r;

	hh_sends(k, "POST /echo HTTP/1.1\r\nHost: h\r\n"
			"Transfer-Encoding: chunked\r\n\r\n5\r\nhel");
	hh_sends(k, "lo\r\n6\r");
	hh_sends(k, "\n world\r\n0\r\n");
	hh_sends(k, "\r\n");
	next(k, &r, false);
	assert_true(r.chunked);
	expect_body(&r, 200, "hello world", 11);
	assert_int_equal(k->rd, k->out_len);
	/* The connection goes on. */
	hh_sends(k, GET("/a.txt"));
	next(k, &r, false);
	expect_body(&r, 200, HH_A_TXT, strlen(HH_A_TXT));
}

static int
count(const char *hay, const char *needle)
{
	int n = 0;

	for (hay = strstr(hay, needle); hay != NULL; hay = strstr(hay + 1, needle))
		n++;
	return n;
}

static void
test_expect_continue(void **state)
{
	struct hh *h = *state;
	struct hh_conn *k = hh_connect(h);
	struct hh_resp r;

	/* An echo: the interim answer at once, then the body streams. */
	hh_sends(k, "POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n"
			"Expect: 100-continue\r\n\r\n");
	assert_string_equal((const char *)k->out, "HTTP/1.1 100 Continue\r\n\r\n");
	hh_sends(k, "ab");
	hh_sends(k, "cde");
	next(k, &r, false);
	assert_int_equal(r.status, 100);
	next(k, &r, false);
	expect_body(&r, 200, "abcde", 5);
	assert_int_equal(count((const char *)k->out, "100 Continue"), 1);

	/* A body gathered for a queued handler. */
	hh_sends(k, "PUT /q/x HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n"
			"Expect: 100-continue\r\n\r\n");
	next(k, &r, false);
	assert_int_equal(r.status, 100);
	hh_sends(k, "wx");
	hh_sends(k, "yz");
	assert_int_equal(h->nqueued, 1);
	assert_true(hh_run(h, 0));
	next(k, &r, false);
	expect_body(&r, 200, "q /q/x\n", 7);
	assert_int_equal(count((const char *)k->out, "100 Continue"), 2);
	assert_int_equal(k->rd, k->out_len);
}

/* A large body stops with the send space and resumes when it is freed. */
static void
test_send_space(void **state)
{
	struct hh_conn *k = hh_connect(*state);
	struct hh_resp r;
	uint32_t before;
	int rounds = 0;

	k->space = 4096;
	hh_sends(k, GET("/big.bin"));
	assert_true(k->out_len <= 4096);
	while (!hh_resp_next(k, &r, false)) {
		before = k->out_len;
		hh_give_space(k, 0);	/* no room freed: nothing moves */
		assert_int_equal(k->out_len, before);
		hh_give_space(k, 4096);
		assert_true(k->out_len > before);
		assert_true(++rounds < 100);
	}
	assert_true(rounds >= 10);
	expect_body(&r, 200, hh_big(), HH_BIG_SIZE);
}

static void
test_upgrade_h2c(void **state)
{
	struct hh *h = *state;
	struct hh_conn *k = hh_connect(h);
	struct hh_h2 *c = hh_h2_upgrade(k, "/a.txt");
	struct hh_stream *st;
	int32_t id;

	hh_h2_pump(c);
	st = hh_h2_stream(c, 1);
	assert_true(st->closed);
	assert_int_equal(st->status, 200);
	assert_int_equal(st->len, strlen(HH_A_TXT));
	assert_memory_equal(st->body, HH_A_TXT, st->len);
	/* The session goes on. */
	id = hh_h2_request(c, "GET", "/q/up", NULL, 0);
	hh_h2_pump(c);
	assert_true(hh_run(h, 0));
	hh_h2_pump(c);
	st = hh_h2_stream(c, id);
	assert_int_equal(st->status, 200);
	assert_memory_equal(st->body, "q /q/up\n", 8);
	assert_int_equal(h->stats.h2_conns, 1);
	assert_false(k->closed);
	hh_h2_free(c);
}

static void
test_prior_knowledge(void **state)
{
	struct hh *h = *state;
	struct hh_conn *k = hh_connect(h);
	struct hh_h2 *c = hh_h2_new(k, NULL, 0, 0);
	int32_t id = hh_h2_request(c, "GET", "/index.html", NULL, 0);
	struct hh_stream *st;

	hh_h2_pump(c);
	st = hh_h2_stream(c, id);
	assert_int_equal(st->status, 200);
	assert_int_equal(st->len, 14);
	assert_memory_equal(st->body, "<h1>ewyk</h1>\n", 14);
	assert_int_equal(h->stats.h2_conns, 1);
	hh_h2_free(c);
}

/* Drain: an idle keep-alive connection closes now, a busy one after its
 * answer, which says so. */
static void
test_drain(void **state)
{
	struct hh *h = *state;
	struct hh_conn *idle = hh_connect(h), *busy = hh_connect(h);
	struct hh_resp r;
	char v[16];

	hh_sends(idle, GET("/a.txt"));
	next(idle, &r, false);
	hh_sends(busy, GET("/q/slow"));
	http_server_drain(h->srv);
	assert_true(idle->closed);
	assert_int_equal(idle->rd, idle->out_len);	/* nothing more said */
	assert_false(busy->closed);
	assert_true(hh_run(h, 0));
	next(busy, &r, false);
	expect_body(&r, 200, "q /q/slow\n", 10);
	assert_string_equal(hh_resp_header(&r, "Connection", v, sizeof(v)),
			"close");
	assert_true(busy->closed);
	assert_false(busy->aborted);
}

static void
test_header_timeout(void **state)
{
	struct hh *h = hh_new(5000, 0);
	struct hh_conn *k = hh_connect(h);
	struct hh_resp r;

	(void)state;
	hh_sends(k, "GET / HTTP/1.1\r\nHo");
	hh_advance(h, 3000);
	hh_sends(k, "st: h\r\n");	/* trickling */
	hh_advance(h, 1900);
	assert_false(k->closed);
	hh_advance(h, 200);
	next(k, &r, false);
	assert_memory_equal(r.head, "HTTP/1.1 408 Request Timeout\r\n", 30);
	expect_body(&r, 408, "408 Request Timeout\n", 20);
	assert_true(k->closed);
	assert_false(k->aborted);
	assert_int_equal(h->stats.head_timeouts, 1);
	hh_free(h);
}

/* A request answered without its body (405: static files take no POST)
 * whose body then stops coming: the connection waits for the rest (to
 * keep the next request's bytes apart) no longer than the header
 * timeout from the last byte skipped, then closes. */
static void
test_skipped_body_that_stops_coming(void **state)
{
	struct hh *h = hh_new(5000, 0);
	struct hh_conn *k = hh_connect(h);
	struct hh_resp r;

	(void)state;
	hh_sends(k, "POST /a.txt HTTP/1.1\r\nHost: h\r\n"
			"Content-Length: 100\r\n\r\nabc");
	next(k, &r, false);
	assert_int_equal(r.status, 405);
	hh_advance(h, 3000);
	hh_sends(k, "defg");	/* skipped: the wait starts again */
	hh_advance(h, 4900);
	assert_false(k->closed);
	hh_advance(h, 200);
	assert_true(k->closed);
	assert_int_equal(k->rd, k->out_len);	/* nothing more said */
	hh_free(h);
}

static void
test_keepalive_timeout(void **state)
{
	struct hh *h = hh_new(0, 5000);
	struct hh_conn *k = hh_connect(h);
	struct hh_resp r;

	(void)state;
	hh_sends(k, GET("/a.txt"));
	next(k, &r, false);
	hh_advance(h, 4900);
	assert_false(k->closed);
	hh_advance(h, 200);
	assert_true(k->closed);
	assert_int_equal(k->rd, k->out_len);	/* closed without a word */
	assert_int_equal(h->stats.idle_closes, 1);
	hh_free(h);
}

/* An idle connection gives its state back after idle_release_ms (its
 * pages read as zeros after), one with a request head begun does not;
 * the next byte takes the state again, and a connection that had read
 * nothing may still become HTTP/2; the keep-alive timeout still closes a
 * connection whose state went back, counted an idle close. */
static void
test_idle_release(void **state)
{
	struct hh *h = hh_new_idle_release(5000, 1000);
	struct hh_conn *k = hh_connect(h), *fresh = hh_connect(h);
	struct hh_conn *half = hh_connect(h);
	const struct h1 *st;
	struct hh_resp r;
	struct hh_h2 *c;
	int32_t id;

	(void)state;
	hh_sends(k, GET("/a.txt"));
	next(k, &r, false);
	hh_sends(half, "GET /a.txt HTTP/1.1\r\n");
	st = k->c->h1_mem;
	assert_ptr_equal(st->c, k->c);
	hh_advance(h, 900);
	assert_int_equal(h->stats.h1_releases, 0);
	hh_advance(h, 200);
	assert_int_equal(h->stats.h1_releases, 2);	/* k and fresh */
	assert_int_equal(h->stats.h1_released, 2);
	assert_null(st->c);
	assert_false(k->closed || fresh->closed || half->closed);

	hh_sends(k, GET("/a.txt"));
	next(k, &r, false);
	expect_body(&r, 200, HH_A_TXT, strlen(HH_A_TXT));
	assert_ptr_equal(st->c, k->c);
	assert_int_equal(h->stats.h1_released, 1);
	hh_sends(half, "Host: h\r\n\r\n");
	next(half, &r, false);
	expect_body(&r, 200, HH_A_TXT, strlen(HH_A_TXT));
	c = hh_h2_new(fresh, NULL, 0, 0);
	id = hh_h2_request(c, "GET", "/a.txt", NULL, 0);
	hh_h2_pump(c);
	assert_int_equal(hh_h2_stream(c, id)->status, 200);
	assert_int_equal(h->stats.h1_released, 0);
	assert_int_equal(h->stats.h2_conns, 1);

	/* k idle again from 1100: released after 2100, closed after 6100 */
	hh_advance(h, 1100);
	assert_int_equal(h->stats.h1_releases, 4);	/* k and half */
	hh_advance(h, 3800);
	assert_false(k->closed);
	hh_advance(h, 200);
	assert_true(k->closed && half->closed);
	/* And the HTTP/2 one, idle since its stream ended: GOAWAY. */
	assert_int_equal(h->stats.idle_closes, 3);
	hh_h2_pump(c);
	assert_true(c->goaway && c->goaway_error == 0 && c->goaway_last == id);
	hh_finish(k);
	hh_finish(half);
	assert_int_equal(h->stats.h1_released, 0);
	hh_h2_free(c);
	hh_free(h);
}

/* The deadline follows the connection: each request puts the idle close
 * later (the timer armed for the first fires, finds it early, and waits
 * again), and a request head begun puts the 408 earlier than the idle
 * close armed. */
static void
test_deadline_moves(void **state)
{
	struct hh *h = hh_new(1000, 5000);
	struct hh_conn *k = hh_connect(h);
	struct hh_resp r;

	(void)state;
	hh_sends(k, GET("/a.txt"));
	next(k, &r, false);
	hh_advance(h, 3000);		/* 4000 */
	hh_sends(k, GET("/a.txt"));	/* idle from 4000: closes after 9000 */
	next(k, &r, false);
	hh_advance(h, 2100);		/* 6100: the first deadline is past */
	assert_false(k->closed);
	hh_advance(h, 2800);		/* 8900 */
	assert_false(k->closed);
	hh_advance(h, 200);		/* 9100 */
	assert_true(k->closed);
	assert_int_equal(h->stats.idle_closes, 1);
	assert_int_equal(h->stats.head_timeouts, 0);

	/* Idle until 1000 + 5000, but a head begun at 2000 is overdue after
	 * 3000. */
	k = hh_connect(h);
	hh_advance(h, 1000);		/* 10100: a new connection's idle close
					 * armed for after 14100 */
	hh_sends(k, "GET / HTTP/1.1\r\n");
	hh_advance(h, 900);
	assert_false(k->closed);
	hh_advance(h, 200);		/* 11200 */
	next(k, &r, false);
	assert_int_equal(r.status, 408);
	assert_true(k->closed);
	assert_int_equal(h->stats.head_timeouts, 1);
	hh_free(h);
}

/* Sends req on a new connection: its answer must be status, then the
 * close (never a reset). */
static void
expect_refused(struct hh *h, const char *req, size_t len, int status,
		const char *what)
{
	struct hh_conn *k = hh_connect(h);
	struct hh_resp r;

	hh_send(k, req, len);
	if (k->aborted || !hh_resp_next(k, &r, false) || r.status != status ||
			!k->closed)
		fail_msg("%s: got %s%s\"%.60s\", want %d and a close", what,
				k->aborted ? "a reset after " : "",
				k->closed ? "a close after " : "",
				(const char *)k->out, status);
	if (k->c != NULL)
		hh_finish(k);
}

static void
test_malformed_matrix(void **state)
{
	static char buf[HTTP_MAX_HEAD_BYTES + 1024];
	struct hh *h = *state;
	size_t i, n;

	for (i = 0; i < sizeof(http1_bad) / sizeof(http1_bad[0]); i++)
		expect_refused(h, http1_bad[i].req, strlen(http1_bad[i].req),
				http1_bad[i].status, http1_bad[i].req);
	/* Too long a target. */
	n = (size_t)sprintf(buf, "GET /");
	memset(buf + n, 'a', HTTP_MAX_TARGET);
	n += HTTP_MAX_TARGET;
	n += (size_t)sprintf(buf + n, " HTTP/1.1\r\nHost: h\r\n\r\n");
	expect_refused(h, buf, n, 414, "long target");
	/* Too many header lines. */
	n = (size_t)sprintf(buf, "GET / HTTP/1.1\r\nHost: h\r\n");
	for (i = 0; i < HTTP_MAX_HEADERS; i++)
		n += (size_t)sprintf(buf + n, "X-%zu: v\r\n", i);
	n += (size_t)sprintf(buf + n, "\r\n");
	expect_refused(h, buf, n, 431, "many headers");
	/* A head larger than the buffer. */
	n = (size_t)sprintf(buf, "GET / HTTP/1.1\r\nHost: h\r\nX: ");
	memset(buf + n, 'v', sizeof(buf) - n);
	expect_refused(h, buf, sizeof(buf), 431, "large head");
	/* A target that fills the buffer. */
	n = (size_t)sprintf(buf, "GET /");
	memset(buf + n, 'a', sizeof(buf) - n);
	expect_refused(h, buf, sizeof(buf), 414, "huge target");
}

/* A chunked body to /echo whose framing is broken before its answer
 * began is answered 400 and closed; broken after the answer began (its
 * 200 and some of the body are out), only a reset is left. */
/* A body past what the input buffer gathers (chunked, or over 4 KiB) is
 * gathered in a body buffer and given whole to its handler, which keeps
 * the buffer until it is done; a request pipelined behind it is served. */
static void
test_gathered_bodies(void **state)
{
	struct hh *h = *state;
	struct hh_conn *k = hh_connect(h);
	const uint8_t *big = hh_big();
	struct ewyk_str body;
	struct hh_resp r;
	char line[32];
	size_t off;
	int n;

	hh_sends(k, "POST /q/chunked HTTP/1.1\r\nHost: h\r\n"
			"Transfer-Encoding: chunked\r\n\r\n");
	for (off = 0; off < 10000; off += 2500) {
		n = snprintf(line, sizeof(line), "%x\r\n", 2500);
		hh_send(k, line, (size_t)n);
		hh_send(k, big + off, 2500);
		hh_sends(k, "\r\n");
		assert_int_equal(h->nqueued, 0);	/* not whole yet */
	}
	hh_sends(k, "0\r\n\r\n" GET("/q/after"));
	assert_int_equal(h->nqueued, 2);
	assert_int_equal(h->stats.body_slots_in_use, 1);
	body = ewyk_request_body(&h->queue[0]->req);
	assert_int_equal(body.len, 10000);
	assert_memory_equal(body.p, big, 10000);
	assert_true(hh_run(h, 0));
	assert_int_equal(h->stats.body_slots_in_use, 0);	/* handed back */
	assert_true(hh_run(h, 0));
	next(k, &r, false);
	expect_body(&r, 200, "q /q/chunked\n", 13);
	next(k, &r, false);
	expect_body(&r, 200, "q /q/after\n", 11);
	/* A length past the input buffer, arriving in pieces. */
	hh_sends(k, "PUT /q/length HTTP/1.1\r\nHost: h\r\n"
			"Content-Length: 40000\r\n\r\n");
	for (off = 0; off < 40000; off += 8000) {
		assert_int_equal(h->nqueued, 0);
		hh_send(k, big + off, 8000);
	}
	assert_int_equal(h->nqueued, 1);
	body = ewyk_request_body(&h->queue[0]->req);
	assert_int_equal(body.len, 40000);
	assert_memory_equal(body.p, big, 40000);
	assert_true(hh_run(h, 0));
	next(k, &r, false);
	expect_body(&r, 200, "q /q/length\n", 12);
	assert_int_equal(h->stats.body_slots_taken, 2);
}

static void
test_bad_chunk(void **state)
{
	static const char *const bodies[] = {
		"zz\r\nab\r\n0\r\n\r\n",		/* not a size */
		"FFFFFFFFFFFFFFFFFF\r\nab\r\n",	/* overflows */
		"2\r\nabXY0\r\n\r\n",			/* no CRLF after data */
	};
	static const char head[] = "POST /echo HTTP/1.1\r\nHost: h\r\n"
		"Transfer-Encoding: chunked\r\n\r\n";
	struct hh *h = *state;
	struct hh_conn *k;
	char req[256];
	size_t i;
	int n;

	for (i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		n = snprintf(req, sizeof(req), "%s%s", head, bodies[i]);
		expect_refused(h, req, (size_t)n, 400, bodies[i]);
		assert_int_equal(h->stats.body_errors, i + 1);
	}
	/* The first chunk is sound and its echo under way: a broken second
	 * one can only cut the connection. */
	k = hh_connect(h);
	hh_send(k, head, sizeof(head) - 1);
	hh_send(k, "2\r\nab\r\n", 7);
	assert_memory_equal(k->out, "HTTP/1.1 200 OK\r\n", 17);
	hh_send(k, "zz\r\n", 4);
	assert_true(k->aborted);
	assert_null(k->c);
	assert_int_equal(h->stats.body_errors, i + 1);
	/* A chunked body for a route that takes bodies whole is gathered:
	 * its broken framing is a 400 too. */
	n = snprintf(req, sizeof(req), "POST /q/x HTTP/1.1\r\nHost: h\r\n"
			"Transfer-Encoding: chunked\r\n\r\nzz\r\n");
	expect_refused(h, req, (size_t)n, 400, "chunked to /q/");
}

/* Bodies of requests that are refused (405: the static routes take only
 * GET and HEAD), whatever their framing: the
 * refusal goes out, then the close (a body that cannot be skipped) or the
 * next request (a small one that can); never a reset. */
static void
test_refused_bodies(void **state)
{
	static const struct {
		const char *req;
		int status;
	} cases[] = {
		/* A chunk size that overflows, to routes that refuse. */
		{ "POST /nothing HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked"
			"\r\n\r\nFFFFFFFFFFFFFFFFFF\r\nab\r\n", 405 },
		{ "DELETE /a.txt HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: "
			"chunked\r\n\r\nFFFFFFFFFFFFFFFFFF\r\nab\r\n", 405 },
		/* To a route that gathers it: the framing is what is bad. */
		{ "POST /q/x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked"
			"\r\n\r\nFFFFFFFFFFFFFFFFFF\r\nab\r\n", 400 },
		{ "POST /q/x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked"
			"\r\n\r\nzz\r\n", 400 },
		/* A body past max_body (1 MiB), or too large to skip. */
		{ "POST /q/x HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999"
			"\r\n\r\nabc", 413 },
		{ "POST /nothing HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999"
			"\r\n\r\nabc", 405 },
		/* Held back for "100 Continue", which a refusal does not
		 * send: answered at once. */
		{ "POST /nothing HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n"
			"Expect: 100-continue\r\n\r\n", 405 },
	};
	struct hh *h = *state;
	struct hh_conn *k;
	struct hh_resp r;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_refused(h, cases[i].req, strlen(cases[i].req),
				cases[i].status, cases[i].req);
	/* A small body of a refused request is skipped: the next request on
	 * the connection is answered, whether the body comes at once or in
	 * pieces. */
	k = hh_connect(h);
	hh_sends(k, "POST /nothing HTTP/1.1\r\nHost: h\r\nContent-Length: 6"
			"\r\n\r\nab");
	next(k, &r, false);
	assert_int_equal(r.status, 405);
	hh_sends(k, "cdef" GET("/a.txt"));
	next(k, &r, false);
	expect_body(&r, 200, HH_A_TXT, strlen(HH_A_TXT));
	assert_false(k->closed || k->aborted);
	/* A refused request's body still on its way does not hold back the
	 * answer owed before it, nor, when the peer closes amid it, lose it. */
	hh_sends(k, GET("/q/1") "POST /a.txt HTTP/1.1\r\nHost: h\r\n"
			"Content-Length: 6\r\n\r\nab");
	assert_true(hh_run(h, 0));
	next(k, &r, false);
	expect_body(&r, 200, "q /q/1\n", 7);
	next(k, &r, false);
	assert_int_equal(r.status, 405);
	hh_sends(k, "cdef" GET("/q/2") "POST /a.txt HTTP/1.1\r\nHost: h\r\n"
			"Content-Length: 6\r\n\r\nab");
	hh_peer_close(k);
	assert_false(k->closed);
	assert_true(hh_run(h, 0));
	next(k, &r, false);
	expect_body(&r, 200, "q /q/2\n", 7);
	next(k, &r, false);
	assert_int_equal(r.status, 405);
	assert_true(k->closed);
	assert_false(k->aborted);
	/* ... and a body cut short by the peer's close ends the connection
	 * after the answer, with a close. */
	k = hh_connect(h);
	hh_sends(k, "PUT /nothing HTTP/1.1\r\nHost: h\r\nContent-Length: 6"
			"\r\n\r\nab");
	hh_peer_close(k);
	next(k, &r, false);
	assert_int_equal(r.status, 405);
	assert_true(k->closed);
	assert_false(k->aborted);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		HH_TEST(test_static_file),
		HH_TEST(test_pipeline_order),
		HH_TEST(test_pipeline_full),
		HH_TEST(test_echo_length),
		HH_TEST(test_echo_chunked),
		HH_TEST(test_expect_continue),
		HH_TEST(test_send_space),
		HH_TEST(test_upgrade_h2c),
		HH_TEST(test_prior_knowledge),
		HH_TEST(test_drain),
		cmocka_unit_test(test_header_timeout),
		cmocka_unit_test(test_keepalive_timeout),
		cmocka_unit_test(test_skipped_body_that_stops_coming),
		cmocka_unit_test(test_idle_release),
		cmocka_unit_test(test_deadline_moves),
		HH_TEST(test_malformed_matrix),
		HH_TEST(test_bad_chunk),
		HH_TEST(test_refused_bodies),
		HH_TEST(test_gathered_bodies),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
