/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Pacing: a connection with a pacing rate sends a segment only once the
 * previous ones' time at that rate has passed (Linux's earliest departure
 * time), in bursts of about a millisecond of data as Linux's TSO autosizing
 * makes them (tcp_tso_autosize(): rate / 1024, 2 to 44 segments). A
 * connection that
 * must wait goes on the shard's pacing queue, a binary heap by departure
 * time in microseconds, which net_timers_us() runs at every poll, finer
 * than the timer wheel's millisecond; a shard that paces does not sleep
 * (net_pacing_pending()). The rate is BBR's, or for NewReno and CUBIC,
 * when tcp_config.pacing asks, Linux's: twice cwnd per SRTT in slow start,
 * 1.2 times after.
 */
#include <rte_malloc.h>

#include "tcp_impl.h"

#define PACE_SS_RATIO 200	/* percent of cwnd per SRTT, slow start */
#define PACE_CA_RATIO 120	/* and after */

int
tcp_pace_init(struct net_stack *ns)
{
	ns->pace = rte_malloc("tcp_pace", sizeof(*ns->pace) *
			ns->cfg.max_conns, 0);
	ns->pace_n = 0;
	return ns->pace == NULL ? -1 : 0;
}

void
tcp_pace_fini(struct net_stack *ns)
{
	rte_free(ns->pace);
	ns->pace = NULL;
}

static struct tcp_conn *
conn_of(struct net_stack *ns, uint32_t slot)
{
	return &ns->conns[ns->pace[slot].index];
}

static void
put(struct net_stack *ns, uint32_t slot, struct net_pace_ent e)
{
	ns->pace[slot] = e;
	ns->conns[e.index].pace_slot = slot + 1;
}

static void
sift_up(struct net_stack *ns, uint32_t i)
{
	struct net_pace_ent e = ns->pace[i];

	while (i > 0 && ns->pace[(i - 1) / 2].at_us > e.at_us) {
		put(ns, i, ns->pace[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	put(ns, i, e);
}

static void
sift_down(struct net_stack *ns, uint32_t i)
{
	struct net_pace_ent e = ns->pace[i];

	for (;;) {
		uint32_t k = 2 * i + 1;

		if (k >= ns->pace_n)
			break;
		if (k + 1 < ns->pace_n && ns->pace[k + 1].at_us < ns->pace[k].at_us)
			k++;
		if (ns->pace[k].at_us >= e.at_us)
			break;
		put(ns, i, ns->pace[k]);
		i = k;
	}
	put(ns, i, e);
}

/* Takes slot i out of the heap. */
static void
remove_slot(struct net_stack *ns, uint32_t i)
{
	conn_of(ns, i)->pace_slot = 0;
	if (--ns->pace_n == i)
		return;
	put(ns, i, ns->pace[ns->pace_n]);
	sift_down(ns, i);
	sift_up(ns, ns->conns[ns->pace[i].index].pace_slot - 1);
}

/* The connection's turn at at_us, queued or moved. */
static void
queue(struct net_stack *ns, struct tcp_conn *c, uint64_t at_us)
{
	struct net_pace_ent e = { at_us, c->index };
	uint32_t i;

	if (c->pace_slot != 0) {
		i = c->pace_slot - 1;
		ns->pace[i].at_us = e.at_us;
		sift_down(ns, i);
		sift_up(ns, c->pace_slot - 1);
		return;
	}
	i = ns->pace_n++;
	put(ns, i, e);
	sift_up(ns, i);
}

uint32_t
tcp_pace_burst_segs(const struct tcp_conn *c)
{
	/* 64 KB less headers, Linux's GSO_LEGACY_MAX_SIZE's limit */
	uint64_t bytes = RTE_MIN(c->pacing_rate >> 10, (uint64_t)65536 - 1 - 320);

	return (uint32_t)RTE_MAX(bytes / c->mss, (uint64_t)2);
}

/* Departures may run this far ahead of the clock: a burst. */
static uint64_t
burst_us(const struct tcp_conn *c)
{
	return (uint64_t)(tcp_pace_burst_segs(c) - 1) * c->mss * 1000000 /
		c->pacing_rate;
}

bool
tcp_pace_allows(struct net_stack *ns, struct tcp_conn *c)
{
	if (!(c->flags & TCP_F_PACING) || c->pacing_rate == 0 ||
			c->pace_next_us <= ns->now_us + burst_us(c))
		return true;
	ns->stats->tcp.pacing_waits++;
	queue(ns, c, c->pace_next_us - burst_us(c));
	return false;
}

void
tcp_pace_sent(struct net_stack *ns, struct tcp_conn *c, uint32_t len)
{
	if (!(c->flags & TCP_F_PACING) || c->pacing_rate == 0)
		return;
	c->pace_next_us = RTE_MAX(c->pace_next_us, ns->now_us) +
		(uint64_t)len * 1000000 / c->pacing_rate;
}

void
tcp_pace_cancel(struct net_stack *ns, struct tcp_conn *c)
{
	if (c->pace_slot != 0)
		remove_slot(ns, c->pace_slot - 1);
}

void
tcp_pace_run(struct net_stack *ns)
{
	while (ns->pace_n > 0 && ns->pace[0].at_us <= ns->now_us) {
		struct tcp_conn *c = conn_of(ns, 0);

		remove_slot(ns, 0);
		tcp_transmit(ns, c);
	}
}

bool
net_pacing_pending(const struct net_stack *ns)
{
	return ns->pace_n > 0;
}

void
tcp_pace_update(struct net_stack *ns, struct tcp_conn *c)
{
	uint64_t rate;

	if (!ns->cfg.pacing || c->srtt_us == 0)
		return;
	c->flags |= TCP_F_PACING;
	rate = (uint64_t)RTE_MAX(c->cwnd, c->snd_max - c->snd_una) * 1000000 /
		c->srtt_us;
	c->pacing_rate = rate * (c->cwnd < c->ssthresh / 2 ? PACE_SS_RATIO :
			PACE_CA_RATIO) / 100;
}
