/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A shard's memory for HTTP/2: sessions, streams, gathered bodies, bodies
 * waiting for their reader and nghttp2's own allocations (through nghttp2_mem). Power-of-two size
 * classes with a free list each; a block freed goes back to its class, not
 * to libc, so that once the classes hold what the peak load needs, the
 * request path allocates nothing. Taking a new block from the heap is
 * counted growth. Owner only: no locks.
 */
#ifndef EWYK_HTTP_MEM_H
#define EWYK_HTTP_MEM_H

#include <stddef.h>
#include <stdint.h>

#define HTTP_MEM_CLASSES 16	/* 32 B .. 1 MiB */

struct http_stats;

struct http_mem {
	void *free[HTTP_MEM_CLASSES];
	struct http_stats *stats;	/* mem_* counters */
};

void http_mem_init(struct http_mem *m, struct http_stats *stats);
/* Gives every free block back to libc; blocks still out are lost. */
void http_mem_fini(struct http_mem *m);

void *http_mem_alloc(struct http_mem *m, size_t size);
void *http_mem_calloc(struct http_mem *m, size_t n, size_t size);
void *http_mem_realloc(struct http_mem *m, void *p, size_t size);
void http_mem_free(struct http_mem *m, void *p);

#endif /* EWYK_HTTP_MEM_H */
