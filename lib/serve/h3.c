/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP/3 into the same runtime: the shard's QUIC endpoint offers each
 * request to the routes and the dispatch hook the HTTP server uses, so
 * a request over HTTP/3 is routed, counted, logged and run under the
 * strategy like one over TCP; its origin (QUIC_ORIGIN) sends its answer
 * back to the endpoint rather than to the HTTP server.
 */
#include <stdio.h>

#include "body.h"
#include "dispatch.h"
#include "ewyk_quic.h"
#include "h3.h"
#include "http_site.h"
#include "task.h"

/* The route of an HTTP/3 request and whether it may have it (0, or the
 * status to answer). The handshake's name: a Host of another site is
 * 421, as over TLS on TCP. */
static int
route_of(struct serve *sv, const struct http_head *r, struct http_origin o,
		char *allow, size_t allow_cap, const struct http_route **rt)
{
	char sni[256];
	size_t n = sv->conf.sites != NULL ?
		quic_server_name(sv->quic, o, sni, sizeof(sni)) : 0;

	*rt = http_route_lookup(sv->conf.router, sv->conf.sites, r, sni, n);
	return http_route_admit(*rt, r, allow, allow_cap);
}

/* quic_request_fn: the checks http_conn_dispatch() makes, then the hook. */
static int
h3_request(void *ctx, const struct http_head *r, struct http_origin o,
		char *allow, size_t allow_cap, struct http_answer **ans)
{
	struct serve *sv = ctx;
	const struct http_route *rt;
	int status = route_of(sv, r, o, allow, allow_cap, &rt);

	if (status != 0) {
		dispatch_refused(sv, r, status, 3, o);
		return status;
	}
	return dispatch_hook(sv, rt, r, 3, o, ans);
}

/* A route that reads its body as it comes (the proxy, uploads) has the
 * request at once; any other, once its body is whole. */
static bool
h3_streams_body(void *ctx, const struct http_head *r, struct http_origin o)
{
	const struct http_route *rt;
	char allow[128];

	return route_of(ctx, r, o, allow, sizeof(allow), &rt) == 0 &&
		(rt->flags & HTTP_ROUTE_BODY_STREAM);
}

int
h3_create(struct serve *sv)
{
	const struct serve_conf *c = &sv->conf;
	struct quic_conf qc = {
		.id = c->id,
		.ns = sv->ns,
		.tls = c->tls,
		.port = c->quic_port,
		.max_conns = c->max_conns,
		.idle_timeout_ms = c->keepalive_timeout_ms != 0 ?
			c->keepalive_timeout_ms : 30000,
		.handshake_timeout_ms = c->quic_handshake_timeout_ms,
		.retry_threshold = c->quic_retry_threshold,
		.conn_mem = c->quic_conn_mem,
		.tokens = c->quic_tokens,
		.bodies = http_server_bodies(sv->http),
		.max_body = http_server_max_body(sv->http),
		.request = h3_request,
		.streams_body = h3_streams_body,
		.body_ready = body_watch_ready,
		.released = dispatch_released,
		.ctx = sv,
		.stats = c->quic_stats,
	};

	if (!c->http3)
		return 0;
	sv->quic = quic_endpoint_create(&qc);
	return sv->quic != NULL ? 0 : -1;
}

void
h3_destroy(struct serve *sv)
{
	quic_endpoint_destroy(sv->quic);
	sv->quic = NULL;
}

bool
serve_answer(struct serve *sv, struct http_origin o, struct http_answer *a)
{
	return quic_origin(o) ? sv->quic != NULL && quic_answer(sv->quic, o, a) :
		http_server_answer(sv->http, o, a);
}

bool
serve_peer(struct serve *sv, struct http_origin o, struct net_addr *addr,
		uint16_t *port)
{
	return quic_origin(o) ? sv->quic != NULL &&
		quic_peer(sv->quic, o, addr, port) :
		http_server_peer(sv->http, o, addr, port);
}

long
serve_body_read(struct serve *sv, struct http_origin o, void *buf, size_t cap)
{
	return quic_origin(o) ? (sv->quic != NULL ?
		quic_body_read(sv->quic, o, buf, cap) : -1) :
		http_server_body_read(sv->http, o, buf, cap);
}

void
serve_body_done(struct serve *sv, struct http_origin o)
{
	if (quic_origin(o) && sv->quic != NULL)
		quic_body_done(sv->quic, o);
}

bool
serve_secure(struct serve *sv, struct http_origin o)
{
	return quic_origin(o) || http_server_secure(sv->http, o);
}

bool
serve_awaits(struct serve *sv, struct http_origin o)
{
	return quic_origin(o) ? sv->quic != NULL && quic_awaits(sv->quic, o) :
		http_server_awaits(sv->http, o);
}

bool
serve_resume(struct serve *sv, struct http_origin o)
{
	return quic_origin(o) ? sv->quic != NULL && quic_resume(sv->quic, o) :
		http_server_resume(sv->http, o);
}
