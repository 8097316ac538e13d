/* SPDX-License-Identifier: BSD-3-Clause */
/* The HTTP counters operators alert on (requests, by status, by method,
 * body bytes out, connections accepted and refused, HTTP/2's), as exact
 * deltas over scripted conversations: a counter skipped or counted twice
 * fails here, not on a dashboard. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "http_harness.h"
#include "http_priv.h"	/* http_status_slot() */

#define GET(path) "GET " path " HTTP/1.1\r\nHost: h\r\n\r\n"
#define NOT_FOUND "404 Not Found\n"
#define NOT_ALLOWED "405 Method Not Allowed\n"

static void
next(struct hh_conn *k, struct hh_resp *r, bool head_only, int status)
{
	if (!hh_resp_next(k, r, head_only))
		fail_msg("no whole response in \"%s\"", k->out + k->rd);
	assert_int_equal(r->status, status);
}

static uint64_t
status(const struct hh *h, int code)
{
	return h->stats.by_status[http_status_slot(code)];
}

static uint64_t
sum(const uint64_t *v, int n)
{
	uint64_t total = 0;
	int i;

	for (i = 0; i < n; i++)
		total += v[i];
	return total;
}

static uint64_t
statuses(const struct hh *h)
{
	return sum(h->stats.by_status, HTTP_ST__COUNT);
}

static uint64_t
methods(const struct hh *h)
{
	return sum(h->stats.by_method, HTTP_METHODS);
}

/* HTTP/1.1: each answer once by status, each request once by method, the
 * body bytes that left and those only. */
static void
test_http1_requests_statuses_methods_bytes(void **state)
{
	struct hh *h = *state;
	struct hh_conn *k = hh_connect(h);
	struct hh_resp r;
	size_t body = 0;

	assert_int_equal(h->stats.conns_accepted, 1);
	hh_sends(k, GET("/a.txt"));
	next(k, &r, false, 200);
	body += r.body_len;
	hh_sends(k, "HEAD /a.txt HTTP/1.1\r\nHost: h\r\n\r\n");
	next(k, &r, true, 200);
	hh_sends(k, GET("/nothing.txt"));
	next(k, &r, false, 404);
	body += r.body_len;
	hh_sends(k, "POST /echo HTTP/1.1\r\nHost: h\r\n"
			"Content-Length: 5\r\n\r\nhello");
	next(k, &r, false, 200);
	body += r.body_len;
	hh_sends(k, "DELETE /echo HTTP/1.1\r\nHost: h\r\n\r\n");
	next(k, &r, false, 405);
	assert_int_equal(r.body_len, strlen(NOT_ALLOWED));
	body += r.body_len;
	hh_sends(k, "GET /a.txt HTTP/1.1\r\nHost: h\r\nRange: bytes=2-5\r\n\r\n");
	next(k, &r, false, 206);
	body += r.body_len;

	assert_int_equal(body, 27 + strlen(NOT_FOUND) + 5 +
			strlen(NOT_ALLOWED) + 4);
	assert_int_equal(h->stats.requests, 6);
	assert_int_equal(status(h, 200), 3);
	assert_int_equal(status(h, 206), 1);
	assert_int_equal(status(h, 404), 1);
	assert_int_equal(status(h, 405), 1);
	assert_int_equal(statuses(h), 6);
	assert_int_equal(h->stats.by_method[HTTP_GET], 3);
	assert_int_equal(h->stats.by_method[HTTP_HEAD], 1);
	assert_int_equal(h->stats.by_method[HTTP_POST], 1);
	assert_int_equal(h->stats.by_method[HTTP_DELETE], 1);
	assert_int_equal(methods(h), 6);
	assert_int_equal(h->stats.body_bytes_out, body);
	assert_int_equal(h->stats.h2_requests, 0);
	assert_int_equal(h->stats.conns_accepted, 1);
	assert_int_equal(h->stats.conns_refused, 0);
}

/* A queued answer is counted when it is written, once, in its place. */
static void
test_http1_queued_answers_counted_once(void **state)
{
	struct hh *h = *state;
	struct hh_conn *k = hh_connect(h);
	struct hh_resp r;

	hh_sends(k, GET("/q/1") GET("/q/2"));
	assert_int_equal(h->stats.by_method[HTTP_GET], 2);
	assert_int_equal(h->stats.requests, 0);	/* nothing answered yet */
	assert_true(hh_run(h, 1));
	assert_int_equal(h->stats.requests, 0);	/* /q/1 is owed first */
	assert_true(hh_run(h, 0));
	next(k, &r, false, 200);
	next(k, &r, false, 200);
	assert_int_equal(h->stats.requests, 2);
	assert_int_equal(status(h, 200), 2);
	assert_int_equal(h->stats.body_bytes_out, 2 * strlen("q /q/1\n"));
}

/* Connections: every one accepted counted, and one past the table
 * refused and counted. */
static void
test_connections_accepted_and_refused(void **state)
{
	struct hh *h = *state;
	int i;

	for (i = 0; i < HH_CONNS; i++)
		hh_connect(h);
	assert_int_equal(h->stats.conns_accepted, HH_CONNS);
	assert_null(http_conn_accept(h->srv, &h->conns[0]));
	assert_null(http_conn_accept(h->srv, &h->conns[0]));
	assert_int_equal(h->stats.conns_refused, 2);
	assert_int_equal(h->stats.conns_accepted, HH_CONNS);
	/* one goes, its slot serves the next */
	hh_finish(&h->conns[1]);
	hh_connect(h);
	assert_int_equal(h->stats.conns_accepted, HH_CONNS + 1);
	assert_int_equal(h->stats.conns_refused, 2);
}

/* HTTP/2: the same counters, plus the connection's and the streams'. */
static void
test_h2_requests_statuses_methods_bytes(void **state)
{
	struct hh *h = *state;
	struct hh_h2 *c = hh_h2_new(hh_connect(h), NULL, 0, 0);
	int32_t a = hh_h2_request(c, "GET", "/a.txt", NULL, 0);
	int32_t none = hh_h2_request(c, "GET", "/none.txt", NULL, 0);
	int32_t head = hh_h2_request(c, "HEAD", "/a.txt", NULL, 0);
	int32_t echo = hh_h2_request(c, "POST", "/echo", "hello", 5);
	/* a body to a route that takes it whole: counted at its end */
	int32_t put = hh_h2_request(c, "PUT", "/q/x", "data", 4);

	hh_h2_pump(c);
	assert_int_equal(h->nqueued, 1);
	assert_true(hh_run(h, 0));
	hh_h2_pump(c);
	assert_int_equal(hh_h2_stream(c, put)->status, 200);
	assert_int_equal(hh_h2_stream(c, a)->status, 200);
	assert_int_equal(hh_h2_stream(c, none)->status, 404);
	assert_int_equal(hh_h2_stream(c, head)->status, 200);
	assert_int_equal(hh_h2_stream(c, echo)->status, 200);
	assert_int_equal(h->stats.h2_conns, 1);
	assert_int_equal(h->stats.h2_streams, 5);
	assert_int_equal(h->stats.requests, 5);
	assert_int_equal(h->stats.h2_requests, 5);
	assert_int_equal(status(h, 200), 4);
	assert_int_equal(status(h, 404), 1);
	assert_int_equal(statuses(h), 5);
	assert_int_equal(h->stats.by_method[HTTP_GET], 2);
	assert_int_equal(h->stats.by_method[HTTP_HEAD], 1);
	assert_int_equal(h->stats.by_method[HTTP_POST], 1);
	assert_int_equal(h->stats.by_method[HTTP_PUT], 1);
	assert_int_equal(methods(h), 5);
	assert_int_equal(h->stats.body_bytes_out,
			hh_h2_stream(c, a)->len + hh_h2_stream(c, none)->len +
			hh_h2_stream(c, echo)->len + hh_h2_stream(c, put)->len);
	assert_int_equal(h->stats.body_bytes_out, 27 + strlen(NOT_FOUND) + 5 +
			strlen("q /q/x\n"));
	assert_int_equal(h->stats.h2_streams_open, 0);
	hh_h2_free(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		HH_TEST(test_http1_requests_statuses_methods_bytes),
		HH_TEST(test_http1_queued_answers_counted_once),
		HH_TEST(test_connections_accepted_and_refused),
		HH_TEST(test_h2_requests_statuses_methods_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
