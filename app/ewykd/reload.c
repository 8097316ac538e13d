/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>

#include "ewykd.h"
#include "reload.h"
#include "services.h"
#include "shard.h"

static volatile bool asked;

void
reload_note_tree(struct ewykd *e)
{
	const struct www *w = e->www;

	__atomic_store_n(&e->reload.files, w != NULL ? w->nfiles : 0,
			__ATOMIC_RELAXED);
	__atomic_store_n(&e->reload.skipped, w != NULL ? w->skipped : 0,
			__ATOMIC_RELAXED);
	__atomic_store_n(&e->reload.bytes, w != NULL ? w->bytes : 0,
			__ATOMIC_RELAXED);
}

void
reload_ask(void)
{
	__atomic_store_n(&asked, true, __ATOMIC_RELAXED);
}

static uint64_t
now_ms(void)
{
	return rte_get_tsc_cycles() / (rte_get_tsc_hz() / 1000);
}

/* Every shard has polled since the swap (twice, so that a turn under way
 * at the swap is over): no request still holds the old tree unseen. */
static bool
shards_moved_on(const struct ewykd *e)
{
	uint16_t i;

	for (i = 0; i < e->nb_shards; i++)
		if (__atomic_load_n(&e->shards[i].stats.polls, __ATOMIC_RELAXED) <
				e->reload.polls_at_swap[i] + 2)
			return false;
	return true;
}

static void
swap_in(struct ewykd *e, struct www *next, uint64_t t0)
{
	uint32_t was = e->www != NULL ? e->www->nfiles : 0;
	uint16_t i;

	for (i = 0; i < e->nb_shards; i++)
		e->reload.polls_at_swap[i] = __atomic_load_n(
				&e->shards[i].stats.polls, __ATOMIC_RELAXED);
	http_static_swap(&e->statics, next);
	e->www_retiring = e->www;
	e->www = next;
	reload_note_tree(e);
	e->reload.pending = true;
	__atomic_fetch_add(&e->reload.done, 1, __ATOMIC_RELAXED);
	printf("ewykd: reloaded --www %s: %u files (was %u), %u left out, "
			"in %llu ms\n", e->cfg.www, next->nfiles, was, next->skipped,
			(unsigned long long)(now_ms() - t0));
	fflush(stdout);
}

static void
reload_www(struct ewykd *e)
{
	char err[EWYKD_ERR_LEN];
	uint64_t t0 = now_ms();
	struct www *next;

	if (e->cfg.www[0] == '\0')
		return;
	if (e->reload.pending) {
		/* The previous tree still has answers in flight: one swap at a
		 * time, this one is done once it is freed. */
		reload_ask();
		return;
	}
	next = services_www_load(e, err, sizeof(err));
	if (next == NULL) {
		__atomic_fetch_add(&e->reload.failed, 1, __ATOMIC_RELAXED);
		fprintf(stderr, "ewykd: reload of --www %s refused: %s; still "
				"serving the %u files loaded before\n", e->cfg.www,
				err, e->www != NULL ? e->www->nfiles : 0);
		return;
	}
	swap_in(e, next, t0);
}

void
reload_step(struct ewykd *e)
{
	const struct www *old;

	if (e->reload.pending && shards_moved_on(e) &&
			http_static_retired(&e->statics, &old)) {
		services_www_free(e->www_retiring);
		e->www_retiring = NULL;
		e->reload.pending = false;
	}
	if (!__atomic_exchange_n(&asked, false, __ATOMIC_RELAXED))
		return;
	printf("ewykd: reload asked\n");
	fflush(stdout);
	reload_www(e);
}
