/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An example plugin: every way of answering that the handler API offers.
 * Build it against ewyk_http.h alone, in the tree or out of it once ewyk
 * is installed:
 *   cc -shared -fPIC $(pkg-config --cflags --libs ewyk) hello.c -o hello.so
 * and load it with
 *   ewykd ... -- --plugin build/app/plugins/ewyk-hello.so:GREETING
 *
 *   GET  /hello?name=N      a copied body: "GREETING, N"
 *   GET  /hello/big?kb=N    N KiB borrowed from the heap, freed when sent
 *   GET  /hello/count?n=N   lines 1..N from a source, length unknown
 *   GET  /hello/slow?ms=N   EITHER: sleeps where it may, else defers
 *   GET  /hello/nap?ms=N    FIBER: written in blocking style, waits on a
 *                           fiber of the shard without holding its lcore
 *   GET  /hello/fetch/NAME/PATH?timeout_ms=N&leave=1&linger_ms=M
 *                           FIBER: fetches /PATH from upstream NAME and
 *                           answers its status, byte count and FNV-1a 64
 *                           of its body; leave=1 reads nothing and leaves
 *                           the fetch to be closed by the return; a read
 *                           that fails waits M ms before the close.
 *                           PUT and POST send the request's body along.
 *   PUT  /hello/note/KEY    FIBER, API 2: the body kept in the appliance's
 *                           journaled store; ?durable=1 answers once it is
 *                           on disk (the fiber parks meanwhile)
 *   GET  /hello/note/KEY    the value kept
 *   POST /hello/shout       FIBER, API 2: the body read as it arrives and
 *                           written back in capitals as the client takes it
 *   POST /hello/inspect     the request as the handler sees it, with
 *                           its body's length and FNV-1a 64 (a plain
 *                           handler: the body gathered whole first)
 *   GET  /hello/stats       borrowed buffers and sources given and returned
 *
 * Handlers registered by name, served where a configuration's [route]
 * puts them (plugin = NAME; API 4): "inspect" (inspect's), "shout"
 * (shout's, its body read as it arrives), "big" and "count".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* strerrorname_np(), when built out of the tree */
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ewyk_http.h"

static char greeting[64] = "hello";
static unsigned long lent, returned;	/* borrowed buffers and sources */

static unsigned long
param(const struct ewyk_request *req, const char *name, unsigned long max)
{
	struct ewyk_str v;
	unsigned long n = 0;
	size_t i;

	if (!ewyk_request_param(req, name, &v))
		return 0;
	for (i = 0; i < v.len && v.p[i] >= '0' && v.p[i] <= '9'; i++)
		n = n * 10 + (unsigned long)(v.p[i] - '0');
	return n > max ? max : n;
}

static enum ewyk_result
text(struct ewyk_request *req, int status, const char *s)
{
	ewyk_respond_copy(req, status, "text/plain; charset=utf-8", s, strlen(s));
	return EWYK_ANSWERED;
}

static enum ewyk_result
hello(struct ewyk_request *req, void *ctx)
{
	struct ewyk_str name = { "world", 5 };
	char body[192];

	(void)ctx;
	ewyk_request_param(req, "name", &name);
	snprintf(body, sizeof(body), "%s, %.*s\n", greeting,
			(int)(name.len > 64 ? 64 : name.len), name.p);
	ewyk_respond_header(req, "X-Plugin", "hello");
	return text(req, 200, body);
}

/* Handlers may run on any thread: the counters are atomic. */
static void
give_back(void *buf)
{
	free(buf);
	__atomic_fetch_add(&returned, 1, __ATOMIC_RELAXED);
}

static enum ewyk_result
big(struct ewyk_request *req, void *ctx)
{
	size_t len = param(req, "kb", 16384) * 1024, i;
	char *buf = malloc(len ? len : 1);

	(void)ctx;
	if (buf == NULL)
		return text(req, 503, "out of memory\n");
	for (i = 0; i < len; i++)
		buf[i] = (char)('a' + i % 26);
	__atomic_fetch_add(&lent, 1, __ATOMIC_RELAXED);
	if (ewyk_respond_borrow(req, 200, "text/plain", buf, len, give_back,
			buf) != 0) {
		give_back(buf);
		return text(req, 500, "cannot answer\n");
	}
	return EWYK_ANSWERED;
}

/* A source: lines "1\n" to "N\n", made as the connection has room. */
struct counter {
	unsigned long next, last;
	char pending[24];	/* a line that did not fit last time */
	size_t plen;
};

static ssize_t
count_read(void *arg, void *buf, size_t cap)
{
	struct counter *c = arg;
	char *out = buf;
	size_t used = 0;

	for (;;) {
		if (c->plen == 0) {
			if (c->next > c->last)
				break;
			c->plen = (size_t)snprintf(c->pending, sizeof(c->pending),
					"%lu\n", c->next++);
		}
		if (c->plen > cap - used)
			break;
		memcpy(out + used, c->pending, c->plen);
		used += c->plen;
		c->plen = 0;
	}
	return (ssize_t)used;
}

static void
count_done(void *arg)
{
	free(arg);
	__atomic_fetch_add(&returned, 1, __ATOMIC_RELAXED);
}

static enum ewyk_result
count(struct ewyk_request *req, void *ctx)
{
	struct counter *c = calloc(1, sizeof(*c));
	struct ewyk_source src = {
		.read = count_read, .done = count_done, .arg = c, .length = -1,
	};

	(void)ctx;
	if (c == NULL)
		return text(req, 503, "out of memory\n");
	c->next = 1;
	c->last = param(req, "n", 10000000);
	__atomic_fetch_add(&lent, 1, __ATOMIC_RELAXED);
	if (ewyk_respond_stream(req, 200, "text/plain", &src) != 0) {
		count_done(c);
		return text(req, 500, "cannot answer\n");
	}
	return EWYK_ANSWERED;
}

static enum ewyk_result
slow(struct ewyk_request *req, void *ctx)
{
	unsigned long ms = param(req, "ms", 5000);
	char body[64];

	(void)ctx;
	if (!ewyk_request_may_block(req))
		return EWYK_DEFER;	/* run me where sleeping is allowed */
	usleep((useconds_t)ms * 1000);
	snprintf(body, sizeof(body), "slept %lu ms\n", ms);
	return text(req, 200, body);
}

/* Blocking style without a thread: ewyk_sleep() parks this fiber on the
 * shard's timers and the lcore goes on serving; where no fiber could be
 * had, the same call sleeps on the thread that runs the handler. */
static enum ewyk_result
nap(struct ewyk_request *req, void *ctx)
{
	unsigned long ms = param(req, "ms", 5000);
	bool fiber = ewyk_request_on_fiber(req);
	char body[64];

	(void)ctx;
	if (ewyk_sleep(req, (uint32_t)ms) == -ECANCELED)
		return text(req, 499, "client gone\n");	/* never written */
	snprintf(body, sizeof(body), "napped %lu ms on a %s\n", ms,
			fiber ? "fiber" : "thread");
	return text(req, 200, body);
}

static uint64_t
fnv1a64(uint64_t h, const unsigned char *p, size_t n)
{
	while (n-- > 0)
		h = (h ^ *p++) * 0x100000001b3ull;
	return h;
}

/* A fetch failed: 502 and the errno's name ("ECONNREFUSED"). */
static enum ewyk_result
fetch_failed(struct ewyk_request *req, const char *what, int err)
{
	char body[96];
	const char *name = strerrorname_np(-err);

	if (err == -ECANCELED)
		return text(req, 499, "client gone\n");	/* never written */
	snprintf(body, sizeof(body), "%s %s\n", what, name ? name : "?");
	return text(req, 502, body);
}

/* Blocking style again: fetch, read the whole body, answer a summary. */
static enum ewyk_result
fetch(struct ewyk_request *req, void *ctx)
{
	struct ewyk_str rest = ewyk_request_rest(req);
	const char *slash = memchr(rest.p, '/', rest.len);
	size_t nl = slash != NULL ? (size_t)(slash - rest.p) : rest.len;
	char upstream[33], target[1024], body[128];
	unsigned char buf[8192];	/* on the fiber's stack: never a thread's */
	struct ewyk_str reqbody = ewyk_request_body(req);
	const struct ewyk_field via = { "X-Fetched-By", greeting };
	struct ewyk_fetch_req r = { .method = ewyk_request_method(req),
		.target = target, .fields = &via, .nfields = 1,
		.body = reqbody.p, .body_len = reqbody.len,
		.timeout_ms = (uint32_t)param(req, "timeout_ms", 600000) };
	struct ewyk_fetch *f;
	uint64_t h = 0xcbf29ce484222325ull, bytes = 0;
	ssize_t n;
	int rc;

	(void)ctx;
	if (nl >= sizeof(upstream) || rest.len - nl >= sizeof(target))
		return text(req, 414, "too long\n");
	memcpy(upstream, rest.p, nl);
	upstream[nl] = '\0';
	snprintf(target, sizeof(target), "/%.*s", (int)(rest.len - nl -
			(slash != NULL)), slash != NULL ? slash + 1 : "");
	rc = ewyk_fetch(req, upstream, &r, &f);
	if (rc != 0)
		return fetch_failed(req, "fetch", rc);
	if (param(req, "leave", 1) == 1)
		return text(req, 200, "left open\n");
	while ((n = ewyk_fetch_read(f, buf, sizeof(buf))) > 0) {
		h = fnv1a64(h, buf, (size_t)n);
		bytes += (uint64_t)n;
	}
	snprintf(body, sizeof(body), "status %d\nbytes %llu\nfnv1a64 %016llx\n",
			ewyk_fetch_status(f), (unsigned long long)bytes,
			(unsigned long long)h);
	rc = ewyk_fetch_status(f);
	if (n < 0 && n != -ECANCELED)
		ewyk_sleep(req, (uint32_t)param(req, "linger_ms", 5000));
	ewyk_fetch_close(f);
	if (n < 0)
		return fetch_failed(req, "read", (int)n);
	return text(req, rc, body);
}

/* The appliance's store, from a plugin: a durable write parks the fiber
 * until the journal has it, with every other write of the same batch. */
static enum ewyk_result
note(struct ewyk_request *req, void *ctx)
{
	struct ewyk_str key = ewyk_request_rest(req), body;
	char value[EWYK_STATE_VALUE_MAX], out[128];
	int64_t v;
	ssize_t n;
	int rc;

	(void)ctx;
	if (strcmp(ewyk_request_method(req), "GET") == 0) {
		n = ewyk_state_get(key.p, key.len, value, sizeof(value), NULL);
		if (n < 0)
			return text(req, n == -ENOENT ? 404 : 400, strerror((int)-n));
		ewyk_respond_copy(req, 200, "application/octet-stream", value,
				(size_t)n);
		return EWYK_ANSWERED;
	}
	body = ewyk_request_body(req);
	v = ewyk_state_put(key.p, key.len, body.p, body.len);
	if (v < 0)
		return text(req, v == -ENOSPC ? 507 : 400, strerror((int)-v));
	if (param(req, "durable", 1) == 1) {
		rc = ewyk_state_wait_durable(req, key.p, key.len, (uint64_t)v, 5000);
		if (rc != 0) {
			snprintf(out, sizeof(out), "version %lld kept, not on "
					"disk: %s\n", (long long)v, strerror(-rc));
			return text(req, 503, out);
		}
	}
	snprintf(out, sizeof(out), "version %lld%s on a %s\n", (long long)v,
			param(req, "durable", 1) == 1 ? " on disk" : "",
			ewyk_request_on_fiber(req) ? "fiber" : "thread");
	return text(req, 200, out);
}

/* Streamed both ways in blocking style: each read parks until the client
 * has sent more, each write until the client has taken it. The buffer is
 * on the fiber's stack: a parked write lends it to the connection. */
static enum ewyk_result
shout(struct ewyk_request *req, void *ctx)
{
	char buf[4096];
	ssize_t n, i;
	int rc;

	(void)ctx;
	rc = ewyk_respond_begin(req, 200, "text/plain", -1);
	if (rc == -EPERM)
		return text(req, 503, "no fiber free\n");
	while (rc == 0 && (n = ewyk_body_read(req, buf, sizeof(buf), 10000)) > 0) {
		for (i = 0; i < n; i++)
			if (buf[i] >= 'a' && buf[i] <= 'z')
				buf[i] = (char)(buf[i] - 'a' + 'A');
		rc = ewyk_body_write(req, buf, (size_t)n, 10000);
	}
	return EWYK_ANSWERED;	/* a failed read or write cuts the body */
}

static enum ewyk_result
inspect(struct ewyk_request *req, void *ctx)
{
	struct ewyk_str path = ewyk_request_path(req), rest = ewyk_request_rest(req);
	struct ewyk_str query = ewyk_request_query(req), body = ewyk_request_body(req);
	struct ewyk_str name, value;
	char out[4096];
	size_t i;
	int n;

	(void)ctx;
	n = snprintf(out, sizeof(out), "method %s\npath %.*s\nrest %.*s\n"
			"query %.*s\nversion %d\nbody %zu\nbody fnv1a64 %016llx\n",
			ewyk_request_method(req), (int)path.len, path.p,
			(int)rest.len, rest.p, (int)query.len, query.p,
			ewyk_request_http_version(req), body.len,
			(unsigned long long)fnv1a64(0xcbf29ce484222325ull,
			(const unsigned char *)body.p, body.len));
	if (ewyk_request_header(req, "x-test", &value))
		n += snprintf(out + n, sizeof(out) - (size_t)n, "x-test %.*s\n",
				(int)value.len, value.p);
	for (i = 0; ewyk_request_header_at(req, i, &name, &value) &&
			n < (int)sizeof(out) - 256; i++)
		n += snprintf(out + n, sizeof(out) - (size_t)n, "header %.*s\n",
				(int)name.len, name.p);
	return text(req, 200, out);
}

static enum ewyk_result
stats(struct ewyk_request *req, void *ctx)
{
	char body[96];

	(void)ctx;
	snprintf(body, sizeof(body), "lent %lu returned %lu\n",
			__atomic_load_n(&lent, __ATOMIC_RELAXED),
			__atomic_load_n(&returned, __ATOMIC_RELAXED));
	return text(req, 200, body);
}

int
ewyk_plugin_init(struct ewyk_router *r, unsigned int api, const char *arg)
{
	const struct ewyk_route routes[] = {
		{ "/hello", EWYK_MATCH_EXACT, EWYK_METHOD_GET | EWYK_METHOD_HEAD,
			EWYK_HANDLER_NON_BLOCKING, hello, NULL },
		{ "/hello/big", EWYK_MATCH_EXACT, EWYK_METHOD_GET,
			EWYK_HANDLER_NON_BLOCKING, big, NULL },
		{ "/hello/count", EWYK_MATCH_EXACT, EWYK_METHOD_GET,
			EWYK_HANDLER_NON_BLOCKING, count, NULL },
		{ "/hello/slow", EWYK_MATCH_EXACT, EWYK_METHOD_GET,
			EWYK_HANDLER_EITHER, slow, NULL },
		{ "/hello/nap", EWYK_MATCH_EXACT, EWYK_METHOD_GET,
			EWYK_HANDLER_FIBER, nap, NULL },
		{ "/hello/fetch/", EWYK_MATCH_PREFIX,
			EWYK_METHOD_GET | EWYK_METHOD_PUT | EWYK_METHOD_POST,
			EWYK_HANDLER_FIBER, fetch, NULL },
		{ "/hello/note/", EWYK_MATCH_PREFIX, EWYK_METHOD_GET |
			EWYK_METHOD_PUT, EWYK_HANDLER_FIBER, note, NULL },
		{ "/hello/inspect", EWYK_MATCH_PREFIX, EWYK_METHOD_ANY,
			EWYK_HANDLER_NON_BLOCKING, inspect, NULL },
		{ "/hello/stats", EWYK_MATCH_EXACT, EWYK_METHOD_GET,
			EWYK_HANDLER_NON_BLOCKING, stats, NULL },
	};
	const struct ewyk_route shouting = { "/hello/shout", EWYK_MATCH_EXACT,
		EWYK_METHOD_POST, EWYK_HANDLER_FIBER, shout, NULL };
	const struct ewyk_route by_name[] = {
		{ NULL, EWYK_MATCH_PREFIX, EWYK_METHOD_ANY,
			EWYK_HANDLER_NON_BLOCKING, inspect, NULL },
		{ NULL, EWYK_MATCH_PREFIX, EWYK_METHOD_POST,
			EWYK_HANDLER_FIBER, shout, NULL },
		{ NULL, EWYK_MATCH_PREFIX, EWYK_METHOD_GET,
			EWYK_HANDLER_NON_BLOCKING, big, NULL },
		{ NULL, EWYK_MATCH_PREFIX, EWYK_METHOD_GET,
			EWYK_HANDLER_NON_BLOCKING, count, NULL },
	};
	size_t i;
	int rc;

	/* The API only grows: an appliance at least as new will do. */
	if (api < EWYK_HTTP_API)
		return -ENOTSUP;
	if (arg != NULL && arg[0] != '\0') {
		if (strlen(arg) >= sizeof(greeting))
			return -EINVAL;
		snprintf(greeting, sizeof(greeting), "%s", arg);
	}
	for (i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
		if ((rc = ewyk_route_add(r, &routes[i])) != 0)
			return rc;
	if ((rc = ewyk_route_named(r, "inspect", &by_name[0], 0)) != 0 ||
			(rc = ewyk_route_named(r, "shout", &by_name[1],
			EWYK_ROUTE_BODY_STREAM)) != 0 ||
			(rc = ewyk_route_named(r, "big", &by_name[2], 0)) != 0 ||
			(rc = ewyk_route_named(r, "count", &by_name[3], 0)) != 0)
		return rc;
	return ewyk_route_add_flags(r, &shouting, EWYK_ROUTE_BODY_STREAM);
}
