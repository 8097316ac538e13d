/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Initial sequence numbers (RFC 6528) and SYN cookies (RFC 4987), both from
 * SipHash over the connection's addresses (of either family) and ports
 * with the stack's secret.
 *
 * A cookie is the ISN of a SYN-ACK for which no state was kept:
 *   bits 31..27  a 5-bit counter of 64-second periods
 *   bits 26..24  an index into a table of MSS values
 *   bits 23..0   SipHash(secret, addresses, ports, the peer's ISN, counter)
 * The ACK that completes the handshake carries it back as ack - 1; it is
 * valid in its own period and the next one.
 */
#include <string.h>

#include "siphash.h"
#include "tcp_impl.h"

static const uint16_t cookie_mss[8] = {
	216, 536, 1024, 1200, 1360, 1400, 1440, 1460,
};

/* The key: both addresses (4 or 16 bytes), both ports and two words. */
static uint64_t
flow_hash(const struct net_stack *ns, const struct tcp_tuple *t, uint32_t a,
		uint32_t b)
{
	size_t n = t->family == NET_AF_INET6 ? 16 : 4;
	uint32_t tail[3] = { (uint32_t)t->lport | (uint32_t)t->rport << 16, a, b };
	uint8_t k[2 * 16 + sizeof(tail)];

	memcpy(k, t->laddr, n);
	memcpy(k + n, t->raddr, n);
	memcpy(k + 2 * n, tail, sizeof(tail));
	return siphash24(ns->secret, k, 2 * n + sizeof(tail));
}

uint32_t
tcp_isn(const struct net_stack *ns, const struct tcp_tuple *t)
{
	/* M: a timer ticking every 4 microseconds (here 250 per ms). */
	return (uint32_t)flow_hash(ns, t, 0, 0) + (uint32_t)(ns->now_ms * 250);
}

static uint32_t
cookie_period(const struct net_stack *ns)
{
	return (uint32_t)(ns->now_ms >> 16) & 31;
}

uint32_t
tcp_cookie_make(const struct net_stack *ns, const struct tcp_tuple *k,
		uint32_t irs, uint16_t mss, uint16_t *mss_used)
{
	uint32_t t = cookie_period(ns), idx = 0, i;

	for (i = 0; i < 8; i++)
		if (cookie_mss[i] <= mss)
			idx = i;
	*mss_used = cookie_mss[idx];
	return t << 27 | idx << 24 | ((uint32_t)flow_hash(ns, k, irs, t) &
			0xffffff);
}

int
tcp_cookie_check(const struct net_stack *ns, const struct tcp_tuple *k,
		uint32_t irs, uint32_t cookie)
{
	uint32_t t = cookie >> 27, now = cookie_period(ns);

	if (((now - t) & 31) > 1)
		return -1;	/* expired, or from the future */
	if (((uint32_t)flow_hash(ns, k, irs, t) & 0xffffff) !=
			(cookie & 0xffffff))
		return -1;
	return cookie_mss[(cookie >> 24) & 7];
}
