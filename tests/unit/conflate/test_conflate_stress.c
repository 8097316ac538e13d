/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Multi-producer, multi-consumer stress of the conflating executor; also
 * built with ThreadSanitizer (suite tsan). Each value is a token (producer,
 * key, sequence); every token's fate is recorded and checked:
 *  - run or superseded, exactly once, never both, never neither (so the
 *    latest value of every key ran, and no value ran twice);
 *  - per key and producer, sequences run in increasing order;
 *  - a key is never inside the consumer function on two threads at once;
 *  - a parked consumer is always woken (ping-pong with a deadline).
 * Built twice more: with ThreadSanitizer, and against the library compiled
 * with CONFLATE_CHAOS (random yields in the race windows), which is what
 * catches seeded ordering bugs in practice (see docs/conflate.md).
 */

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "conflate.h"

#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif
#ifdef UNDER_TSAN
#define SCALE 4	/* TSan is 5-15x slower */
#else
#define SCALE 1
#endif
#ifdef CONFLATE_CHAOS
#define REPEAT 4	/* chaos build: short runs, several interleavings */
#else
#define REPEAT 1
#endif

#define MAXP 4
#define MAXC 4
#define MAXK 4096
#define DRAIN_TIMEOUT_NS (10ULL * 1000 * 1000 * 1000)

struct cfg {
	const char *name;
	unsigned int nprod;
	unsigned int ncons;
	unsigned int nkeys;
	size_t capacity;
	size_t max_keys;
	unsigned int spin;
	unsigned int per_prod;	/* offers per producer */
	unsigned int work;	/* busy loop in the consumer function */
};

struct run;

struct prod_arg {
	struct run *r;
	unsigned int p;
};

struct run {
	const struct cfg *cfg;
	struct conflate *c;
	_Atomic uint8_t *fate[MAXP];	/* per sequence: 1 ran, 2 superseded */
	_Atomic uint32_t last[MAXK][MAXP];
	_Atomic uint32_t inrun[MAXK];
	_Atomic uint64_t errors;
	_Atomic int have_msg;
	char msg[160];
	struct prod_arg parg[MAXP];
};

#define FATE_RAN 1
#define FATE_SUPERSEDED 2

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* cmocka asserts are not thread-safe: threads record, main asserts */
static void
record_error(struct run *r, const char *what, uintptr_t v)
{
	int expected = 0;

	atomic_fetch_add(&r->errors, 1);
	if (atomic_compare_exchange_strong(&r->have_msg, &expected, 1))
		snprintf(r->msg, sizeof(r->msg), "%s (token %#lx)", what,
				(unsigned long)v);
}

/* token: bit 0 set (never NULL), producer in bits 1-3, key 4-15, seq 16+ */
static uintptr_t
token(unsigned int p, unsigned int k, uint32_t seq)
{
	return ((uintptr_t)seq << 16) | ((uintptr_t)k << 4) |
		((uintptr_t)p << 1) | 1;
}

#define TOK_P(v) (((v) >> 1) & 7)
#define TOK_K(v) (((v) >> 4) & 0xfff)
#define TOK_SEQ(v) ((uint32_t)((v) >> 16))

static void
stress_fn(void *arg, const void *key, size_t key_len, void *value)
{
	struct run *r = arg;
	uintptr_t v = (uintptr_t)value;
	unsigned int p = TOK_P(v);
	uint32_t seq = TOK_SEQ(v);
	volatile unsigned int spin;
	uint32_t k;

	if (key_len != sizeof(k)) {
		record_error(r, "bad key length", v);
		return;
	}
	memcpy(&k, key, sizeof(k));
	if (k >= MAXK || TOK_K(v) != k || p >= MAXP) {
		record_error(r, "value run under another key", v);
		return;
	}
	if (atomic_fetch_add(&r->inrun[k], 1) != 0)
		record_error(r, "key run by two consumers at once", v);
	if (seq <= atomic_load_explicit(&r->last[k][p], memory_order_relaxed))
		record_error(r, "older value run after a newer one", v);
	atomic_store_explicit(&r->last[k][p], seq, memory_order_relaxed);
	if (atomic_fetch_or(&r->fate[p][seq], FATE_RAN) != 0)
		record_error(r, "value run twice or run after being superseded", v);
	for (spin = 0; spin < r->cfg->work; spin++)
		;
	atomic_fetch_sub(&r->inrun[k], 1);
}

static void *
producer(void *arg)
{
	const struct prod_arg *pa = arg;
	struct run *r = pa->r;
	unsigned int p = pa->p;
	uint64_t x = 0x9e3779b97f4a7c15ULL * (p + 1);
	uintptr_t v, old;
	uint32_t seq, k;

	for (seq = 1; seq <= r->cfg->per_prod; seq++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		k = (uint32_t)(x % r->cfg->nkeys);
		v = token(p, k, seq);
		old = (uintptr_t)conflate_offer(r->c, &k, sizeof(k), (void *)v);
		if (old == v) {
			record_error(r, "offer refused", v);
			continue;
		}
		if (old == 0)
			continue;
		if (TOK_K(old) != k || TOK_P(old) >= MAXP)
			record_error(r, "superseded value of another key", old);
		else if (atomic_fetch_or(&r->fate[TOK_P(old)][TOK_SEQ(old)],
				FATE_SUPERSEDED) != 0)
			record_error(r, "value superseded twice or after it ran", old);
	}
	return NULL;
}

static void *
consumer(void *arg)
{
	conflate_consume(arg);
	return NULL;
}

static void
wait_drained(struct conflate *c)
{
	uint64_t deadline = now_ns() + DRAIN_TIMEOUT_NS;
	struct conflate_stats st;

	do {
		conflate_stats(c, &st);
		if (st.applied + st.superseded == st.offers)
			return;
		sched_yield();
	} while (now_ns() < deadline);
}

static void
stress_once(const struct cfg *cfg)
{
	struct run *r = calloc(1, sizeof(*r));
	struct conflate_params params = {
		.fn = stress_fn,
		.capacity = cfg->capacity,
		.max_keys = cfg->max_keys,
		.spin = cfg->spin,
	};
	pthread_t prod[MAXP], cons[MAXC];
	uint64_t ran = 0, superseded = 0;
	struct conflate_stats st;
	unsigned int i, p;
	uint8_t f;

	assert_non_null(r);
	r->cfg = cfg;
	params.arg = r;
	r->c = conflate_create(&params);
	assert_non_null(r->c);
	for (p = 0; p < cfg->nprod; p++) {
		r->fate[p] = calloc(cfg->per_prod + 1, 1);
		assert_non_null(r->fate[p]);
		r->parg[p] = (struct prod_arg){ .r = r, .p = p };
	}
	for (i = 0; i < cfg->ncons; i++)
		assert_int_equal(pthread_create(&cons[i], NULL, consumer, r->c), 0);
	for (p = 0; p < cfg->nprod; p++)
		assert_int_equal(pthread_create(&prod[p], NULL, producer,
				&r->parg[p]), 0);
	for (p = 0; p < cfg->nprod; p++)
		assert_int_equal(pthread_join(prod[p], NULL), 0);
	wait_drained(r->c);
	conflate_stop(r->c);
	for (i = 0; i < cfg->ncons; i++)
		assert_int_equal(pthread_join(cons[i], NULL), 0);

	for (p = 0; p < cfg->nprod; p++) {
		for (i = 1; i <= cfg->per_prod; i++) {
			f = atomic_load(&r->fate[p][i]);
			if (f != FATE_RAN && f != FATE_SUPERSEDED)
				record_error(r, f == 0 ? "value neither run nor superseded" :
						"value both run and superseded",
						token(p, 0, i));
			ran += f == FATE_RAN;
			superseded += f == FATE_SUPERSEDED;
		}
	}
	conflate_stats(r->c, &st);
	print_message("%s: %u x %u offers, %u consumers, %u keys: ran %lu, "
			"superseded %lu, parks %lu, wakes %lu, growths %lu\n",
			cfg->name, cfg->nprod, cfg->per_prod, cfg->ncons,
			cfg->nkeys, (unsigned long)ran, (unsigned long)superseded,
			(unsigned long)st.parks, (unsigned long)st.wakes,
			(unsigned long)st.growths);
	if (atomic_load(&r->errors) != 0)
		fail_msg("%s: %lu errors, first: %s", cfg->name,
				(unsigned long)atomic_load(&r->errors), r->msg);
	assert_int_equal(st.offers, (uint64_t)cfg->nprod * cfg->per_prod);
	assert_int_equal(st.applied, ran);
	assert_int_equal(st.superseded, superseded);
	assert_int_equal(st.rejected, 0);
	assert_int_equal(st.keys, cfg->nkeys);
	for (p = 0; p < cfg->nprod; p++)
		free(r->fate[p]);
	conflate_destroy(r->c);
	free(r);
}

static void
stress(const struct cfg *cfg)
{
	unsigned int i;

	for (i = 0; i < REPEAT; i++)
		stress_once(cfg);
}

/* One word of marks, hot keys, consumers that park often. */
static void
test_depth1_hot(void **state)
{
	static const struct cfg cfg = {
		.name = "depth1-hot", .nprod = 2, .ncons = 2, .nkeys = 16,
		.capacity = 16, .max_keys = 64, .spin = 64,
		.per_prod = 200000 / SCALE, .work = 20,
	};

	(void)state;
	stress(&cfg);
}

/* Two-level marks, 700 keys, growing while producers run. */
static void
test_depth2_growing(void **state)
{
	static const struct cfg cfg = {
		.name = "depth2-700", .nprod = 2, .ncons = 2, .nkeys = 700,
		.capacity = 8, .max_keys = 4096, .spin = 256,
		.per_prod = 200000 / SCALE, .work = 0,
	};

	(void)state;
	stress(&cfg);
}

/* One key, three consumers: exclusion and order under contention. */
static void
test_one_key(void **state)
{
	static const struct cfg cfg = {
		.name = "one-key", .nprod = 2, .ncons = 3, .nkeys = 1,
		.capacity = 4, .max_keys = 4, .spin = 32,
		.per_prod = 100000 / SCALE, .work = 200,
	};

	(void)state;
	stress(&cfg);
}

/* Ping-pong: every offer finds the consumers parked; each must wake. */
struct pong {
	_Atomic uintptr_t seen;
};

static void
pong_fn(void *arg, const void *key, size_t key_len, void *value)
{
	struct pong *pg = arg;

	(void)key;
	(void)key_len;
	atomic_store(&pg->seen, (uintptr_t)value);
}

static void
pingpong(unsigned int ncons, unsigned int rounds)
{
	struct pong pg = { 0 };
	struct conflate_params params = { .fn = pong_fn, .arg = &pg, .spin = 1 };
	struct conflate *c = conflate_create(&params);
	struct timespec nap = { 0, 20000 };
	struct conflate_stats st;
	pthread_t cons[MAXC];
	uint64_t deadline;
	uintptr_t i;
	unsigned int n;

	assert_non_null(c);
	for (n = 0; n < ncons; n++)
		assert_int_equal(pthread_create(&cons[n], NULL, consumer, c), 0);
	for (i = 1; i <= rounds; i++) {
		if (i % 8 == 0)
			nanosleep(&nap, NULL);	/* let them reach the futex */
		assert_null(conflate_offer(c, "ping", 4, (void *)i));
		deadline = now_ns() + 2000000000ULL;
		while (atomic_load(&pg.seen) != i && now_ns() < deadline)
			sched_yield();
		if (atomic_load(&pg.seen) != i)
			fail_msg("round %lu: value not run within 2 s (lost wake-up)",
					(unsigned long)i);
	}
	conflate_stop(c);
	for (n = 0; n < ncons; n++)
		assert_int_equal(pthread_join(cons[n], NULL), 0);
	conflate_stats(c, &st);
	print_message("pingpong %u consumers: %u rounds, parks %lu, wakes %lu\n",
			ncons, rounds, (unsigned long)st.parks,
			(unsigned long)st.wakes);
	assert_int_equal(st.applied, rounds);
	assert_true(st.parks > 0);
	assert_true(st.wakes > 0);
	conflate_destroy(c);
}

static void
test_pingpong_one(void **state)
{
	(void)state;
	pingpong(1, 3000 / SCALE);
}

static void
test_pingpong_two(void **state)
{
	(void)state;
	pingpong(2, 3000 / SCALE);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_depth1_hot),
		cmocka_unit_test(test_depth2_growing),
		cmocka_unit_test(test_one_key),
		cmocka_unit_test(test_pingpong_one),
		cmocka_unit_test(test_pingpong_two),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
