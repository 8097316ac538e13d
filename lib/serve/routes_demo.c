/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The demonstration and test routes, written against the handler API
 * like any plugin (serve_demo_routes_add()): the strategy's test routes
 * (/delay, a fiber handler, and /blocking-delay, the same on a thread;
 * /spin, /either), streamed bodies (/echo, /upload, /bytes) and an
 * in-memory store (/kv/KEY). Only the test routes reach past the API, to
 * say in their answers how the strategy consumed them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>

#include "dispatch.h"
#include "routes.h"
#include "store.h"

/* The strategy's test routes ---------------------------------------------- */

enum test_kind { TEST_DELAY, TEST_SPIN, TEST_EITHER };

struct test_route {
	enum test_kind kind;
	const char *param;
	uint32_t max;
};

static void
spin_us(uint32_t us)
{
	uint64_t end = rte_get_tsc_cycles() + rte_get_tsc_hz() / 1000000 * us;

	while (rte_get_tsc_cycles() < end)
		ewyk_cpu_pause();
}

static enum ewyk_result
test_handler(struct ewyk_request *req, void *ctx)
{
	const struct test_route *tr = ctx;
	long arg = routes_param_number(req, tr->param, tr->max);
	const char *what = "delayed";
	char body[96];
	long spin;

	if (arg < 0) {
		snprintf(body, sizeof(body), "%s=N expected, N <= %u\n",
				tr->param, tr->max);
		return routes_text(req, 400, body);
	}
	switch (tr->kind) {
	case TEST_DELAY:
		/* Computing first, without a wait: a fiber that does not park
		 * for long is what the watchdog relieves. */
		if ((spin = routes_param_number(req, "spin_us", 1000000)) > 0)
			spin_us((uint32_t)spin);
		ewyk_sleep(req, (uint32_t)arg);
		break;
	case TEST_SPIN:
		spin_us((uint32_t)arg);
		what = "spun";
		break;
	case TEST_EITHER:
		/* May block, unless run under the non-blocking flag: then
		 * it answers at once, or (defer=1) asks for the pool. */
		if (!ewyk_request_may_block(req)) {
			if (routes_param_number(req, "defer", 1) == 1)
				return EWYK_DEFER;
			what = "not delayed (non-blocking)";
			break;
		}
		ewyk_sleep(req, (uint32_t)arg);
		break;
	}
	snprintf(body, sizeof(body), "%s %ld %s (%s)\n", what, arg,
			tr->kind == TEST_SPIN ? "us" : "ms",
			ewyk_consume_name(serve_consume_mode(req)));
	return routes_text(req, 200, body);
}

/* Streamed bodies on a fiber: /upload and /bytes -------------------------- */

/* A read or write at most: the buffer is on the fiber's stack (its own:
 * a parked write still lends it to the connection). */
#define STREAM_IO_MAX 8192
#define STREAM_IO_BIG (1u << 20)	/* a write from the heap, at most */
#define STREAM_TIMEOUT_MS 10000

/* FNV-1a, 64 bits: a digest a test can compute too. */
static uint64_t
fnv1a(uint64_t h, const uint8_t *p, size_t n)
{
	while (n-- > 0)
		h = (h ^ *p++) * 0x100000001b3ull;
	return h;
}

#define FNV1A_SEED 0xcbf29ce484222325ull

/* /upload: reads the body as it arrives, ?chunk=N bytes at a time, and
 * ?ms=N between reads (a slow reader); answers its length and digest. */
static enum ewyk_result
upload_handler(struct ewyk_request *req, void *ctx)
{
	uint8_t buf[STREAM_IO_MAX];
	long chunk = routes_param_number(req, "chunk", STREAM_IO_MAX);
	long ms = routes_param_number(req, "ms", 10000);
	uint64_t h = FNV1A_SEED, total = 0;
	char body[96];
	ssize_t n;

	RTE_SET_USED(ctx);
	if (chunk <= 0)
		chunk = STREAM_IO_MAX;
	while ((n = ewyk_body_read(req, buf, (size_t)chunk,
			STREAM_TIMEOUT_MS)) > 0) {
		h = fnv1a(h, buf, (size_t)n);
		total += (uint64_t)n;
		if (ms > 0 && ewyk_sleep(req, (uint32_t)ms) != 0)
			break;
	}
	if (n == -EPERM)
		return routes_text(req, 503, "no fiber free\n");
	if (n < 0) {
		snprintf(body, sizeof(body), "body read failed: %s\n",
				strerror((int)-n));
		return routes_text(req, n == -ETIMEDOUT ? 408 : 400, body);
	}
	snprintf(body, sizeof(body), "bytes %llu fnv1a64 %016llx\n",
			(unsigned long long)total, (unsigned long long)h);
	return routes_text(req, 200, body);
}

/* Byte i of /bytes' body: a pattern a test can check anywhere. */
static uint8_t
pattern_byte(uint64_t i)
{
	return (uint8_t)(i % 251);
}

/* /bytes?n=N: N bytes of the pattern, written ?chunk=C at a time as the
 * client takes them (past 8 KiB, from the heap: up to 1 MiB); ?chunked=1
 * for a body of unknown length, ?ms=M between writes, ?wait_ms=W each
 * write's timeout. */
static enum ewyk_result
bytes_handler(struct ewyk_request *req, void *ctx)
{
	uint8_t stack_buf[STREAM_IO_MAX], *buf = stack_buf;
	long n = routes_param_number(req, "n", 1u << 30);
	long chunk = routes_param_number(req, "chunk", STREAM_IO_BIG);
	long ms = routes_param_number(req, "ms", 10000);
	bool chunked = routes_param_number(req, "chunked", 1) == 1;
	long wait_ms = routes_param_number(req, "wait_ms", STREAM_TIMEOUT_MS);
	uint64_t off = 0;
	int rc;

	RTE_SET_USED(ctx);
	if (n < 0)
		return routes_text(req, 400, "n=N expected, N <= 2^30\n");
	if (chunk <= 0)
		chunk = STREAM_IO_MAX;
	if (chunk > STREAM_IO_MAX && (buf = malloc((size_t)chunk)) == NULL)
		return routes_text(req, 503, "no memory\n");
	rc = ewyk_respond_begin(req, 200, "application/octet-stream",
			chunked ? -1 : n);
	while (rc == 0 && off < (uint64_t)n) {
		size_t len = (size_t)RTE_MIN((uint64_t)chunk, (uint64_t)n - off);
		size_t i;

		for (i = 0; i < len; i++)
			buf[i] = pattern_byte(off + i);
		rc = ewyk_body_write(req, buf, len, wait_ms > 0 ?
				(uint32_t)wait_ms : STREAM_TIMEOUT_MS);
		off += len;
		if (rc == 0 && ms > 0)
			rc = ewyk_sleep(req, (uint32_t)ms);
	}
	if (buf != stack_buf)
		free(buf);
	if (rc == -EPERM)
		return routes_text(req, 503, "no fiber free\n");
	return EWYK_ANSWERED;
}

/* /echo: the request body back as it arrives, with its length when the
 * client said it. The first bytes are read before the answer begins, so
 * a body that breaks at once is answered 400, not cut. */
static enum ewyk_result
echo_handler(struct ewyk_request *req, void *ctx)
{
	uint8_t buf[STREAM_IO_MAX];
	struct ewyk_str cl;
	int64_t length = -1;
	ssize_t n;
	int rc;

	RTE_SET_USED(ctx);
	if (ewyk_request_header(req, "content-length", &cl))
		length = routes_param_value(cl, INT64_MAX);
	n = ewyk_body_read(req, buf, sizeof(buf), STREAM_TIMEOUT_MS);
	if (n == -EPERM)
		return routes_text(req, 503, "no fiber free\n");
	if (n < 0)
		return routes_text(req, n == -ETIMEDOUT ? 408 : 400,
				n == -ECANCELED ? "" : "the body broke off\n");
	rc = ewyk_respond_begin(req, 200, "application/octet-stream", length);
	while (rc == 0 && n > 0) {
		rc = ewyk_body_write(req, buf, (size_t)n, STREAM_TIMEOUT_MS);
		if (rc == 0)
			n = ewyk_body_read(req, buf, sizeof(buf),
					STREAM_TIMEOUT_MS);
	}
	/* A read that failed leaves the body short: the answer is cut. */
	return EWYK_ANSWERED;
}

int
serve_demo_routes_add(struct ewyk_router *r, struct store *kv)
{
	static const struct test_route delay = { TEST_DELAY, "ms", 10000 };
	static const struct test_route spin = { TEST_SPIN, "us", 1000000 };
	static const struct test_route either = { TEST_EITHER, "ms", 10000 };
	const struct ewyk_route routes[] = {
		/* A fiber where one can be had; a thread otherwise. */
		{ "/delay", EWYK_MATCH_EXACT, EWYK_METHOD_GET,
			EWYK_HANDLER_FIBER, test_handler, (void *)&delay },
		/* Always a thread: the blocking pool's or a hand-off's. */
		{ "/blocking-delay", EWYK_MATCH_EXACT, EWYK_METHOD_GET,
			EWYK_HANDLER_BLOCKING, test_handler, (void *)&delay },
		{ "/spin", EWYK_MATCH_EXACT, EWYK_METHOD_GET,
			EWYK_HANDLER_NON_BLOCKING, test_handler, (void *)&spin },
		{ "/either", EWYK_MATCH_EXACT, EWYK_METHOD_GET,
			EWYK_HANDLER_EITHER, test_handler, (void *)&either },
		/* Streamed bodies in blocking style (body.c). */
		{ "/bytes", EWYK_MATCH_EXACT, EWYK_METHOD_GET,
			EWYK_HANDLER_FIBER, bytes_handler, NULL },
	};
	const struct ewyk_route streamed[] = {
		{ "/upload", EWYK_MATCH_EXACT, EWYK_METHOD_POST |
			EWYK_METHOD_PUT, EWYK_HANDLER_FIBER, upload_handler,
			NULL },
		{ "/echo", EWYK_MATCH_EXACT, EWYK_METHOD_POST |
			EWYK_METHOD_PUT, EWYK_HANDLER_FIBER, echo_handler,
			NULL },
	};
	size_t i;
	int rc;

	for (i = 0; i < RTE_DIM(routes); i++)
		if ((rc = ewyk_route_add(r, &routes[i])) != 0)
			return rc;
	for (i = 0; i < RTE_DIM(streamed); i++)
		if ((rc = ewyk_route_add_flags(r, &streamed[i],
				EWYK_ROUTE_BODY_STREAM)) != 0)
			return rc;
	return routes_kv_add(r, kv);
}
