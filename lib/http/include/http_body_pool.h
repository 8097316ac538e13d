/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The buffers a shard gathers request bodies in for handlers that take
 * them whole, past what fits a request's own buffer: a fixed number of
 * slots of one size (the largest body taken, --max-body, and an HTTP/1.1
 * head beside it), reserved once at start-up. Nothing is allocated per
 * request: a slot is taken from a free list and given back, most recently
 * freed first so that the pages in use stay few and warm (a slot's pages
 * are only made resident by the bodies written into it). When every slot
 * is out, the request is refused (503): the memory a shard gives bodies
 * is bounded. Owner only: no locks.
 */
#ifndef EWYK_HTTP_BODY_POOL_H
#define EWYK_HTTP_BODY_POOL_H

#include <stddef.h>
#include <stdint.h>

struct http_stats;
struct http_body_pool;

/* A body being gathered, or handed to its request (http_req.h). */
struct http_body_slot {
	struct http_body_pool *pool;
	struct http_body_slot *next;	/* on the free list */
	uint32_t len;			/* bytes in data */
	uint32_t cap;
	uint8_t *data;
};

struct http_body_pool {
	void *region;		/* the n slots' data, cap each (rounded
				 * to cache lines), then their headers */
	size_t region_len;
	struct http_body_slot *slots;
	struct http_body_slot *free;
	uint32_t n;
	struct http_stats *stats;	/* body_slots_* counters */
};

/* n slots of cap bytes each: 0, or -1 when the memory cannot be
 * reserved. */
int http_body_pool_init(struct http_body_pool *p, uint32_t n, uint32_t cap,
		struct http_stats *stats);
void http_body_pool_fini(struct http_body_pool *p);
/* A free slot, empty; NULL when all are out (counted). */
struct http_body_slot *http_body_slot_get(struct http_body_pool *p);
void http_body_slot_free(struct http_body_slot *s);

/* Back to its pool; NULL does nothing (inline: the common case). */
static inline void
http_body_slot_put(struct http_body_slot *s)
{
	if (s != NULL)
		http_body_slot_free(s);
}

#endif /* EWYK_HTTP_BODY_POOL_H */
