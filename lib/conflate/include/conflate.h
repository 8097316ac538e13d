/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EWYK_CONFLATE_H
#define EWYK_CONFLATE_H

/**
 * @file
 * Keyed conflating executor.
 *
 * Producers offer (key, value) pairs; consumers run the consumer function
 * on the latest value of every key that has one pending. A value offered
 * while an older one of the same key is still pending replaces it, and the
 * older one is handed back to the producer that replaced it, so memory can be
 * recycled and nothing is allocated once every key has been seen.
 *
 * Guarantees:
 *  - every value is either run exactly once or handed back exactly once;
 *  - for a key, values run in the order they were offered, and the last
 *    value offered is eventually run while a consumer is running;
 *  - a key is never run by two consumers at the same time.
 *
 * Any number of threads may offer and any number may consume. Keys are byte
 * strings of at most CONFLATE_KEY_MAX bytes, compared bytewise; keys are never
 * removed. Plain C11 atomics, pthreads and Linux futexes; no DPDK.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Longest key, in bytes. */
#define CONFLATE_KEY_MAX 64

/** Largest max_keys accepted by conflate_create(). */
#define CONFLATE_MAX_KEYS (1u << 24)

struct conflate;

/**
 * Consumer function: runs @p value, the latest value of @p key. The consumer
 * owns @p value from then on. It may call conflate_offer(), also for @p key.
 */
typedef void (*conflate_fn_t)(void *arg, const void *key, size_t key_len,
		void *value);

/** Creation parameters; zero means default. */
struct conflate_params {
	conflate_fn_t fn;	/**< consumer function (required) */
	void *arg;		/**< first argument of fn */
	size_t capacity;	/**< keys held before the first growth; 64 */
	size_t max_keys;	/**< hard bound on distinct keys; 16 * capacity */
	unsigned int spin;	/**< idle polls (pause) before yielding; 2048 */
	unsigned int yields;	/**< then idle polls with sched_yield; 16 */
};

/** Counters, summed over threads when read. */
struct conflate_stats {
	uint64_t offers;	/**< offers accepted */
	uint64_t superseded;	/**< accepted offers that replaced a pending value */
	uint64_t applied;	/**< values run by a consumer */
	uint64_t rejected;	/**< offers refused (bad key, NULL, table full) */
	uint64_t growths;	/**< slot or index growths after creation */
	uint64_t allocs;	/**< heap allocations made, creation included */
	uint64_t parks;		/**< times a consumer slept on the futex */
	uint64_t wakes;		/**< futex wakes issued by producers */
	uint64_t keys;		/**< distinct keys seen */
	uint64_t slots;		/**< key slots currently allocated */
};

/**
 * Create an executor.
 *
 * @return the executor, or NULL with errno set (EINVAL, ENOMEM).
 */
struct conflate *
conflate_create(const struct conflate_params *params);

/**
 * Free an executor. No thread may use it any more; pending values are
 * dropped without being run (drain with conflate_poll() first if needed).
 */
void
conflate_destroy(struct conflate *c);

/**
 * Offer @p value (not NULL) for @p key. Thread-safe, lock-free once the key
 * is known; the first offer of a key takes a mutex and may grow the table.
 *
 * @return
 *   NULL if nothing was pending for the key; the superseded value, which the
 *   caller now owns and which will never run; or @p value itself if the
 *   offer was refused (key longer than CONFLATE_KEY_MAX, NULL value, more
 *   than max_keys keys, or no memory for growth), with errno set.
 */
void *
conflate_offer(struct conflate *c, const void *key, size_t key_len,
		void *value);

/**
 * Run one round: visit the marked segments and run what is pending there.
 * Never blocks (apart from the consumer function).
 *
 * @return the number of values run.
 */
unsigned int
conflate_poll(struct conflate *c);

/**
 * Wait for work: spin for a while, yield a few times, then park on a futex
 * until a producer marks new work or conflate_stop() is called.
 *
 * @return 0 when work may be pending, -ESHUTDOWN once stopped.
 */
int
conflate_wait(struct conflate *c);

/**
 * Consumer loop: poll and wait until conflate_stop(), then poll until a
 * round runs nothing. Any number of threads may run it at once.
 */
void
conflate_consume(struct conflate *c);

/** Make conflate_wait() and conflate_consume() return; wakes every consumer. */
void
conflate_stop(struct conflate *c);

/** Read the counters; safe at any time from any thread. */
void
conflate_stats(const struct conflate *c, struct conflate_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* EWYK_CONFLATE_H */
