/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Counts every heap allocation of the process, by thread and by side
 * (server, client, other): the executable defines malloc and friends, so
 * they replace libc's for every library (libssl, libgnutls, nettle, gmp,
 * libwolfssl alike) without LD_PRELOAD, and hand the work to libc's own
 * allocator. Sizes are malloc_usable_size(), what each block really holds.
 * Counters are thread-local: two threads measured at once do not share
 * a cache line through them.
 */

#include <errno.h>
#include <malloc.h>
#include <stdint.h>

#include "tls_bench.h"

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void *__libc_memalign(size_t align, size_t size);
extern void __libc_free(void *p);

#define TB_TLS __thread __attribute__((tls_model("initial-exec")))

static TB_TLS enum tb_side side;
static TB_TLS struct tb_allocs counters[TB_SIDES];

void
tb_side_set(enum tb_side s)
{
	side = s;
}

struct tb_allocs
tb_allocs_get(enum tb_side s)
{
	return counters[s];
}

void
tb_allocs_reset_peak(enum tb_side s)
{
	counters[s].peak = counters[s].live;
}

static void *
booked(void *p)
{
	struct tb_allocs *a = &counters[side];
	size_t n;

	if (p == NULL)
		return NULL;
	n = malloc_usable_size(p);
	a->count++;
	a->bytes += n;
	a->live += (int64_t)n;
	if (a->live > a->peak)
		a->peak = a->live;
	return p;
}

static void
unbooked(void *p)
{
	if (p != NULL)
		counters[side].live -= (int64_t)malloc_usable_size(p);
}

void *malloc(size_t size);
void *calloc(size_t n, size_t size);
void *realloc(void *p, size_t size);
void *reallocarray(void *p, size_t n, size_t size);
void free(void *p);
void *memalign(size_t align, size_t size);
void *aligned_alloc(size_t align, size_t size);
int posix_memalign(void **out, size_t align, size_t size);
void *valloc(size_t size);
void *pvalloc(size_t size);

void *
malloc(size_t size)
{
	return booked(__libc_malloc(size));
}

void *
calloc(size_t n, size_t size)
{
	return booked(__libc_calloc(n, size));
}

void *
realloc(void *p, size_t size)
{
	size_t old = p != NULL ? malloc_usable_size(p) : 0;
	void *q = __libc_realloc(p, size);

	if (q == NULL && size != 0)
		return NULL;	/* failed: p is untouched */
	counters[side].live -= (int64_t)old;
	if (q == NULL)
		return NULL;	/* realloc(p, 0) freed p */
	return booked(q);
}

void *
reallocarray(void *p, size_t n, size_t size)
{
	size_t total;

	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, total);
}

void
free(void *p)
{
	unbooked(p);
	__libc_free(p);
}

void *
memalign(size_t align, size_t size)
{
	return booked(__libc_memalign(align, size));
}

void *
aligned_alloc(size_t align, size_t size)
{
	return memalign(align, size);
}

int
posix_memalign(void **out, size_t align, size_t size)
{
	void *p;

	if (align < sizeof(void *) || (align & (align - 1)) != 0)
		return EINVAL;
	p = memalign(align, size);
	if (p == NULL)
		return ENOMEM;
	*out = p;
	return 0;
}

void *
valloc(size_t size)
{
	return memalign(4096, size);
}

void *
pvalloc(size_t size)
{
	return memalign(4096, (size + 4095) & ~(size_t)4095);
}
