/* SPDX-License-Identifier: BSD-3-Clause */
/* The HTTP/1.1 request-head parser: accepted forms and the rejection
 * matrix, each with the status the client must get. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "http1_parse.h"

static int
parse(const char *s, struct http_head *r)
{
	return http1_parse_request(s, strlen(s), r);
}

static void
test_simple_get(void **state)
{
	struct http_head r;
	const char *s = "GET /a/b.html?x=1&y HTTP/1.1\r\nHost: h\r\n"
		"User-Agent:  curl/8 \r\nAccept: */*\r\n\r\nNEXT";
	int n = parse(s, &r);

	(void)state;
	assert_int_equal(n, (int)(strstr(s, "NEXT") - s));
	assert_int_equal(r.method, HTTP_GET);
	assert_int_equal(r.minor, 1);
	assert_true(r.keep_alive);
	assert_int_equal(r.path.len, 9);
	assert_memory_equal(r.path.p, "/a/b.html", 9);
	assert_int_equal(r.query.len, 5);
	assert_memory_equal(r.query.p, "x=1&y", 5);
	assert_int_equal(r.nheaders, 3);
	assert_int_equal(r.headers[1].value.len, 6);	/* OWS trimmed */
	assert_memory_equal(r.headers[1].value.p, "curl/8", 6);
	assert_non_null(http_head_find(&r, "user-agent"));
	assert_null(http_head_find(&r, "cookie"));
	assert_int_equal(r.content_length, -1);
}

static void
test_incomplete_needs_more(void **state)
{
	const char *s = "GET / HTTP/1.1\r\nHost: h\r\n\r\n";
	struct http_head r;
	size_t i;

	(void)state;
	for (i = 0; i < strlen(s); i++)
		assert_int_equal(http1_parse_request(s, i, &r), 0);
	assert_int_equal(http1_parse_request(s, strlen(s), &r), (int)strlen(s));
}

static void
test_connection_semantics(void **state)
{
	struct http_head r;

	(void)state;
	assert_true(parse("GET / HTTP/1.0\r\n\r\n", &r) > 0);
	assert_false(r.keep_alive);
	assert_true(parse("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", &r) > 0);
	assert_true(r.keep_alive);
	assert_true(parse("GET / HTTP/1.1\r\nHost: h\r\nConnection: foo, close\r\n\r\n",
			&r) > 0);
	assert_false(r.keep_alive);
	assert_true(parse("\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n", &r) > 0);
	assert_true(parse("POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 12\r\n"
			"Content-Length: 12\r\n\r\n", &r) > 0);
	assert_int_equal(r.content_length, 12);
	assert_true(parse("POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n"
			"Expect: 100-continue\r\n\r\n", &r) > 0);
	assert_true(r.chunked);
	assert_true(r.expect_continue);
	assert_true(parse("OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n", &r) > 0);
	assert_int_equal(r.method, HTTP_OPTIONS);
	assert_true(parse("BREW /pot HTTP/1.1\r\nHost: h\r\n\r\n", &r) > 0);
	assert_int_equal(r.method, HTTP_OTHER);
}

/* The malformed matrix: request, expected status. */
static const struct {
	const char *req;
	int status;
} bad[] = {
	{ "GET / HTTP/1.1\r\n\r\n", 400 },				/* no Host */
	{ "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400 },	/* two Hosts */
	{ "GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n folded\r\n\r\n", 400 },/* obs-fold */
	{ "GET / HTTP/1.1\r\nHost : h\r\n\r\n", 400 },			/* space before colon */
	{ "GET / HTTP/1.1\r\nHo(st: h\r\n\r\n", 400 },			/* bad name char */
	{ "GET / HTTP/1.1\r\n: h\r\n\r\n", 400 },			/* empty name */
	{ "GET / HTTP/1.1\r\nHost h\r\n\r\n", 400 },			/* no colon */
	{ "GET / HTTP/1.1\r\nHost: h\x01x\r\n\r\n", 400 },		/* control char */
	{ "GET / HTTP/1.1\r\nHost: h\x7f\r\n\r\n", 400 },		/* DEL */
	{ "GET / HTTP/1.1\nHost: h\r\n\r\n", 400 },			/* bare LF */
	{ "GET / HTTP/1.1\r\nHost: h\rX: y\r\n\r\n", 400 },		/* bare CR */
	{ "GET  / HTTP/1.1\r\nHost: h\r\n\r\n", 400 },			/* double space */
	{ "GET /\r\nHost: h\r\n\r\n", 400 },				/* HTTP/0.9 */
	{ "GET / HTTP/1.1 \r\nHost: h\r\n\r\n", 400 },			/* trailing space */
	{ "GET / http/1.1\r\nHost: h\r\n\r\n", 400 },			/* lower-case version */
	{ "GET / HTTP/1.10\r\nHost: h\r\n\r\n", 400 },			/* bad version */
	{ "GET / HTTP/2.0\r\nHost: h\r\n\r\n", 505 },			/* other major */
	{ "GET / HTTP/3.1\r\nHost: h\r\n\r\n", 505 },
	{ "GET x HTTP/1.1\r\nHost: h\r\n\r\n", 400 },			/* not origin-form */
	{ "GET http://h/ HTTP/1.1\r\nHost: h\r\n\r\n", 400 },		/* absolute-form */
	{ "GET * HTTP/1.1\r\nHost: h\r\n\r\n", 400 },			/* * is OPTIONS only */
	{ "GET /a\x7f HTTP/1.1\r\nHost: h\r\n\r\n", 400 },		/* DEL in target */
	{ "G@T / HTTP/1.1\r\nHost: h\r\n\r\n", 400 },			/* bad method char */
	{ " GET / HTTP/1.1\r\nHost: h\r\n\r\n", 400 },			/* leading space */
	{ "GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400 },
	{ "GET / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n", 400 },
	{ "GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 1x\r\n\r\n", 400 },
	{ "GET / HTTP/1.1\r\nHost: h\r\nContent-Length: \r\n\r\n", 400 },
	{ "GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999\r\n\r\n", 400 },
	{ "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400 },
	{ "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400 },
	{ "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n", 501 },
	{ "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", 501 },
	{ "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", 501 },
	{ "GET / HTTP/1.1\r\nHost: h\r\nExpect: 200-ok\r\n\r\n", 417 },
};

static void
test_malformed_matrix(void **state)
{
	struct http_head r;
	size_t i;

	(void)state;
	assert_true(sizeof(bad) / sizeof(bad[0]) >= 30);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = parse(bad[i].req, &r);

		if (rc != -bad[i].status)
			fail_msg("case %zu (%s): got %d, want %d", i, bad[i].req, rc,
					-bad[i].status);
	}
}

static void
test_limits(void **state)
{
	static char buf[HTTP1_MAX_TARGET + 256];
	struct http_head r;
	size_t n;
	int i;

	(void)state;
	memcpy(buf, "GET /", 5);
	memset(buf + 5, 'a', HTTP1_MAX_TARGET);
	strcpy(buf + 5 + HTTP1_MAX_TARGET, " HTTP/1.1\r\nHost: h\r\n\r\n");
	assert_int_equal(parse(buf, &r), -414);
	/* too many header lines */
	n = (size_t)sprintf(buf, "GET / HTTP/1.1\r\nHost: h\r\n");
	for (i = 0; i < HTTP_MAX_HEADERS; i++)
		n += (size_t)sprintf(buf + n, "X-%d: v\r\n", i);
	strcpy(buf + n, "\r\n");
	assert_int_equal(parse(buf, &r), -431);
	/* a full buffer with no line end is a huge target, else a huge head */
	memset(buf, 'a', 100);
	assert_int_equal(http1_overflow_status(buf, 100), 414);
	buf[50] = '\n';
	assert_int_equal(http1_overflow_status(buf, 100), 431);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_simple_get),
		cmocka_unit_test(test_incomplete_needs_more),
		cmocka_unit_test(test_connection_semantics),
		cmocka_unit_test(test_malformed_matrix),
		cmocka_unit_test(test_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
