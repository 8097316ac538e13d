/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ewyk_exec: the "Eat What You Kill" execution strategy and its two pools.
 *
 * - Tasks carry an invocation type (NON_BLOCKING, BLOCKING, EITHER).
 * - A strategy serialises one producer: whoever holds its state word in
 *   PRODUCING is the only caller of produce(). For each task it picks PC,
 *   PIC, PEC or EPC (docs/strategy.md has the decision table).
 * - The reserved pool is the "try execute" side: a thread that takes a task
 *   now, or a refusal. It never queues, never blocks, never takes a lock.
 * - The blocking pool is the "execute" side: a bounded queue over ordinary
 *   threads; a full queue is a distinct rejection.
 *
 * Plain pthreads, no DPDK. Thread creation of the reserved pool is pluggable
 * so that its loop can run on EAL lcores.
 */

#ifndef EWYK_EXEC_H
#define EWYK_EXEC_H

#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- tasks ------------------------------------------------------------ */

enum ewyk_invocation {
	EWYK_NON_BLOCKING,	/* never blocks: always safe inline */
	EWYK_BLOCKING,		/* may block: may be deferred to a pool */
	EWYK_EITHER,		/* may block, must not be deferred */
	EWYK_FIBER_CAPABLE,	/* waits only by parking its fiber: run inline
				 * as a fiber where the strategy's fiber hook
				 * has one, else as BLOCKING */
};

/* How a task was consumed; written into the task before it runs. */
enum ewyk_consume {
	EWYK_PC,	/* produce-consume: inline, production continues */
	EWYK_PIC,	/* inline under the non-blocking flag */
	EWYK_PEC,	/* queued to the blocking pool */
	EWYK_EPC,	/* production handed over, consumed inline */
	EWYK_FIBER,	/* inline on a fiber of the producer's: a wait
			 * parks the fiber, production goes on */
};

/*
 * A unit of work. Embed it in your own struct and use container_of.
 * run() returns >= 0 on success, < 0 on failure (counted, nothing else).
 * A task may be passed to the pools more than once at a time only if its
 * run() is reentrant; the strategy's own "pending producer" task is.
 */
struct ewyk_task {
	int (*run)(struct ewyk_task *task);
	uint8_t type;		/* enum ewyk_invocation */
	uint8_t mode;		/* enum ewyk_consume, set by the strategy */
	uint8_t kind;		/* the embedder's, to tell its tasks apart in
				 * the consumed and rejected hooks; never read
				 * by the strategy */
} __attribute__((aligned(8)));

/* Per-thread non-blocking flag: "this thread must not block". */
bool ewyk_nonblocking(void);
/* Set the flag, return its previous value. */
bool ewyk_nonblocking_set(bool on);

/* x86 PAUSE (or the closest relative) for spin loops. */
static inline void
ewyk_cpu_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield" ::: "memory");
#else
	__asm__ volatile("" ::: "memory");
#endif
}

/* ---- executors -------------------------------------------------------- */

/* execute() on a full queue. */
#define EWYK_REJECTED (-EAGAIN)

/*
 * What a strategy runs its work on. Both functions may be NULL.
 * execute: run the task some time on some thread (may queue); 0, or
 *          EWYK_REJECTED / another negative errno if it will not run.
 * try_execute: a thread takes the task now, exclusively; false otherwise.
 *          Never blocks, never queues.
 */
struct ewyk_executor {
	int (*execute)(void *ctx, struct ewyk_task *task);
	void *execute_ctx;
	bool (*try_execute)(void *ctx, struct ewyk_task *task);
	void *try_execute_ctx;
};

struct ewyk_reserved;
struct ewyk_bpool;

/* Fill an executor from the two pools (either may be NULL). */
void ewyk_executor_init(struct ewyk_executor *ex, struct ewyk_bpool *bp,
		struct ewyk_reserved *rp);

/* ---- strategy --------------------------------------------------------- */

/* Runtime switch: adaptive, or force one mode for comparisons. */
enum ewyk_mode {
	EWYK_MODE_ADAPTIVE,
	EWYK_MODE_PC,	/* every task inline: head-of-line blocking */
	EWYK_MODE_PEC,	/* every task but NON_BLOCKING to the blocking pool */
	EWYK_MODE_EPC,	/* hand production over for every task if a
			 * helper is free; else as adaptive */
};

/* Flags for struct ewyk_strategy_conf. */
#define EWYK_STRATEGY_STEALABLE 0x1	/* allow ewyk_strategy_steal() */

struct ewyk_strategy_conf {
	/*
	 * Next task, or NULL to stop producing. One caller at a time.
	 * Production may move to another thread as soon as it returns a
	 * task, so flush pending output first.
	 */
	struct ewyk_task *(*produce)(void *ctx);
	/*
	 * Optional. A task ran inline (PC, PIC, EPC) on the calling thread,
	 * with result rc; owner tells whether this thread owns production
	 * now (false after EPC lost the race back, or after a steal).
	 * With this hook set, run() must not free the task.
	 */
	void (*consumed)(void *ctx, struct ewyk_task *task, int rc,
			bool owner);
	/* Optional. PEC was refused (err < 0); called on the owner. */
	void (*rejected)(void *ctx, struct ewyk_task *task, int err);
	void *ctx;
	struct ewyk_executor exec;
	enum ewyk_mode mode;
	unsigned int flags;
	/*
	 * Watched hand-off (adaptive mode, STEALABLE only; 0 = off, Jetty's
	 * way): where EPC would hand production over before every BLOCKING
	 * or EITHER task, the owner runs the task itself while a reserved
	 * thread watches it, and production moves to the watcher only once
	 * the task has run watch_ns: a task that does not block keeps the
	 * hot cache and pays no hand-off; one that blocks holds the producer
	 * up for watch_ns at most. Counted as EPC.
	 */
	uint64_t watch_ns;
	/*
	 * Optional: fibers for EWYK_FIBER_CAPABLE tasks, asked by the owner
	 * before each such task. Returns > 0 when the task resumes a parked
	 * fiber (run as FIBER whatever the mode: only a fiber can go on), 0
	 * when a fiber is free (FIBER in adaptive mode; forced modes treat
	 * the task as BLOCKING), < 0 when none is (adaptive: counted as
	 * fiber_fallback, then decided as BLOCKING: EPC or PEC). NULL: no
	 * fibers, such tasks are BLOCKING. A FIBER task runs like PC, marked
	 * inline when STEALABLE, so a fiber that computes long without
	 * parking loses production to ewyk_strategy_steal() like any other.
	 */
	int (*fiber)(void *ctx, struct ewyk_task *task);
};

struct ewyk_strategy_stats {
	uint64_t pc, pic, pec, epc;	/* tasks consumed per mode */
	uint64_t fiber;		/* fiber starts and resumes */
	uint64_t fiber_fallback;	/* fiber-capable, no fiber free */
	uint64_t failed;	/* run() < 0 */
	uint64_t rejected;	/* PEC refused by the executor */
	uint64_t stolen;	/* production taken from a stuck owner */
	uint64_t watched;	/* EPC tasks run by the owner under a watcher */
	uint64_t dispatch_failed;	/* dispatch() could not start */
	unsigned int state;	/* 0 idle, 1 producing, 2 reproducing */
	int pending;		/* reserved helpers claimed, not arrived */
	bool queued;		/* a producer is queued on the blocking pool */
	bool inline_busy;	/* the owner is running a task inline */
	enum ewyk_mode mode;
};

struct ewyk_strategy;

/* Allocates; call at start-up. NULL with errno set on error. */
struct ewyk_strategy *ewyk_strategy_create(
		const struct ewyk_strategy_conf *conf);
/* Only when quiescent (no producer, no pending helper). */
void ewyk_strategy_free(struct ewyk_strategy *s);

/*
 * Produce and consume on the calling thread until the producer returns
 * NULL or production moves to another thread. If another thread is
 * producing, make it poll once more and return at once.
 */
void ewyk_strategy_produce(struct ewyk_strategy *s);

/*
 * Same, but never on the calling thread: production is started on a
 * reserved thread (exec.try_execute), else queued (exec.execute). Returns 0,
 * or a negative errno if no thread could be started; then call produce() or
 * dispatch() again later, or work signalled meanwhile may wait.
 */
int ewyk_strategy_dispatch(struct ewyk_strategy *s);

void ewyk_strategy_set_mode(struct ewyk_strategy *s, enum ewyk_mode mode);
enum ewyk_mode ewyk_strategy_get_mode(const struct ewyk_strategy *s);
void ewyk_strategy_stats(const struct ewyk_strategy *s,
		struct ewyk_strategy_stats *st);
/* True when nobody produces and no helper is on its way. */
bool ewyk_strategy_quiescent(const struct ewyk_strategy *s);

/*
 * Stuck-owner relief, EWYK_STRATEGY_STEALABLE only.
 * inline_token() is 0 unless the owner is inside one inline task; the same
 * non-zero token means the same task. A monitor that sees one token for too
 * long calls steal(): if the owner is still inside that task, the caller
 * becomes the owner and runs production until it stops or moves on, then
 * returns true. The old owner gets consumed(..., owner = false) and leaves.
 */
uint64_t ewyk_strategy_inline_token(const struct ewyk_strategy *s);
/*
 * The owner consumed a short NON_BLOCKING task itself, from inside
 * produce(), without handing it to the strategy (PC by the decision
 * table, whatever the mode): counted as PC. Such a task is not stealable,
 * so only work bounded by construction may take this path.
 */
void ewyk_strategy_consumed_in_produce(struct ewyk_strategy *s);
bool ewyk_strategy_steal(struct ewyk_strategy *s, uint64_t token);

const char *ewyk_mode_name(enum ewyk_mode mode);
int ewyk_mode_parse(const char *name, enum ewyk_mode *mode);
const char *ewyk_consume_name(enum ewyk_consume c);

/* ---- reserved pool ---------------------------------------------------- */

/*
 * Where the reserved loop runs. start() runs fn(arg) on a thread or lcore
 * of its own for worker idx; join() waits until fn has returned. Matches
 * rte_eal_remote_launch() / rte_eal_wait_lcore() with an idx -> lcore map.
 */
struct ewyk_reserved_ops {
	int (*start)(void *ctx, unsigned int idx, int (*fn)(void *),
			void *arg);
	int (*join)(void *ctx, unsigned int idx);
	void *ctx;
};

struct ewyk_reserved_conf {
	unsigned int size;	/* reserved threads; 0 = try_execute fails */
	uint64_t spin_ns;	/* spin with PAUSE before parking;
				 * UINT64_MAX = never park */
	const struct ewyk_reserved_ops *ops;	/* NULL: pthreads */
	/*
	 * Optional, called every few microseconds while spinning. May return
	 * a task to run on this thread (e.g. one that steals a stuck shard);
	 * it is run after the thread has left the idle set.
	 */
	struct ewyk_task *(*idle_poll)(void *arg);
	void *idle_arg;
};

struct ewyk_reserved_stats {
	unsigned int size;
	unsigned int spinning;	/* idle, spinning (sampled) */
	unsigned int parked;	/* idle, parked on the futex (sampled) */
	uint64_t claims_won;	/* try_execute handed a task over */
	uint64_t claims_missed;	/* try_execute found nobody idle */
	uint64_t claim_races;	/* a claim CAS lost to another claimer */
};

/* Starts the workers; NULL with errno set on error. */
struct ewyk_reserved *ewyk_reserved_create(
		const struct ewyk_reserved_conf *conf);
/* Claim the most recently idle worker for task. Lock-free, never waits. */
bool ewyk_reserved_try_execute(struct ewyk_reserved *rp,
		struct ewyk_task *task);
/* Same, but only worker idx (e.g. to start shard i on lcore i). */
bool ewyk_reserved_try_execute_on(struct ewyk_reserved *rp,
		unsigned int idx, struct ewyk_task *task);
/* Wake everyone, let running tasks finish, join. Idempotent. */
void ewyk_reserved_stop(struct ewyk_reserved *rp);
void ewyk_reserved_free(struct ewyk_reserved *rp);
void ewyk_reserved_stats(const struct ewyk_reserved *rp,
		struct ewyk_reserved_stats *st);
/* Worker index of the calling thread, -1 if not a reserved worker. */
int ewyk_reserved_self(void);

/* ---- room on a helper's CPUs --------------------------------------------- */

/*
 * Whether the CPUs a helper runs on (the blocking pool's) have half a CPU
 * free of other work over the last interval: the kernel's accounts of
 * those CPUs, less the pool's own busy time. Sampled by one thread now
 * and then; spare is read by any.
 */
struct ewyk_cpu_watch {
	cpu_set_t cpus;
	uint64_t ns_per_tick;	/* of /proc/stat's counts (USER_HZ) */
	uint64_t total, busy;	/* the last sample's ticks */
	uint64_t pool_ns;	/* and the pool's busy time then */
	uint64_t samples;
	uint64_t busy_samples;	/* found without room */
	unsigned int others_pct;	/* others' share of one CPU, last */
	atomic_bool spare;
};

void ewyk_cpu_watch_init(struct ewyk_cpu_watch *w, const cpu_set_t *cpus,
		unsigned int hz);
/* One sample from /proc/stat's text and the pool's busy time so far:
 * the new verdict (the first sample only sets the baseline). */
bool ewyk_cpu_watch_sample(struct ewyk_cpu_watch *w, const char *proc_stat,
		uint64_t pool_busy_ns);
/* The same, reading /proc/stat. */
bool ewyk_cpu_watch_read(struct ewyk_cpu_watch *w, uint64_t pool_busy_ns);

/* ---- blocking pool ---------------------------------------------------- */

struct ewyk_bpool_conf {
	unsigned int max_threads;	/* cap, >= 1 */
	unsigned int min_threads;	/* never reaped */
	unsigned int queue_size;	/* bounded queue, >= 1 */
	uint64_t idle_timeout_ns;	/* reap idle threads above min */
	/* The CPUs its threads run on (copied); NULL: those of the thread
	 * that starts each, which for one started by a pinned polling thread
	 * is that thread's core. */
	const cpu_set_t *cpus;
};

struct ewyk_bpool_stats {
	unsigned int threads;	/* alive */
	unsigned int idle;	/* waiting for work */
	unsigned int peak_threads;
	unsigned int queued;
	uint64_t executed;	/* tasks run */
	uint64_t busy_ns;	/* running them */
	uint64_t rejected;	/* execute() on a full queue */
	uint64_t started;	/* threads created */
	uint64_t reaped;	/* threads ended by idleness */
};

struct ewyk_bpool *ewyk_bpool_create(const struct ewyk_bpool_conf *conf);
/* 0, EWYK_REJECTED on a full queue, -ESHUTDOWN after stop. */
int ewyk_bpool_execute(struct ewyk_bpool *bp, struct ewyk_task *task);
/* Run what is queued, then join every thread. Idempotent. */
void ewyk_bpool_stop(struct ewyk_bpool *bp);
void ewyk_bpool_free(struct ewyk_bpool *bp);
void ewyk_bpool_stats(struct ewyk_bpool *bp, struct ewyk_bpool_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* EWYK_EXEC_H */
