/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TCP timers: retransmission (with the tail loss probe and the persist
 * probe), delayed ACK, keepalive and idle timeout, and the end of TIME-WAIT
 * and FIN-WAIT-2; and the RTT estimator that sets the RTO. Timers call
 * output and the connection table, never input or the user calls.
 */
#include "tcp_impl.h"

/* The RTT estimator and the RTO it gives: RFC 6298 2.2-2.4, in
 * microseconds, with the clock granularity G of the timers' tick (one
 * millisecond). */
#define RTO_G_US 1000

void
tcp_rtt_sample(struct net_stack *ns, struct tcp_conn *c, uint32_t r)
{
	if (c->srtt_us == 0) {
		c->srtt_us = r ? r : 1;
		c->rttvar_us = r / 2;
	} else {
		uint32_t d = c->srtt_us > r ? c->srtt_us - r : r - c->srtt_us;

		c->rttvar_us = (3 * c->rttvar_us + d) / 4;
		c->srtt_us = (7 * c->srtt_us + r) / 8;
		if (c->srtt_us == 0)
			c->srtt_us = 1;	/* 0 means "no sample yet" */
	}
	c->rto_us = c->srtt_us + RTE_MAX((uint32_t)RTO_G_US, 4 * c->rttvar_us);
	if (c->rto_us < ns->cfg.rto_min_ms * 1000)
		c->rto_us = ns->cfg.rto_min_ms * 1000;
	if (c->rto_us > ns->cfg.rto_max_ms * 1000)
		c->rto_us = ns->cfg.rto_max_ms * 1000;
}

/* Keepalive, the idle timeout and the shrinking of an idle receive
 * buffer share one timer, re-armed lazily: traffic only stamps
 * last_rx_ms (and the buffer's use); the timer, when it fires, works out
 * the next deadline from them. */
static uint64_t
keepalive_deadline(const struct net_stack *ns, const struct tcp_conn *c)
{
	return ns->cfg.keepalive_ms ? c->last_rx_ms + ns->cfg.keepalive_ms +
		(uint64_t)c->ka_probes * ns->cfg.keepalive_intvl_ms : UINT64_MAX;
}

static uint64_t
idle_deadline(const struct net_stack *ns, const struct tcp_conn *c)
{
	uint64_t d = keepalive_deadline(ns, c), b;

	if (ns->cfg.idle_timeout_ms)
		d = RTE_MIN(d, c->last_rx_ms + ns->cfg.idle_timeout_ms);
	if (tcp_rcvbuf_idle_due(ns, c, &b))
		d = RTE_MIN(d, b);
	return d;
}

void
tcp_arm_idle(struct net_stack *ns, struct tcp_conn *c)
{
	uint64_t d = idle_deadline(ns, c);

	if (d != UINT64_MAX)
		tw_arm(&ns->wheel, &c->idle, d);
}

/* Tail loss probe (RFC 8985 7.3): new data if the windows allow, else the
 * last segment the peer has not SACKed again (in recovery that may be a
 * lost retransmission: resending a segment the peer holds would tell
 * nothing), so that a lost tail is repaired by SACK and RACK, not by a
 * timeout. Up to TCP_TLP_MAX per episode, which ends with the
 * ACK of tlp_end (tcp_recovery.c); then the RTO. */
static void
tail_loss_probe(struct net_stack *ns, struct tcp_conn *c)
{
	uint32_t last, start, end;

	c->flags = (c->flags & ~(TCP_F_TLP_ARMED | TCP_F_TLP_RXT)) |
		TCP_F_TLP_SENT;
	c->tlp_probes++;
	ns->stats->tcp.tail_loss_probes++;
	if (tcp_tlp_new_data(c)) {
		uint32_t before = c->snd_max;

		c->cwnd += c->mss;	/* room for exactly one more */
		tcp_transmit(ns, c);
		c->cwnd -= c->mss;
		if (c->snd_max != before)
			goto rearm;
	}
	c->flags |= TCP_F_TLP_RXT;
	if (c->sacked_bytes > 0 && tcp_seg_last_unsacked(c, &start, &end)) {
		tcp_send_range(ns, c, start, end - start);
		goto rearm;
	}
	last = c->snd_max - c->snd_una;
	if ((c->flags & TCP_F_FIN_QUEUED) && last == c->sndq.bytes + 1)
		last--;		/* the FIN is resent with the last byte */
	last = RTE_MIN(last, (uint32_t)c->mss);
	tcp_send_range(ns, c, c->snd_una + (c->snd_max - c->snd_una) -
			RTE_MAX(last, 1u), last);
rearm:
	c->tlp_end = c->snd_max;
	tcp_arm_send_timer(ns, c);	/* the next probe, or the RTO */
}

/* RFC 5681 (4), RFC 6675 5.1 and RFC 8985 6.3: collapse the window and
 * take everything not SACKed for lost (Linux receivers do not renege);
 * the send loop resends it in order as the window opens. No fast
 * recovery before recover. */
static void
enter_loss(struct net_stack *ns, struct tcp_conn *c)
{
	bool open = !(c->flags & (TCP_F_RECOVERY | TCP_F_LOSS));

	/* As Linux's tcp_enter_loss(): a timeout out of the open state, or
	 * after its recovery's end, begins an episode that an undo would
	 * take back; one in the middle of an episode keeps its start. */
	if (open || SEQ_GEQ(c->snd_una, c->recover))
		tcp_undo_init(c);
	tcp_frto_start(c, open);
	ns->cc->timeout(c);
	c->flags &= ~TCP_F_RECOVERY;
	tcp_tlp_end(c);
	c->flags |= TCP_F_LOSS;
	c->recover = c->snd_max;
	c->dupacks = 0;
	tcp_seg_mark_all_lost(c);
	tcp_arm_rexmit(ns, c);
	tcp_transmit(ns, c);
}

static void
rexmit_fire(struct net_stack *ns, struct tcp_conn *c)
{
	if (c->flags & TCP_F_REO_ARMED) {
		tcp_rack_timeout(ns, c);
		return;
	}
	if (c->flags & TCP_F_TLP_ARMED) {
		tail_loss_probe(ns, c);
		return;
	}
	c->backoff++;
	if (c->state == TCP_SYN_RECEIVED || c->state == TCP_SYN_SENT) {
		if (c->backoff > ns->cfg.syn_retries) {
			ns->stats->tcp.timeouts++;
			if (c->flags & TCP_F_ACTIVE)
				ns->stats->tcp.attempt_fails++;
			tcp_conn_free(ns, c);
			return;
		}
		if (c->state == TCP_SYN_SENT)
			tcp_send_syn(ns, c);
		else
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
		ns->stats->tcp.timeouts++;
		if (c->backoff > ns->cfg.max_retries) {
			tcp_conn_reset(ns, c);
			return;
		}
		enter_loss(ns, c);
		return;
	}
	/* Nothing in flight: data that found no mbufs goes now (the
	 * interval backs off while the pool stays empty). */
	if (c->sndq.bytes > 0 || (c->flags & TCP_F_FIN_QUEUED))
		tcp_transmit(ns, c);
}

void
net_link_up(struct net_stack *ns)
{
	uint32_t i;

	nd_link_up(ns);
	for (i = 0; i < ns->cfg.max_conns; i++) {
		struct tcp_conn *c = &ns->conns[i];

		if (c->state == TCP_CLOSED || c->state == TCP_TIME_WAIT ||
				c->backoff == 0 || !tw_is_armed(&c->rexmit))
			continue;
		c->backoff = 0;
		tw_arm(&ns->wheel, &c->rexmit, ns->now_ms);
	}
}

static void
idle_fire(struct net_stack *ns, struct tcp_conn *c)
{
	uint64_t quiet = ns->now_ms - c->last_rx_ms;

	if (ns->cfg.idle_timeout_ms && quiet >= ns->cfg.idle_timeout_ms) {
		ns->stats->tcp.idle_timeouts++;
		tcp_conn_reset(ns, c);
		return;
	}
	tcp_rcvbuf_idle(ns, c);
	if (ns->now_ms >= keepalive_deadline(ns, c)) {
		if (c->ka_probes >= ns->cfg.keepalive_probes) {
			ns->stats->tcp.keepalive_timeouts++;
			tcp_conn_reset(ns, c);
			return;
		}
		c->ka_probes++;
		tcp_send_keepalive(ns, c);
	}
	tcp_arm_idle(ns, c);
}

void
tcp_timer_fire(struct tw_timer *t, void *ctx)
{
	struct net_stack *ns = ctx;
	size_t at = (size_t)((char *)t - (char *)ns->conns);
	struct tcp_conn *c;

	/* A timer outside the connection table is a layer above's. */
	if ((char *)t < (char *)ns->conns ||
			at >= (size_t)ns->cfg.max_conns * sizeof(struct tcp_conn)) {
		struct net_timer *nt = container_of(t, struct net_timer, tw);

		nt->fire(nt);
		return;
	}
	c = &ns->conns[at / sizeof(struct tcp_conn)];
	if (t == &c->rexmit) {
		rexmit_fire(ns, c);
	} else if (t == &c->delack) {
		tcp_send_ack(ns, c);
	} else if (t == &c->idle) {
		idle_fire(ns, c);
	} else {
		/* End of TIME-WAIT, or of a FIN-WAIT-2 that waited too long. */
		tcp_conn_free(ns, c);
	}
}
