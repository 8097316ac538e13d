/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The configuration file's routes over the handler API: static files
 * under a root, an upstream, a redirect or a fixed status, each with the
 * fields its route adds to every answer it makes.
 */
#include <stdio.h>
#include <string.h>

#include "ewyk_serve.h"
#include "http_req.h"
#include "http_route.h"
#include "http_static.h"
#include "compress.h"
#include "routes.h"
#include "task.h"

/* The path after the route's prefix, as a path: "/x" of "/static/x"
 * under prefix "/static" or "/static/"; "/" when nothing is left. */
static struct ewyk_str
after_prefix(const struct ewyk_request *q)
{
	struct ewyk_str path = ewyk_request_path(q), rest = ewyk_request_rest(q);

	if (path.len == 1 && path.p[0] == '*')
		return path;	/* OPTIONS * */
	if (rest.len == 0)
		return (struct ewyk_str){ "/", 1 };
	if (rest.p[0] != '/')
		return (struct ewyk_str){ rest.p - 1, rest.len + 1 };
	return rest;
}

/* The route's own fields, on an answer made that is not an error (as
 * nginx's add_header), or before an upstream's. */
static enum ewyk_result
with_headers(struct ewyk_request *q, const struct serve_route *sr,
		enum ewyk_result res)
{
	uint16_t i;

	if (q->ans.status >= 400)
		return res;
	for (i = 0; i < sr->nb_headers; i++) {
		const char *h = sr->headers[i], *colon = strchr(h, ':');

		http_answer_add_field(&q->ans, h, (size_t)(colon - h), colon + 2,
				strlen(colon + 2));
	}
	return res;
}

/* target with {host} and {uri} (the request's target as sent) filled. */
static enum ewyk_result
redirect(struct ewyk_request *q, const struct serve_route *sr)
{
	struct ewyk_str host = { "", 0 }, path = ewyk_request_path(q),
		query = ewyk_request_query(q);
	char loc[EWYK_RESPONSE_HEADERS_MAX / 2];
	const char *t = sr->target;
	size_t n = 0;

	ewyk_request_header(q, "Host", &host);
	while (*t != '\0' && n < sizeof(loc) - 1) {
		size_t k;

		if (strncmp(t, "{host}", 6) == 0) {
			k = RTE_MIN(host.len, sizeof(loc) - 1 - n);
			memcpy(loc + n, host.p, k);
			t += 6;
		} else if (strncmp(t, "{uri}", 5) == 0) {
			k = RTE_MIN(path.len, sizeof(loc) - 1 - n);
			memcpy(loc + n, path.p, k);
			if (query.len > 0 && n + k + 1 + query.len < sizeof(loc)) {
				loc[n + k++] = '?';
				memcpy(loc + n + k, query.p, query.len);
				k += query.len;
			}
			t += 5;
		} else {
			loc[n] = *t++;
			k = 1;
		}
		n += k;
	}
	if (*t != '\0')
		return routes_text(q, 414, "414 URI Too Long\n");
	loc[n] = '\0';
	http_answer_error(&q->ans, sr->code, NULL);
	http_answer_add_field(&q->ans, "Location", 8, loc, n);
	return EWYK_ANSWERED;
}

static enum ewyk_result
status(struct ewyk_request *q, const struct serve_route *sr)
{
	if (sr->code == 204 || sr->code == 304) {	/* no body, ever */
		ewyk_respond_borrow(q, sr->code, NULL, NULL, 0, NULL, NULL);
		return EWYK_ANSWERED;
	}
	http_answer_error(&q->ans, sr->code, NULL);
	return EWYK_ANSWERED;
}

static enum ewyk_result
conf_route(struct ewyk_request *q, void *ctx)
{
	const struct serve_route *sr = ctx;
	enum ewyk_result res;

	switch (sr->kind) {
	case SERVE_ROUTE_ROOT:
		return with_headers(q, sr, http_static_answer(q, sr->files,
				after_prefix(q)));
	case SERVE_ROUTE_REDIRECT:
		return with_headers(q, sr, redirect(q, sr));
	case SERVE_ROUTE_STATUS:
		return with_headers(q, sr, status(q, sr));
	case SERVE_ROUTE_PLUGIN:
		/* An answer begun early is out already: its fields too. */
		res = sr->named->handler(q, sr->named->ctx);
		if (task_of(q)->early.begun)
			return res;
		if (sr->compress)
			compress_answer(&task_of(q)->sv->st.compress, q);
		return with_headers(q, sr, res);
	case SERVE_ROUTE_UPSTREAM:
		/* Its fields first: the upstream's answer streams. */
		with_headers(q, sr, EWYK_ANSWERED);
		task_of(q)->compress = sr->compress;
		return serve_proxy_forward(q, sr->target, sr->strip_prefix ?
				after_prefix(q) : ewyk_request_path(q));
	}
	return routes_text(q, 500, "500 Internal Server Error\n");
}

/* A plugin's handler at the configured path: its methods, its kind of
 * handler and its body's way, never inline (as every plugin route). */
static int
plugin_route_add(struct ewyk_router *r, const struct serve_route *sr)
{
	const struct http_named *h = sr->named;
	struct ewyk_route route = {
		.path = sr->path,
		.match = sr->exact ? EWYK_MATCH_EXACT : EWYK_MATCH_PREFIX,
		.methods = h->methods,
		.type = h->type,
		.handler = conf_route,
		.ctx = (void *)(uintptr_t)sr,
	};

	return http_route_add(r, &route, HTTP_ROUTE_BOUNDARY | h->flags);
}

int
serve_route_add(struct ewyk_router *r, const struct serve_route *sr)
{
	bool up = sr->kind == SERVE_ROUTE_UPSTREAM;
	struct ewyk_route route = {
		.path = sr->path,
		.match = sr->exact ? EWYK_MATCH_EXACT : EWYK_MATCH_PREFIX,
		.methods = up ? EWYK_METHOD_ANY : sr->kind == SERVE_ROUTE_ROOT ?
			EWYK_METHOD_GET | EWYK_METHOD_OPTIONS : EWYK_METHOD_ANY,
		/* What answers from memory runs inline; a forward waits. */
		.type = up ? EWYK_HANDLER_FIBER : EWYK_HANDLER_NON_BLOCKING,
		.handler = conf_route,
		.ctx = (void *)(uintptr_t)sr,
	};

	int rc = sr->kind == SERVE_ROUTE_PLUGIN ? plugin_route_add(r, sr) :
		http_route_add(r, &route, HTTP_ROUTE_BOUNDARY | (up ?
			HTTP_ROUTE_BODY_STREAM : HTTP_ROUTE_INLINE) |
			(sr->websocket ? HTTP_ROUTE_WEBSOCKET : 0));

	/* Added last: its limits, if any, checked by dispatch_hook(). */
	if (rc == 0 && (sr->limit.rps != 0 || sr->limit.conns != 0))
		r->routes[r->n - 1].limit = &sr->limit;
	return rc;
}
