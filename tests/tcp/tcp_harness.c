/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <limits.h>
#include <cmocka.h>

#include <rte_eal.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "cksum.h"
#include "tcp_harness.h"

static struct rte_mempool *pool;

struct rte_mempool *
th_pool(void)
{
	return pool;
}

uint32_t
th_blocks_out(const struct blk_pool *p)
{
	uint32_t n = p->made;
	void *b;

	for (b = p->free; b != NULL; b = *(void **)b)
		n--;
	return n;
}

/* The EAL's runtime directory outlives the process unless removed. */
static void
eal_cleanup(void)
{
	char dir[PATH_MAX], cmd[PATH_MAX + 16];

	snprintf(dir, sizeof(dir), "%s", rte_eal_get_runtime_dir());
	rte_mempool_free(pool);
	rte_eal_cleanup();
	if (strstr(dir, "/dpdk/tcpharness") != NULL ||
			(getenv("FUZZ_NET_PREFIX") != NULL &&
			strstr(dir, getenv("FUZZ_NET_PREFIX")) != NULL)) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", dir);
	}
}

/* The pool's size: filling it is most of a test program's start (each
 * mbuf's first write faults its page in), so it is as small as most
 * tests allow; a program that holds megabytes in flight defines its own
 * th_pool_mbufs. */
__attribute__((weak)) unsigned int th_pool_mbufs = 4095;

static void
eal_once(void)
{
	char prefix[64];
	char *argv[] = { "tcp-harness", "--no-huge", "-m", "128", "--no-pci",
		"--no-shconf", "--no-telemetry", "--log-level=*:error",
		"--file-prefix", prefix, NULL };

	if (pool != NULL)
		return;
	/* The fuzz runner names its processes' directories, and sweeps
	 * them: libFuzzer may end without atexit(). */
	snprintf(prefix, sizeof(prefix), "%s%d", getenv("FUZZ_NET_PREFIX") ?
			getenv("FUZZ_NET_PREFIX") : "tcpharness", getpid());
	if (rte_eal_init(10, argv) < 0) {
		fprintf(stderr, "EAL init failed\n");
		exit(1);
	}
	pool = rte_pktmbuf_pool_create("th_pool", th_pool_mbufs, 0, 0,
			RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (pool == NULL) {
		fprintf(stderr, "mempool failed\n");
		exit(1);
	}
	atexit(eal_cleanup);
}

static void
keep(struct th *h, struct th_tx *tx, struct rte_mbuf *m)
{
	if (h->n_out == TH_MAX_CAPTURE) {
		rte_pktmbuf_free(m);
		return;
	}
	h->out_at[h->n_out] = h->now_us;
	h->out_port[h->n_out] = tx->port;
	h->out[h->n_out++] = m;
}

/* A device's TSO: m's payload in segments of tso_segsz, each with m's
 * headers, its own sequence number, IP length, IP ID (IPv4) and
 * checksums, FIN and PSH on the last alone (as DPDK's GSO library and
 * NICs do). The frame must be well-formed for it: its header lengths,
 * flags and pseudo-header sum are checked here. */
static void
cut_tso_frame(struct th *h, struct th_tx *tx, struct rte_mbuf *m)
{
	static uint8_t frame[UINT16_MAX + 64];
	uint32_t len = rte_pktmbuf_pkt_len(m), hl, off, k = 0;
	bool v6 = m->ol_flags & RTE_MBUF_F_TX_IPV6;
	const uint8_t *ip = frame + 14, *tcp;
	uint16_t unit = m->tso_segsz, id;
	const void *d;

	assert_true(len <= sizeof(frame));
	d = rte_pktmbuf_read(m, 0, len, frame);
	if (d != frame)
		memcpy(frame, d, len);
	hl = m->l2_len + m->l3_len + m->l4_len;
	assert_int_equal(m->l2_len, 14);
	assert_int_equal(m->l3_len, v6 ? 40 : 20);
	tcp = ip + m->l3_len;
	assert_int_equal(m->l4_len, (tcp[12] >> 4) * 4);
	assert_true(m->ol_flags & RTE_MBUF_F_TX_TCP_CKSUM);
	assert_true(v6 || (m->ol_flags & RTE_MBUF_F_TX_IP_CKSUM));
	assert_true(unit > 0 && len > hl + unit);
	id = (uint16_t)(ip[4] << 8 | ip[5]);
	h->tso_frames++;
	h->tso_segsz = unit;
	for (off = 0; off < len - hl; off += unit, k++) {
		uint32_t n = RTE_MIN((uint32_t)unit, len - hl - off);
		struct rte_mbuf *s = rte_pktmbuf_alloc(pool);
		uint8_t fam = v6 ? NET_AF_INET6 : NET_AF_INET;
		union net_ip src, dst;
		uint8_t *p, *sip, *st;
		uint32_t seq;
		struct cksum c;
		uint16_t sum;

		assert_non_null(s);
		p = (uint8_t *)rte_pktmbuf_append(s, (uint16_t)(hl + n));
		assert_non_null(p);
		memcpy(p, frame, hl);
		memcpy(p + hl, frame + hl + off, n);
		sip = p + 14;
		st = sip + m->l3_len;
		seq = (uint32_t)(st[4] << 24 | st[5] << 16 | st[6] << 8 | st[7]) + off;
		st[4] = (uint8_t)(seq >> 24), st[5] = (uint8_t)(seq >> 16);
		st[6] = (uint8_t)(seq >> 8), st[7] = (uint8_t)seq;
		if (off + n < len - hl)
			st[13] &= (uint8_t)~(TCP_FIN | TCP_PSH);
		if (v6) {
			sip[4] = (uint8_t)((m->l4_len + n) >> 8);
			sip[5] = (uint8_t)(m->l4_len + n);
		} else {
			sip[2] = (uint8_t)((20 + m->l4_len + n) >> 8);
			sip[3] = (uint8_t)(20 + m->l4_len + n);
			sip[4] = (uint8_t)((id + k) >> 8);
			sip[5] = (uint8_t)(id + k);
			sip[10] = sip[11] = 0;
			sum = cksum_buf(sip, 20);
			memcpy(sip + 10, &sum, 2);
		}
		/* The stack left the pseudo header's sum without the length
		 * in the field: the device adds the length and the rest. */
		memset(&src, 0, sizeof(src));
		memset(&dst, 0, sizeof(dst));
		memcpy(&src, v6 ? sip + 8 : sip + 12, v6 ? 16 : 4);
		memcpy(&dst, v6 ? sip + 24 : sip + 16, v6 ? 16 : 4);
		cksum_init(&c);
		cksum_pseudo(&c, fam, &src, &dst, 6, 0);
		sum = (uint16_t)~cksum_finish(&c);
		assert_memory_equal(st + 16, &sum, 2);
		st[16] = st[17] = 0;
		cksum_init(&c);
		cksum_pseudo(&c, fam, &src, &dst, 6, (uint16_t)(m->l4_len + n));
		cksum_feed(&c, st, m->l4_len + n);
		sum = cksum_finish(&c);
		memcpy(st + 16, &sum, 2);
		keep(h, tx, s);
	}
	rte_pktmbuf_free(m);
}

/* A device's checksum offload: the IPv4 header's, and TCP's from the
 * pseudo header's sum the stack left in its field. */
static void
fill_cksums(struct rte_mbuf *m)
{
	static uint8_t frame[UINT16_MAX + 64];
	uint32_t len = rte_pktmbuf_pkt_len(m);
	uint8_t *ip = rte_pktmbuf_mtod_offset(m, uint8_t *, m->l2_len);
	uint8_t *tcp = ip + m->l3_len;
	const void *d;
	struct cksum c;
	uint16_t sum;

	if (m->ol_flags & RTE_MBUF_F_TX_IP_CKSUM) {
		ip[10] = ip[11] = 0;
		sum = cksum_buf(ip, m->l3_len);
		memcpy(ip + 10, &sum, 2);
	}
	if (!(m->ol_flags & RTE_MBUF_F_TX_TCP_CKSUM))
		return;
	d = rte_pktmbuf_read(m, 0, len, frame);
	if (d != frame)
		memcpy(frame, d, len);
	/* The field holds the pseudo header's sum, folded: summing the
	 * segment over it gives the whole. */
	cksum_init(&c);
	cksum_feed(&c, frame + m->l2_len + m->l3_len,
			len - m->l2_len - m->l3_len);
	sum = cksum_finish(&c);
	memcpy(tcp + 16, &sum, 2);
}

static uint16_t
capture(void *ctx, struct rte_mbuf **pkts, uint16_t n)
{
	struct th_tx *tx = ctx;
	struct th *h = tx->h;
	struct rte_mbuf *m;
	uint16_t i;

	for (i = 0; i < n; i++) {
		m = pkts[i];
		if (h->copy_tx) {
			m = rte_pktmbuf_copy(pkts[i], pool, 0, UINT32_MAX);
			assert_non_null(m);
			/* the original is the driver's now: it may reuse it
			 * (an allocation would reset it so) */
			pkts[i]->pkt_len = 0;
			rte_pktmbuf_free(pkts[i]);
		}
		if (m->ol_flags & RTE_MBUF_F_TX_TCP_SEG) {
			cut_tso_frame(h, tx, m);
			continue;
		}
		fill_cksums(m);
		keep(h, tx, m);
	}
	return n;
}

/* TH_TEST=PATTERN runs only the tests whose names match (cmocka's
 * filter): one test alone, as when checking that it fails without the
 * mechanism it tests (a failed test leaves its stack behind, and the
 * next ones fail for want of memory). */
__attribute__((constructor)) static void
th_test_filter(void)
{
	const char *f = getenv("TH_TEST");

	if (f != NULL)
		cmocka_set_test_filter(f);
}

/* Application callbacks ------------------------------------------------- */

static int
app_accepted(void *ctx, struct tcp_conn *c)
{
	struct th *h = ctx;

	h->app.accepted++;
	h->app.conn = c;
	tcp_set_app(c, &h->app);
	tcp_set_rcv_space(h->ns, c, h->app.rcv_space);
	return 0;
}

/* The application takes everything it is handed, as a careless one
 * would: keeping data past the window it offered out of its hands is the
 * stack's job, and the tests check that the stack does it. With
 * room_only it takes what its room holds, and TCP keeps the rest. */
static uint32_t
app_recv(void *ctx, struct tcp_conn *c, const uint8_t *data, uint32_t len)
{
	struct th *h = ctx;

	if (h->app.room_only)
		len = RTE_MIN(len, h->app.rcv_space);
	if (len == 0)
		return 0;

	if (h->app.pattern != NULL) {
		uint32_t i;

		for (i = 0; i < len; i++)
			if (data[i] != h->app.pattern(h->app.got_len + i))
				fail_msg("byte %u differs", h->app.got_len + i);
	} else if (h->app.got_len + len > TH_APP_BUF) {
		fail_msg("%u bytes more than the test can hold", len);
	} else {
		memcpy(h->app.got + h->app.got_len, data, len);
	}
	h->app.got_len += len;
	h->app.rcv_space -= RTE_MIN(len, h->app.rcv_space);
	if (h->app.serve_unit > 0) {
		h->app.serve_in += len;
		while (h->app.serve_in >= h->app.serve_unit) {
			h->app.serve_in -= h->app.serve_unit;
			h->app.rcv_space += h->app.serve_unit;
			h->app.served++;
		}
	}
	tcp_set_rcv_space(h->ns, c, h->app.rcv_space);
	return len;
}

static void
app_sent(void *ctx, struct tcp_conn *c)
{
	struct th *h = ctx;

	(void)c;
	h->app.sent_calls++;
}

static void
app_peer_closed(void *ctx, struct tcp_conn *c)
{
	struct th *h = ctx;

	h->app.peer_closed++;
	if (h->app.close_on_fin)
		tcp_close(h->ns, c);
}

static void
app_closed(void *ctx, struct tcp_conn *c)
{
	struct th *h = ctx;

	(void)c;
	h->app.closed++;
	h->app.conn = NULL;
}

static const struct tcp_upcalls app_upcalls = {
	.accepted = app_accepted,
	.recv = app_recv,
	.sent = app_sent,
	.peer_closed = app_peer_closed,
	.closed = app_closed,
};

static const uint8_t local6[16] = { 0x20, 0x01, 0, 0x02, [15] = 2 };
static const uint8_t local6_2[16] = { 0x20, 0x01, 0, 0x02, 0, 0, 0, 1,
	[15] = 2 };
static const uint8_t peer6[16] = { 0x20, 0x01, 0, 0x02, [15] = 1 };
static const uint8_t peer6_2[16] = { 0x20, 0x01, 0, 0x02, 0, 0, 0, 1,
	[15] = 1 };

uint8_t
th_family(void)
{
	const char *f = getenv("TH_FAMILY");

	return f != NULL && strcmp(f, "6") == 0 ? NET_AF_INET6 : NET_AF_INET;
}

/* IPv6 on a port: its state, with duplicate address detection taken as
 * done (the ND tests run it themselves). */
static struct net_nd *
th_nd(struct th *h, uint8_t port)
{
	struct net_nd *nd = calloc(1, sizeof(*nd));

	assert_non_null(nd);
	net_nd_init(nd, 60000);
	nd->state[0] = nd->state[1] = NET_ADDR_PREFERRED;
	nd->dad_claimed = nd->dad_round;
	net_stack_set_nd(h->ns, port, nd);
	return nd;
}

struct th *
th_new(const struct tcp_config *cfg)
{
	struct tcp_config def;
	struct th *h;

	eal_once();
	h = calloc(1, sizeof(*h));
	assert_non_null(h);
	h->family = th_family();
	h->app.got = malloc(TH_APP_BUF);
	h->arp = calloc(1, sizeof(*h->arp));
	assert_non_null(h->app.got);
	assert_non_null(h->arp);
	arp_cache_init(h->arp, 60000);
	h->ifc.ip = TH_LOCAL_IP;
	h->ifc.netmask = 0x00ffffff;
	memcpy(h->ifc.ip6, local6, 16);
	h->ifc.prefix6 = h->family == NET_AF_INET6 ? 64 : 0;
	h->ifc.mtu = 1500;
	h->ifc.tx_multiseg = true;
	memcpy(h->ifc.mac, "\x02\x00\x00\x00\x00\x02", 6);
	if (cfg == NULL)
		tcp_config_defaults(&def);
	else
		def = *cfg;
	h->now = 1000;
	h->now_us = h->now * 1000;
	h->app.rcv_space = 65535;
	def.rcv_space = h->app.rcv_space;	/* the SYN-ACK's window */
	h->app.close_on_fin = true;
	h->in_use_at_start = rte_mempool_in_use_count(pool);
	if (getenv("TH_DEBUG"))
		fprintf(stderr, "in use at start: %u\n", h->in_use_at_start);
	h->tx[0].h = h;
	h->ns = net_stack_create(&h->ifc, h->arp, pool, &def, capture, &h->tx[0],
			&h->stats, h->now);
	assert_non_null(h->ns);
	if (h->family == NET_AF_INET6)
		h->nd = th_nd(h, 0);
	assert_int_equal(net_stack_listen(h->ns, TH_PORT, &app_upcalls, h), 0);
	return h;
}

struct net_addr
th_peer(const struct th *h)
{
	struct net_addr a = { net_ip4(TH_PEER_IP), NET_AF_INET };

	if (h->family == NET_AF_INET6)
		a = (struct net_addr){ net_ip6(peer6), NET_AF_INET6 };
	return a;
}

struct net_addr
th_peer2(const struct th *h)
{
	struct net_addr a = { net_ip4(TH_PEER2_IP), NET_AF_INET };

	if (h->family == NET_AF_INET6)
		a = (struct net_addr){ net_ip6(peer6_2), NET_AF_INET6 };
	return a;
}

union net_ip
th_local(const struct th *h, uint8_t port)
{
	const struct net_if *ifc = port == 0 ? &h->ifc : &h->ifc2;

	return h->family == NET_AF_INET6 ? net_ip6(ifc->ip6) : net_ip4(ifc->ip);
}

uint16_t
th_mss(const struct th *h)
{
	return (uint16_t)(h->ifc.mtu - (h->family == NET_AF_INET6 ? 60 : 40));
}

void
th_learn(struct th *h, uint8_t port, const struct net_addr *a,
		const uint8_t mac[6])
{
	if (a->family == NET_AF_INET6)
		neigh_update(&(port == 0 ? h->nd : h->nd2)->cache, &a->ip, mac,
				h->now);
	else
		neigh_update(port == 0 ? h->arp : h->arp2, &a->ip, mac, h->now);
}

bool
th_is_solicitation(const struct th *h, const uint8_t *f, uint8_t port,
		const struct net_addr *a)
{
	const struct net_if *ifc = port == 0 ? &h->ifc : &h->ifc2;

	if (memcmp(f + 6, ifc->mac, 6) != 0)
		return false;
	if (a->family == NET_AF_INET)	/* broadcast, request, sender, target */
		return memcmp(f, "\xff\xff\xff\xff\xff\xff", 6) == 0 &&
			(f[12] << 8 | f[13]) == 0x0806 && f[21] == 1 &&
			memcmp(f + 28, &ifc->ip, 4) == 0 &&
			memcmp(f + 38, &a->ip.v4, 4) == 0;
	/* To the target's solicited-node group, from our address, with
	 * our MAC in the source link-layer address option. */
	return f[0] == 0x33 && f[1] == 0x33 && f[2] == 0xff &&
		memcmp(f + 3, a->ip.v6 + 13, 3) == 0 &&
		(f[12] << 8 | f[13]) == 0x86dd && f[20] == 58 && f[21] == 255 &&
		memcmp(f + 22, ifc->ip6, 16) == 0 && f[54] == 135 &&
		memcmp(f + 62, a->ip.v6, 16) == 0 && f[78] == 1 &&
		memcmp(f + 80, ifc->mac, 6) == 0;
}

enum net_drop
th_not_ours(const struct th *h)
{
	return h->family == NET_AF_INET6 ? NET_DROP_IP6_NOT_OURS :
		NET_DROP_IP_NOT_OURS;
}

struct th_seg
th_seg_from(uint32_t seq, uint32_t ack, uint8_t flags)
{
	struct th_seg s = { .sport = 40000, .seq = seq, .ack = ack,
		.flags = flags, .win = 65535 };

	return s;
}

void
th_add_port(struct th *h)
{
	th_add_port_ips(h, 1);
}

void
th_add_port_ips(struct th *h, uint16_t ip_count)
{
	h->arp2 = calloc(1, sizeof(*h->arp2));
	assert_non_null(h->arp2);
	arp_cache_init(h->arp2, 60000);
	h->ifc2 = h->ifc;
	h->ifc2.ip = TH_LOCAL_IP2;
	h->ifc2.ip_count = ip_count;
	memcpy(h->ifc2.ip6, local6_2, 16);
	h->ifc2.mac[5] = 3;
	h->tx[1].h = h;
	h->tx[1].port = 1;
	assert_int_equal(net_stack_add_port(h->ns, &h->ifc2, h->arp2, capture,
			&h->tx[1]), 1);
	if (h->family == NET_AF_INET6)
		h->nd2 = th_nd(h, 1);
}

void
th_set_rcv_space(struct th *h, uint32_t bytes)
{
	h->app.rcv_space = bytes;
	if (h->app.conn != NULL)
		tcp_set_rcv_space(h->ns, h->app.conn, bytes);
	net_flush(h->ns);
}

void
th_drain(struct th *h)
{
	while (h->rd < h->n_out)
		rte_pktmbuf_free(h->out[h->rd++]);
	h->rd = h->n_out = 0;
}

void
th_free(struct th *h)
{
	net_stack_destroy(h->ns);
	th_drain(h);
	assert_int_equal(rte_mempool_in_use_count(pool), h->in_use_at_start);
	free(h->app.got);
	free(h->arp);
	free(h->arp2);
	free(h->nd);
	free(h->nd2);
	free(h);
}

/* The connection's scoreboard and receive queue hold their invariants
 * after every step. */
static void
th_check(const struct th *h)
{
	const char *err;

	if (h->app.conn == NULL || h->unchecked)
		return;
	err = tcp_sb_check(h->app.conn);
	if (err != NULL)
		fail_msg("scoreboard: %s", err);
	err = tcp_rcvq_check(h->app.conn);
	if (err != NULL)
		fail_msg("receive queue: %s", err);
}

void
th_inject(struct th *h, const struct th_seg *s)
{
	union net_ip dst = th_local(h, 0);

	th_inject_on(h, 0, &dst, s);
}

void
th_rx_frame(struct th *h, uint8_t port, const void *frame, uint16_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	void *p;

	assert_non_null(m);
	p = rte_pktmbuf_append(m, len);
	assert_non_null(p);
	memcpy(p, frame, len);
	net_rx_us(h->ns, port, &m, 1, h->now_us);
	if (h->hold_flush)
		return;
	net_flush(h->ns);
	th_check(h);
}

void
th_inject_on(struct th *h, uint8_t port, const union net_ip *dst,
		const struct th_seg *s)
{
	struct net_addr src = th_peer(h);

	th_inject_from(h, port, &src.ip, dst, s);
}

void
th_inject_from(struct th *h, uint8_t port, const union net_ip *src,
		const union net_ip *dst, const struct th_seg *s)
{
	static const uint8_t peer_mac[6] = { 2, 0, 0, 0, 0, 1 };
	uint16_t tcp_len = (uint16_t)(20 + s->optlen + s->len);
	bool v6 = h->family == NET_AF_INET6;
	uint16_t ip_len = v6 ? 40 : 20;
	uint8_t p[14 + 60 + 40 + 9000], *ip, *t;
	struct cksum c;
	uint16_t sum;

	assert_true(tcp_len <= sizeof(p) - 14 - ip_len);
	memcpy(p, port == 0 ? h->ifc.mac : h->ifc2.mac, 6);
	memcpy(p + 6, peer_mac, 6);
	ip = p + 14;
	memset(ip, 0, ip_len);
	if (v6) {
		p[12] = 0x86;
		p[13] = 0xdd;
		ip[0] = 0x60;
		ip[4] = (uint8_t)(tcp_len >> 8);
		ip[5] = (uint8_t)tcp_len;
		ip[6] = 6;
		ip[7] = 64;
		memcpy(ip + 8, src->v6, 16);
		memcpy(ip + 24, dst->v6, 16);
	} else {
		p[12] = 0x08;
		p[13] = 0x00;
		ip[0] = 0x45;
		ip[2] = (uint8_t)((20 + tcp_len) >> 8);
		ip[3] = (uint8_t)(20 + tcp_len);
		ip[8] = 64;
		ip[9] = 6;
		memcpy(ip + 12, &src->v4, 4);
		memcpy(ip + 16, &dst->v4, 4);
		sum = cksum_buf(ip, 20);
		memcpy(ip + 10, &sum, 2);
	}
	t = ip + ip_len;
	memset(t, 0, 20);
	t[0] = (uint8_t)(s->sport >> 8);
	t[1] = (uint8_t)s->sport;
	t[2] = (uint8_t)((s->dport ? s->dport : TH_PORT) >> 8);
	t[3] = (uint8_t)(s->dport ? s->dport : TH_PORT);
	t[4] = (uint8_t)(s->seq >> 24); t[5] = (uint8_t)(s->seq >> 16);
	t[6] = (uint8_t)(s->seq >> 8); t[7] = (uint8_t)s->seq;
	t[8] = (uint8_t)(s->ack >> 24); t[9] = (uint8_t)(s->ack >> 16);
	t[10] = (uint8_t)(s->ack >> 8); t[11] = (uint8_t)s->ack;
	t[12] = (uint8_t)(((20 + s->optlen) / 4) << 4);
	t[13] = s->flags;
	t[14] = (uint8_t)(s->win >> 8);
	t[15] = (uint8_t)s->win;
	memcpy(t + 20, s->opts, s->optlen);
	if (s->len)
		memcpy(t + 20 + s->optlen, s->data, s->len);
	cksum_init(&c);
	cksum_pseudo(&c, h->family, src, dst, 6, tcp_len);
	cksum_feed(&c, t, tcp_len);
	sum = cksum_finish(&c);
	memcpy(t + 16, &sum, 2);
	th_rx_frame(h, port, p, (uint16_t)(14 + ip_len + tcp_len));
}

/* The clock moves by step microseconds at a time until end, timers run
 * and the batches flushed at each. */
static void
advance(struct th *h, uint64_t end, uint64_t step)
{
	while (h->now_us < end) {
		h->now_us = RTE_MIN(h->now_us + step, end);
		h->now = h->now_us / 1000;
		net_timers_us(h->ns, h->now_us);
		net_flush(h->ns);
		th_check(h);
	}
}

void
th_advance(struct th *h, uint64_t ms)
{
	advance(h, h->now_us + ms * 1000, 1000);
}

void
th_advance_us(struct th *h, uint64_t us)
{
	advance(h, h->now_us + us, 1);
}

void
th_expect(struct th *h, struct th_out *o, uint8_t flags, uint32_t seq,
		uint32_t ack)
{
	if (!th_next(h, o))
		fail_msg("expected a segment with flags %#x", flags);
	if (o->t.flags != flags || o->t.seq != seq ||
			((flags & TCP_ACK) && o->t.ack != ack))
		fail_msg("got flags %#x seq %u ack %u, want %#x %u %u",
				o->t.flags, o->t.seq, o->t.ack, flags, seq, ack);
}

unsigned int
th_pending(const struct th *h)
{
	return h->n_out - h->rd;
}

uint16_t
th_next_frame(struct th *h, uint8_t *buf, uint16_t size, uint8_t *port)
{
	struct rte_mbuf *m;
	uint32_t len;
	const void *d;

	if (h->rd == h->n_out)
		return 0;
	m = h->out[h->rd];
	*port = h->out_port[h->rd];
	if (++h->rd == h->n_out)
		h->rd = h->n_out = 0;	/* all read: room for as many again */
	len = rte_pktmbuf_pkt_len(m);
	assert_true(len <= size);
	d = rte_pktmbuf_read(m, 0, len, buf);
	assert_non_null(d);
	if (d != buf)
		memcpy(buf, d, len);
	rte_pktmbuf_free(m);
	return (uint16_t)len;
}

bool
th_next(struct th *h, struct th_out *o)
{
	struct ip_view ip;
	uint8_t frame[9100];
	uint16_t len;

	if (h->rd == h->n_out)
		return false;
	o->at_us = h->out_at[h->rd];
	o->at = o->at_us / 1000;
	len = th_next_frame(h, frame, sizeof(frame), &o->port);
	/* Every segment the stack sends must be well-formed, in the
	 * test's family: our own parser, with checksums verified, is the
	 * judge. */
	if (h->family == NET_AF_INET6) {
		assert_int_equal(frame[12] << 8 | frame[13], 0x86dd);
		assert_int_equal(ipv6_parse(frame + 14, len - 14u, &ip), NET_OK);
		assert_int_equal(ip.proto, 6);
		assert_int_equal(ip.ttl, 64);
		o->ip_id = 0;
	} else {
		assert_int_equal(frame[12] << 8 | frame[13], 0x0800);
		assert_int_equal(ipv4_parse(frame + 14, len - 14u, &ip), NET_OK);
		o->ip_id = (uint32_t)(frame[14 + 4] << 8 | frame[14 + 5]);
	}
	assert_int_equal(tcp_parse(&ip, L4_CKSUM_UNKNOWN, &o->t), NET_OK);
	memcpy(o->src_mac, frame + 6, 6);
	o->saddr = ip.src;
	memcpy(o->payload, o->t.payload, o->t.len);
	o->t.payload = o->payload;
	return true;
}

static void
opt_append(struct th_seg *s, const uint8_t *o, uint8_t n)
{
	assert_true(s->optlen + n <= 40);
	memcpy(s->opts + s->optlen, o, n);
	s->optlen = (uint8_t)(s->optlen + n);
}

void
th_opt_mss(struct th_seg *s, uint16_t mss)
{
	uint8_t o[4] = { 2, 4, (uint8_t)(mss >> 8), (uint8_t)mss };

	opt_append(s, o, 4);
}

void
th_opt_wscale(struct th_seg *s, uint8_t shift)
{
	uint8_t o[4] = { 1, 3, 3, shift };

	opt_append(s, o, 4);
}

void
th_opt_sack_ok(struct th_seg *s)
{
	uint8_t o[4] = { 1, 1, 4, 2 };

	opt_append(s, o, 4);
}

void
th_opt_ts(struct th_seg *s, uint32_t val, uint32_t ecr)
{
	uint8_t o[12] = { 1, 1, 8, 10,
		(uint8_t)(val >> 24), (uint8_t)(val >> 16), (uint8_t)(val >> 8),
		(uint8_t)val, (uint8_t)(ecr >> 24), (uint8_t)(ecr >> 16),
		(uint8_t)(ecr >> 8), (uint8_t)ecr };

	opt_append(s, o, 12);
}

void
th_opt_sack(struct th_seg *s, const uint32_t (*b)[2], int n)
{
	uint8_t o[36] = { 1, 1, 5, (uint8_t)(2 + 8 * n) };
	int i, k;

	for (i = 0; i < n; i++)
		for (k = 0; k < 2; k++) {
			uint32_t v = b[i][k];

			o[4 + 8 * i + 4 * k] = (uint8_t)(v >> 24);
			o[5 + 8 * i + 4 * k] = (uint8_t)(v >> 16);
			o[6 + 8 * i + 4 * k] = (uint8_t)(v >> 8);
			o[7 + 8 * i + 4 * k] = (uint8_t)v;
		}
	opt_append(s, o, (uint8_t)(4 + 8 * n));
}

uint32_t
th_handshake(struct th *h, uint16_t sport, uint32_t irs, const uint8_t *opts,
		uint8_t optlen, uint16_t win)
{
	struct th_seg s = { .sport = sport, .seq = irs, .flags = TCP_SYN,
		.win = win };
	struct th_out o;

	memcpy(s.opts, opts, optlen);
	s.optlen = optlen;
	th_inject(h, &s);
	assert_true(th_next(h, &o));
	assert_int_equal(o.t.flags, TCP_SYN | TCP_ACK);
	assert_int_equal(o.t.ack, irs + 1);
	memset(&s, 0, sizeof(s));
	s.sport = sport;
	s.seq = irs + 1;
	s.ack = o.t.seq + 1;
	s.flags = TCP_ACK;
	s.win = win;
	th_inject(h, &s);
	assert_int_equal(h->app.accepted, 1);
	return o.t.seq;
}

void
th_tso(struct th *h, bool l2_in_mtu)
{
	h->ifc.tx_cksum_offload = true;
	h->ifc.tx_tso = true;
	h->ifc.tso_ipv6 = true;
	h->ifc.tso_l2_in_mtu = l2_in_mtu;
	h->ifc.tso_segs_max = UINT8_MAX;
}
