/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The send buffer's size, tuned as Linux tunes it (tcp_sndbuf_expand(),
 * tcp_wmem): twice the congestion window, so that the application keeps
 * a window's worth written ahead of what is in flight and the buffer
 * never holds a path's sending back, from tcp_config.snd_buf up to
 * snd_buf_max. It only grows, as Linux's: it is a bound, and memory
 * follows what is queued (mbufs, and chunks given back as ACKs drain
 * them), not the bound. The send queues' share of the shard's mbufs
 * (sndq_mbufs_max) still holds every queue back together
 * (tcp_send_space()).
 */
#include "tcp_impl.h"

void
tcp_sndbuf_expand(struct net_stack *ns, struct tcp_conn *c)
{
	uint32_t size = tcp_sndbuf(ns, c), want;

	if (ns->cfg.snd_buf_max <= size)
		return;
	want = (uint32_t)RTE_MIN(2ull * c->cwnd, (uint64_t)ns->cfg.snd_buf_max);
	if (want <= size)
		return;
	c->sndbuf = want;
	ns->stats->tcp.snd_buf_grows++;
}
