/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Path MTU discovery over IPv6 (RFC 8201): an ICMPv6 Packet Too Big lowers
 * the MSS of the connection whose segment it quotes, if that segment's
 * sequence number lies between the oldest unacknowledged byte and the
 * highest sent (as Linux checks: a forger off the path has to guess the
 * window), then of the stack's other connections to that peer, and of new
 * ones through a small cache by peer; never below IPv6's minimum MTU.
 * Segments in flight that no longer fit are resent at the new size, with
 * the congestion window as it was: the path did not get more congested.
 */
#include <string.h>

#include "tcp_impl.h"

/* Records mtu for peer; true if that lowers what was known. */
static bool
pmtu_note(struct net_stack *ns, const union net_ip *peer, uint16_t mtu)
{
	struct net_pmtu *e, *victim = &ns->pmtu[0];
	unsigned int i;

	for (i = 0; i < NET_PMTU_CACHE; i++) {
		e = &ns->pmtu[i];
		if (e->mtu != 0 && net_ip_eq(&e->peer, peer)) {
			if (mtu >= e->mtu &&
					ns->now_ms - e->at_ms < NET_PMTU_EXPIRE_MS)
				return false;
			victim = e;
			break;
		}
		if (e->at_ms < victim->at_ms)
			victim = e;	/* the oldest, or an empty one */
	}
	victim->peer = *peer;
	victim->mtu = mtu;
	victim->at_ms = ns->now_ms;
	return true;
}

static void
mss_lower(struct net_stack *ns, struct tcp_conn *c, uint16_t mss)
{
	uint32_t optlen = (c->flags & TCP_F_OPT_TS) ? TCP_TS_LEN : 0;

	if (mss >= c->mss)
		return;
	c->mss = mss;
	ns->stats->tcp.pmtu_lowered++;
	if (c->state == TCP_SYN_SENT || c->state == TCP_SYN_RECEIVED ||
			tcp_seg_mark_lost_above(c, tcp_seg_max(c, optlen)) == 0)
		return;
	/* As after a timeout, the send loop resends what is marked lost,
	 * in order: but no window is cut, and no fast recovery begins for
	 * these losses before recover. */
	c->flags |= TCP_F_LOSS;
	c->recover = c->snd_max;
	tcp_transmit(ns, c);
}

enum net_drop
tcp_ptb_input(struct net_stack *ns, const struct ip_view *ip)
{
	const uint8_t *msg = ip->payload, *q = msg + 8, *t = q + IPV6_HDR_LEN;
	union net_ip ours, peer;
	struct tcp_conn *c;
	uint8_t local;
	uint32_t seq, mtu, i;
	uint16_t mss;

	/* The quoted packet: an IPv6 header of ours (we send no extension
	 * headers) and TCP's ports and sequence number. */
	if (ip->len < 8 + IPV6_HDR_LEN + 8 || (q[0] >> 4) != 6 ||
			q[6] != IPPROTO_TCP_)
		return NET_DROP_ICMP6_PTB_INVALID;
	memcpy(ours.v6, q + 8, 16);
	memcpy(peer.v6, q + 24, 16);
	if (!nd_addr_ours(ns, ns->cur_port, &ours, &local))
		return NET_DROP_ICMP6_PTB_INVALID;
	c = tcp_lookup(ns, ns->cur_port, local, &peer, pkt_rd16(t + 2),
			pkt_rd16(t));
	if (c == NULL || c->state == TCP_TIME_WAIT)
		return NET_DROP_ICMP6_PTB_NO_CONN;
	seq = pkt_rd32(t + 4);
	if (SEQ_LT(seq, c->snd_una) || SEQ_GT(seq, c->snd_max))
		return NET_DROP_ICMP6_PTB_SEQ;
	mtu = pkt_rd32(msg + 4);
	if (mtu >= net_ifc(ns, c->port)->mtu)
		return NET_OK;		/* nothing to lower */
	mtu = RTE_MAX(mtu, (uint32_t)NET_IP6_MIN_MTU);
	mss = (uint16_t)(mtu - IPV6_HDR_LEN - TCP_HDR_MIN);
	if (!pmtu_note(ns, &peer, (uint16_t)mtu)) {
		mss_lower(ns, c, mss);
		return NET_OK;
	}
	/* New for the peer: its other connections here take it too. */
	for (i = 0; i < ns->cfg.max_conns; i++) {
		struct tcp_conn *o = &ns->conns[i];

		if (o->state != TCP_CLOSED && o->state != TCP_TIME_WAIT &&
				net_local_is_v6(o->local) && o->port == c->port &&
				net_ip_eq(&o->raddr, &peer))
			mss_lower(ns, o, mss);
	}
	return NET_OK;
}
