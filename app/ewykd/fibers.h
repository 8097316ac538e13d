/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fibers on a shard: FIBER-mode requests run on the shard's fiber pool,
 * and their blocking calls park the fiber on a wait (struct ewyk_wait)
 * that the shard's owner arms, times and ends: a timer, a wake from a
 * shard callback, a durable store write, or the client leaving. A woken
 * fiber is queued like a new request and resumed, through the strategy,
 * on whichever lcore owns the shard then.
 */
#ifndef EWYKD_FIBERS_H
#define EWYKD_FIBERS_H

#include <stddef.h>
#include <stdint.h>

#include "dispatch.h"

struct ewykd_config;
struct store;

/* The pool (--fibers, --fiber-stack) and the timer heap for ntasks. */
int shard_fibers_init(struct shard *s, const struct ewykd_config *cfg,
		uint32_t ntasks);
/* After production stopped for good: the stacks, parked fibers too. */
void shard_fibers_fini(struct shard *s);
/* The strategy's fiber hook (struct ewyk_strategy_conf.fiber). */
int fibers_hook(void *ctx, struct ewyk_task *task);
/* On the owner, once t's fiber parked: its wait is armed. */
void fiber_arm(struct shard *s, struct route_task *t);
/* On the owner, every poll: due timers, clients gone (every 10 ms),
 * durable writes. Returns the fibers woken. */
unsigned int fibers_poll(struct shard *s);
/* On the owner: ends the wait like ewyk_wait_wake(), with result
 * (-ECANCELED counted as a client gone); disarm runs if result != 0. */
void fiber_wait_end(struct ewyk_wait *w, int result);
/* On the owner: the wait made progress, its timeout starts again (a wait
 * that has one and is still on). */
void fiber_wait_renew(struct ewyk_wait *w, uint32_t timeout_ms);
/* In an arm or disarm callback: the shard of the wait's fiber. */
struct shard *fiber_wait_shard(const struct ewyk_wait *w);
/* Waits until the key's version is on disk: parks on a fiber, blocks on
 * a thread (and where only a blocking call can sync: no write-behind).
 * 0, -ETIMEDOUT, -ECANCELED, or the store's -ENOTSUP / -ENOENT. */
int fiber_wait_durable(struct ewyk_request *req, struct store *st,
		const char *key, size_t klen, uint64_t version,
		uint32_t timeout_ms);

#endif /* EWYKD_FIBERS_H */
