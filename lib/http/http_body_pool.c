/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>
#include <sys/mman.h>

#include <rte_common.h>

#include "http_body_pool.h"
#include "http_stats.h"

int
http_body_pool_init(struct http_body_pool *p, uint32_t n, uint32_t cap,
		struct http_stats *stats)
{
	size_t stride = RTE_ALIGN_CEIL((size_t)cap, RTE_CACHE_LINE_SIZE);
	uint32_t i;

	memset(p, 0, sizeof(*p));
	p->stats = stats;
	/* Address space only: a page is backed once a body is written in
	 * it, so a large --max-body costs what the bodies use. The slots'
	 * headers go after their data, in the same mapping. */
	p->region_len = stride * n + sizeof(*p->slots) * n;
	p->region = mmap(NULL, p->region_len, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p->region == MAP_FAILED) {
		p->region = NULL;
		return -1;
	}
	p->slots = (struct http_body_slot *)((uint8_t *)p->region + stride * n);
	p->n = n;
	for (i = n; i-- > 0;) {
		struct http_body_slot *s = &p->slots[i];

		s->pool = p;
		s->cap = cap;
		s->data = (uint8_t *)p->region + stride * i;
		s->next = p->free;
		p->free = s;
	}
	return 0;
}

void
http_body_pool_fini(struct http_body_pool *p)
{
	if (p->region != NULL)
		munmap(p->region, p->region_len);
	memset(p, 0, sizeof(*p));
}

struct http_body_slot *
http_body_slot_get(struct http_body_pool *p)
{
	struct http_body_slot *s = p->free;

	if (s == NULL) {
		p->stats->body_slots_short++;
		return NULL;
	}
	p->free = s->next;
	s->next = NULL;
	s->len = 0;
	p->stats->body_slots_taken++;
	p->stats->body_slots_in_use++;
	return s;
}

void
http_body_slot_free(struct http_body_slot *s)
{
	struct http_body_pool *p = s->pool;

	s->next = p->free;
	p->free = s;
	p->stats->body_slots_in_use--;
}
