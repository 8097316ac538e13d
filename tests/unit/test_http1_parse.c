/* SPDX-License-Identifier: BSD-3-Clause */
/* The HTTP/1.1 request-head parser: accepted forms and the rejection
 * matrix, each with the status the client must get. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "http1_bad_requests.h"
#include "http1_parse.h"
#include "http_priv.h"

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

/* A WebSocket's handshake: upgrade among Connection's tokens, websocket
 * among Upgrade's, in any case and with spaces around them. */
static void
test_upgrade_tokens(void **state)
{
	struct http_head r;

	(void)state;
	assert_true(parse("GET /c HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\n"
			"Connection: keep-alive ,  Upgrade\r\n\r\n", &r) > 0);
	assert_true(r.upgrade);
	assert_true(r.conn_upgrade);
	assert_true(r.keep_alive);
	assert_true(parse("GET /c HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\n"
			"Connection: upgraded, close\r\n\r\n", &r) > 0);
	assert_false(r.conn_upgrade);
	assert_false(r.keep_alive);
	assert_true(http1_list_has((struct http_str){ "h2c, WebSocket ,x", 17 },
			"websocket"));
	assert_true(http1_list_has((struct http_str){ ",,websocket", 11 },
			"websocket"));
	assert_false(http1_list_has((struct http_str){ "websockets, web socket",
			22 }, "websocket"));
	assert_false(http1_list_has((struct http_str){ "", 0 }, "websocket"));
}

static void
test_malformed_matrix(void **state)
{
	struct http_head r;
	size_t i;

	(void)state;
	assert_true(sizeof(http1_bad) / sizeof(http1_bad[0]) >= 30);
	for (i = 0; i < sizeof(http1_bad) / sizeof(http1_bad[0]); i++) {
		int rc = parse(http1_bad[i].req, &r);

		if (rc != -http1_bad[i].status)
			fail_msg("case %zu (%s): got %d, want %d", i, http1_bad[i].req, rc,
					-http1_bad[i].status);
	}
}

static void
test_limits(void **state)
{
	static char buf[HTTP_MAX_TARGET + 256];
	struct http_head r;
	size_t n;
	int i;

	(void)state;
	memcpy(buf, "GET /", 5);
	memset(buf + 5, 'a', HTTP_MAX_TARGET);
	strcpy(buf + 5 + HTTP_MAX_TARGET, " HTTP/1.1\r\nHost: h\r\n\r\n");
	assert_int_equal(parse(buf, &r), -414);
	/* too many header lines */
	n = (size_t)sprintf(buf, "GET / HTTP/1.1\r\nHost: h\r\n");
	for (i = 0; i < HTTP_MAX_HEADERS; i++)
		n += (size_t)sprintf(buf + n, "X-%d: v\r\n", i);
	strcpy(buf + n, "\r\n");
	assert_int_equal(parse(buf, &r), -431);
	/* the limit is exact: HTTP_MAX_TARGET bytes pass, and another
	 * limit may be given */
	n = (size_t)sprintf(buf, "GET /");
	memset(buf + n, 'a', HTTP_MAX_TARGET - 1);
	strcpy(buf + n + HTTP_MAX_TARGET - 1, " HTTP/1.1\r\nHost: h\r\n\r\n");
	assert_int_equal(parse(buf, &r), (int)strlen(buf));
	assert_int_equal(r.path.len, HTTP_MAX_TARGET);
	assert_int_equal(http1_parse_request_max(buf, strlen(buf), &r,
			HTTP_MAX_TARGET - 1), -414);
	assert_int_equal(http1_parse_request_max(buf, strlen(buf), &r,
			1 << 20), (int)strlen(buf));
	assert_true(HTTP_MAX_TARGET >= 8192);	/* nginx's, at least */
	/* a full buffer with no line end is a huge target, else a huge head */
	memset(buf, 'a', 100);
	assert_int_equal(http1_overflow_status(buf, 100), 414);
	buf[50] = '\n';
	assert_int_equal(http1_overflow_status(buf, 100), 431);
}

/* Absolute-form targets (RFC 9112 3.2.2): the path (and query) of the
 * target is the request's; its authority stands for Host, whatever the
 * field said; an HTTP/1.0 request without Host gets it as a field. */
static void
test_absolute_form(void **state)
{
	static const struct {
		const char *req, *path, *query, *host;
	} ok[] = {
		{ "GET http://example.com/a/b.txt?x=1 HTTP/1.1\r\nHost: other\r\n\r\n",
		  "/a/b.txt", "x=1", "example.com" },
		{ "GET HTTPS://Example.com:8443/ HTTP/1.1\r\nHost: e\r\n\r\n",
		  "/", "", "Example.com:8443" },
		{ "GET http://h HTTP/1.1\r\nHost: h\r\n\r\n", "/", "", "h" },
		{ "GET http://h?q HTTP/1.1\r\nHost: h\r\n\r\n", "/", "q", "h" },
		{ "GET http://[2001:2::2]:80/v6 HTTP/1.1\r\nHost: x\r\n\r\n",
		  "/v6", "", "[2001:2::2]:80" },
		{ "GET http://h/p HTTP/1.0\r\n\r\n", "/p", "", "h" },
		{ "OPTIONS http://h/ HTTP/1.1\r\nHost: h\r\n\r\n", "/", "", "h" },
	};
	struct http_head r;
	const struct http_str *host;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		if (parse(ok[i].req, &r) != (int)strlen(ok[i].req))
			fail_msg("refused %s", ok[i].req);
		assert_int_equal(r.path.len, strlen(ok[i].path));
		assert_memory_equal(r.path.p, ok[i].path, r.path.len);
		assert_int_equal(r.query.len, strlen(ok[i].query));
		assert_memory_equal(r.query.p, ok[i].query, r.query.len);
		host = http_head_find(&r, "host");
		assert_non_null(host);
		assert_int_equal(host->len, strlen(ok[i].host));
		assert_memory_equal(host->p, ok[i].host, host->len);
	}
	/* origin-form has no authority, and keeps its Host */
	assert_true(parse("GET /a HTTP/1.1\r\nHost: h\r\n\r\n", &r) > 0);
	assert_null(r.authority.p);
}

/* Response heads, as an upstream sends them. */
static void
test_response_heads(void **state)
{
	static const struct {
		const char *head;
		int rc;			/* 1: whole (length checked), else as is */
		int status;
		int64_t length;
		bool chunked, keep;
	} cases[] = {
		{ "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", 1, 200, 5,
			false, true },
		{ "HTTP/1.1 204\r\n\r\n", 1, 204, -1, false, true },
		{ "HTTP/1.0 200 OK\r\nServer: x\r\n\r\n", 1, 200, -1, false, false },
		{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
			"Connection: close\r\n\r\n", 1, 200, -1, true, false },
		{ "HTTP/1.1 100 Continue\r\n\r\n", 1, 100, -1, false, true },
		{ "HTTP/1.1 200 OK\r\nContent-Len", 0, 0, 0, false, false },
		{ "HTTP/1.1 200 OK\r\n", 0, 0, 0, false, false },
		{ "HTTP/2 200\r\n\r\n", -502, 0, 0, false, false },
		{ "HTTP/1.1 20 OK\r\n\r\n", -502, 0, 0, false, false },
		{ "HTTP/1.1 200OK\r\n\r\n", -502, 0, 0, false, false },
		{ "HTTP/1.1 600 No\r\n\r\n", -502, 0, 0, false, false },
		{ "HTTP/1.1 200 O\rK\r\n\r\n", -502, 0, 0, false, false },
		{ "HTTP/1.1 200 OK\nContent-Length: 1\r\n\r\n", -502, 0, 0,
			false, false },
		{ "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2"
			"\r\n\r\n", -502, 0, 0, false, false },
		{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", -502, 0,
			0, false, false },
		{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
			"Content-Length: 3\r\n\r\n", -502, 0, 0, false, false },
	};
	struct http_head r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *h = cases[i].head;
		const char *end = strstr(h, "\r\n\r\n");
		int n = http1_parse_response(h, strlen(h), &r);

		if (cases[i].rc != 1) {
			assert_int_equal(n, cases[i].rc);
			continue;
		}
		assert_int_equal(n, (int)(end + 4 - h));
		assert_int_equal(r.status, cases[i].status);
		assert_int_equal(r.content_length, cases[i].length);
		assert_int_equal(r.chunked, cases[i].chunked);
		assert_int_equal(r.keep_alive, cases[i].keep);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_simple_get),
		cmocka_unit_test(test_incomplete_needs_more),
		cmocka_unit_test(test_connection_semantics),
		cmocka_unit_test(test_upgrade_tokens),
		cmocka_unit_test(test_malformed_matrix),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_absolute_form),
		cmocka_unit_test(test_response_heads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
