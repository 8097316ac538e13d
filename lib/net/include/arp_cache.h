/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Neighbour cache shared by all shards: ARP and neighbour discovery arrive
 * on whichever queue RSS picks, but every shard needs the answers. A port
 * has one for IPv4 (ARP's) and, with IPv6, its twin for neighbour
 * discovery. Entries are seqlock-protected so that lookups never take a
 * lock; writers claim an entry with a CAS on its sequence word. Fixed
 * size, set-associative, oldest entry replaced, aged out after ttl_ms.
 */
#ifndef EWYK_ARP_CACHE_H
#define EWYK_ARP_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "net_addr.h"

#define ARP_CACHE_SETS 64
#define ARP_CACHE_WAYS 4

struct arp_entry {
	uint32_t seq;		/* odd while being written */
	union net_ip ip;	/* all zero = empty */
	uint8_t mac[6];
	uint8_t incomplete;	/* solicited, not answered: no MAC yet */
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
/* Live entries with a MAC. */
unsigned int arp_cache_count(const struct arp_cache *c, uint64_t now_ms);

/* The same by an address of either family (IPv4 as net_ip4() makes it). */
bool neigh_update(struct arp_cache *c, const union net_ip *ip,
		const uint8_t mac[6], uint64_t now_ms);
bool neigh_lookup(const struct arp_cache *c, const union net_ip *ip,
		uint8_t mac[6], uint64_t now_ms);
/* Whether a live entry exists, complete or not (RFC 4861 7.2.5: an
 * advertisement updates only those). */
bool neigh_known(const struct arp_cache *c, const union net_ip *ip,
		uint64_t now_ms);
/* A solicitation went out for ip: an incomplete entry, unless one exists,
 * that the answer may complete. */
void neigh_pending(struct arp_cache *c, const union net_ip *ip,
		uint64_t now_ms);

#endif /* EWYK_ARP_CACHE_H */
