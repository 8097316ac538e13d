/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the receive path: arbitrary frames go through
 * net_input() of one shard's stack, with a virtual clock and a toy
 * application on top, and every input ends with checks that the stack gave
 * back what it took (mbufs, connections, the application's state) and that
 * every frame it sent was well formed.
 *
 * Input format, chosen so that multi-segment TCP conversations are
 * reachable from mutations:
 *
 *   bytes 0-1         configuration (see CFG_* and CFG1_*)
 *   then records      ctl (1 byte), length (2 bytes, big endian), frame
 *
 * The port runs both families: IPv4 198.18.0.2/24 and IPv6 2001:2::2/64
 * with its link-local address (duplicate address detection runs as in
 * ewykd, its probes and announcements checked like every frame sent).
 *
 * ctl bits 0-1 choose the checksums: 0 leaves the frame as it is (the stack
 * verifies it), 1 recomputes the IPv4 and TCP/ICMP/ICMPv6 checksums, 2
 * fixes the IPv4 checksum and marks the L4 checksum good as a NIC would, 3
 * fixes the IPv4 checksum and marks the L4 checksum bad. Bit 2 makes the
 * TCP acknowledgement number relative to the ISS of the stack's last
 * SYN-ACK to that peer, or of its SYN for an active open (ISNs are keyed
 * hashes and SYN cookies are MACs: a fuzzer could not guess them); the
 * edges of SACK blocks move with it. Bit 3 delivers the frame twice. Bits
 * 4-6 advance the clock after the frame. Bit 7 first opens a connection
 * over IPv6 to [2001:2::1]:8080 (the peer's MAC taken as known).
 *
 * Beyond the sanitizers, the checks are semantic: every byte the stack
 * hands the application must be one the peer sent at that sequence number
 * (reassembly), and every payload byte it sends must be the application's
 * byte at that stream offset (send queue, clones, retransmission); the
 * application writes a position-dependent pattern so that a misplaced byte
 * shows. And a segment whose ACK the stack itself finds unacceptable (of
 * data never sent, RFC 9293 3.10.7.4; or too old, RFC 5961 5.2) must not
 * deliver data: that is the blind injection those checks exist to stop.
 *
 * The same entry point is built without libFuzzer as a replay program
 * (replay_main.c) that runs the corpus and every saved regression input in
 * the normal unit suite.
 */
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_random.h>

#include "tcp_impl.h"	/* white-box: the table and connection fields */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CFG_RCV_CAP_MASK 0x03	/* the application's room: 64K, 4K, 512,
				 * 64; with 4K and 64, TCP's receive buffer
				 * too, 4K growing to 64K, a budget of 96K */
#define CFG_TX_MULTISEG 0x04	/* clones instead of copies on TX */
#define CFG_TX_PARTIAL 0x08	/* the device takes half of each burst */
#define CFG_CONNS_SHIFT 4	/* max_conns: 2, 4, 8, 16; with 8, CUBIC
				 * paced, with 16, BBR (else NewReno) */
#define CFG_SMALL_POOL 0x40	/* run out of mbufs */
#define CFG_SMALL_SNDBUF 0x80	/* 2 KB send queue */

#define CFG1_NO_SYNCOOKIES 0x01	/* a full backlog drops SYNs */
#define CFG1_BACKLOG_1 0x02	/* one half-open connection, then cookies */
#define CFG1_ACTIVE_OPEN 0x04	/* tcp_connect() to 198.18.0.1:8080 first */
#define CFG1_KEEPALIVE 0x08	/* keepalive 2 s, probes every 1 s */
#define CFG1_IDLE_TIMEOUT 0x10	/* abort after 20 s idle */
#define CFG1_TX_OFFLOAD 0x20	/* the device fills the checksums */
#define CFG1_MBUF_RESERVE 0x40	/* refuse SYNs with more than 16 mbufs out */
#define CFG1_TIGHT 0x80		/* one TIME-WAIT slot, no delayed ACK */

#define CTL_CKSUM_MASK 0x03
#define CTL_CKSUM_RAW 0
#define CTL_CKSUM_FIX 1
#define CTL_CKSUM_GOOD 2
#define CTL_CKSUM_BAD 3
#define CTL_REL_ACK 0x04
#define CTL_TWICE 0x08
#define CTL_CLOCK_SHIFT 4
#define CTL_OPEN6 0x80

#define MAX_FRAMES 64		/* per input: keeps each run short */
#define MAX_FRAME_LEN 1518
#define MAX_CONNS 16
#define PEERS 32		/* remembered ISNs of our SYNs and SYN-ACKs */
#define BIG_RESPONSE (256 * 1024)
#define END_MS (300 * 1000)	/* after the last frame: every timer runs out */

static const uint8_t our_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x02 };
static const uint8_t our_ip6[16] = { 0x20, 0x01, 0, 0x02, [15] = 2 };
static const uint8_t peer_ip6[16] = { 0x20, 0x01, 0, 0x02, [15] = 1 };
static const uint8_t peer_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
static const uint32_t clock_steps[8] = { 0, 1, 10, 50, 200, 1000, 3000, 10000 };

struct app_conn {
	uint32_t magic;		/* APP_MAGIC while the stack holds it */
	uint32_t buffered;	/* received, not yet consumed */
	uint32_t big_left;	/* response bytes still to write */
	uint32_t written;	/* stream offset of the next byte written */
};

#define APP_MAGIC 0x61707063u

/* A TCP payload the peer sent, for the reassembly check. */
struct rx_seg {
	union net_ip raddr;
	uint16_t rport;		/* host order */
	uint16_t lport;
	uint32_t seq;		/* of data[0] */
	const uint8_t *data;	/* in the fuzz input */
	uint16_t len;
};

#define RX_LOG MAX_FRAMES	/* one entry per record: never full */

struct peer_iss {
	union net_ip raddr;
	uint16_t rport;		/* host order */
	uint32_t iss;
	bool used;
};

/* Everything one input touches; reset at its start. */
static struct fuzz_state {
	struct rte_mempool *pool;
	struct net_if ifc;
	struct arp_cache arp;
	struct net_nd nd;
	struct net_stack *ns;
	struct net_stats stats;
	uint32_t rcv_cap;
	bool tx_partial;
	uint64_t tx_frames;
	uint32_t accepted;
	uint32_t closed;
	struct app_conn app[MAX_CONNS];
	struct peer_iss peer[PEERS];
	unsigned int peer_next;
	struct rx_seg rx[RX_LOG];
	unsigned int nrx;
	const char *no_data_why;	/* the segment in input may not deliver */
} st;

static struct rte_mempool *big_pool;
static struct rte_mempool *small_pool;
static bool verbose;		/* FUZZ_NET_VERBOSE=1: what each input reached */
static bool trace;		/* FUZZ_NET_TRACE=1: every TCP segment */

/* Where a frame's transport header is, by the headers' own lengths (an
 * IPv6 header's extension headers skipped as their lengths say): the
 * checker's own reading, not the stack's. */
struct l34 {
	uint8_t family;
	uint8_t *ip;
	uint16_t ip_len;	/* to the transport header */
	uint16_t l4_len;	/* by the IP lengths, clamped to the frame */
	uint8_t proto;
	union net_ip src;
	union net_ip dst;
};

static bool
locate(uint8_t *f, uint16_t len, struct l34 *x)
{
	uint16_t type = (uint16_t)(f[12] << 8 | f[13]), total;
	uint8_t *ip = f + 14;

	if (len < 14 + 20)
		return false;
	memset(x, 0, sizeof(*x));
	x->ip = ip;
	if (type == 0x0800) {
		x->family = NET_AF_INET;
		x->ip_len = (uint16_t)((ip[0] & 0x0f) * 4);
		if (x->ip_len < 20 || 14u + x->ip_len > len)
			return false;
		total = (uint16_t)(ip[2] << 8 | ip[3]);
		x->l4_len = total >= x->ip_len && 14u + total <= len ?
			(uint16_t)(total - x->ip_len) :
			(uint16_t)(len - 14 - x->ip_len);
		x->proto = ip[9];
		memcpy(&x->src.v4, ip + 12, 4);
		memcpy(&x->dst.v4, ip + 16, 4);
		return true;
	}
	if (type != 0x86dd || len < 14 + 40)
		return false;
	x->family = NET_AF_INET6;
	memcpy(x->src.v6, ip + 8, 16);
	memcpy(x->dst.v6, ip + 24, 16);
	total = (uint16_t)(40 + (ip[4] << 8 | ip[5]));
	if (14u + total > len)
		total = (uint16_t)(len - 14);
	x->proto = ip[6];
	x->ip_len = 40;
	while ((x->proto == 0 || x->proto == 43 || x->proto == 60) &&
			x->ip_len + 8u <= total) {
		x->proto = ip[x->ip_len];
		x->ip_len = (uint16_t)(x->ip_len + (ip[x->ip_len + 1] + 1) * 8);
	}
	if (x->ip_len > total)
		return false;
	x->l4_len = (uint16_t)(total - x->ip_len);
	return true;
}

static void
trace_tcp(const char *dir, const struct l34 *x)
{
	static const char names[] = "FSRPAU";
	const uint8_t *l4 = x->ip + x->ip_len;
	char flags[7], addr[48];
	int i, n = 0;

	for (i = 0; i < 6; i++)
		if (l4[13] & (1 << i))
			flags[n++] = names[i];
	flags[n] = '\0';
	if (x->family == NET_AF_INET)
		snprintf(addr, sizeof(addr), "%u.%u.%u.%u", x->src.v6[0],
				x->src.v6[1], x->src.v6[2], x->src.v6[3]);
	else
		snprintf(addr, sizeof(addr), "[..%02x%02x]", x->src.v6[14],
				x->src.v6[15]);
	fprintf(stderr, "  %s t=%" PRIu64 " %s:%u > :%u %-4s seq %u ack %u "
		"win %u len %d\n", dir, st.ns->now_ms, addr,
		(l4[0] << 8) | l4[1], (l4[2] << 8) | l4[3], flags,
		(unsigned int)((l4[4] << 24) | (l4[5] << 16) | (l4[6] << 8) | l4[7]),
		(unsigned int)((l4[8] << 24) | (l4[9] << 16) | (l4[10] << 8) | l4[11]),
		(l4[14] << 8) | l4[15], x->l4_len - (l4[12] >> 4) * 4);
}

static void remove_runtime_dir(void);

static void
fail(const char *what)
{
	fprintf(stderr, "fuzz_net_input: invariant broken: %s\n", what);
	remove_runtime_dir();	/* abort() skips the atexit clean-up */
	abort();
}

/* Checksums of our own, not the stack's: the checker must not share the
 * code it checks. */
static uint32_t
sum16(const uint8_t *p, size_t n, uint32_t s)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	return s;
}

static uint16_t
fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

static uint32_t
pseudo_sum(const struct l34 *x, uint8_t proto, uint16_t l4_len)
{
	if (x->family == NET_AF_INET6)
		return sum16(x->src.v6, 16, 0) + sum16(x->dst.v6, 16, 0) + proto +
			l4_len;
	return sum16(x->ip + 12, 8, 0) + proto + l4_len;
}

static uint16_t
rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t
rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
		(uint32_t)p[2] << 8 | p[3];
}

static void
wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void
wr32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* The application's byte at a stream offset. */
static inline uint8_t
pattern(uint32_t off)
{
	return (uint8_t)((off * 2654435761u) >> 24);
}

/* Transmit side ----------------------------------------------------------- */

/* Payload bytes must be the application's bytes at their stream offset. */
static void
check_tx_payload(const struct l34 *x)
{
	const uint8_t *l4 = x->ip + x->ip_len;
	uint16_t doff = (uint16_t)((l4[12] >> 4) * 4), j;
	uint16_t sport = rd16(l4), dport = rd16(l4 + 2);
	uint32_t seq = rd32(l4 + 4), i;
	const struct tcp_conn *c = NULL;

	if (x->l4_len <= doff)
		return;
	for (i = 0; i < st.ns->cfg.max_conns && st.ns->conns != NULL; i++) {
		const struct tcp_conn *k = &st.ns->conns[i];

		if (k->state != TCP_CLOSED && net_ip_eq(&k->raddr, &x->dst) &&
				k->rport == dport && k->lport == sport &&
				tcp_family(k) == x->family)
			c = k;
	}
	/* Gone since the segment was queued (aborted by a later timer of
	 * the same run): its bytes cannot be checked any more. */
	if (c == NULL)
		return;
	if (l4[13] & 0x02)
		seq++;		/* data after a SYN */
	for (j = 0; j < x->l4_len - doff; j++) {
		uint32_t off = seq + j - (c->iss + 1);

		if ((int32_t)off < 0)
			fail("tx: payload before the first byte of the stream");
		if (c->app != NULL &&
				off >= ((const struct app_conn *)c->app)->written)
			fail("tx: payload beyond what the application wrote");
		if (l4[doff + j] != pattern(off))
			fail("tx: payload byte differs from the one written at "
					"that offset");
	}
}

static void
remember_iss(const union net_ip *raddr, uint16_t rport, uint32_t iss)
{
	unsigned int i;

	for (i = 0; i < PEERS; i++) {
		if (st.peer[i].used && net_ip_eq(&st.peer[i].raddr, raddr) &&
				st.peer[i].rport == rport) {
			st.peer[i].iss = iss;
			return;
		}
	}
	st.peer[st.peer_next] = (struct peer_iss){ *raddr, rport, iss, true };
	st.peer_next = (st.peer_next + 1) % PEERS;
}

/* An IPv4 frame's header; returns false when the rest is not TCP (an
 * ICMP message, checked here). */
static bool
check_tx_ipv4(const struct rte_mbuf *m, const struct l34 *x, uint32_t len)
{
	const uint8_t *ip = x->ip;
	uint16_t hlen = x->ip_len, total = rd16(ip + 2);

	if (ip[0] >> 4 != 4 || hlen < 20 || 14u + hlen > len)
		fail("tx: bad IPv4 version or header length");
	if (total != len - 14)
		fail("tx: IPv4 total length differs from the frame");
	if (!(m->ol_flags & RTE_MBUF_F_TX_IP_CKSUM) &&
			fold(sum16(ip, hlen, 0)) != 0xffff)
		fail("tx: bad IPv4 header checksum");
	if ((m->ol_flags & (RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_TCP_CKSUM)) &&
			(!st.ifc.tx_cksum_offload || m->l2_len != 14 ||
			 m->l3_len != hlen || !(m->ol_flags & RTE_MBUF_F_TX_IPV4)))
		fail("tx: checksum offload asked for wrongly");
	if (memcmp(ip + 12, &st.ifc.ip, 4) != 0)
		fail("tx: source address is not ours");
	if (ip[9] == 1) {
		if (fold(sum16(ip + hlen, x->l4_len, 0)) != 0xffff)
			fail("tx: bad ICMP checksum");
		return false;
	}
	return true;
}

/* An IPv6 frame's headers; returns false when the rest is not TCP (an
 * ICMPv6 message, checked here): from one of our addresses (:: only for
 * a duplicate address detection probe), the hop limit neighbour discovery
 * and MLD ask for. */
static bool
check_tx_ipv6(const struct rte_mbuf *m, const struct l34 *x, uint32_t len)
{
	const uint8_t *ip = x->ip, *l4 = x->ip + x->ip_len;
	union net_ip ll;
	uint8_t type;

	net_ip6_link_local(our_mac, ll.v6);
	if (ip[0] >> 4 != 6 || 54u + rd16(ip + 4) != len)
		fail("tx: bad IPv6 version or payload length");
	if ((m->ol_flags & (RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_TCP_CKSUM)) &&
			(!st.ifc.tx_cksum_offload || m->l2_len != 14 ||
			 m->l3_len != 40 || !(m->ol_flags & RTE_MBUF_F_TX_IPV6) ||
			 (m->ol_flags & RTE_MBUF_F_TX_IP_CKSUM)))
		fail("tx: IPv6 checksum offload asked for wrongly");
	if (x->proto == 6) {
		if (x->ip_len != 40 || ip[7] != 64)
			fail("tx: TCP over IPv6 with extension headers or an odd "
					"hop limit");
		if (memcmp(ip + 8, our_ip6, 16) != 0 &&
				!net_ip_eq(&x->src, &ll))
			fail("tx: IPv6 source address is not ours");
		return true;
	}
	if (x->proto != 58 || x->l4_len < 8)
		fail("tx: IPv6 carrying neither TCP nor ICMPv6");
	if (fold(sum16(l4, x->l4_len, pseudo_sum(x, 58, x->l4_len))) != 0xffff)
		fail("tx: bad ICMPv6 checksum");
	type = l4[0];
	if (net_ip_is_zero(&x->src) ? type != 135 :
			memcmp(ip + 8, our_ip6, 16) != 0 && !net_ip_eq(&x->src, &ll))
		fail("tx: ICMPv6 from an address not ours");
	if ((type == 135 || type == 136) && ip[7] != 255)
		fail("tx: neighbour discovery with a hop limit not 255");
	if (type == 143 && (ip[7] != 1 || !net_ip_eq(&x->src, &ll)))
		fail("tx: MLD report not one hop from the link-local address");
	if (type < 128 && type != 1 && type != 4)
		fail("tx: an ICMPv6 error we never send");
	return false;
}

/* Every frame the stack sends must be one a real network would accept. */
static void
check_tx_frame(const struct rte_mbuf *m)
{
	static uint8_t f[RTE_MBUF_DEFAULT_BUF_SIZE * 4];
	uint32_t len = rte_pktmbuf_pkt_len(m), seg_sum = 0;
	const struct rte_mbuf *s;
	const uint8_t *l4;
	struct l34 x;

	for (s = m; s != NULL; s = s->next)
		seg_sum += s->data_len;
	if (seg_sum != len)
		fail("tx: pkt_len differs from the sum of the segments");
	if (len < 14)
		fail("tx: frame shorter than an Ethernet header");
	if (len > sizeof(f))
		fail("tx: frame larger than any MTU");
	if (rte_pktmbuf_read(m, 0, len, f) != f)
		memcpy(f, rte_pktmbuf_mtod(m, const uint8_t *), len);
	if (memcmp(f + 6, our_mac, 6) != 0)
		fail("tx: source MAC is not ours");
	if (rd16(f + 12) == 0x0806)
		return;		/* ARP: a request turned around in place */
	if (len > 14u + st.ifc.mtu)
		fail("tx: frame larger than the MTU");
	if (!locate(f, (uint16_t)len, &x))
		fail("tx: truncated IP header");
	if (!(x.family == NET_AF_INET ? check_tx_ipv4(m, &x, len) :
			check_tx_ipv6(m, &x, len)))
		return;
	if (x.proto != 6)
		fail("tx: neither ICMP nor TCP");
	l4 = x.ip + x.ip_len;
	if (x.l4_len < 20 || (l4[12] >> 4) * 4 < 20 ||
			(l4[12] >> 4) * 4 > x.l4_len)
		fail("tx: bad TCP data offset");
	if (m->ol_flags & RTE_MBUF_F_TX_TCP_CKSUM) {
		/* The device wants the pseudo header's sum, uncomplemented. */
		if (rd16(l4 + 16) != fold(pseudo_sum(&x, 6, x.l4_len)))
			fail("tx: bad pseudo-header sum for checksum offload");
	} else if (fold(sum16(l4, x.l4_len, pseudo_sum(&x, 6, x.l4_len))) !=
			0xffff) {
		fail("tx: bad TCP checksum");
	}
	if (trace)
		trace_tcp("tx", &x);
	check_tx_payload(&x);
	if (l4[13] & 0x02)	/* SYN or SYN-ACK: remember the ISS */
		remember_iss(&x.dst, rd16(l4 + 2), rd32(l4 + 4));
}

static uint16_t
fuzz_tx(void *ctx, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t take = st.tx_partial ? (n + 1) / 2 : n, i;

	RTE_SET_USED(ctx);
	/* Frames the device refuses stay the stack's to free. */
	for (i = 0; i < take; i++) {
		check_tx_frame(pkts[i]);
		rte_pktmbuf_free(pkts[i]);
	}
	st.tx_frames += take;
	return take;
}

/* A toy application ------------------------------------------------------ */

static struct app_conn *
app_of(struct tcp_conn *c)
{
	struct app_conn *a = c->app;

	if (a == NULL || a != &st.app[c->index] || a->magic != APP_MAGIC)
		fail("upcall for a connection the application does not hold");
	return a;
}

/* Writes up to len bytes of the pattern; returns how many were taken. */
static uint32_t
app_write(struct tcp_conn *c, struct app_conn *a, uint32_t len)
{
	uint8_t buf[4096];
	uint32_t i, n;

	len = RTE_MIN(len, (uint32_t)sizeof(buf));
	for (i = 0; i < len; i++)
		buf[i] = pattern(a->written + i);
	n = tcp_write(st.ns, c, buf, len);
	if (n > len)
		fail("tcp_write took more than it was given");
	a->written += n;
	return n;
}

static void
app_write_big(struct tcp_conn *c, struct app_conn *a)
{
	while (a->big_left > 0) {
		uint32_t n = app_write(c, a, a->big_left);

		if (n == 0)
			break;
		a->big_left -= n;
	}
}

/* Each byte handed up must have been sent by the peer at that sequence
 * number, in some segment (overlaps may differ: any of them will do).
 * What is handed up starts at rcv_read: TCP may hold more, acknowledged. */
static void
check_rx_bytes(const struct tcp_conn *c, const uint8_t *data, uint32_t len)
{
	uint32_t j, k;

	for (j = 0; j < len; j++) {
		uint32_t seq = c->rcv_read + j;
		bool found = false;

		for (k = 0; k < st.nrx && !found; k++) {
			const struct rx_seg *r = &st.rx[k];
			uint32_t at = seq - r->seq;

			found = net_ip_eq(&r->raddr, &c->raddr) &&
				r->rport == c->rport &&
				r->lport == c->lport && at < r->len &&
				r->data[at] == data[j];
		}
		if (!found)
			fail("rx: delivered a byte the peer never sent at that "
					"sequence number");
	}
}

static int
app_accepted(void *ctx, struct tcp_conn *c)
{
	struct app_conn *a;

	RTE_SET_USED(ctx);
	if (c->index >= MAX_CONNS)
		fail("connection index beyond max_conns");
	a = &st.app[c->index];
	if (a->magic == APP_MAGIC)
		fail("accepted twice without closed");
	if (c->rport == 7)
		return -1;	/* the refusal path: the peer gets a RST */
	memset(a, 0, sizeof(*a));
	a->magic = APP_MAGIC;
	c->app = a;
	st.accepted++;
	return 0;
}

/* Commands ride in the first byte of a batch, so mutations find them:
 * C closes, A aborts, W queues a large answer; anything else is echoed in
 * a few bytes. */
static uint32_t
app_recv(void *ctx, struct tcp_conn *c, const uint8_t *data, uint32_t len)
{
	struct app_conn *a = app_of(c);
	uint32_t take;

	RTE_SET_USED(ctx);
	if (len == 0)
		fail("recv upcall with no data");
	if (st.no_data_why != NULL)
		fail(st.no_data_why);
	check_rx_bytes(c, data, len);
	take = RTE_MIN(len, st.rcv_cap - a->buffered);
	a->buffered += take;
	tcp_set_rcv_space(st.ns, c, st.rcv_cap - a->buffered);
	switch (data[0]) {
	case 'C':
		tcp_close(st.ns, c);
		break;
	case 'A':
		tcp_abort(st.ns, c);
		break;
	case 'W':
		a->big_left = BIG_RESPONSE;
		app_write_big(c, a);
		break;
	default:
		app_write(c, a, len % 97 + 1);
		break;
	}
	return take;
}

static void
app_sent(void *ctx, struct tcp_conn *c)
{
	RTE_SET_USED(ctx);
	app_write_big(c, app_of(c));
}

static void
app_peer_closed(void *ctx, struct tcp_conn *c)
{
	RTE_SET_USED(ctx);
	app_of(c);
	tcp_close(st.ns, c);
}

static void
app_closed(void *ctx, struct tcp_conn *c)
{
	struct app_conn *a = app_of(c);

	RTE_SET_USED(ctx);
	a->magic = 0;
	st.closed++;
}

static const struct tcp_upcalls app_upcalls = {
	.accepted = app_accepted,
	.recv = app_recv,
	.sent = app_sent,
	.peer_closed = app_peer_closed,
	.closed = app_closed,
};

/* The application consumes what it buffered and pushes pending output from
 * outside any upcall, as a handler finishing later would. */
static void
app_tick(void)
{
	uint32_t i;

	for (i = 0; i < st.ns->cfg.max_conns; i++) {
		struct tcp_conn *c = &st.ns->conns[i];
		struct app_conn *a = c->app;

		if (c->state == TCP_CLOSED || a == NULL)
			continue;
		app_of(c);
		a->buffered = 0;
		app_write_big(c, a);
		tcp_set_rcv_space(st.ns, c, st.rcv_cap);
		tcp_output(st.ns, c);
	}
}

/* The gauges telemetry shows must match the table. */
static void
check_gauges(void)
{
	uint64_t open = 0, syn_recv = 0, time_wait = 0, rcvq = 0, rcvbuf = 0;
	uint32_t i;

	for (i = 0; i < st.ns->cfg.max_conns; i++) {
		struct tcp_conn *c = &st.ns->conns[i];

		if (c->state == TCP_CLOSED)
			continue;
		open++;
		syn_recv += c->state == TCP_SYN_RECEIVED;
		time_wait += c->state == TCP_TIME_WAIT;
		rcvq += c->rcvq.n;
		rcvbuf += c->rcvbuf;
		if (c->rcvq.held > c->rcvq.n || (c->rcvq.held == 0) !=
				(c->rcv_read == c->rcv_nxt))
			fail("held data and rcv_read disagree");
		if (tcp_rcvq_check(c) != NULL)
			fail(tcp_rcvq_check(c));
		if (c->rcvbuf > st.ns->cfg.rcv_buf_max &&
				c->rcvbuf > st.ns->cfg.rcv_buf_init)
			fail("a receive buffer past its bound");
		if (c->app != NULL)
			app_of(c);
	}
	if (st.stats.tcp_conns_open != open)
		fail("tcp_conns_open differs from the table");
	if (st.stats.tcp_syn_recv != syn_recv)
		fail("tcp_syn_recv differs from the table");
	if (st.stats.tcp_time_wait != time_wait)
		fail("tcp_time_wait differs from the table");
	if (st.stats.tcp_rcvq_mbufs != rcvq)
		fail("tcp_rcvq_mbufs differs from the receive queues");
	if (st.stats.tcp_rcv_buf_bytes != rcvbuf)
		fail("tcp_rcv_buf_bytes differs from the buffers");
	if (rcvbuf > (uint64_t)open * st.ns->cfg.rcv_buf_init +
			st.ns->cfg.rcv_buf_budget)
		fail("the receive buffers grew past the budget");
}

/* Receive side ------------------------------------------------------------ */

/* Adds the ISS to the acknowledgement number and to the SACK edges. */
static void
relocate(uint8_t *l4, uint16_t l4_len, uint32_t iss)
{
	uint16_t doff = (uint16_t)((l4[12] >> 4) * 4), i = 20;

	wr32(l4 + 8, rd32(l4 + 8) + iss);
	if (doff > l4_len)
		return;
	while (i < doff && l4[i] != 0) {
		uint8_t olen;

		if (l4[i] == 1) {
			i++;
			continue;
		}
		if (i + 1 >= doff || l4[i + 1] < 2 || i + l4[i + 1] > doff)
			return;
		olen = l4[i + 1];
		if (l4[i] == 5) {
			uint16_t k;

			for (k = 2; k + 4 <= olen; k += 4)
				wr32(l4 + i + k, rd32(l4 + i + k) + iss);
		}
		i += olen;
	}
}

/* The ISS we last sent that peer, or NULL. */
static const struct peer_iss *
peer_of(const union net_ip *raddr, uint16_t rport)
{
	unsigned int i;

	for (i = 0; i < PEERS; i++)
		if (st.peer[i].used && net_ip_eq(&st.peer[i].raddr, raddr) &&
				st.peer[i].rport == rport)
			return &st.peer[i];
	return NULL;
}

/* Checksum repairs and the relative ACK, so mutations reach TCP states
 * instead of dying in the checksum check. */
static void
prepare_frame(uint8_t *f, uint16_t len, uint8_t ctl, struct rte_mbuf *m)
{
	uint8_t mode = ctl & CTL_CKSUM_MASK;
	struct l34 x;
	uint8_t *l4;

	if (!locate(f, len, &x))
		return;
	l4 = x.ip + x.ip_len;
	if ((ctl & CTL_REL_ACK) && x.proto == 6 && x.l4_len >= 20) {
		const struct peer_iss *pi = peer_of(&x.src, rd16(l4));

		if (pi != NULL)
			relocate(l4, x.l4_len, pi->iss);
	}
	/* A Packet Too Big quotes one of our segments: its sequence number
	 * is relative to our ISS too. */
	if ((ctl & CTL_REL_ACK) && x.family == NET_AF_INET6 && x.proto == 58 &&
			x.l4_len >= 8 + 40 + 8 && l4[0] == 2) {
		union net_ip q;
		const struct peer_iss *pi;

		memcpy(q.v6, l4 + 8 + 24, 16);
		pi = peer_of(&q, rd16(l4 + 8 + 40 + 2));
		if (pi != NULL)
			wr32(l4 + 8 + 40 + 4, rd32(l4 + 8 + 40 + 4) + pi->iss);
	}
	if (mode == CTL_CKSUM_RAW)
		return;
	if (x.family == NET_AF_INET) {
		wr16(x.ip + 10, 0);
		wr16(x.ip + 10, (uint16_t)~fold(sum16(x.ip, x.ip_len, 0)));
	}
	if (mode == CTL_CKSUM_GOOD) {
		m->ol_flags |= RTE_MBUF_F_RX_L4_CKSUM_GOOD;
		return;
	}
	if (mode == CTL_CKSUM_BAD) {
		m->ol_flags |= RTE_MBUF_F_RX_L4_CKSUM_BAD;
		return;
	}
	if (x.proto == 6 && x.l4_len >= 20) {
		wr16(l4 + 16, 0);
		wr16(l4 + 16, (uint16_t)~fold(sum16(l4, x.l4_len,
				pseudo_sum(&x, 6, x.l4_len))));
	} else if (x.proto == 1 && x.family == NET_AF_INET && x.l4_len >= 4) {
		wr16(l4 + 2, 0);
		wr16(l4 + 2, (uint16_t)~fold(sum16(l4, x.l4_len, 0)));
	} else if (x.proto == 58 && x.l4_len >= 4) {
		wr16(l4 + 2, 0);
		wr16(l4 + 2, (uint16_t)~fold(sum16(l4, x.l4_len,
				pseudo_sum(&x, 58, x.l4_len))));
	}
}

/* Remembers the payload of a TCP segment to us, parsed as the stack
 * would (IP lengths, data offset). */
static void
log_rx(const uint8_t *f, uint16_t len)
{
	static uint8_t copy[MAX_FRAME_LEN];
	uint16_t doff;
	const uint8_t *l4;
	struct l34 x;
	struct rx_seg *r;

	if (st.nrx == RX_LOG || len > sizeof(copy))
		return;
	memcpy(copy, f, len);
	if (!locate(copy, len, &x) || x.proto != 6 || x.l4_len < 20)
		return;
	l4 = f + (x.ip - copy) + x.ip_len;	/* into the input, which lives on */
	doff = (uint16_t)((l4[12] >> 4) * 4);
	if (doff < 20 || doff >= x.l4_len)
		return;
	r = &st.rx[st.nrx++];
	r->raddr = x.src;
	r->rport = rd16(l4);
	r->lport = rd16(l4 + 2);
	r->seq = rd32(l4 + 4) + !!(l4[13] & 0x02);
	r->data = l4 + doff;
	r->len = (uint16_t)(x.l4_len - doff);
}

/* Whether the segment must be dropped for its ACK, by the stack's own
 * view of the connection: then none of its data may reach the application. */
static const char *
unacceptable_ack(uint8_t *f, uint16_t len)
{
	const struct tcp_conn *c = NULL;
	const uint8_t *l4;
	struct l34 x;
	uint32_t ack, i;

	if (!locate(f, len, &x) || x.proto != 6 || x.l4_len < 20)
		return NULL;
	l4 = x.ip + x.ip_len;
	if ((l4[13] & 0x17) != 0x10)	/* ACK, and no SYN, RST or FIN */
		return NULL;
	for (i = 0; i < st.ns->cfg.max_conns; i++) {
		const struct tcp_conn *k = &st.ns->conns[i];

		if (k->state != TCP_CLOSED && net_ip_eq(&k->raddr, &x.src) &&
				tcp_family(k) == x.family &&
				k->rport == rd16(l4) && k->lport == rd16(l4 + 2))
			c = k;
	}
	if (c == NULL || (c->state != TCP_ESTABLISHED &&
			c->state != TCP_FIN_WAIT_1 && c->state != TCP_FIN_WAIT_2))
		return NULL;
	ack = rd32(l4 + 8);
	if ((int32_t)(ack - c->snd_max) > 0)
		return "rx: data delivered from a segment acknowledging data "
			"never sent (RFC 9293 3.10.7.4: drop it)";
	if ((int32_t)(ack - (c->snd_una - c->max_sndwnd)) < 0)
		return "rx: data delivered from a segment with a too old ACK "
			"(RFC 5961 5.2: drop it)";
	return NULL;
}

static void
deliver(const uint8_t *frame, uint16_t len, uint8_t ctl)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(st.pool);
	struct l34 x;
	uint8_t *p;

	if (m == NULL)
		return;		/* the NIC would have dropped it too */
	p = (uint8_t *)rte_pktmbuf_append(m, len);
	if (p == NULL) {
		rte_pktmbuf_free(m);
		return;
	}
	memcpy(p, frame, len);
	prepare_frame(p, len, ctl, m);
	if (trace && locate(p, len, &x) && x.proto == 6 && x.l4_len >= 20)
		trace_tcp("rx", &x);
	st.no_data_why = unacceptable_ack(p, len);
	net_input(st.ns, m);
	st.no_data_why = NULL;
	/* Check what it sent while the connection it came from is current. */
	net_flush(st.ns);
}

static void
advance(uint64_t ms)
{
	net_timers(st.ns, st.ns->now_ms + ms);
	app_tick();
	net_flush(st.ns);
	check_gauges();
}

static void
print_summary(void)
{
	unsigned int r;

	printf("  rx %" PRIu64 " tx %" PRIu64 " arp %" PRIu64 " icmp %" PRIu64
		" accepted %u closed %u\n  tcp:", st.stats.rx_pkts, st.tx_frames,
		st.stats.arp_replies, st.stats.icmp_echo, st.accepted,
		st.closed);
#define PRINT_COUNTER(n) \
	if (st.stats.tcp.n != 0) \
		printf(" %s %" PRIu64, #n, st.stats.tcp.n);
	TCP_COUNTERS(PRINT_COUNTER)
	printf("\n  nd:");
#define PRINT_ND(n, unit) \
	if (st.stats.nd.n != 0) \
		printf(" %s %" PRIu64, #n, st.stats.nd.n);
	ND_COUNTERS(PRINT_ND)
#undef PRINT_ND
#undef PRINT_COUNTER
	printf("\n");
	for (r = 1; r < NET_DROP__COUNT; r++)
		if (st.stats.drop[r] != 0)
			printf("  drop %s %" PRIu64 "\n", net_drop_name(r),
					st.stats.drop[r]);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t caps[4] = { 65535, 4096, 512, 64 };
	struct tcp_config cfg;
	unsigned int frames = 0;
	uint64_t end;
	size_t off = 2;
	uint8_t c0, c1;

	if (size < 2)
		return 0;
	c0 = data[0];
	c1 = data[1];
	memset(&st.ns, 0, sizeof(st) - offsetof(struct fuzz_state, ns));
	/* The same input must take the same path: ISS and hash seed. */
	rte_srand(0x65777966);
	st.pool = (c0 & CFG_SMALL_POOL) ? small_pool : big_pool;
	st.rcv_cap = caps[c0 & CFG_RCV_CAP_MASK];
	st.tx_partial = c0 & CFG_TX_PARTIAL;
	st.ifc.tx_multiseg = c0 & CFG_TX_MULTISEG;
	st.ifc.tx_cksum_offload = c1 & CFG1_TX_OFFLOAD;
	if (rte_mempool_in_use_count(st.pool) != 0)
		fail("mbufs in use before the input");

	tcp_config_defaults(&cfg);
	cfg.max_conns = 2u << ((c0 >> CFG_CONNS_SHIFT) & 3);
	if (cfg.max_conns == 8) {
		cfg.cc = TCP_CC_CUBIC;
		cfg.pacing = true;
	} else if (cfg.max_conns == 16) {
		cfg.cc = TCP_CC_BBR;
	}
	if (c0 & CFG_SMALL_SNDBUF)
		cfg.snd_buf = 2048;
	cfg.syncookies = !(c1 & CFG1_NO_SYNCOOKIES);
	if (c1 & CFG1_BACKLOG_1)
		cfg.syn_backlog = 1;
	if (c1 & CFG1_KEEPALIVE) {
		cfg.keepalive_ms = 2000;
		cfg.keepalive_intvl_ms = 1000;
		cfg.keepalive_probes = 3;
	}
	if (c1 & CFG1_IDLE_TIMEOUT)
		cfg.idle_timeout_ms = 20000;
	if (c1 & CFG1_MBUF_RESERVE)
		cfg.mbuf_reserve = st.pool->size - 16;
	if (c1 & CFG1_TIGHT) {
		cfg.max_time_wait = 1;
		cfg.delack_ms = 0;
		cfg.rcvq_mbufs_max = 24;	/* out-of-order data pruned */
	}
	arp_cache_init(&st.arp, 60000);
	net_nd_init(&st.nd, 60000);
	cfg.rcv_space = st.rcv_cap;	/* the SYN-ACK's window */
	if (c0 & 1) {
		cfg.rcv_buf_init = 4096;
		cfg.rcv_buf_max = 65536;
		cfg.rcv_buf_budget = 96 * 1024;
	}
	st.ns = net_stack_create(&st.ifc, &st.arp, st.pool, &cfg, fuzz_tx,
			NULL, &st.stats, 1000000);
	if (st.ns == NULL)
		fail("net_stack_create");
	net_stack_set_nd(st.ns, 0, &st.nd);
	/* Two listeners with the same upcalls: the port a segment names
	 * picks one, as the cleartext and TLS ports do in ewykd. */
	if (net_stack_listen(st.ns, 80, &app_upcalls, NULL) != 0 ||
			net_stack_listen(st.ns, 443, &app_upcalls, NULL) != 0)
		fail("net_stack_listen");
	if ((c1 & CFG1_ACTIVE_OPEN) && tcp_connect(st.ns, RTE_BE32(0xc6120001),
			8080, 50000, peer_mac) == NULL)
		fail("tcp_connect on an empty table");
	net_flush(st.ns);

	while (off + 3 <= size && frames < MAX_FRAMES) {
		uint8_t ctl = data[off];
		uint16_t len = rd16(data + off + 1);

		off += 3;
		len = (uint16_t)RTE_MIN((size_t)len, size - off);
		len = RTE_MIN(len, (uint16_t)MAX_FRAME_LEN);
		if (ctl & CTL_OPEN6) {
			struct net_addr a = { net_ip6(peer_ip6), NET_AF_INET6 };

			/* NULL when one is open already: it may well be. */
			tcp_connect_addr(st.ns, &a, 8080, 50001, peer_mac);
			net_flush(st.ns);
		}
		log_rx(data + off, len);
		deliver(data + off, len, ctl);
		if (ctl & CTL_TWICE)
			deliver(data + off, len, ctl);
		off += len;
		frames++;
		advance(clock_steps[(ctl >> CTL_CLOCK_SHIFT) & 7]);
	}
	/* Let every retransmission, persist and TIME-WAIT timer run out. */
	end = st.ns->now_ms + END_MS;
	while (st.ns->now_ms < end)
		advance(5000);

	net_stack_destroy(st.ns);
	st.ns = NULL;
	if (verbose)
		print_summary();
	if (st.stats.tcp_conns_open != 0 || st.stats.tcp_syn_recv != 0 ||
			st.stats.tcp_time_wait != 0)
		fail("connection gauges not back to zero after net_stack_destroy");
	if (st.accepted != st.closed)
		fail("accepted and closed upcalls do not pair up");
	if (rte_mempool_in_use_count(st.pool) != 0) {
		fprintf(stderr, "fuzz_net_input: %u mbufs leaked\n",
				rte_mempool_in_use_count(st.pool));
		fail("mbuf leak");
	}
	return 0;
}

static int
rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	RTE_SET_USED(sb);
	RTE_SET_USED(flag);
	RTE_SET_USED(ftw);
	return remove(path);
}

/* The EAL leaves its runtime directory behind even with --no-shconf. */
static void
remove_runtime_dir(void)
{
	const char *dir = rte_eal_get_runtime_dir();

	if (dir != NULL && dir[0] != '\0')
		nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static void
eal_teardown(void)
{
	rte_eal_cleanup();
	remove_runtime_dir();
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char prefix[64];
	char *eal[] = {
		"fuzz_net_input", "--no-huge", "-m", "128", "--no-pci",
		"--no-shconf", "--no-telemetry", "--log-level=*:error",
		"--file-prefix", prefix, NULL,
	};

	RTE_SET_USED(argc);
	RTE_SET_USED(argv);
	/* run_fuzz.sh names its runs so that it can clean up after
	 * libFuzzer, which may leave without running atexit handlers. */
	snprintf(prefix, sizeof(prefix), "%s%d", getenv("FUZZ_NET_PREFIX") ?
			getenv("FUZZ_NET_PREFIX") : "fuzz", (int)getpid());
	if (rte_eal_init(RTE_DIM(eal) - 1, eal) < 0) {
		fprintf(stderr, "fuzz_net_input: rte_eal_init failed\n");
		exit(1);
	}
	/* No cache: rte_mempool_in_use_count() must be exact. */
	big_pool = rte_pktmbuf_pool_create("fuzz_big", 4095, 0, 0,
			RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	small_pool = rte_pktmbuf_pool_create("fuzz_small", 48, 0, 0,
			RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (big_pool == NULL || small_pool == NULL) {
		fprintf(stderr, "fuzz_net_input: no mbuf pool\n");
		exit(1);
	}
	atexit(eal_teardown);
	verbose = getenv("FUZZ_NET_VERBOSE") != NULL;
	trace = getenv("FUZZ_NET_TRACE") != NULL;
	memcpy(st.ifc.mac, our_mac, 6);
	st.ifc.ip = RTE_BE32(0xc6120002);	/* 198.18.0.2 */
	st.ifc.netmask = RTE_BE32(0xffffff00);
	memcpy(st.ifc.ip6, our_ip6, 16);
	st.ifc.prefix6 = 64;
	st.ifc.mtu = 1500;
	st.ifc.rx_cksum_offload = true;	/* ctl bits pick good/bad/unknown */
	return 0;
}
