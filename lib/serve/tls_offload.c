/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/tls hands a handshake step over (tls_shard_conf.offload); here it
 * becomes a task of the shard's strategy, queued with the requests and
 * decided by the same table (docs/strategy.md):
 *
 * - a costly step (a signature and a key exchange, hundreds of
 *   microseconds) is BLOCKING in the strategy's sense: it must not hold
 *   the producer. With a reserved lcore idle it runs EPC (that lcore
 *   takes the polling over, the step runs here with a hot cache); with
 *   none, PEC on the blocking pool. EITHER would have run it inline
 *   (PIC) whenever no helper is idle, which is the stall this avoids.
 * - a cheap step is NON_BLOCKING: inline (lib/tls runs those without
 *   asking).
 *
 * Wherever it ran, the step comes back to the owner: at once when the
 * owner ran it, else through the completion ring (tls_work_done()). The
 * ring's release and acquire order the step's writes before the owner's
 * reads; one thread at a time touches a session.
 */
#include <stdlib.h>

#include <rte_cycles.h>
#include <rte_lcore.h>

#include "ewyk_tls.h"
#include "tls_offload.h"

struct tls_task {
	struct ewyk_task base;	/* first: the strategy's view */
	struct serve *sv;
	struct tls_work *w;
	struct tls_task *free_next;
};

static int
run(struct ewyk_task *bt)
{
	struct tls_task *t = (struct tls_task *)bt;
	struct serve_lcore_time *lt = t->sv->conf.lcore_time;
	unsigned int lcore = rte_lcore_id();
	uint64_t t0 = rte_get_tsc_cycles();

	tls_work_run(t->w);
	if (lt != NULL && lcore < RTE_MAX_LCORE) {
		lt[lcore].consuming += rte_get_tsc_cycles() - t0;
		lt[lcore].tasks++;
	}
	if (bt->mode == EWYK_PEC)
		task_post_any(t->sv, bt);	/* a pool thread: via the ring */
	return 0;
}

enum ewyk_invocation
tls_offload_type(bool cheap, const atomic_bool *room,
		struct tls_inline_budget *b, uint64_t now_us)
{
	if (cheap)
		return EWYK_NON_BLOCKING;
	/* A costly step must not hold the producer while a helper has a
	 * CPU of its own to run it on; without one, handing it over only
	 * takes that CPU from whoever is busy there (a client on the same
	 * host), and it runs inline (EITHER: a reserved lcore idle still
	 * takes the polling over, else PIC) -- one step per
	 * TLS_INLINE_GAP_US at most, so that a flood of handshakes holds
	 * the requests behind it for one step, not for a burst: the rest
	 * go to the helpers all the same. */
	if (room == NULL || atomic_load_explicit(room, memory_order_relaxed))
		return EWYK_BLOCKING;
	if (now_us < b->next_us) {
		b->spilled++;
		return EWYK_BLOCKING;
	}
	b->next_us = now_us + TLS_INLINE_GAP_US;
	b->inlined++;
	return EWYK_EITHER;
}

static int
offload(void *ctx, struct tls_work *w)
{
	struct serve *sv = ctx;
	struct tls_task *t = sv->free_tls_tasks;

	if (t == NULL)
		return -1;	/* never: one task per staging */
	sv->free_tls_tasks = t->free_next;
	t->w = w;
	t->base.type = tls_offload_type(tls_work_cost(w) == TLS_WORK_CHEAP,
			sv->conf.tls_room, &sv->st.tls_inline,
			net_now_us(sv->ns));
	task_queue(sv, &t->base);
	return 0;
}

void
tls_offload_complete(struct serve *sv, struct ewyk_task *bt)
{
	struct tls_task *t = (struct tls_task *)bt;
	struct tls_work *w = t->w;

	t->w = NULL;
	t->free_next = sv->free_tls_tasks;
	sv->free_tls_tasks = t;
	tls_work_done(w);
}

void
tls_offload_consumed(struct serve *sv, struct ewyk_task *bt, bool owner)
{
	if (owner)
		tls_offload_complete(sv, bt);
	else
		task_post_any(sv, bt);	/* the shard moved on meanwhile */
}

void
tls_offload_rejected(struct serve *sv, struct ewyk_task *bt)
{
	struct tls_task *t = (struct tls_task *)bt;

	tls_work_run(t->w);
	tls_offload_complete(sv, bt);
}

int
tls_offload_create(struct serve *sv)
{
	const struct serve_conf *c = &sv->conf;
	struct tls_shard_conf tc = {
		.id = c->id,
		.ns = sv->ns,
		.http = sv->http,
		.cfg = c->tls,
		.max_conns = c->max_conns,
		.max_handshakes = SERVE_TLS_HANDSHAKES,
		.offload = c->tls_inline ? NULL : offload,
		.offload_ctx = sv,
		.stats = c->tls_stats,
	};
	uint32_t i;

	if (c->tls == NULL)
		return 0;
	sv->tls_tasks = calloc(SERVE_TLS_HANDSHAKES, sizeof(*sv->tls_tasks));
	if (sv->tls_tasks == NULL)
		return -1;
	for (i = SERVE_TLS_HANDSHAKES; i-- > 0;) {
		struct tls_task *t = &sv->tls_tasks[i];

		t->base.run = run;
		t->base.kind = SERVE_TASK_TLS;
		t->sv = sv;
		t->free_next = sv->free_tls_tasks;
		sv->free_tls_tasks = t;
	}
	sv->tls = tls_shard_create(&tc);
	if (sv->tls == NULL)
		return -1;
	return tls_shard_listen(sv->tls, c->tls_port);
}

void
tls_offload_destroy(struct serve *sv)
{
	tls_shard_destroy(sv->tls);
	sv->tls = NULL;
	free(sv->tls_tasks);
	sv->tls_tasks = NULL;
}
