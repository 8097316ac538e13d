/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The handler API's journaled store (ewyk_state_*() in ewyk_http.h): the
 * process's /v1/state store, attached at start-up, and the waits for a
 * version to reach the disk. A waiting fiber's wait is looked at again
 * each time the store's persisted epoch moves, so one journal write
 * answers every waiter it carries (group commit); a thread blocks on the
 * store itself.
 */
#include <errno.h>

#include "state.h"
#include "wait.h"
#include "store.h"

_Static_assert(EWYK_STATE_KEY_MAX == STORE_KEY_MAX &&
		EWYK_STATE_VALUE_MAX == STORE_VAL_MAX,
		"the API's limits are the store's");

/* Set once before the lcores start, read-only while they run. */
static struct store *state;

void
serve_state_attach(struct store *st)
{
	state = st;
}

bool
ewyk_state_key_ok(const char *key, size_t len)
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
	return ewyk_state_key_ok(key, klen) ? 0 : -EINVAL;
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

/* Durable writes --------------------------------------------------------- */

struct durable_wait {
	struct ewyk_wait w;
	struct store *store;
	const char *key;
	size_t klen;
	uint64_t version;
	uint64_t epoch;		/* store_persist_epoch() last looked at */
	uint64_t failures;	/* store_journal_failures() when it began */
	int err;		/* a journal write failed meanwhile: its errno */
	struct ilink link;	/* in the shard's durable waits */
};

static void
durable_disarm(struct ewyk_wait *w)
{
	ilist_remove(&container_of(w, struct durable_wait, w)->link);
}

/* Looks at the key if the epoch moved; wakes its waiter once the version
 * is on disk (or the key cannot be: the waiter looks again). */
static bool
durable_check(struct durable_wait *dw)
{
	uint64_t e = store_persist_epoch(dw->store);

	if (e == dw->epoch)
		return false;
	dw->epoch = e;
	if (store_durable_state(dw->store, dw->key, dw->klen, dw->version) == 0) {
		int err;

		/* A failure before the wait began may be mended by the
		 * sink's next try; one after it is this version's. */
		if (store_journal_failures(dw->store, &err) == dw->failures)
			return false;
		dw->err = err != 0 ? err : EIO;
	}
	ilist_remove(&dw->link);
	ewyk_wait_wake(&dw->w);
	return true;
}

static void
durable_arm(struct ewyk_wait *w)
{
	struct durable_wait *dw = container_of(w, struct durable_wait, w);

	ilist_push(&wait_task(w)->sv->durable, &dw->link);
	dw->epoch = store_persist_epoch(dw->store) - 1;	/* look now */
	durable_check(dw);
}

unsigned int
state_durable_poll(struct serve *sv)
{
	struct ilink *l, *next;
	unsigned int n = 0;

	for (l = sv->durable; l != NULL; l = next) {
		next = l->next;
		n += durable_check(container_of(l, struct durable_wait, link));
	}
	return n;
}

int
ewyk_state_wait_durable(struct ewyk_request *req, const char *key,
		size_t klen, uint64_t version, uint32_t timeout_ms)
{
	struct durable_wait dw = {
		.w = { .arm = durable_arm, .disarm = durable_disarm },
		.store = state, .key = key, .klen = klen, .version = version,
	};
	int rc = check(key, klen), err;

	if (rc != 0)
		return rc;
	rc = store_durable_state(state, key, klen, version);
	dw.failures = store_journal_failures(state, &err);
	if (rc == 1)
		return 0;
	if (rc == -EAGAIN || (rc == 0 && !ewyk_request_on_fiber(req)))
		return store_wait_durable(state, key, klen, version, timeout_ms);
	if (rc < 0)
		return rc;
	rc = ewyk_wait_park(req, &dw.w, timeout_ms);
	if (rc != 0)
		return rc;
	rc = store_durable_state(state, key, klen, version);
	return rc == 1 ? 0 : rc != 0 ? rc : dw.err != 0 ? -dw.err : -ETIMEDOUT;
}
