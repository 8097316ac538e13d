/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ewykd's built-in routes, written against the public handler API like
 * any plugin: the strategy's test routes (/delay, /spin, /either), the
 * journaled store (/v1/state/KEY) and the in-memory one (/kv/KEY).
 */
#ifndef EWYKD_ROUTES_H
#define EWYKD_ROUTES_H

#include "ewyk_http.h"

struct store;

/* How the current handler is being consumed ("pc", "pec", ...): the test
 * routes say it in their answers. Set by dispatch, per thread. */
extern __thread const char *routes_consume_name;

int routes_register(struct ewyk_router *r, struct store *state,
		struct store *kv);

#endif /* EWYKD_ROUTES_H */
