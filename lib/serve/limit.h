/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Limits per client address of the configuration's routes (limit-rps
 * with limit-burst, limit-conns), kept per shard by its owner, in a table
 * of fixed size that no client grows: four entries to a set, an entry
 * per route and client address (an IPv6 client's /64, as one host).
 *
 * A rate is GCRA's: one timestamp per entry, the theoretical arrival
 * time of the client's next request; a request is on time when it comes
 * no earlier than that less the burst's allowance (burst / rate), and
 * moves it on by 1 / rate. A new client takes its set's entry that knows
 * least: a free one, else one whose allowance has come back whole and
 * that holds no request (forgetting it changes nothing), else the one
 * nearest to that (its client's debt forgiven: counted as evicted); when
 * every entry of the set holds requests in progress, the newcomer goes
 * through uncounted (counted as untracked). Addresses that reach it have
 * completed a handshake, so a flood of spoofed ones does not.
 */
#ifndef EWYK_SERVE_LIMIT_H
#define EWYK_SERVE_LIMIT_H

#include <stdint.h>

#include "ewyk_serve.h"
#include "http_route.h"
#include "net_addr.h"

#define LIMIT_WAYS 4
#define LIMIT_ENTRIES 8192	/* per shard: 40 B each, 320 KB */
#define LIMIT_NO_HOLD UINT32_MAX

struct limit_table;

/* What limit_admit() decided. */
enum limit_verdict {
	LIMIT_PASS,		/* served: its hold, if any, to release */
	LIMIT_RATE,		/* beyond limit-rps and limit-burst: 429 */
	LIMIT_CONNS,		/* limit-conns in progress already: 429 */
};

/* A request in progress counted against limit-conns: its entry, while
 * the entry is still its client's. */
struct limit_hold {
	uint32_t slot;		/* LIMIT_NO_HOLD: none */
	uint32_t gen;
};

/* A table of entries (a power of two, a multiple of LIMIT_WAYS) whose
 * sets are chosen by a hash keyed with seed; its counts into st. NULL
 * when out of memory. */
struct limit_table *limit_table_create(uint32_t entries, uint64_t seed,
		struct limit_stats *st);
void limit_table_free(struct limit_table *lt);

/* Request of client on route (its identity: any pointer that stays the
 * route's), limited by l, at TSC now (hz a second): served or not, and
 * its hold when limit-conns counts it. */
enum limit_verdict limit_admit(struct limit_table *lt,
		const struct http_limit *l, const void *route,
		const struct net_addr *client, uint64_t now, uint64_t hz,
		struct limit_hold *hold);
/* The request of hold is over (answered, or its client gone). */
void limit_release(struct limit_table *lt, struct limit_hold *hold);

#endif /* EWYK_SERVE_LIMIT_H */
