/* SPDX-License-Identifier: BSD-3-Clause */
/* The handler API's pure parts: route matching, requests copied into
 * their task, answer rules, and the latency histogram. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "http1_parse.h"
#include "http_priv.h"
#include "lat_hist.h"

static enum ewyk_result
nop(struct ewyk_request *req, void *ctx)
{
	(void)req;
	(void)ctx;
	return EWYK_ANSWERED;
}

static int
add(struct ewyk_router *r, const char *path, enum ewyk_match m, uint32_t methods)
{
	struct ewyk_route rt = { path, m, methods, EWYK_HANDLER_NON_BLOCKING,
		nop, NULL };

	return ewyk_route_add(r, &rt);
}

static const char *
found(const struct ewyk_router *r, const char *path)
{
	const struct http_route *rt = http_route_find(r, path,
			(uint32_t)strlen(path));

	return rt != NULL ? rt->path : "-";
}

static void
test_routes_longest_match_wins(void **state)
{
	static struct ewyk_router r;

	(void)state;
	assert_int_equal(add(&r, "/a/", EWYK_MATCH_PREFIX, EWYK_METHOD_GET), 0);
	assert_int_equal(add(&r, "/a/b", EWYK_MATCH_EXACT, EWYK_METHOD_GET), 0);
	assert_int_equal(add(&r, "/a/b", EWYK_MATCH_PREFIX, EWYK_METHOD_GET), 0);
	assert_int_equal(add(&r, "/a/bc/", EWYK_MATCH_PREFIX, EWYK_METHOD_GET), 0);
	assert_string_equal(found(&r, "/a/x"), "/a/");
	assert_string_equal(found(&r, "/a/b"), "/a/b");
	assert_int_equal(http_route_find(&r, "/a/b", 4)->match, EWYK_MATCH_EXACT);
	assert_int_equal(http_route_find(&r, "/a/bx", 5)->match, EWYK_MATCH_PREFIX);
	assert_string_equal(found(&r, "/a/bc/d"), "/a/bc/");
	assert_string_equal(found(&r, "/a"), "-");
	assert_string_equal(found(&r, "/b"), "-");
}

static void
test_routes_refuse_bad_ones(void **state)
{
	static struct ewyk_router r;
	struct ewyk_route rt = { "/x", EWYK_MATCH_EXACT, EWYK_METHOD_GET,
		EWYK_HANDLER_EITHER, NULL, NULL };
	char name[16];
	int i;

	(void)state;
	assert_int_equal(ewyk_route_add(&r, &rt), -EINVAL);	/* no handler */
	assert_int_equal(add(&r, "x", EWYK_MATCH_EXACT, EWYK_METHOD_GET), -EINVAL);
	assert_int_equal(add(&r, "/a b", EWYK_MATCH_EXACT, EWYK_METHOD_GET), -EINVAL);
	assert_int_equal(add(&r, "/q?", EWYK_MATCH_EXACT, EWYK_METHOD_GET), -EINVAL);
	assert_int_equal(add(&r, "/m", EWYK_MATCH_EXACT, 0), -EINVAL);
	assert_int_equal(add(&r, "/m", EWYK_MATCH_EXACT, 1u << 12), -EINVAL);
	assert_int_equal(add(&r, "/d", EWYK_MATCH_EXACT, EWYK_METHOD_GET), 0);
	assert_int_equal(add(&r, "/d", EWYK_MATCH_EXACT, EWYK_METHOD_PUT), -EEXIST);
	for (i = 1; i < HTTP_ROUTES_MAX; i++) {
		snprintf(name, sizeof(name), "/r%d", i);
		assert_int_equal(add(&r, name, EWYK_MATCH_EXACT, EWYK_METHOD_GET), 0);
	}
	assert_int_equal(add(&r, "/full", EWYK_MATCH_EXACT, EWYK_METHOD_GET), -ENOSPC);
}

static void
test_route_flags(void **state)
{
	static struct ewyk_router r;
	struct ewyk_route rt = { "/up", EWYK_MATCH_EXACT, EWYK_METHOD_POST,
		EWYK_HANDLER_BLOCKING, nop, NULL };

	(void)state;
	/* A body read as it arrives parks: fibers only. */
	assert_int_equal(ewyk_route_add_flags(&r, &rt, EWYK_ROUTE_BODY_STREAM),
			-EINVAL);
	rt.type = EWYK_HANDLER_FIBER;
	assert_int_equal(ewyk_route_add_flags(&r, &rt, 0x2), -EINVAL);
	assert_int_equal(r.n, 0);
	assert_int_equal(ewyk_route_add_flags(&r, &rt, EWYK_ROUTE_BODY_STREAM), 0);
	assert_int_equal(http_route_find(&r, "/up", 3)->flags,
			HTTP_ROUTE_BODY_STREAM);
	rt.path = "/plain";
	assert_int_equal(ewyk_route_add_flags(&r, &rt, 0), 0);
	assert_int_equal(http_route_find(&r, "/plain", 6)->flags, 0);
}

/* Handlers by name: checked as routes are, found by their name, served
 * at no path of their own. */
static void
test_named_handlers(void **state)
{
	static struct ewyk_router r;
	struct ewyk_route rt = { NULL, EWYK_MATCH_PREFIX, EWYK_METHOD_GET,
		EWYK_HANDLER_BLOCKING, nop, &r };
	char name[40];
	int i;

	(void)state;
	assert_int_equal(ewyk_route_named(&r, "", &rt, 0), -EINVAL);
	assert_int_equal(ewyk_route_named(&r, "a b", &rt, 0), -EINVAL);
	assert_int_equal(ewyk_route_named(&r, "a/b", &rt, 0), -EINVAL);
	memset(name, 'n', 33);
	name[33] = '\0';
	assert_int_equal(ewyk_route_named(&r, name, &rt, 0), -EINVAL);
	assert_int_equal(ewyk_route_named(&r, "up", &rt, EWYK_ROUTE_BODY_STREAM),
			-EINVAL);	/* not a fiber */
	name[32] = '\0';
	assert_int_equal(ewyk_route_named(&r, name, &rt, 0), 0);
	assert_int_equal(ewyk_route_named(&r, "look_1-x", &rt, 0), 0);
	assert_int_equal(ewyk_route_named(&r, "look_1-x", &rt, 0), -EEXIST);
	assert_null(http_route_named(&r, "look"));
	assert_non_null(http_route_named(&r, "look_1-x"));
	assert_ptr_equal(http_route_named(&r, "look_1-x")->ctx, &r);
	/* GET brings HEAD, as a route's */
	assert_int_equal(http_route_named(&r, "look_1-x")->methods,
			EWYK_METHOD_GET | EWYK_METHOD_HEAD);
	rt.type = EWYK_HANDLER_FIBER;
	assert_int_equal(ewyk_route_named(&r, "up", &rt, EWYK_ROUTE_BODY_STREAM), 0);
	assert_int_equal(http_route_named(&r, "up")->flags, HTTP_ROUTE_BODY_STREAM);
	assert_int_equal(r.n, 0);	/* no path served */
	for (i = 3; i < HTTP_NAMED_MAX; i++) {
		snprintf(name, sizeof(name), "h%d", i);
		assert_int_equal(ewyk_route_named(&r, name, &rt, 0), 0);
	}
	assert_int_equal(ewyk_route_named(&r, "full", &rt, 0), -ENOSPC);
}

/* A field taken out: the later ones move down, the bytes stay whole. */
static void
test_answer_field_removed(void **state)
{
	static struct http_answer a;

	(void)state;
	http_answer_init(&a);
	assert_int_equal(http_answer_add_field(&a, "A", 1, "one", 3), 0);
	assert_int_equal(http_answer_add_field(&a, "ETag", 4, "\"x\"", 3), 0);
	assert_int_equal(http_answer_add_field(&a, "C", 1, "three", 5), 0);
	http_answer_remove_field(&a, 1);
	assert_int_equal(a.nheaders, 2);
	assert_memory_equal(a.hbuf, "A: one\r\nC: three\r\n", 18);
	assert_int_equal(a.hused, 18);
	assert_memory_equal(a.hbuf + a.h[1].name, "C", 1);
	assert_memory_equal(a.hbuf + a.h[1].value, "three", 5);
	http_answer_remove_field(&a, 5);	/* none such: nothing */
	assert_int_equal(a.nheaders, 2);
	assert_int_equal(http_answer_add_field(&a, "D", 1, "four", 4), 0);
	assert_memory_equal(a.hbuf + a.h[2].value, "four", 4);
}

static void
test_allow_and_method_bits(void **state)
{
	struct http_route rt = { .methods = EWYK_METHOD_GET | EWYK_METHOD_PUT |
		EWYK_METHOD_DELETE };
	char allow[64];

	(void)state;
	http_route_allow(&rt, allow, sizeof(allow));
	assert_string_equal(allow, "GET, PUT, DELETE");
	assert_int_equal(http_method_bit(HTTP_PATCH), EWYK_METHOD_PATCH);
	assert_int_equal(http_method_bit(HTTP_OTHER), 0);
	assert_int_equal(http_method_bit(HTTP_TRACE), 0);
}

static struct ewyk_request *
request_of(const char *raw, const struct http_route *rt)
{
	static struct http_head r;
	struct ewyk_request *q = malloc(sizeof(*q));
	int n = http1_parse_request(raw, strlen(raw), &r);

	assert_true(n > 0);
	r.body = raw + n;
	r.body_len = (uint32_t)(strlen(raw) - (size_t)n);
	assert_int_equal(http_req_fill(q, &r, rt, 1), 0);
	return q;
}

static void
test_request_is_a_copy_with_accessors(void **state)
{
	struct http_route rt = { .path = "/kv/", .path_len = 4,
		.match = EWYK_MATCH_PREFIX };
	char raw[] = "PUT /kv/key?durable=1&flag&x= HTTP/1.1\r\nHost: h\r\n"
		"X-One: 1\r\nContent-Length: 5\r\n\r\nhello";
	struct ewyk_request *q = request_of(raw, &rt);
	struct ewyk_str v, n;

	(void)state;
	memset(raw, '#', sizeof(raw) - 1);	/* the request owns its bytes */
	assert_string_equal(ewyk_request_method(q), "PUT");
	v = ewyk_request_path(q);
	assert_int_equal(v.len, 7);
	assert_memory_equal(v.p, "/kv/key", 7);
	v = ewyk_request_rest(q);
	assert_int_equal(v.len, 3);
	assert_memory_equal(v.p, "key", 3);
	assert_true(ewyk_request_param(q, "durable", &v));
	assert_int_equal(v.len, 1);
	assert_memory_equal(v.p, "1", 1);
	assert_true(ewyk_request_param(q, "flag", &v));
	assert_int_equal(v.len, 0);
	assert_true(ewyk_request_param(q, "x", &v));
	assert_int_equal(v.len, 0);
	assert_false(ewyk_request_param(q, "dur", &v));
	assert_true(ewyk_request_header(q, "x-one", &v));
	assert_memory_equal(v.p, "1", 1);
	assert_false(ewyk_request_header(q, "x-two", &v));
	assert_int_equal(ewyk_request_header_count(q), 3);
	assert_true(ewyk_request_header_at(q, 0, &n, &v));
	assert_memory_equal(n.p, "Host", 4);
	assert_false(ewyk_request_header_at(q, 3, &n, &v));
	v = ewyk_request_body(q);
	assert_int_equal(v.len, 5);
	assert_memory_equal(v.p, "hello", 5);
	assert_int_equal(ewyk_request_http_version(q), 1);
	free(q);
}

static int done_calls;

static void
count_done(void *arg)
{
	assert_ptr_equal(arg, &done_calls);
	done_calls++;
}

static void
test_answer_rules(void **state)
{
	char raw[] = "GET / HTTP/1.1\r\nHost: h\r\n\r\n";
	struct ewyk_request *q = request_of(raw, NULL);
	static char big[HTTP_ANSWER_INLINE + 1];
	uint64_t copies = http_answer_heap_copies();

	(void)state;
	/* The server frames the body and the connection. */
	assert_int_equal(ewyk_respond_header(q, "Content-Length", "1"), -EINVAL);
	assert_int_equal(ewyk_respond_header(q, "connection", "close"), -EINVAL);
	/* No header injection, no bad names. */
	assert_int_equal(ewyk_respond_header(q, "X-A", "1\r\nX-B: 2"), -EINVAL);
	assert_int_equal(ewyk_respond_header(q, "X A", "1"), -EINVAL);
	assert_int_equal(ewyk_respond_header(q, "X-Fine", "a\tb"), 0);
	assert_int_equal(ewyk_respond_copy(q, 99, NULL, "x", 1), -EINVAL);
	assert_int_equal(ewyk_respond_copy(q, 200, "text/plain", big, sizeof(big)), 0);
	assert_int_equal(http_answer_heap_copies(), copies + 1);
	/* One answer per request. */
	assert_int_equal(ewyk_respond_copy(q, 200, NULL, "x", 1), -EINVAL);
	assert_int_equal(ewyk_respond_header(q, "X-Late", "1"), -EINVAL);
	assert_int_equal(q->ans.nheaders, 2);
	http_answer_release(&q->ans);

	/* A borrowed body is given back exactly once. */
	http_answer_init(&q->ans);
	done_calls = 0;
	assert_int_equal(ewyk_respond_borrow(q, 200, NULL, "abc", 3, count_done,
			&done_calls), 0);
	http_answer_release(&q->ans);
	http_answer_release(&q->ans);
	assert_int_equal(done_calls, 1);

	/* Replacing a borrowed answer (a 500 for it) gives it back too. */
	http_answer_init(&q->ans);
	assert_int_equal(ewyk_respond_borrow(q, 200, NULL, "abc", 3, count_done,
			&done_calls), 0);
	http_answer_text(&q->ans, 503, "busy\n");
	assert_int_equal(done_calls, 2);
	assert_int_equal(q->ans.status, 503);
	assert_int_equal(q->ans.nheaders, 2);	/* type and Retry-After */
	http_answer_release(&q->ans);
	assert_int_equal(done_calls, 2);

	/* An answer begun early and let go by its connection leaves the
	 * request committed: nothing may take its place. */
	http_answer_init(&q->ans);
	q->committed = true;
	assert_int_equal(ewyk_respond_copy(q, 200, NULL, "x", 1), -EINVAL);
	assert_int_equal(ewyk_respond_borrow(q, 200, NULL, "abc", 3, count_done,
			&done_calls), -EINVAL);
	assert_int_equal(ewyk_respond_header(q, "X-Late", "1"), -EINVAL);
	assert_int_equal(q->ans.kind, HTTP_BODY_UNSET);
	free(q);
}

static void
test_latency_buckets_bound_the_error(void **state)
{
	uint64_t ns;

	(void)state;
	for (ns = 0; ns < (1ull << 42); ns = ns * 5 / 4 + 1) {
		unsigned int b = lat_bucket(ns);
		uint64_t top = lat_bucket_top(b);

		assert_true(b < LAT_BUCKETS - 1);	/* two hours fit */
		assert_true(top >= ns);
		assert_true(b == 0 || lat_bucket_top(b - 1) < ns);
		assert_true(top - ns <= ns / 4 + 1);	/* within 25 % */
	}
}

static void
test_latency_percentiles(void **state)
{
	static struct lat_hist h, sum;
	unsigned int i;

	(void)state;
	assert_int_equal(lat_percentile(&h, 0.5), 0);
	for (i = 1; i <= 1000; i++)
		lat_record(&h, i * 1000);	/* 1 .. 1000 us, in ns */
	assert_true(lat_percentile(&h, 0.50) >= 500000 &&
			lat_percentile(&h, 0.50) <= 625000);
	assert_true(lat_percentile(&h, 0.99) >= 990000 &&
			lat_percentile(&h, 0.99) <= 1000000);
	assert_int_equal(lat_percentile(&h, 1.0), 1000000);	/* never above max */
	lat_merge(&sum, &h);
	lat_merge(&sum, &h);
	assert_int_equal(sum.count, 2000);
	assert_int_equal(lat_percentile(&sum, 0.5), lat_percentile(&h, 0.5));
}

/* Below a microsecond and far above: a fast static file must not read 0,
 * and a day of TSC cycles converts without overflow. */
static void
test_latency_in_nanoseconds(void **state)
{
	static struct lat_hist h;
	uint64_t hz = 2500000000ull, mult = lat_ns_mult(hz);

	(void)state;
	assert_int_equal(lat_cycles_ns(2500, mult), 1000);
	assert_int_equal(lat_cycles_ns(3750, mult), 1500);
	assert_int_equal(lat_cycles_ns(hz * 86400, mult) / 1000000000, 86400);
	assert_int_equal(lat_cycles_ns(123, lat_ns_mult(0)), 0);
	lat_record(&h, lat_cycles_ns(1500, mult));	/* 600 ns */
	lat_record(&h, lat_cycles_ns(3750, mult));	/* 1.5 us */
	assert_true(lat_percentile(&h, 0.5) >= 600 && lat_percentile(&h, 0.5) < 750);
	assert_int_equal(lat_percentile(&h, 1.0), 1500);
	assert_int_equal(h.max_ns, 1500);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_routes_longest_match_wins),
		cmocka_unit_test(test_routes_refuse_bad_ones),
		cmocka_unit_test(test_route_flags),
		cmocka_unit_test(test_named_handlers),
		cmocka_unit_test(test_answer_field_removed),
		cmocka_unit_test(test_allow_and_method_bits),
		cmocka_unit_test(test_request_is_a_copy_with_accessors),
		cmocka_unit_test(test_answer_rules),
		cmocka_unit_test(test_latency_buckets_bound_the_error),
		cmocka_unit_test(test_latency_percentiles),
		cmocka_unit_test(test_latency_in_nanoseconds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
