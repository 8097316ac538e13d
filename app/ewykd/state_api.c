/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>

#include "ewyk_http.h"
#include "fibers.h"
#include "state_api.h"
#include "store.h"

_Static_assert(EWYK_STATE_KEY_MAX == STORE_KEY_MAX &&
		EWYK_STATE_VALUE_MAX == STORE_VAL_MAX,
		"the API's limits are the store's");

/* Set once before the lcores start, read-only while they run. */
static struct store *state;

void
state_api_attach(struct store *st)
{
	state = st;
}

bool
state_key_ok(const char *key, size_t len)
{
	size_t i;

	if (key == NULL || len == 0 || len > STORE_KEY_MAX)
		return false;
	for (i = 0; i < len; i++) {
		char c = key[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
				(c >= '0' && c <= '9') || c == '.' || c == '_' ||
				c == '-'))
			return false;
	}
	return true;
}

/* 0 when the call may go on, or why not. */
static int
check(const char *key, size_t klen)
{
	if (state == NULL)
		return -ENOTSUP;
	return state_key_ok(key, klen) ? 0 : -EINVAL;
}

int64_t
ewyk_state_put(const char *key, size_t klen, const void *val, size_t len)
{
	int rc = check(key, klen);
	uint64_t v;

	if (rc != 0)
		return rc;
	if (len > STORE_VAL_MAX || (val == NULL && len > 0))
		return -EINVAL;
	v = store_put(state, key, klen, val, len);
	return v != 0 ? (int64_t)v : -ENOSPC;
}

int64_t
ewyk_state_delete(const char *key, size_t klen)
{
	int rc = check(key, klen);
	uint64_t v;

	if (rc != 0)
		return rc;
	v = store_delete(state, key, klen);
	return v != 0 ? (int64_t)v : -ENOENT;
}

ssize_t
ewyk_state_get(const char *key, size_t klen, void *buf, size_t cap,
		uint64_t *version)
{
	int rc = check(key, klen);
	uint64_t v;
	long n;

	if (rc != 0)
		return rc;
	if (buf == NULL && cap > 0)
		return -EINVAL;
	n = store_get(state, key, klen, buf, cap, &v);
	if (n < 0)
		return -ENOENT;
	if (version != NULL)
		*version = v;
	return n;
}

int
ewyk_state_wait_durable(struct ewyk_request *req, const char *key,
		size_t klen, uint64_t version, uint32_t timeout_ms)
{
	int rc = check(key, klen);

	if (rc != 0)
		return rc;
	return fiber_wait_durable(req, state, key, klen, version, timeout_ms);
}
