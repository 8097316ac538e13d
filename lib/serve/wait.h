/* SPDX-License-Identifier: BSD-3-Clause */
/* Waits: a fiber parks, a thread blocks; the owner arms and ends them. */
#ifndef EWYK_SERVE_WAIT_H
#define EWYK_SERVE_WAIT_H

#include "task.h"

int waits_init(struct serve *sv);
void waits_fini(struct serve *sv);
/* The strategy's fiber hook. */
int waits_fiber_hook(void *ctx, struct ewyk_task *task);
/* Runs t's handler on a fiber (starting or resuming it): the handler's
 * outcome, or TASK_PARKED. */
int wait_fiber_run(struct serve_task *t);
/* Whether t's handler may wait here: on its fiber, or on a thread that
 * is not the shard's owner and may block. */
bool wait_may_park(const struct serve_task *t);
/* On the owner, once t's handler parked: its wait is armed. */
void wait_arm(struct serve_task *t);
/* On the owner: ends the wait like ewyk_wait_wake(), with result
 * (-ECANCELED counted as a client gone); disarm runs if result != 0. */
void wait_end(struct ewyk_wait *w, int result);
/* On the owner: the wait made progress, its timeout starts again. */
void wait_renew(struct ewyk_wait *w);
/* Once production stopped: every armed wait ends, cancelled. */
unsigned int waits_cancel_all(struct serve *sv);
/* Anywhere: threads sleeping in ewyk_sleep() wake with -ECANCELED, and
 * sleep no more. */
void waits_cut_sleeps(struct serve *sv);
/* In an arm or disarm callback: the task whose handler waits. */
static inline struct serve_task *
wait_task(const struct ewyk_wait *w)
{
	return w->task;
}

#endif /* EWYK_SERVE_WAIT_H */
