/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The static files as a route, registered like any other so that they are
 * counted per route and consumed under the execution strategy: GET and
 * HEAD of anything under "/", the files preloaded by www_load() (ETag and
 * If-None-Match, single ranges), 404 for a path that has none.
 * NON_BLOCKING and inline: everything it answers is in memory already.
 */
#ifndef EWYK_HTTP_STATIC_H
#define EWYK_HTTP_STATIC_H

struct ewyk_router;
struct www;

/* www may be NULL (no --www): every path is then 404. Returns 0 or the
 * negative errno of ewyk_route_add(). */
int http_static_route_add(struct ewyk_router *r, const struct www *www);

#endif /* EWYK_HTTP_STATIC_H */
