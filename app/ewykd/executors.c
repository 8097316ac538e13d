/* SPDX-License-Identifier: BSD-3-Clause */
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include "executors.h"
#include "ewykd.h"
#include "shard.h"

/* How long the stop waits for pool threads to leave their handlers. */
#define SETTLE_MS 2000

/* Reserved workers are EAL lcores, launched like any lcore function. */
static int
lcore_start(void *ctx, unsigned int idx, int (*fn)(void *), void *arg)
{
	const struct ewykd *e = ctx;

	return rte_eal_remote_launch(fn, arg, e->workers[idx]);
}

static int
lcore_join(void *ctx, unsigned int idx)
{
	const struct ewykd *e = ctx;

	return rte_eal_wait_lcore(e->workers[idx]);
}

/* The blocking pool's CPUs: every online one but those of the worker
 * lcores, which poll (shards) or may take the polling over (reserved);
 * all of them when that leaves none. Without this a pool thread started
 * by a shard's lcore would share that lcore's one core. */
static void
pool_cpus(const struct ewykd *e, cpu_set_t *set)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN), c;
	unsigned int i;

	CPU_ZERO(set);
	for (c = 0; c < n && c < CPU_SETSIZE; c++)
		CPU_SET((int)c, set);
	for (i = 0; i < e->nb_workers; i++) {
		rte_cpuset_t w = rte_lcore_cpuset(e->workers[i]);

		for (c = 0; c < n && c < CPU_SETSIZE; c++)
			if (CPU_ISSET((int)c, &w))
				CPU_CLR((int)c, set);
	}
	if (CPU_COUNT(set) == 0)
		for (c = 0; c < n && c < CPU_SETSIZE; c++)
			CPU_SET((int)c, set);
}

int
executors_create(struct ewykd *e)
{
	cpu_set_t cpus;
	const struct ewykd_config *cfg = &e->cfg;
	const struct ewyk_reserved_ops ops = {
		.start = lcore_start,
		.join = lcore_join,
		.ctx = e,
	};
	struct ewyk_reserved_conf rc = {
		.size = e->nb_workers,
		.spin_ns = (uint64_t)cfg->reserved_spin_us * 1000,
		.ops = &ops,
	};
	struct ewyk_bpool_conf bc = {
		.max_threads = cfg->blocking_threads,
		.min_threads = 1,
		.queue_size = cfg->blocking_queue,
		.idle_timeout_ns = 5ull * 1000 * 1000 * 1000,
		.cpus = &cpus,
	};

	pool_cpus(e, &cpus);
	ewyk_cpu_watch_init(&e->cpu_room, &cpus,
			(unsigned int)sysconf(_SC_CLK_TCK));
	e->bpool = ewyk_bpool_create(&bc);
	if (e->bpool == NULL)
		return -1;
	if (e->nb_workers > 0) {
		e->reserved = ewyk_reserved_create(&rc);
		if (e->reserved == NULL)
			return -1;
	}
	return 0;
}

/* How often the pool's CPUs are looked at: 10 of the kernel's 100 Hz
 * ticks, and a verdict that follows a change within 0.1 s. */
#define ROOM_PERIOD_MS 100

void
executors_watch(struct ewykd *e, uint64_t now_ms)
{
	uint16_t i;

	if (e->bpool != NULL && now_ms >= e->cpu_room_next_ms) {
		struct ewyk_bpool_stats st;

		ewyk_bpool_stats(e->bpool, &st);
		ewyk_cpu_watch_read(&e->cpu_room, st.busy_ns);
		e->cpu_room_next_ms = now_ms + ROOM_PERIOD_MS;
	}
	if (e->cfg.stuck_ms == 0 || e->reserved == NULL)
		return;
	for (i = 0; i < e->shards_ready; i++)
		serve_watchdog(e->shards[i].serve, e->reserved, now_ms,
				e->cfg.stuck_ms);
}

/* Pool threads still inside a handler, perhaps waiting for an owner that
 * no longer polls: the main lcore is every shard's owner now, and ends
 * their waits until they are out. */
static void
settle(struct ewykd *e)
{
	uint64_t end = rte_get_tsc_cycles() + rte_get_tsc_hz() / 1000 * SETTLE_MS;
	struct ewyk_bpool_stats st;
	uint16_t i;

	for (;;) {
		unsigned int did = 0;

		for (i = 0; i < e->shards_ready; i++)
			did += serve_finish(e->shards[i].serve);
		ewyk_bpool_stats(e->bpool, &st);
		if ((did == 0 && st.idle == st.threads && st.queued == 0) ||
				rte_get_tsc_cycles() > end)
			return;
		usleep(1000);
	}
}

void
executors_stop(struct ewykd *e)
{
	uint16_t i;

	/* Producers see force_quit and return NULL; helpers on their way
	 * arrive, find nothing to do and go idle. A shard whose set-up
	 * failed has no strategy, and one never started is quiescent. */
	for (i = 0; i < e->shards_ready; i++)
		while (!ewyk_strategy_quiescent(serve_strategy(e->shards[i].serve)))
			usleep(1000);
	if (e->bpool != NULL) {
		settle(e);
		ewyk_bpool_stop(e->bpool);	/* queued tasks run and post */
	}
	if (e->reserved != NULL)
		ewyk_reserved_stop(e->reserved);
	for (i = 0; i < e->shards_ready; i++)
		serve_finish(e->shards[i].serve);
}
