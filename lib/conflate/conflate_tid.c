/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Small thread index for per-thread counter cells. An index is taken on a
 * thread's first counted operation and given back when the thread exits,
 * so the cells stay single-writer: the bitmap's release/acquire hands a cell
 * from a dead thread to the next one, which carries on adding to it. When all
 * indexes are taken, threads share the last cell with atomic adds.
 */

#include <stdint.h>

#include "conflate_priv.h"

#define TID_WORDS (CONFLATE_MAX_THREADS / 64)

__thread int conflate_tid_self = -1;

static _Atomic uint64_t tid_used[TID_WORDS];
static pthread_key_t tid_key;
static pthread_once_t tid_once = PTHREAD_ONCE_INIT;
static bool tid_key_ok;

static void
tid_give(unsigned int t)
{
	atomic_fetch_and_explicit(&tid_used[t / 64], ~(1ULL << (t % 64)),
			memory_order_release);
}

/* pthread key destructor: the thread is exiting */
static void
tid_release(void *p)
{
	conflate_tid_self = -1;
	tid_give((unsigned int)((uintptr_t)p - 1));
}

static void
tid_init(void)
{
	tid_key_ok = pthread_key_create(&tid_key, tid_release) == 0;
}

static int
tid_take(void)
{
	unsigned int w, b;
	uint64_t used;

	for (w = 0; w < TID_WORDS; w++) {
		used = atomic_load_explicit(&tid_used[w], memory_order_relaxed);
		while (~used != 0) {
			b = (unsigned int)__builtin_ctzll(~used);
			used = atomic_fetch_or_explicit(&tid_used[w], 1ULL << b,
					memory_order_acquire);
			if ((used & (1ULL << b)) == 0)
				return (int)(w * 64 + b);
		}
	}
	return -1;
}

int
conflate_tid_register(void)
{
	int t;

	pthread_once(&tid_once, tid_init);
	t = tid_key_ok ? tid_take() : -1;
	if (t >= 0 && pthread_setspecific(tid_key,
			(void *)(uintptr_t)(t + 1)) != 0) {
		tid_give((unsigned int)t);
		t = -1;
	}
	if (t < 0)
		t = CONFLATE_MAX_THREADS;	/* the shared cell */
	conflate_tid_self = t;
	return t;
}
