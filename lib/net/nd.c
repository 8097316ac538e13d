/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Neighbour discovery (RFC 4861) for a host whose addresses are
 * configured: solicitations for our addresses answered (within a budget a
 * second, as ARP's replies), solicitations of our own for active opens,
 * advertisements learned only for neighbours already in the cache (ours
 * asked for them), router messages left alone. Duplicate address
 * detection (RFC 4862 5.4) runs once at start and after each link up, by
 * whichever shard claims the round: a probe per address, then after
 * NET_DAD_MS the addresses are preferred and announced (unsolicited
 * advertisements to all nodes). Meanwhile they are in use (RFC 4429's
 * optimistic addresses): start-up waits for nothing. A node that answers
 * a probe, or probes for the same address, makes it a duplicate: not used
 * until the link comes back up, when it is probed again. Our own probes, looped back by the link, are known by their
 * nonce (RFC 7527), not by their source MAC: net_tap's kernel side has
 * the port's MAC, and its solicitations must be answered all the same. MLDv2 reports (RFC 3810) join the solicited-node groups, so
 * that switches which snoop MLD forward them to us.
 */
#include <string.h>

#include <rte_mbuf.h>
#include <rte_random.h>

#include "net_priv.h"

#define NET_DAD_MS 1000		/* RFC 4861 10: RetransTimer */
#define MLD_REPORT_GAP_MS 1000	/* answers to queries, at most */
#define ND_MSG_LEN 24		/* NS and NA without options */
#define ND_OPT_LEN 8		/* a link-layer address option */

static const union net_ip all_nodes = { .v6 = { 0xff, 0x02, [15] = 1 } };
static const union net_ip all_mld_routers = { .v6 = { 0xff, 0x02, [15] = 0x16 } };
static const union net_ip unspecified;

void
net_ip6_link_local(const uint8_t mac[6], uint8_t out[16])
{
	memset(out, 0, 16);
	out[0] = 0xfe;
	out[1] = 0x80;
	out[8] = mac[0] ^ 0x02;		/* the universal/local bit flipped */
	out[9] = mac[1];
	out[10] = mac[2];
	out[11] = 0xff;
	out[12] = 0xfe;
	out[13] = mac[3];
	out[14] = mac[4];
	out[15] = mac[5];
}

/* ff02::1:ffXX:XXXX, the group of every address ending in XX:XXXX. */
static union net_ip
solicited_node(const union net_ip *a)
{
	union net_ip g = { .v6 = { 0xff, 0x02, [11] = 1, [12] = 0xff } };

	memcpy(g.v6 + 13, a->v6 + 13, 3);
	return g;
}

/* 33:33 and the group's last four bytes (RFC 2464 7). */
static void
group_mac(const union net_ip *g, uint8_t mac[6])
{
	mac[0] = mac[1] = 0x33;
	memcpy(mac + 2, g->v6 + 12, 4);
}

unsigned int
net_if_mc_macs(const struct net_if *ifc, uint8_t macs[NET_MC_MACS][6])
{
	union net_ip ll, gl = net_ip6(ifc->ip6), g;
	unsigned int n = 2, i;

	if (ifc->prefix6 == 0)
		return 0;
	net_ip6_link_local(ifc->mac, ll.v6);
	group_mac(&all_nodes, macs[0]);
	g = solicited_node(&ll);
	group_mac(&g, macs[1]);
	g = solicited_node(&gl);
	group_mac(&g, macs[n]);
	for (i = 0; i < n && memcmp(macs[i], macs[n], 6) != 0; i++)
		;
	return i == n ? n + 1 : n;
}

void
net_nd_init(struct net_nd *nd, uint64_t ttl_ms)
{
	memset(nd, 0, sizeof(*nd));
	arp_cache_init(&nd->cache, ttl_ms);
	nd->dad_round = 1;	/* the first, at start-up */
	nd->state[0] = nd->state[1] = NET_ADDR_TENTATIVE;
}

enum net_addr_state
net_nd_state(const struct net_nd *nd, unsigned int i)
{
	return (enum net_addr_state)__atomic_load_n(&nd->state[i],
			__ATOMIC_RELAXED);
}

static void
set_state(struct net_nd *nd, unsigned int i, enum net_addr_state st)
{
	__atomic_store_n(&nd->state[i], (uint8_t)st, __ATOMIC_RELAXED);
}

/* Which of the port's IPv6 addresses a is (0 global, 1 link-local), or
 * -1. */
static int
addr_index(const struct net_port *p, const union net_ip *a)
{
	if (net_ip_eq(a, &p->addr[NET_LOCAL_V6]))
		return 0;
	if (net_ip_eq(a, &p->addr[NET_LOCAL_V6_LL]))
		return 1;
	return -1;
}

bool
nd_addr_ours(const struct net_stack *ns, uint8_t port, const union net_ip *dst,
		uint8_t *local)
{
	const struct net_port *p = &ns->port[port];
	int i = addr_index(p, dst);

	if (i < 0 || net_nd_state(p->nd, (unsigned int)i) == NET_ADDR_DUPLICATE)
		return false;
	*local = (uint8_t)(NET_LOCAL_V6 + i);
	return true;
}

bool
nd_group_ours(const struct net_stack *ns, uint8_t port, const union net_ip *dst)
{
	const struct net_port *p = &ns->port[port];
	union net_ip g;
	int i;

	if (net_ip_eq(dst, &all_nodes))
		return true;
	for (i = NET_LOCAL_V6; i <= NET_LOCAL_V6_LL; i++) {
		g = solicited_node(&p->addr[i]);
		if (net_ip_eq(dst, &g))
			return true;
	}
	return false;
}

/* An NS or NA (RFC 4861 4.3, 4.4) with a link-layer address option of
 * our MAC (opt: ND_OPT_SRC_LLADDR or _TGT_LLADDR), or a DAD probe's nonce
 * (ND_OPT_NONCE, from the port's state), or nothing (0). */
static void
nd_send(struct net_stack *ns, uint8_t port, const uint8_t *dmac,
		const union net_ip *src, const union net_ip *dst, uint8_t type,
		uint8_t flags, const union net_ip *target, uint8_t opt)
{
	uint16_t len = (uint16_t)(ND_MSG_LEN + (opt ? ND_OPT_LEN : 0));
	struct rte_mbuf *m = ip6_start(ns, port, dmac, src, dst,
			IPPROTO_ICMPV6_, 255, len);
	uint8_t *icmp;

	if (m == NULL)
		return;
	icmp = (uint8_t *)rte_pktmbuf_append(m, len);
	if (icmp == NULL) {
		rte_pktmbuf_free(m);
		return;
	}
	memset(icmp, 0, len);
	icmp[0] = type;
	icmp[4] = flags;
	memcpy(icmp + 8, target->v6, 16);
	if (opt) {
		uint64_t nonce = __atomic_load_n(&ns->port[port].nd->dad_nonce,
				__ATOMIC_RELAXED);

		icmp[ND_MSG_LEN] = opt;
		icmp[ND_MSG_LEN + 1] = 1;
		memcpy(icmp + ND_MSG_LEN + 2, opt == ND_OPT_NONCE ?
				(const uint8_t *)&nonce : net_ifc(ns, port)->mac, 6);
	}
	icmp6_send(ns, port, m, 0);
}

/* Our solicitation for target (or a DAD probe, from ::), to its
 * solicited-node group. */
static void
ns_send(struct net_stack *ns, uint8_t port, const union net_ip *src,
		const union net_ip *target)
{
	union net_ip g = solicited_node(target);
	uint8_t mac[6];

	group_mac(&g, mac);
	nd_send(ns, port, mac, src, &g, ICMP6_NS, 0, target,
			net_ip_is_zero(src) ? ND_OPT_NONCE : ND_OPT_SRC_LLADDR);
}

/* An advertisement of our address i to dst (all nodes when unsolicited). */
static void
na_send(struct net_stack *ns, uint8_t port, const uint8_t *dmac,
		const union net_ip *dst, unsigned int i, uint8_t flags)
{
	const union net_ip *a = &ns->port[port].addr[NET_LOCAL_V6 + i];

	ns->stats->nd.nd_na_out++;
	nd_send(ns, port, dmac, a, dst, ICMP6_NA, flags, a, ND_OPT_TGT_LLADDR);
}

/* Unsolicited, to all nodes, overriding what they cached (RFC 4861
 * 7.2.6). */
static void
na_announce(struct net_stack *ns, uint8_t port, unsigned int i)
{
	uint8_t mac[6];

	group_mac(&all_nodes, mac);
	na_send(ns, port, mac, &all_nodes, i, ND_NA_OVERRIDE);
}

void
nd_solicit(struct net_stack *ns, uint8_t port, const union net_ip *target)
{
	const struct net_port *p = &ns->port[port];
	unsigned int i = ip6_is_link_local(target) ||
		net_nd_state(p->nd, 0) == NET_ADDR_DUPLICATE;

	/* The answer may reach any shard: it completes this entry. */
	neigh_pending(&p->nd->cache, target, ns->now_ms);
	ns->stats->nd.nd_ns_out++;
	ns_send(ns, port, &p->addr[NET_LOCAL_V6 + i], target);
}

/* An MLDv2 report (RFC 3810 5.2) of the port's solicited-node groups:
 * changed to exclude nothing (joined) when unsolicited, in that mode when
 * answering a query. From the link-local address, one hop, with the
 * router alert option in a hop-by-hop header. */
static void
mld_report(struct net_stack *ns, uint8_t port, bool answer)
{
	static const uint8_t hbh[8] = { IPPROTO_ICMPV6_, 0, 5, 2, 0, 0, 1, 0 };
	const struct net_port *p = &ns->port[port];
	union net_ip g[2] = { solicited_node(&p->addr[NET_LOCAL_V6]),
		solicited_node(&p->addr[NET_LOCAL_V6_LL]) };
	uint16_t n = net_ip_eq(&g[0], &g[1]) ? 1 : 2, i;
	uint16_t len = (uint16_t)(8 + 20 * n);
	struct rte_mbuf *m;
	uint8_t mac[6], *b;

	group_mac(&all_mld_routers, mac);
	m = ip6_start(ns, port, mac, &p->addr[NET_LOCAL_V6_LL], &all_mld_routers,
			IP6_NH_HOP_BY_HOP, 1, (uint16_t)(sizeof(hbh) + len));
	if (m == NULL)
		return;
	b = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(sizeof(hbh) + len));
	if (b == NULL) {
		rte_pktmbuf_free(m);
		return;
	}
	memcpy(b, hbh, sizeof(hbh));
	b += sizeof(hbh);
	memset(b, 0, len);
	b[0] = ICMP6_MLD2_REPORT;
	pkt_wr16(b + 6, n);
	for (i = 0; i < n; i++) {
		b[8 + 20 * i] = answer ? 2 : 4;	/* MODE_IS_ / CHANGE_TO_EXCLUDE */
		memcpy(b + 12 + 20 * i, g[i].v6, 16);
	}
	ns->stats->nd.mld_reports++;
	icmp6_send(ns, port, m, sizeof(hbh));
}

void
nd_mld_query(struct net_stack *ns, uint8_t port)
{
	struct net_port *p = &ns->port[port];

	if (p->mld_last_ms != 0 && ns->now_ms - p->mld_last_ms < MLD_REPORT_GAP_MS)
		return;
	p->mld_last_ms = ns->now_ms;
	mld_report(ns, port, true);
}

/* A node other than us said it has our address i (RFC 4862 5.4.3,
 * 5.4.4): during detection ours is a duplicate, after it the conflict
 * is counted and the address kept. */
static void
addr_claimed(struct net_stack *ns, struct net_nd *nd, unsigned int i)
{
	if (net_nd_state(nd, i) == NET_ADDR_TENTATIVE) {
		set_state(nd, i, NET_ADDR_DUPLICATE);
		ns->stats->nd.nd_dad_duplicates++;
	} else {
		ns->stats->nd.nd_addr_conflicts++;
	}
}

/* Within the shard's budget of advertisements a second. */
static bool
reply_allowed(struct net_stack *ns)
{
	if (rate_limit_take(&ns->nd_replies, ns->now_ms))
		return true;
	ns->stats->nd.nd_replies_limited++;
	return false;
}

static void
ns_input(struct net_stack *ns, const struct eth_view *eth,
		const struct ip_view *ip, const struct nd_view *v, int i)
{
	struct net_port *p = &ns->port[ns->cur_port];
	enum net_addr_state st;

	ns->stats->nd.nd_ns_in++;
	if (i < 0 || (st = net_nd_state(p->nd, (unsigned int)i)) ==
			NET_ADDR_DUPLICATE) {
		ns->stats->nd.nd_other_targets++;	/* nothing learned */
		return;
	}
	if (net_ip_is_zero(&ip->src)) {
		uint64_t ours = __atomic_load_n(&p->nd->dad_nonce,
				__ATOMIC_RELAXED);

		if (v->nonce != NULL && memcmp(v->nonce, &ours, 6) == 0)
			return;		/* our own probe, looped back */
		/* Another node's DAD probe for our address. */
		if (st == NET_ADDR_TENTATIVE)
			addr_claimed(ns, p->nd, (unsigned int)i);
		else if (reply_allowed(ns))	/* defend it, to all nodes */
			na_announce(ns, ns->cur_port, (unsigned int)i);
		return;
	}
	/* RFC 4861 7.2.3: the sender asks for us, so it is a neighbour. */
	if (v->lladdr != NULL) {
		neigh_update(&p->nd->cache, &ip->src, v->lladdr, ns->now_ms);
		ns->stats->nd.nd_learned++;
	}
	if (reply_allowed(ns))	/* optimistic: no override (RFC 4429 3.3) */
		na_send(ns, ns->cur_port, v->lladdr ? v->lladdr : eth->src,
				&ip->src, (unsigned int)i, ND_NA_SOLICITED |
				(st == NET_ADDR_PREFERRED ? ND_NA_OVERRIDE : 0));
}

static void
na_input(struct net_stack *ns, const struct ip_view *ip,
		const struct nd_view *v, int i)
{
	struct net_nd *nd = ns->port[ns->cur_port].nd;

	RTE_SET_USED(ip);
	ns->stats->nd.nd_na_in++;
	if (i >= 0) {
		/* Ours looped back, or the port's own MAC elsewhere (net_tap's
		 * kernel side): the same link-layer address, no conflict. */
		if (v->lladdr == NULL || memcmp(v->lladdr,
				net_ifc(ns, ns->cur_port)->mac, 6) != 0)
			addr_claimed(ns, nd, (unsigned int)i);
		return;
	}
	/* RFC 4861 7.2.5: only a neighbour in the cache (one we asked
	 * for) is learned; an advertisement of others is spoofing or
	 * gossip. */
	if (v->lladdr != NULL && neigh_known(&nd->cache, &v->target,
			ns->now_ms)) {
		neigh_update(&nd->cache, &v->target, v->lladdr, ns->now_ms);
		ns->stats->nd.nd_learned++;
	}
}

void
nd_input(struct net_stack *ns, struct rte_mbuf *m, const struct eth_view *eth,
		const struct ip_view *ip)
{
	const struct net_port *p = &ns->port[ns->cur_port];
	struct nd_view v;
	enum net_drop why = nd_parse(ip, &v);

	if (why != NET_OK) {
		net_count_drop(ns, why);
		rte_pktmbuf_free(m);
		return;
	}
	if (v.type == ICMP6_NS)
		ns_input(ns, eth, ip, &v, addr_index(p, &v.target));
	else
		na_input(ns, ip, &v, addr_index(p, &v.target));
	rte_pktmbuf_free(m);
}

/* A round of duplicate address detection on port, claimed or finished. */
static void
dad_step(struct net_stack *ns, uint8_t port)
{
	struct net_port *p = &ns->port[port];
	struct net_nd *nd = p->nd;
	uint32_t round = __atomic_load_n(&nd->dad_round, __ATOMIC_ACQUIRE);
	uint32_t claimed = __atomic_load_n(&nd->dad_claimed, __ATOMIC_RELAXED);
	unsigned int i;

	if (claimed != round && __atomic_compare_exchange_n(&nd->dad_claimed,
			&claimed, round, false, __ATOMIC_ACQ_REL,
			__ATOMIC_RELAXED)) {
		p->dad_round = round;
		p->dad_until_ms = ns->now_ms + NET_DAD_MS;
		__atomic_store_n(&nd->dad_nonce, rte_rand(), __ATOMIC_RELAXED);
		mld_report(ns, port, false);
		/* A duplicate too: the link that comes back may be another. */
		for (i = 0; i < 2; i++) {
			set_state(nd, i, NET_ADDR_TENTATIVE);
			ns->stats->nd.nd_dad_probes++;
			ns_send(ns, port, &unspecified, &p->addr[NET_LOCAL_V6 + i]);
		}
		return;
	}
	if (p->dad_round == 0 || ns->now_ms < p->dad_until_ms)
		return;
	/* A newer round (a link up meanwhile) decides instead. */
	for (i = 0; i < 2 && p->dad_round == round; i++) {
		if (net_nd_state(nd, i) != NET_ADDR_TENTATIVE)
			continue;
		set_state(nd, i, NET_ADDR_PREFERRED);
		na_announce(ns, port, i);
	}
	p->dad_round = 0;
}

void
nd_timers(struct net_stack *ns)
{
	uint8_t i;

	for (i = 0; i < ns->nb_ports; i++)
		if (ns->port[i].nd != NULL)
			dad_step(ns, i);
}

void
nd_link_up(struct net_stack *ns)
{
	uint8_t i;

	for (i = 0; i < ns->nb_ports; i++) {
		struct net_nd *nd = ns->port[i].nd;
		uint32_t claimed;

		if (nd == NULL)
			continue;
		/* One new round, however many shards see the link come up. */
		claimed = __atomic_load_n(&nd->dad_claimed, __ATOMIC_RELAXED);
		__atomic_compare_exchange_n(&nd->dad_round, &claimed, claimed + 1,
				false, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
	}
}
