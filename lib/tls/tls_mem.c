/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-thread size-class caches in front of the C library, for what GnuTLS
 * allocates per record (docs/tls.md, "Allocations"). GnuTLS takes a
 * 16.7-16.9 KB buffer from malloc for each pull, decryption and
 * encryption, and frees it when the record is consumed or sent; it has no
 * allocator hook. Inside lib/tls's record calls (tls_mem_enter()), the
 * process's malloc asks here first: a block of the smallest class that
 * fits, from the calling thread's free list, else carved from its arena.
 * After warm-up a request on an established connection takes nothing
 * from the C library.
 *
 * All arenas lie in one reservation of address space, so that free()
 * knows a block of ours by its address alone and finds its thread's arena
 * by the offset. A block freed by another thread goes back on its arena's
 * remote list (lock-free, pushed by anyone, taken whole by the owner).
 * Nothing here calls malloc: the caches sit under it.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "ewyk_tls.h"
#include "tls_mem.h"

#define ARENAS 64			/* threads that ever allocate in scope */
#define ARENA_BYTES (32u << 20)		/* address space each, reserved lazily */
#define HDR 16				/* before each block: its class */
#define MAGIC 0x746c736du		/* "tlsm" */

static const uint32_t class_size[] = {
	64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, TLS_MEM_MAX,
};
#define NCLASS (sizeof(class_size) / sizeof(class_size[0]))

struct block {
	uint32_t cls;
	uint32_t magic;
	struct block *next;	/* on a free list; the header's second half */
};

struct arena {
	uint8_t *base;
	size_t used;
	struct block *free[NCLASS];	/* owner only */
	_Atomic(struct block *) remote;	/* pushed by other threads */
	/* Owner-written, read by tls_mem_stats() (relaxed). */
	uint64_t hits, grows, too_large, remote_frees, bytes;
} __attribute__((aligned(64)));

__thread unsigned int tls_mem_scope __attribute__((tls_model("initial-exec")));
static __thread struct arena *mine __attribute__((tls_model("initial-exec")));
static __thread int no_arena __attribute__((tls_model("initial-exec")));

static struct arena arenas[ARENAS];
static _Atomic(uint8_t *) region;
static _Atomic unsigned int n_arenas;

static uint8_t *
reserve(void)
{
	uint8_t *r = atomic_load_explicit(&region, memory_order_acquire);
	uint8_t *expected = NULL;
	void *m;

	if (r != NULL)
		return r;
	m = mmap(NULL, (size_t)ARENAS * ARENA_BYTES, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	if (!atomic_compare_exchange_strong(&region, &expected, m)) {
		munmap(m, (size_t)ARENAS * ARENA_BYTES);
		return expected;
	}
	return m;
}

static struct arena *
my_arena(void)
{
	uint8_t *r;
	unsigned int i;

	if (mine != NULL || no_arena)
		return mine;
	r = reserve();
	i = atomic_fetch_add(&n_arenas, 1);
	if (r == NULL || i >= ARENAS) {
		no_arena = 1;	/* this thread goes to libc for good */
		return NULL;
	}
	arenas[i].base = r + (size_t)i * ARENA_BYTES;
	mine = &arenas[i];
	return mine;
}

static unsigned int
class_of(size_t size)
{
	unsigned int c = 0;

	while (class_size[c] < size)
		c++;
	return c;
}

/* The remote list, taken whole, onto the owner's free lists. */
static void
take_remote(struct arena *a)
{
	struct block *b = atomic_exchange_explicit(&a->remote, NULL,
			memory_order_acquire);

	while (b != NULL) {
		struct block *next = b->next;

		b->next = a->free[b->cls];
		a->free[b->cls] = b;
		b = next;
	}
}

void *
tls_mem_alloc(size_t size)
{
	struct arena *a;
	struct block *b;
	unsigned int c;
	size_t need;

	if (tls_mem_scope == 0)
		return NULL;
	a = my_arena();
	if (a == NULL)
		return NULL;
	if (size > TLS_MEM_MAX) {
		a->too_large++;
		return NULL;
	}
	c = class_of(size);
	b = a->free[c];
	if (b == NULL && atomic_load_explicit(&a->remote,
			memory_order_relaxed) != NULL) {
		take_remote(a);
		b = a->free[c];
	}
	if (b != NULL) {
		a->free[c] = b->next;
		a->hits++;
		return (uint8_t *)b + HDR;
	}
	need = HDR + class_size[c];
	if (a->used + need > ARENA_BYTES)
		return NULL;
	b = (struct block *)(a->base + a->used);
	a->used += need;
	a->grows++;
	a->bytes += need;
	b->cls = c;
	b->magic = MAGIC;
	return (uint8_t *)b + HDR;
}

static struct block *
block_of(const void *p)
{
	uint8_t *r = atomic_load_explicit(&region, memory_order_relaxed);

	if (r == NULL || (const uint8_t *)p < r ||
			(const uint8_t *)p >= r + (size_t)ARENAS * ARENA_BYTES)
		return NULL;
	return (struct block *)((uintptr_t)p - HDR);
}

bool
tls_mem_free(void *p)
{
	struct block *b = block_of(p);
	struct arena *a;

	if (b == NULL)
		return false;
	a = &arenas[((uint8_t *)b - atomic_load_explicit(&region,
			memory_order_relaxed)) / ARENA_BYTES];
	if (a == mine) {
		b->next = a->free[b->cls];
		a->free[b->cls] = b;
		return true;
	}
	b->next = atomic_load_explicit(&a->remote, memory_order_relaxed);
	while (!atomic_compare_exchange_weak_explicit(&a->remote, &b->next, b,
			memory_order_release, memory_order_relaxed))
		;
	if (mine != NULL)
		mine->remote_frees++;
	return true;
}

size_t
tls_mem_usable(const void *p)
{
	const struct block *b = block_of(p);

	return b == NULL ? 0 : class_size[b->cls];
}

void
tls_mem_stats(struct tls_mem_stats *st)
{
	unsigned int i, n = atomic_load(&n_arenas);

	memset(st, 0, sizeof(*st));
	for (i = 0; i < n && i < ARENAS; i++) {
		const struct arena *a = &arenas[i];

		st->hits += __atomic_load_n(&a->hits, __ATOMIC_RELAXED);
		st->grows += __atomic_load_n(&a->grows, __ATOMIC_RELAXED);
		st->too_large += __atomic_load_n(&a->too_large,
				__ATOMIC_RELAXED);
		st->remote_frees += __atomic_load_n(&a->remote_frees,
				__ATOMIC_RELAXED);
		st->bytes += __atomic_load_n(&a->bytes, __ATOMIC_RELAXED);
	}
}
