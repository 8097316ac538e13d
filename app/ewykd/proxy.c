/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <string.h>

#include "dispatch.h"
#include "fibers.h"
#include "http_req.h"
#include "http_upstream.h"
#include "proxy.h"
#include "shard.h"

#define PROXY_PREFIX "/proxy/"

static enum ewyk_result proxy_handler(struct ewyk_request *req, void *ctx);

int
proxy_register(struct ewyk_router *r, unsigned int nb_upstreams)
{
	const struct ewyk_route route = { PROXY_PREFIX, EWYK_MATCH_PREFIX,
		EWYK_METHOD_ANY, EWYK_HANDLER_FIBER, proxy_handler, NULL };

	return nb_upstreams == 0 ? 0 :
		http_route_add(r, &route, HTTP_ROUTE_BODY_STREAM);
}

bool
proxy_route(const struct http_route *rt)
{
	return rt->handler == proxy_handler;
}

static void
fetch_end(struct route_task *t)
{
	body_watch_remove(t);
	if (t->fetch != NULL)
		upstream_fetch_release(t->fetch);
	t->fetch = NULL;
}

/* The answer's body, as the client has room. */
static ssize_t
body_read(void *arg, void *buf, size_t cap)
{
	struct route_task *t = arg;

	return upstream_fetch_read(t->fetch, buf, cap);
}

static void
body_done(void *arg)
{
	fetch_end(arg);
}

/* The upstream's head becomes the answer's: its fields but this hop's
 * own (framing, Connection, Server, Date: refused by the answer API), and
 * a body streamed from the upstream. */
static void
proxy_answer_head(struct route_task *t, const struct http_head *h, bool body)
{
	struct ewyk_source src = { body_read, body_done, t,
		!h->chunked && h->content_length >= 0 ? h->content_length : -1 };
	char name[64], value[EWYK_RESPONSE_HEADERS_MAX];
	uint32_t i;

	for (i = 0; i < h->nheaders; i++) {
		const struct http_header *f = &h->headers[i];

		if (f->name.len >= sizeof(name) || f->value.len >= sizeof(value))
			continue;
		memcpy(name, f->name.p, f->name.len);
		name[f->name.len] = '\0';
		memcpy(value, f->value.p, f->value.len);
		value[f->value.len] = '\0';
		ewyk_respond_header(&t->req, name, value);	/* or left out */
	}
	if (!body)
		src.length = t->req.method == HTTP_HEAD ? src.length : 0;
	ewyk_respond_stream(&t->req, h->status, NULL, &src);
}

/* The answer is set: to the parked fiber, or (as events) to the client. */
static void
answer_ready(struct route_task *t)
{
	if (t->fiber != NULL)
		ewyk_wait_wake(t->wait);
	else
		dispatch_complete(t->shard, t);
}

static void
answer_failed(struct route_task *t, enum upstream_err why)
{
	char text[64];
	int status = upstream_err_status(why);

	snprintf(text, sizeof(text), "%d upstream %s\n", status,
			upstream_err_name(why));
	http_answer_text(&t->req.ans, status, text);
}

static void
on_head(void *arg, const struct http_head *h, bool body)
{
	struct route_task *t = arg;

	proxy_answer_head(t, h, body);
	answer_ready(t);
}

static void
on_readable(void *arg)
{
	struct route_task *t = arg;

	http_server_resume(t->shard->http, t->origin);
}

static void
on_failed(void *arg, enum upstream_err why)
{
	struct route_task *t = arg;

	fetch_end(t);
	answer_failed(t, why);
	answer_ready(t);
}

static long
on_req_body(void *arg, void *buf, size_t cap)
{
	struct route_task *t = arg;

	return http_server_body_read(t->shard->http, t->origin, buf, cap);
}

/* More of the client's body is at hand: the upstream's side pulls it. */
static void
req_body_ready(struct route_task *t)
{
	upstream_fetch_body_ready(t->fetch);
}

static const struct upstream_events events = {
	.head = on_head,
	.readable = on_readable,
	.failed = on_failed,
	.req_body = on_req_body,
};

/* The request for the upstream: /proxy/NAME/REST?Q -> /REST?Q. */
static int
proxy_request(struct shard *s, struct route_task *t, enum upstream_err *why)
{
	struct ewyk_str rest = ewyk_request_rest(&t->req);
	struct ewyk_str q = ewyk_request_query(&t->req);
	const char *slash = memchr(rest.p, '/', rest.len);
	size_t nl = slash != NULL ? (size_t)(slash - rest.p) : rest.len;
	char target[HTTP_MAX_TARGET + 2];
	struct upstream_req ur;
	enum http_method m = t->req.method;
	int idx = upstream_find(s->upstream, rest.p, nl);
	int n;

	if (idx < 0)
		return 404;
	n = snprintf(target, sizeof(target), "/%.*s%s%.*s",
			(int)(rest.len - nl - (slash != NULL)),
			slash != NULL ? slash + 1 : "", q.len ? "?" : "",
			(int)q.len, q.p);
	if (n < 0 || (size_t)n >= sizeof(target))
		return 414;
	ur = (struct upstream_req){
		.method = { t->req.method_name,
			(uint32_t)strlen(t->req.method_name) },
		.target = { target, (uint32_t)n },
		.headers = t->req.hdr,
		.nheaders = t->req.nheaders,
		.body_len = t->body_len,
		.idempotent = http_method_idempotent(m),
		.head = m == HTTP_HEAD,
	};
	t->fetch = upstream_fetch_start(s->upstream, idx, &ur, &events, t, why);
	if (t->fetch == NULL)
		return upstream_err_status(*why);
	if (ur.body_len != 0)
		body_watch_add(s, t, req_body_ready);
	return HTTP_DISPATCH_TAKEN;
}

bool
proxy_takes_fiber(struct shard *s, struct route_task *t)
{
	t->fetch = NULL;
	return s->upstream != NULL && s->cfg->strategy == EWYK_MODE_ADAPTIVE &&
		fibers_hook(s, &t->base) == 0;
}

int
proxy_dispatch(struct shard *s, struct route_task *t)
{
	enum upstream_err why;

	if (s->upstream == NULL)
		return 404;
	return proxy_request(s, t, &why);
}

/* The fiber's wait: the fetch starts in its arm, on the shard's owner
 * (the fiber may run on an lcore that lost the shard, and the upstream
 * client is the owner's); its head or failure wakes the fiber. A client
 * that leaves meanwhile wants no answer, and the upstream's is let go. */
struct proxy_wait {
	struct ewyk_wait w;
	int rc;			/* proxy_request()'s */
	enum upstream_err why;
};

static void
proxy_wait_arm(struct ewyk_wait *w)
{
	struct proxy_wait *pw = container_of(w, struct proxy_wait, w);
	struct route_task *t = w->arg;

	pw->rc = proxy_request(t->shard, t, &pw->why);
	if (pw->rc != HTTP_DISPATCH_TAKEN)
		ewyk_wait_wake(w);	/* refused at once: no event follows */
}

static void
proxy_wait_disarm(struct ewyk_wait *w)
{
	fetch_end(w->arg);
}

/* The blocking form: fetch, then answer. */
static enum ewyk_result
proxy_handler(struct ewyk_request *req, void *ctx)
{
	struct route_task *t = container_of(req, struct route_task, req);
	struct proxy_wait pw = { .w = { .arm = proxy_wait_arm,
		.disarm = proxy_wait_disarm, .arg = t } };

	RTE_SET_USED(ctx);
	if (!ewyk_request_on_fiber(req)) {
		/* The strategy found no fiber after all: a thread cannot use
		 * the shard's upstream client. */
		http_answer_error(&req->ans, 503, NULL);
		return EWYK_ANSWERED;
	}
	if (ewyk_wait_park(req, &pw.w, EWYK_WAIT_FOREVER) != 0)
		/* Cancelled (the client left): nothing is written. */
		http_answer_error(&req->ans, 503, NULL);
	else if (pw.rc == 502 || pw.rc == 504)
		answer_failed(t, pw.why);
	else if (pw.rc != HTTP_DISPATCH_TAKEN)
		http_answer_error(&req->ans, pw.rc, NULL);
	/* else the head's event set the answer */
	return EWYK_ANSWERED;
}
