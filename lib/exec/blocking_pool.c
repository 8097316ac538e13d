/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Blocking pool: ordinary threads for tasks that may block (PEC).
 *
 * A mutex and a condition variable guard a bounded ring: a preempted
 * holder only delays others, it cannot wedge them as a preempted spinner
 * on a lock-free ring could. Threads start on demand up to a cap and end
 * after idling above the minimum. A full ring is refused, not waited on.
 */

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ewyk_exec.h"
#include "exec_sys.h"

enum { TH_FREE, TH_RUNNING, TH_EXITED };

struct bthread {
	struct ewyk_bpool *pool;
	pthread_t tid;
	int state;
};

struct ewyk_bpool {
	pthread_mutex_t lock;
	pthread_cond_t work;
	struct ewyk_task **ring;
	unsigned int cap, head, count;
	unsigned int max_threads, min_threads;
	uint64_t idle_ns;
	unsigned int threads, idle, peak;
	uint64_t executed, rejected, started, reaped, busy_ns;
	bool stopping, joined;
	bool pinned;
	cpu_set_t cpus;
	struct bthread *th;
};

static void
deadline_after(struct timespec *ts, uint64_t ns)
{
	uint64_t t = exec_now_ns() + ns;

	ts->tv_sec = (time_t)(t / 1000000000u);
	ts->tv_nsec = (long)(t % 1000000000u);
}

static void *
worker(void *arg)
{
	struct bthread *me = arg;
	struct ewyk_bpool *bp = me->pool;
	struct ewyk_task *t;
	struct timespec dl;
	uint64_t t0;
	int rc;

	/* Its own name, not the creator's (an lcore's): tools and the tests
	 * tell pool threads from lcores by it. */
	pthread_setname_np(pthread_self(), "ewyk-pool");
	pthread_mutex_lock(&bp->lock);
	for (;;) {
		if (bp->count == 0) {
			if (bp->stopping)
				break;
			deadline_after(&dl, bp->idle_ns);
			rc = 0;
			bp->idle++;
			while (bp->count == 0 && !bp->stopping && rc == 0) {
				if (bp->threads > bp->min_threads &&
						bp->idle_ns != 0)
					rc = pthread_cond_timedwait(&bp->work,
							&bp->lock, &dl);
				else
					rc = pthread_cond_wait(&bp->work,
							&bp->lock);
			}
			bp->idle--;
			if (bp->count == 0 && !bp->stopping &&
					bp->threads > bp->min_threads) {
				bp->reaped++;
				break;
			}
			continue;
		}
		t = bp->ring[bp->head];
		bp->head = (bp->head + 1) % bp->cap;
		bp->count--;
		pthread_mutex_unlock(&bp->lock);
		t0 = exec_now_ns();
		t->run(t);
		t0 = exec_now_ns() - t0;
		pthread_mutex_lock(&bp->lock);
		bp->executed++;
		bp->busy_ns += t0;
	}
	bp->threads--;
	if (me->state == TH_RUNNING)	/* stop() may have claimed the join */
		me->state = TH_EXITED;
	pthread_mutex_unlock(&bp->lock);
	return NULL;
}

/* Called with the lock held. */
static int
spawn(struct ewyk_bpool *bp)
{
	struct bthread *th = NULL;
	unsigned int i;
	int rc;

	for (i = 0; i < bp->max_threads; i++) {
		if (bp->th[i].state != TH_RUNNING) {
			th = &bp->th[i];
			break;
		}
	}
	if (th == NULL)
		return -EAGAIN;
	if (th->state == TH_EXITED)
		pthread_join(th->tid, NULL);	/* gone, or nearly */
	th->state = TH_FREE;
	if (bp->pinned) {
		pthread_attr_t attr;

		pthread_attr_init(&attr);
		pthread_attr_setaffinity_np(&attr, sizeof(bp->cpus), &bp->cpus);
		rc = pthread_create(&th->tid, &attr, worker, th);
		pthread_attr_destroy(&attr);
	} else {
		rc = pthread_create(&th->tid, NULL, worker, th);
	}
	if (rc != 0)
		return -rc;
	th->state = TH_RUNNING;
	bp->threads++;
	bp->started++;
	if (bp->threads > bp->peak)
		bp->peak = bp->threads;
	return 0;
}

int
ewyk_bpool_execute(struct ewyk_bpool *bp, struct ewyk_task *task)
{
	pthread_mutex_lock(&bp->lock);
	if (bp->stopping) {
		pthread_mutex_unlock(&bp->lock);
		return -ESHUTDOWN;
	}
	if (bp->count == bp->cap) {
		bp->rejected++;
		pthread_mutex_unlock(&bp->lock);
		return EWYK_REJECTED;
	}
	bp->ring[(bp->head + bp->count) % bp->cap] = task;
	bp->count++;
	/* Idle threads that were signalled may not have taken theirs yet. */
	if (bp->count > bp->idle && bp->threads < bp->max_threads &&
			spawn(bp) != 0 && bp->threads == 0) {
		bp->count--;
		bp->rejected++;
		pthread_mutex_unlock(&bp->lock);
		return EWYK_REJECTED;
	}
	if (bp->idle > 0)
		pthread_cond_signal(&bp->work);
	pthread_mutex_unlock(&bp->lock);
	return 0;
}

struct ewyk_bpool *
ewyk_bpool_create(const struct ewyk_bpool_conf *conf)
{
	struct ewyk_bpool *bp;
	pthread_condattr_t ca;
	unsigned int i;

	if (conf == NULL || conf->max_threads == 0 || conf->queue_size == 0 ||
			conf->min_threads > conf->max_threads) {
		errno = EINVAL;
		return NULL;
	}
	bp = calloc(1, sizeof(*bp));
	if (bp == NULL)
		return NULL;
	bp->ring = calloc(conf->queue_size, sizeof(*bp->ring));
	bp->th = calloc(conf->max_threads, sizeof(*bp->th));
	if (bp->ring == NULL || bp->th == NULL) {
		free(bp->ring);
		free(bp->th);
		free(bp);
		return NULL;
	}
	bp->cap = conf->queue_size;
	bp->max_threads = conf->max_threads;
	bp->min_threads = conf->min_threads;
	bp->idle_ns = conf->idle_timeout_ns;
	if (conf->cpus != NULL && CPU_COUNT(conf->cpus) > 0) {
		bp->pinned = true;
		bp->cpus = *conf->cpus;
	}
	for (i = 0; i < bp->max_threads; i++)
		bp->th[i].pool = bp;
	pthread_mutex_init(&bp->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&bp->work, &ca);
	pthread_condattr_destroy(&ca);

	pthread_mutex_lock(&bp->lock);
	for (i = 0; i < bp->min_threads; i++) {
		if (spawn(bp) != 0) {
			pthread_mutex_unlock(&bp->lock);
			ewyk_bpool_free(bp);
			errno = EAGAIN;
			return NULL;
		}
	}
	pthread_mutex_unlock(&bp->lock);
	return bp;
}

void
ewyk_bpool_stop(struct ewyk_bpool *bp)
{
	unsigned int i;
	pthread_t tid;

	if (bp == NULL)
		return;
	pthread_mutex_lock(&bp->lock);
	if (bp->joined) {
		pthread_mutex_unlock(&bp->lock);
		return;
	}
	bp->stopping = true;
	pthread_cond_broadcast(&bp->work);
	/* No thread starts from now on: execute() refuses. */
	for (i = 0; i < bp->max_threads; i++) {
		if (bp->th[i].state == TH_FREE)
			continue;
		tid = bp->th[i].tid;
		bp->th[i].state = TH_FREE;
		pthread_mutex_unlock(&bp->lock);
		pthread_join(tid, NULL);
		pthread_mutex_lock(&bp->lock);
	}
	bp->joined = true;
	pthread_mutex_unlock(&bp->lock);
}

void
ewyk_bpool_free(struct ewyk_bpool *bp)
{
	if (bp == NULL)
		return;
	ewyk_bpool_stop(bp);
	pthread_cond_destroy(&bp->work);
	pthread_mutex_destroy(&bp->lock);
	free(bp->ring);
	free(bp->th);
	free(bp);
}

void
ewyk_bpool_stats(struct ewyk_bpool *bp, struct ewyk_bpool_stats *st)
{
	pthread_mutex_lock(&bp->lock);
	st->threads = bp->threads;
	st->idle = bp->idle;
	st->peak_threads = bp->peak;
	st->queued = bp->count;
	st->executed = bp->executed;
	st->busy_ns = bp->busy_ns;
	st->rejected = bp->rejected;
	st->started = bp->started;
	st->reaped = bp->reaped;
	pthread_mutex_unlock(&bp->lock);
}
