/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TCP input (RFC 9293 3.10.7) and the connection timers. The upper layer is
 * called back from here; it may close or abort the connection from inside a
 * callback, so a connection that dies during input is marked and freed only
 * once input unwinds.
 */
#include <string.h>

#include <rte_mbuf.h>
#include <rte_random.h>

#include "tcp_impl.h"

#define TCP_F_DEAD 0x80		/* freed when input unwinds */
#define TCP_INIT_CWND_SEGS 10	/* RFC 6928 */
#define TCP_DEFAULT_MSS 536	/* RFC 9293 3.7.1, when the peer sends none */

static inline bool
is_dead(const struct tcp_conn *c)
{
	return c->flags & TCP_F_DEAD;
}

static void
conn_kill(struct net_stack *ns, struct tcp_conn *c)
{
	if (c->flags & TCP_F_IN_INPUT)
		c->flags |= TCP_F_DEAD;
	else
		tcp_conn_free(ns, c);
}

void
tcp_arm_rexmit(struct net_stack *ns, struct tcp_conn *c)
{
	uint64_t t = (uint64_t)c->rto << c->backoff;

	if (t > ns->cfg.rto_max_ms)
		t = ns->cfg.rto_max_ms;
	tw_arm(&ns->wheel, &c->rexmit, ns->now_ms + t);
}

/* RFC 6298 2.2-2.4 with the clock granularity G of one millisecond. */
static void
rtt_sample(struct net_stack *ns, struct tcp_conn *c, uint32_t r)
{
	if (c->srtt == 0) {
		c->srtt = r ? r : 1;
		c->rttvar = r / 2;
	} else {
		uint32_t d = c->srtt > r ? c->srtt - r : r - c->srtt;

		c->rttvar = (3 * c->rttvar + d) / 4;
		c->srtt = (7 * c->srtt + r) / 8;
	}
	c->rto = c->srtt + RTE_MAX(1u, 4 * c->rttvar);
	if (c->rto < ns->cfg.rto_min_ms)
		c->rto = ns->cfg.rto_min_ms;
	if (c->rto > ns->cfg.rto_max_ms)
		c->rto = ns->cfg.rto_max_ms;
}

static void
enter_time_wait(struct net_stack *ns, struct tcp_conn *c)
{
	c->state = TCP_TIME_WAIT;
	tw_cancel(&ns->wheel, &c->rexmit);
	tcp_sndq_free(&c->sndq);
	/* Nothing more reaches the upper layer: let it go now, not after
	 * the TIME-WAIT linger. */
	if (c->app != NULL && ns->up != NULL)
		ns->up->closed(ns->up_ctx, c);
	c->app = NULL;
	tw_arm(&ns->wheel, &c->linger, ns->now_ms + ns->cfg.time_wait_ms);
}

static void
listen_input(struct net_stack *ns, const struct ipv4_view *ip,
		const struct tcp_view *t, const uint8_t *src_mac)
{
	uint16_t our_mss = (uint16_t)(ns->ifc->mtu - IPV4_HDR_MIN - TCP_HDR_MIN);
	struct tcp_conn *c;

	if (t->flags & TCP_RST) {
		net_count_drop(ns, NET_DROP_TCP_NO_CONN);
		return;
	}
	if ((t->flags & (TCP_SYN | TCP_ACK)) != TCP_SYN ||
			t->dport != ns->cfg.listen_port) {
		net_count_drop(ns, NET_DROP_TCP_NO_CONN);
		tcp_reply_rst(ns, ip, t, src_mac);
		return;
	}
	c = tcp_conn_new(ns, ip->src, t->sport, t->dport);
	if (c == NULL) {
		/* Silence, not RST: the peer retries the SYN later. */
		net_count_drop(ns, NET_DROP_TCP_CONN_FULL);
		return;
	}
	memcpy(c->peer_mac, src_mac, 6);
	c->state = TCP_SYN_RECEIVED;
	c->irs = t->seq;
	c->rcv_nxt = t->seq + 1;
	c->rcv_adv = c->rcv_nxt;
	c->iss = (uint32_t)rte_rand();
	c->snd_una = c->iss;
	c->snd_wnd = t->win;	/* never scaled in a SYN */
	c->snd_wl1 = t->seq;
	c->snd_wl2 = c->iss;
	c->mss = RTE_MIN(t->opt.mss ? t->opt.mss : TCP_DEFAULT_MSS, our_mss);
	if (c->mss < 64)
		c->mss = 64;	/* a silly MSS would cost a packet per byte */
	c->cwnd = TCP_INIT_CWND_SEGS * (uint32_t)c->mss;
	c->ssthresh = UINT32_MAX;
	ns->stats->tcp_passive_opens++;
	tcp_send_syn_ack(ns, c);
	c->flags |= TCP_F_RTT_TIMING;
	c->rtt_seq = c->iss;
	c->rtt_start = ns->now_ms;
	tcp_arm_rexmit(ns, c);
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

/* Handshake completion (SYN-RECEIVED + ACK). false: segment consumed. */
static bool
syn_received_input(struct net_stack *ns, struct tcp_conn *c,
		const struct ipv4_view *ip, const struct tcp_view *t)
{
	if (t->flags & TCP_RST) {
		if (SEQ_GEQ(t->seq, c->rcv_nxt) &&
				SEQ_LT(t->seq, c->rcv_nxt + TCP_ADV_WIN_MAX)) {
			ns->stats->tcp_resets_in++;
			conn_kill(ns, c);
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
	c->state = TCP_ESTABLISHED;
	c->snd_una = t->ack;
	c->snd_wnd = t->win;
	c->snd_wl1 = t->seq;
	c->snd_wl2 = t->ack;
	tw_cancel(&ns->wheel, &c->rexmit);
	if (c->backoff == 0)
		rtt_sample(ns, c, (uint32_t)(ns->now_ms - c->rtt_start));
	c->flags &= ~TCP_F_RTT_TIMING;
	c->backoff = 0;
	if (ns->up == NULL || ns->up->accepted(ns->up_ctx, c) != 0) {
		tcp_send_rst(ns, c);
		conn_kill(ns, c);
		return false;
	}
	return !is_dead(c);
}

/* Returns true when the upper layer should hear of freed send space. */
static bool
ack_input(struct net_stack *ns, struct tcp_conn *c, const struct tcp_view *t)
{
	uint32_t acked, data_acked;
	bool fin_acked;

	if (SEQ_GT(t->ack, c->snd_max)) {
		/* Acknowledges what we never sent (RFC 9293 3.10.7.4). */
		net_count_drop(ns, NET_DROP_TCP_BAD_ACK);
		c->flags |= TCP_F_ACK_NOW;
		return false;
	}
	/* Window update from a newer segment only (SND.WL1/WL2 rule). */
	if (SEQ_GEQ(t->ack, c->snd_una) && (SEQ_LT(c->snd_wl1, t->seq) ||
			(c->snd_wl1 == t->seq && SEQ_LEQ(c->snd_wl2, t->ack)))) {
		c->snd_wnd = t->win;
		c->snd_wl1 = t->seq;
		c->snd_wl2 = t->ack;
	}
	if (!SEQ_GT(t->ack, c->snd_una))
		return false;
	acked = t->ack - c->snd_una;
	fin_acked = (c->flags & TCP_F_FIN_QUEUED) &&
		t->ack == c->snd_una + c->sndq.bytes + 1;
	data_acked = RTE_MIN(acked, c->sndq.bytes);
	tcp_sndq_drop(&c->sndq, data_acked);
	c->snd_una = t->ack;
	if (SEQ_LT(c->snd_nxt, c->snd_una))
		c->snd_nxt = c->snd_una;
	/* Karn: only a segment sent once gives a sample. */
	if ((c->flags & TCP_F_RTT_TIMING) && SEQ_GT(t->ack, c->rtt_seq)) {
		if (c->backoff == 0)
			rtt_sample(ns, c, (uint32_t)(ns->now_ms - c->rtt_start));
		c->flags &= ~TCP_F_RTT_TIMING;
	}
	c->backoff = 0;
	/* Slow start, then congestion avoidance (RFC 5681 3.1). */
	if (c->cwnd < c->ssthresh)
		c->cwnd += RTE_MIN(acked, (uint32_t)c->mss);
	else
		c->cwnd += RTE_MAX(1u, (uint32_t)c->mss * c->mss / c->cwnd);
	if (c->snd_una == c->snd_max)
		tw_cancel(&ns->wheel, &c->rexmit);
	else
		tcp_arm_rexmit(ns, c);
	if (fin_acked) {
		switch (c->state) {
		case TCP_FIN_WAIT_1:
			c->state = TCP_FIN_WAIT_2;
			/* Bound a peer that never closes (Linux tcp_fin_timeout). */
			tw_arm(&ns->wheel, &c->linger,
					ns->now_ms + ns->cfg.time_wait_ms);
			break;
		case TCP_CLOSING:
			enter_time_wait(ns, c);
			break;
		case TCP_LAST_ACK:
			conn_kill(ns, c);
			return false;
		default:
			break;
		}
	}
	return data_acked > 0;
}

static void
fin_input(struct net_stack *ns, struct tcp_conn *c)
{
	c->rcv_nxt++;
	c->flags |= TCP_F_ACK_NOW;
	switch (c->state) {
	case TCP_ESTABLISHED:
		c->state = TCP_CLOSE_WAIT;
		if (c->app != NULL)
			ns->up->peer_closed(ns->up_ctx, c);
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

static void
conn_input(struct net_stack *ns, struct tcp_conn *c,
		const struct ipv4_view *ip, const struct tcp_view *t)
{
	const uint8_t *data = t->payload;
	uint32_t len = t->len, win;
	bool space_freed;

	if (c->state == TCP_SYN_RECEIVED && !syn_received_input(ns, c, ip, t))
		return;
	if (c->state == TCP_TIME_WAIT) {
		if (t->flags & TCP_FIN) {	/* our last ACK was lost */
			c->flags |= TCP_F_ACK_NOW;
			tw_arm(&ns->wheel, &c->linger,
					ns->now_ms + ns->cfg.time_wait_ms);
		}
		return;
	}
	win = tcp_rcv_window(ns, c);
	if (!seq_acceptable(c, t, win)) {
		net_count_drop(ns, NET_DROP_TCP_OUT_OF_WINDOW);
		if (!(t->flags & TCP_RST))
			c->flags |= TCP_F_ACK_NOW;
		return;
	}
	if (t->flags & TCP_RST) {
		/* RFC 5961 3.2: only an exact match resets; an in-window
		 * guess earns a challenge ACK. */
		if (t->seq == c->rcv_nxt) {
			ns->stats->tcp_resets_in++;
			conn_kill(ns, c);
		} else {
			c->flags |= TCP_F_ACK_NOW;
		}
		return;
	}
	if (t->flags & TCP_SYN) {
		c->flags |= TCP_F_ACK_NOW;	/* RFC 5961 4.2: challenge ACK */
		return;
	}
	if (!(t->flags & TCP_ACK))
		return;
	space_freed = ack_input(ns, c, t);
	if (is_dead(c))
		return;
	if (space_freed && c->app != NULL) {
		ns->up->sent(ns->up_ctx, c);
		if (is_dead(c))
			return;
	}
	if (c->state != TCP_ESTABLISHED && c->state != TCP_FIN_WAIT_1 &&
			c->state != TCP_FIN_WAIT_2)
		return;		/* no more data from a peer that closed */
	if (len > 0) {
		uint32_t taken;

		if (SEQ_LT(t->seq, c->rcv_nxt)) {	/* partly old */
			uint32_t skip = c->rcv_nxt - t->seq;

			if (skip >= len) {
				c->flags |= TCP_F_ACK_NOW;
				goto fin;
			}
			data += skip;
			len -= skip;
		} else if (t->seq != c->rcv_nxt) {
			/* A hole before it: no reassembly yet, ask again. */
			net_count_drop(ns, NET_DROP_TCP_OUT_OF_ORDER);
			c->flags |= TCP_F_ACK_NOW;
			return;
		}
		len = RTE_MIN(len, win);
		taken = c->app != NULL ? ns->up->recv(ns->up_ctx, c, data, len) : len;
		c->rcv_nxt += taken;
		c->flags |= TCP_F_ACK_NOW;
		if (is_dead(c))
			return;
	}
fin:
	if ((t->flags & TCP_FIN) && t->seq + t->len == c->rcv_nxt)
		fin_input(ns, c);
}

void
tcp_input(struct net_stack *ns, const struct ipv4_view *ip,
		const struct tcp_view *t, const uint8_t *src_mac)
{
	struct tcp_conn *c = tcp_lookup(ns, ip->src, t->sport, t->dport);

	/* A new SYN may recycle a connection in TIME-WAIT (RFC 9293 3.10.7.4). */
	if (c != NULL && c->state == TCP_TIME_WAIT &&
			(t->flags & (TCP_SYN | TCP_ACK)) == TCP_SYN &&
			SEQ_GT(t->seq, c->rcv_nxt)) {
		tcp_conn_free(ns, c);
		c = NULL;
	}
	if (c == NULL) {
		listen_input(ns, ip, t, src_mac);
		return;
	}
	c->flags |= TCP_F_IN_INPUT;
	conn_input(ns, c, ip, t);
	c->flags &= ~TCP_F_IN_INPUT;
	if (is_dead(c))
		tcp_conn_free(ns, c);
	else
		tcp_output(ns, c);
}

void
tcp_close(struct net_stack *ns, struct tcp_conn *c)
{
	switch (c->state) {
	case TCP_SYN_RECEIVED:
	case TCP_ESTABLISHED:
		c->state = TCP_FIN_WAIT_1;
		break;
	case TCP_CLOSE_WAIT:
		c->state = TCP_LAST_ACK;
		break;
	default:
		return;		/* already closing */
	}
	c->flags |= TCP_F_FIN_QUEUED;
	if (!(c->flags & TCP_F_IN_INPUT))
		tcp_output(ns, c);
}

void
tcp_abort(struct net_stack *ns, struct tcp_conn *c)
{
	if (c->state == TCP_CLOSED || is_dead(c))
		return;
	if (c->state != TCP_TIME_WAIT)
		tcp_send_rst(ns, c);
	conn_kill(ns, c);
}

static void
rexmit_fire(struct net_stack *ns, struct tcp_conn *c)
{
	c->backoff++;
	if (c->state == TCP_SYN_RECEIVED) {
		if (c->backoff > ns->cfg.syn_retries) {
			ns->stats->tcp_timeouts++;
			tcp_conn_free(ns, c);
			return;
		}
		tcp_send_syn_ack(ns, c);
		tcp_arm_rexmit(ns, c);
		return;
	}
	if (c->snd_wnd == 0 && c->sndq.bytes > 0 &&
			SEQ_LEQ(c->snd_max, c->snd_una + 1)) {
		/* Persist: probe the zero window for as long as it takes,
		 * backing off up to the largest RTO. */
		if (c->backoff > 16)
			c->backoff = 16;
		tcp_send_probe(ns, c);
		tcp_arm_rexmit(ns, c);
		return;
	}
	if (c->snd_una != c->snd_max) {
		uint32_t flight = c->snd_max - c->snd_una;

		ns->stats->tcp_timeouts++;
		if (c->backoff > ns->cfg.max_retries) {
			tcp_abort(ns, c);
			return;
		}
		/* RFC 5681 (4): collapse the window, resend from snd_una. */
		c->ssthresh = RTE_MAX(flight / 2, 2u * c->mss);
		c->cwnd = c->mss;
		c->snd_nxt = c->snd_una;
		c->flags &= ~TCP_F_RTT_TIMING;
		tcp_arm_rexmit(ns, c);
		tcp_output(ns, c);
	}
}

void
tcp_timer_fire(struct tw_timer *t, void *ctx)
{
	struct net_stack *ns = ctx;
	size_t at = (size_t)((char *)t - (char *)ns->conns);
	struct tcp_conn *c = &ns->conns[at / sizeof(struct tcp_conn)];

	/* Every timer of the wheel lives in a connection of this shard. */
	if (t == &c->rexmit)
		rexmit_fire(ns, c);
	else		/* end of TIME-WAIT, or of a FIN-WAIT-2 that waited too long */
		tcp_conn_free(ns, c);
}
