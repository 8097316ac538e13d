/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ngtcp2's and nghttp3's memory for one connection, counted and bounded:
 * every allocation carries its size ahead of it, the connection's total
 * (and the shard's, for telemetry) follows it, and one that would take
 * the connection past conf.conn_mem is refused. ngtcp2 and nghttp3 then
 * fail the call, and the connection is closed with an internal error:
 * a peer that makes a connection hold more than its share (out-of-order
 * data, a flood of frames to acknowledge) loses that connection, and the
 * shard's memory stays bounded by connections times the bound.
 */
#include <stdlib.h>
#include <string.h>

#include "quic_priv.h"

/* Ahead of each block: its size, and room to keep the block aligned. */
struct mem_head {
	size_t size;
	size_t align;
};

static bool
take(struct quic_conn *c, size_t size)
{
	struct quic_stats *st = c->e->conf.stats;

	if (size > c->e->conf.conn_mem || c->mem > c->e->conf.conn_mem - size) {
		st->mem_refused++;
		return false;
	}
	c->mem += size;
	st->mem_bytes += size;
	return true;
}

static void
give(struct quic_conn *c, size_t size)
{
	c->mem -= size;
	c->e->conf.stats->mem_bytes -= size;
}

static void *
alloc(struct quic_conn *c, size_t size, bool zero)
{
	struct mem_head *h;

	if (size > SIZE_MAX - sizeof(*h) || !take(c, size))
		return NULL;
	h = zero ? calloc(1, sizeof(*h) + size) : malloc(sizeof(*h) + size);
	if (h == NULL) {
		give(c, size);
		return NULL;
	}
	h->size = size;
	return h + 1;
}

static void
mem_free(void *ptr, void *user_data)
{
	struct mem_head *h;

	if (ptr == NULL)
		return;
	h = (struct mem_head *)ptr - 1;
	give(user_data, h->size);
	free(h);
}

static void *
mem_malloc(size_t size, void *user_data)
{
	return alloc(user_data, size, false);
}

static void *
mem_calloc(size_t nmemb, size_t size, void *user_data)
{
	if (size != 0 && nmemb > SIZE_MAX / size)
		return NULL;
	return alloc(user_data, nmemb * size, true);
}

static void *
mem_realloc(void *ptr, size_t size, void *user_data)
{
	struct quic_conn *c = user_data;
	struct mem_head *h, *nh;
	size_t old;

	if (ptr == NULL)
		return alloc(c, size, false);
	if (size == 0) {
		mem_free(ptr, c);
		return NULL;
	}
	h = (struct mem_head *)ptr - 1;
	old = h->size;
	if (size > SIZE_MAX - sizeof(*h) ||
			(size > old && !take(c, size - old)))
		return NULL;
	nh = realloc(h, sizeof(*h) + size);
	if (nh == NULL) {
		if (size > old)
			give(c, size - old);
		return NULL;
	}
	if (size < old)
		give(c, old - size);
	nh->size = size;
	return nh + 1;
}

void
quic_mem_init(struct quic_conn *c)
{
	c->mem = 0;
	c->ngtcp2_mem = (ngtcp2_mem){ c, mem_malloc, mem_free, mem_calloc,
		mem_realloc };
	c->nghttp3_mem = (nghttp3_mem){ c, mem_malloc, mem_free, mem_calloc,
		mem_realloc };
}
