/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "arp_cache.h"

static unsigned int
set_of(const union net_ip *ip)
{
	uint32_t h = (ip->w[0] ^ ip->w[1] ^ ip->w[2] ^ ip->w[3]) * 0x9e3779b1u;

	return (h >> 16) % ARP_CACHE_SETS;
}

void
arp_cache_init(struct arp_cache *c, uint64_t ttl_ms)
{
	memset(c, 0, sizeof(*c));
	c->ttl_ms = ttl_ms;
}

static bool
read_entry(const struct arp_entry *e, struct arp_entry *out)
{
	uint32_t s1, s2;

	s1 = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
	if (s1 & 1)
		return false;
	memcpy(&out->ip, &e->ip, sizeof(out->ip));
	memcpy(out->mac, e->mac, 6);
	out->incomplete = e->incomplete;
	out->updated_ms = __atomic_load_n(&e->updated_ms, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	s2 = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);
	return s1 == s2;
}

/* mac NULL: an incomplete entry. */
static bool
write_entry(struct arp_entry *e, const union net_ip *ip, const uint8_t mac[6],
		uint64_t now_ms)
{
	uint32_t s = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);

	if ((s & 1) || !__atomic_compare_exchange_n(&e->seq, &s, s + 1, false,
			__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return false;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(&e->ip, ip, sizeof(e->ip));
	if (mac != NULL)
		memcpy(e->mac, mac, 6);
	e->incomplete = mac == NULL;
	__atomic_store_n(&e->updated_ms, now_ms, __ATOMIC_RELAXED);
	__atomic_store_n(&e->seq, s + 2, __ATOMIC_RELEASE);
	return true;
}

static bool
live(const struct arp_cache *c, const struct arp_entry *e, uint64_t now_ms)
{
	return !net_ip_is_zero(&e->ip) && now_ms - e->updated_ms <= c->ttl_ms;
}

/* The way that holds ip (live or not), else -1 and in *victim the way to
 * replace: an empty one, else the oldest. */
static int
find(struct arp_entry *set, const union net_ip *ip, unsigned int *victim,
		struct arp_entry *cur)
{
	uint64_t oldest = UINT64_MAX;
	unsigned int i;

	*victim = 0;
	for (i = 0; i < ARP_CACHE_WAYS; i++) {
		if (!read_entry(&set[i], cur))
			continue;
		if (net_ip_eq(&cur->ip, ip))
			return (int)i;
		if (net_ip_is_zero(&cur->ip) || cur->updated_ms < oldest) {
			oldest = net_ip_is_zero(&cur->ip) ? 0 : cur->updated_ms;
			*victim = i;
		}
	}
	return -1;
}

bool
neigh_update(struct arp_cache *c, const union net_ip *ip, const uint8_t mac[6],
		uint64_t now_ms)
{
	struct arp_entry *set = c->e[set_of(ip)];
	struct arp_entry cur;
	unsigned int victim;
	int i = find(set, ip, &victim, &cur);

	return write_entry(&set[i >= 0 ? (unsigned int)i : victim], ip, mac,
			now_ms);
}

void
neigh_pending(struct arp_cache *c, const union net_ip *ip, uint64_t now_ms)
{
	struct arp_entry *set = c->e[set_of(ip)];
	struct arp_entry cur;
	unsigned int victim;
	int i = find(set, ip, &victim, &cur);

	if (i >= 0 && live(c, &cur, now_ms))
		return;		/* known, or asked for already */
	write_entry(&set[i >= 0 ? (unsigned int)i : victim], ip, NULL, now_ms);
}

/* The live entry of ip, complete or not: true with it in *out. */
static bool
lookup(const struct arp_cache *c, const union net_ip *ip, uint64_t now_ms,
		struct arp_entry *out)
{
	const struct arp_entry *set = c->e[set_of(ip)];
	unsigned int i;

	if (net_ip_is_zero(ip))
		return false;
	for (i = 0; i < ARP_CACHE_WAYS; i++)
		if (read_entry(&set[i], out) && net_ip_eq(&out->ip, ip) &&
				live(c, out, now_ms))
			return true;
	return false;
}

bool
neigh_lookup(const struct arp_cache *c, const union net_ip *ip, uint8_t mac[6],
		uint64_t now_ms)
{
	struct arp_entry cur;

	if (!lookup(c, ip, now_ms, &cur) || cur.incomplete)
		return false;
	memcpy(mac, cur.mac, 6);
	return true;
}

bool
neigh_known(const struct arp_cache *c, const union net_ip *ip, uint64_t now_ms)
{
	struct arp_entry cur;

	return lookup(c, ip, now_ms, &cur);
}

bool
arp_cache_update(struct arp_cache *c, uint32_t ip, const uint8_t mac[6],
		uint64_t now_ms)
{
	union net_ip a = net_ip4(ip);

	return neigh_update(c, &a, mac, now_ms);
}

bool
arp_cache_lookup(const struct arp_cache *c, uint32_t ip, uint8_t mac[6],
		uint64_t now_ms)
{
	union net_ip a = net_ip4(ip);

	return neigh_lookup(c, &a, mac, now_ms);
}

unsigned int
arp_cache_count(const struct arp_cache *c, uint64_t now_ms)
{
	struct arp_entry cur;
	unsigned int s, i, n = 0;

	for (s = 0; s < ARP_CACHE_SETS; s++)
		for (i = 0; i < ARP_CACHE_WAYS; i++)
			if (read_entry(&c->e[s][i], &cur) && !cur.incomplete &&
					live(c, &cur, now_ms))
				n++;
	return n;
}
