/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The request limits a server is configured with (http_server_conf:
 * max_target, max_head_bytes), and their defaults: a target of 8 KiB, a
 * head of 16 KiB; past them 414 or 431, over HTTP/1.1 and HTTP/2 alike.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "http1_proto.h"
#include "http_harness.h"

static char req[64 << 10];

/* "GET /aaa... HTTP/1.1" with a target of target_len bytes and, when
 * field_len is not 0, a field X of that many bytes. */
static size_t
request(size_t target_len, size_t field_len)
{
	size_t n = (size_t)sprintf(req, "GET /");

	memset(req + n, 'a', target_len - 1);
	n += target_len - 1;
	n += (size_t)sprintf(req + n, " HTTP/1.1\r\nHost: h\r\n");
	if (field_len > 0) {
		n += (size_t)sprintf(req + n, "X: ");
		memset(req + n, 'v', field_len);
		n += field_len;
		n += (size_t)sprintf(req + n, "\r\n");
	}
	n += (size_t)sprintf(req + n, "\r\n");
	return n;
}

/* The status of one request on a fresh HTTP/1.1 connection. */
static int
h1_status(struct hh *h, size_t len)
{
	struct hh_conn *k = hh_connect(h);
	struct hh_resp r;
	int status;

	hh_send(k, req, len);
	if (!hh_resp_next(k, &r, false))
		fail_msg("no answer to a request of %zu bytes", len);
	status = r.status;
	if (k->c != NULL)
		hh_finish(k);
	return status;
}

/* The status of a GET of a target of target_len bytes over HTTP/2. */
static int
h2_status(struct hh *h, size_t target_len)
{
	struct hh_h2 *c = hh_h2_new(hh_connect(h), NULL, 0, 0);
	static char path[32 << 10];
	int32_t id;
	int status;

	path[0] = '/';
	memset(path + 1, 'a', target_len - 1);
	path[target_len] = '\0';
	id = hh_h2_request(c, "GET", path, NULL, 0);
	hh_h2_pump(c);
	assert_true(hh_h2_stream(c, id)->closed);
	status = hh_h2_stream(c, id)->status;
	hh_h2_free(c);
	return status;
}

/* Defaults: an 8 KiB target passes (404: no such file), one byte more is
 * 414; a 10 KiB field fits the 16 KiB head; past the head, 431. */
static void
test_defaults(void **state)
{
	struct hh *h = *state;

	assert_int_equal(HTTP_MAX_TARGET, 8192);
	assert_int_equal(h1_status(h, request(8192, 0)), 404);
	assert_int_equal(h1_status(h, request(8193, 0)), 414);
	assert_int_equal(h1_status(h, request(100, 10 << 10)), 404);
	assert_int_equal(h1_status(h, request(100, 17 << 10)), 431);
	assert_int_equal(h1_status(h, request(17 << 10, 0)), 414);
	assert_int_equal(h2_status(h, 8192), 404);
	assert_int_equal(h2_status(h, 8193), 414);
}

/* Limits of the configuration's: exact at the byte. */
static void
test_configured(void **state)
{
	struct hh *h;

	(void)state;
	h = hh_new_limits(0, 0, 2048, 100);
	assert_int_equal(h1_status(h, request(100, 0)), 404);
	assert_int_equal(h1_status(h, request(101, 0)), 414);
	assert_int_equal(h2_status(h, 100), 404);
	assert_int_equal(h2_status(h, 101), 414);
	/* a head of 2048 bytes fits; one more does not */
	assert_int_equal(h1_status(h, request(10, 2048 - request(10, 1) + 1)),
			404);
	assert_int_equal(request(10, 2048 - request(10, 1) + 1), 2048);
	assert_int_equal(h1_status(h, request(10, 2048 - request(10, 1) + 2)),
			431);
	hh_free(h);
	/* a target limit past the buffer: the line that does not fit */
	h = hh_new_limits(0, 0, 4096, 1 << 20);
	assert_int_equal(h1_status(h, request(4000, 0)), 404);
	assert_int_equal(h1_status(h, request(5000, 0)), 414);
	hh_free(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		HH_TEST(test_defaults),
		cmocka_unit_test(test_configured),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
