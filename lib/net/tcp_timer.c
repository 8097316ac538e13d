/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TCP timers: retransmission (with the tail loss probe and the persist
 * probe), delayed ACK, keepalive and idle timeout, and the end of TIME-WAIT
 * and FIN-WAIT-2; and the RTT estimator that sets the RTO. Timers call
 * output and the connection table, never input or the user calls.
 */
#include "tcp_impl.h"

/* The RTT estimator and the RTO it gives: RFC 6298 2.2-2.4 with the clock granularity G of one millisecond. */
void
tcp_rtt_sample(struct net_stack *ns, struct tcp_conn *c, uint32_t r)
{
	if (c->srtt == 0) {
		c->srtt = r ? r : 1;
		c->rttvar = r / 2;
	} else {
		uint32_t d = c->srtt > r ? c->srtt - r : r - c->srtt;

		c->rttvar = (3 * c->rttvar + d) / 4;
		c->srtt = (7 * c->srtt + r) / 8;
		if (c->srtt == 0)
			c->srtt = 1;	/* 0 means "no sample yet" */
	}
	c->rto = c->srtt + RTE_MAX(1u, 4 * c->rttvar);
	if (c->rto < ns->cfg.rto_min_ms)
		c->rto = ns->cfg.rto_min_ms;
	if (c->rto > ns->cfg.rto_max_ms)
		c->rto = ns->cfg.rto_max_ms;
}

/* Keepalive and idle timeout share one timer, re-armed lazily: traffic
 * only stamps last_rx_ms; the timer, when it fires, works out the next
 * deadline from it. */
static uint64_t
idle_deadline(const struct net_stack *ns, const struct tcp_conn *c)
{
	uint64_t d = UINT64_MAX;

	if (ns->cfg.keepalive_ms)
		d = c->last_rx_ms + ns->cfg.keepalive_ms +
			(uint64_t)c->ka_probes * ns->cfg.keepalive_intvl_ms;
	if (ns->cfg.idle_timeout_ms)
		d = RTE_MIN(d, c->last_rx_ms + ns->cfg.idle_timeout_ms);
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

	c->flags = (uint16_t)((c->flags & ~(TCP_F_TLP_ARMED | TCP_F_TLP_RXT)) |
			TCP_F_TLP_SENT);
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
		/* RFC 5681 (4), RFC 6675 5.1 and RFC 8985 6.3: collapse the
		 * window and take everything not SACKed for lost (Linux
		 * receivers do not renege); the send loop resends it in
		 * order as the window opens. No fast recovery before
		 * recover. */
		ns->cc->timeout(c, ns->now_ms);
		c->flags &= ~(TCP_F_RTT_TIMING | TCP_F_RECOVERY);
		tcp_tlp_end(c);
		c->flags |= TCP_F_LOSS;
		c->recover = c->snd_max;
		c->dupacks = 0;
		tcp_seg_mark_all_lost(c);
		tcp_arm_rexmit(ns, c);
		tcp_transmit(ns, c);
	}
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
	if (ns->cfg.keepalive_ms && ns->now_ms >= idle_deadline(ns, c)) {
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
