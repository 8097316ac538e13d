/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TCP input (RFC 9293 3.10.7): segment processing. The upper layer is
 * called back from here; it may close or abort the connection from inside a
 * callback, so a connection that dies during input is marked and freed only
 * once input unwinds. Input calls output, the timers and the table.
 */
#include <string.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "tcp_impl.h"

#define TCP_DEFAULT_MSS 536	/* RFC 9293 3.7.1, when the peer sends none */
#define PAWS_IDLE_MS (24ull * 24 * 3600 * 1000)	/* RFC 7323 5.5 */

static void
enter_time_wait(struct net_stack *ns, struct tcp_conn *c)
{
	/* Nothing more reaches the upper layer: let it go now, not after
	 * the TIME-WAIT linger. */
	tcp_release_app(ns, c);
	if (ns->stats->tcp_time_wait >= ns->cfg.max_time_wait) {
		/* The table is full: this one goes without its TIME-WAIT,
		 * not a live connection (like Linux's bucket overflow); but
		 * the peer's FIN is acknowledged first, or the peer would
		 * retransmit it to a connection that is gone. */
		ns->stats->tcp.time_wait_overflow++;
		if (c->flags & TCP_F_ACK_NOW)
			tcp_send_ack(ns, c);
		tcp_conn_kill(ns, c);
		return;
	}
	c->state = TCP_TIME_WAIT;
	ns->stats->tcp_time_wait++;
	tw_cancel(&ns->wheel, &c->rexmit);
	tw_cancel(&ns->wheel, &c->idle);
	tcp_sndq_free(ns, &c->sndq);
	tcp_sndq_wait_end(ns, c);
	tcp_rcvq_free(ns, c);
	tcp_rcvbuf_release(ns, c);
	tcp_bufs_put(ns, c);	/* nothing will be sent but ACKs */
	tw_arm(&ns->wheel, &c->linger, ns->now_ms + ns->cfg.time_wait_ms);
}

/* The largest segment towards the connection's peer: the port's MTU, or
 * the path MTU a Packet Too Big told for the peer (IPv6), less the
 * headers (40 bytes over IPv4, 60 over IPv6). */
uint16_t
tcp_mss_for(const struct net_stack *ns, const struct tcp_conn *c)
{
	uint8_t family = tcp_family(c);
	uint16_t mtu = family == NET_AF_INET ? net_ifc(ns, c->port)->mtu :
		net_pmtu(ns, c->port, &c->raddr);

	return (uint16_t)(mtu - tcp_ip_hdr_len(family) - TCP_HDR_MIN);
}

/* Settings common to both opens, from the peer's SYN (or SYN-ACK). */
static void
negotiate(struct net_stack *ns, struct tcp_conn *c, const struct tcp_view *t)
{
	uint16_t our_mss = tcp_mss_for(ns, c);

	c->mss = RTE_MIN(t->opt.mss ? t->opt.mss : TCP_DEFAULT_MSS, our_mss);
	if (c->mss < 64)
		c->mss = 64;	/* a silly MSS would cost a packet per byte */
	if (t->opt.has_wscale) {
		c->flags |= TCP_F_OPT_WS;
		c->snd_wscale = t->opt.wscale;
		c->rcv_wscale = tcp_our_wscale(ns);
	} else {
		c->flags &= ~TCP_F_OPT_WS;
		c->snd_wscale = c->rcv_wscale = 0;
	}
	if (t->opt.sack_ok)
		c->flags |= TCP_F_OPT_SACK;
	else
		c->flags &= ~TCP_F_OPT_SACK;
	if (t->opt.has_ts) {
		c->flags |= TCP_F_OPT_TS;
		c->ts_recent = t->opt.ts_val;
		c->ts_recent_ms = ns->now_ms;
	} else {
		c->flags &= ~TCP_F_OPT_TS;
	}
	c->snd_wnd = t->win;	/* never scaled in a SYN */
	c->max_sndwnd = c->snd_wnd;
	c->min_rtt_us = UINT32_MAX;
	c->reo_wnd_mult = 1;
	ns->cc->init(c);
}

static bool
mbufs_short(const struct net_stack *ns)
{
	return ns->cfg.mbuf_reserve != 0 &&
		rte_mempool_avail_count(ns->pool) < ns->cfg.mbuf_reserve;
}

static void
syn_input(struct net_stack *ns, const struct ip_view *ip,
		const struct tcp_view *t, const uint8_t *src_mac)
{
	struct tcp_tuple k = tcp_tuple_in(ip, t);
	struct tcp_conn *c = NULL;

	if (ns->refuse_new) {
		/* Shutting down: say so at once rather than let it retry. */
		ns->stats->tcp.syn_dropped++;
		tcp_reply_rst(ns, ip, t, src_mac);
		return;
	}
	if (mbufs_short(ns)) {
		/* Keep the mbufs for connections already open. */
		ns->stats->tcp.syn_dropped++;
		return;
	}
	if (ns->stats->tcp_syn_recv < ns->cfg.syn_backlog)
		c = tcp_conn_new(ns, ns->cur_port, ip->local, &ip->src, t->sport,
				t->dport, src_mac);
	if (c == NULL) {
		uint16_t mss = t->opt.mss ? t->opt.mss : TCP_DEFAULT_MSS, used;
		uint32_t cookie;

		if (!ns->cfg.syncookies) {
			ns->stats->tcp.syn_dropped++;
			net_count_drop(ns, NET_DROP_TCP_CONN_FULL);
			return;
		}
		/* Backlog or table full: answer without keeping state. */
		mss = RTE_MIN(mss, (uint16_t)(net_ifc(ns, ns->cur_port)->mtu -
				tcp_ip_hdr_len(ip->family) - TCP_HDR_MIN));
		cookie = tcp_cookie_make(ns, &k, t->seq, mss, &used);
		tcp_send_cookie_syn_ack(ns, ip, t, src_mac, cookie, used);
		return;
	}
	c->state = TCP_SYN_RECEIVED;
	ns->stats->tcp_syn_recv++;
	c->irs = t->seq;
	c->rcv_nxt = t->seq + 1;
	c->rcv_read = c->rcv_nxt;
	c->rcv_adv = c->rcv_nxt;
	c->iss = tcp_isn(ns, &k);
	c->snd_una = c->iss;
	c->snd_max = c->iss;
	c->snd_wl1 = t->seq;
	c->snd_wl2 = c->iss;
	negotiate(ns, c, t);
	ns->stats->tcp.passive_opens++;
	ns->stats->tcp.ip6_passive_opens += ip->family == NET_AF_INET6;
	tcp_send_syn_ack(ns, c);
	c->flags |= TCP_F_RTT_TIMING;
	c->rtt_seq = c->iss;
	c->rtt_start_us = ns->now_us;
	tcp_arm_rexmit(ns, c);
}

static void
become_established(struct net_stack *ns, struct tcp_conn *c)
{
	if (c->state == TCP_SYN_RECEIVED)
		ns->stats->tcp_syn_recv--;
	c->state = TCP_ESTABLISHED;
	c->backoff = 0;
	c->recover = c->iss;	/* RFC 6582 3.2 (1) */
	c->rack_fack = c->snd_una;
	tcp_rcvbuf_init(ns, c);
	tw_cancel(&ns->wheel, &c->rexmit);
	tcp_arm_idle(ns, c);
}

/* The upper layer takes the connection; false if it refused (RST sent). */
static bool
hand_over(struct net_stack *ns, struct tcp_conn *c)
{
	if (c->up == NULL || c->up->accepted(c->up_ctx, c) != 0) {
		tcp_send_rst(ns, c);
		tcp_conn_kill(ns, c);
		return false;
	}
	return !tcp_is_dead(c);
}

/* An ACK with no connection may complete a handshake answered with a
 * SYN cookie. Returns the new connection, or NULL. */
static struct tcp_conn *
cookie_ack_input(struct net_stack *ns, const struct ip_view *ip,
		const struct tcp_view *t, const uint8_t *src_mac)
{
	struct tcp_tuple k = tcp_tuple_in(ip, t);
	struct tcp_view syn;
	struct tcp_conn *c;
	int mss;

	if (!ns->cfg.syncookies || (t->flags & (TCP_SYN | TCP_RST | TCP_ACK)) !=
			TCP_ACK || net_listener(ns, t->dport) == NULL)
		return NULL;
	mss = tcp_cookie_check(ns, &k, t->seq - 1, t->ack - 1);
	if (mss < 0) {
		ns->stats->tcp.syncookies_failed++;
		return NULL;
	}
	c = tcp_conn_new(ns, ns->cur_port, ip->local, &ip->src, t->sport,
			t->dport, src_mac);
	if (c == NULL) {
		net_count_drop(ns, NET_DROP_TCP_CONN_FULL);
		return NULL;
	}
	ns->stats->tcp.syncookies_valid++;
	ns->stats->tcp.passive_opens++;
	ns->stats->tcp.ip6_passive_opens += ip->family == NET_AF_INET6;
	memset(&syn, 0, sizeof(syn));
	syn.opt.mss = (uint16_t)mss;
	syn.win = t->win;
	c->flags |= TCP_F_COOKIE;
	c->irs = t->seq - 1;
	c->rcv_nxt = t->seq;
	c->rcv_read = c->rcv_nxt;
	c->rcv_adv = c->rcv_nxt;
	c->iss = t->ack - 1;
	c->snd_una = t->ack;
	c->snd_nxt = t->ack;
	c->snd_max = t->ack;
	c->snd_wl1 = t->seq - 1;	/* let this ACK set the window */
	c->snd_wl2 = t->ack;
	/* after snd_max: HyStart++'s first round ends there */
	negotiate(ns, c, &syn);
	c->state = TCP_SYN_RECEIVED;
	ns->stats->tcp_syn_recv++;
	become_established(ns, c);
	return c;
}

/* Timestamps: PAWS (RFC 7323 5) and ts_recent. false: drop the segment. */
static bool
timestamps_input(struct net_stack *ns, struct tcp_conn *c,
		const struct tcp_view *t)
{
	if (!(c->flags & TCP_F_OPT_TS) || !t->opt.has_ts)
		return true;
	if (!(t->flags & TCP_RST) && SEQ_LT(t->opt.ts_val, c->ts_recent) &&
			ns->now_ms - c->ts_recent_ms < PAWS_IDLE_MS) {
		ns->stats->tcp.paws_drops++;
		c->flags |= TCP_F_ACK_NOW;
		return false;
	}
	/* RFC 7323 4.3: remember the TSval of the segment that covers the
	 * last ACK we sent. */
	if (SEQ_LEQ(t->seq, c->last_ack_sent) && SEQ_GEQ(t->opt.ts_val,
			c->ts_recent)) {
		c->ts_recent = t->opt.ts_val;
		c->ts_recent_ms = ns->now_ms;
	}
	return true;
}

static bool
seq_acceptable(const struct tcp_conn *c, const struct tcp_view *t,
		uint32_t win)
{
	uint32_t seg_len = t->len + !!(t->flags & TCP_SYN) +
		!!(t->flags & TCP_FIN);
	uint32_t end = c->rcv_nxt + win;

	if (seg_len == 0)
		return win == 0 ? t->seq == c->rcv_nxt :
			SEQ_GEQ(t->seq, c->rcv_nxt) && SEQ_LT(t->seq, end);
	if (win == 0)
		return false;
	return (SEQ_GEQ(t->seq, c->rcv_nxt) && SEQ_LT(t->seq, end)) ||
		(SEQ_GEQ(t->seq + seg_len - 1, c->rcv_nxt) &&
		 SEQ_LT(t->seq + seg_len - 1, end));
}

/* SYN-SENT (RFC 9293 3.10.7.3). false: segment consumed. */
static bool
syn_sent_input(struct net_stack *ns, struct tcp_conn *c,
		const struct ip_view *ip, const struct tcp_view *t)
{
	bool ack_ok = (t->flags & TCP_ACK) && t->ack == c->iss + 1;

	if ((t->flags & TCP_ACK) && !ack_ok) {
		if (!(t->flags & TCP_RST))
			tcp_reply_rst(ns, ip, t, c->peer_mac);
		return false;
	}
	if (t->flags & TCP_RST) {
		if (ack_ok) {
			ns->stats->tcp.attempt_fails++;
			tcp_conn_kill(ns, c);
		}
		return false;
	}
	if (!(t->flags & TCP_SYN))
		return false;
	c->irs = t->seq;
	c->rcv_nxt = t->seq + 1;
	c->rcv_read = c->rcv_nxt;
	c->rcv_adv = c->rcv_nxt;
	negotiate(ns, c, t);
	c->snd_wl1 = t->seq;
	if (!ack_ok) {
		/* Simultaneous open: both sent SYNs. */
		c->state = TCP_SYN_RECEIVED;
		ns->stats->tcp_syn_recv++;
		tcp_send_syn_ack(ns, c);
		return false;
	}
	c->snd_una = t->ack;
	c->snd_wl2 = t->ack;
	if (c->backoff == 0)
		tcp_rtt_sample(ns, c, (uint32_t)(ns->now_us - c->rtt_start_us));
	c->flags &= ~TCP_F_RTT_TIMING;
	become_established(ns, c);
	c->flags |= TCP_F_ACK_NOW;
	return hand_over(ns, c);
}

/* Handshake completion (SYN-RECEIVED + ACK). false: segment consumed. */
static bool
syn_received_input(struct net_stack *ns, struct tcp_conn *c,
		const struct ip_view *ip, const struct tcp_view *t)
{
	if (t->flags & TCP_RST) {
		if (SEQ_GEQ(t->seq, c->rcv_nxt) &&
				SEQ_LT(t->seq, c->rcv_adv + 1)) {
			ns->stats->tcp.resets_in++;
			if (c->flags & TCP_F_ACTIVE)
				ns->stats->tcp.attempt_fails++;
			tcp_conn_kill(ns, c);
		}
		return false;
	}
	if (t->flags & TCP_SYN) {
		if (t->seq == c->irs && !(t->flags & TCP_ACK))
			tcp_send_syn_ack(ns, c);	/* our SYN-ACK was lost */
		return false;
	}
	if (!(t->flags & TCP_ACK))
		return false;
	if (t->ack != c->iss + 1) {
		net_count_drop(ns, NET_DROP_TCP_BAD_ACK);
		tcp_reply_rst(ns, ip, t, c->peer_mac);
		return false;
	}
	c->snd_una = t->ack;
	c->snd_wl1 = t->seq - 1;	/* let this ACK set the window */
	c->snd_wl2 = t->ack;
	if (c->backoff == 0)
		tcp_rtt_sample(ns, c, (uint32_t)(ns->now_us - c->rtt_start_us));
	c->flags &= ~TCP_F_RTT_TIMING;
	become_established(ns, c);
	return hand_over(ns, c);
}

/* Fast retransmit without SACK (RFC 6582); with SACK, RACK finds losses
 * (tcp_recovery.c). */
static void
fast_retransmit(struct net_stack *ns, struct tcp_conn *c)
{
	c->flags |= TCP_F_RECOVERY;
	c->recover = c->snd_max;
	tcp_undo_init(c);
	ns->cc->enter_recovery(c);
	ns->stats->tcp.fast_retransmits++;
	/* RFC 6582 3.2 (2): inflate by the segments that left. */
	ns->stats->tcp.newreno_recoveries++;
	c->cwnd += TCP_DUPTHRESH * (uint32_t)c->mss;
	tcp_send_range(ns, c, c->snd_una, c->mss);
	c->flags &= ~TCP_F_TLP_ARMED;
	tcp_arm_rexmit(ns, c);
}

/* Early retransmit (RFC 5827): with fewer than four segments out and
 * nothing new to send, fewer duplicate ACKs will ever come. */
static uint8_t
dupthresh(const struct tcp_conn *c)
{
	uint32_t out = (c->snd_max - c->snd_una + c->mss - 1) / c->mss;

	if (out < 4 && c->sndq.bytes <= c->snd_max - c->snd_una)
		return (uint8_t)RTE_MAX(out - 1, 1u);
	return TCP_DUPTHRESH;
}

/* At most one answer to an unacceptable segment per connection per
 * tcp_config.invalid_ack_interval_ms (Linux's tcp_invalid_ratelimit in
 * __tcp_oow_rate_limited()), so that a flood into one connection earns a
 * trickle of ACKs, not one each. Unlike Linux, segments with data are held
 * to it too: Pktgen's smallest frame carries 6 bytes, and a flood of those
 * would otherwise be answered one for one. A peer that lost an ACK
 * retransmits at its RTO and is answered then. false: stay silent. */
static bool
invalid_ack_allowed(struct net_stack *ns, struct tcp_conn *c)
{
	if (ns->now_ms < c->invalid_ack_next_ms) {
		ns->stats->tcp.invalid_acks_limited++;
		return false;
	}
	c->invalid_ack_next_ms = ns->now_ms + ns->cfg.invalid_ack_interval_ms;
	return true;
}

/* An ACK in answer to an unacceptable segment without data: RFC 5961's
 * challenge ACKs and the ACK of RFC 9293 3.10.7.4 for a segment outside
 * the window. A flood of forged segments must not become a flood of ACKs:
 * past the connection's interval, they share the shard's budget
 * (tcp_config.challenge_ack_limit), as Linux's tcp_send_challenge_ack(). */
static void
challenge_ack(struct net_stack *ns, struct tcp_conn *c)
{
	if (!invalid_ack_allowed(ns, c))
		return;
	if (!rate_limit_take(&ns->challenge_acks, ns->now_ms)) {
		ns->stats->tcp.challenge_acks_limited++;
		return;
	}
	ns->stats->tcp.challenge_acks++;
	c->flags |= TCP_F_ACK_NOW;
}

#define ACK_DROP -1		/* unacceptable: drop the whole segment */
#define ACK_OK 0
#define ACK_FREED 1		/* the upper layer should hear of send space */

/* RFC 9293 3.10.7.4 and RFC 5961 5.2. false: drop the segment. */
static bool
ack_acceptable(struct net_stack *ns, struct tcp_conn *c,
		const struct tcp_view *t)
{
	if (SEQ_GT(t->ack, c->snd_max)) {
		/* Acknowledges what we never sent: answer with an ACK and
		 * drop the segment, data and all. */
		net_count_drop(ns, NET_DROP_TCP_BAD_ACK);
		challenge_ack(ns, c);
		return false;
	}
	if (SEQ_LT(t->ack, c->snd_una - c->max_sndwnd)) {
		/* An ACK far too old gets a challenge ACK. */
		net_count_drop(ns, NET_DROP_TCP_BAD_ACK);
		challenge_ack(ns, c);
		return false;
	}
	return true;
}

/* RFC 5681 2: a duplicate ACK carries nothing new; one with SACK blocks
 * counts even if the window moved (receivers that autotune their buffer
 * change it on every ACK). */
static bool
is_dupack(const struct tcp_conn *c, const struct tcp_view *t, uint32_t win)
{
	return t->ack == c->snd_una && t->len == 0 &&
		!(t->flags & (TCP_SYN | TCP_FIN)) && c->snd_una != c->snd_max &&
		(win == c->snd_wnd || t->opt.nsack > 0);
}

/* The send window, from a newer segment only (SND.WL1/WL2 rule). */
static void
update_snd_wnd(struct tcp_conn *c, const struct tcp_view *t, uint32_t win)
{
	if (SEQ_GEQ(t->ack, c->snd_una) && (SEQ_LT(c->snd_wl1, t->seq) ||
			(c->snd_wl1 == t->seq && SEQ_LEQ(c->snd_wl2, t->ack)))) {
		c->snd_wnd = win;
		c->snd_wl1 = t->seq;
		c->snd_wl2 = t->ack;
		if (win > c->max_sndwnd)
			c->max_sndwnd = win;
	}
}

/* A duplicate ACK without SACK: inflate in recovery, or start it at the
 * threshold (not while recovering from a timeout). */
static void
dupack_input(struct net_stack *ns, struct tcp_conn *c)
{
	c->dupacks++;
	if (c->flags & TCP_F_OPT_SACK)
		return;		/* RACK decides */
	if (c->flags & TCP_F_RECOVERY)
		c->cwnd += c->mss;	/* RFC 6582 3.2 (3) */
	else if (c->dupacks >= dupthresh(c) && SEQ_GT(c->snd_una, c->recover))
		fast_retransmit(ns, c);
}

/* snd_una moves to ack: acknowledged bytes leave the send queue. */
static void
drop_acked(struct net_stack *ns, struct tcp_conn *c, uint32_t ack,
		uint32_t data_acked)
{
	tcp_sndq_drop(ns, &c->sndq, data_acked);
	c->snd_una = ack;
	c->dupacks = 0;
	if (SEQ_LT(c->snd_nxt, c->snd_una))
		c->snd_nxt = c->snd_una;
}

/* RTT: as Linux's tcp_ack_update_rtt(), from the scoreboard's times of
 * the segments this ACK delivered (the oldest newly acknowledged, not if
 * a resent one was among them: Karn; else the oldest newly SACKed), in
 * microseconds; failing those, from the echoed timestamp, in whole
 * milliseconds, when the ACK moved snd_una. */
static void
rtt_from_ack(struct net_stack *ns, struct tcp_conn *c, const struct tcp_view *t,
		const struct tcp_ack_info *ai, bool acked)
{
	uint32_t r = ai->retrans_acked ? UINT32_MAX : ai->seq_rtt_us;

	if (r == UINT32_MAX)
		r = ai->sack_rtt_us;
	if (r == UINT32_MAX && acked && (c->flags & TCP_F_OPT_TS) &&
			t->opt.has_ts && t->opt.ts_ecr != 0) {
		uint32_t ms = (uint32_t)ns->now_ms + c->ts_offset - t->opt.ts_ecr;

		if (ms < 3600000)
			r = RTE_MAX(ms, 1u) * 1000;
	}
	if (r != UINT32_MAX)
		tcp_rtt_sample(ns, c, r);
}

/* New data acknowledged: grow cwnd; without SACK, end recovery or resend
 * after a partial ACK (with SACK, tcp_recovery_ack() does). */
static void
cc_on_ack(struct net_stack *ns, struct tcp_conn *c,
		const struct tcp_ack_info *ai)
{
	uint32_t acked = ai->acked;

	if (!(c->flags & TCP_F_RECOVERY)) {
		uint8_t hs = c->hs_state;

		if (ns->cc->acked == NULL)
			return;		/* cong_control's, after recovery */
		ns->cc->acked(c, ai);
		c->cwnd = RTE_MIN(c->cwnd, TCP_CWND_MAX);
		if (hs != c->hs_state) {
			/* HyStart++ moved: into CSS, or out of slow start
			 * at CSS's end */
			ns->stats->tcp.hystart_css_entries +=
				c->hs_state == TCP_HS_CSS;
			ns->stats->tcp.hystart_exits +=
				c->hs_state == TCP_HS_OFF;
		}
		return;
	}
	if (c->flags & TCP_F_OPT_SACK)
		return;
	if (SEQ_GEQ(c->snd_una, c->recover)) {
		c->flags &= ~TCP_F_RECOVERY;
		ns->cc->exit_recovery(c);
	} else {
		/* Partial ACK (RFC 6582 3.2 (5)): resend the next hole,
		 * deflate by what left, stay in recovery. */
		tcp_send_range(ns, c, c->snd_una, c->mss);
		c->cwnd -= RTE_MIN(c->cwnd - c->mss, acked);
		if (acked >= c->mss)
			c->cwnd += c->mss;
	}
}

/* Our FIN was acknowledged. false: the connection is gone. */
static bool
fin_acked(struct net_stack *ns, struct tcp_conn *c)
{
	switch (c->state) {
	case TCP_FIN_WAIT_1:
		c->state = TCP_FIN_WAIT_2;
		/* Bound a peer that never closes (Linux tcp_fin_timeout). */
		tw_arm(&ns->wheel, &c->linger, ns->now_ms + ns->cfg.time_wait_ms);
		return true;
	case TCP_CLOSING:
		enter_time_wait(ns, c);
		return true;
	case TCP_LAST_ACK:
		tcp_conn_kill(ns, c);
		return false;
	default:
		return true;
	}
}

static int
ack_input(struct net_stack *ns, struct tcp_conn *c, const struct tcp_view *t)
{
	uint32_t win = (uint32_t)t->win << c->snd_wscale;
	uint32_t acked = 0, data_acked = 0;
	bool fin = false, dup;
	struct tcp_ack_info ai;

	if (!ack_acceptable(ns, c, t))
		return ACK_DROP;
	tcp_ack_info_init(&ai, t, ns->now_us);
	ai.prior_in_flight = tcp_pipe(c);
	dup = is_dupack(c, t, win);	/* before the window moves */
	update_snd_wnd(c, t, win);
	if (SEQ_GT(t->ack, c->snd_una)) {
		acked = t->ack - c->snd_una;
		fin = (c->flags & TCP_F_FIN_QUEUED) &&
			t->ack == c->snd_una + c->sndq.bytes + 1;
		data_acked = RTE_MIN(acked, c->sndq.bytes);
		tcp_seg_acked(ns, c, t->ack, &ai);
		drop_acked(ns, c, t->ack, data_acked);
		c->backoff = 0;
	}
	if (c->flags & TCP_F_OPT_SACK)
		ai.sacked = tcp_sack_update(ns, c, &t->opt, c->snd_una,
				&ai.dsack, &ai);
	ai.acked = acked;
	ai.dup = dup;
	rtt_from_ack(ns, c, t, &ai, acked > 0);
	/* Without SACK, timestamps may undo a recovery before its end
	 * (with SACK, tcp_recovery_ack() undoes). */
	if (!(c->flags & TCP_F_OPT_SACK))
		tcp_undo_ack(ns, c, &ai);
	if (dup) {
		dupack_input(ns, c);
	} else if (acked > 0) {
		cc_on_ack(ns, c, &ai);
	}
	if (c->flags & TCP_F_OPT_SACK) {
		ai.losses = tcp_recovery_ack(ns, c, &ai);
	} else if (acked > 0) {
		if ((c->flags & TCP_F_LOSS) && SEQ_GEQ(c->snd_una, c->recover))
			c->flags &= ~TCP_F_LOSS;
		tcp_tlp_end(c);
		tcp_arm_send_timer(ns, c);
	}
	if (ns->cc->cong_control != NULL) {
		tcp_rate_gen(ns, c, &ai);
		ns->cc->cong_control(ns, c, &ai);
	} else {
		tcp_pace_update(ns, c);
	}
	if (acked == 0)
		return ACK_OK;
	tcp_sndbuf_expand(ns, c);
	if (fin && !fin_acked(ns, c))
		return ACK_OK;
	return data_acked > 0 ? ACK_FREED : ACK_OK;
}

static void
fin_input(struct net_stack *ns, struct tcp_conn *c)
{
	c->rcv_nxt++;
	c->flags |= TCP_F_ACK_NOW;
	/* The FIN reaches the upper layer after the data held for it
	 * (tcp_rcvq_deliver() tells it then). */
	if (c->rcvq.held > 0)
		c->flags |= TCP_F_FIN_OWED;
	else
		c->rcv_read++;
	switch (c->state) {
	case TCP_ESTABLISHED:
		c->state = TCP_CLOSE_WAIT;
		if (c->rcvq.held == 0 && c->app != NULL)
			c->up->peer_closed(c->up_ctx, c);
		break;
	case TCP_FIN_WAIT_1:
		/* Our FIN not yet acknowledged: simultaneous close. */
		c->state = TCP_CLOSING;
		break;
	case TCP_FIN_WAIT_2:
		enter_time_wait(ns, c);
		break;
	default:
		break;
	}
}

/* ACK now, or within delack_ms: every second full segment, anything out
 * of order or filling a hole, FINs, and the first TCP_QUICK_ACKS data
 * segments are acknowledged at once. "At once" is the flush after the
 * burst: an answer written by then carries the ACK. */
static void
schedule_ack(struct net_stack *ns, struct tcp_conn *c, uint32_t len,
		bool immediate)
{
	if (len >= (uint32_t)c->mss - ((c->flags & TCP_F_OPT_TS) ? TCP_TS_LEN : 0))
		c->acks_owed++;
	if (immediate || c->acks_owed >= 2 || ns->cfg.delack_ms == 0) {
		c->flags |= TCP_F_ACK_NOW;
		return;
	}
	if (c->quick_acks > 0) {
		c->quick_acks--;
		c->flags |= TCP_F_ACK_NOW;
		ns->stats->tcp.quick_acks++;
		return;
	}
	if (!tw_is_armed(&c->delack)) {
		tw_arm(&ns->wheel, &c->delack, ns->now_ms + ns->cfg.delack_ms);
		ns->stats->tcp.delayed_acks++;
	}
}

/* Data of a segment: to the upper layer when nothing waits before it,
 * and what it does not take into the receive queue, as what comes after
 * a hole. Returns true if the queue kept the mbuf. */
static bool
data_input(struct net_stack *ns, struct tcp_conn *c, struct rte_mbuf *m,
		const struct tcp_view *t, uint32_t win)
{
	const uint8_t *data = t->payload;
	uint32_t seq = t->seq, len = t->len, taken = 0;
	bool had_holes = tcp_rcvq_has_holes(c), kept = false;
	uint16_t off;

	if (SEQ_LT(seq, c->rcv_nxt)) {		/* partly old */
		uint32_t skip = c->rcv_nxt - seq;

		if (skip >= len) {
			c->flags |= TCP_F_ACK_NOW;	/* a duplicate */
			return false;
		}
		data += skip;
		seq += skip;
		len -= skip;
	}
	if (SEQ_GT(seq + len, c->rcv_nxt + win))	/* beyond the window */
		len = c->rcv_nxt + win - seq;
	if (len == 0) {
		c->flags |= TCP_F_ACK_NOW;
		return false;
	}
	off = (uint16_t)(data - rte_pktmbuf_mtod(m, const uint8_t *));
	if (seq != c->rcv_nxt) {
		/* A hole before it: keep it for later, ask for the hole. */
		ns->stats->tcp.ooo_segs++;
		if (!mbufs_short(ns))
			kept = tcp_rcvq_insert(ns, c, m, seq, off, (uint16_t)len);
		if (!kept) {
			ns->stats->tcp.ooo_dropped++;
			net_count_drop(ns, NET_DROP_TCP_OUT_OF_ORDER);
		}
		c->flags |= TCP_F_ACK_NOW;
		return kept;
	}
	if (c->rcvq.held == 0) {
		taken = c->app != NULL ? c->up->recv(c->up_ctx, c, data, len) :
			len;
		c->rcv_read += taken;
		c->rcv_nxt += taken;
		if (tcp_is_dead(c))
			return false;
	}
	if (taken < len) {
		if (!mbufs_short(ns))
			kept = tcp_rcvq_insert(ns, c, m, seq + taken,
					(uint16_t)(off + taken),
					(uint16_t)(len - taken));
		if (!kept)	/* unacknowledged: the peer sends it again */
			ns->stats->tcp.rcvq_dropped++;
	}
	tcp_rcvq_advance(ns, c);
	tcp_rcvbuf_data_in(ns, c);
	if (taken > 0)
		tcp_rcvbuf_taken(ns, c);
	if (c->rcvq.held > 0 && (had_holes || taken == 0))
		tcp_rcvq_deliver(ns, c);
	if (tcp_is_dead(c))
		return kept;
	schedule_ack(ns, c, t->len, had_holes);
	return kept;
}

/* The upper layer pushed room while held data waits (outside input):
 * offer it now. false: the connection is gone. */
bool
tcp_deliver_held(struct net_stack *ns, struct tcp_conn *c)
{
	c->flags |= TCP_F_IN_INPUT;
	tcp_rcvq_deliver(ns, c);
	c->flags &= ~TCP_F_IN_INPUT;
	if (!tcp_is_dead(c))
		return true;
	tcp_conn_free(ns, c);
	return false;
}

static bool
conn_input(struct net_stack *ns, struct tcp_conn *c, struct rte_mbuf *m,
		const struct ip_view *ip, const struct tcp_view *t)
{
	bool kept = false;
	uint32_t win;
	int acked;

	/* Silent longer than an RTO: the peer starts afresh (Linux). */
	if ((ns->now_ms - c->last_rx_ms) * 1000 > c->rto_us)
		c->quick_acks = TCP_QUICK_ACKS;
	c->last_rx_ms = ns->now_ms;
	c->ka_probes = 0;
	if (c->state == TCP_SYN_SENT) {
		if (!syn_sent_input(ns, c, ip, t))
			return false;
	} else if (c->state == TCP_SYN_RECEIVED &&
			!syn_received_input(ns, c, ip, t)) {
		return false;
	}
	if (c->state == TCP_TIME_WAIT) {
		if (t->flags & TCP_FIN) {	/* our last ACK was lost */
			c->flags |= TCP_F_ACK_NOW;
			tw_arm(&ns->wheel, &c->linger,
					ns->now_ms + ns->cfg.time_wait_ms);
		}
		return false;
	}
	if (!timestamps_input(ns, c, t))
		return false;
	win = tcp_rcv_window(c);
	if (!seq_acceptable(c, t, win)) {
		net_count_drop(ns, NET_DROP_TCP_OUT_OF_WINDOW);
		if (t->flags & TCP_RST)
			return false;
		/* A zero-window probe (at rcv_nxt exactly: its sender knows
		 * the connection) is answered each time, as in Linux, where
		 * it is acceptable. */
		if (t->len == 0)
			challenge_ack(ns, c);
		else if ((win == 0 && t->seq == c->rcv_nxt) ||
				invalid_ack_allowed(ns, c))
			c->flags |= TCP_F_ACK_NOW;
		return false;
	}
	if (t->flags & TCP_RST) {
		/* RFC 5961 3.2: only an exact match resets; an in-window
		 * guess earns a challenge ACK. */
		if (t->seq == c->rcv_nxt) {
			ns->stats->tcp.resets_in++;
			if (c->state == TCP_ESTABLISHED ||
					c->state == TCP_CLOSE_WAIT)
				ns->stats->tcp.estab_resets++;
			tcp_conn_kill(ns, c);
		} else {
			challenge_ack(ns, c);
		}
		return false;
	}
	if (t->flags & TCP_SYN) {
		challenge_ack(ns, c);	/* RFC 5961 4.2 */
		return false;
	}
	if (!(t->flags & TCP_ACK))
		return false;
	acked = ack_input(ns, c, t);
	if (tcp_is_dead(c) || acked == ACK_DROP)
		return false;
	if (acked == ACK_FREED && c->app != NULL) {
		c->up->sent(c->up_ctx, c);
		if (tcp_is_dead(c))
			return false;
	}
	if (c->state != TCP_ESTABLISHED && c->state != TCP_FIN_WAIT_1 &&
			c->state != TCP_FIN_WAIT_2)
		return false;	/* no more data from a peer that closed */
	if (t->len > 0) {
		kept = data_input(ns, c, m, t, win);
		if (tcp_is_dead(c))
			return kept;
	}
	if ((t->flags & TCP_FIN) && t->seq + t->len == c->rcv_nxt)
		fin_input(ns, c);
	return kept;
}

bool
tcp_input(struct net_stack *ns, struct rte_mbuf *m, const struct ip_view *ip,
		const struct tcp_view *t, const uint8_t *src_mac)
{
	struct tcp_conn *c = tcp_lookup(ns, ns->cur_port, ip->local, &ip->src,
			t->sport, t->dport);
	bool kept;

	if (t->opt.malformed)
		ns->stats->tcp.bad_options++;
	/* A new SYN may recycle a connection in TIME-WAIT (RFC 9293 3.10.7.4). */
	if (c != NULL && c->state == TCP_TIME_WAIT &&
			(t->flags & (TCP_SYN | TCP_ACK)) == TCP_SYN &&
			SEQ_GT(t->seq, c->rcv_nxt)) {
		tcp_conn_free(ns, c);
		c = NULL;
	}
	if (c == NULL) {
		if ((t->flags & (TCP_SYN | TCP_ACK | TCP_RST)) == TCP_SYN &&
				net_listener(ns, t->dport) != NULL) {
			syn_input(ns, ip, t, src_mac);
			return false;
		}
		c = cookie_ack_input(ns, ip, t, src_mac);
		if (c == NULL) {
			net_count_drop(ns, NET_DROP_TCP_NO_CONN);
			tcp_reply_rst(ns, ip, t, src_mac);
			return false;
		}
		c->flags |= TCP_F_IN_INPUT;
		if (!hand_over(ns, c)) {
			c->flags &= ~TCP_F_IN_INPUT;
			tcp_conn_free(ns, c);
			return false;
		}
		c->flags &= ~TCP_F_IN_INPUT;
	}
	c->flags |= TCP_F_IN_INPUT;
	kept = conn_input(ns, c, m, ip, t);
	/* The upper layer may have made room (while sending, say): hand it
	 * held data. */
	if (!tcp_is_dead(c) && c->rcvq.held > 0 && c->rcv_space > 0)
		tcp_rcvq_deliver(ns, c);
	c->flags &= ~TCP_F_IN_INPUT;
	if (tcp_is_dead(c)) {
		tcp_conn_free(ns, c);
	} else {
		/* All sent acknowledged, nothing out of order, nothing new
		 * written: the rings go back until there is. */
		tcp_bufs_put_idle(ns, c);
		tcp_output_later(ns, c);
	}
	return kept;
}
