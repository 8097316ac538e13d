/* SPDX-License-Identifier: BSD-3-Clause */
/* Functional tests of the conflating executor (single thread, plus stop). */

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "conflate.h"
#include "conflate_priv.h"	/* geometry checks only */

#define MAX_SEEN 4096

/* What the consumer function saw, in order. */
struct seen {
	unsigned int n;
	uintptr_t value[MAX_SEEN];
	char key[MAX_SEEN][CONFLATE_KEY_MAX + 1];
	size_t key_len[MAX_SEEN];
};

static void
record(void *arg, const void *key, size_t key_len, void *value)
{
	struct seen *s = arg;

	assert_true(s->n < MAX_SEEN);
	s->value[s->n] = (uintptr_t)value;
	memcpy(s->key[s->n], key, key_len);
	s->key_len[s->n] = key_len;
	s->n++;
}

#define V(x) ((void *)(uintptr_t)(x))

static struct conflate *
make(struct seen *s, size_t capacity, size_t max_keys)
{
	struct conflate_params p = {
		.fn = record,
		.arg = s,
		.capacity = capacity,
		.max_keys = max_keys,
	};
	struct conflate *c = conflate_create(&p);

	assert_non_null(c);
	return c;
}

static uintptr_t
seen_value(const struct seen *s, const char *key, size_t len)
{
	unsigned int i;

	for (i = 0; i < s->n; i++)
		if (s->key_len[i] == len && memcmp(s->key[i], key, len) == 0)
			return s->value[i];
	return 0;
}

static void
test_create_invalid(void **state)
{
	struct conflate_params p = { .fn = NULL };

	(void)state;
	errno = 0;
	assert_null(conflate_create(NULL));
	assert_int_equal(errno, EINVAL);
	assert_null(conflate_create(&p));
	p.fn = record;
	p.max_keys = (size_t)CONFLATE_MAX_KEYS + 1;
	assert_null(conflate_create(&p));
	conflate_destroy(NULL);
}

static void
test_supersede(void **state)
{
	struct seen *s = calloc(1, sizeof(*s));
	struct conflate *c = make(s, 16, 0);
	struct conflate_stats st;

	(void)state;
	assert_null(conflate_offer(c, "a", 1, V(1)));
	assert_ptr_equal(conflate_offer(c, "a", 1, V(2)), V(1));
	assert_ptr_equal(conflate_offer(c, "a", 1, V(3)), V(2));
	assert_null(conflate_offer(c, "b", 1, V(4)));
	assert_int_equal(conflate_poll(c), 2);
	assert_int_equal(s->n, 2);
	assert_int_equal(seen_value(s, "a", 1), 3);
	assert_int_equal(seen_value(s, "b", 1), 4);
	assert_int_equal(conflate_poll(c), 0);
	/* after a run the slot is empty again: no supersede */
	assert_null(conflate_offer(c, "a", 1, V(5)));
	assert_int_equal(conflate_poll(c), 1);
	assert_int_equal(s->value[2], 5);

	conflate_stats(c, &st);
	assert_int_equal(st.offers, 5);
	assert_int_equal(st.superseded, 2);
	assert_int_equal(st.applied, 3);
	assert_int_equal(st.keys, 2);
	assert_int_equal(st.rejected, 0);
	assert_int_equal(st.growths, 0);
	conflate_destroy(c);
	free(s);
}

static void
test_reject(void **state)
{
	struct seen *s = calloc(1, sizeof(*s));
	struct conflate *c = make(s, 4, 8);
	char big[CONFLATE_KEY_MAX + 1];
	struct conflate_stats st;
	char k[8];
	int i;

	(void)state;
	memset(big, 'x', sizeof(big));
	errno = 0;
	assert_ptr_equal(conflate_offer(c, big, sizeof(big), V(7)), V(7));
	assert_int_equal(errno, EINVAL);
	assert_null(conflate_offer(c, "a", 1, NULL));
	/* the longest key and the empty key are fine */
	assert_null(conflate_offer(c, big, CONFLATE_KEY_MAX, V(8)));
	assert_null(conflate_offer(c, NULL, 0, V(9)));
	for (i = 0; i < 6; i++) {
		snprintf(k, sizeof(k), "k%d", i);
		assert_null(conflate_offer(c, k, strlen(k), V(10 + i)));
	}
	/* max_keys reached: a new key is refused, known keys still work */
	errno = 0;
	assert_ptr_equal(conflate_offer(c, "new", 3, V(99)), V(99));
	assert_int_equal(errno, ENOSPC);
	assert_ptr_equal(conflate_offer(c, "k0", 2, V(20)), V(10));
	assert_int_equal(conflate_poll(c), 8);
	assert_int_equal(seen_value(s, "", 0), 9);
	assert_int_equal(seen_value(s, big, CONFLATE_KEY_MAX), 8);
	assert_int_equal(seen_value(s, "k0", 2), 20);

	conflate_stats(c, &st);
	assert_int_equal(st.rejected, 3);
	assert_int_equal(st.keys, 8);
	assert_int_equal(st.offers, 9);
	conflate_destroy(c);
	free(s);
}

static void
test_keys_bytewise(void **state)
{
	struct seen *s = calloc(1, sizeof(*s));
	struct conflate *c = make(s, 16, 0);

	(void)state;
	assert_null(conflate_offer(c, "a\0b", 3, V(1)));
	assert_null(conflate_offer(c, "a\0c", 3, V(2)));
	assert_null(conflate_offer(c, "a", 1, V(3)));
	assert_null(conflate_offer(c, "a\0", 2, V(4)));
	assert_ptr_equal(conflate_offer(c, "a\0b", 3, V(5)), V(1));
	assert_int_equal(conflate_poll(c), 4);
	assert_int_equal(seen_value(s, "a\0b", 3), 5);
	assert_int_equal(seen_value(s, "a\0c", 3), 2);
	assert_int_equal(seen_value(s, "a", 1), 3);
	assert_int_equal(seen_value(s, "a\0", 2), 4);
	conflate_destroy(c);
	free(s);
}

/* Offer nkeys distinct keys twice, check each runs once per pass. */
static void
fill_and_drain(struct conflate *c, struct seen *s, unsigned int nkeys)
{
	char k[16];
	unsigned int i;

	s->n = 0;
	for (i = 0; i < nkeys; i++) {
		snprintf(k, sizeof(k), "key-%u", i);
		assert_null(conflate_offer(c, k, strlen(k), V(i + 1)));
	}
	assert_int_equal(conflate_poll(c), nkeys);
	assert_int_equal(s->n, nkeys);
	for (i = 0; i < nkeys; i++) {
		snprintf(k, sizeof(k), "key-%u", i);
		assert_int_equal(seen_value(s, k, strlen(k)), i + 1);
	}
}

static void
test_growth(void **state)
{
	struct seen *s = calloc(1, sizeof(*s));
	struct conflate *c = make(s, 4, 4096);
	struct conflate_stats st, st2;

	(void)state;
	assert_int_equal(c->depth, 2);
	fill_and_drain(c, s, 3000);
	conflate_stats(c, &st);
	assert_true(st.growths >= 10);	/* 4 -> 4096 slots, index too */
	assert_int_equal(st.keys, 3000);
	assert_int_equal(st.slots, 4096);
	/* warm: known keys allocate nothing and grow nothing */
	fill_and_drain(c, s, 3000);
	conflate_stats(c, &st2);
	assert_int_equal(st2.allocs, st.allocs);
	assert_int_equal(st2.growths, st.growths);
	assert_int_equal(st2.applied, 6000);
	conflate_destroy(c);
	free(s);
}

static void
test_geometry(void **state)
{
	struct seen *s = calloc(1, sizeof(*s));
	struct conflate *c;

	(void)state;
	/* small: one top word over 64 segments of 4 slots */
	c = make(s, 16, 256);
	assert_int_equal(c->depth, 1);
	assert_int_equal(c->seg_shift, 2);
	fill_and_drain(c, s, 256);
	conflate_destroy(c);

	/* 700 keys: two levels */
	c = make(s, 1024, 0);
	assert_int_equal(c->depth, 2);
	assert_int_equal(c->nchild, 64);
	fill_and_drain(c, s, 700);
	conflate_destroy(c);

	/* very large max: segments grow so that 4096 cover it */
	c = make(s, 64, 1u << 17);
	assert_int_equal(c->depth, 2);
	assert_int_equal(c->seg_shift, 5);
	fill_and_drain(c, s, 1000);
	conflate_destroy(c);
	free(s);
}

/* The consumer function may offer, also for its own key. */
struct chain {
	struct conflate *c;
	unsigned int runs;
	uintptr_t last;
};

static void
chain_fn(void *arg, const void *key, size_t key_len, void *value)
{
	struct chain *ch = arg;
	uintptr_t v = (uintptr_t)value;

	assert_true(v > ch->last);
	ch->last = v;
	ch->runs++;
	if (v < 10)
		assert_null(conflate_offer(ch->c, key, key_len, V(v + 1)));
}

static void
test_reoffer_from_consumer(void **state)
{
	struct chain ch = { 0 };
	struct conflate_params p = { .fn = chain_fn, .arg = &ch };
	unsigned int rounds = 0;

	(void)state;
	ch.c = conflate_create(&p);
	assert_non_null(ch.c);
	assert_null(conflate_offer(ch.c, "self", 4, V(1)));
	while (conflate_poll(ch.c) != 0)
		rounds++;
	assert_int_equal(ch.runs, 10);
	assert_int_equal(ch.last, 10);
	assert_true(rounds >= 1);
	conflate_destroy(ch.c);
}

/* A second consumer polls while the first runs a key: the run flag keeps
 * the key to the first, and a value offered meanwhile is run after it
 * (its owner looks again on leaving), neither lost nor run twice at once.
 * The second consumer is the first's own nested poll: deterministic. */
struct overlap {
	struct conflate *c;
	unsigned int depth;
	unsigned int runs;
	uintptr_t last;
};

static void
overlap_fn(void *arg, const void *key, size_t key_len, void *value)
{
	struct overlap *o = arg;

	assert_int_equal(o->depth, 0);	/* never two runs of a key at once */
	o->depth++;
	o->runs++;
	o->last = (uintptr_t)value;
	if (o->last == 1) {
		assert_null(conflate_offer(o->c, key, key_len, V(2)));
		/* the mark is taken, the key is busy: nothing runs */
		assert_int_equal(conflate_poll(o->c), 0);
	}
	o->depth--;
}

static void
test_value_offered_during_its_run_is_run_after(void **state)
{
	struct overlap o = { 0 };
	struct conflate_params p = { .fn = overlap_fn, .arg = &o };

	(void)state;
	o.c = conflate_create(&p);
	assert_non_null(o.c);
	assert_null(conflate_offer(o.c, "k", 1, V(1)));
	assert_int_equal(conflate_poll(o.c), 1);
	assert_int_equal(o.runs, 1);
	assert_int_equal(conflate_poll(o.c), 1);	/* re-marked on leaving */
	assert_int_equal(o.runs, 2);
	assert_int_equal(o.last, 2);
	assert_int_equal(conflate_poll(o.c), 0);
	conflate_destroy(o.c);
}

/* conflate_consume() in a thread: runs what is offered, returns on stop. */
struct applied_count {
	_Atomic unsigned int n;
};

static void
count_fn(void *arg, const void *key, size_t key_len, void *value)
{
	struct applied_count *a = arg;

	(void)key;
	(void)key_len;
	(void)value;
	atomic_fetch_add(&a->n, 1);
}

static void *
consume_thread(void *arg)
{
	conflate_consume(arg);
	return NULL;
}

static void
wait_applied(struct applied_count *a, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < 5000 && atomic_load(&a->n) < n; i++)
		usleep(1000);
	assert_int_equal(atomic_load(&a->n), n);
}

static void
test_consume_stop(void **state)
{
	struct applied_count a = { 0 };
	struct conflate_params p = { .fn = count_fn, .arg = &a, .spin = 1 };
	struct conflate *c = conflate_create(&p);
	struct conflate_stats st;
	struct timespec until;
	pthread_t t;

	(void)state;
	assert_non_null(c);
	assert_int_equal(pthread_create(&t, NULL, consume_thread, c), 0);
	usleep(20000);		/* let it park */
	assert_null(conflate_offer(c, "x", 1, V(1)));
	wait_applied(&a, 1);
	usleep(20000);
	assert_null(conflate_offer(c, "y", 1, V(2)));
	wait_applied(&a, 2);
	conflate_stop(c);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 5;	/* a parked consumer that stop missed: fail */
	assert_int_equal(pthread_timedjoin_np(t, NULL, &until), 0);
	assert_int_equal(conflate_wait(c), -ESHUTDOWN);
	conflate_stats(c, &st);
	assert_true(st.parks >= 1);
	assert_true(st.wakes >= 1);
	assert_int_equal(st.applied, 2);
	conflate_destroy(c);
}

/*
 * Counters are per thread: more threads than cells, both one after the
 * other (cells recycled) and at the same time (the shared cell).
 */
#define NT 160

struct tctx {
	struct conflate *c;
	pthread_barrier_t *bar;
	unsigned int id;
};

static void *
offer_once(void *arg)
{
	struct tctx *t = arg;
	char k[16];

	snprintf(k, sizeof(k), "t%u", t->id % 50);
	if (t->bar != NULL)
		pthread_barrier_wait(t->bar);
	(void)conflate_offer(t->c, k, strlen(k), V(t->id + 1));
	if (t->bar != NULL)
		pthread_barrier_wait(t->bar);
	return NULL;
}

static void
test_stats_many_threads(void **state)
{
	struct seen *s = calloc(1, sizeof(*s));
	struct conflate *c = make(s, 64, 0);
	struct tctx *ctx = calloc(NT, sizeof(*ctx));
	pthread_t *th = calloc(NT, sizeof(*th));
	pthread_barrier_t bar;
	struct conflate_stats st;
	unsigned int i;

	(void)state;
	for (i = 0; i < NT; i++) {
		ctx[i] = (struct tctx){ .c = c, .id = i };
		assert_int_equal(pthread_create(&th[i], NULL, offer_once,
				&ctx[i]), 0);
		assert_int_equal(pthread_join(th[i], NULL), 0);
	}
	conflate_stats(c, &st);
	assert_int_equal(st.offers, NT);
	assert_int_equal(st.superseded, NT - 50);

	pthread_barrier_init(&bar, NULL, NT);
	for (i = 0; i < NT; i++) {
		ctx[i] = (struct tctx){ .c = c, .bar = &bar, .id = i };
		assert_int_equal(pthread_create(&th[i], NULL, offer_once,
				&ctx[i]), 0);
	}
	for (i = 0; i < NT; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	pthread_barrier_destroy(&bar);
	conflate_stats(c, &st);
	assert_int_equal(st.offers, 2 * NT);
	assert_int_equal(st.superseded, 2 * NT - 50);
	assert_int_equal(conflate_poll(c), 50);
	conflate_stats(c, &st);
	assert_int_equal(st.applied, 50);
	conflate_destroy(c);
	free(ctx);
	free(th);
	free(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_invalid),
		cmocka_unit_test(test_supersede),
		cmocka_unit_test(test_reject),
		cmocka_unit_test(test_keys_bytewise),
		cmocka_unit_test(test_growth),
		cmocka_unit_test(test_geometry),
		cmocka_unit_test(test_reoffer_from_consumer),
		cmocka_unit_test(test_value_offered_during_its_run_is_run_after),
		cmocka_unit_test(test_consume_stop),
		cmocka_unit_test(test_stats_many_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
