/* SPDX-License-Identifier: BSD-3-Clause */
/* What the built-in routes share: plain answers and query numbers. */
#ifndef EWYK_SERVE_ROUTES_H
#define EWYK_SERVE_ROUTES_H

#include <stdint.h>

#include "ewyk_http.h"

struct store;

/* A short text/plain answer (Retry-After on 503). */
enum ewyk_result routes_text(struct ewyk_request *req, int status,
		const char *msg);
/* Decimal digits in [0, max]; -1 when empty, not digits, or over. */
int64_t routes_param_value(struct ewyk_str v, int64_t max);
/* "name=N" in the query, N in [0, max]; -1 when absent or bad. */
long routes_param_number(const struct ewyk_request *req, const char *name,
		uint32_t max);
/* The request forwarded to upstream name as path (and the request's
 * query), the answer streamed back (proxy.c); 502/504 saying why. */
enum ewyk_result serve_proxy_forward(struct ewyk_request *req,
		const char *name, struct ewyk_str path);
/* /kv/KEY over an in-memory store (routes_store.c). */
int routes_kv_add(struct ewyk_router *r, struct store *kv);

#endif /* EWYK_SERVE_ROUTES_H */
