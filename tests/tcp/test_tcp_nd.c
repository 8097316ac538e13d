/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPv6's own machinery on a real stack with a virtual clock: neighbour
 * discovery (answers for our addresses only, within the budget; nothing
 * learned from spoofing; our solicitations completed by the answer),
 * duplicate address detection (probes, announcements, a duplicate taken
 * out of use, a defended address), ICMPv6 (echo, router messages left
 * alone, Parameter Problem within its budget) and Packet Too Big (the
 * quoted segment must be in the window; the MSS falls, what is in flight
 * is resent smaller, the peer's next connection starts smaller), and the
 * frames a port with IPv6 takes or not. Runs with TH_FAMILY=6.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <rte_mbuf.h>

#include "cksum.h"
#include "tcp_harness.h"

#define IRS 7000000u

static const uint8_t peer_mac[6] = { 2, 0, 0, 0, 0, 1 };
static const uint8_t other_mac[6] = { 2, 0, 0, 0, 0, 0x77 };
static const uint8_t all_nodes_mac[6] = { 0x33, 0x33, 0, 0, 0, 1 };
static const uint8_t all_nodes[16] = { 0xff, 0x02, [15] = 1 };
static const uint8_t sol_ours[16] = { 0xff, 0x02, [11] = 1, 0xff, 0, 0, 2 };
static const uint8_t sol_ours_mac[6] = { 0x33, 0x33, 0xff, 0, 0, 2 };
static const uint8_t unspec[16];

/* An IPv6 frame from smac with an ICMPv6 message (checksum filled). */
static uint16_t
icmp6_frame(uint8_t *f, const uint8_t *dmac, const uint8_t *smac,
		const uint8_t *src, const uint8_t *dst, uint8_t hlim,
		const uint8_t *msg, uint16_t len)
{
	struct cksum c;
	uint16_t sum;

	memcpy(f, dmac, 6);
	memcpy(f + 6, smac, 6);
	f[12] = 0x86;
	f[13] = 0xdd;
	memset(f + 14, 0, 40);
	f[14] = 0x60;
	f[18] = (uint8_t)(len >> 8);
	f[19] = (uint8_t)len;
	f[20] = 58;
	f[21] = hlim;
	memcpy(f + 22, src, 16);
	memcpy(f + 38, dst, 16);
	memcpy(f + 54, msg, len);
	f[56] = f[57] = 0;
	cksum_init(&c);
	cksum_pseudo_ipv6(&c, src, dst, 58, len);
	cksum_feed(&c, f + 54, len);
	sum = cksum_finish(&c);
	memcpy(f + 56, &sum, 2);
	return (uint16_t)(54 + len);
}

/* An NS or NA for target, with a link-layer address option of mac (none
 * when mac is NULL). */
static uint16_t
nd_msg(uint8_t *m, uint8_t type, uint8_t flags, const uint8_t *target,
		const uint8_t *mac)
{
	memset(m, 0, 32);
	m[0] = type;
	m[4] = flags;
	memcpy(m + 8, target, 16);
	if (mac == NULL)
		return 24;
	m[24] = type == ICMP6_NS ? 1 : 2;
	m[25] = 1;
	memcpy(m + 26, mac, 6);
	return 32;
}

static void
rx_nd(struct th *h, const uint8_t *dmac, const uint8_t *smac,
		const uint8_t *src, const uint8_t *dst, uint8_t type,
		uint8_t flags, const uint8_t *target, const uint8_t *lladdr)
{
	uint8_t msg[32], f[128];
	uint16_t n = nd_msg(msg, type, flags, target, lladdr);

	th_rx_frame(h, 0, f, icmp6_frame(f, dmac, smac, src, dst, 255, msg, n));
}

/* The next frame, which must be ICMPv6 of type: its view (into buf). */
static void
next_icmp6(struct th *h, uint8_t *buf, struct ip_view *ip, uint8_t type)
{
	uint8_t port;
	uint16_t len = th_next_frame(h, buf, 2048, &port);

	assert_true(len > 54);
	assert_int_equal(buf[12] << 8 | buf[13], 0x86dd);
	assert_int_equal(ipv6_parse(buf + 14, len - 14u, ip), NET_OK);
	assert_int_equal(ip->proto, 58);
	assert_int_equal(icmp6_parse(ip), NET_OK);
	assert_int_equal(ip->payload[0], type);
}

static void
test_ns_answered_for_ours_only(void **state)
{
	struct th *h = th_new(NULL);
	struct net_addr peer = th_peer(h);
	union net_ip other = th_peer(h).ip;
	uint8_t buf[2048], mac[6];
	struct ip_view ip;

	(void)state;
	other.v6[15] = 0x99;
	rx_nd(h, sol_ours_mac, peer_mac, peer.ip.v6, sol_ours, ICMP6_NS, 0,
			h->ifc.ip6, peer_mac);
	next_icmp6(h, buf, &ip, ICMP6_NA);
	assert_memory_equal(buf, peer_mac, 6);		/* to the asker */
	assert_memory_equal(buf + 6, h->ifc.mac, 6);
	assert_int_equal(ip.ttl, 255);
	assert_memory_equal(ip.src.v6, h->ifc.ip6, 16);
	assert_memory_equal(ip.dst.v6, peer.ip.v6, 16);
	assert_int_equal(ip.payload[4], ND_NA_SOLICITED | ND_NA_OVERRIDE);
	assert_memory_equal(ip.payload + 8, h->ifc.ip6, 16);
	assert_int_equal(ip.payload[24], ND_OPT_TGT_LLADDR);
	assert_memory_equal(ip.payload + 26, h->ifc.mac, 6);
	/* The asker is a neighbour now. */
	assert_true(neigh_lookup(&h->nd->cache, &peer.ip, mac, h->now));
	assert_memory_equal(mac, peer_mac, 6);

	/* From the port's own MAC (net_tap's kernel side has it): answered
	 * as any neighbour's. */
	rx_nd(h, h->ifc.mac, h->ifc.mac, peer.ip.v6, h->ifc.ip6, ICMP6_NS, 0,
			h->ifc.ip6, h->ifc.mac);
	next_icmp6(h, buf, &ip, ICMP6_NA);
	assert_int_equal(ip.payload[4], ND_NA_SOLICITED | ND_NA_OVERRIDE);
	/* Another target, in our solicited-node group: no answer, and the
	 * sender is not learned. */
	rx_nd(h, sol_ours_mac, other_mac, other.v6, sol_ours, ICMP6_NS, 0,
			(const uint8_t[16]){ 0x20, 0x01, 0, 0x02, [11] = 5, [15] = 2 },
			other_mac);
	assert_int_equal(th_pending(h), 0);
	assert_false(neigh_known(&h->nd->cache, &other, h->now));
	assert_int_equal(h->stats.nd.nd_other_targets, 1);
	/* An advertisement of a host nobody asked for teaches nothing. */
	rx_nd(h, all_nodes_mac, other_mac, other.v6, all_nodes, ICMP6_NA,
			ND_NA_OVERRIDE, other.v6, other_mac);
	assert_false(neigh_known(&h->nd->cache, &other, h->now));
	assert_int_equal(h->stats.nd.nd_learned, 2);
	/* A group we did not join is not for us. */
	rx_nd(h, (const uint8_t[6]){ 0x33, 0x33, 0xff, 0, 0, 0x99 }, peer_mac,
			peer.ip.v6, (const uint8_t[16]){ 0xff, 0x02, [11] = 1, 0xff,
			0, 0, 0x99 }, ICMP6_NS, 0, h->ifc.ip6, peer_mac);
	assert_int_equal(h->stats.drop[NET_DROP_NOT_FOR_US], 1);
	assert_int_equal(th_pending(h), 0);
	th_free(h);
}

static void
test_ns_answers_within_budget(void **state)
{
	struct tcp_config cfg;
	struct th *h;
	struct net_addr peer;
	int i;

	(void)state;
	tcp_config_defaults(&cfg);
	cfg.nd_reply_limit = 10;
	h = th_new(&cfg);
	peer = th_peer(h);
	for (i = 0; i < 100; i++)
		rx_nd(h, sol_ours_mac, peer_mac, peer.ip.v6, sol_ours, ICMP6_NS, 0,
				h->ifc.ip6, peer_mac);
	/* Each second's budget is drawn between half and 1.5 times it. */
	assert_true(th_pending(h) >= 5 && th_pending(h) <= 15);
	assert_int_equal(h->stats.nd.nd_replies_limited, 100 - th_pending(h));
	assert_int_equal(h->stats.nd.nd_ns_in, 100);
	th_free(h);
}

/* Our solicitation for an active open: the answer completes the entry
 * that the solicitation left, and the open goes on. */
static void
test_solicitation_completed_by_answer(void **state)
{
	struct th *h = th_new(NULL);
	struct net_addr peer = th_peer(h);
	struct th_out o;
	uint8_t buf[2048];
	struct ip_view ip;
	int err;

	(void)state;
	assert_null(tcp_open_addr(h->ns, &peer, 8080, NULL, NULL, &err));
	assert_int_equal(err, -EAGAIN);
	net_flush(h->ns);
	next_icmp6(h, buf, &ip, ICMP6_NS);
	assert_int_equal(h->stats.nd.nd_ns_out, 1);
	/* The answer may come to another shard: any stack of the port
	 * completes it from the shared cache. */
	rx_nd(h, h->ifc.mac, peer_mac, peer.ip.v6, h->ifc.ip6, ICMP6_NA,
			ND_NA_SOLICITED | ND_NA_OVERRIDE, peer.ip.v6, peer_mac);
	assert_true(neigh_known(&h->nd->cache, &peer.ip, h->now));
	assert_non_null(tcp_open_addr(h->ns, &peer, 8080, NULL, NULL, &err));
	net_flush(h->ns);
	assert_true(th_next(h, &o));
	assert_int_equal(o.t.flags, TCP_SYN);
	assert_int_equal(o.t.opt.mss, 1440);
	assert_int_equal(h->stats.tcp.ip6_active_opens, 1);
	th_drain(h);
	th_free(h);
}

/* A stack whose duplicate address detection has not run yet. */
static struct th *
th_new_dad(void)
{
	struct th *h = th_new(NULL);

	h->nd->state[0] = h->nd->state[1] = NET_ADDR_TENTATIVE;
	h->nd->dad_claimed = 0;
	return h;
}

static void
test_dad_probes_then_announces(void **state)
{
	struct th *h = th_new_dad();
	union net_ip ll;
	uint8_t buf[2048], port;
	struct ip_view ip;
	int probes = 0, i;

	(void)state;
	net_ip6_link_local(h->ifc.mac, ll.v6);
	th_advance(h, 1);
	/* An MLD report joins the groups, then a probe per address, from
	 * :: to its solicited-node group, without a link-layer address but
	 * with a nonce. */
	for (i = 0; i < 3; i++) {
		uint16_t len = th_next_frame(h, buf, sizeof(buf), &port);

		assert_true(len > 54);
		assert_int_equal(ipv6_parse(buf + 14, len - 14u, &ip), NET_OK);
		assert_int_equal(icmp6_parse(&ip), NET_OK);
		if (ip.payload[0] == ICMP6_MLD2_REPORT) {
			assert_int_equal(ip.ttl, 1);
			assert_true(net_ip_eq(&ip.src, &ll));
			assert_int_equal(ip.hdr_len, 48);	/* router alert */
			continue;
		}
		assert_int_equal(ip.payload[0], ICMP6_NS);
		assert_true(net_ip_is_zero(&ip.src));
		assert_int_equal(ip.dst.v6[11], 1);
		assert_int_equal(ip.dst.v6[12], 0xff);
		assert_int_equal(ip.len, 32);	/* and a nonce */
		assert_int_equal(ip.payload[24], ND_OPT_NONCE);
		probes++;
	}
	assert_int_equal(probes, 2);
	assert_int_equal(net_nd_state(h->nd, 0), NET_ADDR_TENTATIVE);
	/* Optimistic meanwhile: a SYN to the address is answered. */
	th_handshake(h, 40000, IRS, NULL, 0, 65535);
	th_advance(h, 999);
	assert_int_equal(th_pending(h), 0);
	th_advance(h, 1);
	assert_int_equal(net_nd_state(h->nd, 0), NET_ADDR_PREFERRED);
	assert_int_equal(net_nd_state(h->nd, 1), NET_ADDR_PREFERRED);
	for (i = 0; i < 2; i++) {
		next_icmp6(h, buf, &ip, ICMP6_NA);
		assert_memory_equal(buf, all_nodes_mac, 6);
		assert_memory_equal(ip.dst.v6, all_nodes, 16);
		assert_int_equal(ip.payload[4], ND_NA_OVERRIDE);
	}
	/* A link that comes back makes another round. */
	net_link_up(h->ns);
	th_advance(h, 1);
	assert_int_equal(h->stats.nd.nd_dad_probes, 4);
	th_drain(h);
	th_free(h);
}

static void
test_dad_duplicate_goes_out_of_use(void **state)
{
	struct th *h = th_new_dad();
	struct th_seg s = th_seg_from(IRS, 0, TCP_SYN);
	union net_ip ll, global;
	uint8_t f[2048], port;
	struct th_out o;
	uint16_t n;

	(void)state;
	net_ip6_link_local(h->ifc.mac, ll.v6);
	global = th_local(h, 0);
	th_advance(h, 1);
	/* Our own probes, looped back by the link, are no one else's: their
	 * nonce says so (RFC 7527), whatever their source MAC. */
	while ((n = th_next_frame(h, f, sizeof(f), &port)) > 0) {
		if (f[54] != ICMP6_NS)
			continue;
		assert_int_equal(f[54 + 24], ND_OPT_NONCE);
		th_rx_frame(h, 0, f, n);
	}
	assert_int_equal(net_nd_state(h->nd, 0), NET_ADDR_TENTATIVE);
	assert_int_equal(net_nd_state(h->nd, 1), NET_ADDR_TENTATIVE);
	/* A probe from our MAC without our nonce is another node's (net_tap's
	 * kernel side has the port's MAC): here, one for no address of ours. */
	rx_nd(h, sol_ours_mac, h->ifc.mac, unspec, sol_ours, ICMP6_NS, 0,
			(const uint8_t[16]){ 0x20, 0x01, 0, 0x02, [11] = 5, [15] = 2 },
			NULL);
	assert_int_equal(h->stats.nd.nd_other_targets, 1);
	/* An advertisement of our address with our own MAC is ours. */
	rx_nd(h, all_nodes_mac, h->ifc.mac, h->ifc.ip6, all_nodes, ICMP6_NA,
			ND_NA_OVERRIDE, h->ifc.ip6, h->ifc.mac);
	assert_int_equal(net_nd_state(h->nd, 0), NET_ADDR_TENTATIVE);
	/* Another node answers the probe: our global address is its. */
	rx_nd(h, all_nodes_mac, other_mac, h->ifc.ip6, all_nodes, ICMP6_NA,
			ND_NA_OVERRIDE, h->ifc.ip6, other_mac);
	assert_int_equal(net_nd_state(h->nd, 0), NET_ADDR_DUPLICATE);
	assert_int_equal(h->stats.nd.nd_dad_duplicates, 1);
	/* Another probes for our link-local address at the same time. */
	rx_nd(h, (const uint8_t[6]){ 0x33, 0x33, 0xff, ll.v6[13], ll.v6[14],
			ll.v6[15] }, other_mac, unspec, (const uint8_t[16]){ 0xff,
			0x02, [11] = 1, 0xff, ll.v6[13], ll.v6[14], ll.v6[15] },
			ICMP6_NS, 0, ll.v6, NULL);
	assert_int_equal(net_nd_state(h->nd, 1), NET_ADDR_DUPLICATE);
	th_advance(h, 1000);
	assert_int_equal(th_pending(h), 0);	/* nothing announced */
	/* Neither is used: a SYN to it is not ours, nor answered. */
	th_inject_on(h, 0, &global, &s);
	assert_int_equal(th_pending(h), 0);
	assert_int_equal(h->stats.drop[NET_DROP_IP6_NOT_OURS], 1);
	assert_false(th_next(h, &o));
	th_free(h);
}

static void
test_dad_probe_for_preferred_is_defended(void **state)
{
	struct th *h = th_new(NULL);
	uint8_t buf[2048];
	struct ip_view ip;

	(void)state;
	rx_nd(h, sol_ours_mac, other_mac, unspec, sol_ours, ICMP6_NS, 0,
			h->ifc.ip6, NULL);
	next_icmp6(h, buf, &ip, ICMP6_NA);
	assert_memory_equal(ip.dst.v6, all_nodes, 16);
	assert_int_equal(ip.payload[4], ND_NA_OVERRIDE);	/* not solicited */
	assert_int_equal(net_nd_state(h->nd, 0), NET_ADDR_PREFERRED);
	/* A later claim of it is counted; the address stays ours. */
	rx_nd(h, all_nodes_mac, other_mac, h->ifc.ip6, all_nodes, ICMP6_NA,
			ND_NA_OVERRIDE, h->ifc.ip6, other_mac);
	assert_int_equal(net_nd_state(h->nd, 0), NET_ADDR_PREFERRED);
	assert_int_equal(h->stats.nd.nd_addr_conflicts, 1);
	th_free(h);
}

static void
test_echo_router_messages_and_errors(void **state)
{
	struct tcp_config cfg;
	struct th *h;
	struct net_addr peer;
	uint8_t msg[64] = { ICMP6_ECHO_REQUEST, 0, 0, 0, 0, 7, 0, 1, 'p', 'q' };
	uint8_t f[256], buf[2048];
	struct ip_view ip;
	uint16_t n;
	int i;

	(void)state;
	tcp_config_defaults(&cfg);
	cfg.icmp6_error_limit = 4;
	h = th_new(&cfg);
	peer = th_peer(h);
	th_rx_frame(h, 0, f, icmp6_frame(f, h->ifc.mac, peer_mac, peer.ip.v6,
			h->ifc.ip6, 64, msg, 10));
	next_icmp6(h, buf, &ip, ICMP6_ECHO_REPLY);
	assert_memory_equal(ip.payload + 4, msg + 4, 6);
	assert_memory_equal(ip.dst.v6, peer.ip.v6, 16);
	/* Not from a whole group. */
	th_rx_frame(h, 0, f, icmp6_frame(f, all_nodes_mac, peer_mac, peer.ip.v6,
			all_nodes, 64, msg, 10));
	assert_int_equal(th_pending(h), 0);
	assert_int_equal(h->stats.drop[NET_DROP_ICMP6_TYPE], 1);
	/* A router advertisement changes nothing and is answered by
	 * nothing. */
	memset(msg, 0, 16);
	msg[0] = ICMP6_RA;
	th_rx_frame(h, 0, f, icmp6_frame(f, all_nodes_mac, peer_mac, peer.ip.v6,
			all_nodes, 255, msg, 16));
	assert_int_equal(th_pending(h), 0);
	assert_int_equal(h->stats.drop[NET_DROP_ND_ROUTER], 1);
	/* SCTP, which we do not speak: Parameter Problem, code 1, pointing
	 * at the next header field, within the budget. */
	n = icmp6_frame(f, h->ifc.mac, peer_mac, peer.ip.v6, h->ifc.ip6, 64, msg, 16);
	f[20] = 132;
	for (i = 0; i < 20; i++)
		th_rx_frame(h, 0, f, n);
	assert_true(th_pending(h) >= 2 && th_pending(h) <= 6);
	assert_int_equal(h->stats.nd.icmp6_errors_out, th_pending(h));
	assert_int_equal(h->stats.nd.icmp6_errors_limited, 20 - th_pending(h));
	next_icmp6(h, buf, &ip, ICMP6_PARAM_PROBLEM);
	assert_int_equal(ip.payload[1], 1);
	assert_int_equal(pkt_rd32(ip.payload + 4), 6);
	assert_memory_equal(ip.payload + 8, f + 14, n - 14u);	/* quoted */
	assert_int_equal(h->stats.drop[NET_DROP_IP6_NEXT_HEADER], 20);
	th_drain(h);
	th_free(h);
}

static void
test_bad_sources_and_other_families(void **state)
{
	struct th *h = th_new(NULL), *v4;
	struct th_seg s = th_seg_from(IRS, 0, TCP_SYN);
	union net_ip group = net_ip6(all_nodes), local = th_local(h, 0);
	union net_ip loopback = { .v6 = { [15] = 1 } }, none = { .w = { 0 } };
	struct tcp_config cfg;
	uint8_t frame[128];

	(void)state;
	th_inject_on(h, 0, &group, &s);		/* TCP to a group */
	assert_int_equal(h->stats.drop[NET_DROP_IP6_NOT_OURS], 1);
	th_inject_from(h, 0, &group, &local, &s);
	assert_int_equal(h->stats.drop[NET_DROP_IP6_SRC_MULTICAST], 1);
	th_inject_from(h, 0, &none, &local, &s);
	th_inject_from(h, 0, &loopback, &local, &s);
	assert_int_equal(h->stats.drop[NET_DROP_IP6_SRC_INVALID], 2);
	assert_int_equal(th_pending(h), 0);
	assert_int_equal(h->stats.tcp.segs_in, 0);
	/* A port without IPv6 takes no IPv6 frame. */
	setenv("TH_FAMILY", "4", 1);
	tcp_config_defaults(&cfg);
	v4 = th_new(&cfg);
	setenv("TH_FAMILY", "6", 1);
	th_rx_frame(v4, 0, frame, icmp6_frame(frame, v4->ifc.mac, peer_mac,
			th_peer(h).ip.v6, h->ifc.ip6, 64,
			(const uint8_t[8]){ ICMP6_ECHO_REQUEST }, 8));
	assert_int_equal(v4->stats.drop[NET_DROP_ETHERTYPE], 1);
	assert_int_equal(v4->stats.rx_ip6_pkts, 1);
	assert_int_equal(th_pending(v4), 0);
	th_free(v4);
	th_free(h);
}

/* A connection with three full segments in flight. */
static struct tcp_conn *
busy_conn(struct th *h, uint32_t *iss)
{
	static char data[3 * 1428];
	struct th_seg s = th_seg_from(IRS, 0, TCP_SYN);
	struct th_out o;
	int i;

	th_opt_mss(&s, 1440);
	th_opt_ts(&s, 1, 0);
	th_inject(h, &s);
	assert_true(th_next(h, &o));
	*iss = o.t.seq;
	s = th_seg_from(IRS + 1, *iss + 1, TCP_ACK);
	th_opt_ts(&s, 2, o.t.opt.ts_val);
	th_inject(h, &s);
	assert_int_equal(h->app.conn->mss, 1440);
	memset(data, 'd', sizeof(data));
	assert_int_equal(tcp_write(h->ns, h->app.conn, data, sizeof(data)),
			sizeof(data));
	tcp_output(h->ns, h->app.conn);
	net_flush(h->ns);
	for (i = 0; i < 3; i++) {
		assert_true(th_next(h, &o));
		assert_int_equal(o.t.len, 1428);	/* 1440 less timestamps */
	}
	return h->app.conn;
}

/* A Packet Too Big quoting our segment with sequence number seq, from a
 * router on the path. */
static void
rx_ptb(struct th *h, uint32_t mtu, uint32_t seq, uint16_t dport)
{
	static const uint8_t router[16] = { 0x20, 0x01, 0, 0x02, [15] = 0xfe };
	struct net_addr peer = th_peer(h);
	uint8_t msg[8 + 40 + 20] = { ICMP6_PACKET_TOO_BIG }, f[256];

	pkt_wr32(msg + 4, mtu);
	msg[8] = 0x60;
	msg[8 + 5] = 20;
	msg[8 + 6] = 6;
	msg[8 + 7] = 64;
	memcpy(msg + 8 + 8, h->ifc.ip6, 16);
	memcpy(msg + 8 + 24, peer.ip.v6, 16);
	pkt_wr16(msg + 48, TH_PORT);
	pkt_wr16(msg + 50, dport);
	pkt_wr32(msg + 52, seq);
	th_rx_frame(h, 0, f, icmp6_frame(f, h->ifc.mac, peer_mac, router,
			h->ifc.ip6, 64, msg, sizeof(msg)));
}

static void
test_packet_too_big_lowers_mss(void **state)
{
	struct th *h = th_new(NULL);
	struct tcp_conn *c;
	struct th_seg s;
	struct th_out o;
	uint32_t iss, sent = 0;

	(void)state;
	c = busy_conn(h, &iss);
	/* Not a connection of ours; outside the window: nothing changes. */
	rx_ptb(h, 1300, iss + 1, 40999);
	assert_int_equal(h->stats.drop[NET_DROP_ICMP6_PTB_NO_CONN], 1);
	rx_ptb(h, 1300, iss + 1 + 100000, 40000);
	assert_int_equal(h->stats.drop[NET_DROP_ICMP6_PTB_SEQ], 1);
	rx_ptb(h, 1300, iss, 40000);		/* the SYN: acknowledged */
	assert_int_equal(h->stats.drop[NET_DROP_ICMP6_PTB_SEQ], 2);
	rx_ptb(h, 1500, iss + 1, 40000);	/* no smaller than the port's */
	assert_int_equal(c->mss, 1440);
	assert_int_equal(h->stats.tcp.pmtu_lowered, 0);
	assert_int_equal(th_pending(h), 0);
	/* The first segment in flight: 1300 - 60, and what no longer fits
	 * goes again, smaller. */
	rx_ptb(h, 1300, iss + 1, 40000);
	assert_int_equal(c->mss, 1240);
	assert_int_equal(h->stats.tcp.pmtu_lowered, 1);
	assert_int_equal(h->stats.nd.icmp6_ptb_in, 5);
	while (th_next(h, &o)) {
		assert_true(o.t.len <= 1240 - 12);
		assert_int_equal(o.t.seq, iss + 1 + sent);
		sent += o.t.len;
	}
	/* Each old segment in two (1228 and 200): all of it again. */
	assert_int_equal(sent, 3 * 1428);
	assert_int_equal(h->stats.tcp.retransmits, 6);
	/* Under IPv6's minimum: 1280 is the floor. */
	rx_ptb(h, 500, iss + 1, 40000);
	assert_int_equal(c->mss, 1220);
	th_drain(h);
	/* The peer's next connection starts at the path's MTU. */
	s = th_seg_from(IRS, 0, TCP_SYN);
	s.sport = 40002;
	th_opt_mss(&s, 1440);
	th_inject(h, &s);
	assert_true(th_next(h, &o));
	s = th_seg_from(IRS + 1, o.t.seq + 1, TCP_ACK);
	s.sport = 40002;
	th_inject(h, &s);
	assert_int_equal(h->app.conn->mss, 1220);
	th_free(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ns_answered_for_ours_only),
		cmocka_unit_test(test_ns_answers_within_budget),
		cmocka_unit_test(test_solicitation_completed_by_answer),
		cmocka_unit_test(test_dad_probes_then_announces),
		cmocka_unit_test(test_dad_duplicate_goes_out_of_use),
		cmocka_unit_test(test_dad_probe_for_preferred_is_defended),
		cmocka_unit_test(test_echo_router_messages_and_errors),
		cmocka_unit_test(test_bad_sources_and_other_families),
		cmocka_unit_test(test_packet_too_big_lowers_mss),
	};

	setenv("TH_FAMILY", "6", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
