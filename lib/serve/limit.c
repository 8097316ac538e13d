/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "limit.h"

struct limit_entry {
	const void *route;	/* NULL: free */
	uint64_t key;		/* the IPv4 address, or the IPv6 /64 */
	uint64_t tat;		/* TSC: the next request's on-time arrival */
	uint32_t gen;		/* moves on when another client takes it */
	uint32_t conns;		/* requests in progress (held) */
	uint8_t family;
};

struct limit_table {
	struct limit_entry *e;
	uint32_t set_mask;	/* sets - 1 */
	uint64_t seed;
	struct limit_stats *st;
};

struct limit_table *
limit_table_create(uint32_t entries, uint64_t seed, struct limit_stats *st)
{
	struct limit_table *lt;

	if (entries < LIMIT_WAYS || (entries & (entries - 1)) != 0)
		return NULL;
	lt = calloc(1, sizeof(*lt));
	if (lt == NULL)
		return NULL;
	lt->e = calloc(entries, sizeof(*lt->e));
	if (lt->e == NULL) {
		free(lt);
		return NULL;
	}
	lt->set_mask = entries / LIMIT_WAYS - 1;
	lt->seed = seed;
	lt->st = st;
	return lt;
}

void
limit_table_free(struct limit_table *lt)
{
	if (lt == NULL)
		return;
	free(lt->e);
	free(lt);
}

/* The client as one host: an IPv4 address, or an IPv6 address's /64
 * (a host is given one, and may use any address in it). */
static uint64_t
client_key(const struct net_addr *a)
{
	uint64_t k = 0;

	if (a->family == NET_AF_INET6)
		memcpy(&k, a->ip.v6, 8);
	else
		k = a->ip.v4;
	return k;
}

/* splitmix64's finaliser over the key, the route and the seed: a client
 * cannot choose its set without knowing the seed. */
static uint64_t
set_hash(uint64_t seed, const void *route, uint64_t key, uint8_t family)
{
	uint64_t h = seed ^ key ^ ((uint64_t)(uintptr_t)route *
			0x9e3779b97f4a7c15ull) ^ family;

	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
	h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
	return h ^ (h >> 31);
}

/* A request charged now finds its allowance whole: nothing is owed. */
static inline bool
owes_nothing(const struct limit_entry *e, uint64_t now)
{
	return e->conns == 0 && e->tat <= now;
}

/* The entry of (route, key) in its set, or the one a newcomer takes
 * (reset for it); NULL when every entry holds requests in progress. */
static struct limit_entry *
entry_of(struct limit_table *lt, const void *route, uint64_t key,
		uint8_t family, uint64_t now)
{
	uint32_t set = (uint32_t)set_hash(lt->seed, route, key, family) &
		lt->set_mask;
	struct limit_entry *s = &lt->e[set * LIMIT_WAYS], *take = NULL;
	uint32_t i;

	for (i = 0; i < LIMIT_WAYS; i++)
		if (s[i].route == route && s[i].key == key &&
				s[i].family == family)
			return &s[i];
	/* A free entry, or one that owes nothing: forgetting it changes
	 * nothing. */
	for (i = 0; i < LIMIT_WAYS; i++)
		if (s[i].route == NULL || owes_nothing(&s[i], now)) {
			take = &s[i];
			goto reset;
		}
	/* Else, of those holding no request, the nearest to owing nothing:
	 * its client's debt is forgiven. */
	for (i = 0; i < LIMIT_WAYS; i++)
		if (s[i].conns == 0 && (take == NULL || s[i].tat < take->tat))
			take = &s[i];
	if (take == NULL)
		return NULL;
	lt->st->evicted++;
reset:
	take->route = route;
	take->key = key;
	take->family = family;
	take->tat = now;
	take->conns = 0;
	take->gen++;
	return take;
}

enum limit_verdict
limit_admit(struct limit_table *lt, const struct http_limit *l,
		const void *route, const struct net_addr *client, uint64_t now,
		uint64_t hz, struct limit_hold *hold)
{
	struct limit_entry *e = entry_of(lt, route, client_key(client),
			client->family, now);

	hold->slot = LIMIT_NO_HOLD;
	if (e == NULL) {
		lt->st->untracked++;
		return LIMIT_PASS;
	}
	if (l->conns != 0 && e->conns >= l->conns) {
		lt->st->conns_refused++;
		return LIMIT_CONNS;
	}
	if (l->rps != 0) {
		uint64_t interval = hz / l->rps, tat = e->tat > now ? e->tat : now;

		if (tat - now > (uint64_t)l->burst * interval) {
			lt->st->rate_refused++;
			return LIMIT_RATE;
		}
		e->tat = tat + interval;
	}
	if (l->conns != 0) {
		e->conns++;
		hold->slot = (uint32_t)(e - lt->e);
		hold->gen = e->gen;
	}
	return LIMIT_PASS;
}

void
limit_release(struct limit_table *lt, struct limit_hold *hold)
{
	struct limit_entry *e;

	if (hold->slot == LIMIT_NO_HOLD)
		return;
	e = &lt->e[hold->slot];
	if (e->gen == hold->gen && e->conns > 0)
		e->conns--;
	hold->slot = LIMIT_NO_HOLD;
}
