/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The process's malloc, for an executable that links this library whole
 * (ewykd): each call asks lib/tls's allocation caches first (tls_mem.c,
 * in scope only while lib/tls runs GnuTLS's record calls) and otherwise
 * goes on to the next definition in the link order, found with
 * dlsym(RTLD_NEXT): the C library's, or an allocator preloaded in
 * between, such as the tests' counter (tests/alloc/malloc_count.c), which
 * so still sees every allocation that reaches the C library.
 *
 * dlsym() may itself allocate before the next functions are known: those
 * few early calls are served from a static buffer, never freed.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "ewyk_tls.h"

static void *(*next_malloc)(size_t);
static void (*next_free)(void *);
static void *(*next_calloc)(size_t, size_t);
static void *(*next_realloc)(void *, size_t);
static void *(*next_memalign)(size_t, size_t);
static size_t (*next_usable)(void *);

static _Alignas(16) uint8_t boot[16384];
static size_t boot_used;
static __thread int resolving;

static void *
boot_alloc(size_t size)
{
	size_t n = (size + 15) & ~(size_t)15;
	void *p;

	if (boot_used + n > sizeof(boot))
		return NULL;
	p = boot + boot_used;
	boot_used += n;
	return p;	/* zeroed: static storage, never reused */
}

static bool
in_boot(const void *p)
{
	return (const uint8_t *)p >= boot && (const uint8_t *)p < boot + sizeof(boot);
}

static bool
resolve(void)
{
	if (next_malloc != NULL)
		return true;
	if (resolving)
		return false;
	resolving = 1;
	next_usable = (size_t (*)(void *))dlsym(RTLD_NEXT, "malloc_usable_size");
	next_memalign = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "memalign");
	next_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
	next_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
	next_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
	__atomic_store_n(&next_malloc, (void *(*)(size_t))dlsym(RTLD_NEXT,
			"malloc"), __ATOMIC_RELEASE);
	resolving = 0;
	return next_malloc != NULL;
}

void *
malloc(size_t size)
{
	void *p = tls_mem_alloc(size);

	if (p != NULL)
		return p;
	return resolve() ? next_malloc(size) : boot_alloc(size);
}

void
free(void *p)
{
	if (p == NULL || in_boot(p) || tls_mem_free(p))
		return;
	if (resolve())
		next_free(p);
}

void *
calloc(size_t n, size_t size)
{
	size_t total;
	void *p;

	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	p = tls_mem_alloc(total);
	if (p != NULL)
		return memset(p, 0, total);
	return resolve() ? next_calloc(n, size) : boot_alloc(total);
}

void *
realloc(void *p, size_t size)
{
	size_t have;
	void *q;

	if (p == NULL)
		return malloc(size);
	have = in_boot(p) ? 0 : tls_mem_usable(p);
	if (have == 0 && !in_boot(p))
		return resolve() ? next_realloc(p, size) : NULL;
	if (have >= size && have > 0)
		return p;
	q = malloc(size);
	if (q == NULL)
		return NULL;
	if (in_boot(p)) {
		/* A boot block's size is unknown: copy what may be there. */
		have = (size_t)(boot + sizeof(boot) - (uint8_t *)p);
		if (have > size)
			have = size;
	}
	memcpy(q, p, have);
	free(p);
	return q;
}

void *
memalign(size_t align, size_t size)
{
	return resolve() ? next_memalign(align, size) : NULL;
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

size_t
malloc_usable_size(void *p)
{
	size_t n;

	if (p == NULL)
		return 0;
	n = tls_mem_usable(p);
	if (n > 0 || in_boot(p))
		return n;
	return resolve() ? next_usable(p) : 0;
}
