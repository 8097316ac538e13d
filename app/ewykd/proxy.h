/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The reverse proxy: /proxy/NAME/REST goes to upstream NAME as /REST,
 * over the shard's own TCP (lib/http's upstream client), the answer's body
 * streamed from the upstream as the client drains. Its handler is written
 * in blocking style and runs on a fiber of the shard: fetch (park until
 * the upstream's head or its failure), then answer. Where no fiber can be
 * had (none free, --fibers 0, a forced strategy mode), dispatch runs the
 * same two steps as events on the shard's owner: the head completes the
 * task. Threads never run it: the upstream client is the shard's.
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
/* In dispatch (t is filled): true when the proxy runs on a fiber (t goes
 * to the strategy as FIBER-capable), false when it must run as events
 * (proxy_dispatch()). */
bool proxy_takes_fiber(struct shard *s, struct route_task *t);
/* On the owner, in dispatch: starts the fetch of t's request as events;
 * HTTP_DISPATCH_TAKEN, or the status to answer at once. */
int proxy_dispatch(struct shard *s, struct route_task *t);

#endif /* EWYKD_PROXY_H */
