/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Waits: a handler's blocking call parks its fiber, or, on a thread that
 * may block (the blocking pool's, or an lcore that handed the shard
 * over), blocks that thread. Either way the wait (struct ewyk_wait) is
 * armed, timed and ended by the shard's owner, never by the waiter: shard
 * state is the owner's. A woken fiber is queued like a new request and
 * resumed, through the strategy, on whichever lcore owns the shard then;
 * a woken thread goes on by itself.
 *
 * Deadlines are timers on the shard's one wheel (net_timer_arm()); a
 * client that leaves is looked for every GONE_SCAN_MS while waits are
 * armed.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/syscall.h>

#include "ewyk_fiber.h"
#include "wait.h"

#define GONE_SCAN_MS 10

static void deadline_fire(struct net_timer *nt);
static void gone_scan_fire(struct net_timer *nt);

int
waits_init(struct serve *sv)
{
	struct ewyk_fiber_pool_conf pc = {
		.stack_size = (size_t)sv->conf.fiber_stack_kb * 1024,
		.max = sv->conf.fibers,
	};
	uint32_t i;

	for (i = 0; i < sv->ntasks; i++)
		net_timer_init(&sv->tasks[i].wait.timer, deadline_fire);
	net_timer_init(&sv->gone_scan, gone_scan_fire);
	if (sv->conf.fibers == 0)
		return 0;
	sv->fibers = ewyk_fiber_pool_create(&pc);
	return sv->fibers != NULL ? 0 : -1;
}

void
waits_fini(struct serve *sv)
{
	ewyk_fiber_pool_free(sv->fibers);
	sv->fibers = NULL;
}

int
waits_fiber_hook(void *ctx, struct ewyk_task *task)
{
	const struct serve *sv = ctx;
	const struct serve_task *t = (const struct serve_task *)task;

	if (t->wait.fiber != NULL)
		return 1;
	return sv->fibers != NULL && ewyk_fiber_pool_available(sv->fibers) ?
		0 : -1;
}

/* Fibers ------------------------------------------------------------------ */

static void
fiber_main(struct ewyk_fiber *f, void *arg)
{
	struct serve_task *t = arg;

	RTE_SET_USED(f);
	t->wait.frc = t->sv->handle(t);
	t->wait.on_fiber = false;
}

int
wait_fiber_run(struct serve_task *t)
{
	struct task_wait *tw = &t->wait;

	tw->on_fiber = true;
	if (tw->fiber == NULL) {
		tw->fiber = ewyk_fiber_start(t->sv->fibers, fiber_main, t);
		if (tw->fiber == NULL && tw->on_fiber) {
			/* No stack could be made (mmap failed). */
			tw->on_fiber = false;
			t->sv->st.fib.no_stack++;
			t->fallback = 503;
			return 0;
		}
	} else if (!ewyk_fiber_resume(tw->fiber)) {
		tw->fiber = NULL;
	}
	if (tw->state == WAIT_PARKED)
		return TASK_PARKED;
	tw->fiber = NULL;
	return tw->frc;
}

/* Arming and ending, on the owner ----------------------------------------- */

void
wait_arm(struct serve_task *t)
{
	struct serve *sv = t->sv;
	struct task_wait *tw = &t->wait;

	tw->state = WAIT_ARMED;
	ilist_push(&sv->waiting, &tw->link);
	sv->st.fib.waiting++;
	sv->st.fib.parks++;
	if (tw->timeout_ms != EWYK_WAIT_FOREVER)
		net_timer_arm(sv->ns, &tw->timer, net_now_ms(sv->ns) +
				tw->timeout_ms);
	if (!net_timer_armed(&sv->gone_scan))
		net_timer_arm(sv->ns, &sv->gone_scan, net_now_ms(sv->ns) +
				GONE_SCAN_MS);
	if (tw->w->arm != NULL)
		tw->w->arm(tw->w);
}

/* The wait is over: the fiber is queued to be resumed, or the thread
 * goes on, with result. */
static void
end_wait(struct serve_task *t, int result)
{
	struct serve *sv = t->sv;
	struct task_wait *tw = &t->wait;
	struct ewyk_wait *w = tw->w;

	if (tw->state != WAIT_ARMED)
		return;
	ilist_remove(&tw->link);
	sv->st.fib.waiting--;
	net_timer_cancel(sv->ns, &tw->timer);
	w->result = result;
	if (result != 0 && w->disarm != NULL)
		w->disarm(w);
	if (tw->thread) {
		/* From here the task is the thread's again. */
		tw->state = WAIT_NONE;
		__atomic_store_n(&tw->woken, 1, __ATOMIC_RELEASE);
		syscall(SYS_futex, &tw->woken, FUTEX_WAKE_PRIVATE, 1, NULL,
				NULL, 0);
		return;
	}
	tw->state = WAIT_READY;
	task_ready(sv, t);
}

void
wait_end(struct ewyk_wait *w, int result)
{
	struct serve_task *t = w->task;

	if (t == NULL || t->wait.w != w || t->wait.state != WAIT_ARMED)
		return;
	if (result == 0)
		t->sv->st.fib.wakes++;
	else if (result == -ECANCELED)
		t->sv->st.fib.cancelled++;
	end_wait(t, result);
}

void
ewyk_wait_wake(struct ewyk_wait *w)
{
	wait_end(w, 0);
}

void
wait_renew(struct ewyk_wait *w)
{
	struct serve_task *t = w->task;

	if (t == NULL || t->wait.w != w || t->wait.state != WAIT_ARMED ||
			!net_timer_armed(&t->wait.timer))
		return;
	net_timer_arm(t->sv->ns, &t->wait.timer, net_now_ms(t->sv->ns) +
			t->wait.timeout_ms);
}

static void
deadline_fire(struct net_timer *nt)
{
	struct serve_task *t = container_of(nt, struct serve_task, wait.timer);

	t->sv->st.fib.timeouts++;
	end_wait(t, -ETIMEDOUT);
}

/* Clients gone: the waits of requests whose answer nobody will read end
 * now (the handler may give up at once), with no answer written. */
static void
gone_scan_fire(struct net_timer *nt)
{
	struct serve *sv = container_of(nt, struct serve, gone_scan);
	struct ilink *l, *next;

	for (l = sv->waiting; l != NULL; l = next) {
		struct serve_task *t = container_of(l, struct serve_task,
				wait.link);

		next = l->next;
		if (task_client_gone(t)) {
			sv->st.fib.cancelled++;
			t->abandoned = true;	/* no answer: dispatch_complete() */
			end_wait(t, -ECANCELED);
		}
	}
	if (sv->waiting != NULL)
		net_timer_arm(sv->ns, &sv->gone_scan, net_now_ms(sv->ns) +
				GONE_SCAN_MS);
}

unsigned int
waits_cancel_all(struct serve *sv)
{
	unsigned int n = 0;

	while (sv->waiting != NULL) {
		struct serve_task *t = container_of(sv->waiting,
				struct serve_task, wait.link);

		t->abandoned = true;
		end_wait(t, -ECANCELED);
		n++;
	}
	return n;
}

/* Parking, by the waiter --------------------------------------------------- */

/* A thread may wait for the owner only where it is not the owner: on the
 * blocking pool, or on the lcore that handed the shard over (EPC). */
static bool
thread_may_park(const struct serve_task *t)
{
	return t->req.may_block && (t->base.mode == EWYK_PEC ||
			t->base.mode == EWYK_EPC);
}

bool
wait_may_park(const struct serve_task *t)
{
	return t->wait.on_fiber ? ewyk_fiber_self() != NULL :
		thread_may_park(t);
}

int
ewyk_wait_park(struct ewyk_request *req, struct ewyk_wait *w,
		uint32_t timeout_ms)
{
	struct serve_task *t = task_of(req);
	struct task_wait *tw = &t->wait;
	struct ewyk_fiber *f = ewyk_fiber_self();

	if (!wait_may_park(t))
		return -EPERM;
	w->task = t;
	w->result = -EINPROGRESS;
	tw->w = w;
	tw->timeout_ms = timeout_ms;
	tw->thread = !tw->on_fiber;
	/* Parked until the owner (perhaps another lcore by then) arms the
	 * wait, ends it and resumes the fiber or wakes the thread. */
	tw->state = WAIT_PARKED;
	if (tw->on_fiber) {
		ewyk_fiber_park(f);
	} else {
		__atomic_store_n(&tw->woken, 0, __ATOMIC_RELAXED);
		task_post(t);	/* the owner arms it (dispatch.c) */
		while (__atomic_load_n(&tw->woken, __ATOMIC_ACQUIRE) == 0)
			syscall(SYS_futex, &tw->woken, FUTEX_WAIT_PRIVATE, 0,
					NULL, NULL, 0);
	}
	tw->w = NULL;
	w->task = NULL;
	return w->result;
}

bool
ewyk_request_on_fiber(const struct ewyk_request *req)
{
	return task_of(req)->wait.on_fiber;
}

/* A thread sleeps by itself (nothing of the owner's to wait for), on a
 * word that the end of a drain sets: 0, or -ECANCELED when cut short. */
static int
thread_sleep(struct serve *sv, uint32_t ms)
{
	struct timespec until;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += (time_t)(ms / 1000);
	until.tv_nsec += (long)(ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	while (__atomic_load_n(&sv->sleeps_cut, __ATOMIC_ACQUIRE) == 0) {
		if (syscall(SYS_futex, &sv->sleeps_cut, FUTEX_WAIT_BITSET_PRIVATE,
				0, &until, NULL, FUTEX_BITSET_MATCH_ANY) != 0 &&
				errno == ETIMEDOUT)
			return 0;
	}
	return -ECANCELED;
}

void
waits_cut_sleeps(struct serve *sv)
{
	__atomic_store_n(&sv->sleeps_cut, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &sv->sleeps_cut, FUTEX_WAKE_PRIVATE, INT_MAX, NULL,
			NULL, 0);
}

int
ewyk_sleep(struct ewyk_request *req, uint32_t ms)
{
	struct ewyk_wait w = { 0 };
	int rc;

	if (!ewyk_request_on_fiber(req)) {
		struct serve_task *t = task_of(req);

		rc = thread_sleep(t->sv, ms);
		if (rc == -ECANCELED)
			t->abandoned = true;	/* cut: the answer is dropped */
		return rc;
	}
	rc = ewyk_wait_park(req, &w, ms);
	return rc == -ETIMEDOUT ? 0 : rc;
}
