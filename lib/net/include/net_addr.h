/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An IP address of either family. IPv4 sits in the first four bytes, in
 * network order, with the rest zero, so that one 16-byte compare serves
 * both families wherever the family is known from elsewhere (a
 * connection's local address says it).
 */
#ifndef EWYK_NET_ADDR_H
#define EWYK_NET_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define NET_AF_INET 4
#define NET_AF_INET6 6

union net_ip {
	uint32_t v4;		/* network order */
	uint8_t v6[16];
	uint32_t w[4];
};

/* An address with its family, as the upper layer names a peer. */
struct net_addr {
	union net_ip ip;
	uint8_t family;		/* NET_AF_INET or NET_AF_INET6 */
};

static inline union net_ip
net_ip4(uint32_t v4)
{
	union net_ip a = { .w = { v4, 0, 0, 0 } };

	return a;
}

static inline union net_ip
net_ip6(const uint8_t v6[16])
{
	union net_ip a;

	memcpy(a.v6, v6, 16);
	return a;
}

static inline bool
net_ip_eq(const union net_ip *a, const union net_ip *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

/* :: (IPv6's unspecified address), or no address at all. */
static inline bool
net_ip_is_zero(const union net_ip *a)
{
	return (a->w[0] | a->w[1] | a->w[2] | a->w[3]) == 0;
}

/* Addresses whose first len bits are addr's (a CIDR block). */
struct net_prefix {
	struct net_addr addr;	/* its bits past len zero */
	uint8_t len;		/* 0 to 32, or 128 */
};

/* "ADDR" (a block of one) or "ADDR/LEN", either family, into *p (the
 * bits past len cleared): 0, or -1 when it is neither. */
int net_prefix_parse(const char *s, struct net_prefix *p);
/* Whether a is in p (the same family, the same first len bits). */
bool net_prefix_has(const struct net_prefix *p, const struct net_addr *a);
/* The block as text, "ADDR/LEN", as snprintf(). */
size_t net_prefix_format(const struct net_prefix *p, char *buf, size_t len);

/* The address as text (RFC 5952 for IPv6; "-" without a family), with
 * ":PORT" when port is not 0 ("[ADDR]:PORT" for IPv6, as in a URL's
 * authority). Returns the length it needed, as snprintf(). */
size_t net_addr_format(const struct net_addr *a, uint16_t port, char *buf,
		size_t len);

#endif /* EWYK_NET_ADDR_H */
