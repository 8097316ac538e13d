/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ewykd's built-in routes, written against the public handler API like
 * any plugin: the strategy's test routes (/delay, /spin, /either), the
 * journaled store (/v1/state/KEY) and the in-memory one (/kv/KEY). Only
 * the test routes reach past the API, to say in their answers how dispatch
 * consumed them (dispatch_consume_mode()).
 */
#ifndef EWYKD_ROUTES_H
#define EWYKD_ROUTES_H

#include "ewyk_http.h"

struct store;

int routes_register(struct ewyk_router *r, struct store *state,
		struct store *kv);

#endif /* EWYKD_ROUTES_H */
