/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The task core: a shard's tasks come from a free list made at start-up
 * (nothing is allocated per request), wait in a ready queue for the
 * strategy to consume them, and come back to the owner through a
 * completion ring when they ran anywhere else.
 */
#include <stdio.h>
#include <stdlib.h>

#include <rte_lcore.h>
#include <rte_ring.h>

#include "h3.h"
#include "task.h"

int
tasks_init(struct serve *sv, uint32_t n, uint32_t extra,
		int (*run)(struct ewyk_task *))
{
	char name[RTE_RING_NAMESIZE];
	uint32_t i;

	snprintf(name, sizeof(name), "ewyk_done_%u", sv->conf.id);
	/* RTS enqueue: producers may be preempted pool threads. */
	sv->done = rte_ring_create(name, n + extra, rte_socket_id(),
			RING_F_MP_RTS_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
	/* Ordinary memory: a task is large (a whole request) and, with
	 * thousands of fibers, mostly untouched; pages come when used. */
	sv->tasks = calloc(n, sizeof(*sv->tasks));
	sv->ready = calloc(n + extra, sizeof(*sv->ready));
	if (sv->done == NULL || sv->tasks == NULL || sv->ready == NULL)
		return -1;
	sv->ntasks = n;
	sv->ready_cap = n + extra;
	for (i = n; i-- > 0;) {
		sv->tasks[i].base.run = run;
		sv->tasks[i].base.kind = SERVE_TASK_REQUEST;
		sv->tasks[i].sv = sv;
		sv->tasks[i].limit.slot = LIMIT_NO_HOLD;
		task_free(sv, &sv->tasks[i]);
	}
	return 0;
}

void
tasks_fini(struct serve *sv)
{
	rte_ring_free(sv->done);
	sv->done = NULL;
	free(sv->tasks);
	sv->tasks = NULL;
	free(sv->ready);
	sv->ready = NULL;
}

struct serve_task *
task_alloc(struct serve *sv)
{
	struct serve_task *t = sv->free_tasks;

	if (t != NULL)
		sv->free_tasks = t->free_next;
	return t;
}

void
task_free(struct serve *sv, struct serve_task *t)
{
	/* A large body's buffer goes back to the HTTP server. */
	http_req_release_body(&t->req);
	limit_release(sv->limits, &t->limit);
	t->free_next = sv->free_tasks;
	sv->free_tasks = t;
}

void
task_queue(struct serve *sv, struct ewyk_task *bt)
{
	/* Each task is in it once at most: it cannot overflow. */
	sv->ready[(sv->ready_head + sv->ready_n++) % sv->ready_cap] = bt;
}

void
task_ready(struct serve *sv, struct serve_task *t)
{
	task_queue(sv, &t->base);
}

void
task_post_any(struct serve *sv, struct ewyk_task *bt)
{
	/* The ring holds every task of the shard: it cannot be full. */
	while (rte_ring_enqueue(sv->done, bt) != 0)
		ewyk_cpu_pause();
}

void
task_post(struct serve_task *t)
{
	task_post_any(t->sv, &t->base);
}

bool
early_answer_whole(const struct early_answer *e)
{
	/* With a known length the last bytes may go (and the answer with
	 * them) only once the client's window opens again (HTTP/2), while
	 * the handler already waits for something else. */
	return e->discard || (e->length >= 0 && e->written == e->length &&
			e->failed == 0);
}

bool
task_client_gone(const struct serve_task *t)
{
	const struct early_answer *e = &t->early;

	/* An answer begun is the connection's: its release before the body
	 * was whole tells of a client gone. */
	if (e->begun)
		return e->released && !e->handler_over && !early_answer_whole(e);
	return !serve_awaits(t->sv, t->origin);
}
