/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>

#include "dispatch.h"
#include "ewyk_exec.h"
#include "fibers.h"
#include "routes.h"
#include "state_api.h"
#include "store.h"

static enum ewyk_result
text(struct ewyk_request *req, int status, const char *msg)
{
	if (status == 503)
		ewyk_respond_header(req, "Retry-After", "1");
	ewyk_respond_copy(req, status, "text/plain; charset=utf-8", msg,
			strlen(msg));
	return EWYK_ANSWERED;
}

/* "name=N" in the query, N in [0, max]; -1 when absent or bad. */
static long
param_number(const struct ewyk_request *req, const char *name, uint32_t max)
{
	struct ewyk_str v;
	long n = 0;
	size_t i;

	if (!ewyk_request_param(req, name, &v) || v.len == 0)
		return -1;
	for (i = 0; i < v.len; i++) {
		if (v.p[i] < '0' || v.p[i] > '9')
			return -1;
		n = n * 10 + (v.p[i] - '0');
		if (n > (long)max)
			return -1;
	}
	return n;
}

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
	long arg = param_number(req, tr->param, tr->max);
	const char *what = "delayed";
	char body[96];
	long spin;

	if (arg < 0) {
		snprintf(body, sizeof(body), "%s=N expected, N <= %u\n",
				tr->param, tr->max);
		return text(req, 400, body);
	}
	switch (tr->kind) {
	case TEST_DELAY:
		/* Computing first, without a wait: a fiber that does not park
		 * for long is what the watchdog relieves. */
		if ((spin = param_number(req, "spin_us", 1000000)) > 0)
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
			if (param_number(req, "defer", 1) == 1)
				return EWYK_DEFER;
			what = "not delayed (non-blocking)";
			break;
		}
		ewyk_sleep(req, (uint32_t)arg);
		break;
	}
	snprintf(body, sizeof(body), "%s %ld %s (%s)\n", what, arg,
			tr->kind == TEST_SPIN ? "us" : "ms",
			ewyk_consume_name(dispatch_consume_mode(req)));
	return text(req, 200, body);
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
	long chunk = param_number(req, "chunk", STREAM_IO_MAX);
	long ms = param_number(req, "ms", 10000);
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
		return text(req, 503, "no fiber free\n");
	if (n < 0) {
		snprintf(body, sizeof(body), "body read failed: %s\n",
				strerror((int)-n));
		return text(req, n == -ETIMEDOUT ? 408 : 400, body);
	}
	snprintf(body, sizeof(body), "bytes %llu fnv1a64 %016llx\n",
			(unsigned long long)total, (unsigned long long)h);
	return text(req, 200, body);
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
	long n = param_number(req, "n", 1u << 30);
	long chunk = param_number(req, "chunk", STREAM_IO_BIG);
	long ms = param_number(req, "ms", 10000);
	bool chunked = param_number(req, "chunked", 1) == 1;
	long wait_ms = param_number(req, "wait_ms", STREAM_TIMEOUT_MS);
	uint64_t off = 0;
	int rc;

	RTE_SET_USED(ctx);
	if (n < 0)
		return text(req, 400, "n=N expected, N <= 2^30\n");
	if (chunk <= 0)
		chunk = STREAM_IO_MAX;
	if (chunk > STREAM_IO_MAX && (buf = malloc((size_t)chunk)) == NULL)
		return text(req, 503, "no memory\n");
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
		return text(req, 503, "no fiber free\n");
	return EWYK_ANSWERED;
}

/* The stores: /v1/state/KEY (journaled) and /kv/KEY (memory) ------------- */

struct store_route {
	struct store *store;
	bool journaled;		/* ?durable=1 waits for the disk */
};

static void
etag(struct ewyk_request *req, uint64_t version)
{
	char tag[32];

	snprintf(tag, sizeof(tag), "\"%llu\"", (unsigned long long)version);
	ewyk_respond_header(req, "ETag", tag);
}

static enum ewyk_result
store_handler(struct ewyk_request *req, void *ctx)
{
	const struct store_route *sr = ctx;
	struct ewyk_str key = ewyk_request_rest(req);
	const char *m = ewyk_request_method(req);
	bool durable = sr->journaled && param_number(req, "durable", 1) == 1;
	char val[STORE_VAL_MAX], body[64];
	uint64_t v;
	long n;
	int rc;

	if (!state_key_ok(key.p, key.len))
		return text(req, 400, "keys are 1 to 64 of [A-Za-z0-9._-]\n");
	if (strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0) {
		n = store_get(sr->store, key.p, key.len, val, sizeof(val), &v);
		if (n < 0)
			return text(req, 404, "no such key\n");
		etag(req, v);
		ewyk_respond_copy(req, 200, "application/octet-stream", val,
				(size_t)n);
		return EWYK_ANSWERED;
	}
	/* A durable write waits for the disk: on a fiber, or where the
	 * thread may block, not on an lcore that must keep polling. The
	 * pool runs it again from the start. */
	if (durable && !ewyk_request_may_block(req) && !ewyk_request_on_fiber(req))
		return EWYK_DEFER;
	if (strcmp(m, "DELETE") == 0) {
		v = store_delete(sr->store, key.p, key.len);
		if (v == 0)
			return text(req, 404, "no such key\n");
	} else {
		struct ewyk_str b = ewyk_request_body(req);

		v = store_put(sr->store, key.p, key.len, b.p, b.len);
		if (v == 0)
			return text(req, 507, "the store is full\n");
	}
	if (durable) {
		/* Group commit: whichever batch carries a version at least
		 * this new answers every waiter of the key. */
		rc = fiber_wait_durable(req, sr->store, key.p, key.len, v, 5000);
		/* The value is in memory either way; only its durability
		 * failed: 507 when the journal's disk is full, as WebDAV's
		 * Insufficient Storage, else 503. */
		if (rc == -ENOSPC || rc == -EDQUOT)
			return text(req, 507, "no space for the journal: the "
					"value is kept, not on disk\n");
		if (rc != 0)
			return text(req, 503, rc == -ENOTSUP ? "no --state-dir: "
					"nothing is durable\n" : rc == -ETIMEDOUT ?
					"not yet on disk\n" : "the journal cannot "
					"be written\n");
	}
	etag(req, v);
	snprintf(body, sizeof(body), "version %llu%s\n", (unsigned long long)v,
			durable ? " on disk" : "");
	return text(req, 200, body);
}

int
routes_register(struct ewyk_router *r, struct store *state, struct store *kv,
		bool fibers)
{
	static const struct test_route delay = { TEST_DELAY, "ms", 10000 };
	static const struct test_route spin = { TEST_SPIN, "us", 1000000 };
	static const struct test_route either = { TEST_EITHER, "ms", 10000 };
	static struct store_route state_route, kv_route;
	const uint32_t rw = EWYK_METHOD_GET | EWYK_METHOD_HEAD |
		EWYK_METHOD_PUT | EWYK_METHOD_DELETE;
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
		/* With fibers, a durable PUT parks its fiber until the disk
		 * has it; without, it is deferred to the pool. */
		{ "/v1/state/", EWYK_MATCH_PREFIX, rw, fibers ?
			EWYK_HANDLER_FIBER : EWYK_HANDLER_NON_BLOCKING,
			store_handler, &state_route },
		{ "/kv/", EWYK_MATCH_PREFIX, rw,
			EWYK_HANDLER_NON_BLOCKING, store_handler, &kv_route },
		/* Streamed bodies in blocking style (body_io.c). */
		{ "/bytes", EWYK_MATCH_EXACT, EWYK_METHOD_GET,
			EWYK_HANDLER_FIBER, bytes_handler, NULL },
	};

	state_route = (struct store_route){ state, true };
	kv_route = (struct store_route){ kv, false };
	const struct ewyk_route upload = { "/upload", EWYK_MATCH_EXACT,
		EWYK_METHOD_POST | EWYK_METHOD_PUT, EWYK_HANDLER_FIBER,
		upload_handler, NULL };
	size_t i;
	int rc;

	for (i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
		if ((rc = ewyk_route_add(r, &routes[i])) != 0)
			return rc;
	return ewyk_route_add_flags(r, &upload, EWYK_ROUTE_BODY_STREAM);
}
