/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The stores as routes: /v1/state/KEY, the journaled store of the state
 * API (ewyk_state_*()), and /kv/KEY, a store in memory only. GET, HEAD,
 * PUT, DELETE; ?durable=1 on a state PUT answers once its version is on
 * disk.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>

#include "ewyk_serve.h"
#include "routes.h"
#include "store.h"

struct store_route {
	struct store *store;
	bool journaled;		/* ?durable=1 waits for the disk */
	char token[128];	/* "": no Authorization asked for */
};

/* Compares all of a with b whatever they hold, so that the time taken
 * tells nothing of where they first differ. */
static bool
same_secret(const char *a, size_t alen, const char *b)
{
	size_t blen = strlen(b), i;
	unsigned char d = alen != blen;

	for (i = 0; i < alen; i++)
		d |= (unsigned char)(a[i] ^ b[i % (blen ? blen : 1)]);
	return d == 0;
}

/* "Authorization: Bearer TOKEN" (RFC 6750), when the route has a token. */
static bool
authorized(const struct ewyk_request *req, const char *token)
{
	static const char scheme[] = "bearer ";
	struct ewyk_str v;
	size_t i;

	if (token[0] == '\0')
		return true;
	if (!ewyk_request_header(req, "authorization", &v) ||
			v.len <= sizeof(scheme) - 1)
		return false;
	for (i = 0; i < sizeof(scheme) - 1; i++)
		if ((v.p[i] | 0x20) != scheme[i])
			return false;
	return same_secret(v.p + i, v.len - i, token);
}

static void
etag(struct ewyk_request *req, uint64_t version)
{
	char tag[32];

	snprintf(tag, sizeof(tag), "\"%llu\"", (unsigned long long)version);
	ewyk_respond_header(req, "ETag", tag);
}

static enum ewyk_result
store_handler(struct ewyk_request *req, void *ctx)
{
	const struct store_route *sr = ctx;
	struct ewyk_str key = ewyk_request_rest(req);
	const char *m = ewyk_request_method(req);
	bool durable = sr->journaled &&
		routes_param_number(req, "durable", 1) == 1;
	char val[STORE_VAL_MAX], body[64];
	uint64_t v;
	long n;
	int rc;

	if (!authorized(req, sr->token)) {
		ewyk_respond_header(req, "WWW-Authenticate",
				"Bearer realm=\"ewyk state\"");
		return routes_text(req, 401, "401 a bearer token is required\n");
	}
	if (!ewyk_state_key_ok(key.p, key.len))
		return routes_text(req, 400,
				"keys are 1 to 64 of [A-Za-z0-9._-]\n");
	if (strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0) {
		n = store_get(sr->store, key.p, key.len, val, sizeof(val), &v);
		if (n < 0)
			return routes_text(req, 404, "no such key\n");
		etag(req, v);
		ewyk_respond_copy(req, 200, "application/octet-stream", val,
				(size_t)n);
		return EWYK_ANSWERED;
	}
	/* A durable write waits for the disk: on a fiber, or where the
	 * thread may block, not on an lcore that must keep polling. The
	 * pool runs it again from the start. */
	if (durable && !ewyk_request_may_block(req) && !ewyk_request_on_fiber(req))
		return EWYK_DEFER;
	if (strcmp(m, "DELETE") == 0) {
		v = store_delete(sr->store, key.p, key.len);
		if (v == 0)
			return routes_text(req, 404, "no such key\n");
	} else {
		struct ewyk_str b = ewyk_request_body(req);

		/* The server gives bodies up to --max-body; a value is
		 * smaller. */
		if (b.len > STORE_VAL_MAX)
			return routes_text(req, 413, "a value is at most "
					RTE_STR(STORE_VAL_MAX) " bytes\n");
		v = store_put(sr->store, key.p, key.len, b.p, b.len);
		if (v == 0)
			return routes_text(req, 507, "the store is full\n");
	}
	if (durable) {
		/* Group commit: whichever batch carries a version at least
		 * this new answers every waiter of the key. */
		rc = ewyk_state_wait_durable(req, key.p, key.len, v, 5000);
		/* The value is in memory either way; only its durability
		 * failed: 507 when the journal's disk is full, as WebDAV's
		 * Insufficient Storage, else 503. */
		if (rc == -ENOSPC || rc == -EDQUOT)
			return routes_text(req, 507, "no space for the journal: "
					"the value is kept, not on disk\n");
		if (rc != 0)
			return routes_text(req, 503, rc == -ENOTSUP ?
					"no --state-dir: nothing is durable\n" :
					rc == -ETIMEDOUT ? "not yet on disk\n" :
					"the journal cannot be written\n");
	}
	etag(req, v);
	snprintf(body, sizeof(body), "version %llu%s\n", (unsigned long long)v,
			durable ? " on disk" : "");
	return routes_text(req, 200, body);
}

static const uint32_t store_methods = EWYK_METHOD_GET | EWYK_METHOD_HEAD |
	EWYK_METHOD_PUT | EWYK_METHOD_DELETE;

int
routes_kv_add(struct ewyk_router *r, struct store *kv)
{
	static struct store_route kv_route;
	const struct ewyk_route route = { "/kv/", EWYK_MATCH_PREFIX,
		store_methods, EWYK_HANDLER_NON_BLOCKING, store_handler,
		&kv_route };

	kv_route = (struct store_route){ kv, false, "" };
	return ewyk_route_add(r, &route);
}

int
serve_state_routes_add(struct ewyk_router *r, struct store *state,
		bool fibers, const char *token)
{
	static struct store_route state_route;
	/* With fibers, a durable PUT parks its fiber until the disk has
	 * it; without, it is deferred to the pool. */
	const struct ewyk_route route = { "/v1/state/", EWYK_MATCH_PREFIX,
		store_methods, fibers ? EWYK_HANDLER_FIBER :
		EWYK_HANDLER_NON_BLOCKING, store_handler, &state_route };

	if (token == NULL || strlen(token) >= sizeof(state_route.token))
		return -EINVAL;
	state_route = (struct store_route){ state, true, "" };
	memcpy(state_route.token, token, strlen(token) + 1);
	return ewyk_route_add(r, &route);
}
