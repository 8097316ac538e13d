/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "arp_cache.h"

static unsigned int
set_of(uint32_t ip)
{
	uint32_t h = ip * 0x9e3779b1u;

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
	out->ip = __atomic_load_n(&e->ip, __ATOMIC_RELAXED);
	memcpy(out->mac, e->mac, 6);
	out->updated_ms = __atomic_load_n(&e->updated_ms, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	s2 = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);
	return s1 == s2;
}

static bool
write_entry(struct arp_entry *e, uint32_t ip, const uint8_t mac[6],
		uint64_t now_ms)
{
	uint32_t s = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);

	if ((s & 1) || !__atomic_compare_exchange_n(&e->seq, &s, s + 1, false,
			__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return false;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&e->ip, ip, __ATOMIC_RELAXED);
	memcpy(e->mac, mac, 6);
	__atomic_store_n(&e->updated_ms, now_ms, __ATOMIC_RELAXED);
	__atomic_store_n(&e->seq, s + 2, __ATOMIC_RELEASE);
	return true;
}

bool
arp_cache_update(struct arp_cache *c, uint32_t ip, const uint8_t mac[6],
		uint64_t now_ms)
{
	struct arp_entry *set = c->e[set_of(ip)];
	struct arp_entry cur;
	unsigned int i, victim = 0;
	uint64_t oldest = UINT64_MAX;

	for (i = 0; i < ARP_CACHE_WAYS; i++) {
		if (!read_entry(&set[i], &cur))
			continue;
		if (cur.ip == ip)
			return write_entry(&set[i], ip, mac, now_ms);
		if (cur.ip == 0 || cur.updated_ms < oldest) {
			oldest = cur.ip == 0 ? 0 : cur.updated_ms;
			victim = i;
		}
	}
	return write_entry(&set[victim], ip, mac, now_ms);
}

bool
arp_cache_lookup(const struct arp_cache *c, uint32_t ip, uint8_t mac[6],
		uint64_t now_ms)
{
	const struct arp_entry *set = c->e[set_of(ip)];
	struct arp_entry cur;
	unsigned int i;

	for (i = 0; i < ARP_CACHE_WAYS; i++) {
		if (read_entry(&set[i], &cur) && cur.ip == ip && ip != 0 &&
				now_ms - cur.updated_ms <= c->ttl_ms) {
			memcpy(mac, cur.mac, 6);
			return true;
		}
	}
	return false;
}

unsigned int
arp_cache_count(const struct arp_cache *c, uint64_t now_ms)
{
	struct arp_entry cur;
	unsigned int s, i, n = 0;

	for (s = 0; s < ARP_CACHE_SETS; s++)
		for (i = 0; i < ARP_CACHE_WAYS; i++)
			if (read_entry(&c->e[s][i], &cur) && cur.ip != 0 &&
					now_ms - cur.updated_ms <= c->ttl_ms)
				n++;
	return n;
}
