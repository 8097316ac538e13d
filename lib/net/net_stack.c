/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_random.h>

#include "cksum.h"
#include "net_priv.h"
#include "pkt.h"
#include "tcp_impl.h"

void
tcp_config_defaults(struct tcp_config *cfg)
{
	cfg->max_conns = 4096;
	cfg->syn_backlog = 1024;
	cfg->max_time_wait = 2048;
	cfg->mbuf_reserve = 0;
	cfg->sndq_mbufs_max = 0;
	cfg->snd_buf = 256 * 1024;
	cfg->rcv_win_max = 1 << 20;
	cfg->rto_min_ms = 200;
	cfg->rto_init_ms = 1000;
	cfg->rto_max_ms = 60000;
	cfg->delack_ms = 40;
	cfg->time_wait_ms = 4000;
	cfg->keepalive_ms = 0;
	cfg->keepalive_intvl_ms = 10000;
	cfg->keepalive_probes = 5;
	cfg->idle_timeout_ms = 0;
	cfg->max_retries = 8;
	cfg->syn_retries = 5;
	cfg->syncookies = true;
	cfg->listen_port = 80;
	cfg->rcv_space = 8192;	/* an HTTP/1.1 request head */
}

static int
net_stack_init(struct net_stack *ns, const struct net_if *ifc,
		struct arp_cache *arp, struct rte_mempool *pool,
		const struct tcp_config *cfg, net_tx_fn tx_fn, void *tx_ctx,
		struct net_stats *stats, uint64_t now_ms)
{
	memset(ns, 0, sizeof(*ns));
	ns->ifc = ifc;
	ns->arp = arp;
	ns->pool = pool;
	ns->cfg = *cfg;
	ns->tx_fn = tx_fn;
	ns->tx_ctx = tx_ctx;
	ns->stats = stats;
	ns->now_ms = now_ms;
	ns->hash_seed = rte_rand();
	ns->secret[0] = rte_rand();
	ns->secret[1] = rte_rand();
	ns->cc = cfg->cc == TCP_CC_CUBIC ? &tcp_cc_cubic : &tcp_cc_newreno;
	ns->ip_id = (uint16_t)rte_rand();
	ns->out_epoch = 1;	/* slots start at 0: none is on the out list */
	tw_init(&ns->wheel, now_ms);
	return tcp_table_init(ns);
}

static void
net_stack_fini(struct net_stack *ns)
{
	tcp_table_fini(ns);
	net_flush(ns);
}

struct net_stack *
net_stack_create(const struct net_if *ifc, struct arp_cache *arp,
		struct rte_mempool *pool, const struct tcp_config *cfg,
		net_tx_fn tx_fn, void *tx_ctx, struct net_stats *stats,
		uint64_t now_ms)
{
	struct net_stack *ns = rte_zmalloc("net_stack", sizeof(*ns),
			RTE_CACHE_LINE_SIZE);

	if (ns == NULL)
		return NULL;
	if (net_stack_init(ns, ifc, arp, pool, cfg, tx_fn, tx_ctx, stats,
			now_ms) != 0) {
		rte_free(ns);
		return NULL;
	}
	return ns;
}

void
net_stack_destroy(struct net_stack *ns)
{
	if (ns == NULL)
		return;
	net_stack_fini(ns);
	rte_free(ns);
}

void
net_stack_refuse_new(struct net_stack *ns, bool refuse)
{
	ns->refuse_new = refuse;
}

uint64_t
net_now_ms(const struct net_stack *ns)
{
	return ns->now_ms;
}

void
net_stack_set_upcalls(struct net_stack *ns, const struct tcp_upcalls *up,
		void *ctx)
{
	ns->up = up;
	ns->up_ctx = ctx;
}

struct rte_mbuf *
net_alloc(struct net_stack *ns)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(ns->pool);

	if (m == NULL)
		net_count_drop(ns, NET_DROP_NO_MBUF);
	return m;
}

void
net_flush(struct net_stack *ns)
{
	uint16_t sent, i;

	tcp_output_listed(ns);
	if (ns->tx_n == 0)
		return;
	sent = ns->tx_fn(ns->tx_ctx, ns->tx, ns->tx_n);
	for (i = 0; i < sent; i++)
		ns->stats->tx_bytes += rte_pktmbuf_pkt_len(ns->tx[i]);
	ns->stats->tx_pkts += sent;
	/* The device is full: TCP retransmits what mattered. */
	for (i = sent; i < ns->tx_n; i++) {
		net_count_drop(ns, NET_DROP_TX_FULL);
		rte_pktmbuf_free(ns->tx[i]);
	}
	ns->tx_n = 0;
}

void
net_tx(struct net_stack *ns, struct rte_mbuf *m)
{
	ns->tx[ns->tx_n++] = m;
	if (ns->tx_n == NET_TX_BATCH)
		net_flush(ns);
}

static void
arp_input(struct net_stack *ns, struct rte_mbuf *m, const struct eth_view *eth)
{
	struct arp_view a;
	enum net_drop why;
	uint8_t *p;

	why = arp_parse(eth->payload, eth->len, &a);
	if (why != NET_OK) {
		net_count_drop(ns, why);
		rte_pktmbuf_free(m);
		return;
	}
	ns->stats->arp_in++;
	/* RFC 826: learn the sender if it talks to us (or refresh it). */
	if (a.spa != 0 && (a.tpa == ns->ifc->ip ||
			arp_cache_lookup(ns->arp, a.spa, (uint8_t[6]){0}, ns->now_ms)))
		arp_cache_update(ns->arp, a.spa, a.sha, ns->now_ms);
	if (a.op != 1 || a.tpa != ns->ifc->ip) {
		rte_pktmbuf_free(m);
		return;
	}
	/* Turn the request into the reply in place. */
	p = rte_pktmbuf_mtod(m, uint8_t *);
	memcpy(p, a.sha, 6);
	memcpy(p + 6, ns->ifc->mac, 6);
	p += ETH_HDR_LEN;
	p[7] = 2;			/* op: reply */
	memcpy(p + 18, p + 8, 10);	/* target = old sender (mac + ip) */
	memcpy(p + 8, ns->ifc->mac, 6);
	memcpy(p + 14, &ns->ifc->ip, 4);
	ns->stats->arp_replies++;
	net_tx(ns, m);
}

static void
icmp_input(struct net_stack *ns, struct rte_mbuf *m, const struct eth_view *eth,
		const struct ipv4_view *ip)
{
	uint8_t *frame = rte_pktmbuf_mtod(m, uint8_t *);
	uint8_t *iph = frame + ETH_HDR_LEN;
	uint8_t *icmp = iph + ip->hdr_len;
	enum net_drop why;
	uint16_t sum;

	why = icmp_parse(ip);
	if (why == NET_OK && icmp[0] != 8)
		why = NET_DROP_ICMP_TYPE;	/* only echo requests are ours */
	if (why != NET_OK) {
		net_count_drop(ns, why);
		rte_pktmbuf_free(m);
		return;
	}
	/* Echo reply in place: swap addresses, type 0, new checksums. */
	memcpy(frame, eth->src, 6);
	memcpy(frame + 6, ns->ifc->mac, 6);
	memcpy(iph + 16, iph + 12, 4);
	memcpy(iph + 12, &ns->ifc->ip, 4);
	iph[8] = 64;
	iph[10] = iph[11] = 0;
	sum = cksum_buf(iph, ip->hdr_len);
	memcpy(iph + 10, &sum, 2);
	icmp[0] = 0;
	icmp[2] = icmp[3] = 0;
	sum = cksum_buf(icmp, ip->len);
	memcpy(icmp + 2, &sum, 2);
	rte_pktmbuf_trim(m, (uint16_t)(rte_pktmbuf_pkt_len(m) -
			(ETH_HDR_LEN + ip->hdr_len + ip->len)));
	ns->stats->icmp_echo++;
	net_tx(ns, m);
}

static enum l4_cksum
l4_cksum_flag(const struct net_stack *ns, const struct rte_mbuf *m)
{
	uint64_t f = m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;

	if (!ns->ifc->rx_cksum_offload)
		return L4_CKSUM_UNKNOWN;
	if (f == RTE_MBUF_F_RX_L4_CKSUM_GOOD)
		return L4_CKSUM_GOOD;
	return f == RTE_MBUF_F_RX_L4_CKSUM_BAD ? L4_CKSUM_BAD : L4_CKSUM_UNKNOWN;
}

static void
ipv4_input(struct net_stack *ns, struct rte_mbuf *m, const struct eth_view *eth)
{
	struct ipv4_view ip;
	struct tcp_view t;
	enum net_drop why;

	why = ipv4_parse(eth->payload, eth->len, &ip);
	if (why == NET_OK && ip.dst != ns->ifc->ip)
		why = NET_DROP_IP_NOT_OURS;
	if (why != NET_OK)
		goto drop;
	switch (ip.proto) {
	case IPPROTO_ICMP_:
		icmp_input(ns, m, eth, &ip);
		return;
	case IPPROTO_TCP_: {
		why = tcp_parse(&ip, l4_cksum_flag(ns, m), &t);
		if (why != NET_OK)
			goto drop;
		ns->stats->tcp.segs_in++;
		if (!tcp_input(ns, m, &ip, &t, eth->src))
			rte_pktmbuf_free(m);
		return;
	}
	default:
		why = NET_DROP_IP_PROTO;
		break;
	}
drop:
	net_count_drop(ns, why);
	rte_pktmbuf_free(m);
}

void
net_input(struct net_stack *ns, struct rte_mbuf *m)
{
	struct eth_view eth;
	enum net_drop why;
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

	ns->stats->rx_pkts++;
	ns->stats->rx_bytes += rte_pktmbuf_pkt_len(m);
	if (m->nb_segs != 1) {
		why = NET_DROP_RX_MULTISEG;
		goto drop;
	}
	why = eth_parse(rte_pktmbuf_mtod(m, const uint8_t *),
			rte_pktmbuf_data_len(m), &eth);
	if (why != NET_OK)
		goto drop;
	if (memcmp(eth.dst, ns->ifc->mac, 6) != 0 &&
			memcmp(eth.dst, bcast, 6) != 0) {
		why = NET_DROP_NOT_FOR_US;
		goto drop;
	}
	if (eth.payload != rte_pktmbuf_mtod(m, const uint8_t *) + ETH_HDR_LEN) {
		why = NET_DROP_VLAN;	/* the port is untagged */
		goto drop;
	}
	switch (eth.type) {
	case ETHERTYPE_ARP:
		arp_input(ns, m, &eth);
		return;
	case ETHERTYPE_IPV4:
		ipv4_input(ns, m, &eth);
		return;
	default:
		why = NET_DROP_ETHERTYPE;
		break;
	}
drop:
	net_count_drop(ns, why);
	rte_pktmbuf_free(m);
}

void
net_timers(struct net_stack *ns, uint64_t now_ms)
{
	ns->now_ms = now_ms;
	tw_advance(&ns->wheel, now_ms, tcp_timer_fire, ns);
}

void
net_poll(struct net_stack *ns, struct rte_mbuf **pkts, uint16_t n,
		uint64_t now_ms)
{
	uint16_t i;

	ns->now_ms = now_ms;
	for (i = 0; i < n; i++)
		net_input(ns, pkts[i]);
	net_timers(ns, now_ms);
	tcp_wake_sndq_waiters(ns);
}
