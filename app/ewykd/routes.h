/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ewykd's built-in routes, written against the public handler API like
 * any plugin: the strategy's test routes (/delay, a fiber handler, and
 * /blocking-delay, the same on a thread; /spin, /either), the journaled
 * store (/v1/state/KEY: a fiber handler when there are fibers) and the
 * in-memory one (/kv/KEY). Only the test routes reach past the API, to
 * say in their answers how dispatch consumed them
 * (dispatch_consume_mode()), and the durable PUT, to wait for the store
 * (fiber_wait_durable()).
 */
#ifndef EWYKD_ROUTES_H
#define EWYKD_ROUTES_H

#include <stdbool.h>

#include "ewyk_http.h"

struct store;

/* fibers: whether the shards have fibers (--fibers > 0). */
int routes_register(struct ewyk_router *r, struct store *state,
		struct store *kv, bool fibers);

#endif /* EWYKD_ROUTES_H */
