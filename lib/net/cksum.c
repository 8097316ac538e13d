/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>
#include <arpa/inet.h>

#include "cksum.h"

/* Sum of 16-bit words in memory order; the one's-complement sum is byte-order
 * independent, so the folded result can be stored without swapping. */
static uint32_t
raw_sum(const uint8_t *p, size_t len)
{
	uint64_t sum = 0, carries = 0, w64[2];
	uint32_t w32;
	uint16_t w16;

	/* 16 bytes a turn, in 64-bit words with their carries counted: every
	 * segment sent and, without the NIC's help, received is summed here.
	 * A carry out of bit 63 is worth 1 once folded (2^64 = 1 mod 0xffff),
	 * and the sum of wider words folds to that of the 16-bit ones. */
	while (len >= 16) {
		memcpy(w64, p, 16);
		sum += w64[0];
		carries += sum < w64[0];
		sum += w64[1];
		carries += sum < w64[1];
		p += 16;
		len -= 16;
	}
	sum = (sum & 0xffffffff) + (sum >> 32) + carries;
	while (len >= 4) {
		memcpy(&w32, p, 4);
		sum += w32;
		p += 4;
		len -= 4;
	}
	if (len >= 2) {
		memcpy(&w16, p, 2);
		sum += w16;
		p += 2;
		len -= 2;
	}
	if (len == 1) {
		w16 = 0;
		memcpy(&w16, p, 1);	/* odd byte padded with zero (RFC 1071) */
		sum += w16;
	}
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint32_t)sum;
}

static uint32_t
fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}

void
cksum_feed(struct cksum *c, const void *buf, size_t len)
{
	uint32_t s = raw_sum(buf, len);

	/* A piece that starts at an odd offset sits in the other byte lane. */
	if (c->off & 1)
		s = ((s & 0xff) << 8) | (s >> 8);
	c->sum = fold(c->sum + s);
	c->off += len;
}

uint16_t
cksum_finish(const struct cksum *c)
{
	return (uint16_t)~fold(c->sum);
}

void
cksum_pseudo_ipv4(struct cksum *c, uint32_t src_be, uint32_t dst_be,
		uint8_t proto, uint16_t l4_len)
{
	uint16_t tail[2] = { htons(proto), htons(l4_len) };

	cksum_feed(c, &src_be, 4);
	cksum_feed(c, &dst_be, 4);
	cksum_feed(c, tail, sizeof(tail));
}

void
cksum_pseudo_ipv6(struct cksum *c, const uint8_t *src, const uint8_t *dst,
		uint8_t proto, uint32_t l4_len)
{
	uint32_t tail[2] = { htonl(l4_len), htonl(proto) };

	cksum_feed(c, src, 16);
	cksum_feed(c, dst, 16);
	cksum_feed(c, tail, sizeof(tail));
}

uint16_t
cksum_buf(const void *buf, size_t len)
{
	struct cksum c;

	cksum_init(&c);
	cksum_feed(&c, buf, len);
	return cksum_finish(&c);
}
