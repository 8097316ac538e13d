/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Private to lib/net: the stack's state and what its modules share. White-box
 * tests (tests/tcp, tests/fuzz, the unit tests) include it too; nothing else
 * does.
 */
#ifndef EWYK_NET_PRIV_H
#define EWYK_NET_PRIV_H

#include <rte_mbuf.h>

#include "blk_pool.h"
#include "net_stack.h"
#include "pkt.h"
#include "rate_limit.h"
#include "timer_wheel.h"

#define NET_TX_BATCH 32
/* The mbufs a port's batch may hold before it goes: TSO frames are chains
 * of tens, and a batch of them would hold the pool's reserve. */
#define NET_TX_BATCH_MBUFS 128

struct tcp_cc_ops;

/* A port's further IPv4 addresses (net_if's ip_count) follow its enum
 * net_local ones: the address off places after its ip is
 * NET_LOCAL__COUNT + off - 1. */
#define NET_LOCAL_MAX (NET_LOCAL__COUNT + NET_IP4_ADDRS_MAX - 1)

static inline uint8_t
net_local_v4(uint32_t off)
{
	return off == 0 ? NET_LOCAL_V4 : (uint8_t)(NET_LOCAL__COUNT + off - 1);
}

static inline bool
net_local_is_v6(uint8_t local)
{
	_Static_assert(NET_LOCAL_V6_LL == NET_LOCAL_V6 + 1, "one compare");
	return (uint8_t)(local - NET_LOCAL_V6) <= 1;
}

/* How many IPv4 addresses the port has from its ip on. */
static inline uint32_t
net_if_ip_count(const struct net_if *ifc)
{
	return ifc->ip_count <= 1 ? 1 : RTE_MIN(ifc->ip_count,
			(uint32_t)NET_IP4_ADDRS_MAX);
}

/* One port of the stack: its interface, neighbours and TX batch. */
struct net_port {
	const struct net_if *ifc;
	struct arp_cache *arp;
	struct net_nd *nd;	/* NULL: no IPv6 on the port */
	net_tx_fn tx_fn;
	void *tx_ctx;
	uint16_t tx_n;
	uint16_t tx_mbufs;	/* in the batch, chains counted whole */
	struct rte_mbuf *tx[NET_TX_BATCH];
	/* Its addresses by enum net_local (zero where it has none), and the
	 * multicast MACs it takes (IPv6's groups). */
	union net_ip addr[NET_LOCAL_MAX];
	uint8_t mc[NET_MC_MACS][6];
	uint8_t nb_mc;
	/* Active opens out of this port: how it steers answers over its
	 * queues (NULL: one queue), this stack's queue, the last ARP request
	 * or neighbour solicitation (not repeated within NET_ARP_RETRY_MS). */
	const struct net_rss *rss;
	uint16_t queue;
	union net_ip nbr_last;
	uint64_t nbr_last_ms;
	/* Duplicate address detection this stack runs for the port (nd.c):
	 * the round, when its wait ends; the last MLD report. */
	uint32_t dad_round;
	uint64_t dad_until_ms;
	uint64_t mld_last_ms;
};

/* Path MTUs that ICMPv6 Packet Too Big messages lowered, by peer (the
 * route cache's job in a kernel): new connections to a peer take it. */
#define NET_PMTU_CACHE 16
#define NET_PMTU_EXPIRE_MS (600u * 1000)	/* Linux's mtu_expires */
#define NET_IP6_MIN_MTU 1280			/* RFC 8200 5 */

struct net_pmtu {
	union net_ip peer;
	uint16_t mtu;
	uint64_t at_ms;
};

struct net_stack {
	struct net_port port[NET_MAX_PORTS];
	uint8_t nb_ports;
	/* The port of the frame being received, or of the connection being
	 * served: where replies go and drops are counted. */
	uint8_t cur_port;
	struct rte_mempool *pool;
	/* The listening ports, each with the upcalls its connections get. */
	struct net_listener {
		uint16_t port;	/* host order */
		const struct tcp_upcalls *up;
		void *ctx;
	} listeners[NET_MAX_LISTENERS];
	uint8_t nb_listeners;
	/* The bound UDP ports, each with its upcall. */
	struct net_udp_bind {
		uint16_t port;	/* host order */
		net_udp_recv_fn recv;
		void *ctx;
	} udp_binds[NET_MAX_UDP_BINDS];
	uint8_t nb_udp_binds;
	struct tcp_config cfg;
	uint64_t now_ms;	/* now_us / 1000: the wheel's ticks, keepalive */
	uint64_t now_us;	/* the clock (net_set_clock()) */
	uint64_t hash_seed;
	uint64_t secret[2];	/* SipHash key: ISNs (RFC 6528), SYN cookies */
	bool refuse_new;	/* draining: new SYNs are answered with RST */
	struct rate_limit challenge_acks;
	struct rate_limit arp_replies;
	struct rate_limit nd_replies;
	struct rate_limit icmp6_errors;
	struct rate_limit icmp_errors;
	struct net_pmtu pmtu[NET_PMTU_CACHE];
	uint32_t sndq_waiters;	/* connections with sndq_wait set */
	/* the receive buffers grown past tcp_config.rcv_buf_init, bytes: within
	 * rcv_buf_budget */
	uint64_t rcv_buf_grown;
	/* The receive queues' blocks (cfg.rcvq_max of them at most), and
	 * the chunks and runs that keep their segments (tcp_rcvq.h). */
	struct blk_pool rcvq_blks;
	struct blk_pool rcvq_chunks;
	struct blk_pool rcvq_runs;
	/* Connections waiting for their pacing time: a binary heap by it
	 * (tcp_pace.c), max_conns slots. */
	struct net_pace_ent {
		uint64_t at_us;
		uint32_t index;
	} *pace;
	uint32_t pace_n;
	const struct tcp_cc_ops *cc;
	uint16_t ip_id;
	/* Connections that took input or were given room since the last
	 * flush, and send then (see tcp_output_later): a ring of slots as
	 * long as the index (index_mask + 1, twice max_conns), so that it
	 * never fills. */
	uint32_t *out;
	uint32_t out_head, out_tail;
	struct timer_wheel wheel;
	/* connection table: slots, a free list and an open-addressing index */
	struct tcp_conn *conns;
	struct tcp_conn *free_list;
	uint32_t *index;	/* slot + 1, 0 = empty */
	uint32_t index_mask;
	/* The connections' send rings (tcp_bufs.c). */
	struct blk_pool bufs;
	/* The send queues' chunks of mbuf pointers (tcp_output.c). */
	struct blk_pool sndq_chunks;
	/* The scoreboards' entries (tcp_sack.c). */
	struct blk_pool sb_nodes;
	/* Blocks of writes that lend their bytes (tcp_ext.c). */
	struct blk_pool ext_refs;
	struct net_stats *stats;
	/* Where active opens' port search resumes, by local address; the
	 * IPv4 address the next one tries first (an offset). */
	uint16_t next_lport[NET_LOCAL_MAX];
	uint16_t next_local4;
};

/* The stack's clock moves to now_us (never back). */
static inline void
net_set_clock(struct net_stack *ns, uint64_t now_us)
{
	if (now_us > ns->now_us) {
		ns->now_us = now_us;
		ns->now_ms = now_us / 1000;
	}
}

#define NET_ARP_RETRY_MS 100
#define NET_TTL 64		/* TTL and hop limit of what we send */
#define NET_EPHEMERAL_LO 32768	/* local ports of active opens */
#define NET_EPHEMERAL_HI 60999

/* The listener of a local port (host order), or NULL. */
static inline const struct net_listener *
net_listener(const struct net_stack *ns, uint16_t lport)
{
	uint8_t i;

	for (i = 0; i < ns->nb_listeners; i++)
		if (ns->listeners[i].port == lport)
			return &ns->listeners[i];
	return NULL;
}

/* The MAC of ip's next hop on port's link (ip itself, or the port's
 * gateway when ip is off the link and the port has one): true from the
 * port's cache (ARP's or ND's by the family); false after sending an ARP request or a neighbour
 * solicitation out of the port (at most one per NET_ARP_RETRY_MS for the
 * same address). */
bool net_resolve(struct net_stack *ns, uint8_t port, const struct net_addr *ip,
		uint8_t mac[6]);

/* What net_rx() does per frame, which tests drive one at a time. Process one frame received on port 0; takes
 * ownership of m. */
void net_input(struct net_stack *ns, struct rte_mbuf *m);

/* The interface of a port. */
static inline const struct net_if *
net_ifc(const struct net_stack *ns, uint8_t port)
{
	return ns->port[port].ifc;
}

/* The port whose subnet holds addr (an active open's way out; a
 * link-local address: the first port with IPv6), else the first with a
 * gateway for its family; in *local which of its addresses talks to it.
 * -1 when none does. */
int net_route(const struct net_stack *ns, const struct net_addr *addr,
		uint8_t *local);

/* Whether the port runs the family. */
static inline bool
net_port_has(const struct net_stack *ns, uint8_t port, uint8_t family)
{
	return family == NET_AF_INET6 ? ns->port[port].nd != NULL :
		ns->port[port].ifc->ip != 0;
}

/* The port's address that a connection's local end is. */
static inline const union net_ip *
net_local_addr(const struct net_stack *ns, uint8_t port, uint8_t local)
{
	return &ns->port[port].addr[local];
}

/* The smallest path MTU known towards peer, else the port's MTU. */
uint16_t net_pmtu(const struct net_stack *ns, uint8_t port,
		const union net_ip *peer);

/* What the NIC said of a received frame's L4 checksum. */
static inline enum l4_cksum
net_l4_cksum(const struct net_stack *ns, const struct rte_mbuf *m)
{
	uint64_t f = m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;

	if (!ns->port[ns->cur_port].ifc->rx_cksum_offload)
		return L4_CKSUM_UNKNOWN;
	if (f == RTE_MBUF_F_RX_L4_CKSUM_GOOD)
		return L4_CKSUM_GOOD;
	return f == RTE_MBUF_F_RX_L4_CKSUM_BAD ? L4_CKSUM_BAD : L4_CKSUM_UNKNOWN;
}

/* IPv6 (ip6.c): a frame whose Ethernet header said IPv6; and the own
 * frames of nd.c and ip6.c: an IPv6 header for a payload of len bytes
 * of protocol proto from src to dst, behind an Ethernet header to dmac,
 * into a new mbuf whose data ends after the IPv6 header. */
void ipv6_input(struct net_stack *ns, struct rte_mbuf *m,
		const struct eth_view *eth);
struct rte_mbuf *ip6_start(struct net_stack *ns, uint8_t port,
		const uint8_t *dmac, const union net_ip *src,
		const union net_ip *dst, uint8_t proto, uint8_t hop_limit,
		uint16_t len);
/* The fixed IPv6 header at ip. */
void ip6_hdr_fill(uint8_t *ip, const union net_ip *src, const union net_ip *dst,
		uint8_t proto, uint8_t hop_limit, uint16_t payload_len);
/* Sums the ICMPv6 message that ends m (IPv6 header without extension
 * headers, or one of hbh_len bytes) and queues the frame. */
void icmp6_send(struct net_stack *ns, uint8_t port, struct rte_mbuf *m,
		uint16_t hbh_len);

/* UDP (udp.c): a datagram to us, its IP header checked, handed to its
 * port's upcall; NET_OK, or why it was not (NET_DROP_UDP_NO_PORT: the
 * caller owes ICMP's Port Unreachable). The caller frees m. */
enum net_drop udp_input(struct net_stack *ns, const struct rte_mbuf *m,
		const struct ip_view *ip);

/* Neighbour discovery (nd.c). */
void nd_input(struct net_stack *ns, struct rte_mbuf *m,
		const struct eth_view *eth, const struct ip_view *ip);
void nd_solicit(struct net_stack *ns, uint8_t port, const union net_ip *target);
/* MLD queries (RFC 3810): answered with a report of our groups. */
void nd_mld_query(struct net_stack *ns, uint8_t port);
/* DAD and announcements, run from net_timers(); nd_link_up() asks for a
 * new round. */
void nd_timers(struct net_stack *ns);
void nd_link_up(struct net_stack *ns);
/* Whether dst is one of the port's addresses in use (not duplicate):
 * true with which in *local. */
bool nd_addr_ours(const struct net_stack *ns, uint8_t port,
		const union net_ip *dst, uint8_t *local);
/* Whether dst is a multicast group the port belongs to. */
bool nd_group_ours(const struct net_stack *ns, uint8_t port,
		const union net_ip *dst);

/* Queue a frame on a port's TX batch (flushed when full). */
void net_tx(struct net_stack *ns, uint8_t port, struct rte_mbuf *m);
/* An mbuf from the stack's pool, counted as a drop when there is none. */
struct rte_mbuf *net_alloc(struct net_stack *ns);

static inline void
net_count_drop(struct net_stack *ns, enum net_drop why)
{
	ns->stats->drop[why]++;
	ns->stats->port[ns->cur_port].drop[why]++;
}

#endif /* EWYK_NET_PRIV_H */
