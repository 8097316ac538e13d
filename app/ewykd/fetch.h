/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ewyk_fetch(), the handler API's blocking fetch from an upstream, on the
 * shard's upstream client (lib/http/http_upstream.h). A fiber never
 * touches the client: it parks, and the owner does the work in the wait's
 * arm and in the fetch's events, which wake it. Handles come from a pool
 * per shard, as many as upstream connections; fibers that find none free
 * queue for one.
 */
#ifndef EWYKD_FETCH_H
#define EWYKD_FETCH_H

#include <stdint.h>

struct fetch_pool;
struct route_task;
struct shard;

/* Per shard, read by telemetry. */
struct fetch_pool_stats {
	uint32_t size;
	uint32_t in_use;	/* gauge */
	uint32_t peak;
	uint64_t started;	/* fetches under way on a handle */
	uint64_t queued;	/* had to wait for a free handle */
	uint64_t left_open;	/* closed by their handler's return */
};

/* Start-up: n handles (NULL when out of memory). */
struct fetch_pool *fetch_pool_create(uint32_t n);
void fetch_pool_free(struct fetch_pool *p);
const struct fetch_pool_stats *fetch_pool_stats(const struct fetch_pool *p);
/* On the owner, every poll: free handles to the fetches queued for one.
 * Returns how many were started or failed. */
unsigned int fetch_pool_poll(struct fetch_pool *p);
/* On the owner, when t's handler has returned: closes the fetches it
 * left open. */
void fetch_task_end(struct shard *s, struct route_task *t);

#endif /* EWYKD_FETCH_H */
