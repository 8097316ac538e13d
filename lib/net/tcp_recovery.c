/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Loss detection and recovery of a connection with SACK: RACK's time-based
 * loss detection and its reordering window (RFC 8985 6), the end of a tail
 * loss probe's episode (RFC 8985 7.4), fast recovery entered and left, and
 * Proportional Rate Reduction while in it (RFC 6937, PRR-SSRB). The
 * scoreboard (tcp_sack.c) tells what was delivered; input calls in once per
 * ACK, the timers when RACK's reordering timer fires. Calls output.
 */
#include "tcp_impl.h"

#define REO_WND_PERSIST 16	/* recoveries a grown window lasts */

/* RFC 8985 6.2 step 2: RACK_sent_after, by transmission order. */
static bool
sent_after(uint32_t a_no, uint32_t b_no)
{
	return (int32_t)(a_no - b_no) > 0;
}

void
tcp_rack_delivered(struct net_stack *ns, struct tcp_conn *c,
		const struct tcp_seg *s, uint32_t end, struct tcp_ack_info *ai,
		bool by_sack)
{
	uint32_t rtt = (uint32_t)ns->now_us - s->xmit_us;

	if (SEQ_LT(c->rack_fack, c->snd_una))
		c->rack_fack = c->snd_una;	/* kept in the window */
	/* Step 3: delivered below what was delivered before, never
	 * resent: the network reorders. */
	if (!(s->flags & TCP_SEG_EVER_RETRANS) && SEQ_LT(end, c->rack_fack))
		c->rack_reord = 1;
	if (SEQ_GT(end, c->rack_fack))
		c->rack_fack = end;
	if (s->flags & TCP_SEG_EVER_RETRANS) {
		if (!by_sack)
			ai->retrans_acked = true;
		/* Which transmission was delivered is ambiguous: one
		 * faster than any path seen answers an earlier one. */
		if (rtt < c->min_rtt_us)
			return;
	} else {
		uint32_t *oldest = by_sack ? &ai->sack_rtt_us : &ai->seq_rtt_us;

		if (SEQ_LEQ(end, c->recover))
			ai->orig_delivered = true;
		if (*oldest == UINT32_MAX || rtt > *oldest)
			*oldest = rtt;
		if (rtt < ai->ca_rtt_us)
			ai->ca_rtt_us = rtt;
		if (rtt < c->min_rtt_us)
			c->min_rtt_us = rtt;
	}
	if (sent_after(s->xmit_no, c->rack_xmit_no)) {
		c->rack_rtt_us = rtt;
		c->rack_xmit_us = s->xmit_us;
		c->rack_xmit_no = s->xmit_no;
		c->rack_end = end;
	}
}

uint32_t
tcp_rack_reo_wnd(const struct tcp_conn *c)
{
	uint32_t w;

	if (!c->rack_reord) {
		if (c->flags & (TCP_F_RECOVERY | TCP_F_LOSS))
			return 0;
		if (c->sacked_bytes >= TCP_DUPTHRESH * (uint32_t)c->mss)
			return 0;
	}
	if (c->min_rtt_us == UINT32_MAX)
		return 0;
	w = RTE_MAX(c->reo_wnd_mult, (uint8_t)1) * (c->min_rtt_us / 4);
	return RTE_MIN(w, c->srtt_us);
}

uint32_t
tcp_rack_detect(struct net_stack *ns, struct tcp_conn *c, uint32_t *timeout)
{
	uint32_t reo = tcp_rack_reo_wnd(c), lost = 0;
	struct tcp_seg *s, *next;

	*timeout = 0;
	if (c->rack_xmit_no == 0)
		return 0;	/* nothing delivered yet */
	/* Oldest transmission first, delivered and known lost ones not
	 * there: the walk ends at the first sent after the newest
	 * delivered, as do all after it. */
	for (s = tcp_sb_sent_first(c); s != NULL; s = next) {
		int32_t remaining;

		next = s->sent_next;
		if (!sent_after(c->rack_xmit_no, s->xmit_no))
			break;
		remaining = (int32_t)(s->xmit_us + c->rack_rtt_us + reo -
				(uint32_t)ns->now_us);
		if (remaining > 0) {
			*timeout = RTE_MAX(*timeout, (uint32_t)remaining);
			continue;
		}
		if (s->flags & TCP_SEG_RETRANS)
			ns->stats->tcp.lost_retransmits++;
		ns->stats->tcp.rack_losses++;
		lost += tcp_seg_mark_lost(c, s);
	}
	return lost;
}

/* RFC 6937: cwnd for this ACK, from what it delivered. */
static void
prr_update(struct tcp_conn *c, uint32_t delivered)
{
	uint32_t pipe = tcp_pipe(c), sndcnt;

	c->prr_delivered += delivered;
	if (pipe > c->ssthresh) {
		uint64_t target = ((uint64_t)c->prr_delivered * c->ssthresh +
				c->recover_fs - 1) / c->recover_fs;

		sndcnt = target > c->prr_out ? (uint32_t)(target - c->prr_out) : 0;
	} else {	/* slow start reduction bound */
		uint32_t limit = RTE_MAX(c->prr_delivered > c->prr_out ?
				c->prr_delivered - c->prr_out : 0, delivered) + c->mss;

		sndcnt = RTE_MIN(c->ssthresh - pipe, limit);
	}
	if (c->prr_out == 0 && sndcnt < c->mss)
		sndcnt = c->mss;	/* the fast retransmit goes at once */
	c->cwnd = pipe + sndcnt;
}

static void
enter_recovery(struct net_stack *ns, struct tcp_conn *c)
{
	c->flags |= TCP_F_RECOVERY;
	if (c->flags & TCP_F_TLP_ARMED) {
		/* The probe is not wanted now: the timer goes back to being
		 * the RTO, or it would fire as one after PTO. */
		c->flags &= ~TCP_F_TLP_ARMED;
		tcp_arm_rexmit(ns, c);
	}
	c->recover = c->snd_max;
	tcp_undo_init(c);
	ns->cc->enter_recovery(c);
	c->prr_delivered = 0;
	c->prr_out = 0;
	c->recover_fs = RTE_MAX(c->snd_max - c->snd_una, 1u);
	ns->stats->tcp.fast_retransmits++;
	ns->stats->tcp.sack_recoveries++;
}

/* RFC 8985 6.2 step 4: the reordering window grows by min_RTT/4 for each
 * round trip with a D-SACK, and falls back after 16 recoveries without. */
static void
reo_wnd_update(struct tcp_conn *c, bool dsack)
{
	if (c->dsack_round != 0 && SEQ_GEQ(c->snd_una, c->dsack_round))
		c->dsack_round = 0;
	if (dsack && c->dsack_round == 0) {
		c->dsack_round = c->snd_max ? c->snd_max : 1;
		if (c->reo_wnd_mult < UINT8_MAX)
			c->reo_wnd_mult = (uint8_t)(RTE_MAX(c->reo_wnd_mult,
					(uint8_t)1) + 1);
		c->reo_wnd_persist = REO_WND_PERSIST;
	}
}

/* RFC 8985 7.4: the ACK that ends a probe's episode tells whether the
 * probe repaired a loss. */
static void
tlp_episode(struct net_stack *ns, struct tcp_conn *c, uint32_t lost,
		bool dsack)
{
	if (!(c->flags & TCP_F_TLP_SENT))
		return;
	if (lost > 0) {
		/* The probe's ACK revealed the loss: recovery repairs it. */
		ns->stats->tcp.tlp_recoveries++;
	} else if (SEQ_GEQ(c->snd_una, c->tlp_end)) {
		if ((c->flags & TCP_F_TLP_RXT) && !dsack &&
				!(c->flags & (TCP_F_RECOVERY | TCP_F_LOSS))) {
			/* The retransmitted probe was the only copy to
			 * arrive: a loss, repaired; the window answers it. */
			ns->stats->tcp.tlp_recoveries++;
			ns->cc->enter_recovery(c);
			/* A reduction nothing will show spurious: an older
			 * episode's undo must not take it back. */
			c->flags &= ~TCP_F_UNDO;
		}
	} else {
		return;
	}
	tcp_tlp_end(c);
}

/* The reordering timer (RFC 8985 6.3), or else the send timer when
 * snd_una moved or the reordering timer is no longer wanted. */
static void
arm_timer(struct net_stack *ns, struct tcp_conn *c, uint32_t timeout,
		bool advanced)
{
	if (timeout == 0) {
		if (advanced || (c->flags & TCP_F_REO_ARMED))
			tcp_arm_send_timer(ns, c);
		return;
	}
	c->flags = (c->flags & ~TCP_F_TLP_ARMED) | TCP_F_REO_ARMED;
	tw_arm(&ns->wheel, &c->rexmit, tcp_deadline_ms(ns, timeout));
}

/* Returns the bytes newly marked lost. */
static uint32_t
detect_and_recover(struct net_stack *ns, struct tcp_conn *c,
		uint32_t delivered, bool dsack, bool advanced)
{
	uint32_t timeout, lost = tcp_rack_detect(ns, c, &timeout);

	tlp_episode(ns, c, lost, dsack);
	if (lost > 0 && !(c->flags & (TCP_F_RECOVERY | TCP_F_LOSS)))
		enter_recovery(ns, c);
	/* A controller of its own (BBR) sets cwnd in recovery too. */
	if ((c->flags & TCP_F_RECOVERY) && ns->cc->cong_control == NULL)
		prr_update(c, delivered);
	arm_timer(ns, c, timeout, advanced);
	return lost;
}

uint32_t
tcp_recovery_ack(struct net_stack *ns, struct tcp_conn *c,
		const struct tcp_ack_info *ai)
{
	reo_wnd_update(c, ai->dsack);
	if (ai->dsack)
		ns->stats->tcp.spurious_retransmits++;
	tcp_undo_ack(ns, c, ai);
	if ((c->flags & TCP_F_LOSS) && SEQ_GEQ(c->snd_una, c->recover))
		c->flags &= ~(TCP_F_LOSS | TCP_F_FRTO | TCP_F_FRTO_NEW);
	if ((c->flags & TCP_F_RECOVERY) && SEQ_GEQ(c->snd_una, c->recover)) {
		/* RFC 6937: recovery ends at ssthresh, which PRR has
		 * brought the pipe down to. Not at the flight plus one
		 * segment (RFC 6582's option for NewReno without SACK):
		 * the flight is small when the last hole fills, and each
		 * recovery would restart from two segments. */
		c->flags &= ~TCP_F_RECOVERY;
		if (ns->cc->cong_control == NULL)
			c->cwnd = c->ssthresh;
		if (c->reo_wnd_persist > 0 && --c->reo_wnd_persist == 0)
			c->reo_wnd_mult = 1;
	}
	return detect_and_recover(ns, c, ai->acked + ai->sacked, ai->dsack,
			ai->acked > 0);
}

void
tcp_rack_timeout(struct net_stack *ns, struct tcp_conn *c)
{
	c->flags &= ~TCP_F_REO_ARMED;
	detect_and_recover(ns, c, 0, false, false);
	tcp_transmit(ns, c);
	if (!(c->flags & TCP_F_REO_ARMED))
		tcp_arm_send_timer(ns, c);
}
