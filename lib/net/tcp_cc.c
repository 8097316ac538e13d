/* SPDX-License-Identifier: BSD-3-Clause */
/* Congestion control: NewReno (RFC 5681, RFC 6582) and CUBIC (RFC 9438). */
#include <math.h>

#include "tcp_impl.h"

static uint32_t
flight(const struct tcp_conn *c)
{
	return c->snd_max - c->snd_una;
}

static void
newreno_init(struct tcp_conn *c)
{
	/* RFC 6928: min(10 * MSS, max(2 * MSS, 14600)) */
	c->cwnd = RTE_MIN(10u * c->mss, RTE_MAX(2u * c->mss, 14600u));
	c->ssthresh = UINT32_MAX;
}

static void
newreno_acked(struct tcp_conn *c, uint32_t bytes, uint64_t now_ms __rte_unused)
{
	if (c->cwnd < c->ssthresh)	/* slow start (RFC 5681 3.1, L = 1) */
		c->cwnd += RTE_MIN(bytes, (uint32_t)c->mss);
	else				/* congestion avoidance */
		c->cwnd += RTE_MAX(1u, (uint32_t)c->mss * c->mss / c->cwnd);
}

static void
newreno_enter_recovery(struct tcp_conn *c, uint64_t now_ms __rte_unused)
{
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
newreno_timeout(struct tcp_conn *c, uint64_t now_ms __rte_unused)
{
	c->ssthresh = RTE_MAX(flight(c) / 2, 2u * c->mss);
	c->cwnd = c->mss;	/* the loss window (RFC 5681 3.1) */
}

const struct tcp_cc_ops tcp_cc_newreno = {
	.name = "newreno",
	.init = newreno_init,
	.acked = newreno_acked,
	.enter_recovery = newreno_enter_recovery,
	.exit_recovery = newreno_exit_recovery,
	.timeout = newreno_timeout,
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
cubic_acked(struct tcp_conn *c, uint32_t bytes, uint64_t now_ms)
{
	double mss = c->mss, t, target, w_cubic, alpha;

	if (c->cwnd < c->ssthresh) {
		c->cwnd += RTE_MIN(bytes, (uint32_t)c->mss);
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
	t = (double)(now_ms - c->cc_epoch_ms + c->srtt) / 1000.0;
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
cubic_enter_recovery(struct tcp_conn *c, uint64_t now_ms __rte_unused)
{
	cubic_loss(c);
	c->cwnd = c->ssthresh;
}

static void
cubic_timeout(struct tcp_conn *c, uint64_t now_ms __rte_unused)
{
	if (c->backoff <= 1 && !(c->flags & (TCP_F_RECOVERY | TCP_F_LOSS)))
		cubic_loss(c);	/* once for the episode, as Linux */
	c->cc_epoch_ms = 0;
	c->cwnd = c->mss;
}

const struct tcp_cc_ops tcp_cc_cubic = {
	.name = "cubic",
	.init = cubic_init,
	.acked = cubic_acked,
	.enter_recovery = cubic_enter_recovery,
	.exit_recovery = newreno_exit_recovery,
	.timeout = cubic_timeout,
};
