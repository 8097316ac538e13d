/* SPDX-License-Identifier: BSD-3-Clause */
/* Congestion control: NewReno (RFC 5681, RFC 6582) and CUBIC (RFC 9438). */
#include <math.h>

#include "tcp_impl.h"

static uint32_t
flight(const struct tcp_conn *c)
{
	return c->snd_max - c->snd_una;
}

/* HyStart++ (RFC 9406): the initial slow start ends, through a
 * Conservative Slow Start of CSS_ROUNDS rounds growing a quarter as fast,
 * when a round's least RTT exceeds the last round's by a threshold. */
#define HS_MIN_RTT_THRESH_US 4000
#define HS_MAX_RTT_THRESH_US 16000
#define HS_MIN_RTT_DIVISOR 8
#define HS_N_RTT_SAMPLE 8
#define HS_CSS_GROWTH_DIVISOR 4
#define HS_CSS_ROUNDS 5

static void
hystart_init(struct tcp_conn *c)
{
	c->hs_state = TCP_HS_SS;
	c->hs_css_rounds = 0;
	c->hs_samples = 0;
	c->hs_round_end = c->snd_max;
	c->hs_last_min_us = UINT32_MAX;
	c->hs_cur_min_us = UINT32_MAX;
	c->hs_css_base_us = UINT32_MAX;
}

static void
hystart_round(struct tcp_conn *c)
{
	c->hs_round_end = c->snd_max;
	c->hs_last_min_us = c->hs_cur_min_us;
	c->hs_cur_min_us = UINT32_MAX;
	c->hs_samples = 0;
	if (c->hs_state == TCP_HS_CSS && ++c->hs_css_rounds >= HS_CSS_ROUNDS) {
		/* Slow start is over: congestion avoidance from here. */
		c->ssthresh = c->cwnd;
		c->hs_state = TCP_HS_OFF;
	}
}

/* The RTT samples of an ACK in the initial slow start: CSS on a rise of
 * the round's least RTT, back to slow start if it falls again. */
static void
hystart_sample(struct tcp_conn *c, uint32_t rtt_us)
{
	uint32_t thresh;

	/* Past the round's end, as Linux's after(ack, end_seq): at it,
	 * with nothing sent since, a round would begin and end at once. */
	if (SEQ_GT(c->snd_una, c->hs_round_end))
		hystart_round(c);
	if (c->hs_state == TCP_HS_OFF || rtt_us == UINT32_MAX)
		return;
	if (rtt_us < c->hs_cur_min_us)
		c->hs_cur_min_us = rtt_us;
	if (c->hs_samples < UINT8_MAX)
		c->hs_samples++;
	if (c->hs_samples < HS_N_RTT_SAMPLE || c->hs_cur_min_us == UINT32_MAX ||
			c->hs_last_min_us == UINT32_MAX)
		return;
	if (c->hs_state == TCP_HS_SS) {
		thresh = RTE_MAX((uint32_t)HS_MIN_RTT_THRESH_US,
				RTE_MIN(c->hs_last_min_us / HS_MIN_RTT_DIVISOR,
				(uint32_t)HS_MAX_RTT_THRESH_US));
		if (c->hs_cur_min_us >= c->hs_last_min_us + thresh) {
			c->hs_state = TCP_HS_CSS;
			c->hs_css_base_us = c->hs_cur_min_us;
			c->hs_css_rounds = 0;
		}
	} else if (c->hs_cur_min_us < c->hs_css_base_us) {
		/* The rise was passing: slow start again. */
		c->hs_state = TCP_HS_SS;
		c->hs_css_base_us = UINT32_MAX;
	}
}

/* Slow start's growth for an ACK: by all it acknowledged, a quarter of
 * it in CSS; never past ssthresh (Linux's tcp_slow_start()). Not RFC
 * 9406's L of 8 segments for a sender that does not pace: a Linux
 * receiver whose reader lags acknowledges 20 to 40 segments at once, and
 * L held slow start to a third of its doubling (a 64 MB download at
 * 150 ms took 1.14 times nginx's time); Linux's sender has no L either,
 * and its bursts are the same. */
static void
slow_start(struct tcp_conn *c, const struct tcp_ack_info *ai)
{
	uint32_t inc = ai->acked;

	if (c->hs_state != TCP_HS_OFF) {
		hystart_sample(c, ai->ca_rtt_us);
		if (c->hs_state == TCP_HS_CSS)
			inc /= HS_CSS_GROWTH_DIVISOR;
	}
	c->cwnd = RTE_MIN(c->cwnd + inc, RTE_MAX(c->ssthresh, c->cwnd));
}

/* A loss, a timeout or an undo: the initial slow start is over. */
static void
hystart_end(struct tcp_conn *c)
{
	c->hs_state = TCP_HS_OFF;
}

static void
newreno_init(struct tcp_conn *c)
{
	/* RFC 6928: min(10 * MSS, max(2 * MSS, 14600)) */
	c->cwnd = RTE_MIN(10u * c->mss, RTE_MAX(2u * c->mss, 14600u));
	c->ssthresh = UINT32_MAX;
	hystart_init(c);
}

static void
newreno_acked(struct tcp_conn *c, const struct tcp_ack_info *ai)
{
	if (c->cwnd < c->ssthresh)	/* slow start (RFC 5681 3.1) */
		slow_start(c, ai);
	else				/* congestion avoidance */
		c->cwnd += RTE_MAX(1u, (uint32_t)c->mss * c->mss / c->cwnd);
}

static void
newreno_enter_recovery(struct tcp_conn *c)
{
	hystart_end(c);
	c->ssthresh = RTE_MAX(flight(c) / 2, 2u * c->mss);
	c->cwnd = c->ssthresh;
}

static void
newreno_exit_recovery(struct tcp_conn *c)
{
	/* RFC 6582 3.2 (3), option 1, bounded against a burst. */
	c->cwnd = RTE_MIN(c->ssthresh, RTE_MAX(flight(c), (uint32_t)c->mss) +
			c->mss);
}

static void
newreno_timeout(struct tcp_conn *c)
{
	hystart_end(c);
	c->ssthresh = RTE_MAX(flight(c) / 2, 2u * c->mss);
	c->cwnd = c->mss;	/* the loss window (RFC 5681 3.1) */
}

/* tcp_undo.c put back ssthresh: cwnd as it was before (Linux's
 * tcp_reno_undo_cwnd()). */
static uint32_t
newreno_undo(struct tcp_conn *c)
{
	hystart_end(c);
	return RTE_MAX(c->cwnd, c->prior_cwnd);
}

const struct tcp_cc_ops tcp_cc_newreno = {
	.name = "newreno",
	.init = newreno_init,
	.acked = newreno_acked,
	.enter_recovery = newreno_enter_recovery,
	.exit_recovery = newreno_exit_recovery,
	.timeout = newreno_timeout,
	.undo = newreno_undo,
};

/* CUBIC (RFC 9438): after a loss the window follows
 * W(t) = C (t - K)^3 + W_max, concave up to the window of the last loss,
 * then convex beyond it; never slower than Reno would be (4.3). Slow start
 * and the loss window after a timeout are NewReno's. Windows in bytes,
 * the formula in segments and seconds. */
#define CUBIC_C 0.4
#define CUBIC_BETA_10 7	/* beta, in tenths */
#define CUBIC_BETA (CUBIC_BETA_10 / 10.0)

static void
cubic_init(struct tcp_conn *c)
{
	newreno_init(c);
	c->cc_epoch_ms = 0;
	c->cc_w_max = 0;
	c->cc_w_max_prior = 0;
	c->cc_w_est = 0;
	c->cc_origin = 0;
	c->cc_k_ms = 0;
}

/* 4.6, 4.7: remember W_max (lowered by fast convergence when the window
 * had not regained the last one) and cut ssthresh by beta. */
static void
cubic_loss(struct tcp_conn *c)
{
	uint32_t cwnd = c->cwnd;

	hystart_end(c);
	c->cc_w_max_prior = c->cc_w_max;
	if (cwnd < c->cc_w_max)
		c->cc_w_max = (uint32_t)((uint64_t)cwnd * (10 + CUBIC_BETA_10) /
				20);
	else
		c->cc_w_max = cwnd;
	c->ssthresh = RTE_MAX((uint32_t)((uint64_t)cwnd * CUBIC_BETA_10 / 10),
			2u * c->mss);
	c->cc_epoch_ms = 0;
}

static void
cubic_acked(struct tcp_conn *c, const struct tcp_ack_info *ai)
{
	double mss = c->mss, t, target, w_cubic, alpha;
	uint64_t now_ms = ai->now_us / 1000;
	uint32_t bytes = ai->acked;

	if (c->cwnd < c->ssthresh) {
		slow_start(c, ai);
		return;
	}
	if (c->cc_epoch_ms == 0) {	/* 4.2: a new epoch */
		c->cc_epoch_ms = now_ms ? now_ms : 1;
		c->cc_w_est = c->cwnd;
		if (c->cwnd < c->cc_w_max) {
			c->cc_origin = c->cc_w_max;
			c->cc_k_ms = (uint32_t)(1000.0 * cbrt((c->cc_w_max -
					c->cwnd) / mss / CUBIC_C));
		} else {
			c->cc_origin = c->cwnd;
			c->cc_k_ms = 0;
		}
	}
	/* the window one RTT ahead, bounded to [cwnd, 1.5 cwnd] (4.4) */
	t = (double)(now_ms - c->cc_epoch_ms) / 1000.0 + c->srtt_us / 1e6;
	w_cubic = CUBIC_C * pow(t - c->cc_k_ms / 1000.0, 3) * mss + c->cc_origin;
	target = RTE_MIN(RTE_MAX(w_cubic, (double)c->cwnd), 1.5 * c->cwnd);
	/* 4.3: the Reno-friendly estimate */
	alpha = c->cc_w_est >= c->cc_w_max ? 1.0 :
		3.0 * (1.0 - CUBIC_BETA) / (1.0 + CUBIC_BETA);
	c->cc_w_est += (uint32_t)(alpha * mss * bytes / c->cwnd);
	if (w_cubic < c->cc_w_est)
		c->cwnd = RTE_MAX(c->cwnd, c->cc_w_est);
	else
		c->cwnd += (uint32_t)((target - c->cwnd) * bytes / c->cwnd);
}

static void
cubic_enter_recovery(struct tcp_conn *c)
{
	cubic_loss(c);
	c->cwnd = c->ssthresh;
}

static void
cubic_timeout(struct tcp_conn *c)
{
	if (c->backoff <= 1 && !(c->flags & (TCP_F_RECOVERY | TCP_F_LOSS)))
		cubic_loss(c);	/* once for the episode, as Linux */
	c->cc_epoch_ms = 0;
	c->cwnd = c->mss;
}

/* 4.9: a spurious reduction takes back its W_max; the next ACK starts a
 * new epoch from the window restored. */
static uint32_t
cubic_undo(struct tcp_conn *c)
{
	if (c->cc_w_max_prior > c->cc_w_max)
		c->cc_w_max = c->cc_w_max_prior;
	c->cc_epoch_ms = 0;
	return newreno_undo(c);
}

const struct tcp_cc_ops tcp_cc_cubic = {
	.name = "cubic",
	.init = cubic_init,
	.acked = cubic_acked,
	.enter_recovery = cubic_enter_recovery,
	.exit_recovery = newreno_exit_recovery,
	.timeout = cubic_timeout,
	.undo = cubic_undo,
};
