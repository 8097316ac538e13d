/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
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
	cfg->bufs_keep = 1024;
	cfg->mbuf_reserve = 0;
	cfg->sndq_mbufs_max = 0;
	cfg->snd_buf = 256 * 1024;
	cfg->snd_buf_max = 0;	/* fixed */
	/* 8 MB in flight at the Internet's MSS, and then its splits by
	 * SACK; a shard's entries, 5 MB at most, are eight such flights. */
	cfg->sb_segs = TCP_SB_SEGS;
	cfg->sb_nodes = 8 * TCP_SB_SEGS;
	cfg->ext_refs = 8 * TCP_SB_SEGS;
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
	cfg->rcv_space = 8192;	/* an HTTP/1.1 request head */
	cfg->rcv_buf_init = 0;	/* the window is the upper layer's room */
	cfg->rcv_buf_max = 0;
	cfg->rcv_buf_budget = 0;
	cfg->rcvq_max = 0;
	cfg->rcvq_mbufs_max = 0;
	cfg->cc = TCP_CC_NEWRENO;
	cfg->pacing = false;
	cfg->challenge_ack_limit = 1000;
	cfg->invalid_ack_interval_ms = 500;
	cfg->arp_reply_limit = 1000;
	cfg->nd_reply_limit = 1000;
	cfg->icmp6_error_limit = 100;
	cfg->icmp_error_limit = 100;
}

static int
net_stack_init(struct net_stack *ns, const struct net_if *ifc,
		struct arp_cache *arp, struct rte_mempool *pool,
		const struct tcp_config *cfg, net_tx_fn tx_fn, void *tx_ctx,
		struct net_stats *stats, uint64_t now_ms)
{
	memset(ns, 0, sizeof(*ns));
	net_stack_add_port(ns, ifc, arp, tx_fn, tx_ctx);
	ns->pool = pool;
	ns->cfg = *cfg;
	if (cfg->sb_segs == 0)
		ns->cfg.sb_segs = TCP_SB_SEGS;
	if (cfg->sb_nodes == 0)
		ns->cfg.sb_nodes = 8 * ns->cfg.sb_segs;
	ns->stats = stats;
	ns->now_ms = now_ms;
	ns->now_us = now_ms * 1000;
	ns->hash_seed = rte_rand();
	ns->secret[0] = rte_rand();
	ns->secret[1] = rte_rand();
	ns->cc = cfg->cc == TCP_CC_BBR ? &tcp_cc_bbr : cfg->cc == TCP_CC_CUBIC ?
		&tcp_cc_cubic : &tcp_cc_newreno;
	ns->ip_id = (uint16_t)rte_rand();
	rate_limit_init(&ns->challenge_acks, cfg->challenge_ack_limit);
	rate_limit_init(&ns->arp_replies, cfg->arp_reply_limit);
	rate_limit_init(&ns->nd_replies, cfg->nd_reply_limit);
	rate_limit_init(&ns->icmp6_errors, cfg->icmp6_error_limit);
	rate_limit_init(&ns->icmp_errors, cfg->icmp_error_limit);
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

int
net_stack_add_port(struct net_stack *ns, const struct net_if *ifc,
		struct arp_cache *arp, net_tx_fn tx_fn, void *tx_ctx)
{
	struct net_port *p;
	uint32_t i;

	if (ns->nb_ports == NET_MAX_PORTS)
		return -1;
	p = &ns->port[ns->nb_ports];
	p->ifc = ifc;
	p->arp = arp;
	p->tx_fn = tx_fn;
	p->tx_ctx = tx_ctx;
	for (i = 0; i < net_if_ip_count(ifc); i++)
		p->addr[net_local_v4(i)] = net_ip4(rte_cpu_to_be_32(
				rte_be_to_cpu_32(ifc->ip) + i));
	return ns->nb_ports++;
}

void
net_stack_set_nd(struct net_stack *ns, uint8_t port, struct net_nd *nd)
{
	struct net_port *p = &ns->port[port];

	if (nd == NULL || p->ifc->prefix6 == 0)
		return;
	p->nd = nd;
	p->addr[NET_LOCAL_V6] = net_ip6(p->ifc->ip6);
	net_ip6_link_local(p->ifc->mac, p->addr[NET_LOCAL_V6_LL].v6);
	p->nb_mc = (uint8_t)net_if_mc_macs(p->ifc, p->mc);
}

/* Whether a and b share their first bits bits. */
static bool
prefix_match(const uint8_t *a, const uint8_t *b, unsigned int bits)
{
	unsigned int whole = bits / 8, rest = bits % 8;

	return memcmp(a, b, whole) == 0 && (rest == 0 ||
		((a[whole] ^ b[whole]) & (uint8_t)(0xff00 >> rest)) == 0);
}

/* Whether addr is on ifc's link: its IPv4 subnet, its IPv6 prefix, or
 * link-local (on every link). */
static bool
on_link(const struct net_if *ifc, const struct net_addr *addr)
{
	if (addr->family == NET_AF_INET)
		return ifc->ip != 0 && ((addr->ip.v4 ^ ifc->ip) & ifc->netmask) == 0;
	return ip6_is_link_local(&addr->ip) || (ifc->prefix6 != 0 &&
			prefix_match(addr->ip.v6, ifc->ip6, ifc->prefix6));
}

static bool
has_gateway(const struct net_if *ifc, uint8_t family)
{
	static const uint8_t none[16];

	return family == NET_AF_INET ? ifc->gateway != 0 :
		memcmp(ifc->gateway6, none, 16) != 0;
}

int
net_route(const struct net_stack *ns, const struct net_addr *addr,
		uint8_t *local)
{
	uint8_t i;

	*local = addr->family == NET_AF_INET ? NET_LOCAL_V4 :
		ip6_is_link_local(&addr->ip) ? NET_LOCAL_V6_LL : NET_LOCAL_V6;
	/* The port whose link it is on (a link-local peer: the first
	 * port's), else the first with a gateway for its family. */
	for (i = 0; i < ns->nb_ports; i++)
		if (net_port_has(ns, i, addr->family) &&
				on_link(ns->port[i].ifc, addr))
			return i;
	for (i = 0; i < ns->nb_ports; i++)
		if (net_port_has(ns, i, addr->family) &&
				has_gateway(ns->port[i].ifc, addr->family))
			return i;
	return -1;
}

uint16_t
net_pmtu(const struct net_stack *ns, uint8_t port, const union net_ip *peer)
{
	uint16_t mtu = ns->port[port].ifc->mtu;
	unsigned int i;

	for (i = 0; i < NET_PMTU_CACHE; i++) {
		const struct net_pmtu *e = &ns->pmtu[i];

		if (e->mtu != 0 && net_ip_eq(&e->peer, peer) &&
				ns->now_ms - e->at_ms < NET_PMTU_EXPIRE_MS)
			mtu = RTE_MIN(mtu, e->mtu);
	}
	return mtu;
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
net_stack_set_rss(struct net_stack *ns, uint8_t port,
		const struct net_rss *rss, uint16_t queue)
{
	ns->port[port].rss = rss;
	ns->port[port].queue = queue;
}

void
net_stack_refuse_new(struct net_stack *ns, bool refuse)
{
	ns->refuse_new = refuse;
}

void
net_timer_arm(struct net_stack *ns, struct net_timer *t, uint64_t at_ms)
{
	tw_arm(&ns->wheel, &t->tw, at_ms);
}

void
net_timer_soon(struct net_stack *ns, struct net_timer *t)
{
	tw_arm_soon(&ns->wheel, &t->tw);
}

void
net_timer_cancel(struct net_stack *ns, struct net_timer *t)
{
	tw_cancel(&ns->wheel, &t->tw);
}

uint64_t
net_now_ms(const struct net_stack *ns)
{
	return ns->now_ms;
}

const struct tcp_config *
net_stack_tcp_config(const struct net_stack *ns)
{
	return &ns->cfg;
}

uint64_t
net_now_us(const struct net_stack *ns)
{
	return ns->now_us;
}

int
net_stack_listen(struct net_stack *ns, uint16_t port,
		const struct tcp_upcalls *up, void *ctx)
{
	struct net_listener *l;

	if (net_listener(ns, port) != NULL)
		return -EEXIST;
	if (ns->nb_listeners == NET_MAX_LISTENERS)
		return -ENOSPC;
	l = &ns->listeners[ns->nb_listeners++];
	l->port = port;
	l->up = up;
	l->ctx = ctx;
	return 0;
}

struct rte_mbuf *
net_alloc(struct net_stack *ns)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(ns->pool);

	if (m == NULL)
		net_count_drop(ns, NET_DROP_NO_MBUF);
	return m;
}

/* Frames of our own are untagged: the type is at byte 12. */
static inline bool
is_ip6(const struct rte_mbuf *m)
{
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);

	return f[12] == (ETHERTYPE_IPV6 >> 8) && f[13] == (ETHERTYPE_IPV6 & 0xff);
}

static void
port_flush(struct net_stack *ns, uint8_t port)
{
	struct net_port *p = &ns->port[port];
	struct net_port_stats *ps = &ns->stats->port[port];
	uint16_t sent, i, v6 = 0;
	uint64_t bytes = 0;

	if (p->tx_n == 0)
		return;
	/* Counted before the device has them: a sent mbuf is the driver's
	 * (net_af_xdp copies and frees it at once). */
	/* Frames by family: IPv4's are the rest, on a port without IPv6
	 * all of them. */
	for (i = 0; i < p->tx_n; i++) {
		bytes += rte_pktmbuf_pkt_len(p->tx[i]);
		if (p->nd != NULL)
			v6 += is_ip6(p->tx[i]);
	}
	sent = p->tx_fn(p->tx_ctx, p->tx, p->tx_n);
	/* The device is full: TCP retransmits what mattered. */
	for (i = sent; i < p->tx_n; i++) {
		bytes -= rte_pktmbuf_pkt_len(p->tx[i]);
		if (p->nd != NULL)
			v6 -= is_ip6(p->tx[i]);
		ns->stats->drop[NET_DROP_TX_FULL]++;
		ps->drop[NET_DROP_TX_FULL]++;
		rte_pktmbuf_free(p->tx[i]);
	}
	ns->stats->tx_bytes += bytes;
	ns->stats->tx_pkts += sent;
	ns->stats->tx_ip6_pkts += v6;
	ns->stats->tx_ip4_pkts += sent - v6;
	ps->tx_bytes += bytes;
	ps->tx_pkts += sent;
	p->tx_n = 0;
	p->tx_mbufs = 0;
}

void
net_flush(struct net_stack *ns)
{
	uint8_t i;

	tcp_output_listed(ns);
	for (i = 0; i < ns->nb_ports; i++)
		port_flush(ns, i);
}

void
net_tx(struct net_stack *ns, uint8_t port, struct rte_mbuf *m)
{
	struct net_port *p = &ns->port[port];

	p->tx[p->tx_n++] = m;
	p->tx_mbufs += m->nb_segs;
	if (p->tx_n == NET_TX_BATCH || p->tx_mbufs >= NET_TX_BATCH_MBUFS)
		port_flush(ns, port);
}

/* Which of the port's IPv4 addresses ip (network order) is, as the
 * offset from its first; -1: none. */
static inline int
ip4_local(const struct net_if *ifc, uint32_t ip)
{
	uint32_t off = rte_be_to_cpu_32(ip) - rte_be_to_cpu_32(ifc->ip);

	if (ifc->ip == 0)
		return -1;
	return off < net_if_ip_count(ifc) ? (int)off : -1;
}

static void
arp_input(struct net_stack *ns, struct rte_mbuf *m, const struct eth_view *eth)
{
	const struct net_if *ifc = net_ifc(ns, ns->cur_port);
	struct arp_cache *arp = ns->port[ns->cur_port].arp;
	struct arp_view a;
	enum net_drop why;
	uint8_t *p;
	bool ours;

	why = arp_parse(eth->payload, eth->len, &a);
	if (why != NET_OK) {
		net_count_drop(ns, why);
		rte_pktmbuf_free(m);
		return;
	}
	ns->stats->arp_in++;
	/* RFC 826: learn the sender if it talks to us (or refresh it). */
	ours = ip4_local(ifc, a.tpa) >= 0;
	if (a.spa != 0 && (ours ||
			arp_cache_lookup(arp, a.spa, (uint8_t[6]){0}, ns->now_ms)))
		arp_cache_update(arp, a.spa, a.sha, ns->now_ms);
	if (a.op != 1 || !ours) {
		if (a.op == 1)
			ns->stats->arp_other_targets++;
		rte_pktmbuf_free(m);
		return;
	}
	/* A storm of requests must not become a storm of replies. */
	if (!rate_limit_take(&ns->arp_replies, ns->now_ms)) {
		ns->stats->arp_replies_limited++;
		rte_pktmbuf_free(m);
		return;
	}
	/* Turn the request into the reply in place. */
	p = rte_pktmbuf_mtod(m, uint8_t *);
	memcpy(p, a.sha, 6);
	memcpy(p + 6, ifc->mac, 6);
	p += ETH_HDR_LEN;
	p[7] = 2;			/* op: reply */
	memcpy(p + 18, p + 8, 10);	/* target = old sender (mac + ip) */
	memcpy(p + 8, ifc->mac, 6);
	memcpy(p + 14, &a.tpa, 4);	/* whichever of our addresses it asked */
	ns->stats->arp_replies++;
	net_tx(ns, ns->cur_port, m);
}

/* An ARP request (RFC 826) for ip, broadcast out of port. */
static void
arp_request(struct net_stack *ns, uint8_t port, uint32_t ip)
{
	const struct net_if *ifc = net_ifc(ns, port);
	struct rte_mbuf *m = net_alloc(ns);
	uint8_t *p;

	if (m == NULL)
		return;
	p = (uint8_t *)rte_pktmbuf_append(m, ETH_HDR_LEN + 28);
	if (p == NULL) {
		rte_pktmbuf_free(m);
		return;
	}
	memset(p, 0xff, 6);
	memcpy(p + 6, ifc->mac, 6);
	p[12] = ETHERTYPE_ARP >> 8;
	p[13] = ETHERTYPE_ARP & 0xff;
	p += ETH_HDR_LEN;
	memcpy(p, (const uint8_t[]){ 0, 1, 8, 0, 6, 4, 0, 1 }, 8);
	memcpy(p + 8, ifc->mac, 6);
	memcpy(p + 14, &ifc->ip, 4);
	memset(p + 18, 0, 6);
	memcpy(p + 24, &ip, 4);
	ns->stats->tcp.arp_requests++;
	net_tx(ns, port, m);
}

bool
net_resolve(struct net_stack *ns, uint8_t port, const struct net_addr *addr,
		uint8_t mac[6])
{
	struct net_port *p = &ns->port[port];
	bool v6 = addr->family == NET_AF_INET6;
	union net_ip hop = addr->ip;

	/* Off the link: the frame goes to the port's gateway. */
	if (!on_link(p->ifc, addr) && has_gateway(p->ifc, addr->family)) {
		if (v6)
			memcpy(hop.v6, p->ifc->gateway6, 16);
		else
			hop = net_ip4(p->ifc->gateway);
	}
	if (neigh_lookup(v6 ? &p->nd->cache : p->arp, &hop, mac, ns->now_ms))
		return true;
	if (!net_ip_eq(&hop, &p->nbr_last) ||
			ns->now_ms - p->nbr_last_ms >= NET_ARP_RETRY_MS) {
		p->nbr_last = hop;
		p->nbr_last_ms = ns->now_ms;
		if (v6)
			nd_solicit(ns, port, &hop);
		else
			arp_request(ns, port, hop.v4);
	}
	return false;
}

static void
icmp_input(struct net_stack *ns, struct rte_mbuf *m, const struct eth_view *eth,
		const struct ip_view *ip)
{
	const struct net_if *ifc = net_ifc(ns, ns->cur_port);
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
	memcpy(frame + 6, ifc->mac, 6);
	memcpy(iph + 16, iph + 12, 4);
	memcpy(iph + 12, &ip->dst.v4, 4);	/* the address it asked */
	iph[8] = NET_TTL;
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
	net_tx(ns, ns->cur_port, m);
}

/* The most of the datagram an ICMP error quotes: all of it that fits in
 * 576 bytes (RFC 1812 4.3.2.3). */
#define ICMP_ERR_QUOTE (576 - IPV4_HDR_MIN - 8)

/* ICMP's Destination Unreachable with code about the datagram ip (to an
 * address of ours, so never a broadcast), within the shard's budget
 * (RFC 1812 4.3.2.8): never to a source that is not one host. */
static void
icmp_unreachable(struct net_stack *ns, const struct eth_view *eth,
		const struct ip_view *ip, uint8_t code)
{
	uint16_t quote = (uint16_t)RTE_MIN((uint32_t)ICMP_ERR_QUOTE,
			(uint32_t)ip->hdr_len + ip->len);
	uint32_t src = rte_be_to_cpu_32(ip->src.v4);
	uint8_t *p, *iph, *icmp;
	struct rte_mbuf *m;
	uint16_t sum;

	if (src == 0 || src >= 0xe0000000u || (src >> 24) == 127)
		return;		/* none, multicast or broadcast, loopback */
	if (!rate_limit_take(&ns->icmp_errors, ns->now_ms)) {
		ns->stats->udp.icmp_errors_limited_pkts++;
		return;
	}
	m = net_alloc(ns);
	if (m == NULL)
		return;
	p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(ETH_HDR_LEN +
			IPV4_HDR_MIN + 8 + quote));
	if (p == NULL) {
		rte_pktmbuf_free(m);
		return;
	}
	memcpy(p, eth->src, 6);
	memcpy(p + 6, net_ifc(ns, ns->cur_port)->mac, 6);
	pkt_wr16(p + 12, ETHERTYPE_IPV4);
	iph = p + ETH_HDR_LEN;
	iph[0] = 0x45;
	iph[1] = 0xc0;		/* internetwork control, as Linux's */
	pkt_wr16(iph + 2, (uint16_t)(IPV4_HDR_MIN + 8 + quote));
	pkt_wr16(iph + 4, ns->ip_id++);
	pkt_wr16(iph + 6, 0);
	iph[8] = NET_TTL;
	iph[9] = IPPROTO_ICMP_;
	iph[10] = iph[11] = 0;
	memcpy(iph + 12, &ip->dst.v4, 4);	/* the address it asked */
	memcpy(iph + 16, &ip->src.v4, 4);
	sum = cksum_buf(iph, IPV4_HDR_MIN);
	memcpy(iph + 10, &sum, 2);
	icmp = iph + IPV4_HDR_MIN;
	icmp[0] = 3;		/* destination unreachable */
	icmp[1] = code;
	memset(icmp + 2, 0, 6);
	memcpy(icmp + 8, ip->hdr, quote);
	sum = cksum_buf(icmp, (size_t)8 + quote);
	memcpy(icmp + 2, &sum, 2);
	ns->stats->udp.icmp_unreachable_out_pkts++;
	net_tx(ns, ns->cur_port, m);
}

/* A packet not for the port's first IPv4 address: for one of its
 * further ones (ip->local set), or not ours. Out of line: a port with one
 * address never gets here with a packet of its own. */
static __rte_noinline enum net_drop
ipv4_further_local(const struct net_if *ifc, struct ip_view *ip)
{
	int off = ip4_local(ifc, ip->dst.v4);

	if (off < 0)
		return NET_DROP_IP_NOT_OURS;
	ip->local = net_local_v4((uint32_t)off);
	return NET_OK;
}

static void
ipv4_input(struct net_stack *ns, struct rte_mbuf *m, const struct eth_view *eth)
{
	struct ip_view ip;
	struct tcp_view t;
	enum net_drop why;

	why = ipv4_parse(eth->payload, eth->len, &ip);
	if (why == NET_OK && ip.dst.v4 != net_ifc(ns, ns->cur_port)->ip)
		why = NET_DROP_IP_NOT_OURS;
	if (why != NET_OK && (why != NET_DROP_IP_NOT_OURS || (why =
			ipv4_further_local(net_ifc(ns, ns->cur_port), &ip)) !=
			NET_OK))
		goto drop;
	switch (ip.proto) {
	case IPPROTO_ICMP_:
		icmp_input(ns, m, eth, &ip);
		return;
	case IPPROTO_TCP_: {
		why = tcp_parse(&ip, net_l4_cksum(ns, m), &t);
		if (why != NET_OK)
			goto drop;
		ns->stats->tcp.segs_in++;
		if (!tcp_input(ns, m, &ip, &t, eth->src))
			rte_pktmbuf_free(m);
		return;
	}
	case IPPROTO_UDP_:
		why = udp_input(ns, m, &ip);
		if (why == NET_DROP_UDP_NO_PORT)
			icmp_unreachable(ns, eth, &ip, 3);	/* port */
		if (why == NET_OK) {
			rte_pktmbuf_free(m);
			return;
		}
		break;
	default:
		why = NET_DROP_IP_PROTO;
		break;
	}
drop:
	net_count_drop(ns, why);
	rte_pktmbuf_free(m);
}

/* Whether the frame is for us: our MAC, broadcast, or a multicast group
 * of the port's IPv6 (33:33:..., RFC 2464 7). */
static bool
frame_ours(const struct net_port *p, const uint8_t *dst)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	uint8_t i;

	if (memcmp(dst, p->ifc->mac, 6) == 0 || memcmp(dst, bcast, 6) == 0)
		return true;
	for (i = 0; i < p->nb_mc; i++)
		if (memcmp(dst, p->mc[i], 6) == 0)
			return true;
	return false;
}

/* One frame received on port ns->cur_port; takes ownership of m. */
static void
port_input(struct net_stack *ns, struct rte_mbuf *m)
{
	struct net_port_stats *ps = &ns->stats->port[ns->cur_port];
	const struct net_port *p = &ns->port[ns->cur_port];
	struct eth_view eth;
	enum net_drop why;

	ns->stats->rx_pkts++;
	ns->stats->rx_bytes += rte_pktmbuf_pkt_len(m);
	ps->rx_pkts++;
	ps->rx_bytes += rte_pktmbuf_pkt_len(m);
	if (m->nb_segs != 1) {
		why = NET_DROP_RX_MULTISEG;
		goto drop;
	}
	why = eth_parse(rte_pktmbuf_mtod(m, const uint8_t *),
			rte_pktmbuf_data_len(m), &eth);
	if (why != NET_OK)
		goto drop;
	if (!frame_ours(p, eth.dst)) {
		why = NET_DROP_NOT_FOR_US;
		goto drop;
	}
	if (eth.payload != rte_pktmbuf_mtod(m, const uint8_t *) + ETH_HDR_LEN) {
		why = NET_DROP_VLAN;	/* the port is untagged */
		goto drop;
	}
	/* A family the port does not run is a type it does not know. */
	why = NET_DROP_ETHERTYPE;
	switch (eth.type) {
	case ETHERTYPE_ARP:
		if (p->ifc->ip == 0)
			break;
		arp_input(ns, m, &eth);
		return;
	case ETHERTYPE_IPV4:
		ns->stats->rx_ip4_pkts++;
		if (p->ifc->ip == 0)
			break;
		ipv4_input(ns, m, &eth);
		return;
	case ETHERTYPE_IPV6:
		ns->stats->rx_ip6_pkts++;
		if (p->nd == NULL)
			break;
		ipv6_input(ns, m, &eth);
		return;
	default:
		break;
	}
drop:
	net_count_drop(ns, why);
	rte_pktmbuf_free(m);
}

void
net_timers_us(struct net_stack *ns, uint64_t now_us)
{
	net_set_clock(ns, now_us);
	tw_advance(&ns->wheel, ns->now_ms, tcp_timer_fire, ns);
	tcp_pace_run(ns);
	nd_timers(ns);
	/* Once per poll, after input freed what it could: connections the
	 * send budget held back go on. */
	tcp_wake_sndq_waiters(ns);
}

void
net_input(struct net_stack *ns, struct rte_mbuf *m)
{
	ns->cur_port = 0;
	port_input(ns, m);
}

void
net_timers(struct net_stack *ns, uint64_t now_ms)
{
	net_timers_us(ns, now_ms * 1000);
}

void
net_rx_us(struct net_stack *ns, uint8_t port, struct rte_mbuf **pkts,
		uint16_t n, uint64_t now_us)
{
	uint16_t i;

	net_set_clock(ns, now_us);
	for (i = 0; i < n; i++) {
		/* Input may serve connections of other ports (an ACK that
		 * frees room to send): each frame starts on its own port. */
		ns->cur_port = port;
		port_input(ns, pkts[i]);
	}
}

void
net_rx(struct net_stack *ns, uint8_t port, struct rte_mbuf **pkts,
		uint16_t n, uint64_t now_ms)
{
	net_rx_us(ns, port, pkts, n, now_ms * 1000);
}
