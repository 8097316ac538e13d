/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>

#include "ewyk_quic.h"
#include "ewyk_tls.h"
#include "ewykd.h"
#include "reload.h"
#include "shard.h"
#include "sites.h"
#include "trees.h"

/* Requests and completions are counted: a waiter knows its own. */
static _Atomic unsigned long asked;
static _Atomic unsigned long done;
static _Atomic int last_rc;
static char last_msg[TLS_ERR_LEN];	/* written before done moves */

void
reload_ask(void)
{
	atomic_fetch_add_explicit(&asked, 1, memory_order_relaxed);
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

/* What each shard had polled at a swap: shards_moved_on() counts from it. */
static void
note_polls(struct ewykd *e)
{
	uint16_t i;

	for (i = 0; i < e->nb_shards; i++)
		e->reload.polls_at_swap[i] = __atomic_load_n(
				&e->shards[i].stats.polls, __ATOMIC_RELAXED);
}

static void
swap_in(struct ewykd *e, struct www *next, uint64_t t0)
{
	uint32_t was = e->www != NULL ? e->www->nfiles : 0;

	note_polls(e);
	http_static_swap(&e->statics, next);
	e->www_retiring = e->www;
	e->www = next;
	trees_note(e);
	e->reload.pending = true;
	__atomic_fetch_add(&e->reload.done, 1, __ATOMIC_RELAXED);
	printf("ewykd: reloaded --www %s: %u files (was %u), %u left out, "
			"in %llu ms\n", e->cfg.www, next->nfiles, was, next->skipped,
			(unsigned long long)(now_ms() - t0));
	fflush(stdout);
}

/* Every site's and route's tree, all or none. */
static void
reload_sites(struct ewykd *e)
{
	char err[EWYKD_ERR_LEN];
	uint64_t t0 = now_ms();

	note_polls(e);
	if (sites_reload(e, err, sizeof(err)) != 0) {
		__atomic_fetch_add(&e->reload.failed, 1, __ATOMIC_RELAXED);
		fprintf(stderr, "ewykd: reload of the sites' files refused: %s; "
				"still serving the %u files loaded before\n", err,
				(unsigned int)__atomic_load_n(&e->reload.files,
				__ATOMIC_RELAXED));
		return;
	}
	e->reload.pending = true;
	__atomic_fetch_add(&e->reload.done, 1, __ATOMIC_RELAXED);
	printf("ewykd: reloaded the sites' %u trees: %u files, in %llu ms\n",
			e->ntrees, (unsigned int)__atomic_load_n(&e->reload.files,
			__ATOMIC_RELAXED), (unsigned long long)(now_ms() - t0));
	fflush(stdout);
}

static void
reload_www(struct ewykd *e)
{
	char err[EWYKD_ERR_LEN];
	uint64_t t0 = now_ms();
	struct www *next;

	if (e->ntrees > 0) {
		reload_sites(e);
		return;
	}
	if (e->cfg.www[0] == '\0')
		return;
	next = trees_load(e, e->cfg.www, err, sizeof(err));
	if (next == NULL) {
		__atomic_fetch_add(&e->reload.failed, 1, __ATOMIC_RELAXED);
		fprintf(stderr, "ewykd: reload of --www %s refused: %s; still "
				"serving the %u files loaded before\n", e->cfg.www,
				err, e->www != NULL ? e->www->nfiles : 0);
		return;
	}
	swap_in(e, next, t0);
}

static int
reload_tls(struct ewykd *e)
{
	char err[TLS_ERR_LEN] = "";
	int rc;

	if (e->tls == NULL) {
		snprintf(last_msg, sizeof(last_msg), "no TLS port");
		return 0;
	}
	rc = tls_config_reload(e->tls, err, sizeof(err));
	/* QUIC's address tokens under the old keys stay good for one more
	 * reload. */
	if (e->quic_tokens != NULL)
		quic_tokens_rotate(e->quic_tokens);
	if (rc == 0) {
		snprintf(last_msg, sizeof(last_msg), "certificates reloaded");
		printf("ewykd: TLS certificates and keys reloaded\n");
		fflush(stdout);
	} else {
		snprintf(last_msg, sizeof(last_msg), "%s", err);
		fprintf(stderr, "ewykd: TLS reload refused, the previous "
				"certificates stay: %s\n", err);
	}
	return rc;
}

void
reload_step(struct ewykd *e)
{
	unsigned long a = atomic_load_explicit(&asked, memory_order_acquire);
	const struct www *old;

	if (e->reload.pending && shards_moved_on(e) && e->ntrees > 0 &&
			sites_retire(e))
		e->reload.pending = false;
	if (e->reload.pending && shards_moved_on(e) &&
			http_static_retired(&e->statics, &old)) {
		trees_free(e->www_retiring);
		e->www_retiring = NULL;
		e->reload.pending = false;
	}
	if (e->tls != NULL)
		tls_config_tick(e->tls, (uint64_t)time(NULL));
	/* One swap at a time: while the previous tree still has answers in
	 * flight, the reload waits for it to be freed. */
	if (a == atomic_load_explicit(&done, memory_order_relaxed) ||
			e->reload.pending)
		return;
	printf("ewykd: reload asked\n");
	fflush(stdout);
	reload_www(e);
	atomic_store_explicit(&last_rc, reload_tls(e), memory_order_relaxed);
	atomic_store_explicit(&done, a, memory_order_release);
}

int
reload_request_wait(char *msg, size_t len, unsigned int timeout_ms)
{
	unsigned long mine = atomic_fetch_add(&asked, 1) + 1;
	unsigned int waited = 0;

	while (atomic_load_explicit(&done, memory_order_acquire) < mine) {
		if (waited >= timeout_ms) {
			snprintf(msg, len, "no reload within %u ms", timeout_ms);
			return -2;
		}
		usleep(1000);
		waited++;
	}
	snprintf(msg, len, "%s", last_msg);
	return atomic_load_explicit(&last_rc, memory_order_relaxed);
}
