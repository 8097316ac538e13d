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

/* The EAL's runtime directory outlives the process unless removed. */
static void
eal_cleanup(void)
{
	char dir[PATH_MAX], cmd[PATH_MAX + 16];

	snprintf(dir, sizeof(dir), "%s", rte_eal_get_runtime_dir());
	rte_mempool_free(pool);
	rte_eal_cleanup();
	if (strncmp(dir, "/var/run/dpdk/tcpharness", 24) == 0 ||
			strstr(dir, "/dpdk/tcpharness") != NULL) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", dir);
	}
}

static void
eal_once(void)
{
	char prefix[64];
	char *argv[] = { "tcp-harness", "--no-huge", "-m", "128", "--no-pci",
		"--no-shconf", "--no-telemetry", "--log-level=*:error",
		"--file-prefix", prefix, NULL };

	if (pool != NULL)
		return;
	snprintf(prefix, sizeof(prefix), "tcpharness%d", getpid());
	if (rte_eal_init(10, argv) < 0) {
		fprintf(stderr, "EAL init failed\n");
		exit(1);
	}
	pool = rte_pktmbuf_pool_create("th_pool", 16383, 0, 0,
			RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (pool == NULL) {
		fprintf(stderr, "mempool failed\n");
		exit(1);
	}
	atexit(eal_cleanup);
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
		if (h->n_out == TH_MAX_CAPTURE) {
			rte_pktmbuf_free(m);
			continue;
		}
		h->out_at[h->n_out] = h->now;
		h->out_port[h->n_out] = tx->port;
		h->out[h->n_out++] = m;
	}
	return n;
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
 * stack's job, and the tests check that the stack does it. */
static uint32_t
app_recv(void *ctx, struct tcp_conn *c, const uint8_t *data, uint32_t len)
{
	struct th *h = ctx;

	if (h->app.got_len + len > TH_APP_BUF)
		fail_msg("%u bytes more than the test can hold", len);
	memcpy(h->app.got + h->app.got_len, data, len);
	h->app.got_len += len;
	h->app.rcv_space -= RTE_MIN(len, h->app.rcv_space);
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

struct th *
th_new(const struct tcp_config *cfg)
{
	struct tcp_config def;
	struct th *h;

	eal_once();
	h = calloc(1, sizeof(*h));
	assert_non_null(h);
	h->app.got = malloc(TH_APP_BUF);
	h->arp = calloc(1, sizeof(*h->arp));
	assert_non_null(h->app.got);
	assert_non_null(h->arp);
	arp_cache_init(h->arp, 60000);
	h->ifc.ip = TH_LOCAL_IP;
	h->ifc.netmask = 0x00ffffff;
	h->ifc.mtu = 1500;
	h->ifc.tx_multiseg = true;
	memcpy(h->ifc.mac, "\x02\x00\x00\x00\x00\x02", 6);
	if (cfg == NULL)
		tcp_config_defaults(&def);
	else
		def = *cfg;
	h->now = 1000;
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
	net_stack_set_upcalls(h->ns, &app_upcalls, h);
	return h;
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
	h->arp2 = calloc(1, sizeof(*h->arp2));
	assert_non_null(h->arp2);
	arp_cache_init(h->arp2, 60000);
	h->ifc2 = h->ifc;
	h->ifc2.ip = TH_LOCAL_IP2;
	h->ifc2.mac[5] = 3;
	h->tx[1].h = h;
	h->tx[1].port = 1;
	assert_int_equal(net_stack_add_port(h->ns, &h->ifc2, h->arp2, capture,
			&h->tx[1]), 1);
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
	free(h);
}

void
th_inject(struct th *h, const struct th_seg *s)
{
	th_inject_on(h, 0, TH_LOCAL_IP, s);
}

void
th_inject_on(struct th *h, uint8_t port, uint32_t dst, const struct th_seg *s)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	uint16_t tcp_len = (uint16_t)(20 + s->optlen + s->len);
	uint32_t src = TH_PEER_IP;
	uint8_t *p, *ip, *t;
	struct cksum c;
	uint16_t sum;

	assert_non_null(m);
	p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(14 + 20 + tcp_len));
	assert_non_null(p);
	static const uint8_t peer_mac[6] = { 2, 0, 0, 0, 0, 1 };

	memcpy(p, port == 0 ? h->ifc.mac : h->ifc2.mac, 6);
	memcpy(p + 6, peer_mac, 6);
	p[12] = 0x08;
	p[13] = 0x00;
	ip = p + 14;
	memset(ip, 0, 20);
	ip[0] = 0x45;
	ip[2] = (uint8_t)((20 + tcp_len) >> 8);
	ip[3] = (uint8_t)(20 + tcp_len);
	ip[8] = 64;
	ip[9] = 6;
	memcpy(ip + 12, &src, 4);
	memcpy(ip + 16, &dst, 4);
	sum = cksum_buf(ip, 20);
	memcpy(ip + 10, &sum, 2);
	t = ip + 20;
	memset(t, 0, 20);
	t[0] = (uint8_t)(s->sport >> 8);
	t[1] = (uint8_t)s->sport;
	t[2] = 0;
	t[3] = TH_PORT;
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
	cksum_pseudo_ipv4(&c, src, dst, 6, tcp_len);
	cksum_feed(&c, t, tcp_len);
	sum = cksum_finish(&c);
	memcpy(t + 16, &sum, 2);
	net_rx(h->ns, port, &m, 1, h->now);
	net_flush(h->ns);
}

void
th_advance(struct th *h, uint64_t ms)
{
	uint64_t end = h->now + ms;

	while (h->now < end) {
		h->now++;
		h->ns->now_ms = h->now;
		net_timers(h->ns, h->now);
		net_flush(h->ns);
	}
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

bool
th_next(struct th *h, struct th_out *o)
{
	struct rte_mbuf *m;
	struct ipv4_view ip;
	uint8_t frame[9100];
	uint32_t len;

	if (h->rd == h->n_out)
		return false;
	m = h->out[h->rd];
	o->at = h->out_at[h->rd];
	o->port = h->out_port[h->rd];
	h->rd++;
	len = rte_pktmbuf_pkt_len(m);
	assert_true(len <= sizeof(frame));
	{
		const void *d = rte_pktmbuf_read(m, 0, len, frame);

		assert_non_null(d);
		if (d != frame)
			memcpy(frame, d, len);
	}
	rte_pktmbuf_free(m);
	/* Every segment the stack sends must be well-formed: our own
	 * parser, with checksums verified, is the judge. */
	assert_int_equal(ipv4_parse(frame + 14, len - 14, &ip), NET_OK);
	assert_int_equal(tcp_parse(&ip, L4_CKSUM_UNKNOWN, &o->t), NET_OK);
	o->ip_id = (uint32_t)(frame[14 + 4] << 8 | frame[14 + 5]);
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
