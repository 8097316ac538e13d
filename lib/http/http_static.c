/* SPDX-License-Identifier: BSD-3-Clause */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "http_cond.h"
#include "http_req.h"
#include "http_route.h"
#include "http_static.h"
#include "www.h"


static bool
header(const struct ewyk_request *q, const char *name, struct http_str *v)
{
	struct ewyk_str s;

	if (!ewyk_request_header(q, name, &s))
		return false;
	*v = (struct http_str){ s.p, (uint32_t)s.len };
	return true;
}

/* Error answers of a handler are the same as the server's own. */
static enum ewyk_result
error(struct ewyk_request *q, int status)
{
	http_answer_error(&q->ans, status, NULL);
	return EWYK_ANSWERED;
}

/* The fields of a file's answer are known good: no per-request checks. */
static void
add_field(struct ewyk_request *q, const char *name, const char *value)
{
	http_answer_add_field(&q->ans, name, strlen(name), value, strlen(value));
}

/* A respond call that failed (it cannot, with these arguments) is the
 * server's fault. */
static enum ewyk_result
answered(int rc, struct ewyk_request *q)
{
	return rc == 0 ? EWYK_ANSWERED : error(q, 500);
}

static enum ewyk_result
static_file(struct ewyk_request *q, void *ctx)
{
	const struct www *www = ctx;
	struct ewyk_str path = ewyk_request_path(q);
	const struct www_file *f = www != NULL ? www_find(www, path.p,
			path.len) : NULL;
	struct http_str inm, range;
	uint64_t from = 0, to;
	char value[80];
	int r;

	if (f == NULL)
		return error(q, 404);
	to = f->size > 0 ? f->size - 1 : 0;
	r = header(q, "range", &range) ? http_parse_range(&range, f->size,
			&from, &to) : 0;
	if (r < 0 && !(header(q, "if-none-match", &inm) &&
			http_etag_matches(&inm, f))) {
		const char *text = http_error_text(416);

		snprintf(value, sizeof(value), "bytes */%" PRIu64, f->size);
		add_field(q, "Content-Range", value);
		return answered(ewyk_respond_borrow(q, 416, HTTP_TEXT_PLAIN, text,
				strlen(text), NULL, NULL), q);
	}
	add_field(q, "ETag", f->etag);
	add_field(q, "Accept-Ranges", "bytes");
	if (header(q, "if-none-match", &inm) && http_etag_matches(&inm, f))
		/* 304 carries no body, but may say the length of one. */
		return answered(ewyk_respond_borrow(q, 304, NULL, f->data,
				f->size, NULL, NULL), q);
	if (r > 0) {
		snprintf(value, sizeof(value), "bytes %" PRIu64 "-%" PRIu64
				"/%" PRIu64, from, to, f->size);
		add_field(q, "Content-Range", value);
	}
	add_field(q, "Content-Type", f->content_type);
	return answered(ewyk_respond_borrow(q, r > 0 ? 206 : 200,
			NULL, f->data + from, f->size > 0 ?
			to - from + 1 : 0, NULL, NULL), q);
}

static enum ewyk_result
echo(struct ewyk_request *q, void *ctx)
{
	(void)ctx;
	return answered(http_answer_echo(q, "application/octet-stream"), q);
}

int
http_static_routes_add(struct ewyk_router *r, const struct www *www)
{
	static const struct ewyk_route files = {
		.path = "/", .match = EWYK_MATCH_PREFIX,
		.methods = EWYK_METHOD_GET, .type = EWYK_HANDLER_NON_BLOCKING,
		.handler = static_file,
	};
	static const struct ewyk_route echoes = {
		.path = "/echo", .match = EWYK_MATCH_EXACT,
		.methods = EWYK_METHOD_POST | EWYK_METHOD_PUT,
		.type = EWYK_HANDLER_NON_BLOCKING, .handler = echo,
	};
	struct ewyk_route f = files;
	int rc;

	f.ctx = (void *)(uintptr_t)www;
	rc = http_route_add(r, &f, HTTP_ROUTE_INLINE);
	return rc != 0 ? rc : http_route_add(r, &echoes,
			HTTP_ROUTE_ECHO | HTTP_ROUTE_INLINE);
}
