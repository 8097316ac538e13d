/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Neighbour cache shared by all shards: ARP arrives on whichever queue RSS
 * picks, but every shard needs the answers. Entries are seqlock-protected so
 * that lookups never take a lock; writers claim an entry with a CAS on its
 * sequence word. Fixed size, set-associative, oldest entry replaced.
 */
#ifndef EWYK_ARP_CACHE_H
#define EWYK_ARP_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#define ARP_CACHE_SETS 64
#define ARP_CACHE_WAYS 4

struct arp_entry {
	uint32_t seq;		/* odd while being written */
	uint32_t ip;		/* network order; 0 = empty */
	uint8_t mac[6];
	uint64_t updated_ms;
};

struct arp_cache {
	struct arp_entry e[ARP_CACHE_SETS][ARP_CACHE_WAYS];
	uint64_t ttl_ms;
};

void arp_cache_init(struct arp_cache *c, uint64_t ttl_ms);
/* Insert or refresh; returns false only if a concurrent writer held the
 * entry (the next packet from that host refreshes it). */
bool arp_cache_update(struct arp_cache *c, uint32_t ip, const uint8_t mac[6],
		uint64_t now_ms);
/* True and the MAC if a live entry exists. */
bool arp_cache_lookup(const struct arp_cache *c, uint32_t ip, uint8_t mac[6],
		uint64_t now_ms);
unsigned int arp_cache_count(const struct arp_cache *c, uint64_t now_ms);

#endif /* EWYK_ARP_CACHE_H */
