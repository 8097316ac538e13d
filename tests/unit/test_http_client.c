/* SPDX-License-Identifier: BSD-3-Clause */
/* The client's HTTP/1.1 answer reader: pipelined answers of each framing
 * read whole and in every split, 1xx skipped, HEAD answers without a body,
 * a body read until the close, and the answers it must refuse; and the
 * request heads it writes. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "http_client.h"

struct seen {
	int heads;
	int done;
	int status[8];
	uint64_t len[8];
	bool keep[8];
	char body[256];
	size_t body_len;
	int no_body_at;		/* the answer (0-based) that answers a HEAD */
};

static int
on_head(void *ctx, const struct http_head *h)
{
	struct seen *s = ctx;

	s->status[s->heads] = h->status;
	return s->heads++ == s->no_body_at ? H1_ANSWER_NO_BODY : H1_ANSWER_BODY;
}

static void
on_data(void *ctx, const uint8_t *p, size_t n)
{
	struct seen *s = ctx;

	assert_true(s->body_len + n <= sizeof(s->body));
	memcpy(s->body + s->body_len, p, n);
	s->body_len += n;
}

static void
on_done(void *ctx, uint64_t body_len, bool keep_alive)
{
	struct seen *s = ctx;

	s->len[s->done] = body_len;
	s->keep[s->done++] = keep_alive;
}

static const struct h1_answer_cb cb = { on_head, on_data, on_done };

static const char pipelined[] =
	"HTTP/1.1 100 Continue\r\n\r\n"
	"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"
	"HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n"
	"3\r\nabc\r\n2;x=y\r\nde\r\n0\r\nT: v\r\n\r\n"
	"HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\n"	/* a HEAD's */
	"HTTP/1.1 204 No Content\r\n\r\n"
	"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nzz";

static void
check_pipelined(const struct seen *s)
{
	assert_int_equal(s->heads, 5);
	assert_int_equal(s->done, 5);
	assert_int_equal(s->status[0], 200);
	assert_int_equal(s->status[1], 404);
	assert_int_equal(s->status[2], 200);
	assert_int_equal(s->status[3], 204);
	assert_int_equal(s->len[0], 5);
	assert_int_equal(s->len[1], 5);
	assert_int_equal(s->len[2], 0);
	assert_int_equal(s->len[3], 0);
	assert_int_equal(s->len[4], 2);
	assert_true(s->keep[0] && s->keep[3]);
	assert_false(s->keep[4]);
	assert_int_equal(s->body_len, 12);
	assert_memory_equal(s->body, "helloabcdezz", 12);
}

/* Every piece size, from byte by byte to whole. */
static void
test_pipelined_any_split(void **state)
{
	size_t len = strlen(pipelined), step, off;

	(void)state;
	for (step = 1; step <= len; step++) {
		struct h1_answers a;
		struct seen s = { .no_body_at = 2 };

		h1_answers_init(&a);
		for (off = 0; off < len; off += step) {
			size_t n = len - off < step ? len - off : step;

			assert_int_equal(h1_answers_feed(&a,
					(const uint8_t *)pipelined + off, n, &cb,
					&s), 0);
		}
		check_pipelined(&s);
		/* The split head's buffer was given back. */
		assert_null(a.held);
		assert_false(h1_answers_partial(&a));
		h1_answers_fini(&a);
	}
}

static void
test_until_close(void **state)
{
	static const char in[] = "HTTP/1.1 200 OK\r\n\r\nall of it";
	struct h1_answers a;
	struct seen s = { .no_body_at = -1 };

	(void)state;
	h1_answers_init(&a);
	assert_int_equal(h1_answers_feed(&a, (const uint8_t *)in, strlen(in),
			&cb, &s), 0);
	assert_int_equal(s.done, 0);
	assert_true(h1_answers_partial(&a));
	assert_int_equal(h1_answers_closed(&a, &cb, &s), 0);
	assert_int_equal(s.done, 1);
	assert_int_equal(s.len[0], 9);
	assert_false(s.keep[0]);
}

static void
test_cut_short(void **state)
{
	static const char in[] = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc";
	struct h1_answers a;
	struct seen s = { .no_body_at = -1 };

	(void)state;
	h1_answers_init(&a);
	assert_int_equal(h1_answers_feed(&a, (const uint8_t *)in, strlen(in),
			&cb, &s), 0);
	assert_int_equal(h1_answers_closed(&a, &cb, &s), -1);
	assert_int_equal(s.done, 0);
	/* A head cut short too. */
	h1_answers_init(&a);
	assert_int_equal(h1_answers_feed(&a, (const uint8_t *)"HTTP/1.1 2", 10,
			&cb, &s), 0);
	assert_int_equal(h1_answers_closed(&a, &cb, &s), -1);
	h1_answers_fini(&a);
}

static void
test_refused(void **state)
{
	static const char *bad[] = {
		"HTTP/1.1 2x0 OK\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n",
		"SSH-2.0-OpenSSH\r\n\r\n",
	};
	static char big[H1_ANSWER_HEAD_MAX + 64];
	struct h1_answers a;
	struct seen s = { .no_body_at = -1 };
	size_t i, off;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		h1_answers_init(&a);
		assert_int_equal(h1_answers_feed(&a, (const uint8_t *)bad[i],
				strlen(bad[i]), &cb, &s), -1);
		h1_answers_fini(&a);
	}
	/* A head that never ends, fed whole and in pieces. */
	memcpy(big, "HTTP/1.1 200 OK\r\n", 17);
	for (i = 17; i + 12 < sizeof(big); i += 12)
		memcpy(big + i, "X-Pad: aaa\r\n", 12);
	h1_answers_init(&a);
	assert_int_equal(h1_answers_feed(&a, (const uint8_t *)big, i, &cb, &s),
			-1);
	h1_answers_fini(&a);
	h1_answers_init(&a);
	for (off = 0; off < i; off += 1000)
		if (h1_answers_feed(&a, (const uint8_t *)big + off,
				i - off < 1000 ? i - off : 1000, &cb, &s) < 0)
			break;
	assert_true(off < i);
	h1_answers_fini(&a);
}

static void
test_request_head(void **state)
{
	char buf[256];
	size_t n;

	(void)state;
	n = h1_request_head(buf, sizeof(buf), "GET", "/a?b", "h:80", 0, false,
			NULL);
	assert_int_equal(n, strlen("GET /a?b HTTP/1.1\r\nHost: h:80\r\n\r\n"));
	assert_string_equal(buf, "GET /a?b HTTP/1.1\r\nHost: h:80\r\n\r\n");
	n = h1_request_head(buf, sizeof(buf), "POST", "/u", "h", 12, true,
			"X: y\r\n");
	assert_string_equal(buf, "POST /u HTTP/1.1\r\nHost: h\r\n"
			"Content-Length: 12\r\nConnection: close\r\nX: y\r\n\r\n");
	assert_int_equal(n, strlen(buf));
	assert_int_equal(h1_request_head(buf, 10, "GET", "/", "h", 0, false,
			NULL), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pipelined_any_split),
		cmocka_unit_test(test_until_close),
		cmocka_unit_test(test_cut_short),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_request_head),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
