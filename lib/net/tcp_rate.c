/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Delivery rate estimation, as Linux's tcp_rate.c (draft-cheng-iccrg-
 * delivery-rate-estimation), in bytes: each segment sent records how much
 * the connection had delivered then and when, and when the send phase it
 * belongs to began; an ACK's sample is what was delivered since the most
 * recently sent segment it delivers was sent, over the longer of that
 * segment's send phase and its ACK phase. Samples taken while the sender
 * had nothing to send are marked app-limited. BBR runs on them.
 */
#include "tcp_impl.h"

/* RACK_sent_after by transmission order, as tcp_recovery.c's. */
static bool
sent_after(uint32_t a_no, uint32_t b_no)
{
	return (int32_t)(a_no - b_no) > 0;
}

void
tcp_rate_sent(struct net_stack *ns, struct tcp_conn *c, struct tcp_seg *s,
		bool nothing_out)
{
	/* Nothing in flight: ACKs from here measure the network alone,
	 * from now. */
	if (nothing_out) {
		c->first_tx_us = (uint32_t)ns->now_us;
		c->delivered_us = (uint32_t)ns->now_us;
	}
	s->tx_first_us = c->first_tx_us;
	s->tx_delivered_us = c->delivered_us;
	s->tx_delivered = c->delivered;
	if (c->app_limited != 0)
		s->flags |= TCP_SEG_APP_LIMITED;
	else
		s->flags &= (uint8_t)~TCP_SEG_APP_LIMITED;
}

void
tcp_rate_delivered(struct tcp_conn *c, const struct tcp_seg *s, uint32_t len,
		struct tcp_ack_info *ai)
{
	c->delivered += len;
	ai->delivered += len;
	if (ai->rs_has_prior && !sent_after(s->xmit_no, ai->rs_xmit_no))
		return;
	ai->rs_has_prior = true;
	ai->rs_xmit_no = s->xmit_no;
	ai->rs_prior_delivered = s->tx_delivered;
	ai->rs_prior_us = s->tx_delivered_us;
	ai->rs_app_limited = s->flags & TCP_SEG_APP_LIMITED;
	ai->rs_send_us = s->xmit_us - s->tx_first_us;
	/* The next send phase starts from the send time of the most
	 * recently delivered segment. */
	c->first_tx_us = s->xmit_us;
}

void
tcp_rate_gen(struct net_stack *ns, struct tcp_conn *c, struct tcp_ack_info *ai)
{
	uint32_t ack_us;

	if (c->app_limited != 0 && SEQ_GT(c->delivered, c->app_limited))
		c->app_limited = 0;
	if (ai->delivered > 0)
		c->delivered_us = (uint32_t)ns->now_us;
	ai->rs_valid = false;
	if (!ai->rs_has_prior)
		return;
	ai->rs_delivered = c->delivered - ai->rs_prior_delivered;
	/* Sending and acknowledging a window are separate phases; with ACK
	 * compression the send phase can be the longer: take the longer. */
	ack_us = (uint32_t)ns->now_us - ai->rs_prior_us;
	ai->rs_interval_us = RTE_MAX(ai->rs_send_us, ack_us);
	/* Shorter than a round trip: not a rate the path sustains. */
	if (c->min_rtt_us != UINT32_MAX && ai->rs_interval_us < c->min_rtt_us)
		return;
	ai->rs_valid = ai->rs_interval_us > 0;
}

void
tcp_rate_check_app_limited(struct tcp_conn *c)
{
	uint32_t pipe = tcp_pipe(c);
	uint32_t unsent = c->sndq.bytes > c->snd_nxt - c->snd_una ?
		c->sndq.bytes - (c->snd_nxt - c->snd_una) : 0;

	if (unsent < c->mss && pipe < c->cwnd &&
			c->lost_bytes <= c->retrans_bytes)
		c->app_limited = (c->delivered + pipe) ? c->delivered + pipe : 1;
}
