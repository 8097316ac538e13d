/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conflate-bench: the keyed conflating executor against a mutex and
 * condition variable hash map (also conflating) and a non-conflating ring,
 * in the same run.
 *
 * Latency: 1 producer, 1 consumer, 700 keys chosen at random; the first
 * 20000 iterations are warm-up and not measured. Latency is from the offer
 * (or, with --rate, from the intended offer time, so a stalled producer is
 * not forgiven) to the start of the consumer function, for each value that
 * runs; superseded values never run and are counted apart.
 * Throughput: offers per second with 1 and 2 producers and one consumer.
 * Allocations after warm-up are counted by wrapping malloc and friends
 * (-Wl,--wrap) and by the executor's own counters; any is an error.
 *
 * Values are messages from per-producer free lists: a superseded message is
 * reused at once by the producer that got it back, a run one goes back to
 * its owner's list, so nothing is allocated after start-up.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "conflate.h"

#define MAX_PROD 2
#define KEY_LEN 24
#define RING_SIZE 1024		/* the non-conflating ring */
#define SPARE_MSGS 2048		/* per producer, above one per key */
#define CACHE_LINE 64

/* ---- allocation counting: the link wraps these (see meson.build) ---- */

static _Atomic uint64_t n_allocs;

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void *__real_aligned_alloc(size_t align, size_t size);
int __real_posix_memalign(void **p, size_t align, size_t size);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);
void *__wrap_aligned_alloc(size_t align, size_t size);
int __wrap_posix_memalign(void **p, size_t align, size_t size);

void *
__wrap_malloc(size_t size)
{
	atomic_fetch_add_explicit(&n_allocs, 1, memory_order_relaxed);
	return __real_malloc(size);
}

void *
__wrap_calloc(size_t n, size_t size)
{
	atomic_fetch_add_explicit(&n_allocs, 1, memory_order_relaxed);
	return __real_calloc(n, size);
}

void *
__wrap_realloc(void *p, size_t size)
{
	atomic_fetch_add_explicit(&n_allocs, 1, memory_order_relaxed);
	return __real_realloc(p, size);
}

void *
__wrap_aligned_alloc(size_t align, size_t size)
{
	atomic_fetch_add_explicit(&n_allocs, 1, memory_order_relaxed);
	return __real_aligned_alloc(align, size);
}

int
__wrap_posix_memalign(void **p, size_t align, size_t size)
{
	atomic_fetch_add_explicit(&n_allocs, 1, memory_order_relaxed);
	return __real_posix_memalign(p, align, size);
}

/* ---- small helpers ---- */

static inline uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline void
cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield" ::: "memory");
#endif
}

/* bounded spin, then yield: waits here are rare and short */
static inline void
backoff(unsigned int *n)
{
	if (++*n < 1024)
		cpu_relax();
	else
		sched_yield();
}

static void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (p == NULL) {
		perror("calloc");
		exit(2);
	}
	return p;
}

/*
 * CPU time of the whole machine and of this process, in clock ticks, to
 * report how much other processes ran during the benchmark: on a shared
 * machine that is what moves the figures most.
 */
struct cpu_sample {
	unsigned long long total;
	unsigned long long idle;
	unsigned long long self;
};

static void
cpu_sample(struct cpu_sample *s)
{
	unsigned long long v[8] = { 0 }, ut = 0, st = 0;
	FILE *f = fopen("/proc/stat", "r");
	unsigned int i;

	memset(s, 0, sizeof(*s));
	if (f != NULL) {
		if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu",
				&v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
				&v[7]) == 8) {
			for (i = 0; i < 8; i++)
				s->total += v[i];
			s->idle = v[3] + v[4];
		}
		fclose(f);
	}
	f = fopen("/proc/self/stat", "r");
	if (f != NULL) {
		/* utime and stime are fields 14 and 15; comm has no spaces here */
		if (fscanf(f, "%*d %*s %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
				"%llu %llu", &ut, &st) == 2)
			s->self = ut + st;
		fclose(f);
	}
}

/* share of all CPUs used by other processes between a and b, in % */
static double
cpu_others(const struct cpu_sample *a, const struct cpu_sample *b)
{
	double total = (double)(b->total - a->total);
	double busy = total - (double)(b->idle - a->idle);
	double others = busy - (double)(b->self - a->self);

	return total > 0 && others > 0 ? 100.0 * others / total : 0.0;
}

/* ---- messages and their free lists (SPSC: consumer -> owner) ---- */

struct msg {
	uint64_t t_ns;		/* offer time (intended time with --rate) */
	uint64_t iter;
	uint32_t key;
	uint32_t owner;
	char payload[32];	/* something to touch */
};

struct free_ring {
	_Atomic uint64_t head __attribute__((aligned(CACHE_LINE)));
	_Atomic uint64_t tail __attribute__((aligned(CACHE_LINE)));
	uint64_t mask;
	struct msg **slot;
};

static void
free_push(struct free_ring *r, struct msg *m)
{
	uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);

	r->slot[t & r->mask] = m;	/* never full: sized for every message */
	atomic_store_explicit(&r->tail, t + 1, memory_order_release);
}

static struct msg *
free_pop(struct free_ring *r)
{
	uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
	unsigned int n = 0;
	struct msg *m;

	while (atomic_load_explicit(&r->tail, memory_order_acquire) == h)
		backoff(&n);
	m = r->slot[h & r->mask];
	atomic_store_explicit(&r->head, h + 1, memory_order_release);
	return m;
}

/* ---- latency histogram: log-linear, 16 steps per power of two ---- */

#define H_SUB 16
#define H_BUCKETS (H_SUB + 40 * H_SUB)

struct hist {
	uint64_t count[H_BUCKETS];
	uint64_t n;
	uint64_t max;
};

static unsigned int
h_index(uint64_t v)
{
	unsigned int e;

	if (v < H_SUB)
		return (unsigned int)v;
	e = 63 - (unsigned int)__builtin_clzll(v);	/* >= 4 */
	return H_SUB + (e - 4) * H_SUB + (unsigned int)((v >> (e - 4)) & (H_SUB - 1));
}

static uint64_t
h_value(unsigned int i)		/* lower bound of bucket i */
{
	unsigned int e;

	if (i < H_SUB)
		return i;
	e = (i - H_SUB) / H_SUB + 4;
	return ((uint64_t)1 << e) | ((uint64_t)(i % H_SUB) << (e - 4));
}

static void
h_add(struct hist *h, uint64_t v)
{
	unsigned int i = h_index(v);

	h->count[i < H_BUCKETS ? i : H_BUCKETS - 1]++;
	h->n++;
	if (v > h->max)
		h->max = v;
}

static double
h_pct(const struct hist *h, double pct)
{
	uint64_t want = (uint64_t)(pct / 100.0 * (double)h->n);
	uint64_t seen = 0;
	unsigned int i;

	for (i = 0; i < H_BUCKETS; i++) {
		seen += h->count[i];
		if (seen > want)
			return (double)h_value(i) / 1000.0;
	}
	return (double)h->max / 1000.0;
}

static uint64_t
h_between(const struct hist *h, uint64_t lo_ns, uint64_t hi_ns)
{
	uint64_t sum = 0;
	unsigned int i;

	for (i = 0; i < H_BUCKETS; i++)
		if (h_value(i) >= lo_ns && h_value(i) < hi_ns)
			sum += h->count[i];
	return sum;
}

/* ---- the benchmark state shared by the three implementations ---- */

struct opts {
	unsigned int keys;
	uint64_t iters;
	uint64_t warmup;
	uint64_t rate;		/* offers per second, 0 = flat out */
	unsigned int capacity;	/* conflate capacity hint: growth in warm-up */
	unsigned int ms;	/* throughput run length */
	unsigned int work_ns;	/* consumer work per value */
	bool pin;
};

struct bench;

struct impl {
	const char *name;
	void *(*create)(struct bench *b);
	/* offer m for key k; returns the superseded message or NULL */
	struct msg *(*offer)(struct bench *b, uint32_t k, struct msg *m);
	void (*consume)(struct bench *b);	/* until stop */
	void (*stop)(struct bench *b);
	void (*destroy)(struct bench *b);
	/* executor's own allocation and growth counters (conflate only) */
	uint64_t (*growths)(struct bench *b);
};

struct bench {
	const struct opts *o;
	const struct impl *impl;
	void *state;
	char (*key)[KEY_LEN];
	const uint8_t *key_len;
	unsigned int nprod;
	struct free_ring freel[MAX_PROD];
	struct msg *msgs[MAX_PROD];
	/* consumer side */
	struct hist hist;
	_Atomic uint64_t delivered __attribute__((aligned(CACHE_LINE)));
	_Atomic uint64_t delivered_measured;
	uint64_t checksum;
	bool latency;		/* record latencies */
	/* producer side */
	_Atomic uint64_t superseded __attribute__((aligned(CACHE_LINE)));
	_Atomic uint64_t offered;
	_Atomic uint64_t counted;	/* offers after warm-up (throughput) */
	_Atomic unsigned int ready;
	_Atomic bool go;
	_Atomic bool done;
};

static void
spin_ns(uint64_t ns)
{
	uint64_t end;

	if (ns == 0)
		return;
	end = now_ns() + ns;
	while (now_ns() < end)
		cpu_relax();
}

/* Every implementation's consumer ends here. */
static void
deliver(struct bench *b, struct msg *m)
{
	uint64_t now = now_ns();

	if (b->latency && m->iter >= b->o->warmup) {
		h_add(&b->hist, now > m->t_ns ? now - m->t_ns : 0);
		atomic_fetch_add_explicit(&b->delivered_measured, 1,
				memory_order_relaxed);
	}
	b->checksum += (uint8_t)m->payload[m->iter & 31];
	spin_ns(b->o->work_ns);
	atomic_store_explicit(&b->delivered, atomic_load_explicit(&b->delivered,
			memory_order_relaxed) + 1, memory_order_relaxed);
	free_push(&b->freel[m->owner], m);
}

/* ---- 1. the conflating executor ---- */

static void
cf_fn(void *arg, const void *key, size_t key_len, void *value)
{
	(void)key;
	(void)key_len;
	deliver(arg, value);
}

static void *
cf_create(struct bench *b)
{
	struct conflate_params p = {
		.fn = cf_fn,
		.arg = b,
		.capacity = b->o->capacity,
		.max_keys = 16384,
	};
	struct conflate *c = conflate_create(&p);

	if (c == NULL) {
		perror("conflate_create");
		exit(2);
	}
	return c;
}

static struct msg *
cf_offer(struct bench *b, uint32_t k, struct msg *m)
{
	return conflate_offer(b->state, b->key[k], b->key_len[k], m);
}

static void
cf_consume(struct bench *b)
{
	conflate_consume(b->state);
}

static void
cf_stop(struct bench *b)
{
	conflate_stop(b->state);
}

static void
cf_destroy(struct bench *b)
{
	conflate_destroy(b->state);
}

/* allocations made by the executor itself, creation included */
static uint64_t
cf_growths(struct bench *b)
{
	struct conflate_stats st;

	conflate_stats(b->state, &st);
	return st.allocs;
}

static const struct impl impl_conflate = {
	.name = "conflate",
	.create = cf_create,
	.offer = cf_offer,
	.consume = cf_consume,
	.stop = cf_stop,
	.destroy = cf_destroy,
	.growths = cf_growths,
};

/* ---- 2. mutex + condition variable hash map, conflating ---- */

struct mx_entry {
	const char *key;
	struct msg *pending;
};

struct mx_map {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool waiting;
	bool stop;
	struct bench *b;
	uint64_t mask;
	struct mx_entry *tab;	/* open addressing, 2x keys */
	uint32_t *dirty;	/* FIFO of entries with a pending value */
	uint64_t dhead, dtail, dmask;
};

static uint64_t
fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s != '\0'; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ULL;
	return h;
}

static void *
mx_create(struct bench *b)
{
	struct mx_map *m = xcalloc(1, sizeof(*m));
	uint64_t n = 1;

	while (n < 2ULL * b->o->keys)
		n <<= 1;
	m->mask = n - 1;
	m->dmask = n - 1;
	m->tab = xcalloc(n, sizeof(*m->tab));
	m->dirty = xcalloc(n, sizeof(*m->dirty));
	m->b = b;
	pthread_mutex_init(&m->lock, NULL);
	pthread_cond_init(&m->cond, NULL);
	return m;
}

static struct mx_entry *
mx_find(struct mx_map *m, const char *key)
{
	uint64_t i = fnv1a(key) & m->mask;

	for (; m->tab[i].key != NULL; i = (i + 1) & m->mask)
		if (strcmp(m->tab[i].key, key) == 0)
			return &m->tab[i];
	m->tab[i].key = key;	/* preallocated: insertion allocates nothing */
	return &m->tab[i];
}

static struct msg *
mx_offer(struct bench *b, uint32_t k, struct msg *msg)
{
	struct mx_map *m = b->state;
	struct mx_entry *e;
	struct msg *old;

	pthread_mutex_lock(&m->lock);
	e = mx_find(m, m->b->key[k]);
	old = e->pending;
	e->pending = msg;
	if (old == NULL) {
		m->dirty[m->dtail++ & m->dmask] = (uint32_t)(e - m->tab);
		if (m->waiting)
			pthread_cond_signal(&m->cond);
	}
	pthread_mutex_unlock(&m->lock);
	return old;
}

static void
mx_consume(struct bench *b)
{
	struct mx_map *m = b->state;
	struct msg *batch[64];
	unsigned int n, i;

	for (;;) {
		pthread_mutex_lock(&m->lock);
		while (m->dhead == m->dtail && !m->stop) {
			m->waiting = true;
			pthread_cond_wait(&m->cond, &m->lock);
			m->waiting = false;
		}
		if (m->dhead == m->dtail) {
			pthread_mutex_unlock(&m->lock);
			return;
		}
		for (n = 0; n < 64 && m->dhead != m->dtail; n++) {
			struct mx_entry *e = &m->tab[m->dirty[m->dhead++ & m->dmask]];

			batch[n] = e->pending;
			e->pending = NULL;
		}
		pthread_mutex_unlock(&m->lock);
		for (i = 0; i < n; i++)
			deliver(m->b, batch[i]);
	}
}

static void
mx_stop(struct bench *b)
{
	struct mx_map *m = b->state;

	pthread_mutex_lock(&m->lock);
	m->stop = true;
	pthread_cond_broadcast(&m->cond);
	pthread_mutex_unlock(&m->lock);
}

static void
mx_destroy(struct bench *b)
{
	struct mx_map *m = b->state;

	pthread_mutex_destroy(&m->lock);
	pthread_cond_destroy(&m->cond);
	free(m->tab);
	free(m->dirty);
	free(m);
}

static const struct impl impl_mutex = {
	.name = "mutex-map",
	.create = mx_create,
	.offer = mx_offer,
	.consume = mx_consume,
	.stop = mx_stop,
	.destroy = mx_destroy,
};

/* ---- 3. non-conflating ring: bounded MPMC queue (Vyukov) ---- */

struct rq_cell {
	_Atomic uint64_t seq;
	struct msg *m;
};

struct rq {
	_Atomic uint64_t head __attribute__((aligned(CACHE_LINE)));
	_Atomic uint64_t tail __attribute__((aligned(CACHE_LINE)));
	_Atomic bool stop __attribute__((aligned(CACHE_LINE)));
	struct bench *b;
	struct rq_cell cell[RING_SIZE];
};

static void *
rq_create(struct bench *b)
{
	struct rq *q = xcalloc(1, sizeof(*q));
	uint64_t i;

	for (i = 0; i < RING_SIZE; i++)
		atomic_store(&q->cell[i].seq, i);
	q->b = b;
	return q;
}

static struct msg *
rq_offer(struct bench *b, uint32_t k, struct msg *m)
{
	struct rq *q = b->state;
	uint64_t pos = atomic_load_explicit(&q->tail, memory_order_relaxed);
	unsigned int n = 0;
	struct rq_cell *c;
	int64_t d;

	(void)k;
	for (;;) {
		c = &q->cell[pos & (RING_SIZE - 1)];
		d = (int64_t)(atomic_load_explicit(&c->seq, memory_order_acquire) -
				pos);
		if (d == 0 && atomic_compare_exchange_weak_explicit(&q->tail,
				&pos, pos + 1, memory_order_relaxed,
				memory_order_relaxed))
			break;
		if (d < 0) {	/* full: wait for the consumer */
			backoff(&n);
			pos = atomic_load_explicit(&q->tail, memory_order_relaxed);
		} else if (d > 0) {
			pos = atomic_load_explicit(&q->tail, memory_order_relaxed);
		}
	}
	c->m = m;
	atomic_store_explicit(&c->seq, pos + 1, memory_order_release);
	return NULL;
}

static struct msg *
rq_take(struct rq *q)
{
	uint64_t pos = atomic_load_explicit(&q->head, memory_order_relaxed);
	struct rq_cell *c = &q->cell[pos & (RING_SIZE - 1)];
	struct msg *m;

	if (atomic_load_explicit(&c->seq, memory_order_acquire) != pos + 1)
		return NULL;
	m = c->m;
	atomic_store_explicit(&c->seq, pos + RING_SIZE, memory_order_release);
	atomic_store_explicit(&q->head, pos + 1, memory_order_relaxed);
	return m;
}

/* Busy-polls (never sleeps): the ring's best case for latency. */
static void
rq_consume(struct bench *b)
{
	struct rq *q = b->state;
	struct msg *m;

	for (;;) {
		m = rq_take(q);
		if (m != NULL)
			deliver(q->b, m);
		else if (atomic_load_explicit(&q->stop, memory_order_acquire))
			return;
		else
			cpu_relax();
	}
}

static void
rq_stop(struct bench *b)
{
	struct rq *q = b->state;

	atomic_store(&q->stop, true);
}

static void
rq_destroy(struct bench *b)
{
	free(b->state);
}

static const struct impl impl_ring = {
	.name = "ring",
	.create = rq_create,
	.offer = rq_offer,
	.consume = rq_consume,
	.stop = rq_stop,
	.destroy = rq_destroy,
};

static const struct impl *const impls[] = {
	&impl_conflate, &impl_mutex, &impl_ring,
};
#define NIMPL (sizeof(impls) / sizeof(impls[0]))

/* ---- threads ---- */

struct prod_arg {
	struct bench *b;
	unsigned int id;
	uint64_t allocs_at_warm;	/* latency run: malloc count then */
	uint64_t growths_at_warm;
};

static void
pin(const struct opts *o, unsigned int cpu)
{
	cpu_set_t set;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	if (!o->pin || ncpu < 2)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu % (unsigned int)ncpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *
consumer_main(void *arg)
{
	struct bench *b = arg;

	pin(b->o, 1);
	b->impl->consume(b);
	return NULL;
}

static inline uint32_t
next_key(uint64_t *x, unsigned int keys)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return (uint32_t)(*x % keys);
}

/*
 * One offer: reuse the message handed back last time, if any. t_ns is the
 * time to stamp, 0 for now.
 */
static inline struct msg *
offer_one(struct bench *b, unsigned int id, struct msg *spare, uint32_t k,
		uint64_t i, uint64_t t_ns)
{
	struct msg *m = spare != NULL ? spare : free_pop(&b->freel[id]);

	m->key = k;
	m->iter = i;
	m->t_ns = t_ns != 0 ? t_ns : now_ns();
	return b->impl->offer(b, k, m);
}

#define NO_STAMP 1	/* throughput runs: do not read the clock */

/* Latency run: a fixed number of iterations, optionally paced. */
static void *
latency_producer(void *arg)
{
	struct prod_arg *pa = arg;
	struct bench *b = pa->b;
	const struct opts *o = b->o;
	uint64_t x = 0x9e3779b97f4a7c15ULL, i, t0 = 0, target = 0, sup = 0;
	struct msg *spare = NULL;

	pin(o, 0);
	for (i = 0; i < o->iters; i++) {
		if (i == o->warmup) {
			pa->allocs_at_warm = atomic_load(&n_allocs);
			pa->growths_at_warm = b->impl->growths != NULL ?
				b->impl->growths(b) : 0;
		}
		if (o->rate != 0) {
			if (i == 0)
				t0 = now_ns();
			target = t0 + i * 1000000000ULL / o->rate;
			while (now_ns() < target)
				cpu_relax();
		}
		spare = offer_one(b, pa->id, spare, next_key(&x, o->keys), i,
				target);
		sup += spare != NULL;
	}
	/* a last spare stays out of the lists: the consumer owns their tails */
	atomic_store(&b->superseded, sup);
	return NULL;
}

/* Throughput run: warm up, then offer until told to stop. */
static void *
throughput_producer(void *arg)
{
	struct prod_arg *pa = arg;
	struct bench *b = pa->b;
	const struct opts *o = b->o;
	uint64_t x = 0x9e3779b97f4a7c15ULL * (pa->id + 1), i, n = 0, sup = 0;
	struct msg *spare = NULL;
	unsigned int k;

	for (i = 0; i < o->warmup; i++) {
		spare = offer_one(b, pa->id, spare, next_key(&x, o->keys), i,
				NO_STAMP);
		sup += spare != NULL;
	}
	atomic_fetch_add(&b->ready, 1);
	while (!atomic_load_explicit(&b->go, memory_order_acquire))
		cpu_relax();
	while (!atomic_load_explicit(&b->done, memory_order_relaxed)) {
		for (k = 0; k < 64; k++, n++) {
			spare = offer_one(b, pa->id, spare,
					next_key(&x, o->keys), i + n, NO_STAMP);
			sup += spare != NULL;
		}
	}
	atomic_fetch_add(&b->counted, n);
	atomic_fetch_add(&b->offered, o->warmup + n);
	atomic_fetch_add(&b->superseded, sup);
	return NULL;
}

/* ---- set-up and runs ---- */

static struct bench *
bench_new(const struct opts *o, const struct impl *impl, unsigned int nprod,
		char (*keys)[KEY_LEN], const uint8_t *key_len)
{
	struct bench *b = xcalloc(1, sizeof(*b));
	uint64_t nmsg = o->keys + SPARE_MSGS, size = 1, i;
	unsigned int p;

	b->o = o;
	b->impl = impl;
	b->nprod = nprod;
	b->key = keys;
	b->key_len = key_len;
	while (size < nmsg)
		size <<= 1;
	for (p = 0; p < nprod; p++) {
		b->msgs[p] = xcalloc(nmsg, sizeof(struct msg));
		b->freel[p].slot = xcalloc(size, sizeof(struct msg *));
		b->freel[p].mask = size - 1;
		for (i = 0; i < nmsg; i++) {
			b->msgs[p][i].owner = p;
			memset(b->msgs[p][i].payload, (int)i, 32);
			free_push(&b->freel[p], &b->msgs[p][i]);
		}
	}
	b->state = impl->create(b);
	return b;
}

static void
bench_free(struct bench *b)
{
	unsigned int p;

	b->impl->destroy(b);
	for (p = 0; p < b->nprod; p++) {
		free(b->msgs[p]);
		free(b->freel[p].slot);
	}
	free(b);
}

/* Wait until every offer has run or been superseded, bounded. */
static void
wait_drained(struct bench *b, uint64_t offers)
{
	uint64_t deadline = now_ns() + 5000000000ULL;

	while (atomic_load(&b->delivered) + atomic_load(&b->superseded) <
			offers && now_ns() < deadline)
		usleep(100);
}

struct lat_result {
	struct hist hist;
	uint64_t runs;
	uint64_t superseded;
	uint64_t allocs;
	uint64_t growths;
	double secs;
	struct conflate_stats cs;
};

static void
run_latency(const struct opts *o, const struct impl *impl,
		char (*keys)[KEY_LEN], const uint8_t *key_len,
		struct lat_result *r)
{
	struct bench *b = bench_new(o, impl, 1, keys, key_len);
	struct prod_arg pa = { .b = b, .id = 0 };
	pthread_t cons, prod;
	uint64_t t0;

	b->latency = true;
	pthread_create(&cons, NULL, consumer_main, b);
	t0 = now_ns();
	pthread_create(&prod, NULL, latency_producer, &pa);
	pthread_join(prod, NULL);
	r->allocs = atomic_load(&n_allocs) - pa.allocs_at_warm;
	r->growths = impl->growths != NULL ?
		impl->growths(b) - pa.growths_at_warm : 0;
	wait_drained(b, o->iters);
	r->secs = (double)(now_ns() - t0) / 1e9;
	b->impl->stop(b);
	pthread_join(cons, NULL);
	r->hist = b->hist;
	r->runs = atomic_load(&b->delivered);
	r->superseded = atomic_load(&b->superseded);
	if (impl == &impl_conflate)
		conflate_stats(b->state, &r->cs);
	bench_free(b);
}

struct tp_result {
	double offers_per_s;
	double runs_per_s;
	uint64_t allocs;
	uint64_t growths;
};

static void
run_throughput(const struct opts *o, const struct impl *impl,
		char (*keys)[KEY_LEN], const uint8_t *key_len, unsigned int nprod,
		struct tp_result *r)
{
	struct bench *b = bench_new(o, impl, nprod, keys, key_len);
	struct prod_arg pa[MAX_PROD];
	pthread_t cons, prod[MAX_PROD];
	uint64_t t0, t1, runs0, allocs0, growths0;
	unsigned int p;

	pthread_create(&cons, NULL, consumer_main, b);
	for (p = 0; p < nprod; p++) {
		pa[p] = (struct prod_arg){ .b = b, .id = p };
		pthread_create(&prod[p], NULL, throughput_producer, &pa[p]);
	}
	while (atomic_load(&b->ready) < nprod)
		usleep(100);
	allocs0 = atomic_load(&n_allocs);
	growths0 = impl->growths != NULL ? impl->growths(b) : 0;
	runs0 = atomic_load(&b->delivered);
	t0 = now_ns();
	atomic_store_explicit(&b->go, true, memory_order_release);
	usleep(o->ms * 1000);
	atomic_store(&b->done, true);
	t1 = now_ns();
	for (p = 0; p < nprod; p++)
		pthread_join(prod[p], NULL);
	r->runs_per_s = (double)(atomic_load(&b->delivered) - runs0) /
		((double)(t1 - t0) / 1e9);
	r->allocs = atomic_load(&n_allocs) - allocs0;
	r->growths = impl->growths != NULL ?
		impl->growths(b) - growths0 : 0;
	wait_drained(b, atomic_load(&b->offered));
	b->impl->stop(b);
	pthread_join(cons, NULL);
	/* at most 64 offers per producer land after t1: negligible */
	r->offers_per_s = (double)atomic_load(&b->counted) /
		((double)(t1 - t0) / 1e9);
	bench_free(b);
}

/* ---- output ---- */

static const uint64_t bins_us[] = { 0, 1, 2, 5, 10, 20, 50, 100, 200, 500,
	1000, 2000, 5000, 10000 };
#define NBINS (sizeof(bins_us) / sizeof(bins_us[0]))

static void
print_latency(const struct opts *o, struct lat_result *r)
{
	unsigned int i, j;
	uint64_t lo, hi;

	printf("\nlatency, offer to run, microseconds: 1 producer, 1 consumer, "
			"%u keys, %" PRIu64 " iterations, first %" PRIu64
			" discarded, %s\n", o->keys, o->iters, o->warmup,
			o->rate != 0 ? "paced" : "flat out");
	if (o->rate != 0)
		printf("offered at %" PRIu64 "/s, latency from intended time\n",
				o->rate);
	printf("%-14s", "us");
	for (j = 0; j < NIMPL; j++)
		printf(" %20s", impls[j]->name);
	printf("\n");
	for (i = 0; i < NBINS; i++) {
		lo = bins_us[i] * 1000;
		hi = i + 1 < NBINS ? bins_us[i + 1] * 1000 : UINT64_MAX;
		if (i + 1 < NBINS)
			printf("[%5" PRIu64 ",%5" PRIu64 ")  ", bins_us[i],
					bins_us[i + 1]);
		else
			printf(">= %-10" PRIu64 " ", bins_us[i]);
		for (j = 0; j < NIMPL; j++) {
			uint64_t n = h_between(&r[j].hist, lo, hi);

			printf(" %11" PRIu64 " %6.2f%%", n, r[j].hist.n != 0 ?
					100.0 * (double)n / (double)r[j].hist.n : 0.0);
		}
		printf("\n");
	}
	printf("%-14s", "p50");
	for (j = 0; j < NIMPL; j++)
		printf(" %20.2f", h_pct(&r[j].hist, 50));
	printf("\n%-14s", "p90");
	for (j = 0; j < NIMPL; j++)
		printf(" %20.2f", h_pct(&r[j].hist, 90));
	printf("\n%-14s", "p99");
	for (j = 0; j < NIMPL; j++)
		printf(" %20.2f", h_pct(&r[j].hist, 99));
	printf("\n%-14s", "p99.9");
	for (j = 0; j < NIMPL; j++)
		printf(" %20.2f", h_pct(&r[j].hist, 99.9));
	printf("\n%-14s", "max");
	for (j = 0; j < NIMPL; j++)
		printf(" %20.2f", (double)r[j].hist.max / 1000.0);
	printf("\n%-14s", "measured runs");
	for (j = 0; j < NIMPL; j++)
		printf(" %20" PRIu64, r[j].hist.n);
	printf("\n%-14s", "runs (all)");
	for (j = 0; j < NIMPL; j++)
		printf(" %20" PRIu64, r[j].runs);
	printf("\n%-14s", "superseded");
	for (j = 0; j < NIMPL; j++)
		printf(" %20" PRIu64, r[j].superseded);
	printf("\n%-14s", "offers/s");
	for (j = 0; j < NIMPL; j++)
		printf(" %20.0f", (double)o->iters / r[j].secs);
	printf("\n%-14s", "allocs>warm");
	for (j = 0; j < NIMPL; j++)
		printf(" %20" PRIu64, r[j].allocs + r[j].growths);
	printf("\n");
}

static int
run_all(const struct opts *o, char (*keys)[KEY_LEN], const uint8_t *key_len)
{
	struct lat_result *lat = xcalloc(NIMPL, sizeof(*lat));
	struct tp_result tp[NIMPL][MAX_PROD];
	struct cpu_sample c0, c1, c2;
	uint64_t bad = 0;
	unsigned int j, p;

	cpu_sample(&c0);
	for (j = 0; j < NIMPL; j++)
		run_latency(o, impls[j], keys, key_len, &lat[j]);
	print_latency(o, lat);
	printf("conflate counters: offers %" PRIu64 " superseded %" PRIu64
			" applied %" PRIu64 " growths %" PRIu64 " allocs %" PRIu64
			" (all before warm-up ended) parks %" PRIu64 " wakes %" PRIu64
			"\n",
			lat[0].cs.offers, lat[0].cs.superseded, lat[0].cs.applied,
			lat[0].cs.growths, lat[0].cs.allocs, lat[0].cs.parks,
			lat[0].cs.wakes);
	for (j = 0; j < NIMPL; j++)
		bad += lat[j].allocs + lat[j].growths;
	cpu_sample(&c1);
	printf("other processes used %.1f%% of the CPUs during the latency runs\n",
			cpu_others(&c0, &c1));

	printf("\nthroughput, %u keys, 1 consumer, %u ms after a %" PRIu64
			"-offer warm-up per producer\n", o->keys, o->ms, o->warmup);
	printf("%-10s %14s %14s %14s %14s\n", "impl", "producers",
			"offers/s", "runs/s", "allocs>warm");
	for (j = 0; j < NIMPL; j++) {
		for (p = 0; p < MAX_PROD; p++) {
			run_throughput(o, impls[j], keys, key_len, p + 1,
					&tp[j][p]);
			printf("%-10s %14u %14.0f %14.0f %14" PRIu64 "\n",
					impls[j]->name, p + 1, tp[j][p].offers_per_s,
					tp[j][p].runs_per_s,
					tp[j][p].allocs + tp[j][p].growths);
			bad += tp[j][p].allocs + tp[j][p].growths;
		}
	}
	cpu_sample(&c2);
	printf("other processes used %.1f%% of the CPUs during the throughput "
			"runs\n", cpu_others(&c1, &c2));
	printf("\nallocations after warm-up, all runs: %" PRIu64 "%s\n", bad,
			bad == 0 ? "" : "  <-- ERROR");
	free(lat);
	return bad == 0 ? 0 : 1;
}

static void
usage(const char *prog)
{
	printf("usage: %s [options]\n"
		"  -k, --keys N        keys (700)\n"
		"  -n, --iterations N  latency run iterations (1000000)\n"
		"  -w, --warmup N      iterations discarded as warm-up (20000)\n"
		"  -r, --rate N        pace the latency run at N offers/s (flat out)\n"
		"  -c, --capacity N    conflate capacity hint (64: grows in warm-up)\n"
		"  -t, --ms N          throughput run length in ms (300)\n"
		"  -W, --work-ns N     consumer work per value in ns (0)\n"
		"  -p, --pin           pin producer to CPU 0, consumer to CPU 1\n",
		prog);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "keys", required_argument, NULL, 'k' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "rate", required_argument, NULL, 'r' },
		{ "capacity", required_argument, NULL, 'c' },
		{ "ms", required_argument, NULL, 't' },
		{ "work-ns", required_argument, NULL, 'W' },
		{ "pin", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = {
		.keys = 700, .iters = 1000000, .warmup = 20000, .capacity = 64,
		.ms = 300,
	};
	char (*keys)[KEY_LEN];
	uint8_t *key_len;
	unsigned int i;
	int c;

	while ((c = getopt_long(argc, argv, "k:n:w:r:c:t:W:ph", longopts,
			NULL)) != -1) {
		switch (c) {
		case 'k': o.keys = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'n': o.iters = strtoull(optarg, NULL, 0); break;
		case 'w': o.warmup = strtoull(optarg, NULL, 0); break;
		case 'r': o.rate = strtoull(optarg, NULL, 0); break;
		case 'c': o.capacity = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 't': o.ms = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'W': o.work_ns = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'p': o.pin = true; break;
		case 'h': usage(argv[0]); return 0;
		default: usage(argv[0]); return 2;
		}
	}
	if (o.keys == 0 || o.keys > 16384 || o.iters <= o.warmup) {
		fprintf(stderr, "need 1 <= keys <= 16384 and iterations > warmup\n");
		return 2;
	}
	keys = xcalloc(o.keys, KEY_LEN);
	key_len = xcalloc(o.keys, 1);
	for (i = 0; i < o.keys; i++) {
		snprintf(keys[i], KEY_LEN, "instrument-%04u", i);
		key_len[i] = (uint8_t)strlen(keys[i]);
	}
	printf("conflate-bench: %u keys, %ld CPUs online\n", o.keys,
			sysconf(_SC_NPROCESSORS_ONLN));
	c = run_all(&o, keys, key_len);
	free(keys);
	free(key_len);
	return c;
}
