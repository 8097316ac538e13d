/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Undo of window reductions proven spurious, as Linux undoes them
 * (tcp_try_undo_*()): a fast recovery or a timeout whose retransmissions
 * were all needless, because every one came back as a D-SACK (RFC 3708)
 * or because an ACK echoes a timestamp older than the first of them: the
 * original arrived, only late (RFC 3522, Eifel); and after a timeout,
 * F-RTO (RFC 5682, SACK-enhanced): new data goes out in place of more
 * retransmissions, and if what follows acknowledges data never resent,
 * the timeout was spurious. An undo puts cwnd and ssthresh back to what
 * they were before the episode and ends it. Input calls it per ACK.
 */
#include "tcp_impl.h"

void
tcp_undo_init(struct tcp_conn *c)
{
	/* Retransmissions still out (a probe's) may be D-SACKed too. */
	uint32_t out = (c->retrans_bytes + c->mss - 1) / c->mss;

	c->flags |= TCP_F_UNDO;
	c->undo_marker = c->snd_una;
	c->undo_retrans = out > 0 ? (int16_t)RTE_MIN(out, (uint32_t)INT16_MAX) :
		-1;
	/* The stamp of a retransmission still out stays: an ACK it drew
	 * is not an original's. */
	if (out == 0)
		c->retrans_stamp = 0;
	c->prior_cwnd = c->cwnd;
	/* Linux's tcp_current_ssthresh(): what slow start would stop at */
	c->prior_ssthresh = RTE_MAX(c->ssthresh, (c->cwnd >> 1) +
			(c->cwnd >> 2));
}

void
tcp_undo_retransmitted(struct tcp_conn *c, uint32_t tsval)
{
	if (c->retrans_stamp == 0)
		c->retrans_stamp = tsval ? tsval : 1;
	if (!(c->flags & TCP_F_UNDO))
		return;
	if (c->undo_retrans < 0)
		c->undo_retrans = 0;
	if (c->undo_retrans < INT16_MAX)
		c->undo_retrans++;
}

void
tcp_undo_dsack(struct tcp_conn *c, uint32_t start, uint32_t end)
{
	/* A receiver may report two duplicates in one block: count the
	 * segments it covers, as Linux's tcp_check_dsack(). */
	uint32_t segs = RTE_MAX((end - start + c->mss - 1) / c->mss, 1u);

	if (!(c->flags & TCP_F_UNDO) || c->undo_retrans <= 0 ||
			!SEQ_GT(end, c->undo_marker))
		return;
	c->undo_retrans = (int16_t)(c->undo_retrans > (int32_t)segs ?
			c->undo_retrans - (int32_t)segs : 0);
}

/* Eifel: the ACK echoes a TSval sent before the episode's first
 * retransmission, so an original transmission drew it. */
static bool
packet_delayed(const struct tcp_conn *c, const struct tcp_view *t)
{
	return (c->flags & TCP_F_OPT_TS) && t->opt.has_ts &&
		t->opt.ts_ecr != 0 && c->retrans_stamp != 0 &&
		SEQ_LT(t->opt.ts_ecr, c->retrans_stamp);
}

/* Every retransmission D-SACKed, or an original's ACK (Linux's
 * tcp_may_undo()). */
static bool
may_undo(const struct tcp_conn *c, const struct tcp_view *t)
{
	return (c->flags & TCP_F_UNDO) && (c->undo_retrans == 0 ||
			packet_delayed(c, t));
}

/* Linux's tcp_undo_cwnd_reduction(): the window as before the episode,
 * which ends; after a timeout, what it marked lost is not. */
static void
undo(struct net_stack *ns, struct tcp_conn *c, bool unmark_loss)
{
	/* NewReno's window in recovery is inflated by the duplicate ACKs,
	 * not one to keep. */
	bool inflated = (c->flags & (TCP_F_RECOVERY | TCP_F_OPT_SACK)) ==
		TCP_F_RECOVERY;
	bool recovery = c->flags & TCP_F_RECOVERY;

	if (inflated)
		c->cwnd = c->prior_cwnd;
	if (c->prior_ssthresh > c->ssthresh)
		c->ssthresh = c->prior_ssthresh;
	c->cwnd = ns->cc->undo(c);
	if (unmark_loss)
		tcp_seg_unmark_lost(c);
	c->flags &= ~(TCP_F_UNDO | TCP_F_RECOVERY | TCP_F_LOSS | TCP_F_FRTO |
			TCP_F_FRTO_NEW);
	c->backoff = 0;
	c->retrans_stamp = 0;
	/* A fast recovery found spurious was reordering taken for loss
	 * (RFC 8985 6.2 step 3); a spurious timeout was a delay. */
	if (recovery)
		c->rack_reord = 1;
}

void
tcp_frto_start(struct tcp_conn *c, bool new_episode)
{
	/* As Linux: on the first timeout out of the open state, and on
	 * any later one of a row; with SACK, whose scoreboard tells
	 * which data was never resent. */
	c->flags &= ~(TCP_F_FRTO | TCP_F_FRTO_NEW);
	if ((c->flags & TCP_F_OPT_SACK) && (new_episode || c->backoff > 1))
		c->flags |= TCP_F_FRTO;
}

/* After a timeout (Linux's tcp_process_loss()): an undo by D-SACK or
 * timestamps as soon as snd_una moves; F-RTO's steps. */
static bool
loss_ack(struct net_stack *ns, struct tcp_conn *c,
		const struct tcp_ack_info *ai)
{
	bool recovered = SEQ_GEQ(c->snd_una, c->recover);
	uint32_t flight = c->snd_max - c->snd_una;

	if (ai->acked > 0 && may_undo(c, ai->t)) {
		ns->stats->tcp.loss_undos++;
		undo(ns, c, true);
		return true;
	}
	if (!(c->flags & TCP_F_FRTO))
		return false;
	if (ai->orig_delivered) {
		/* 3.b: data sent once only was delivered: not all was lost,
		 * the timeout was spurious. */
		ns->stats->tcp.frto_undos++;
		undo(ns, c, true);
		return true;
	}
	if (SEQ_GT(c->snd_max, c->recover)) {
		/* 3.a: after the new data, duplicate ACKs or SACKs: the loss
		 * was real; the retransmissions go on. */
		if (ai->sacked > 0 || ai->dup)
			c->flags &= ~(TCP_F_FRTO | TCP_F_FRTO_NEW);
	} else if (ai->acked > 0 && !recovered) {
		/* 2.b: the retransmission was acknowledged: new data now,
		 * if there is any and the window takes it, else the usual
		 * recovery. */
		if (c->sndq.bytes > flight && c->snd_wnd > flight)
			c->flags |= TCP_F_FRTO_NEW;
		else
			c->flags &= ~TCP_F_FRTO;
	}
	return false;
}

bool
tcp_undo_ack(struct net_stack *ns, struct tcp_conn *c,
		const struct tcp_ack_info *ai)
{
	if (c->flags & TCP_F_LOSS)
		return loss_ack(ns, c, ai);
	if (!(c->flags & TCP_F_UNDO))
		return false;
	if ((c->flags & TCP_F_RECOVERY) && ai->acked > 0 &&
			packet_delayed(c, ai->t) && c->retrans_bytes == 0) {
		/* A partial or the last ACK of the episode answers an
		 * original: the hole was filled by a late segment. With
		 * retransmissions still out, Linux's tcp_try_undo_partial()
		 * waits: they would be counted twice. */
		ns->stats->tcp.eifel_undos++;
		undo(ns, c, true);
		return true;
	}
	if (c->undo_retrans == 0 && (ai->dsack || ((c->flags &
			TCP_F_RECOVERY) && SEQ_GEQ(c->snd_una, c->recover)))) {
		/* Every retransmission of the episode came back
		 * duplicated, during it or after it. */
		ns->stats->tcp.dsack_undos++;
		undo(ns, c, false);
		return true;
	}
	return false;
}
