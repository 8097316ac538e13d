/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The reverse proxy: /proxy/NAME/REST goes to upstream NAME as /REST, an
 * ordinary route over the handler API. Its handler forwards its request
 * with ewyk_fetch() (the client's fields, and its body as it arrives),
 * waits for the upstream's head, and answers with ewyk_respond_fetch():
 * the upstream's body streams to the client as the client drains. On a
 * fiber the wait parks the fiber; where no fiber can be had (--fibers 0,
 * a forced strategy mode) it blocks a pool thread instead.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ewyk_serve.h"
#include "http_req.h"
#include "routes.h"

#define PROXY_PREFIX "/proxy/"

static enum ewyk_result
error(struct ewyk_request *req, int status)
{
	http_answer_error(&req->ans, status, NULL);
	return EWYK_ANSWERED;
}

/* 502 or 504, saying why: "502 upstream connect_refused". */
static enum ewyk_result
failed(struct ewyk_request *req, int rc)
{
	const char *why = NULL;
	int status = ewyk_fetch_failure(req, &why);
	char msg[64];

	if (status == 0)
		return error(req, rc == -ENOENT ? 404 : 503);
	snprintf(msg, sizeof(msg), "%d upstream %s\n", status, why);
	ewyk_respond_copy(req, status, HTTP_TEXT_PLAIN, msg, strlen(msg));
	return EWYK_ANSWERED;
}

enum ewyk_result
serve_proxy_forward(struct ewyk_request *req, const char *name,
		struct ewyk_str path)
{
	struct ewyk_str q = ewyk_request_query(req);
	char target[HTTP_MAX_TARGET + 2];
	struct ewyk_fetch_req fr = { .target = target,
		.flags = EWYK_FETCH_FORWARD };
	struct ewyk_fetch *f;
	int n, rc;

	n = snprintf(target, sizeof(target), "%.*s%s%.*s", (int)path.len,
			path.p, q.len ? "?" : "", (int)q.len, q.p);
	if (n < 0 || (size_t)n >= sizeof(target))
		return error(req, 414);
	rc = ewyk_fetch(req, name, &fr, &f);
	if (rc != 0)
		return failed(req, rc);
	rc = ewyk_respond_fetch(req, f);
	if (rc != 0) {
		/* The client left meanwhile: nothing is written. */
		ewyk_fetch_close(f);
		return error(req, 503);
	}
	return EWYK_ANSWERED;
}

/* /proxy/NAME/REST?Q -> /REST?Q of upstream NAME. */
static enum ewyk_result
proxy_handler(struct ewyk_request *req, void *ctx)
{
	struct ewyk_str rest = ewyk_request_rest(req);
	const char *slash = memchr(rest.p, '/', rest.len);
	size_t nl = slash != NULL ? (size_t)(slash - rest.p) : rest.len;
	char name[UPSTREAM_NAME_MAX];

	RTE_SET_USED(ctx);
	if (nl >= sizeof(name))
		return error(req, 404);
	memcpy(name, rest.p, nl);
	name[nl] = '\0';
	return serve_proxy_forward(req, name, slash != NULL ?
			(struct ewyk_str){ slash, rest.len - nl } :
			(struct ewyk_str){ "/", 1 });
}

int
serve_proxy_route_add(struct ewyk_router *r)
{
	const struct ewyk_route route = { PROXY_PREFIX, EWYK_MATCH_PREFIX,
		EWYK_METHOD_ANY, EWYK_HANDLER_FIBER, proxy_handler, NULL };

	return ewyk_route_add_flags(r, &route, EWYK_ROUTE_BODY_STREAM);
}
