/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * strategy-bench: PC, PEC, EPC and adaptive side by side on one synthetic
 * producer (Jetty's EWYK benchmark, improved).
 *
 * Each request owns a working set. produce() writes all of it (as a parser
 * touches every byte it reads); the task reads all of it back and checks
 * the sum. Consumed on the producing core the set is hot; consumed on
 * another core it has to move. A fraction of the tasks block (sleep or
 * spin). Closed loop: a fixed number of requests in flight, each re-sent
 * as soon as it completes. Open loop: Poisson arrivals at a fixed rate,
 * latency counted from the scheduled arrival (no coordinated omission).
 *
 * Printed per mode: throughput, CPU time per task (all threads, spinning
 * included), latency p50/p99/p99.9 and the strategy's mode counters.
 */

#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <inttypes.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "ewyk_exec.h"

#define MAX_LIST	8
#define HIST_SUB	5	/* 32 sub-buckets per power of two: < 3% */
#define HIST_N		((64 - HIST_SUB) << HIST_SUB)
#define MEM_CAP		(256u << 20)	/* working sets of one cell */
#define MAX_REPEAT	9

struct cfg {
	unsigned int modes;		/* bit per enum ewyk_mode, and WATCHED */
	unsigned int watch_us;		/* WATCHED: hand production over after */
	size_t ws[MAX_LIST];
	unsigned int n_ws;
	unsigned int reserved[MAX_LIST];
	unsigned int n_reserved;
	unsigned int loops;		/* 1 closed, 2 open */
	double block_frac;
	unsigned int block_us;
	bool block_spin;
	double nb_typed;		/* of the tasks that do not block */
	unsigned int concurrency;	/* closed loop */
	unsigned int slots;		/* open loop: requests in flight */
	double load;			/* open loop: of best closed rate */
	double rate;			/* open loop: fixed tasks/s */
	unsigned int duration_ms, warmup_ms;
	unsigned int parse_work, handle_work;
	unsigned int spin_us;
	unsigned int pool_threads;
	unsigned int producers;
	unsigned int repeat;
	uint64_t seed;
};

struct req;

/* Whole run: measurement window and results. */
struct shared {
	atomic_bool stop;
	atomic_long inflight;
	uint64_t win_start, win_end;
	atomic_ulong completed, corrupt, rejected;
	_Atomic uint64_t hist[HIST_N];
};

/* One producer (a shard in ewykd) and its strategy. */
struct run {
	/* Owner of the producer only. */
	struct req *priv;
	uint64_t rnd;
	uint64_t next_arrival;
	double gap_ns;
	bool open;
	const struct cfg *cfg;
	size_t words;
	struct shared *sh;
	struct ewyk_strategy *s;
	struct ewyk_task start;		/* runs the producer on a worker */

	/* Completions return requests here and ring the bell. */
	_Atomic(struct req *) free_stack __attribute__((aligned(64)));
	_Atomic uint32_t bell __attribute__((aligned(64)));
	atomic_int sleeping;
} __attribute__((aligned(64)));

struct req {
	struct ewyk_task task;
	struct req *next;
	struct run *run;
	uint64_t *buf;
	uint64_t expect;
	uint64_t t_arrive;
	uint64_t t_ready;	/* closed loop: completion of the previous */
	uint32_t block_ns;
};

struct result {
	double tput;		/* tasks/s */
	double cpu_us;		/* CPU time per task */
	double p50, p99, p999;	/* us */
	uint64_t pc, pic, pec, epc, rejected, corrupt, unserved;
};

/* Adaptive with a watched hand-off (ewyk_strategy_conf.watch_ns): a mode
 * of this benchmark's, next to the strategy's own. */
#define WATCHED (EWYK_MODE_EPC + 1)
#define NMODES (WATCHED + 1)

static const char *const mode_label[NMODES] = { "adaptive", "pc", "pec",
	"epc", "watched" };
/* Print order: the three fixed strategies, then EWYK, then EWYK with a
 * watched hand-off. */
static const unsigned int mode_order[NMODES] = { EWYK_MODE_PC, EWYK_MODE_PEC,
		EWYK_MODE_EPC, EWYK_MODE_ADAPTIVE, WATCHED };

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t
cpu_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) *
			1000000000u + ((uint64_t)ru.ru_utime.tv_usec +
			(uint64_t)ru.ru_stime.tv_usec) * 1000u;
}

static void
sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u),
			(long)(ns % 1000000000u) };

	nanosleep(&ts, NULL);
}

static uint64_t
xrand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * UINT64_C(2685821657736338717);
}

static double
urand(uint64_t *s)
{
	return (double)(xrand(s) >> 11) / 9007199254740992.0;
}

/* Burn a little CPU without touching memory. */
static uint64_t
work(unsigned int n, uint64_t x)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		x = x * 6364136223846793005u + 1442695040888963407u;
	return x;
}

static unsigned int
hist_idx(uint64_t v)
{
	unsigned int msb;

	if (v < (1u << HIST_SUB))
		return (unsigned int)v;
	msb = 63 - (unsigned int)__builtin_clzll(v);
	return ((msb - HIST_SUB + 1) << HIST_SUB) +
			(unsigned int)((v >> (msb - HIST_SUB)) &
			((1u << HIST_SUB) - 1));
}

static uint64_t
hist_value(unsigned int i)
{
	unsigned int e = i >> HIST_SUB, m = i & ((1u << HIST_SUB) - 1);

	if (e == 0)
		return m;
	/* Middle of the bucket. */
	return ((uint64_t)((1u << HIST_SUB) + m) << (e - 1)) +
			((uint64_t)1 << (e - 1)) / 2;
}

static void
hist_add(struct shared *r, uint64_t v, uint64_t n)
{
	unsigned int i = hist_idx(v);

	if (i >= HIST_N)
		i = HIST_N - 1;
	atomic_fetch_add_explicit(&r->hist[i], n, memory_order_relaxed);
}

static double
hist_pct(struct shared *r, double q)
{
	uint64_t total = 0, acc = 0, want;
	unsigned int i;

	for (i = 0; i < HIST_N; i++)
		total += atomic_load(&r->hist[i]);
	if (total == 0)
		return 0;
	want = (uint64_t)ceil(q * (double)total);
	for (i = 0; i < HIST_N; i++) {
		acc += atomic_load(&r->hist[i]);
		if (acc >= want)
			return (double)hist_value(i) / 1000.0;
	}
	return 0;
}

static void
bell_ring(struct run *r)
{
	atomic_fetch_add(&r->bell, 1);
	if (atomic_load(&r->sleeping))
		syscall(SYS_futex, &r->bell, FUTEX_WAKE_PRIVATE, 1, NULL,
				NULL, 0);
}

/* Producer with nothing to do: wait for a completion or until ns pass. */
static void
bell_wait(struct run *r, uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u),
			(long)(ns % 1000000000u) };
	uint32_t seq = atomic_load(&r->bell);
	uint64_t end = now_ns() + (ns < 20000 ? ns : 20000);

	/* Spin briefly: a wake-up costs more than most gaps. */
	while (now_ns() < end) {
		if (atomic_load(&r->bell) != seq ||
				atomic_load_explicit(&r->sh->stop,
				memory_order_relaxed))
			return;
		ewyk_cpu_pause();
	}
	if (ns <= 20000)
		return;
	atomic_store(&r->sleeping, 1);
	if (atomic_load(&r->free_stack) == NULL && !atomic_load(&r->sh->stop))
		syscall(SYS_futex, &r->bell, FUTEX_WAIT_PRIVATE, seq, &ts,
				NULL, 0);
	atomic_store(&r->sleeping, 0);
}

static struct req *
take_free(struct run *r)
{
	struct req *q;

	if (r->priv == NULL)
		r->priv = atomic_exchange_explicit(&r->free_stack, NULL,
				memory_order_acquire);
	q = r->priv;
	if (q != NULL)
		r->priv = q->next;
	return q;
}

static void
put_free(struct run *r, struct req *q)
{
	struct req *head = atomic_load_explicit(&r->free_stack,
			memory_order_relaxed);

	do {
		q->next = head;
	} while (!atomic_compare_exchange_weak_explicit(&r->free_stack,
			&head, q, memory_order_release, memory_order_relaxed));
	bell_ring(r);
}

static void
complete(struct run *r, struct req *q)
{
	struct shared *sh = r->sh;
	uint64_t t = now_ns();

	if (t >= sh->win_start && t < sh->win_end) {
		atomic_fetch_add_explicit(&sh->completed, 1,
				memory_order_relaxed);
		hist_add(sh, t - q->t_arrive, 1);
	}
	q->t_ready = t;
	atomic_fetch_sub(&sh->inflight, 1);
	put_free(r, q);
}

/* The handler: read the whole working set back, then maybe block. */
static int
req_run(struct ewyk_task *t)
{
	struct req *q = (struct req *)t;
	struct run *r = q->run;
	uint64_t sum = 0, end;
	volatile uint64_t sink;
	size_t i;

	for (i = 0; i < r->words; i++)
		sum += q->buf[i];
	if (sum != q->expect)
		atomic_fetch_add(&r->sh->corrupt, 1);
	sink = work(r->cfg->handle_work, sum);
	if (q->block_ns != 0) {
		if (r->cfg->block_spin) {
			end = now_ns() + q->block_ns;
			while (now_ns() < end)
				;
		} else {
			sleep_ns(q->block_ns);
		}
	}
	(void)sink;
	complete(r, q);
	return 0;
}

/* The parser: write the whole working set, decide what the task is. */
static void
parse(struct run *r, struct req *q)
{
	const struct cfg *c = r->cfg;
	uint64_t seed = xrand(&r->rnd), sum = 0, v;
	double u = urand(&r->rnd);
	volatile uint64_t sink;
	size_t i;

	for (i = 0; i < r->words; i++) {
		v = seed + i * 0x9e3779b97f4a7c15u;
		q->buf[i] = v;
		sum += v;
	}
	q->expect = sum;
	sink = work(c->parse_work, seed);
	q->block_ns = 0;
	if (u < c->block_frac) {
		q->block_ns = c->block_us * 1000u;
		q->task.type = EWYK_BLOCKING;
	} else {
		q->task.type = urand(&r->rnd) < c->nb_typed ?
				EWYK_NON_BLOCKING : EWYK_BLOCKING;
	}
	(void)sink;
}

static struct ewyk_task *
bench_produce(void *ctx)
{
	struct run *r = ctx;
	struct req *q;
	uint64_t t;

	for (;;) {
		if (atomic_load_explicit(&r->sh->stop, memory_order_relaxed))
			return NULL;
		if (r->open) {
			t = now_ns();
			if (t < r->next_arrival) {
				bell_wait(r, r->next_arrival - t);
				continue;
			}
		}
		q = take_free(r);
		if (q == NULL) {
			bell_wait(r, 1000000);
			continue;
		}
		if (r->open) {
			q->t_arrive = r->next_arrival;
			r->next_arrival += (uint64_t)(-log(1.0 -
					urand(&r->rnd)) * r->gap_ns) + 1;
		} else {
			q->t_arrive = q->t_ready;
		}
		parse(r, q);
		atomic_fetch_add(&r->sh->inflight, 1);
		return &q->task;
	}
}

static void
bench_rejected(void *ctx, struct ewyk_task *t, int err)
{
	struct run *r = ctx;

	(void)err;
	/* ewykd answers 503 here; the request is done. */
	atomic_fetch_add(&r->sh->rejected, 1);
	complete(r, (struct req *)t);
}

static int
start_run(struct ewyk_task *t)
{
	struct run *r = (struct run *)((char *)t - offsetof(struct run, start));

	ewyk_strategy_produce(r->s);
	return 0;
}

struct cell {
	size_t ws;
	unsigned int reserved;
	bool open;
	double rate;		/* all producers together */
	unsigned int nreq;	/* per producer */
	struct req *reqs;
	uint64_t *mem;
};

static int
cell_alloc(struct cell *cl, const struct cfg *c)
{
	size_t words = cl->ws / 8 ? cl->ws / 8 : 1;
	size_t n;
	unsigned int i;

	cl->nreq = cl->open ? c->slots : c->concurrency;
	if ((size_t)cl->nreq * c->producers * cl->ws > MEM_CAP)
		cl->nreq = (unsigned int)(MEM_CAP / cl->ws / c->producers);
	if (cl->nreq < 2)
		cl->nreq = 2;
	n = (size_t)cl->nreq * c->producers;
	cl->reqs = calloc(n, sizeof(*cl->reqs));
	cl->mem = aligned_alloc(64, (words * 8 * n + 63) & ~(size_t)63);
	if (cl->reqs == NULL || cl->mem == NULL)
		return -ENOMEM;
	memset(cl->mem, 0, words * 8 * n);	/* fault it in now */
	for (i = 0; i < n; i++)
		cl->reqs[i].buf = cl->mem + words * i;
	return 0;
}

static void
cell_free(struct cell *cl)
{
	free(cl->reqs);
	free(cl->mem);
}

static int
run_mode(const struct cfg *c, struct cell *cl, unsigned int mode,
		struct result *res)
{
	/*
	 * As in ewykd: every worker is a reserved-pool worker, producer p
	 * starts on worker p and production then moves between workers.
	 * "reserved" counts the spare ones, free for EPC.
	 */
	struct ewyk_reserved_conf rc = { .size = cl->reserved + c->producers,
			.spin_ns = (uint64_t)c->spin_us * 1000u };
	struct ewyk_bpool_conf bc = { .max_threads = c->pool_threads,
			.min_threads = 1, .queue_size = 4096,
			.idle_timeout_ns = 1000000000u };
	struct ewyk_strategy_conf sc = { .produce = bench_produce,
			.rejected = bench_rejected,
			.mode = mode == WATCHED ? EWYK_MODE_ADAPTIVE : mode,
			.flags = mode == WATCHED ? EWYK_STRATEGY_STEALABLE : 0,
			.watch_ns = mode == WATCHED ? c->watch_us * 1000ull : 0 };
	struct ewyk_strategy_stats st;
	struct ewyk_reserved *rp;
	struct ewyk_bpool *bp;
	struct shared *sh;
	struct run *runs, *r;
	uint64_t t0, c0, c1, deadline, a, s0[4] = { 0 }, s1[4] = { 0 };
	unsigned int i, p;
	bool busy;

	sh = calloc(1, sizeof(*sh));
	runs = aligned_alloc(64, sizeof(*runs) * c->producers);
	if (sh == NULL || runs == NULL)
		return -ENOMEM;
	memset(runs, 0, sizeof(*runs) * c->producers);
	rp = ewyk_reserved_create(&rc);
	bp = ewyk_bpool_create(&bc);
	if (rp == NULL || bp == NULL)
		goto fail;
	ewyk_executor_init(&sc.exec, bp, rp);
	t0 = now_ns();
	for (p = 0; p < c->producers; p++) {
		r = &runs[p];
		r->cfg = c;
		r->sh = sh;
		r->open = cl->open;
		r->words = cl->ws / 8 ? cl->ws / 8 : 1;
		r->rnd = c->seed + p * 0x9e3779b97f4a7c15u;
		r->gap_ns = cl->open ? 1e9 * c->producers / cl->rate : 0;
		r->next_arrival = t0;
		for (i = p * cl->nreq; i < (p + 1) * cl->nreq; i++) {
			cl->reqs[i].task.run = req_run;
			cl->reqs[i].run = r;
			cl->reqs[i].t_ready = t0;
			put_free(r, &cl->reqs[i]);
		}
		sc.ctx = r;
		r->s = ewyk_strategy_create(&sc);
		if (r->s == NULL)
			goto fail;
	}

	t0 = now_ns();
	sh->win_start = t0 + (uint64_t)c->warmup_ms * 1000000u;
	sh->win_end = sh->win_start + (uint64_t)c->duration_ms * 1000000u;
	for (p = 0; p < c->producers; p++) {
		runs[p].next_arrival = t0;
		runs[p].start.run = start_run;
		runs[p].start.type = EWYK_BLOCKING;
		while (!ewyk_reserved_try_execute_on(rp, p, &runs[p].start))
			sleep_ns(100000);	/* not idle yet */
	}
	sleep_ns(sh->win_start - now_ns());
	for (p = 0; p < c->producers; p++) {
		ewyk_strategy_stats(runs[p].s, &st);
		s0[0] += st.pc, s0[1] += st.pic, s0[2] += st.pec;
		s0[3] += st.epc;
	}
	c0 = cpu_ns();
	sleep_ns(sh->win_end - now_ns());
	c1 = cpu_ns();
	for (p = 0; p < c->producers; p++) {
		ewyk_strategy_stats(runs[p].s, &st);
		s1[0] += st.pc, s1[1] += st.pic, s1[2] += st.pec;
		s1[3] += st.epc;
	}
	atomic_store(&sh->stop, true);

	deadline = now_ns() + 30000000000u;
	do {
		busy = atomic_load(&sh->inflight) != 0;
		for (p = 0; p < c->producers; p++) {
			bell_ring(&runs[p]);
			busy |= !ewyk_strategy_quiescent(runs[p].s);
		}
		if (now_ns() > deadline) {
			fprintf(stderr, "strategy-bench: did not drain\n");
			exit(1);
		}
		if (busy)
			sleep_ns(1000000);
	} while (busy);
	ewyk_bpool_free(bp);
	ewyk_reserved_free(rp);

	/* Arrivals never served before the end waited at least until then. */
	res->unserved = 0;
	for (p = 0; cl->open && p < c->producers; p++) {
		for (a = runs[p].next_arrival; a < sh->win_end;
				a += (uint64_t)runs[p].gap_ns + 1) {
			if (a >= sh->win_start) {
				hist_add(sh, sh->win_end - a, 1);
				res->unserved++;
			}
		}
	}
	for (p = 0; p < c->producers; p++)
		ewyk_strategy_free(runs[p].s);

	res->tput = (double)atomic_load(&sh->completed) * 1000.0 /
			c->duration_ms;
	res->cpu_us = atomic_load(&sh->completed) == 0 ? 0 :
			(double)(c1 - c0) / 1000.0 /
			(double)atomic_load(&sh->completed);
	res->p50 = hist_pct(sh, 0.50);
	res->p99 = hist_pct(sh, 0.99);
	res->p999 = hist_pct(sh, 0.999);
	res->pc = s1[0] - s0[0];
	res->pic = s1[1] - s0[1];
	res->pec = s1[2] - s0[2];
	res->epc = s1[3] - s0[3];
	res->rejected = atomic_load(&sh->rejected);
	res->corrupt = atomic_load(&sh->corrupt);
	free(runs);
	free(sh);
	return 0;
fail:
	fprintf(stderr, "strategy-bench: setup failed: %s\n", strerror(errno));
	exit(1);
}

static const char *
size_str(size_t v, char *buf, size_t len)
{
	if (v >= (1u << 20) && v % (1u << 20) == 0)
		snprintf(buf, len, "%zuM", v >> 20);
	else if (v >= 1024 && v % 1024 == 0)
		snprintf(buf, len, "%zuK", v >> 10);
	else
		snprintf(buf, len, "%zu", v);
	return buf;
}

static void
print_head(const struct cfg *c, const struct cell *cl)
{
	char b[32];

	printf("\n== %s loop", cl->open ? "open" : "closed");
	if (cl->open)
		printf(" %.0f/s", cl->rate);
	printf(", %u producers, working set %s, %u spare reserved, %s %u each, "
			"block %.1f%% x %u us (%s), NON_BLOCKING-typed %.0f%% "
			"of the rest ==\n", c->producers,
			size_str(cl->ws, b, sizeof(b)), cl->reserved,
			cl->open ? "slots" : "in flight", cl->nreq,
			c->block_frac * 100, c->block_us,
			c->block_spin ? "spin" : "sleep", c->nb_typed * 100);
	printf("%-9s %10s %9s %9s %9s %10s %8s %8s %8s %8s%s\n", "mode",
			"tasks/s", "cpu us/t", "p50 us", "p99 us", "p99.9 us",
			"pc", "pic", "pec", "epc",
			cl->open ? "  unserved" : "");
}

static void
print_row(unsigned int m, const struct cell *cl, const struct result *r)
{
	printf("%-9s %10.0f %9.2f %9.1f %9.1f %10.1f %8" PRIu64 " %8" PRIu64
			" %8" PRIu64 " %8" PRIu64, mode_label[m], r->tput,
			r->cpu_us, r->p50, r->p99, r->p999, r->pc, r->pic,
			r->pec, r->epc);
	if (cl->open)
		printf("  %8" PRIu64, r->unserved);
	if (r->rejected != 0)
		printf("  rejected %" PRIu64, r->rejected);
	if (r->corrupt != 0)
		printf("  CORRUPT %" PRIu64, r->corrupt);
	printf("\n");
	fflush(stdout);
}

static int
by_tput(const void *a, const void *b)
{
	const struct result *x = a, *y = b;

	return (x->tput > y->tput) - (x->tput < y->tput);
}

/*
 * One table: every selected mode on the same cell. With --repeat, modes
 * take turns (so that a change in background load hits all of them) and
 * the run with the median throughput is shown.
 */
static void
run_cell(const struct cfg *c, struct cell *cl, struct result res[NMODES])
{
	struct result all[NMODES][MAX_REPEAT];
	unsigned int i, k, m;

	if (cell_alloc(cl, c) != 0) {
		fprintf(stderr, "strategy-bench: out of memory\n");
		exit(1);
	}
	print_head(c, cl);
	for (k = 0; k < c->repeat; k++)
		for (i = 0; i < NMODES; i++) {
			m = mode_order[i];
			if ((c->modes & (1u << m)) != 0)
				run_mode(c, cl, m, &all[m][k]);
		}
	for (i = 0; i < NMODES; i++) {
		m = mode_order[i];
		if ((c->modes & (1u << m)) == 0)
			continue;
		qsort(all[m], c->repeat, sizeof(all[m][0]), by_tput);
		res[m] = all[m][c->repeat / 2];
		print_row(m, cl, &res[m]);
	}
	cell_free(cl);
}

static double
best_tput(const struct cfg *c, const struct result res[NMODES])
{
	double best = 0;
	unsigned int m;

	for (m = 0; m < NMODES; m++)
		if ((c->modes & (1u << m)) != 0 && res[m].tput > best)
			best = res[m].tput;
	return best;
}

static void
print_ratios(const struct cfg *c, const struct result res[NMODES])
{
	const unsigned int need = (1u << EWYK_MODE_PC) | (1u << EWYK_MODE_PEC) |
			(1u << EWYK_MODE_ADAPTIVE);
	const struct result *pc = &res[EWYK_MODE_PC];
	const struct result *pec = &res[EWYK_MODE_PEC];
	const struct result *ad = &res[EWYK_MODE_ADAPTIVE];

	if ((c->modes & need) != need || pec->tput == 0 || pc->cpu_us == 0 ||
			pc->tput == 0)
		return;
	printf("   pc/pec throughput %.2fx, cpu/task pec/pc %.2fx; "
			"adaptive/pc throughput %.2fx, cpu/task %.2fx, "
			"p99 %.2fx\n", pc->tput / pec->tput,
			pec->cpu_us / pc->cpu_us, ad->tput / pc->tput,
			ad->cpu_us / pc->cpu_us,
			pc->p99 != 0 ? ad->p99 / pc->p99 : 0);
	if ((c->modes & (1u << WATCHED)) != 0 && res[WATCHED].tput != 0)
		printf("   watched/pc throughput %.2fx, cpu/task %.2fx, p99 "
				"%.2fx\n", res[WATCHED].tput / pc->tput,
				res[WATCHED].cpu_us / pc->cpu_us, pc->p99 != 0 ?
				res[WATCHED].p99 / pc->p99 : 0);
}

/* Every (working set, reserve) cell, closed loop then open loop. */
static void
run_matrix(const struct cfg *c)
{
	struct result closed[NMODES], open[NMODES];
	struct cell cl;
	unsigned int w, k;

	for (w = 0; w < c->n_ws; w++) {
		for (k = 0; k < c->n_reserved; k++) {
			memset(closed, 0, sizeof(closed));
			memset(&cl, 0, sizeof(cl));
			cl.ws = c->ws[w];
			cl.reserved = c->reserved[k];
			if ((c->loops & 1) != 0 || c->rate == 0) {
				run_cell(c, &cl, closed);
				print_ratios(c, closed);
			}
			if ((c->loops & 2) == 0)
				continue;
			memset(open, 0, sizeof(open));
			cl.open = true;
			cl.rate = c->rate != 0 ? c->rate :
					c->load * best_tput(c, closed);
			if (cl.rate < 1)
				continue;
			run_cell(c, &cl, open);
			print_ratios(c, open);
		}
	}
}

static int
parse_size(const char *s, size_t *v)
{
	char *end;
	unsigned long long n = strtoull(s, &end, 10);

	if (end == s)
		return -1;
	if (*end == 'K' || *end == 'k')
		n <<= 10, end++;
	else if (*end == 'M' || *end == 'm')
		n <<= 20, end++;
	if (*end != '\0' || n == 0)
		return -1;
	*v = (size_t)n;
	return 0;
}

static void
usage(FILE *f)
{
	fprintf(f,
"usage: strategy-bench [options]\n"
"Runs PC, PEC, EPC and adaptive (EWYK) side by side on a synthetic producer.\n"
"Without matrix options it runs two parts: (1) cache: no blocking, all tasks\n"
"typed BLOCKING (as in Jetty's benchmark), working sets 1K..8M, closed loop;\n"
"(2) head-of-line: 2%% of tasks sleep 200 us, working set 64K, reserve 0 and 2,\n"
"closed and open loop at 50%% of the best closed-loop rate.\n"
"  --modes LIST        pc,pec,epc,adaptive,watched (adaptive with a\n"
"                      watched hand-off, see --watch-us)\n"
"  --ws LIST           working set per task, e.g. 1K,64K,1M,8M\n"
"  --reserved LIST     reserved threads, e.g. 0,2\n"
"  --loop closed|open|both\n"
"  --block-frac F      fraction of tasks that block (typed BLOCKING)\n"
"  --block-us N        how long they block\n"
"  --block-mode sleep|spin\n"
"  --nb-typed F        fraction of the other tasks typed NON_BLOCKING\n"
"  --concurrency N     closed loop: requests in flight (default 16)\n"
"  --slots N           open loop: request slots (default 64)\n"
"  --load F            open loop: rate as a fraction of the best closed rate\n"
"  --rate N            open loop: fixed rate, tasks/s\n"
"  --duration MS       measured time per mode (default 500)\n"
"  --warmup MS         unmeasured time before it (default 100)\n"
"  --parse-work N      extra ALU iterations in produce (default 200)\n"
"  --handle-work N     extra ALU iterations in the task (default 500)\n"
"  --spin-us N         reserved threads spin this long before parking (50)\n"
"  --watch-us N        watched: production moves to the watching reserved\n"
"                      thread once a task has run N us (20)\n"
"  --pool-threads N    blocking pool cap (default 8)\n"
"  --producers N       producers, each its own strategy (default: cpus)\n"
"  --repeat N          runs per mode, in turns; the median is shown (1)\n"
"  --seed N\n");
}

static int
parse_args(int argc, char **argv, struct cfg *c, bool *custom)
{
	static const struct option opts[] = {
		{ "modes", required_argument, NULL, 'm' },
		{ "ws", required_argument, NULL, 'w' },
		{ "reserved", required_argument, NULL, 'r' },
		{ "loop", required_argument, NULL, 'l' },
		{ "block-frac", required_argument, NULL, 'b' },
		{ "block-us", required_argument, NULL, 'u' },
		{ "block-mode", required_argument, NULL, 'B' },
		{ "nb-typed", required_argument, NULL, 'n' },
		{ "concurrency", required_argument, NULL, 'c' },
		{ "slots", required_argument, NULL, 'S' },
		{ "load", required_argument, NULL, 'L' },
		{ "rate", required_argument, NULL, 'R' },
		{ "duration", required_argument, NULL, 'd' },
		{ "warmup", required_argument, NULL, 'W' },
		{ "parse-work", required_argument, NULL, 'p' },
		{ "handle-work", required_argument, NULL, 'h' },
		{ "spin-us", required_argument, NULL, 's' },
		{ "watch-us", required_argument, NULL, 'U' },
		{ "pool-threads", required_argument, NULL, 'P' },
		{ "producers", required_argument, NULL, 'N' },
		{ "repeat", required_argument, NULL, 'K' },
		{ "seed", required_argument, NULL, 'x' },
		{ "help", no_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 },
	};
	enum ewyk_mode m;
	char *tok, *save;
	int o;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'm':
			c->modes = 0;
			for (tok = strtok_r(optarg, ",", &save); tok != NULL;
					tok = strtok_r(NULL, ",", &save)) {
				if (strcmp(tok, "watched") == 0)
					c->modes |= 1u << WATCHED;
				else if (ewyk_mode_parse(tok, &m) != 0)
					return -1;
				else
					c->modes |= 1u << m;
			}
			break;
		case 'w':
			*custom = true;
			c->n_ws = 0;
			for (tok = strtok_r(optarg, ",", &save); tok != NULL &&
					c->n_ws < MAX_LIST;
					tok = strtok_r(NULL, ",", &save))
				if (parse_size(tok, &c->ws[c->n_ws++]) != 0)
					return -1;
			break;
		case 'r':
			*custom = true;
			c->n_reserved = 0;
			for (tok = strtok_r(optarg, ",", &save); tok != NULL &&
					c->n_reserved < MAX_LIST;
					tok = strtok_r(NULL, ",", &save))
				c->reserved[c->n_reserved++] =
						(unsigned int)atoi(tok);
			break;
		case 'l':
			*custom = true;
			if (strcmp(optarg, "closed") == 0)
				c->loops = 1;
			else if (strcmp(optarg, "open") == 0)
				c->loops = 2;
			else if (strcmp(optarg, "both") == 0)
				c->loops = 3;
			else
				return -1;
			break;
		case 'b':
			*custom = true;
			c->block_frac = atof(optarg);
			break;
		case 'u':
			c->block_us = (unsigned int)atoi(optarg);
			break;
		case 'B':
			c->block_spin = strcmp(optarg, "spin") == 0;
			break;
		case 'n':
			*custom = true;
			c->nb_typed = atof(optarg);
			break;
		case 'c':
			c->concurrency = (unsigned int)atoi(optarg);
			break;
		case 'S':
			c->slots = (unsigned int)atoi(optarg);
			break;
		case 'L':
			c->load = atof(optarg);
			break;
		case 'R':
			*custom = true;
			c->rate = atof(optarg);
			break;
		case 'd':
			c->duration_ms = (unsigned int)atoi(optarg);
			break;
		case 'W':
			c->warmup_ms = (unsigned int)atoi(optarg);
			break;
		case 'p':
			c->parse_work = (unsigned int)atoi(optarg);
			break;
		case 'h':
			c->handle_work = (unsigned int)atoi(optarg);
			break;
		case 'U':
			c->watch_us = (unsigned int)atoi(optarg);
			break;
		case 's':
			c->spin_us = (unsigned int)atoi(optarg);
			break;
		case 'P':
			c->pool_threads = (unsigned int)atoi(optarg);
			break;
		case 'N':
			c->producers = (unsigned int)atoi(optarg);
			break;
		case 'K':
			c->repeat = (unsigned int)atoi(optarg);
			break;
		case 'x':
			c->seed = strtoull(optarg, NULL, 0);
			break;
		case 'H':
			usage(stdout);
			exit(0);
		default:
			return -1;
		}
	}
	if (optind != argc || c->duration_ms == 0 || c->concurrency == 0 ||
			c->slots == 0 || c->pool_threads == 0 || c->modes == 0 ||
			c->producers == 0 || c->producers > 64 ||
			c->repeat == 0 || c->repeat > MAX_REPEAT ||
			c->block_frac < 0 || c->block_frac > 1)
		return -1;
	return 0;
}

int
main(int argc, char **argv)
{
	struct cfg c = {
		.modes = 0x1f,
		.watch_us = 20,
		.ws = { 64 << 10 },
		.n_ws = 1,
		.reserved = { 2 },
		.n_reserved = 1,
		.loops = 3,
		.block_frac = 0.02,
		.block_us = 200,
		.nb_typed = 0.5,
		.concurrency = 16,
		.slots = 64,
		.load = 0.5,
		.duration_ms = 500,
		.warmup_ms = 100,
		.parse_work = 200,
		.handle_work = 500,
		.spin_us = 50,
		.pool_threads = 8,
		.repeat = 1,
		.seed = 0x5eed,
	};
	bool custom = false;
	struct cfg part;

	c.producers = (unsigned int)sysconf(_SC_NPROCESSORS_ONLN);
	if (parse_args(argc, argv, &c, &custom) != 0) {
		usage(stderr);
		return 2;
	}
	printf("strategy-bench: %ld cpus, %u producers, %u ms per mode after "
			"%u ms warm-up, median of %u, parse-work %u, "
			"handle-work %u, reserved spin %u us, pool cap %u\n",
			sysconf(_SC_NPROCESSORS_ONLN), c.producers,
			c.duration_ms, c.warmup_ms, c.repeat, c.parse_work,
			c.handle_work, c.spin_us, c.pool_threads);
	if (custom) {
		run_matrix(&c);
		return 0;
	}

	printf("\n# Part 1, cache: no task blocks, all typed BLOCKING; "
			"PC consumes hot, PEC cold, EPC/adaptive hand "
			"production over\n");
	part = c;
	part.block_frac = 0;
	part.nb_typed = 0;
	part.loops = 1;
	part.n_ws = 4;
	part.ws[0] = 1 << 10;
	part.ws[1] = 64 << 10;
	part.ws[2] = 1 << 20;
	part.ws[3] = 8 << 20;
	run_matrix(&part);

	printf("\n# Part 2, head-of-line blocking: some tasks sleep; "
			"half the others are typed NON_BLOCKING\n");
	part = c;
	part.n_reserved = 2;
	part.reserved[0] = 0;
	part.reserved[1] = 2;
	run_matrix(&part);
	return 0;
}
