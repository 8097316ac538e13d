/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The reverse proxy: /proxy/NAME/REST goes to upstream NAME as /REST,
 * over the shard's own TCP (lib/http's upstream client). Today it runs on
 * the shard's owner as events: dispatch starts the fetch, the answer head
 * completes the task with a streamed body read from the upstream as the
 * client drains. The handler a fiber will run later is the same two
 * steps written straight: fetch (proxy_request() below), then answer
 * (proxy_answer_head()).
 */
#ifndef EWYKD_PROXY_H
#define EWYKD_PROXY_H

#include "http_server.h"

struct ewyk_router;
struct route_task;
struct shard;

/* Adds the /proxy/ route when upstreams are configured. */
int proxy_register(struct ewyk_router *r, unsigned int nb_upstreams);
/* Whether the route is the proxy's (dispatch runs it itself). */
bool proxy_route(const struct http_route *rt);
/* On the owner, in dispatch: starts the fetch of t's request (filled);
 * HTTP_DISPATCH_TAKEN, or the status to answer at once. */
int proxy_dispatch(struct shard *s, struct route_task *t,
		const struct http_head *r);
/* http_body_ready_fn: more of a proxied request's body is at hand. */
void proxy_body_ready(void *ctx, struct http_origin o);

#endif /* EWYKD_PROXY_H */
