/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internet checksum (RFC 1071) over scattered buffers. The running sum
 * remembers the byte offset so that pieces of odd length can follow each
 * other, as they do across mbuf segments.
 */
#ifndef EWYK_CKSUM_H
#define EWYK_CKSUM_H

#include <stddef.h>
#include <stdint.h>

#include "net_addr.h"

struct cksum {
	uint32_t sum;
	size_t off;	/* bytes fed so far: decides the byte lane of the next piece */
};

static inline void
cksum_init(struct cksum *c)
{
	c->sum = 0;
	c->off = 0;
}

/* Add len bytes at buf as the next piece of the checksummed stream. */
void cksum_feed(struct cksum *c, const void *buf, size_t len);

/* Folded and complemented result, ready to store in a header as is. */
uint16_t cksum_finish(const struct cksum *c);

/* IPv4 pseudo header for TCP/UDP: addresses in network order. */
void cksum_pseudo_ipv4(struct cksum *c, uint32_t src_be, uint32_t dst_be,
		uint8_t proto, uint16_t l4_len);

/* IPv6 pseudo header (RFC 8200 8.1): 16-byte addresses. */
void cksum_pseudo_ipv6(struct cksum *c, const uint8_t *src, const uint8_t *dst,
		uint8_t proto, uint32_t l4_len);

/* The pseudo header of either family. */
static inline void
cksum_pseudo(struct cksum *c, uint8_t family, const union net_ip *src,
		const union net_ip *dst, uint8_t proto, uint16_t l4_len)
{
	if (family == NET_AF_INET6)
		cksum_pseudo_ipv6(c, src->v6, dst->v6, proto, l4_len);
	else
		cksum_pseudo_ipv4(c, src->v4, dst->v4, proto, l4_len);
}

/* One-shot checksum of a buffer (IPv4 header, ICMP message). */
uint16_t cksum_buf(const void *buf, size_t len);

#endif /* EWYK_CKSUM_H */
