/* SPDX-License-Identifier: BSD-3-Clause */
/* NewReno congestion control (RFC 5681, RFC 6582). */
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
