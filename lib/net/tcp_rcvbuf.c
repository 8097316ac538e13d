/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The receive buffer's size, tuned as Linux tunes it (tcp_rcv_space_adjust(),
 * "dynamic right-sizing"): once per round trip, the buffer becomes twice
 * what the upper layer took in that round trip, more while that grows
 * (the sender in slow start), up to tcp_config.rcv_buf_max, while the
 * shard's buffers grown past rcv_buf_init stay within rcv_buf_budget.
 * The round trip is the receiver's own measure (Linux's
 * tcp_rcv_rtt_measure(): the time a window's worth takes to arrive, the
 * least seen) or the handshake's. A grown buffer idle for
 * TCP_RCVBUF_IDLE_MS goes back to rcv_buf_init.
 * And the times of window limits, for telemetry.
 */
#include "tcp_impl.h"

static uint64_t
now_stamp(const struct net_stack *ns)
{
	return ns->now_us != 0 ? ns->now_us : 1;	/* 0: not started */
}

/* Linux's first rcvq_space: the window, at most ten segments; at least
 * one, as it divides (a connection with neither room nor buffer). */
static uint32_t
first_rcvq_space(const struct tcp_conn *c)
{
	return RTE_MAX(RTE_MIN(c->rcv_space + c->rcvbuf, 10u * c->mss),
			(uint32_t)c->mss);
}

void
tcp_rcvbuf_init(struct net_stack *ns, struct tcp_conn *c)
{
	c->rcvbuf = ns->cfg.rcv_buf_init;
	ns->stats->tcp_rcv_buf_bytes += c->rcvbuf;
	c->rcvq_space = first_rcvq_space(c);
	c->rcvq_seq = c->rcv_read;
	c->rcvq_time_us = now_stamp(ns);
	c->rcv_rtt_us = 0;
	c->rcv_rtt_time_us = 0;
	c->rcvbuf_used_ms = ns->now_ms;
}

void
tcp_rcvbuf_release(struct net_stack *ns, struct tcp_conn *c)
{
	if (c->rcvbuf > ns->cfg.rcv_buf_init)
		ns->rcv_buf_grown -= c->rcvbuf - ns->cfg.rcv_buf_init;
	ns->stats->tcp_rcv_buf_bytes -= c->rcvbuf;
	c->rcvbuf = 0;
	tcp_rwnd_limited(ns, c, false);
	tcp_zero_window(ns, c, false);
}

void
tcp_rcvbuf_data_in(struct net_stack *ns, struct tcp_conn *c)
{
	uint32_t edge = c->rcv_nxt + tcp_rcv_window(c);
	uint64_t took;

	if (ns->cfg.rcv_buf_max == 0)
		return;
	c->rcvbuf_used_ms = ns->now_ms;
	if (c->rcv_rtt_time_us != 0) {
		if (SEQ_LT(c->rcv_nxt, c->rcv_rtt_seq))
			return;
		/* A window's worth arrived: at least a round trip, more
		 * when the sender was not using the window; the least. */
		took = RTE_MAX(ns->now_us - c->rcv_rtt_time_us, (uint64_t)1);
		if (c->rcv_rtt_us == 0 || took < c->rcv_rtt_us)
			c->rcv_rtt_us = (uint32_t)RTE_MIN(took,
					(uint64_t)UINT32_MAX);
	}
	/* Only a window that reaches past the edge already advertised
	 * measures: what lies before that edge may be in flight already
	 * (a closed window's, a full buffer's), and its arrival, at once,
	 * says nothing of the round trip. */
	c->rcv_rtt_time_us = 0;
	if (!SEQ_GT(edge, c->rcv_adv))
		return;
	c->rcv_rtt_seq = edge;
	c->rcv_rtt_time_us = now_stamp(ns);
}

/* Grows the buffer towards want within the bounds and the budget. */
static void
grow(struct net_stack *ns, struct tcp_conn *c, uint64_t want)
{
	uint64_t extra, left;

	want = RTE_MIN(want, (uint64_t)ns->cfg.rcv_buf_max);
	if (want <= c->rcvbuf)
		return;
	extra = want - c->rcvbuf;
	left = ns->cfg.rcv_buf_budget > ns->rcv_buf_grown ?
		ns->cfg.rcv_buf_budget - ns->rcv_buf_grown : 0;
	if (extra > left) {
		ns->stats->tcp.rcv_buf_budget_limited++;
		extra = left;
		if (extra == 0)
			return;
	}
	/* The buffer starts at rcv_buf_init: its growth is what the budget
	 * counts. */
	ns->rcv_buf_grown += extra;
	c->rcvbuf += (uint32_t)extra;
	ns->stats->tcp_rcv_buf_bytes += extra;
	ns->stats->tcp.rcv_buf_grows++;
	tcp_arm_idle(ns, c);	/* for its shrinking */
}

void
tcp_rcvbuf_taken(struct net_stack *ns, struct tcp_conn *c)
{
	uint32_t rtt = tcp_rtt_us(c), copied;
	uint64_t want, span = ns->now_us - c->rcvq_time_us;

	if (ns->cfg.rcv_buf_max == 0)
		return;
	c->rcvbuf_used_ms = ns->now_ms;
	if (rtt == 0 || span < rtt)
		return;
	copied = c->rcv_read - c->rcvq_seq;
	if (copied > c->rcvq_space) {
		want = 2ull * copied + 16ull * c->mss;
		/* Growing faster than it doubles within a round trip (the
		 * sender in slow start): more (Linux's grow). Not over a
		 * longer time: then the upper layer set the pace. */
		if (span < 2ull * rtt)
			want += 2 * want * (copied - c->rcvq_space) /
				c->rcvq_space;
		grow(ns, c, want);
		c->rcvq_space = copied;
	}
	c->rcvq_seq = c->rcv_read;
	c->rcvq_time_us = now_stamp(ns);
}

bool
tcp_rcvbuf_idle_due(const struct net_stack *ns, const struct tcp_conn *c,
		uint64_t *deadline)
{
	if (c->rcvbuf <= ns->cfg.rcv_buf_init)
		return false;
	*deadline = c->rcvbuf_used_ms + TCP_RCVBUF_IDLE_MS;
	return true;
}

void
tcp_rcvbuf_idle(struct net_stack *ns, struct tcp_conn *c)
{
	uint64_t d;

	if (!tcp_rcvbuf_idle_due(ns, c, &d) || ns->now_ms < d)
		return;
	if (c->rcvq.n > 0) {
		c->rcvbuf_used_ms = ns->now_ms;	/* held: in use still */
		return;
	}
	/* The advertised edge stays (never shrunk); the window narrows
	 * as data comes. */
	ns->rcv_buf_grown -= c->rcvbuf - ns->cfg.rcv_buf_init;
	ns->stats->tcp_rcv_buf_bytes -= c->rcvbuf - ns->cfg.rcv_buf_init;
	c->rcvbuf = ns->cfg.rcv_buf_init;
	c->rcvq_space = first_rcvq_space(c);
	ns->stats->tcp.rcv_buf_shrinks++;
}

/* A time of a limit (Linux's chrono): started at *since, added to
 * *total when it ends. */
static void
chrono(const struct net_stack *ns, uint64_t *since, uint64_t *total, bool on)
{
	if (on == (*since != 0))
		return;
	if (on) {
		*since = now_stamp(ns);
	} else {
		*total += now_stamp(ns) - *since;
		*since = 0;
	}
}

void
tcp_rwnd_limited(struct net_stack *ns, struct tcp_conn *c, bool limited)
{
	chrono(ns, &c->rwnd_limited_since_us, &ns->stats->tcp_rwnd_limited_us,
			limited);
}

void
tcp_zero_window(struct net_stack *ns, struct tcp_conn *c, bool closed)
{
	chrono(ns, &c->zero_window_since_us, &ns->stats->tcp_zero_window_us,
			closed);
}
