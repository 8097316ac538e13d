/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdlib.h>
#include <string.h>

#include "http_mem.h"
#include "http_priv.h"

#define MIN_SHIFT 5		/* the smallest class: 32 bytes */
#define HUGE_CLASS 0xffffu	/* past the largest class: libc's, each time */

/* Before every block: its class, and room to keep the block aligned as
 * malloc's are. */
struct block {
	union {
		struct {
			uint32_t cls;
			uint32_t size;	/* HUGE_CLASS: what was asked */
		};
		void *next;		/* on a free list */
		max_align_t align;
	};
};

/* The smallest class that holds size; HTTP_MEM_CLASSES when none does. */
static unsigned int
class_of(size_t size)
{
	unsigned int bits;

	if (size <= (size_t)1 << MIN_SHIFT)
		return 0;
	bits = 64 - (unsigned int)__builtin_clzll((unsigned long long)size - 1);
	return bits - MIN_SHIFT < HTTP_MEM_CLASSES ? bits - MIN_SHIFT :
		HTTP_MEM_CLASSES;
}

static size_t
class_size(unsigned int c)
{
	return (size_t)1 << (c + MIN_SHIFT);
}

void
http_mem_init(struct http_mem *m, struct http_stats *stats)
{
	memset(m, 0, sizeof(*m));
	m->stats = stats;
}

void
http_mem_fini(struct http_mem *m)
{
	unsigned int c;

	for (c = 0; c < HTTP_MEM_CLASSES; c++)
		while (m->free[c] != NULL) {
			struct block *b = m->free[c];

			m->free[c] = b->next;
			free(b);
		}
}

void *
http_mem_alloc(struct http_mem *m, size_t size)
{
	unsigned int c = class_of(size);
	struct block *b;

	m->stats->mem_allocs++;
	if (c == HTTP_MEM_CLASSES) {
		m->stats->mem_huge++;
		b = malloc(sizeof(*b) + size);
		if (b == NULL)
			return NULL;
		b->cls = HUGE_CLASS;
		b->size = (uint32_t)size;
		return b + 1;
	}
	b = m->free[c];
	if (b != NULL) {
		m->free[c] = b->next;
	} else {
		b = malloc(sizeof(*b) + class_size(c));
		if (b == NULL)
			return NULL;
		m->stats->mem_grows++;
		m->stats->mem_bytes += class_size(c);
	}
	b->cls = c;
	return b + 1;
}

void *
http_mem_calloc(struct http_mem *m, size_t n, size_t size)
{
	void *p;

	if (size != 0 && n > SIZE_MAX / size)
		return NULL;
	p = http_mem_alloc(m, n * size);
	if (p != NULL)
		memset(p, 0, n * size);
	return p;
}

void
http_mem_free(struct http_mem *m, void *p)
{
	struct block *b;
	unsigned int c;

	if (p == NULL)
		return;
	b = (struct block *)p - 1;
	if (b->cls == HUGE_CLASS) {
		free(b);
		return;
	}
	c = b->cls;
	b->next = m->free[c];
	m->free[c] = b;
}

void *
http_mem_realloc(struct http_mem *m, void *p, size_t size)
{
	struct block *b;
	size_t have;
	void *q;

	if (p == NULL)
		return http_mem_alloc(m, size);
	b = (struct block *)p - 1;
	have = b->cls == HUGE_CLASS ? b->size : class_size(b->cls);
	if (size <= have && b->cls != HUGE_CLASS)
		return p;
	q = http_mem_alloc(m, size);
	if (q == NULL)
		return NULL;
	memcpy(q, p, have < size ? have : size);
	http_mem_free(m, p);
	return q;
}
