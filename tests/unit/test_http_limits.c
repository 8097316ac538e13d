/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The request limits a server is configured with (http_server_conf:
 * max_target, max_head_bytes), and their defaults: a target of 8 KiB, a
 * head of 16 KiB (HTTP/2's header list); past them 414 or 431, over
 * HTTP/1.1 and HTTP/2 alike.
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

/* The status of a GET of /a with a field x of field_len bytes over
 * HTTP/2; the server's SETTINGS_MAX_HEADER_LIST_SIZE in *advertised. */
static int
h2_field_status(struct hh *h, size_t field_len, uint32_t *advertised)
{
	struct hh_h2 *c = hh_h2_new(hh_connect(h), NULL, 0, 0);
	static char value[64 << 10];
	const char *const fields[] = { "x", value, NULL };
	int32_t id;
	int status;

	memset(value, 'v', field_len);
	value[field_len] = '\0';
	id = hh_h2_request_with(c, "GET", "/a", fields, NULL, 0);
	hh_h2_pump(c);
	assert_true(hh_h2_stream(c, id)->closed);
	status = hh_h2_stream(c, id)->status;
	*advertised = nghttp2_session_get_remote_settings(c->ng,
			NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE);
	hh_h2_free(c);
	return status;
}

/* An HTTP/2 header list as RFC 9113 8.2.3 counts it (each field 32 bytes
 * more than its name and value): GET /a with a field x of field_len
 * bytes, from an nghttp2 client (:method, :scheme, :authority, :path). */
static size_t
h2_list_size(size_t field_len)
{
	return (7 + 3 + 32) + (7 + 4 + 32) + (10 + 1 + 32) + (5 + 2 + 32) +
		(1 + field_len + 32);
}

/* Defaults: an 8 KiB target passes (404: no such file), one byte more is
 * 414; a 10 KiB field fits the 16 KiB head; past the head, 431. */
static void
test_defaults(void **state)
{
	struct hh *h = *state;
	uint32_t adv;

	assert_int_equal(HTTP_MAX_TARGET, 8192);
	assert_int_equal(h1_status(h, request(8192, 0)), 404);
	assert_int_equal(h1_status(h, request(8193, 0)), 414);
	assert_int_equal(h1_status(h, request(100, 10 << 10)), 404);
	assert_int_equal(h1_status(h, request(100, 17 << 10)), 431);
	assert_int_equal(h1_status(h, request(17 << 10, 0)), 414);
	assert_int_equal(h2_status(h, 8192), 404);
	assert_int_equal(h2_status(h, 8193), 414);
	/* HTTP/2's header list: the same 16 KiB, advertised */
	assert_int_equal(h2_field_status(h, 10 << 10, &adv), 404);
	assert_int_equal(adv, 16384);
	assert_int_equal(h2_field_status(h, 17 << 10, &adv), 431);
}

/* Limits of the configuration's: exact at the byte. */
static void
test_configured(void **state)
{
	struct hh *h;
	uint32_t adv;

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
	/* and an HTTP/2 header list of 2048 bytes, not one more */
	assert_int_equal(h2_list_size(1848), 2048);
	assert_int_equal(h2_field_status(h, 1848, &adv), 404);
	assert_int_equal(adv, 2048);
	assert_int_equal(h2_field_status(h, 1849, &adv), 431);
	hh_free(h);
	/* a limit past the default: a list of 40 KiB fits */
	h = hh_new_limits(0, 0, 48 << 10, 0);
	assert_int_equal(h2_field_status(h, 40 << 10, &adv), 404);
	assert_int_equal(adv, 48 << 10);
	assert_int_equal(h2_field_status(h, 48 << 10, &adv), 431);
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
